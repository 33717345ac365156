"""One graph drawing everywhere (colide_core.render.graph_style): positions, layout, legend, sizes, escaping.

Checked on the three drawings: the interactive view (graph_html, vis-network data read from the
page), the PNG/SVG export (export.to_image, SVG parsed as XML) and the bootstrap frequency figure.
"""
import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import colide_core
from colide_core.render import graph_style
from colide_core.render.picture import to_image
from colide_core.render.graph_html import graph_html
from colide_core.render.figures import frequency_figure
from tests._drawing import drawing_in, edges_in, nodes_in  # noqa: F401

SVG = "{http://www.w3.org/2000/svg}"


def _vis_nodes(html):
    return nodes_in(html)


def _vis_edges(html):
    return edges_in(html)


def test_positions_are_deterministic_and_shared_by_every_call():
    a = graph_style.node_positions(11)
    b = graph_style.node_positions(11)
    np.testing.assert_array_equal(a, b)
    # node 0 at the top (y down: smallest y), then clockwise: node 1 to its right
    u = graph_style.unit_positions(4)
    np.testing.assert_allclose(u, [[0, -1], [1, 0], [0, 1], [-1, 0]], atol=1e-12)
    # two drawings of different graphs on the same nodes put each node at the same place
    W1 = np.zeros((5, 5)); W1[0, 1] = 1.0
    W2 = np.zeros((5, 5)); W2[3, 4] = -2.0; W2[1, 2] = 0.5
    p1 = [(n["x"], n["y"]) for n in _vis_nodes(graph_html(W1, list("abcde")))]
    p2 = [(n["x"], n["y"]) for n in _vis_nodes(graph_html(W2, list("abcde")))]
    assert p1 == p2
    # explicit positions are used as given
    P = np.arange(10, dtype=float).reshape(5, 2)
    assert [(n["x"], n["y"]) for n in _vis_nodes(graph_html(W1, list("abcde"), positions=P))] == \
        [tuple(r) for r in P]
    with pytest.raises(ValueError, match="positions"):
        graph_html(W1, list("abcde"), positions=np.zeros((4, 2)))


def test_topological_layout_on_sachs_puts_raf_above_mek_above_erk():
    X, B = colide_core.load_sachs()
    names = list(X.columns)
    pos = graph_style.node_positions(11, B.to_numpy(), layout="topological")
    y = {n: pos[k, 1] for k, n in enumerate(names)}  # y grows downwards
    # consensus: PKC -> PKA -> Raf -> Mek -> Erk -> Akt is the longest path, one layer each
    assert y["PKC"] < y["PKA"] < y["Raf"] < y["Mek"] < y["Erk"] < y["Akt"]
    # every edge of the DAG points downwards
    Bn = B.to_numpy()
    assert all(pos[i, 1] < pos[j, 1] for i, j in zip(*np.nonzero(Bn)))
    # the interactive view and the export draw the same layout
    html = graph_html(np.zeros((11, 11)), names, Bn, layout="topological")
    vy = {n["label"]: n["y"] for n in _vis_nodes(html)}
    assert vy["Raf"] < vy["Mek"] < vy["Erk"]
    svg = to_image(np.zeros((11, 11)), names, fmt="svg", B_true=Bn, layout="topological")
    root = ET.fromstring(svg)
    ty = {}
    for t in root.iter(SVG + "text"):
        if t.text in ("Raf", "Mek", "Erk"):
            ty[t.text] = float(t.get("y"))
    assert ty["Raf"] < ty["Mek"] < ty["Erk"]  # SVG y also grows downwards


def test_svg_export_has_a_legend_and_escapes_names_once():
    W = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, -0.8], [0.0, 0.0, 0.0]])
    B = np.array([[0, 1, 0], [0, 0, 0], [1, 0, 0]])  # 0->1 correct, 1->2 extra, 2->0 missing
    names = ["gene<B>", "a&b", "$x$"]
    svg = to_image(W, names, fmt="svg", B_true=B)
    root = ET.fromstring(svg)  # well-formed XML
    texts = [t.text for t in root.iter(SVG + "text")]
    # names read back exactly as given: escaped once (the XML parser undoes it once), and "$x$"
    # is not turned into mathtext
    assert {"gene<B>", "a&b", "$x$"} <= set(texts)
    assert b"gene&lt;B&gt;" in svg and b"&amp;lt;" not in svg and b"a&amp;b" in svg
    # the legend: each edge kind drawn, and both arrowheads (one positive, one negative weight)
    for entry in graph_style.legend_entries({"correct", "extra", "missing"}, {"+", "-"}):
        assert entry["text"] in texts, entry
    assert graph_style.EDGE_STYLES["reversed"][2] not in texts  # not drawn, not listed
    # weights on the edges
    assert "1.50" in texts and "-0.80" in texts


def test_one_palette_for_every_drawing():
    # the interactive view: colour by truth kind, arrowhead by sign
    W = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, -0.8], [0.0, 0.0, 0.0]])
    B = np.array([[0, 1, 0], [0, 0, 0], [1, 0, 0]])
    edges = {(e["from"], e["to"]): e for e in _vis_edges(graph_html(W, list("abc"), B))}
    assert edges[(0, 1)]["color"] == graph_style.EDGE_STYLES["correct"][0]
    assert edges[(1, 2)]["color"] == graph_style.EDGE_STYLES["extra"][0]
    assert edges[(2, 0)]["color"] == graph_style.EDGE_STYLES["missing"][0] and edges[(2, 0)]["dashes"]
    assert edges[(0, 1)]["arrows"]["to"]["type"] == "arrow"
    assert edges[(1, 2)]["arrows"]["to"]["type"] == "bar"  # negative weight: ⊣
    html = graph_html(W, list("abc"), B)
    assert "⊣ negative weight" in html and "→ positive weight" in html
    # red never means "negative" any more: the negative edge 1->2 is red only because it is extra
    W_correct_negative = np.array([[0.0, -1.5, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    e = _vis_edges(graph_html(W_correct_negative, list("abc"), B))
    assert e[0]["color"] == graph_style.EDGE_STYLES["correct"][0]
    # the bootstrap frequency figure: same colours, same positions (y flipped for plotly)
    F = np.array([[0.0, 0.9, 0.0], [0.0, 0.0, 0.6], [0.0, 0.0, 0.0]])
    fig = frequency_figure(F, list("abc"), B_true=B)
    colours = {a.arrowcolor for a in fig.layout.annotations}
    assert colours == {graph_style.EDGE_STYLES["correct"][0], graph_style.EDGE_STYLES["extra"][0]}
    node_trace = [t for t in fig.data if t.mode == "markers+text"][0]
    u = graph_style.unit_positions(3)
    np.testing.assert_allclose(node_trace.x, u[:, 0])
    np.testing.assert_allclose(node_trace.y, -u[:, 1])


def test_label_sizes_and_the_summary_threshold_are_measured():
    # fonts shrink with d but never below 10 px; 16 px on Sachs
    assert graph_style.font_px(11) == 16.0
    assert graph_style.font_px(200) == 10.0
    assert all(graph_style.font_px(d) >= graph_style.font_px(d + 10) for d in range(2, 200, 10))

    def overlap(d):
        names = [f"X{i}" for i in range(1, d + 1)]
        return graph_style.label_overlap(graph_style.unit_positions(d), names, graph_style.font_px(d))

    # the numbers quoted for SUMMARY_NODES: no overlap up to 60 nodes, most labels overlap at 100
    assert graph_style.SUMMARY_NODES == 60
    assert all(overlap(d) == 0.0 for d in (11, 20, 40, 60))
    assert overlap(100) > 0.5 and overlap(150) == 1.0
    # the interactive view uses these font sizes
    html = graph_html(np.zeros((40, 40)), [f"X{i}" for i in range(40)])
    assert {n["font"]["size"] for n in _vis_nodes(html)} == {graph_style.font_px(40)}


def test_hand_worked_overlap():
    # two 4-character labels at 16 px side by side: boxes 38.4 px wide; 30 px apart overlap, 60 do not
    P = np.array([[0.0, 0.0], [30.0, 0.0]])
    assert graph_style.label_overlap(P, ["abcd", "efgh"], 16, width_px=30 / 0.8) == 1.0
    assert graph_style.label_overlap(P, ["abcd", "efgh"], 16, width_px=60 / 0.8) == 0.0


def test_summary_view_above_the_limit_uses_the_same_colours_and_categorical_axes():
    from colide_core.render.figures import adjacency_figure

    d = graph_style.SUMMARY_NODES + 1
    names = [str(k) for k in range(d)]  # number-like names: the axes must stay categorical
    A = np.zeros((d, d)); A[0, 1] = 0.7; A[2, 3] = -1.2
    B = np.zeros((d, d)); B[0, 1] = 1; B[3, 2] = 1; B[4, 5] = 1
    fig = adjacency_figure(A, names, B)
    assert fig.layout.xaxis.type == "category" and fig.layout.yaxis.type == "category"
    z = np.asarray(fig.data[0].z)
    kinds = ["none", "correct", "reversed", "extra", "missing", "learned"]
    assert kinds[z[0, 1]] == "correct" and kinds[z[2, 3]] == "reversed" and kinds[z[4, 5]] == "missing"
    assert (z != 0).sum() == 3
    legend = {t.name for t in fig.data[1:]}
    assert legend == {graph_style.EDGE_STYLES[k][2] for k in ("correct", "reversed", "missing")}


def test_max_font_hand_worked():
    # "abcd" and "efgh" 30 units apart on a line: boxes 2.4 f wide overlap when 2.4 f > 30, so the
    # largest font without overlap is 30 / 2.4 = 12.5 (bisection to 0.1)
    P = np.array([[0.0, 0.0], [30.0, 0.0]])
    f = graph_style.max_font(P, ["abcd", "efgh"], 5.0, 40.0)
    assert 12.4 <= f <= 12.5
    # stacked vertically 30 apart: the boxes' height 1.2 f decides, 30 / 1.2 = 25
    assert 24.9 <= graph_style.max_font(P[:, ::-1], ["abcd", "efgh"], 5.0, 40.0) <= 25.0
    # the bounds are respected: lo when even lo overlaps, hi when hi fits
    assert graph_style.max_font(P, ["abcd", "efgh"], 13.0, 40.0) == 13.0
    assert graph_style.max_font(P, ["a", "b"], 5.0, 20.0) == 20.0
    assert graph_style.max_font(P[:1], ["a"], 5.0, 20.0) == 20.0


def test_the_drawing_enlarges_labels_only_up_to_the_no_overlap_font():
    # the page's fitting script gets the base font and the cap; the cap never lets labels overlap
    for d in (5, 11, 30, 60):
        names = [f"X{i}" for i in range(1, d + 1)]
        html = graph_html(np.zeros((d, d)), names)
        base, cap = drawing_in(html)["base_font"], drawing_in(html)["max_font"]
        P = np.array([(n["x"], n["y"]) for n in _vis_nodes(html)])
        width = max(np.ptp(P[:, 0]), np.ptp(P[:, 1])) / 0.8
        assert base == graph_style.font_px(d, max_label=len(names[-1]))
        assert cap >= base
        assert graph_style.label_overlap(P, names, cap, width) == 0.0
        if cap < 40.0:  # not at the upper bound: a little larger would overlap
            assert graph_style.label_overlap(P, names, cap + 0.3, width) > 0.0


def _hits(pos, names, font, edges, bends):
    """Edges whose drawn arc passes through a node it does not connect (the label ellipses)."""
    from colide_core.render.graph_style import _arc, bend_via

    semi = np.array([[0.35 * font * len(n) + 4.0, 0.7 * font + 4.0] for n in names])
    bad = []
    for i, j in edges:
        kind, r = bends[(i, j)]
        pts = _arc(pos[i], bend_via(pos[i], pos[j], kind, r), pos[j])[1:-1]
        for k in set(range(len(pos))) - {i, j}:
            if np.any((((pts - pos[k]) / semi[k]) ** 2).sum(axis=1) < 1.0):
                bad.append((names[i], names[j], names[k]))
    return bad


def test_edges_are_bent_around_the_nodes_they_do_not_connect():
    # Issue 28: in the circle layout PKC -> Raf ran under PKA and read as PKC -> PKA -> Raf. With the
    # old single bend (curvedCW, 0.12) some Sachs edges cross a node; with edge_bends none does.
    import colide_core
    from colide_core.render.graph_html import _MAX_FONT
    from colide_core.render.graph_style import edge_bends, font_px, max_font, unit_positions

    X, B = colide_core.load_sachs()
    names = list(X.columns)
    # the Learn page's circle, three drawings side by side (320 px frames: graph_html's positions)
    pos = unit_positions(len(names)) * np.array([260.0, 0.42 * 320])
    base = font_px(len(names), max_label=min(max(map(len, names)), 12))
    font = max_font(pos, names, base, max(base, _MAX_FONT))  # the largest labels the page may show
    edges = [(int(i), int(j)) for i, j in zip(*np.nonzero(np.asarray(B)))]
    old = {e: ("curvedCW", 0.12) for e in edges}
    assert _hits(pos, names, font, edges, old), "the test needs a crossing to remove"
    assert _hits(pos, names, font, edges, edge_bends(pos, edges, names, font)) == []


def test_bend_via_matches_vis_network_geometry():
    # vis-network's curvedCW with roundness 0 puts the control point on the midpoint (a straight
    # edge); CW and CCW bend to opposite sides of the line, symmetric about it.
    from colide_core.render.graph_style import bend_via

    a, b = np.array([0.0, 0.0]), np.array([100.0, 0.0])
    np.testing.assert_allclose(bend_via(a, b, "curvedCW", 0.0), [50.0, 0.0], atol=1e-9)
    cw, ccw = bend_via(a, b, "curvedCW", 0.5), bend_via(a, b, "curvedCCW", 0.5)
    assert cw[1] * ccw[1] < 0 and abs(cw[1] + ccw[1]) < 1e-9 and abs(cw[0] - ccw[0]) < 1e-9


def test_summary_view_of_a_large_graph_has_no_per_cell_text():
    # above HOVER_MAX_NODES (graphs a GPU allows) the d^2 hover strings are left out: one template
    from colide_core.render.figures import HOVER_MAX_NODES, adjacency_figure

    d = HOVER_MAX_NODES + 1
    A = np.zeros((d, d)); A[0, 1] = 0.7; A[2, 3] = -1.2
    B = np.zeros((d, d)); B[0, 1] = 1; B[3, 2] = 1
    heat = adjacency_figure(A, [f"n{k}" for k in range(d)], B).data[0]
    assert heat.hovertext is None and heat.hovertemplate == "%{y} → %{x}<extra></extra>"
    z = np.asarray(heat.z)
    assert z.dtype == np.uint8 and z[0, 1] == 1 and z[2, 3] == 2 and (z != 0).sum() == 2  # correct, reversed
    small = adjacency_figure(A[:5, :5], [f"n{k}" for k in range(5)], B[:5, :5]).data[0]
    assert small.hovertext[0][1] == "n0 → n1<br>w = +0.7<br>correct"


def test_a_negative_weight_line_runs_into_its_bar_and_a_ring_is_marked():
    # Issue 41: vis-network stops a line 0.9 arrowhead-lengths before the node when
    # arrowStrikethrough is off, right for a pointed arrow, but a bar "⊣" is only 0.15 lengths deep:
    # it floated off the line. A negative edge's line now runs to the node (drawn over it), a
    # positive edge's still stops at its arrow's base. The page widens a ring to its frame in the
    # browser (tests/e2e/test_projector.py); it is told which drawings are rings.
    W = np.array([[0.0, 1.5, -0.8], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    html = graph_html(W, ["a", "b", "c"], height_px=None, legend=False, assets_url="app/static/vis")
    edges = edges_in(html)
    by_end = {(e["from"], e["to"]): e for e in edges}
    assert by_end[(0, 2)]["arrows"]["to"]["type"] == "bar" and by_end[(0, 2)]["arrowStrikethrough"] is True
    assert by_end[(0, 1)]["arrows"]["to"]["type"] == "arrow" and "arrowStrikethrough" not in by_end[(0, 1)]
    assert drawing_in(html)["ring"] is True
    top_down = graph_html(W, ["a", "b", "c"], positions=graph_style.node_positions(3, W, layout="topological"),
                          height_px=None, legend=False, assets_url="app/static/vis")
    assert drawing_in(top_down)["ring"] is False


def _label_clashes(fig, ax, texts, xy, radius_px):
    """Pairs of weight labels whose boxes overlap, and labels over a node's disc (display pixels)."""
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in texts]
    pairs = [(a, b) for a in range(len(boxes)) for b in range(a + 1, len(boxes)) if boxes[a].overlaps(boxes[b])]
    centres = ax.transData.transform(xy)
    on_nodes = []
    for a, box in enumerate(boxes):
        nx = np.clip(centres[:, 0], box.x0, box.x1)
        ny = np.clip(centres[:, 1], box.y0, box.y1)
        if np.any(np.hypot(nx - centres[:, 0], ny - centres[:, 1]) < radius_px):
            on_nodes.append(a)
    return pairs, on_nodes


def test_picture_weight_labels_cover_no_label_and_no_node():
    # Issue 41: the PNG export wrote each weight at its edge's straight midpoint, over other weights
    # and over nodes. A complete DAG on 8 nodes (28 edges, many crossing near the centre) drew
    # overlapping labels that way; now each label sits on its arc where it covers nothing, strongest
    # first, and a weight with no free place is left out.
    from colide_core.graph._dag import classify_edges
    from colide_core.render.picture import _graph_figure

    d = 8
    A = np.triu(np.arange(1.0, d * d + 1).reshape(d, d) / (d * d), 1)   # 28 distinct positive weights
    A[0, 5] = -A[0, 5]
    names = [f"N{k}" for k in range(d)]
    xy = graph_style.unit_positions(d) * np.array([1.0, -1.0])
    fig, ax, labels = _graph_figure(A, names, xy, classify_edges(A), None, figsize=(6, 6), dpi=150, decimals=2)
    font_pt = graph_style.font_px(d, width_px=72 * 6, max_label=2) * 0.75
    radius_px = max(10.0, font_pt * 1.6) * 150 / 72
    pairs, on_nodes = _label_clashes(fig, ax, labels, xy, radius_px)
    assert pairs == [] and on_nodes == []
    shown = [t.get_text() for t in labels]
    assert len(shown) >= 14, shown                         # at least half the weights still written
    assert f"{A[d - 2, d - 1]:.2f}" in shown               # the strongest edge is labelled first: always shown
    # the old placement (each label at its straight midpoint) overlapped on this graph
    mids = [ax.text(*(0.5 * (xy[i] + xy[j])), f"{A[i, j]:.2f}", fontsize=max(5.0, font_pt * 0.7), ha="center",
                    va="center") for i, j in zip(*np.nonzero(A))]
    old_pairs, _ = _label_clashes(fig, ax, mids, xy, radius_px)
    assert len(old_pairs) >= 3, old_pairs


def test_node_labels_contrast_with_every_change_fill():
    """Issue 48 m-6: Predict's labels on its fills. The palette's extremes are white (no change), the
    saturated red #d62728 (+clip) and blue #1f77b4 (-clip); by WCAG 2, black on #d62728 is 4.18 and
    white 5.02, on #1f77b4 black 4.35 and white 4.83, so both saturated ends take white text. The
    label used to be vis-network's #343434: 2.48 on the red."""
    from colide_core.render.graph_html import graph_drawing

    assert graph_style.contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert graph_style.contrast_ratio("#343434", "#d62728") == pytest.approx(2.48, abs=0.01)
    assert graph_style.contrast_ratio("#ffffff", "#d62728") == pytest.approx(5.02, abs=0.01)
    values = np.linspace(-3.0, 3.0, 61)  # through both saturations and every shade between
    fills = graph_style.change_fill(values)
    assert {fills[0], fills[30], fills[-1]} == {"#1f77b4", "#ffffff", "#d62728"}
    for fill in fills + [graph_style.NODE_FILL]:
        assert graph_style.contrast_ratio(graph_style.label_colour(fill), fill) >= 4.5, fill
    assert graph_style.label_colour("#d62728") == graph_style.label_colour("#1f77b4") == "#ffffff"
    assert graph_style.label_colour("#ffffff") == "#000000"
    # the drawing carries it: each node's font colour is its fill's label colour
    W = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    nodes = graph_drawing(W, ["PKC", "P38", "Jnk"], node_values=[0.0, 3.0, -3.0])["nodes"]
    assert [(n["color"], n["font"]["color"]) for n in nodes] == [
        ("#ffffff", "#000000"), ("#d62728", "#ffffff"), ("#1f77b4", "#ffffff")]
