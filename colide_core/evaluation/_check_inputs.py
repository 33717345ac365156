"""The model checks' shared input handling: the data and the DAG, alpha, counts, the callback, the design.

Private to :mod:`colide_core.evaluation`: :mod:`~colide_core.evaluation.checks`,
:mod:`~colide_core.evaluation.residuals` and :mod:`~colide_core.evaluation.markov` check their
arguments here, with the same messages.
"""
from __future__ import annotations

import numpy as np

from colide_core.graph._dag import is_dag
from colide_core._params import InvalidParameterError, is_int, is_real
from colide_core._validation import check_adjacency, check_X


def _data_and_graph(X, A):
    """``(values, names, B)``: X as float64 (n, d) and the graph as a boolean DAG (d, d)."""
    values, names = check_X(X, min_samples=3)
    d = values.shape[1]
    B = check_adjacency(A, d, "A", what="adjacency matrix") != 0
    B = B.copy()
    np.fill_diagonal(B, False)
    if not is_dag(B):
        raise ValueError("A must be a DAG (no directed cycle): threshold the weights with "
                         "colide_core.threshold_to_dag first.")
    if names is None:
        names = [f"X{k}" for k in range(d)]
    return values, names, B


def _check_alpha(alpha):
    if not (is_real(alpha) and 0.0 < float(alpha) < 1.0):
        raise InvalidParameterError(f"alpha must be a number in (0, 1), got {alpha!r}.")
    return float(alpha)


def _check_count(value, name, low, high):
    if not (is_int(value) and low <= value <= high):
        raise InvalidParameterError(f"{name} must be an integer in [{low}, {high}], got {value!r}.")
    return int(value)


def _check_callback(callback):
    if callback is not None and not callable(callback):
        raise InvalidParameterError(f"callback must be callable or None, got {type(callback).__name__}.")


def _design_of_check(X, names, n, d, design=None, conditions=None, targets=None):
    """The design of a check, resolved once (:func:`colide_core.data.design.resolve_design`); None
    without conditions. Its node names are ``names``, the columns of the frame the check refits
    (``X0``, ``X1``, ... for an array ``X``, whose design may name its nodes otherwise). The model
    checks, the residual tests and :mod:`~colide_core.evaluation.interventions` resolve here."""
    import dataclasses

    import pandas as pd

    from colide_core.data.design import resolve_design

    named = design is None or isinstance(X, pd.DataFrame)
    design = resolve_design(design, conditions, targets, node_names=names if named else None, n_samples=n, n_nodes=d)
    if design is not None and names is not None and design.node_names != tuple(str(x) for x in names):
        design = dataclasses.replace(design, node_names=tuple(str(x) for x in names))  # same targets (indices)
    return design
