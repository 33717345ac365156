"""AppTest tests of the Simulate and Compare pages."""
import numpy as np
import pytest

import colide_core
from colide_core import baselines
from dashboard import comparison
from dashboard.simulation import SimConfig, simulate_arrays

from tests._schedules import QUICK  # noqa: E402 - the suite's short schedule
from tests._drawing import drawing_of, shown_drawings  # noqa: F401

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _page(new_app, path):
    at = new_app().run()
    at.switch_page(path).run()
    assert not at.exception, at.exception
    return at


def _summary(at):
    frames = [d.value for d in at.dataframe if "SHD" in d.value.columns and "runs" in d.value.columns]
    assert len(frames) == 1
    return frames[0]


def test_simulated_dataset_becomes_current_with_truth_and_sigma(new_app):
    at = _page(new_app, "pages/simulate.py")
    at.number_input(key="sim_d").set_value(6)
    at.number_input(key="sim_n").set_value(500)
    at.number_input(key="sim_seed").set_value(3)
    at.selectbox(key="sim_noise_type").set_value("laplace")
    at.button(key="sim_run").click().run()
    assert not at.exception, at.exception
    ds = at.session_state["dataset"]
    assert ds.source == "simulated" and ds.shape == (500, 6)
    # Same draw as calling the simulation directly with the same settings and seed.
    X, W, sigma = simulate_arrays(SimConfig(d=6, n=500, noise="laplace"), 3)
    np.testing.assert_array_equal(ds.X.to_numpy(), X)
    np.testing.assert_array_equal(ds.B_true.to_numpy(), (W != 0).astype(float))
    np.testing.assert_array_equal(ds.sigma_true, sigma)
    assert [m.value for m in at.metric if m.label == "True edges"] == [str(int((W != 0).sum()))]

    # On Learn, the noise panel shows the true sigma beside sigma-hat and sigma_rel_err is scored.
    at.switch_page("pages/learn.py").run()
    at.session_state["solver_overrides"] = dict(QUICK)
    at.button(key="learn_run").click().run()
    assert not at.exception, at.exception
    for tab in ("Noise", "Convergence"):  # a click on each tab (only the open tab is built, issue 41)
        at.session_state["learn_tab"] = tab
        at.switch_page("pages/learn.py").run()
        assert len(at.get("plotly_chart")) == 1, tab
    at.session_state["learn_tab"] = "Metrics"
    at.switch_page("pages/learn.py").run()
    table = [d.value for d in at.dataframe if len(d.value.index) and d.value.index[0] == "SHD"][0]
    assert "σ relative error" in table.index and np.isfinite(table.loc["σ relative error", "NV"])


def test_compare_table_matches_direct_runs_and_reports_a_failure(monkeypatch, new_app):
    real_run = baselines.run_method

    def failing_sortnregress(name, X, **kwargs):
        if name == "SortNRegress":
            raise baselines.MethodError("SortNRegress failed: synthetic failure for the test")
        return real_run(name, X, **kwargs)

    monkeypatch.setattr(baselines, "run_method", failing_sortnregress)
    at = _page(new_app, "pages/compare.py")
    at.session_state["solver_overrides"] = dict(QUICK)
    at.session_state["sim_d"] = 5                   # a Simulate-page setting, kept in session state
    at.multiselect(key="cmp_methods").set_value(["CoLiDE-NV", "SortNRegress"])
    at.number_input(key="cmp_reps").set_value(2)
    at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    summary = _summary(at)
    assert list(summary.index) == ["CoLiDE-NV", "SortNRegress"]
    assert summary.loc["SortNRegress", "failed"] == 2 and "synthetic failure" in summary.loc["SortNRegress", "error"]
    assert any("SortNRegress failed in 2 of 2 runs" in e.value for e in at.error)

    # CoLiDE-NV's mean SHD equals two direct runs on seeds 0 and 1 of the same settings.
    config = SimConfig(d=5)
    shds = []
    for seed in (0, 1):
        X, W, _ = simulate_arrays(config, seed)
        W_est = colide_core.CoLiDE("nv", threshold=0.3, **QUICK).fit(X).adjacency_
        shds.append(colide_core.evaluate((W != 0).astype(float), W_est)["shd"])
    mean, std = np.mean(shds), np.std(shds, ddof=1)
    assert summary.loc["CoLiDE-NV", "SHD"] == f"{mean:.1f} ± {std:.1f}"
    assert [b.key for b in at.get("download_button")] == ["cmp_download", "cmp_manifest_download"]


def test_ges_is_refused_above_its_node_limit(new_app):
    at = _page(new_app, "pages/compare.py")
    at.session_state["sim_d"] = 31
    at.multiselect(key="cmp_methods").set_value(["GES"])
    at.run()
    assert any("GES is refused for d = 31 > 30" in w.value for w in at.warning)
    at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    summary = _summary(at)
    assert summary.loc["GES", "failed"] == 3 and "refused" in summary.loc["GES", "error"]


def test_runs_are_cached_per_seed(new_app):
    at = _page(new_app, "pages/compare.py")
    at.session_state["sim_d"] = 4
    at.multiselect(key="cmp_methods").set_value(["SortNRegress"])
    at.number_input(key="cmp_reps").set_value(2)
    at.button(key="cmp_run").click().run()
    rows = at.session_state["compare_results"]["rows"]
    assert list(zip(rows["seed"], rows["cached"])) == [(0, False), (1, False)]
    assert any("2 computed, 0 from the cache" in c.value for c in at.caption)
    at.number_input(key="cmp_reps").set_value(3)
    at.button(key="cmp_run").click().run()          # only the new seed is computed
    rows = at.session_state["compare_results"]["rows"]
    assert list(zip(rows["seed"], rows["cached"])) == [(0, True), (1, True), (2, False)]
    assert any("1 computed, 2 from the cache" in c.value for c in at.caption)
    assert _summary(at).loc["SortNRegress", "runs"] == 3


def test_parallel_runs_give_the_same_table_as_serial(new_app, monkeypatch):
    from dashboard.infra import jobs

    # every unit to the sweep (none kept for live fits, issue 53), so that it runs in parallel on 2 cores too
    monkeypatch.setattr(jobs, "COMPUTE_SLOTS", jobs.ComputeSlots(jobs.MAX_WORKERS, reserved=0))
    at = _page(new_app, "pages/compare.py")
    at.session_state["sim_d"] = 4
    at.multiselect(key="cmp_methods").set_value(["SortNRegress", "GES"])
    at.number_input(key="cmp_reps").set_value(2)
    at.button(key="cmp_run").click().run()
    serial = _summary(at)
    comparison.run_store().clear()
    at.checkbox(key="cmp_parallel").check().run()
    at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    parallel = _summary(at)
    cols = ["SHD", "SHD-C", "SID", "FDR", "TPR", "NNZ", "runs", "failed"]
    assert parallel[cols].equals(serial[cols])


def test_simulate_says_true_edge_and_lists_the_interventions(new_app):
    # Issue 41: the true graph's legend said "learned edge"; with interventions the page showed
    # 4,000 samples beside "n=1000" and did not list the targets.
    at = _page(new_app, "pages/simulate.py")
    at.number_input(key="sim_d").set_value(6)
    at.number_input(key="sim_n").set_value(1000)
    at.number_input(key="sim_interventions").set_value(3)
    at.number_input(key="sim_iv_targets").set_value(2)
    at.button(key="sim_run").click().run()
    assert not at.exception, at.exception
    ds = at.session_state["dataset"]
    assert ds.shape == (4000, 6)                                   # 1,000 observational + 3 x 1,000
    assert [m.value for m in at.metric if m.label == "Samples"] == ["4,000"]
    assert "n=1000 per condition (4,000 rows)" in ds.name and "3 interventional conditions on 2 nodes each" in ds.name
    assert "node(s)" not in ds.name
    captions = [c.value for c in at.caption]
    assert any(c.endswith("+ 3 interventional conditions of 1,000 rows = 4,000 samples.")
               and c.startswith("1,000 observational rows") for c in captions), captions
    targets = [d.value for d in at.dataframe if "targets (set by the experiment)" in d.value.columns]
    assert len(targets) == 1 and len(targets[0]) == 3
    assert list(targets[0]["rows"]) == [1000] * 3
    # every condition's targets, as the dataset carries them (two nodes each)
    assert [t.split(", ") for t in targets[0]["targets (set by the experiment)"]] == \
        [t for t in ds.meta["targets"].values() if t]
    assert all(len(t.split(", ")) == 2 for t in targets[0]["targets (set by the experiment)"])
    # the legend above the drawing calls the edges true, and the drawing draws no legend of its own
    legends = [h.proto.body for h in at.get("html") if "weight" in h.proto.body]
    assert len(legends) == 1 and "true edge" in legends[0] and "learned edge" not in legends[0]
    docs = shown_drawings(at)
    assert len(docs) == 1 and "learned edge" not in docs[0] and 'id="legend"' not in docs[0]
