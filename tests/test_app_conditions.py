"""The whole Sachs experiment on the pages (issue 31): the Data page offers the nine conditions and
the three truths, Learn fits them with an intercept per condition and the targets masked, says which
rows and truth each drawing uses, and labels the edges an intervention orients."""
import numpy as np
import pytest

import colide_core
from colide_core import CoLiDE, threshold_to_dag
from tests._app_sachs import QUICK, sachs_all_app
from tests._drawing import drawing_of, shown_drawings  # noqa: F401

pytestmark = pytest.mark.usefixtures("fresh_caches")


def test_all_nine_conditions_flow_from_data_to_learn(new_app):
    at = new_app()
    at.run()
    at.selectbox(key="data_sachs_rows").set_value("all").run()
    at.selectbox(key="data_sachs_truth").set_value("utigsp18").run()
    at.button(key="data_use_sachs").click().run()
    assert not at.exception, at.exception
    ds = at.session_state["dataset"]
    assert ds.shape == (7466, 11) and len(set(ds.meta["conditions"])) == 9
    # the per-condition summary: nine rows, the targets named, and U0126 (a MEK inhibitor) raises pMek
    table = next(df.value for df in at.dataframe if "condition" in getattr(df.value, "columns", []))
    assert len(table) == 9
    u0126 = table[table["condition"] == "cd3cd28+u0126"].iloc[0]
    assert u0126["Mek"] > 0 and "Mek" in str(u0126["targets"])
    assert any("U0126" in c.value for c in at.caption)  # Sachs's own reagent, on Sachs only (m-9)

    at.session_state["learn_variant"] = "NV"
    at.session_state["learn_tab"] = "Metrics"  # only the open tab is built (issue 41)
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    res = at.session_state["fit_results"]["nv"]
    rec = colide_core.load_sachs(rows="all", truth="utigsp18", return_record=True)
    direct = CoLiDE("nv", lambda1=0.05).fit(rec.X, conditions=rec.conditions, targets=rec.targets)
    np.testing.assert_allclose(res.W, direct.W_, atol=1e-10)  # the page fits what the library fits
    W = threshold_to_dag(direct.W_, 0.3)
    shd = colide_core.evaluate(np.asarray(rec.B_true), W)["shd"]
    # The default returns the order search's lower score (1377.1 against the central path's 1394.8):
    # one edge more against UT-IGSP's 18 (14); the central path alone gives issue 31's 13. A lower
    # score is not always a better graph on real data (docs/optimum.md).
    assert int(next(m.value for m in at.metric if m.label == "SHD · NV")) == shd == 14
    assert direct.result_.choice["solver"] == "topo"
    fast = CoLiDE("nv", lambda1=0.05, solver="fast").fit(rec.X, conditions=rec.conditions, targets=rec.targets)
    assert colide_core.evaluate(np.asarray(rec.B_true), threshold_to_dag(fast.W_, 0.3))["shd"] == 13
    captions = [c.value for c in at.caption]
    assert any("7,466 rows in 9 conditions (7 with targets)" in c and "UT-IGSP" in c for c in captions), captions
    # edges an intervention can orient carry a dot (an edge style with a legend entry, issue 38:
    # the 7 px labels were unreadable) and say "orientable", not "identified", in their tooltip;
    # where the truth points the other way, the tooltip says so
    html = next(d for d in shown_drawings(at) if "orientable" in d)
    assert "direction identified" not in html and '"from": {"enabled": true, "type": "circle"' in html
    assert '"middle": {"enabled": true, "type": "circle"' not in html   # at the start, not ambiguous mid-line
    assert '"label": "intervention"' not in html
    assert "orientable by an intervention on one of its ends (under the linear SEM); the truth has the other" in html
    legend = " ".join(h.proto.body for h in at.get("html"))
    assert "orientable by an intervention (a target at one end)" in legend


def test_a_manifest_of_a_conditions_fit_records_them_and_reloads_only_on_the_same_design(new_app):
    import json

    from dashboard.data import sachs_dataset
    from dashboard.fitting import fit_dataset, solver_params
    from dashboard.manifests import DataMismatch, fit_manifest_json, run_from_manifest

    ds = sachs_dataset("all", "consensus17")
    res = fit_dataset(ds, solver_params("ev", 0.05))
    text = fit_manifest_json(res, ds, 0.3)
    rec = json.loads(text)["conditions"]
    assert len(rec["labels"]) == 9 and sum(rec["counts"]) == 7466
    assert rec["targets"]["cd3cd28+u0126"] == ["Mek"] and rec["sha256"]
    run = run_from_manifest(text, ds)  # the same data and design: it loads, W as fitted
    np.testing.assert_array_equal(run.result.W, res.W)
    # the same 7,466 rows without their conditions is another experiment: refused, and said why
    plain = ds.__class__(ds.name, ds.X, ds.B_true, ds.sigma_true, ds.source, "other", (), {})
    with pytest.raises(DataMismatch, match="9 conditions .* the current dataset has one condition"):
        run_from_manifest(text, plain)


def test_simulate_page_adds_interventions_that_learn_fits_and_a_link_carries(new_app):
    at = new_app()
    at.run()
    at.switch_page("pages/simulate.py").run()
    at.number_input(key="sim_d").set_value(6).run()
    at.number_input(key="sim_n").set_value(300).run()
    at.number_input(key="sim_interventions").set_value(3).run()
    at.button(key="sim_run").click().run()
    assert not at.exception, at.exception
    ds = at.session_state["dataset"]
    assert ds.shape == (1200, 6) and len(set(ds.meta["conditions"])) == 4
    assert sorted(len(v) for v in ds.meta["targets"].values()) == [0, 1, 1, 1]
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    assert any("1,200 rows in 4 conditions (3 with targets)" in c.value for c in at.caption)
    from dashboard.infra.urlstate import parse_view, view_params

    params = view_params(ds, at.session_state)
    assert params["iv"] == "3" and params["ivt"] == "1"
    assert parse_view(params).sim["interventions"] == 3


def test_an_upload_with_a_condition_column_and_targets(new_app):
    # A biologist's own panel from several conditions: pick the condition column, give the targets.
    import pandas as pd

    from colide_core.data.simulate import simulate_dataset

    sim = simulate_dataset({"graph": "er", "degree": 2, "n_nodes": 5, "n_samples": 400}, 1,
                           interventions={"n_conditions": 2, "n_targets": 1, "n_per_condition": 200})
    names = [f"P{k}" for k in range(5)]
    df = pd.DataFrame(sim.X, columns=names)
    df.insert(2, "treatment", sim.conditions)
    targets = {c: [names[j] for j in v] for c, v in sim.targets.items() if len(v)}
    at = new_app()
    at.run()
    at.session_state["data_drop_non_numeric"] = False
    at.file_uploader(key="data_upload").set_value(("panel.csv", df.to_csv(index=False).encode(), "text/csv")).run()
    assert at.session_state["dataset"].source == "sachs"  # the text column alone is an error ...
    at.selectbox(key="data_condition_column").set_value("treatment").run()  # ... until it is the condition column
    ds = at.session_state["dataset"]
    assert ds.source == "upload" and ds.node_names == names and len(set(ds.meta["conditions"])) == 3
    lines = "\n".join(f"{c},{v[0]}" for c, v in targets.items())
    at.text_area(key="data_targets_text").set_value(lines).run()
    ds = at.session_state["dataset"]
    assert ds.meta["targets"] == targets and ds.meta["conditions_column"] == "treatment"
    # the Conditions tab's caption speaks of this upload, not of Sachs's U0126 (issue 48, m-9)
    captions = [c.value for c in at.caption]
    assert any(c.startswith("Per condition: its rows") for c in captions) and not any("U0126" in c for c in captions)
    at.text_area(key="data_targets_text").set_value('{"iv1": ["Nope"]}').run()
    errors = [e.value for e in at.error]
    assert any("conditions" in e and "Nope" in e for e in errors), errors
    assert at.session_state["dataset"].key == ds.key  # nothing lost: the last good dataset stays


def test_the_bootstrap_and_stability_selection_carry_the_conditions(new_app):
    # Edge confidence must resample within the nine conditions and fit each resample as Learn fits
    # (an intercept per condition, targets masked); before, the page bootstrapped the pooled rows.
    from colide_core.evaluation.stability import bootstrap_edges, stability_selection

    at, rec = sachs_all_app(new_app, "pages/edge_confidence.py")
    at.number_input(key="boot_n").set_value(2).run()
    at.button(key="boot_run").click().run()
    assert not at.exception, at.exception
    res = at.session_state["trust_boot_result"]["result"]
    est = CoLiDE("nv", lambda1=0.05, threshold=0.3, **QUICK)
    direct = bootstrap_edges(rec.X, est, n_boot=2, random_state=0, conditions=rec.conditions, targets=rec.targets)
    pooled = bootstrap_edges(rec.X, est, n_boot=2, random_state=0)
    np.testing.assert_array_equal(res.sigma_samples, direct.sigma_samples)
    assert not np.allclose(res.sigma_samples, pooled.sigma_samples)  # the design changes the fits

    at.number_input(key="stab_n").set_value(2).run()
    at.multiselect(key="stab_lambdas").set_value([0.05]).run()
    at.button(key="stab_run").click().run()
    assert not at.exception, at.exception
    stab = at.session_state["trust_stab_result"]["result"]
    direct = stability_selection(rec.X, est, [0.05], n_subsamples=2, random_state=0,
                                 conditions=rec.conditions, targets=rec.targets)
    np.testing.assert_array_equal(stab.selection_probability, direct.selection_probability)


def test_the_explorer_path_carries_the_conditions(new_app):
    from colide_core.solver.path import lambda_path

    at, rec = sachs_all_app(new_app, "pages/explorer.py")
    at.number_input(key="exp_n_lambdas").set_value(2).run()
    at.button(key="exp_run").click().run()
    assert not at.exception, at.exception
    path = at.session_state["trust_path_result"]["path"]
    lambdas = path.lambdas
    direct = lambda_path(rec.X, lambdas, path.thresholds, "nv", conditions=rec.conditions, targets=rec.targets,
                         **QUICK)
    pooled = lambda_path(rec.X, lambdas, path.thresholds, "nv", **QUICK)
    np.testing.assert_array_equal(path.W, direct.W)
    assert not np.allclose(path.W, pooled.W)


def test_an_upload_with_more_conditions_than_the_dashboard_takes_is_refused_clearly(new_app):
    # Issue 42: the library takes up to 1,000 conditions (defaults.MAX_CONDITIONS; at d = 200 their
    # statistics cost each fit 320 MB), the shared server at most MAX_CONDITIONS_DASHBOARD (100).
    # 101 conditions of 2 rows: refused with the limit, the way out and the last dataset kept;
    # 100 conditions: accepted.
    import pandas as pd

    from colide_core import defaults
    from dashboard.data import UploadProblem, dataset_from_upload

    assert defaults.MAX_CONDITIONS_DASHBOARD == 100 < defaults.MAX_CONDITIONS
    rng = np.random.default_rng(0)

    def table(k):
        df = pd.DataFrame(rng.standard_normal((2 * k, 3)), columns=["A", "B", "C"])
        df.insert(1, "batch", [f"b{i // 2}" for i in range(2 * k)])
        return df.to_csv(index=False).encode()

    with pytest.raises(UploadProblem, match=r"101 distinct conditions in column 'batch', more than the 100 this app"):
        dataset_from_upload(table(101), "many.csv", condition_column="batch")
    assert len(set(dataset_from_upload(table(100), "ok.csv", condition_column="batch").meta["conditions"])) == 100
    at = new_app()
    at.run()
    at.session_state["data_drop_non_numeric"] = False
    at.file_uploader(key="data_upload").set_value(("many.csv", table(101), "text/csv")).run()
    at.selectbox(key="data_condition_column").set_value("batch").run()
    errors = [e.value.replace("\\", "") for e in at.error]  # markdown escapes removed
    assert any("101 distinct conditions" in e and "more than the 100 this app takes" in e
               and "colide fit DATA --conditions COLUMN" in e for e in errors), errors
    assert at.session_state["dataset"].source == "sachs"  # nothing replaced the dataset
