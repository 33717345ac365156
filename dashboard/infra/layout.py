"""Set-up shared by every page: page config, session-state initialisation and the sidebar.

Each script in ``pages/`` calls :func:`page_setup` first. Normally ``app.py`` runs before the
page (``st.navigation``), but Streamlit 1.67 runs a page of a ``pages/`` folder on its own in two
cases: a deep link served before ``st.navigation`` ever ran in the process, and
``AppTest.switch_page``. Doing the set-up in the page makes both cases identical to the normal one.
"""
from __future__ import annotations

import threading
from importlib.resources import files

import streamlit as st

from dashboard.infra import state
from dashboard.infra.jobs import is_running
from dashboard.infra.nav import sidebar_links
from dashboard.infra.text import fmt_seconds, md_escape

__all__ = ["UPLOAD_GUARD_JS", "page_setup", "prior_badge", "start_solver_warmup"]


def _static(name) -> str:
    """The text of ``dashboard/static/<name>`` (package data, read once at import)."""
    return files("dashboard").joinpath("static", name).read_text(encoding="utf-8")


_warmup_lock = threading.Lock()
_warmup_thread: threading.Thread | None = None


def start_solver_warmup() -> threading.Thread:
    """Load (or compile) the fast solver's numba kernels in a daemon thread, once per process.

    The first fast solve in a process pays numba's one-off cost: about 0.2 s to load the
    kernels from the on-disk cache, about 3 s to compile them where no cache exists yet
    (measured on the 2-core development machine). Starting this when the first page renders
    moves that cost out of the user's first fit. Calling it again returns the same thread.

    Returns
    -------
    threading.Thread
        The warm-up thread (it never raises: a failed warm-up only means the first fit
        compiles the kernels itself).
    """
    global _warmup_thread
    with _warmup_lock:
        if _warmup_thread is None:
            def _warm():
                try:
                    from colide_core.solver.registry import warmup

                    warmup()
                except Exception:  # noqa: BLE001 - best effort; the real fit reports its own errors
                    pass

            _warmup_thread = threading.Thread(target=_warm, name="colide-warmup", daemon=True)
            _warmup_thread.start()
        return _warmup_thread


#: Sidebar choice -> label. The value is ``colide_core.CoLiDE``'s ``solver`` parameter.
SOLVER_LABELS = {"auto": "Fast (default)", "adam": "Paper-faithful (Algorithm 1)",
                 "topo": "CoLiDE-TOPO (order search)"}


def _apply_solver_choice() -> None:
    """Write the sidebar's solver choice into the solver overrides (a new dict, never mutated).

    The default solver is left out of the overrides, so default fits keep one cache key.
    """
    ss = st.session_state
    overrides = {k: v for k, v in ss[state.SOLVER_OVERRIDES].items() if k != "solver"}
    if ss["solver_choice"] != "auto":
        overrides["solver"] = ss["solver_choice"]
    ss[state.SOLVER_OVERRIDES] = overrides


def prior_badge(params) -> None:
    """Say that prior knowledge is active (issue 28: it was invisible outside its own page).

    Parameters
    ----------
    params : dict or tuple of (str, object)
        The solver overrides or a fit's parameters (``forbidden``, ``required``, ``tiers``).
    """
    summary = state.prior_summary(params)
    if summary not in ("none", "malformed"):  # malformed knowledge is reported on the Prior knowledge page
        st.caption(f":material/rule: **Prior knowledge:** {summary} (Prior knowledge page)")


#: Room for the content on a projector (issue 28, point 4: at 1024×768 the drawings were 176 px
#: wide and the controls clipped): a narrower sidebar and less empty space around the main column,
#: measured in the browser by tests/e2e/test_projector.py; a lower header (40 px instead of 60) and
#: the page's title starting below it (issue 41: titles were about 60 % under the header on every
#: page). And one Stop: Streamlit's header Stop
#: ended the script run that follows a background job, which froze the page while the job ran on
#: unseen (issue 28, point 3); every job has its own Stop, which ends the job and redraws the page
#: (tests/e2e/test_one_stop.py). Style rules only, no script: ``dashboard/static/projector.css``.
PROJECTOR_CSS = "<style>\n" + _static("projector.css") + "</style>"

#: Keeps an upload when the user changes page while it is still on its way (issue 30).
#: Streamlit's uploader first sends the file (a PUT to ``/_stcore/upload_file``), then its widget
#: value; a page change in between unmounted the uploader before it sent the value, and the server
#: deleted the unclaimed file: a 6 MB file dropped on the Data page and "Learn" clicked 0-150 ms
#: later was lost without a word (tests/e2e/test_upload_page_change.py). This script
#: (``dashboard/static/upload_guard.js``) holds a page link's click from the moment a file is
#: picked or dropped until every upload request has been answered and the script run that received
#: the widget's value has ended (issue 42: a fixed 400 ms grace lost the file on a loaded machine,
#: where the page change reached the server while the Data page's on_change callback still read the
#: file, and interrupted it), then clicks the link again, so the page still changes as asked. It is installed once per browser tab (a flag on
#: ``window``), carries no user data, and only watches requests to the upload endpoint; a hold never
#: lasts longer than ``maxHoldMs`` (an upload that never starts or never ends releases the link).
UPLOAD_GUARD_JS = "<script>\n" + _static("upload_guard.js") + "</script>"


def page_setup() -> None:
    """Configure the page, initialise session state (idempotent) and draw the sidebar."""
    # no page_icon: an emoji favicon needs an emoji font, a :material/: one is fetched from
    # fonts.gstatic.com (dashboard.infra.nav); Streamlit's own bundled favicon is used
    st.set_page_config(page_title="CoLiDE dashboard", layout="wide")
    st.html(PROJECTOR_CSS)
    start_solver_warmup()
    state.init()
    with st.sidebar:
        sidebar_links()
        st.divider()
        ds = state.current_dataset()
        n, d = ds.shape
        st.caption("Current dataset")
        st.markdown(f"**{md_escape(ds.name)}**  \n{n} samples × {d} nodes"
                    + ("  \nground truth available" if ds.B_true is not None else ""))
        prior_badge(st.session_state[state.SOLVER_OVERRIDES])
        st.radio("CoLiDE solver", list(SOLVER_LABELS), format_func=SOLVER_LABELS.get, key="solver_choice",
                 on_change=_apply_solver_choice, persist_state="session",
                 help="Both solve the paper's problem (eq. 4 / eq. 6) along the same central path and "
                      "reach the same objective (to about 1e-3 relative). The paper-faithful one is "
                      "Algorithm 1 as published (one Adam step of 3e-4 per iteration, up to 130,000 "
                      "iterations); the fast one takes far fewer, larger steps. CoLiDE-TOPO (paper Appendix E) "
                      "starts from the fast solution and minimises the same score exactly over "
                      "topological orders by swapping pairs of nodes: a DAG by construction and often a "
                      "lower SHD, at about the paper-faithful solver's cost at d = 50 and live up to 20 nodes "
                      "(benchmarks/results/topo_bench.md)."
                      + ("" if not state.last_fit_time() else
                         f" The last fit on this dataset took {fmt_seconds(state.last_fit_time())}."))
        if is_running(st.session_state, state.FIT_JOB):
            st.caption("A CoLiDE fit is running (see the Learn page).")
        st.caption("CoLiDE: Saboksayr, Mateos & Tepper, *Concomitant Linear DAG Estimation*, ICLR 2024.")
        st.html(UPLOAD_GUARD_JS, unsafe_allow_javascript=True)
