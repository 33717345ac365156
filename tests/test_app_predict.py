"""The Predict page (issue 40, point 1): the Learn fit's prediction of an intervention, live,
beside what regression predicts, with intervals from a job."""
import numpy as np
import pytest

import colide_core
from colide_core.evaluation.interventions import intervention_table, predict_intervention, refit_weights
from colide_core.render.graph_style import change_fill
from dashboard.live import thresholded
from tests._apps import open_predict, open_ranked
from tests._schedules import QUICK
from tests._drawing import drawing_of, shown_drawings  # noqa: F401

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _page(new_app):
    at = new_app()
    at.run()
    at.session_state["solver_overrides"] = dict(QUICK)
    at.switch_page("pages/learn.py").run()
    at.switch_page("pages/predict.py").run()
    assert not at.exception, at.exception
    return at


def test_the_page_predicts_the_learn_fit_and_compares_seeing(new_app):
    at = _page(new_app)
    at.selectbox(key="pred_node").set_value("PKA").run()
    at.number_input(key="pred_k").set_value(2.0).run()
    assert not at.exception, at.exception
    ds = at.session_state["dataset"]
    res = at.session_state["fit_results"]["nv"]
    A = thresholded(res, 0.3, list(ds.node_names))
    sd = float(ds.X["PKA"].std(ddof=1))
    # the default SEM of an NV fit: the fit's own weights (docs/predict.md: they predict better on NV data)
    want = intervention_table(A, ds.X, shift={"PKA": 2.0 * sd}).table
    [table] = [d.value for d in at.dataframe if "shift (sd), doing" in d.value.columns]
    np.testing.assert_allclose(table["shift (sd), doing"], want["shift_sd"].round(3), atol=1e-9)
    # the drawing fills each node with its predicted change, in the node's tooltip too
    html = next(d for d in shown_drawings(at) if "predicted change" in d)
    for colour in set(change_fill(want["shift_sd"].to_numpy())):
        assert f'"color": "{colour}"' in html or f'"color":"{colour}"' in html
    assert "predicted change: +2 sd" in html  # PKA itself, pushed by 2 sd
    # least squares on request, on the node with the most children; computed once per fit and threshold
    src = ds.node_names[int(np.argmax((A != 0).sum(axis=1)))]
    at.selectbox(key="pred_node").set_value(src).run()
    sd_src = float(ds.X[src].std(ddof=1))
    refit_table = intervention_table(refit_weights(A, ds.X), ds.X, shift={src: 2.0 * sd_src}).table
    at.segmented_control(key="pred_weights").set_value("refit").run()
    [shown] = [d.value for d in at.dataframe if "shift (sd), doing" in d.value.columns]
    np.testing.assert_allclose(shown["shift (sd), doing"], refit_table["shift_sd"].round(3), atol=1e-9)
    memo = at.session_state["pred_sem_weights"]
    assert memo["key"] == (ds.key, res.content_key, 0.3)
    np.testing.assert_array_equal(memo["W"], refit_weights(A, ds.X))
    at.segmented_control(key="pred_weights").set_value("fit").run()
    fit_table = intervention_table(A, ds.X, shift={src: 2.0 * sd_src}).table
    [shown] = [d.value for d in at.dataframe if "shift (sd), doing" in d.value.columns]
    np.testing.assert_allclose(shown["shift (sd), doing"], fit_table["shift_sd"].round(3), atol=1e-9)
    assert not np.allclose(fit_table["shift_sd"], refit_table["shift_sd"], atol=1e-3)
    # the report of this fit records the prediction shown last (the Check page's download)
    from dashboard.infra.state import predict as ps

    kept = {k: at.session_state[k] for k in (ps.LAST_PREDICTION, ps.PLAN_RESULT)}
    (recorded,), plan, _ = ps.for_report(kept, ds.key, res.content_key, 0.3)
    assert plan is None and recorded.weights == "fit" and recorded.describe().startswith(f"{src} shifted by")
    np.testing.assert_allclose(recorded.table["shift_sd"], fit_table["shift_sd"])
    assert ps.for_report(kept, ds.key, res.content_key, 0.25) == ((), None, ())  # another threshold: not this fit
    assert table.loc["PKA", "shift (sd), doing"] == pytest.approx(2.0)
    # PKA's causes do not move when PKA is pushed; regression on PKA says they would
    parents = [ds.node_names[i] for i in np.flatnonzero(A[:, list(ds.node_names).index("PKA")])]
    for p in parents:
        assert table.loc[p, "shift (sd), doing"] == 0
    assert (table["shift (sd), seeing"].abs() > 0.05).sum() > (table["shift (sd), doing"].abs() > 0.05).sum()


def test_intervals_are_a_job_and_match_the_library(new_app):
    at = _page(new_app)
    at.number_input(key="pred_n_boot").set_value(2).run()
    at.button(key="pred_boot_run").click().run()
    assert not at.exception, at.exception
    ds = at.session_state["dataset"]
    res = at.session_state["fit_results"]["nv"]
    samples = at.session_state["pred_boot_result"]["samples"]
    model = colide_core.CoLiDE(**{**dict(res.params), "threshold": 0.3}).fit(ds.X)
    sd = float(ds.X["Raf"].std(ddof=1))
    direct = predict_intervention(model, ds.X, shift={"Raf": sd}, n_bootstrap=2, random_state=0)
    np.testing.assert_allclose(samples, direct.samples)
    [table] = [d.value for d in at.dataframe if "shift (sd), doing" in d.value.columns]
    # the interval is the shift's, in the shift's units (sd), and holds the shift's bootstrap quantiles
    low, high = "90% interval of the shift (sd): low", "90% interval of the shift (sd): high"
    sd_all = ds.X.std(ddof=1).to_numpy()
    np.testing.assert_allclose(table[low], (np.quantile(samples, 0.05, axis=0) / sd_all).round(3), atol=1e-9)
    np.testing.assert_allclose(table[high], (np.quantile(samples, 0.95, axis=0) / sd_all).round(3), atol=1e-9)
    assert (table[low] <= table[high]).all()
    assert any("2 refits in" in s.value for s in at.success)


def test_a_huge_value_gets_a_sentence_and_no_prediction(new_app):
    at = _page(new_app)
    at.segmented_control(key="pred_kind").set_value("Set to a value").run()
    at.number_input(key="pred_value").set_value(1e300).run()
    assert not at.exception, at.exception
    assert any("standard deviations" in e.value for e in at.error)
    assert not [d for d in at.dataframe if "shift (sd), doing" in d.value.columns]
    assert at.button(key="pred_boot_run").disabled


def test_plan_ranks_like_the_library_and_runs_the_experiment_on_simulated_data(new_app):
    # A simulated NV dataset (d = 6): the page's ranking is the library's with the Learn fit's
    # settings, the chosen candidate's settled edges are highlighted, and "Run it" adds its rows as a
    # new condition with the target known and reports the SHD of both fits against the truth.
    from colide_core import CoLiDE, evaluate
    from colide_core.evaluation.planning import rank_interventions
    from colide_core.render.graph_style import SETTLED_STYLE
    from dashboard.planning import try_experiment
    from dashboard.simulation import SimConfig, simulate_dataset

    ds = simulate_dataset(SimConfig(d=6, n=400, variance="NV"), 2)
    at = open_ranked(new_app, ds, 3)
    res = at.session_state["fit_results"]["nv"]
    model = CoLiDE(**{**dict(res.params), "threshold": 0.3})
    want = rank_interventions(ds.X, n_bootstrap=3, random_state=0, estimator=model)
    assert at.session_state["plan_result"] is not None, (at.session_state["plan_messages"], [e.value for e in at.error])
    got = at.session_state["plan_result"]["table"]
    assert list(got.index) == list(want.index)
    np.testing.assert_allclose(got["score"], want["score"])
    pick = at.session_state["plan_pick"]
    assert pick == want.index[0]
    html = next(d for d in shown_drawings(at) if "would settle" in d)
    assert (SETTLED_STYLE["halo"] in html) == bool(want.loc[pick, "edge_pairs"])
    at.number_input(key="plan_try_rows").set_value(100).run()
    at.button(key="plan_try").click().run()
    assert not at.exception, at.exception
    tried = at.session_state["plan_try_result"]
    A = thresholded(res, 0.3, list(ds.node_names))
    direct = try_experiment(ds, dict(res.params), 0.3, pick, 100, before=A)
    assert (tried["shd_before"], tried["shd_after"]) == (direct["shd_before"], direct["shd_after"])
    assert tried["shd_before"] == evaluate(ds.B_true, A)["shd"]
    np.testing.assert_array_equal(tried["A_after"], direct["A_after"])
    assert any(f"SHD {tried['shd_before']} → {tried['shd_after']}" in s.value for s in at.success)


def test_try_experiment_cuts_the_target_and_keeps_the_design():
    # a chain X1 -> X2 with weight 3 (EV): the experiment's rows have X2 independent of X1 (its
    # parent cut), and the refit sees a new condition whose target is X2
    import pandas as pd

    from dashboard.data import make_dataset
    from dashboard.planning import try_experiment

    rng = np.random.default_rng(0)
    x1 = rng.standard_normal(500)
    X = pd.DataFrame({"X1": x1, "X2": 3 * x1 + rng.standard_normal(500)})
    W = np.array([[0, 3.0], [0, 0]])
    ds = make_dataset("chain", X, B_true=(W != 0).astype(int), sigma_true=np.ones(2), source="simulated",
                      meta={"W_true": W, "seed": 0, "config": {"noise": "gaussian"}})
    got = try_experiment(ds, {"variant": "ev"}, 0.3, "X2", 400)
    assert got["label"] == "planned: do(X2)" and got["rows"] == 400
    assert got["shd_before"] == got["shd_after"] == 0  # the chain is found with and without the experiment
    with pytest.raises(ValueError, match="unknown node"):
        try_experiment(ds, {"variant": "ev"}, 0.3, "X9", 10)
    # the fit before the experiment is a candidate of the refit (issue 51): "warm" among the
    # candidates scored on the refit's objective, and the winner no worse than it
    warm = try_experiment(ds, {"variant": "ev"}, 0.3, "X2", 400, before=W != 0, W_init=[[0, 2.9], [0, 0]])
    scores = warm["choice"]["candidates"]
    assert "warm" in scores and min(scores.values()) <= scores["warm"]
    assert got["choice"] is not None and "warm" in got["choice"]["candidates"]  # the fit made here, passed on


def test_the_prediction_table_has_its_own_neutralised_download(new_app, downloads):
    # Streamlit's own "Download as CSV" is off (client.disableDataExport): the table's file is ours,
    # through to_csv_safe, with the node names as its first column
    import pandas as pd
    from io import StringIO

    from colide_core.graph.export import to_csv_safe

    at = _page(new_app)
    at.selectbox(key="pred_node").set_value("PKA").run()
    [table] = [d.value for d in at.dataframe if "shift (sd), doing" in d.value.columns]
    text = downloads["colide_prediction.csv"][-1].decode()
    assert text == to_csv_safe(table, index_label="node")
    back = pd.read_csv(StringIO(text), index_col="node")
    assert list(back.index) == list(at.session_state["dataset"].node_names)
    np.testing.assert_allclose(back["shift (sd), doing"], table["shift (sd), doing"])


def test_intervals_work_with_prior_knowledge(new_app):
    # the defect of issue 52: with prior knowledge given by name, the interval job's refits ran on a
    # bare array and failed on the names. Now each refit keeps them (bootstrap_shifts), the
    # forbidden edge stays out of every refit, and the samples are the library's.
    from colide_core.evaluation.interventions import bootstrap_shifts

    at = new_app()
    at.run()
    at.session_state["solver_overrides"] = {**dict(QUICK), "forbidden": (("PKA", "Raf"), ("Raf", "PKA"))}
    at.switch_page("pages/learn.py").run()
    at.switch_page("pages/predict.py").run()
    assert not at.exception, at.exception
    at.number_input(key="pred_n_boot").set_value(2).run()
    at.button(key="pred_boot_run").click().run()
    assert not at.exception, at.exception
    assert at.session_state["pred_boot_result"] is not None, at.session_state["pred_boot_messages"]
    samples = at.session_state["pred_boot_result"]["samples"]
    ds = at.session_state["dataset"]
    res = at.session_state["fit_results"]["nv"]
    assert dict(res.params)["forbidden"]
    sd = float(ds.X["Raf"].std(ddof=1))
    est = colide_core.CoLiDE(**{**dict(res.params), "threshold": 0.3})
    want = bootstrap_shifts(est, ds.X, shift={"Raf": sd}, n_bootstrap=2, random_state=0, weights="fit")
    np.testing.assert_allclose(samples, want)
    assert samples.shape == (2, 11)


def test_an_all_zero_ranking_says_why(new_app):
    # Issue 48, m-1: on nine-condition Sachs every candidate scored 0 (every learned edge already
    # has a target at one end) and the page did not say why. It now says so.
    from dashboard.data import sachs_dataset

    at = open_ranked(new_app, sachs_dataset(rows="all", truth="consensus17"), 2)
    table = at.session_state["plan_result"]["table"]
    assert (table["score"] == 0).all()          # the case of the walk
    assert any("No single-node experiment would settle" in i.value for i in at.info)


def test_the_refit_jobs_say_their_cost_before_they_start(new_app):
    # issue 53, low 4: "Compute intervals" (up to 500 refits) and "Rank the experiments" (up to
    # 200) showed no estimate. Each now says n refits x the time the fit shown took (measured).
    from dashboard.infra.state.predict import refits_cost_text
    from dashboard.infra.text import fmt_seconds

    at = _page(new_app)
    res = at.session_state["fit_results"]["nv"]
    at.number_input(key="pred_n_boot").set_value(40).run()
    captions = [c.value for c in at.caption]
    assert refits_cost_text(40, res.fit_time) in captions
    assert f"About {fmt_seconds(40 * res.fit_time)}: 40 refits" in refits_cost_text(40, res.fit_time)
    assert refits_cost_text(at.session_state["plan_n_boot"], res.fit_time) in captions
