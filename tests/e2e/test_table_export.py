"""Tables offer no export of Streamlit's own (issue 42, low).

Streamlit's table toolbar has a "Download as CSV" (and copies cells to the clipboard) that writes a
cell starting with ``=``, ``+``, ``-`` or ``@`` as it is, which a spreadsheet runs as a formula; our
tables show users' strings (column names, node names, condition labels). ``.streamlit/config.toml``
sets ``client.disableDataExport``: the toolbar keeps Search and full screen, and the tables worth
taking away have their own download through ``to_csv_safe``, which neutralises such cells.
"""
from playwright.sync_api import expect

from tests.e2e.harness import UI_TIMEOUT_MS, no_exception_shown, open_app_with_sachs


def test_the_table_toolbar_has_search_but_no_csv_download(server, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        open_app_with_sachs(page, server.url)
        table = page.locator("[data-testid=\"stDataFrame\"]:visible").first  # one in a closed expander is hidden
        table.wait_for(timeout=UI_TIMEOUT_MS)
        table.hover(timeout=UI_TIMEOUT_MS)
        toolbar = page.locator("[data-testid=\"stElementToolbar\"]:visible").first
        # the toolbar is drawn (its Search is there) ...
        expect(toolbar.get_by_role("button", name="Search")).to_be_visible(timeout=UI_TIMEOUT_MS)
        # ... without Streamlit's own CSV export
        expect(toolbar.get_by_role("button", name="Download as CSV")).to_have_count(0)
        expect(page.get_by_role("button", name="Download as CSV")).to_have_count(0)
        no_exception_shown(page)
    finally:
        context.close()
