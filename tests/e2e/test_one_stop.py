"""One Stop during a background fit (issue 28, point 3).

Streamlit's header Stop ended the script run that follows a background job: the results vanished,
the progress bar froze and the job ran on unseen. The page now shows one Stop, the job's own, and
pressing it ends the job and redraws the page with the partial result.
"""
import re

from playwright.sync_api import expect

from tests.e2e.harness import FIT_TIMEOUT_MS, UI_TIMEOUT_MS, no_exception_shown, wait_for_idle


def test_a_background_fit_has_one_stop_that_ends_it(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        # 55 nodes: above the live limit, so the page needs Run and the fit is a background job
        page.goto(server.url + "/learn?data=sim&d=55&n=400&seed=2&model=NV", timeout=UI_TIMEOUT_MS)
        page.get_by_text("Learn a DAG with CoLiDE").wait_for(timeout=UI_TIMEOUT_MS)
        # the paper-faithful solver: a fit of minutes, so that Stop is pressed while it runs
        page.get_by_test_id("stSidebar").get_by_text("Paper-faithful (Algorithm 1)").click(timeout=UI_TIMEOUT_MS)
        page.get_by_text(re.compile(r"after a change: .*paper-faithful")).first.wait_for(timeout=UI_TIMEOUT_MS)
        # the run that shows that text must end first: while a rerun is drawn, the previous run's Run
        # button can still be on the page beside the new one (a strict-mode failure under load)
        wait_for_idle(page)
        page.get_by_role("button", name="Run", exact=True).click(timeout=UI_TIMEOUT_MS)
        ours = page.get_by_test_id("stMain").get_by_role("button", name="Stop")
        expect(ours).to_be_visible(timeout=UI_TIMEOUT_MS)
        header = page.get_by_test_id("stStatusWidget")
        expect(header).to_be_visible(timeout=UI_TIMEOUT_MS)     # Streamlit's "Running…" while the page follows the job
        expect(header.get_by_test_id("stBaseButton-header")).to_have_count(1)   # its Stop is in the page ...
        expect(header.get_by_test_id("stBaseButton-header")).not_to_be_visible()  # ... but not shown: one Stop
        ours.click(timeout=UI_TIMEOUT_MS)
        page.get_by_text(re.compile(r"^NV was stopped after")).wait_for(timeout=FIT_TIMEOUT_MS)
        page.get_by_text("CoLiDE-NV (stopped, partial) · λ = 0.05", exact=True).wait_for(timeout=UI_TIMEOUT_MS)
        expect(page.get_by_role("button", name="Run", exact=True)).to_be_enabled(timeout=UI_TIMEOUT_MS)
        no_exception_shown(page)
    finally:
        context.close()
