"""Learn page: run CoLiDE-EV / CoLiDE-NV on the current dataset and inspect the result.

Where a fit takes well under a second (``dashboard.fitting.live_reason``: the fast solver, at
most ``LIVE_MAX_NODES`` nodes), the page is *live*: every change of λ (a log-scale slider) or
the threshold re-solves EV and NV in the script (``fitting.fit_live``, cached cold fits) and
draws them beside the truth, no Run click. Elsewhere the solver runs in a background job
(``dashboard.fitting.FitJob``) on Run, and a graph learned at another λ is labelled stale.
Results are cached on (data hash, parameters). The threshold slider only re-thresholds the cached raw weights with
``colide_core.threshold_to_dag``; it never re-runs the solver. Each fit can be downloaded as a
run manifest (``dashboard.manifests``); loading a manifest back restores the same view.
"""
import time

import pandas as pd
import streamlit as st

import colide_core
from colide_core.defaults import LAMBDA1_GRID, LAMBDA1_RANGE, SOLVER, THRESHOLD_RANGE, TOL
from colide_core.graph.export import EXPORT_FORMATS, export_graph
from colide_core.render.graph_style import node_positions, per_row, unit_positions
from dashboard.data import data_as_fitted, download_name, oriented_by_interventions, rows_and_truth
from colide_core.solver.cost import runs_on_device
from dashboard.infra.limits import with_fit_device
from dashboard.graphview import show_graph, show_legend
from dashboard.infra.jobs import follow_job, is_running, show_messages, start_job
from dashboard.infra.layout import page_setup, prior_badge
from dashboard import manifests
from dashboard.infra import state, urlstate
from colide_core.graph.constraints import removed_sentence
from dashboard.live import (drawn_after, fast_first, live_now, neighbours, prefetch_neighbours, refine, refined,
                            required_of, thresholded as threshold_fit)
from colide_core.graph.export import edge_list, to_adjacency_csv as adjacency_csv, to_edge_list_csv as edge_list_csv
from colide_core.render.figures import noise_figure, objective_figure
from dashboard.fitting import NOISE_CHOICES, VARIANTS, FitJob, fit_live, shown_labels, solver_params, topo_cost
from dashboard.checks import disputed_in_session, ev_nv_line
from dashboard.lessons import lesson_banner
from dashboard.settings_form import settings_form
from dashboard.infra.text import METRIC_LABELS, convergence_note, fmt_lambda, fmt_seconds, md_escape, solver_label

#: Height of each graph drawing (px) by the number of drawings side by side: about a column's
#: width at 1280 px with the sidebar open, so the drawing (fitted to its frame) fills it, and with
#: the controls in one row above, the λ slider and the graphs are on screen together at 1280×720
#: (tests/e2e/test_live_learn.py checks the boxes).
GRAPH_HEIGHT = {1: 340, 2: 320, 3: 300}
#: Width of the row of drawings at 1024×768 with the sidebar open (dashboard.infra.layout.PROJECTOR_CSS):
#: the narrowest screen the page is laid out for.
PROJECTOR_ROW_PX = 740.0

ss = st.session_state
# A shared link or a refresh: the view in the URL (dataset, λ, threshold, noise model, layout) is
# applied once, when the session opens, before the sidebar and the widgets are made (dashboard.infra.urlstate).
state.init()
ss[state.FIT_MESSAGES] = ss[state.FIT_MESSAGES] + urlstate.restore_from_url(ss, st.query_params)
page_setup()
ds = state.current_dataset()
truth = None if ds.B_true is None else ds.B_true.to_numpy()


def _positions(learned=None):
    """One set of node positions for every drawing and picture of this dataset
    (colide_core.render.graph_style): None for the default circle, or with the Top-down layout, layers by
    topological order of the truth, else of ``learned`` (None when there is neither)."""
    base = truth if truth is not None else learned
    if ss["learn_layout"] != "Top-down" or base is None:
        return None
    return node_positions(len(ds.node_names), base, layout="topological")


def _start(labels=None):
    """on_click of the Run buttons: start a background fit of the given variants (default: the
    selected one)."""
    if is_running(ss, state.FIT_SLOT):
        ss[state.FIT_MESSAGES] = [("warning", "A fit is already running: stop it first.")]
        return
    labels = labels or shown_labels(ss["learn_variant"])
    # above 200 nodes (accepted only with a GPU) the fits run on the GPU (dashboard.infra.limits.fit_device)
    overrides = with_fit_device(ss[state.SOLVER_OVERRIDES], state.current_dataset().shape[1])
    params = [solver_params(VARIANTS[lab], ss["learn_lambda1"], overrides) for lab in labels]
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
    ss[state.LIVE_HOLD] = True  # show the stored fit as it is; live solving resumes on the next change
    ss[state.FIT_MESSAGES] = []
    when = f", made {md_escape(run.created)}" if run.created else ""
    text = (f"Loaded **{name}**{when}: CoLiDE-{run.label}, λ = {fmt_lambda(run.lambda1)}, threshold {run.threshold:g}, "
            f"on the current data (fingerprint checked). The stored W is shown as it was; move λ or the noise model to solve again.")
    for note in run.notes:
        text += "  \n" + md_escape(note)
    ss[state.MANIFEST_STATUS] = ("success", text)


def _note(res):
    """(level, text) about a finished fit: the last stage's convergence, never a false alarm."""
    return convergence_note(res.result, dict(res.params).get("tol", TOL))


def _harvest(job):
    """Move a finished job's results into the session state; returns the messages describing them."""
    messages = []
    current = state.current_dataset().key
    for res in job.results:
        if res.data_key != current:
            continue
        ss[state.RESULTS][res.variant] = res
        if res.stopped:
            messages.append(("warning", f"{res.variant.upper()} was stopped after {res.n_iter:,} iterations "
                                        f"({fmt_seconds(res.fit_time)}): the result shown is partial."))
        else:
            level, text = _note(res)
            messages.append((level, f"{res.variant.upper()} finished: {text}"))
    messages += [("info", md_escape(note)) for note in job.skipped]
    messages += [("error", md_escape(err)) for err in job.errors]
    if job.error:
        messages.append(("error", md_escape(job.error)))
    return messages


def _drop_stale_messages():
    """Forget the fit messages (a finished Run's "EV finished: ..." lines, a data switch's notes) once
    the data, λ, noise model or solver options differ from those they were first shown at: they
    describe that fit, and each line pushed the next λ's drawings down (issue 48, the walk's leftover
    of m-11: two 60 px lines plus the Stale notice left half the drawing below the fold)."""
    msgs = tuple(ss[state.FIT_MESSAGES] or ())
    seen, at = ss[state.FIT_MESSAGES_AT]
    now = (state.current_dataset().key, float(ss["learn_lambda1"]), ss["learn_variant"],
           repr(sorted(ss[state.SOLVER_OVERRIDES].items())))
    if msgs != seen:
        ss[state.FIT_MESSAGES_AT] = (msgs, now)
    elif msgs and at != now:
        ss[state.FIT_MESSAGES] = []
        ss[state.FIT_MESSAGES_AT] = ((), now)


def _refine_watch(job):
    """Say that the order search is refining the fast answer, and redraw the page when it is done."""
    if job.done and job.error is not None:
        st.caption(f"The order search could not refine this fit ({md_escape(job.error)}); the fast solver's "
                   "answer is shown.")
        return

    @st.fragment(run_every=0.3)
    def watch():
        if job.done:
            st.rerun(scope="app")
        st.caption(":material/hourglass_top: **Refining**: the fast solver's answer is shown while CoLiDE-TOPO's "
                   "order search looks for a lower score (solver auto, docs/optimum.md). Moving a control "
                   "cancels it.", help=md_escape(job.status))

    watch()


def _manifest_box():
    """The run-manifest uploader and the status of the last manifest loaded."""
    st.file_uploader("Run manifest (JSON) from the Downloads tab or `python -m colide_core fit`",
                     type=["json"], key="learn_manifest_upload", on_change=_load_manifest,
                     help="Checked against the current dataset's fingerprint; restores the noise model, λ, "
                          "threshold, solver settings, prior knowledge and the stored W.")
    status = ss[state.MANIFEST_STATUS]
    if status is not None:
        getattr(st, status[0])(status[1])


def _variant_changed():
    """on_change of the Noise model: resume the live view; a single model also becomes the fit the
    Check page examines (it drives Learn's drawings, Playback and Check alike)."""
    ss[state.LIVE_HOLD] = False
    if ss["learn_variant"] in VARIANTS:
        ss["check_variant"] = ss["learn_variant"]


def _lambda_moved():
    """on_change of the λ slider: resume the live view and start warming the neighbours' cache."""
    ss[state.LIVE_HOLD] = False
    ss[state.LAMBDA_MOVED] = True


def _lambda_options():
    """The log-scale grid of λ, plus the current value when a manifest set one off the grid."""
    cur = float(ss["learn_lambda1"])
    grid = set(LAMBDA1_GRID)
    if LAMBDA1_RANGE[0] <= cur <= LAMBDA1_RANGE[1]:
        grid.add(cur)
    return sorted(grid)


st.title("Learn a DAG with CoLiDE")
# One rule for every solver (issue 41): live when a fit is expected to take under a second, from
# the last fit measured here with this solver, else from an estimate measured on this machine.
solver_now = ss[state.SOLVER_OVERRIDES].get("solver", SOLVER)
live, why_not_live, estimate, _ = live_now(ss, ds)  # the one rule, shared with Predict (dashboard.live)
# Everything above the drawings that comes and goes (a cost caption, a badge, a lesson, a job's bar,
# Refining, Stale, messages) is written into a container made on every run: the drawings' place in
# the page never moves, so a banner appearing does not remount their frames (issue 48, m-11: a
# remount is a full vis-network reload).
header = st.container()
header.caption(f"{md_escape(ds.name)} · {ds.shape[0]} × {ds.shape[1]} · "
               + ("**Live**: every change re-solves EV and NV, no Run needed." if live
                  else f"Press **Run** after a change: {md_escape(why_not_live)}."))
if not live and solver_now == "topo":  # an honest cost before a slow fit
    for lab in shown_labels(ss["learn_variant"]):
        est = topo_cost(ds.key, VARIANTS[lab], ds.X)  # once per dataset and model, no fit (issue 42)
        if est is not None:
            header.caption(f"CoLiDE-TOPO-{lab} here: about {fmt_seconds(est.seconds)} "
                           f"({fmt_seconds(est.low)}–{fmt_seconds(est.high)}), from {fmt_seconds(est.seconds_per_evaluation)} "
                           "per swap evaluation measured on these data (docs/topo.md).")
elif not live and estimate is not None and "about" not in why_not_live:  # a cost before any Run (issue 41)
    n_fits = len(shown_labels(ss["learn_variant"]))  # Run with Both fits EV and NV, one after the other (m-14)
    header.caption(f"A fit here: about {fmt_seconds(estimate[0])}–{fmt_seconds(estimate[1])}, from {estimate[2]} "
                   "(typical to long fits)"
                   + (f"; Run fits EV and NV: about {fmt_seconds(n_fits * estimate[0])}–"
                      f"{fmt_seconds(n_fits * estimate[1])}." if n_fits > 1 else "."))
elif not live and estimate is None and "about" not in why_not_live and runs_on_device(
        solver_now, with_fit_device(ss[state.SOLVER_OVERRIDES], ds.shape[1]).get("device", "cpu"), ds.shape[1]):
    header.caption("Fits of these data run on the GPU (JAX): no estimate measured on this CPU applies; "
                   "a fit's own time is shown once it has run.")
with header:
    prior_badge(ss[state.SOLVER_OVERRIDES])  # constraints are never invisible where the graph is shown
    lesson_banner(ds)  # the explanation of a lesson loaded from the Lessons page (dashboard.lessons)

# --- controls: one compact row, the graph right below ------------------------------------------
running = is_running(ss, state.FIT_SLOT)
# widths measured in the browser at 1024×768 (tests/e2e/test_projector.py): the three noise-model
# choices and "Run both" are never clipped
c1, c2, c3, c4 = st.columns([1.5, 2.0, 2.0, 1.1], vertical_alignment="bottom")
with c1:
    st.segmented_control(
        "Noise model", NOISE_CHOICES, key="learn_variant", required=True, persist_state="session",
        on_change=_variant_changed,
        help="EV: every variable has the same amount of noise (paper eq. 4). NV: each variable has its own "
             "(eq. 6). Both: the two side by side. What is picked here is what is solved, drawn, played "
             "back and checked.",
    )
with c2:
    st.select_slider("λ (L1 weight, lambda1)", options=_lambda_options(), key="learn_lambda1",
                     format_func=fmt_lambda, persist_state="session", on_change=_lambda_moved,
                     help="How strongly CoLiDE is pushed towards few edges: larger λ, sparser graph. "
                          "Log scale; the paper uses 0.05.")
with c3:
    st.slider("Edge threshold |w| >", min_value=THRESHOLD_RANGE[0], max_value=THRESHOLD_RANGE[1], step=0.01,
              key="learn_threshold",
              persist_state="session",
              help="Edges weaker than this are dropped (then the weakest are removed until no cycle is left). "
                   "Never re-runs the solver.")
with c4:
    st.button("Run", key="learn_run", type="secondary" if live else "primary", icon=":material/play_arrow:",
              on_click=_start, disabled=running,
              help=("Not needed here (the view is live); fits the noise model(s) picked as a background job "
                    "with progress and Stop." if live else "Fit the noise model(s) picked (EV, NV or both) at this λ."))

urlstate.write_url(ds, ss, st.query_params)  # the view is shareable: a refresh or a link restores it

# --- a running job: progress bar + Stop, then its results -----------------------------------------
notices = st.container()  # see `header`: what comes and goes between the controls and the drawings
with notices:
    follow_job(state.FIT_SLOT, _harvest)
    _drop_stale_messages()
    show_messages(ss, state.FIT_SLOT)

lam_now = float(ss["learn_lambda1"])
shown = shown_labels(ss["learn_variant"])  # "EV", "NV" or both: what is solved live and drawn
live_errors = []
prefetch = None  # (parameters, threshold, drawing) of the neighbours to warm once this run is done
stopped_after = None  # seconds a live fit ran before it was stopped (then the page asks for Run)
if live and ss[state.LIVE_HOLD]:
    st.caption("Showing the fit stored in the run manifest; move λ or the noise model to solve live again.")
elif live and not running:
    # Live: solve EV and NV at the current λ (each a cached cold fit keyed on data and parameters,
    # identical to what Run computes), unless the session already holds them.
    held = state.results_for_current()
    fit_overrides = with_fit_device(ss[state.SOLVER_OVERRIDES], ds.shape[1])  # Run's device rule: the same fits
    wanted = [solver_params(VARIANTS[lab], lam_now, fit_overrides) for lab in shown]
    # solver="auto" above AUTO_DIRECT_NODES: the fast answer is drawn at once, and the order search
    # refines it in a preemptible job that the next change cancels (issue 51; dashboard.live.refine)
    first = [fast_first(p, ds.shape[1]) for p in wanted]
    to_refine = [p for p, q in zip(wanted, first) if p != q]
    for res in refined(ss, state.LIVE_REFINE, ds, to_refine) or ():
        ss[state.RESULTS][res.variant] = res
    held = state.results_for_current()

    def _has(p):
        return dict(p)["variant"] in held and held[dict(p)["variant"]].params == p

    todo = [q for p, q in zip(wanted, first) if not (_has(p) or _has(q))]
    if todo:
        began = time.perf_counter()
        fitted, live_errors, stopped_after = fit_live(ds, todo)
        if stopped_after is None and not live_errors:
            state.record_live_step(solver_now, (time.perf_counter() - began) / len(todo))
        for res in fitted:
            ss[state.RESULTS][res.variant] = res
        if stopped_after is not None:  # measured too slow for a live page: the next change asks for Run
            ss[state.LAST_FIT_TIME] = (ds.key, stopped_after, solver_now)
            for _ in range(2):  # a fit stopped at its time limit is a real cost: it decides at once
                state.record_live_step(solver_now, stopped_after)
    refining = [p for p in to_refine if not _has(p)] if not live_errors else []
    if refining:
        refine_job = refine(ss, state.LIVE_REFINE, ds, refining)
        with notices:
            _refine_watch(refine_job)
    if ss[state.LAMBDA_MOVED] and not live_errors:
        # the next step of the slider is then usually a cache hit (same cold fits, same drawings,
        # drawn with the positions the page will use when they do not depend on the fit); asked
        # for at the end of this run, and computed after a pause (dashboard.live), so it never
        # holds the run nor competes with the browser drawing this step (issue 41)
        prefetch = ([fast_first(solver_params(VARIANTS[lab], lam, fit_overrides), ds.shape[1])
                     for lam in neighbours(_lambda_options(), lam_now) for lab in shown],
                    float(ss["learn_threshold"]), {"positions": _positions(), "legend": False})
for err in live_errors:
    notices.error(md_escape(err))

results = state.results_for_current()
if not results:
    st.info("Press **Run** to learn a graph"
            + (f" ({md_escape(why_not_live)})." if why_not_live else ".")
            + (f" The last fit on this dataset took {fmt_seconds(state.last_fit_time())}."
               if state.last_fit_time() else ""))
    with st.expander("Load a run manifest", expanded=ss[state.MANIFEST_STATUS] is not None):
        _manifest_box()
    with st.expander("Solver settings"):
        settings_form(state.SOLVER_OVERRIDES, state.FIT_MESSAGES)
    st.stop()

# --- results ----------------------------------------------------------------------------------
threshold = float(ss["learn_threshold"])
names = ds.node_names
wanted_v = [VARIANTS[lab] for lab in shown]
order = [v for v in ("ev", "nv") if v in results and v in wanted_v]
if not order:  # the picked model has not been fitted yet (a Run page): show what there is, and say so
    order = [v for v in ("ev", "nv") if v in results]
    notices.info(f"CoLiDE-{' and '.join(shown)} has not been fitted at these settings yet: press **Run**. "
            f"Showing CoLiDE-{' and '.join(v.upper() for v in order)}.")
if stopped_after is None:  # a stopped live fit's time stands (else an older, faster fit would hide it)
    ss[state.LAST_FIT_TIME] = (ds.key, max(drawn_after(results[v], ds.shape[1]) for v in order),  # state.last_fit_time
                               dict(results[order[-1]].params).get("solver", SOLVER))
stale = [v for v in order if abs(results[v].lambda1 - lam_now) > 1e-12 * max(1.0, lam_now)]
if stale and not running:
    # one short line in a tight box (dashboard/static/projector.css, .st-key-learn_stale): at 1280×720
    # and 1024×768 the drawings stay whole on screen under it (the last walk: "the stale banner's height")
    by_lam = {}
    for v in stale:
        by_lam.setdefault(fmt_lambda(results[v].lambda1), []).append(v.upper())
    notices.container(key="learn_stale").warning(
        "Stale: " + ", ".join(f"{' and '.join(vs)} {'was' if len(vs) == 1 else 'were'} learned with λ = {lam}"
                              for lam, vs in by_lam.items())
        + f", not λ = {fmt_lambda(lam_now)}. Press **Run** to refit.", icon=":material/history:")
# Re-threshold the cached raw W (never re-solve); required edges of a constrained fit survive.
thresholded, removed = {}, {}
for v in order:
    thresholded[v], removed[v] = threshold_fit(results[v], threshold, names, return_removed=True)
for v in order:
    if removed[v]:  # never silent: the post-processing cut edges above the threshold
        notices.info(f"{v.upper()}: " + md_escape(removed_sentence(removed[v], names)) + ".", icon=":material/content_cut:")
    level, text = _note(results[v])
    if level == "warning" and not results[v].stopped:
        notices.warning(f"{v.upper()}: {text}")

# The tabs; "Playback" watches the optimisation of the last fit (dashboard.playback).
# Keyed and stateful: the open tab survives reruns that add a message above it (a Run job finishing,
# a stale warning), which would otherwise reset an unkeyed st.tabs to its first tab.
tab_graph, tab_play, tab_noise, tab_metrics, tab_dl, tab_conv = st.tabs(
    ["Graph", "Playback", "Noise", "Metrics", "Downloads", "Convergence"], key="learn_tab", on_change="rerun")

positions = _positions(thresholded[order[-1]])
# Only the open tab is built (the tabs are stateful and a click on one reruns the page): a λ step
# on the Graph tab no longer builds the figures, tables and downloads of the hidden tabs
# (issue 41: they were most of a step's script time; Playback since issue 30).
open_tab = ss["learn_tab"]

with tab_graph:
    oriented = oriented_by_interventions(ds)  # edges a condition's targets can orient: a dot, in the legend
    # edges whose reverse the data prefer: the Check page's verdict, read from its stored checks
    # (never computed on a λ step); a "?" on the drawing and in the legend (issue 48, m-7)
    disputed = {f"learn_graph_{v}": disputed_in_session(ss, ds.key, results[v], threshold, names) for v in order}
    checked = [v.upper() for v in order if disputed[f"learn_graph_{v}"] is not None]
    # (label, heading, graph, coloured against, σ̂, key, caption) of each drawing: EV, NV, the truth
    panels = [(v.upper(), f"**CoLiDE-{results[v].label}** · λ = {fmt_lambda(results[v].lambda1)}", thresholded[v],
               truth, results[v].sigma, f"learn_graph_{v}",
               f"{solver_label(results[v])} · {int((thresholded[v] != 0).sum())} edges · "
               f"{results[v].n_iter:,} iterations, "
               f"{fmt_seconds(results[v].fit_time)}"
               + f" · {rows_and_truth(ds)}"
               + (" · stopped early: partial result" if results[v].stopped else "")
               + (" · stale: press Run" if v in stale else "")) for v in order]
    if truth is not None:
        panels.append(("Ground truth", "**Ground truth**", truth, None, ds.sigma_true, "learn_graph_truth",
                       rows_and_truth(ds).split(" · ")[-1]))
    # Side by side while labels stay >= 12 px in a column at 1024×768 with the sidebar open (the
    # smallest projector; graph_style.per_row, measured by tests/e2e/test_projector.py); else one
    # large drawing at a time, switched in place (same positions), so labels stay readable.
    k = per_row(positions if positions is not None else unit_positions(len(names)), names, len(panels),
                width_px=PROJECTOR_ROW_PX, min_font_px=12.0)
    # One row above the drawings: the switch (when they are shown one at a time), the one legend and
    # the Layout switch; then each drawing under its heading. Everything that says what a drawing is
    # sits above it, so on a projector it is on screen whenever the drawing is (issue 41, point 3:
    # the headings below the drawings and the Layout switch below them fell under the fold).
    if k < len(panels):
        labels = [p[0] for p in panels]
        if ss["learn_graph_variant"] not in labels:
            ss["learn_graph_variant"] = labels[min(1, len(labels) - 1)]
        show_col, legend_col, layout_col = st.columns([1.1, 2, 0.9], vertical_alignment="center")
        show_col.segmented_control("Show", labels, key="learn_graph_variant", required=True,
                                   label_visibility="collapsed",
                                   help=f"{len(names)} nodes: side by side their labels would be too small to "
                                        "read, so one drawing is shown at a time, with the same node positions: "
                                        "switch to see which edges differ.")
        panels = [p for p in panels if p[0] == ss["learn_graph_variant"]]
    else:
        legend_col, layout_col = st.columns([3, 0.9], vertical_alignment="center")
    with legend_col:
        show_legend([thresholded[v] for v in order], truth, oriented, disputed=list(disputed.values()))
    layout_col.segmented_control("Layout", ["Circle", "Top-down"], key="learn_layout", required=True,
                                 label_visibility="collapsed", width="stretch",
                                 help="Layout. Top-down: nodes in layers by topological order (of the ground truth "
                                      "when there is one, else of the last graph learned), so causes sit above "
                                      "their effects.")
    gcols = st.columns(len(panels), gap="xsmall")  # the room goes to the drawings (labels >= 12 px)
    # frames about as tall as a column is wide at 1280 px, so the fitted drawing fills them
    height = GRAPH_HEIGHT[len(gcols)]
    required = {f"learn_graph_{v}": required_of(results[v], names) for v in order}  # labelled in the drawings
    for col, (_, heading, A, colour_by, sigma, key, caption) in zip(gcols, panels):
        with col, st.container(gap=None):
            # its heading, the interactive drawing (or its summary above SUMMARY_NODES nodes,
            # dashboard.graphview) and its caption, with no gap between them
            st.markdown(heading)
            show_graph(A, names, colour_by, sigma, key=key, positions=positions, height=height, legend=False,
                       required=required.get(key), oriented=None if key == "learn_graph_truth" else oriented,
                       label=heading.replace("**", ""), disputed=disputed.get(key))
            st.caption(caption)
    # whether the Check page's verdict is on the drawings: "?" marks, or why there are none
    unchecked = [v.upper() for v in order if v.upper() not in checked]
    doubt = (f" An edge marked “?”: the data prefer its reverse (the Check page's edge evidence on "
             f"{' and '.join(checked)}" + (f"; {' and '.join(unchecked)} not checked" if unchecked else "") + ")."
             if checked else " The Check page has not checked these fits: edges whose reverse the data prefer "
                             "are not marked.")
    if truth is None:
        st.caption("No ground truth: edges are drawn in one colour. Width ∝ |w|. Every drawing uses the same "
                   "node positions, so edges appear and vanish in place." + doubt)
    else:
        st.caption("Coloured against the ground truth. Edge width ∝ |w|; missing true edges dashed. "
                   "Every drawing uses the same node positions, so edges appear and vanish in place." + doubt)

with tab_noise:
    if open_tab == "Noise":
        estimates = {results[v].label: results[v].sigma for v in order}
        st.plotly_chart(noise_figure(names, estimates, ds.sigma_true), key="learn_noise_chart")
        st.caption("Estimated exogenous noise standard deviation per node (data units). "
                   "EV estimates one σ for all nodes (dashed line).")
        for v in order:  # EV or NV? the residual test of the Check page (dashboard.checks)
            st.caption(f"{results[v].label}: " + ev_nv_line(ds.key, results[v].params, threshold, ds.X, thresholded[v],
                                                                ds.design))

with tab_metrics:
    if open_tab == "Metrics":
        ecols = st.columns(len(order) + (ds.B_true is not None))
        for col, v in zip(ecols, order):
            col.metric(f"Edges · {v.upper()}", int((thresholded[v] != 0).sum()))
        if ds.B_true is not None:
            ecols[-1].metric("Edges · truth", int((truth != 0).sum()))
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
            frame = frame.loc[[k for k in METRIC_LABELS if k in frame.index]]
            frame.index = [METRIC_LABELS[k] for k in frame.index]
            st.dataframe(frame, key="learn_metrics_table")
            st.caption(f"Against the {int((truth != 0).sum())}-edge ground truth at threshold "
                       f"{threshold:g}. SHD counts a reversed edge once; SHD-C compares CPDAGs; SID counts "
                       "wrongly inferred interventional distributions.")

with tab_dl:
    if open_tab == "Downloads":
        with st.expander("Load a run manifest", expanded=ss[state.MANIFEST_STATUS] is not None):
            _manifest_box()
        # the data behind the report's and the manifest's `fit` command (dashboard.data.Reproduction): bundled
        # and simulated data as fitted (the command replays nothing); an upload's command reads the user's own file
        fitted = data_as_fitted(ds)
        d1, d2 = st.columns(2)
        d1.download_button("Data as fitted (CSV)", fitted.csv, file_name=fitted.file_name, mime="text/csv",
                           key="learn_dl_data",
                           help=("The table these fits used, after cleaning and transforms. The report's `fit` "
                                 f"command reads your own file, {md_escape(fitted.data_name)}, and replays those steps.")
                           if fitted.replay else
                           "The table these fits used (after any transform), with its condition column: the "
                           "file the report's `fit` command reads, as it is.")
        if fitted.targets is not None:
            d2.download_button("Intervention targets (JSON)", fitted.targets, file_name=fitted.targets_name,
                               mime="application/json", key="learn_dl_targets",
                               help="Each condition's targets: the command's --targets file.")
        with st.expander("Solver settings"):
            settings_form(state.SOLVER_OVERRIDES, state.FIT_MESSAGES)
        for v in order:
            res = results[v]
            # dataset, noise model, λ and threshold in every file name (safe characters only)
            stem = download_name(ds, v, f"lambda{fmt_lambda(res.lambda1)}", f"thr{threshold:g}", ext="")
            st.markdown(f"**{res.label}**, λ = {fmt_lambda(res.lambda1)}, threshold {threshold:g}")
            edges = edge_list(thresholded[v], names)
            st.dataframe(edges, hide_index=True, key=f"learn_edges_{v}")
            d1, d2 = st.columns(2)
            d1.download_button("Edge list (CSV)", edge_list_csv(thresholded[v], names),
                               file_name=f"{stem}_edges.csv", mime="text/csv", key=f"learn_dl_edges_{v}")
            d2.download_button("Weighted adjacency (CSV)", adjacency_csv(thresholded[v], names),
                               file_name=f"{stem}_adjacency.csv", mime="text/csv", key=f"learn_dl_adj_{v}")
            # Further formats from colide_core.graph.export (networkx / pydot / matplotlib), built only
            # for the format picked.
            f1, f2 = st.columns(2)
            fmt = f1.selectbox("Other format", list(EXPORT_FORMATS), key=f"learn_export_fmt_{v}",
                               help="GraphML, DOT, node-link JSON, DAGitty, CSV, or a PNG/SVG picture")
            ext, mime = EXPORT_FORMATS[fmt]
            picture = ({"B_true": truth, "positions": positions, "required": required_of(res, names)}
                       if fmt in ("png", "svg") else {})
            f2.download_button(f"Download {fmt}", export_graph(thresholded[v], names, fmt, **picture),
                               file_name=f"{stem}{ext}", mime=mime, key=f"learn_dl_export_{v}")
            manifest_json = manifests.fit_manifest_json(res, ds, threshold)
            st.download_button("Run manifest (JSON)", manifest_json,  # the report's --prior file (m-8)
                               file_name=manifests.manifest_file_name(res, ds, threshold),
                               mime="application/json", key=f"learn_dl_manifest_{v}",
                               help="Data fingerprint, every parameter, package versions, git commit, W, σ and "
                                    "metrics. Load it back (Load a run manifest, above) to get this view again.")

with tab_conv:
    if open_tab == "Convergence":
        st.plotly_chart(objective_figure({results[v].label: results[v].result for v in order}),
                        key="learn_objective_chart")
        st.caption("Objective (score + λ‖W‖₁ scaled by μ, plus the log-det acyclicity term) at each checkpoint, "
                   "on a log scale; dotted lines mark where a new stage (μ, s) starts, and the objective jumps there.")
        for v in order:
            level, text = _note(results[v])
            st.caption(f"{v.upper()}: {text}")

with tab_play, st.container(gap=None):  # the fit the Noise model control picks (dashboard.playback); no gaps: m-10
    from dashboard.playback import render_playback

    played = VARIANTS.get(ss["learn_variant"])
    played = played if played in order else order[-1]
    topo = dict(results[played].params).get("solver") == "topo"
    st.caption((f"**CoLiDE-TOPO-{results[played].label}** (λ = {fmt_lambda(results[played].lambda1)}) searches "
                "over orders: there is nothing to play back." if topo else
                f"Playing back **CoLiDE-{results[played].label}** (λ = {fmt_lambda(results[played].lambda1)}, "
                f"{solver_label(results[played])})")
               + (": pick EV or NV in the Noise model above to choose which fit plays." if len(order) > 1 and not topo
                  else ": switch the Noise model above to play the other fit." if not topo else ""))
    # Built only while its tab is open (the tabs are stateful): a playback page is not rebuilt and
    # sent again on every rerun of the other tabs (issue 30, point 5).
    if ss["learn_tab"] == "Playback":
        render_playback(ds, results[played], threshold, truth=truth, positions=positions)

if prefetch is not None:  # the last thing this run does: warm the neighbours' cache after a pause (dashboard.live)
    prefetch_neighbours(ss, state.LIVE_PREFETCH, ds, prefetch[0], prefetch[1], drawing=prefetch[2])
