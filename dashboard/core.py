"""Display labels for the metrics of ``colide_core.evaluate``."""
from __future__ import annotations

__all__ = ["METRIC_LABELS"]

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

