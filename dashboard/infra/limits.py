"""How large a dataset this server takes: the upload's column limit, the node limit (the CPU's,
or twice it where a GPU is present), the device a fit of that size runs on, and the message that
says why a dataset is too large; and the one reader of the server's limits in seconds from the
environment (:func:`env_seconds`).

:mod:`dashboard.data` reads uploads through these limits and re-exports the names (their import
path on the pages).
"""
from __future__ import annotations

import os

import numpy as np

__all__ = ["UPLOAD_MAX_COLUMNS", "node_limit", "cpu_node_limit", "fit_device", "with_fit_device", "too_large_message",
           "env_seconds"]


def env_seconds(name: str, default: float, high: float) -> float:
    """Seconds from the environment variable ``name``, clipped to ``[0, high]``.

    Parameters
    ----------
    name : str
        The variable (``"COLIDE_SESSION_GRACE_S"``).
    default : float
        Used when it is unset, empty, not a number or NaN.
    high : float
        The largest value taken.

    Returns
    -------
    float

    Examples
    --------
    >>> os.environ["COLIDE_DOCTEST_S"] = "1e9"
    >>> env_seconds("COLIDE_DOCTEST_S", 30.0, 3600.0), env_seconds("COLIDE_UNSET_S", 30.0, 3600.0)
    (3600.0, 30.0)
    >>> del os.environ["COLIDE_DOCTEST_S"]
    """
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        value = default
    return min(float(high), max(0.0, value)) if value == value else default


#: Most columns an uploaded file may have, counted from its header before it is parsed: twice the
#: dashboard's node limit (``colide_core.data.io.INTERACTIVE_MAX_NODES``, 200), leaving room for
#: text or ID columns the user drops. Where a GPU is present, a wider file is read again with twice
#: its limit (:func:`node_limit`, 2,000 nodes).
UPLOAD_MAX_COLUMNS = 400



def _cpu_limit() -> int:
    from colide_core.data.io import INTERACTIVE_MAX_NODES

    return INTERACTIVE_MAX_NODES


def cpu_node_limit() -> int:
    """The most nodes the dashboard fits on the CPU: :data:`colide_core.data.io.INTERACTIVE_MAX_NODES`
    (200). Data above it run their fits on the GPU (:func:`fit_device`); the Compare page, whose other
    methods are CPU code, stops there.

    Returns
    -------
    int
    """
    return _cpu_limit()


def node_limit(n_nodes=None) -> int:
    """The most nodes the dashboard accepts for data of ``n_nodes`` nodes (issue 33).

    :data:`colide_core.data.io.INTERACTIVE_MAX_NODES` (200) without a GPU;
    :data:`colide_core.defaults.MAX_NODES` (2,000) when this process can run ``device="gpu"``
    (:func:`colide_core.solver._jax.gpu_present`). The GPU is probed only when the answer
    depends on it (``n_nodes`` above 200, or not given), once per process: a page with
    smaller data never imports JAX.

    Parameters
    ----------
    n_nodes : int, optional
        The size at hand.

    Returns
    -------
    int
    """
    cpu = _cpu_limit()
    if n_nodes is not None and int(n_nodes) <= cpu:
        return cpu
    from colide_core import defaults
    from colide_core.solver.cost import gpu_present

    return defaults.MAX_NODES if gpu_present() else cpu


def fit_device(n_nodes) -> dict:
    """The ``device`` override of the dashboard's fits on ``n_nodes`` nodes: the one rule.

    Above :data:`colide_core.data.io.INTERACTIVE_MAX_NODES` such data were only accepted because a
    GPU is present (:func:`node_limit`): their fits run there (``device="auto"``: the GPU, which
    :data:`colide_core.defaults.AUTO_GPU_MIN_NODES`, the same 200, lets "auto" choose at that size,
    and the CPU solvers for what the device cannot run, TOPO and several conditions, instead of a
    refusal the page's user could not act on; they are never live). Smaller data keep the
    default device (the CPU solvers). Every page's fits go through it
    (:func:`with_fit_device`): Learn's Run, live fits and prefetch, Playback's recording, Check's
    checks and λ path, Explorer's λ path, Edge confidence's bootstrap and stability selection,
    Predict's intervals, ranking and refit. The device is the server's choice: it never comes
    from a URL or a manifest (:mod:`dashboard.infra.urlstate`).

    Parameters
    ----------
    n_nodes : int

    Returns
    -------
    dict
        ``{"device": "auto"}`` above the CPU limit, else ``{}``.
    """
    return {"device": "auto"} if int(n_nodes) > _cpu_limit() else {}


def with_fit_device(params, n_nodes):
    """``params`` with their ``device`` set by :func:`fit_device` for data of ``n_nodes`` nodes.

    Any ``device`` already in ``params`` (a fit made elsewhere, a stale session value) is replaced:
    above the CPU limit by ``"auto"``, at or below it by nothing (the default, the CPU solvers). The
    device is then part of every cache key built from the result (a device's rounding differs from
    the CPU's, so their fits are kept apart).

    Parameters
    ----------
    params : dict or tuple of (str, object)
        ``colide_core.CoLiDE`` keyword arguments: the solver overrides (a dict), or a
        :func:`dashboard.fitting.solver_params` tuple (sorted pairs).
    n_nodes : int
        Nodes of the data the fits run on.

    Returns
    -------
    dict or tuple
        Of the same kind as ``params`` (a tuple stays sorted).

    Examples
    --------
    >>> with_fit_device({"lambda1": 0.1, "device": "gpu"}, 11)
    {'lambda1': 0.1}
    >>> with_fit_device((("lambda1", 0.1), ("variant", "nv")), 11)
    (('lambda1', 0.1), ('variant', 'nv'))
    """
    kept = {k: v for k, v in dict(params or {}).items() if k != "device"}
    kept.update(fit_device(n_nodes))
    return tuple(sorted(kept.items())) if isinstance(params, tuple) else kept


def too_large_message(n_nodes, variant="nv", *, at_least=False) -> str:
    """Why data of ``n_nodes`` nodes are refused here, with what a fit would cost on this CPU.

    The cost is :func:`colide_core.solver.cost.estimate_fit_cost`: one step of the fast solver
    measured on this machine (at 200 nodes, scaled by the O(d^3) law, both said in the text),
    times the steps fast fits were measured to take and the schedule's whole budget.

    Parameters
    ----------
    n_nodes : int
        Nodes of the refused data (> the limit).
    variant : {"ev", "nv"}, default="nv"
        The noise model whose step is measured.
    at_least : bool, default=False
        ``n_nodes`` is a lower bound (a file refused from its header, before its numeric
        columns are known): the text says "at least".

    Returns
    -------
    str
        Plain text (no markdown, no user string).
    """
    from colide_core import defaults
    from colide_core.solver.cost import estimate_fit_cost
    from dashboard.infra.text import fmt_seconds

    d = int(n_nodes)
    cpu = _cpu_limit()
    head = (f"Without a GPU the dashboard fits up to {cpu} nodes; a GPU (JAX with CUDA) raises the limit to "
            f"{defaults.MAX_NODES:,} nodes.")
    try:
        est = estimate_fit_cost(d, variant)
    except (ValueError, FloatingPointError, np.linalg.LinAlgError):
        return head
    how = (f"one step of the fast solver measured now at {est.probe_nodes} nodes took "
           f"{fmt_seconds(est.probe_step_seconds)}, scaled to {d:,} nodes by the O(d³) law (×{est.scale:.3g})"
           if est.extrapolated else
           f"one step of the fast solver measured now at {d:,} nodes took {fmt_seconds(est.step_seconds)}")
    size, about = (f"at least {d:,}", "at least") if at_least else (f"{d:,}", "about")
    return (f"{head} A CoLiDE-{variant.upper()} fit of {size} nodes would take {about} {fmt_seconds(est.low)} to "
            f"{fmt_seconds(est.high)} on this CPU ({est.steps[0]:,}–{est.steps[1]:,} steps, the range measured for "
            f"fast fits; up to {fmt_seconds(est.budget_seconds)} for the schedule's {est.budget_steps:,} steps): "
            f"{how}.")
