"""colide-dashboard: entry point (``streamlit run app.py``).

Hands over to the selected page with ``st.navigation``.

The page scripts live in ``pages/`` and are listed in ``dashboard.infra.nav.PAGES`` (order, titles,
icons). Streamlit's own page list is hidden (``position="hidden"`` here and
``client.showSidebarNavigation = false`` in ``.streamlit/config.toml``, which also covers a deep
link served before ``st.navigation`` ever ran in the process, when Streamlit 1.67 runs a page of
the ``pages/`` folder without this file). Every page does its own set-up and draws the app's
navigation (``dashboard.infra.layout.page_setup``), so it looks the same however Streamlit reaches it.
"""
import streamlit as st

from dashboard.infra.nav import PAGES

# No icon on st.Page: Streamlit would make the current page's icon the favicon, and the browser
# fetches a material-icon favicon from fonts.gstatic.com. The sidebar links (dashboard.infra.nav) carry
# the icons, drawn with the Material Symbols font Streamlit serves locally.
pages = [st.Page(path, title=title, default=(i == 0)) for i, (path, title, _icon) in enumerate(PAGES)]
st.navigation(pages, position="hidden").run()
