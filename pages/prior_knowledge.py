"""Prior knowledge page: forbidden edges, required edges and tiers, enforced in every CoLiDE fit.

The tables are edited with ``st.data_editor``; **Apply** checks them with
``colide_core.graph.constraints.resolve_constraints`` (unknown nodes, contradictions and required cycles are
reported here, before any solving) and merges them into the dashboard's ``solver_overrides``, so the
Learn, Edge confidence and Explorer pages all pass them to ``colide_core.CoLiDE``. The knowledge can be
saved and loaded as JSON. After a fit, an audit table checks every constraint and acyclicity.
"""
import numpy as np
import streamlit as st

from colide_core import threshold_to_dag
from colide_core.graph.constraints import PRIOR_KEYS, PriorKnowledge, audit_constraints
from colide_core.data.io import JSON_MAX_BYTES
from dashboard.infra.layout import page_setup
from dashboard.infra import state
from dashboard.infra.state import trust as ts
from dashboard.infra.text import fmt_lambda, md_escape, plural

page_setup()
ss = st.session_state
ds = state.current_dataset()
names = ds.node_names
d = len(names)


def _reset_drafts(prior):
    tables = (prior or PriorKnowledge()).to_tables(names)
    tables["names"] = list(names)
    ss[ts.PRIOR_DRAFT] = tables
    ss[ts.PRIOR_VERSION] += 1


def _current_prior():
    drafts = ss[ts.PRIOR_DRAFT]
    return PriorKnowledge.from_tables(drafts["forbidden"], drafts["required"], drafts["tiers"])


def _set_overrides(prior):
    overrides = {k: v for k, v in ss[state.SOLVER_OVERRIDES].items() if k not in PRIOR_KEYS}
    if prior is not None:
        overrides.update(prior.as_kwargs())
    ss[state.SOLVER_OVERRIDES] = overrides
    ss[ts.PRIOR] = None if prior is None or prior.is_empty else prior


def _apply():
    try:
        prior = _current_prior()
        prior.resolve(d, names)
    except ValueError as exc:
        ss[ts.PRIOR_MESSAGES] = [("error", "Not applied: " + md_escape(str(exc)))]
        return
    _set_overrides(prior)
    ss[ts.PRIOR_MESSAGES] = [("success", "Applied: every new fit (Learn, Edge confidence, Explorer) enforces "
                                         "this knowledge." if not prior.is_empty else
                              "No constraint to apply: fits are unconstrained.")]


def _clear():
    _set_overrides(None)
    _reset_drafts(None)
    ss[ts.PRIOR_MESSAGES] = [("info", "All constraints removed.")]


def _load(text):
    try:
        prior = PriorKnowledge.from_json(text)
        prior.resolve(d, names)
    except ValueError as exc:
        ss[ts.PRIOR_MESSAGES] = [("error", "Could not load the constraints: " + md_escape(str(exc)))]
        return
    except Exception as exc:  # never a traceback for a user file (the loader raises ValueError)
        ss[ts.PRIOR_MESSAGES] = [("error", f"Could not load the constraints ({type(exc).__name__}): "
                                           + md_escape(" ".join(str(exc).split())[:300]))]
        return
    _reset_drafts(prior)
    ss[ts.PRIOR_MESSAGES] = [("success", "Loaded. Press **Apply** to enforce them.")]


def _load_upload():
    up = ss.get("prior_json_upload")
    if up is not None:
        _load(up.getvalue())


def _load_pasted():
    _load(ss["prior_json_text"])


def _half_filled(frame) -> int:
    """Rows of a (source, target) table with one cell chosen and the other empty."""
    if frame is None or len(frame) == 0:
        return 0
    empty = frame[["source", "target"]].isna() | (frame[["source", "target"]].astype(str).apply(
        lambda col: col.str.strip()) == "")
    return int((empty.sum(axis=1) == 1).sum())


def _editor(kind, column_config, num_rows):
    """A data editor whose edits survive reruns and page switches (kept in PRIOR_DRAFT)."""
    key = f"prior_{kind}_editor_{ss[ts.PRIOR_VERSION]}"
    if key not in ss or kind not in ss[ts.PRIOR_BASE]:
        ss[ts.PRIOR_BASE][kind] = ss[ts.PRIOR_DRAFT][kind].copy()
    edited = st.data_editor(ss[ts.PRIOR_BASE][kind], key=key, column_config=column_config, num_rows=num_rows,
                            hide_index=True, width="stretch")
    ss[ts.PRIOR_DRAFT][kind] = edited
    return edited


st.title("Prior knowledge")
st.caption("Forbidden edges are held at exactly zero during optimisation; required edges are exempt from the "
           "L1 penalty and never removed by thresholding; tiers (temporal or biological layers) forbid every "
           "edge from a later tier into an earlier one. Contradictions are reported before any solving.")

if ss[ts.PRIOR_DRAFT].get("names") != names:
    _reset_drafts(ss[ts.PRIOR])

pair_cols = {
    "source": st.column_config.SelectboxColumn("source", options=names, required=True),
    "target": st.column_config.SelectboxColumn("target", options=names, required=True),
}
st.caption("To add an edge, click the empty row at the bottom of a table (or its **+**), then pick the "
           "source and the target; to delete rows, tick them on the left and press the bin icon.")
c1, c2, c3 = st.columns(3)
with c1:
    st.markdown("**Forbidden edges** (source → target)")
    forbidden_rows = _editor("forbidden", pair_cols, "dynamic")
with c2:
    st.markdown("**Required edges** (source → target)")
    required_rows = _editor("required", pair_cols, "dynamic")
with c3:
    st.markdown("**Tiers** (0 = earliest; empty = no tier)")
    _editor("tiers", {"node": st.column_config.TextColumn("node", disabled=True),
                      "tier": st.column_config.NumberColumn("tier", min_value=0, max_value=d, step=1)}, "fixed")

for label, rows in (("forbidden", forbidden_rows), ("required", required_rows)):
    half = _half_filled(rows)
    if half:
        st.warning(f"{plural(half, 'row')} of the {label} edges {'has' if half == 1 else 'have'} only a source "
                   "or only a target and will be ignored: pick both, or delete the row.")

problem = None
try:
    draft = _current_prior()
    edge_mask, required_mask = draft.resolve(d, names)
except ValueError as exc:
    draft, problem = None, str(exc)
if problem:
    st.error("These constraints are inconsistent: " + md_escape(problem))
else:
    n_forbidden = int((~edge_mask).sum()) - d
    st.caption(f"{len(draft.forbidden)} forbidden, {len(draft.required)} required, {len(draft.tiers)} tiers: "
               f"{n_forbidden} of {d * (d - 1)} directed edges are forbidden in total.")

b1, b2, _ = st.columns([1, 1, 2])
b1.button("Apply to every fit", key="prior_apply", type="primary", on_click=_apply)
b2.button("Remove all constraints", key="prior_clear", on_click=_clear)
for level, text in ss[ts.PRIOR_MESSAGES]:
    getattr(st, level)(text)
applied = ss[ts.PRIOR]
if applied is None:
    st.caption("Currently applied: none (fits are unconstrained).")
else:
    st.caption(f"Currently applied: {len(applied.forbidden)} forbidden, {len(applied.required)} required, "
               f"{len(applied.tiers)} tiers" + ("" if draft == applied else " (the tables above have unapplied changes)")
               + ".")

with st.expander("Save or load as JSON"):
    if draft is not None:
        st.download_button("Download constraints (JSON)", draft.to_json(names), file_name="colide_constraints.json",
                           mime="application/json", key="prior_dl")
    st.file_uploader("Load a constraints file", type=["json"], key="prior_json_upload", on_change=_load_upload)
    st.text_area("…or paste JSON", key="prior_json_text", height=120, max_chars=JSON_MAX_BYTES)
    st.button("Load pasted JSON", key="prior_load_text", on_click=_load_pasted)

# --- audit ----------------------------------------------------------------------------------------
st.subheader("Audit of the last fits")
results = state.results_for_current()
if not results:
    st.info("No fit yet for this dataset: run one on the **Learn** page, then come back for the audit.")
    st.page_link("pages/learn.py", label="Go to Learn", icon=":material/arrow_forward:")  # a link, not words (issue 48)
    st.stop()
threshold = float(ss["learn_threshold"])
rerun = False  # a fit run before the knowledge applied now: one link to Learn below the audit
for v in [v for v in ("ev", "nv") if v in results]:
    res = results[v]
    used = PriorKnowledge.from_params(res.params)
    st.markdown(f"**CoLiDE-{res.label}**, λ = {fmt_lambda(dict(res.params)['lambda1'])}, threshold {threshold:g}")
    if not used.is_empty:
        knowledge = used
        note = "Constraints enforced by this fit."
    elif applied is not None:
        knowledge = applied
        note = ("This fit was run without prior knowledge; it is checked against the knowledge applied now. "
                "Run it again on the Learn page to enforce it.")
        rerun = True
    else:
        knowledge = used
        note = "No prior knowledge: only acyclicity is checked."
    try:
        em, rm = (None, None) if knowledge.is_empty else knowledge.resolve(d, names)
    except ValueError as exc:
        st.error(md_escape(str(exc)))
        continue
    A, removed = threshold_to_dag(res.W, threshold, required=None if used.is_empty else rm, return_removed=True)
    table = audit_constraints(A, em, rm, tiers=knowledge.tiers or None, names=names, removed=removed)
    n_bad = int((~table["holds"]).sum())
    if n_bad:
        st.error(f"{n_bad} of {plural(len(table), 'check')} {'fails' if n_bad == 1 else 'fail'}.")
    else:
        st.success(("The only check holds" if len(table) == 1 else f"All {len(table)} checks hold") + (" (every constraint, and the graph is a DAG)."
                                                         if not knowledge.is_empty else " (the graph is a DAG)."))
    st.caption(note)
    shown = table.assign(holds=np.where(table["holds"], "yes", "no"))
    st.dataframe(shown, hide_index=True, key=f"prior_audit_{v}",
                 column_config={"weight": st.column_config.NumberColumn("weight", format="%.4g")})
if rerun:
    st.page_link("pages/learn.py", label="Go to Learn", icon=":material/arrow_forward:")
