"""Run manifests in the app: download the Learn page's fit, load one back to get the same view.

* :func:`fit_manifest` describes one :class:`dashboard.fitting.FitResult` at the Learn page's
  threshold as a ``colide_core.run.manifest`` document (schema ``"colide-manifest/1"``, the same
  as ``python -m colide_core fit`` writes, built by the same
  ``colide_core.run.manifest.manifest_from_result`` from the solver's record): data fingerprint and
  shape, every ``CoLiDE`` parameter (the page threshold as ``threshold``), environment, raw
  ``W``, the thresholded DAG, ``sigma``, the solver's history and, when the dataset has a
  ground truth, the metrics the page shows.
* :func:`run_from_manifest` validates an uploaded manifest (JSON only, never unpickled),
  checks it against the current dataset's fingerprint and turns it into a
  :class:`LoadedRun`: the widget values (noise model, lambda, threshold), the solver
  overrides and prior knowledge, and a ``FitResult`` holding the stored record
  (``Manifest.solver_result``).
  :func:`apply_to_state` writes that into the session state, so the Learn page shows the same
  graph, threshold and metrics without re-solving.

Problems raise :class:`ManifestProblem` (or its subclass :class:`DataMismatch`) with a plain
message; the page escapes it before showing it. Nothing here renders anything.

Convention: ``W[i, j] != 0`` means the edge i -> j.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from colide_core.graph.constraints import PRIOR_KEYS, PriorKnowledge
from colide_core.settings import SETTING_NAMES, SETTINGS, setting
from dashboard.caching.cached import cache_data

__all__ = [
    "ManifestProblem", "DataMismatch", "LoadedRun", "fit_manifest", "fit_manifest_json", "manifest_file_name",
    "run_from_manifest", "apply_to_state",
]

#: Settings with a widget of their own on the Learn page (``colide_core.settings.Setting.dashboard``
#: "own"), not solver overrides; the solver is both (the sidebar's radio writes the overrides).
_WIDGET_PARAMS = tuple(row.name for row in SETTINGS if row.dashboard == "own" and row.name != "solver")


from dashboard.infra.errors import DataMismatch, ManifestProblem  # noqa: E402,F401 - re-exported (dashboard/infra/errors.py)


# --------------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------------

def fit_manifest(result, dataset, threshold) -> dict:
    """The manifest of one Learn-page fit at the page's threshold.

    Parameters
    ----------
    result : dashboard.fitting.FitResult
        The fit (raw ``W`` of shape (n_nodes, n_nodes)).
    dataset : dashboard.data.Dataset
        The dataset it was fitted on (``X`` of shape (n_samples, n_nodes)); only its
        fingerprint, shape, column names and name are stored.
    threshold : float
        The Learn page's edge threshold; stored as the ``threshold`` parameter, and the
        stored ``adjacency`` is ``W`` thresholded at it (required edges kept).

    Returns
    -------
    dict
        A ``colide_core.run.manifest.manifest_from_result`` document of ``result.result`` (the
        solver's record, checkpoint history included, so a reloaded run also shows the
        convergence plot); ``params`` are every ``CoLiDE`` parameter (defaults filled in);
        ``extra.dashboard`` holds the dataset source; ``transform`` lists the Data page's
        transforms of this dataset (``Dataset.meta["transform"]``), and ``data`` fingerprints
        the transformed data.

    Raises
    ------
    colide_core.run.manifest.ManifestError
        If the result does not fit the dataset (different number of nodes).
    """
    import colide_core
    from colide_core.run.manifest import manifest_from_result
    from dashboard.data import dataset_transform

    params = colide_core.CoLiDE(**{**dict(result.params), "threshold": float(threshold)}).get_params()
    B_true = None if dataset.B_true is None else dataset.B_true.to_numpy()
    return manifest_from_result(result.result, params, dataset.X, node_names=list(dataset.node_names),
                                fit_time=result.fit_time, B_true=B_true, sigma_true=dataset.sigma_true,
                                data_source=dataset.name,
                                extra={"dashboard": {"dataset_source": dataset.source},
                                       # the rows and columns the upload dropped: part of the way from the raw file
                                       **({"preprocess": dict(dataset.meta["upload"])} if "upload" in dataset.meta
                                          else {})},
                                transform=dataset_transform(dataset), conditions=dataset_conditions_record(dataset))


def dataset_conditions_record(dataset):
    """The manifest's ``conditions`` entry of a dataset with several conditions (None otherwise).

    Parameters
    ----------
    dataset : dashboard.data.Dataset

    Returns
    -------
    dict or None
        ``colide_core.run.manifest.conditions_record`` of the dataset's design
        (:attr:`dashboard.data.Dataset.design`, checked when the dataset was made).
    """
    from colide_core.run.manifest import conditions_record

    design = dataset.design
    if not design.has_conditions:
        return None
    return conditions_record(design=design, column=dataset.meta.get("conditions_column"))


def manifest_file_name(result, dataset, threshold: float) -> str:
    """The one file name of a fit's run manifest: the Learn page's download, the report's "Save
    this manifest" and the file its ``fit`` command reads with ``--prior`` (issue 48, m-8: the
    command named "manifest.json", then a name of the report's own, and a Learn download had to be
    renamed).

    Parameters
    ----------
    result : dashboard.fitting.FitResult
    dataset : dashboard.data.Dataset
    threshold : float
        The Learn page's threshold.

    Returns
    -------
    str
        :func:`dashboard.data.download_name` of the dataset, the noise model, λ and threshold
        (e.g. ``colide_Sachs_consensus17_nv_lambda0.1_thr0.25_manifest.json``): distinct for EV and
        NV, safe characters only.
    """
    from dashboard.data import download_name
    from dashboard.infra.text import fmt_lambda

    return download_name(dataset, result.variant, f"lambda{fmt_lambda(result.lambda1)}", f"thr{threshold:g}",
                         ext="_manifest.json")


@cache_data(show_spinner=False, max_entries=32)
def fit_manifest_json(result, dataset, threshold: float) -> str:
    """:func:`fit_manifest` as JSON text, cached on everything it is made of.

    The cache is shared by every session, so its key covers the whole output: the fit record
    (:attr:`dashboard.fitting.FitResult.content_key`: ``W``, ``sigma``, history, parameters,
    ...), the dataset (content hash *and* name, source, notes: ``dashboard.caching.cached.dataset_cache_key``)
    and the threshold. A run loaded from a manifest, or a fit of the same numbers under another
    file name, therefore never serves its JSON to another session.

    Parameters
    ----------
    result : dashboard.fitting.FitResult
    dataset : dashboard.data.Dataset
    threshold : float
        The Learn page's threshold.

    Returns
    -------
    str
        Strict JSON (``colide_core.run.manifest.manifest_to_json``).
    """
    from colide_core.run.manifest import manifest_to_json

    return manifest_to_json(fit_manifest(result, dataset, float(threshold)))


# --------------------------------------------------------------------------------------------
# loading
# --------------------------------------------------------------------------------------------

@dataclass
class LoadedRun:
    """What an uploaded manifest puts on the Learn page.

    Attributes
    ----------
    label : {"EV", "NV"}
        Noise-model widget value.
    lambda1, threshold : float
        Widget values.
    overrides : dict
        Solver overrides (``CoLiDE`` parameters that differ from the defaults), prior knowledge
        included, as in ``st.session_state["solver_overrides"]``.
    prior : colide_core.graph.constraints.PriorKnowledge or None
    result : dashboard.fitting.FitResult
        The stored fit, tied to the current dataset.
    source : str or None
        The manifest's data source (user-supplied: escape before showing).
    created : str or None
        Creation time (UTC, ISO 8601).
    notes : list of str
        Plain-text remarks worth showing (e.g. a stored graph that re-thresholds differently).
    """

    label: str
    lambda1: float
    threshold: float
    overrides: dict
    prior: object
    result: object
    source: object = None
    created: object = None
    notes: list = field(default_factory=list)


def _tuples(value):
    """Lists (from JSON) back to tuples, recursively."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


def run_from_manifest(source, dataset) -> LoadedRun:
    """Validate a manifest against the current dataset and turn it into a Learn-page view.

    Parameters
    ----------
    source : bytes, str or dict
        The manifest's JSON (e.g. an uploaded file's bytes). Only JSON is read; nothing is
        unpickled or executed.
    dataset : dashboard.data.Dataset
        The current dataset (``X`` of shape (n_samples, n_nodes)).

    Returns
    -------
    LoadedRun

    Raises
    ------
    ManifestProblem
        If the text is not a valid ``colide-manifest/1`` document, is not a CoLiDE fit on raw
        data with the EV or NV noise model, or its parameters or prior knowledge are not
        usable on this dataset. The run settings go through
        :func:`colide_core.settings.check_settings` (the solver's checks and the
        dashboard's bounds: the message lists every offending setting), so a loaded manifest
        cannot start a fit that never ends.
    DataMismatch
        If the data fingerprint differs from the current dataset's (message: both shapes and
        hash prefixes).
    """
    import colide_core
    from colide_core.settings import INTERACTIVE, check_settings
    from colide_core.settings import NOT_SETTINGS
    from colide_core.run.manifest import (ManifestError, RunSettingsError, data_fingerprint,
                                      load_manifest)
    from colide_core.data.transforms import describe_step
    from dashboard.fitting import FitResult, solver_params

    try:
        m = load_manifest(source if not isinstance(source, str) else source.encode("utf-8"))
    except ManifestError as exc:
        raise ManifestProblem(f"this is not a usable run manifest: {exc}") from None
    if m.raw.get("estimator") != "CoLiDE":
        raise ManifestProblem(f"the manifest describes a {m.raw.get('estimator')!r} run; only CoLiDE fits can be shown")
    if m.data.get("kind") != "data":
        raise ManifestProblem("the manifest was fitted from sufficient statistics (fit_from_stats), not from a "
                              "data table, so it cannot be checked against the current dataset")
    try:
        m.check_data(dataset.X)
    except ManifestError:
        here = data_fingerprint(dataset.X)
        raise DataMismatch(
            f"the manifest was made on different data: {m.data.get('n_samples')} samples × "
            f"{m.data.get('n_nodes')} nodes (source {m.data.get('source')!r}, fingerprint "
            f"{str(m.data.get('sha256'))[:12]}…), but the current dataset {dataset.name!r} has "
            f"{here['n_samples']} samples × {here['n_nodes']} nodes (fingerprint {here['sha256'][:12]}…). "
            "Load the same data on the Data page first"
            + (" and apply the manifest's transform there: " + ", then ".join(describe_step(t) for t in m.transform)
               if m.transform else "") + "."
        ) from None

    here = dataset_conditions_record(dataset)
    there = m.conditions
    if (here is None) != (there is None) or (here is not None and (
            here["sha256"] != there.get("sha256") or here["targets"] != there.get("targets"))):
        def says(rec):
            return ("one condition" if rec is None else
                    f"{len(rec['labels'])} conditions with targets on {sum(map(len, rec['targets'].values()))} node(s)")
        raise DataMismatch(f"the manifest's fit used {says(there)}, the current dataset has {says(here)}: choose the "
                           "same Sachs version (or the same condition column and targets) on the Data page first")

    variant = m.params.get("variant")
    if variant not in ("ev", "nv"):
        raise ManifestProblem(f"the Learn page shows the EV and NV noise models only; the manifest has variant "
                              f"{str(variant)[:40]!r}")
    try:
        # Every setting, with the solver's own checks and the dashboard's bounds: a manifest
        # cannot start a fit that never ends (tol = 0, max_iter = 1e12, lr = -1, text, lists).
        params = check_settings(dict(m.raw["params"]), limits=INTERACTIVE, ignore=NOT_SETTINGS)  # as written
    except RunSettingsError as exc:
        raise ManifestProblem("the manifest's run settings cannot be used here: " + "; ".join(exc.problems)) from None
    # checked above (colide_core.settings.INTERACTIVE: the Learn page's ranges); absent: the default
    lambda1 = float(params.get("lambda1", colide_core.defaults.LAMBDA1))
    threshold = float(params.get("threshold", colide_core.defaults.THRESHOLD))
    defaults = colide_core.CoLiDE().get_params()

    names = list(dataset.node_names)
    prior = None
    cons = {k: _tuples(params[k]) for k in PRIOR_KEYS if params.get(k) is not None}
    if cons:
        try:
            prior = PriorKnowledge.create(**cons)
            prior.resolve(len(names), names)
        except ValueError as exc:
            raise ManifestProblem(f"the manifest's prior knowledge does not fit this dataset: {exc}") from None
        if prior.is_empty:
            prior = None
    overrides, not_applied = {}, []
    for k, v in params.items():
        if k in _WIDGET_PARAMS or k in PRIOR_KEYS:
            continue
        if k in SETTING_NAMES and setting(k).dashboard is None:  # the server's choice (device), or not a fit's
            if _tuples(v) != defaults[k] and k != "random_state":
                not_applied.append(f"{k} = {str(v)[:40]!r}")
            continue
        v = _tuples(v)
        if v != defaults[k]:
            overrides[k] = v
    if prior is not None:
        overrides.update(prior.as_kwargs())

    if m.sigma is None:
        raise ManifestProblem("the manifest has no noise scale (results.sigma)")
    record = m.solver_result()
    if "objective" not in record.history:
        # Manifests written by the dashboard before the solver's history was recorded kept the
        # objective trace under extra.dashboard.
        extra = m.raw.get("extra") if isinstance(m.raw.get("extra"), dict) else {}
        dash = extra.get("dashboard") if isinstance(extra.get("dashboard"), dict) else {}
        try:
            trace = [float("nan") if o is None else float(o) for o in dash.get("objective") or ()]
        except (TypeError, ValueError):
            trace = []
        record = dataclasses.replace(record, history={"objective": trace})
    fit_seconds = (m.raw.get("timing") or {}).get("fit_seconds")
    result = FitResult(
        result=record,
        variant=variant,
        params=solver_params(variant, lambda1, overrides),
        data_key=dataset.key,
        node_names=names,
        fit_time=float(fit_seconds) if isinstance(fit_seconds, (int, float)) else 0.0,
    )
    notes = []
    required = PriorKnowledge.from_params(result.params).required_mask(len(names), names)
    again = colide_core.threshold_to_dag(result.W, threshold, required=required)
    if not np.array_equal(again != 0, m.adjacency != 0):
        notes.append("The graph stored in the manifest differs from its W thresholded at "
                     f"{threshold:g}; the page shows the re-thresholded W.")
    if not_applied:
        notes.append("Not applied here (the server decides where and how fits run): " + ", ".join(not_applied) + ".")
    return LoadedRun(label=variant.upper(), lambda1=lambda1, threshold=threshold, overrides=overrides,
                     prior=prior, result=result, source=m.data.get("source"),
                     created=(m.raw.get("timing") or {}).get("created_utc"), notes=notes)


def apply_to_state(ss, run: LoadedRun) -> None:
    """Put a loaded run into the session state so the Learn page shows it.

    Sets the Learn widgets (``learn_variant``, ``learn_lambda1``, ``learn_threshold``), the
    solver overrides and the prior knowledge (``dashboard.infra.state.trust`` keys, as the Prior
    knowledge page's Apply does), and makes ``run.result`` the only fit shown (a fit of the
    other noise model, made with other settings, would not be part of the manifest's view; it
    stays in the fit cache). Call it from a widget callback (before the widgets are drawn).

    Parameters
    ----------
    ss : MutableMapping
        ``st.session_state``.
    run : LoadedRun
    """
    from dashboard.infra import state
    from dashboard.infra.state import trust as ts

    ss["learn_variant"] = run.label
    ss["learn_lambda1"] = run.lambda1
    ss["learn_threshold"] = run.threshold
    ss[state.SOLVER_OVERRIDES] = dict(run.overrides)
    # The sidebar's solver radio shows the manifest's solver (its "auto" stands for "fast" too).
    from dashboard.infra.layout import SOLVER_LABELS

    solver = run.overrides.get("solver", "auto")
    ss["solver_choice"] = solver if solver in SOLVER_LABELS else "auto"
    ss[ts.PRIOR] = run.prior
    tables = (run.prior or PriorKnowledge()).to_tables(run.result.node_names)
    tables["names"] = list(run.result.node_names)
    ss[ts.PRIOR_DRAFT] = tables
    ss[ts.PRIOR_VERSION] = ss.get(ts.PRIOR_VERSION, 0) + 1
    ss[state.RESULTS] = {run.result.variant: run.result}
