"""Helpers shared by the browser tests (tests/e2e) and tests/e2e/test_concurrency.py.

* :class:`StreamlitServer` runs ``streamlit run app.py`` on a free 127.0.0.1 port and stops it.
* :func:`launch_chromium` starts Debian's ``/usr/bin/chromium`` through Playwright (Playwright's own
  browser download cannot work offline), with the flags the project requires.
* :func:`block_external` aborts every request that does not go to the local server and records it.
* :func:`library_shd` is the reference: the SHD of a direct ``colide_core.CoLiDE`` fit on Sachs.
* :func:`run_fit` drives one browser page through Data -> Learn -> Run and reads the SHD shown.
* :func:`wait_for_idle`, :func:`graph_frame` and :func:`wait_for_drawing` wait for what a step needs
  (no script run going on, a drawing ready, a drawing redrawn in place for the page's new heading).

All traffic stays on 127.0.0.1, every wait has a timeout and every loop a bound. No test waits a
fixed time: browser-side conditions are waited for with Playwright (``expect``, ``wait_for``,
``wait_for_function``); server-side ones with :meth:`StreamlitServer.wait_until`, the one place
that polls (between polls it waits on the server process itself, so a server that dies ends the
wait at once).
"""
from __future__ import annotations

import contextlib
import functools
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
#: Generous: a paper-faithful Sachs fit takes seconds alone, much longer with 5 at once on 2 cores.
FIT_TIMEOUT_MS = 420_000
UI_TIMEOUT_MS = 60_000


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_bytes(pid: int) -> int:
    """Resident set size of a process (psutil when installed, else /proc/<pid>/status)."""
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        return int(psutil.Process(pid).memory_info().rss)
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


class StreamlitServer:
    """``streamlit run app.py`` on a free localhost port (a context manager).

    Attributes: ``port``, ``url`` (``http://127.0.0.1:<port>``), ``proc`` (the Popen), ``log`` (path).
    ``root`` (default this checkout) is the tree whose ``app.py`` is served, first on ``PYTHONPATH``
    (``benchmarks/bench_app.py --baseline`` serves an older commit's tree beside this one).
    """

    def __init__(self, log_name="streamlit.log", start_timeout_s=90.0, root=None):
        self.root = ROOT if root is None else Path(root)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.log = ARTIFACTS / log_name
        self.start_timeout_s = start_timeout_s
        self.proc = None

    def __enter__(self):
        python = ROOT / ".venv" / "bin" / "python"
        self.dump = self.log.with_suffix(".threads.txt")
        self.dump.write_text("")
        cmd = [str(python) if python.exists() else sys.executable,
               str(self.root / "tests" / "e2e" / "serve.py"), str(self.dump), "run", "app.py",
               "--server.headless", "true",
               "--server.port", str(self.port),
               "--server.address", "127.0.0.1",
               "--server.fileWatcherType", "none",
               "--server.runOnSave", "false",
               "--browser.gatherUsageStats", "false"]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if self.root != ROOT:
            env["PYTHONPATH"] = os.pathsep.join([str(self.root)] + [p for p in [env.get("PYTHONPATH")] if p])
        self._log_fh = open(self.log, "w")
        self.proc = subprocess.Popen(cmd, cwd=self.root, stdout=self._log_fh, stderr=subprocess.STDOUT,
                                     env=env)

        def healthy():
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False

        try:
            ok = self.wait_until(healthy, self.start_timeout_s, "the health endpoint", interval_s=0.3)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        if not ok:
            self.__exit__(None, None, None)
            raise RuntimeError(f"streamlit did not become healthy in {self.start_timeout_s} s")
        return self

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self._log_fh.close()
        return False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_until(self, condition, timeout_s: float, what: str, interval_s: float = 0.2) -> bool:
        """Poll ``condition()`` until it is true (True) or ``timeout_s`` has passed (False).

        The one polling loop of the browser tests, for conditions of the server process that no
        page shows (its health endpoint, its threads, a file it writes). Between two polls it waits
        up to ``interval_s`` for the server process to exit: a server that dies raises at once,
        with its log, instead of being polled until the deadline.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            if condition():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                self.proc.wait(timeout=min(interval_s, left))
            except subprocess.TimeoutExpired:
                continue
            raise RuntimeError(f"streamlit exited with {self.proc.returncode} while waiting for {what}: "
                               f"{self.log_text()[-3000:]}")

    def thread_dump(self, timeout_s=5.0) -> str:
        """Every Python thread's stack in the server (faulthandler on SIGUSR1), as text.

        Threads that are not Python threads (e.g. a BLAS pool) are not listed: compare the number
        of ``Thread 0x`` entries with :func:`thread_count` to see them.
        """
        before = self.dump.stat().st_size
        self.proc.send_signal(signal.SIGUSR1)
        sizes = [before]

        def written():  # written and no longer growing from one poll to the next
            sizes.append(self.dump.stat().st_size)
            return sizes[-1] > before and sizes[-1] == sizes[-2]

        self.wait_until(written, timeout_s, "the thread dump")
        with open(self.dump, errors="replace") as fh:
            fh.seek(before)
            return fh.read()

    def log_text(self) -> str:
        self._log_fh.flush()
        return self.log.read_text(errors="replace")


@contextlib.contextmanager
def server_with_env(log_name, **env):
    """A :class:`StreamlitServer` started with the environment variables ``env`` set for its
    process (``COLIDE_MAX_CONCURRENT_JOBS="1"``, ...), and this process's values restored after.

    Parameters
    ----------
    log_name : str
        The server's log file name (under the artifacts folder).
    **env : str
        The variables to set.

    Yields
    ------
    StreamlitServer
    """
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update({k: str(v) for k, v in env.items()})
    try:
        with StreamlitServer(log_name=log_name) as srv:
            yield srv
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def launch_chromium(playwright):
    """Debian's chromium, headless, with the project's flags."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


def block_external(context, base_url: str, attempted: list) -> None:
    """Abort every request of ``context`` that does not go to ``base_url``; record its URL."""
    local = (base_url.rstrip("/") + "/", "data:", "blob:", "about:")

    def handle(route):
        url = route.request.url
        if url.startswith(local) or url == base_url:
            route.continue_()
        else:
            attempted.append(url)
            route.abort()

    context.route("**/*", handle)


@functools.lru_cache(maxsize=None)
def library_result(variant: str, lambda1: float, threshold: float = 0.3) -> tuple:
    """``(shd, n_edges)`` of a direct library fit on Sachs with the dashboard's parameters.

    The dashboard runs ``colide_core.CoLiDE(variant, lambda1=...)`` with every other parameter at
    its default, thresholds with ``threshold_to_dag`` (default 0.3) and scores with
    ``colide_core.evaluate`` against the 17-edge consensus DAG.
    """
    import colide_core

    X, B_true = colide_core.load_sachs()
    model = colide_core.CoLiDE(variant, lambda1=lambda1).fit(X)
    A = colide_core.threshold_to_dag(model.W_, threshold)
    return int(colide_core.evaluate(B_true, A)["shd"]), int((A != 0).sum())


def library_shd(variant: str, lambda1: float, threshold: float = 0.3) -> int:
    """SHD of :func:`library_result`."""
    return library_result(variant, lambda1, threshold)[0]


def thread_count(pid: int) -> int:
    """Number of threads of a process (/proc/<pid>/status)."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise RuntimeError(f"no Threads for pid {pid}")


def no_exception_shown(page) -> None:
    """Fail when Streamlit shows a traceback (an ``stException`` element) on the page."""
    exc = page.locator('[data-testid="stException"]')
    if exc.count():
        raise AssertionError(f"the page shows an exception: {exc.first.inner_text()[:2000]}")


def open_app_with_sachs(page, base_url: str) -> None:
    """Open the app's main (Data) page and make the bundled Sachs data current."""
    page.goto(base_url + "/", timeout=UI_TIMEOUT_MS)
    page.get_by_role("button", name="Use the Sachs data").click(timeout=UI_TIMEOUT_MS)
    page.get_by_text("Current dataset: Sachs").wait_for(timeout=UI_TIMEOUT_MS)
    no_exception_shown(page)


def wait_for_idle(page, timeout_ms: int = UI_TIMEOUT_MS) -> None:
    """Wait until no script run of the page's session is going on (Streamlit's own marker, the
    ``data-test-script-state`` attribute of ``stApp``).

    Call it after something that proves the run of interest has started (a text it shows): right
    after a click the page may still read "notRunning" until the server has started the rerun.
    """
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning",
                                                           timeout=timeout_ms)


def start_fit(page, variant: str, lambda1: float) -> None:
    """On the Learn page (reached through the sidebar, same session): pick variant and lambda, Run.

    The dataset must be live (Sachs is): the page then draws the fit at the new λ before Run, which
    shows that the server has the slider's value (the slider sends it once the keys stop, debounced),
    so the Run click is for that λ.
    """
    page.get_by_role("link", name="Learn", exact=True).click(timeout=UI_TIMEOUT_MS)
    run = page.get_by_role("button", name="Run", exact=True)
    run.wait_for(timeout=UI_TIMEOUT_MS)
    radio = page.get_by_role("radiogroup", name="Noise model").get_by_role(
        "radio", name=variant.upper(), exact=True)
    if radio.get_attribute("aria-checked", timeout=UI_TIMEOUT_MS) != "true":
        radio.click(timeout=UI_TIMEOUT_MS)
        page.wait_for_function(
            """(v) => [...document.querySelectorAll('[role=radiogroup][aria-label="Noise model"] [role=radio]')]
                      .some(b => b.innerText.trim() === v && b.getAttribute('aria-checked') === 'true')""",
            arg=variant.upper(), timeout=UI_TIMEOUT_MS)
    set_lambda(page, lambda1)
    # .first: during a rerun Streamlit may briefly show the stale heading beside the new one (both
    # match once they carry this λ; seen in the full suite on a loaded machine)
    page.get_by_text(re.compile(rf"^CoLiDE-{variant.upper()}\b.*λ = {re.escape(f'{lambda1:g}')}$")).first.wait_for(
        timeout=FIT_TIMEOUT_MS)
    run.click(timeout=UI_TIMEOUT_MS)


LAMBDA_LABEL = "λ (L1 weight, lambda1)"


def lambda_slider(page):
    """The Learn page's log-scale λ slider (a ``st.select_slider``)."""
    return page.get_by_test_id("stSlider").filter(has=page.get_by_text(LAMBDA_LABEL, exact=True))


def set_lambda(page, lambda1: float, max_keys: int = 40) -> None:
    """Move the Learn page's λ slider to ``lambda1`` with the keyboard, as a user would.

    The thumb is focused and moved one grid step per arrow key until it shows ``lambda1`` (3
    significant digits, the app's format); at most ``max_keys`` presses.
    """
    target = f"{lambda1:.3g}"
    slider = lambda_slider(page)
    thumb = slider.get_by_role("slider")
    shown = slider.get_by_test_id("stSliderThumbValue")
    thumb.focus(timeout=UI_TIMEOUT_MS)
    for _ in range(max_keys):
        now = shown.inner_text(timeout=UI_TIMEOUT_MS).strip()
        if now == target:
            return
        thumb.press("ArrowRight" if float(now) < lambda1 else "ArrowLeft")
    raise AssertionError(f"the λ slider did not reach {target} (shows {shown.inner_text().strip()})")


def wait_for_result(page, variant: str, lambda1: float) -> None:
    """Wait until the Run job of ``variant`` with ``lambda1`` has finished and its result is shown.

    On a live dataset (Sachs) the live view draws the same result before the Run job ends; the job's
    own message ("NV finished: ...") comes with the last rerun that changes the page, so waiting for
    it keeps later steps from racing that rerun (bounded by ``FIT_TIMEOUT_MS``).
    """
    page.get_by_text(re.compile(rf"^{variant.upper()} (finished:|was stopped)")).first.wait_for(
        timeout=FIT_TIMEOUT_MS)
    page.get_by_text(re.compile(rf"^CoLiDE-{variant.upper()}\b.*λ = {re.escape(f'{lambda1:g}')}$")).first.wait_for(
        timeout=UI_TIMEOUT_MS)
    page.get_by_role("tab", name="Metrics").wait_for(timeout=UI_TIMEOUT_MS)
    no_exception_shown(page)


#: A drawing is ready once its page has run all its scripts (vis-network's drawGraph, then the fit
#: script) and the network holds its nodes.
GRAPH_READY_JS = ("() => document.readyState !== 'loading' && typeof network !== 'undefined'"
                  " && network.body.data.nodes.length > 0")


#: Every graph drawing on a page: the long-lived drawing (a Streamlit component, dashboard.graphview)
#: or a page in an ``st.iframe`` (the Playback tab, and the fallback where the component cannot be served).
DRAWINGS = '[data-testid="stCustomComponentV1"], [data-testid="stIFrame"]'


def drawings(where):
    """The graph drawings' iframes in ``where`` (a page or a locator), in page order."""
    return where.locator(DRAWINGS)


#: In a drawing's frame: it has drawn the graph headed ``l`` (the label the page sent with it).
LABEL_DRAWN_JS = "(l) => window.colideLabel === l && colideDrawn > 0"


def drawing_for(page, heading: str):
    """The drawing's iframe that the page heads ``heading`` (plain text, e.g. "CoLiDE-EV · λ = 0.05").

    Found through the innermost block holding both the heading and a drawing (each drawing sits in
    a container with its heading), not by position: ``drawings(page).first`` can resolve to another
    drawing while a rerun is still adding the page's drawings (seen in the full suite: the NV
    drawing's frame, mounted first, held while the test waited for EV's label).
    """
    blocks = page.get_by_test_id("stVerticalBlock").filter(has=page.get_by_text(heading, exact=True))
    return blocks.filter(has=page.locator(DRAWINGS)).last.locator(DRAWINGS).first


def labelled_frame(page, heading: str, timeout_ms: int = UI_TIMEOUT_MS):
    """The frame of the drawing the page heads ``heading``, once it has drawn the graph of that heading.

    The drawing is found again (:func:`drawing_for`) until its frame holds ``heading``'s drawing:
    while a rerun is still replacing a page's elements, a heading can already stand above another
    graph's frame (seen in the full suite on a loaded machine: the EV heading over the NV drawing's
    frame of the run before, which the next delta replaced). Hold the frame returned to check that
    later reruns redraw that same document (:func:`wait_for_drawing`).
    """
    deadline = time.monotonic() + timeout_ms / 1000
    shown = None
    while True:
        left_ms = int((deadline - time.monotonic()) * 1000)
        if left_ms <= 0:
            raise AssertionError(f"no drawing of {heading!r} in {timeout_ms} ms (the last frame found shows {shown!r})")
        frame = graph_frame(drawing_for(page, heading), timeout_ms=max(1000, left_ms))
        try:
            frame.wait_for_function(LABEL_DRAWN_JS, arg=heading,
                                    timeout=max(1, min(left_ms, 3_000)))
            return frame
        except Exception:  # another graph's frame, or detached meanwhile: find the drawing again
            try:
                shown = None if frame.is_detached() else frame.evaluate("() => [window.colideLabel, colideDrawn]")
            except Exception:
                shown = "detached"


def wait_for_drawing(frame, label: str, timeout_ms: int = UI_TIMEOUT_MS) -> None:
    """Wait until the long-lived drawing in ``frame`` has drawn the graph the page heads ``label``
    (plain text, e.g. "CoLiDE-NV · λ = 0.5"): it keeps the heading of the last drawing it drew."""
    # In slices, so that a frame remounted meanwhile (detached: Playwright would wait on it until the
    # timeout) fails at once and says so: a page element inserted above a drawing remounts it.
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        if frame.is_detached():
            raise AssertionError(f"the drawing's frame was detached (remounted) while waiting for {label!r}")
        left_ms = int((deadline - time.monotonic()) * 1000)
        if left_ms <= 0:
            shown = None if frame.is_detached() else frame.evaluate("() => [window.colideLabel, colideDrawn]")
            raise AssertionError(f"the drawing did not draw {label!r} in {timeout_ms} ms (it shows {shown!r})")
        try:
            frame.wait_for_function(LABEL_DRAWN_JS, arg=label,
                                    timeout=min(left_ms, 5_000))
            return
        except PlaywrightTimeoutError:
            continue


def graph_frame(iframe, ready_js: str = GRAPH_READY_JS, timeout_ms: int = UI_TIMEOUT_MS):
    """The frame of a drawing's iframe (a Playwright locator) once ``ready_js`` holds in it.

    A rerun may replace the iframe between finding it and reading its frame (the element is
    detached, its frame gone), or load another document into it: then the locator is resolved
    again, after waiting for an iframe to be attached, until ``timeout_ms`` has passed. A drawing
    redrawn in place keeps its frame: wait for the new drawing with :func:`wait_for_drawing`.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    last = None
    while time.monotonic() < deadline:
        left_ms = max(1000, int((deadline - time.monotonic()) * 1000))
        try:
            frame = iframe.element_handle(timeout=left_ms).content_frame()
            if frame is not None:
                frame.wait_for_function(ready_js, timeout=min(left_ms, 15_000))
                return frame
        except Exception as exc:  # a detached element or frame, a timeout: resolve the locator again
            last = exc
        try:
            iframe.wait_for(state="attached", timeout=left_ms)
        except Exception as exc:
            last = exc
    raise AssertionError(f"no ready drawing in {timeout_ms} ms: {last!r}")


def shown_metric(page, label: str) -> int:
    """The integer value of the ``st.metric`` whose label is ``label``."""
    metric = page.get_by_test_id("stMetric").filter(
        has=page.get_by_test_id("stMetricLabel").get_by_text(label, exact=True))
    value = metric.get_by_test_id("stMetricValue")
    value.wait_for(timeout=UI_TIMEOUT_MS)
    return int(value.inner_text().strip())


def shown_shd(page, variant: str) -> int:
    """Open the Metrics tab and read the ``SHD · <VARIANT>`` metric."""
    page.get_by_role("tab", name="Metrics").click(timeout=UI_TIMEOUT_MS)
    return shown_metric(page, f"SHD · {variant.upper()}")


def run_fit(page, base_url: str, variant: str, lambda1: float) -> int:
    """Whole flow in one page: Sachs, Learn, Run, wait, return the SHD shown."""
    open_app_with_sachs(page, base_url)
    start_fit(page, variant, lambda1)
    wait_for_result(page, variant, lambda1)
    return shown_shd(page, variant)

