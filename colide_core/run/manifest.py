"""Run manifests: everything needed to trust, reload and reproduce one CoLiDE fit.

A manifest is a JSON document (schema ``"colide-manifest/1"``) with

* ``data``: a SHA-256 fingerprint of the data, its shape and column names
  (or, for :meth:`CoLiDE.fit_from_stats`, of the covariance and ``n``);
* ``estimator`` and ``params``: the class name and every constructor
  parameter (``random_state`` included, also copied to the top level);
* ``environment``: Python, platform, versions of the numerical packages
  (:func:`importlib.metadata.version`) and the git commit of the code when it
  runs from a git checkout (``git rev-parse HEAD``; None when git or the
  repository is unavailable);
* ``timing``: creation time (UTC, ISO 8601), the solver's wall time and, when
  the caller measured it, the whole run's wall time, in seconds;
* ``transform``: the column transforms applied to the data before the fit, oldest first
  (:mod:`colide_core.data.transforms` steps such as ``{"kind": "asinh", "cofactor": 5.0}``; ``[]``
  for raw data); ``data`` is the fingerprint of the *transformed* data;
* ``conditions`` (only for a fit with conditions, :meth:`CoLiDE.fit` with ``conditions=``):
  the condition column's name when known, the labels, the rows per condition, the targets
  (``{label: [node name, ...]}``) and a SHA-256 of the row labels, so :meth:`Manifest.reproduce`
  can check them;
* ``results``: raw ``W`` (``W[i, j] != 0`` means i -> j), the thresholded DAG
  ``adjacency``, ``sigma``, iteration count and flags, ``node_names`` and
  ``metrics`` (from :func:`colide_core.evaluate` when a ground truth was given).

Floats are written with Python's shortest round-trip repr, so ``W`` reloads
bit-for-bit; NaN/Inf (which JSON lacks) are written as ``null``.

:func:`load_manifest` validates a document and returns a :class:`Manifest`;
:meth:`Manifest.reproduce` refits on the same data and checks that the same
``W`` comes back (the solver is deterministic: ``W`` starts at zero).

Modules, by job (issue 47): the data fingerprints in :mod:`colide_core.run.fingerprint`, the exact
``fit`` command in :mod:`colide_core.run.fit_command`, the code's commit and the packages' versions
in :mod:`colide_core.run.provenance`; writing, reading and checking a manifest here.
This module re-exports their names, so ``colide_core.run.manifest`` stays the one import path.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from colide_core.exceptions import ManifestError, RunSettingsError
from colide_core.hashing import digest
from colide_core.run.fingerprint import data_fingerprint, stats_fingerprint  # noqa: F401 - re-exported
from colide_core.run.fit_command import fit_command  # noqa: F401 - re-exported
from colide_core.run.provenance import PACKAGES, environment_info, git_commit  # noqa: F401 - re-exported
from colide_core.settings import NOT_SETTINGS, SCHEDULE_SETTINGS

__all__ = [
    "SCHEMA",
    "ManifestError",
    "RunSettingsError",
    "Manifest",
    "build_manifest",
    "manifest_from_result",
    "fit_command",
    "save_manifest",
    "manifest_to_json",
    "load_manifest",
    "data_fingerprint",
    "conditions_record",
    "stats_fingerprint",
    "environment_info",
    "git_commit",
]

SCHEMA = "colide-manifest/1"

# --------------------------------------------------------------------------------------------
# fingerprints and environment: colide_core.run.provenance (re-exported above)
# --------------------------------------------------------------------------------------------


def _jsonable(obj):
    """Convert numpy/tuples/NaN to plain JSON types (NaN and Inf become None)."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else None
    if obj is None or isinstance(obj, str):
        return obj
    return repr(obj)


def conditions_record(labels=None, counts=None, targets=None, node_names=None, *, conditions=None, column=None,
                      design=None):
    """The ``conditions`` entry of a manifest (a fit with several conditions).

    With ``design`` it is :meth:`Design.record <colide_core.data.design.Design.record>` with the
    rows' fingerprint; the loose form writes the same record.

    Parameters
    ----------
    labels : sequence of str
        The condition labels (``CoLiDE.conditions_``).
    counts : sequence of int
        Rows per condition (``CoLiDE.condition_counts_``).
    targets : mapping
        ``{label: tuple of node indices}`` (``CoLiDE.targets_``).
    node_names : sequence of str, optional
        Node names: the targets are then written by name.
    conditions : array-like of shape (n_samples,), optional
        The row labels given to ``fit``: their fingerprint is stored (else None, and
        :meth:`Manifest.reproduce` cannot check them).
    column : str, optional
        The name of the data's condition column, when the labels came from one.
    design : colide_core.data.design.Design, optional
        The fit's design (with conditions), instead of ``labels``, ``counts``, ``targets``,
        ``node_names`` and ``conditions``.

    Returns
    -------
    dict
        ``{"column", "labels", "counts", "targets", "reference", "sha256"}``, plain JSON;
        ``reference`` is the first condition without targets, else the first condition.

    Raises
    ------
    InvalidParameterError
        (a ``ValueError``) For ``design`` together with the loose arguments, or a design without
        conditions.
    """
    if design is not None:
        from colide_core.exceptions import InvalidParameterError

        if any(a is not None for a in (labels, counts, targets, node_names, conditions)):
            raise InvalidParameterError("give the design either as design= or as labels/counts/targets/conditions, "
                                        "not both.")
        record = design.record(column)
        if record is None:
            raise InvalidParameterError("the design has no conditions: a fit without conditions has no record.")
        record["sha256"] = _conditions_digest(design.labels, design.codes)
        return record
    labels = [str(x) for x in labels]

    def node(j):
        return str(node_names[j]) if node_names is not None else int(j)

    targets = dict(targets)
    record = {
        "column": None if column is None else str(column),
        "labels": labels,
        "counts": [int(c) for c in counts],
        "targets": {str(k): [node(j) for j in v] for k, v in targets.items() if len(v)},
        # the rule of Design.reference: the first label without targets, else the first label
        "reference": next((lab for lab in labels if not len(targets.get(lab, ()))), labels[0]),
        "sha256": None,
    }
    if conditions is not None:
        from colide_core.data.conditions import check_conditions

        got, codes = check_conditions(conditions, int(sum(record["counts"])))
        record["sha256"] = _conditions_digest(got, codes)
    return record


def _conditions_digest(labels, codes):
    return digest("colide-conditions/1", {"labels": list(labels), "n": int(codes.size)},
                  [np.asarray(codes, dtype=float)])


def build_manifest(model, X=None, *, cov=None, n=None, B_true=None, sigma_true=None, metrics=None,
                   data_source=None, wall_time=None, extra=None, transform=None, conditions=None,
                   conditions_column=None, design=None):
    """Describe a fitted :class:`~colide_core.CoLiDE` run as a manifest dict.

    A thin wrapper of :func:`manifest_from_result` for an estimator: it passes the fit record
    ``model.result_``, ``model.get_params()``, the node names and the solver wall time.

    Parameters
    ----------
    model : colide_core.CoLiDE
        A fitted estimator (has ``result_``).
    X : array-like or DataFrame, shape (n_samples, n_nodes), optional
        The data passed to ``fit``; only its fingerprint is stored.
    cov, n : optional
        The statistics passed to ``fit_from_stats`` (instead of ``X``).
    B_true : array-like, shape (n_nodes, n_nodes), optional
        Ground-truth DAG; when given and ``metrics`` is None, metrics are
        computed with :func:`colide_core.evaluate` on the thresholded DAG.
    sigma_true : float or array-like (n_nodes,), optional
        True noise standard deviations, passed to ``evaluate``.
    metrics : dict, optional
        Precomputed metrics to store as they are.
    data_source : str, optional
        Where the data came from (file name or "sachs"); stored as given, so
        escape it before showing it in HTML.
    wall_time : float, optional
        Seconds of the whole run measured by the caller (loading included).
    extra : dict, optional
        Free-form JSON-able information, stored under ``"extra"``.
    transform : list of dict, optional
        The column transforms applied to the data before the fit
        (:func:`colide_core.data.transforms.transform_step` records, oldest first); ``X`` is then
        the transformed data. Stored under ``"transform"`` (``[]`` when None).
    conditions : array-like of shape (n_samples,), optional
        The row labels given to ``fit(X, conditions=...)``; for a model fitted with conditions
        the manifest records them (:func:`conditions_record`), with their fingerprint when given.
    conditions_column : str, optional
        The name of the data's condition column, recorded with them.
    design : colide_core.data.design.Design, optional
        The design given to ``fit(X, design=...)``, instead of ``conditions``: the record is
        :meth:`Design.record <colide_core.data.design.Design.record>` with the rows' fingerprint.

    Returns
    -------
    dict
        A manifest (see the module docstring); pass it to :func:`save_manifest`.

    Raises
    ------
    ManifestError
        If the model is not fitted, or neither ``X`` nor ``(cov, n)`` is
        given, or the data do not have the model's number of nodes, or ``design`` is not the
        model's (other conditions or targets).
    InvalidParameterError
        For ``design`` together with ``conditions``.
    """
    if not hasattr(model, "result_"):
        raise ManifestError("the model is not fitted: call fit(X) or fit_from_stats(cov, n) first")
    record = None
    if design is not None:
        from colide_core.exceptions import InvalidParameterError

        if conditions is not None:
            raise InvalidParameterError("give the design either as design= or as conditions=, not both.")
        if getattr(design, "has_conditions", False) or getattr(model, "conditions_", None) is not None:
            _require(getattr(design, "has_conditions", False)
                     and tuple(design.labels) == tuple(model.conditions_ or ())
                     and dict(design.targets) == dict(model.targets_),
                     "the design is not the one the model was fitted with (its conditions or targets differ)")
            record = conditions_record(design=design, column=conditions_column)
    elif getattr(model, "conditions_", None) is not None:
        record = conditions_record(model.conditions_, model.condition_counts_, model.targets_,
                                   getattr(model, "node_names_", None), conditions=conditions,
                                   column=conditions_column)
    return manifest_from_result(
        model.result_, model.get_params(), X, cov=cov, n=n, node_names=getattr(model, "node_names_", None),
        fit_time=getattr(model, "fit_time_", None), adjacency=getattr(model, "adjacency_", None),
        estimator=type(model).__name__, B_true=B_true,
        sigma_true=sigma_true, metrics=metrics, data_source=data_source, wall_time=wall_time, extra=extra,
        transform=transform, conditions=record)


def manifest_from_result(result, params, X=None, *, cov=None, n=None, node_names=None, fit_time=None,
                         adjacency=None, estimator="CoLiDE", B_true=None, sigma_true=None, metrics=None, data_source=None,
                         wall_time=None, extra=None, transform=None, conditions=None):
    """Describe one fit record (a :class:`~colide_core.SolverResult`) as a manifest dict.

    The one place a manifest is built: :func:`build_manifest` (an estimator) and the
    dashboard (a cached fit record) both come here, so no fitted estimator has to be made
    by hand. Unless given, the stored ``adjacency`` is ``result.W`` thresholded at
    ``params["threshold"]`` with :func:`colide_core.threshold_to_dag`, keeping the required
    edges of the recorded prior knowledge (what ``CoLiDE.adjacency_`` holds after ``fit``).

    Parameters
    ----------
    result : colide_core.SolverResult
        The solver's record: ``W`` of shape (n_nodes, n_nodes) (``W[i, j] != 0`` means
        i -> j), ``sigma``, ``n_iter``, ``history``, ``objective``, flags.
    params : dict
        Every :class:`~colide_core.CoLiDE` constructor parameter of the fit
        (``estimator.get_params()``), ``threshold`` included.
    X : array-like or DataFrame, shape (n_samples, n_nodes), optional
        The data that was fitted; only its fingerprint is stored.
    cov, n : optional
        The statistics of a ``fit_from_stats`` run (instead of ``X``).
    node_names : sequence of str, optional
        Node names (the columns of ``X``); needed when the prior knowledge uses names.
    fit_time : float, optional
        Solver wall time in seconds.
    adjacency : array-like of shape (n_nodes, n_nodes), optional
        The thresholded DAG when the caller has it (``CoLiDE.adjacency_``); else computed.
    estimator : str, default="CoLiDE"
        The estimator's class name.
    B_true, sigma_true, metrics, data_source, wall_time, extra, transform
        As in :func:`build_manifest`.
    conditions : dict, optional
        The fit's conditions (:func:`conditions_record`); stored under ``"conditions"``
        (None for a fit without conditions).

    Returns
    -------
    dict
        A manifest (see the module docstring). ``results`` also holds the record's
        ``objective``, ``n_iter_per_stage``, ``history``, ``stop_reason``, ``lr_used`` and
        ``s_used``, so :meth:`Manifest.solver_result` gives the record back.

    Raises
    ------
    ManifestError
        If neither ``X`` nor ``(cov, n)`` is given, or the data do not have the record's
        number of nodes.
    ValueError
        If the recorded prior knowledge does not fit the nodes, or ``transform`` is not a list of
        transform steps.
    """
    from colide_core.graph._dag import threshold_to_dag
    from colide_core.graph.constraints import PriorKnowledge
    from colide_core.data.transforms import check_steps

    transform = check_steps(None if transform is None else [dict(t) for t in transform])

    names = None if node_names is None else [str(x) for x in node_names]
    if X is not None:
        data = data_fingerprint(X)
    elif cov is not None and n is not None:
        data = stats_fingerprint(cov, n, names)
    else:
        raise ManifestError("give the data X, or cov and n, that the model was fitted on")
    W = np.asarray(result.W, dtype=float)
    d = int(W.shape[0])
    if data["n_nodes"] != d:
        raise ManifestError(f"the data have {data['n_nodes']} nodes but the model has {d}")
    data["source"] = None if data_source is None else str(data_source)

    params = dict(params)
    rs = params.get("random_state")
    if rs is not None and not isinstance(rs, (int, np.integer)):
        params["random_state"] = None  # a Generator has no JSON form; the solver is deterministic
    if adjacency is None:
        required = PriorKnowledge.from_params(params).required_mask(d, names)
        adjacency = threshold_to_dag(W, float(params["threshold"]), required=required)
    adjacency = np.asarray(adjacency, dtype=float)
    if adjacency.shape != W.shape:
        raise ManifestError(f"adjacency has shape {adjacency.shape}, but W has {W.shape}")
    if metrics is None and B_true is not None:
        from colide_core.evaluation._metrics import evaluate

        metrics = evaluate(B_true, adjacency, sigma_true=sigma_true,
                           sigma_est=result.sigma if sigma_true is not None else None)
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    manifest = {
        "schema": SCHEMA,
        "estimator": estimator,
        "params": params,
        "random_state": params.get("random_state"),
        "data": data,
        "transform": transform,
        "conditions": conditions,
        "environment": environment_info(),
        "timing": {"created_utc": now, "fit_seconds": fit_time, "wall_seconds": wall_time},
        "results": {
            "node_names": names,
            "W": W,
            "adjacency": adjacency,
            "sigma": result.sigma,
            "n_iter": result.n_iter,
            "converged": result.converged,
            "stopped": result.stopped,
            "metrics": metrics,
            "objective": result.objective,
            "n_iter_per_stage": result.n_iter_per_stage,
            "history": result.history,
            "stop_reason": result.stop_reason,
            "lr_used": result.lr_used,
            "s_used": result.s_used,
            "stage_converged": result.stage_converged,
            # solver="auto" (issue 51): the candidate that won, why, and each candidate's objective
            **({"choice": result.choice} if getattr(result, "choice", None) else {}),
        },
        "extra": extra or {},
    }
    return _jsonable(manifest)


def manifest_to_json(manifest):
    """Serialise a manifest dict to JSON text (strict JSON: no NaN).

    Parameters
    ----------
    manifest : dict

    Returns
    -------
    str
    """
    return json.dumps(_jsonable(manifest), indent=1, allow_nan=False) + "\n"


def save_manifest(manifest, path):
    """Write a manifest as JSON.

    Parameters
    ----------
    manifest : dict
        From :func:`build_manifest`.
    path : str or Path
        Target file; parent directories are created.

    Returns
    -------
    pathlib.Path
        The written path.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(manifest_to_json(manifest), encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# loading, validating, reproducing
# --------------------------------------------------------------------------------------------

def _require(cond, msg):
    if not cond:
        raise ManifestError(msg)


def _matrix(value, d, what):
    try:
        A = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ManifestError(f"results.{what} must be a numeric matrix") from None
    _require(A.shape == (d, d), f"results.{what} must have shape ({d}, {d}), got {A.shape}")
    _require(np.all(np.isfinite(A)), f"results.{what} contains null/NaN")
    return A


@dataclass(frozen=True, eq=False)
class Manifest:
    """A validated manifest (read-only view over the JSON dict).

    Attributes
    ----------
    raw : dict
        The JSON document.
    W : numpy.ndarray, shape (n_nodes, n_nodes)
        Raw learned weights; ``W[i, j] != 0`` means i -> j.
    adjacency : numpy.ndarray, shape (n_nodes, n_nodes)
        The thresholded DAG.
    sigma : float, numpy.ndarray (n_nodes,) or None
        Noise standard deviation(s).
    """

    raw: dict
    W: np.ndarray
    adjacency: np.ndarray
    sigma: object

    @property
    def params(self):
        """dict: constructor parameters, schedules as tuples (ready for ``CoLiDE(**params)``)."""
        p = dict(self.raw["params"])
        for k in SCHEDULE_SETTINGS:
            if isinstance(p.get(k), list):
                p[k] = tuple(p[k])
        return p

    @property
    def node_names(self):
        """list of str or None."""
        return self.raw["results"].get("node_names")

    @property
    def metrics(self):
        """dict or None: stored metrics."""
        return self.raw["results"].get("metrics")

    @property
    def data(self):
        """dict: the data fingerprint (``kind``, ``sha256``, ``n_samples``, ``n_nodes``, ...)."""
        return self.raw["data"]

    @property
    def transform(self):
        """list of dict: the column transforms applied before the fit (``[]`` for raw data, and for
        manifests written before transforms were recorded), normalised by
        :func:`colide_core.data.transforms.check_steps` (checked when the manifest was loaded)."""
        from colide_core.data.transforms import check_steps

        return check_steps(self.raw.get("transform") or None)

    @property
    def environment(self):
        """dict: Python, platform, package versions, git commit."""
        return self.raw.get("environment", {})

    def solver_result(self):
        """The stored fit as a :class:`~colide_core.SolverResult` (the record the solver returned).

        Returns
        -------
        colide_core.SolverResult
            ``W`` and ``sigma`` as loaded; ``n_iter``, ``converged``, ``stopped`` from
            ``results``; ``objective`` (NaN when absent or null), ``n_iter_per_stage``,
            ``history`` (checkpoint lists; null values read as NaN), ``stop_reason``,
            ``lr_used`` and ``s_used`` when the manifest has them (manifests written before
            they were recorded give empty ones).
        """
        from colide_core import SolverResult  # the public name

        res = self.raw["results"]

        def num(x):
            return float("nan") if x is None else x

        history = res.get("history") if isinstance(res.get("history"), dict) else {}
        history = {str(k): [num(v) if not isinstance(v, list) else np.array([num(u) for u in v], dtype=float)
                            for v in vals] if isinstance(vals, list) else [] for k, vals in history.items()}
        objective = res.get("objective")
        W = np.array(self.W, dtype=float)
        sigma = self.sigma if not isinstance(self.sigma, np.ndarray) else np.array(self.sigma, dtype=float)
        return SolverResult(
            W=W, sigma=sigma, n_iter=int(res.get("n_iter") or 0),
            n_iter_per_stage=tuple(int(k) for k in res.get("n_iter_per_stage") or ()),
            history=history,
            objective=float(objective) if isinstance(objective, (int, float)) else float("nan"),
            converged=bool(res.get("converged")), stopped=bool(res.get("stopped")),
            stop_reason=res.get("stop_reason"),
            lr_used=tuple(float(x) for x in res.get("lr_used") or ()),
            s_used=tuple(float(x) for x in res.get("s_used") or ()),
            stage_converged=tuple(x is True for x in res.get("stage_converged") or ()
                                  if isinstance(res.get("stage_converged"), list)),
            choice=_solver_choice(res.get("choice")),
        )

    def W_frame(self):
        """``W`` as a DataFrame indexed by node names (``X0..`` when unnamed)."""
        names = self.node_names or [f"X{i}" for i in range(self.W.shape[0])]
        return pd.DataFrame(self.W, index=names, columns=names)

    def estimator(self):
        """A new, unfitted :class:`~colide_core.CoLiDE` with the recorded parameters.

        Raises
        ------
        ManifestError
            If the manifest was written for another estimator or its
            parameters are not accepted (:func:`colide_core.settings.check_settings` with the
            library's limits: unknown names, wrong types, values the solver refuses).
        """
        from colide_core import CoLiDE
        from colide_core.settings import check_settings

        _require(self.raw["estimator"] == "CoLiDE",
                 f"cannot rebuild estimator {self.raw['estimator']!r}; only CoLiDE is supported")
        try:
            p = check_settings(self.params, ignore=NOT_SETTINGS)
        except RunSettingsError as exc:
            raise ManifestError(f"the manifest's parameters do not fit CoLiDE: {'; '.join(exc.problems)}") from None
        variant = p.pop("variant", "nv")
        return CoLiDE(variant, **p)

    def check_data(self, X=None, *, cov=None, n=None):
        """Raise :class:`ManifestError` unless the data match the stored fingerprint.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_samples, n_nodes), optional
        cov, n : optional
            For a manifest of a ``fit_from_stats`` run.
        """
        if self.data["kind"] == "data":
            _require(X is not None, "this manifest was fitted on raw data: pass X")
            fp = data_fingerprint(X)
        else:
            _require(cov is not None and n is not None, "this manifest was fitted from statistics: pass cov and n")
            fp = stats_fingerprint(cov, n, self.data.get("columns"))
        if fp["sha256"] != self.data["sha256"]:
            raise ManifestError(
                "the data differ from the manifest's: expected shape "
                f"({self.data['n_samples']}, {self.data['n_nodes']}) and hash {self.data['sha256'][:12]}..., "
                f"got shape ({fp['n_samples']}, {fp['n_nodes']}) and hash {fp['sha256'][:12]}..."
            )

    @property
    def conditions(self):
        """dict or None: the fit's conditions (:func:`conditions_record`), checked on load."""
        return self.raw.get("conditions")

    def check_design(self, conditions=None, targets=None, *, design=None):
        """Refuse row labels or targets other than the ones this manifest's fit used.

        Parameters
        ----------
        conditions : array-like of shape (n_samples,), optional
            The rows' condition labels given now (None: one condition).
        targets : mapping, optional
            ``{label: [node name, ...]}`` given now.
        design : colide_core.data.design.Design, optional
            Both in one object, instead of ``conditions`` and ``targets``.

        Raises
        ------
        ManifestError
            When one side has conditions and the other not, the labels' fingerprint differs
            from the recorded one, or the targets differ (issue 42: ``report --manifest``
            accepted another design silently).
        InvalidParameterError
            For ``design`` together with ``conditions`` or ``targets``.
        """
        from colide_core.data.design import resolve_design

        record = self.conditions
        if design is not None:
            design = resolve_design(design, conditions, targets)
            conditions = None if design is None else design.row_labels()
            targets = None if design is None else design.targets_by_name()
        if record is None or conditions is None:
            _require(record is None and conditions is None,
                     "this manifest's fit used conditions and none are given" if conditions is None
                     else "this manifest's fit used one condition, but conditions are given")
            return
        if design is None:
            from colide_core.data.conditions import check_conditions

            labels, codes = check_conditions(conditions, len(conditions))
        else:
            labels, codes = design.labels, design.codes
        _require(record.get("sha256") is None or _conditions_digest(labels, codes) == record["sha256"],
                 "the row labels differ from the ones this manifest's fit used")
        # The record itself must describe these rows (issue 53: a hand-edited record, labels
        # "obs, iv1, XX" for data whose third condition is another, passed the fingerprint,
        # which is of the data's labels): every label with its count, nothing else.
        counts = np.bincount(codes, minlength=len(labels))
        got = {str(lab): int(c) for lab, c in zip(labels, counts)}
        claimed = {str(lab): c for lab, c in zip(record.get("labels") or [], record.get("counts") or [])}
        if got != claimed:
            extra = sorted(set(claimed) - set(got))[:3]
            missing = sorted(set(got) - set(claimed))[:3]
            detail = ("; ".join(part for part in (
                f"recorded but not in the data: {', '.join(map(repr, extra))}" if extra else "",
                f"in the data but not recorded: {', '.join(map(repr, missing))}" if missing else "",
            ) if part) or "the rows per condition differ")
            raise ManifestError(f"the manifest's conditions record does not describe the data's conditions ({detail})")
        given = {str(k): sorted(map(str, v)) for k, v in (targets or {}).items() if len(v)}
        recorded = {str(k): sorted(map(str, v)) for k, v in (record.get("targets") or {}).items() if len(v)}
        _require(given == recorded, "the targets differ from the ones this manifest's fit used "
                                    f"({len(recorded)} conditions with targets recorded, {len(given)} given)")

    def reproduce(self, X=None, *, cov=None, n=None, atol=0.0, callback=None, conditions=None, design=None):
        """Refit with the recorded parameters and check that the same W comes back.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_samples, n_nodes), optional
            The original data (checked against the fingerprint first).
        cov, n : optional
            The original statistics for a ``fit_from_stats`` manifest.
        atol : float, default 0.0
            Largest accepted ``max |W_new - W|``. 0 demands bit-identical
            weights (what the deterministic solver gives on the same
            machine); use e.g. 1e-8 across machines or BLAS builds.
        callback : callable, optional
            Passed to ``fit``.
        conditions : array-like of shape (n_samples,), optional
            The row labels, for a manifest of a fit with conditions (required then, and checked
            against the stored fingerprint when there is one); the recorded targets are used.
        design : colide_core.data.design.Design, optional
            Instead of ``conditions``: the rows' conditions and targets in one object, which must
            be the recorded ones (:meth:`check_design`); the refit takes it as it is.

        Returns
        -------
        colide_core.CoLiDE
            The refitted estimator.

        Raises
        ------
        ManifestError
            If the data do not match, or the refit W differs by more than
            ``atol``, or its thresholded DAG differs.
        """
        self.check_data(X, cov=cov, n=n)
        model = self.estimator()
        record = self.conditions
        if design is not None:
            self.check_design(conditions, design=design)  # refuses conditions= with design=, and another design
        if record is not None and design is not None:
            _require(self.data["kind"] == "data", "this manifest was fitted with conditions: pass X")
            model.fit(X, callback=callback, design=design)
        elif record is not None:
            _require(self.data["kind"] == "data" and conditions is not None,
                     "this manifest was fitted with conditions: pass X and the row labels (conditions=)")
            from colide_core.data.conditions import check_conditions

            labels, codes = check_conditions(conditions, int(self.data["n_samples"]))
            _require(list(labels) == record["labels"], "the condition labels differ from the manifest's")
            _require(record.get("sha256") is None or _conditions_digest(labels, codes) == record["sha256"],
                     "the rows' condition labels differ from the manifest's")
            model.fit(X, conditions=conditions, targets=record["targets"] or None, callback=callback)
        elif self.data["kind"] == "data":
            model.fit(X, callback=callback)
        else:
            model.fit_from_stats(cov, n, callback=callback, node_names=self.data.get("columns"))
        diff = float(np.max(np.abs(np.asarray(model.W_) - self.W))) if self.W.size else 0.0
        if diff > atol:
            raise ManifestError(f"the refit does not reproduce W: max |difference| = {diff:.3g} > {atol:g}")
        if not np.array_equal(np.asarray(model.adjacency_) != 0, self.adjacency != 0):
            raise ManifestError("the refit gives a different thresholded graph")
        return model


def _check_conditions_record(rec, names, d, n_samples):
    """The ``conditions`` entry of a loaded manifest: well-formed and consistent (ManifestError)."""
    from colide_core import defaults
    from colide_core.data.conditions import check_targets

    _require(isinstance(rec, dict), "conditions must be an object")
    labels, counts, targets = rec.get("labels"), rec.get("counts"), rec.get("targets")
    _require(isinstance(labels, list) and 1 <= len(labels) <= defaults.MAX_CONDITIONS
             and all(isinstance(x, str) and len(x) <= defaults.MAX_CONDITION_LABEL for x in labels)
             and len(set(labels)) == len(labels), "conditions.labels must be distinct texts")
    _require(isinstance(counts, list) and len(counts) == len(labels)
             and all(isinstance(c, int) and not isinstance(c, bool) and c >= defaults.MIN_CONDITION_ROWS
                     for c in counts) and sum(counts) == n_samples,
             "conditions.counts must give the rows of each condition, summing to data.n_samples")
    _require(rec.get("column") is None or isinstance(rec.get("column"), str), "conditions.column must be a text")
    _require(rec.get("sha256") is None or (isinstance(rec["sha256"], str) and len(rec["sha256"]) == 64),
             "conditions.sha256 must be a SHA-256 hex digest")
    _require(isinstance(targets, dict), "conditions.targets must be an object")
    try:
        check_targets(targets, labels, names, n_nodes=d, counts=counts)
    except ValueError as exc:
        raise ManifestError(f"the manifest's targets do not fit: {exc}") from None


def _parse_manifest_json(source, max_bytes):
    """The JSON document of a manifest source (path, text, bytes or open file), parsed by
    :func:`colide_core.data.io.read_json` (size and nesting bounded before parsing); every failure is
    a :class:`ManifestError`."""
    from colide_core._json import DataValidationError, read_json

    if isinstance(source, (bytes, bytearray, memoryview)):
        raw = bytes(source)
    elif hasattr(source, "read"):
        raw = source.read(max_bytes + 1)
    elif isinstance(source, os.PathLike) or (isinstance(source, str) and not source.lstrip().startswith("{")):
        try:
            with open(source, "rb") as fh:
                raw = fh.read(max_bytes + 1)
        except (OSError, ValueError) as exc:
            raise ManifestError(f"cannot read manifest {str(source)[:200]!r}: "
                                f"{getattr(exc, 'strerror', None) or exc}") from None
    elif isinstance(source, str):
        raw = source
    else:
        raise ManifestError(f"cannot read a manifest from a {type(source).__name__}")
    try:
        return read_json(raw, what="manifest", max_bytes=max_bytes)
    except DataValidationError as exc:
        raise ManifestError(str(exc)) from None


def load_manifest(source, *, max_bytes=None):
    """Read and validate a manifest.

    Parameters
    ----------
    source : str, os.PathLike, bytes, dict or file-like
        A path to a JSON file, the JSON text or bytes themselves (e.g. an
        uploaded file's content), an already parsed dict, or an open file.
        Text and bytes go through :func:`colide_core.data.io.read_json`: UTF-8,
        at most ``max_bytes`` long and nested at most
        :data:`colide_core.data.io.JSON_MAX_DEPTH` (64) deep, checked before
        parsing.
    max_bytes : int, optional
        Largest document accepted, in bytes; default
        :data:`colide_core.data.io.JSON_MAX_BYTES` (10 MB; a 200-node manifest
        is about 1.5 MB).

    Returns
    -------
    Manifest
        With ``W``, ``adjacency``, ``sigma`` as arrays; the app can show the
        stored result directly, or call :meth:`Manifest.reproduce` to refit.

    Raises
    ------
    ManifestError
        If the file is missing, too large, too deeply nested, not UTF-8 or
        not JSON, the schema is not ``"colide-manifest/1"``, a required field
        is missing, or shapes are inconsistent (W, adjacency, sigma, node
        names versus ``n_nodes``). No other exception escapes for any
        content of ``source``.
    """
    if max_bytes is None:
        from colide_core.data.io import JSON_MAX_BYTES as max_bytes
    if isinstance(source, dict):
        doc = source
    else:
        doc = _parse_manifest_json(source, max_bytes)
    try:
        return _manifest_from_document(doc)
    except ManifestError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, RecursionError) as exc:
        raise ManifestError(f"the manifest is malformed ({type(exc).__name__}: "
                            f"{' '.join(str(exc).split())[:300]})") from None


def _manifest_from_document(doc):
    """The checks of :func:`load_manifest` on a parsed document (raises ManifestError)."""
    _require(isinstance(doc, dict), "a manifest must be a JSON object")
    _require(doc.get("schema") == SCHEMA,
             f"unsupported manifest schema {doc.get('schema')!r}; expected {SCHEMA!r}")
    for key in ("estimator", "params", "data", "results"):
        _require(key in doc, f"the manifest lacks the field {key!r}")
    data, res, params = doc["data"], doc["results"], doc["params"]
    _require(isinstance(params, dict), "params must be an object")
    _require(isinstance(data, dict) and data.get("kind") in ("data", "stats"),
             "data.kind must be 'data' or 'stats'")
    for key in ("sha256", "n_samples", "n_nodes"):
        _require(key in data, f"the manifest lacks data.{key}")
    d = data["n_nodes"]
    _require(isinstance(d, int) and d >= 1, "data.n_nodes must be a positive integer")
    _require(isinstance(res, dict) and "W" in res and "adjacency" in res, "results must hold W and adjacency")
    W = _matrix(res["W"], d, "W")
    adj = _matrix(res["adjacency"], d, "adjacency")
    sigma = res.get("sigma")
    if isinstance(sigma, list):
        sigma = np.array(sigma, dtype=float)
        _require(sigma.shape == (d,), f"results.sigma must have {d} entries, got {sigma.shape[0]}")
    elif sigma is not None:
        _require(isinstance(sigma, (int, float)), "results.sigma must be a number, a list or null")
        sigma = float(sigma)
    if doc.get("transform") is not None:
        from colide_core.data.transforms import check_steps

        try:
            check_steps(doc["transform"])
        except ValueError as exc:
            raise ManifestError(f"the manifest's transform is malformed: {exc}") from None
    names = res.get("node_names")
    if names is not None:
        _require(isinstance(names, list) and len(names) == d,
                 f"results.node_names must list {d} names")
    if doc.get("conditions") is not None:
        _check_conditions_record(doc["conditions"], names, d, data["n_samples"])
    W.setflags(write=False)
    adj.setflags(write=False)
    if isinstance(sigma, np.ndarray):
        sigma.setflags(write=False)
    return Manifest(raw=doc, W=W, adjacency=adj, sigma=sigma)


#: The candidates ``solver="auto"`` records (:func:`colide_core.solver._auto.auto_solve`).
_AUTO_CANDIDATES = ("fast", "topo", "warm", "topo-warm")


def _solver_choice(raw):
    """A manifest's ``results.choice`` (``solver="auto"``'s record) as the solver wrote it, or None
    when absent or not of that shape: a known winner, a short reason, numeric objectives (a loaded
    manifest is user input; its text is shown on pages)."""
    if not isinstance(raw, dict) or raw.get("solver") not in _AUTO_CANDIDATES:
        return None
    cands = raw.get("candidates")
    if not isinstance(cands, dict) or not all(k in _AUTO_CANDIDATES and isinstance(v, (int, float))
                                               and not isinstance(v, bool) for k, v in cands.items()):
        return None
    est = raw.get("estimate")
    return {"solver": raw["solver"], "reason": str(raw.get("reason") or "")[:300],
            "candidates": {k: float(v) for k, v in cands.items()},
            "seconds": {k: float(v) for k, v in (raw.get("seconds") or {}).items()
                        if k in _AUTO_CANDIDATES and isinstance(v, (int, float)) and not isinstance(v, bool)}
            if isinstance(raw.get("seconds"), dict) else {},
            "estimate": float(est) if isinstance(est, (int, float)) and not isinstance(est, bool) else None}
