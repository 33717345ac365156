"""The Learn page's "Stale" banner on a projector (issue 48, the last walk's minor "the stale
banner's height"; M-5(a) met it pushing the drawings off screen). On a page that asks for Run, a
fresh tab opens Sachs at a cached λ (a cache hit is drawn at once) and moves λ one step: the
drawings stay at the old λ under the banner. At 1280×720 and 1024×768 the banner is one short line
and every drawing is whole on screen below it (before: 59 and 80 px tall, the drawings' bottoms at
723 and 782 px)."""
import re

import pytest

from tests.e2e.harness import (FIT_TIMEOUT_MS, UI_TIMEOUT_MS, drawings, lambda_slider, server_with_env,
                               no_exception_shown, wait_for_idle)

_TOP_JS = """() => { const m = document.querySelector('[data-testid="stMain"]'); if (m) m.scrollTo(0, 0);
                     window.scrollTo(0, 0); return true; }"""
_HEADING = re.compile(r"^CoLiDE-(EV|NV) · λ = 0\.05$")
#: One line of text in the banner's tight box (Streamlit's alert is 59 px for one line, 80 for two).
MAX_BANNER_PX = 44.0


@pytest.fixture(scope="module")
def run_server():
    """A server on which no fit is live (every change asks for Run) except a cached one."""
    with server_with_env("e2e_stale_banner.log", COLIDE_LIVE_MAX_SECONDS="0.000001",
                         COLIDE_LIVE_TIME_LIMIT="0.000001") as srv:
        yield srv


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)], ids=["1280x720", "1024x768"])
def test_the_stale_banner_leaves_the_drawings_on_screen(run_server, browser, size):
    w, h = size
    first = browser.new_context(viewport={"width": w, "height": h})
    try:  # one Run puts the fits at λ = 0.05 in the server's cache
        page = first.new_page()
        page.goto(f"{run_server.url}/learn?data=sachs", timeout=UI_TIMEOUT_MS)
        run = page.get_by_role("button", name="Run", exact=True)
        run.wait_for(timeout=UI_TIMEOUT_MS)
        wait_for_idle(page)
        if not page.get_by_text(_HEADING).count():
            run.click(timeout=UI_TIMEOUT_MS)
        page.get_by_text(_HEADING).first.wait_for(timeout=FIT_TIMEOUT_MS)
        wait_for_idle(page)
    finally:
        first.close()
    context = browser.new_context(viewport={"width": w, "height": h})
    try:  # a fresh tab: drawn from the cache, then λ one step on, which asks for Run
        page = context.new_page()
        page.goto(f"{run_server.url}/learn?data=sachs", timeout=UI_TIMEOUT_MS)
        page.get_by_text(_HEADING).first.wait_for(timeout=UI_TIMEOUT_MS)
        wait_for_idle(page)
        thumb = lambda_slider(page).get_by_role("slider")
        thumb.focus()
        thumb.press("ArrowRight")
        banner = page.get_by_test_id("stAlert").filter(has_text="Stale: ").first
        banner.wait_for(timeout=UI_TIMEOUT_MS)
        wait_for_idle(page)
        page.evaluate(_TOP_JS)
        page.wait_for_function("() => window.scrollY === 0", timeout=UI_TIMEOUT_MS)
        text = banner.inner_text()
        box = banner.bounding_box()
        frames = drawings(page)
        boxes = [frames.nth(i).bounding_box() for i in range(frames.count())]
        page.screenshot(path=str(run_server.log.parent / f"stale-banner-{w}x{h}.png"))
        no_exception_shown(page)
    finally:
        context.close()
    assert box is not None and box["height"] <= MAX_BANNER_PX, box
    assert len(boxes) == 3, boxes  # EV, NV and the truth
    for b in boxes:  # every drawing whole on screen, below the banner
        assert b["y"] >= box["y"] + box["height"] and b["y"] + b["height"] <= h + 0.5, (b, box)
    assert "EV and NV were learned with λ = 0.05, not λ = 0.1" in text and "Press Run" in text, text
