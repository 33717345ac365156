"""The Predict page against the true SEM (issue 49, point 3): where the data's SEM is known
(simulated data, bnlearn networks), the table has the true shift of the same intervention beside
doing and seeing, with their errors, and "Run it" runs on networks too (their intercepts and noise
variances), its refit drawn under a heading."""
import numpy as np
import pandas as pd
import pytest

from colide_core.evaluation.interventions import intervention_table
from dashboard.data import make_dataset, transformed_dataset
from dashboard.live import thresholded
from dashboard.planning import TRUE_COLUMNS, prediction_frame, true_sem, with_truth
from dashboard.infra.text import md_escape
from tests._apps import open_predict
from tests._schedules import QUICK

#: A short schedule on the fast solver: the graph does not matter here, only that the page compares
#: its fit with the truth through the library.
FAST = {**dict(QUICK), "solver": "fast"}


def _chain(n=400, seed=0):
    """X0 -> X1 -> X2 with weights a = 2 and b = -1.5, intercepts (1, -2, 0.5), unit noise."""
    a, b = 2.0, -1.5
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, 3))
    x0 = 1.0 + z[:, 0]
    x1 = a * x0 - 2.0 + z[:, 1]
    x2 = b * x1 + 0.5 + z[:, 2]
    W = np.array([[0, a, 0], [0, 0, b], [0, 0, 0.0]])
    X = pd.DataFrame({"X0": x0, "X1": x1, "X2": x2})
    return make_dataset("chain", X, B_true=(W != 0).astype(int), sigma_true=np.ones(3), source="simulated",
                        meta={"W_true": W, "seed": 0, "config": {"noise": "gaussian"}}), a, b


def test_the_true_column_is_the_closed_form_on_a_chain():
    ds, a, b = _chain()
    X = ds.X
    mu, sd = X.mean().to_numpy(), X.std(ddof=1).to_numpy()
    sem = true_sem(ds)
    W = sem["W"]
    # shift X0 by delta: in x = xW + c + e the means solve mu = c (I - W)^-1, so adding delta to c0
    # moves X0 by delta, X1 by a delta, X2 by b (a delta): the total effects along the chain
    delta = 0.7 * sd[0]
    got = intervention_table(W, X, shift={"X0": delta}).table["shift_sd"].to_numpy()
    np.testing.assert_allclose(got, np.array([delta, a * delta, a * b * delta]) / sd, rtol=1e-12)
    # do(X1 = v): X1's equation becomes X1 = v, its parent X0 keeps its mean (shift 0), X1 moves by
    # v - mu1 and X2 = b X1 + c2 by b (v - mu1), whatever the intercepts
    v = mu[1] + 1.3 * sd[1]
    true_pred = intervention_table(W, X, do={"X1": v})
    np.testing.assert_allclose(true_pred.table["shift_sd"].to_numpy(),
                               np.array([0.0, v - mu[1], b * (v - mu[1])]) / sd, rtol=1e-9, atol=1e-12)
    # a wrong fit, X1 -> X0 and X1 -> X2 (the chain's first edge reversed): doing still moves X2 by
    # its weight, and the errors are the differences with the truth, in sd of each node
    W_fit = np.array([[0, 0, 0], [1.0, 0, -1.2], [0, 0, 0]])
    pred = intervention_table(W_fit, X, do={"X1": v})
    frame, summary = with_truth(prediction_frame(pred), pred, true_pred, W)
    assert list(frame.columns[-3:]) == list(TRUE_COLUMNS)
    true_sd = np.array([0.0, v - mu[1], b * (v - mu[1])]) / sd
    doing = np.array([(v - mu[1]) / sd[0], (v - mu[1]) / sd[1], -1.2 * (v - mu[1]) / sd[2]])
    np.testing.assert_allclose(frame["shift (sd), true"], true_sd.round(3), atol=1e-9)
    np.testing.assert_allclose(frame["error of doing (sd)"], (doing - true_sd).round(3), atol=1e-9)
    seeing = pred.table["associational_shift"].to_numpy() / sd
    np.testing.assert_allclose(frame["error of seeing (sd)"], (seeing - true_sd).round(3), atol=1e-9)
    # X1's one descendant is X2: the RMSE over it is the absolute error there
    assert summary.startswith(f"doing's error: RMSE {abs(doing[2] - true_sd[2]):.3g} sd over the 1 descendant "
                              f"of X1 in the true graph; seeing's: {abs(seeing[2] - true_sd[2]):.3g} sd")
    # X2 has no descendant: the summary says so and takes the other nodes
    _, last = with_truth(prediction_frame(pred), *(intervention_table(M, X, shift={"X2": sd[2]}) for M in (W_fit, W)),
                         W)
    assert "X2 has no descendant in the true graph" in last


def test_true_sem_follows_the_transforms():
    ds, _, _ = _chain()
    assert true_sem(ds)["intercepts"] is None  # a simulation's meta has none: noise of mean 0
    std = transformed_dataset(ds, "standardize")
    sd = ds.X.to_numpy().std(axis=0)
    sem = true_sem(std)
    np.testing.assert_allclose(sem["W"], ds.meta["W_true"] * sd[:, None] / sd[None, :])
    np.testing.assert_allclose(sem["noise_var"], 1 / sd ** 2)
    assert true_sem(transformed_dataset(ds, "asinh")) is None  # not linear in the columns any more
    assert true_sem(make_dataset("no truth", ds.X)) is None
    assert true_sem(make_dataset("wrong size", ds.X, meta={"W_true": np.zeros((2, 2))})) is None


def _predict_page(new_app, ds):
    return open_predict(new_app, ds, FAST)


def _check_truth_column(at, node):
    ds = at.session_state["dataset"]
    res = at.session_state["fit_results"]["nv"]
    names = list(ds.node_names)
    A = thresholded(res, 0.3, names)
    sd = float(ds.X[node].std(ddof=1))
    kw = {"shift": {node: sd}}  # the page's default: k = 1 sd
    pred = intervention_table(A, ds.X, **kw)
    true_pred = intervention_table(ds.meta["W_true"], ds.X, **kw)
    [table] = [d.value for d in at.dataframe if "shift (sd), true" in d.value.columns]
    np.testing.assert_allclose(table["shift (sd), true"], true_pred.table["shift_sd"].round(3), atol=1e-9)
    np.testing.assert_allclose(table["error of doing (sd)"],
                               (pred.table["shift_sd"] - true_pred.table["shift_sd"]).round(3), atol=1e-9)
    assert table.loc[node, "shift (sd), true"] == pytest.approx(1.0)
    _, summary = with_truth(prediction_frame(pred), pred, true_pred, ds.meta["W_true"])
    assert any(md_escape(summary) in m.value for m in at.markdown), [m.value for m in at.markdown][:5]
    return A


def _run_it(at, rows):
    from dashboard.planning import try_experiment

    at.number_input(key="plan_n_boot").set_value(2).run()
    at.button(key="plan_run").click().run()
    assert not at.exception, at.exception
    assert at.session_state["plan_result"] is not None, at.session_state["plan_messages"]
    pick = at.session_state["plan_pick"]
    at.number_input(key="plan_try_rows").set_value(rows).run()
    at.button(key="plan_try").click().run()
    assert not at.exception, at.exception
    tried = at.session_state["plan_try_result"]
    assert tried is not None, at.session_state["plan_try_messages"]
    ds = at.session_state["dataset"]
    res = at.session_state["fit_results"]["nv"]
    A = thresholded(res, 0.3, list(ds.node_names))
    direct = try_experiment(ds, dict(res.params), 0.3, pick, rows, before=A, W_init=res.W)
    assert (tried["shd_before"], tried["shd_after"]) == (direct["shd_before"], direct["shd_after"])
    np.testing.assert_array_equal(tried["A_after"], direct["A_after"])
    heading = f"After do({md_escape(pick)}): CoLiDE-NV refit on {len(ds.X):,} + {rows:,} rows"
    assert any(m.value == f"##### {heading}" for m in at.markdown), [m.value for m in at.markdown][-3:]
    return pick


def test_simulated_data_show_the_truth_and_run_it(new_app):
    from dashboard.simulation import SimConfig, simulate_dataset

    ds = simulate_dataset(SimConfig(d=5, n=300, variance="NV"), 3)
    at = _predict_page(new_app, ds)
    _check_truth_column(at, ds.node_names[0])
    _run_it(at, 100)


def test_a_network_shows_the_truth_and_runs_it_with_its_intercepts(new_app, monkeypatch):
    # pgmpy-no-torch (the networks extra) is pinned in requirements.txt: no skip when it is missing
    from colide_core.evaluation import experiment
    from dashboard.data import network_dataset

    ds = network_dataset("ecoli70", 120, 0)
    assert ds.meta["intercepts"] is not None and np.any(ds.meta["intercepts"] != 0)
    at = _predict_page(new_app, ds)
    _check_truth_column(at, ds.node_names[0])
    # "Run it" draws from the network's SEM, with its intercepts and noise variances
    seen = []
    real = experiment.run_experiment

    def spy(*args, **kwargs):
        seen.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr("dashboard.planning.run_experiment", spy)
    _run_it(at, 60)
    np.testing.assert_array_equal(seen[0]["intercepts"], ds.meta["intercepts"])
    np.testing.assert_allclose(seen[0]["noise_var"], np.asarray(ds.sigma_true) ** 2)
