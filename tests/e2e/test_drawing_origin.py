"""The long-lived drawing trusts only its own origin (issue 53, medium 1).

A page of another origin framed the drawing's document (served by the dashboard under
``/app/static/graph-drawing-<digest>/index.html``) and posted it a "streamlit:render" message
whose legend held ``<img onerror=...>``: the handler checked only ``event.source === window.parent``,
wrote the legend with ``innerHTML`` and ran the script in the dashboard's origin. Now a message is
read only when its origin is the document's own, and the legend is data built with ``textContent``.

The framing page is served twice: by a small HTTP server on another port of 127.0.0.1 (another
origin; a public host such as ``evil.test`` is not used because Chromium's private network access
rules would block its frame before any message), and by Playwright's routing on the dashboard's own
origin (a path the server does not have), so the same message is posted from each. Waits are on conditions: a listener added after the drawing's own counts the messages the
document received, so once it has counted one, the drawing's handler has already seen it.
"""
import http.server
import threading

import numpy as np

from colide_core.render.graph_html import graph_drawing
from dashboard import graphview
from tests.e2e.harness import UI_TIMEOUT_MS, free_port

HOSTILE = '<img src="x:" onerror="document.body.dataset.pwned = 1">'


def _framing_page(src):
    return f'<!DOCTYPE html><iframe id="f" src="{src}" style="width:600px;height:400px;border:0"></iframe>'


def _message(label):
    W = np.array([[0.0, 0.8], [0.0, 0.0]])
    drawing = graph_drawing(W, [HOSTILE, "b"], np.array([[0.0, 0.0], [1.0, 0.0]]))   # reversed: a legend
    drawing["legend_html"] = HOSTILE                                                  # what the old page read
    drawing["legend"] = [{"text": HOSTILE, "colour": "red;background:url(x:)"}] + drawing["legend"]
    return {"type": "streamlit:render", "args": {"drawing": drawing, "token": label, "label": label, "height": 400}}


def _post_and_wait(page, frame, label):
    frame.evaluate("() => { window.seen = 0; window.addEventListener('message', () => { window.seen += 1; }); }")
    page.evaluate("(m) => document.getElementById('f').contentWindow.postMessage(m, '*')", _message(label))
    frame.wait_for_function("() => window.seen >= 1", timeout=UI_TIMEOUT_MS)


def _frame(page, src):
    page.frame_locator("#f").locator("#legend-slot").wait_for(state="attached", timeout=UI_TIMEOUT_MS)
    [frame] = [f for f in page.frames if f.url == src]
    frame.wait_for_function("() => typeof colideDraw === 'function' && !!document.getElementById('legend-slot')",
                            timeout=UI_TIMEOUT_MS)
    return frame


def test_only_a_page_of_the_drawings_own_origin_can_drive_it(server, browser):
    folder = graphview._declared()[1]                     # the folder the server serves (same checkout)
    src = f"{server.url}/app/static/{folder.name}/index.html"
    body = _framing_page(src).encode()

    class Framer(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Framer)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    context = browser.new_context()
    try:
        context.route(server.url + "/__own_origin_frame",
                      lambda route: route.fulfill(status=200, content_type="text/html", body=body.decode()))
        # another origin: the message is ignored, nothing is drawn, no script runs
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{other.server_address[1]}/", timeout=UI_TIMEOUT_MS)
        frame = _frame(page, src)
        _post_and_wait(page, frame, "from another origin")
        state = frame.evaluate("""() => ({label: window.colideLabel, drawn: colideDrawn,
            legend: document.getElementById('legend-slot').childNodes.length,
            pwned: document.body.dataset.pwned || null})""")
        assert state == {"label": None, "drawn": 0, "legend": 0, "pwned": None}
        page.close()
        # the dashboard's own origin: drawn, and the legend's hostile text is text, not an element
        page = context.new_page()
        page.goto(server.url + "/__own_origin_frame", timeout=UI_TIMEOUT_MS)
        frame = _frame(page, src)
        _post_and_wait(page, frame, "own origin")
        frame.wait_for_function("() => window.colideLabel === 'own origin' && colideDrawn === 1", timeout=UI_TIMEOUT_MS)
        legend = frame.evaluate("""() => { const s = document.getElementById('legend-slot');
            return {imgs: s.querySelectorAll('img').length, text: s.textContent,
                    spans: s.querySelectorAll('#legend > span').length,
                    first_line: s.querySelector('#legend > span').querySelector('span') ? 'line' : 'none',
                    pwned: document.body.dataset.pwned || null}; }""")
        assert legend["imgs"] == 0 and legend["pwned"] is None
        assert legend["text"].startswith(HOSTILE) and "reversed" in legend["text"]
        assert legend["first_line"] == "none"               # a colour that is not #hex draws no line
        assert legend["spans"] == len(_message("x")["args"]["drawing"]["legend"])   # one per entry
    finally:
        context.close()
        other.shutdown()
