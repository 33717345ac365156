"""The Learn page's advanced solver settings, generated from ``colide_core.settings.SETTINGS``.

Every row whose ``dashboard`` is ``"advanced"`` gets one text field (its value written as the
command line writes it, :meth:`colide_core.settings.Setting.format`); Apply reads them back
(:meth:`~colide_core.settings.Setting.parse`), checks them all at once within the dashboard's
bounds (``colide_core.settings.INTERACTIVE``) and writes the values that differ from the
library's defaults into the solver overrides, which every fit, cache key and manifest of the
dashboard already carries. A new setting therefore reaches this form by being declared.
"""
from __future__ import annotations

import streamlit as st

from colide_core.settings import INTERACTIVE, SETTINGS, check_settings

__all__ = ["ADVANCED", "apply_advanced", "settings_form"]

#: The rows shown in the form.
ADVANCED = tuple(row for row in SETTINGS if row.dashboard == "advanced")


def apply_advanced(overrides, texts) -> dict:
    """The solver overrides after the form's texts are applied.

    Parameters
    ----------
    overrides : dict
        The current solver overrides (not modified).
    texts : mapping of str to str
        Setting name -> the text typed for it (rows of :data:`ADVANCED`).

    Returns
    -------
    dict
        A new dict: ``overrides`` with every advanced setting set to the typed value when it
        differs from the library's default, and removed when it equals it (one cache key per fit).

    Raises
    ------
    colide_core.exceptions.RunSettingsError
        (a ``ValueError``) Listing every text that is not a value and every value outside the
        dashboard's bounds or inconsistent with the others (stages of different lengths).
    """
    from colide_core.exceptions import RunSettingsError

    values, problems = {}, []
    for row in ADVANCED:
        text = texts.get(row.name, row.format(row.default) if row.default is not None else "")
        try:
            values[row.name] = row.parse(text)
        except ValueError as exc:
            problems.append(f"{row.name}: {exc}")
    merged = {k: v for k, v in overrides.items() if k not in {row.name for row in ADVANCED}}
    try:  # what parsed, with the other overrides, within the dashboard's bounds
        checked = check_settings({**{k: v for k, v in merged.items() if k in {r.name for r in SETTINGS}}, **values},
                                 limits=INTERACTIVE)
    except RunSettingsError as exc:
        problems += exc.problems
    if problems:
        raise RunSettingsError(problems)
    for row in ADVANCED:
        value = checked.get(row.name)
        if value is not None and value != row.default:
            merged[row.name] = value
    return merged


def settings_form(overrides_key, messages_key) -> None:
    """Draw the advanced settings as one form (no rerun per keystroke) and apply it on submit.

    Parameters
    ----------
    overrides_key : str
        The session-state key of the solver overrides (``dashboard.infra.state.SOLVER_OVERRIDES``).
    messages_key : str
        A session-state list of ``(level, text)`` messages the page shows
        (``dashboard.infra.state.FIT_MESSAGES``).
    """
    from dashboard.infra.text import md_escape

    ss = st.session_state
    current = ss[overrides_key]
    with st.form("learn_advanced_settings", border=False):
        columns = st.columns(3)
        texts = {}
        for i, row in enumerate(ADVANCED):
            value = current.get(row.name, row.default)
            texts[row.name] = columns[i % 3].text_input(
                row.name, value="" if value is None else row.format(value), key=f"adv_{row.name}",
                help=row.help + ("; empty: none" if row.optional else ""))
        submitted = st.form_submit_button("Apply settings")
    if submitted:
        try:
            ss[overrides_key] = apply_advanced(current, texts)
        except ValueError as exc:
            problems = getattr(exc, "problems", [str(exc)])
            st.error("Not applied: " + md_escape("; ".join(problems)) + ".", icon=":material/error:")
            return
        ss[messages_key] = [("success", "Solver settings applied: the fits use them from now on.")]
        st.rerun()
