"""Predicted interventions (issue 40, point 1): hand-worked linear SEMs, then a fitted model.

Convention: W[i, j] != 0 means i -> j; X is (n_samples, n_nodes); x = x W + c + e.
"""
import numpy as np
import pytest

import colide_core
from colide_core.evaluation import interventions
from colide_core.evaluation.interventions import (associational_shift, intervention_means,
                                                  predict_intervention)
from colide_core.exceptions import RunSettingsError  # noqa: F401 - an InvalidParameterError subclass
from colide_core._params import InvalidParameterError


def test_chain_do_and_shift_by_hand():
    # 0 -> 1 -> 2, weights 2 and 3, intercepts (1, 0, -1): mu = (1, 2, 5).
    W = np.array([[0, 2.0, 0], [0, 0, 3.0], [0, 0, 0]])
    c = np.array([1.0, 0.0, -1.0])
    np.testing.assert_allclose(intervention_means(W, c), [1, 2, 5])
    # do(x1 = 10): 1's equation cut; x0 keeps its mean 1, x2 = 3 * 10 - 1 = 29
    np.testing.assert_allclose(intervention_means(W, c, do={1: 10.0}), [1, 10, 29])
    # shift x0 by +1: x1 moves by 2, x2 by 2 * 3 = 6 (the total effect)
    np.testing.assert_allclose(intervention_means(W, c, shift={0: 1.0}), [2, 4, 11])


def test_collider_do_on_the_collider_moves_nothing_upstream():
    # 0 -> 2 <- 1 (weights 1.5 and -2): setting x2 leaves its causes alone; shifting x1 by 1
    # moves x2 by -2.
    W = np.array([[0, 0, 1.5], [0, 0, -2.0], [0, 0, 0]])
    c = np.array([0.5, 1.0, 0.0])
    base = intervention_means(W, c)
    np.testing.assert_allclose(intervention_means(W, c, do={2: 7.0}) - base, [0, 0, 7 - base[2]])
    np.testing.assert_allclose(intervention_means(W, c, shift={1: 1.0}) - base, [0, 1, -2])


def test_seeing_is_not_doing_on_a_confounded_pair():
    # A hidden U drives x0 and x1 (x0 = U + e0, x1 = U + e1, all unit variance); no edge between
    # them. Seeing x0 one unit higher predicts x1 higher by cov/var = 1/2; doing it moves x1 by 0.
    rng = np.random.default_rng(0)
    u = rng.standard_normal(20000)
    X = np.column_stack([u + rng.standard_normal(20000), u + rng.standard_normal(20000)])
    seen = associational_shift(X, 0, X[:, 0].mean() + 1.0)
    assert seen[1] == pytest.approx(0.5, abs=0.03) and seen[0] == pytest.approx(1.0)
    done = intervention_means(np.zeros((2, 2)), X.mean(axis=0), do={0: X[:, 0].mean() + 1.0}) - X.mean(axis=0)
    assert done[1] == 0.0


def test_refusals():
    W = np.zeros((2, 2))
    with pytest.raises(InvalidParameterError, match="node index 5 is out of range"):  # the one lookup
        intervention_means(W, np.zeros(2), do={5: 1.0})
    with pytest.raises(InvalidParameterError, match="finite"):
        intervention_means(W, np.zeros(2), do={0: float("nan")})
    with pytest.raises(InvalidParameterError, match="both set"):
        intervention_means(W, np.zeros(2), do={0: 1.0}, shift={0: 1.0})
    with pytest.raises(ValueError, match="DAG"):
        intervention_means(np.array([[0, 1.0], [1.0, 0]]), np.zeros(2))
    with pytest.raises(InvalidParameterError, match="fitted"):
        predict_intervention(colide_core.CoLiDE(), np.zeros((5, 2)), do={0: 1.0})


def test_a_fitted_model_recovers_a_simulated_chain_and_its_intervals_cover():
    # x0 ~ N(3, 1); x1 = 2 x0 + N(0, 1); x2 = -1.5 x1 + N(0, 1), EV data: CoLiDE-EV finds the chain,
    # and do(x0 = mean + 1) moves x1 by 2 and x2 by -3 (the product of the weights).
    rng = np.random.default_rng(1)
    n = 2000
    x0 = 3 + rng.standard_normal(n)
    x1 = 2 * x0 + rng.standard_normal(n)
    x2 = -1.5 * x1 + rng.standard_normal(n)
    X = np.column_stack([x0, x1, x2])
    model = colide_core.CoLiDE("ev").fit(X)
    pred = predict_intervention(model, X, do={0: X[:, 0].mean() + 1}, n_bootstrap=20, random_state=0)
    t = pred.table
    # least-squares weights on the learned chain (the default): each is the sample slope, so the
    # shift is the product of the two slopes, the truth up to sampling error (2000 rows)
    slopes = [np.polyfit(X[:, 0], X[:, 1], 1)[0], np.polyfit(X[:, 1], X[:, 2], 1)[0]]
    assert t["shift"].tolist() == pytest.approx([1.0, slopes[0], slopes[0] * slopes[1]], rel=1e-9)
    assert t["shift"].tolist() == pytest.approx([1.0, 2.0, -3.0], rel=0.02)
    # the fit's own weights are shrunk by the L1 penalty (λ = 0.05 on each: measured -2.86 for -3)
    shrunk = predict_intervention(model, X, do={0: X[:, 0].mean() + 1}, weights="fit").table["shift"]
    assert shrunk.tolist() == pytest.approx([1.0, 2.0, -3.0], rel=0.06) and abs(shrunk.iloc[2]) < 3 * 0.99
    # the bootstrap interval is of the plug-in estimate: it covers the estimate
    assert (t["low"] <= t["shift"]).all() and (t["high"] >= t["shift"]).all()
    assert (t["high"] - t["low"]).iloc[1:].max() < 0.5
    assert pred.n_bootstrap == 20 and pred.do == {"X0": pytest.approx(X[:, 0].mean() + 1)}
    # seeing x1 (a mediator) high says x0 was high too; doing it leaves x0 alone
    mid = predict_intervention(model, X, do={1: X[:, 1].mean() + 1}).table
    assert mid.loc["X0", "shift"] == pytest.approx(0.0, abs=1e-9) and mid.loc["X0", "associational_shift"] > 0.1


def test_conditions_give_the_reference_means_and_resample_within():
    rec = colide_core.load_sachs(rows="all", return_record=True)
    model = colide_core.CoLiDE("nv", max_iter=(300, 300, 300, 600)).fit(rec.X, conditions=rec.conditions,
                                                                         targets=rec.targets)
    pred = predict_intervention(model, rec.X, shift={"Raf": 10.0}, conditions=rec.conditions, n_bootstrap=2,
                                random_state=0)
    labels = np.asarray(rec.conditions)
    first = labels == labels[0]
    np.testing.assert_allclose(pred.table["reference_mean"], rec.X[first].mean(axis=0))
    assert pred.table.loc["Raf", "shift"] == pytest.approx(10.0)
    assert pred.samples.shape == (2, 11)


def test_cli_predict_writes_the_library_prediction(tmp_path, monkeypatch):
    import pandas as pd

    from colide_core.run.cli import main

    rng = np.random.default_rng(2)
    x0 = rng.standard_normal(800)
    X = pd.DataFrame({"a": x0, "b": 2 * x0 + rng.standard_normal(800)})
    X.to_csv(tmp_path / "d.csv", index=False)
    monkeypatch.chdir(tmp_path)
    assert main(["predict", "d.csv", "--out", "o", "--shift", "a=1", "--variant", "ev"]) == 0
    got = pd.read_csv(tmp_path / "o" / "prediction.csv", index_col="node")
    model = colide_core.CoLiDE("ev").fit(X)
    want = predict_intervention(model, X, shift={"a": float(X["a"].std(ddof=1))}).table
    np.testing.assert_allclose(got["shift"], want["shift"], rtol=1e-9)
    assert got.loc["b", "shift_sd"] == pytest.approx(want.loc["b", "shift_sd"])
    # the fit's manifest records the prediction it made; it reloads as a manifest of the same fit
    from colide_core.run.manifest import load_manifest

    man = load_manifest(tmp_path / "o" / "manifest.json")
    rec = man.raw["extra"]["prediction"]
    assert rec["intervention"]["given"] == "shift" and rec["intervention"]["value"] == 1.0
    assert rec["intervention"]["shift"] == {"a": pytest.approx(float(X["a"].std(ddof=1)))}
    assert rec["weights"] == "refit" and rec["n_bootstrap"] == 0
    np.testing.assert_allclose(rec["table"]["shift"], want["shift"], rtol=1e-9)
    np.testing.assert_allclose(man.W, model.W_, atol=1e-12)
    for bad, words in ((["--do", "zz=1"], "unknown node"), (["--shift", "a=x"], "NODE=NUMBER")):
        with pytest.raises(SystemExit) as exc:
            main(["predict", "d.csv", "--out", "o2", *bad])
        assert exc.value.code == 2


def test_cli_predict_refuses_an_overflowing_intervention_before_the_fit(tmp_path, monkeypatch, capsys):
    # issue 53, low 3: `--shift a=1e308` was refused only after the fit (21 s on Sachs), when
    # K x sd overflowed. Now it is refused first: no fit runs (a counting fit shows 0 calls), exit 2,
    # with the library's sentence; a do 1e7 sd away is refused the same way.
    import pandas as pd

    from colide_core.run.cli import main

    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.standard_normal(200), "b": rng.standard_normal(200)})
    X.to_csv(tmp_path / "d.csv", index=False)
    monkeypatch.chdir(tmp_path)
    calls = []
    monkeypatch.setattr(colide_core.CoLiDE, "fit", lambda self, *a, **k: calls.append(1) or self)
    for bad in (["--shift", "a=1e308"], ["--do", "b=1e7"], ["--do", "b=inf"]):
        with pytest.raises(SystemExit) as exc:
            main(["predict", "d.csv", "--out", "o", *bad])
        assert exc.value.code == 2
        assert "standard deviations" in capsys.readouterr().err or bad[1] == "b=inf"
    assert calls == []


def test_refit_weights_by_hand_within_conditions_and_masked():
    from colide_core.evaluation.interventions import refit_weights

    # Condition "x": a = (-1, 1), b = 2a; condition "y": a = (9, 11), b = 2a - 100. Within each
    # condition the slope of b on a is exactly 2; pooled (one intercept) it is not: the pooled
    # points (-1,-2), (1,2), (9,-82), (11,-78) give a negative slope.
    a = np.array([-1.0, 1.0, 9.0, 11.0])
    b = np.array([-2.0, 2.0, -82.0, -78.0])
    X = np.column_stack([a, b])
    support = [[0, 0.1], [0, 0]]  # a -> b, with a shrunk weight: only the support counts
    assert refit_weights(support, X, conditions=["x", "x", "y", "y"])[0, 1] == pytest.approx(2.0)
    assert refit_weights(support, X)[0, 1] < 0
    # Condition "z" intervenes on b (b set at will, (50, -50)): its rows leave b's equation, so the
    # slope stays 2 with them present and is far from 2 if they are not masked.
    X3 = np.vstack([X, [[0.0, 50.0], [2.0, -50.0]]])
    conds = ["x", "x", "y", "y", "z", "z"]
    assert refit_weights(support, X3, conditions=conds, targets={"z": [1]})[0, 1] == pytest.approx(2.0)
    assert refit_weights(support, X3, conditions=conds)[0, 1] < 0
    # no parents, no weights; the caller's array is left alone
    before = X3.copy()
    assert not refit_weights(np.zeros((2, 2)), X3).any()
    np.testing.assert_array_equal(X3, before)


def test_refit_weights_undo_the_l1_shrinkage_of_a_prediction():
    # x1 = 2 x0 + noise, fitted with a heavy L1 weight (lambda1 = 0.5) that shrinks the edge: the
    # plug-in with the fit's weights under-predicts the shift of x1 under shift x0 += 1, the refit
    # predicts the least-squares slope (np.polyfit), which is 2 up to the noise.
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal(3000)
    X = np.column_stack([x0, 2 * x0 + rng.standard_normal(3000)])
    model = colide_core.CoLiDE("ev", lambda1=0.5).fit(X)
    assert model.adjacency_[0, 1] != 0
    fit = predict_intervention(model, X, shift={0: 1.0}, weights="fit").table
    refit = predict_intervention(model, X, shift={0: 1.0}).table  # weights="refit", the default
    slope = np.polyfit(X[:, 0], X[:, 1], 1)[0]
    assert refit.loc["X1", "shift"] == pytest.approx(slope, rel=1e-9)
    assert fit.loc["X1", "shift"] < slope - 0.1
    with pytest.raises(InvalidParameterError, match="weights must be one of"):
        predict_intervention(model, X, shift={0: 1.0}, weights="ols")


def test_predictions_from_a_topo_fit():
    # CoLiDE-TOPO fits the same chain x0 -> x1 (weight 2, EV): its adjacency_ is the SEM, and with
    # least-squares weights the shift of x1 under shift x0 += 1 is the sample slope, as for the fast solver.
    rng = np.random.default_rng(4)
    x0 = rng.standard_normal(1500)
    X = np.column_stack([x0, 2 * x0 + rng.standard_normal(1500)])
    model = colide_core.CoLiDE("ev", solver="topo").fit(X)
    assert model.adjacency_[0, 1] != 0 and model.adjacency_[1, 0] == 0
    t = predict_intervention(model, X, shift={0: 1.0}, n_bootstrap=3, random_state=0).table
    assert t.loc["X1", "shift"] == pytest.approx(np.polyfit(X[:, 0], X[:, 1], 1)[0], rel=1e-9)
    assert (t["low"] <= t["high"]).all()


def test_any_cycle_is_refused_even_when_i_minus_w_is_invertible():
    # 0 <-> 1 with weights 0.5: I - W has determinant 1 - 0.25 != 0, so a solve would return numbers
    with pytest.raises(ValueError, match="cycle"):
        intervention_means(np.array([[0, 0.5], [0.5, 0]]), np.zeros(2))
    with pytest.raises(ValueError, match="cycle"):
        intervention_means(np.array([[0.5, 0], [0, 0]]), np.zeros(2))  # a self-loop


def test_refit_weights_from_sufficient_statistics_equals_per_node_least_squares():
    # a random 6-node DAG, 3 conditions, two with targets: the Gram-matrix solve is each node's
    # lstsq on its unmasked rows, centred within conditions (the definition), to rounding
    from colide_core.data.conditions import centre_by_condition

    rng = np.random.default_rng(5)
    n, d = 600, 6
    X = rng.standard_normal((n, d)) @ np.triu(rng.uniform(0.5, 1.5, (d, d)), 1) + rng.standard_normal((n, d))
    X[:200] += 5.0
    conds = np.array(["a"] * 200 + ["b"] * 200 + ["c"] * 200)
    targets = {"b": [2], "c": [2, 4]}
    support = np.triu(rng.random((d, d)) < 0.6, 1).astype(float)
    got = interventions.refit_weights(support, X, conditions=conds, targets=targets)
    Xc = centre_by_condition(X, conds)
    for j in range(d):
        pa = np.flatnonzero(support[:, j])
        rows = ~((conds != "a") & (j == 2)) & ~((conds == "c") & (j == 4))
        if pa.size:
            np.testing.assert_allclose(got[pa, j], np.linalg.lstsq(Xc[rows][:, pa], Xc[rows, j], rcond=None)[0],
                                       rtol=1e-8, atol=1e-10)
    assert not got[support == 0].any()


def test_seeing_and_doing_read_the_same_rows_and_centring():
    # Condition "x": a = (-1, 1), b = (-1, 1) (slope 1); condition "y": a = (9, 11), b = (-76, -70)
    # (slope 3 about its own means). Within-condition pooled: Sab = 1 + 1 + 3 + 3 = 8, Saa = 4: slope
    # 2, the least-squares weight of a -> b too. So seeing a at its reference mean + 1 predicts b + 2,
    # exactly what doing predicts: a root with one child, no confounding. (Regressing within "x"
    # alone, as before, gave 1.)
    import pandas as pd

    X = pd.DataFrame({"a": [-1.0, 1.0, 9.0, 11.0], "b": [-1.0, 1.0, -76.0, -70.0]})
    conds = ["x", "x", "y", "y"]
    W = interventions.refit_weights([[0, 1.0], [0, 0]], X, conditions=conds)
    assert W[0, 1] == pytest.approx(2.0)
    t = interventions.intervention_table(W, X, shift={"a": 1.0}, conditions=conds).table
    assert t.loc["b", "shift"] == pytest.approx(2.0) and t.loc["b", "associational_shift"] == pytest.approx(2.0)
    assert t.loc["a", "reference_mean"] == 0.0  # the first condition's mean


def test_float_noise_is_zero_and_huge_values_are_refused_before_any_fit():
    import pandas as pd

    # means near 91 (as P38 on Sachs): the solve leaves ~1e-14 on the nodes the intervention does
    # not reach; they read exactly 0 (a -> b, c alone)
    rng = np.random.default_rng(6)
    a = 91 + rng.standard_normal(300)
    X = pd.DataFrame({"a": a, "b": 0.7 * a + rng.standard_normal(300) + 13.3, "c": 57.1 + rng.standard_normal(300)})
    W = np.array([[0, 0.7, 0], [0, 0, 0], [0, 0, 0.0]])
    t = interventions.intervention_table(W, X, do={"b": 200.0}).table
    assert t.loc["a", "shift"] == 0.0 and t.loc["c", "shift"] == 0.0 and t.loc["c", "shift_sd"] == 0.0
    assert t.loc["c", "predicted_mean"] == t.loc["c", "reference_mean"]
    # beyond 1e6 sd, or not a float at all: one sentence, and no estimator is ever fitted

    class Refuses(colide_core.CoLiDE):
        def fit(self, *args, **kwargs):  # pragma: no cover - reaching it fails the test
            raise AssertionError("fitted before the value was checked")

    for bad in ({"do": {"a": 1e308}}, {"shift": {"a": 2e6 * float(X["a"].std())}}, {"do": {"a": 10 ** 400}},
                {"do": {"a": float("inf")}}):
        with pytest.raises(InvalidParameterError, match="standard deviations|finite number"):
            interventions.bootstrap_shifts(Refuses(), X, n_bootstrap=2, **bad)
        with pytest.raises(InvalidParameterError, match="standard deviations|finite number"):
            interventions.intervention_table(W, X, **bad)


def test_bootstrap_shifts_use_bootstrap_edges_resamples_with_prior_knowledge_and_conditions():
    # Named prior knowledge (forbid b -> a), three conditions, one with a target: the refits keep
    # the names (a bare array would refuse the named constraint) and resample as bootstrap_edges
    # does: with the fit's weights, each shift is the plug-in on bootstrap_edges' own graph.
    import pandas as pd

    from colide_core.evaluation.stability import bootstrap_edges

    rng = np.random.default_rng(7)
    n = 300
    a = rng.standard_normal(n)
    b = 1.5 * a + rng.standard_normal(n)
    X = pd.DataFrame({"a": a, "b": b, "c": -b + rng.standard_normal(n)})
    conds = np.array(["obs"] * 100 + ["u"] * 100 + ["v"] * 100)
    X.loc[conds == "v", "b"] = rng.standard_normal(100)  # v sets b at will
    targets = {"v": ["b"]}
    est = colide_core.CoLiDE("ev", forbidden=[("b", "a")], max_iter=(200, 200, 200, 400))
    got = interventions.bootstrap_shifts(est, X, shift={"a": 1.0}, conditions=conds, targets=targets, n_bootstrap=3,
                                         random_state=11, weights="fit")
    boot = bootstrap_edges(X, est, n_boot=3, random_state=11, conditions=conds, targets=targets)
    assert got.shape == (3, 3) and boot.n_ok == 3
    want = [intervention_means(Wb, np.zeros(3), shift={0: 1.0}) for Wb in boot.adjacency_samples]
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert (boot.adjacency_samples[:, 1, 0] == 0).all()
    # a model fitted with that knowledge predicts with intervals, the design taken from the model
    model = est.fit(X, conditions=conds, targets=targets)
    pred = predict_intervention(model, X, shift={"a": 1.0}, conditions=conds, n_bootstrap=3, random_state=11)
    assert pred.weights == "refit" and pred.samples.shape == (3, 3)  # EV: least squares by default
    # Stop inside a refit: the callback is heard at the fit's checkpoints, the unfinished refit dropped
    calls = []

    def stop_in_second(done, total):
        calls.append(done)
        return done >= 1

    part = interventions.bootstrap_shifts(est, X, shift={"a": 1.0}, conditions=conds, targets=targets,
                                          n_bootstrap=3, random_state=11, weights="fit", callback=stop_in_second)
    assert part.shape == (1, 3) and calls.count(0) > 1  # heard inside the first refit, stopped in the second
    np.testing.assert_allclose(part[0], want[0], atol=1e-12)


def test_weights_follow_the_variant():
    assert interventions.weights_for("nv") == "fit" and interventions.weights_for("ev") == "refit"
    rng = np.random.default_rng(8)
    x0 = rng.standard_normal(500)
    X = np.column_stack([x0, 2 * x0 + rng.standard_normal(500)])
    nv = colide_core.CoLiDE("nv").fit(X)
    assert predict_intervention(nv, X, shift={0: 1.0}).weights == "fit"
    np.testing.assert_allclose(predict_intervention(nv, X, shift={0: 1.0}).table["shift"],
                               predict_intervention(nv, X, shift={0: 1.0}, weights="fit").table["shift"])
