"""colide-dashboard: entry point (``streamlit run app.py``).

Initialises the session state once per run (``dashboard.state.init``), shows the current
dataset in the sidebar and hands over to the selected page with ``st.navigation``.
"""
import streamlit as st

from dashboard import state
from dashboard.text import md_escape

st.set_page_config(page_title="CoLiDE dashboard", page_icon=":material/hub:", layout="wide")

state.init()

pages = [
    st.Page("pages/data.py", title="Data", icon=":material/table:", default=True),
    st.Page("pages/learn.py", title="Learn", icon=":material/hub:"),
    st.Page("pages/simulate.py", title="Simulate", icon=":material/science:"),
    st.Page("pages/compare.py", title="Compare", icon=":material/leaderboard:"),
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
