"""Reading a graph back: GraphML, node-link JSON, DOT, DAGitty, edge-list and adjacency CSV.

:func:`read_graph` turns a file written by :func:`colide_core.graph.export.export_graph` (or a
user's reference graph) into a weighted adjacency DataFrame. Every name is checked as it is read
(``_Names``), before any work that grows with the names. GraphML and JSON are parsed by networkx,
CSV by pandas (names decoded by :func:`colide_core.graph.escape.csv_unescape_text`), DOT by the
linear tokenizer and recursive-descent parser here (IDs decoded by
:func:`colide_core.graph.escape.dot_unquote`; pydot's grammar was quadratic on hostile input,
issue 42), DAGitty model code by a small tokenizer here (no Python library reads it).
:mod:`colide_core.graph.export` re-exports :func:`read_graph` and :data:`DOT_MAX_BYTES` (their
public import path).

Convention: cell (i, j) of the result is the weight of the edge i -> j.
"""
from __future__ import annotations

import io
import json
import re

import networkx as nx
import numpy as np
import pandas as pd

from colide_core import defaults
from colide_core.exceptions import UnknownNodesError
from colide_core.graph.escape import csv_unescape_text, dot_unquote

__all__ = ["read_graph", "DOT_MAX_BYTES", "DOT_MAX_PAIRS", "UnknownNodesError"]


class _Names:
    """The names a reader may meet: every name is checked as it is read, so that a hostile file
    costs no more than the data's own nodes (issue 30: a few kB of DAGitty groups expanded pair
    by pair, or an N x N matrix of 14,000 unknown names, before any name was matched).

    Parameters
    ----------
    allowed : sequence of str or None
        The data's node names; None: any name (then at most ``max_names`` distinct ones).
    max_names : int
        Most distinct names without ``allowed``.
    """

    def __init__(self, allowed=None, max_names=None):
        self.allowed = None if allowed is None else {str(n) for n in allowed}
        self.max_names = len(self.allowed) if self.allowed is not None else int(max_names or defaults.MAX_NODES)
        self.unknown = []

    def check(self, name):
        """Raise once 9 names outside ``allowed`` are seen (listing them); return ``name``."""
        if self.allowed is not None and name not in self.allowed and name not in self.unknown:
            self.unknown.append(name)
            if len(self.unknown) > 8:
                self.fail()
        return name

    def fail(self):
        raise UnknownNodesError(self.unknown)

    def finish(self, names):
        """Raise for unknown names seen, or for more distinct names than allowed."""
        if self.unknown:
            self.fail()
        if len(names) > self.max_names:
            raise ValueError(f"the graph has {len(names):,} nodes; at most {self.max_names:,} are allowed")


def _graph_to_frame(G):
    names = [str(n) for n in G.nodes]
    idx = {n: k for k, n in enumerate(G.nodes)}
    A = np.zeros((len(names), len(names)))
    for u, v, data in G.edges(data=True):
        A[idx[u], idx[v]] = float(data.get("weight", 1.0))
    return pd.DataFrame(A, index=names, columns=names)


#: Largest DOT text read (bytes): holds a dense 200-node graph's ~5,000 edges; larger references
#: should come as an edge-list CSV, GraphML or JSON.
DOT_MAX_BYTES = 100_000
#: Most (tail, head) pairs a DOT file's edge statements may expand to (``{a b} -> {c d}`` is 4).
DOT_MAX_PAIRS = 200_000

# The DOT language's tokens (graphviz.org/doc/info/lang.html), in one pass of this pattern over the
# text (linear in its length, issue 42: pydot's pyparsing grammar took 13.8 s for 20 kB of "Raf;",
# 84 s for 40 kB, held a process-wide lock, and read "{a b} -> {c d}" as a node named
# "FrozenDict(...)"). Quoted strings are written as an unrolled loop (no backtracking record per
# character); HTML strings (<...>) are refused as names.
_DOT_TOKEN = re.compile(
    r'\s+|//[^\n]*|/\*.*?\*/|^\#[^\n]*|("(?:[^"\\]*(?:\\.[^"\\]*)*)")|(->|--)|([{}\[\];,=:])'
    r'|(-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?))|([A-Za-z_\u0080-\uffff][A-Za-z_0-9\u0080-\uffff]*)|(<)',
    re.DOTALL | re.MULTILINE)
_DOT_KEYWORDS = {"strict", "graph", "digraph", "node", "edge", "subgraph"}


def _dot_tokens(text):
    """``(kind, value)`` tokens: "id" (a name: quoted strings decoded by :func:`dot_unquote`), "op"
    (``->`` or ``--``), "kw" (a keyword, any case) or "p" (punctuation)."""
    pos, out = 0, []
    while pos < len(text):
        m = _DOT_TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"unexpected character {text[pos]!r} at position {pos}")
        pos = m.end()
        quoted, op, punct, number, word, html = m.groups()
        if html is not None:
            raise ValueError("HTML-like DOT IDs (<...>) are not read as node names")
        if quoted is not None:
            out.append(("id", dot_unquote(quoted)))
        elif op is not None:
            out.append(("op", op))
        elif punct is not None:
            out.append(("p", punct))
        elif number is not None:
            out.append(("id", number))
        elif word is not None:
            out.append(("kw", word.lower()) if word.lower() in _DOT_KEYWORDS else ("id", word))
    return out


class _DotParser:
    """A recursive-descent reader of the DOT statements a graph needs: nodes, edges (with
    ``weight``), subgraphs and ``{...}`` groups in edge statements; attributes are skipped."""

    def __init__(self, tokens):
        self.t, self.i, self.G, self.pairs = tokens, 0, nx.DiGraph(), 0

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else (None, None)

    def take(self, kind=None, value=None):
        tok = self.peek()
        if tok[0] is None or (kind and tok[0] != kind) or (value and tok[1] != value):
            want = value or kind or "more"
            raise ValueError(f"malformed DOT: expected {want!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def graph(self):
        if self.peek() == ("kw", "strict"):
            self.take()
        kind = self.take("kw")[1]
        if kind != "digraph":
            raise ValueError("the dot graph must be a digraph")
        if self.peek()[0] == "id":
            self.take()
        self.block()
        if self.peek()[0] is not None:
            raise ValueError(f"malformed DOT: text after the graph ({self.peek()[1]!r})")
        return self.G

    def block(self):
        """``{ stmt_list }``: the nodes it names, in order."""
        self.take("p", "{")
        names = []
        while self.peek() != ("p", "}"):
            if self.peek()[0] is None:
                raise ValueError("malformed DOT: a '{' is not closed")
            names += self.statement()
            if self.peek() in (("p", ";"), ("p", ",")):
                self.take()
        self.take("p", "}")
        return names

    def attrs(self):
        """``[a=b, ...]`` lists (any number), as a dict."""
        out = {}
        while self.peek() == ("p", "["):
            self.take()
            while self.peek() != ("p", "]"):
                key = self.take("id")[1] if self.peek()[0] == "id" else self.take("kw")[1]
                value = None
                if self.peek() == ("p", "="):
                    self.take()
                    value = self.take("id")[1]
                out[key] = value
                if self.peek() in (("p", ","), ("p", ";")):
                    self.take()
            self.take("p", "]")
        return out

    def operand(self):
        """A node ID (with an optional port) or a subgraph: the nodes it stands for."""
        if self.peek() == ("kw", "subgraph") or self.peek() == ("p", "{"):
            if self.peek() == ("kw", "subgraph"):
                self.take()
                if self.peek()[0] == "id":
                    self.take()
            return self.block()
        name = self.take("id")[1]
        while self.peek() == ("p", ":"):  # a port: not part of the node
            self.take()
            self.take("id")
        self.G.add_node(name)
        return [name]

    def statement(self):
        tok = self.peek()
        if tok[0] == "kw" and tok[1] in ("node", "edge", "graph"):
            self.take()
            self.attrs()
            return []
        if tok[0] == "id" and self.peek(1) == ("p", "="):  # a graph attribute: name = value
            self.take(), self.take(), self.take("id")
            return []
        chain = [self.operand()]
        while self.peek()[0] == "op":
            if self.take()[1] != "->":
                raise ValueError("the dot graph must be a digraph (an undirected edge '--' was found)")
            chain.append(self.operand())
        found = self.attrs()
        weight = 1.0
        if "weight" in found and found["weight"] is not None:
            try:
                weight = float(found["weight"])
            except ValueError:
                raise ValueError(f"an edge weight is not a number: {found['weight'][:40]!r}") from None
        for tails, heads in zip(chain, chain[1:]):
            self.pairs += len(tails) * len(heads)
            if self.pairs > DOT_MAX_PAIRS:
                raise ValueError(f"the DOT edge statements expand to more than {DOT_MAX_PAIRS:,} edges")
            for u in tails:
                for v in heads:
                    self.G.add_edge(u, v, weight=weight)
        return [name for group in chain for name in group]


def _read_dot(text, names_check=None):
    if len(text.encode("utf-8")) > DOT_MAX_BYTES:
        raise ValueError(f"a DOT file of more than {DOT_MAX_BYTES:,} bytes is not read; "
                         "give the graph as an edge-list .csv, GraphML or node-link JSON")
    G = _DotParser(_dot_tokens(text)).graph()
    if not G.number_of_nodes():
        raise ValueError("no graph found")
    return G


def _read_edges_csv(text, names_check=None):
    df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    missing = {"source", "target"} - set(df.columns)
    if missing:
        raise ValueError(f"edge list lacks columns {sorted(missing)}")
    src, dst = df["source"].map(csv_unescape_text), df["target"].map(csv_unescape_text)
    if names_check is not None:
        distinct = pd.unique(pd.concat([src, dst], ignore_index=True))
        for n in distinct:
            names_check.check(n)
        names_check.finish(distinct)
    weights = pd.to_numeric(df["weight"]) if "weight" in df.columns else [1.0] * len(df)
    G = nx.DiGraph()
    G.add_weighted_edges_from(zip(src, dst, weights))
    return G


def _read_adjacency_csv(text, names_check=None):
    if names_check is not None:  # the header row first: no N x N parse for unknown names
        header = pd.read_csv(io.StringIO(text), header=None, dtype=str, keep_default_na=False, nrows=1)
        first = [csv_unescape_text(c) for c in header.iloc[0, 1:]]
        for n in first:
            names_check.check(n)
        names_check.finish(first)
    raw = pd.read_csv(io.StringIO(text), header=None, dtype=str, keep_default_na=False)
    columns = [csv_unescape_text(c) for c in raw.iloc[0, 1:]]
    index = [csv_unescape_text(c) for c in raw.iloc[1:, 0]]
    if index != columns:
        raise ValueError("row names and column names differ")
    values = raw.iloc[1:, 1:].apply(pd.to_numeric).to_numpy(dtype=float)
    return pd.DataFrame(values, index=index, columns=columns)


# DAGitty model code: strings ("..." with \" as the one escape), bare identifiers, arrows,
# brackets of attributes, braces of groups; one pass of this pattern over the text (linear).
# Strings and attribute brackets are written as "unrolled loops" (a character class repeated, then
# an escape or a quoted part): an alternation repeated per character made the regex engine keep a
# backtracking record per character (issue 30: a 1.5 MB quoted attribute cost about 300 MB).
_DAGITTY_TOKEN = re.compile(
    r'\s+|//[^\n]*|"([^"\\]*(?:\\.[^"\\]*)*)"|(<->|->|<-|--)'
    r'|(\[[^\]"]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^\]"]*)*\])|([{};,=])'
    r'|([^\s{};,=\[\]"<>-][^\s{};,=\[\]"<>]*)', re.DOTALL)
_DAGITTY_GRAPH_TYPES = ("dag", "pdag", "mag", "pag", "graph")
#: Bound on the (tail, head) pairs a DAGitty model may expand to, per square of the names allowed.
_DAGITTY_PAIRS_PER_NAME2 = 4


def _dagitty_tokens(text):
    pos = 0
    out = []
    while pos < len(text):
        m = _DAGITTY_TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"unexpected character {text[pos]!r} at position {pos}")
        pos = m.end()
        if m.group(1) is not None:
            out.append(("name", m.group(1).replace('\\"', '"')))
        elif m.group(2):
            out.append(("arrow", m.group(2)))
        elif m.group(3):
            out.append(("attrs", m.group(3)))
        elif m.group(4):
            out.append(("punct", m.group(4)))
        elif m.group(5):
            out.append(("name", m.group(5)))
    return out


def _read_dagitty(text, names_check=None):
    """Parse DAGitty model code (``dag { a -> b; c <- a }``) into a networkx DiGraph.

    Supports what :func:`to_dagitty` writes and DAGitty's common forms: node statements with
    optional ``[attributes]`` (ignored except ``beta`` on edges), chains ``a -> b <- c``, groups
    ``a -> {b c}``, ``;`` or newlines between statements, ``//`` comments. Bidirected (``<->``)
    and undirected (``--``) edges are refused: the graph must be directed.
    """
    toks = _dagitty_tokens(text)
    if toks and toks[0] == ("name", toks[0][1]) and toks[0][1].lower() in _DAGITTY_GRAPH_TYPES:
        kind = toks[0][1].lower()
        if kind != "dag":
            raise ValueError(f"a {kind} is not a DAG; give a 'dag {{ ... }}' model")
        toks = toks[1:]
    if not toks or toks[0] != ("punct", "{") or toks[-1] != ("punct", "}"):
        raise ValueError("expected 'dag { ... }'")
    toks = toks[1:-1]
    G = nx.DiGraph()
    k = 0
    names_check = names_check or _Names()
    check = names_check.check
    # Every (tail, head) pair a statement expands to counts; distinct names are bounded by the
    # allowed names, so the pairs of one statement are at most their square, and all statements
    # together at most _DAGITTY_PAIRS_PER_NAME2 times that.
    max_names = names_check.max_names
    budget = [_DAGITTY_PAIRS_PER_NAME2 * max_names * max_names]

    def operand():
        nonlocal k
        if k < len(toks) and toks[k] == ("punct", "{"):
            k += 1
            group = []
            while k < len(toks) and toks[k] != ("punct", "}"):
                if toks[k][0] != "name":
                    raise ValueError(f"unexpected {toks[k][1]!r} inside {{ }}")
                group.append(check(toks[k][1]))
                k += 1
            if k >= len(toks):
                raise ValueError("unclosed '{'")
            k += 1
            return list(dict.fromkeys(group))  # {Raf Raf Raf} is one node
        if k < len(toks) and toks[k][0] == "name":
            k += 1
            return [check(toks[k - 1][1])]
        raise ValueError(f"expected a node name, got {toks[k][1]!r}" if k < len(toks) else "unexpected end")

    while k < len(toks):
        if toks[k][0] == "punct" and toks[k][1] in ";,":
            k += 1
            continue
        if toks[k] == ("punct", "=") or toks[k][0] == "name" and k + 1 < len(toks) and toks[k + 1] == ("punct", "="):
            raise ValueError("graph attributes (name = value) are not supported")
        left = operand()
        G.add_nodes_from(left)
        if k < len(toks) and toks[k][0] == "attrs":
            k += 1
        while k < len(toks) and toks[k][0] == "arrow":
            arrow = toks[k][1]
            if arrow in ("<->", "--"):
                raise ValueError(f"'{arrow}' edges are not supported: the reference must be a DAG")
            k += 1
            right = operand()
            weight = 1.0
            if k < len(toks) and toks[k][0] == "attrs":
                m = re.search(r"\bbeta\s*=\s*\"?([-+0-9.eE]+)", toks[k][1])
                weight = float(m.group(1)) if m else 1.0
                k += 1
            budget[0] -= len(left) * len(right)
            if budget[0] < 0:
                raise ValueError(f"the model expands to more than {_DAGITTY_PAIRS_PER_NAME2} x {max_names}^2 "
                                 "edges; write each edge once")
            for a in left:
                for b in right:
                    u, v = (a, b) if arrow == "->" else (b, a)
                    G.add_edge(u, v, weight=weight)
            left = right
    return G


def read_graph(data, fmt, *, nodes=None):
    """Read an exported graph back into a weighted adjacency DataFrame.

    Parameters
    ----------
    data : bytes or str
        The file content as written by :func:`export_graph`.
    fmt : {"graphml", "json", "dot", "dagitty", "edges_csv", "adjacency_csv"}
        Format of ``data``. GraphML and JSON are parsed by networkx, DOT by
        pydot (IDs decoded by :func:`dot_unquote`), DAGitty model code by a
        small tokenizer here (no Python library reads it; what :func:`to_dagitty`
        writes reads back), CSV by pandas (every field read as text, no "NA"
        guessing; names decoded by :func:`csv_unescape_text`).
    nodes : sequence of str, optional
        The only node names allowed (e.g. the data's columns). Every name is checked as it is
        read, before any work that grows with the names: DAGitty groups are matched and
        de-duplicated before they are expanded pair by pair, edge lists and adjacency headers
        before the graph or matrix is built. Without ``nodes``, at most
        ``colide_core.defaults.MAX_NODES`` distinct names are read.

    Returns
    -------
    pandas.DataFrame, shape (n_nodes, n_nodes)
        Index and columns are the node names; cell (i, j) is the weight of
        i -> j (1.0 when the file has no weights). For "edges_csv", nodes
        without edges cannot be recovered.

    Raises
    ------
    ValueError
        If the content cannot be parsed in that format, the graph is undirected or has
        parallel edges, a weight is not a number, or it has too many names;
        :class:`UnknownNodesError` (a ValueError) when it names nodes outside ``nodes``.
    """
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else str(data)
    names = _Names(nodes)
    readers = {
        "graphml": lambda t, _: nx.parse_graphml(t),
        "json": lambda t, _: nx.node_link_graph(json.loads(t), edges="edges"),
        "dot": _read_dot,
        "dagitty": _read_dagitty,
        "edges_csv": _read_edges_csv,
    }
    try:
        if fmt == "adjacency_csv":
            return _read_adjacency_csv(text, names)
        if fmt not in readers:
            raise ValueError(f"cannot read format {fmt!r}; choose graphml, json, dot, dagitty, "
                             f"edges_csv or adjacency_csv")
        G = readers[fmt](text, names)
        if not G.is_directed() or G.is_multigraph():
            raise ValueError(f"the {fmt} graph must be a simple directed graph")
        for n in G.nodes:  # GraphML and JSON: checked once parsed, before the (n, n) matrix
            names.check(str(n))
        names.finish(G.nodes)
        return _graph_to_frame(G)
    except ValueError:
        raise
    except Exception as exc:  # parser-specific errors (XML, JSON, KeyError, a list as weight) -> one type
        raise ValueError(f"could not read the {fmt} graph: {' '.join(str(exc).split())[:200]}") from None
