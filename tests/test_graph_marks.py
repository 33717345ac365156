"""Marks the Predict page adds to the one graph drawing: nodes filled by a predicted change, and
the edges a planned experiment would settle (issue 40)."""
import numpy as np
import pytest

from colide_core.render.graph_html import _graph_context, graph_html
from colide_core.render.graph_style import NODE_FILL, SETTLED_STYLE, change_fill


def _context(**kw):
    # chain 0 -> 1 -> 2 with weights 1 and -2
    W = np.array([[0, 1.0, 0], [0, 0, -2.0], [0, 0, 0]])
    return _graph_context(W, ["a", "b", "c"], None, sigma=None, height_px=300, positions=None,
                          layout="circular", assets_url="static", **kw)


def test_change_fill_is_a_clipped_diverging_scale():
    # white at 0; +clip and beyond is the red end, -clip the blue end; halfway is the midpoint
    assert change_fill([0.0, 2.0, 5.0, -2.0]) == ["#ffffff", "#d62728", "#d62728", "#1f77b4"]
    # +1 of clip 2: each channel halfway from 255 to red's (0xd6, 0x27, 0x28) = (214, 39, 40)
    assert change_fill([1.0]) == ["#%02x%02x%02x" % (round(234.5), round(147), round(147.5))]
    assert change_fill([np.nan]) == [NODE_FILL]


def test_node_values_fill_nodes_and_say_the_change():
    ctx = _context(node_values=[0.0, 1.5, np.nan])
    fills = [n["color"] for n in ctx["drawing"]["nodes"]]
    assert fills == change_fill([0.0, 1.5, np.nan])
    assert "predicted change: +1.5 sd" in ctx["drawing"]["nodes"][1]["title"]
    assert "predicted change" not in ctx["drawing"]["nodes"][2]["title"]
    with pytest.raises(ValueError, match="node_values must have 3 entries"):
        _context(node_values=[1.0, 2.0])


def test_settled_edges_are_highlighted_in_either_orientation():
    # the mask names 2 -> 1, the drawn edge is 1 -> 2: the experiment settles its direction either way
    settled = np.zeros((3, 3), bool)
    settled[2, 1] = True
    edges = {(e["from"], e["to"]): e for e in _context(settled=settled)["drawing"]["edges"]}
    assert edges[(1, 2)]["shadow"] == SETTLED_STYLE["shadow"] and "would settle" in edges[(1, 2)]["title"]
    assert "shadow" not in edges[(0, 1)]
    with pytest.raises(ValueError, match="settled must have shape"):
        _context(settled=np.zeros((2, 2), bool))


def test_settled_edges_keep_their_colour_and_the_legend_names_their_halo():
    """Issue 48 m-2: a settled edge turned purple (losing correct / reversed) with a 6-7 px "settled"
    label, and the legend had no purple entry. Now it keeps its colour and width, gains a halo, and
    the legend (the page's and the drawing's data) names the halo; no label is drawn."""
    from colide_core.render.graph_html import graph_drawing
    from colide_core.render.graph_style import EDGE_STYLES

    # truth 0 -> 1 -> 2; learned 0 -> 1 (correct) and 2 -> 1 (reversed), both settled
    W = np.array([[0, 1.0, 0], [0, 0, 0], [0, -2.0, 0]])
    B = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    settled = (W != 0)
    plain = {(e["from"], e["to"]): e for e in graph_drawing(W, list("abc"), B)["edges"]}
    got = graph_drawing(W, list("abc"), B, settled=settled)
    edges = {(e["from"], e["to"]): e for e in got["edges"]}
    assert edges[(0, 1)]["color"] == EDGE_STYLES["correct"][0] and edges[(2, 1)]["color"] == EDGE_STYLES["reversed"][0]
    for key in edges:
        assert edges[key]["width"] == plain[key]["width"] and "label" not in edges[key] and "font" not in edges[key]
        assert edges[key]["shadow"]["color"] == SETTLED_STYLE["halo"]
    halo = {"halo": SETTLED_STYLE["halo"], "text": SETTLED_STYLE["text"]}
    assert got["legend"][-1] == halo
    assert halo not in graph_drawing(W, list("abc"), B)["legend"]
    assert halo not in graph_drawing(W, list("abc"), B, settled=np.zeros((3, 3), bool))["legend"]
    html = graph_html(W, list("abc"), B, settled=settled, assets_url="static")
    assert SETTLED_STYLE["text"] in html and f"box-shadow:0 0 5px 3px {SETTLED_STYLE['halo']}" in html


def test_names_stay_plain_text_in_the_page():
    # a hostile name is embedded as JSON once (the template's |tojson), not as markup
    html = graph_html(np.array([[0, 1.0], [0, 0]]), ["<b>x</b>", "y"], node_values=[0.0, 1.0], assets_url="static")
    assert "<b>x</b>" not in html and "\\u003cb\\u003ex\\u003c/b\\u003e" in html
