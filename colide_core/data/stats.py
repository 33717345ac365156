"""Out-of-core sufficient statistics (n, mean, 1/n covariance) with Dask.

CoLiDE's scores depend on the data only through the sample covariance
``cov = Xc^T Xc / n`` of the centred data ``Xc`` (paper eq. 5 and 7 use
``(I - W)^T cov (I - W)``), so a dataset far larger than memory can be reduced
to a ``(d, d)`` matrix in one streaming pass and handed to
:meth:`colide_core.CoLiDE.fit_from_stats`.

Numerical method
----------------
Each partition ``k`` is reduced to a partial ``(n_k, s_k, m_k, M2_k)``: the
shift ``s_k`` is the partition's plain float64 mean, ``Y_k = X_k - s_k`` (exact
by Sterbenz's lemma for values near ``s_k``), ``m_k`` is the mean of ``Y_k``
and ``M2_k = (Y_k - m_k)^T (Y_k - m_k)`` the centred scatter; the partition
mean is ``s_k + m_k`` carried as an unevaluated sum. Partials are merged
pairwise in a balanced tree with the parallel update of Chan, Golub and
LeVeque (1979), "Updating formulae and a pairwise algorithm for computing
sample variances", generalised to co-moments::

    n     = n_a + n_b
    delta = (s_b - s_a) + (m_b - m_a)        # difference of the two means
    m     = m_a + delta * n_b / n            # new partial keeps s = s_a
    M2    = M2_a + M2_b + outer(delta, delta) * n_a * n_b / n

and finally ``cov = M2 / n``, ``mean = s + m``. The naive
``E[x x^T] - mu mu^T`` loses every significant digit when ``|mu|`` is large
compared with the spread (for an offset of 1e8 and unit noise the two terms
are ~1e16 and their difference ~1, below float64 resolution). Centring each
partition fixes that; carrying the shift separately also keeps ``delta``
accurate (a plain float64 mean near 1e8 is only good to ~1e-8 absolute, which
would leak a ~1e-10 relative error into the merge term).

Dask is imported lazily inside the functions so ``import colide_core`` stays fast.

:func:`condition_summary` describes data from several conditions: rows, targets and how far each
node's median moved from a baseline condition (issue 31, the Data page's per-condition table).
"""
from __future__ import annotations

import glob as _glob
import os

import numpy as np
import pandas as pd

from colide_core._validation import check_X

__all__ = ["sufficient_stats", "merge_moments", "partition_moments", "condition_summary"]

_PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")
_CSV_SUFFIXES = (".csv", ".txt")
_TSV_SUFFIXES = (".tsv", ".tab")


def partition_moments(frame):
    """Centred moments of one block of rows.

    Parameters
    ----------
    frame : pandas.DataFrame or numpy.ndarray, shape (n_k, d)
        Rows are samples, columns are nodes: real numbers, converted to float64. Not modified.

    Returns
    -------
    n : int
        Number of rows ``n_k``.
    shift : numpy.ndarray, shape (d,)
        The block's plain float64 column means, used as a shift.
    mean_dev : numpy.ndarray, shape (d,)
        Mean of ``X - shift``; the block mean is ``shift + mean_dev``.
    m2 : numpy.ndarray, shape (d, d)
        Centred scatter ``(X - mean)^T (X - mean)`` (not divided by n).

    Raises
    ------
    ValueError
        If the block is not 2-D real numbers (checked by
        :func:`colide_core._validation.check_X`) or contains NaN or infinite values.

    Notes
    -----
    See the module docstring (shifted data + Chan et al. 1979).
    """
    X, _ = check_X(frame, min_samples=0, min_features=0, name="the block of rows",
                   ensure_finite=False, copy=False)
    n, d = X.shape
    if n == 0:
        return 0, np.zeros(d), np.zeros(d), np.zeros((d, d))
    if not np.isfinite(X).all():
        raise ValueError("the data contain NaN or infinite values; clean or drop those rows first")
    shift = X.mean(axis=0)
    Y = X - shift
    mean_dev = Y.mean(axis=0)
    Yc = Y - mean_dev
    return n, shift, mean_dev, Yc.T @ Yc


def merge_moments(a, b):
    """Merge two partials with Chan, Golub & LeVeque's pairwise formula.

    Parameters
    ----------
    a, b : tuple (int, ndarray (d,), ndarray (d,), ndarray (d, d))
        Partials ``(n, shift, mean_dev, m2)`` as returned by
        :func:`partition_moments`.

    Returns
    -------
    tuple (int, ndarray (d,), ndarray (d,), ndarray (d, d))
        The partial of the union of both blocks (its shift is ``a``'s).
        Inputs are not modified.

    Notes
    -----
    Chan, Golub & LeVeque (1979), pairwise update extended to the
    cross-product matrix: ``M2 = M2_a + M2_b + delta delta^T n_a n_b / n``
    with ``delta = mean_b - mean_a`` computed as
    ``(shift_b - shift_a) + (mean_dev_b - mean_dev_a)``.
    """
    n_a, s_a, m_a, m2_a = a
    n_b, s_b, m_b, m2_b = b
    if n_a == 0:
        return b
    if n_b == 0:
        return a
    n = n_a + n_b
    delta = (s_b - s_a) + (m_b - m_a)
    m = m_a + delta * (n_b / n)
    m2 = m2_a + m2_b + np.outer(delta, delta) * (n_a * n_b / n)
    return n, s_a, m, m2


def _resolve_files(path_or_glob):
    """Return (kind, list-of-paths-or-single-path) for a path, directory, glob or list."""
    if isinstance(path_or_glob, (list, tuple)):
        paths = [str(p) for p in path_or_glob]
    else:
        s = os.fspath(path_or_glob)
        if os.path.isdir(s):
            files = sorted(
                f for f in _glob.glob(os.path.join(s, "**", "*"), recursive=True)
                if os.path.isfile(f) and f.lower().endswith(_PARQUET_SUFFIXES + _CSV_SUFFIXES + _TSV_SUFFIXES)
            )
            if not files:
                raise FileNotFoundError(f"no .parquet, .csv or .tsv files under directory {s!r}")
            paths = files
        elif any(ch in s for ch in "*?["):
            paths = sorted(_glob.glob(s, recursive=True))
            if not paths:
                raise FileNotFoundError(f"the pattern {s!r} matches no file")
        else:
            if not os.path.exists(s):
                raise FileNotFoundError(f"no such file: {s!r}")
            paths = [s]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise FileNotFoundError(f"no such file: {missing[0]!r}")
    kinds = set()
    for p in paths:
        low = p.lower()
        if low.endswith(_PARQUET_SUFFIXES):
            kinds.add("parquet")
        elif low.endswith(_CSV_SUFFIXES):
            kinds.add("csv")
        elif low.endswith(_TSV_SUFFIXES):
            kinds.add("tsv")
        else:
            raise ValueError(
                f"cannot tell the format of {p!r}: use a .parquet, .csv or .tsv file name"
            )
    if len(kinds) > 1:
        raise ValueError(f"mixed file formats {sorted(kinds)}; give files of one format")
    return kinds.pop(), paths


def sufficient_stats(path_or_glob, *, columns=None, blocksize="64MB", scheduler=None,
                     return_columns=False):
    """Sample size, mean and 1/n covariance of a table too large for memory.

    One streaming pass over the files with ``dask.dataframe``: each partition
    is centred on its own mean, reduced to ``(n_k, shift_k, mean_k, M2_k)``
    and the partials are merged with the pairwise formula of Chan, Golub & LeVeque
    (1979). Only one partition per worker thread is in memory at a time.

    Parameters
    ----------
    path_or_glob : str, os.PathLike or list of them
        A Parquet or CSV/TSV file, a directory of such files (a partitioned
        Parquet dataset; searched recursively, hive partition keys in
        directory names are not read as columns), a glob pattern such as
        ``"data/part-*.parquet"``, or an explicit list of files. Rows are samples, columns are nodes.
    columns : list of str, optional
        Columns (nodes) to use, in this order. Default: all columns, which
        must then all be numeric.
    blocksize : str or int, default "64MB"
        Partition size for CSV input (ignored for Parquet, which is split by
        row groups/files).
    scheduler : str or distributed.Client, optional
        Passed to ``dask.compute``. Default: a running ``distributed.Client``
        if there is one, else Dask's threaded scheduler.
    return_columns : bool, default False
        Also return the list of column names (node order of ``mean``/``cov``).

    Returns
    -------
    n : int
        Number of rows.
    mean : numpy.ndarray, shape (d,)
        Column means.
    cov : numpy.ndarray, shape (d, d)
        ``(X - mean)^T (X - mean) / n``, the biased (1/n) covariance CoLiDE
        uses; equals ``np.cov(X, rowvar=False, bias=True)``.
    columns : list of str
        Only when ``return_columns=True``.

    Raises
    ------
    FileNotFoundError
        If the path, directory or pattern matches no file.
    ValueError
        If the format is unknown, a requested column is missing, a column is
        not numeric, values are NaN/infinite, or there are fewer than 2 rows.

    Examples
    --------
    >>> n, mean, cov = sufficient_stats("events/*.parquet")      # doctest: +SKIP
    >>> CoLiDE("nv").fit_from_stats(cov, n)                        # doctest: +SKIP
    """
    import dask
    import dask.dataframe as dd

    kind, paths = _resolve_files(path_or_glob)
    if kind == "parquet":
        ddf = dd.read_parquet(paths)
    else:
        sep = "\t" if kind == "tsv" else ","
        ddf = dd.read_csv(paths, sep=sep, blocksize=blocksize)
    # Column selection below is pushed down into the readers by Dask's optimiser.

    names = [str(c) for c in ddf.columns]
    if columns is not None:
        missing = [c for c in columns if str(c) not in names]
        if missing:
            raise ValueError(f"columns not found in the data: {missing}")
        ddf = ddf[list(columns)]
        names = [str(c) for c in columns]
    non_numeric = [str(c) for c, t in ddf.dtypes.items() if not pd.api.types.is_numeric_dtype(t)
                   or pd.api.types.is_bool_dtype(t)]
    if non_numeric:
        raise ValueError(
            f"non-numeric columns {non_numeric}; pass columns=[...] to choose numeric node columns"
        )
    if not names:
        raise ValueError("the data have no columns")

    parts = [dask.delayed(partition_moments)(p) for p in ddf.to_delayed()]
    # Balanced merge tree of delayed calls: stays one pass and parallel.
    while len(parts) > 1:
        merged = [dask.delayed(merge_moments)(parts[i], parts[i + 1])
                  for i in range(0, len(parts) - 1, 2)]
        if len(parts) % 2:
            merged.append(parts[-1])
        parts = merged
    kwargs = {} if scheduler is None else {"scheduler": scheduler}
    (n, shift, mean_dev, m2), = dask.compute(parts[0], **kwargs)
    n = int(n)
    mean = shift + mean_dev
    if n < 2:
        raise ValueError(f"need at least 2 rows to estimate a covariance, got {n}")
    cov = m2 / n
    cov = (cov + cov.T) / 2.0  # exact symmetry; the merge keeps it up to rounding
    if return_columns:
        return n, mean, cov, names
    return n, mean, cov


def condition_summary(X, conditions=None, targets=None, *, baseline=None, node_names=None, design=None):
    """Per condition: rows, targets, and each node's median shift from a baseline condition.

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
        Numeric, finite data, one row per sample. Not modified.
    conditions : array-like or pandas.Series of shape (n_samples,)
        Each row's condition label, checked by
        :func:`colide_core.data.conditions.check_conditions` (text or integers, one kind).
    targets : mapping, optional
        ``{label: [node, ...]}``, nodes by name or index
        (:func:`colide_core.data.conditions.check_targets`); only shown, not used in the numbers.
    baseline : str or int, optional
        The reference condition's label; default the first condition (in the order the labels
        first appear).
    node_names : sequence of str, optional
        The nodes' names; default the DataFrame's columns, else ``"0"``, ``"1"``, ...
    design : colide_core.data.design.Design, optional
        The conditions and targets in one object (validated once), instead of ``conditions``
        and ``targets`` (:func:`colide_core.data.design.resolve_design`).

    Returns
    -------
    pandas.DataFrame
        One row per condition, in the order the labels first appear, with columns
        ``condition`` (str), ``n`` (int rows), ``targets`` (the target names joined by ``", "``,
        ``""`` for none), ``baseline`` (bool) and one float column per node: ``(median_c(x_j) -
        median_b(x_j)) / sd_b(x_j)``, the shift of node j's median in condition c from its median
        in the baseline condition b, in units of the baseline's standard deviation (``ddof=0``);
        0 on the baseline's row; NaN where the baseline's standard deviation is 0.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D real finite numbers with at least 2 rows and columns
        (:func:`colide_core._validation.check_data`), or ``baseline`` is not one of the labels.
    ConditionsError
        (a ``ValueError``) For conditions or targets that cannot be used, or none given.
    InvalidParameterError
        For ``design`` together with ``conditions`` or ``targets``.

    Notes
    -----
    Medians and standard deviations with :func:`numpy.median` and :func:`numpy.std`. The median
    (not the mean) keeps the heavy tails of cytometry data from dominating the shift.
    """
    from colide_core._validation import check_data
    from colide_core.data.design import resolve_design
    from colide_core.exceptions import ConditionsError

    values, names = check_data(X)
    n, d = values.shape
    if node_names is not None:
        names = [str(x) for x in node_names]
        if len(names) != d:
            raise ValueError(f"node_names has {len(names)} names for {d} columns.")
    if design is None and conditions is None:
        raise ConditionsError("condition_summary needs the rows' conditions (conditions= or design=).",
                              "condition_length")
    design = resolve_design(design, conditions, targets, node_names=names, n_samples=n, n_nodes=d)
    if design is None:
        raise ConditionsError("condition_summary needs the rows' conditions; the design has none.", "condition_length")
    labels, codes, resolved = design.labels, design.codes, design.targets
    counts = np.bincount(codes, minlength=len(labels))
    if names is None:
        names = [str(j) for j in range(d)]
    if baseline is None:
        b = 0
    else:
        key = str(int(baseline)) if isinstance(baseline, (int, np.integer)) and not isinstance(baseline, bool) \
            else baseline
        if not isinstance(key, str) or key not in labels:
            raise ValueError(f"baseline {baseline!r} is not one of the condition labels "
                             f"({', '.join(repr(x) for x in labels[:8])}{', ...' if len(labels) > 8 else ''}).")
        b = labels.index(key)
    medians = np.array([np.median(values[codes == c], axis=0) for c in range(len(labels))])
    sd = values[codes == b].std(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(sd > 0, (medians - medians[b]) / np.where(sd > 0, sd, 1.0), np.nan)
    shift[b] = np.where(sd > 0, 0.0, np.nan)
    table = pd.DataFrame({
        "condition": list(labels),
        "n": counts.astype(int),
        "targets": [", ".join(names[j] for j in resolved[lab]) for lab in labels],
        "baseline": [c == b for c in range(len(labels))],
    })
    return pd.concat([table, pd.DataFrame(shift, columns=names)], axis=1)
