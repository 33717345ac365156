"""Shareable Learn views in a real browser (issue 28, point 4).

A link carries the dataset choice (here a simulation), λ, threshold, noise model and layout; a
refresh restores what the user changed since, because the page keeps the URL in step with its
controls. Streamlit's own URL handling (page paths, ``st.query_params`` sync) is what is tested.
"""
import re
from contextlib import contextmanager

from playwright.sync_api import expect

from tests.e2e.harness import UI_TIMEOUT_MS, lambda_slider, no_exception_shown, set_lambda, wait_for_idle


@contextmanager
def _opened(server, browser, path):
    """A new browser session (1280×720) on ``path`` of the app; closed on exit."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        page.goto(server.url + path, timeout=UI_TIMEOUT_MS)
        yield page
    finally:
        context.close()


def test_a_link_opens_its_view_and_a_refresh_keeps_later_changes(server, browser):
    with _opened(server, browser,
                 "/learn?data=sim&d=6&n=300&seed=4&graph=ER&k=1&lam=0.1&thr=0.2&model=EV&layout=circle") as page:
        # the link's dataset and settings, and only the EV fit (the noise model picked in the link)
        page.get_by_text("CoLiDE-EV · λ = 0.1", exact=True).wait_for(timeout=UI_TIMEOUT_MS)
        page.get_by_text(re.compile(r"Simulated ER1, d=6, n=300")).first.wait_for(timeout=UI_TIMEOUT_MS)
        wait_for_idle(page)
        expect(page.get_by_text("CoLiDE-NV · λ = 0.1", exact=True)).to_have_count(0)
        expect(lambda_slider(page).get_by_test_id("stSliderThumbValue")).to_have_text("0.1")
        no_exception_shown(page)

        set_lambda(page, 0.2)
        page.get_by_text("CoLiDE-EV · λ = 0.2", exact=True).wait_for(timeout=UI_TIMEOUT_MS)
        page.wait_for_url(re.compile(r"[?&]lam=0\.2(&|$)"), timeout=UI_TIMEOUT_MS)  # the URL follows the slider
        assert "seed=4" in page.url and "model=EV" in page.url

        page.reload(timeout=UI_TIMEOUT_MS)  # a new session: everything comes back from the URL
        page.get_by_text("CoLiDE-EV · λ = 0.2", exact=True).wait_for(timeout=UI_TIMEOUT_MS)
        page.get_by_text(re.compile(r"Simulated ER1, d=6, n=300.*seed 4")).first.wait_for(
            timeout=UI_TIMEOUT_MS)
        no_exception_shown(page)


def test_a_hostile_link_is_ignored_with_a_message(server, browser):
    with _opened(server, browser,
                 "/learn?lam=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E&model=NV&d=1e999") as page:
        page.get_by_text(re.compile(r"Some settings in the link were ignored: lam: not a number")).wait_for(
            timeout=UI_TIMEOUT_MS)
        page.get_by_text("CoLiDE-NV · λ = 0.05", exact=True).wait_for(timeout=UI_TIMEOUT_MS)
        expect(page.locator("img[src=x]")).to_have_count(0)
        no_exception_shown(page)


def test_a_predict_link_asks_its_question_and_a_refresh_keeps_it(server, browser):
    # issue 48, m-5: a refresh or a shared /predict fell back to "Learn a graph first". Here the
    # link opens Predict directly (no visit to Learn), the page solves Learn's fit and asks
    # do(PKA = 2.5); after the user switches to a shift of 2 sd, a reload asks that instead.
    with _opened(server, browser,
                 "/predict?data=sachs&lam=0.1&model=NV&pnode=PKA&pdo=2.5&pfit=NV&solver=fast") as page:
        page.get_by_text(re.compile(r"^do\(PKA = 2\.5\): the CoLiDE-NV graph")).wait_for(timeout=UI_TIMEOUT_MS)
        wait_for_idle(page)
        expect(page.get_by_text("Learn a graph first")).to_have_count(0)
        no_exception_shown(page)

        page.get_by_text("Shift by k sd", exact=True).click(timeout=UI_TIMEOUT_MS)
        page.get_by_text(re.compile(r"^PKA shifted by 1 sd: the CoLiDE-NV graph")).wait_for(timeout=UI_TIMEOUT_MS)
        page.wait_for_url(re.compile(r"[?&]pk=1(&|$)"), timeout=UI_TIMEOUT_MS)  # the URL follows the page
        assert "pdo=" not in page.url and "pnode=PKA" in page.url

        page.reload(timeout=UI_TIMEOUT_MS)  # a new session: the question comes back from the URL
        page.get_by_text(re.compile(r"^PKA shifted by 1 sd: the CoLiDE-NV graph")).wait_for(timeout=UI_TIMEOUT_MS)
        no_exception_shown(page)
