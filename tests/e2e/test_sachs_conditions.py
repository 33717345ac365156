"""The whole Sachs experiment in a real browser (issue 31): choose all nine conditions on the Data
page, fit on Learn, see the edges an intervention orients, download the run manifest and load it
back."""
import re

from playwright.sync_api import expect

from tests.e2e.harness import UI_TIMEOUT_MS, labelled_frame, no_exception_shown, wait_for_idle


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
        # issue 38, point 4: the edges an intervention can orient carry a dot (vis-network's middle
        # circle) with a legend entry readable on screen, not a 7 px label; their tooltip says
        # "orientable", never "identified"
        frame = labelled_frame(page, "CoLiDE-NV · λ = 0.05")
        # issue 48, m-13: the dot sits at the edge's start ("from"), not mid-line, one size for every width
        marked = frame.evaluate("""() => edges.get().filter(e => e.arrows && e.arrows.from
                                   && e.arrows.from.enabled && e.arrows.from.type === 'circle')
                                   .map(e => [e.label || '', String(e.title.textContent || e.title)])""")
        assert marked and all(label == "" for label, _ in marked)
        assert all("orientable by an intervention" in title and "identified" not in title for _, title in marked)
        legend = page.get_by_text("orientable by an intervention (a target at one end)").first
        legend.wait_for(timeout=UI_TIMEOUT_MS)
        px = legend.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
        assert px >= 11, px

        # issue 38, point 3: the data behind the report's command are offered for download
        page.get_by_role("tab", name="Downloads").click(timeout=UI_TIMEOUT_MS)
        with page.expect_download(timeout=UI_TIMEOUT_MS) as data_info:
            page.get_by_role("button", name="Data as fitted (CSV)").click(timeout=UI_TIMEOUT_MS)
        fitted = tmp_path / data_info.value.suggested_filename
        data_info.value.save_as(fitted)
        header = fitted.read_text().splitlines()[0].split(",")
        assert header[-1] == "condition" and len(fitted.read_text().splitlines()) == 7467
        with page.expect_download(timeout=UI_TIMEOUT_MS) as t_info:
            page.get_by_role("button", name="Intervention targets (JSON)").click(timeout=UI_TIMEOUT_MS)
        assert t_info.value.suggested_filename == "targets.json"

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

        # issue 38, point 1: Compare on the current data fits with the design; its per-run CSV says so
        page.get_by_role("link", name="Compare").click(timeout=UI_TIMEOUT_MS)
        page.get_by_text(re.compile("The current dataset")).click(timeout=UI_TIMEOUT_MS)
        page.get_by_text(re.compile("9 conditions")).first.wait_for(timeout=UI_TIMEOUT_MS)
        page.get_by_role("button", name="Run comparison").click(timeout=UI_TIMEOUT_MS)
        page.get_by_role("button", name="Per-run rows (CSV)").wait_for(timeout=UI_TIMEOUT_MS)
        with page.expect_download(timeout=UI_TIMEOUT_MS) as runs_info:
            page.get_by_role("button", name="Per-run rows (CSV)").click(timeout=UI_TIMEOUT_MS)
        runs = tmp_path / "runs.csv"
        runs_info.value.save_as(runs)
        lines = runs.read_text().splitlines()
        design = lines[0].split(",").index("design")
        assert {line.split(",")[design] for line in lines[1:]} == {"design"}  # CoLiDE-EV and -NV, the defaults
        no_exception_shown(page)
    finally:
        context.close()
