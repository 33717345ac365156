"""Explorer page: CoLiDE over a grid of λ (log-spaced) × threshold.

The λ path is solved once in a background job (``colide_core.solver.path.lambda_path``: increasing λ,
each solve warm-started from the previous one); thresholds are re-applied to the stored raw weights
without re-solving. Clicking a heatmap cell (or picking it with the sliders) shows that graph; a
button loads it into the Learn page's Graph view through the session state.
"""
import numpy as np
import streamlit as st

from colide_core.defaults import MU_SCHEDULE, THRESHOLD_RANGE
from colide_core.graph.export import to_csv_safe
from colide_core.solver.path import PAPER_LAMBDA, PAPER_THRESHOLD, lambda_path, path_metrics
from dashboard.infra.limits import with_fit_device
from dashboard.infra.jobs import Job, follow_job, is_running, show_messages, start_job
from dashboard.infra.workers import in_worker
from dashboard.infra.layout import page_setup
from dashboard.infra import state
from dashboard.infra.state import trust as ts
from dashboard.graphview import show_graph
from colide_core.render.figures import cell_from_selection, edge_count_figure, path_heatmap
from dashboard.fitting import VARIANTS, FitResult, check_params, check_widget_values, path_kwargs, solver_params
from dashboard.infra.text import fmt_lambda, fmt_seconds, md_escape

page_setup()
ss = st.session_state
ds = state.current_dataset()
LAMBDA_STOPS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0]
THRESHOLD_CHOICES = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0]


def _grid():
    lo, hi = sorted(float(x) for x in ss["exp_lambda_range"])
    lambdas = np.geomspace(lo, hi, int(ss["exp_n_lambdas"])) if hi > lo else np.array([lo])
    thresholds = sorted(float(t) for t in ss["exp_thresholds"]) or [PAPER_THRESHOLD]
    return tuple(float(x) for x in lambdas), tuple(thresholds)


def _key():
    lambdas, thresholds = _grid()
    dataset = state.current_dataset()  # the device is the server's rule for its size (part of the key)
    overrides = tuple(sorted(path_kwargs(with_fit_device(ss[state.SOLVER_OVERRIDES], dataset.shape[1])).items()))
    warm = int(ss["exp_warm_stages"]) if ss["exp_warm"] else 0
    return (dataset.key, VARIANTS[ss["exp_variant"]], lambdas, thresholds, warm, overrides)


def _make_job():
    """The λ-path job, after checking every setting (widget bounds, solver checks and bounds)."""
    check_widget_values(("Number of λ values", ss["exp_n_lambdas"], 2, 25, "int"),
                        ("Stages after a warm start", ss["exp_warm_stages"], 1, 4, "int"),
                        *(("λ range", lam, LAMBDA_STOPS[0], LAMBDA_STOPS[-1]) for lam in ss["exp_lambda_range"]),
                        *(("Threshold", t, *THRESHOLD_RANGE) for t in ss["exp_thresholds"]))
    if len(ss["exp_thresholds"]) > len(THRESHOLD_CHOICES):
        check_widget_values(("Number of thresholds", len(ss["exp_thresholds"]), 1, len(THRESHOLD_CHOICES), "int"))
    dataset = state.current_dataset()
    key = _key()
    _, variant, lambdas, thresholds, warm, overrides = key
    for lam in (lambdas[0], lambdas[-1]):
        check_params(solver_params(variant, lam, dict(overrides)))
    X, B_true = dataset.X, dataset.B_true

    def run(job):  # several conditions: an intercept per condition, targets masked, as on Learn
        stages = min(warm, len(dict(overrides).get("mu_schedule", MU_SCHEDULE))) if warm else 1
        path = in_worker(lambda_path, X, lambdas, thresholds, variant, warm_start=bool(warm),  # a worker process
                         warm_stages=stages, design=dataset.design, **dict(overrides))
        metrics = None if B_true is None else path_metrics(path, B_true.to_numpy())
        return path, metrics

    return Job(run, f"λ path ({len(lambdas)} values)", key=key)


def _start():
    start_job(ss, ts.PATH_SLOT, _make_job)


def _harvest(job):
    """Store a finished λ path; returns the messages describing it."""
    messages = []
    if job.error:
        messages.append(("error", md_escape(job.error)))
    elif job.result is not None:
        path, metrics = job.result
        how = "warm-started along increasing λ" if path.warm_start else "independent fits"
        text = (f"Solved {len(path.lambdas)} values of λ in {fmt_seconds(path.total_time)} ({how}, "
                f"{int(path.n_iter.sum()):,} iterations).")
        if path.stopped:
            messages.append(("warning", "Stopped: " + text + " Only these λ are shown."))
        else:
            messages.append(("success", text))
        # Only a last stage that ran out of steps matters (the early stages of the central path
        # may end on their budget by design); say what to do about it.
        last = path.last_stage_converged if path.last_stage_converged is not None else path.converged
        if not np.all(last):
            bad = [fmt_lambda(x) for x, ok in zip(path.lambdas, last) if not ok]
            messages.append(("warning", f"The last stage of {len(bad)} of {len(path.lambdas)} solves (λ = "
                                        f"{', '.join(bad)}) stopped on its iteration budget before converging: "
                                        "their graphs may still change. Raise the last entry of max_iter to be "
                                        "sure."))
        ss[ts.PATH_RESULT] = {"key": job.key, "path": path, "metrics": metrics, "seconds": job.elapsed}
        ss[ts.EXPLORER_CELL] = path.cell(PAPER_LAMBDA, PAPER_THRESHOLD)
        ss[ts.EXPLORER_LAST_CLICK] = None
    return messages


def _cell_widgets_changed():
    ss[ts.EXPLORER_CELL] = (int(ss["exp_cell_lambda"]), int(ss["exp_cell_threshold"]))


def _open_in_learn(path, cell, params):
    """Put the selected cell's fit record into the Learn page's results and point its widgets at it."""
    i, j = cell
    variant = path.variant
    dataset = state.current_dataset()
    ss[state.RESULTS][variant] = FitResult.from_path(path, i, params, dataset.key, dataset.node_names)
    label = variant.upper()
    ss["learn_variant"] = label
    ss["learn_graph_variant"] = label
    ss["learn_lambda1"] = float(path.lambdas[i])
    ss["learn_threshold"] = float(path.thresholds[j])
    ss[state.FIT_MESSAGES] = [("info", f"Loaded from the Explorer: {label}, λ = {fmt_lambda(path.lambdas[i])}, "
                                       f"threshold {path.thresholds[j]:g}"
                                       + (", warm-started along the λ path (a cold fit at this λ may differ "
                                          "slightly: move λ to solve it cold)." if path.warm_start else "."))]


st.title("λ × threshold explorer")
st.caption(f"Dataset: {md_escape(ds.name)} ({ds.shape[0]} samples × {ds.shape[1]} nodes). The solver runs "
           "once per λ, warm-started along increasing λ; thresholds are applied afterwards without re-solving.")

c1, c2, c4 = st.columns([1, 2, 1])
with c1:
    st.segmented_control("Noise model", list(VARIANTS), key="exp_variant", required=True)
# the same kind of λ control as on Learn and Edge confidence: a log-scale select slider (issue 28)
def _range_moved():
    ss["exp_lambda_range"] = tuple(ss["exp_lambda_range_slider"])


# (the range lives in "exp_lambda_range", a plain state key, so that it survives a visit to another page;
# a select slider is a range slider only when given a (low, high) value)
_lo_hi = tuple(ss["exp_lambda_range"]) if len(ss["exp_lambda_range"]) == 2 else (0.005, 0.5)
c2.select_slider("λ range (log scale)", LAMBDA_STOPS, value=_lo_hi, key="exp_lambda_range_slider",
                 format_func=fmt_lambda, on_change=_range_moved,
                 help="The smallest and the largest λ of the path (log-spaced in between).")
c4.number_input("Number of λ values (log-spaced)", min_value=2, max_value=25, step=1, key="exp_n_lambdas")
c5, c6, c7 = st.columns([3, 1, 1])
c5.multiselect("Thresholds", THRESHOLD_CHOICES, key="exp_thresholds")
c6.checkbox("Warm start", key="exp_warm",
            help="Start each λ from the previous solution, solving along increasing λ. Measured on Sachs: the "
                 "same graphs as independent fits, 14x faster. Untick to fit every λ from scratch.")
c7.number_input("Stages after a warm start", min_value=1, max_value=4, step=1, key="exp_warm_stages",
                disabled=not ss["exp_warm"],
                help="How many of the last (μ, s) stages a warm-started solve re-runs. 1 is fastest; more "
                     "stages follow independent fits more closely on hard simulated problems, at a cost.")

st.button("Run λ path", key="exp_run", type="primary", on_click=_start,
          disabled=is_running(ss, ts.PATH_SLOT) or not ss["exp_thresholds"])
follow_job(ts.PATH_SLOT, _harvest)
show_messages(ss, ts.PATH_SLOT)
stored = ss[ts.PATH_RESULT]
if stored is None or stored["key"][0] != ds.key:
    last_fit = state.last_fit_time()
    st.info("Press **Run λ path**: one warm-started fit per λ value"
            + (f" (the last single fit on this dataset took {fmt_seconds(last_fit)})." if last_fit else "."))
    st.stop()

path, metrics = stored["path"], stored["metrics"]
if stored["key"] != _key():
    st.caption("The grid below was computed with different settings than those above; press **Run λ path** "
               "to update it.")

# --- edge count -------------------------------------------------------------------------------
st.plotly_chart(edge_count_figure(path, PAPER_LAMBDA), key="exp_edges_chart")

# --- heatmap ------------------------------------------------------------------------------------
colours = (["SHD", "TPR", "FDR"] if metrics is not None else []) + ["BIC", "Edges"]
if ss["exp_colour"] not in colours:
    ss["exp_colour"] = colours[0]
st.segmented_control("Colour the grid by", colours, key="exp_colour", required=True)

click = cell_from_selection(ss.get("exp_heatmap"), path)
if click is not None and click != ss[ts.EXPLORER_LAST_CLICK]:
    ss[ts.EXPLORER_LAST_CLICK] = click
    ss[ts.EXPLORER_CELL] = click
cell = ss[ts.EXPLORER_CELL]
if cell is None or cell[0] >= len(path.lambdas) or cell[1] >= len(path.thresholds):
    cell = path.cell(PAPER_LAMBDA, PAPER_THRESHOLD)
    ss[ts.EXPLORER_CELL] = cell

colour = ss["exp_colour"]
spec = {
    "SHD": (None if metrics is None else metrics.get("shd"), "SHD", "Viridis", True, ".0f"),
    "TPR": (None if metrics is None else metrics.get("tpr"), "TPR", "Viridis", False, ".2f"),
    "FDR": (None if metrics is None else metrics.get("fdr"), "FDR", "Viridis", True, ".2f"),
    "BIC": (path.bic, "BIC", "Viridis", True, ".4g"),
    "Edges": (path.edge_counts, "edges", "Blues", False, ".0f"),
}[colour]
st.plotly_chart(path_heatmap(path, spec[0], title=spec[1], colorscale=spec[2], reverse=spec[3],
                             selected=cell, fmt=spec[4]),
                key="exp_heatmap", on_select="rerun", selection_mode="points")
st.caption(f"★ marks the paper's default (λ = {PAPER_LAMBDA}, threshold {PAPER_THRESHOLD}). Click a cell to show its graph below. "
           + ("Colours: brighter is better for SHD, TPR and FDR." if metrics is not None else ""))

bi, bj = path.best_bic()
st.markdown(f"**Lowest BIC (no ground truth needed):** λ = {path.lambdas[bi]:.3g}, "
            f"threshold {path.thresholds[bj]:g} ({int(path.edge_counts[bi, bj])} edges)"
            + (f", SHD {int(metrics['shd'][bi, bj])}" if metrics is not None else "") + ".")
st.caption("Read it as how many edges the fitted orientations need, not as a better graph: measured against known "
           "truths (docs/networks.md, \"A threshold blind to the truth\"), this cell had more errors than the "
           f"defaults (λ = {PAPER_LAMBDA}, threshold {PAPER_THRESHOLD}) on all 16 network lines (+46 SHD a fit on "
           "average) and on 4 of 8 simulated problems (+49 on average).")
with st.expander("Why BIC of the refitted SEM?"):
    st.markdown(
        "Each cell's graph is refitted by ordinary least squares (every node on its parents, with its own noise "
        "variance) and scored by the Gaussian BIC, −2 log-likelihood + k log n, k = edges + nodes. The refit removes "
        "the L1 shrinkage, so graphs from different λ are compared on their structure only; one variance per node "
        "assumes nothing about equal noise and makes the score independent of each variable's units (raw Sachs "
        "intensities differ by orders of magnitude); it is the score GES optimises, consistent for choosing among "
        "DAGs; and it costs no extra fits, unlike stability selection, which would refit every cell on dozens of "
        "subsamples. Its limits: Markov-equivalent graphs get the same BIC, so it picks the sparsity, not the "
        "directions; and it scores each cell's graph in the fit's own orientation, where a reversed edge makes "
        "the data need extra edges, so it keeps them. A threshold chosen by the BIC from one fit "
        "(colide_core.solver.path.choose_threshold) lost to 0.3 in the same way, though the true graph's BIC was "
        "lower than the chosen graph's in 119 of 128 network fits: the score is right, the candidates are not.")

# --- the selected cell --------------------------------------------------------------------------
st.subheader("Graph of the selected cell")
ss["exp_cell_lambda"], ss["exp_cell_threshold"] = int(cell[0]), int(cell[1])
s1, s2 = st.columns(2)
s1.select_slider("λ", options=list(range(len(path.lambdas))), format_func=lambda k: f"{path.lambdas[k]:.3g}",
                 key="exp_cell_lambda", on_change=_cell_widgets_changed,
                 help="Slide to play back the λ path: every node keeps its place, so you see which edges "
                      "appear as λ falls and vanish as it grows.")
s2.select_slider("threshold", options=list(range(len(path.thresholds))),
                 format_func=lambda k: f"{path.thresholds[k]:g}", key="exp_cell_threshold",
                 on_change=_cell_widgets_changed)
i, j = cell
A = path.graph(i, j)
m1, m2, m3, m4 = st.columns(4)
m1.metric("Edges", int((A != 0).sum()))
m2.metric("BIC", f"{path.bic[i, j]:.1f}")
if metrics is not None:
    m3.metric("SHD", int(metrics["shd"][i, j]))
    m4.metric("TPR / FDR", f"{metrics['tpr'][i, j]:.2f} / {metrics['fdr'][i, j]:.2f}")
truth = None if ds.B_true is None else ds.B_true.to_numpy()
# Moving the λ slider plays the λ path back: each node stays in place, edges appear and vanish.
show_graph(A, ds.node_names, truth, path.sigma[i], key="exp_graph", height=560,
           label=f"λ = {path.lambdas[i]:.3g}, threshold {path.thresholds[j]:g}")
params = solver_params(path.variant, float(path.lambdas[i]), dict(stored["key"][5]))
if st.button("Open this graph in the Learn page", key="exp_open_learn",
             help="Loads this λ's solution into the Learn page (Graph, Noise, Metrics, Downloads) with this threshold."):
    _open_in_learn(path, (i, j), params)
    st.switch_page("pages/learn.py")

with st.expander("The whole grid as a table"):
    table = path.table()
    if metrics is not None:
        for k, v in metrics.items():
            table[k] = v.ravel()
    st.dataframe(table, hide_index=True, key="exp_table")
    st.download_button("Grid (CSV)", to_csv_safe(table, index=False), file_name="colide_lambda_threshold_grid.csv",
                       mime="text/csv", key="exp_dl")
