"""Simulate page: draw a linear-SEM dataset with a known DAG and known noise scales.

The simulated dataset becomes the current dataset (with ground truth and true σ), so the Learn
page can score CoLiDE against it and show σ̂ beside σ.
"""
import pandas as pd
import streamlit as st

from dashboard.infra.layout import page_setup
from dashboard.infra import state
from colide_core.graph.export import edge_list
from dashboard.graphview import show_graph, show_legend
from dashboard.infra.text import md_escape
from dashboard.simulation import config_from_state, simulate_dataset
from dashboard.infra import memory
from dashboard.data import node_limit, too_large_message
from colide_core.data.simulate import INTERACTIVE_BOUNDS as B  # the one table of bounds (widgets, links)

page_setup()
ss = st.session_state
NOISE_LAWS = ["gaussian", "exponential", "laplace", "gumbel"]


def _run_simulation():
    """on_click of the Simulate button."""
    config = config_from_state(ss)
    if config.d > node_limit(config.d):  # above 200 nodes only with a GPU (probed only then)
        ss[state.SIM_STATUS] = ("error", f"Nothing was simulated: {config.d:,} nodes. "
                                         + too_large_message(config.d, config.variance.lower()))
        return
    # Within the server's memory budget for all sessions' datasets, checked before drawing
    # (issue 53: closed tabs' simulations used to pile up until a MemoryError traceback).
    rows = config.n * (1 + int(config.interventions))
    refused = memory.simulation_refusal(rows, config.d, "This simulation")
    if refused is not None:
        ss[state.SIM_STATUS] = ("error", refused)
        return
    try:
        # Not cached: the dataset lives in this session's state only. A process-wide cache kept up
        # to 16 datasets of up to 50M cells after their sessions ended (issue 30: 647 MB after six
        # clicks at n = 50,000, d = 200); a simulation is seeded, so a repeat gives the same data.
        with st.spinner("Simulating…"):
            dataset = simulate_dataset(config, int(ss["sim_seed"]))
    except ValueError as exc:
        ss[state.SIM_STATUS] = ("error", f"The simulation failed: {exc}")
        return
    except MemoryError:
        ss[state.SIM_STATUS] = ("error", memory.memory_error_message("This simulation"))
        return
    state.set_dataset(dataset)
    ss[state.SIM_STATUS] = ("success", "The simulated dataset is now the current dataset: fit CoLiDE on it on "
                                       "the Learn page (the link below).")


st.title("Simulate")
st.markdown(
    "Draw a random DAG and sample a linear structural equation model "
    "$x_j = \\sum_i W_{ij} x_i + z_j$ (as in the CoLiDE paper, Section 5). The true graph and the "
    "true noise standard deviations are kept, so the Learn page can score the estimate."
)

# Settings on the left, the true graph on the right: at 1280×720 the drawing starts at y = 957
# below a three-column form (issue 48, m-12); side by side it is on screen with the controls.
settings_col, view_col = st.columns([1, 2], gap="medium")
c1 = c2 = c3 = settings_col
# the button and its message first: on a projector they stay above the fold with the drawing
settings_col.button("Simulate", key="sim_run", type="primary", icon=":material/casino:", on_click=_run_simulation)
status = ss[state.SIM_STATUS]
if status is not None:
    level, text = status
    getattr(settings_col, level)(text)
    if level == "success":
        settings_col.page_link("pages/learn.py", label="Go to Learn", icon=":material/arrow_forward:")
with c1:
    # up to defaults.MAX_NODES: above 200 nodes Simulate checks for a GPU, or says what a fit would cost here
    st.number_input("Nodes d", min_value=B["n_nodes"][1], max_value=B["n_nodes"][2], step=1, key="sim_d", persist_state="session",
                    help="Up to 200 nodes on a CPU; up to 2,000 when a GPU is present (their fits then run there, "
                         "on Run).")
    st.number_input("Expected degree k (about k·d edges)", min_value=B["degree"][1], max_value=B["degree"][2], step=0.5,
                    key="sim_degree", persist_state="session")
    st.segmented_control("Graph model", ["ER", "SF"], key="sim_graph_type", required=True,
                         persist_state="session", help="Erdős–Rényi or scale-free (Barabási–Albert).")
    st.number_input("Samples n", min_value=B["n_samples"][1], max_value=B["n_samples"][2], step=100, key="sim_n",
                    persist_state="session")
with c2:
    st.selectbox("Noise law", NOISE_LAWS, key="sim_noise_type", persist_state="session")
    st.segmented_control("Noise variances", ["EV", "NV"], key="sim_variance", required=True,
                         persist_state="session",
                         help="EV: one variance for all nodes. NV: one variance per node, drawn uniformly.")
    if ss["sim_variance"] == "EV":
        st.number_input("Noise variance σ²", min_value=B["noise_var"][1], max_value=B["noise_var"][2], step=0.1, key="sim_noise_var",
                        persist_state="session")
    else:
        st.slider("Noise variance range σ² ∈ [low, high]", min_value=B["noise_var_range"][1], max_value=B["noise_var_range"][2], step=0.05,
                  key="sim_noise_var_range", persist_state="session")
with c3:
    st.slider("Edge weight magnitude |w| ∈ [low, high] (random sign)", min_value=B["w_range"][1],
              max_value=B["w_range"][2],
              step=0.05, key="sim_w_range", persist_state="session")
    st.number_input("Seed", min_value=B["seed"][1], max_value=B["seed"][2], step=1, key="sim_seed", persist_state="session")
    # a short label: a long one is cut off ("removes varsortabi…") in this column
    st.checkbox("Standardise columns", key="sim_standardize", persist_state="session",
                help="Scale every column to unit variance after sampling. This removes varsortability: the "
                     "tendency of simulated data's variance to grow along the causal order, which some methods "
                     "exploit.")

with settings_col.expander("Interventions (experiments on chosen nodes)", expanded=bool(ss["sim_interventions"])):
    i1 = i2 = i3 = st
    i1.number_input("Interventional conditions", min_value=B["n_conditions"][1], max_value=B["n_conditions"][2], step=1, key="sim_interventions",
                    persist_state="session",
                    help="Each adds n rows in which random nodes are set by a hard intervention: their value drawn "
                         "from their own noise, their parents ignored. The rows carry their condition, and "
                         "CoLiDE then fits with the targets known (docs/conditions.md).")
    i2.number_input("Targets per condition", min_value=B["n_targets"][1], max_value=B["n_targets"][2], step=1, key="sim_iv_targets",
                    persist_state="session")
    i3.number_input("Mean shift (sd)", min_value=B["mean_shift"][1], max_value=B["mean_shift"][2], step=0.5, key="sim_mean_shift",
                    persist_state="session",
                    help="Each condition also moves every node's mean by a random amount with this standard "
                         "deviation: what an intercept per condition absorbs.")




def _view():
    """The current simulated dataset: its size, design and true graph (right of the settings)."""
    ds = state.current_dataset()
    if ds.source != "simulated":
        st.info("The current dataset is not simulated. Press **Simulate** to draw one.")
        return

    meta = ds.meta
    # the truth first, on screen beside the settings (m-12); its numbers below
    tab_graph, tab_sigma, tab_data = st.tabs(["True graph", "True noise σ", "Data preview"])
    with tab_graph:
        W_true = meta["W_true"]
        # the one drawing, or its summary above SUMMARY_NODES nodes (dashboard.graphview); its legend
        # says "true edge" (the drawing's own would call the truth's edges "learned")
        show_legend([W_true], truth_drawn=True)
        show_graph(W_true, ds.node_names, key="sim_graph", height=400, legend=False)  # whole at 1280×720
        st.dataframe(edge_list(W_true, ds.node_names), hide_index=True)
    with tab_sigma:
        st.dataframe(pd.DataFrame({"node": ds.node_names, "true σ": ds.sigma_true}), hide_index=True)
    with tab_data:
        st.dataframe(ds.X.head(100))

    st.caption(f"Current simulated dataset: {md_escape(ds.name)}")
    n, d = ds.shape
    design_targets = {c: t for c, t in (meta.get("targets") or {}).items() if t}  # the interventional conditions
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Samples", f"{n:,}",
              help=None if not design_targets else "All rows: the observational ones and each interventional condition's.")
    m2.metric("Nodes", d)
    m3.metric("True edges", int((ds.B_true.to_numpy() != 0).sum()))
    m4.metric("Varsortability", f"{meta.get('varsortability', float('nan')):.2f}",
              help="Fraction of causal paths along which the marginal variance increases (Reisach et al. "
                   "2021). Near 1: sorting by variance already reveals the order.")

    if design_targets:  # which rows are which, and every condition's targets (issue 41: they were not listed)
        counts = pd.Series(meta["conditions"]).value_counts(sort=False)
        observational = [c for c in counts.index if c not in design_targets]
        st.caption(" + ".join([f"{int(counts[c]):,} observational rows ({md_escape(c)})" for c in observational]
                              + [f"{len(design_targets)} interventional condition{'s' if len(design_targets) != 1 else ''} "
                                 f"of {int(counts[next(iter(design_targets))]):,} rows"])
                   + f" = {n:,} samples.")
        st.dataframe(pd.DataFrame({"condition": list(design_targets),
                                   "rows": [int(counts.get(c, 0)) for c in design_targets],
                                   "targets (set by the experiment)": [", ".join(t) for t in design_targets.values()]}),
                     hide_index=True, key="sim_targets_table")


with view_col:
    _view()
