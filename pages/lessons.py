"""Lessons page: one click loads a prepared dataset and settings that show one idea of the field.

The science (data, settings, expected outcome) is in ``colide_core.data.lessons``; a click makes the
lesson's dataset current, sets the Learn page's widgets (``dashboard.lessons.apply_lesson``) and
opens the Learn page.
"""
import streamlit as st

from colide_core.data.lessons import LESSONS
from colide_core.data.networks import network_available
from dashboard.infra.layout import page_setup
from dashboard.lessons import CURRENT_LESSON, apply_lesson
from dashboard.infra.text import md_escape

page_setup()
ss = st.session_state

st.title("Lessons")
st.caption("Each lesson loads a small prepared dataset with its ground truth, sets the Learn page and opens it. "
           "The graphs appear there at once (on a large dataset the page asks for Run); read the explanation "
           "above them.")

chosen = None
for key, lesson in LESSONS.items():
    with st.container(border=True):
        c1, c2 = st.columns([4, 1])
        with c1:
            st.markdown(f"**{md_escape(lesson.title)}**" + ("  ·  *loaded*" if ss.get(CURRENT_LESSON) == key else ""))
            st.caption(md_escape(lesson.idea))
            s = lesson.settings
            st.caption(f"Settings: CoLiDE-{s['variant'].upper()}, λ = {s['lambda1']:g}, threshold {s['threshold']:g}. "
                       f"Expected: {md_escape(lesson.expected)}.")
            missing = lesson.extra == "networks" and not network_available()
            if missing:
                st.caption("Its data are a bnlearn network, which needs the optional extra: "
                           "`pip install 'colide-dashboard[networks]'`.")
        with c2:
            if st.button("Open", key=f"lesson_open_{key}", icon=":material/school:", type="primary", disabled=missing):
                chosen = key

if chosen is not None:
    apply_lesson(ss, chosen)
    st.switch_page("pages/learn.py")
