"""The app's pages and its own sidebar navigation, the same from any entry URL.

``app.py`` builds ``st.navigation`` from :data:`PAGES` with Streamlit's page list hidden, and
:func:`sidebar_links` (called by ``dashboard.infra.layout.page_setup`` on every page) draws the
navigation with ``st.page_link``. Streamlit's automatic list of a ``pages/`` folder (lower-case
file names, an extra "app" entry) is switched off in ``.streamlit/config.toml``
(``client.showSidebarNavigation = false``), so a deep link such as ``/learn`` opened first on a
fresh server shows the same navigation as ``/`` (``tests/e2e/test_live_learn.py``).

Icons are Streamlit's ``:material/...:`` names: Streamlit 1.67 draws them with the Material
Symbols font it serves itself, so they render offline (emoji need an emoji font on the client).
"""
from __future__ import annotations

import streamlit as st

__all__ = ["PAGES", "sidebar_links"]

#: (script path, title, icon) of each page, in menu order; the first is the default page.
PAGES = (
    ("pages/data.py", "Data", ":material/table_view:"),
    ("pages/learn.py", "Learn", ":material/hub:"),
    ("pages/simulate.py", "Simulate", ":material/science:"),
    ("pages/compare.py", "Compare", ":material/bar_chart:"),
    ("pages/edge_confidence.py", "Edge confidence", ":material/verified:"),
    ("pages/explorer.py", "Explorer", ":material/map:"),
    ("pages/prior_knowledge.py", "Prior knowledge", ":material/rule:"),
    ("pages/check.py", "Check", ":material/fact_check:"),
    ("pages/predict.py", "Predict", ":material/trending_up:"),
    ("pages/lessons.py", "Lessons", ":material/school:"),
)


def sidebar_links() -> None:
    """Draw one ``st.page_link`` per page in the sidebar (call inside ``with st.sidebar``)."""
    for path, title, icon in PAGES:
        st.page_link(path, label=title, icon=icon)
