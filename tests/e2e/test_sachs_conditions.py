"""The whole Sachs experiment in a real browser (issue 31): choose all nine conditions on the Data
page, fit on Learn, see the edges an intervention orients, download the run manifest and load it
back."""
import re

from playwright.sync_api import expect

from tests.e2e.harness import UI_TIMEOUT_MS, no_exception_shown, wait_for_idle


def test_nine_conditions_fit_marked_edges_and_manifest_round_trip(server, browser, tmp_path):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    try:
        page = context.new_page()
        page.goto(server.url + "/", timeout=UI_TIMEOUT_MS)
        page.get_by_role("combobox", name="Sachs cells").click(timeout=UI_TIMEOUT_MS)   # a select box
        page.get_by_role("option", name=re.compile("All nine conditions")).click(timeout=UI_TIMEOUT_MS)
        page.get_by_role("button", name="Use the Sachs data").click(timeout=UI_TIMEOUT_MS)
        page.get_by_role("tab", name="Conditions").click(timeout=UI_TIMEOUT_MS)   # the per-condition summary
        page.get_by_text(re.compile(r"median shift from the")).wait_for(timeout=UI_TIMEOUT_MS)

        page.get_by_role("link", name="Learn").click(timeout=UI_TIMEOUT_MS)
        page.get_by_text("CoLiDE-NV · λ = 0.05", exact=True).wait_for(timeout=UI_TIMEOUT_MS)
        page.get_by_text(re.compile(r"7,466 rows in 9 conditions \(7 with targets\) · truth: 17-edge")).first.wait_for(
            timeout=UI_TIMEOUT_MS)
        wait_for_idle(page)
        # the drawing labels the edges an intervention orients (vis-network draws the label text)
        docs = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stIFrame"]')].map(f => f.srcdoc)""")
        assert any('"label": "intervention"' in d or "intervention" in d for d in docs)

        page.get_by_role("tab", name="Downloads").click(timeout=UI_TIMEOUT_MS)
        with page.expect_download(timeout=UI_TIMEOUT_MS) as info:
            page.get_by_role("button", name="Run manifest (JSON)").first.click(timeout=UI_TIMEOUT_MS)
        path = tmp_path / "manifest.json"
        info.value.save_as(path)
        assert '"conditions"' in path.read_text()

        page.get_by_text("Load a run manifest").first.click(timeout=UI_TIMEOUT_MS)
        page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(path))
        page.get_by_text(re.compile(r"Loaded .*manifest")).first.wait_for(timeout=UI_TIMEOUT_MS)
        expect(page.get_by_text(re.compile("is for other data"))).to_have_count(0)
        no_exception_shown(page)
    finally:
        context.close()
