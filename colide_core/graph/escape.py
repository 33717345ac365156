"""Escaping of node names and text, once per format: DOT IDs, DAGitty names, CSV cells, HTML.

Node names are hostile input (a user's CSV header). After the library's one name policy
(:func:`colide_core._validation.check_node_names`), each name is escaped exactly once where it
meets a format, here: :func:`dot_id` / :func:`dot_unquote` (DOT double-quoted IDs),
``_dagitty_name`` (DAGitty's one escape, ``\\"``), :func:`csv_escape_text` /
:func:`csv_unescape_text` / :func:`to_csv_safe` (spreadsheet formula neutralisation, OWASP "CSV
Injection"), and :func:`html_escape` (markupsafe, for text that plotly reads as HTML). The table of
how each format writes a name is in :mod:`colide_core.graph.export`, which re-exports these names
(its public import path); the writers are there, the readers in :mod:`colide_core.graph.readers`.
"""
from __future__ import annotations

import csv
import re

import pandas as pd

__all__ = ["dot_id", "dot_unquote", "CSV_FORMULA_PREFIXES", "csv_escape_text", "csv_unescape_text", "csv_safe_frame",
           "to_csv_safe", "html_escape"]


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


#: First characters that make a spreadsheet read a CSV cell as a formula (OWASP, "CSV Injection":
#: https://owasp.org/www-community/attacks/CSV_Injection): equals, plus, minus, at, tab, carriage
#: return.
CSV_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
# A plain decimal number ("-0.5", "+3", "-1e-3"): read as a number, never as a formula.
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")


def html_escape(text) -> str:
    """Return ``text`` (any object, converted with ``str``) escaped for HTML text or attributes.

    The one HTML escape of the project (the dashboard's ``dashboard.infra.text.html_escape``, the
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
