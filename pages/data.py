"""Data page: the bundled Sachs data by default, or an uploaded CSV/TSV/Parquet table."""
import pandas as pd
import streamlit as st

from dashboard.layout import page_setup
from dashboard import state
from dashboard.data import UploadProblem, dataset_from_upload
from colide_core.export import edge_list
from dashboard.text import md_escape

#: Dataset.source -> what the Data page shows.
SOURCE_LABELS = {"sachs": "Sachs (bundled)", "upload": "Uploaded file", "simulated": "Simulated"}

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
        )
    except UploadProblem as exc:
        ss[state.UPLOAD_STATUS] = ("error", f"**{name}** cannot be used: {md_escape(exc)}")
    except Exception as exc:  # never show a traceback for a user file
        ss[state.UPLOAD_STATUS] = ("error", f"**{name}** could not be read ({type(exc).__name__}): "
                                            f"{md_escape(exc)}")
    else:
        state.set_dataset(dataset)
        ss[state.UPLOAD_STATUS] = ("success", f"Loaded **{name}**.")


def _use_sachs():
    state.set_dataset(state.sachs())
    ss[state.UPLOAD_STATUS] = None


left, right = st.columns([2, 1])
with left:
    st.file_uploader(
        "Upload a data table (CSV, TSV or Parquet): rows = samples, columns = variables",
        type=["csv", "tsv", "txt", "parquet"],
        key="data_upload",
        on_change=_process_upload,
    )
    c1, c2 = st.columns(2)
    c1.checkbox("Drop non-numeric columns", key="data_drop_non_numeric", persist_state="session",
                on_change=_process_upload, help="Otherwise a text/date column is an error.")
    c2.checkbox("Drop rows with missing / infinite values", key="data_drop_nonfinite_rows",
                persist_state="session", on_change=_process_upload,
                help="Otherwise NaN or Inf is an error.")
with right:
    st.write("")
    st.button("Use the Sachs data", key="data_use_sachs", icon=":material/restart_alt:", on_click=_use_sachs)

status = ss[state.UPLOAD_STATUS]
if status is not None:
    level, text = status
    if level == "error":
        st.error(text + "  \nThe current dataset was not changed.", icon=":material/error:")
    else:
        st.success(text)

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

tab_preview, tab_stats, tab_truth = st.tabs(["Preview", "Summary statistics", "Ground truth"])
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
        if ds.sigma_true is not None:
            st.caption("True noise standard deviations.")
            st.dataframe(pd.DataFrame({"node": ds.node_names, "sigma": ds.sigma_true}), hide_index=True,
                         key="data_sigma_true")
