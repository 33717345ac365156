"""Set-up shared by every page: page config, session-state initialisation and the sidebar.

Each script in ``pages/`` calls :func:`page_setup` first. Normally ``app.py`` runs before the
page (``st.navigation``), but Streamlit 1.67 runs a page of a ``pages/`` folder on its own in two
cases: a deep link served before ``st.navigation`` ever ran in the process, and
``AppTest.switch_page``. Doing the set-up in the page makes both cases identical to the normal one.
"""
from __future__ import annotations

import streamlit as st

from dashboard import state
from dashboard.text import md_escape

__all__ = ["page_setup"]


def page_setup() -> None:
    """Configure the page, initialise session state (idempotent) and draw the sidebar."""
    st.set_page_config(page_title="CoLiDE dashboard", page_icon="🕸️", layout="wide")
    state.init()
    with st.sidebar:
        ds = state.current_dataset()
        n, d = ds.shape
        st.caption("Current dataset")
        st.markdown(f"**{md_escape(ds.name)}**  \n{n} samples × {d} nodes"
                    + ("  \nground truth available" if ds.B_true is not None else ""))
        job = st.session_state[state.FIT_JOB]
        if job is not None and not job.done:
            st.caption("A CoLiDE fit is running (see the Learn page).")
        st.caption("CoLiDE: Saboksayr, Mateos & Tepper, *Concomitant Linear DAG Estimation*, ICLR 2024.")
