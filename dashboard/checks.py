"""Cached adapters of :mod:`colide_core.evaluation.checks`, :mod:`colide_core.evaluation.curves` and
:mod:`colide_core.render.report` for the Check page (and the EV-or-NV line of the Learn page).

The cached functions go through :func:`dashboard.caching.cached.cache_data`: every argument is hashed
in full except ``_X``, whose content hash is the ``data_key`` argument. The report is not cached
(it embeds the dataset's name and the session's fits). Convention: ``X`` is
``(n_samples, n_nodes)``; ``W[i, j] != 0`` means i -> j.
"""
from __future__ import annotations

import numpy as np

import colide_core
from colide_core.render import report as core_report
from colide_core.render import tables as _tables
from colide_core.settings import NOT_SETTINGS, RESULT_SETTINGS
from dashboard.caching.cached import cache_data
from dashboard.infra.errors import ChecksStopped, PathStopped  # noqa: F401 - re-exported (their old home)
from dashboard.live import thresholded
from dashboard.infra.text import plural
from dashboard.infra.workers import in_worker

__all__ = ["shown_graph", "run_checks_cached", "ev_nv_line", "path_cached", "report_html", "report_html_or_error",
           "bootstrap_frequency", "bootstrap_mismatch", "ChecksStopped", "PathStopped", "checks_job",
           "harvest_checks", "path_job", "harvest_path", "edge_lights", "disputed_in_session"]


def shown_graph(result, threshold, names, return_removed=False):
    """The graph the Learn page shows for a fit (:func:`dashboard.live.thresholded`).

    Parameters
    ----------
    result : dashboard.fitting.FitResult
    threshold : float
    names : list of str
    return_removed : bool, default=False
        Also return the edges removed to break cycles.

    Returns
    -------
    ndarray of shape (n_nodes, n_nodes)
        A DAG with the kept weights; with ``return_removed=True`` the pair ``(adjacency, removed)``.
    """
    return thresholded(result, float(threshold), names, return_removed=return_removed)


#: Settings whose difference makes a bootstrap belong to another fit: every setting the fitted W
#: depends on (``colide_core.settings.RESULT_SETTINGS``; the threshold only changes which edges are
#: counted, and is stated with the frequencies), the prior knowledge and TOPO's start order.
_FIT_KEYS = RESULT_SETTINGS + NOT_SETTINGS


def bootstrap_mismatch(boot_state, data_key, params):
    """Why the Edge confidence page's bootstrap does not belong to this fit ("" when it does).

    A bootstrap belongs to a fit only if its data, noise model, λ, solver, schedule and prior
    knowledge all match (issue 28: an unconstrained bootstrap was attached to a constrained fit
    on variant and λ alone, so the required edge showed frequency 0).

    Parameters
    ----------
    boot_state : dict or None
        ``dashboard.infra.state.trust.BOOT_RESULT`` (``key=(data key, params, n_boot, seed)``).
    data_key : str
    params : tuple
        The fit's :func:`dashboard.fitting.solver_params`.

    Returns
    -------
    str or None
        None without a bootstrap; ``""`` when it matches; else a sentence naming what differs.
    """
    if not boot_state or not boot_state.get("key"):
        return None
    key = boot_state["key"]
    if key[0] != data_key:
        return "it was run on other data"
    defaults = colide_core.CoLiDE().get_params()  # an absent setting is its default
    boot, mine = {**defaults, **dict(key[1])}, {**defaults, **dict(params)}
    differ = [k for k in _FIT_KEYS if boot.get(k) != mine.get(k)]
    if not differ:
        return ""
    shown = {"lambda1": "λ", "forbidden": "prior knowledge", "required": "prior knowledge", "tiers": "prior knowledge"}
    names = list(dict.fromkeys(shown.get(k, k.replace("_", " ")) for k in differ))
    return "its " + ", ".join(names) + (" differs" if len(names) == 1 else " differ") + " from this fit's"


def bootstrap_frequency(boot_state, data_key, params):
    """Edge frequencies of the Edge confidence page's bootstrap when it belongs to this fit, else None.

    Parameters
    ----------
    boot_state, data_key, params
        As in :func:`bootstrap_mismatch`.

    Returns
    -------
    (ndarray of shape (n_nodes, n_nodes), str) or None
        The frequencies and a sentence saying which bootstrap they come from; None unless
        :func:`bootstrap_mismatch` is ``""``.
    """
    if bootstrap_mismatch(boot_state, data_key, params) != "":
        return None
    boot = dict(boot_state["key"][1])
    res = boot_state["result"]
    return (np.asarray(res.frequency, dtype=float),
            f"bootstrap of the Edge confidence page ({res.n_ok} resamples, threshold {boot.get('threshold')})")


def _design_kwargs(design) -> dict:
    """The library's keyword arguments for a dataset's design: ``design=`` for a
    :class:`~colide_core.data.design.Design` (:attr:`dashboard.data.Dataset.design`, checked once,
    passed as it is); nothing for None."""
    return {} if design is None else {"design": design}


@cache_data(show_spinner=False, max_entries=16,
            unhashed={"_X": "data_key is the content hash of X (values, names, truth)",
                      "_design": "data_key covers it (the Dataset's Design is built from the labels and targets it hashes)",
                      "_callback": "progress and Stop only: a stopped run raises ChecksStopped, never cached"})
def run_checks_cached(data_key: str, params: tuple, threshold: float, n_random: int, n_rescale: int,
                      refits: bool, freq_key, _X, A, W, frequency, _design=None, _callback=None):
    """:func:`colide_core.evaluation.checks.run_checks` of one fit, cached.

    Parameters
    ----------
    data_key, params, threshold, n_random, n_rescale, refits, freq_key
        Dataset hash, fit parameters, threshold, Markov random graphs, rescalings,
        whether to refit (standardised data and random rescalings), the bootstrap's identity.
    _X : pandas.DataFrame of shape (n_samples, n_nodes)
        Not hashed: ``data_key`` is its content hash.
    A, W : ndarray of shape (n_nodes, n_nodes)
        Thresholded DAG and raw weights (hashed in full: a loaded manifest's W differs from a
        fresh fit's with the same parameters).
    frequency : ndarray of shape (n_nodes, n_nodes) or None
    _design : colide_core.data.design.Design, optional
        The dataset's design (:attr:`dashboard.data.Dataset.design`): the residuals get one intercept per
        condition and skip targeted rows, the Markov check runs on per-condition-centred data
        and the refits model the conditions. Not hashed: ``data_key`` covers it.
    _callback : callable, optional
        ``callback(done, total) -> bool`` of :func:`colide_core.evaluation.checks.run_checks`
        (a job's :meth:`~dashboard.infra.jobs.Job.progress`): True stops the checks.

    Returns
    -------
    colide_core.evaluation.checks.CheckReport

    Raises
    ------
    ChecksStopped
        When the callback stopped the checks (the partial report rides on the exception).
    """
    estimator = colide_core.CoLiDE(**{**dict(params), "threshold": float(threshold)}) if refits else None
    report = in_worker(colide_core.evaluation.checks.run_checks, _X, A, W=W, estimator=estimator, frequency=frequency,
                                                      n_random=int(n_random),
                                                      n_rescale=int(n_rescale) if refits else 0,
                                                      callback=_callback, **_design_kwargs(_design))
    if report.stopped:
        raise ChecksStopped(report)
    return report


@cache_data(show_spinner=False, max_entries=64,
            unhashed={"_X": "data_key is the content hash of X (values, names, truth)",
                      "_design": "data_key covers it (the Dataset's Design is built from the labels and targets it hashes)"})
def ev_nv_line(data_key: str, params: tuple, threshold: float, _X, A, _design=None) -> str:
    """The EV-or-NV verdict of the residual test as one sentence (numbers only, no user text).

    Parameters
    ----------
    data_key, params, threshold
        The cache key.
    _X : pandas.DataFrame of shape (n_samples, n_nodes)
        Not hashed: ``data_key`` is its content hash.
    A : ndarray of shape (n_nodes, n_nodes)
        The thresholded DAG (hashed in full).
    _design : colide_core.data.design.Design, optional
        The dataset's design (as in :func:`run_checks_cached`): residuals with one intercept per
        condition, each node on its unmasked rows. Not hashed: ``data_key`` covers it.

    Returns
    -------
    str
        :attr:`colide_core.evaluation.checks.ResidualChecks.ev_nv_line`, or a sentence saying why the test
        could not run.
    """
    try:
        return colide_core.evaluation.checks.residual_checks(_X, A, **_design_kwargs(_design)).ev_nv_line
    except ValueError as exc:
        return f"Noise model check not available: {exc}"


@cache_data(show_spinner=False, max_entries=8,
            unhashed={"_X": "data_key is the content hash of X (values, names, truth)",
                      "_design": "data_key covers it (the Dataset's Design is built from the labels and targets it hashes)",
                      "_callback": "progress and Stop only: a stopped path raises PathStopped, never cached"})
def path_cached(data_key: str, variant: str, overrides: tuple, _X, _design=None, _callback=None):
    """:func:`colide_core.solver.path.lambda_path` with the default λ grid and thresholds, cached.

    Parameters
    ----------
    data_key, variant, overrides
        The cache key (``overrides``: sorted tuple of ``lambda_path`` keyword arguments).
    _X : pandas.DataFrame of shape (n_samples, n_nodes)
    _design : colide_core.data.design.Design, optional
        The dataset's design (as in :func:`run_checks_cached`): every λ is fitted with its
        conditions and targets. Not hashed: ``data_key`` covers it.
    _callback : callable, optional
        ``callback(done, total) -> bool`` of :func:`colide_core.solver.path.lambda_path`.

    Returns
    -------
    colide_core.solver.path.LambdaPath

    Raises
    ------
    PathStopped
        When the callback stopped the path after its first λ (the partial path rides on it);
        ValueError when it stopped before.
    """
    kwargs = {k: (list(v) if isinstance(v, tuple) and k in ("forbidden", "required", "tiers") else v)
              for k, v in overrides}
    # in a job's thread: in a worker process (issue 53), the job's progress relayed to it
    path = in_worker(colide_core.lambda_path, _X, variant=variant, callback=_callback, **kwargs, **_design_kwargs(_design))
    if path.stopped:
        raise PathStopped(path)
    return path


def checks_job(key, data_key, params, threshold, n_random, n_rescale, refits, freq_key, X, A, W, frequency,
               design=None):
    """A :class:`dashboard.infra.jobs.Job` running :func:`run_checks_cached` (slot, progress, Stop, session end).

    Parameters
    ----------
    key : tuple
        What the page matches the result with (stored as ``job.key``).
    data_key, params, threshold, n_random, n_rescale, refits, freq_key, X, A, W, frequency
        As :func:`run_checks_cached`.
    design : colide_core.data.design.Design, optional
        The dataset's design (``_design`` of :func:`run_checks_cached`).

    Returns
    -------
    dashboard.infra.jobs.Job
        Not started; its result is the :class:`~colide_core.evaluation.checks.CheckReport`
        (partial, ``stopped`` True, after Stop).
    """
    from dashboard.infra.jobs import Job

    def work(job):
        try:
            return run_checks_cached(data_key, params, threshold, int(n_random), int(n_rescale), bool(refits),
                                     freq_key, X, A, W, frequency, _design=design, _callback=job.progress)
        except ChecksStopped as stopped:
            return stopped.report

    from dashboard.infra.memory import checks_memory
    from dashboard.infra.state.check import CHECK_RESULT

    label = "Checks with refits" if refits else "Checks"
    # its copies of the data and the Markov check's tests are bounded in the server's memory budget
    # before it starts, or it is refused with the sizes (issue 53)
    return Job(work, label, key=key, memory=checks_memory(*np.shape(X), int(n_random), keys=(CHECK_RESULT,)))


def harvest_checks(state, result_key):
    """``harvest(job)`` of :func:`dashboard.infra.jobs.follow_job` for :func:`checks_job`.

    Stores ``dict(key, report, error)`` in ``state[result_key]`` (also after Stop or an error,
    so the page does not start the same checks again by itself) and returns the messages.
    """
    from dashboard.infra.text import md_escape

    def harvest(job):
        state[result_key] = {"key": job.key, "report": job.result, "error": job.error}
        if job.error:
            return [("error", "The checks could not run on this fit: " + md_escape(job.error))]
        if job.result is not None and job.result.stopped:
            why = "its session ended" if job.stop_reason == "session" else "Stop was pressed"
            return [("warning", f"The checks were stopped ({why}) after {job.elapsed:.1f} s: what was finished "
                                "is shown below; press **Run the checks again** for the rest.")]
        return []

    return harvest


def path_job(key, data_key, variant, overrides, X, design=None):
    """A :class:`dashboard.infra.jobs.Job` solving :func:`path_cached` (slot, progress, Stop, session end).

    Parameters
    ----------
    key : tuple
        What the page matches the result with (stored as ``job.key``).
    data_key, variant, overrides, X
        As :func:`path_cached`.
    design : colide_core.data.design.Design, optional
        The dataset's design (``_design`` of :func:`path_cached`).

    Returns
    -------
    dashboard.infra.jobs.Job
        Not started; its result is the :class:`~colide_core.solver.path.LambdaPath`.
    """
    from dashboard.infra.jobs import Job

    def work(job):
        try:
            return path_cached(data_key, variant, overrides, X, _design=design, _callback=job.progress)
        except PathStopped as stopped:
            return stopped.path

    from colide_core.solver.path import DEFAULT_THRESHOLDS, default_lambdas
    from dashboard.infra.memory import path_memory
    from dashboard.infra.state.check import PATH

    # every λ's weights and DAGs are bounded in the server's memory budget before it starts (issue 53)
    return Job(work, "λ path", key=key, memory=path_memory(*np.shape(X), len(default_lambdas()),
                                                          len(DEFAULT_THRESHOLDS), keys=(PATH,)))


def harvest_path(state, result_key):
    """``harvest(job)`` for :func:`path_job`: stores ``dict(key, path)`` (partial after Stop) in ``state``."""
    from dashboard.infra.text import md_escape

    def harvest(job):
        if job.error or job.result is None:
            text = job.error or "the λ path returned nothing"
            return [("error", "The λ path failed: " + md_escape(text))]
        state[result_key] = {"key": job.key, "path": job.result}
        if job.result.stopped:
            return [("warning", f"The λ path was stopped after {job.result.lambdas.size} λ values; the curves "
                                "below use those.")]
        return []

    return harvest


def report_html(data_key: str, labels: tuple, threshold: float, ref_key, checks_key, path_key,
                X, fits, B, reference_label, checks, path, audit, dataset_name, design=None,
                data_file="DATA.csv", predictions=(), plan=None, ida_predictions=()) -> bytes:
    """:func:`colide_core.render.report.build_report` as UTF-8 bytes.

    Not cached: the report embeds the dataset's name, the fits and the session's checks, and it
    is built only when the user clicks the download button (about 0.5 s on Sachs,
    ``benchmarks/bench_check.py``); a shared cache entry keyed on less than all of that could
    hand one session's report to another (docs/security.md).

    Parameters
    ----------
    data_key, labels, threshold, ref_key, checks_key, path_key
        What the report is of (kept in the signature for the caller's bookkeeping).
    X, fits, B, reference_label, checks, path, audit, dataset_name
        As :func:`colide_core.render.report.build_report` (``B`` is ``B_true``).
    design : colide_core.data.design.Design, optional
        The dataset's design (:attr:`dashboard.data.Dataset.design`): with conditions the report gains its
        per-condition section (rows, targets, median shifts, edges the interventions orient).
    data_file : str or dashboard.data.Reproduction, default="DATA.csv"
        What the report's commands read: :func:`dashboard.data.data_as_fitted` of the dataset (its
        file name and whether the commands replay the cleaning and transforms), or a raw file's name.
    predictions, plan, ida_predictions : optional
        The Predict page's last prediction, ranking and GES + IDA prediction of this fit
        (:func:`dashboard.infra.state.predict.for_report`).

    Returns
    -------
    bytes
        The self-contained HTML report.
    """
    html = core_report.build_report(X, fits, dataset_name=dataset_name, B_true=B,
                                    reference_label=reference_label, checks=checks, path=path,
                                    audit=audit, **_design_kwargs(design),
                                    data_file=getattr(data_file, "data_name", data_file),
                                    replay=getattr(data_file, "replay", True),
                                    predictions=predictions, plan=plan, ida_predictions=ida_predictions)
    return html.encode("utf-8")


def report_html_or_error(*args) -> bytes:
    """:func:`report_html`, or a one-paragraph HTML page saying why the report could not be built.

    The download button runs this when it is clicked, outside the page script, where an
    exception could not be shown; the message is escaped once for HTML.
    """
    try:
        return report_html(*args)
    except Exception as exc:  # noqa: BLE001 - the user gets a readable file, never a traceback
        from colide_core.graph.export import html_escape

        return (f"<!DOCTYPE html><meta charset='utf-8'><p>The report could not be built: "
                f"{html_escape(exc)}</p>").encode("utf-8")


# --------------------------------------------------------------------------------------------
# readable verdicts and tables (issue 28, point 6)
# --------------------------------------------------------------------------------------------

#: The traffic lights: an icon and a word, so the meaning never rests on colour alone. The icons are
#: Streamlit's ``:material/...:`` glyphs (its own Material Symbols font, served offline), coloured;
#: emoji drew as empty boxes on a machine without an emoji font (issue 41).
LIGHTS = {"ok": (":green[:material/check_circle:]", "Holds"), "warn": (":orange[:material/warning:]", "Caution"),
          "bad": (":red[:material/cancel:]", "Problem"), "info": (":blue[:material/info:]", "Nothing to test")}


# The readable tables and the p-value format are the library's, shared with the HTML report
# (colide_core.render.tables): one implementation, the same headers and "< 0.001" in both.
format_p = _tables.format_p
residual_table = _tables.residual_table
markov_table = _tables.markov_table


def check_lights(report, variant: str):
    """One traffic light and one plain-language answer per check, most important first.

    Parameters
    ----------
    report : colide_core.evaluation.checks.CheckReport
    variant : {"ev", "nv"}
        The noise model of the fit being checked.

    Returns
    -------
    list of (str, str, str, str)
        ``(light, check, answer, details)``: ``light`` a key of :data:`LIGHTS`, ``answer`` one
        sentence without test names, ``details`` the check's own summary (numbers only).
    """
    import math

    rows = []
    m = report.markov
    if math.isnan(m.share_rejected):
        rows.append(("info", "Markov check", "The graph implies no independence to test.", m.summary))
    else:
        many = m.share_rejected > 2 * m.alpha and m.share_rejected > 0.1
        better = m.verdict == "better than random graphs"
        if better and not many:
            light, text = "ok", "The independences this graph implies match the data better than chance."
        elif better:
            light, text = "warn", ("The graph beats random graphs, but the data contradict many of its "
                                   "independences: edges are probably missing or misdirected.")
        elif many:
            light, text = "bad", ("The data contradict many of the independences this graph implies, and "
                                  "random graphs do about as well.")
        else:
            light, text = "warn", "The graph does not explain the data's independences clearly better than chance."
        rows.append((light, "Markov check", text, m.summary))
    r = report.residuals
    fits = r.noise_model.lower() == str(variant).lower()
    n_nodes = len(r.table)
    n_normal = int(r.table["normal"].sum())
    if fits and n_normal == n_nodes:
        light, text = "ok", f"The noise looks as CoLiDE-{r.noise_model} assumes (Gaussian, {r.noise_model})."
    elif fits:
        light, text = "warn", (f"The noise-variance assumption holds ({r.noise_model}), but the noise is not Gaussian at "
                               f"{n_nodes - n_normal} of {n_nodes} nodes: the weights stay usable, σ̂ and BIC less so.")
    else:
        light, text = "warn", (f"The residuals suggest CoLiDE-{r.noise_model}, not CoLiDE-{str(variant).upper()}: "
                               f"compare with the {r.noise_model} fit.")
    rows.append((light, "Noise model", text, r.summary))
    s = report.sortability
    if math.isnan(s.varsortability):
        rows.append(("info", "Sortability", "The graph has no edge: no order to check.", s.summary))
    elif s.scale_warning:
        rows.append(("warn", "Sortability", "The learned order follows increasing variance: it may come from "
                                            "the units of the columns rather than from causes.", s.summary))
    else:
        rows.append(("ok", "Sortability", "The learned order does not simply follow the columns' variances.",
                     s.summary))
    if report.standardized is not None:
        ch = report.standardized
        share = ch.n_changed / max(1, report.n_edges)
        light = "ok" if ch.n_changed == 0 else ("warn" if share <= 0.5 else "bad")
        text = {"ok": "Standardising the data leaves the graph as it is.",
                "warn": f"Standardising the data changes {ch.n_changed} of {plural(report.n_edges, 'edge')}.",
                "bad": f"Standardising the data changes most of the graph ({ch.n_changed} edges of "
                       f"{report.n_edges}): it depends on the units."}[light]
        rows.append((light, "Standardise and refit", text,
                     f"{len(ch.kept)} of {report.n_edges} edges survive as they are, {len(ch.reversed)} are reversed, "
                     f"{len(ch.removed)} disappear and {len(ch.added)} are new."))
    if report.scale is not None:
        sc = report.scale
        light = "ok" if sc.verdict == "scale-robust" else "warn"
        text = ("Random changes of units leave the graph as it is." if light == "ok"
                else f"Random changes of units change {float(sc.n_changed.mean()):.3g} edges on average.")
        rows.append((light, "Scale sensitivity", text, sc.summary))
    order = {"bad": 0, "warn": 1, "ok": 2, "info": 3}
    return sorted(rows, key=lambda row: order[row[0]])


def overall_answer(lights) -> tuple:
    """The one-line answer to "should I believe this graph?" from :func:`check_lights`.

    Returns
    -------
    (str, str)
        ``(light, sentence)``.
    """
    bad = [c for light, c, _, _ in lights if light == "bad"]
    warn = [c for light, c, _, _ in lights if light == "warn"]
    if bad:
        return "bad", "Not as it stands: " + ", ".join(bad) + (" points" if len(bad) == 1 else " point") + \
            " to real problems" + (f"; caution on {', '.join(warn)}." if warn else ".")
    if warn:
        return "warn", "With caution: every check runs, but " + ", ".join(warn) + \
            (" raises" if len(warn) == 1 else " raise") + " doubts (details below)."
    return "ok", "Yes, as far as these checks can tell: none of them contradicts the graph."


#: The edge evidence's verdict per edge (the "evidence" column): the library's, shared with the HTML
#: report's table and with the marks of Learn's drawing (:func:`disputed_in_session`).
edge_lights = _tables.edge_verdicts


def disputed_in_session(session, data_key, result, threshold, names):
    """The edges of a fit whose reverse the data prefer, from the Check page's stored checks.

    The Check page's verdict (:func:`colide_core.render.tables.disputed_edges` of the edge evidence
    it computed), for the Learn page's drawing: read, never computed here. The evidence costs a
    refit per node and two per edge, more than a λ step may spend, so a fit the Check page has not
    checked gets None and the page says so.

    Parameters
    ----------
    session : mapping
        The session state: its ``dashboard.infra.state.check.CHECK_RESULT``, ``dict(key, report, error)``
        of the last checks (the key of :func:`checks_key`), is read.
    data_key : str
        The dataset's content hash.
    result : dashboard.fitting.FitResult
        The fit drawn (its :attr:`~dashboard.fitting.FitResult.content_key`).
    threshold : float
        The threshold of the graph drawn.
    names : sequence of str
        The node names, in the graph's order.

    Returns
    -------
    ndarray of bool of shape (n_nodes, n_nodes) or None
        ``[i, j]`` True when the Check page's evidence says the data prefer j -> i over the learned
        i -> j; None unless the stored checks are of this data, this fit and this threshold.
    """
    from dashboard.infra.state.check import CHECK_RESULT

    check_result = session.get(CHECK_RESULT)
    if not check_result or check_result.get("report") is None:
        return None
    key = check_result.get("key") or ()
    if len(key) < 3 or key[0] != data_key or key[1] != result.content_key or float(key[2]) != float(threshold):
        return None
    return _tables.disputed_edges(check_result["report"].evidence, names)


def checks_key(data_key, result, threshold, n_random, n_rescale, refits, freq_key) -> tuple:
    """The key of the Check page's checks job and result: everything the checks depend on.

    Parameters
    ----------
    data_key : str
        The dataset's content hash (covers its conditions and targets).
    result : dashboard.fitting.FitResult
        The fit checked (its :attr:`~dashboard.fitting.FitResult.content_key`).
    threshold : float
    n_random, n_rescale : int
        Random DAGs of the Markov check; rescalings (they matter only with ``refits``).
    refits : bool
        Whether "Standardise and refit" was asked.
    freq_key : hashable or None
        The bootstrap whose frequencies the edge evidence shows.

    Returns
    -------
    tuple
    """
    return (data_key, result.content_key, float(threshold), int(n_random), int(n_rescale) if refits else 0,
            bool(refits), freq_key)


def path_key(data_key, variant, overrides) -> tuple:
    """The key of the Check page's λ path: the data, the noise model and every override the path
    takes (:data:`dashboard.fitting.PATH_KEYS`: the settings W depends on and the prior knowledge).

    Returns
    -------
    tuple
        ``(data_key, variant, sorted overrides with lists as tuples)``.
    """
    from dashboard.fitting import PATH_KEYS

    kept = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in overrides.items() if k in PATH_KEYS))
    return (data_key, variant, kept)


def curves_against(truth, results, threshold, names):
    """ROC, precision-recall and threshold curves of fits against a truth, and their summary table.

    Parameters
    ----------
    truth : ndarray of shape (n_nodes, n_nodes)
        The reference graph (nonzero = edge, ``[i, j]`` means i -> j).
    results : mapping of str to dashboard.fitting.FitResult
        The fits by label ("EV", "NV"), in display order.
    threshold : float
        The Learn page's threshold (the graphs scored are the ones it shows).
    names : sequence of str

    Returns
    -------
    rocs : dict
        label -> :func:`colide_core.evaluation.curves.edge_score_curves` of ``|W|``.
    thresholds : dict
        label -> :func:`colide_core.evaluation.curves.threshold_curve`.
    table : pandas.DataFrame
        Columns by label; rows AUROC, AUPRC, SHD and Tetrad's adjacency and arrowhead precision
        and recall (:func:`colide_core.evaluate`, :func:`colide_core.tetrad_metrics`).
    """
    import pandas as pd

    from colide_core.evaluation.curves import edge_score_curves, threshold_curve

    rocs, curves, rows = {}, {}, {}
    for label, res in results.items():
        rocs[label] = edge_score_curves(truth, res.W)
        curves[label] = threshold_curve(truth, res.W)
        g = shown_graph(res, threshold, names)
        m = {**colide_core.evaluate(truth, g), **colide_core.tetrad_metrics(truth, g)}
        rows[label] = {"AUROC": rocs[label].auroc, "AUPRC": rocs[label].auprc, "SHD": m["shd"],
                       "adjacency precision": m["adjacency_precision"], "adjacency recall": m["adjacency_recall"],
                       "arrowhead precision": m["arrowhead_precision"], "arrowhead recall": m["arrowhead_recall"]}
    return rocs, curves, pd.DataFrame(rows)
