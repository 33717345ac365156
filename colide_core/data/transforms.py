"""Column transforms of a data matrix: log, asinh and standardise.

Flow- and mass-cytometry intensities are usually transformed before analysis. CoLiDE is **not**
scale-invariant: its score (paper Section 3) and its L1 penalty are in the units of the data,
so any transform changes which edges it finds. :data:`TRANSFORM_NOTES` says what each does.

Convention: ``X`` is ``(n_samples, n_nodes)`` (the paper writes d × n); a transform acts on each
column (node) separately and never mixes samples or nodes. The transformed matrix is a new
array or DataFrame: the caller's data are never modified.

A transform is described by a plain dict ``{"kind": ..., **parameters}`` (a *step*), the form
recorded in :attr:`dashboard.data.Dataset.meta` and in the run manifest's ``transform`` field
(:mod:`colide_core.run.manifest`), so a run on transformed data says how to redo the transform.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["TRANSFORMS", "ASINH_COFACTOR", "TRANSFORM_NOTES", "transform_columns", "transform_step",
           "check_steps", "describe_step"]

#: The transforms :func:`transform_columns` knows.
TRANSFORMS = ("log", "asinh", "standardize")

#: Default asinh cofactor: 5, the mass-cytometry (CyTOF) convention (Bendall et al., 2011);
#: fluorescence flow cytometry usually takes 150. On the bundled Sachs data (raw intensities, median
#: 14-437 per protein) a cofactor of 5 makes asinh close to log(2 x / 5) for all but the dimmest
#: cells.
ASINH_COFACTOR = 5.0

#: One line per transform: what it does to CoLiDE (which is not scale-invariant).
TRANSFORM_NOTES = {
    "log": "log(x) turns multiplicative effects into additive ones and shrinks the large intensities; "
           "CoLiDE then fits a linear SEM between log-intensities, a different model, so expect "
           "different edges (and noise scales in log units).",
    "asinh": "asinh(x / cofactor) is linear near 0 and logarithmic for x ≫ cofactor (it accepts zeros and "
             "negative values); like log it changes the model CoLiDE fits, and the cofactor sets where "
             "the switch happens, so it changes the edges too.",
    "standardize": "Centring and scaling every column to unit variance removes the variance order that "
                   "CoLiDE (not scale-invariant) can exploit: on Sachs, standardise-and-refit keeps only "
                   "1 of the 13 edges learned on raw units (docs/checks.md).",
}


def _check_cofactor(cofactor):
    if isinstance(cofactor, (bool, np.bool_)) or not isinstance(cofactor, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(cofactor)) or float(cofactor) <= 0:
        raise ValueError(f"cofactor must be a finite number > 0, got {cofactor!r}.")
    return float(cofactor)


def transform_step(kind, *, cofactor=None) -> dict:
    """The record of one transform (what the manifest and ``Dataset.meta`` store).

    Parameters
    ----------
    kind : {"log", "asinh", "standardize"}
        ``"standardise"`` is accepted as a spelling of ``"standardize"``.
    cofactor : float, optional
        For ``"asinh"`` only: a finite number > 0; default :data:`ASINH_COFACTOR` (5).

    Returns
    -------
    dict
        ``{"kind": "asinh", "cofactor": 5.0}``, ``{"kind": "log"}`` or ``{"kind": "standardize"}``.

    Raises
    ------
    ValueError
        For an unknown ``kind``, a bad ``cofactor``, or a ``cofactor`` given for another kind.
    """
    kind = "standardize" if kind == "standardise" else kind
    if not isinstance(kind, str) or kind not in TRANSFORMS:
        raise ValueError(f"transform must be one of {', '.join(TRANSFORMS)}, got {str(kind)[:40]!r}.")
    if kind == "asinh":
        return {"kind": "asinh", "cofactor": _check_cofactor(ASINH_COFACTOR if cofactor is None else cofactor)}
    if cofactor is not None:
        raise ValueError(f"cofactor applies to the asinh transform only, not to {kind!r}.")
    return {"kind": kind}


def check_steps(steps) -> list:
    """Validate a list of transform steps from an untrusted source (a manifest).

    Parameters
    ----------
    steps : list of dict or None
        Each ``{"kind": ..., "cofactor": ...}`` as made by :func:`transform_step`.

    Returns
    -------
    list of dict
        The normalised steps (``[]`` for None).

    Raises
    ------
    ValueError
        If ``steps`` is not a list of such dicts (unknown kinds or keys, bad cofactor); at most 10
        steps.
    """
    if steps is None:
        return []
    if not isinstance(steps, list) or len(steps) > 10:
        raise ValueError("transform must be a list of at most 10 steps.")
    out = []
    for step in steps:
        if not isinstance(step, dict) or not set(step) <= {"kind", "cofactor"}:
            raise ValueError("each transform step must be an object with 'kind' (and 'cofactor' for asinh).")
        out.append(transform_step(step.get("kind"), cofactor=step.get("cofactor")))
    return out


def describe_step(step) -> str:
    """A short text for a step: ``"log"``, ``"asinh(x/5)"``, ``"standardised"``.

    Parameters
    ----------
    step : dict
        From :func:`transform_step`.

    Returns
    -------
    str
    """
    if step["kind"] == "asinh":
        return f"asinh(x/{step['cofactor']:g})"
    return "standardised" if step["kind"] == "standardize" else "log"


def transform_columns(X, kind, *, cofactor=None):
    """Transform every column of ``X``: natural log, asinh(x / cofactor), or z-score.

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
        Finite numeric data, one column per node. Not modified.
    kind : {"log", "asinh", "standardize"}
        * ``"log"``: ``log(x)`` (natural log). Every value must be **strictly positive**: a zero or
          negative value is an error naming the columns, not silently shifted (``log1p`` would change
          the transform's meaning for small intensities); use ``"asinh"`` for such data.
        * ``"asinh"``: ``arcsinh(x / cofactor)``, the cytometry convention; any real value.
        * ``"standardize"`` (or ``"standardise"``): ``(x - mean) / std`` with the population
          standard deviation (ddof = 0), :func:`colide_core.data.simulate.standardize`.
    cofactor : float, optional
        For ``"asinh"``: finite and > 0; default :data:`ASINH_COFACTOR` = 5 (CyTOF; use 150 for
        fluorescence flow cytometry).

    Returns
    -------
    ndarray or pandas.DataFrame of shape (n_samples, n_nodes), float64
        A new object of the input's type (a DataFrame keeps its column names and index).

    Raises
    ------
    ValueError
        If ``X`` is not 2-D or holds NaN/Inf; for ``"log"`` when a column has a value <= 0 (the
        message names the columns and their minimum); for ``"standardize"`` when a column is
        constant; for an unknown ``kind`` or a bad ``cofactor``.

    Notes
    -----
    CoLiDE is not scale-invariant (:data:`TRANSFORM_NOTES`): fit the transformed data as a new
    dataset and record the step (:func:`transform_step`) with the run.
    """
    from colide_core.data.simulate import standardize

    step = transform_step(kind, cofactor=cofactor)
    frame = X if isinstance(X, pd.DataFrame) else None
    try:
        A = np.array(frame.to_numpy(dtype=np.float64) if frame is not None else X, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"X must be numeric: {exc}") from None
    if A.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_nodes), got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError("X contains NaN or Inf.")
    names = [str(c) for c in frame.columns] if frame is not None else [str(j) for j in range(A.shape[1])]
    if step["kind"] == "log":
        bad = np.flatnonzero((A <= 0).any(axis=0)) if A.size else np.array([], dtype=int)
        if bad.size:
            listed = ", ".join(f"{names[j]!r} (min {A[:, j].min():g})" for j in bad[:10])
            more = f" and {bad.size - 10} more" if bad.size > 10 else ""
            raise ValueError(f"log needs positive values; column(s) {listed}{more} have values <= 0. "
                             "Use asinh, which accepts zeros and negative values.")
        Z = np.log(A)
    elif step["kind"] == "asinh":
        Z = np.arcsinh(A / step["cofactor"])
    else:
        try:
            Z = standardize(A)
        except ValueError as exc:
            if "constant" in str(exc):
                const = [names[j] for j in np.flatnonzero(A.std(axis=0) == 0)]
                raise ValueError(f"cannot standardise constant column(s) {', '.join(map(repr, const[:10]))}.") from None
            raise
    if frame is not None:
        return pd.DataFrame(Z, index=frame.index.copy(), columns=list(frame.columns))
    return Z
