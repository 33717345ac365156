"""Tests of the graph drawing (colide_core.render.graph_html) and edge labelling: edge classification, escaping of node names, offline HTML."""
import json
import re

import numpy as np
import pytest

from colide_core.graph._dag import classify_edges
from colide_core.render.graph_html import graph_html
from tests._drawing import drawing_in, edges_in, nodes_in  # noqa: F401

EVIL = "<script>alert(1)</script>"


def _datasets(html, which):
    """The JSON list passed to ``new vis.DataSet(...)``: which=0 nodes, which=1 edges."""
    return drawing_in(html)["nodes" if which == 0 else "edges"]


def test_classify_edges_hand_worked():
    # Truth: 0->1, 1->2, 0->3.   Estimate: 0->1 (correct), 2->1 (reversed 1->2), 2->3 (extra).
    # 0->3 is found in neither direction: missing.
    B = np.zeros((4, 4))
    B[0, 1] = B[1, 2] = B[0, 3] = 1
    W = np.zeros((4, 4))
    W[0, 1], W[2, 1], W[2, 3] = 0.9, -1.5, 0.4
    got = sorted(classify_edges(W, B))
    assert got == [(0, 1, "correct"), (0, 3, "missing"), (2, 1, "reversed"), (2, 3, "extra")]
    # Without a truth every estimated edge is just "learned"; no missing edges.
    assert sorted(classify_edges(W)) == [(0, 1, "learned"), (2, 1, "learned"), (2, 3, "learned")]


def test_classify_edges_rejects_shape_mismatch():
    with pytest.raises(ValueError, match="shape"):
        classify_edges(np.zeros((3, 3)), np.zeros((2, 2)))


def test_node_names_are_escaped_once_in_labels_and_titles():
    W = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.5], [0.0, 0.0, 0.0]])
    html = graph_html(W, ["a", EVIL, 'b"&\'c'], sigma=[1.0, 2.0, 3.0])
    # The raw name never appears, in any form that a browser would parse as a tag: the embedded
    # JSON writes <, >, & as \u escapes (pyvis's tojson), the one escape where names meet HTML.
    assert EVIL not in html
    assert "<script>alert" not in html
    # vis-network draws labels and string tooltips as plain text, so they hold the names as is
    # (HTML-escaping them as well would show "&lt;script&gt;" on the canvas).
    nodes = _datasets(html, 0)
    assert [n["label"] for n in nodes] == ["a", EVIL, 'b"&\'c']
    assert nodes[1]["title"] == EVIL + "\nσ̂ = 2"
    edges = _datasets(html, 1)
    assert {e["title"] for e in edges} == {f"a → {EVIL}: w = +1 (learned)",
                                          f"{EVIL} → b\"&'c: w = +0.5 (learned)"}


def test_html_is_offline():
    W = np.array([[0.0, 0.7], [0.0, 0.0]])
    html = graph_html(W, ["x", "y"], np.array([[0, 1], [0, 0]]))
    # No external script or stylesheet: every <script> is inline.
    assert re.search(r"<script[^>]*\bsrc\s*=", html, flags=re.IGNORECASE) is None
    assert re.search(r"<link[^>]*\bhref\s*=\s*[\"']?(https?:)?//", html, flags=re.IGNORECASE) is None
    assert "cdn.jsdelivr" not in html and "cdnjs.cloudflare" not in html
    # ... and the vis-network library really is inlined.
    assert "vis.Network" in html and len(html) > 100_000


def test_edge_styles_widths_and_legend():
    # Truth 0->1, 1->2. Estimate 0->1 (w=2, correct), 2->1 (w=-0.5, reversed), 0->2 (w=1, extra).
    B = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    W = np.array([[0.0, 2.0, 1.0], [0.0, 0.0, 0.0], [0.0, -0.5, 0.0]])
    html = graph_html(W, ["p", "q", "r"], B)
    edges = {(e["from"], e["to"]): e for e in _datasets(html, 1)}
    assert set(edges) == {(0, 1), (2, 1), (0, 2)}
    assert edges[(0, 1)]["color"] == "#2ca02c" and edges[(2, 1)]["color"] == "#ff7f0e"
    assert edges[(0, 2)]["color"] == "#d62728"
    # width = 1 + 7 |w| / max|w|: 8 for |w| = 2, 4.5 for |w| = 1, 2.75 for |w| = 0.5
    assert edges[(0, 1)]["width"] == pytest.approx(8.0)
    assert edges[(0, 2)]["width"] == pytest.approx(4.5)
    assert edges[(2, 1)]["width"] == pytest.approx(2.75)
    assert 'id="legend"' in html and "reversed" in html

    # Missing edge drawn dashed: estimate only 0->1, truth 0->1 and 1->2.
    html2 = graph_html(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]), ["p", "q", "r"], B)
    e2 = {(e["from"], e["to"]): e for e in _datasets(html2, 1)}
    assert e2[(1, 2)]["dashes"] is True and e2[(0, 1)]["dashes"] is False


def test_no_legend_without_truth_and_bad_names_length():
    html = graph_html(np.zeros((2, 2)), ["x", "y"])
    assert 'id="legend"' not in html
    assert _datasets(html, 1) == []
    with pytest.raises(ValueError, match="names"):
        graph_html(np.zeros((2, 2)), ["only-one"])


def test_assets_url_links_vis_network_instead_of_inlining_it():
    from colide_core.render.graph_html import vis_assets

    W = np.array([[0.0, 1.0], [0.0, 0.0]])
    inline = graph_html(W, ["x", "y"])
    linked = graph_html(W, ["x", "y"], assets_url="app/static/vis-network-9.1.2")
    js = vis_assets()["vis-network.min.js"].read_text(encoding="utf-8")
    assert js.strip()[:200] in inline and js.strip()[:200] not in linked
    assert len(inline) > 400_000 and len(linked) < 60_000
    assert '<script src="app/static/vis-network-9.1.2/vis-network.min.js"></script>' in linked
    assert '<link rel="stylesheet" href="app/static/vis-network-9.1.2/vis-network.css">' in linked
    # same drawing: the node and edge data are identical
    assert _datasets(inline, 0) == _datasets(linked, 0) and _datasets(inline, 1) == _datasets(linked, 1)


@pytest.mark.parametrize("url", ["https://cdn.example.com/vis", "//cdn.example.com/vis", "/abs/path",
                                 "../../etc", 'a"><script>alert(1)</script>', "javascript:alert(1)", ""])
def test_assets_url_must_be_a_relative_path(url):
    with pytest.raises(ValueError, match="assets_url"):
        graph_html(np.zeros((2, 2)), ["x", "y"], assets_url=url)


def test_fill_mode_sizes_the_canvas_to_the_frame_and_legend_can_be_left_out():
    W = np.array([[0.0, 1.0], [0.0, 0.0]])
    fixed = graph_html(W, ["x", "y"])
    fill = graph_html(W, ["x", "y"], height_px=None, legend=False)
    assert "height: 520px" in fixed and drawing_in(fixed)["fill"] is False
    assert "height: 100vh" in fill and drawing_in(fill)["fill"] is True and "overflow:hidden" in fill
    assert 'id="legend"' in fixed and 'id="legend"' not in fill


def _legend_script(d):
    """A script drawing the Learn page's legend for a d-node chain and its truth (AppTest.from_function)."""
    import numpy as np

    from dashboard.graphview import show_legend

    A = np.eye(d, k=1) * 0.8
    show_legend([A], A)


@pytest.mark.parametrize("d, shown", [(60, 1), (61, 0)])
def test_no_line_legend_above_the_heatmap_size(d, shown):
    # Issue 41: above SUMMARY_NODES (60) nodes show_graph draws a heatmap, yet the line legend (colours
    # of lines, arrowheads) was still shown above it; up to 60 the drawing's legend is there
    from streamlit.testing.v1 import AppTest

    from colide_core.render.graph_style import SUMMARY_NODES

    assert SUMMARY_NODES == 60
    at = AppTest.from_function(_legend_script, args=(d,)).run()
    assert not at.exception, at.exception
    legends = [h.proto.body for h in at.get("html")]
    assert len(legends) == shown
    if shown:
        assert "correct (in the ground truth)" in legends[0]
