"""The "?" of an edge whose reverse the data prefer (issue 48, m-7), as the browser draws it: the
size of the node labels once graph_draw.js has enlarged them for the screen, also after a redraw in
place (the dashboard's long-lived drawing), and never read as HTML."""
import json

import numpy as np
import pytest

from colide_core.render.graph_html import graph_drawing, graph_html
from colide_core.render.graph_style import DISPUTED_STYLE

D = 40  # enough nodes that the labels are enlarged on a 500 px page (their base font is small)
NAMES = ["<i>"] + [f"n{k}" for k in range(1, D)]  # one hostile name, as short as the others


def _chain(shift=1):
    W = np.zeros((D, D))
    for k in range(D - shift):
        W[k, k + shift] = 1.0 + 0.01 * k
    return W


@pytest.fixture(scope="module")
def page(browser):
    context = browser.new_context(viewport={"width": 500, "height": 500})
    attempted = []

    def handle(route):
        attempted.append(route.request.url)
        route.abort()

    context.route("**/*", handle)  # the page is self-contained: nothing may be fetched
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert attempted == [] and errors == []


_SIZES = """() => ({node: nodes.get(0).font.size,
  marks: edges.get().filter(e => typeof e.markFont === 'number').map(e => [e.from, e.to, e.label, e.font.size]),
  unmarked: edges.get().filter(e => typeof e.markFont !== 'number').map(e => (e.font || {}).size || null)})"""


def test_the_mark_follows_the_node_labels_in_the_browser(page):
    W = _chain()
    disputed = np.zeros((D, D), bool)
    disputed[0, 1] = disputed[5, 6] = True
    html = graph_html(W, NAMES, disputed=disputed, height_px=None)
    page.set_content(html, wait_until="load")
    page.wait_for_function("() => window.colideDrawn >= 1", timeout=30_000)
    got = page.evaluate(_SIZES)
    base = graph_drawing(W, NAMES, disputed=disputed)["base_font"]
    assert got["node"] > base  # the labels were enlarged for the screen...
    assert sorted(m[:3] for m in got["marks"]) == [[0, 1, "?"], [5, 6, "?"]]
    for *_, size in got["marks"]:  # ...and the "?" with them
        assert size == pytest.approx(DISPUTED_STYLE["font_scale"] * got["node"], rel=1e-6)
    assert set(got["unmarked"]) == {None}
    # a redraw in place (same nodes, other edges): the marks come at the labels' size as shown
    disputed2 = np.zeros((D, D), bool)
    disputed2[2, 4] = True
    again = graph_drawing(_chain(2), NAMES, disputed=disputed2)
    page.evaluate(f"() => colideDraw({json.dumps(again)})")
    page.wait_for_function("() => window.colideDrawn >= 2", timeout=30_000)
    got2 = page.evaluate(_SIZES)
    assert got2["node"] == pytest.approx(got["node"])
    assert [m[:3] for m in got2["marks"]] == [[2, 4, "?"]]
    assert got2["marks"][0][3] == pytest.approx(DISPUTED_STYLE["font_scale"] * got2["node"], rel=1e-6)
    # the hostile names are plain text: no <i> element was made of them
    assert page.evaluate("() => document.querySelectorAll('i').length") == 0
