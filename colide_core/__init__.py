"""colide_core: CoLiDE (Concomitant Linear DAG Estimation) and the tools around it.

Pure numpy/scipy: this package never imports streamlit.

Conventions used everywhere in the package:

* data ``X`` has shape ``(n_samples, n_nodes)`` (the paper writes X as d x n);
* a weighted adjacency ``W`` has shape ``(n_nodes, n_nodes)`` and ``W[i, j] != 0`` means the edge i -> j;
* metrics take ``(B_true, B_est)`` in that order.
"""
from ._solver import (
    CoLiDE,
    ConvergenceWarning,
    SolverResult,
    colide_solve,
    h_ldet,
    score_ev,
    score_ls,
    score_nv,
    sigma_update,
)
from ._graph import is_dag, threshold_to_dag
from ._datasets import load_sachs, SACHS_NODES
from ._metrics import evaluate
from . import baselines, simulate
from . import io
from .stats import sufficient_stats
from . import export, manifest, executor

__all__ = [
    "CoLiDE",
    "ConvergenceWarning",
    "SolverResult",
    "sigma_update",
    "colide_solve",
    "h_ldet",
    "score_ev",
    "score_nv",
    "score_ls",
    "is_dag",
    "threshold_to_dag",
    "load_sachs",
    "SACHS_NODES",
    "evaluate", "simulate", "baselines",
    "sufficient_stats", "export", "manifest", "executor",
]
