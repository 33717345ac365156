"""One validator for the numeric arrays the library takes: data matrices and square matrices.

* :func:`check_X` checks a data matrix ``X`` of shape ``(n_samples, n_nodes)`` (array-like or
  :class:`pandas.DataFrame`) and returns a float64 copy with its column names;
  :func:`check_data` is the solver's use of it (at least 2 nodes).
* :func:`check_square_matrix` checks an ``(n_nodes, n_nodes)`` matrix (a weighted adjacency ``W``
  with ``W[i, j] != 0`` meaning i -> j, a mask, a covariance); :func:`check_adjacency` also checks
  its size against a known ``n_nodes``.
* :func:`check_node_names` is the one name policy for node (column) names, shared with
  :func:`colide_core.data.io.check_column_names` and the exporters of :mod:`colide_core.graph.export`.
* :func:`data_covariance` is the 1/n covariance of the centred data that every CoLiDE score uses
  (paper Section 3), computed by :func:`centred_covariance`.

The conversion is scikit-learn's :func:`sklearn.utils.check_array` (float64, no sparse input,
complex values rejected rather than silently cast to their real part). The shape and finiteness
checks are written here so that every message names the input and its expected shape in the
library's terms (``(n_samples, n_nodes)``). Every problem with the values raises ``ValueError``.

The user-facing validation of uploaded tables, with error kinds and fixes for a UI, is
:func:`colide_core.data.io.validate_data`; it shares :func:`centred_covariance` with this module.
"""
from __future__ import annotations

import unicodedata

import numpy as np
import pandas as pd

__all__ = [
    "node_index",
    "NodeNameError",
    "check_node_names",
    "check_X",
    "check_data",
    "check_square_matrix",
    "check_adjacency",
    "centred_covariance",
    "data_covariance",
    "check_named_adjacency",
]

# Longest exception text quoted in a "must be numeric" message.
_MAX_REASON_CHARS = 200
from colide_core.exceptions import NodeNameError


# Unicode general categories refused in a node name: control characters (Cc: NUL, tab, newline,
# carriage return, DEL, C1 controls), format characters (Cf: zero-width space and joiners, byte
# order mark, bidirectional overrides, soft hyphen), lone surrogates (Cs) and the line and
# paragraph separators (Zl, Zp). None of them is visible, several break XML, CSV, DOT or JavaScript.
_REFUSED_CATEGORIES = {
    "Cc": "control character",
    "Cf": "invisible format character (zero-width, byte order mark, direction override)",
    "Cs": "lone surrogate",
    "Zl": "line separator",
    "Zp": "paragraph separator",
}
#: Longest node (column) name accepted, in characters.
MAX_NAME_CHARS = 256

# Longest name shown verbatim in a name-policy message.
_MAX_SHOWN_NAME = 60





def _shown(name) -> str:
    s = str(name)
    if len(s) > _MAX_SHOWN_NAME:
        s = s[: _MAX_SHOWN_NAME - 1] + "…"
    return repr(s)  # repr escapes control and invisible characters: \x00, \u200b


def _refused_char(name: str):
    """The first refused character of ``name`` and why, or None."""
    for ch in name:
        cp = ord(ch)
        if 0xFDD0 <= cp <= 0xFDEF or (cp & 0xFFFE) == 0xFFFE:
            return ch, "Unicode noncharacter"
        why = _REFUSED_CATEGORIES.get(unicodedata.category(ch))
        if why:
            return ch, why
    return None


def check_node_names(names, *, what="column") -> list:
    """Apply the node-name policy and return the names NFC-normalised.

    Node names come from a user's file header, so they are hostile input: they end up in HTML,
    plotly text, DOT, GraphML (XML), CSV and DAGitty exports. The policy, applied by the loader
    (:func:`colide_core.data.io.check_column_names`), by :func:`check_X` for DataFrame input and by
    every exporter in :mod:`colide_core.graph.export`, is:

    * every name is normalised to Unicode NFC (``"e" + U+0301`` becomes ``"é"``);
    * a name must not be empty, and must not end with a backslash (DOT and DAGitty strings
      cannot end with one);
    * a name must not contain control characters (Unicode category Cc: NUL, tab, newline,
      carriage return, DEL ...), invisible format characters (Cf: zero-width space and joiners,
      byte order mark, bidirectional overrides, soft hyphen), lone surrogates (Cs), line or
      paragraph separators (Zl, Zp) or Unicode noncharacters (U+FFFE, U+FFFF, U+FDD0..U+FDEF, ...);
    * a name has at most :data:`MAX_NAME_CHARS` (256) characters (50 names of 130,000 characters
      made every live λ step draw and send 20-47 MB);
    * two names that are equal after NFC normalisation are duplicates.

    Every other character is kept as it is (quotes, ``<``, ``&``, ``:``, ``->``, ``=`` at the
    start, spaces, any script): each output format escapes it where it meets its syntax.

    Parameters
    ----------
    names : iterable of str
        The names, in column order (converted with ``str``).
    what : str, default="column"
        How the messages call a name's owner ("column", "node").

    Returns
    -------
    list of str
        The NFC-normalised names, same order and length.

    Raises
    ------
    NodeNameError
        (a ``ValueError``) with ``kind="bad_column_name"`` for the first name that is empty, ends
        with a backslash or holds a refused character (the message shows the name with
        :func:`repr`, so invisible characters are visible, and the code point), or
        ``kind="duplicate_column_name"`` when names collide (exactly, or after normalisation).
    """
    raw = [str(n) for n in names]
    out = []
    for k, name in enumerate(raw):
        where = f"{what.capitalize()} name {_shown(name)} (position {k + 1})"
        if name == "":
            raise NodeNameError(f"{what.capitalize()} at position {k + 1} has an empty name.",
                                "bad_column_name", [name])
        bad = _refused_char(name)
        if bad is not None:
            ch, why = bad
            raise NodeNameError(
                f"{where} contains a {why}, U+{ord(ch):04X}. Remove control, zero-width and other "
                f"invisible characters from the names.", "bad_column_name", [name])
        if len(name) > MAX_NAME_CHARS:
            raise NodeNameError(f"{what.capitalize()} name {_shown(name)} (position {k + 1}) has {len(name):,} "
                                f"characters; at most {MAX_NAME_CHARS} are allowed. Shorten the names.",
                                "bad_column_name", [name[:MAX_NAME_CHARS]])
        if name.endswith("\\"):
            raise NodeNameError(f"{where} ends with a backslash, which DOT and DAGitty exports "
                                f"cannot write. Remove or replace the trailing backslash.",
                                "bad_column_name", [name])
        out.append(unicodedata.normalize("NFC", name))
    seen: dict = {}
    for k, name in enumerate(out):
        seen.setdefault(name, []).append(k)
    clashes = [ks for ks in seen.values() if len(ks) > 1]
    if clashes:
        dups = [out[ks[0]] for ks in clashes]
        differ = [ks for ks in clashes if len({raw[k] for k in ks}) > 1]
        note = ""
        if differ:
            ks = differ[0]
            note = (f" ({' and '.join(_shown(raw[k]) for k in ks[:2])} differ only by Unicode "
                    f"normalisation: they are the same name in NFC)")
        listed = ", ".join(_shown(n) for n in dups[:8]) + (f" and {len(dups) - 8} more" if len(dups) > 8 else "")
        raise NodeNameError(f"Duplicate {what} names: {listed}{note}. Every {what} needs a unique name.",
                            "duplicate_column_name", dups)
    return out


def _plural(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


def _reason(exc) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= _MAX_REASON_CHARS else text[: _MAX_REASON_CHARS - 1] + "…"


def _as_float_array(A, name, *, copy):
    """float64 ndarray from ``A`` with scikit-learn's ``check_array``; no shape or finiteness check.

    Raises ``ValueError`` naming ``name`` when ``A`` holds complex numbers or anything that is not
    a real number (text, arbitrary objects, a sparse matrix, ragged lists).
    """
    from sklearn.utils import check_array  # lazy: keeps ``import colide_core`` fast

    if isinstance(A, np.matrix):  # check_array refuses np.matrix; its values are a plain array
        A = np.asarray(A)
    if getattr(getattr(A, "dtype", None), "kind", None) == "c":
        raise ValueError(f"{name} holds complex numbers; only real numbers are accepted.")
    try:
        return check_array(
            A,
            accept_sparse=False,
            dtype=np.float64,
            copy=copy,
            force_writeable=copy,
            ensure_all_finite=False,
            ensure_2d=False,
            allow_nd=True,
            ensure_min_samples=0,
            ensure_min_features=0,
            input_name=name,
        )
    except (TypeError, ValueError) as exc:
        if str(exc).startswith("Complex data not supported"):
            raise ValueError(f"{name} holds complex numbers; only real numbers are accepted.") from None
        raise ValueError(f"{name} must be numeric: {_reason(exc)}") from None


def _check_frame_columns(df: pd.DataFrame, name: str) -> list:
    """Column names of a DataFrame as str (NFC, :func:`check_node_names`), after checking they are
    unique and the columns real numbers."""
    names = [str(c) for c in df.columns]
    seen: dict = {}
    for c in names:
        seen[c] = seen.get(c, 0) + 1
    dups = [c for c, k in seen.items() if k > 1]
    if dups:
        raise ValueError(f"{name} has duplicate column names: {', '.join(dups)}.")
    try:
        names = check_node_names(names)
    except NodeNameError as exc:
        raise ValueError(f"{name}: {exc}") from None
    dtypes = list(df.dtypes)
    non_numeric = [c for c, dt in zip(names, dtypes) if not pd.api.types.is_numeric_dtype(dt)]
    if non_numeric:
        raise ValueError(f"{name} has non-numeric columns: {', '.join(non_numeric)}.")
    complex_cols = [c for c, dt in zip(names, dtypes) if pd.api.types.is_complex_dtype(dt)]
    if complex_cols:
        raise ValueError(
            f"{name} has complex-valued columns: {', '.join(complex_cols)}; only real numbers are "
            f"accepted."
        )
    return names


def _check_finite(A, name, hint=""):
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or Inf" + (f"; {hint}." if hint else "."))


def check_X(X, *, min_samples=2, min_features=2, name="X", ensure_finite=True, copy=True):
    """Validate a data matrix and return it as a float64 array with its column names.

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
        Real numbers, one row per sample and one column per variable (node). Never modified.
    min_samples : int, default=2
        Fewest rows accepted (0 accepts an empty block).
    min_features : int, default=2
        Fewest columns (nodes) accepted.
    name : str, default="X"
        How the messages call the input.
    ensure_finite : bool, default=True
        Reject NaN and +/-Inf.
    copy : bool, default=True
        Always return a new, writeable array (else the input's memory may be returned when it is
        already a float64 ndarray; it must then not be modified).

    Returns
    -------
    values : ndarray of shape (n_samples, n_nodes), dtype float64
        The data; the memory layout of an ndarray input is kept (a DataFrame gives the layout
        pandas stores).
    names : list of str or None
        The column names (as str, NFC-normalised by :func:`check_node_names`) when ``X`` is a
        DataFrame, else None.

    Raises
    ------
    ValueError
        If a DataFrame has duplicate column names, names refused by :func:`check_node_names`
        (control or invisible characters, empty, trailing backslash) or non-numeric or complex
        columns; if ``X``
        holds complex numbers or values that are not numbers (text, objects, a sparse matrix); if
        ``X`` is not 2-D, has fewer than ``min_samples`` rows or ``min_features`` columns; or
        (with ``ensure_finite``) if it holds NaN or Inf.

    Notes
    -----
    Conversion by :func:`sklearn.utils.check_array` (``dtype=float64``, ``accept_sparse=False``),
    which refuses complex input instead of discarding the imaginary part.
    """
    names = _check_frame_columns(X, name) if isinstance(X, pd.DataFrame) else None
    values = _as_float_array(X, name, copy=copy)
    if values.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_nodes), got {values.ndim}-D.")
    n, d = values.shape
    if n < min_samples or d < min_features:
        raise ValueError(
            f"{name} needs at least {_plural(min_samples, 'row')} and "
            f"{_plural(min_features, 'column')}, got shape {values.shape}."
        )
    if ensure_finite:
        _check_finite(values, name)
    return values, names


def check_data(X, *, min_rows=2):
    """Validate the data of a fit and return a float copy with its column names.

    The solver's, the bootstrap's and the lambda path's use of :func:`check_X`: at least
    ``min_rows`` samples and 2 nodes, all values finite.

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
        Numeric, finite observations. Never modified.
    min_rows : int, default=2
        Smallest acceptable ``n_samples``.

    Returns
    -------
    values : ndarray of shape (n_samples, n_nodes)
        A new float64 array.
    names : list of str or None
        Column names when ``X`` is a DataFrame.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D real numbers (complex, text and DataFrames with non-numeric or
        duplicate columns are refused), has fewer than ``min_rows`` rows or 2 columns, or
        contains NaN or Inf.
    """
    return check_X(X, min_samples=min_rows, min_features=2)


def check_square_matrix(A, name="W", *, what="matrix", hint="", copy=False):
    """Validate an ``(n_nodes, n_nodes)`` matrix of finite real numbers.

    Parameters
    ----------
    A : array-like of shape (n_nodes, n_nodes)
        E.g. a weighted adjacency with ``A[i, j] != 0`` meaning i -> j, or a boolean mask.
        Never modified.
    name : str, default="W"
        How the messages call the input.
    what : str, default="matrix"
        What the input is, for the shape message (e.g. ``"adjacency matrix"``).
    hint : str, default=""
        Advice appended to the NaN/Inf message.
    copy : bool, default=False
        Always return a new, writeable array.

    Returns
    -------
    values : ndarray of shape (n_nodes, n_nodes), dtype float64
        Booleans become 0.0 / 1.0. Without ``copy`` a float64 ndarray input may be returned as is.

    Raises
    ------
    ValueError
        If ``A`` holds complex or non-numeric values, is not square 2-D, or contains NaN or Inf.
    """
    values = _as_float_array(A, name, copy=copy)
    if values.ndim != 2 or values.shape[0] != values.shape[1]:
        raise ValueError(f"{name} must be a square (n_nodes, n_nodes) {what}, got shape {values.shape}.")
    _check_finite(values, name, hint)
    return values


def check_adjacency(B, d, name="B", *, what="matrix", hint="", copy=False):
    """Validate a square matrix over ``d`` nodes (:func:`check_square_matrix` plus its size).

    Parameters
    ----------
    B : array-like of shape (d, d)
        ``B[i, j] != 0`` means i -> j. Never modified.
    d : int
        The number of nodes ``B`` must have.
    name, what, hint, copy
        As in :func:`check_square_matrix`.

    Returns
    -------
    values : ndarray of shape (d, d), dtype float64

    Raises
    ------
    ValueError
        As :func:`check_square_matrix`, and if ``B`` does not have shape ``(d, d)``.
    """
    values = check_square_matrix(B, name, what=what, hint=hint, copy=copy)
    if values.shape != (d, d):
        raise ValueError(f"{name} must have shape {(d, d)}, got {values.shape}.")
    return values


def centred_covariance(values):
    """Column means and 1/n covariance of the centred data, overflow left as inf / nan.

    Parameters
    ----------
    values : ndarray of shape (n_samples, n_nodes), dtype float64
        Not modified. ``n_samples`` must be >= 1.

    Returns
    -------
    mean : ndarray of shape (n_nodes,)
    cov : ndarray of shape (n_nodes, n_nodes)
        ``Xc.T @ Xc / n`` with ``Xc = values - mean`` (paper Section 3, X transposed). Entries that
        overflow float64 are inf or nan, without a floating-point warning: the caller checks.
    """
    n = values.shape[0]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        mean = values.mean(axis=0)
        Xc = values - mean
        cov = Xc.T @ Xc / n
    return mean, cov


def data_covariance(X):
    """The 1/n covariance of centred data, as CoLiDE uses it (paper Section 3).

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
        Numeric, finite observations; a centred copy is used.

    Returns
    -------
    cov : ndarray of shape (n_nodes, n_nodes)
        ``Xc.T @ Xc / n`` for the centred copy ``Xc``.
    n : int
        Number of samples.
    names : list of str or None
        Column names when ``X`` is a DataFrame.

    Raises
    ------
    ValueError
        As :func:`check_data`.
    FloatingPointError
        If the covariance overflows (is not finite in float64).
    """
    values, names = check_data(X)
    n = values.shape[0]
    _, cov = centred_covariance(values)
    if not np.all(np.isfinite(cov)):
        raise FloatingPointError("The covariance of X overflows: rescale the data.")
    return cov, n, names


def check_named_adjacency(W, node_names=None):
    """A weighted adjacency and its node names, checked (the graph exports and pictures).

    Parameters
    ----------
    W : array-like or pandas.DataFrame of shape (n_nodes, n_nodes)
        ``W[i, j] != 0`` means i -> j; a DataFrame gives the names (index and columns alike).
    node_names : sequence of str, optional
        Default: the DataFrame's columns, else ``X0, X1, ...``.

    Returns
    -------
    A : ndarray of shape (n_nodes, n_nodes)
        A float copy.
    names : list of str
        Checked by :func:`check_node_names`.

    Raises
    ------
    ValueError
        For a non-square, non-numeric or non-finite ``W``, names of the wrong count, or names
        the node-name policy refuses.
    """
    names_from_frame = None
    if isinstance(W, pd.DataFrame):
        names_from_frame = [str(c) for c in W.columns]
        index = [str(i) for i in W.index]
        if index != names_from_frame and not all(i == str(k) for k, i in enumerate(index)):
            raise ValueError("W as a DataFrame must have the same index and columns (node names).")
        W = W.to_numpy()
    try:
        A = np.array(W, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"W must be a numeric matrix: {exc}") from None
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"W must be a square (n_nodes, n_nodes) matrix, got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError("W contains NaN or Inf.")
    d = A.shape[0]
    if node_names is None:
        names = names_from_frame if names_from_frame is not None else [f"X{i}" for i in range(d)]
    else:
        names = [str(x) for x in node_names]
    if len(names) != d:
        raise ValueError(f"got {len(names)} node names for {d} nodes.")
    try:
        names = check_node_names(names, what="node")
    except NodeNameError as exc:
        raise ValueError(str(exc)) from None
    return A, names


def node_index(node, names, n_nodes, *, what=None) -> int:
    """The index of ``node`` among ``n_nodes`` nodes: the one node lookup of the library.

    Parameters
    ----------
    node : int or str
        An integer index in ``[0, n_nodes)`` or, when ``names`` is given, a node name. A bool is
        not a node.
    names : sequence of str or None
        The node names (a DataFrame's columns), or None for an array's nodes.
    n_nodes : int
    what : str, optional
        What the node was given for (e.g. ``"required"``): the message starts with it.

    Returns
    -------
    int

    Raises
    ------
    UnknownNodeError
        (a ``ValueError`` and scikit-learn's ``InvalidParameterError``) For an index out of range,
        an unknown name, a name where the nodes have none, or anything else; the message lists
        the nodes (at most 20).

    Examples
    --------
    >>> node_index("b", ["a", "b", "c"], 3), node_index(2, None, 3)
    (1, 2)
    >>> node_index("z", ["a", "b"], 2)
    Traceback (most recent call last):
    ...
    colide_core.exceptions.UnknownNodeError: unknown node 'z'; the nodes are: a, b.
    """
    import numbers

    from colide_core.exceptions import UnknownNodeError

    d = int(n_nodes)
    lead = f"{what}: " if what else ""
    if isinstance(node, (bool, np.bool_)):
        raise UnknownNodeError(f"{lead}{node!r} is not a node (use a node name or an integer index).")
    if isinstance(node, (numbers.Integral, np.integer)):
        k = int(node)
        if not 0 <= k < d:
            raise UnknownNodeError(f"{lead}node index {k} is out of range (there are {d} nodes, 0..{d - 1}).")
        return k
    if isinstance(node, str):
        if names is None:
            raise UnknownNodeError(f"{lead}node {node[:60]!r} is a name, but the nodes have no names (X is an "
                                   "array, not a DataFrame); use integer indices.")
        names = [str(n) for n in names]
        if node in names:
            return names.index(node)
        shown = ", ".join(names[:20]) + (", …" if len(names) > 20 else "")
        raise UnknownNodeError(f"{lead}unknown node {node[:60]!r}; the nodes are: {shown}.")
    raise UnknownNodeError(f"{lead}{str(node)[:60]!r} is not a node (use a node name or an integer index).")
