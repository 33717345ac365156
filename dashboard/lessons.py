"""Load a lesson (colide_core.data.lessons) into the session: its dataset, the Learn settings, its text.

The Lessons page calls :func:`apply_lesson` on a click and then switches to the Learn page.

Convention: ``X`` is ``(n_samples, n_nodes)``; ``B_true[i, j] != 0`` means i -> j.
"""
from __future__ import annotations

from colide_core.data.lessons import LESSONS, lesson_data
from dashboard.infra import state
from dashboard.data import make_dataset
from dashboard.fitting import VARIANTS
from dashboard.infra.text import md_escape

__all__ = ["CURRENT_LESSON", "lesson_dataset", "apply_lesson", "lesson_banner"]

#: Session key: the key of the lesson last loaded, or None (initialised in :mod:`dashboard.infra.state`).
CURRENT_LESSON = "lesson_current"


def lesson_dataset(key):
    """The :class:`dashboard.data.Dataset` of lesson ``key`` (source ``"lesson"``, with its truth)."""
    lesson = LESSONS[key]
    data = lesson_data(key)
    meta = {"lesson": key}
    if data.conditions is not None:  # a lesson with interventions: each row's experiment and its targets
        meta.update(conditions=list(data.conditions), targets=dict(data.targets or {}))
    return make_dataset(f"Lesson: {lesson.title}", data.X, B_true=data.B_true.to_numpy(),
                        sigma_true=data.sigma_true, source="lesson", notes=(lesson.idea,), meta=meta)


def apply_lesson(ss, key) -> None:
    """Make lesson ``key``'s dataset current and set the Learn page's widgets to its settings.

    Parameters
    ----------
    ss : streamlit session state (a mutable mapping)
    key : str
        A key of :data:`colide_core.data.lessons.LESSONS`.
    """
    lesson = LESSONS[key]
    state.set_dataset(lesson_dataset(key), settings_given=True)
    label = {v: k for k, v in VARIANTS.items()}[lesson.settings["variant"]]
    ss["learn_variant"] = label
    ss["learn_graph_variant"] = label
    ss["learn_lambda1"] = float(lesson.settings["lambda1"])
    ss["learn_threshold"] = float(lesson.settings["threshold"])
    ss[CURRENT_LESSON] = key


def lesson_banner(dataset) -> None:
    """On the Learn and Predict pages: the explanation of the lesson whose dataset is current (nothing otherwise).

    Parameters
    ----------
    dataset : dashboard.data.Dataset
        The current dataset; a lesson's carries ``meta["lesson"]`` (:func:`lesson_dataset`).
    """
    import streamlit as st

    key = dataset.meta.get("lesson") if dataset.source == "lesson" else None
    if key not in LESSONS:
        return
    lesson = LESSONS[key]
    # compact for a projector (issue 28, point 4): the title and what to try on one banner, the
    # explanation one click away, so the slider, the drawings and their legend stay on screen
    # (the key gives the banner its tighter padding: dashboard/static/projector.css)
    text, why = st.container(key="lesson_banner").columns([6, 1], vertical_alignment="center")
    text.info(f"**Lesson: {md_escape(lesson.title)}.** **Try:** {md_escape(lesson.try_next)}",
              icon=":material/school:")
    with why.popover("Why?", icon=":material/menu_book:", use_container_width=True):
        st.info(md_escape(lesson.explanation))
