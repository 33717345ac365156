"""colide-dashboard: entry point (``streamlit run app.py``).

Hands over to the selected page with ``st.navigation``.

The page scripts live in ``pages/`` (the product card's layout) and are listed explicitly with
``st.Page``, so ``st.navigation`` decides the order, titles and icons. Until ``st.navigation``
has run once in a server process, Streamlit 1.67 serves a ``pages/`` folder old-style: a deep
link opened first on a fresh server runs the page script without this file. Every page therefore
does its own set-up (``dashboard.layout.page_setup``).
"""
import streamlit as st

# Emoji icons, not ":material/...:" ones: the browser fetches a material-icon favicon from
# fonts.gstatic.com, and this dashboard must work offline.
pages = [
    st.Page("pages/data.py", title="Data", icon="📋", default=True),
    st.Page("pages/learn.py", title="Learn", icon="🕸️"),
    st.Page("pages/simulate.py", title="Simulate", icon="🧪"),
    st.Page("pages/compare.py", title="Compare", icon="📊"),
    st.Page("pages/edge_confidence.py", title="Edge confidence", icon="🎯"),
    st.Page("pages/explorer.py", title="Explorer", icon="🗺️"),
    st.Page("pages/prior_knowledge.py", title="Prior knowledge", icon="🧭"),
    st.Page("pages/check.py", title="Check", icon="🩺"),
    st.Page("pages/lessons.py", title="Lessons", icon=":material/school:"),
]
# Each page configures itself, initialises the session state and draws the sidebar
# (dashboard.layout.page_setup), so it behaves the same however Streamlit reaches it.
st.navigation(pages).run()
