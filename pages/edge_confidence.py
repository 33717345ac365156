"""Edge confidence page: bootstrap CoLiDE on the current dataset and show how often each edge appears.

The bootstrap (``colide_core.evaluation.stability.bootstrap_edges``) runs in a background job with a progress
bar and a Stop button; the result stays in the session (``dashboard.infra.state.trust.BOOT_RESULT``). Both jobs
reserve their memory in the server's budget before they start (``dashboard.infra.memory.bootstrap_memory``,
``stability_memory``: a bootstrap keeps every resample's d x d weights), or are refused with the sizes.
The frequency slider only filters the stored result.
"""
import os

import numpy as np
import streamlit as st

from colide_core import CoLiDE
from colide_core.defaults import LAMBDA1_GRID, LAMBDA1_RANGE, THRESHOLD, THRESHOLD_RANGE
from colide_core.graph.export import to_csv_safe
from colide_core.evaluation.stability import TRUTH_WORDS, bootstrap_edges, stability_selection
from dashboard.infra.limits import fit_device, with_fit_device
from dashboard.infra.jobs import MAX_WORKERS, Job, follow_jobs, is_running, show_messages, start_job
from dashboard.infra.workers import in_worker
from dashboard.infra.memory import bootstrap_memory, fmt_mb, stability_memory
from dashboard.infra.layout import page_setup
from dashboard.infra import state
from dashboard.infra.state import trust as ts
from colide_core.render.figures import frequency_figure, sigma_interval_figure
from dashboard.fitting import VARIANTS, check_params, check_widget_values, solver_params
from colide_core import classify_edges
from dashboard.infra.text import fmt_lambda, fmt_seconds, md_escape, plural

#: λ values offered for stability selection.
STAB_LAMBDA_CHOICES = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5]

page_setup()
ss = st.session_state
ds = state.current_dataset()


def _params():
    # the device is the server's rule for the data's size (dashboard.infra.limits.fit_device)
    overrides = with_fit_device(ss[state.SOLVER_OVERRIDES], state.current_dataset().shape[1])
    overrides["threshold"] = float(ss["boot_threshold"])
    return solver_params(VARIANTS[ss["boot_variant"]], ss["boot_lambda1"], overrides)


def _workers(params):
    """Parallel workers of a job with these settings: the widget's, or 1 for fits on the GPU (one
    process holds the device: a joblib worker would make its own CUDA context; docs/gpu.md)."""
    return 1 if dict(params).get("device", "cpu") != "cpu" else int(ss["boot_jobs"])


def _check_common():
    """The settings shared by both jobs, checked against the solver and the widgets' bounds."""
    check_widget_values(("Seed", ss["boot_seed"], 0, 2**31 - 1, "int"),
                        ("Parallel workers", ss["boot_jobs"], 1, MAX_WORKERS, "int"))
    return check_params(_params())


def _start():
    def make_job():
        params = _check_common()
        check_widget_values(("Resamples", ss["boot_n"], 2, 1000, "int"))
        dataset = state.current_dataset()
        n_boot, seed, n_jobs = int(ss["boot_n"]), int(ss["boot_seed"]), _workers(params)
        X = dataset.X

        def run(job):  # several conditions: resampled within each, fitted as on Learn (the Design read
            # here: labels that cannot be used are the job's error)
            if job.units == 1:  # one unit: in a worker process (issue 53); more: joblib's workers already are
                return in_worker(bootstrap_edges, X, CoLiDE(**dict(params)), n_boot=n_boot, random_state=seed,
                                 n_jobs=1, design=dataset.design)
            return bootstrap_edges(X, CoLiDE(**dict(params)), n_boot=n_boot, random_state=seed,
                                   n_jobs=job.units, callback=job.progress, design=dataset.design)

        key = (dataset.key, params, n_boot, seed)
        # its n_boot x d x d weights are bounded in the server's memory budget before it starts (issue 53)
        return Job(run, f"Bootstrap ({n_boot} resamples)", key=key, units=n_jobs,
                   memory=bootstrap_memory(n_boot, *X.shape, keys=(ts.BOOT_RESULT,)))

    start_job(ss, ts.BOOT_SLOT, make_job)


def _stab_harvest(job):
    """Store a finished stability selection; returns the messages describing it."""
    if job.error:
        return [("error", md_escape(job.error))]
    if job.result is None:
        return []
    ss[ts.STAB_RESULT] = {"key": job.key, "result": job.result}
    return [("warning" if job.result.stopped else "success",
             ("Stopped early: " if job.result.stopped else "") + f"stability selection took {fmt_seconds(job.elapsed)}.")]


def _harvest(job):
    """Move a finished job's result into the session state; returns the messages describing it."""
    messages = []
    if job.error:
        messages.append(("error", md_escape(job.error)))
    elif job.result is not None:
        res = job.result
        if res.stopped:
            messages.append(("warning", f"Stopped after {res.n_ok + res.n_failed} of {res.n_boot} resamples: "
                                        "the frequencies below use those only."))
        else:
            messages.append(("success", f"{plural(res.n_ok, 'resample')} fitted in {fmt_seconds(job.elapsed)}."))
        if res.n_failed:
            messages.append(("warning", f"{plural(res.n_failed, 'resample')} could not be fitted and "
                                        f"{'is' if res.n_failed == 1 else 'are'} left out: "
                                        + md_escape(res.errors[0])))
        if res.n_not_converged:
            # n_not_converged counts fits whose *last* stage ran out of steps (colide_core.evaluation.stability)
            messages.append(("warning", f"In {res.n_not_converged} of {res.n_ok} fits the last stage stopped on "
                                        "its iteration budget before converging, so those graphs may still have "
                                        "changed: raise the last entry of max_iter, or use a larger λ."))
        ss[ts.BOOT_RESULT] = {"key": job.key, "result": res, "seconds": job.elapsed}
    return messages


st.title("Edge confidence")
st.caption(f"Dataset: {md_escape(ds.name)} ({ds.shape[0]} samples × {ds.shape[1]} nodes). "
           "CoLiDE is refitted on resamples of the rows drawn with replacement (nonparametric "
           "bootstrap); an edge's frequency is the share of resamples whose final DAG contains it.")

if ss["boot_follow_learn"]:  # until the user changes them here, the settings are Learn's (issue 28)
    for mine, learn in (("boot_lambda1", "learn_lambda1"), ("boot_threshold", "learn_threshold")):
        ss[mine] = float(ss[learn])
    if ss["learn_variant"] in VARIANTS:
        ss["boot_variant"] = ss["learn_variant"]


def _settings_changed():
    """on_change of the noise model, λ and threshold here: they no longer follow Learn."""
    ss["boot_follow_learn"] = False


def _follow_learn():
    """on_click of "Use Learn's settings"."""
    ss["boot_follow_learn"] = True


def _lambda_options():
    """Learn's log-scale λ grid, plus the current value (a manifest may set one off the grid)."""
    grid = set(LAMBDA1_GRID)
    cur = float(ss["boot_lambda1"])
    if LAMBDA1_RANGE[0] <= cur <= LAMBDA1_RANGE[1]:
        grid.add(cur)
    return sorted(grid)


c1, c2, c3 = st.columns([1, 2, 2])
with c1:
    st.segmented_control("Noise model", list(VARIANTS), key="boot_variant", required=True, on_change=_settings_changed,
                         help="EV: one noise variance for all nodes (paper eq. 4-5). NV: one per node (eq. 6-7).")
with c2:
    st.select_slider("λ (L1 weight, lambda1)", options=_lambda_options(), key="boot_lambda1", format_func=fmt_lambda,
                     on_change=_settings_changed, help="The same log-scale λ as on the Learn page.")
with c3:
    st.slider("Edge threshold |w| >", min_value=THRESHOLD_RANGE[0], max_value=THRESHOLD_RANGE[1], step=0.01,
              key="boot_threshold", on_change=_settings_changed)
_differs = [f"{what} {mine} here, {theirs} on Learn" for what, mine, theirs in (
    ("λ", fmt_lambda(ss["boot_lambda1"]), fmt_lambda(ss["learn_lambda1"])),
    ("threshold", f"{float(ss['boot_threshold']):g}", f"{float(ss['learn_threshold']):g}"),
    ("noise model", ss["boot_variant"], ss["learn_variant"] if ss["learn_variant"] in VARIANTS else None))
    if theirs is not None and mine != theirs]
if not _differs:
    st.caption("Noise model, λ and threshold are the Learn page's, so the Check page and the report can attach "
               "this bootstrap to the fit shown there.")
else:
    d1, d2 = st.columns([4, 1], vertical_alignment="center")
    d1.warning("These settings differ from the Learn page's (" + "; ".join(_differs) + "): a bootstrap run here "
               "is not attached to Learn's fit on the Check page or in the report.", icon=":material/link_off:")
    d2.button("Use Learn's settings", key="boot_follow", on_click=_follow_learn)
c4, c5, c6 = st.columns(3)
c4.number_input("Resamples", min_value=2, max_value=1000, step=10, key="boot_n",
                help="100 is a common choice; each resample is one full CoLiDE fit.")
dask_address = os.environ.get("DASK_SCHEDULER_ADDRESS") or None
if ss["boot_jobs"] > MAX_WORKERS:  # a value above the cap (set through the session state) would make the widget raise
    ss["boot_jobs"] = MAX_WORKERS
on_gpu = bool(fit_device(ds.shape[1]))  # above the CPU limit the fits run on the GPU, one at a time
c5.number_input("Parallel workers", min_value=1, max_value=MAX_WORKERS, step=1, key="boot_jobs",
                disabled=dask_address is not None or on_gpu,
                help=(f"These {ds.shape[1]:,} nodes are fitted on the GPU (CoLiDE-TOPO and several conditions "
                      "on the CPU), one resample after another in the server's process (the GPU is held by one "
                      "process)." if on_gpu else
                      f"Processes used by joblib (colide_core's sweep executor), at most the {MAX_WORKERS} cores of "
                      "this server; a run waits for free cores when other sessions use them. Results do not "
                      "depend on this number."))
if dask_address is not None:
    st.caption(f"Resamples run on the Dask cluster at {md_escape(dask_address)} (DASK_SCHEDULER_ADDRESS); "
               "the result is the same as with joblib.")
c6.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="boot_seed",
                help="Same seed, same resamples, same result.")
if ss[state.SOLVER_OVERRIDES].get("forbidden") or ss[state.SOLVER_OVERRIDES].get("required") \
        or ss[state.SOLVER_OVERRIDES].get("tiers"):
    st.caption("Prior knowledge from the **Prior knowledge** page is enforced in every resample.")

st.button("Run bootstrap", key="boot_run", type="primary", on_click=_start, disabled=is_running(ss, ts.BOOT_SLOT))
# both jobs of the page followed at once, each with its bar and Stop (issue 53, medium 3)
follow_jobs([(ts.BOOT_SLOT, _harvest), (ts.STAB_SLOT, _stab_harvest)])

stored = ss[ts.BOOT_RESULT]
show_messages(ss, ts.BOOT_SLOT)
names = ds.node_names
truth = None if ds.B_true is None else ds.B_true.to_numpy()


def _memory_sentence(need):
    """What a run will hold in the server's memory, stated before it starts (its bound: memory.reserve_job)."""
    return (f" The result keeps {fmt_mb(need.keep)} MB of the server's memory ({fmt_mb(need.peak)} MB while it "
            "runs); a run that does not fit in the server's memory budget is refused before it starts.")


def _show_bootstrap(stored):
    """Graph, edge table and noise intervals of a stored bootstrap result."""
    res = stored["result"]
    params = dict(stored["key"][1])
    if stored["key"] != (ds.key, _params(), int(ss["boot_n"]), int(ss["boot_seed"])):
        st.caption("The result below was computed with different settings than those above; press **Run "
                   "bootstrap** to update it.")
    st.markdown(f"**CoLiDE-{params['variant'].upper()}**, λ = {fmt_lambda(params['lambda1'])}, threshold "
                f"{params.get('threshold', THRESHOLD):g}: {res.n_ok} resamples.")

    st.slider("Show edges found in at least this % of resamples", min_value=0, max_value=100, step=5,
              key="boot_min_freq")
    min_freq = ss["boot_min_freq"] / 100.0
    tab_graph, tab_table, tab_sigma = st.tabs(["Graph", "Edges", "Noise σ̂"])
    with tab_graph:
        st.plotly_chart(frequency_figure(res.frequency, names, min_frequency=max(min_freq, 1e-9),
                                         weight_mean=res.weight_mean, B_true=truth),
                        key="boot_graph")
        n_shown = int(((res.frequency >= max(min_freq, 1e-9)) & ~np.eye(len(names), dtype=bool)).sum())
        st.caption(f"{n_shown} edges found in ≥ {ss['boot_min_freq']}% of resamples. Opacity and width ∝ "
                   "frequency." + (" Colours compare with the ground truth; dashed grey: true edges below the "
                                   "cut-off." if truth is not None else "")
                   + " A frequency says how reproducible an edge is when rows are resampled, not whether it is "
                     "true: a low one is a warning, a high one no confirmation (measured against known truths, "
                     "the edges in ≥ 70% of 30 resamples were no more often right than the fit's own; "
                     "docs/networks.md, \"Resampling as an edge rule\").")
    with tab_table:
        table = res.edge_table(min_frequency=min_freq, level=0.95, B_true=truth)
        st.dataframe(
            table, hide_index=True, key="boot_edges",
            column_config={
                "frequency": st.column_config.ProgressColumn("frequency", min_value=0.0, max_value=1.0, format="percent"),
                "weight": st.column_config.NumberColumn("weight (when present)", format="%.3f"),
                "ci_low": st.column_config.NumberColumn("95% CI low", format="%.3f"),
                "ci_high": st.column_config.NumberColumn("95% CI high", format="%.3f"),
                "bagged_weight": st.column_config.NumberColumn("bagged weight", format="%.3f"),
            },
        )
        st.caption("Weight and its 95% percentile interval use the resamples that contain the edge; the bagged "
                   "weight averages over all resamples, counting an absent edge as 0.")
        if truth is not None:
            found = table[table["truth"] == "true edge"]
            st.caption(f"{len(found)} of {int((truth != 0).sum())} true edges are found in ≥ "
                       f"{ss['boot_min_freq']}% of resamples.")
        st.download_button("Edge table (CSV)", to_csv_safe(table, index=False), file_name="colide_bootstrap_edges.csv",
                           mime="text/csv", key="boot_dl")
    with tab_sigma:
        if res.sigma_samples is None:
            st.info("This model has no noise scale.")
        else:
            st.plotly_chart(sigma_interval_figure(names, res.sigma_samples, 0.95, ds.sigma_true), key="boot_sigma")
            st.caption("Bootstrap mean of the estimated noise standard deviation, with the 95% percentile interval.")


if stored is None or stored["key"][0] != ds.key:
    # Any time estimate comes from a measurement: the last single fit shown on the Learn page.
    last_fit = state.last_fit_time()
    st.info("Press **Run bootstrap**. Each resample is a full CoLiDE fit"
            + (f": the last fit on this dataset took {fmt_seconds(last_fit)}, so {int(ss['boot_n'])} resamples "
               f"take about {fmt_seconds(last_fit * int(ss['boot_n']))} with one worker (the paper-faithful "
               "solver in the sidebar is much slower)." if last_fit else
               "; open the Learn page first to measure how long one fit takes on this dataset.")
            + _memory_sentence(bootstrap_memory(int(ss["boot_n"]), *ds.shape)))
    if not last_fit:  # a link, not only words (issue 48, the last walk's minor)
        st.page_link("pages/learn.py", label="Go to Learn", icon=":material/arrow_forward:")
else:
    _show_bootstrap(stored)

# --- stability selection ---------------------------------------------------------------------------
def _stab_key():
    lambdas = tuple(sorted(float(x) for x in ss["stab_lambdas"]))
    return (state.current_dataset().key, _params(), lambdas, int(ss["stab_n"]), float(ss["stab_pi"]),
            int(ss["boot_seed"]))


def _stab_start():
    if not ss["stab_lambdas"]:
        return

    def make_job():
        _check_common()
        check_widget_values(("Half-samples", ss["stab_n"], 2, 500, "int"), ("π_thr", ss["stab_pi"], 0.55, 1.0),
                            *(("λ value", x, *LAMBDA1_RANGE) for x in ss["stab_lambdas"]))
        if len(ss["stab_lambdas"]) > len(STAB_LAMBDA_CHOICES):
            check_widget_values(("Number of λ values", len(ss["stab_lambdas"]), 1, len(STAB_LAMBDA_CHOICES), "int"))
        key = _stab_key()
        _, params, lambdas, n_sub, pi_thr, seed = key
        dataset = state.current_dataset()
        X = dataset.X
        n_jobs = _workers(params)

        def run(job):  # several conditions: half-samples within each (the Design read in the job)
            if job.units == 1:  # one unit: in a worker process (issue 53)
                return in_worker(stability_selection, X, CoLiDE(**dict(params)), lambdas, n_subsamples=n_sub,
                                 pi_thr=pi_thr, random_state=seed, n_jobs=1, design=dataset.design)
            return stability_selection(X, CoLiDE(**dict(params)), lambdas, n_subsamples=n_sub, pi_thr=pi_thr,
                                       random_state=seed, n_jobs=job.units, callback=job.progress, design=dataset.design)

        return Job(run, f"Stability selection ({n_sub} half-samples × {len(lambdas)} λ)", key=key, units=n_jobs,
                   memory=stability_memory(n_sub, len(lambdas), *X.shape, keys=(ts.STAB_RESULT,)))

    start_job(ss, ts.STAB_SLOT, make_job)


st.divider()
st.subheader("Stability selection")
st.caption("Meinshausen & Bühlmann (2010): fit on many random halves of the rows for each λ; an edge is stable "
           "when its selection probability reaches π_thr for some λ. Uses the noise model and threshold above.")
t1, t2, t3 = st.columns([2, 1, 1])
t1.multiselect("λ values", STAB_LAMBDA_CHOICES, key="stab_lambdas")
t2.number_input("Half-samples", min_value=2, max_value=500, step=10, key="stab_n")
t3.slider("π_thr", min_value=0.55, max_value=1.0, step=0.05, key="stab_pi")
st.button("Run stability selection", key="stab_run", on_click=_stab_start,
          disabled=is_running(ss, ts.STAB_SLOT) or not ss["stab_lambdas"])
show_messages(ss, ts.STAB_SLOT)
stab = ss[ts.STAB_RESULT]
if stab is not None and stab["key"][0] == ds.key:
    sres = stab["result"]
    table = sres.stable_edges()
    if truth is not None and len(table):
        # The one truth labelling (classify_edges), worded as in the bootstrap table above.
        kinds = {(names[i], names[j]): TRUTH_WORDS[kind] for i, j, kind in classify_edges(sres.stable, truth)
                 if kind != "missing"}
        table["truth"] = [kinds[(a, b)] for a, b in zip(table["source"], table["target"])]
    st.markdown(f"**{plural(len(table), 'stable edge')}** (π_thr = {sres.pi_thr:g}, λ ∈ "
                f"{{{', '.join(fmt_lambda(x) for x in sres.lambdas)}}}, {sres.n_subsamples} half-samples).")
    st.dataframe(table, hide_index=True, key="stab_table",
                 column_config={"max_probability": st.column_config.ProgressColumn(
                     "max selection probability", min_value=0.0, max_value=1.0, format="percent")})
    st.markdown(f"Expected number of false edges among them, by Meinshausen & Bühlmann's Theorem 1: "
                f"E[V] ≤ q̂² / ((2π_thr − 1) p) = {sres.q_hat:.1f}² / ((2·{sres.pi_thr:g} − 1)·{sres.n_candidates}) "
                f"= **{sres.expected_false_positives_bound:.2f}**, with q̂ the mean number of edges a half-sample "
                "selects for some λ and p the number of candidate edges.")
    st.caption("The bound assumes the false edges are selected exchangeably and that the method beats random "
               "guessing. Neither can be checked, and for DAGs exchangeability is doubtful (an edge and its reversal "
               "compete): read it as a rough guide, not a guarantee. Measured against known truths "
               "(docs/networks.md, \"Resampling as an edge rule\"), it held loosely on simulated SEMs, but on three "
               "real networks the stable sets had 3 to 20 times more false edges than it (a reversed edge counted "
               "as false).")
