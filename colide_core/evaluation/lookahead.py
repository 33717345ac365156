"""Which experiment next, by looking ahead: simulate each experiment, refit, and score the change.

:func:`colide_core.evaluation.planning.rank_interventions` counts, on the bootstrap's graphs, the
edges an intervention would orient. This module answers the same question by trying the
experiments: :func:`lookahead_interventions` draws SEMs from a bootstrap of the fit (each resample's
thresholded weights, with its noise variances), simulates from each one the experiment "intervene
on t" (``n_rows`` rows of a hard intervention, 500 by default), refits with the target known,
warm-started from the fit to all the rows, and scores the drop in SHD against the SEM that
generated the rows. The refit is :func:`colide_core.evaluation.experiment.run_experiment`, the
one "simulate the experiment and refit" of the package.

Source: the DAG bootstrap as an approximate posterior over SEMs, from which each candidate
experiment is simulated and scored by the expected utility of its outcome, is Agrawal, Squires,
Yang, Shanmugam and Uhler (AISTATS 2019), "ABCD-Strategy: Budgeted Experimental Design for
Targeted Causal Structure Discovery"; their utility is a mutual information computed by
reweighting the posterior, ours the expected SHD gain of the refit (the learner the page runs),
as the issue asks. Its cost is fixed before it starts: :func:`lookahead_work` is the number of
fits. Measurements: ``docs/planning.md`` and ``benchmarks/results/planning_lookahead.md``.

Conventions: data ``X`` has shape ``(n_samples, n_nodes)`` (the paper writes d x n);
``W[i, j] != 0`` means i -> j. This module never prints; progress goes through
``callback(done, total)``.
"""
from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
from sklearn.base import clone

from colide_core import defaults
from colide_core._params import InvalidParameterError, is_int
from colide_core.exceptions import ExperimentStopped

__all__ = ["LOOKAHEAD_SCORES", "LOOKAHEAD_SEMS", "lookahead_interventions", "lookahead_work"]

#: What :func:`lookahead_interventions` ranks by, the default first.
LOOKAHEAD_SCORES = ("gain", "change")
#: Where its SEMs come from, the default first.
LOOKAHEAD_SEMS = ("bootstrap", "point")

_N_SEMS = 4
_N_ROWS = 500


def _check_count(value, name, low, high):
    if not is_int(value) or not low <= int(value) <= high:
        raise InvalidParameterError(f"{name} must be an integer in [{low:,}, {high:,}], got {value!r:.60}.")
    return int(value)


def lookahead_work(n_candidates, *, n_sems=_N_SEMS, sems=LOOKAHEAD_SEMS[0]) -> int:
    """The fits :func:`lookahead_interventions` makes: its cost, known before it starts.

    Parameters
    ----------
    n_candidates : int
        The candidate targets (``len(candidates)``, or the number of nodes), at least 1.
    n_sems : int, default=4
        SEMs each candidate is simulated from.
    sems : {"bootstrap", "point"}, default="bootstrap"
        "bootstrap" refits ``n_sems`` resamples first to get the SEMs; "point" does not.

    Returns
    -------
    int
        ``1 + n_sems + n_candidates * n_sems`` with the bootstrap (the fit to all the rows, the
        resamples, one refit per candidate and SEM), ``1 + n_candidates * n_sems`` without. Each
        refit is on the data plus ``n_rows`` rows; multiply by the measured time of one fit for
        an estimate in seconds.

    Raises
    ------
    InvalidParameterError
        For counts that are not positive integers (``n_sems`` at most
        ``colide_core.defaults.MAX_RESAMPLES``) or an unknown ``sems``.

    Examples
    --------
    >>> lookahead_work(10), lookahead_work(10, n_sems=3, sems="point")
    (45, 31)
    """
    n_candidates = _check_count(n_candidates, "n_candidates", 1, 10**9)
    n_sems = _check_count(n_sems, "n_sems", 1, defaults.MAX_RESAMPLES)
    if sems not in LOOKAHEAD_SEMS:
        raise InvalidParameterError(f"sems must be one of {LOOKAHEAD_SEMS}, got {sems!r:.60}.")
    return 1 + (n_sems if sems == "bootstrap" else 0) + n_candidates * n_sems


def _noise_variances(sigma, values, W):
    """The SEM's noise variances (squared data units): the fit's ``sigma`` squared when it has one
    (NV: one per node; EV: one for all), else the residual variances of ``values`` under ``W``."""
    d = W.shape[0]
    if sigma is not None:
        s = np.asarray(sigma, dtype=float)
        if s.size in (1, d) and np.all(np.isfinite(s)) and np.all(s > 0):
            return np.broadcast_to(s.reshape(-1) ** 2, (d,)).copy()
    var = np.var(values - values @ W, axis=0)
    return np.maximum(var, 1e-12)


def lookahead_interventions(X, *, variant=defaults.VARIANT, conditions=None, targets=None, candidates=None,
                            n_sems=_N_SEMS, n_rows=_N_ROWS, sems=LOOKAHEAD_SEMS[0], score=LOOKAHEAD_SCORES[0],
                            estimator=None, random_state=None, callback=None, design=None) -> pd.DataFrame:
    """Rank single-node interventions by simulating each one and refitting (a look-ahead).

    For every SEM ``b`` (a bootstrap refit's thresholded weights ``W_b``, its noise variances
    and the data's intercepts under it) and every candidate ``t``:
    :func:`colide_core.evaluation.experiment.run_experiment` draws ``n_rows`` rows of a hard
    intervention on ``t`` from ``W_b``, appends them to ``X`` as a new condition targeting ``t``
    and refits the estimator, warm-started from the fit to all the rows (``W_init``). The draw
    scores

    * ``gain``: ``SHD(G_b, A) - SHD(G_b, A_t,b)``, the drop in SHD against the graph that generated
      the rows (``A`` the fit to the data, ``A_t,b`` the refit; a reversed edge costs 1): what the
      experiment would fix if ``G_b`` were the truth;
    * ``change``: ``SHD(A, A_t,b)``, how much the experiment moves the graph.

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
        The data so far (the paper writes d x n); finite numbers, at least 4 rows. Never modified.
    variant : {"ev", "nv"}, default="nv"
        The CoLiDE variant of the default estimator (ignored when ``estimator`` is given).
    conditions, targets, design
        The data's conditions and targets, as :func:`~colide_core.evaluation.planning.rank_interventions`
        takes them (the bootstrap resamples within conditions; every fit uses the design).
    candidates : sequence of nodes, optional
        The nodes one may intervene on (names or indices); default every node.
    n_sems : int, default=4
        SEMs to simulate each candidate from: bootstrap refits (``sems="bootstrap"``), or draws
        from the fit's own SEM (``sems="point"``), in ``[1, colide_core.defaults.MAX_RESAMPLES]``.
    n_rows : int, default=500
        Rows of each simulated experiment, in ``[1, 10**6]``.
    sems : {"bootstrap", "point"}, default="bootstrap"
        Where the SEMs come from. With "point" every draw comes from the fit itself, so ``gain``
        is ``-change`` (the fit is its own truth): rank by ``change`` there.
    score : {"gain", "change"}, default="gain"
        The column the ranking sorts by (mean over the SEMs; both are returned).
    estimator : scikit-learn estimator, optional
        Default ``CoLiDE(variant)``; as in :func:`~colide_core.evaluation.experiment.run_experiment`
        (with ``W_`` and a ``fit(..., W_init=, callback=)`` for the warm start and Stop). Cloned,
        never modified.
    random_state : None, int, SeedSequence or Generator
        Seeds the bootstrap and every simulated experiment (one child of a SeedSequence per SEM
        and candidate): the same seed gives the same ranking, stopped or not at the same point.
    callback : callable, optional
        ``callback(done, total)`` with ``total = lookahead_work(...)``: after the fit to all the
        rows (``done = 1``), after each bootstrap refit, after each experiment's refit, and at the
        solver's checkpoints inside every fit (``done`` unchanged). Returning True stops: the
        ranking then uses the experiments refitted so far (``attrs["stopped"]``; a candidate with
        none has a NaN score and comes last). The experiments run SEM by SEM, every candidate
        once per SEM, so a Stop leaves the candidates with equal (or off-by-one) counts.

    Returns
    -------
    pandas.DataFrame
        Indexed by the candidate's node name (``"X0"``... for an array), best first (ties: column
        order). Columns: ``score`` (the mean of the ``score`` column), ``gain`` and ``change``
        (means over the SEMs, edges), ``gain_sd`` (their standard deviation, ddof=0), ``draws``
        (experiments refitted). ``attrs``: ``score``, ``sems``, ``n_sems`` (asked), ``n_rows``,
        ``work`` (:func:`lookahead_work`), ``refits`` (fits made, failed resamples included),
        ``stopped``,
        ``point_adjacency`` (the fit to all the rows, nested lists).

    Raises
    ------
    InvalidParameterError
        For an unknown candidate, ``score`` or ``sems``, counts out of range, or a callback that is
        not callable.
    ValueError
        For invalid data, conditions or targets (the checks of :meth:`colide_core.CoLiDE.fit`),
        a ``design`` of other data or given with ``conditions`` or ``targets``, or when every
        bootstrap refit fails.

    Notes
    -----
    Agrawal et al. (AISTATS 2019) take the DAG bootstrap as the posterior over SEMs and score an
    experiment by the expected utility of data simulated from each posterior SEM; the utility here
    is the learner's own: the SHD gain of the refit the experiment would trigger. Unlike the
    counting criteria of :func:`~colide_core.evaluation.planning.rank_interventions`, it sees
    what the refit does (a local optimum can move edges far from t, for better or worse). The
    bootstrap's graphs share the fit's bias, so an error every resample makes is invisible to it
    (as to every bootstrap criterion). Measured against the counting criteria:
    ``docs/planning.md``.
    """
    from colide_core import CoLiDE
    from colide_core.evaluation._metrics import evaluate
    from colide_core.evaluation.experiment import run_experiment
    from colide_core.evaluation.planning import _check_candidates
    from colide_core.evaluation.stability import (_as_data, _fit_design, _resampling_design, _seed_sequence,
                                                  bootstrap_edges)

    if score not in LOOKAHEAD_SCORES:
        raise InvalidParameterError(f"score must be one of {LOOKAHEAD_SCORES}, got {score!r:.60}.")
    n_rows = _check_count(n_rows, "n_rows", 1, 10**6)
    if callback is not None and not callable(callback):
        raise InvalidParameterError("callback must be callable.")
    values, names = _as_data(X)
    n, d = values.shape
    names_or_default = names or [f"X{j}" for j in range(d)]
    cand = _check_candidates(candidates, names_or_default, d)
    total = lookahead_work(len(cand), n_sems=n_sems, sems=sems)
    n_sems = int(n_sems)
    seeds = _seed_sequence(random_state)
    boot_seed, draw_seed = seeds.spawn(2)
    design = _resampling_design(names, n, d, design, conditions, targets)
    if estimator is None:
        estimator = CoLiDE(variant)
    data = pd.DataFrame(values, columns=names) if names is not None else values.copy()

    state = {"stop": False, "done": 0}

    def ask(*_):
        if callback is not None and not state["stop"]:
            state["stop"] = bool(callback(state["done"], total))
        return state["stop"]

    def finished():
        state["done"] += 1
        return ask()

    point = clone(estimator)
    fit_kwargs = _fit_design(point, design)
    takes_callback = "callback" in inspect.signature(point.fit).parameters
    if callback is not None and takes_callback:
        fit_kwargs["callback"] = ask
    point.fit(data, **fit_kwargs)
    A_point = np.array(point.adjacency_, dtype=float)
    W_warm = getattr(point, "W_", None)
    warm = None if W_warm is None or "W_init" not in inspect.signature(point.fit).parameters \
        else np.array(W_warm, dtype=float)
    finished()

    sem_list = []  # (W_b, noise variances, intercepts, G_b)
    if not state["stop"]:
        if sems == "bootstrap":
            def after_boot(done, _total):
                state["done"] = 1 + int(done)
                return ask()

            try:
                boot = bootstrap_edges(data, estimator, n_boot=n_sems, random_state=boot_seed,
                                       callback=after_boot, design=design)
            except ValueError:
                if not state["stop"]:
                    raise
                boot = None  # stopped before the first resample finished
            if boot is not None:
                sig = boot.sigma_samples
                for b, Wb in enumerate(boot.adjacency_samples):
                    Wb = np.array(Wb, dtype=float)
                    sem_list.append((Wb, _noise_variances(None if sig is None else sig[b], values, Wb)))
        else:
            sem_list = [(A_point, _noise_variances(getattr(point, "sigma_", None), values, A_point))] * n_sems
    if sems == "bootstrap":
        state["done"] = 1 + n_sems  # failed resamples count as done: the total stays what was shown

    children = draw_seed.spawn(n_sems * len(cand))
    gains = {t: [] for t in cand}
    changes = {t: [] for t in cand}
    before = A_point != 0
    for b, (Wb, var) in enumerate(sem_list):
        if state["stop"]:
            break
        intercepts = np.mean(values - values @ Wb, axis=0)
        truth = Wb != 0
        for k, t in enumerate(cand):
            try:
                res = run_experiment(data, Wb, t, n_rows, noise="gaussian", noise_var=var, intercepts=intercepts,
                                     estimator=estimator, B_true=truth, before=A_point, W_init=warm,
                                     random_state=children[b * len(cand) + k],
                                     callback=ask if (callback is not None and takes_callback) else None,
                                     design=design)
            except ExperimentStopped:
                break
            gains[t].append(res.gain)
            changes[t].append(int(evaluate(before, res.A_after)["shd"]))
            if finished():
                break

    rows = []
    for order, t in enumerate(cand):
        g, c = np.asarray(gains[t], dtype=float), np.asarray(changes[t], dtype=float)
        row = {"node": names_or_default[t],
               "gain": float(g.mean()) if g.size else np.nan,
               "change": float(c.mean()) if c.size else np.nan,
               "gain_sd": float(g.std()) if g.size else np.nan,
               "draws": int(g.size), "_order": order}
        row["score"] = row[score]
        rows.append(row)
    frame = pd.DataFrame(rows)[["node", "score", "gain", "change", "gain_sd", "draws", "_order"]]
    frame = frame.sort_values(["score", "_order"], ascending=[False, True], kind="stable", na_position="last")
    frame = frame.drop(columns="_order").set_index("node")
    frame.attrs.update({"score": score, "sems": sems, "n_sems": n_sems, "n_rows": n_rows, "work": total,
                        "refits": int(state["done"]),
                        "stopped": bool(state["stop"]), "point_adjacency": A_point.tolist()})
    return frame
