"""How sure is an edge? Bootstrap edge frequencies and stability selection for CoLiDE.

Conventions: data ``X`` has shape ``(n_samples, n_nodes)``; an adjacency ``W`` has shape
``(n_nodes, n_nodes)`` and ``W[i, j] != 0`` means the edge i -> j. Every ``(d, d)`` array
returned here uses that orientation.

* :func:`bootstrap_edges` refits an estimator on ``n_boot`` resamples of the rows (drawn with
  replacement, Efron's nonparametric bootstrap) and reports, for every directed edge, the
  share of resamples whose post-processed graph contains it, the bootstrap mean and standard
  deviation of its weight, and the bootstrap samples of the noise scale(s). Edge frequencies
  of this kind are Friedman, Goldszmidt and Wyner's (UAI 1999) "confidence in features".
* :func:`stability_selection` follows Meinshausen and Buehlmann (2010, JRSS-B 72(4)): fit on
  many subsamples of half the rows for each L1 weight in a grid, and keep the edges whose
  selection probability reaches ``pi_thr`` for some L1 weight.

Both are reproducible from ``random_state`` (one :class:`numpy.random.SeedSequence`, spawned
into one child per resample, so results do not depend on ``n_jobs`` or the backend), run their
fits through the sweep executor :func:`colide_core.run.executor.run_sweep` (joblib processes
locally, or a Dask cluster given by ``scheduler`` or ``$DASK_SCHEDULER_ADDRESS``), and report
progress through ``callback(done, total)``. This module never prints.
"""
from __future__ import annotations

import hashlib
import numbers
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import clone

from colide_core import defaults
from colide_core.graph._dag import classify_edges
from colide_core._params import InvalidParameterError, check_sequence, is_int, is_real, Number
from colide_core._validation import check_data

#: :func:`colide_core.graph._dag.classify_edges` kind -> the words of the edge tables (bootstrap and
#: stability selection) that compare an estimate with a ground truth.
TRUTH_WORDS = {"correct": "true edge", "reversed": "reversed", "extra": "not in truth"}

__all__ = [
    "BootstrapResult",
    "StabilityResult",
    "bootstrap_edges",
    "stability_selection",
]


def _seed_sequence(random_state):
    """A SeedSequence from None, an int, a SeedSequence or a numpy Generator."""
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(0, 2**63)))
    if random_state is None or (isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool)):
        if random_state is not None and random_state < 0:
            raise ValueError(f"random_state must be >= 0, got {random_state}.")
        return np.random.SeedSequence(random_state)
    raise ValueError(f"random_state must be None, an int >= 0, a SeedSequence or a Generator, got {random_state!r}.")


def _as_data(X):
    """Validate ``X``; return (values as float ndarray, column names or None)."""
    return check_data(X, min_rows=4)


def _frame(values, rows, names):
    sub = values[rows]
    return pd.DataFrame(sub, columns=names) if names is not None else sub


def _fit_one(estimator, values, rows, names, design=None):
    """Fit a clone on ``values[rows]``; return (adjacency, sigma, converged, error message).

    ``design``: None, or the :class:`~colide_core.data.design.Design` of all the rows: the resample
    is then fitted with its rows' design (:func:`_rows_design`, not validated again).
    """
    model = clone(estimator)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence is reported through the result
            if design is None:
                model.fit(_frame(values, rows, names))
            else:
                model.fit(_frame(values, rows, names), **_fit_design(model, _rows_design(design, rows)))
    except (ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
        return None, None, False, f"{type(exc).__name__}: {exc}"
    sigma = getattr(model, "sigma_", None)
    sigma = None if sigma is None else np.array(sigma, dtype=float)
    # Convergence of the result = its last stage met tol (the early stages of the central path
    # may end on their step budget by design; SolverResult.last_stage_converged).
    last = getattr(getattr(model, "result_", None), "last_stage_converged", None)
    converged = bool(getattr(model, "converged_", True)) if last is None else bool(last)
    return np.array(model.adjacency_, dtype=float), sigma, converged, None


def _check_common(n_jobs, callback):
    if not is_int(n_jobs) or n_jobs == 0:
        raise InvalidParameterError(f"n_jobs must be a nonzero integer (-1 = all cores), got {n_jobs!r}.")
    if callback is not None and not callable(callback):
        raise InvalidParameterError("callback must be callable.")


def _fit_task(estimator, values, rows, names, design=None):
    """Executor task: :func:`_fit_one` as a dict row (module level, so workers import it)."""
    adjacency, sigma, converged, error = _fit_one(estimator, values, rows, names, design)
    return {"adjacency": adjacency, "sigma": sigma, "converged": converged, "fit_error": error}


def _sweep_id(kind, estimator, values, names, seed_seq):
    """Content id of a resampling run: (kind, estimator parameters, data, seed sequence).

    Used to name the executor tasks (Dask task keys): equal runs get equal ids, different runs
    never share one.
    """
    h = hashlib.sha256()
    h.update(kind.encode())
    h.update(repr(sorted(estimator.get_params().items(), key=lambda kv: str(kv[0]))).encode())
    h.update(repr((values.shape, names, seed_seq.entropy, tuple(seed_seq.spawn_key))).encode())
    h.update(np.ascontiguousarray(values, dtype="<f8").tobytes())
    return h.hexdigest()[:40]


def _run_fits(jobs, values, names, n_jobs, callback, scheduler, sweep_id, design=None):
    """Fit ``jobs`` (a list of (estimator, row indices)) through the sweep executor.

    Parameters
    ----------
    jobs : list of (estimator, ndarray of int)
    values : ndarray of shape (n_samples, n_nodes)
        Shared by every task (sent once to a Dask cluster).
    names : list of str or None
    n_jobs : int
        joblib processes (ignored on Dask).
    callback : callable or None
        ``callback(done, total)``; returning True stops the run.
    scheduler : None, str or distributed.Client
        See :func:`colide_core.run.executor.run_sweep`.
    sweep_id : str
        From :func:`_sweep_id`.
    design : colide_core.data.design.Design, optional
        The design of all the rows (each fit takes its rows' part).

    Returns
    -------
    outputs : list
        One entry per job in job order: ``(adjacency, sigma, converged, error message)``, or
        None for a job not run because the callback stopped the run. An unexpected exception
        inside a fit (one :func:`_fit_one` does not catch) is reported as a failed fit.
    stopped : bool
        True when the callback stopped the run before every job finished.
    """
    from colide_core.run.executor import Task, run_sweep

    extra = {} if design is None else {"design": design}
    tasks = [Task(key=f"{sweep_id}-{i}", fn=_fit_task,
                  kwargs={"estimator": est, "values": values, "rows": rows, "names": names, **extra},
                  meta={"index": i})
             for i, (est, rows) in enumerate(jobs)]
    progress = None
    if callback is not None:
        def progress(done, total, row):
            return callback(done, total)

    res = run_sweep(tasks, scheduler=scheduler, n_jobs=n_jobs, callback=progress)
    outputs = [None] * len(jobs)
    for row in res.rows:
        if row["status"] == "ok":
            outputs[row["index"]] = (row["adjacency"], row["sigma"], row["converged"], row["fit_error"])
        else:
            outputs[row["index"]] = (None, None, False, row["error"])
    n_done = sum(o is not None for o in outputs)
    return outputs, bool(res.stopped and n_done < len(jobs))


# --------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class BootstrapResult:
    """Bootstrap distribution of a CoLiDE fit.

    Attributes
    ----------
    frequency : ndarray of shape (d, d)
        Share of the successful resamples whose post-processed graph (``adjacency_``)
        contains the edge i -> j, in [0, 1]; the diagonal is 0.
    weight_mean, weight_std : ndarray of shape (d, d)
        Mean and standard deviation (ddof=0) over the successful resamples of the edge's
        post-processed weight, counting an absent edge as weight 0 (so ``weight_mean`` is the
        bagged estimate).
    adjacency_samples : ndarray of shape (n_ok, d, d)
        The post-processed weighted graph of every successful resample, in resample order.
    sigma_samples : ndarray of shape (n_ok, d) for NV, (n_ok,) for EV, or None for "ls"
        Estimated noise standard deviation(s) of every successful resample (data units).
    n_boot : int
        Number of resamples asked for.
    n_ok : int
        Number of resamples that were fitted successfully (the denominators above).
    n_failed : int
        Resamples whose fit raised (e.g. a column constant in the resample); see ``errors``.
    n_not_converged : int
        Successful resamples whose *last* stage used its ``max_iter`` before meeting ``tol``
        (``SolverResult.last_stage_converged`` is False). Earlier stages ending on their step
        budget is normal on the central path and not counted.
    stopped : bool
        True when the callback stopped the run early; only the first ``n_ok + n_failed``
        resamples were fitted.
    errors : tuple of str
        One message per failed resample.
    node_names : list of str or None
        Column names when ``X`` was a DataFrame.
    """

    frequency: np.ndarray
    weight_mean: np.ndarray
    weight_std: np.ndarray
    adjacency_samples: np.ndarray
    sigma_samples: object
    n_boot: int
    n_ok: int
    n_failed: int
    n_not_converged: int
    stopped: bool
    errors: tuple
    node_names: object

    def sigma_interval(self, level=0.95):
        """Percentile bootstrap interval of the noise standard deviation(s).

        Parameters
        ----------
        level : float in (0, 1), default=0.95

        Returns
        -------
        low, high : float or ndarray of shape (d,)
            The ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles over the resamples
            (one per node for NV, one number for EV); None for the "ls" variant.
        """
        if self.sigma_samples is None:
            return None
        a = (1.0 - _check_level(level)) / 2.0
        return (np.quantile(self.sigma_samples, a, axis=0), np.quantile(self.sigma_samples, 1.0 - a, axis=0))

    def edge_table(self, min_frequency=0.0, level=0.95, B_true=None):
        """One row per directed edge found in at least ``min_frequency`` of the resamples.

        Parameters
        ----------
        min_frequency : float in [0, 1], default=0.0
            Edges with a lower frequency are left out (edges never found are always left out).
        level : float in (0, 1), default=0.95
            Coverage of the percentile interval of the weight.
        B_true : array-like of shape (d, d), optional
            Ground truth (nonzero = edge) for the ``truth`` column.

        Returns
        -------
        pandas.DataFrame
            Columns ``source``, ``target``, ``frequency`` (in [0, 1]), ``weight`` (mean of the
            weight over the resamples that contain the edge), ``ci_low``, ``ci_high``
            (percentile interval of the weight over those same resamples), ``bagged_weight``
            (``weight_mean``: absent counted as 0), and with ``B_true`` a ``truth`` column:
            "true edge", "reversed" (the truth has j -> i) or "not in truth". Sorted by
            decreasing frequency, then source and target.
        """
        a = (1.0 - _check_level(level)) / 2.0
        if not (is_real(min_frequency) and 0.0 <= min_frequency <= 1.0):
            raise InvalidParameterError(f"min_frequency must be a number in [0, 1], got {min_frequency!r}.")
        d = self.frequency.shape[0]
        names = self.node_names or [str(k) for k in range(d)]
        truth = {}
        if B_true is not None:
            B = np.asarray(B_true, dtype=float)
            if B.shape != (d, d):
                raise ValueError(f"B_true must have shape {(d, d)}, got {B.shape}.")
            truth = {(i, j): TRUTH_WORDS[kind] for i, j, kind in classify_edges(self.frequency, B)
                     if kind != "missing"}
        rows = []
        for i, j in zip(*np.nonzero(self.frequency > 0)):
            if self.frequency[i, j] < min_frequency:
                continue
            w = self.adjacency_samples[:, i, j]
            w = w[w != 0]
            row = {"source": names[i], "target": names[j], "frequency": float(self.frequency[i, j]),
                   "weight": float(w.mean()), "ci_low": float(np.quantile(w, a)),
                   "ci_high": float(np.quantile(w, 1.0 - a)), "bagged_weight": float(self.weight_mean[i, j])}
            if B_true is not None:
                row["truth"] = truth[(int(i), int(j))]
            rows.append(row)
        cols = ["source", "target", "frequency", "weight", "ci_low", "ci_high", "bagged_weight"]
        if B_true is not None:
            cols.append("truth")
        frame = pd.DataFrame(rows, columns=cols)
        if len(frame):
            frame = frame.sort_values(["frequency", "source", "target"], ascending=[False, True, True],
                                      kind="stable").reset_index(drop=True)
        return frame


def _check_level(level):
    if not (is_real(level) and 0.0 < float(level) < 1.0):
        raise InvalidParameterError(f"level must be a number in (0, 1), got {level!r}.")
    return float(level)


def _check_count(value, name, limit):
    """An int in [1, limit] (bools, floats and strings refused)."""
    if not is_int(value) or value < 1:
        raise InvalidParameterError(f"{name} must be a positive integer, got {value!r}.")
    if value > limit:
        raise InvalidParameterError(f"{name} must be a positive integer <= {limit:,} "
                                    f"(colide_core.defaults.MAX_RESAMPLES), got {value!r}.")
    return int(value)


def _checked_estimator(estimator):
    """Clone ``estimator`` (TypeError when it is not one) and run its own parameter checks.

    A bad setting then fails here, once, with the estimator's message, instead of making every
    resample fail.
    """
    est = clone(estimator)
    if hasattr(est, "get_run_settings"):  # CoLiDE: its run settings (colide_core.settings)
        est.get_run_settings()
    return est


def bootstrap_edges(X, estimator, n_boot=100, random_state=None, n_jobs=1, callback=None,
                    scheduler=None, conditions=None, targets=None, *, design=None):
    """Edge confidence by the nonparametric bootstrap: refit on rows drawn with replacement.

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
        Finite numeric data, at least 4 rows. A DataFrame keeps its column names (so
        constraints given by name still apply in every resample).
    estimator : colide_core.CoLiDE
        A configured (fitted or not) estimator; each resample fits a fresh
        ``sklearn.base.clone`` of it, so the estimator passed in is never modified. Any
        scikit-learn estimator with ``fit(X)`` and ``adjacency_`` works (``sigma_`` optional).
    n_boot : int, default=100
        Number of resamples, in ``[1, colide_core.defaults.MAX_RESAMPLES]`` (1e5).
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Seeds one :class:`numpy.random.SeedSequence`, spawned into one child per resample;
        resample ``b`` draws its ``n_samples`` row indices with the one resampler,
        :meth:`colide_core.data.design.Design.resample` seeded with ``child_b`` (all rows one
        condition without ``conditions``: the same draws as
        ``np.random.default_rng(child_b).integers(0, n, n)``). Same seed, same result, for any
        ``n_jobs``. None draws fresh entropy.
    n_jobs : int, default=1
        Parallel workers (joblib, process-based "loky" backend); -1 uses all cores. Ignored
        on a Dask cluster.
    callback : callable, optional
        ``callback(done, total)`` after each finished resample, in the calling process. If it
        returns True the run stops and the resamples done so far are summarised
        (``stopped=True``).
    scheduler : None, str or distributed.Client, optional
        Run the fits on a Dask distributed cluster: a ``"tcp://host:port"`` scheduler
        address or a connected ``distributed.Client`` (see
        :func:`colide_core.run.executor.run_sweep`). None (default) uses
        ``$DASK_SCHEDULER_ADDRESS`` when it is set, joblib otherwise. The result is the
        same on every backend.
    conditions : array-like of shape (n_samples,), optional
        The condition of each row (:func:`colide_core.data.conditions.check_conditions`). Rows
        are then resampled *within* conditions (each condition keeps its size: resample ``b``
        draws, condition by condition in the order the labels first appear, ``n_c`` of its rows
        with replacement from one generator, by ``Design.resample``), and each resample is fitted
        with its conditions and ``targets`` (an intercept per condition, the masked likelihood).
    targets : mapping, optional
        ``{label: [node, ...]}`` as in :meth:`colide_core.CoLiDE.fit`; needs ``conditions``.
    design : colide_core.data.design.Design, optional
        The conditions and targets in one object (validated once), instead of ``conditions`` and
        ``targets`` (:func:`colide_core.data.design.resolve_design`): the same resamples and fits
        as the loose form for the same seed. Each resample's fit takes the design of its rows
        (``fit(design=...)``; the loose form for an estimator whose ``fit`` has no ``design``).

    Returns
    -------
    BootstrapResult
        Frequencies, bagged weights and their spread, and the noise-scale samples.

    Raises
    ------
    ValueError
        For invalid ``X``, ``n_boot``, ``n_jobs``, ``random_state`` or ``callback`` (numbers
        given as bools, floats or strings are refused: ``InvalidParameterError``, also a
        TypeError), for an estimator whose own parameter checks fail, or when every resample
        failed (the message quotes the first error).
    TypeError
        If ``sklearn.base.clone`` cannot clone ``estimator`` (no ``get_params``).
    OSError
        If the Dask scheduler cannot be reached.

    Notes
    -----
    Frequencies refer to the post-processed graph (thresholded at the estimator's
    ``threshold`` and made acyclic), i.e. to the graph a user would report. A resample whose
    fit raises (e.g. a column that is constant in the resample) is counted in ``n_failed``
    and left out of the denominators. When the callback stops the run, the resamples that
    had finished are summarised in resample order (with several workers they need not be
    the first ones).
    """
    values, names = _as_data(X)
    _check_count(n_boot, "n_boot", defaults.MAX_RESAMPLES)
    _check_common(n_jobs, callback)
    _checked_estimator(estimator)  # fails early (TypeError) on an object that is not an estimator
    n, d = values.shape
    seed_seq = _seed_sequence(random_state)
    design = _resampling_design(names, n, d, design, conditions, targets)
    kind = "bootstrap" if design is None else "bootstrap-" + _design_tag(design)
    jobs = [(estimator, rows) for rows in _bootstrap_rows(seed_seq, int(n_boot), n, design)]
    outputs, stopped = _run_fits(jobs, values, names, n_jobs, callback, scheduler,
                                 _sweep_id(kind, estimator, values, names, seed_seq), design=design)
    return _summarise_boot([o for o in outputs if o is not None], int(n_boot), d, names, stopped)


def _resampling_design(names, n, d, design=None, conditions=None, targets=None):
    """The design of a resampling run, resolved once (:func:`colide_core.data.design.resolve_design`,
    nodes named ``names``: ``X``'s columns, None for an array); None without conditions.

    Raises ``ValueError`` for ``targets`` without ``conditions`` (an empty mapping too), and what
    ``resolve_design`` raises.
    """
    from colide_core.data.design import resolve_design

    if design is None and conditions is None and targets is not None:
        raise ValueError("targets need conditions: give the condition of each row.")
    return resolve_design(design, conditions, targets, node_names=names, n_samples=n, n_nodes=d)


def _design_tag(design):
    """A content tag of a design with conditions (its labels, targets and each row's condition), for
    the executor's task ids: equal designs, equal tags."""
    targets = {lab: t for lab, t in design.targets.items() if t}
    return "conditions:" + hashlib.sha256((repr((design.labels, sorted(targets.items()))) + hashlib.sha256(
        np.ascontiguousarray(design.codes).tobytes()).hexdigest()).encode()).hexdigest()[:16]


def _rows_design(design, rows):
    """The design of the rows ``rows`` of ``design``'s data, not validated again.

    ``rows`` is a resample that keeps every condition, in the order of ``design.labels``
    (:meth:`~colide_core.data.design.Design.resample`, the half-samples of
    :func:`stability_selection`): the labels, targets and reference stay those of ``design``,
    as :meth:`~colide_core.data.design.Design.create` would find them on the resample's labels.
    """
    import dataclasses

    codes = design.codes[np.asarray(rows)]
    codes.setflags(write=False)
    return dataclasses.replace(design, codes=codes)


def _fit_design(model, design):
    """The keyword arguments that give ``design`` to ``model.fit``: ``design=`` where ``fit`` takes
    it (:meth:`colide_core.CoLiDE.fit`), else ``conditions=`` and ``targets=`` (node indices);
    ``{}`` for None."""
    import inspect

    if design is None:
        return {}
    try:
        takes = "design" in inspect.signature(model.fit).parameters
    except (TypeError, ValueError):
        takes = False
    if takes:
        return {"design": design}
    return {"conditions": design.row_labels(),
            "targets": {lab: list(t) for lab, t in design.targets.items() if t} or None}


def _bootstrap_rows(seed_seq, n_boot, n, design=None):
    """The row indices of ``n_boot`` bootstrap resamples, drawn by the one resampler.

    Resample ``b`` is :meth:`colide_core.data.design.Design.resample` seeded with the ``b``-th
    child of ``seed_seq``: within each condition, as many rows as it has, with replacement;
    without a design all ``n`` rows form one condition (the draws of
    ``default_rng(child_b).integers(0, n, n)``). :func:`bootstrap_edges` and
    :func:`colide_core.evaluation.interventions.bootstrap_shifts` draw here, so one seed gives
    both the same rows.

    Parameters
    ----------
    seed_seq : numpy.random.SeedSequence
    n_boot : int
    n : int
        The rows (``X.shape[0]``).
    design : colide_core.data.design.Design, optional
        The rows' design, with conditions (resolved by :func:`_resampling_design`).

    Returns
    -------
    list of ndarray of int of shape (n,)
    """
    from colide_core.data.design import Design

    if design is None:  # the nodes play no part in the draws
        design = Design.create([], np.zeros(n, dtype=np.int64), n_samples=n)
    return [design.resample(child) for child in seed_seq.spawn(int(n_boot))]


#: Column blocks :func:`_edge_moments` summarises the samples in (each block's temporaries are
#: about 1/16 of the samples).
_MOMENT_BLOCKS = 16


def _edge_moments(adj):
    """Each edge's frequency, mean and standard deviation over the samples, a block of edges at a time.

    The same numbers as ``(adj != 0).mean(axis=0)``, ``adj.mean(axis=0)`` and ``adj.std(axis=0)``
    (ddof=0), bit for bit: numpy sums along the samples axis one sample after another for every
    block of at least two columns, as it does for the whole array (a one-column block would be
    summed pairwise, so none is made). What changes is the memory: ``std`` on the whole array makes
    a temporary as large as ``adj`` (and ``!= 0`` one an eighth of it), here only a block's.

    Parameters
    ----------
    adj : ndarray of shape (n_samples, d, d)
        C-contiguous float64 weights (:func:`numpy.stack`'s).

    Returns
    -------
    frequency, mean, std : ndarray of shape (d, d)
        float64.
    """
    n, d = adj.shape[0], adj.shape[1]
    width = d * d
    flat = adj.reshape(n, width)  # a view of the stacked samples
    out = [np.empty(width) for _ in range(3)]
    step = max(2, -(-width // _MOMENT_BLOCKS))
    starts = list(range(0, width, step))
    if len(starts) > 1 and width - starts[-1] < 2:  # a last block of one column joins the one before it
        starts.pop()
    for lo, hi in zip(starts, starts[1:] + [width]):
        part = flat[:, lo:hi]
        out[0][lo:hi] = (part != 0).mean(axis=0)
        out[1][lo:hi] = part.mean(axis=0)
        out[2][lo:hi] = part.std(axis=0)
    return tuple(a.reshape(d, d) for a in out)


def _summarise_boot(outputs, n_boot, d, names, stopped):
    ok = [o for o in outputs if o[3] is None]
    errors = tuple(o[3] for o in outputs if o[3] is not None)
    if not ok:
        first = errors[0] if errors else "no resample was fitted"
        raise ValueError(f"Every bootstrap fit failed; the first error was: {first}")
    adj = np.stack([o[0] for o in ok])
    sig = None if ok[0][1] is None else np.stack([o[1] for o in ok])
    frequency, weight_mean, weight_std = _edge_moments(adj)
    return BootstrapResult(
        frequency=frequency,
        weight_mean=weight_mean,
        weight_std=weight_std,
        adjacency_samples=adj,
        sigma_samples=sig,
        n_boot=n_boot,
        n_ok=len(ok),
        n_failed=len(errors),
        n_not_converged=sum(1 for o in ok if not o[2]),
        stopped=stopped,
        errors=errors,
        node_names=names,
    )


# --------------------------------------------------------------------------------------
# Stability selection
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class StabilityResult:
    """Stability selection over a grid of L1 weights (Meinshausen and Buehlmann, 2010).

    Attributes
    ----------
    lambdas : ndarray of shape (n_lambdas,)
        The L1 weights ``lambda1``, in the order given.
    selection_probability : ndarray of shape (n_lambdas, d, d)
        ``Pi_hat[k, i, j]``: share of the successful subsample fits at ``lambdas[k]`` whose
        post-processed graph contains i -> j.
    max_probability : ndarray of shape (d, d)
        ``max_k Pi_hat[k, i, j]``.
    stable : ndarray of bool of shape (d, d)
        The stable set: ``max_probability >= pi_thr``.
    pi_thr : float
        Selection threshold in (0.5, 1].
    q_hat : float
        Estimate of ``q_Lambda``, the expected number of edges selected for at least one
        ``lambda`` on a half-sample: the mean over subsamples of ``|union_k S_k|``.
    n_candidates : int
        ``p``, the number of candidate edges: ``d (d - 1)`` minus the forbidden ones.
    expected_false_positives_bound : float
        ``q_hat**2 / ((2 pi_thr - 1) p)``, the bound of Meinshausen and Buehlmann (2010,
        Theorem 1) on E[V], V the number of falsely selected edges. See
        :func:`stability_selection` for when it applies.
    n_subsamples : int
        Subsamples asked for.
    n_failed : int
        Subsample fits (over all lambdas) that raised.
    stopped : bool
        True when the callback stopped the run (probabilities then use the fits done).
    node_names : list of str or None
    """

    lambdas: np.ndarray
    selection_probability: np.ndarray
    max_probability: np.ndarray
    stable: np.ndarray
    pi_thr: float
    q_hat: float
    n_candidates: int
    expected_false_positives_bound: float
    n_subsamples: int
    n_failed: int
    stopped: bool
    node_names: object

    def stable_edges(self):
        """The stable edges as a table.

        Returns
        -------
        pandas.DataFrame
            Columns ``source``, ``target``, ``max_probability`` and ``best_lambda`` (the
            ``lambda1`` where the probability peaks), sorted by decreasing probability.
        """
        d = self.stable.shape[0]
        names = self.node_names or [str(k) for k in range(d)]
        rows = []
        for i, j in zip(*np.nonzero(self.stable)):
            k = int(np.argmax(self.selection_probability[:, i, j]))
            rows.append((names[i], names[j], float(self.max_probability[i, j]), float(self.lambdas[k])))
        frame = pd.DataFrame(rows, columns=["source", "target", "max_probability", "best_lambda"])
        return frame.sort_values(["max_probability", "source", "target"], ascending=[False, True, True],
                                 kind="stable").reset_index(drop=True)


def stability_selection(X, estimator, lambdas, n_subsamples=50, pi_thr=0.75, random_state=None,
                        n_jobs=1, callback=None, scheduler=None, conditions=None, targets=None, *, design=None):
    """Stability selection of edges (Meinshausen and Buehlmann, 2010).

    For each of ``n_subsamples`` random subsets of ``floor(n / 2)`` rows (drawn without
    replacement, the same subsets for every L1 weight) and each ``lambda1`` in ``lambdas``,
    a clone of ``estimator`` with that ``lambda1`` is fitted. The selection probability of
    the edge i -> j at ``lambda`` is the share of subsamples whose post-processed graph
    contains it; the stable set holds the edges whose probability reaches ``pi_thr`` for at
    least one ``lambda``.

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
        Finite numeric data, at least 4 rows.
    estimator : colide_core.CoLiDE
        Configured estimator; each fit uses ``sklearn.base.clone(estimator)`` with its
        ``lambda1`` replaced (``set_params``) by an entry of ``lambdas``.
    lambdas : sequence of float
        L1 weights (>= 0), e.g. ``np.geomspace(0.2, 0.02, 5)``.
    n_subsamples : int, default=50
        Number of half-size subsamples (>= 1); M&B use 100. ``n_subsamples * len(lambdas)``
        fits are run, at most ``colide_core.defaults.MAX_RESAMPLES`` (1e5).
    pi_thr : float in (0.5, 1], default=0.75
        Selection threshold (M&B recommend 0.6 to 0.9).
    random_state : None, int, SeedSequence or Generator
        As in :func:`bootstrap_edges`; subsample ``b`` uses child ``b`` of the seed sequence.
    n_jobs : int, default=1
        joblib workers (-1: all cores); ignored on a Dask cluster.
    callback : callable, optional
        ``callback(done, total)`` after each fit (``total = n_subsamples * len(lambdas)``);
        returning True stops early.
    scheduler : None, str or distributed.Client, optional
        As in :func:`bootstrap_edges`: a Dask cluster to run the fits on; None uses
        ``$DASK_SCHEDULER_ADDRESS`` when set, joblib otherwise.
    conditions, targets : optional
        As in :func:`bootstrap_edges`: each subsample then draws, without replacement, half the
        rows of every condition (``max(2, n_c // 2)``, condition by condition from one
        generator), and every fit has the conditions and targets.
    design : colide_core.data.design.Design, optional
        Both in one object (validated once), instead of ``conditions`` and ``targets``, as in
        :func:`bootstrap_edges`: the same subsamples and fits for the same seed.

    Returns
    -------
    StabilityResult

    Raises
    ------
    ValueError
        For invalid inputs (numbers given as bools or strings, NaN, inf, floats where ints
        are asked, too many fits: ``InvalidParameterError``, also a TypeError), an
        estimator whose own parameter checks fail, or when every fit failed.
    OSError
        If the Dask scheduler cannot be reached.

    Notes
    -----
    **The error bound.** Let ``p`` be the number of candidate edges (``d (d - 1)`` minus
    forbidden ones), ``q_Lambda`` the expected number of edges selected, on a half-sample,
    for at least one ``lambda`` in the grid, and ``V`` the number of falsely selected edges
    in the stable set. Meinshausen and Buehlmann's Theorem 1 gives::

        E[V] <= q_Lambda**2 / ((2 * pi_thr - 1) * p)      for pi_thr in (0.5, 1].

    The result reports this bound with ``q_Lambda`` replaced by its estimate ``q_hat``.

    **When it applies.** The theorem assumes (i) that the distribution of the selection
    indicators of the null (false) edges is exchangeable, and (ii) that the procedure is no
    worse than random guessing. Neither can be checked on data, and for DAG learning (i) is
    doubtful: acyclicity and the thresholding couple the edges (an edge i -> j excludes
    j -> i, and a false edge is often the reversal of a true one). Read the bound as a rough
    guide to how many of the stable edges may be false, not as a guarantee. Shah and
    Samworth (2013) give bounds without exchangeability for complementary-pair subsampling,
    which this function does not implement. ``q_hat`` is also a sample estimate, so the
    bound is itself noisy.
    """
    values, names = _as_data(X)
    lam = np.asarray(check_sequence(lambdas, "lambdas", "stability_selection",
                                    Number(numbers.Real, 0, None, closed="left")))
    _check_count(n_subsamples, "n_subsamples", defaults.MAX_RESAMPLES)
    _check_count(int(n_subsamples) * lam.size, "n_subsamples * len(lambdas)", defaults.MAX_RESAMPLES)
    if not (is_real(pi_thr) and 0.5 < float(pi_thr) <= 1.0):
        raise InvalidParameterError(
            f"pi_thr must be in (0.5, 1] (Meinshausen and Buehlmann's bound needs > 0.5), got {pi_thr!r}.")
    _check_common(n_jobs, callback)
    _checked_estimator(estimator)  # fails early (TypeError) on an object that is not an estimator
    n, d = values.shape
    half = n // 2
    seed_seq = _seed_sequence(random_state)
    children = seed_seq.spawn(int(n_subsamples))
    design = _resampling_design(names, n, d, design, conditions, targets)
    if design is None:
        kind = "stability"
        subsets = [np.sort(np.random.default_rng(c).choice(n, size=half, replace=False)) for c in children]
    else:
        kind = "stability-" + _design_tag(design)
        members = [np.flatnonzero(design.codes == c) for c in range(len(design.labels))]

        def halves(rng):
            return np.concatenate([np.sort(rng.choice(m, size=min(m.size, max(defaults.MIN_CONDITION_ROWS,
                                                                                m.size // 2)), replace=False))
                                   for m in members])
        subsets = [halves(np.random.default_rng(c)) for c in children]
    models = [clone(estimator).set_params(lambda1=float(x)) for x in lam]
    jobs = [(models[k], rows) for rows in subsets for k in range(lam.size)]
    sweep_id = _sweep_id(kind, estimator, values, names, seed_seq)
    sweep_id = hashlib.sha256((sweep_id + repr(lam.tolist())).encode()).hexdigest()[:40]
    outputs, stopped = _run_fits(jobs, values, names, n_jobs, callback, scheduler, sweep_id, design=design)

    n_lam = lam.size
    counts = np.zeros((n_lam, d, d))
    fits = np.zeros(n_lam)
    union_sizes = []
    failed = 0
    for b in range(int(n_subsamples)):
        chunk = outputs[b * n_lam:(b + 1) * n_lam]
        union = np.zeros((d, d), dtype=bool)
        for k, out in enumerate(chunk):
            if out is None:  # not run: the callback stopped the run
                continue
            if out[3] is not None:
                failed += 1
                continue
            sel = out[0] != 0
            counts[k] += sel
            fits[k] += 1
            union |= sel
        if all(o is not None for o in chunk) and any(o[3] is None for o in chunk):
            union_sizes.append(int(union.sum()))
    if not np.any(fits):
        errs = [o[3] for o in outputs if o is not None and o[3] is not None]
        raise ValueError(f"Every subsample fit failed; the first error was: {errs[0] if errs else 'none ran'}")
    prob = counts / np.maximum(fits, 1)[:, None, None]
    max_prob = prob.max(axis=0)
    stable = max_prob >= float(pi_thr)
    p = d * (d - 1)
    edge_mask = None
    if getattr(estimator, "forbidden", None) is not None or getattr(estimator, "tiers", None) is not None:
        from colide_core.graph.constraints import resolve_constraints

        edge_mask, _ = resolve_constraints(d, names, forbidden=estimator.forbidden,
                                           required=estimator.required, tiers=estimator.tiers)
    if edge_mask is not None:
        p = int(np.asarray(edge_mask, dtype=bool).sum() - np.trace(np.asarray(edge_mask, dtype=bool)))
    q_hat = float(np.mean(union_sizes)) if union_sizes else float("nan")
    bound = q_hat ** 2 / ((2.0 * float(pi_thr) - 1.0) * max(p, 1))
    return StabilityResult(
        lambdas=lam.copy(),
        selection_probability=prob,
        max_probability=max_prob,
        stable=stable,
        pi_thr=float(pi_thr),
        q_hat=q_hat,
        n_candidates=int(p),
        expected_false_positives_bound=float(bound),
        n_subsamples=int(n_subsamples),
        n_failed=failed,
        stopped=stopped,
        node_names=names,
    )
