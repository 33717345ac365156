"""How large a dataset this server takes: the upload's column limit, the node limit (the CPU's,
or twice it where a GPU is present), the device a fit of that size runs on, and the message that
says why a dataset is too large; and the one reader of the server's limits in seconds from the
environment (:func:`env_seconds`).

:mod:`dashboard.data` reads uploads through these limits and re-exports the names (their import
path on the pages).
"""
from __future__ import annotations

import os

__all__ = ["UPLOAD_MAX_COLUMNS", "node_limit", "fit_device", "too_large_message", "env_seconds"]


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
    """The ``device`` override of the dashboard's fits on ``n_nodes`` nodes.

    Above :data:`colide_core.data.io.INTERACTIVE_MAX_NODES` such data were only accepted because a
    GPU is present (:func:`node_limit`): their fits run there (``device="gpu"``, on Run; they
    are never live). Smaller data keep the default device (the CPU solvers).

    Parameters
    ----------
    n_nodes : int

    Returns
    -------
    dict
        ``{"device": "gpu"}`` above the CPU limit, else ``{}``.
    """
    return {"device": "gpu"} if int(n_nodes) > _cpu_limit() else {}


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
