"""Predict page: what an intervention on one node would do to every node, from the Learn fit, and
which experiment to run next.

The prediction is the fitted linear SEM's (``colide_core.evaluation.interventions``): set a node
to a value (``do``) or shift it by k of its standard deviations, and every descendant moves by its
total effect. It is computed on every change (it takes milliseconds), next to what regression on
the node predicts ("seeing"), which differs where the graph says the association is not causal.
Intervals come from refits on resampled rows (within conditions): a job with Stop.

"Which experiment next?" ranks single-node interventions by the edge directions they would settle
(``colide_core.evaluation.planning.rank_interventions``, a job with Stop, whose peak memory is
reserved in the server's budget before it starts: ``dashboard.infra.memory.ranking_memory``), highlights the edges of
the chosen one, and on simulated and network data runs it: draws its rows from the true SEM (a
network's with its intercepts and noise variances), refits with the new condition's target known,
and shows the SHD before and after. Where the true SEM is known, the table also holds its shift
and the errors of doing and seeing (``dashboard.planning.with_truth``).
"""
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from colide_core import CoLiDE
from colide_core.exceptions import InvalidParameterError
from colide_core.evaluation.interventions import (bootstrap_shifts, check_intervention_size, intervention_table,
                                                  refit_weights, weights_for)
from colide_core.evaluation.planning import SCORE_LABELS, rank_interventions, settles_nothing
from colide_core.graph.export import to_csv_safe
from colide_core.render.figures import intervention_figure
from dashboard.infra import state, urlstate
from dashboard.planning import prediction_frame, true_sem, try_experiment, with_truth
from dashboard.fitting import VARIANTS, check_params, check_widget_values
from dashboard.graphview import show_graph
from dashboard.infra.jobs import JOB_MAX_SECONDS, Job, check_job_budget, follow_jobs, show_messages, start_job
from dashboard.infra.workers import in_worker
from dashboard.infra.limits import with_fit_device
from dashboard.infra.memory import fmt_mb, intervals_memory, ranking_memory
from dashboard.infra.layout import page_setup
from dashboard.lessons import lesson_banner
from dashboard.live import fit_where_needed, thresholded
from dashboard.infra.state import predict as ps
from dashboard.infra.text import fmt_seconds, md_escape

ss = st.session_state
# a shared link or a refresh: the dataset, Learn's settings and this page's question come back
# (dashboard.infra.urlstate, once per session, before the widgets are made; issue 48, m-5)
state.init()
url_messages = urlstate.restore_from_url(ss, st.query_params)
page_setup()
ds = state.current_dataset()
st.title("What would an intervention do?")
for level, text in url_messages:
    getattr(st, level)(text)
lesson_banner(ds)  # a lesson's explanation follows its data to this page ("Seeing is not doing")

# Learn's fit at the session's settings, solved here when Learn would solve it live (a link)
_, why_not_live, fit_errors = fit_where_needed(ss, ds)
for err in fit_errors:
    st.error(md_escape(err))
results = state.results_for_current()
if not results:
    st.info("Learn a graph first (the **Learn** page): the prediction uses its fit"
            + (f" ({md_escape(why_not_live)})." if why_not_live else "."))
    st.page_link("pages/learn.py", label="Go to Learn", icon=":material/arrow_forward:")
    st.stop()
labels = [results[v].label for v in ("ev", "nv") if v in results]
if ss["pred_model"] not in labels:
    ss["pred_model"] = labels[-1]
names = list(ds.node_names)
if ss["pred_node"] not in names:
    ss["pred_node"] = names[0]
design = ds.design  # the rows' conditions and targets, validated once with the dataset (issue 47)
conditions = design.row_labels()  # each row's label (None for one condition): the GES + IDA job's
rows = np.ones(len(ds.X), dtype=bool) if conditions is None else design.codes == 0  # the first row's condition
ref = ds.X[rows]

c1, c2, c3, c4 = st.columns([1, 2, 2, 2])
c1.segmented_control("Fit", labels, key="pred_model", required=True)
c2.selectbox("Intervene on", names, key="pred_node")
c3.segmented_control("Intervention", ["Set to a value", "Shift by k sd"], key="pred_kind", required=True)
node = ss["pred_node"]
sd = float(ref[node].std(ddof=1))
if ss["pred_kind"] == "Shift by k sd":
    c4.number_input("k (standard deviations)", min_value=-10.0, max_value=10.0, step=0.5, key="pred_k")
    kw = {"shift": {node: float(ss["pred_k"]) * sd}}
    what = f"{md_escape(node)} shifted by {float(ss['pred_k']):g} sd"
else:
    if not ss.get("pred_value_for") == node:  # a new node starts at its mean + 1 sd
        ss["pred_value"], ss["pred_value_for"] = float(ref[node].mean() + sd), node
    c4.number_input("Value (data units)", key="pred_value", format="%.4g")
    kw = {"do": {node: float(ss["pred_value"])}}
    what = f"do({md_escape(node)} = {float(ss['pred_value']):.4g})"

urlstate.write_url(ds, ss, st.query_params, predict=True)  # a refresh or a shared link asks this question again

res = results[VARIANTS[ss["pred_model"]]]
threshold = float(ss["learn_threshold"])
A = thresholded(res, threshold, names)
st.segmented_control("Weights", list(ps.WEIGHT_LABELS), key="pred_weights", required=True,
                     format_func=ps.WEIGHT_LABELS.get,
                     help="The fit's weights are shrunk by its L1 penalty; least squares refits each node on its "
                          "learned parents (within conditions, targets masked). By default the page takes the fit's "
                          "weights on an NV fit and least squares on an EV fit: docs/predict.md measures both.")
weights = ss["pred_weights"]
if weights == "auto":
    weights = weights_for(res.variant)
sem_key = (ds.key, res.content_key, threshold)
if weights == "refit":  # once per dataset, fit and threshold, not on every rerun (issue 53)
    memo = ss[ps.SEM_WEIGHTS]
    if memo is None or memo["key"] != sem_key:
        memo = {"key": sem_key, "W": refit_weights(A, ds.X, design=design)}
        ss[ps.SEM_WEIGHTS] = memo
    W_sem = memo["W"]
else:
    W_sem = A
boot = ss[ps.BOOT_RESULT]
key = (ds.key, res.content_key, threshold, weights, node,
       tuple(sorted((k, tuple(v.items())) for k, v in kw.items())))
samples = boot["samples"] if boot is not None and boot["key"] == key else None
try:  # a value beyond 1e6 sd, or not finite: a sentence, before anything is computed
    pred = replace(intervention_table(W_sem, ds.X, design=design, samples=samples, **kw), weights=weights)
except InvalidParameterError as exc:
    pred = None
    st.error(md_escape(str(exc)))
if pred is not None:
    ss[ps.LAST_PREDICTION] = {"key": (ds.key, res.content_key, threshold), "prediction": pred}  # for the report
    where = ("every row" if conditions is None else
             f"every row, each condition centred on its own means as in the fit, starting from the first "
             f"condition's means ({md_escape(design.labels[0])})")
    st.caption(f"{what}: the CoLiDE-{res.label} graph at threshold {threshold:g} as a linear SEM "
               f"({ps.WEIGHT_LABELS[weights]}). **Doing**: every descendant moves by its total effect. "
               f"**Seeing**: regression on the node, which also moves its causes. Both read the same data: {where}.")
    g1, g2 = st.columns([2, 3])
    with g1:
        show_graph(A, names, key="pred_graph", node_values=pred.table["shift_sd"].to_numpy(), legend=False,
                   height=420)
        st.caption("Each node filled by its predicted change (doing): red up, blue down, saturated at "
                   "±2 sd; white, unchanged.")
    with g2:
        st.plotly_chart(intervention_figure(pred.table, sd_units=True), key="pred_chart")
    shown = prediction_frame(pred)
    verdict = ps.scale_verdict_of(ds, A)  # issue 52: do the variables' scales carry this prediction?
    (st.caption if verdict.scale_carries else st.warning)(verdict.reason)  # the library's sentence, no user text
    try:
        ida_pred = ps.ges_ida_for(ss, ds, conditions, kw)
    except ValueError as exc:
        ida_pred = None
        st.error(md_escape(f"GES + IDA: {exc}"))
    if ida_pred is not None:
        ss[ps.LAST_PREDICTION]["ida"] = ida_pred  # the report shows it beside CoLiDE's (ps.for_report)
        shown = ps.with_ges_ida(shown, ida_pred)
        st.caption("GES + IDA (scale-free): GES's equivalence class, and for each parent set of the node it allows, "
                   "the shift local IDA predicts; their mean and range, in sd.")
    sem = true_sem(ds)
    if sem is not None:  # simulated and network data: the true SEM's shift, through the same function
        true_pred = intervention_table(sem["W"], ds.X, design=design, **kw)
        shown, truth_line = with_truth(shown, pred, true_pred, sem["W"])
        st.markdown(f"**Against the true SEM** ({md_escape(pred.describe())}): {md_escape(truth_line)}.")
    st.dataframe(shown, key="pred_table")
    st.download_button("Prediction (CSV)", to_csv_safe(shown, index_label="node"), file_name="colide_prediction.csv",
                       mime="text/csv", key="pred_csv")


def _within_budget(n_refits):
    """Refuse a job of ``n_refits`` refits whose estimate (refits × the time of the fit shown, as its
    caption says) is above the server's budget per job (issue 53, low 4); raises RunSettingsError."""
    fit_s = res.fit_time if res.fit_time is not None and res.fit_time > 0 else None
    most = None if fit_s is None or JOB_MAX_SECONDS is None else int(JOB_MAX_SECONDS // fit_s)
    reduce = (f"ask for at most {most} resamples" if most is not None and most >= 2 else
              "even 2 refits would be over it: make the fit faster first (a larger λ, fewer nodes)")
    check_job_budget(None if fit_s is None else n_refits * fit_s, f"{n_refits} refits × {fmt_seconds(fit_s or 0)}",
                     reduce, budget_s=JOB_MAX_SECONDS)


def _start():
    def make_job():
        params = check_params(with_fit_device(res.params, ds.shape[1]))  # the server's device rule
        check_widget_values(("Resamples", ss["pred_n_boot"], 2, 500, "int"))
        n_boot = int(ss["pred_n_boot"])
        _within_budget(n_boot)  # above the server's budget: refused before it starts
        X = ds.X
        estimator = CoLiDE(**{**dict(params), "threshold": threshold})
        check_intervention_size(kw.get("do"), kw.get("shift"), ref.mean().to_numpy(), ref.std(ddof=1).to_numpy(),
                                names)  # refused here, before any refit

        def run(job):  # no point fit: the page has it; Stop is heard inside every refit; in a worker process
            return in_worker(bootstrap_shifts, estimator, X, design=design,
                             n_bootstrap=n_boot, random_state=0, weights=weights, **kw), n_boot

        # its resamples' row indices and each refit's copies of the data are bounded in the server's
        # memory budget before it starts, or it is refused with the sizes (issue 53)
        return Job(run, f"Prediction intervals ({n_boot} refits)", key=key,
                   memory=intervals_memory(n_boot, *X.shape, refit=weights == "refit", keys=(ps.BOOT_RESULT,)))

    start_job(ss, ps.BOOT_SLOT, make_job)


def _harvest(job):
    if job.error:
        return [("error", md_escape(job.error))]
    samples, asked = job.result
    ss[ps.BOOT_RESULT] = {"key": job.key, "samples": samples}
    level = pred.level if pred is not None else 0.9
    done = f"{len(samples)} refits" if len(samples) == asked else f"Stopped after {len(samples)} of the {asked} refits asked"
    return [("success" if len(samples) == asked else "info",
             f"{done} in {fmt_seconds(job.elapsed)}: the intervals of the shift are their {level:.0%} percentile range.")]


def _harvest_plan(job):
    if job.error:
        return [("error", md_escape(job.error))]
    ss[ps.PLAN_RESULT] = {"key": job.key, "table": job.result}
    ss[ps.TRY_RESULT] = None
    used = job.result.attrs.get("n_graphs", 0)
    return [("success", f"Ranked {len(job.result)} candidates on {used} refits in {fmt_seconds(job.elapsed)}.")]


def _harvest_try(job):
    if job.error:
        return [("error", md_escape(job.error))]
    if job.stop_requested:
        return [("info", "Stopped: the refit did not finish, so there is no gain to show.")]
    ss[ps.TRY_RESULT] = {"key": job.key, **job.result}
    return []


b1, b2 = st.columns([1, 3])
b1.number_input("Resamples", min_value=2, max_value=500, step=10, key="pred_n_boot")
b2.button("Compute intervals", key="pred_boot_run", on_click=_start, disabled=pred is None,
          help="Refits the model on rows resampled with replacement (within each condition) and predicts again.")
_budget_note = ("" if JOB_MAX_SECONDS is None else
                f" This server stops a job after {JOB_MAX_SECONDS:g} s (`COLIDE_JOB_MAX_SECONDS`) and refuses one "
                "expected to take longer.")
b2.caption(ps.refits_cost_text(ss["pred_n_boot"], res.fit_time) + _budget_note)  # a cost before the job (issue 53, low 4)
# every job of this page followed at once, each with its bar and Stop (issue 53, medium 3)
follow_jobs([(ps.BOOT_SLOT, _harvest), (ps.GES_SLOT, lambda job: ps.harvest_ges(ss, job)),
             (ps.PLAN_SLOT, _harvest_plan), (ps.TRY_SLOT, _harvest_try)])
show_messages(ss, ps.BOOT_SLOT)
if not ps.ges_ready(ss, ds):
    st.button("Compute GES + IDA", key="pred_ges_run", on_click=start_job, args=(ss, ps.GES_SLOT),
              kwargs={"make_job": lambda: ps.ges_job(ds, conditions)}, disabled=pred is None,
              help="GES (causal-learn, BIC) learns the equivalence class without the variables' scales; local IDA "
                   "then gives every shift the class allows, beside CoLiDE's.")
    st.caption(ps.ges_cost_text(ds))  # numbers and fixed text
show_messages(ss, ps.GES_SLOT)


# ---- which experiment next? -------------------------------------------------------------------
st.subheader("Which experiment next?")
st.caption("Each candidate is a hard intervention on one node, with the other conditions as they are. Its score is "
           "how much the refits on resampled rows disagree on the directions of the edges at it (bits), leaving "
           "out edges an experiment already run orients; the edges it would settle are every edge at the target, "
           "plus those Meek's rules then orient (Hauser and Bühlmann 2012). "
           "docs/planning.md says why this criterion and how well it picks.")
plan_key = (ds.key, res.content_key, threshold, int(ss["plan_n_boot"]))


def _start_plan():
    def make_job():
        params = check_params(with_fit_device(res.params, ds.shape[1]))  # the server's device rule
        check_widget_values(("Resamples", ss["plan_n_boot"], 2, 200, "int"))
        n_boot = int(ss["plan_n_boot"])
        _within_budget(n_boot)
        model = CoLiDE(**{**dict(params), "threshold": threshold})
        X = ds.X

        def run(job):  # in a worker process (issue 53)
            return in_worker(rank_interventions, X, design=design, n_bootstrap=n_boot,
                             random_state=0, estimator=model)

        # its bootstrap's n_boot x d x d weights and the candidates' counts are bounded in the server's
        # memory budget before it starts, or it is refused with the sizes (issue 53)
        return Job(run, f"Ranking the experiments ({n_boot} refits)", key=plan_key,
                   memory=ranking_memory(n_boot, *X.shape, keys=(ps.PLAN_RESULT,)))

    start_job(ss, ps.PLAN_SLOT, make_job)


q1, q2 = st.columns([1, 3])
q1.number_input("Resamples", min_value=2, max_value=200, step=5, key="plan_n_boot")
q2.button("Rank the experiments", key="plan_run", on_click=_start_plan,
          help="Refits the model on rows resampled within conditions, and counts on each refit the edge "
               "directions each single-node experiment would settle.")
q2.caption(ps.refits_cost_text(ss["plan_n_boot"], res.fit_time) + _budget_note)
q2.caption(f"While it runs the ranking takes up to {fmt_mb(ranking_memory(int(ss['plan_n_boot']), *ds.shape).peak)} MB "
           "of the server's memory; a ranking that does not fit in the server's memory budget is refused before "
           "it starts.")  # numbers and fixed text
show_messages(ss, ps.PLAN_SLOT)
plan = ss[ps.PLAN_RESULT]
if plan is not None and plan["key"] == plan_key:
    ranking = plan["table"]
    shown = pd.DataFrame({SCORE_LABELS.get(ranking.attrs.get("criterion"), "score"): ranking["score"].round(2),
                          "in the fit on all rows": ranking["point_estimate"],
                          "edges settled (in at least half the refits)": ranking["edges"]})
    st.dataframe(shown, key="plan_table")
    if settles_nothing(ranking):  # issue 48, m-1: a ranking that settles nothing says why
        st.info("No single-node experiment would settle an edge direction here: every edge of this fit is "
                "already oriented by the conditions' targets and the graph's v-structures (its interventional "
                "essential graph has no undirected edge), in the fit and in the refits. A new experiment may "
                "still test an edge; it cannot orient one the model has not already oriented.")
    st.download_button("Ranking (CSV)", to_csv_safe(shown, index_label="target"), file_name="colide_next_experiment.csv",
                       mime="text/csv", key="plan_csv")
    if ss["plan_pick"] not in list(ranking.index):
        ss["plan_pick"] = ranking.index[0]
    st.selectbox("Show the edges settled by an intervention on", list(ranking.index), key="plan_pick")
    pick = ss["plan_pick"]
    settled = np.zeros((len(names), len(names)), dtype=bool)
    for a, b in ranking.loc[pick, "edge_pairs"]:
        settled[names.index(a), names.index(b)] = True
    show_graph(A, names, ds.B_true, key="plan_graph", settled=settled, height=420)
    sem = true_sem(ds)
    if sem is not None and sem["noise_var"] is not None and ds.B_true is not None:  # simulated and networks
        r1, r2 = st.columns([1, 3])
        r1.number_input("Rows of the experiment", min_value=50, max_value=5000, step=50, key="plan_try_rows")
        try_key = (plan_key, pick, int(ss["plan_try_rows"]))

        def _start_try():
            def make_job():
                params = check_params(with_fit_device(res.params, ds.shape[1]))  # the server's device rule
                check_widget_values(("Rows of the experiment", ss["plan_try_rows"], 50, 5000, "int"))
                stages = len(dict(params).get("max_iter") or (1,))
                rows = int(ss["plan_try_rows"])  # read here: the job's thread has no session
                W_before = res.W  # the Learn fit: a candidate of the refit (issue 51)

                def run(job):
                    def hear(stage, iteration, _objective):  # CoLiDE.fit's callback -> the job's bar and Stop
                        return job.report(min(stage, stages) / (stages + 1),
                                          f"Refitting with do({pick}): stage {int(stage) + 1}, iteration {int(iteration)}")

                    return try_experiment(ds, params, threshold, pick, rows, before=A, W_init=W_before, callback=hear)

                return Job(run,
                           f"Running do({pick}) and refitting", key=try_key)

            start_job(ss, ps.TRY_SLOT, make_job)

        r2.button("Run it: simulate this experiment and refit", key="plan_try", on_click=_start_try,
                  help="Draws the rows of a hard intervention on the chosen node from the true SEM, adds them as a "
                       "new condition with its target known, and refits with the same settings.")
        show_messages(ss, ps.TRY_SLOT)
        tried = ss[ps.TRY_RESULT]
        if tried is not None and tried["key"] == try_key:
            st.success(f"With {tried['rows']:,} rows of do({md_escape(pick)}): SHD {tried['shd_before']} → "
                       f"{tried['shd_after']} against the true graph (gain {tried['shd_before'] - tried['shd_after']}); "
                       f"the ranking expected {ranking.loc[pick, 'score']:.2g} edge directions settled.")
            st.markdown(f"##### After do({md_escape(pick)}): CoLiDE-{res.label} refit on {len(ds.X):,} + "
                        f"{tried['rows']:,} rows")  # issue 48 m-2: the refit's drawing has a heading
            show_graph(tried["A_after"], names, ds.B_true, key="plan_try_graph", height=420)
