"""Issue 30, point 3, in a real browser: with the server configured for one compute slot
(``COLIDE_MAX_CONCURRENT_JOBS=1``), the Check page's refits wait for the slot, Stop ends them, and
closing the tab ends them.

Two sessions (two browser contexts) on one ``streamlit run`` server:

1. Session B opens the live Learn page and its Check page (fast solver) while the slot is free.
2. Session A fits Sachs with the paper-faithful solver and asks the Check page for the heaviest
   check (standardise and refit plus 50 random rescalings: 51 solves of minutes in all).
3. B asks for its own Check refit: it waits for the slot ("waiting for a free slot (1 of 1 …").
4. A presses Stop: A's page says the checks were stopped and shows what was done; B's refit gets
   the slot and finishes.
5. A runs the checks again; B presses Run on the Learn page, whose fit waits for the slot; A's tab
   is closed: once the session is gone (``COLIDE_SESSION_GRACE_S=2``) A's job ends at its next
   checkpoint and B's fit runs, long before A's 51 solves could have finished.

On the old code the refits ran in A's page thread: B never waited, and Stop and closing A's tab
did not end them. No fixed sleeps: every step waits for a text or a condition, with a timeout.
"""
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.harness import (
    FIT_TIMEOUT_MS,
    UI_TIMEOUT_MS,
    server_with_env,
    block_external,
    no_exception_shown,
    open_app_with_sachs,
    wait_for_idle,
)

#: A's refits take minutes with the paper-faithful solver; B must be served well before that.
SERVED_MS = 120_000


@pytest.fixture(scope="module")
def one_slot_server():
    with server_with_env("e2e_check_jobs.log", COLIDE_MAX_CONCURRENT_JOBS="1", COLIDE_SESSION_GRACE_S="2") as srv:
        yield srv


def _session(browser, server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    attempted = []
    block_external(ctx, server.url, attempted)
    page = ctx.new_page()
    open_app_with_sachs(page, server.url)
    return ctx, page, attempted


def _learn_run(page):
    page.get_by_role("link", name="Learn", exact=True).click(timeout=UI_TIMEOUT_MS)
    run = page.get_by_role("button", name="Run", exact=True)
    expect(run).to_be_enabled(timeout=UI_TIMEOUT_MS)
    run.click(timeout=UI_TIMEOUT_MS)


def _fit_done(page):
    return page.get_by_text(re.compile(r"^(EV|NV) (finished:|was stopped)")).first


def _check_page(page):
    page.get_by_role("link", name="Check").click(timeout=UI_TIMEOUT_MS)


ANSWER = re.compile(r"Should I believe this graph\?")


def test_check_refits_wait_for_the_slot_stop_and_end_with_the_tab(one_slot_server, browser):
    server = one_slot_server
    ctx_a, a, attempted_a = _session(browser, server)
    ctx_b, b, attempted_b = _session(browser, server)
    try:
        # B: the live Learn page (fast solver), then its Check page, while the slot is free
        b.get_by_role("link", name="Learn", exact=True).click(timeout=UI_TIMEOUT_MS)
        b.get_by_text("CoLiDE-NV · λ = 0.05", exact=True).wait_for(timeout=FIT_TIMEOUT_MS)
        _check_page(b)
        b.get_by_text(ANSWER).wait_for(timeout=FIT_TIMEOUT_MS)

        # A: a paper-faithful fit, then the Check page's heaviest check, which takes the one slot
        a.get_by_text("Paper-faithful (Algorithm 1)").click(timeout=UI_TIMEOUT_MS)
        wait_for_idle(a)
        _learn_run(a)
        _fit_done(a).wait_for(timeout=FIT_TIMEOUT_MS)
        _check_page(a)
        a.get_by_text(ANSWER).wait_for(timeout=FIT_TIMEOUT_MS)
        rescale = a.get_by_label("Random rescalings")
        rescale.fill("50")
        rescale.press("Enter")
        wait_for_idle(a)
        a.get_by_role("button", name="Standardise and refit, and rescale at random").click(timeout=UI_TIMEOUT_MS)
        a.get_by_text(re.compile(r"Checks with refits: \d")).first.wait_for(timeout=UI_TIMEOUT_MS)

        # B asks for its own Check refit: it waits for the slot A holds
        b.get_by_role("button", name="Standardise and refit, and rescale at random").click(timeout=UI_TIMEOUT_MS)
        b.get_by_text(re.compile(r"Checks with refits: waiting for a free slot \(1 of 1 compute slots busy")).first \
            .wait_for(timeout=UI_TIMEOUT_MS)

        # A presses Stop: A's refits end and A shows what was done; B's refit gets the slot and finishes
        a.locator(".st-key-check_stop button").first.click(timeout=UI_TIMEOUT_MS)
        a.get_by_text(re.compile(r"The checks were stopped \(Stop was pressed\)")).wait_for(timeout=SERVED_MS)
        a.get_by_text(ANSWER).wait_for(timeout=UI_TIMEOUT_MS)
        b.get_by_text(re.compile(r"Standardise and refit — ")).first.wait_for(timeout=SERVED_MS)
        no_exception_shown(a)
        no_exception_shown(b)

        # A runs its refits again; B's Run on the Learn page waits; A's tab is closed: B is served
        a.locator(".st-key-check_rerun button").first.click(timeout=UI_TIMEOUT_MS)
        a.get_by_text(re.compile(r"Checks with refits: \d")).first.wait_for(timeout=UI_TIMEOUT_MS)
        _learn_run(b)
        b.get_by_text(re.compile(r"waiting for a free slot \(1 of 1 compute slots busy")).first.wait_for(
            timeout=UI_TIMEOUT_MS)
        ctx_a.close()
        ctx_a = None
        _fit_done(b).wait_for(timeout=SERVED_MS)
        no_exception_shown(b)
        assert not attempted_a and not attempted_b
    finally:
        if ctx_a is not None:
            ctx_a.close()
        ctx_b.close()
