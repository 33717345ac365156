"""Check page: should I believe this graph? Checks of the fit shown on the Learn page.

Reads the current dataset and its fits (``dashboard.infra.state.RESULTS``) at the Learn page's
threshold, runs the model checks of ``colide_core.evaluation.checks`` (cached) as a background job
(``dashboard.infra.jobs``: a compute slot, a progress bar, Stop, and the end of the session end it; so
does the λ path), shows a one-line answer and a traffic light per check in plain language with the
figure behind it, the edge evidence table, curves against the ground truth or
the user's own reference graph, and offers the one-file HTML report (``colide_core.render.report``).
"""
import numpy as np
import streamlit as st

import colide_core
from colide_core.render import plots
from colide_core.graph.constraints import PriorKnowledge, audit_constraints, removed_sentence
from colide_core.evaluation.curves import stable_region
from colide_core.graph.export import to_csv_safe
from colide_core.graph.reference import read_reference
from colide_core.render.report import ReportFit
from dashboard.data import data_as_fitted
from dashboard.infra.limits import with_fit_device
from dashboard.infra.state import check as cs
from dashboard.infra.state import predict as predict_state
from dashboard import checks as dc
from dashboard import manifests
from dashboard.infra import state
from dashboard.infra.state import trust as trust_state
from dashboard.fitting import VARIANTS
from dashboard.infra.jobs import follow_jobs, is_running, show_messages, start_job, stop_job
from dashboard.infra.layout import page_setup, prior_badge
from dashboard.infra.text import fmt_lambda, md_escape, plural

page_setup()
ss = st.session_state
ds = state.current_dataset()
names = ds.node_names


def _load_reference():
    """on_change of the reference uploader: read it, match names to the columns, keep it."""
    up = ss.get("check_ref_upload")
    if up is None:
        ss[cs.REFERENCE] = None
        ss[cs.REF_STATUS] = None
        return
    data = state.current_dataset()
    name = md_escape(up.name)
    try:
        ref = read_reference(up.getvalue(), up.name, data.node_names)
    except ValueError as exc:
        ss[cs.REFERENCE] = None
        ss[cs.REF_STATUS] = ("error", f"**{name}** was not used: {md_escape(exc)}")
        return
    except Exception as exc:  # never a traceback for a user file
        ss[cs.REFERENCE] = None
        ss[cs.REF_STATUS] = ("error", f"**{name}** could not be read ({type(exc).__name__}).")
        return
    ss[cs.REFERENCE] = {"key": data.key, "name": up.name, "ref": ref}
    text = f"Using **{name}** ({ref.fmt.replace('_', ' ')}, {ref.n_edges} edges) as your reference."
    if ref.unmentioned:
        text += (f" {plural(len(ref.unmentioned), 'column')} it does not mention "
                 f"{'is' if len(ref.unmentioned) == 1 else 'are'} taken as nodes without edges.")
    ss[cs.REF_STATUS] = ("success", text)


st.title("Check the graph")
st.caption(f"Dataset: {md_escape(ds.name)} ({ds.shape[0]} samples × {ds.shape[1]} nodes). Checks that need no "
           "ground truth, evidence for each edge, and curves instead of one operating point.")

results = state.results_for_current()
if not results:
    st.info("Fit a graph on the **Learn** page first: this page checks the fit shown there (same noise model, "
            "λ and threshold).")
    st.page_link("pages/learn.py", label="Go to Learn", icon=":material/arrow_forward:")  # a link, not words (issue 48)
    st.stop()

# --- which fit -------------------------------------------------------------------------------
labels = [lab for lab, v in VARIANTS.items() if v in results]
if ss["check_variant"] not in labels:
    ss["check_variant"] = labels[-1]
c1, c2, c3 = st.columns([1, 1, 1])
with c1:
    st.segmented_control("Fit to check", labels, key="check_variant", required=True,
                         help="The fits of the Learn page on this dataset.")
with c2:
    st.number_input("Random DAGs (Markov check)", min_value=0, max_value=colide_core.evaluation.checks.MAX_RANDOM_GRAPHS,
                    step=50, key="check_n_random")
with c3:
    st.number_input("Random rescalings", min_value=1, max_value=colide_core.evaluation.checks.MAX_REFITS, step=1,
                    key="check_n_rescale")
res = results[VARIANTS[ss["check_variant"]]]
threshold = float(ss["learn_threshold"])
A, removed = dc.shown_graph(res, threshold, names, return_removed=True)
n_edges = int((A != 0).sum())
st.markdown(f"Checking **CoLiDE-{res.label}** at λ = {fmt_lambda(dict(res.params)['lambda1'])}, threshold {threshold:g} "
            f"(the Learn page's): **{n_edges} edges**.")
prior_badge(res.params)  # the knowledge this fit was made with
if removed:  # never silent: the post-processing cut edges above the threshold
    st.info(md_escape(removed_sentence(removed, names)) + ".", icon=":material/content_cut:")

# --- reference -----------------------------------------------------------------------------------
ref_state = ss[cs.REFERENCE]
if ref_state is not None and ref_state["key"] != ds.key:
    ref_state = None
with st.expander("Your reference graph", expanded=ss[cs.REF_STATUS] is not None):
    st.file_uploader("Edge list (.csv with source,target), adjacency .csv, GraphML, DOT, node-link JSON or a "
                     "DAGitty model (.txt / .dagitty); names must be columns of the data",
                     type=["csv", "graphml", "xml", "dot", "gv", "json", "txt", "dagitty"],
                     key="check_ref_upload", on_change=_load_reference)
    if ss[cs.REF_STATUS] is not None:
        getattr(st, ss[cs.REF_STATUS][0])(ss[cs.REF_STATUS][1])
if ref_state is not None:
    truth, truth_label = ref_state["ref"].B.to_numpy(), "your reference"
elif ds.B_true is not None:
    truth, truth_label = ds.B_true.to_numpy(), "the ground truth"
else:
    truth, truth_label = None, None

# --- checks: a job with a compute slot, progress, Stop and session end (issue 30) ---------------
# the fit's settings on the device this server runs fits of this size on (dashboard.infra.limits.fit_device):
# the refits use it, and a bootstrap made by the same rule belongs to this fit (a loaded manifest has no device)
fit_params = with_fit_device(res.params, ds.shape[1])
boot = dc.bootstrap_frequency(ss[trust_state.BOOT_RESULT], ds.key, fit_params)
refit_key = (ds.key, res.params, threshold)
refits = refit_key in ss[cs.REFITS]
design = ds.design  # the dataset's Design (checked once, by its fit): every check and refit below carries it
freq_key = None if boot is None else boot[1]
check_key = dc.checks_key(ds.key, res, threshold, ss["check_n_random"], ss["check_n_rescale"], refits, freq_key)


def _make_checks_job():
    # the refits run on fit_params' device, which is then in the cached checks' key
    return dc.checks_job(check_key, ds.key, fit_params, threshold, int(ss["check_n_random"]),
                         int(ss["check_n_rescale"]), refits, freq_key, ds.X, A, res.W,
                         None if boot is None else boot[0], design=design)


stored = ss[cs.CHECK_RESULT]
running = ss[cs.CHECK_JOB]
if running is not None and not running.done and running.key != check_key:
    stop_job(ss, cs.CHECK_SLOT)  # checks of another fit or other settings: stop them, check this one
    ss[cs.CHECK_JOB] = None
if ss[cs.CHECK_JOB] is None and (stored is None or stored["key"] != check_key):
    start_job(ss, cs.CHECK_SLOT, _make_checks_job)  # the inputs changed: check them (waits for a slot)
# both jobs of the page followed at once, each with its bar and Stop (issue 53, medium 3)
follow_jobs([(cs.CHECK_SLOT, dc.harvest_checks(ss, cs.CHECK_RESULT)), (cs.PATH_SLOT, dc.harvest_path(ss, cs.PATH))])
show_messages(ss, cs.CHECK_SLOT)
stored = ss[cs.CHECK_RESULT]
if stored is None or stored["key"] != check_key or stored["report"] is None:
    st.button("Run the checks again", key="check_rerun", icon=":material/refresh:",
              on_click=start_job, args=(ss, cs.CHECK_SLOT, _make_checks_job))
    st.stop()
report = stored["report"]
if report.stopped:
    st.button("Run the checks again", key="check_rerun", icon=":material/refresh:",
              on_click=start_job, args=(ss, cs.CHECK_SLOT, _make_checks_job),
              help="Runs every check again, to the end (the page's job waits for a free compute slot).")
lights = dc.check_lights(report, res.variant)
light, answer = dc.overall_answer(lights)
st.markdown(f"### {dc.LIGHTS[light][0]} Should I believe this graph? {md_escape(answer)}")

# keyed and stateful: the open tab survives a rerun that changes what is above it (a reference loaded)
tab_v, tab_a, tab_e, tab_c, tab_r = st.tabs(["Verdicts", "Assumptions", "Edge evidence", "Curves", "Report"],
                                            key="check_tab", on_change="rerun")

with tab_v:
    for lt, check, text, details in lights:
        icon, word = dc.LIGHTS[lt]
        st.markdown(f"{icon} **{check} — {word}.** {md_escape(text)}")
        with st.expander(f"Details: {check}"):
            st.markdown(details)
    if design.has_conditions:
        n_targeted = len(design.targets_by_name())
        st.caption(f"These data come from {len(design.labels)} conditions ({n_targeted} with known "
                   "targets): the residuals have one intercept per condition and leave out each node's rows "
                   "where it is a target, the Markov check tests data centred per condition, and every refit "
                   "(standardised, rescaled, the λ path) fits the conditions and targets as the Learn page does.")
    if not refits:
        st.button("Standardise and refit, and rescale at random", key="check_refit", icon=":material/balance:",
                  on_click=lambda: ss[cs.REFITS].add(refit_key),
                  help="Refits CoLiDE with these settings on standardised data and after random rescalings of "
                       "the columns, and shows which edges survive (a few more solves, run as a job: it waits "
                       "for a free compute slot and can be stopped).")

with tab_a:
    s = report.sortability
    st.subheader("Sortability")
    st.markdown(s.summary)
    st.plotly_chart(plots.sortability_figure(names, s.variances, s.r2, A), key="check_sort_chart")
    if report.standardized is not None:
        st.markdown("**Standardise and refit**: the learned graph's edges, refitted on standardised data.")
        st.dataframe(report.standardized.table(names), hide_index=True, key="check_std_table")
    if report.scale is not None:
        st.markdown(report.scale.summary)
    st.subheader("Residuals: Gaussian? one variance or one per node?")
    st.markdown(report.residuals.summary)
    st.plotly_chart(plots.residual_sd_figure(report.residuals.table, report.residuals.noise_model),
                    key="check_resid_sd_chart")
    resid_table = dc.residual_table(report.residuals.table)
    st.dataframe(resid_table, hide_index=True, key="check_resid_table")
    st.download_button("Residuals (CSV)", to_csv_safe(resid_table, index=False), file_name="colide_residuals.csv",
                       mime="text/csv", key="check_resid_csv")
    st.plotly_chart(plots.qq_figure(report.residuals.refit.residuals, names), key="check_qq_chart")
    st.plotly_chart(plots.hetero_figure(report.residuals.refit, names), key="check_hetero_chart")
    st.subheader("Markov check")
    st.markdown(report.markov.summary)
    st.plotly_chart(plots.markov_figure(report.markov), key="check_markov_chart")
    markov_table = dc.markov_table(report.markov.tests)
    st.dataframe(markov_table, hide_index=True, key="check_markov_table")
    st.download_button("Markov tests (CSV)", to_csv_safe(markov_table, index=False), file_name="colide_markov_tests.csv",
                       mime="text/csv", key="check_markov_csv")

with tab_e:
    ev = report.evidence
    why = dc.bootstrap_mismatch(ss[trust_state.BOOT_RESULT], ds.key, fit_params)
    if why:  # a bootstrap exists but belongs to another fit: say so, never attach it
        st.warning(f"The Edge confidence page's bootstrap is not used here: {md_escape(why)}. Run it again "
                   "there with this fit's settings to add each edge's bootstrap frequency.")
    elif boot is None:
        st.caption("Run a bootstrap on the **Edge confidence** page (same data, noise model, λ, solver and prior "
                   "knowledge) to add each edge's bootstrap frequency.")
    else:
        st.caption(f"Bootstrap frequency from the {boot[1]}.")
    if len(ev):
        options = list(range(len(ev)))
        pick = st.selectbox("Edge", options, format_func=lambda k: f"{ev['source'][k]} → {ev['target'][k]}",
                            key="check_edge")
        row = ev.iloc[int(pick or 0)]
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("OLS weight", f"{row['ols_weight']:.3g}", help="Refitted by least squares on the learned parents")
        m1.caption(f"95% CI [{row['ci_low']:.3g}, {row['ci_high']:.3g}]")
        m2.metric("Partial correlation", f"{row['partial_corr']:.3f}", help="Given the target's other parents")
        m3.metric("ΔBIC if removed", f"{row['delta_bic_remove']:.1f}", help="Positive: the data prefer the edge")
        rev = row["delta_bic_reverse"]
        m4.metric("ΔBIC if reversed", "cycle" if np.isnan(rev) else f"{rev:.1f}",
                  help="0: the data cannot orient it (same Markov equivalence class)")
    shown = ev.copy()
    shown.insert(2, "evidence", dc.edge_lights(ev, report.scale, names))
    st.dataframe(shown, hide_index=True, key="check_evidence_table")
    st.download_button("Edge evidence (CSV)", to_csv_safe(ev, index=False), file_name="colide_edge_evidence.csv",
                       mime="text/csv", key="check_dl_evidence")

with tab_c:
    order = [v for v in ("ev", "nv") if v in results]
    if truth is not None:
        st.markdown(f"Against **{truth_label}** ({int((truth != 0).sum())} edges), "
                    + ", ".join(results[v].label for v in order) + " side by side.")
        rocs, tcs, table = dc.curves_against(truth, {results[v].label: results[v] for v in order}, threshold, names)
        st.dataframe(table, key="check_curve_metrics")
        k1, k2 = st.columns(2)
        k1.plotly_chart(plots.roc_figure(rocs, truth_label), key="check_roc_chart")
        k2.plotly_chart(plots.pr_figure(rocs, truth_label), key="check_pr_chart")
        st.plotly_chart(plots.threshold_figure(tcs, current=threshold, reference_label=truth_label),
                        key="check_threshold_chart")
    else:
        st.info("No ground truth: upload your own reference graph above for ROC and precision-recall curves. "
                "Below, the number of edges and the BIC over λ and the threshold.")
    path_key = dc.path_key(ds.key, res.variant, with_fit_device(ss[state.SOLVER_OVERRIDES], ds.shape[1]))
    overrides = path_key[2]
    stored = ss[cs.PATH]
    if (stored is None or stored["key"] != path_key) and not is_running(ss, cs.PATH_SLOT):
        st.button("Compute the λ path (9 λ, warm-started)", key="check_path_run", on_click=start_job,
                  args=(ss, cs.PATH_SLOT, lambda: dc.path_job(path_key, ds.key, res.variant, overrides, ds.X, design)),
                  help="Solves 9 λ values as a job: it waits for a free compute slot and can be stopped.")
    show_messages(ss, cs.PATH_SLOT)
    stored = ss[cs.PATH]
    if stored is not None and stored["key"] == path_key:
        path = stored["path"]
        region = stable_region(path)
        st.markdown(region.summary)
        st.plotly_chart(plots.path_figure(path, region, path.cell(dict(res.params)["lambda1"], threshold)),
                        key="check_path_chart")

with tab_r:
    fits = []
    for v in [res.variant] + [v for v in ("ev", "nv") if v in results and v != res.variant]:
        r = results[v]
        g = dc.shown_graph(r, threshold, names)
        params = colide_core.CoLiDE(**{**dict(r.params), "threshold": threshold}).get_params()
        try:
            man = manifests.fit_manifest(r, ds, threshold)
        except Exception:  # noqa: BLE001 - the report is still useful without a manifest
            man = None
        fits.append(ReportFit(r.label, r.W, g, r.sigma, params, man,  # the Learn download's name (m-8)
                              manifest_name=manifests.manifest_file_name(r, ds, threshold)))
    prior = PriorKnowledge.from_params(res.params)
    edge_mask, required_mask = (None, None) if prior.is_empty else prior.resolve(len(names), names)
    audit = audit_constraints(A, edge_mask, required_mask, tiers=list(prior.tiers) or None, names=names,
                              removed=removed)
    stored = ss[cs.PATH]
    path = stored["path"] if stored is not None and stored["key"][0] == ds.key and stored["key"][1] == res.variant else None
    st.markdown("One HTML file with everything on this page (and the graph, settings, noise estimates and the run "
                "manifests) that opens offline in any browser. PDF: use the browser's *Print to PDF* (the report "
                "has print styles); a PDF library without a browser cannot draw its interactive figures.")
    args = (ds.key, tuple((f.label, dict(f.params)["threshold"]) for f in fits), threshold,
            None if ref_state is None else (ref_state["name"], ref_state["ref"].n_edges),
            (res.params, refits, int(ss["check_n_random"]), int(ss["check_n_rescale"])),
            None if path is None else stored["key"],
            ds.X, fits, truth, truth_label or "ground truth", report, path, audit, ds.name, design,
            data_as_fitted(ds), *predict_state.for_report(ss, ds.key, res.content_key, threshold))
    # Built when the button is clicked (Streamlit runs the callable then), not on every rerun.
    st.download_button("Download the report (HTML)", lambda: dc.report_html_or_error(*args),
                       file_name="colide_report.html", mime="text/html", key="check_dl_report", type="primary")
