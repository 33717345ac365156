"""Load test (issue 30): live sessions moving λ sliders while one session uploads the worst reference
file allowed and another runs the heaviest Check, against one real ``streamlit run`` server.

Usage::

    .venv/bin/python -m benchmarks.bench_load [--sessions 20] [--seconds 90] [--steps 8]
        (from the repository root: it uses tests/e2e/harness.py for the server and chromium)

One run, four phases on the same server (``streamlit run app.py`` on 127.0.0.1, the default
compute slots: the core count):

1. **quiet**: one honest session on the live Learn page (Sachs) moves the λ slider ``--steps``
   times (one arrow key, until both drawings show the new λ; the moves alternate up and down the
   grid, so half are new λ values and half cache hits, as in ``benchmarks/bench_app.py``);
2. **load starts**: ``--sessions`` live sessions move their own λ sliders without pause: by default
   :class:`WsSession` clients that speak Streamlit's websocket protocol (real sessions, real reruns,
   both fits and both drawings built and sent by the server; no browser), with ``--browser``
   headless chromium pages (one browser, one context each); one
   session uploads the worst reference allowed on the Check page (a DOT file of just under the
   DOT limit, ``colide_core.graph.export.DOT_MAX_BYTES``, else
   :data:`colide_core.graph.reference.REFERENCE_MAX_BYTES`: the slowest reader per byte, naming
   the data's nodes), again after each answer; another session fits with the paper-faithful solver and
   runs the heaviest Check (1,000 random DAGs, standardise and refit, 50 random rescalings: a job
   holding one compute slot);
3. **loaded**: the honest session moves its slider ``--steps`` times again;
4. the load runs for ``--seconds`` in all.

Throughout, a thread times ``GET /_stcore/health`` every 0.25 s and samples the server's RSS every
second. Prints (and writes to ``benchmarks/results/load.md``) the health latency (p50, p90, max),
the RSS over time, and the honest session's λ-step times, quiet against loaded.

``--round5 closed|heavy|both`` (issue 53) runs, instead, one or both of two phases, each on a fresh
server, and writes ``benchmarks/results/load_round5.md``:

* **closed tabs** (:func:`closed_tabs`): ``--tabs`` tabs, ``--group`` at a time, ask the Simulate page
  for its largest simulation on a CPU (:func:`_largest_simulation`), wait for the answer and close;
  the server's RSS is sampled throughout and ``CLOSED_GRACE_S + 30`` s after the last close, then
  new tabs with a small simulation ask the dataset budget (when closed tabs past their grace are
  dropped). Counts the simulations made, refused by the budget or ended by a ``MemoryError``, and
  every traceback, exception element or server path a tab was sent;
* **heavy presser** (:func:`heavy_presser`): ``--sessions`` tabs: one honest tab walking λ up the
  grid on its own simulated data (every step two fresh fits), ``--sessions - 2`` tabs on Sachs
  stepping λ every ``--every`` s, and one tab pressing every heavy button (:func:`_presser`:
  Predict's intervals, ranking and GES + IDA, Check's 1,000 DAGs and refit and its λ path, the
  bootstrap on every core, stability selection), its jobs taking turns. The honest tab's steps,
  quiet, beside the slow tabs only, loaded, and quiet again; health latency; the cores the server,
  its worker processes and the rest of the machine used.

Twenty headless pages on the 2-core development machine compete with the server for the CPU (each
page parses and draws every rerun it receives): measured with ``--browser``, only 4 of 20 pages had
even opened the Learn page after 400 s (the table says how many were ready). The default clients
therefore do on the wire what a browser does and nothing else, so the CPU goes to the server being
measured; the uploader and the heavy Check still run in chromium pages (two of them), since they
need the real upload and the real buttons. The honest session uses the same kind of client in both
phases, so its quiet and loaded step times compare like with like.
"""
from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "load.md"

#: The drawings' iframes: the long-lived drawing (a component redrawn in place, dashboard.graphview)
#: or, on older trees, a ``srcdoc`` page per drawing.
DRAWINGS = '[data-testid="stCustomComponentV1"], [data-testid="stIFrame"]'
_DRAWN_JS = """([before, lam]) => {
    const heads = [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
        .map(e => e.innerText.trim()).filter(t => /^CoLiDE-(EV|NV) · λ = /.test(t));
    if (!heads.length || heads.some(h => !h.endsWith('λ = ' + lam))) return false;
    const frames = [...document.querySelectorAll(DRAWINGS)].slice(0, heads.length);
    if (frames.length < heads.length) return false;
    // the long-lived drawing keeps the heading of what it last drew
    if (frames.some((f, i) => f.getAttribute('data-testid') === 'stCustomComponentV1'
                              && (!f.contentWindow || f.contentWindow.colideLabel !== heads[i]))) return false;
    // (a drawing whose graph did not change keeps its document: only the heading shows the new λ)
    if (frames.map(f => f.srcdoc || '').every(d => before.includes(d)) && !heads.length) return false;
    return frames.every(f => f.contentDocument && f.contentDocument.readyState === 'complete'
                             && f.contentDocument.querySelector('canvas'));
}""".replace("DRAWINGS", repr(DRAWINGS))
_DOCS_JS = """() => [...document.querySelectorAll(DRAWINGS)].slice(0, 2).map(f => f.srcdoc || '')""".replace(
    "DRAWINGS", repr(DRAWINGS))
UI_MS = 180_000
LAMBDA_LABEL = "λ (L1 weight, lambda1)"


def worst_reference(names, limit):
    """A DOT reference of just under ``limit`` bytes: every pair of ``names`` in their order (a DAG), repeated."""
    edges = [f'  "{a}" -> "{b}";\n' for i, a in enumerate(names) for b in names[i + 1:]]  # a DAG: read in full
    body, size = [], len("digraph G {\n}\n")
    k = 0
    while True:
        line = edges[k % len(edges)]
        if size + len(line) >= limit - 16:
            break
        body.append(line)
        size += len(line)
        k += 1
    return ("digraph G {\n" + "".join(body) + "}\n").encode()


def _proc_cpu(pid):
    """CPU seconds (user + system) of process ``pid`` so far; 0.0 when it is gone."""
    import os

    try:
        with open(f"/proc/{pid}/stat") as fh:
            parts = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def _descendants(pid):
    """Process ids of every descendant of ``pid`` (the bootstrap's worker processes), from /proc."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tids = [t.name for t in Path(f"/proc/{p}/task").iterdir()]
        except OSError:
            continue
        for tid in tids:
            try:
                kids = [int(k) for k in Path(f"/proc/{p}/task/{tid}/children").read_text().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def _machine_cpu():
    """(busy, total) jiffies of the whole machine since boot (/proc/stat's first line)."""
    with open("/proc/stat") as fh:
        v = [int(x) for x in fh.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v) - idle, sum(v)


class Probe(threading.Thread):
    """Times GET /_stcore/health every 0.25 s and samples the server's RSS (and CPU) every second.

    :attr:`cpu` holds, every second, ``(t, server cpu s, its worker processes' cpu s, machine busy
    jiffies, machine total jiffies)``: how much of the machine the server, its workers and
    everything else took between two samples.
    """

    def __init__(self, url, pid):
        super().__init__(daemon=True)
        self.url, self.pid = url, pid
        self.health = []          # (t, seconds)
        self.rss = []             # (t, bytes, server cpu s)
        self.cpu = []             # (t, server cpu s, workers' cpu s, machine busy, machine total)
        self.stop = threading.Event()
        self.t0 = time.monotonic()
        self._workers = {}        # worker pid -> its last cpu s (a worker that ended keeps its count)

    def _cpu(self):
        return _proc_cpu(self.pid)

    def _workers_cpu(self):
        for p in _descendants(self.pid):
            self._workers[p] = max(self._workers.get(p, 0.0), _proc_cpu(p))
        return sum(self._workers.values())

    def run(self):
        from tests.e2e.harness import rss_bytes

        last_rss = 0.0
        while not self.stop.is_set():
            t = time.monotonic() - self.t0
            start = time.perf_counter()
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=60) as r:
                    r.read()
                self.health.append((t, time.perf_counter() - start))
            except OSError:
                self.health.append((t, float("inf")))
            if t - last_rss >= 1.0:
                try:
                    cpu = self._cpu()
                    self.rss.append((t, rss_bytes(self.pid), cpu))
                    self.cpu.append((t, cpu, self._workers_cpu(), *_machine_cpu()))
                except Exception:  # noqa: BLE001 - the server has exited
                    pass
                last_rss = t
            self.stop.wait(0.25)


#: The heaviest simulation a link may start (issue 42): d = 50 with 39 interventional conditions of
#: 10 targets and mean shifts, 40,000 rows, at the bounds of dashboard.infra.urlstate (n d (1 + K) <= 2,000,000
#: values and (1 + K) d^2 <= 100,000 fit units).
WORST_LINK = "data=sim&d=50&n=1000&iv=39&ivt=10&ivs=10"


class WsClient:
    """A browser tab on the wire: Streamlit's websocket protocol, without a browser.

    It does what the browser does on the wire: opens ``/_stcore/stream``, asks for a page
    (``BackMsg.rerun_script`` with the page's name and the URL's query string) and sends widget
    values and button clicks as widget states. A reader task keeps every element of the current
    script run (by its delta path, so a progress bar redrawn in place is one element), and every
    exception element or text naming a traceback or the server's path that any run sent
    (:attr:`problems`): what a person would see instead of a sentence.

    Parameters
    ----------
    url : str
        The server's ``http://host:port``.
    query : str, default ""
        The page's URL query string (a link's view: ``data=sim&d=50...``).
    """

    def __init__(self, url, query=""):
        self.url = url.replace("http://", "ws://") + "/_stcore/stream"
        self.query = query
        self.ws = None
        self.elements = {}      # delta path -> Element of the current run
        self.runs = 0           # script runs started (new_session messages)
        self.finished = []      # (run number, ScriptFinishedStatus) in order
        self.problems = []      # exception elements, "Traceback" or the server's path in a text
        self.closed = False
        self._reader = None
        self._changed = asyncio.Event()

    async def connect(self):
        import websockets

        self.ws = await websockets.connect(self.url, subprotocols=["streamlit"], max_size=None, open_timeout=120)
        self._reader = asyncio.create_task(self._read())
        return self

    async def _read(self):
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        try:
            while True:
                msg = ForwardMsg()
                msg.ParseFromString(await self.ws.recv())
                kind = msg.WhichOneof("type")
                if kind == "new_session":
                    self.runs += 1
                    self.elements = {}
                elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                    el = msg.delta.new_element
                    self.elements[tuple(msg.metadata.delta_path)] = el
                    self._inspect(el)
                elif kind == "script_finished":
                    self.finished.append((self.runs, msg.script_finished))
                self._changed.set()
        except Exception:  # noqa: BLE001 - the connection closed (by us or the server)
            self.closed = True
            self._changed.set()

    def _inspect(self, el):
        which = el.WhichOneof("type")
        if which == "exception":
            self.problems.append(f"exception element: {el.exception.type}: {el.exception.message[:160]}")
            return
        for kind, text in self._texts_of(el):
            if "Traceback" in text or str(ROOT) in text:
                self.problems.append(f"{kind}: {text[:160]}")

    @staticmethod
    def _texts_of(el):
        which = el.WhichOneof("type")
        if which == "markdown":
            return [("markdown", el.markdown.body)]
        if which == "alert":
            return [("alert", el.alert.body)]
        if which == "text":
            return [("text", el.text.body)]
        if which == "progress":
            return [("progress", el.progress.text)]
        return []

    def texts(self, kind=None):
        """The texts of the current run's markdown, alerts, texts and progress bars (or one ``kind``)."""
        return [t for el in list(self.elements.values()) for k, t in self._texts_of(el) if kind in (None, k)]

    def alerts(self):
        """``(level, body)`` of the current run's alerts: level "error", "warning", "info" or "success"."""
        levels = {1: "error", 2: "warning", 3: "info", 4: "success"}
        return [(levels.get(el.alert.format, "?"), el.alert.body) for el in list(self.elements.values())
                if el.WhichOneof("type") == "alert"]

    def widget(self, key=None, kind=None, label=None):
        """The current run's widget of user key ``key`` (its id ends with it), or of ``kind`` and ``label``."""
        for el in list(self.elements.values()):
            which = el.WhichOneof("type")
            proto = getattr(el, which) if which else None
            wid = getattr(proto, "id", "") if proto is not None else ""
            if key is not None and wid.endswith("-" + key):
                return which, proto
            if key is None and which == kind and getattr(proto, "label", None) == label:
                return which, proto
        return None

    @staticmethod
    def state(which, proto, value=True):
        """The WidgetState that sets widget ``proto`` (of element type ``which``) to ``value``."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        if which == "button":
            return WidgetState(id=proto.id, trigger_value=True)
        if which == "number_input":
            return WidgetState(id=proto.id, double_value=float(value))
        if which == "checkbox":
            return WidgetState(id=proto.id, bool_value=bool(value))
        if which == "slider":  # the λ select_slider sends its option as a string
            return WidgetState(id=proto.id, string_array_value={"data": [str(value)]})
        raise ValueError(f"no widget state for a {which}")

    async def rerun(self, page_name, widgets=(), timeout=None):
        """Run ``page_name`` with ``widgets`` (WidgetStates); wait until that run ends.

        Returns the ScriptFinishedStatus of the run (a run that ends for ``st.rerun`` is followed
        to the next), or None when ``timeout`` seconds passed first (a page following a job is
        still running: its elements so far are in :attr:`elements`).
        """
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ClientState_pb2 import ClientState
        from streamlit.proto.WidgetStates_pb2 import WidgetStates

        first = self.runs + 1
        seen = len(self.finished)
        state = ClientState(query_string=self.query, page_name=page_name,
                            widget_states=WidgetStates(widgets=list(widgets)))
        await self.ws.send(BackMsg(rerun_script=state).SerializeToString())
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            for run, status in self.finished[seen:]:
                if run >= first and run == self.runs and status != 2:  # 2: FINISHED_EARLY_FOR_RERUN
                    return status
            seen = len(self.finished)
            if self.closed:
                raise RuntimeError("the server closed the websocket")
            self._changed.clear()
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except asyncio.TimeoutError:
                return None

    async def close(self):
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            try:
                await asyncio.wait_for(self._reader, 5)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                self._reader.cancel()


class WsSession(WsClient):
    """A live session on the Learn page moving the λ slider, over :class:`WsClient`.

    A step lasts from the send of the slider's new value until the server's ``script_finished``,
    with the headings of both drawings at the new λ. The server does all its work (both fits,
    both drawings, every element sent); only the browser's own parsing and drawing is left out,
    which on a 2-core machine would otherwise compete with the server (20 headless pages could
    not even open their pages in 400 s next to it).
    """

    def __init__(self, url, query=""):
        super().__init__(url, query)
        self.slider = None
        self.current = None

    def _find_slider(self):
        found = self.widget(kind="slider", label=LAMBDA_LABEL)
        if found is not None:
            self.slider = found[1]

    async def open(self):
        await self.connect()
        await self.rerun("")
        await self.rerun("learn")
        self._find_slider()
        if self.slider is None:
            raise RuntimeError("the Learn page sent no λ slider")
        return self

    def value(self):
        """The slider's value: the one this client last sent, else the one the page set."""
        if self.current is None:
            raw, idx = list(self.slider.raw_value), list(self.slider.value) or list(self.slider.default)
            self.current = raw[0] if raw else list(self.slider.options)[int(idx[0])]
        return self.current

    def heads(self):
        """The drawings' headings of the current run ("**CoLiDE-EV** · λ = 0.1")."""
        return [t for t in self.texts("markdown") if re.match(r"^\*\*CoLiDE-(EV|NV)\*\* · λ = ", t)]

    async def step(self, forward, strict=True):
        """Move λ one grid step; returns seconds until the page is redrawn, or None at an end.

        With ``strict`` (default) a page that does not show both drawings at the new λ raises;
        without, the step's seconds are returned all the same and :attr:`last_errors` holds the
        page's error alerts (a live fit refused for want of a compute slot).
        """
        options = list(self.slider.options)
        i = options.index(self.value()) + (1 if forward else -1)
        if not 0 <= i < len(options):
            return None
        target = options[i]
        t0 = time.perf_counter()
        await self.rerun("learn", [self.state("slider", self.slider, target)])
        dt = time.perf_counter() - t0
        heads = self.heads()
        self.last_errors = [b for lvl, b in self.alerts() if lvl == "error"]
        self.last_ok = bool(heads) and all(h.endswith(f"λ = {target}") for h in heads)
        if strict and not self.last_ok:
            raise RuntimeError(f"after the step to λ = {target} the page shows {heads}")
        self.current = target
        self._find_slider()
        return dt


async def _ws_steps(session, n):
    """``n`` moves alternating right and left (a new λ, then back: a cache hit); returns the times."""
    times = []
    for k in range(n):
        dt = await session.step(k % 2 == 0)
        if dt is not None:
            times.append(dt)
    return times


async def _ws_live_session(url, stop, counts, i, ready, query="", active=None):
    """One live websocket session moving its λ slider without pause until ``stop`` is set (and,
    with ``active``, a threading.Event, only while it is set); ``counts[i]`` counts its steps,
    ``counts["times"]`` their seconds, ``counts["error i"]`` says why it ended early."""
    session = WsSession(url, query)
    try:
        await session.open()
        ready.add(i)
        forward, k = (i % 2 == 0), 0
        while not stop.is_set():
            if active is not None and not active.is_set():
                await asyncio.sleep(0.05)
                continue
            dt = await session.step(forward)
            if dt is None:
                forward = not forward
                continue
            counts[i] = counts.get(i, 0) + 1
            counts.setdefault("times", []).append(dt)
            k += 1
            if k % 3 == 0:
                forward = not forward
    except Exception as exc:  # noqa: BLE001 - a load client that fails is counted, not fatal
        counts[f"error {i}"] = f"{type(exc).__name__}: {str(exc)[:120]}"
    finally:
        await session.close()


async def _open_learn(page, url):
    await page.goto(url + "/", timeout=UI_MS)
    await page.get_by_role("button", name="Use the Sachs data").click(timeout=UI_MS)
    await page.get_by_text("Current dataset: Sachs").wait_for(timeout=UI_MS)
    await page.get_by_role("link", name="Learn").click(timeout=UI_MS)
    await page.get_by_text("CoLiDE-NV · λ = 0.05", exact=True).wait_for(timeout=UI_MS)


def _slider(page):
    return page.get_by_test_id("stSlider").filter(has=page.get_by_text(LAMBDA_LABEL, exact=True))


async def _move(page, key):
    """One arrow key on the λ slider; seconds until the drawings show the new λ."""
    slider = _slider(page)
    thumb = slider.get_by_role("slider")
    before = await page.evaluate(_DOCS_JS)
    old = (await slider.get_by_test_id("stSliderThumbValue").inner_text()).strip()
    t0 = time.perf_counter()
    await thumb.press(key)
    new = (await slider.get_by_test_id("stSliderThumbValue").inner_text()).strip()
    if new == old:
        return None
    await page.wait_for_function(_DRAWN_JS, arg=[before, new], timeout=UI_MS, polling=20)
    return time.perf_counter() - t0


async def _steps(page, n):
    """``n`` moves alternating right/left pairs (new λ, then back: a cache hit); returns the times."""
    await _slider(page).get_by_role("slider").focus()
    times = []
    for k in range(n):
        dt = await _move(page, "ArrowRight" if k % 2 == 0 else "ArrowLeft")
        if dt is not None:
            times.append(dt)
    return times


async def _live_session(browser, url, stop, counts, i, ready, query=""):  # noqa: ARG001 - links: websocket clients only
    ctx = await browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = await ctx.new_page()
        await _open_learn(page, url)
        await _slider(page).get_by_role("slider").focus()
        ready.add(i)
        forward, k = (i % 2 == 0), 0
        while not stop.is_set():
            dt = await _move(page, "ArrowRight" if forward else "ArrowLeft")
            if dt is None:          # at an end of the grid: turn round
                forward = not forward
                continue
            counts[i] = counts.get(i, 0) + 1
            counts.setdefault("times", []).append(dt)
            k += 1
            if k % 3 == 0:
                forward = not forward
    except Exception as exc:  # noqa: BLE001 - a load client that fails is counted, not fatal
        counts[f"error {i}"] = f"{type(exc).__name__}: {str(exc)[:120]}"
    finally:
        await ctx.close()


async def _uploader(browser, url, stop, blob, log):
    ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = await ctx.new_page()
        await _open_learn(page, url)
        await page.get_by_role("link", name="Check").click(timeout=UI_MS)
        await page.get_by_text("Your reference graph").click(timeout=UI_MS)
        while not stop.is_set():
            t0 = time.perf_counter()
            await page.locator("input[type=file]").first.set_input_files(
                {"name": "worst.dot", "mimeType": "text/vnd.graphviz", "buffer": blob})
            answer = page.get_by_text(re.compile(r"Using worst\.dot|worst\.dot was not used|worst\.dot could not"))
            await answer.first.wait_for(timeout=1_800_000)
            text = (await answer.first.inner_text())[:160]
            log.append((time.perf_counter() - t0, text))
            await page.get_by_role("button", name="Remove file").first.click(timeout=UI_MS)
            await page.get_by_text("worst.dot").first.wait_for(state="detached", timeout=UI_MS)
    except Exception as exc:  # noqa: BLE001
        log.append((float("nan"), f"error: {type(exc).__name__}: {str(exc)[:160]}"))
    finally:
        await ctx.close()


async def _heavy_check(browser, url, stop, log):
    ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = await ctx.new_page()
        await _open_learn(page, url)
        await page.get_by_text("Paper-faithful (Algorithm 1)").click(timeout=UI_MS)
        run = page.get_by_role("button", name="Run", exact=True)
        await run.click(timeout=UI_MS)
        await page.get_by_text(re.compile(r"^(EV|NV) (finished:|was stopped)")).first.wait_for(timeout=600_000)
        await page.get_by_role("link", name="Check").click(timeout=UI_MS)
        await page.get_by_text("Should I believe this graph?").first.wait_for(timeout=600_000)
        for label, value in (("Random DAGs (Markov check)", "1000"), ("Random rescalings", "50")):
            box = page.get_by_label(label)
            await box.fill(value)
            await box.press("Enter")
        await page.get_by_text("Should I believe this graph?").first.wait_for(timeout=600_000)
        t0 = time.perf_counter()
        await page.get_by_role("button", name="Standardise and refit, and rescale at random").click(timeout=UI_MS)
        await page.get_by_text(re.compile(r"Checks with refits: \d")).first.wait_for(timeout=UI_MS)
        log.append((0.0, "heavy check running"))
        done = page.get_by_text(re.compile(r"Standardise and refit — ")).first
        while not stop.is_set():
            if await done.count():
                log.append((time.perf_counter() - t0, "heavy check finished"))
                return
            await asyncio.sleep(0.5)
        log.append((time.perf_counter() - t0, "heavy check still running when the load ended (closed with its tab)"))
    except Exception as exc:  # noqa: BLE001
        log.append((float("nan"), f"error: {type(exc).__name__}: {str(exc)[:160]}"))
    finally:
        await ctx.close()


def _pct(values, q):
    values = sorted(values)
    if not values:
        return float("nan")
    k = min(len(values) - 1, max(0, int(round(q * (len(values) - 1)))))
    return values[k]


async def run(args):
    from playwright.async_api import async_playwright

    from colide_core.graph.reference import REFERENCE_MAX_BYTES
    from tests.e2e.harness import CHROMIUM, CHROMIUM_ARGS, StreamlitServer

    from colide_core.graph import export

    names = ["Raf", "Mek", "Plcg", "PIP2", "PIP3", "Erk", "Akt", "PKA", "PKC", "P38", "Jnk"]
    # DOT is the slowest reader per byte (pydot, ~80 µs/byte, under one process-wide lock); since issue 30
    # a DOT file over DOT_MAX_BYTES is refused before parsing, so the worst allowed is just under that
    blob = worst_reference(names, min(REFERENCE_MAX_BYTES, getattr(export, "DOT_MAX_BYTES", REFERENCE_MAX_BYTES)))
    with StreamlitServer(log_name="bench_load_streamlit.log") as server:
        probe = Probe(server.url, server.pid)
        probe.start()
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            if args.browser:
                honest_ctx = await browser.new_context(viewport={"width": 1280, "height": 720})
                honest = await honest_ctx.new_page()
                await _open_learn(honest, server.url)
                measure = _steps
            else:
                honest_ctx, honest = None, await WsSession(server.url).open()
                measure = _ws_steps
            t_quiet0 = time.monotonic() - probe.t0
            quiet = await measure(honest, args.steps)
            t_quiet1 = time.monotonic() - probe.t0
            stop = asyncio.Event()
            counts, up_log, heavy_log, ready = {}, [], [], set()
            tasks = [asyncio.create_task(_heavy_check(browser, server.url, stop, heavy_log)),
                     asyncio.create_task(_uploader(browser, server.url, stop, blob, up_log))]
            live = _live_session if args.browser else (lambda b, *rest, **kw: _ws_live_session(*rest, **kw))
            tasks += [asyncio.create_task(live(browser, server.url, stop, counts, i, ready,
                                               **({"query": WORST_LINK} if i < args.link_sessions else {})))
                      for i in range(args.sessions)]
            # ramp: every live session on its Learn page and the heavy check running (bounded)
            t_ramp0 = time.monotonic()
            while time.monotonic() - t_ramp0 < args.ramp and (
                    len(ready) < args.sessions or not any("running" in m for _, m in heavy_log)):
                await asyncio.sleep(0.5)
            counts.clear()
            t_load0 = time.monotonic() - probe.t0
            loaded = await measure(honest, args.steps)
            left = args.seconds - (time.monotonic() - probe.t0 - t_load0)
            if left > 0:
                await asyncio.sleep(left)
            t_load1 = time.monotonic() - probe.t0
            stop.set()
            _, pending = await asyncio.wait(tasks, timeout=15)
            for task in pending:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            ramp_s = t_load0 - (t_ramp0 - probe.t0)
            if honest_ctx is not None:
                await honest_ctx.close()
            else:
                await honest.close()
            await browser.close()
        probe.stop.set()
        probe.join(5)

    def phase(t0, t1):
        return [s for t, s in probe.health if t0 <= t <= t1]

    lines = []
    kind = ("headless chromium pages; the honest step until both drawings show the new λ" if args.browser else
            "websocket clients speaking Streamlit's protocol, no browser; the honest step from the slider's new "
            "value sent to the server's script_finished, both headings at the new λ")
    lines.append(f"Load test (issue 30), one run on one `streamlit run` server (2-core machine shared with other work); "
                 f"{args.sessions} live sessions "
                 f"({kind}) moving λ on Sachs"
                 + ("" if args.browser or not args.link_sessions else
                    f" ({args.link_sessions} of them on the heaviest link accepted, `?{WORST_LINK}`: 40,000 rows "
                    "x 50 nodes in 40 conditions)")
                 + ", one session uploading the worst reference allowed "
                 f"({len(blob):,} bytes of DOT) again after each answer, one session running the heaviest Check "
                 f"(paper-faithful fit, 1,000 random DAGs, standardise and refit, 50 rescalings). Load window "
                 f"{t_load1 - t_load0:.0f} s, after a ramp of {ramp_s:.0f} s while the clients opened their pages.\n")
    lines.append("| measure | quiet server | under load |")
    lines.append("|---|---|---|")
    hq, hl = phase(t_quiet0, t_quiet1), phase(t_load0, t_load1)
    for q, name in ((0.5, "p50"), (0.9, "p90"), (1.0, "max")):
        lines.append(f"| GET /_stcore/health {name} (ms) | {1000 * _pct(hq, q):.1f} | {1000 * _pct(hl, q):.1f} |")
    lines.append(f"| health requests | {len(hq)} | {len(hl)} |")
    for q, name in ((0.5, "median"), (0.9, "p90"), (1.0, "max")):
        lines.append(f"| honest λ step {name} (s) | {_pct(quiet, q):.2f} | {_pct(loaded, q):.2f} |")
    ratio = statistics.median(loaded) / statistics.median(quiet) if quiet and loaded else float("nan")
    lines.append(f"| honest λ steps measured | {len(quiet)} | {len(loaded)} (median ratio {ratio:.1f}×) |")
    moves = sum(v for k, v in counts.items() if isinstance(k, int))
    errors = [f"{k}: {v}" for k, v in counts.items() if isinstance(k, str) and k.startswith("error")]
    others = counts.get("times", [])
    lines.append(f"| λ steps completed by the {args.sessions} load sessions (median s) | — | {moves} "
                 f"({moves / max(1e-9, t_load1 - t_load0):.2f}/s; {_pct(others, 0.5):.1f} s) |")
    ups = [dt for dt, _ in up_log if dt == dt]
    lines.append(f"| worst-reference uploads answered (median s) | — | {len(ups)} "
                 f"({statistics.median(ups) if ups else float('nan'):.1f} s) |")
    lines.append(f"| live sessions on their page before the load window (ramp s) | — | {len(ready)} ({ramp_s:.0f} s) |")
    lines.append("")
    lines.append("RSS of the server over time (every 10 s; CPU seconds of the server process so far):\n")
    lines.append("| t (s) | phase | RSS (MB) | server CPU s |")
    lines.append("|---|---|---|---|")
    for t, rss, cpu in probe.rss[::10] + probe.rss[-1:]:
        ph = ("quiet" if t <= t_quiet1 else "load" if t_load0 <= t <= t_load1 else "ramp/after")
        lines.append(f"| {t:.0f} | {ph} | {rss / 2**20:.0f} | {cpu:.1f} |")
    lines.append("")
    if up_log:
        lines.append(f"Upload answer (last): {up_log[-1][1]!r}")
    if heavy_log:
        lines.append(f"Heavy check: {heavy_log[-1][1]} after {heavy_log[-1][0]:.0f} s")
    if errors:
        lines.append("Load clients that failed: " + "; ".join(errors[:5]))
    text = "\n".join(lines) + "\n"
    print(text)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("# Load test\n\n`.venv/bin/python -m benchmarks.bench_load "
                   f"--sessions {args.sessions} --seconds {args.seconds:g} --steps {args.steps}"
                   + (" --browser" if args.browser else "") + "`\n\n" + text)


# ---- round 5 (issue 53): closed tabs at the Simulate page's limit, and one tab pressing every heavy button ----

OUT_ROUND5 = ROOT / "benchmarks" / "results" / "load_round5.md"
#: The honest tab of the heavy-presser scenario: its own simulated data (a new seed per walk, so
#: every step is a fit, never another session's cache hit), λ walked up the grid from ``lam``.
HONEST_LINK = "data=sim&graph=ER&k=2&d={d}&n={n}&seed={seed}&lam={lam}"


def _server_env(**env):
    """Set environment variables for the next server (None: unset); returns the old values."""
    import os

    old = {k: os.environ.get(k) for k in env}
    for k, v in env.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = str(v)
    return old


def _uptime():
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def _largest_simulation():
    """The Simulate page's largest accepted simulation on a CPU: (d, n, conditions), its cells.

    d is the CPU's node limit (``dashboard.infra.limits.node_limit``, 200 without a GPU), the rows fill
    ``colide_core.defaults.MAX_CELLS`` with one interventional condition (n rows each, the widget's
    ``n`` at most ``INTERACTIVE_BOUNDS["n_samples"]``).
    """
    from colide_core import defaults
    from colide_core.data.io import INTERACTIVE_MAX_NODES
    from colide_core.data.simulate import INTERACTIVE_BOUNDS

    d = INTERACTIVE_MAX_NODES
    n_max = INTERACTIVE_BOUNDS["n_samples"][2]
    best = (0, None)
    for k in range(0, INTERACTIVE_BOUNDS["n_conditions"][2] + 1):
        n = min(n_max, defaults.MAX_CELLS // (d * (1 + k)), defaults.MAX_SAMPLES // (1 + k))
        if n * d * (1 + k) > best[0]:
            best = (n * d * (1 + k), (d, n, k))
    return best[1]


async def _simulate_tab(url, i, size, log, t0):
    """One tab: open the Simulate page, simulate at ``size`` = (d, n, conditions), wait for the
    answer, close the websocket. Appends a dict to ``log``."""
    d, n, k = size
    entry = {"tab": i, "start": time.monotonic() - t0}
    c = WsClient(url)
    try:
        await c.connect()
        await c.rerun("")
        await c.rerun("simulate")
        states = [c.state(*c.widget("sim_d"), d), c.state(*c.widget("sim_n"), n),
                  c.state(*c.widget("sim_interventions"), k), c.state(*c.widget("sim_seed"), i),
                  c.state(*c.widget("sim_run"))]
        t1 = time.perf_counter()
        status = await c.rerun("simulate", states, timeout=900)
        entry["seconds"] = time.perf_counter() - t1
        alerts = c.alerts()
        text = " ".join(b for _, b in alerts)
        if status is None:
            entry["outcome"] = "no answer in 900 s"
        elif any(lvl == "success" and "now the current dataset" in b for lvl, b in alerts):
            entry["outcome"] = "simulated"
        elif "budget" in text and "Nothing was loaded" in text:
            entry["outcome"] = "refused: memory budget"
            entry["sentence"] = next(b for _, b in alerts if "budget" in b)
        elif "did not fit in the server's memory" in text:
            entry["outcome"] = "MemoryError sentence"
        else:
            entry["outcome"] = "other: " + (text[:100] or f"status {status}")
        entry["problems"] = list(c.problems)
    except Exception as exc:  # noqa: BLE001 - counted, not fatal
        entry["outcome"] = f"client error: {type(exc).__name__}: {str(exc)[:100]}"
        entry["problems"] = list(c.problems)
    finally:
        await c.close()
        entry["closed"] = time.monotonic() - t0
        log.append(entry)


async def closed_tabs(args):
    """Phase 1: ``args.tabs`` tabs, in groups of ``args.group`` at once, simulate at the page's
    limit and close; RSS sampled throughout and ``CLOSED_GRACE_S + 30`` s after the last close,
    then ``args.probe_tabs`` new tabs with a small simulation (each asks the budget, which is when
    closed tabs past their grace are dropped), ``CLOSED_GRACE_S + 5`` s apart. Returns markdown."""
    from dashboard.infra import memory
    from tests.e2e.harness import StreamlitServer

    size = tuple(int(v) for v in args.size.split(",")) if args.size else _largest_simulation()
    d, n, k = size
    cells = d * n * (1 + k)
    env = {"COLIDE_DATASET_BUDGET_MB": args.budget_mb}
    old = _server_env(**env)
    load_before = _uptime()
    try:
        budget = memory._budget()  # the server's, read from the same environment
        with StreamlitServer(log_name="bench_load_round5_closed.log", root=args.tree) as server:
            probe = Probe(server.url, server.pid)
            probe.start()
            warm = WsClient(server.url)  # a warm server: the app's imports and the Sachs data loaded
            await warm.connect()
            await warm.rerun("")
            await warm.rerun("simulate")
            await warm.close()
            await asyncio.sleep(3)
            rss0 = probe.rss[-1][1] if probe.rss else 0
            log, t0 = [], probe.t0
            for g in range(0, args.tabs, args.group):
                await asyncio.gather(*[_simulate_tab(server.url, i, size, log, t0)
                                       for i in range(g, min(args.tabs, g + args.group))])
                rss_now = probe.rss[-1][1]
                print(f"  tabs {g + 1}-{min(args.tabs, g + args.group)}: "
                      + ", ".join(e["outcome"] for e in log[g:]) + f"; RSS {rss_now / 2**20:.0f} MB", flush=True)
            t_last = time.monotonic() - t0
            await asyncio.sleep(memory.CLOSED_GRACE_S + 30)
            t_grace = time.monotonic() - t0
            rss_grace = probe.rss[-1][1]
            probes = []
            for j in range(args.probe_tabs):
                if j:
                    await asyncio.sleep(memory.CLOSED_GRACE_S + 5)
                small = []
                await _simulate_tab(server.url, 1000 + j, (10, 1000, 0), small, t0)
                await asyncio.sleep(5)
                probes.append((time.monotonic() - t0, small[0]["outcome"], probe.rss[-1][1]))
            probe.stop.set()
            probe.join(5)
            server_log = server.log.read_text(errors="replace")
    finally:
        _server_env(**old)
    load_after = _uptime()

    peak_t, peak = max(((t, r) for t, r, _ in probe.rss), key=lambda x: x[1])
    outcomes = {}
    for e in log:
        outcomes[e["outcome"]] = outcomes.get(e["outcome"], 0) + 1
    problems = [p for e in log for p in e.get("problems", [])]
    mb = 2 ** 20
    lines = [f"**Closed tabs.** {args.tabs} tabs, {args.group} at a time (each group opened together, "
             "the next when all of the group had closed), each a websocket client on the Simulate page "
             f"asking for the largest simulation the page accepts on a CPU: d = {d}, n = {n:,} rows per "
             f"condition, {k} interventional condition{'s' if k != 1 else ''} ({n * (1 + k):,} rows × {d} = "
             f"{cells:,} cells, {memory.estimate_nbytes(n * (1 + k), d) / mb:,.0f} MB by "
             "`dashboard.infra.memory.estimate_nbytes`); it waits for the answer, then closes its websocket. "
             f"Dataset budget {budget / mb:,.0f} MB ("
             + (f"`COLIDE_DATASET_BUDGET_MB={args.budget_mb}`" if args.budget_mb else "the default: min(2,048 MB, RAM/4)")
             + f"), `CLOSED_GRACE_S` = {memory.CLOSED_GRACE_S:g} s. Load average before / after: "
             f"{load_before} / {load_after}.\n",
             "| measure | value |", "|---|---|"]
    for name, count in sorted(outcomes.items()):
        lines.append(f"| tabs: {name} | {count} |")
    lines.append(f"| tracebacks, exception elements or server paths seen by the tabs | {len(problems)} |")
    lines.append(f"| `Traceback` lines in the server's log | {server_log.count('Traceback')} |")
    lines.append(f"| RSS before the first tab, after one tab opened the Simulate page (MB) | {rss0 / mb:,.0f} |")
    lines.append(f"| RSS peak (MB, at t = {peak_t:.0f} s) | {peak / mb:,.0f} |")
    lines.append(f"| RSS peak above the first tab's start (MB) against the budget | {(peak - rss0) / mb:,.0f} of "
                 f"{budget / mb:,.0f} |")
    rss_last = [r for t, r, _ in probe.rss if t <= t_last][-1]
    lines.append(f"| RSS at the last close (MB, t = {t_last:.0f} s) | {rss_last / mb:,.0f} |")
    lines.append(f"| RSS {memory.CLOSED_GRACE_S + 30:g} s after the last close, no tab open (MB, t = {t_grace:.0f} s) "
                 f"| {rss_grace / mb:,.0f} |")
    for j, (t, outcome, r) in enumerate(probes):
        lines.append(f"| RSS after new tab {j + 1} simulated 10 × 1,000 ({outcome}; MB, t = {t:.0f} s) | {r / mb:,.0f} |")
    lines += ["", "Each tab (seconds from the click to the page's answer):", "",
              "| tab | opened at (s) | answer (s) | outcome | RSS after its group (MB) |", "|---|---|---|---|---|"]
    for e in sorted(log, key=lambda e: e["tab"]):
        after = [r for t, r, _ in probe.rss if t <= e["closed"] + 1.5]
        lines.append(f"| {e['tab'] + 1} | {e['start']:.0f} | {e.get('seconds', float('nan')):.1f} | {e['outcome']} | "
                     f"{(after[-1] if after else 0) / mb:,.0f} |")
    refused = [e for e in log if "sentence" in e]
    if refused:
        lines += ["", f"The refusal the page showed (tab {refused[0]['tab'] + 1}): “{refused[0]['sentence']}”"]
    if problems:
        lines += ["", "Problems seen: " + "; ".join(problems[:5])]
    lines += ["", "RSS of the server over time (every 10 s):", "", "| t (s) | RSS (MB) |", "|---|---|"]
    for t, r, _ in probe.rss[::10] + probe.rss[-1:]:
        lines.append(f"| {t:.0f} | {r / mb:,.0f} |")
    return "\n".join(lines) + "\n"


# ---- the heavy presser ---------------------------------------------------------------------------

def _press_actions():
    """Every heavy button a tab can reach on the Sachs data: (page, {widget key: value}, button key,
    name, the label its job's progress bar starts with).

    At the pages' largest settings: 500 resamples for the prediction intervals, 200 for the ranking,
    the Check page's 1,000 random DAGs and 50 rescalings before its refit, the bootstrap's 1,000
    resamples on every core, 500 half-samples of stability selection (on every core too: the
    bootstrap's workers widget). In this order the jobs take turns (:func:`_presser`): a one-unit
    job first, then the bootstrap holding every compute unit.
    """
    from colide_core.evaluation.checks import MAX_RANDOM_GRAPHS, MAX_REFITS
    from dashboard.infra.jobs import MAX_WORKERS

    return [
        ("predict", {"pred_n_boot": 500}, "pred_boot_run", "Predict: Compute intervals (500)", "Prediction intervals"),
        ("edge_confidence", {"boot_n": 1000, "boot_jobs": MAX_WORKERS}, "boot_run",
         f"Edge confidence: Run bootstrap (1000, {MAX_WORKERS} workers)", "Bootstrap"),
        ("predict", {"plan_n_boot": 200}, "plan_run", "Predict: Rank the experiments (200)", "Ranking the experiments"),
        ("check", {"check_n_random": MAX_RANDOM_GRAPHS, "check_n_rescale": MAX_REFITS}, ("check_refit", "check_rerun"),
         f"Check: {MAX_RANDOM_GRAPHS} DAGs, {MAX_REFITS} rescalings, Standardise and refit", "Checks"),
        ("check", {}, "check_path_run", "Check: Compute the λ path", "λ path"),
        ("predict", {}, "pred_ges_run", "Predict: Compute GES + IDA", "GES + IDA"),
        ("edge_confidence", {"stab_n": 500}, "stab_run", "Edge confidence: Run stability selection (500)",
         "Stability selection"),
    ]


_RUNNING = re.compile(r"already running (.+?), and one tab may hold")


async def _press(c, action):
    """Press one heavy button in tab ``c``; returns (outcome, the job the page says is running).

    ``action``'s button key may be a tuple: the first of them the page draws is pressed (the Check
    page draws "Run the checks again" where its checks were refused or stopped, the refit once they
    are done).
    """
    page, settings, button, _, _ = action

    def running_now():
        m = _RUNNING.search(" ".join(b for _, b in c.alerts()))
        if m:
            return m.group(1).replace("\\", "").strip("“”")
        bars = c.texts("progress")
        return bars[0].split(":")[0] if bars else None

    await c.rerun(page, timeout=4)  # the page as the server draws it (a page following a job: 4 s of it)
    if any(_NO_FIT in t for t in c.texts()):  # this tab's Learn page went stale: press Run there, as a person would
        await _learn_run(c)
        return "no Learn fit: pressed Run on Learn", None
    states = [c.state(*c.widget(key), value) for key, value in settings.items() if c.widget(key) is not None]
    found = next((f for f in (c.widget(key) for key in (button if isinstance(button, tuple) else (button,)))
                  if f is not None), None)
    if found is None or found[1].disabled:
        return ("button not drawn" if found is None else "button disabled"), running_now()
    await c.rerun(page, states + [c.state(*found)], timeout=4)
    alerts = " ".join(b for _, b in c.alerts())
    if _RUNNING.search(alerts):
        return "refused: per-tab cap", running_now()
    if "Nothing was started" in alerts:
        return "refused: " + alerts[alerts.index("Nothing was started"):][:80], None
    if c.texts("progress"):
        return "job running", running_now()
    return "no bar, no refusal", None


#: What Predict, Check and Edge confidence say when the tab has no Learn fit (its Learn page no longer live).
_NO_FIT = "Learn** page"


async def _learn_run(c):
    """Press Learn's Run in tab ``c`` and wait (at most 180 s) for the fit: the tab then has a Learn fit."""
    await c.rerun("learn", timeout=10)
    found = c.widget("learn_run")
    if found is not None and not found[1].disabled:
        await c.rerun("learn", [c.state(*found)], timeout=180)


async def _stop_job(c, page):
    """Press the Stop button the page ``page`` draws beside its running job; returns whether it found one."""
    await c.rerun(page, timeout=4)
    found = c.widget(kind="button", label="Stop")
    if found is None:
        return False
    await c.rerun(page, [c.state(*found)], timeout=4)
    return True


async def _presser(url, stop, log, every, t0, turn_s=0.0):
    """One tab pressing every heavy button, ``every`` seconds apart, until ``stop``.

    The jobs take turns: the presses alternate between the next job of the rotation
    (:func:`_press_actions`' order) and every other button in turn, so each button is pressed
    again and again (refused while another job of the tab runs: the per-tab cap), and when a job
    ends the next of the rotation starts. With ``turn_s`` > 0 a job seen running that long is
    stopped with its page's Stop button (a button too), so that every kind of job gets a turn in
    a window of a few minutes. Each press opens the page (its widgets as the server drew them), sets
    the page's largest settings and clicks in one message, and classifies what the page shows: the
    job's progress bar, the per-tab cap's refusal (naming the job running), another refusal, the
    button not drawn (a page following its own job draws nothing below it) or disabled. ``log``
    gets ``(t, name, outcome, running job)``.
    """
    c = WsClient(url)
    try:
        await c.connect()
        await c.rerun("")
        await c.rerun("learn")                      # the live fits on Sachs: what Predict and Check use
        if not any(t.startswith("**CoLiDE-") for t in c.texts("markdown")) or any("Stale" in b for _, b in c.alerts()):
            await _learn_run(c)
        actions = _press_actions()
        turn, other = 0, 0
        seen = (None, 0.0)                          # the job last seen running, and since when
        last = None                                 # the job the last press saw running (None: none seen)
        while not stop.is_set():
            if last is None:                        # no job seen: the rotation's next one
                action = actions[turn % len(actions)]
            else:                                   # a job runs: the other buttons in turn (refused)
                other = (other + 1) % len(actions)
                action = actions[other]
            outcome, running = await _press(c, action)
            now = time.monotonic() - t0
            log.append((now, action[3], outcome, running))
            last = running
            if running and running != seen[0]:     # a new job: the rotation goes on after it
                seen = (running, now)
                turn = next((i + 1 for i, a in enumerate(actions) if running.startswith(a[4])), turn)
            elif running and turn_s > 0 and now - seen[1] >= turn_s:
                page = next((a[0] for a in actions if running.startswith(a[4])), action[0])
                pressed = await _stop_job(c, page)
                log.append((time.monotonic() - t0, "Stop (the job seen running for --turn s)",
                            "pressed" if pressed else "no Stop button drawn", running))
                seen = (running, now)  # not again before another turn: it stops at its next progress report
                last = None
            try:
                await asyncio.wait_for(stop.wait(), every)
            except asyncio.TimeoutError:
                pass
    except Exception as exc:  # noqa: BLE001
        log.append((time.monotonic() - t0, "presser", f"client error: {type(exc).__name__}: {str(exc)[:120]}", None))
    finally:
        log.append((time.monotonic() - t0, "presser", "problems: " + "; ".join(c.problems[:3]) if c.problems
                    else "no traceback seen", None))
        await c.close()


async def _slow_session(url, stop, stats, i, ready, every):
    """A live tab on Sachs moving λ one step every ``every`` seconds (0: idle, open and still)."""
    import random

    s = WsSession(url)
    try:
        await s.open()
        ready.add(i)
        rng = random.Random(i)
        forward, k = (i % 2 == 0), 0
        await asyncio.sleep(rng.uniform(0, every or 1))
        while not stop.is_set():
            if every <= 0:
                await asyncio.sleep(0.5)
                continue
            dt = await s.step(forward, strict=False)
            if dt is None:
                forward = not forward
                continue
            stats.setdefault("times", []).append(dt)
            if not s.last_ok:
                stats["not drawn"] = stats.get("not drawn", 0) + 1
                why = (" / ".join(b for _, b in s.alerts()) or "no alert")[:160]
                stats.setdefault("why", {}).setdefault(why, 0)
                stats["why"][why] += 1
            k += 1
            if k % 3 == 0:
                forward = not forward
            try:
                await asyncio.wait_for(stop.wait(), every)
            except asyncio.TimeoutError:
                pass
        stats.setdefault("problems", []).extend(s.problems)
    except Exception as exc:  # noqa: BLE001
        stats[f"error {i}"] = f"{type(exc).__name__}: {str(exc)[:120]}"
    finally:
        await s.close()


async def _honest_walk(url, seed, steps, args, t0, presser_log=None):
    """A fresh tab on its own simulated data walking λ up the grid ``steps`` times (every step a fit).

    Returns a list of dicts: t (s since t0), seconds, ok (both drawings at the new λ), errors (the
    page's error alerts), why (its alerts when not drawn), job (the presser's job running at the
    step, from its log); and one with problems when any was seen. A step not drawn at the new λ
    (the page no longer live, asking for Run, or a live fit refused) ends the walk.
    """
    s = WsSession(url, HONEST_LINK.format(d=args.honest_d, n=args.honest_n, seed=seed, lam=args.honest_lam))
    out = []
    try:
        await s.open()
        for _ in range(steps):
            t = time.monotonic() - t0
            dt = await s.step(True, strict=False)
            if dt is None:
                break
            job = None
            if presser_log:
                seen = [r for tt, _, _, r in presser_log if tt <= t + dt and r]
                job = seen[-1] if seen else None
            out.append({"t": t, "seconds": dt, "ok": s.last_ok, "errors": s.last_errors, "job": job,
                        "why": None if s.last_ok else " / ".join(b for _, b in s.alerts())[:300]})
            if not s.last_ok:  # the page asked for Run (no longer live) or a fit was refused: the walk ends
                break
        if s.problems:
            out.append({"problems": list(s.problems)})
    finally:
        await s.close()
    return out


async def heavy_presser(args):
    """Phase 2: ``args.sessions`` tabs: one honest tab measuring fresh λ steps, ``args.sessions - 2``
    tabs on Sachs stepping λ every ``args.every`` s, one tab pressing every heavy button. Honest
    walks: quiet (alone), beside the slow tabs only, loaded (the presser too), quiet again after.
    Returns markdown."""
    from dashboard.infra import jobs
    from tests.e2e.harness import StreamlitServer

    old = _server_env(COLIDE_JOB_MAX_SECONDS=args.job_max_seconds)
    load_before = _uptime()
    others = max(0, args.sessions - 2)
    walks = {"quiet": [], "slow tabs only": [], "loaded": [], "quiet after": []}
    spans = {}
    try:
        with StreamlitServer(log_name="bench_load_round5_heavy.log", root=args.tree) as server:
            probe = Probe(server.url, server.pid)
            probe.start()
            t0 = probe.t0
            seed = iter(range(1001, 2000))

            async def walk(phase, presser_log=None):
                a = time.monotonic() - t0
                walks[phase] += await _honest_walk(server.url, next(seed), args.steps, args, t0, presser_log)
                spans.setdefault(phase, []).append((a, time.monotonic() - t0))

            for _ in range(args.quiet_walks):
                await walk("quiet")
            print(f"  quiet walk done at {time.monotonic() - t0:.0f} s", flush=True)
            stop, stop_presser = asyncio.Event(), asyncio.Event()
            stats, ready, press_log = {}, set(), []
            tasks = []
            for i in range(others):
                tasks.append(asyncio.create_task(_slow_session(server.url, stop, stats, i, ready, args.every)))
                await asyncio.sleep(0.3)
            t_ramp = time.monotonic()
            while len(ready) < others and time.monotonic() - t_ramp < args.ramp:
                await asyncio.sleep(0.5)
            ramp_s = time.monotonic() - t_ramp
            for _ in range(args.quiet_walks):
                await walk("slow tabs only")
            print(f"  {len(ready)} slow tabs ready after {ramp_s:.0f} s; walk done at {time.monotonic() - t0:.0f} s",
                  flush=True)
            t_press = time.monotonic() - t0
            presser = asyncio.create_task(_presser(server.url, stop_presser, press_log, args.press_every, t0,
                                                   args.turn))
            while not any(o == "job running" for _, _, o, _ in press_log) and time.monotonic() - t0 - t_press < 120:
                await asyncio.sleep(0.5)
            t_load0 = time.monotonic() - t0
            while True:
                await walk("loaded", press_log)
                if time.monotonic() - t0 - t_load0 >= args.seconds:
                    break
            t_load1 = time.monotonic() - t0
            print(f"  loaded walks done at {t_load1:.0f} s", flush=True)
            stop_presser.set()
            await asyncio.wait_for(presser, 60)
            stop.set()
            _, pending = await asyncio.wait(tasks, timeout=30)
            for task in pending:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            # the presser's jobs end with its session (SESSION_GRACE_S after its tab closed)
            await asyncio.sleep(jobs.SESSION_GRACE_S + 10)
            for _ in range(args.quiet_walks):
                await walk("quiet after")
            probe.stop.set()
            probe.join(5)
            server_log = server.log.read_text(errors="replace")
    finally:
        _server_env(**old)
    load_after = _uptime()

    def health(phase):
        return [h for a, b in spans.get(phase, []) for t, h in probe.health if a <= t <= b]

    def cores(a, b):
        """Cores used by the server, its workers and the rest of the machine between a and b."""
        pts = [c for c in probe.cpu if a - 1 <= c[0] <= b + 1]
        if len(pts) < 2:
            return float("nan"), float("nan"), float("nan")
        (ta, sa, wa, ba, _), (tb, sb, wb, bb, _) = pts[0], pts[-1]
        import os

        dt = max(1e-9, tb - ta)
        machine = (bb - ba) / os.sysconf("SC_CLK_TCK") / dt
        return (sb - sa) / dt, (wb - wa) / dt, machine - (sb - sa) / dt - (wb - wa) / dt

    def steps(phase):
        return [w for w in walks[phase] if "seconds" in w]

    def drawn(phase):  # a step not drawn at the new λ did no fit: its time says nothing
        return [w for w in steps(phase) if w["ok"]]

    mb = 2 ** 20
    base = drawn("quiet")
    q50 = statistics.median([w["seconds"] for w in base]) if base else float("nan")
    q90 = _pct([w["seconds"] for w in base], 0.9)
    lines = [f"**Heavy presser.** {args.sessions} tabs on one server (websocket clients speaking Streamlit's "
             f"protocol): {others} tabs on the Learn page with the Sachs data, each moving λ one step every "
             f"{args.every:g} s" + (" (idle)" if args.every <= 0 else "") + " (a staggered start); one tab pressing "
             f"every heavy button it can reach, one every {args.press_every:g} s in turn, at the pages' largest "
             "settings (below), its jobs taking turns in the order of the table"
             + (f" (it presses a job's Stop once it has seen it run {args.turn:g} s, so that each kind gets a turn)"
                if args.turn > 0 else " (each to its end)") + "; one honest tab walking λ up the grid on its own simulated data "
             f"(`?{HONEST_LINK.format(d=args.honest_d, n=args.honest_n, seed='S', lam=args.honest_lam)}`, a new seed S for each walk of "
             f"{args.steps} steps, so every step is two fresh fits, EV and NV, and both drawings). The honest "
             "step lasts from the slider's new value sent to the server's script_finished. Walks: quiet (the "
             f"honest tab alone), beside the {others} slow tabs only, loaded (the presser too; walks repeated for "
             f"{args.seconds:g} s), and quiet again after the load (the presser's jobs stopped with its tab). "
             f"Server: {jobs.MAX_CONCURRENT} compute slots, `SESSION_MAX_UNITS` = {jobs.SESSION_MAX_UNITS}, "
             + (f"`COLIDE_JOB_MAX_SECONDS={args.job_max_seconds}`" if args.job_max_seconds else "no job time budget")
             + f". Load average before / after: {load_before} / {load_after}.\n",
             "| measure | quiet | slow tabs only | loaded | quiet after |", "|---|---|---|---|---|"]
    phases = ("quiet", "slow tabs only", "loaded", "quiet after")
    for q, name in ((0.5, "p50"), (0.9, "p90"), (1.0, "max")):
        lines.append(f"| GET /_stcore/health {name} (ms) | "
                     + " | ".join(f"{1000 * _pct(health(p), q):.1f}" for p in phases) + " |")
    lines.append("| health requests | " + " | ".join(str(len(health(p))) for p in phases) + " |")
    for q, name in ((0.5, "median"), (0.9, "p90"), (1.0, "max")):
        lines.append(f"| honest λ step {name} (s) | "
                     + " | ".join(f"{_pct([w['seconds'] for w in drawn(p)], q):.2f}" for p in phases) + " |")
    lines.append("| honest steps drawn at the new λ (not drawn: the walk ended there) | "
                 + " | ".join(f"{len(drawn(p))} ({sum(not w['ok'] for w in steps(p))})" for p in phases) + " |")
    ratios = []
    for p in phases[1:]:
        xs = [w["seconds"] for w in drawn(p)]
        ratios.append(f"{statistics.median(xs) / q50:.1f}× / {_pct(xs, 0.9) / q90:.1f}×" if xs and base else "—")
    lines.append("| honest step median / p90 against quiet | 1.0× / 1.0× | " + " | ".join(ratios) + " |")
    cpu_rows = []
    for p in phases:
        parts = [cores(a, b) for a, b in spans.get(p, [])]
        if parts:
            n = len(parts)
            cpu_rows.append(tuple(sum(x[i] for x in parts) / n for i in range(3)))
        else:
            cpu_rows.append((float("nan"),) * 3)
    lines.append("| cores used by the server process during the walks | "
                 + " | ".join(f"{c[0]:.2f}" for c in cpu_rows) + " |")
    lines.append("| cores used by its worker processes (bootstrap, stability) | "
                 + " | ".join(f"{c[1]:.2f}" for c in cpu_rows) + " |")
    lines.append("| cores used by everything else on the machine | "
                 + " | ".join(f"{c[2]:.2f}" for c in cpu_rows) + " |")
    slow = stats.get("times", [])
    lines.append(f"| slow tabs: λ steps (median s, not drawn) | — | — | {len(slow)} ({_pct(slow, 0.5):.2f} s, "
                 f"{stats.get('not drawn', 0)}) | — |")
    lines.append(f"| slow tabs on their page before the walks (ramp s) | — | {len(ready)} of {others} ({ramp_s:.0f} s) | — | — |")
    rss = [r for _, r, _ in probe.rss]
    lines.append(f"| server RSS max (MB) | — | — | {max(rss) / mb:,.0f} | — |")

    # the presser: what each press met
    table = {}
    for _, name, outcome, _ in press_log:
        if name == "presser":
            continue
        table.setdefault(name, {}).setdefault(outcome, 0)
        table[name][outcome] += 1
    lines += ["", "What the presser's tab met, press by press (counts):", "", "| button | presses | outcomes |",
              "|---|---|---|"]
    for name, outs in table.items():
        lines.append(f"| {name} | {sum(outs.values())} | "
                     + "; ".join(f"{o}: {c}" for o, c in sorted(outs.items(), key=lambda x: -x[1])) + " |")
    jobs_seen = []
    for t, _, _, r in press_log:
        if r and (not jobs_seen or jobs_seen[-1][1] != r):
            jobs_seen.append((t, r))
    if jobs_seen:
        lines += ["", "The presser's running job over time (first seen at t s): "
                  + "; ".join(f"{t:.0f} s {r}" for t, r in jobs_seen)]
    by_job = {}
    for w in steps("loaded"):
        by_job.setdefault(w["job"] or "none seen", []).append(w)
    spans_of = {}  # each job's stretches of the load window (from one change of the presser's job to the next)
    marks = [(t, r) for t, r in jobs_seen if t <= t_load1] + [(t_load1, None)]
    for (a, r), (b, _) in zip(marks, marks[1:]):
        if r is not None and b > max(a, t_load0):
            spans_of.setdefault(r, []).append((max(a, t_load0), b))
    if by_job:
        lines += ["", "Loaded honest steps by the presser's job running at the time, and the cores the server "
                  "process, its worker processes and the rest of the machine used while that job was seen running:",
                  "", "| presser's job | steps drawn | not drawn | median of the drawn (s) | p90 (s) | max (s) | "
                  "server cores | worker cores | other cores |", "|---|---|---|---|---|---|---|---|---|"]
        for job, ws in by_job.items():
            xs = [w["seconds"] for w in ws if w["ok"]]
            parts = [(cores(a, b), b - a) for a, b in spans_of.get(job, []) if b - a >= 2]
            total = sum(d for _, d in parts)
            use = [sum(c[i] * d for c, d in parts) / total if total else float("nan") for i in range(3)]
            lines.append(f"| {job} | {len(xs)} | {len(ws) - len(xs)} | {_pct(xs, 0.5):.2f} | {_pct(xs, 0.9):.2f} | "
                         f"{_pct(xs, 1.0):.2f} | {use[0]:.2f} | {use[1]:.2f} | {use[2]:.2f} |")
    if stats.get("why"):
        lines += ["", "Slow tabs' steps not drawn at the new λ, and what their page said (count):"]
        lines += [f"- {n}: “{why}”" for why, n in sorted(stats["why"].items(), key=lambda x: -x[1])[:3]]
    whys = {}
    for p in phases:
        for w in steps(p):
            if not w["ok"]:
                whys.setdefault(w["why"] or "no alert", []).append(p)
    if whys:
        lines += ["", "Honest steps not drawn at the new λ, and what the page said instead:"]
        lines += [f"- {len(ps)} ({', '.join(sorted(set(ps)))}): “{why}”" for why, ps in whys.items()]
    problems = [x for p in phases for w in walks[p] for x in w.get("problems", [])] + stats.get("problems", [])
    problems += [o for _, n, o, _ in press_log if n == "presser" and o.startswith(("problems", "client error"))]
    lines.append("")
    lines.append(f"Tracebacks, exception elements or server paths seen by the tabs: {len(problems)}"
                 + (" (" + "; ".join(problems[:3]) + ")" if problems else "")
                 + f"; `Traceback` in the server's log: {server_log.count('Traceback')}. "
                 + "; ".join(f"{k}: {v}" for k, v in stats.items() if str(k).startswith("error"))[:400])
    return "\n".join(lines) + "\n"


def _busiest(n=4):
    """The ``n`` processes taking the most CPU over one second (``top``): "%CPU nice command" each."""
    import subprocess

    try:
        out = subprocess.run(["top", "-b", "-n", "2", "-d", "1", "-o", "%CPU", "-w", "200"], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown (no top)"
    second = out.split("\ntop - ")[-1].split("\n")
    head = next((i for i, line in enumerate(second) if line.split()[:1] == ["PID"]), None)
    if head is None:
        return "unknown"
    rows = [line.split() for line in second[head + 1:head + 1 + n] if line.strip()]
    return "; ".join(f"{r[8]}% nice {r[3]} {r[11]}" for r in rows if len(r) >= 12)


async def round5(args):
    """Both phases of issue 53's load figures, on two fresh servers, one after the other."""
    import tempfile

    from benchmarks.bench_conditions import _rev, checkout

    head = _rev(args.rev)
    tmp = tempfile.TemporaryDirectory(prefix="bench_load_round5_")
    # the servers run the committed tree at --rev (git archive): edits in progress in this shared
    # checkout cannot change the app halfway through a run
    args.tree = checkout(args.rev, tmp.name)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    busiest = _busiest()
    parts = []
    if args.round5 in ("closed", "both"):
        print("phase 1: closed tabs", flush=True)
        parts.append(await closed_tabs(args))
    if args.round5 in ("heavy", "both"):
        print("phase 2: heavy presser", flush=True)
        parts.append(await heavy_presser(args))
    tmp.cleanup()
    ended = time.strftime("%H:%M UTC", time.gmtime())
    text = (f"Run {started} to {ended}, the servers on `git archive {args.rev}` ({head}), on the 2-core development "
            "machine shared with other work; "
            f"the busiest processes in the second before it started (`top`: %CPU, nice, command): {busiest}.\n\n"
            + "\n".join(parts))
    print(text)
    if args.write:
        cmd = " ".join(["python -m benchmarks.bench_load --round5", args.round5]
                       + [f"--{k.replace('_', '-')} {v}" for k, v in sorted(vars(args).items())
                          if k in ("tabs", "group", "size", "budget_mb", "sessions", "seconds", "steps", "every",
                                   "press_every", "turn", "quiet_walks", "honest_lam", "honest_d", "honest_n", "job_max_seconds") and v is not None])
        OUT_ROUND5.write_text("# Load test, round 5 (issue 53)\n\n`.venv/bin/" + cmd + "`\n\n" + text)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--link-sessions", type=int, default=2,
                    help="of the live sessions, how many open the heaviest link accepted (WORST_LINK; websocket "
                         "clients only)")
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--ramp", type=float, default=300.0, help="most seconds to wait for the clients to be ready")
    ap.add_argument("--browser", action="store_true",
                    help="live and honest sessions as headless chromium pages instead of websocket clients")
    r5 = ap.add_argument_group("round 5 (issue 53): --round5 runs these phases instead of the load above")
    r5.add_argument("--round5", choices=["closed", "heavy", "both"],
                    help="closed: tabs simulating at the Simulate page's limit, then closed; heavy: one tab "
                         "pressing every heavy button beside --sessions tabs; both: one after the other")
    r5.add_argument("--rev", default="HEAD", help="the git revision the servers run (git archive)")
    r5.add_argument("--tabs", type=int, default=20, help="closed: tabs that simulate and close")
    r5.add_argument("--group", type=int, default=4, help="closed: tabs opened together")
    r5.add_argument("--size", default=None,
                    help="closed: d,n,conditions of each simulation (default: the page's largest, on a CPU)")
    r5.add_argument("--budget-mb", type=float, default=None,
                    help="closed: the server's COLIDE_DATASET_BUDGET_MB (default: unset, its own default)")
    r5.add_argument("--probe-tabs", type=int, default=2,
                    help="closed: new tabs with a small simulation after the grace, CLOSED_GRACE_S + 5 s apart")
    r5.add_argument("--every", type=float, default=10.0,
                    help="heavy: seconds between two λ steps of each slow tab (0: idle)")
    r5.add_argument("--press-every", type=float, default=2.0, help="heavy: seconds between two presses")
    r5.add_argument("--turn", type=float, default=45.0,
                    help="heavy: the presser presses Stop on a job it has seen running this long, so every "
                         "kind of job gets a turn (0: jobs run to their end)")
    r5.add_argument("--quiet-walks", type=int, default=2, help="heavy: honest walks for each quiet baseline")
    r5.add_argument("--honest-lam", type=float, default=0.005, help="heavy: the honest tab's first λ")
    r5.add_argument("--honest-d", type=int, default=10, help="heavy: nodes of the honest tab's simulated data")
    r5.add_argument("--honest-n", type=int, default=1000, help="heavy: rows of the honest tab's simulated data")
    r5.add_argument("--job-max-seconds", type=float, default=None,
                    help="heavy: the server's COLIDE_JOB_MAX_SECONDS (default: unset, no budget)")
    r5.add_argument("--no-write", dest="write", action="store_false",
                    help=f"print only; do not write {OUT_ROUND5.relative_to(ROOT)}")
    args = ap.parse_args(argv)
    if args.round5:
        asyncio.run(round5(args))
        return
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
