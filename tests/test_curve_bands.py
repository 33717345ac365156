"""ROC / precision-recall bands over seeds (colide_core.evaluation.curves.curves_on_grid, bands_over_seeds),
the executor rows that carry them and the Compare page's curves."""
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import average_precision_score, precision_recall_curve, roc_auc_score, roc_curve

from colide_core.evaluation.curves import CURVE_GRID, bands_over_seeds, curves_on_grid

# Two "seeds" on a 3-node truth 0 -> 1 -> 2 (2 positives among the 6 ordered pairs).
B = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
W1 = np.array([[0.0, 0.9, 0.1], [0.0, 0.0, 0.5], [0.2, 0.0, 0.0]])  # both true edges on top: AUROC 1
W2 = np.array([[0.0, 0.3, 0.0], [0.0, 0.0, 0.8], [0.0, 0.6, 0.0]])  # 2 -> 1 (a negative) beats 0 -> 1
GRID = np.array([0.0, 0.25, 0.5, 0.75, 1.0])


def _sk(W):
    off = ~np.eye(3, dtype=bool)
    y, s = (B != 0)[off].astype(int), np.abs(W)[off]
    return y, s


def _tpr_at(fpr, tpr, g):  # largest TPR of a sklearn ROC point with FPR <= g, by brute force
    return max(t for f, t in zip(fpr, tpr) if f <= g + 1e-15)


def _prec_at(prec, rec, r):  # largest precision of a sklearn PR point with recall >= r
    return max(p for p, q in zip(prec, rec) if q >= r - 1e-15)


def test_curves_on_grid_read_sklearn_curves_at_the_grid_points():
    # Hand-worked seed 2: scores of the 6 pairs (0->1 .3, 0->2 0, 1->0 0, 1->2 .8, 2->0 0, 2->1 .6):
    # order .8 (pos), .6 (neg), .3 (pos), then three zeros (neg). ROC points (0,0),(0,.5),(.25,.5),
    # (.25,1),(1,1): TPR at FPR 0 is .5, at FPR >= .25 it is 1. AUROC = (.5*.25 + 1*.75) = 0.875.
    c2 = curves_on_grid(B, W2, GRID)
    assert c2["roc_tpr"] == [0.5, 1.0, 1.0, 1.0, 1.0]
    assert c2["auroc"] == pytest.approx(0.875)
    # precision at recall >= r: recall .5 reached at precision 1 (first pick), recall 1 at 2/3.
    assert c2["pr_precision"] == pytest.approx([1.0, 1.0, 1.0, 2 / 3, 2 / 3])
    # AUPRC (average precision) = .5 * 1 + .5 * 2/3 = 5/6
    assert c2["auprc"] == pytest.approx(5 / 6)
    for W in (W1, W2):
        y, s = _sk(W)
        fpr, tpr, _ = roc_curve(y, s)
        prec, rec, _ = precision_recall_curve(y, s)
        c = curves_on_grid(B, W, GRID)
        assert c["roc_tpr"] == [_tpr_at(fpr, tpr, g) for g in GRID]
        assert c["pr_precision"] == [_prec_at(prec, rec, r) for r in GRID]
        assert c["auroc"] == roc_auc_score(y, s) and c["auprc"] == average_precision_score(y, s)


def test_bands_are_mean_and_std_of_per_seed_sklearn_curves():
    per_seed = []
    for W in (W1, W2):
        y, s = _sk(W)
        fpr, tpr, _ = roc_curve(y, s)
        prec, rec, _ = precision_recall_curve(y, s)
        per_seed.append(([_tpr_at(fpr, tpr, g) for g in GRID], [_prec_at(prec, rec, r) for r in GRID],
                         roc_auc_score(y, s), average_precision_score(y, s)))
    bands = bands_over_seeds([curves_on_grid(B, W, GRID) for W in (W1, W2)], GRID)
    tprs = np.array([p[0] for p in per_seed])
    precs = np.array([p[1] for p in per_seed])
    np.testing.assert_allclose(bands["tpr_mean"], tprs.mean(axis=0))
    np.testing.assert_allclose(bands["tpr_std"], tprs.std(axis=0, ddof=1))
    np.testing.assert_allclose(bands["precision_mean"], precs.mean(axis=0))
    np.testing.assert_allclose(bands["precision_std"], precs.std(axis=0, ddof=1))
    # by hand: seed 1 has TPR 1 everywhere, seed 2 has .5 at FPR 0 -> mean .75, std |1-.5|/sqrt 2
    assert bands["tpr_mean"][0] == pytest.approx(0.75)
    assert bands["tpr_std"][0] == pytest.approx(0.5 / math.sqrt(2))
    assert bands.attrs["auroc_mean"] == pytest.approx((1.0 + 0.875) / 2)
    assert bands.attrs["auroc_std"] == pytest.approx(0.125 / math.sqrt(2))
    assert bands.attrs["auprc_mean"] == pytest.approx((1.0 + 5 / 6) / 2)
    assert bands.attrs["n_seeds"] == 2
    one = bands_over_seeds([curves_on_grid(B, W1, GRID)], GRID)  # one seed: no spread
    assert np.all(one["tpr_std"] == 0) and one.attrs["auroc_std"] == 0


def test_default_grid_and_no_edge_truth():
    c = curves_on_grid(B, W1)
    assert len(c["roc_tpr"]) == len(c["pr_precision"]) == CURVE_GRID.size == 101
    empty = curves_on_grid(np.zeros((3, 3)), W1)
    assert math.isnan(empty["auroc"]) and all(math.isnan(v) for v in empty["roc_tpr"])
    assert bands_over_seeds([empty]).attrs["n_seeds"] == 0
    with pytest.raises(ValueError, match="grid"):
        curves_on_grid(B, W1, [0.5, 0.2])


def test_executor_rows_carry_curves_of_the_raw_weights():
    from colide_core import CoLiDE
    from colide_core.run.executor import data_task, synthetic_task
    from colide_core.data.simulate import simulate_dataset

    spec = {"n_nodes": 5, "n_samples": 200, "degree": 2.0}
    row = synthetic_task("CoLiDE-EV", {}, spec, 3, curves=True)
    data = simulate_dataset(spec, 3)
    W = CoLiDE("ev").fit(data.X).W_  # the raw weights, not the thresholded DAG
    assert row["roc_tpr"] == curves_on_grid(data.B_true, W)["roc_tpr"]
    assert row["auroc"] == curves_on_grid(data.B_true, W)["auroc"]
    assert "roc_tpr" not in synthetic_task("CoLiDE-EV", {}, spec, 3)  # rows stay as they were by default
    row2 = data_task("CoLiDE-EV", {}, data.X, 0, B_true=data.B_true, return_W=False, curves=True)
    assert row2["pr_precision"] == curves_on_grid(data.B_true, W)["pr_precision"] and "W" not in row2


def test_compare_rows_bands_and_figure():
    from dashboard import comparison as cmp
    rows = pd.DataFrame([
        {"method": "A<b>", "seed": 0, "error": None, "auroc": 1.0, "auprc": 1.0,
         **curves_on_grid(B, W1), "time": 0.1},
        {"method": "A<b>", "seed": 1, "error": None, **curves_on_grid(B, W2), "time": 0.1},
        {"method": "A<b>", "seed": 2, "error": "boom", "auroc": np.nan, "auprc": np.nan,
         "roc_tpr": None, "pr_precision": None, "time": np.nan},
    ])
    bands = cmp.curve_bands(rows)
    assert list(bands) == ["A<b>"] and bands["A<b>"].attrs["n_seeds"] == 2
    fig = cmp.band_figure(bands, "roc")
    names = [t.name for t in fig.data if t.showlegend is not False]
    assert names[0] == "A&lt;b&gt; (AUROC 0.938 ± 0.088, 2 seeds)" and names[-1] == "chance"


@pytest.mark.usefixtures("fresh_caches")
def test_compare_page_draws_bands_over_seeds(new_app):
    import colide_core
    from dashboard import comparison as cmp
    from dashboard.simulation import SimConfig, simulate_arrays

    quick = {"max_iter": (1000, 1000, 1000, 2000)}
    at = new_app().run()
    at.switch_page("pages/compare.py").run()
    at.session_state["solver_overrides"] = dict(quick)
    at.session_state["sim_d"] = 5
    at.multiselect(key="cmp_methods").set_value(["CoLiDE-NV"])
    at.number_input(key="cmp_reps").set_value(2)
    at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    rows = at.session_state["compare_results"]["rows"]
    # each run's curve is the one of CoLiDE-NV's raw W on that seed's data
    direct = []
    for seed in (0, 1):
        X, W, _ = simulate_arrays(SimConfig(d=5), seed)
        W_raw = colide_core.CoLiDE("nv", threshold=0.3, **quick).fit(X).W_
        direct.append(curves_on_grid((W != 0).astype(float), W_raw))
    assert [r for r in rows["roc_tpr"]] == [c["roc_tpr"] for c in direct]
    bands = cmp.curve_bands(rows)["CoLiDE-NV"]
    np.testing.assert_allclose(bands["tpr_mean"], np.mean([c["roc_tpr"] for c in direct], axis=0))
    assert bands.attrs["auroc_mean"] == pytest.approx(np.mean([c["auroc"] for c in direct]))
    charts = at.get("plotly_chart")
    assert len(charts) == 3  # summary, ROC, PR
    assert any("|W| as an edge score" in h.value for h in at.subheader)
