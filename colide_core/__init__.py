"""colide_core: CoLiDE (Concomitant Linear DAG Estimation) and the tools around it.

Pure numpy/scipy: this package never imports streamlit.

Conventions used everywhere in the package:

* data ``X`` has shape ``(n_samples, n_nodes)`` (the paper writes X as d x n);
* a weighted adjacency ``W`` has shape ``(n_nodes, n_nodes)`` and ``W[i, j] != 0`` means the edge i -> j;
* metrics take ``(B_true, B_est)`` in that order.
"""
from ._objective import h_ldet, score_ev, score_ls, score_nv, sigma_update, stage_objective
from ._common import ConvergenceWarning, SolverResult, progress_fraction
from ._solver import colide_solve
from ._estimator import SOLVERS, CoLiDE
from ._graph import is_dag, threshold_to_dag
from ._datasets import SACHS_NODES, load_sachs
from ._metrics import cpdag_from_dag, evaluate
from .stats import sufficient_stats
from .stability import bootstrap_edges, stability_selection
from .path import lambda_path
from .constraints import audit_constraints, resolve_constraints

# Submodules with their own namespaces (dask, causal-learn and sklearn are imported lazily
# inside them where they are heavy).
from . import baselines, checks, constraints, curves, executor, export, io, manifest, path, simulate, stability

__all__ = [
    # solver (paper eq. 3-7, Algorithm 1)
    "CoLiDE",
    "ConvergenceWarning",
    "SolverResult",
    "colide_solve",
    "h_ldet",
    "score_ev",
    "score_nv",
    "score_ls",
    "sigma_update",
    "progress_fraction",
    "stage_objective",
    "SOLVERS",
    # graphs, data and metrics
    "is_dag",
    "threshold_to_dag",
    "load_sachs",
    "SACHS_NODES",
    "evaluate",
    "cpdag_from_dag",
    "sufficient_stats",
    # trust the edges
    "bootstrap_edges",
    "stability_selection",
    "lambda_path",
    "resolve_constraints",
    "audit_constraints",
    # submodules
    "baselines",
    "checks",
    "constraints",
    "curves",
    "executor",
    "export",
    "io",
    "manifest",
    "path",
    "simulate",
    "stability",
]
