"""Responsiveness of the Learn page: a click on "Run" (AppTest) and a λ slider move (browser).

Usage::

    .venv/bin/python -m benchmarks.bench_app [--repeats 5] [--browser-only] [--screenshots]   (from the repository root: the browser part uses tests/e2e/harness.py)

The browser part (:func:`browser_slider`) starts ``streamlit run app.py`` and Debian's headless
chromium (``tests/e2e/harness``), opens the live Learn page at 1280×720 on Sachs and on a
simulated ER2 graph with d = 50 (n = 1000), and times one arrow key on the λ slider until both
the learned graphs shown are redrawn with the new λ (EV and NV side by side on Sachs; at d = 50
the page shows one drawing at a time, NV, so labels stay readable, but the live page still solves
both): new λ values (solved) and values seen before
(cache hits). Targets (issue 25): median under 0.5 s on Sachs, under 1 s at d = 50.

Drives the real app with ``streamlit.testing.v1.AppTest`` (no browser): opens the Learn page,
clicks **Run** for NV, then EV, then NV again (a cache hit), and times each script run from the
click until the page is redrawn with the result. That time includes the background fit job,
the ``st.cache_data`` lookup and store, the page's polling loop and the rendering of the graph,
tables and figures. Each repetition clears the fit cache first. Both solvers are measured: the
default fast one and the paper-faithful schedule (sidebar choice "adam").

Prints a markdown table (median and max over repetitions) and the first-click time of the first
repetition separately, which includes loading the numba kernels if the warm-up thread has not
finished yet.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from dashboard import fitting

ROOT = Path(__file__).resolve().parent.parent


def one_session(solver):
    """Times (s) of: NV click, EV click, NV click again (cached), for one fresh session."""
    fitting.fit_colide.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.run()
    at.switch_page("pages/learn.py").run()
    if solver != "auto":
        at.sidebar.radio(key="solver_choice").set_value(solver).run()
    times = []
    for variant in ("NV", "EV", "NV"):
        at.segmented_control(key="learn_variant").set_value(variant).run()
        t0 = time.perf_counter()
        at.button(key="learn_run").click().run()
        times.append(time.perf_counter() - t0)
        if at.exception:
            raise RuntimeError(at.exception)
        if not any(f"{variant} finished" in s.value for s in at.success):
            raise RuntimeError(f"{variant} did not finish: {[s.value for s in at.success]}")
    return times


# --------------------------------------------------------------------------------------------------
# In a real browser: λ slider move -> graphs drawn, on the live Learn page (issue 25)
# --------------------------------------------------------------------------------------------------

#: JavaScript: true once every learned graph shown (EV and NV side by side; at d = 50 only the
#: one drawing shown, graph_style.per_row) is headed with the new λ and its iframe shows a new,
#: drawn document.
_DRAWN_JS = """([before, lam]) => {
    const heads = [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
        .map(e => e.innerText.trim()).filter(t => /^CoLiDE-(EV|NV) · λ = /.test(t));
    if (!heads.length || heads.some(h => !h.endsWith('λ = ' + lam))) return false;
    const frames = [...document.querySelectorAll('[data-testid="stIFrame"]')].slice(0, heads.length);
    if (frames.length < heads.length) return false;
    if (frames.map(f => f.srcdoc || '').some(d => before.includes(d))) return false;
    return frames.every(f => f.contentDocument && f.contentDocument.readyState === 'complete'
                             && f.contentDocument.querySelector('canvas'));
}"""


def _graph_docs(page):
    return page.evaluate("""() => [...document.querySelectorAll('[data-testid="stIFrame"]')]
                                  .slice(0, 2).map(f => f.srcdoc || '')""")


#: Seconds between two slider moves: a class looks at the graph before the next step (the page
#: warms the cache for the neighbouring λ values meanwhile, dashboard.live).
PAUSE_S = 1.5


def _move(page, key, timeout_ms=120_000):
    """Press one arrow key on the λ slider; seconds until the learned graphs shown are redrawn."""
    page.wait_for_timeout(PAUSE_S * 1000)
    from tests.e2e.harness import lambda_slider

    slider = lambda_slider(page)
    thumb = slider.get_by_role("slider")
    before = _graph_docs(page)
    old = slider.get_by_test_id("stSliderThumbValue").inner_text().strip()
    t0 = time.perf_counter()
    thumb.press(key)
    new = slider.get_by_test_id("stSliderThumbValue").inner_text().strip()
    if new == old:
        raise RuntimeError(f"the λ slider did not move from {old} with {key}")
    page.wait_for_function(_DRAWN_JS, arg=[before, new], timeout=timeout_ms, polling=10)
    return time.perf_counter() - t0, new


def _learn_live(page, url, simulate_d=None, screenshot=None):
    """Open the app with Sachs (or a simulated graph with ``simulate_d`` nodes), then the Learn page."""
    from tests.e2e.harness import UI_TIMEOUT_MS, open_app_with_sachs, set_lambda

    open_app_with_sachs(page, url)
    if simulate_d is not None:
        page.get_by_role("link", name="Simulate").click(timeout=UI_TIMEOUT_MS)
        box = page.get_by_role("spinbutton", name="Nodes d")
        box.fill(str(simulate_d), timeout=UI_TIMEOUT_MS)
        box.press("Enter")
        page.wait_for_timeout(500)
        page.get_by_role("button", name="Simulate").click(timeout=UI_TIMEOUT_MS)
        page.get_by_text("The simulated dataset is now the current dataset").wait_for(timeout=UI_TIMEOUT_MS)
    page.get_by_role("link", name="Learn").click(timeout=UI_TIMEOUT_MS)
    page.get_by_text("CoLiDE-NV · λ = 0.05", exact=True).wait_for(timeout=180_000)
    page.wait_for_timeout(1000)
    if screenshot is not None:
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(screenshot))
    set_lambda(page, 0.05)
    page.get_by_test_id("stSlider").first.get_by_role("slider").focus()


def browser_slider(screenshots=False):
    """Median/max seconds from a λ key press to the graphs redrawn, per dataset and kind of move.

    Each dataset: 5 moves up the grid from 0.05 (new λ: solved, or prefetched during the pause of
    :data:`PAUSE_S` before the move), 5 back down (seen before: cache hits), 5 below 0.05 (new).
    Returns rows (dataset, move kind, median, max, count).
    """
    from playwright.sync_api import sync_playwright

    from tests.e2e.harness import StreamlitServer, block_external, launch_chromium, lambda_slider

    rows = []
    with StreamlitServer(log_name="bench_app_streamlit.log") as server, sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            for label, d in (("Sachs (d = 11)", None), ("simulated ER2, d = 50, n = 1000", 50)):
                attempted = []
                context = browser.new_context(viewport={"width": 1280, "height": 720})
                block_external(context, server.url, attempted)
                page = context.new_page()
                shot = None
                if screenshots:
                    shot = ROOT / "docs" / "images" / ("learn-sachs-1280x720.png" if d is None
                                                       else "learn-d50-1280x720.png")
                _learn_live(page, server.url, d, shot)
                lambda_slider(page).get_by_role("slider").focus()
                solved, cached = [], []
                for _ in range(5):
                    solved.append(_move(page, "ArrowRight")[0])
                for _ in range(5):
                    cached.append(_move(page, "ArrowLeft")[0])
                for _ in range(5):
                    solved.append(_move(page, "ArrowLeft")[0])
                context.close()
                if attempted:
                    raise RuntimeError(f"requests left 127.0.0.1: {attempted}")
                rows.append((label, "new λ (prefetched or solved)", statistics.median(solved), max(solved),
                             len(solved)))
                rows.append((label, "λ seen before (cache)", statistics.median(cached), max(cached), len(cached)))
        finally:
            browser.close()
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--browser-only", action="store_true", help="only the browser λ-slider measurement")
    ap.add_argument("--screenshots", action="store_true",
                    help="also write docs/images/learn-sachs-1280x720.png and learn-d50-1280x720.png")
    args = ap.parse_args(argv)
    if args.browser_only:
        _print_browser(browser_slider(args.screenshots))
        return
    rows = []
    first = None
    for solver in ("auto", "adam"):
        runs = [one_session(solver) for _ in range(args.repeats if solver == "auto" else 1)]
        if first is None:
            first = runs[0][0]
        for i, label in enumerate(("NV (solve)", "EV (solve)", "NV again (cache hit)")):
            vals = [r[i] for r in runs]
            rows.append((solver, label, statistics.median(vals), max(vals), len(vals)))
    print("| solver | click | median s | max s | runs |")
    print("|---|---|---|---|---|")
    for solver, label, med, mx, k in rows:
        print(f"| {solver} | {label} | {med:.3f} | {mx:.3f} | {k} |")
    print(f"\nFirst click of the first session (fast solver, numba kernels possibly still loading): {first:.3f} s")
    _print_browser(browser_slider(args.screenshots))


def _print_browser(rows):
    print("\nIn headless chromium at 1280×720 (live Learn page): one arrow key on the λ slider until the "
          "learned graphs shown are redrawn (EV and NV on Sachs, NV alone at d = 50; Streamlit's slider "
          "debounce, the rerun, both fits, the drawing), "
          f"{PAUSE_S:g} s after the previous move.")
    print("| dataset | move | median s | max s | moves |")
    print("|---|---|---|---|---|")
    for label, kind, med, mx, k in rows:
        print(f"| {label} | {kind} | {med:.3f} | {mx:.3f} | {k} |")


if __name__ == "__main__":
    main()
