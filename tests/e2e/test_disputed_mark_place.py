"""Where the "?" of an edge whose reverse the data prefer is drawn (issue 48, the walk's leftover of
m-7): on a short edge the middle of the line is where the arrowhead begins, so the "?" sat on the
arrowhead (Plcg -> PIP2 on nine-condition Sachs, EV, after Check: 0 px between the mark's box and
the arrowhead at every frame width) and read as part of it. Measured in the browser, on the drawing
as vis-network draws it: every "?" keeps clear of its edge's arrowhead and orientable dot, overlaps
no node, and stays near its own line."""
import json

import numpy as np
import pytest

from colide_core.render.graph_html import graph_html
from dashboard.data import sachs_dataset

#: The walk's fit: CoLiDE-EV on nine-condition Sachs (λ 0.05, threshold 0.3), weights rounded, every
#: edge orientable by the conditions' targets; the four the Check page disputes are marked.
EDGES = [("Raf", "Mek", 1.43), ("Plcg", "PIP2", 1.55), ("PIP3", "Plcg", 0.53), ("PIP3", "PIP2", 0.71),
         ("Erk", "Akt", 1.71), ("Erk", "PKA", 3.44), ("Akt", "PKA", 0.71), ("PKC", "P38", 4.85),
         ("PKC", "Jnk", 1.59)]
DISPUTED = [("Raf", "Mek"), ("Plcg", "PIP2"), ("Erk", "Akt"), ("Akt", "PKA")]

#: Screen pixels between a "?" and the arrowhead or dot of its edge (graph_draw.js keeps 4), and the
#: farthest it may sit from its own line.
CLEAR_PX = 3.0
NEAR_PX = 24.0

_MEASURE = """() => {
  const g = drawingGeometry(), k = g.scale;
  const dist = (b, p) => Math.hypot(Math.max(b.left - p[0], 0, p[0] - b.right), Math.max(b.top - p[1], 0, p[1] - b.bottom));
  return g.arrows.filter(a => typeof edges.get(a.id).markFont === 'number').map(a => {
    const s = network.body.edges[a.id].labelModule.size;
    const box = {left: s.left, top: s.top, right: s.left + s.width, bottom: s.top + s.height};
    const via = network.body.edges[a.id].edgeType.getViaNode(), line = [];
    for (let t = 0; t <= 1.0001; t += 0.01) { const p = network.body.edges[a.id].edgeType.getPoint(t, via); line.push([p.x, p.y]); }
    const overlaps = g.nodes ? g.nodes.filter(n => box.left < n.right && box.right > n.left && box.top < n.bottom && box.bottom > n.top).map(n => n.id) : [];
    return {from: a.from, to: a.to,
            head: k * Math.min(...a.polygon.map(p => dist(box, p))),
            dot: a.start ? k * Math.min(...a.start.map(p => dist(box, p))) : null,
            line: k * Math.min(...line.map(p => dist(box, p))), nodes: overlaps};
  });
}"""


@pytest.fixture(scope="module")
def sachs_names_truth():
    ds = sachs_dataset(rows="all")
    return list(ds.node_names), ds.B_true.to_numpy()


@pytest.mark.parametrize("width", [480, 740, 1036])  # the Learn page's frames at 1024x768 and 1280x720
def test_the_question_mark_keeps_clear_of_the_arrowhead(browser, sachs_names_truth, width):
    names, truth = sachs_names_truth
    index = {n: k for k, n in enumerate(names)}
    d = len(names)
    W = np.zeros((d, d))
    for a, b, w in EDGES:
        W[index[a], index[b]] = w
    disputed = np.zeros((d, d), bool)
    for a, b in DISPUTED:
        disputed[index[a], index[b]] = True
    html = graph_html(W, names, truth, oriented=W != 0, disputed=disputed, height_px=340, legend=False)
    context = browser.new_context(viewport={"width": width, "height": 360})
    try:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.set_content(html, wait_until="load")
        page.wait_for_function("() => window.colideDrawn >= 1", timeout=30_000)
        marks = page.evaluate(_MEASURE)
        assert errors == []
    finally:
        context.close()
    got = {(names[m["from"]], names[m["to"]]): m for m in marks}
    assert sorted(got) == sorted(DISPUTED)
    report = json.dumps({" -> ".join(e): m for e, m in got.items()})
    assert min(m["head"] for m in got.values()) >= CLEAR_PX, report  # Plcg -> PIP2 measured 0 before
    for edge, m in got.items():
        assert m["dot"] is not None and m["dot"] >= CLEAR_PX, (edge, report)
        assert m["line"] <= NEAR_PX, (edge, report)  # still read as its edge's mark
        assert m["nodes"] == [], (edge, report)
