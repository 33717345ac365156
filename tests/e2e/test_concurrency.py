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
import re
import threading
from concurrent.futures import ThreadPoolExecutor


from tests.e2e.harness import (
    ARTIFACTS,
    ROOT,
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
#: The server (Streamlit on starlette/uvicorn) runs blocking work in anyio's worker threads. That
#: pool grows with the load up to anyio's default capacity limiter, 40 threads, and an idle worker
#: is only dropped when a later request finds it idle for 10 s, so the total count after a burst
#: depends on timing (measured: +3 to +9 over idle on 2 cores). The bound below is that pool's cap
#: plus slack; the leak check proper is on the threads' stacks (:func:`_session_threads`).
MAX_EXTRA_THREADS = 40 + 4
#: Code whose presence on a thread's stack marks it as a session's script thread or a fit thread.
SESSION_CODE = ("script_runner", str(ROOT / "app.py"), str(ROOT / "pages"), str(ROOT / "dashboard"),
                str(ROOT / "colide_core"))


def _stacks(dump: str) -> list[str]:
    """One faulthandler dump split into one text per thread."""
    return [b for b in re.split(r"\n(?=(?:Current thread|Thread) 0x)", dump.strip()) if b]


#: The one server-wide thread of the dashboard's own: the datasets' budget pruner
#: (``dashboard.infra.memory._start_pruner``, started once per process), not a session's.
SERVER_WIDE_CODE = str(ROOT / "dashboard" / "infra" / "memory.py")


def _session_threads(dump: str) -> list[str]:
    """The threads of a dump that run a session's script or a fit (first line + top frame each)."""
    return [" / ".join(b.splitlines()[:2]) for b in _stacks(dump)
            if any(c in b for c in SESSION_CODE) and SERVER_WIDE_CODE not in b]


def _settled(server, timeout_s=30.0):
    """(thread count, dump) once closed sessions' threads have ended (polled, bounded); after
    ``timeout_s`` the last ones, for the caller's asserts to show what is left."""
    last = []

    def ended():
        last[:] = [thread_count(server.pid), server.thread_dump()]
        return not _session_threads(last[1])

    server.wait_until(ended, timeout_s, "the closed sessions' threads to end", interval_s=0.5)
    return tuple(last)


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
            shd = shown_shd(page, variant)  # opens the Metrics tab, where the edge counts are too
            shown[(variant, lam)] = (shd, shown_metric(page, f"Edges · {variant.upper()}"))
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
            idle_rss = rss_bytes(server.pid)
            idle_threads, idle_dump = _settled(server)

            sampler = _RssSampler(server.pid)
            sampler.start()
            try:
                round1 = _round(browser, server, attempted, "r1")
                rss1 = rss_bytes(server.pid)
                threads1, dump1 = _settled(server)
                round2 = _round(browser, server, attempted, "r2")
                rss2 = rss_bytes(server.pid)
                threads2, dump2 = _settled(server)
            finally:
                sampler.stop.set()
                sampler.join(timeout=5)
            expected = {job: fut.result(timeout=600) for job, fut in expected.items()}
        log = server.log_text()

    report = (f"idle {idle_rss / MB:.0f} MB, peak {sampler.peak / MB:.0f} MB ({sampler.samples} samples), "
              f"after round 1 {rss1 / MB:.0f} MB, after round 2 {rss2 / MB:.0f} MB; threads idle "
              f"{idle_threads}, settled after round 1 {threads1}, after round 2 {threads2}; Python "
              f"threads idle {len(_stacks(idle_dump))}, after round 2 {len(_stacks(dump2))}")
    (ARTIFACTS / "concurrency_memory.txt").write_text(report + "\n" + repr(round1) + "\n")
    assert len(set(expected.values())) == len(JOBS), expected  # the check can tell sessions apart
    assert round1 == expected, (round1, expected)
    assert round2 == expected, (round2, expected)
    assert sampler.samples > 10 and sampler.peak - idle_rss < MAX_PEAK_GROWTH, report
    assert rss2 - rss1 < MAX_ROUND_GROWTH, report
    # closed sessions' script threads and fit threads end; what remains are the server's pools
    assert _session_threads(idle_dump) == [], idle_dump
    assert _session_threads(dump1) == [], dump1
    assert _session_threads(dump2) == [], dump2
    # every thread is a Python thread the dump can name (no native pool, e.g. BLAS, appeared) ...
    # (+1: a pool thread may start or end between the count and the dump)
    assert threads2 - len(_stacks(dump2)) <= threads1 - len(_stacks(dump1)) + 1, report
    # ... and the worker pool stays within its cap
    assert threads2 <= idle_threads + MAX_EXTRA_THREADS, report
    assert attempted == [], attempted
    assert "Traceback" not in log, log[-3000:]
