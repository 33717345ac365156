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


class Probe(threading.Thread):
    """Times GET /_stcore/health every 0.25 s and samples the server's RSS (and CPU) every second."""

    def __init__(self, url, pid):
        super().__init__(daemon=True)
        self.url, self.pid = url, pid
        self.health = []          # (t, seconds)
        self.rss = []             # (t, bytes, server cpu s)
        self.stop = threading.Event()
        self.t0 = time.monotonic()

    def _cpu(self):
        with open(f"/proc/{self.pid}/stat") as fh:
            parts = fh.read().rsplit(")", 1)[1].split()
        import os

        return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")

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
                self.rss.append((t, rss_bytes(self.pid), self._cpu()))
                last_rss = t
            self.stop.wait(0.25)


#: The heaviest simulation a link may start (issue 42): d = 50 with 39 interventional conditions of
#: 10 targets and mean shifts, 40,000 rows, at the bounds of dashboard.urlstate (n d (1 + K) <= 2,000,000
#: values and (1 + K) d^2 <= 100,000 fit units).
WORST_LINK = "data=sim&d=50&n=1000&iv=39&ivt=10&ivs=10"


class WsSession:
    """A live session speaking Streamlit's own websocket protocol, without a browser.

    It does what the browser does on the wire: opens ``/_stcore/stream``, asks for the Learn page
    (``BackMsg.rerun_script``), and moves the λ slider by sending the slider's new value as a
    widget state; a step lasts from the send until the server's ``script_finished``, with the
    headings of both drawings at the new λ. The server does all its work (both fits, both
    drawings, every element sent); only the browser's own parsing and drawing is left out, which
    on a 2-core machine would otherwise compete with the server (20 headless pages could not even
    open their pages in 400 s next to it).
    """

    def __init__(self, url, query=""):
        self.url = url.replace("http://", "ws://") + "/_stcore/stream"
        self.query = query  # the page's URL query string (a link's view: ?data=sim&d=50...)
        self.ws = None
        self.slider = None
        self.current = None
        self.texts = []

    async def _rerun(self, page_name, widgets=()):
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ClientState_pb2 import ClientState
        from streamlit.proto.WidgetStates_pb2 import WidgetStates

        state = ClientState(query_string=self.query, page_name=page_name,
                            widget_states=WidgetStates(widgets=list(widgets)))
        await self.ws.send(BackMsg(rerun_script=state).SerializeToString())
        return await self._until_finished()

    async def _until_finished(self):
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        self.texts = []
        while True:
            msg = ForwardMsg()
            msg.ParseFromString(await self.ws.recv())
            kind = msg.WhichOneof("type")
            if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                el = msg.delta.new_element
                which = el.WhichOneof("type")
                if which == "slider" and el.slider.label == LAMBDA_LABEL:
                    self.slider = el.slider
                elif which == "markdown":
                    self.texts.append(el.markdown.body)
            elif kind == "script_finished":
                return msg.script_finished

    async def open(self):
        import websockets

        self.ws = await websockets.connect(self.url, subprotocols=["streamlit"], max_size=None, open_timeout=120)
        await self._rerun("")
        await self._rerun("learn")
        if self.slider is None:
            raise RuntimeError("the Learn page sent no λ slider")
        return self

    def value(self):
        """The slider's value: the one this client last sent, else the one the page set."""
        if self.current is None:
            raw, idx = list(self.slider.raw_value), list(self.slider.value) or list(self.slider.default)
            self.current = raw[0] if raw else list(self.slider.options)[int(idx[0])]
        return self.current

    async def step(self, forward):
        """Move λ one grid step; returns seconds until the page is redrawn, or None at an end."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        options = list(self.slider.options)
        i = options.index(self.value()) + (1 if forward else -1)
        if not 0 <= i < len(options):
            return None
        target = options[i]
        t0 = time.perf_counter()
        await self._rerun("learn", [WidgetState(id=self.slider.id, string_array_value={"data": [target]})])
        dt = time.perf_counter() - t0
        heads = [t for t in self.texts if re.match(r"^\*\*CoLiDE-(EV|NV)\*\* · λ = ", t)]
        if not heads or not all(h.endswith(f"λ = {target}") for h in heads):
            raise RuntimeError(f"after the step to λ = {target} the page shows {heads}")
        self.current = target
        return dt

    async def close(self):
        if self.ws is not None:
            await self.ws.close()


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
    args = ap.parse_args(argv)
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
