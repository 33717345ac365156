"""What a CoLiDE-TOPO fit will cost, measured on the data at hand before a slow fit (issue 32).

Split from :mod:`colide_core.solver._topo` (issue 47: no product module above 900 lines);
``colide_core.solver._topo`` and ``colide_core.solver.cost`` re-export both names.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from colide_core.solver._common import loop_settings
from colide_core.solver._topo import _INNER_TOL, _Problem, _evaluate_swap

__all__ = ["TopoCostEstimate", "estimate_topo_cost", "reference_evaluation_seconds", "reference_search_seconds"]

# --------------------------------------------------------------------------------------
# Cost estimate (issue 32): measured on the data at hand, before a slow fit
# --------------------------------------------------------------------------------------
#: Swap evaluations per search, as a multiple of ``n_nodes ** 2``: measured by
#: ``benchmarks/bench_topo.py`` at d = 50 from 1.3 (ER4 equal variance, EV) to 4.5 (SF4, EV);
#: the estimate uses the middle and reports the measured range as ``low`` / ``high``.
_EVALS_PER_D2 = (1.0, 2.5, 5.0)
#: The search's node cache skips about 60% of the node solves of a d = 50 search (measured:
#: 25,632 distinct of 63,493; docs/topo.md); the uncached probes' mean cost is scaled by this.
_CACHE_FACTOR = 0.5
#: One swap evaluation on the reference machine, in seconds: ``a + b n_nodes ** 2``. Measured with
#: :func:`estimate_topo_cost` (32 probes, the cache factor applied) on this project's 2-core machine,
#: one BLAS thread, ER2 / ER4, EV and NV, d = 10 to 120: from ``3.6e-5 + ...`` (d = 10) to
#: ``2.5e-7 d^2`` (ER4, d = 80); the figures are the upper side of that table (docs/optimum.md,
#: "A budget that does not depend on the clock").
REFERENCE_EVALUATION_SECONDS = (5e-5, 3e-7)


def reference_evaluation_seconds(n_nodes) -> float:
    """Seconds one swap evaluation costs on the reference machine (a deterministic cost model).

    ``solver="auto"`` decides whether to run the order search, and bounds it, with this model
    rather than a clock, so that the same data and settings give the same graph on every machine,
    in every process, under any load (issue 48's invariant: a Reproduce command gives the graph
    the app showed).

    Parameters
    ----------
    n_nodes : int
        Number of nodes d (>= 1).

    Returns
    -------
    float
        ``a + b d^2`` with ``(a, b) =`` :data:`REFERENCE_EVALUATION_SECONDS`.

    Raises
    ------
    ValueError
        If ``n_nodes`` is not an integer >= 1.

    Examples
    --------
    >>> round(reference_evaluation_seconds(50), 6)
    0.0008
    """
    if isinstance(n_nodes, bool) or not isinstance(n_nodes, (int, np.integer)) or n_nodes < 1:
        raise ValueError(f"n_nodes must be an integer >= 1, got {n_nodes!r}.")
    a, b = REFERENCE_EVALUATION_SECONDS
    return float(a + b * int(n_nodes) ** 2)


def reference_search_seconds(n_nodes) -> float:
    """Expected seconds of one order search on the reference machine: ``2.5 d^2`` evaluations
    (the middle of the measured ``1 .. 5 d^2``, :func:`estimate_topo_cost`) times
    :func:`reference_evaluation_seconds`, whose argument (the number of nodes d) and
    ``ValueError`` it shares; returns a float.

    Examples
    --------
    >>> round(reference_search_seconds(50), 3)  # 6,250 evaluations of 0.8 ms
    5.0
    """
    return float(_EVALS_PER_D2[1] * int(n_nodes) ** 2 * reference_evaluation_seconds(n_nodes))


@dataclass(frozen=True)
class TopoCostEstimate:
    """What a CoLiDE-TOPO fit is expected to cost, from a measurement on the data at hand.

    Attributes
    ----------
    seconds : float
        Expected wall seconds of the fit: ``start_seconds + full_solve + evaluations *
        seconds_per_evaluation``.
    low, high : float
        The same with the fewest / most evaluations measured per ``n_nodes ** 2`` (the search's
        length depends on the data; see ``docs/topo.md``, "Cost estimate").
    seconds_per_evaluation : float
        Measured: wall seconds of one swap evaluation (node solves, EV's sigma, score and
        Python overhead) on this machine and data: the probes' mean times 0.5 (the cache).
    evaluations : float
        Expected number of swap evaluations (``2.5 n_nodes ** 2``, at most ``50 * s_large``).
    full_solve_seconds : float
        Measured: one exact solve of every node (the search's first order).
    """

    seconds: float
    low: float
    high: float
    seconds_per_evaluation: float
    evaluations: float
    full_solve_seconds: float


def estimate_topo_cost(cov, settings=None, *, probes=32, start_seconds=0.0, sigma0=None, edge_mask=None,
                       l1_mask=None, **params):
    """Predict the wall time of a CoLiDE-TOPO fit by timing a few swap evaluations on ``cov``.

    Solves one order exactly (nodes sorted by variance: a cheap start) and times ``probes``
    evaluations of random swaps (fixed seed; the search's candidates span the whole order),
    without the node cache; their mean, times 0.5 (the share of node solves the search's cache
    leaves, measured), is the cost of one evaluation. Checked against whole searches at d = 50
    (docs/topo.md, "Cost estimate"): within 15-35% of the measured seconds per evaluation.
    The expected number
    of evaluations is ``2.5 n_nodes ** 2`` (range ``1 .. 5 n_nodes ** 2``; measured at d = 50
    by ``benchmarks/bench_topo.py``: 1.3 to 4.5), capped at ``50 * s_large``. Costs about
    ``probes + 1`` evaluations (milliseconds at d = 50), far less than a fit.

    Parameters
    ----------
    cov : ndarray of shape (n_nodes, n_nodes) or NodeCovariance
        ``X.T @ X / n`` for centred data ``X`` of shape ``(n_samples, n_nodes)``, or the per-node
        form with known intervention targets (as for :func:`topo_solve`).
    settings : colide_core.settings.RunSettings, optional
        As for :func:`topo_solve` (reads ``variant``, ``lambda1``, ``topo_sizes``).
    probes : int, default=32
        Swap evaluations to time (1..1000).
    start_seconds : float, default=0.0
        Seconds of the continuous start (the fast solver's fit on the same data), when the
        caller knows or has estimated it; added to every figure.
    sigma0, edge_mask, l1_mask
        As for :func:`topo_solve`.
    **params
        Run settings by name, applied over ``settings``.

    Returns
    -------
    TopoCostEstimate

    Raises
    ------
    ValueError
        For invalid parameters or a ``probes`` outside 1..1000.
    FloatingPointError
        If ``cov`` is not finite or a node has zero variance.
    """
    if isinstance(probes, bool) or not isinstance(probes, (int, np.integer)) or not 1 <= probes <= 1000:
        raise ValueError(f"probes must be an integer in 1..1000, got {probes!r}.")
    start_seconds = float(start_seconds)
    if not (math.isfinite(start_seconds) and start_seconds >= 0):
        raise ValueError(f"start_seconds must be a finite number >= 0, got {start_seconds!r}.")
    st = loop_settings(settings, params)
    prob = _Problem(cov, st.variant, st.lambda1, sigma0, edge_mask, l1_mask, _INNER_TOL)
    prob.enable_cache(0)
    d = prob.d
    order = np.argsort(prob.diag, kind="stable").astype(np.int64)
    W0 = np.zeros((d, d))
    t0 = time.perf_counter()
    fit = prob.solve(order, W0, prob.start_sigma(W0))
    full = time.perf_counter() - t0
    rng = np.random.default_rng(0)  # fixed probes: the same estimate for the same data
    times = []
    for _ in range(int(probes)):
        a, b = np.sort(rng.choice(d, size=2, replace=False))
        t0 = time.perf_counter()
        _evaluate_swap(prob, fit, int(a), int(b))
        times.append(time.perf_counter() - t0)
    per = float(np.mean(times)) * _CACHE_FACTOR
    cap = 50.0 * st.topo_sizes[-1]
    lo_e, mid_e, hi_e = (min(k * d * d, cap) for k in _EVALS_PER_D2)

    def total(evals):
        return start_seconds + full + evals * per

    return TopoCostEstimate(seconds=total(mid_e), low=total(lo_e), high=total(hi_e), seconds_per_evaluation=per,
                            evaluations=mid_e, full_solve_seconds=full)
