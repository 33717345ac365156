"""Fingerprints of the data a fit saw: what a manifest checks new data against.

:func:`data_fingerprint` is a SHA-256 of the data's values, shape and column names
(:func:`colide_core.hashing.digest`); :func:`stats_fingerprint` the same for the sufficient
statistics of :meth:`colide_core.CoLiDE.fit_from_stats`. :mod:`colide_core.run.manifest` records
them and re-exports these names (their public import path).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from colide_core.exceptions import ManifestError
from colide_core.hashing import digest

__all__ = ["data_fingerprint", "stats_fingerprint"]


def data_fingerprint(X):
    """SHA-256 fingerprint, shape and column names of a data matrix.

    Parameters
    ----------
    X : array-like or pandas.DataFrame, shape (n_samples, n_nodes)
        Numeric data (rows are samples, columns nodes), as passed to ``fit``.

    Returns
    -------
    dict
        ``{"kind": "data", "sha256": hex str, "n_samples": int, "n_nodes": int,
        "columns": list of str or None}``. The hash covers the values as
        little-endian float64 in row-major order, the shape and the column
        names, so renaming or reordering columns changes it
        (:func:`colide_core.hashing.digest`: the names are JSON-escaped, never joined with a
        separator, so no two different tables share a fingerprint).

    Raises
    ------
    ManifestError
        If ``X`` is not a numeric 2-D matrix.
    """
    columns = None
    if isinstance(X, pd.DataFrame):
        columns = [str(c) for c in X.columns]
        try:
            X = X.to_numpy(dtype=float)
        except (TypeError, ValueError) as exc:
            raise ManifestError(f"cannot fingerprint non-numeric data: {exc}") from None
    try:
        A = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ManifestError(f"cannot fingerprint non-numeric data: {exc}") from None
    if A.ndim != 2:
        raise ManifestError(f"data must be 2-D (n_samples, n_nodes), got shape {A.shape}")
    n, d = A.shape
    return {"kind": "data", "sha256": digest("colide-data/1", [n, d, columns], [A]),
            "n_samples": int(n), "n_nodes": int(d), "columns": columns}


def stats_fingerprint(cov, n, node_names=None):
    """Fingerprint of sufficient statistics ``(cov, n)`` (for ``fit_from_stats``).

    Parameters
    ----------
    cov : array-like, shape (n_nodes, n_nodes)
        The 1/n covariance.
    n : int
        Number of samples behind ``cov``.
    node_names : sequence of str, optional

    Returns
    -------
    dict
        ``{"kind": "stats", "sha256", "n_samples", "n_nodes", "columns"}``.
    """
    C = np.asarray(cov, dtype=float)
    if C.ndim != 2 or C.shape[0] != C.shape[1]:
        raise ManifestError(f"cov must be square, got shape {C.shape}")
    columns = None if node_names is None else [str(c) for c in node_names]
    return {"kind": "stats", "sha256": digest("colide-stats/1", [int(n), columns], [C]),
            "n_samples": int(n), "n_nodes": int(C.shape[0]), "columns": columns}
