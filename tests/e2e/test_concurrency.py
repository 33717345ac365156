"""Five users at once on one real server: each session gets its own, correct result; memory and
threads stay bounded.

A fresh ``streamlit run app.py`` is driven by five Playwright browser contexts (five independent
Streamlit sessions). Each loads Sachs, picks a different CoLiDE variant / lambda, and all five press
Run before any has finished, so the five solves overlap in the server. Each page must then show the
SHD and edge count of a direct ``colide_core`` call with its own parameters (the five (SHD, edges)
pairs are all different, so a result delivered to the wrong session would be caught). A second round
of five new sessions (answered from the fit cache) checks that memory does not grow per session.
Traffic goes only to 127.0.0.1; every wait has a timeout.
"""
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor


from tests.e2e.harness import (
    ARTIFACTS,
    StreamlitServer,
    block_external,
    library_result,
    open_app_with_sachs,
    rss_bytes,
    shown_metric,
    shown_shd,
    start_fit,
    thread_count,
    wait_for_result,
)

# (variant, lambda1): on Sachs with the default threshold 0.3 these give the (SHD, edges) pairs
# (12, 14), (12, 13), (13, 12), (14, 10), (13, 11): pairwise different.
JOBS = [("nv", 0.01), ("nv", 0.05), ("nv", 0.1), ("nv", 0.2), ("ev", 0.2)]
MB = 1024 * 1024
#: Peak server memory allowed above its idle size while five paper-faithful Sachs solves run.
MAX_PEAK_GROWTH = 600 * MB
#: Growth allowed from the end of round 1 to the end of round 2 (five more sessions, cached fits).
MAX_ROUND_GROWTH = 150 * MB
#: Threads allowed above the idle count once the sessions are closed. The server's thread pools grow
#: up to their size and then stay (measured: +5..6 after cached fits, flat over further rounds): the
#: asyncio default executor holds min(32, cpu_count + 4) threads. Plus 2 for slack.
MAX_EXTRA_THREADS = min(32, (os.cpu_count() or 1) + 4) + 2


def _settled_threads(pid, idle, timeout_s=30.0):
    """Thread count once closed sessions have wound down (polled every 0.5 s, bounded)."""
    deadline = time.monotonic() + timeout_s
    count = thread_count(pid)
    while count > idle + MAX_EXTRA_THREADS and time.monotonic() < deadline:
        time.sleep(0.5)
        count = thread_count(pid)
    return count


class _RssSampler(threading.Thread):
    """Samples the server's RSS every 0.2 s (bounded by ``stop``)."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.samples = pid, 0, 0
        self.stop = threading.Event()

    def run(self):
        while not self.stop.wait(0.2):
            try:
                self.peak = max(self.peak, rss_bytes(self.pid))
                self.samples += 1
            except (OSError, RuntimeError):
                return


def _round(browser, server, attempted, tag):
    """Five sessions: set up and Run in each, then collect what each page shows."""
    contexts, pages = [], []
    try:
        for variant, lam in JOBS:
            ctx = browser.new_context(viewport={"width": 1300, "height": 1000})
            block_external(ctx, server.url, attempted)
            contexts.append(ctx)
            page = ctx.new_page()
            pages.append(page)
            open_app_with_sachs(page, server.url)
            start_fit(page, variant, lam)  # returns as soon as Run is clicked
        shown = {}
        for page, (variant, lam) in zip(pages, JOBS):
            wait_for_result(page, variant, lam)
            edges = shown_metric(page, f"Edges · {variant.upper()}")
            shown[(variant, lam)] = (shown_shd(page, variant), edges)
            page.screenshot(path=str(ARTIFACTS / f"concurrency_{tag}_{variant}_{lam:g}.png"))
        return shown
    finally:
        for ctx in contexts:
            ctx.close()


def test_five_concurrent_sessions_get_their_own_correct_results(browser):
    # Its own server (not the shared e2e one) so that its memory is measured from a clean start;
    # the session's single Playwright browser (tests/e2e/conftest.py) drives it, because a second
    # sync_playwright() cannot start while that one is running.
    attempted = []
    with StreamlitServer(log_name="concurrency_streamlit.log") as server:
        # the reference results are computed in a side thread while the server works
        with ThreadPoolExecutor(max_workers=1) as pool:
            expected = {job: pool.submit(library_result, *job) for job in JOBS}

            # one warm-up session so the idle size includes the imported app and Sachs
            ctx = browser.new_context()
            block_external(ctx, server.url, attempted)
            open_app_with_sachs(ctx.new_page(), server.url)
            ctx.close()
            idle_rss, idle_threads = rss_bytes(server.pid), thread_count(server.pid)

            sampler = _RssSampler(server.pid)
            sampler.start()
            try:
                round1 = _round(browser, server, attempted, "r1")
                rss1, threads1 = rss_bytes(server.pid), _settled_threads(server.pid, idle_threads)
                round2 = _round(browser, server, attempted, "r2")
                rss2, threads2 = rss_bytes(server.pid), _settled_threads(server.pid, idle_threads)
            finally:
                sampler.stop.set()
                sampler.join(timeout=5)
            expected = {job: fut.result(timeout=600) for job, fut in expected.items()}
        log = server.log_text()

    report = (f"idle {idle_rss / MB:.0f} MB, peak {sampler.peak / MB:.0f} MB ({sampler.samples} samples), "
              f"after round 1 {rss1 / MB:.0f} MB, after round 2 {rss2 / MB:.0f} MB; threads idle "
              f"{idle_threads}, settled after round 1 {threads1}, after round 2 {threads2}")
    (ARTIFACTS / "concurrency_memory.txt").write_text(report + "\n" + repr(round1) + "\n")
    assert len(set(expected.values())) == len(JOBS), expected  # the check can tell sessions apart
    assert round1 == expected, (round1, expected)
    assert round2 == expected, (round2, expected)
    assert sampler.samples > 10 and sampler.peak - idle_rss < MAX_PEAK_GROWTH, report
    assert rss2 - rss1 < MAX_ROUND_GROWTH, report
    # closed sessions' script threads and the fit threads end: the count returns near idle
    assert threads2 <= idle_threads + MAX_EXTRA_THREADS, report
    assert attempted == [], attempted
    assert "Traceback" not in log, log[-3000:]
