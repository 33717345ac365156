"""Access to the ``colide_core`` functions the pages use, resolved at call time.

Resolving at call time (``colide_core.evaluate`` rather than ``from colide_core import evaluate``)
keeps the pages importable while parts of the core are still being written, and lets tests
monkeypatch the core.
"""
from __future__ import annotations

import colide_core

__all__ = ["evaluate", "threshold_to_dag", "METRIC_LABELS"]

#: evaluate() key -> display label, in display order.
METRIC_LABELS = {
    "shd": "SHD",
    "shd_cpdag": "SHD-C",
    "sid": "SID",
    "tpr": "TPR",
    "fdr": "FDR",
    "fpr": "FPR",
    "nnz": "NNZ",
    "shd_norm": "SHD / d",
    "shd_cpdag_norm": "SHD-C / d",
    "sid_norm": "SID / d",
    "sigma_rel_err": "σ relative error",
}


def evaluate(B_true, W_est, **kwargs) -> dict:
    """``colide_core.evaluate`` (see its docstring); ``W_est[i, j] != 0`` means i -> j."""
    return colide_core.evaluate(B_true, W_est, **kwargs)


def threshold_to_dag(W, threshold):
    """``colide_core.threshold_to_dag``: zero ``|w| <= threshold`` and break cycles."""
    return colide_core.threshold_to_dag(W, threshold)
