"""Hostile column names travel from an uploaded file, through colide_core.data.io and the dashboard's
loader, into the graph HTML: the generated HTML may contain them only in escaped, inert form.

The graph page is embedded by ``st.iframe`` as srcdoc with scripts allowed and same-origin access to
the app, so any markup that survived here would run with the app's privileges.
"""
import json
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd

from colide_core.data.io import read_table, validate_data
from dashboard.data import dataset_from_upload
from colide_core.render.graph_html import graph_html
from dashboard.infra.text import md_escape
from tests._drawing import drawing_in, edges_in, nodes_in  # noqa: F401

HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "</script><script>alert(2)</script>",
    "javascript:alert(3)",
]
NAMES = HOSTILE + ["Raf"]


class _Tags(HTMLParser):
    """Every start tag and its attributes, as a browser's tokenizer would see them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _tags(html):
    p = _Tags()
    p.feed(html)
    return p.tags


def _csv_bytes(names, n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(names)))
    X[:, 1] += 0.9 * X[:, 0]
    return pd.DataFrame(X, columns=names).to_csv(index=False).encode()


def _vis_dataset(html, which):
    """The JSON array passed to ``new vis.DataSet(...)`` for "nodes" or "edges"."""
    return drawing_in(html)[which]


def _graph_for(names):
    d = len(names)
    W = np.zeros((d, d))
    W[0, 1] = 0.9  # <script> -> "><img ...>
    W[1, 2] = -0.5
    W[3, 4] = 1.2
    B = np.zeros((d, d))
    B[0, 1] = B[2, 1] = B[4, 0] = 1  # correct, reversed, missing edges: every tooltip kind
    return graph_html(W, names, B, sigma=np.linspace(0.5, 1.5, d))


def test_names_survive_the_loader_verbatim():
    # The data layer keeps names as data (escaping is the renderer's job) ...
    v = validate_data(read_table(_csv_bytes(NAMES), "x.csv"))
    assert v.node_names == NAMES
    # ... and so does the dashboard's upload path, which uses colide_core.data.io
    ds = dataset_from_upload(_csv_bytes(NAMES), '"><img src=x onerror=alert(1)>.csv')
    assert ds.node_names == NAMES


def test_graph_html_contains_only_escaped_forms():
    ds = dataset_from_upload(_csv_bytes(NAMES), "upload.csv")
    html = _graph_for(ds.node_names)
    baseline = _graph_for([f"node{i}" for i in range(len(NAMES))])

    # no raw payload anywhere in the document
    for raw in ("<script>alert", "<img", "onerror=alert(1)>", "</script><script>"):
        assert raw not in html, raw
    # the browser's tokenizer sees exactly the tags of a graph with harmless names: no <img>, no
    # extra <script>, no event-handler attribute, no javascript: URL
    tags, base_tags = _tags(html), _tags(baseline)
    assert [t for t, _ in tags] == [t for t, _ in base_tags]
    assert not any(k.startswith("on") for _, attrs in tags for k in attrs)
    assert not any("javascript:" in (v or "") for _, attrs in tags for v in attrs.values())

    # vis-network labels and string tooltips are plain text (canvas, innerText), so they hold the
    # names exactly as they are; the one escape where they meet HTML is pyvis's tojson, which
    # writes <, >, & and ' in the embedded JSON as \\u escapes.
    nodes = _vis_dataset(html, "nodes")
    assert [n["label"] for n in nodes] == NAMES
    assert all(n["title"].startswith(n["label"] + "\nσ̂ = ") for n in nodes)
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in html
    assert "&lt;" not in html.split("colideDraw({", 1)[1]  # never HTML-escaped as well
    edges = _vis_dataset(html, "edges")
    assert any(e["title"].startswith("<script>alert(1)</script> → \"><img src=x onerror=alert(1)>")
               for e in edges)
    # the tooltip that sets innerHTML (pyvis switches to it when a title contains "href") is never used
    assert "popup.innerHTML" not in html


def test_markdown_escape_of_hostile_file_and_column_names():
    for raw in HOSTILE + ["[x](javascript:alert(1))", "**bold** :red[x] $x$"]:
        out = md_escape(raw)
        assert "<" not in out and ">" not in out
        assert "](" not in out  # no markdown link can form
