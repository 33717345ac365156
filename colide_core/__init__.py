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
import importlib

#: Public name -> the module that defines it. Resolved on first use (PEP 562), so that
#: ``import colide_core`` (and ``python -m colide_core --help``) costs no scikit-learn,
#: causal-learn or numba import until a name is used.
_NAMES = {
    "h_ldet": "solver._objective", "score_ev": "solver._objective", "score_ls": "solver._objective",
    "score_nv": "solver._objective", "sigma_update": "solver._objective", "stage_objective": "solver._objective",
    "ConvergenceWarning": "exceptions", "SolverResult": "solver._common", "progress_fraction": "solver._common",
    "colide_solve": "solver._solver", "SOLVERS": "solver.registry", "CoLiDE": "solver._estimator",
    "is_dag": "graph._dag", "threshold_to_dag": "graph._dag", "classify_edges": "graph._dag",
    "SACHS_NODES": "data._datasets", "load_sachs": "data._datasets",
    "SACHS_ROWS": "data._datasets", "SACHS_TRUTHS": "data._datasets", "SachsData": "data._datasets",
    "cpdag_from_dag": "evaluation._metrics", "evaluate": "evaluation._metrics", "tetrad_metrics": "evaluation._metrics",
    "sufficient_stats": "data.stats",
    "bootstrap_edges": "evaluation.stability", "stability_selection": "evaluation.stability",
    "lambda_path": "solver.path",
    "audit_constraints": "graph.constraints", "resolve_constraints": "graph.constraints",
    "RunSettings": "settings",
    "ConditionStats": "data.conditions",
}
#: Submodules under their historical short names, and the subpackages. The drawing modules
#: (colide_core.render.*) are imported only when asked for: they need the drawing libraries.
_MODULES = {
    "baselines": "evaluation.baselines", "checks": "evaluation.checks", "curves": "evaluation.curves",
    "stability": "evaluation.stability", "constraints": "graph.constraints", "export": "graph.export",
    "io": "data.io", "simulate": "data.simulate", "executor": "run.executor", "manifest": "run.manifest",
    "path": "solver.path", "exceptions": "exceptions", "settings": "settings", "defaults": "defaults",
    "solver": "solver", "graph": "graph", "data": "data", "evaluation": "evaluation", "render": "render", "run": "run",
}


def __getattr__(name):
    if name in _NAMES:
        value = getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
    elif name in _MODULES:
        value = importlib.import_module(f"{__name__}.{_MODULES[name]}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # resolved once
    return value


def _lazy_submodules(package):
    """A module ``__getattr__`` (PEP 562) that imports ``package.<name>`` on first access.

    Parameters
    ----------
    package : str
        The subpackage's ``__name__``.

    Returns
    -------
    callable
        ``__getattr__(name)``: the submodule, or AttributeError when there is none (an import
        error inside an existing submodule is raised as it is).
    """
    def getattr_(name):
        try:
            return importlib.import_module(f"{package}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{package}.{name}":
                raise
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None

    return getattr_


def __dir__():
    return sorted(set(globals()) | set(_NAMES) | set(_MODULES))


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
    "RunSettings",
    # graphs, data and metrics
    "is_dag",
    "threshold_to_dag",
    "classify_edges",
    "load_sachs",
    "SACHS_NODES",
    "SACHS_ROWS",
    "SACHS_TRUTHS",
    "SachsData",
    "evaluate",
    "tetrad_metrics",
    "cpdag_from_dag",
    "sufficient_stats",
    "ConditionStats",
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
    "exceptions",
    "export",
    "io",
    "manifest",
    "path",
    "simulate",
    "stability",
]
