"""``solver="auto"``: the best optimum of CoLiDE's own score that the budget allows (issue 51).

The product has two optimizers of the same score. The fast solver (:mod:`._fast`) follows the
paper's central path and stops at a stationary point of the relaxed problem; CoLiDE-TOPO
(:mod:`._topo`, paper Appendix E) minimises the same score exactly for a topological order and
improves the order by swaps. Measured (``benchmarks/bench_optimum.py``, ``docs/optimum.md``),
TOPO started from the fast solution ends at a lower score on most simulated graphs, and that
lower score is a better graph. So the default does this:

1. **Candidates.** The cold start (the fast solver); a warm start the caller already has
   (``W_init``: the fit before new data, the neighbouring λ, scikit-learn's ``warm_start``);
   and, when the budget allows, TOPO's order search started from each of them.
2. **One objective** (:func:`dag_objective`): the CoLiDE score, eq. 3 (EV) or eq. 6 (NV), with
   ``lambda1 |W|_1`` (masked L1, required edges unpenalised), the conditions' masked likelihood
   when there are targets, and ``sigma`` at its closed-form optimum for ``W`` (eq. 5 / eq. 7).
   TOPO's reported score is this function at its W (tested to 1e-9).
3. **The lowest wins**, and the result records every candidate's objective and why TOPO ran
   or did not (:attr:`~colide_core.SolverResult.choice`).

The budget: an order search is expected to cost
:func:`~colide_core.solver._topo_cost.reference_search_seconds` (``2.5 d^2`` swap evaluations at a
cost measured once on the reference machine, ``docs/optimum.md``); the search runs when that fits
:data:`colide_core.defaults.AUTO_BUDGET` (or ``budget``), and stops after twice its share counted
in swap evaluations. Neither reads a clock, so a fit is the same on every machine and under any
load (a Reproduce command gives the app's graph). An explicit ``max_time`` is a wall-clock budget
and then decides. ``solver="fast"`` stays the fast solver alone, exactly.

Conventions: ``cov`` is ``X.T @ X / n`` of centred ``X`` of shape ``(n_samples, n_nodes)`` (or
the per-node form with intervention targets); ``W[i, j] != 0`` means i -> j.
"""
from __future__ import annotations

import math
import time
import warnings

import numpy as np

from colide_core import defaults
from colide_core.solver._common import ConvergenceWarning, SolverResult, loop_settings
from colide_core.solver._objective import residuals

__all__ = ["auto_solve", "dag_objective"]


def _problem(cov, variant, lambda1, sigma0=None, edge_mask=None, l1_mask=None):
    from colide_core.solver._topo import _INNER_TOL, _Problem

    return _Problem(cov, variant, lambda1, sigma0, edge_mask, l1_mask, _INNER_TOL)


def _as_dag(W, required_mask=None):
    """``W`` itself when it is a DAG, else the DAG left when each cycle loses its weakest edge
    (:func:`~colide_core.graph._dag.threshold_to_dag` at threshold 0). The fast solver's ``W`` is
    a DAG only up to ``h_ldet ~ 1e-8``: tiny weights in both directions of a pair lower the score
    a little, and a DAG-constrained objective must not count them."""
    from colide_core.graph._dag import threshold_to_dag

    return threshold_to_dag(W, 0.0, required=required_mask)


def _objective_of(prob, W):
    _, resid = residuals(W, prob.cov)
    sigma = prob.start_sigma(W)  # the closed-form optimum of sigma for this W (eq. 5 / eq. 7)
    if prob.node_w is not None:  # residuals() weighs node j's by w_j; the score takes them unweighted
        resid = resid / prob.node_w
    return float(prob.score(W, np.maximum(resid, 0.0), sigma))


def dag_objective(W, cov, *, variant=defaults.VARIANT, lambda1=defaults.LAMBDA1, sigma0=None, edge_mask=None,
                  l1_mask=None):
    """CoLiDE's score of ``W`` with ``sigma`` at its optimum: the one objective candidates are compared on.

    ``min over sigma >= sigma0`` of eq. 3 (EV) or eq. 6 (NV) plus ``lambda1 |W|_1``, without the
    acyclicity term (zero on a DAG; the fast solver's ``W`` is a DAG up to ``h_ldet ~ 1e-8``). With
    the per-node covariance of several conditions it is the masked score of ``docs/conditions.md``.
    The same value CoLiDE-TOPO reports as its ``objective`` for its ``W``.

    Parameters
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
        Weights, ``W[i, j] != 0`` meaning i -> j.
    cov : ndarray of shape (n_nodes, n_nodes) or NodeCovariance
        ``X.T @ X / n`` for centred ``X`` of shape ``(n_samples, n_nodes)``.
    variant : {"nv", "ev", "ls"}, default="nv"
    lambda1 : float, default=0.05
    sigma0 : float or ndarray, optional
        The noise floor (default as in the solvers).
    edge_mask, l1_mask : ndarray, optional
        As in the solvers: ``l1_mask`` multiplies ``lambda1`` per edge (0 for a required edge).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If shapes or parameters are invalid.
    FloatingPointError
        If ``cov`` is not finite or a node has zero variance.

    Examples
    --------
    >>> import numpy as np
    >>> cov = np.array([[1.0, 0.5], [0.5, 1.25]])     # x1 = 0.5 x0 + e, var(e) = 1
    >>> W = np.array([[0.0, 0.5], [0.0, 0.0]])
    >>> round(dag_objective(W, cov, variant="nv", lambda1=0.0), 12)  # sigma = (1, 1): (1/2 + 1/2) * 2
    2.0
    """
    prob = _problem(cov, variant, lambda1, sigma0, edge_mask, l1_mask)
    W = np.asarray(W, dtype=float)
    if W.shape != (prob.d, prob.d):
        raise ValueError(f"W must have shape {(prob.d, prob.d)}, got {W.shape}.")
    return _objective_of(prob, W)


def auto_solve(cov, settings=None, *, beta_1=defaults.BETA_1, beta_2=defaults.BETA_2, sigma0=None, W_init=None,
               callback=None, edge_mask=None, l1_mask=None, required_mask=None, precedence=None, init_order=None,
               budget=None, start="cold", fast_loop=None, **params):
    """The best optimum of the CoLiDE score among the known candidates, within a time budget.

    Same arguments and :class:`~colide_core.SolverResult` as the other entries of
    :data:`colide_core.SOLVERS`, plus the order search's ``precedence`` and ``init_order``.

    1. The fast solver from a cold start (``W = 0``): the candidate ``"fast"``.
    2. When ``W_init`` is given (a fit the caller already has), that point is a candidate too
       (``"warm"``, scored as it is: a refit never returns a worse point on the new data's
       objective than the fit it started from, when that fit is a DAG of these nodes).
    3. When the expected cost of an order search on the reference machine
       (:func:`~colide_core.solver._topo_cost.reference_search_seconds`, a function of the number
       of nodes: no clock) fits the budget (``budget`` seconds, else what is left of an explicit
       ``max_time``, else :data:`colide_core.defaults.AUTO_BUDGET`), CoLiDE-TOPO started
       from the fast solution (``"topo"``) and, with ``W_init``, from its order (``"topo-warm"``).
    4. The candidate with the lowest :func:`dag_objective` is returned.

    Parameters
    ----------
    cov : ndarray of shape (n_nodes, n_nodes) or NodeCovariance
        ``X.T @ X / n`` for centred ``X`` of shape ``(n_samples, n_nodes)``.
    settings : colide_core.settings.RunSettings, optional
        The checked run settings; with ``record_W=True`` the recorded trajectory is the fast
        solver's (the order search's swaps are summarised in ``choice``).
    W_init : ndarray of shape (n_nodes, n_nodes), optional
        A warm-start candidate (not modified).
    callback : callable, optional
        ``callback(stage, iteration, objective)``: the fast solver's checkpoints (stages
        ``0..K-1``), then the order searches' (stage ``K``). True stops; the best candidate so
        far is returned with ``stopped=True``.
    budget : float, optional
        Reference seconds the order searches may cost (default: see above); each search stops
        after twice its share, counted in swap evaluations.
    fast_loop : callable, optional
        The fast solver's loop (default :func:`~colide_core.solver._fast.fast_solve`; the JAX
        backend passes its device loop, ``colide_core.solver._jax.device_solver``).
    start : {"cold", "warm"}, default="cold"
        Where the fast solver starts: ``W = 0``, or ``W_init`` (the λ path's warm start, with its
        short schedule; ``W_init`` stays a candidate either way).
    beta_1, beta_2, sigma0, edge_mask, l1_mask, required_mask, precedence, init_order, **params
        As for :func:`~colide_core.solver._topo.topo_solve`.

    Returns
    -------
    SolverResult
        The winning candidate's record, with ``choice`` set: ``{"solver": name, "reason": text,
        "candidates": {name: objective}, "seconds": {name: wall seconds}, "estimate": expected
        reference seconds of one search or None, "search_converged": {name: bool}}``; ``fit_time`` covers every candidate.

    Raises
    ------
    ValueError, FloatingPointError
        As the fast solver and CoLiDE-TOPO.
    """
    from colide_core.solver._fast import fast_solve
    from colide_core.solver._topo import topo_solve
    from colide_core.solver._topo_cost import reference_evaluation_seconds, reference_search_seconds

    t0 = time.perf_counter()
    st = loop_settings(settings, params)
    prob = _problem(cov, st.variant, st.lambda1, sigma0, edge_mask, l1_mask)
    stopped = [False]

    def relay(*args):
        if callback is not None and callback(*args):
            stopped[0] = True
            return True
        return False

    runs, seconds = {}, {}
    t = time.perf_counter()
    if start not in ("cold", "warm"):
        raise ValueError(f"start must be 'cold' or 'warm', got {start!r}.")
    runs["fast"] = (fast_loop or fast_solve)(cov, st, beta_1=beta_1, beta_2=beta_2, sigma0=sigma0,
                              W_init=W_init if start == "warm" else None,
                              callback=relay if callback is not None else None, edge_mask=edge_mask,
                              l1_mask=l1_mask, required_mask=required_mask)
    seconds["fast"] = time.perf_counter() - t
    warm = None
    if W_init is not None:
        warm = np.array(W_init, dtype=float)
        if warm.shape != (prob.d, prob.d) or not np.all(np.isfinite(warm)):
            raise ValueError(f"W_init must be a finite {(prob.d, prob.d)} matrix.")

    estimate, reason = None, None
    d = prob.d
    n_searches = 2 if warm is not None else 1
    # The budget is in reference seconds (colide_core.solver._topo_cost.reference_search_seconds): the
    # decision and the bound are functions of the problem alone, never of a clock, so the same data
    # and settings give the same graph on every machine and under any load (issue 48's invariant;
    # a clock-based choice once gave the app the fast answer and the library the search's, on CI).
    # Only an explicit max_time (a wall-clock budget the caller asked for) reads the clock.
    if budget is not None:
        allowed = float(budget)
    elif st.max_time is not None:
        allowed = float(st.max_time) - (time.perf_counter() - t0)
    else:
        allowed = float(defaults.AUTO_BUDGET)
    if runs["fast"].stopped:
        reason = "the fast solve was stopped: no order search"
    elif st.variant not in ("ev", "nv", "ls"):
        reason = "no order search for this score"
    else:
        estimate = reference_search_seconds(d)
        if n_searches * estimate > allowed:
            reason = (f"an order search is expected to take about {estimate:.3g} s at {d} nodes, more than the "
                      f"{max(allowed, 0.0):.3g} s budget")
    if reason is None:
        reason = f"an order search is expected to take about {estimate:.3g} s at {d} nodes, within the budget"
        # a search that runs long stops at twice its share of the budget, counted in swap evaluations
        # (reference_evaluation_seconds), with the best order found so far (still a DAG, a candidate)
        cap = max(1, int(2.0 * allowed / n_searches / reference_evaluation_seconds(d)))
        starts = [("topo", runs["fast"].W)] + ([("topo-warm", warm)] if warm is not None else [])
        for name, W0 in starts:
            if stopped[0]:
                break
            left = None
            if st.max_time is not None:
                left = max(float(st.max_time) - (time.perf_counter() - t0), 1e-3)
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                runs[name] = topo_solve(cov, st.replace(max_time=left), beta_1=beta_1, beta_2=beta_2, sigma0=sigma0,
                                        W_init=W0, init_order=init_order if name == "topo" else None,
                                        callback=relay if callback is not None else None, edge_mask=edge_mask,
                                        l1_mask=l1_mask, precedence=precedence, required_mask=required_mask,
                                        start_threshold=st.threshold, max_evaluations=cap)
            seconds[name] = time.perf_counter() - t

    objectives = {name: _objective_of(prob, _as_dag(run.W, required_mask)) for name, run in runs.items()}
    if warm is not None:
        warm = _as_dag(warm, required_mask)
        objectives["warm"] = _objective_of(prob, warm)
    finite = {k: v for k, v in objectives.items() if math.isfinite(v)}
    best = min(finite, key=lambda k: (finite[k], k != "fast")) if finite else "fast"  # ties: the fast solver
    base = runs["fast"] if best == "warm" else runs[best]
    W = warm.copy() if best == "warm" else base.W
    sigma = prob.start_sigma(W) if best == "warm" else base.sigma
    choice = {"solver": best, "reason": reason, "candidates": objectives, "seconds": seconds,
              "estimate": estimate,
              # each search reached a local optimum over its swaps (False: stopped at the budget's end)
              "search_converged": {k: bool(r.converged) for k, r in runs.items() if k.startswith("topo")}}
    # the fast solver's checkpoints (and recorded W): the search's swaps are in ``choice``, so that
    # record_W=True changes no number of the fit
    hist = {k: list(v) for k, v in runs["fast"].history.items()}
    return SolverResult(
        W=W, sigma=sigma, n_iter=int(sum(r.n_iter for r in runs.values())),
        n_iter_per_stage=tuple(runs["fast"].n_iter_per_stage), history=hist,
        objective=float(objectives[best]) if best != "fast" else float(runs["fast"].objective),
        # the central path's flags, as its history and stage_converged (the search's are in choice)
        converged=bool(runs["fast"].converged), stopped=bool(stopped[0] or runs["fast"].stopped),
        stop_reason=runs["fast"].stop_reason or ("callback" if stopped[0] else None),
        lr_used=runs["fast"].lr_used, s_used=runs["fast"].s_used, fit_time=time.perf_counter() - t0,
        order=base.order if best.startswith("topo") else None, W_history=runs["fast"].W_history,
        stage_converged=runs["fast"].stage_converged, choice=choice)
