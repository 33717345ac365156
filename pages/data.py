"""Data page: the bundled Sachs data by default, an uploaded CSV/TSV/Parquet table, or rows of a bnlearn
Gaussian network (the ``networks`` extra) with its true graph."""
import pandas as pd
import streamlit as st

from dashboard.infra.layout import page_setup
from dashboard.infra import memory, state
from dashboard.data import (SACHS_ROW_LABELS, SACHS_TRUTH_LABELS, UploadProblem, dataset_from_upload, sachs_dataset,
                            upload_columns)
from colide_core.graph.export import edge_list, to_csv_safe
from dashboard.infra.text import md_escape
from dashboard.caching.cached import cached_condition_summary

#: The fix of each fixable upload problem (colide_core.data.io.FIXABLE): the checkbox that applies it.
FIXES = {"non_numeric": "Drop non-numeric columns", "nonfinite": "Drop rows with missing / infinite values",
         "constant_column": "Drop constant columns"}

#: Dataset.source -> what the Data page shows.
SOURCE_LABELS = {"sachs": "Sachs (bundled)", "upload": "Uploaded file", "simulated": "Simulated",
                 "network": "bnlearn network", "lesson": "Lesson"}

page_setup()
ss = st.session_state

st.title("Data")
st.markdown(
    "CoLiDE learns a linear DAG from a data matrix with one row per sample and one column per "
    "variable (node). The bundled **Sachs** protein-signalling data is loaded by default; you can "
    "upload your own table instead."
)

# --- choose the data -----------------------------------------------------------------------
# The upload is processed in on_change callbacks, which run before app.py, so the sidebar
# already shows the new dataset in the same rerun.
def _process_upload():
    uploaded = ss.get("data_upload")
    if uploaded is None:
        ss[state.UPLOAD_STATUS] = None
        return
    name = md_escape(uploaded.name)
    try:
        dataset = dataset_from_upload(
            uploaded.getvalue(), uploaded.name,
            drop_non_numeric=bool(ss["data_drop_non_numeric"]),
            drop_nonfinite_rows=bool(ss["data_drop_nonfinite_rows"]),
            drop_constant_columns=bool(ss["data_drop_constant"]),
            condition_column=ss["data_condition_column"] or None,
            targets_text=ss["data_targets_text"] or None,
        )
    except UploadProblem as exc:
        if len(exc.problems) > 1 or (exc.problems and exc.problems[0].kind in FIXES):
            listed = "\n".join(f"{i}. {md_escape(p)}" + (f" *Fix: tick **{FIXES[p.kind]}** above.*"
                                                            if p.kind in FIXES else "")
                                for i, p in enumerate(exc.problems, 1))
            ss[state.UPLOAD_STATUS] = ("error", f"**{name}** cannot be used as it is: "
                                                f"{len(exc.problems)} problem(s).\n\n{listed}\n")
        else:
            ss[state.UPLOAD_STATUS] = ("error", f"**{name}** cannot be used: {md_escape(exc)}")
    except MemoryError:  # a sentence, never a traceback or a server path (issue 53)
        ss[state.UPLOAD_STATUS] = ("error", memory.memory_error_message(f"**{name}**"))
    except Exception as exc:  # never show a traceback for a user file
        ss[state.UPLOAD_STATUS] = ("error", f"**{name}** could not be read ({type(exc).__name__}): "
                                            f"{md_escape(exc)}")
    else:
        # within the server's memory budget for all sessions' datasets (issue 53)
        refused = memory.refusal(memory.dataset_nbytes(dataset), f"**{name}**")
        if refused is not None:
            ss[state.UPLOAD_STATUS] = ("error", refused)
            return
        state.set_dataset(dataset)
        ss[state.UPLOAD_STATUS] = ("success", f"Loaded **{name}**.")


def _use_sachs():
    rows, truth = ss["data_sachs_rows"], ss["data_sachs_truth"]
    state.set_dataset(state.sachs() if (rows, truth) == ("baseline", "consensus17") else sachs_dataset(rows, truth))
    ss[state.UPLOAD_STATUS] = None


left, right = st.columns([2, 1])
with left:
    st.file_uploader(
        "Upload a data table (CSV, TSV or Parquet): rows = samples, columns = variables",
        type=["csv", "tsv", "txt", "parquet"],
        key="data_upload",
        on_change=_process_upload,
    )
    c1, c2, c3 = st.columns(3)
    c1.checkbox(FIXES["non_numeric"], key="data_drop_non_numeric", persist_state="session",
                on_change=_process_upload, help="Otherwise a text/date column is an error.")
    c2.checkbox(FIXES["nonfinite"], key="data_drop_nonfinite_rows",
                persist_state="session", on_change=_process_upload,
                help="Otherwise NaN or Inf is an error.")
    c3.checkbox(FIXES["constant_column"], key="data_drop_constant", persist_state="session",
                on_change=_process_upload, help="A column with one repeated value carries no information; "
                                                "otherwise it is an error.")
    if ss.get("data_upload") is not None:  # several conditions, donors or batches in one file
        with st.expander("Conditions and interventions", expanded=bool(ss["data_condition_column"])):
            cols = upload_columns(ss["data_upload"].getvalue(), ss["data_upload"].name)
            if ss["data_condition_column"] not in [""] + cols:
                ss["data_condition_column"] = ""
            st.selectbox("Condition column", [""] + cols, key="data_condition_column", on_change=_process_upload,
                         format_func=lambda c: "none: one condition" if c == "" else c,
                         help="A text or integer column saying which condition (treatment, donor, batch) each row "
                              "comes from. It is not a node: CoLiDE fits an intercept per condition.")
            st.text_area("Targets (optional): JSON {condition: [node, ...]} or CSV lines condition,target",
                         key="data_targets_text", on_change=_process_upload, max_chars=20_000, height=90,
                         help="The nodes each condition intervenes on. Their own equations are left out of those "
                              "conditions' rows (docs/conditions.md).")
with right:
    st.selectbox("Sachs cells", list(SACHS_ROW_LABELS), format_func=SACHS_ROW_LABELS.get, key="data_sachs_rows",
                 help="The 2005 study measured 11 proteins in 7,466 cells under nine conditions, seven of them "
                      "with a reagent that targets a protein. CoLiDE fits an intercept per condition and leaves a "
                      "targeted protein's own equation out of the conditions that target it (docs/conditions.md).")
    st.selectbox("Ground truth", list(SACHS_TRUTH_LABELS), format_func=SACHS_TRUTH_LABELS.get,
                 key="data_sachs_truth", help="Three truths are in use and they disagree; every score says which.")
    st.button("Use the Sachs data", key="data_use_sachs", icon=":material/restart_alt:", on_click=_use_sachs)

# --- the bnlearn repository's Gaussian networks (the `networks` extra) ---------------------------
from colide_core.data.networks import NETWORKS, network_available  # noqa: E402
from colide_core.data.simulate import INTERACTIVE_BOUNDS  # noqa: E402
from colide_core.exceptions import MissingExtraError  # noqa: E402
from dashboard.caching.cached import cached_network_dataset, cached_network_summary  # noqa: E402
from dashboard.data import NETWORK_CAPTION  # noqa: E402


def _use_network():
    try:
        dataset = cached_network_dataset(ss["data_net_name"], int(ss["data_net_n"]), int(ss["data_net_seed"]),
                                         int(ss["data_net_iv"]))
    except (MissingExtraError, ValueError) as exc:
        ss[state.UPLOAD_STATUS] = ("error", f"The network was not loaded: {md_escape(exc)}")
        return
    state.set_dataset(dataset)
    ss[state.UPLOAD_STATUS] = ("success", f"Loaded **{md_escape(dataset.name)}**.")


with st.expander("Real networks (bnlearn repository)", expanded=state.current_dataset().source == "network"):
    if not network_available():
        st.info("The bnlearn repository's Gaussian networks (ecoli70, magic-niab, magic-irri, arth150) come with "
                "the `networks` extra, read offline: `pip install 'colide-dashboard[networks]'` "
                "(it installs pgmpy-no-torch 1.0.4, whose files hold them), then restart the app.",
                icon=":material/info:")
    else:
        st.caption(NETWORK_CAPTION)
        n1, n2, n3, n4 = st.columns([2, 1, 1, 1])
        n1.selectbox("Network", list(NETWORKS), key="data_net_name",
                     format_func=lambda k: f"{k}: {NETWORKS[k].title} ({NETWORKS[k].nodes} nodes, {NETWORKS[k].arcs} arcs)")
        _, n_low, n_high = INTERACTIVE_BOUNDS["n_samples"]
        n2.number_input("Rows (n)", min_value=n_low, max_value=n_high, step=500, key="data_net_n",
                        help="Observational rows drawn from the network's SEM (and rows per interventional "
                             "condition).")
        _, s_low, s_high = INTERACTIVE_BOUNDS["seed"]
        n3.number_input("Seed", min_value=s_low, max_value=s_high, step=1, key="data_net_seed")
        _, c_low, c_high = INTERACTIVE_BOUNDS["n_conditions"]
        n4.number_input("Interventional conditions", min_value=c_low, max_value=c_high, step=1, key="data_net_iv",
                        help="Each a hard intervention on one node drawn at random, from the true SEM (its "
                             "target keeps its intercept and loses its parents); 0: observational data.")
        st.button("Use this network", key="data_use_network", icon=":material/hub:", on_click=_use_network)
        summary = cached_network_summary()
        st.dataframe(pd.DataFrame({
            "nodes": summary["nodes"], "arcs": summary["arcs"], "max |w|": summary["max_abs_w"].round(2),
            "noise variance": [f"{a:.3g} – {b:.3g}" for a, b in zip(summary["noise_var_min"], summary["noise_var_max"])],
            "node variance": [f"{a:.3g} – {b:.3g}" for a, b in zip(summary["marginal_var_min"],
                                                                     summary["marginal_var_max"])],
            "varsortability": summary["varsortability"].round(2), "source": summary["source"]}),
            key="data_net_summary")
        st.caption("Varsortability: the share of causal paths along which a node's variance grows (Reisach et al. "
                   "2021), from each network's implied variances. Near 1, sorting by variance already gives the "
                   "causal order and a learner that is not scale-invariant (CoLiDE) is helped by the units; 0.5 "
                   "gives no such help; below 0.5 the variances shrink along the causal order. Standardising "
                   "(below) removes this signal.")

status = ss[state.UPLOAD_STATUS]
if status is not None:
    level, text = status
    if level == "error":
        st.error(text + "  \nThe current dataset was not changed.", icon=":material/error:")
    else:
        st.success(text)

# --- transform the current data (log, asinh, standardise) ---------------------------------------
# The transformed data become the current dataset (own content hash, ground truth kept); the steps
# are kept in Dataset.meta["transform"] and written into the run manifest.
from colide_core.data.transforms import ASINH_COFACTOR, TRANSFORM_NOTES  # noqa: E402
from dashboard.data import dataset_transform, repeated_transform, transformed_dataset, undo_transform  # noqa: E402

_XFORM_LABELS = {"log": "log(x)", "asinh": "asinh(x / cofactor)", "standardize": "standardise (z-score)"}
ss.setdefault("data_xform_kind", "asinh")
ss.setdefault("data_xform_cofactor", ASINH_COFACTOR)


def _apply_transform():
    kind = ss["data_xform_kind"]
    cofactor = float(ss["data_xform_cofactor"]) if kind == "asinh" else None
    old = state.current_dataset()
    refused = repeated_transform(old, kind)
    if refused:
        ss["data_xform_status"] = (old.key, "error", f"{_XFORM_LABELS[kind]} was not applied: {md_escape(refused)}")
        return
    try:
        new = transformed_dataset(old, kind, cofactor=cofactor)
    except ValueError as exc:  # shown next to the dataset it was tried on
        ss["data_xform_status"] = (old.key, "error", f"{_XFORM_LABELS[kind]} was not applied: {md_escape(exc)}")
    else:
        if not dataset_transform(old):
            ss[state.XFORM_RAW] = old  # the raw data, for Undo (one dataset held per session)
        state.set_dataset(new)
        ss["data_xform_status"] = (new.key, "success", f"Applied {_XFORM_LABELS[kind]}: the current dataset "
                                                       f"is now **{md_escape(new.name)}**.")


def _undo_transform():
    cur = state.current_dataset()
    try:
        new = undo_transform(cur, ss[state.XFORM_RAW])
    except (ValueError, AttributeError) as exc:
        ss["data_xform_status"] = (cur.key, "error", f"Nothing was undone: {md_escape(exc)}")
        return
    state.set_dataset(new)
    ss["data_xform_status"] = (new.key, "success", f"Undone: the current dataset is now **{md_escape(new.name)}**.")


xform_status = ss.get("data_xform_status")
if xform_status is not None and xform_status[0] != state.current_dataset().key:
    xform_status = None  # about another dataset (a new upload or Sachs since)
with st.expander("Transform the data (log, asinh, standardise)", expanded=xform_status is not None):
    st.caption("Flow-cytometry intensities are usually transformed before analysis. CoLiDE is **not** "
               "scale-invariant: a transform changes which edges it finds. The transformed data become the "
               "current dataset (the ground-truth graph is kept) and the transform is recorded in the run "
               "manifest. **Undo** goes back one step; the same transform cannot be applied twice.")
    t1, t2, t3 = st.columns([2, 1, 1])
    t1.radio("Transform", list(_XFORM_LABELS), format_func=_XFORM_LABELS.get, key="data_xform_kind",
             horizontal=True)
    t2.number_input("asinh cofactor", min_value=0.001, max_value=1e6, step=1.0,
                    key="data_xform_cofactor", disabled=ss["data_xform_kind"] != "asinh",
                    help="5 is the mass-cytometry (CyTOF) convention, 150 the fluorescence flow-cytometry one.")
    t3.write("")
    _cur = state.current_dataset()
    _why_not = repeated_transform(_cur, ss["data_xform_kind"])
    t3.button("Apply", key="data_xform_apply", icon=":material/function:", on_click=_apply_transform,
              disabled=_why_not is not None, help=_why_not)
    _raw = ss[state.XFORM_RAW]
    t3.button("Undo", key="data_xform_undo", icon=":material/undo:", on_click=_undo_transform,
              disabled=not (dataset_transform(_cur) and _raw is not None
                            and _cur.meta.get("transform_base") == _raw.key),
              help="Go back to the data before the last transform.")
    st.caption(f"**{_XFORM_LABELS[ss['data_xform_kind']]}**: {TRANSFORM_NOTES[ss['data_xform_kind']]}")
    if xform_status is not None:
        (st.error if xform_status[1] == "error" else st.success)(xform_status[2])
    applied = dataset_transform(state.current_dataset())
    if applied:
        from colide_core.data.transforms import describe_step  # noqa: E402

        st.caption("Transforms applied to the current data, in order: "
                   + ", ".join(md_escape(describe_step(t)) for t in applied) + ".")

# --- show the current data -----------------------------------------------------------------
ds = state.current_dataset()
n, d = ds.shape
st.subheader(f"Current dataset: {md_escape(ds.name)}")
cols = st.columns(4)
cols[0].metric("Samples (n)", n)
cols[1].metric("Nodes (d)", d)
cols[2].metric("Ground truth", "yes" if ds.B_true is not None else "no")
cols[3].metric("Source", SOURCE_LABELS.get(ds.source, ds.source))
for note in ds.notes:
    st.info(md_escape(note), icon=":material/info:")
if n <= d:
    st.warning(f"Only {n} samples for {d} nodes: the sample covariance is singular and the problem "
               "is ill-posed.")

tab_names = ["Preview", "Summary statistics", "Ground truth"] + (["Conditions"] if ds.design.has_conditions else [])
tab_preview, tab_stats, tab_truth, *tab_cond = st.tabs(tab_names)
if tab_cond:
    with tab_cond[0]:
        conditions_table = cached_condition_summary(ds)
        st.dataframe(conditions_table, hide_index=True, key="data_conditions")
        st.download_button("Conditions (CSV)", to_csv_safe(conditions_table, index=False),
                           file_name="colide_conditions.csv", mime="text/csv", key="data_conditions_csv")
        # Sachs's reagents in Sachs's words only; any other dataset's in plain terms (issue 48, m-9)
        st.caption("Per condition: its rows, the nodes it targets, and each node's median shift from the baseline "
                   "(first) condition, in the baseline's standard deviations."
                   + (" An inhibitor blocks a protein's activity, not always its measured level: under U0126 (a MEK "
                      "inhibitor) pMek rises." if ds.source == "sachs" else
                      " An intervention on a node changes how it is set; its measured level may move either way, "
                      "or not at all."))
with tab_preview:
    st.caption(f"First {min(n, 100)} of {n} rows.")
    st.dataframe(ds.X.head(100), key="data_preview")
with tab_stats:
    summary = ds.X.describe().T
    summary["skewness"] = ds.X.skew()
    st.dataframe(summary, key="data_summary")
with tab_truth:
    if ds.B_true is None:
        st.info("This dataset has no ground-truth graph, so the Learn page cannot score the result "
                "(SHD, TPR, ...). Simulated data and the Sachs data have one.")
    else:
        truth = edge_list(ds.B_true.to_numpy(), ds.node_names)[["source", "target"]]
        st.caption(f"{len(truth)} true edges (source → target).")
        st.dataframe(truth, hide_index=True, key="data_truth")
        if ds.source == "network" and "varsortability" in ds.meta:
            st.caption(f"Varsortability of these rows along the true graph: {ds.meta['varsortability']:.2f} "
                       "(1: the variances follow the causal order; 0.5: no information).")
        if ds.sigma_true is not None:
            st.caption("True noise standard deviations.")
            st.dataframe(pd.DataFrame({"node": ds.node_names, "sigma": ds.sigma_true}), hide_index=True,
                         key="data_sigma_true")
