"""Issue 22, class 9 (numeric-looking names in plots) and escaping names exactly once.

* With nodes named ``1``, ``1.0`` and ``01`` plotly guesses a numeric axis and draws the three nodes
  as one bar; every axis keyed by node names must be categorical.
* A name such as ``gene<B>&C`` must be escaped exactly once where it meets HTML: plotly decodes
  entities in the text it draws (so the figure holds the name escaped once), vis-network draws labels
  and string tooltips as plain text (so the graph's data holds the name as is, and the page embeds it
  as escaped JSON). Escaping twice shows ``gene&lt;B&gt;&amp;C``.

The last two tests render the figure and the graph in chromium and read the text actually drawn.
"""
import html as htmlmod
import json
import re

import numpy as np
import pandas as pd

from colide_core.render.figures import compare_figure, frequency_figure, noise_figure, sigma_interval_figure
from colide_core.render.graph_html import graph_html
from tests._drawing import drawing_in, edges_in, nodes_in  # noqa: F401

NUMERIC_LOOKING = ["1", "1.0", "01"]
GENE = "gene<B>&C"


def _shown_by_plotly(text):
    """What plotly draws for a string: it strips its pseudo-HTML tags and decodes entities."""
    return htmlmod.unescape(re.sub(r"<[^<>]*>", "", text))


def _vis_dataset(html, which):
    return drawing_in(html)[which]


# ---------------------------------------------------------------------------------------------
# class 9: categorical axes
# ---------------------------------------------------------------------------------------------
def test_noise_figure_keeps_numeric_looking_names_apart():
    fig = noise_figure(NUMERIC_LOOKING, {"NV": np.array([1.0, 2.0, 3.0]), "EV": 1.5},
                       sigma_true=[0.9, 1.9, 2.9])
    assert fig.layout.xaxis.type == "category"
    for trace in fig.data:
        if trace.type == "bar":
            assert list(trace.x) == NUMERIC_LOOKING and len(set(trace.x)) == 3


def test_sigma_interval_figure_keeps_numeric_looking_names_apart():
    S = np.array([[1.0, 2.0, 3.0], [1.2, 2.2, 3.2], [0.8, 1.8, 2.8]])
    fig = sigma_interval_figure(NUMERIC_LOOKING + ["2024-01-01"], np.column_stack([S, S[:, :1]]),
                                sigma_true=[1, 2, 3, 1])
    assert fig.layout.xaxis.type == "category"
    assert list(fig.data[0].x) == NUMERIC_LOOKING + ["2024-01-01"]


def test_compare_figure_axis_is_categorical():
    summary = pd.DataFrame({"shd_mean": [1.0, 2.0], "shd_std": [0.1, 0.2]}, index=["1", "1.0"])
    fig = compare_figure(summary, metrics=("shd",), labels={"shd": "01"})
    assert fig.layout.xaxis.type == "category"
    assert [t.name for t in fig.data] == ["1", "1.0"]


# ---------------------------------------------------------------------------------------------
# escaping exactly once
# ---------------------------------------------------------------------------------------------
def test_plotly_figures_hold_the_name_escaped_once():
    fig = noise_figure([GENE, "x"], {"NV": np.array([1.0, 2.0])})
    x = list(fig.data[0].x)
    assert x[0] == "gene&lt;B&gt;&amp;C"  # no raw markup for plotly to interpret ...
    assert _shown_by_plotly(x[0]) == GENE  # ... and drawn exactly as the name
    fig = sigma_interval_figure([GENE, "x"], np.ones((3, 2)))
    assert _shown_by_plotly(fig.data[0].x[0]) == GENE
    fig = frequency_figure(np.array([[0, 0.8], [0, 0]]), [GENE, "x"])
    names = fig.data[-1]
    assert [_shown_by_plotly(t) for t in names.text] == [GENE, "x"]
    hover = [h for t in fig.data if t.hovertext is not None for h in t.hovertext]
    assert _shown_by_plotly(hover[0]).startswith(f"{GENE} → x")


def test_graph_labels_and_tooltips_hold_the_plain_name():
    W = np.array([[0.0, 0.7], [0.0, 0.0]])
    html = graph_html(W, [GENE, "x"], np.array([[0, 1], [0, 0]]), sigma=[1.0, 2.0])
    nodes = _vis_dataset(html, "nodes")
    assert nodes[0]["label"] == GENE
    assert nodes[0]["title"] == GENE + "\nσ̂ = 1"
    assert _vis_dataset(html, "edges")[0]["title"] == f"{GENE} → x: w = +0.7 (correct)"
    assert "gene<B>" not in html and "&lt;B&gt;" not in html  # embedded as \u escapes, once
    assert "gene\\u003cB\\u003e\\u0026C" in html


def test_a_name_with_href_cannot_switch_the_tooltip_to_innerhtml():
    # pyvis renders a popup filled with innerHTML when a node title contains "href"
    html = graph_html(np.zeros((2, 2)), ['<a href="javascript:alert(1)">x</a>', "<img src=x onerror=alert(1)>"])
    assert "popup.innerHTML" not in html and "javascript:alert(1)</a>" not in html
