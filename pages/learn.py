"""Learn page: run CoLiDE-EV / CoLiDE-NV on the current dataset and inspect the result.

The solver runs in a background job (``dashboard.fitting.FitJob``) whose results are cached on
(data hash, parameters). The threshold slider only re-thresholds the cached raw weights with
``colide_core.threshold_to_dag``; it never re-runs the solver. Each fit can be downloaded as a
run manifest (``dashboard.manifests``); loading a manifest back restores the same view.
"""
import pandas as pd
import streamlit as st

import colide_core
from colide_core.constraints import PriorKnowledge
from colide_core.defaults import LAMBDA1_RANGE, THRESHOLD_RANGE
from colide_core.export import EXPORT_FORMATS, export_graph
from dashboard.jobs import follow_job, is_running, show_messages, start_job
from dashboard.layout import page_setup
from dashboard import core, manifests, state
from colide_core.export import edge_list, to_adjacency_csv as adjacency_csv, to_edge_list_csv as edge_list_csv
from dashboard.figures import noise_figure, objective_figure
from dashboard.fitting import VARIANTS, FitJob, solver_params
from dashboard.cached import graph_html_cached
from dashboard.checks import ev_nv_line
from dashboard.text import md_escape
from dashboard.lessons import lesson_banner

page_setup()
ss = st.session_state
ds = state.current_dataset()


def _start(labels=None):
    """on_click of the Run buttons: start a background fit of the given variants (default: the
    selected one)."""
    if is_running(ss, state.FIT_SLOT):
        ss[state.FIT_MESSAGES] = [("warning", "A fit is already running: stop it first.")]
        return
    labels = labels or [ss["learn_variant"]]
    params = [solver_params(VARIANTS[lab], ss["learn_lambda1"], ss[state.SOLVER_OVERRIDES])
              for lab in labels]
    # FitJob checks every setting (solver checks, dashboard bounds); a refusal becomes a message.
    start_job(ss, state.FIT_SLOT, lambda: FitJob(state.current_dataset(), params))


def _load_manifest():
    """on_change of the manifest uploader: validate it and restore its view (runs before the widgets)."""
    up = ss.get("learn_manifest_upload")
    if up is None:
        ss[state.MANIFEST_STATUS] = None
        return
    name = md_escape(up.name)
    if is_running(ss, state.FIT_JOB):
        ss[state.MANIFEST_STATUS] = ("warning", f"**{name}** was not loaded: a fit is running, stop it first.")
        return
    ds_now = state.current_dataset()
    try:
        run = manifests.run_from_manifest(up.getvalue(), ds_now)
    except manifests.DataMismatch as exc:
        ss[state.MANIFEST_STATUS] = ("error", f"**{name}** is for other data: {md_escape(exc)}")
        return
    except manifests.ManifestProblem as exc:
        ss[state.MANIFEST_STATUS] = ("error", f"**{name}** cannot be loaded: {md_escape(exc)}")
        return
    except Exception as exc:  # never a traceback for a user file
        ss[state.MANIFEST_STATUS] = ("error", f"**{name}** could not be read ({type(exc).__name__}): "
                                              f"{md_escape(exc)}")
        return
    manifests.apply_to_state(ss, run)
    ss[state.FIT_MESSAGES] = []
    when = f", made {md_escape(run.created)}" if run.created else ""
    text = (f"Loaded **{name}**{when}: CoLiDE-{run.label}, λ = {run.lambda1:g}, threshold {run.threshold:g}, "
            f"on the current data (fingerprint checked). The stored W is shown as it was; press **Run** to refit.")
    for note in run.notes:
        text += "  \n" + md_escape(note)
    ss[state.MANIFEST_STATUS] = ("success", text)


def _harvest(job):
    """Move a finished job's results into the session state; returns the messages describing them."""
    messages = []
    current = state.current_dataset().key
    for res in job.results:
        if res.data_key != current:
            continue
        ss[state.RESULTS][res.variant] = res
        if res.stopped:
            messages.append(("warning", f"{res.variant.upper()} was stopped after {res.n_iter} iterations "
                                        f"({res.fit_time:.1f} s): the result shown is partial."))
        else:
            conv = "converged" if res.converged else "reached the iteration limit"
            messages.append(("success", f"{res.variant.upper()} finished: {res.n_iter} iterations in "
                                        f"{res.fit_time:.1f} s ({conv})."))
    messages += [("info", md_escape(note)) for note in job.skipped]
    messages += [("error", md_escape(err)) for err in job.errors]
    if job.error:
        messages.append(("error", md_escape(job.error)))
    return messages


st.title("Learn a DAG with CoLiDE")
st.caption(f"Dataset: {md_escape(ds.name)} ({ds.shape[0]} samples × {ds.shape[1]} nodes)")
lesson_banner(ds)  # the explanation of a lesson loaded from the Lessons page (dashboard.lessons)

# --- controls --------------------------------------------------------------------------------
c1, c2, c3 = st.columns([1, 1, 2])
with c1:
    st.segmented_control(
        "Noise model", list(VARIANTS), key="learn_variant", required=True, persist_state="session",
        help="EV: one noise variance shared by all nodes (paper eq. 4-5). "
             "NV: one variance per node (eq. 6-7).",
    )
with c2:
    st.number_input("λ (L1 weight, lambda1)", min_value=LAMBDA1_RANGE[0], max_value=LAMBDA1_RANGE[1], step=0.01,
                    format="%.3f", key="learn_lambda1", persist_state="session")
with c3:
    st.slider("Edge threshold |w| >", min_value=THRESHOLD_RANGE[0], max_value=THRESHOLD_RANGE[1], step=0.01,
              key="learn_threshold",
              persist_state="session",
              help="Weights with |w| at or below the threshold are dropped; then the smallest "
                   "remaining edges are removed until the graph is acyclic. Does not re-run the solver.")

with st.expander("Load a run manifest", expanded=ss[state.MANIFEST_STATUS] is not None):
    st.file_uploader("Run manifest (JSON) from the Downloads tab or `python -m colide_core fit`",
                     type=["json"], key="learn_manifest_upload", on_change=_load_manifest,
                     help="Checked against the current dataset's fingerprint; restores the noise model, λ, "
                          "threshold, solver settings, prior knowledge and the stored W.")
    status = ss[state.MANIFEST_STATUS]
    if status is not None:
        getattr(st, status[0])(status[1])

running = is_running(ss, state.FIT_SLOT)
b1, b2, _ = st.columns([1, 1, 3])
b1.button("Run", key="learn_run", type="primary", icon=":material/play_arrow:",
          on_click=_start, disabled=running, help="Fit the selected noise model.")
b2.button("Run EV and NV", key="learn_run_both", on_click=_start, args=(list(VARIANTS),), disabled=running)

# --- a running job: progress bar + Stop, then its results -----------------------------------------
follow_job(state.FIT_SLOT, _harvest)
show_messages(ss, state.FIT_SLOT)

results = state.results_for_current()
if not results:
    st.info("Press **Run** to learn a graph. A fit on the Sachs data takes about 0.1 s (a few seconds with "
            "the paper-faithful solver, chosen in the sidebar).")
    st.stop()

# --- results ----------------------------------------------------------------------------------
threshold = float(ss["learn_threshold"])
names = ds.node_names
order = [v for v in ("ev", "nv") if v in results]
# Re-threshold the cached raw W (never re-solve); required edges of a constrained fit survive.
thresholded = {
    v: colide_core.threshold_to_dag(
        results[v].W, threshold,
        required=PriorKnowledge.from_params(results[v].params).required_mask(len(names), names))
    for v in order
}

summary_cols = st.columns(len(order))
for col, v in zip(summary_cols, order):
    res = results[v]
    with col:
        st.markdown(f"**CoLiDE-{res.label}** · λ = {dict(res.params)['lambda1']:g}")
        st.metric(f"Edges · {v.upper()}", int((thresholded[v] != 0).sum()))
        st.caption(f"{res.n_iter} iterations, {res.fit_time:.1f} s"
                   + (" · stopped early: partial result" if res.stopped else ""))

tab_graph, tab_noise, tab_metrics, tab_dl, tab_conv, tab_play = st.tabs(
    ["Graph", "Noise", "Metrics", "Downloads", "Convergence", "Playback"])

with tab_graph:
    if ds.B_true is None:
        st.caption("No ground truth: edges are drawn in one colour. Width ∝ |w|.")
    else:
        st.caption("Compared with the ground truth. Edge width ∝ |w|; missing true edges dashed.")
    gcols = st.columns(len(order))
    for col, v in zip(gcols, order):
        with col:
            st.markdown(f"**{results[v].label}**")
            truth = None if ds.B_true is None else ds.B_true.to_numpy()
            html = graph_html_cached(thresholded[v], tuple(names), truth, results[v].sigma)
            st.iframe(html, height=600)

with tab_noise:
    estimates = {results[v].label: results[v].sigma for v in order}
    st.plotly_chart(noise_figure(names, estimates, ds.sigma_true), key="learn_noise_chart")
    st.caption("Estimated exogenous noise standard deviation per node (data units). "
               "EV estimates one σ for all nodes (dashed line).")
    for v in order:  # EV or NV? the residual test of the Check page (dashboard.checks)
        st.caption(f"{results[v].label}: " + ev_nv_line(ds.key, results[v].params, threshold, ds.X, thresholded[v]))

with tab_metrics:
    if ds.B_true is None:
        st.info("This dataset has no ground truth, so there is nothing to score against.")
    else:
        table = {}
        for v in order:
            m = colide_core.evaluate(ds.B_true.to_numpy(), thresholded[v],
                              sigma_true=ds.sigma_true,
                              sigma_est=results[v].sigma if ds.sigma_true is not None else None)
            table[results[v].label] = m
        mcols = st.columns(len(order))
        for col, v in zip(mcols, order):
            m = table[results[v].label]
            col.metric(f"SHD · {v.upper()}", m["shd"])
        frame = pd.DataFrame(table)
        frame = frame.loc[[k for k in core.METRIC_LABELS if k in frame.index]]
        frame.index = [core.METRIC_LABELS[k] for k in frame.index]
        st.dataframe(frame, key="learn_metrics_table")
        st.caption(f"Against the {int((ds.B_true.to_numpy() != 0).sum())}-edge ground truth at threshold "
                   f"{threshold:g}. SHD counts a reversed edge once; SHD-C compares CPDAGs; SID counts "
                   "wrongly inferred interventional distributions.")

with tab_dl:
    for v in order:
        res = results[v]
        st.markdown(f"**{res.label}**, threshold {threshold:g}")
        edges = edge_list(thresholded[v], names)
        st.dataframe(edges, hide_index=True, key=f"learn_edges_{v}")
        d1, d2 = st.columns(2)
        d1.download_button("Edge list (CSV)", edge_list_csv(thresholded[v], names),
                           file_name=f"colide_{v}_edges.csv", mime="text/csv", key=f"learn_dl_edges_{v}")
        d2.download_button("Weighted adjacency (CSV)", adjacency_csv(thresholded[v], names),
                           file_name=f"colide_{v}_adjacency.csv", mime="text/csv", key=f"learn_dl_adj_{v}")
        # Further formats from colide_core.export (networkx / pydot / matplotlib), built only
        # for the format picked.
        f1, f2 = st.columns(2)
        fmt = f1.selectbox("Other format", list(EXPORT_FORMATS), key=f"learn_export_fmt_{v}",
                           help="GraphML, DOT, node-link JSON, DAGitty, CSV, or a PNG/SVG picture")
        ext, mime = EXPORT_FORMATS[fmt]
        f2.download_button(f"Download {fmt}", export_graph(thresholded[v], names, fmt),
                           file_name=f"colide_{v}{ext}", mime=mime, key=f"learn_dl_export_{v}")
        manifest_json = manifests.fit_manifest_json(res, ds, threshold)
        st.download_button("Run manifest (JSON)", manifest_json, file_name=f"colide_{v}_manifest.json",
                           mime="application/json", key=f"learn_dl_manifest_{v}",
                           help="Data fingerprint, every parameter, package versions, git commit, W, σ and "
                                "metrics. Load it back above (Load a run manifest) to get this view again.")

with tab_conv:
    st.plotly_chart(objective_figure({results[v].label: results[v].objective_trace for v in order}),
                    key="learn_objective_chart")
    st.caption("Objective (score + λ‖W‖₁ scaled by μ, plus the log-det acyclicity term) at each checkpoint; "
               "it jumps where a new stage (μ, s) starts.")

with tab_play:  # watch the optimisation of the last fit (dashboard.playback)
    from dashboard.playback import render_playback

    render_playback(ds, results[order[-1]], threshold, truth=None if ds.B_true is None else ds.B_true.to_numpy())
