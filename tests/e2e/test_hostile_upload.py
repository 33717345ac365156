"""Hostile uploads in a real browser (network blocked to everything but the local server).

1. A CSV whose file name and column names are XSS payloads is uploaded through the Data page (which
   also exercises the XSRF-protected upload endpoint), CoLiDE is run on it, and the graph is hovered
   so vis-network draws its tooltips. No dialog may open, no element may be injected into the page or
   the graph iframe, and the nodes must be labelled with the names exactly as written (plain text).
2. Broken files get a specific, named error on the page, never a traceback, and leave the current
   dataset unchanged.
"""
import re

import numpy as np
import pandas as pd
import pytest

from tests.e2e.harness import (
    ARTIFACTS,
    FIT_TIMEOUT_MS,
    UI_TIMEOUT_MS,
    block_external,
    drawings,
    graph_frame,
    no_exception_shown,
    open_app_with_sachs,
)

HOSTILE = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "ok"]
HOSTILE_FILE = '"><img src=x onerror=alert(2)>.csv'

_INJECTED_JS = """() => {
    const bad = [...document.querySelectorAll('img[src="x"], img[onerror], [onerror]')];
    // a script injected through a name would hold just the payload; pyvis's own script holds the
    // names only as escaped JSON text
    const scripts = [...document.querySelectorAll('script')].filter(
        s => s.textContent.trim().startsWith('alert('));
    return bad.length + scripts.length;
}"""


def _upload(page, name, data):
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        files=[{"name": name, "mimeType": "text/csv", "buffer": data}], timeout=UI_TIMEOUT_MS)


def _chain_csv(names, n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = np.zeros((n, len(names)))
    X[:, 0] = rng.normal(size=n)
    for j in range(1, len(names)):
        X[:, j] = 0.9 * X[:, j - 1] + rng.normal(size=n)
    return pd.DataFrame(X, columns=names).to_csv(index=False).encode()


@pytest.fixture
def page(server, browser):
    attempted, dialogs, errors = [], [], []
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    block_external(context, server.url, attempted)
    pg = context.new_page()
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.record = {"attempted": attempted, "dialogs": dialogs, "errors": errors}
    yield pg
    context.close()
    assert attempted == [], attempted
    assert errors == [], errors


def test_xss_names_in_upload_graph_and_tooltips_stay_inert(page, server):
    open_app_with_sachs(page, server.url)
    _upload(page, HOSTILE_FILE, _chain_csv(HOSTILE))
    page.get_by_text("Loaded").wait_for(timeout=UI_TIMEOUT_MS)
    no_exception_shown(page)
    # the file name is shown literally (escaped), in the status and in the sidebar (chromium sends
    # the '"' of a multipart file name as %22)
    page.get_by_text("<img src=x onerror=alert(2)>.csv").first.wait_for(timeout=UI_TIMEOUT_MS)

    page.get_by_role("link", name="Learn", exact=True).click(timeout=UI_TIMEOUT_MS)
    page.get_by_role("button", name="Run", exact=True).click(timeout=UI_TIMEOUT_MS)
    # the Run job's own message comes with the last rerun that redraws the graph
    page.get_by_text(re.compile(r"^NV (finished:|was stopped)")).first.wait_for(timeout=FIT_TIMEOUT_MS)
    page.get_by_role("tab", name="Metrics").wait_for(timeout=UI_TIMEOUT_MS)
    no_exception_shown(page)

    iframe = drawings(page).first
    frame = graph_frame(iframe, "() => typeof network !== 'undefined' && network.body.data.nodes.length === 3")
    labels = frame.evaluate("() => network.body.data.nodes.get().map(n => n.label)")
    assert labels == HOSTILE  # plain text on the canvas: escaped once (in the JSON), not twice

    # hover every node so vis-network builds its tooltip DOM from the (hostile) titles
    iframe.scroll_into_view_if_needed()
    box = iframe.bounding_box()
    points = frame.evaluate("""() => { const p = network.getPositions();
        return Object.keys(p).map(k => ({id: k, ...network.canvasToDOM(p[k])})); }""")
    # vis-network emits "showPopup" with the node's id once it has filled and shown the tooltip
    frame.evaluate("() => { window.__popups = []; network.on('showPopup', id => window.__popups.push(String(id))); }")
    tooltips = []
    for pt in points:
        page.mouse.move(box["x"] + pt["x"], box["y"] + pt["y"])
        frame.wait_for_function("(id) => window.__popups.includes(id)", arg=pt["id"], timeout=UI_TIMEOUT_MS)
        tooltips.append(frame.evaluate(
            "() => { const t = document.querySelector('div.vis-tooltip'); return t ? t.innerHTML : null; }"))
    iframe.screenshot(path=str(ARTIFACTS / "hostile_names_graph.png"))

    assert any(t for t in tooltips), "no tooltip appeared on hover"
    assert all("<img" not in (t or "") and "<script" not in (t or "") for t in tooltips), tooltips
    assert page.evaluate(_INJECTED_JS) == 0
    assert frame.evaluate(_INJECTED_JS) == 0
    assert page.record["dialogs"] == []


@pytest.mark.parametrize("name, data, expected", [
    ("empty.csv", b"", "The file is empty"),
    ("ragged.csv", b"a,b\n1,2\n3,4,5\n", "not a regular table"),
    ("labels.csv", b"a,b,label\n" + b"".join(f"{i},{i * i % 7},x{i}\n".encode() for i in range(20)),
     "not numeric: 'label'"),
    ("fake.parquet", b"a,b\n1,2\n", "not a Parquet file"),
])
def test_bad_files_get_a_named_error_and_keep_the_dataset(page, server, name, data, expected):
    open_app_with_sachs(page, server.url)
    _upload(page, name, data)
    alert = page.get_by_test_id("stAlertContentError")
    alert.wait_for(timeout=UI_TIMEOUT_MS)
    text = alert.inner_text()
    assert expected in text and name in text, text
    assert "The current dataset was not changed" in text
    no_exception_shown(page)
    assert page.get_by_text("Current dataset: Sachs").count() == 1
