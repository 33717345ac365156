"""Issue 22, class 5: exports that node names can break.

Node names come from a user's CSV header. Every text export must carry any name the loader
accepts without injecting nodes or edges, without becoming invalid, and without turning a cell into
a spreadsheet formula; and it must read back, with the field's own readers (pydot, networkx,
pandas, json, DAGitty's grammar), with exactly the same names and edges. The names' policy itself
(control and invisible characters, normalisation) is tested in test_security_names.py.
"""
import csv
import io
import json
import unicodedata
import warnings
import xml.etree.ElementTree as ET

import networkx as nx
import numpy as np
import pandas as pd
import pydot
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from colide_core._validation import NodeNameError, check_node_names
from colide_core.graph.export import (
    CSV_FORMULA_PREFIXES,
    csv_escape_text,
    csv_safe_frame,
    csv_unescape_text,
    dot_id,
    dot_unquote,
    export_graph,
    read_graph,
    to_adjacency_csv,
    to_csv_safe,
    to_dagitty,
    to_dot,
    to_edge_list_csv,
    to_graphml,
)

# Names an attacker would try against DOT: a quoted-looking name with an edge inside, port syntax,
# an HTML label, an edge operator, keywords, a trailing-quote escape, a comment opener.
DOT_HOSTILE = ['"a" -> "evil"', "a:b", "<b>x</b>", "p->q", "node", "graph", 'x"y', "back\\slash",
               "}", "/*", "subgraph s {", "1.0", "01"]


def _chain(d, weights=None):
    """W with the edges 0->1, 1->2, ..., (d-2)->(d-1): W[i, j] != 0 means i -> j."""
    W = np.zeros((d, d))
    for k in range(d - 1):
        W[k, k + 1] = (weights or [0.5, -1.25, 2.0 / 3.0])[k % 3]
    return W


def _parse_dot(text):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # pydot's parser uses old pyparsing names
        graphs = pydot.graph_from_dot_data(text)
    assert graphs, "pydot could not parse the DOT text"
    g = graphs[0]
    nodes = [dot_unquote(n.get_name()) for n in g.get_nodes() if n.get_name() not in ("node", "edge", "graph")]
    edges = {(dot_unquote(e.get_source()), dot_unquote(e.get_destination())): float(dot_unquote(e.get("weight")))
             for e in g.get_edges()}
    return nodes, edges


# ---------------------------------------------------------------------------------------------
# DOT
# ---------------------------------------------------------------------------------------------
def test_dot_names_cannot_inject_nodes_or_edges():
    d = len(DOT_HOSTILE)
    W = _chain(d)
    nodes, edges = _parse_dot(to_dot(W, DOT_HOSTILE))
    # exactly the d declared nodes and the d-1 chain edges, with the names as written
    assert nodes == DOT_HOSTILE
    assert edges == {(DOT_HOSTILE[k], DOT_HOSTILE[k + 1]): W[k, k + 1] for k in range(d - 1)}
    # and the library's reader agrees
    back = read_graph(to_dot(W, DOT_HOSTILE), "dot")
    assert list(back.index) == DOT_HOSTILE and np.array_equal(back.to_numpy(), W)


def test_dot_id_quotes_every_name_and_inverts():
    assert dot_id("raf") == '"raf"'
    assert dot_id('a"b') == '"a\\"b"'
    assert dot_id("a\\b") == '"a\\\\b"'
    assert dot_id("a\nb") == '"a\\nb"'
    for name in DOT_HOSTILE + ['\\"', '\\\\n', "\\n", "a\r\nb"]:
        assert dot_unquote(dot_id(name)) == name
    assert dot_unquote("bare") == "bare"


# ---------------------------------------------------------------------------------------------
# GraphML
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["a\x01b", "nul\x00", "esc\x1b[31m", "zero\u200bwidth", "sep\u2028", "\ufffe"])
def test_graphml_never_gets_a_character_xml_cannot_hold(bad):
    # networkx's writer would emit invalid XML for control characters; the exporters refuse such
    # names with the name policy's message before writing anything.
    with pytest.raises(ValueError, match="U\\+[0-9A-F]{4}|noncharacter"):
        to_graphml(np.zeros((2, 2)), [bad, "ok"])
    for fmt in ("dot", "json", "dagitty", "edges_csv", "adjacency_csv", "svg"):
        with pytest.raises(ValueError):
            export_graph(np.zeros((2, 2)), [bad, "ok"], fmt)


def test_graphml_with_markup_names_is_well_formed():
    names = ["<a>", "&amp;", "]]>", "'\"", "<!--"]
    text = to_graphml(_chain(5), names)
    ET.fromstring(text)  # well-formed
    assert list(nx.parse_graphml(text).nodes) == names


# ---------------------------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------------------------
FORMULAS = ["=1+1", "+1+2", "-2+3", "@SUM(A1:A2)", "\tx", "=cmd|' /C calc'!A0", "'quoted"]


def test_csv_cells_that_start_a_formula_get_one_quote():
    for text in FORMULAS:
        assert csv_escape_text(text) == "'" + text
        assert csv_unescape_text(csv_escape_text(text)) == text
    # plain numbers and ordinary names are never touched
    for text in ["-0.5", "+3", "-1e-3", ".5", "raf", "a=b", " =1", "1-2"]:
        assert csv_escape_text(text) == text
    assert set(CSV_FORMULA_PREFIXES) == {"=", "+", "-", "@", "\t", "\r"}


def test_edge_list_and_adjacency_csv_neutralise_formula_names_and_keep_numbers():
    names = ["=HYPERLINK(\"http://x\")", "+A1", "@x", "-y", "ok"]
    W = np.zeros((5, 5))
    W[0, 1], W[2, 3], W[3, 4] = -0.5, 1.5, -2.0
    rows = list(csv.reader(io.StringIO(to_edge_list_csv(W, names))))
    assert rows == [["source", "target", "weight"],
                    ["'=HYPERLINK(\"http://x\")", "'+A1", "-0.5"],
                    ["'@x", "'-y", "1.5"],
                    ["'-y", "ok", "-2.0"]]
    adj = list(csv.reader(io.StringIO(to_adjacency_csv(W, names))))
    assert adj[0] == ["source", "'=HYPERLINK(\"http://x\")", "'+A1", "'@x", "'-y", "ok"]
    assert [r[0] for r in adj[1:]] == ["'=HYPERLINK(\"http://x\")", "'+A1", "'@x", "'-y", "ok"]
    assert adj[1][2] == "-0.5"  # a negative weight stays a number
    # no cell of either file starts a formula
    for table in (rows, adj):
        for row in table:
            for cell in row:
                assert cell[:1] not in ("=", "+", "@", "\t", "\r") and (
                    not cell.startswith("-") or float(cell) < 0), cell
    # the library reads both back to the original names
    assert list(read_graph(to_adjacency_csv(W, names), "adjacency_csv").columns) == names
    assert list(read_graph(to_edge_list_csv(W, names), "edges_csv").index) == names


def test_to_csv_safe_only_touches_text_and_quotes_carriage_returns():
    df = pd.DataFrame({"method": ["=evil()", "colide-nv", "-x"], "shd": [-1.5, 2.0, 0.0],
                       "n": [1, -2, 3], "error": ["line\rbreak", None, "@once"]})
    text = to_csv_safe(df, index=False)
    back = pd.read_csv(io.StringIO(text))
    assert back["method"].tolist() == ["'=evil()", "colide-nv", "'-x"]
    assert back["shd"].tolist() == [-1.5, 2.0, 0.0] and back["n"].tolist() == [1, -2, 3]
    # the carriage return is inside a quoted field: 3 rows, not 4
    assert len(back) == 3 and back["error"].iloc[0] == "line\rbreak" and back["error"].iloc[2] == "'@once"
    assert pd.isna(back["error"].iloc[1])
    assert df["method"].iloc[0] == "=evil()"  # the caller's frame is not modified
    # categorical text and index labels are covered too
    cat = pd.DataFrame({"c": pd.Categorical(["=a", "b"])}, index=pd.Index(["+i", "j"], name="=idx"))
    safe = csv_safe_frame(cat)
    assert safe["c"].tolist() == ["'=a", "b"] and list(safe.index) == ["'+i", "j"] and safe.index.name == "'=idx"


def test_pandas_alone_leaves_a_carriage_return_unquoted():
    # Why to_csv_safe switches the quoting: with pandas' default a lone \r splits the row.
    df = pd.DataFrame({"a": ["x\ry"], "b": [1.0]})
    assert len(pd.read_csv(io.StringIO(df.to_csv(index=False)))) == 2
    assert len(pd.read_csv(io.StringIO(to_csv_safe(df, index=False)))) == 1


def test_cli_and_pages_write_csv_only_through_the_helper(repo_root):
    # Every CSV writer of the project uses to_csv_safe: no bare DataFrame.to_csv call is left.
    import re

    allowed = {  # the helper itself, its docstring, and a hint inside an error message
        ("colide_core/graph/escape.py", "return safe.to_csv(path_or_buf, **kwargs)"),
        ("colide_core/graph/escape.py", '"""``df.to_csv(...)`` for every CSV'),
        ("colide_core/data/io.py", '"DataFrame.to_csv(index=False)).")'),
    }
    offenders = []
    for folder in ("colide_core", "dashboard", "pages", "benchmarks"):
        for path in (repo_root / folder).rglob("*.py"):
            rel = path.relative_to(repo_root).as_posix()
            for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if re.search(r"\.to_csv\(|csv\.writer\(|csv\.DictWriter\(", line) and not any(
                        rel == f and line.strip().startswith(snippet) for f, snippet in allowed):
                    offenders.append(f"{rel}:{k}: {line.strip()}")
    assert offenders == []


# ---------------------------------------------------------------------------------------------
# DAGitty: a reader following DAGitty's own grammar (jslib/parser/GraphDotParser.pegjs)
# ---------------------------------------------------------------------------------------------
def _dagitty_string(text, i):
    """Decode the quoted string starting at text[i] == '"' as DAGitty's STRING rule does."""
    out, i = [], i + 1
    while True:
        c = text[i]
        if c == '"':
            return "".join(out), i + 1
        if c == "\\":
            if text[i + 1] == '"':
                out.append('"')
                i += 2
            elif text[i + 1] in "\r\n":
                i += 1
                while text[i] in "\r\n":
                    i += 1
            else:
                out.append("\\")
                i += 1
            continue
        assert not (c < " " or c == "\x7f"), "DAGitty strings cannot hold control characters"
        out.append(c)
        i += 1


def _dagitty_tokens(text):
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n;":
            i += 1
        elif c == '"':
            s, i = _dagitty_string(text, i)
            yield ("id", s)
        elif text.startswith("->", i):
            yield ("op", "->")
            i += 2
        elif c in "{}[]=,":
            yield ("op", c)
            i += 1
        else:
            j = i
            while j < n and (text[j].isascii() and (text[j].isalnum() or text[j] in "_-.")):
                j += 1
            assert j > i, f"unexpected character {c!r} in DAGitty text"
            yield ("id", text[i:j])
            i = j


def _parse_dagitty(text):
    toks = list(_dagitty_tokens(text))
    assert toks[:2] == [("id", "dag"), ("op", "{")] and toks[-1] == ("op", "}")
    toks = toks[2:-1]
    nodes, edges, k = [], {}, 0
    while k < len(toks):
        kind, a = toks[k]
        assert kind == "id", toks[k]
        if k + 1 < len(toks) and toks[k + 1] == ("op", "->"):
            kind_b, b = toks[k + 2]
            assert kind_b == "id"
            edges[(a, b)] = None
            k += 3
        else:
            nodes.append(a)
            k += 1
        if k < len(toks) and toks[k] == ("op", "["):  # [beta=...]
            end = toks.index(("op", "]"), k)
            attrs = toks[k + 1:end]
            if edges and attrs[:2] == [("id", "beta"), ("op", "=")]:
                edges[list(edges)[-1]] = float(attrs[2][1])
            k = end + 1
    return nodes, edges


def test_dagitty_reader_follows_the_grammar():
    # \" is a quote, a lone backslash is itself (DAGitty has no \\ escape), bare words as is
    assert _parse_dagitty('dag {\n  "a\\"b\\c"\n  x_1\n  "a\\"b\\c" -> x_1 [beta=0.5]\n}\n') == (
        ['a"b\\c', "x_1"], {('a"b\\c', "x_1"): 0.5})


def test_dagitty_names_cannot_inject():
    names = ["a -> b", '"q"', "x\\y", "p.38", "dag", "-x", "1a", "}"]
    W = _chain(len(names))
    nodes, edges = _parse_dagitty(to_dagitty(W, names, weights=True, decimals=6))
    assert nodes == names
    assert {k: round(v, 6) for k, v in edges.items()} == {
        (names[k], names[k + 1]): round(W[k, k + 1], 6) for k in range(len(names) - 1)}
    # DAGitty's bare words are [0-9a-zA-Z_-]+: "p.38" must be quoted (it was not on main)
    assert '"p.38"' in to_dagitty(W, names)


# ---------------------------------------------------------------------------------------------
# Property test: any name the policy accepts survives every text format
# ---------------------------------------------------------------------------------------------
_FRAGMENTS = st.sampled_from(['"', "\\", ":", "<", ">", "->", "--", "=", "+", "-", "@", "'", " ", "&",
                              ";", ",", "{", "}", "[", "]", "#", "//", "/*", "*/", "node", "graph",
                              "edge", "strict", "dag", "NA", "nan", "None", "null", "1", "1.0", "01",
                              "-1", "1e5", "é", "e\u0301", "ß", "İ", "😀", "\u00a0", "\u3000",
                              "<b>", "&amp;", "]]>", "\ud7ff", "\U0010fffd", "\ue000"])
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cf", "Cs", "Zl", "Zp")),
                min_size=1, max_size=6)
_NAME = st.lists(st.one_of(_FRAGMENTS, _TEXT), min_size=1, max_size=4).map("".join)


def _policy(names):
    try:
        return check_node_names(names)
    except NodeNameError:
        return None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(raw=st.lists(_NAME, min_size=2, max_size=6, unique_by=lambda s: unicodedata.normalize("NFC", s)),
       mask=st.lists(st.booleans(), min_size=15, max_size=15),
       weights=st.lists(st.sampled_from([0.5, -1.25, 2.0 / 3.0, -1e-300, 123456.789, -0.1]), min_size=15,
                        max_size=15))
def test_every_text_format_reads_back_the_same_names_and_edges(raw, mask, weights):
    names = _policy(raw)
    assume(names is not None)
    d = len(names)
    W = np.zeros((d, d))
    k = 0
    for i in range(d):
        for j in range(i + 1, d):
            if mask[k]:
                W[i, j] = weights[k]
            k += 1
    want_edges = {(names[i], names[j]): W[i, j] for i, j in zip(*np.nonzero(W))}

    # DOT, read by pydot
    nodes, edges = _parse_dot(to_dot(W, names))
    assert nodes == names and edges == want_edges

    # GraphML, read by networkx
    G = nx.parse_graphml(export_graph(W, names, "graphml").decode("utf-8"))
    assert list(G.nodes) == names
    assert {(u, v): w for u, v, w in G.edges(data="weight")} == want_edges

    # node-link JSON, read by json
    data = json.loads(export_graph(W, names, "json"))
    assert [n["id"] for n in data["nodes"]] == names
    assert {(e["source"], e["target"]): e["weight"] for e in data["edges"]} == want_edges

    # edge-list CSV, read by pandas as text (no NA guessing), the added quote stripped
    el = pd.read_csv(io.BytesIO(export_graph(W, names, "edges_csv")), dtype=str, keep_default_na=False)
    assert {(csv_unescape_text(s), csv_unescape_text(t)): float(w)
            for s, t, w in zip(el["source"], el["target"], el["weight"])} == want_edges

    # adjacency CSV, read by pandas as text
    adj = pd.read_csv(io.BytesIO(export_graph(W, names, "adjacency_csv")), header=None, dtype=str,
                      keep_default_na=False)
    assert [csv_unescape_text(c) for c in adj.iloc[0, 1:]] == names
    assert [csv_unescape_text(c) for c in adj.iloc[1:, 0]] == names
    assert np.array_equal(adj.iloc[1:, 1:].to_numpy(dtype=float), W)

    # DAGitty, read with DAGitty's grammar
    nodes, edges = _parse_dagitty(to_dagitty(W, names, weights=True, decimals=17))
    assert nodes == names and set(edges) == set(want_edges)

    # and the library's own reader, for every format it reads
    for fmt in ("graphml", "json", "dot", "adjacency_csv"):
        back = read_graph(export_graph(W, names, fmt), fmt)
        assert list(back.index) == names and list(back.columns) == names, fmt
        assert np.array_equal(back.to_numpy(), W), fmt
    back = read_graph(export_graph(W, names, "edges_csv"), "edges_csv")
    assert {(u, v): back.loc[u, v] for u, v in want_edges} == want_edges
