"""Validating user data: one validation layer for the dashboard and the library.

Two steps, usable separately:

* :func:`read_table` (defined in :mod:`colide_core.data.readers`, re-exported here) turns the raw
  bytes of an uploaded file (CSV, TSV, other delimited text, or Parquet) into a
  :class:`pandas.DataFrame`, with the delimiter sniffed. It never unpickles and never touches the
  file system: the file name is used only for its extension.
* :func:`validate_data` checks that a DataFrame is a usable data matrix ``X`` of shape
  ``(n_samples, n_nodes)`` for linear DAG learning (numeric, finite, no constant / duplicate /
  perfectly collinear columns, a finite covariance) and returns a :class:`ValidatedData`.

Both are short pipelines of named checks, each a public function that can be called and tested
alone: :func:`colide_core.data.readers.check_file` then parsing for :func:`read_table`;
:func:`as_table`, :func:`check_column_names`, :func:`check_row_count`,
:func:`check_numeric_columns`, :func:`check_column_count`, :func:`check_finite_values`,
:func:`check_constant_columns`, :func:`check_duplicate_columns`, :func:`check_covariance` and
:func:`check_collinearity` for :func:`validate_data`.

Every problem with the data is reported as a :class:`DataValidationError` (a ``ValueError``) with a
human message that names the offending columns or rows, and a stable machine-readable ``kind``
code (see :data:`ERROR_KINDS`), so a UI can offer the right fix (e.g. "drop non-numeric columns").

Conventions: ``X`` has shape ``(n_samples, n_nodes)``; a learned ``W[i, j] != 0`` means the edge
``i -> j`` between the ``i``-th and ``j``-th columns of ``X``.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from colide_core.exceptions import ERROR_KINDS, DataValidationError
from colide_core._json import JSON_MAX_BYTES
from colide_core._validation import NodeNameError, centred_covariance, check_node_names
from colide_core.data.readers import _MAX_LISTED, _is_numeric_dtype, _list, _short, read_table

__all__ = [
    "DataValidationError",
    "ValidatedData",
    "read_table",  # re-exported from colide_core.data.readers (the Data page and the CLI read it here)
    "validate_data",
    "data_problems",
    "FIXABLE",
    "INTERACTIVE_MAX_NODES",
    "JSON_MAX_BYTES",  # re-exported from colide_core._json (the CLI and the Prior knowledge page read it here)
    "ERROR_KINDS",
    # the named checks, each usable alone
    "as_table",
    "check_column_names",
    "check_row_count",
    "check_numeric_columns",
    "check_column_count",
    "check_finite_values",
    "check_constant_columns",
    "check_duplicate_columns",
    "check_covariance",
    "check_collinearity",
    "scale_warning",
]

#: Largest number of nodes (columns) the interactive dashboard accepts. The library has no limit
#: unless ``max_nodes`` is passed to :func:`validate_data`.
INTERACTIVE_MAX_NODES = 200

# Relative eigenvalue of the correlation matrix below which the covariance counts as singular.
_SINGULAR_RTOL = 1e-12
# ... and below which it only earns an "ill-conditioned" warning.
_ILL_CONDITIONED_RTOL = 1e-8
# Ratio of the largest to the smallest column variance above which a scale warning is given.
_SCALE_WARN_RATIO = 1e12
_UNNAMED_RE = re.compile(r"^Unnamed: \d+(_level_\d+)?$")


@dataclass(frozen=True)
class ValidatedData:
    """A data matrix that passed :func:`validate_data`.

    Attributes
    ----------
    X : pandas.DataFrame
        The data, shape ``(n_samples, n_nodes)``, dtype float64, all values finite, column names are
        unique non-empty ``str`` (surrounding whitespace stripped, NFC-normalised). The index keeps
        the input's row labels (for :func:`read_table` output: data rows numbered from 1, header excluded).
        Learned graphs use its column order: ``W[i, j] != 0`` means ``X.columns[i] -> X.columns[j]``.
    warnings : tuple of str
        Human-readable warnings that do not block learning (e.g. n <= d, ill-conditioned covariance,
        rows or columns that were dropped on request).
    dropped_columns : tuple of str
        Names of the non-numeric columns dropped because ``drop_non_numeric=True``.
    dropped_rows : int
        How many rows were dropped because ``drop_nonfinite_rows=True``.
    dropped_row_labels : tuple
        The index labels of those rows.
    ill_posed : bool
        True when ``n_samples <= n_nodes`` (the sample covariance is then singular).
    condition_number : float
        Condition number of the correlation matrix (``inf`` when ill-posed, not computed).
    """

    X: pd.DataFrame
    warnings: tuple = ()
    dropped_columns: tuple = ()
    dropped_rows: int = 0
    dropped_row_labels: tuple = ()
    ill_posed: bool = False
    condition_number: float = field(default=float("nan"))

    @property
    def n_samples(self) -> int:
        """Number of rows of ``X``."""
        return int(self.X.shape[0])

    @property
    def n_nodes(self) -> int:
        """Number of columns (graph nodes) of ``X``."""
        return int(self.X.shape[1])

    @property
    def node_names(self) -> list:
        """Column names of ``X`` as a list of str (node names of the learned graph)."""
        return [str(c) for c in self.X.columns]


# ----------------------------------------------------------------------------------------------
# formatting helpers
# ----------------------------------------------------------------------------------------------
def _plural(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


# ----------------------------------------------------------------------------------------------
# validating
# ----------------------------------------------------------------------------------------------
def _is_numeric_series(s: pd.Series) -> bool:
    return _is_numeric_dtype(s.dtype)




def _to_float(s: pd.Series) -> np.ndarray:
    """float64 copy of a numeric column; pandas NA becomes NaN; int64 beyond 2**53 rounds."""
    with np.errstate(over="ignore", invalid="ignore"):
        return s.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)


def _is_empty_name(name) -> bool:
    if name is None:
        return True
    if isinstance(name, float) and math.isnan(name):
        return True
    s = str(name).strip()
    return s == "" or bool(_UNNAMED_RE.match(s))


def _describe_rows(labels) -> str:
    return _list([str(r) for r in labels], quote=False)


def validate_data(
    df,
    *,
    min_rows: int = 10,
    max_nodes: int | None = None,
    drop_non_numeric: bool = False,
    drop_nonfinite_rows: bool = False,
    drop_constant_columns: bool = False,
) -> ValidatedData:
    """Check that a table is a usable data matrix for linear DAG learning.

    A short pipeline of named checks, each usable alone, run in this order; the first failing one
    raises: :func:`as_table`, :func:`check_column_names` (empty, refused characters, duplicate), :func:`check_row_count`,
    :func:`check_numeric_columns`, :func:`check_column_count` (at least 2, ``max_nodes``),
    :func:`check_finite_values`, :func:`check_row_count` again, :func:`check_constant_columns`,
    :func:`check_duplicate_columns`, :func:`check_covariance` (finite, no zero variance) and
    :func:`check_collinearity` (non-singular). The input is never modified.

    Parameters
    ----------
    df : pandas.DataFrame or 2-D array-like
        Data of shape ``(n_samples, n_nodes)``: one row per sample, one column per variable (node).
        Arrays get the column names ``"X1" ... "Xd"``.
    min_rows : int, default 10
        Fewest rows accepted (after dropping non-finite rows). Must be >= 2.
    max_nodes : int or None, default None
        Most columns accepted; ``None`` means no limit. The dashboard passes
        :data:`INTERACTIVE_MAX_NODES` (200).
    drop_non_numeric : bool, default False
        Drop non-numeric columns (text, dates, categories, complex) instead of raising; their names
        are reported in ``dropped_columns`` and in a warning.
    drop_nonfinite_rows : bool, default False
        Drop rows holding NaN, missing or +/-Inf values instead of raising; their number is reported
        in ``dropped_rows`` and in a warning.
    drop_constant_columns : bool, default False
        Drop columns holding one repeated value (after the rows above are dropped) instead of
        raising; their names join ``dropped_columns`` and a warning.

    Returns
    -------
    ValidatedData
        ``X`` as a float64 DataFrame with unique str column names, plus warnings (``n_samples <=
        n_nodes`` is only a warning: the problem is then ill-posed but may still be solved), the
        dropped columns / rows and the condition number of the correlation matrix.

    Raises
    ------
    DataValidationError
        With ``kind`` one of ``"bad_type"``, ``"empty_column_name"``, ``"bad_column_name"``,
        ``"duplicate_column_name"``,
        ``"non_numeric"``, ``"too_few_columns"``, ``"too_many_nodes"``, ``"nonfinite"``,
        ``"too_few_rows"``, ``"constant_column"``, ``"duplicate_column"``, ``"overflow"``,
        ``"singular_covariance"``; the message names the columns / rows involved.
    ValueError
        If ``min_rows < 2`` or ``max_nodes < 2``.

    Notes
    -----
    The covariance checked is the one the CoLiDE scores use, ``cov = Xc.T @ Xc / n`` of the centred
    data ``Xc`` (paper, Sec. 4). It is singular when some column is an exact linear combination of
    others; this is tested on the correlation matrix (scale-free): its smallest eigenvalue relative to
    the largest below 1e-12 is an error naming the columns with weight in the null eigenvector,
    below 1e-8 a warning. Both are skipped when ``n_samples <= n_nodes``, where the covariance is
    singular by construction.
    """
    _check_parameters(min_rows, max_nodes)
    df = as_table(df)
    names = check_column_names(df)
    check_row_count(len(df), min_rows)
    keep, dropped_columns = check_numeric_columns(df, names, drop=drop_non_numeric)
    names = [names[j] for j in keep]
    check_column_count(names, max_nodes=max_nodes, after_dropping=bool(dropped_columns))
    X = _to_float_matrix(df, keep)
    bad_rows = check_finite_values(X, names, df.index, drop=drop_nonfinite_rows)
    X, index = (X[~bad_rows], df.index[~bad_rows]) if bad_rows.any() else (X, df.index)
    check_row_count(len(X), min_rows, after_dropping=bool(bad_rows.any()))
    constant_dropped = []
    if drop_constant_columns:
        const = [k for k in range(X.shape[1]) if np.all(X[:, k] == X[0, k])]
        if const:
            constant_dropped = [names[k] for k in const]
            X = np.delete(X, const, axis=1)
            names = [nm for k, nm in enumerate(names) if k not in set(const)]
            check_column_count(names, max_nodes=max_nodes, after_dropping=True)
    check_constant_columns(X, names)
    check_duplicate_columns(X, names)
    cov = check_covariance(X, names)
    n, d = X.shape
    ill_posed = n <= d  # the covariance is then singular by construction: a warning, not a check
    cond, conditioning = (
        (math.inf, _ill_posed_warning(n, d)) if ill_posed else check_collinearity(cov, names)
    )

    dropped_labels = (
        tuple(np.asarray(df.index, dtype=object)[bad_rows].tolist()) if bad_rows.any() else ()
    )
    warnings_ = [
        f"Dropped {_plural(len(dropped_columns), 'non-numeric column')}: {_list(dropped_columns)}."
        if dropped_columns else None,
        f"Dropped {_plural(len(dropped_labels), 'row')} with missing or infinite values "
        f"({n} remain)." if dropped_labels else None,
        f"Dropped {_plural(len(constant_dropped), 'constant column')}: {_list(constant_dropped)}."
        if constant_dropped else None,
        conditioning,
        scale_warning(cov, names),
    ]
    return ValidatedData(
        X=pd.DataFrame(X, columns=pd.Index(names), index=index.copy()),
        warnings=tuple(w for w in warnings_ if w),
        dropped_columns=tuple(dropped_columns) + tuple(constant_dropped),
        dropped_rows=len(dropped_labels),
        dropped_row_labels=dropped_labels,
        ill_posed=ill_posed,
        condition_number=cond,
    )


#: The problems :func:`validate_data` can fix by dropping, and the keyword that drops them.
FIXABLE = {"non_numeric": "drop_non_numeric", "nonfinite": "drop_nonfinite_rows",
           "constant_column": "drop_constant_columns"}


def data_problems(df, *, min_rows: int = 10, max_nodes: int | None = None, **fixes) -> list:
    """Every problem of a table at once, each with the fix that drops it.

    :func:`validate_data` stops at the first failing check; a user with a text column, missing
    values and a constant column then met them one at a time. This runs :func:`validate_data`
    again with each fixable problem's fix applied, until the table passes or a problem no drop
    can fix is met (at most ``len(FIXABLE) + 1`` runs on the parsed table).

    Parameters
    ----------
    df : pandas.DataFrame or 2-D array-like, shape (n_samples, n_nodes)
    min_rows, max_nodes : see :func:`validate_data`
    **fixes : bool
        The fixes already chosen (keywords of :data:`FIXABLE`'s values).

    Returns
    -------
    list of DataValidationError
        The problems in the order met (empty when the table passes with ``fixes``). A fixable one
        has ``kind`` in :data:`FIXABLE`; the last may be one that no drop fixes.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [1.0, 2, 3], "b": [0.5, None, 1], "c": [4.0, 4, 4], "t": ["x", "y", "z"],
    ...                    "e": [1.0, 0, 2]})
    >>> [p.kind for p in data_problems(df, min_rows=2)]
    ['non_numeric', 'nonfinite', 'constant_column']
    """
    chosen = {kw: bool(fixes.get(kw, False)) for kw in FIXABLE.values()}
    unknown = set(fixes) - set(chosen)
    if unknown:
        raise TypeError(f"unknown fixes: {sorted(unknown)}")
    problems = []
    for _ in range(len(FIXABLE) + 1):
        try:
            validate_data(df, min_rows=min_rows, max_nodes=max_nodes, **chosen)
        except DataValidationError as exc:
            problems.append(exc)
            fix = FIXABLE.get(exc.kind)
            if fix is None or chosen[fix]:
                break
            chosen[fix] = True
        else:
            break
    return problems


def _check_parameters(min_rows, max_nodes) -> None:
    if isinstance(min_rows, bool) or not isinstance(min_rows, (int, np.integer)) or min_rows < 2:
        raise ValueError(f"min_rows must be an int >= 2, got {min_rows!r}")
    if max_nodes is not None and (
        isinstance(max_nodes, bool) or not isinstance(max_nodes, (int, np.integer)) or max_nodes < 2
    ):
        raise ValueError(f"max_nodes must be None or an int >= 2, got {max_nodes!r}")


def as_table(df) -> pd.DataFrame:
    """The input as a DataFrame: a DataFrame as is, a 2-D array with columns ``"X1" ... "Xd"``.

    Parameters
    ----------
    df : pandas.DataFrame or 2-D array-like of shape (n_samples, n_nodes)

    Returns
    -------
    pandas.DataFrame
        ``df`` itself when it is a DataFrame (not copied), else a new one.

    Raises
    ------
    DataValidationError
        ``kind="bad_type"`` when ``df`` cannot be made an array, or is not 2-D.
    """
    if isinstance(df, pd.DataFrame):
        return df
    try:
        arr = np.asarray(df)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(
            f"Expected a DataFrame or a 2-D array, got {type(df).__name__} ({exc}).", "bad_type"
        ) from None
    if arr.ndim != 2:
        raise DataValidationError(
            f"Expected a 2-D table (n_samples, n_nodes), got an array of shape {arr.shape}.",
            "bad_type",
        )
    return pd.DataFrame(arr, columns=[f"X{j + 1}" for j in range(arr.shape[1])])


def check_column_names(df: pd.DataFrame) -> list:
    """Check every column has a usable name and no two share one; return the names.

    The names are stripped of surrounding whitespace, then put through the library's one name
    policy, :func:`colide_core._validation.check_node_names`: NFC normalisation; control
    characters, zero-width and other invisible format characters, line/paragraph separators,
    noncharacters and a trailing backslash refused; names equal after normalisation are duplicates.

    Parameters
    ----------
    df : pandas.DataFrame

    Returns
    -------
    names : list of str
        ``str(name).strip()`` for each column, NFC-normalised, in order.

    Raises
    ------
    DataValidationError
        ``kind="empty_column_name"`` for a missing, blank or pandas ``"Unnamed: k"`` name (the
        message guesses the cause: a trailing delimiter, a saved index);
        ``kind="bad_column_name"`` for a name holding a refused character (the message shows it
        with ``repr`` and its code point) or ending with a backslash;
        ``kind="duplicate_column_name"`` when two names are equal after stripping and NFC
        normalisation.
    """
    cols = list(df.columns)
    empty = [j for j, c in enumerate(cols) if _is_empty_name(c)]
    if empty:
        j = empty[0]
        hint = ""
        col = df.iloc[:, j]
        if col.isna().all():
            hint = " It is entirely empty: probably a trailing delimiter at the end of each line."
        elif j == 0 and _is_numeric_series(col) and len(col) > 1 and (
                np.array_equal(_to_float(col), np.arange(len(col), dtype=float))
                or np.array_equal(_to_float(col), np.arange(1, len(col) + 1, dtype=float))):
            hint = (" It holds the row numbers: probably a saved index (use "
                    "DataFrame.to_csv(index=False)).")
        raise DataValidationError(
            f"{_plural(len(empty), 'column')} without a name, at position "
            f"{_list([k + 1 for k in empty], quote=False)} (counting from 1).{hint} Give every "
            f"column a unique name in the header.",
            "empty_column_name",
            columns=[str(cols[k]) for k in empty],
        )
    try:
        return check_node_names([str(c).strip() for c in cols])
    except NodeNameError as exc:
        raise DataValidationError(str(exc), exc.kind, columns=exc.names) from None


def check_row_count(n_rows: int, min_rows: int, *, after_dropping: bool = False) -> None:
    """Check there are at least ``min_rows`` rows.

    Parameters
    ----------
    n_rows : int
        Number of rows (samples).
    min_rows : int
        Fewest accepted.
    after_dropping : bool, default False
        Whether rows with missing or infinite values were dropped first (said in the message).

    Raises
    ------
    DataValidationError
        ``kind="too_few_rows"`` when ``n_rows < min_rows``.
    """
    if n_rows < min_rows:
        after = " after dropping rows with missing or infinite values" if after_dropping else ""
        raise DataValidationError(
            f"The data has {_plural(n_rows, 'row')}{after}; at least {min_rows} are needed.",
            "too_few_rows",
        )


#: Cells read, and characters of each, to find a non-numeric column's example value.
_EXAMPLE_SCAN = 1000
_EXAMPLE_CHARS = 64


def check_numeric_columns(df: pd.DataFrame, names, *, drop: bool = False):
    """Check every column is numeric (int, float or bool), or choose the numeric ones.

    Parameters
    ----------
    df : pandas.DataFrame
    names : list of str
        The column names, as :func:`check_column_names` returns them.
    drop : bool, default False
        Keep only the numeric columns instead of raising.

    Returns
    -------
    keep : list of int
        Positions of the columns kept (all of them when every column is numeric).
    dropped : tuple of str
        Names of the non-numeric columns dropped (empty unless ``drop``).

    Raises
    ------
    DataValidationError
        ``kind="non_numeric"`` when a column is text, dates, categories, complex, ... and ``drop``
        is False; the message shows an example value of up to 3 such columns.
    """
    non_numeric = [names[j] for j, dt in enumerate(df.dtypes) if not _is_numeric_dtype(dt)]
    if not non_numeric:
        return list(range(len(names))), ()
    if not drop:
        examples = []
        for j in range(len(names)):
            if names[j] in non_numeric and len(examples) < 3:
                # the first non-missing cells only, each cut to a few characters before any conversion:
                # a column of 4,000 one-megabyte strings (a Parquet dictionary bomb) must not be
                # expanded to find an example (tests/e2e/test_upload_bombs.py)
                col = df.iloc[:, j]
                if isinstance(col.dtype, pd.CategoricalDtype):  # its distinct values: rows would expand them
                    col = pd.Series(np.asarray(col.cat.categories[:_EXAMPLE_SCAN], dtype=object))
                vals = col.head(_EXAMPLE_SCAN).dropna()
                if len(vals):
                    # the example is a cell that is not a number (issue 30: one bad "0x10" among
                    # numbers was shown with a valid value)
                    short = pd.Series([str(v)[:_EXAMPLE_CHARS] for v in vals], dtype=object)
                    bad = vals[pd.to_numeric(short, errors="coerce").isna().to_numpy()]
                    examples.append(f"{_short(names[j])} holds e.g. {_short((bad if len(bad) else vals).iloc[0])}")
        ex = (" (" + "; ".join(examples) + ")") if examples else ""
        raise DataValidationError(
            f"{_plural(len(non_numeric), 'column')} not numeric: {_list(non_numeric)}{ex}. "
            f"Drop {'it' if len(non_numeric) == 1 else 'them'} or fix the values.",
            "non_numeric",
            columns=non_numeric,
        )
    keep = [j for j in range(len(names)) if names[j] not in non_numeric]
    return keep, tuple(non_numeric)


def check_column_count(names, *, max_nodes: int | None = None, after_dropping: bool = False) -> None:
    """Check there are between 2 and ``max_nodes`` columns (nodes).

    Parameters
    ----------
    names : list of str
        Names of the (numeric) columns kept.
    max_nodes : int or None, default None
        Most columns accepted; ``None`` means no limit.
    after_dropping : bool, default False
        Whether non-numeric columns were dropped first (said in the message).

    Raises
    ------
    DataValidationError
        ``kind="too_few_columns"`` below 2 columns (a single column without dropping suggests a
        wrong delimiter); ``kind="too_many_nodes"`` above ``max_nodes``, with every name in
        ``columns``.
    """
    d = len(names)
    if d < 2:
        what = "numeric column" if after_dropping else "column"
        raise DataValidationError(
            f"The data has {_plural(d, what)}; at least 2 are needed to learn a graph"
            + (" (check the delimiter: the header was read as a single field)."
               if d == 1 and not after_dropping else "."),
            "too_few_columns",
            columns=names,
        )
    if max_nodes is not None and d > max_nodes:
        raise DataValidationError(
            f"The data has {d} columns (nodes); the limit here is {max_nodes}. Select fewer "
            f"columns, or use the colide_core library directly for larger graphs.",
            "too_many_nodes",
            columns=names,  # how many: a caller can say what a fit at that size would cost
        )


def _to_float_matrix(df: pd.DataFrame, keep) -> np.ndarray:
    """New float64 array of shape (n_rows, len(keep)) from the numeric columns ``keep`` of ``df``."""
    X = np.empty((len(df), len(keep)), dtype=np.float64)
    for k, j in enumerate(keep):
        X[:, k] = _to_float(df.iloc[:, j])
    return X


def check_finite_values(X, names, index, *, drop: bool = False) -> np.ndarray:
    """Find the rows holding NaN, missing or infinite values; raise unless they may be dropped.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_nodes), dtype float64
        Missing values already NaN (as :func:`validate_data` converts them).
    names : list of str
        Column names, for the message.
    index : pandas.Index or sequence of length n_samples
        Row labels, for the message.
    drop : bool, default False
        Return the bad rows instead of raising.

    Returns
    -------
    bad_rows : ndarray of bool of shape (n_samples,)
        True for each row with a non-finite value (all False when there is none).

    Raises
    ------
    DataValidationError
        ``kind="nonfinite"`` when some row is bad and ``drop`` is False; the message names the rows
        by label and counts NaN and infinite values per column.
    """
    finite = np.isfinite(X)
    bad_rows = ~finite.all(axis=1)
    if drop or not bad_rows.any():
        return bad_rows
    d = X.shape[1]
    bad_cols = [names[k] for k in range(d) if not finite[:, k].all()]
    parts = []
    for k in range(d):
        col_bad = ~finite[:, k]
        if col_bad.any():
            n_nan = int(np.isnan(X[col_bad, k]).sum())
            n_inf = int(col_bad.sum()) - n_nan
            kinds = ", ".join(x for x in (
                f"{n_nan} missing/NaN" if n_nan else "", f"{n_inf} infinite" if n_inf else "")
                if x)
            parts.append(f"{_short(names[k])} ({kinds})")
        if len(parts) >= _MAX_LISTED:
            break
    labels = np.asarray(index, dtype=object)[bad_rows]
    raise DataValidationError(
        f"{_plural(int(bad_rows.sum()), 'row')} of {len(X)} "
        f"{'has' if bad_rows.sum() == 1 else 'have'} missing or infinite values: rows "
        f"{_describe_rows(labels)}; in columns {'; '.join(parts)}"
        + (f" and {len(bad_cols) - len(parts)} more" if len(bad_cols) > len(parts) else "")
        + ". Drop those rows or fix the values.",
        "nonfinite",
        columns=bad_cols,
        rows=labels.tolist(),
    )


def check_constant_columns(X, names) -> None:
    """Check no column holds one repeated value (zero variance).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_nodes), finite, n_samples >= 1
    names : list of str

    Raises
    ------
    DataValidationError
        ``kind="constant_column"``, naming the columns and (for up to 3) their value.
    """
    d = X.shape[1]
    constant = [names[k] for k in range(d) if np.all(X[:, k] == X[0, k])]
    if constant:
        values = {names[k]: X[0, k] for k in range(d) if names[k] in constant}
        ex = "; ".join(f"{_short(c)} is always {values[c]:g}" for c in constant[:3])
        raise DataValidationError(
            f"{_plural(len(constant), 'column')} constant ({ex}): "
            f"{_list(constant)}. A constant column has zero variance and carries no information; "
            f"drop it.",
            "constant_column",
            columns=constant,
        )


def check_duplicate_columns(X, names) -> None:
    """Check no two columns hold identical values in every row (``-0.0`` equals ``0.0``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_nodes), finite
    names : list of str

    Raises
    ------
    DataValidationError
        ``kind="duplicate_column"``, listing each group of identical columns.
    """
    groups: dict = {}
    for k in range(X.shape[1]):
        groups.setdefault((X[:, k] + 0.0).tobytes(), []).append(names[k])  # +0.0: -0.0 == 0.0
    dup_groups = [g for g in groups.values() if len(g) > 1]
    if dup_groups:
        desc = "; ".join(" = ".join(_short(c) for c in g) for g in dup_groups[:_MAX_LISTED])
        raise DataValidationError(
            f"Identical columns (same values in every row): {desc}. Keep only one of each group.",
            "duplicate_column",
            columns=[c for g in dup_groups for c in g],
        )


def check_covariance(X, names) -> np.ndarray:
    """The covariance CoLiDE uses, checked to be finite with a positive diagonal.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_nodes), finite, n_samples >= 1
    names : list of str

    Returns
    -------
    cov : ndarray of shape (n_nodes, n_nodes)
        ``Xc.T @ Xc / n`` of the centred data, by
        :func:`colide_core._validation.centred_covariance` (the same arithmetic as the solver's).

    Raises
    ------
    DataValidationError
        ``kind="overflow"`` when a mean or a covariance entry is not finite in float64 (naming the
        columns and their largest magnitude); ``kind="singular_covariance"`` when a variance
        underflows to zero.
    """
    mean, cov = centred_covariance(X)
    d = X.shape[1]
    diag = np.diag(cov)
    if not (np.isfinite(mean).all() and np.isfinite(cov).all()):
        bad = [names[k] for k in range(d)
               if not (np.isfinite(mean[k]) and np.isfinite(diag[k]) and np.isfinite(cov[k]).all())]
        big = np.max(np.abs(X), axis=0)
        ex = "; ".join(f"{_short(names[k])} reaches {big[k]:.3g}" for k in range(d)
                       if names[k] in bad[:3])
        raise DataValidationError(
            f"Values too large: the covariance of {_list(bad)} overflows float64 ({ex}). Rescale "
            f"these columns (e.g. divide by a power of ten, or standardize).",
            "overflow",
            columns=bad,
        )
    tiny = [names[k] for k in range(d) if not diag[k] > 0.0]
    if tiny:
        raise DataValidationError(
            f"The variance of {_list(tiny)} underflows to zero in float64 (values too small or too "
            f"close together); rescale these columns.",
            "singular_covariance",
            columns=tiny,
        )
    return cov


def _ill_posed_warning(n: int, d: int) -> str:
    return (
        f"Only {n} samples for {d} nodes (n <= d): the covariance is singular and the problem is "
        f"ill-posed. Results may be unreliable; you can still proceed."
    )


def check_collinearity(cov, names):
    """Check the covariance is not singular: no column is a linear combination of others.

    Meant for ``n_samples > n_nodes`` (otherwise the covariance is singular by construction and
    :func:`validate_data` only warns).

    Parameters
    ----------
    cov : ndarray of shape (n_nodes, n_nodes)
        Finite covariance with a positive diagonal, as :func:`check_covariance` returns it.
    names : list of str

    Returns
    -------
    condition_number : float
        Of the correlation matrix (``inf`` when its smallest eigenvalue is <= 0).
    warning : str or None
        An "ill-conditioned" warning when the relative smallest eigenvalue is below 1e-8.

    Raises
    ------
    DataValidationError
        ``kind="singular_covariance"`` when the smallest eigenvalue of the correlation matrix
        relative to the largest is below 1e-12, naming the columns with weight in its
        eigenvector; ``kind="overflow"`` when the correlation matrix is not finite.
    """
    diag = np.diag(cov)
    scale = np.sqrt(diag)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        corr = cov / np.outer(scale, scale)
    corr = 0.5 * (corr + corr.T)
    if not np.isfinite(corr).all():
        raise DataValidationError(
            "The correlation matrix is not finite (extreme values); rescale the columns.",
            "overflow",
            columns=names,
        )
    try:
        evals, evecs = np.linalg.eigh(corr)
    except np.linalg.LinAlgError as exc:  # pragma: no cover - eigh on a finite symmetric matrix
        raise DataValidationError(
            f"The covariance matrix could not be analysed ({exc}).", "singular_covariance"
        ) from None
    top = float(evals[-1])
    low = float(max(evals[0], 0.0))
    rel = low / top if top > 0 else 0.0
    cond = float("inf") if low == 0.0 else top / low
    if rel < _SINGULAR_RTOL:
        v = np.abs(evecs[:, 0])
        involved = [names[k] for k in np.argsort(-v) if v[k] > 1e-3 * v.max()]
        raise DataValidationError(
            f"The covariance matrix is singular (perfectly collinear columns): "
            f"{_list(involved)} are linearly dependent (one is a linear combination of the "
            f"others, condition number {'inf' if low == 0 else f'{cond:.2g}'}). Drop one of "
            f"them.",
            "singular_covariance",
            columns=involved,
        )
    if rel < _ILL_CONDITIONED_RTOL:
        return cond, (
            f"The correlation matrix is ill-conditioned (condition number {cond:.2g}): some "
            f"columns are nearly collinear. Results may be unstable."
        )
    return cond, None


def scale_warning(cov, names):
    """A warning when the column standard deviations differ by more than a factor 1e6.

    Parameters
    ----------
    cov : ndarray of shape (n_nodes, n_nodes)
        Covariance with a positive diagonal.
    names : list of str

    Returns
    -------
    str or None
        The warning naming the largest- and smallest-variance columns, or None.
    """
    diag = np.diag(cov)
    ratio = float(diag.max() / diag.min())
    if ratio > _SCALE_WARN_RATIO:
        kmax, kmin = int(np.argmax(diag)), int(np.argmin(diag))
        return (
            f"Column scales differ by a factor of {math.sqrt(ratio):.2g} in standard deviation "
            f"({_short(names[kmax])} vs {_short(names[kmin])}); consider standardizing."
        )
    return None
