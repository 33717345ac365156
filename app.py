"""colide-dashboard: entry point (``streamlit run app.py``).

Initialises the session state once per run (``dashboard.state.init``), shows the current
dataset in the sidebar and hands over to the selected page with ``st.navigation``.

The page scripts live in ``app_pages/``, deliberately not ``pages/``: Streamlit treats a
``pages/`` folder next to the entry point as an old-style (v1) multipage app until
``st.navigation`` has run once in the process, and then runs a deep-linked page *without* this
script (so without the session-state initialisation and the sidebar).
"""
import streamlit as st

from dashboard import state
from dashboard.text import md_escape

st.set_page_config(page_title="CoLiDE dashboard", page_icon="🕸️", layout="wide")

state.init()

# Emoji icons, not ":material/...:" ones: the browser fetches a material-icon favicon from
# fonts.gstatic.com, and this dashboard must work offline.
pages = [
    st.Page("app_pages/data.py", title="Data", icon="📋", default=True),
    st.Page("app_pages/learn.py", title="Learn", icon="🕸️"),
    st.Page("app_pages/simulate.py", title="Simulate", icon="🧪"),
    st.Page("app_pages/compare.py", title="Compare", icon="📊"),
    st.Page("app_pages/edge_confidence.py", title="Edge confidence", icon="🎯"),
    st.Page("app_pages/explorer.py", title="Explorer", icon="🗺️"),
    st.Page("app_pages/prior_knowledge.py", title="Prior knowledge", icon="🧭"),
]
page = st.navigation(pages)

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

page.run()
