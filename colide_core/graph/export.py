"""Exports of a learned graph: GraphML, DOT, node-link JSON, DAGitty, CSV, PNG/SVG.

Every exporter takes a weighted adjacency ``W`` of shape ``(n_nodes, n_nodes)``
where ``W[i, j] != 0`` means the edge i -> j with weight ``W[i, j]``, plus
optional node names (taken from ``W``'s columns when it is a DataFrame).

Libraries (no hand-written serialisers for standard formats):

* GraphML and node-link JSON: :mod:`networkx` (``generate_graphml``,
  ``node_link_data``), read back with ``parse_graphml``/``node_link_graph``;
* DOT: the ``pydot`` package (pinned in requirements.txt; no Graphviz binary is
  needed to *write* DOT), with every node ID quoted here (:func:`dot_id`), because
  pydot leaves IDs that *look* quoted, HTML-like (``<...>``) or port-like
  (``a:b``) unquoted, which lets a name inject nodes and edges;
* CSV: :mod:`pandas`, always through :func:`to_csv_safe` (spreadsheet formula
  neutralisation, see below);
* pictures (PNG/SVG): drawn by the render layer, :func:`colide_core.render.picture.to_image`
  (matplotlib on a Figure rendered by the Agg/SVG backends, without :mod:`matplotlib.pyplot`: no global
  figure state, safe in threads and headless servers);
* DAGitty: the model string is a tiny text format (``dag { a -> b }``,
  https://www.dagitty.net/manual-3.x.pdf) with no Python writer, so it is built
  here, quoting names that are not plain identifiers.

:data:`EXPORT_FORMATS` lists every format with its file extension and MIME
type; :func:`export_graph` dispatches on it and always returns ``bytes``, which
is what a download button needs.

Node names are hostile input (they come from a user's CSV header). Every
exporter first applies the library's one name policy,
:func:`colide_core._validation.check_node_names` (NFC; no control, zero-width or
other invisible characters; no trailing backslash; unique), so no writer ever
sees a character its format cannot carry, and then escapes each name exactly
once for its format:

==============  ================================================================
format          how a name is written
==============  ================================================================
GraphML         XML attribute, escaped by the XML writer (networkx/ElementTree)
JSON            JSON string (:func:`json.dumps`)
DOT             always a double-quoted ID: ``\\`` -> ``\\\\``, ``"`` -> ``\\"``
                (:func:`dot_id`; :func:`dot_unquote` is the inverse)
DAGitty         bare when it matches ``[A-Za-z_][A-Za-z0-9_]*``, else
                double-quoted with ``"`` -> ``\\"`` (DAGitty strings have no
                other escape, so a backslash is written as is)
CSV             :func:`csv_escape_text`: a text cell that starts with ``=``,
                ``+``, ``-``, ``@``, tab, carriage return or ``'`` gets one
                ``'`` in front, unless it is a plain decimal number such as
                ``-0.5`` (OWASP "CSV Injection"); numbers are never changed.
                :func:`csv_unescape_text` (used by :func:`read_graph`) removes it.
==============  ================================================================

Every text format reads back with exactly the same node names and edges
(:func:`read_graph`; property test in ``tests/test_security_exports.py``).
"""
from __future__ import annotations

import csv
import io
import json
import re

import networkx as nx
import numpy as np
import pandas as pd

from colide_core import defaults
from colide_core.exceptions import UnknownNodesError
from colide_core._validation import NodeNameError, check_named_adjacency, check_node_names

__all__ = [
    "EXPORT_FORMATS",
    "export_graph",
    "to_networkx",
    "to_graphml",
    "to_dot",
    "to_node_link_json",
    "to_dagitty",
    "edge_list",
    "to_edge_list_csv",
    "to_adjacency_csv",
    "read_graph",
    "UnknownNodesError",
    "DOT_MAX_BYTES",
    "dot_id",
    "dot_unquote",
    "CSV_FORMULA_PREFIXES",
    "csv_escape_text",
    "csv_unescape_text",
    "csv_safe_frame",
    "to_csv_safe",
    "html_escape",
]

#: format name -> (file extension, MIME type) (:data:`colide_core.defaults.EXPORT_FORMATS`)
EXPORT_FORMATS = defaults.EXPORT_FORMATS


def to_networkx(W, node_names=None):
    """Build a :class:`networkx.DiGraph` from a weighted adjacency.

    Parameters
    ----------
    W : array-like or pandas.DataFrame, shape (n_nodes, n_nodes)
        ``W[i, j] != 0`` means the edge i -> j; the value becomes the edge
        attribute ``weight`` (float). A DataFrame supplies node names.
    node_names : sequence of str, optional
        One unique name per node; default the DataFrame columns or
        ``X0, X1, ...``. Put through
        :func:`colide_core._validation.check_node_names` (NFC-normalised;
        control and invisible characters, empty names and a trailing
        backslash refused).

    Returns
    -------
    networkx.DiGraph
        Nodes in the order of ``W``'s rows (isolated nodes included), edges in
        row-major order.

    Raises
    ------
    ValueError
        If ``W`` is not a finite square matrix or the names do not fit or break
        the name policy.
    """
    A, names = check_named_adjacency(W, node_names)
    G = nx.DiGraph()
    G.add_nodes_from(names)
    rows, cols = np.nonzero(A)
    G.add_edges_from((names[i], names[j], {"weight": float(A[i, j])}) for i, j in zip(rows, cols))
    return G


def to_graphml(W, node_names=None):
    """GraphML document of the graph (networkx ``generate_graphml``).

    Parameters
    ----------
    W, node_names
        As in :func:`to_networkx`.

    Returns
    -------
    str
        UTF-8 XML text; each edge carries a ``weight`` (double) attribute.
    """
    return "\n".join(nx.generate_graphml(to_networkx(W, node_names))) + "\n"


_DOT_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"})
_DOT_UNESCAPES = {"\\": "\\", '"': '"', "n": "\n", "r": "\r"}
_DOT_ESCAPE_PAIR = re.compile(r"\\(.)", re.DOTALL)


def dot_id(name):
    """A node name as a DOT ID: always double-quoted, with ``\\`` and ``"`` backslash-escaped.

    Quoting every ID (rather than only those that "need" it) is what makes the
    DOT text safe: an unquoted name such as ``a:b`` is read as node ``a`` with
    port ``b``, ``<b>x</b>`` as an HTML label and ``"a" -> "b"`` as an edge.
    Inside a quoted ID a backslash escapes the next character, so ``\\`` and
    ``"`` are escaped; a newline or carriage return (which the name policy
    refuses, kept here for completeness) becomes ``\\n`` / ``\\r``.

    Parameters
    ----------
    name : str

    Returns
    -------
    str
        ``'"' + escaped + '"'``; :func:`dot_unquote` is its inverse.

    Notes
    -----
    DOT language, "ID": https://graphviz.org/doc/info/lang.html. Graphviz keeps
    ``\\\\`` as two characters in an ID but shows it as one backslash in the
    default label (``\\N``); pydot's parser returns the quoted token as is,
    which :func:`dot_unquote` decodes.
    """
    return '"' + str(name).translate(_DOT_ESCAPES) + '"'


def dot_unquote(token):
    """Inverse of :func:`dot_id`: the name a DOT ID token stands for.

    Parameters
    ----------
    token : str
        An ID as pydot's parser returns it: a double-quoted string (quotes
        included, escapes not decoded) or a bare ID.

    Returns
    -------
    str
        For a quoted token, the text between the quotes with ``\\\\``, ``\\"``,
        ``\\n`` and ``\\r`` decoded (other backslash pairs are kept as they
        are); a bare token unchanged.
    """
    token = str(token)
    if len(token) >= 2 and token[0] == '"' and token[-1] == '"':
        inner = token[1:-1]
        return _DOT_ESCAPE_PAIR.sub(lambda m: _DOT_UNESCAPES.get(m.group(1), m.group(0)), inner)
    return token


def to_dot(W, node_names=None, *, decimals=3):
    """Graphviz DOT text (package pydot), every node ID quoted by :func:`dot_id`.

    Parameters
    ----------
    W, node_names
        As in :func:`to_networkx`.
    decimals : int, default 3
        Edge labels show the weight rounded to this many decimals; the full
        weight is kept in the ``weight`` attribute.

    Returns
    -------
    str
        A ``strict digraph``: one statement per node (isolated nodes
        included), then one ``"a" -> "b" [weight=..., label=...]`` per edge in
        row-major order. :func:`read_graph` with ``fmt="dot"`` reads it back.
    """
    import pydot

    A, names = check_named_adjacency(W, node_names)
    ids = [dot_id(n) for n in names]
    graph = pydot.Dot(graph_type="digraph", strict=True)
    for q in ids:
        graph.add_node(pydot.Node(q))
    for i, j in zip(*np.nonzero(A)):
        w = float(A[i, j])
        graph.add_edge(pydot.Edge(ids[i], ids[j], weight=repr(w), label=dot_id(f"{w:.{decimals}f}")))
    return graph.to_string()


def to_node_link_json(W, node_names=None):
    """Node-link JSON (networkx ``node_link_data``, the D3 layout).

    Parameters
    ----------
    W, node_names
        As in :func:`to_networkx`.

    Returns
    -------
    str
        JSON with keys ``directed``, ``multigraph``, ``graph``, ``nodes``
        (``{"id": name}``) and ``edges`` (``{"source", "target", "weight"}``).
    """
    data = nx.node_link_data(to_networkx(W, node_names), edges="edges")
    return json.dumps(data, indent=2)


# Names DAGitty reads as a bare word (its grammar's BAREWORD is [0-9a-zA-Z_-]+; this is the
# stricter identifier subset, so "a.b", "-x" or "1a" are quoted).
_DAGITTY_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _dagitty_name(name):
    """A name in DAGitty model syntax: bare, or double-quoted with ``"`` escaped as ``\\"``.

    DAGitty's string grammar (jslib/parser/GraphDotParser.pegjs in the DAGitty sources) knows
    one escape, ``\\"``; any other backslash stands for itself, so backslashes are written as
    they are (the name policy refuses a trailing backslash, which would escape the closing quote).
    """
    if _DAGITTY_PLAIN.match(name):
        return name
    return '"' + name.replace('"', '\\"') + '"'


def to_dagitty(W, node_names=None, *, weights=False, decimals=4):
    """DAGitty model string, e.g. ``dag {\\n  a\\n  b\\n  a -> b\\n}``.

    Paste it into https://www.dagitty.net or ``dagitty::dagitty()`` in R.

    Parameters
    ----------
    W, node_names
        As in :func:`to_networkx`.
    weights : bool, default False
        Add each weight as the edge attribute ``[beta=...]``, which DAGitty's
        ``simulateSEM`` reads as the path coefficient.
    decimals : int, default 4
        Rounding of the ``beta`` values.

    Returns
    -------
    str
        Every node is declared first (so isolated nodes survive), then one
        ``a -> b`` line per edge. Names that are not plain identifiers
        (``[A-Za-z_][A-Za-z0-9_]*``) are double-quoted, ``"`` written as
        ``\\"``.

    Notes
    -----
    Format: DAGitty manual, "model code" (dagitty.net/manual-3.x.pdf).
    """
    A, names = check_named_adjacency(W, node_names)
    q = [_dagitty_name(n) for n in names]
    lines = ["dag {"]
    lines += [f"  {n}" for n in q]
    for i, j in zip(*np.nonzero(A)):
        attr = f" [beta={A[i, j]:.{decimals}f}]" if weights else ""
        lines.append(f"  {q[i]} -> {q[j]}{attr}")
    lines.append("}")
    return "\n".join(lines) + "\n"


#: First characters that make a spreadsheet read a CSV cell as a formula (OWASP, "CSV Injection":
#: https://owasp.org/www-community/attacks/CSV_Injection): equals, plus, minus, at, tab, carriage
#: return.
CSV_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
# A plain decimal number ("-0.5", "+3", "-1e-3"): read as a number, never as a formula.
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")


def html_escape(text) -> str:
    """Return ``text`` (any object, converted with ``str``) escaped for HTML text or attributes.

    The one HTML escape of the project (the dashboard's ``dashboard.text.html_escape``, the
    graph legend and the HTML report use it); apply it once, where a user string meets HTML.

    Parameters
    ----------
    text : object
        A user-supplied name.

    Returns
    -------
    str
        ``&``, ``<``, ``>``, ``'`` and ``"`` replaced by entities (:func:`markupsafe.escape`).
    """
    import markupsafe

    return str(markupsafe.escape(str(text)))


def csv_escape_text(text):
    """Neutralise one CSV text cell against spreadsheet formula injection (OWASP).

    Parameters
    ----------
    text : str
        A text cell, header or row label.

    Returns
    -------
    str
        ``"'" + text`` when ``text`` starts with one of :data:`CSV_FORMULA_PREFIXES` or with
        ``'`` itself, unless it is a plain decimal number such as ``-0.5`` or ``+3``; else
        ``text`` unchanged. The leading ``'`` makes Excel, LibreOffice and Google Sheets show the
        cell as text. Escaping a leading ``'`` too makes the rule reversible:
        :func:`csv_unescape_text` removes exactly one leading ``'``.
    """
    text = str(text)
    if text[:1] in CSV_FORMULA_PREFIXES or text[:1] == "'":
        if not _PLAIN_NUMBER.match(text):
            return "'" + text
    return text


def csv_unescape_text(text):
    """Inverse of :func:`csv_escape_text`: drop one leading ``'``.

    Parameters
    ----------
    text : str
        A text cell as written by :func:`to_csv_safe`.

    Returns
    -------
    str
    """
    text = str(text)
    return text[1:] if text.startswith("'") else text


def _escape_labels(index):
    if isinstance(index, pd.MultiIndex):
        return index.set_levels([_escape_labels(level) for level in index.levels])
    return index.map(lambda v: csv_escape_text(v) if isinstance(v, str) else v)


def csv_safe_frame(df):
    """A copy of ``df`` with every text cell, column label and row label put through
    :func:`csv_escape_text`; numbers, booleans, dates and missing values are left alone.

    Parameters
    ----------
    df : pandas.DataFrame
        Not modified.

    Returns
    -------
    pandas.DataFrame
    """
    out = df.copy()
    for k in range(out.shape[1]):
        col = out.iloc[:, k]
        if pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_datetime64_any_dtype(col.dtype):
            continue
        if isinstance(col.dtype, pd.CategoricalDtype):
            col = col.astype(object)
        out.isetitem(k, col.map(lambda v: csv_escape_text(v) if isinstance(v, str) else v))
    out.columns = _escape_labels(out.columns)
    out.index = _escape_labels(out.index)
    if out.index.name is not None and isinstance(out.index.name, str):
        out.index.name = csv_escape_text(out.index.name)
    return out


def to_csv_safe(df, path_or_buf=None, **kwargs):
    """``df.to_csv(...)`` for every CSV that the library, the CLI and the dashboard write.

    Text cells, column labels and row labels are neutralised against spreadsheet formula
    injection by :func:`csv_escape_text` (a cell starting with ``=``, ``+``, ``-``, ``@``, tab,
    carriage return or ``'`` gets one leading ``'``; plain numbers, text or not, are never
    changed). When some text holds a carriage return, every text field is quoted
    (``csv.QUOTE_NONNUMERIC``): the csv module would otherwise leave a lone ``\\r`` unquoted,
    and readers take it for a line break.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; not modified.
    path_or_buf : str, path or file-like, optional
        As in :meth:`pandas.DataFrame.to_csv`; None returns the text.
    **kwargs
        Passed to :meth:`pandas.DataFrame.to_csv` (``index=False`` ...).

    Returns
    -------
    str or None
        The CSV text when ``path_or_buf`` is None.
    """
    safe = csv_safe_frame(df)
    if "quoting" not in kwargs and _has_carriage_return(safe):
        kwargs["quoting"] = csv.QUOTE_NONNUMERIC
    return safe.to_csv(path_or_buf, **kwargs)


def _has_carriage_return(df):
    labels = [*df.columns.to_flat_index(), *df.index.to_flat_index(), df.index.name]
    if any(isinstance(v, str) and "\r" in v for v in labels):
        return True
    for k in range(df.shape[1]):
        col = df.iloc[:, k]
        if col.dtype == object or pd.api.types.is_string_dtype(col.dtype):
            if any(isinstance(v, str) and "\r" in v for v in col):
                return True
    return False


def edge_list(W, node_names=None):
    """The edges of a weighted adjacency as a table (pandas).

    Parameters
    ----------
    W, node_names
        As in :func:`to_networkx`.

    Returns
    -------
    pandas.DataFrame
        Columns ``source``, ``target`` (node names) and ``weight`` (float), one row per nonzero
        ``W[i, j]`` (the edge i -> j), in row-major order; no rows when there are no edges.

    Raises
    ------
    ValueError
        If ``W`` is not a finite square matrix or the names do not fit.
    """
    A, names = check_named_adjacency(W, node_names)
    rows, cols = np.nonzero(A)
    return pd.DataFrame({
        "source": [names[i] for i in rows],
        "target": [names[j] for j in cols],
        "weight": A[rows, cols],
    })


def to_edge_list_csv(W, node_names=None):
    """CSV edge list with columns ``source,target,weight``: :func:`edge_list` as text.

    Parameters
    ----------
    W, node_names
        As in :func:`to_networkx`.

    Returns
    -------
    str
        One row per nonzero ``W[i, j]`` (source i, target j), row-major order;
        a header only when there are no edges. Weights are written with full
        float precision. Names are written by :func:`to_csv_safe` (a name
        starting with ``=``, ``+``, ``-``, ``@`` or ``'`` gets one leading
        ``'``, which :func:`read_graph` removes).
    """
    return to_csv_safe(edge_list(W, node_names), index=False)


def to_adjacency_csv(W, node_names=None):
    """CSV of the full ``(n_nodes, n_nodes)`` weighted adjacency (pandas).

    Parameters
    ----------
    W, node_names
        As in :func:`to_networkx`.

    Returns
    -------
    str
        Header row of node names, then one row per source node whose first
        field is its name: cell (i, j) is ``W[i, j]``, the weight of i -> j.
        Names are written by :func:`to_csv_safe`, as in
        :func:`to_edge_list_csv`.
    """
    A, names = check_named_adjacency(W, node_names)
    return to_csv_safe(pd.DataFrame(A, index=pd.Index(names, name="source"), columns=names))


def export_graph(W, node_names=None, fmt="graphml", **kwargs):
    """Export the graph in one of :data:`EXPORT_FORMATS`, as bytes.

    Parameters
    ----------
    W : array-like or pandas.DataFrame, shape (n_nodes, n_nodes)
        ``W[i, j] != 0`` means i -> j. Pass the thresholded DAG
        (``model.adjacency_``) for a clean picture; raw ``W_`` is exported as
        is (every nonzero weight is an edge).
    node_names : sequence of str, optional
    fmt : str, default "graphml"
        A key of :data:`EXPORT_FORMATS`.
    **kwargs
        Passed to the writer (e.g. ``weights=True`` for "dagitty",
        ``layout="spring"`` for "png"/"svg").

    Returns
    -------
    bytes
        UTF-8 text for text formats, the encoded image for "png"/"svg".

    Raises
    ------
    ValueError
        For an unknown format or bad ``W``/names.
    """
    writers = {
        "graphml": to_graphml,
        "dot": to_dot,
        "json": to_node_link_json,
        "dagitty": to_dagitty,
        "edges_csv": to_edge_list_csv,
        "adjacency_csv": to_adjacency_csv,
    }
    if fmt in ("png", "svg"):  # pictures are drawn by the render layer (matplotlib)
        from colide_core.render.picture import to_image

        return to_image(W, node_names, fmt=fmt, **kwargs)
    if fmt not in writers:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {sorted(EXPORT_FORMATS)}.")
    return writers[fmt](W, node_names, **kwargs).encode("utf-8")


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
