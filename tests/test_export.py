"""Tests for colide_core.graph.export: every format, round trips back to the same adjacency."""
import io
import json
import xml.etree.ElementTree as ET

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from colide_core.graph.export import (
    EXPORT_FORMATS,
    edge_list,
    export_graph,
    read_graph,
    to_adjacency_csv,
    to_dagitty,
    to_dot,
    to_edge_list_csv,
    to_networkx,
    to_node_link_json,
)
from colide_core.render.picture import to_image

# Hand-made weighted DAG on 4 nodes: raf -> mek (0.5), mek -> erk (-1.25), raf -> erk (2/3);
# "p 38" is isolated and has a space in its name. W[i, j] != 0 means i -> j.
NAMES = ["raf", "mek", "erk", "p 38"]
W = np.zeros((4, 4))
W[0, 1] = 0.5
W[1, 2] = -1.25
W[0, 2] = 2.0 / 3.0


@pytest.mark.parametrize("fmt", ["graphml", "json", "adjacency_csv"])
def test_round_trip_is_exact_including_isolated_node(fmt):
    back = read_graph(export_graph(W, NAMES, fmt), fmt)
    assert list(back.index) == NAMES and list(back.columns) == NAMES
    # Weights survive bit-for-bit (2/3 has no short decimal form).
    assert np.array_equal(back.to_numpy(), W)


def test_edge_list_csv_exact_text_and_round_trip():
    text = to_edge_list_csv(W, NAMES)
    # Row-major order of nonzeros: (0,1), (0,2), (1,2).
    assert text.splitlines() == [
        "source,target,weight",
        "raf,mek,0.5",
        f"raf,erk,{2.0 / 3.0!r}",
        "mek,erk,-1.25",
    ]
    back = read_graph(text, "edges_csv")  # the isolated node cannot come back from an edge list
    assert list(back.index) == ["raf", "mek", "erk"]
    assert np.array_equal(back.to_numpy(), W[:3, :3])


def test_dataframe_input_supplies_names_and_is_not_modified():
    df = pd.DataFrame(W.copy(), index=NAMES, columns=NAMES)
    G = to_networkx(df)
    assert list(G.nodes) == NAMES
    assert sorted(G.edges) == sorted([("raf", "mek"), ("mek", "erk"), ("raf", "erk")])
    assert G["mek"]["erk"]["weight"] == -1.25
    assert np.array_equal(df.to_numpy(), W)


def test_node_link_json_structure():
    data = json.loads(to_node_link_json(W, NAMES))
    assert data["directed"] is True and data["multigraph"] is False
    assert [n["id"] for n in data["nodes"]] == NAMES
    assert {(e["source"], e["target"], e["weight"]) for e in data["edges"]} == {
        ("raf", "mek", 0.5), ("raf", "erk", 2.0 / 3.0), ("mek", "erk", -1.25)}


def test_graphml_is_valid_xml_with_directed_edges():
    root = ET.fromstring(export_graph(W, NAMES, "graphml"))
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    graph = root.find("g:graph", ns)
    assert graph.get("edgedefault") == "directed"
    assert len(graph.findall("g:node", ns)) == 4
    assert len(graph.findall("g:edge", ns)) == 3


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pydot's parser uses old pyparsing names
def test_dot_parses_back_with_pydot():
    text = to_dot(W, NAMES)
    assert text.lstrip().startswith(("digraph", "strict digraph"))
    G = nx.nx_pydot.from_pydot(__import__("pydot").graph_from_dot_data(text)[0])
    # pydot keeps the quotes of quoted names; strip them for the comparison.
    edges = {(u.strip('"'), v.strip('"')) for u, v in G.edges()}
    assert edges == {("raf", "mek"), ("raf", "erk"), ("mek", "erk")}
    assert {n.strip('"') for n in G.nodes} == set(NAMES)


def test_dagitty_exact_string_and_quoting():
    assert to_dagitty(W, NAMES) == (
        "dag {\n"
        "  raf\n  mek\n  erk\n  \"p 38\"\n"
        "  raf -> mek\n  raf -> erk\n  mek -> erk\n"
        "}\n"
    )
    weighted = to_dagitty(W, NAMES, weights=True, decimals=2)
    assert "  raf -> erk [beta=0.67]\n" in weighted
    assert "  mek -> erk [beta=-1.25]\n" in weighted
    # A quote inside a name is escaped, so the model string stays parseable.
    assert to_dagitty(np.zeros((1, 1)), ['a"b']) == 'dag {\n  "a\\"b"\n}\n'


def test_adjacency_csv_layout():
    lines = to_adjacency_csv(W, NAMES).splitlines()
    assert lines[0] == "source,raf,mek,erk,p 38"
    assert lines[2] == "mek,0.0,0.0,-1.25,0.0"


@pytest.mark.parametrize("fmt,magic", [("png", b"\x89PNG\r\n\x1a\n"), ("svg", None)])
def test_pictures_are_valid_and_reproducible(fmt, magic):
    a = to_image(W, NAMES, fmt=fmt, dpi=50, figsize=(3, 3))
    b = export_graph(W, NAMES, fmt, dpi=50, figsize=(3, 3))
    if magic is not None:
        assert a.startswith(magic)
    else:
        root = ET.fromstring(a)
        assert root.tag.endswith("svg")
        assert b"raf" in a  # node labels are drawn as text
    assert a == b  # no timestamps: same graph, same bytes


def test_every_listed_format_exports_bytes():
    for fmt, (ext, mime) in EXPORT_FORMATS.items():
        out = export_graph(W, NAMES, fmt, **({"dpi": 40, "figsize": (2, 2)} if fmt in ("png", "svg") else {}))
        assert isinstance(out, bytes) and len(out) > 20, fmt
        assert ext.startswith((".", "_")) and "/" in mime


def test_empty_graph_and_default_names():
    Z = np.zeros((3, 3))
    assert to_edge_list_csv(Z).strip() == "source,target,weight"
    back = read_graph(export_graph(Z, fmt="graphml"), "graphml")
    assert list(back.columns) == ["X0", "X1", "X2"] and not back.to_numpy().any()


def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match="square"):
        export_graph(np.zeros((2, 3)), fmt="graphml")
    with pytest.raises(ValueError, match="NaN or Inf"):
        export_graph(np.array([[0, np.nan], [0, 0]]), fmt="json")
    with pytest.raises(ValueError, match="unique"):
        export_graph(np.zeros((2, 2)), ["a", "a"], "dot")
    with pytest.raises(ValueError, match="2 node names for 3 nodes"):
        export_graph(np.zeros((3, 3)), ["a", "b"], "dagitty")
    with pytest.raises(ValueError, match="unknown export format 'gml'"):
        export_graph(W, NAMES, "gml")
    with pytest.raises(ValueError, match="could not read the graphml graph"):
        read_graph(b"<not-xml", "graphml")
    with pytest.raises(ValueError, match="could not read the json graph"):
        read_graph("{}", "json")
    with pytest.raises(ValueError, match="layout must be one of"):
        to_image(W, NAMES, layout="nope")


def test_edge_list_and_csvs_hand_worked():
    # (Moved from test_dashboard_helpers.py with dashboard/exports.py, which duplicated this module.)
    # W[0,1] = 1.5 means a -> b; W[2,0] = -0.25 means c -> a.
    W = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, 0.0], [-0.25, 0.0, 0.0]])
    names = ["a", "b", "c"]
    el = edge_list(W, names)
    assert el.to_dict("list") == {"source": ["a", "c"], "target": ["b", "a"], "weight": [1.5, -0.25]}
    back = pd.read_csv(io.StringIO(to_edge_list_csv(W, names)))
    assert back.to_dict("list") == el.to_dict("list")
    adj = pd.read_csv(io.StringIO(to_adjacency_csv(W, names)), index_col="source")
    assert list(adj.columns) == names and list(adj.index) == names
    np.testing.assert_array_equal(adj.to_numpy(), W)
    assert list(edge_list(np.zeros((2, 2)), ["a", "b"]).columns) == ["source", "target", "weight"]
