"""A reference graph file costs no more than the data's own nodes (issue 30, points 1, 2 and 9).

Each hostile file below took seconds to hours or gigabytes before the names were matched while
parsing; now each is refused (or read) after work bounded by the data's columns. The bounds are
asserted as counts of work (pairs expanded, names held), never as times.
"""
import json

import pytest

from colide_core.graph import export, readers
from colide_core.graph.export import DOT_MAX_BYTES, UnknownNodesError, read_graph
from colide_core.graph.reference import read_reference

COLUMNS = ["Raf", "Mek", "Erk", "Akt"]


def test_a_dagitty_group_of_repeated_names_is_one_node_not_k_squared_pairs(monkeypatch):
    # dag { {Raf Raf ... (300x)} -> {Mek Mek ... (300x)} }: 90,000 pairs expanded one by
    # one before; now each group is de-duplicated first and the statement is one edge.
    added = []
    real = export.nx.DiGraph.add_edge

    def counting(self, u, v, **kw):
        added.append((u, v))
        return real(self, u, v, **kw)

    monkeypatch.setattr(export.nx.DiGraph, "add_edge", counting)
    text = "dag { {" + " Raf" * 300 + " } -> {" + " Mek" * 300 + " } }"
    ref = read_reference(text.encode(), "bomb.dagitty", COLUMNS)
    assert ref.n_edges == 1 and len(added) == 1


def test_dagitty_expansion_is_bounded_by_the_square_of_the_columns():
    # Distinct names are at most the 4 columns, so every statement is at most 16 pairs; 100
    # statements of {all} -> {all} ask for 1,600 pairs, over the budget of 4 x 4^2 = 64.
    group = "{" + " ".join(COLUMNS) + "}"
    text = "dag { " + "; ".join([f"{group} -> {group}"] * 100) + " }"
    with pytest.raises(ValueError, match="expands to more than"):
        read_reference(text.encode(), "many.dagitty", COLUMNS)


@pytest.mark.parametrize("fmt, make", [
    ("edges_csv", lambda names: "source,target\n" + "".join(f"{a},{b}\n" for a, b in zip(names, names[1:]))),
    ("graphml", lambda names: export.to_graphml(__import__("numpy").zeros((len(names), len(names))), names)),
    ("json", lambda names: export.to_node_link_json(__import__("numpy").zeros((len(names), len(names))), names)),
    ("dagitty", lambda names: "dag { " + " ".join(names) + " }"),
    ("adjacency_csv", lambda names: "," + ",".join(names) + "\n"),
])
def test_unknown_names_stop_the_read_before_any_n_by_n_matrix(fmt, make, monkeypatch):
    # 14,000 names that are not columns made an N x N matrix (1.6 GB at 14,000) before the
    # names were checked. Now the reader stops with the first unknown names, and never builds
    # the matrix.
    def no_matrix(*args, **kwargs):
        raise AssertionError("an N x N matrix was built")

    monkeypatch.setattr(readers, "_graph_to_frame", no_matrix)  # the readers of colide_core.graph.export
    names = [f"n{i}" for i in range(14_000)]
    with pytest.raises(UnknownNodesError) as info:
        read_graph(make(names), fmt, nodes=COLUMNS)
    assert 1 <= len(info.value.names) <= 9 and info.value.names[0] == "n0"


def test_the_reference_message_lists_the_first_unknown_names():
    text = "source,target\n" + "".join(f"x{i},Raf\n" for i in range(20))
    with pytest.raises(ValueError, match=r"at least 9 node\(s\) that are not columns.*'x0', 'x1'"):
        read_reference(text.encode(), "r.csv", COLUMNS)


def test_without_allowed_names_at_most_max_nodes_are_read():
    from colide_core import defaults

    names = [f"n{i}" for i in range(defaults.MAX_NODES + 1)]
    with pytest.raises(ValueError, match=f"at most {defaults.MAX_NODES:,}"):
        read_graph("dag { " + " ".join(names) + " }", "dagitty")


def test_a_large_dot_file_is_refused_and_any_accepted_one_is_read_in_one_pass():
    text = "digraph { " + "Raf -> Mek; " * (DOT_MAX_BYTES // 12 + 1) + "}"
    with pytest.raises(ValueError, match="DOT file of more than"):
        read_reference(text.encode(), "big.dot", COLUMNS)
    assert read_reference(b"digraph { Raf -> Mek }", "ok.dot", COLUMNS).n_edges == 1
    # issue 42: the shapes that cost pydot minutes under a process-wide lock, at the size limit:
    # 99 kB of node statements, and of groups in edge statements (pydot read the latter as a node
    # named "FrozenDict(...)"). Our reader is one regular-expression pass and a recursive descent.
    nodes = "digraph {\n" + "Raf;\n" * ((DOT_MAX_BYTES - 20) // 5) + "}"
    assert len(nodes) < DOT_MAX_BYTES and read_reference(nodes.encode(), "n.dot", COLUMNS).n_edges == 0
    cols = COLUMNS + ["Plcg", "PIP2"]
    groups = "digraph {\n" + "{Raf Mek} -> {Plcg PIP2};\n" * ((DOT_MAX_BYTES - 20) // 26) + "}"
    ref = read_reference(groups.encode(), "g.dot", cols)
    assert ref.n_edges == 4
    B = ref.B
    for a, b in (("Raf", "Plcg"), ("Raf", "PIP2"), ("Mek", "Plcg"), ("Mek", "PIP2")):
        assert B.loc[a, b] == 1
    with pytest.raises(ValueError, match="digraph"):
        read_reference(b"graph { Raf -- Mek }", "u.dot", COLUMNS)
    with pytest.raises(ValueError, match="expand to more than"):
        many = " ".join(f"n{i}" for i in range(500))
        read_graph(f"digraph {{ {{{many}}} -> {{{many}}} }}", "dot")


def test_a_json_weight_that_is_a_list_is_a_value_error():
    doc = {"directed": True, "multigraph": False, "graph": {}, "nodes": [{"id": "Raf"}, {"id": "Mek"}],
           "edges": [{"source": "Raf", "target": "Mek", "weight": [1, 2]}]}
    with pytest.raises(ValueError, match="could not read"):
        read_reference(json.dumps(doc).encode(), "r.json", COLUMNS)
