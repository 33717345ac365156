"""colide_core: CoLiDE (Concomitant Linear DAG Estimation) and the tools around it.

numpy/scipy at its heart: ``import colide_core`` loads no dashboard, drawing or cluster library
(streamlit, plotly, pyvis, matplotlib, jinja2, dask); those are imported where they are used.

Subpackages by role (``docs/architecture.md``): :mod:`~colide_core.solver` (objective, loops,
estimator, λ path), :mod:`~colide_core.graph` (DAG helpers, prior knowledge, graph formats),
:mod:`~colide_core.data` (reading, validation, datasets, simulation, transforms, statistics),
:mod:`~colide_core.evaluation` (metrics, curves, stability, baselines, model checks),
:mod:`~colide_core.render` (figures, drawings, HTML pages, the report) and :mod:`~colide_core.run`
(run manifests, the executor, the CLI).

Conventions used everywhere in the package:

* data ``X`` has shape ``(n_samples, n_nodes)`` (the paper writes X as d x n);
* a weighted adjacency ``W`` has shape ``(n_nodes, n_nodes)`` and ``W[i, j] != 0`` means the edge i -> j;
* metrics take ``(B_true, B_est)`` in that order.
"""
from .solver._objective import h_ldet, score_ev, score_ls, score_nv, sigma_update, stage_objective
from .solver._common import ConvergenceWarning, SolverResult, progress_fraction
from .solver._solver import colide_solve
from .solver._estimator import SOLVERS, CoLiDE
from .graph._dag import is_dag, threshold_to_dag
from .data._datasets import SACHS_NODES, load_sachs
from .evaluation._metrics import cpdag_from_dag, evaluate
from .data.stats import sufficient_stats
from .evaluation.stability import bootstrap_edges, stability_selection
from .solver.path import lambda_path
from .graph.constraints import audit_constraints, resolve_constraints

# Submodules under their historical short names (dask, causal-learn and sklearn are imported
# lazily inside them where they are heavy). The drawing modules (colide_core.render.*) are not
# imported here: they need the drawing libraries.
from .evaluation import baselines, checks, curves, stability
from .graph import constraints, export
from . import exceptions
from .data import io, simulate
from .run import executor, manifest
from .solver import path

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
