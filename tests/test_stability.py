"""Bootstrap edge confidence and stability selection (colide_core.evaluation.stability).

Convention: W[i, j] != 0 means i -> j; X has shape (n_samples, n_nodes).
"""
import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, clone

from colide_core import CoLiDE
from colide_core.data.simulate import simulate_dag, simulate_linear_sem, simulate_parameters
from colide_core.evaluation.stability import bootstrap_edges, stability_selection

from tests._schedules import TINY as _TINY  # noqa: E402 - the suite's short schedule
TINY = {**_TINY, "lr": 3e-3}  # a larger step: the tiny schedule then still converges


class MarkerEstimator(BaseEstimator):
    """A stub with a known answer: edge 0 -> 1 (weight 2.0) iff the resample holds the marker row.

    The marker row is the only row whose column 0 equals 100. Edge 1 -> 2 (weight -1.0) is
    always present. sigma_ is the per-column standard deviation (NV-like shape)."""

    def __init__(self, scale=1.0):
        self.scale = scale

    def fit(self, X):
        X = np.asarray(X, dtype=float)
        d = X.shape[1]
        self.adjacency_ = np.zeros((d, d))
        if np.any(X[:, 0] == 100.0):
            self.adjacency_[0, 1] = 2.0 * self.scale
        self.adjacency_[1, 2] = -1.0 * self.scale
        self.sigma_ = X.std(axis=0)
        self.converged_ = True
        return self


def _marker_data(n=20):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(n, 3))
    X[7, 0] = 100.0                                  # the marker row
    return X


def test_frequencies_follow_the_documented_resampling_exactly():
    # Resample b draws its row indices with default_rng(SeedSequence(seed).spawn(B)[b]).integers(0, n, n);
    # the stub's edge 0 -> 1 is present iff row 7 was drawn. So the frequency is known exactly.
    X, n_boot, seed = _marker_data(), 40, 123
    children = np.random.SeedSequence(seed).spawn(n_boot)
    has_marker = [7 in np.random.default_rng(c).integers(0, 20, 20) for c in children]
    res = bootstrap_edges(X, MarkerEstimator(), n_boot=n_boot, random_state=seed)
    assert res.frequency[0, 1] == pytest.approx(np.mean(has_marker))
    assert 0.0 < res.frequency[0, 1] < 1.0          # about 1 - (19/20)^20 = 0.64
    assert res.frequency[1, 2] == 1.0 and res.frequency.sum() == pytest.approx(np.mean(has_marker) + 1.0)
    # bagged weight counts absent as 0: mean 2 * freq; std of a two-point {0, 2} law
    p = np.mean(has_marker)
    assert res.weight_mean[0, 1] == pytest.approx(2.0 * p)
    assert res.weight_std[0, 1] == pytest.approx(2.0 * np.sqrt(p * (1 - p)))
    assert res.weight_mean[1, 2] == -1.0 and res.weight_std[1, 2] == 0.0
    assert res.sigma_samples.shape == (n_boot, 3)
    assert res.n_ok == n_boot and res.n_failed == 0 and not res.stopped


def test_edge_table_and_intervals_hand_worked():
    res = bootstrap_edges(_marker_data(), MarkerEstimator(), n_boot=30, random_state=1)
    B_true = np.zeros((3, 3))
    B_true[2, 1] = 1                                 # the truth has 2 -> 1: our 1 -> 2 is reversed
    table = res.edge_table(B_true=B_true)
    assert list(table["source"]) == ["1", "0"] and list(table["target"]) == ["2", "1"]
    assert list(table["truth"]) == ["reversed", "not in truth"]
    # when present the weight is always exactly 2.0 (edge 0 -> 1) / -1.0 (1 -> 2): degenerate intervals
    assert table.loc[1, "weight"] == 2.0 and table.loc[1, "ci_low"] == 2.0 and table.loc[1, "ci_high"] == 2.0
    assert table.loc[0, "ci_low"] == -1.0
    assert len(res.edge_table(min_frequency=0.99)) == 1
    low, high = res.sigma_interval(0.9)
    assert low.shape == (3,) and np.all(low <= high)
    with pytest.raises(ValueError, match="level"):
        res.edge_table(level=1.5)


def test_bootstrap_is_deterministic_and_independent_of_n_jobs():
    X = pd.DataFrame(simulate_linear_sem(np.array([[0, 1.5, 0], [0, 0, -1.0], [0, 0, 0]]), 200,
                                         random_state=0)[0], columns=["x", "y", "z"])
    est = CoLiDE("nv", **TINY)
    r1 = bootstrap_edges(X, est, n_boot=4, random_state=7)
    r3 = bootstrap_edges(X, est, n_boot=4, random_state=7, n_jobs=2)   # a second run, in 2 processes
    r4 = bootstrap_edges(X, est, n_boot=4, random_state=8)
    np.testing.assert_array_equal(r3.adjacency_samples, r1.adjacency_samples)
    np.testing.assert_array_equal(r3.sigma_samples, r1.sigma_samples)
    assert not np.array_equal(r4.sigma_samples, r1.sigma_samples)
    assert np.all((r1.frequency >= 0) & (r1.frequency <= 1)) and np.all(np.diag(r1.frequency) == 0)
    assert r1.node_names == ["x", "y", "z"] and r1.sigma_samples.shape == (4, 3)
    assert not hasattr(est, "W_")                    # the estimator passed in is never fitted
    ev = bootstrap_edges(X, CoLiDE("ev", **TINY), n_boot=2, random_state=0)
    assert ev.sigma_samples.shape == (2,)


def test_callback_reports_progress_and_can_stop():
    seen = []
    res = bootstrap_edges(_marker_data(), MarkerEstimator(), n_boot=10, random_state=0,
                          callback=lambda done, total: seen.append((done, total)))
    assert seen == [(k, 10) for k in range(1, 11)] and not res.stopped
    res = bootstrap_edges(_marker_data(), MarkerEstimator(), n_boot=10, random_state=0,
                          callback=lambda done, total: done >= 3)
    assert res.stopped and res.n_ok == 3 and res.adjacency_samples.shape[0] == 3


def test_every_true_edge_is_stable_on_a_strong_d8_sem():
    # Acceptance 1: d = 8, ER1.5 (12 edges), weights in +-[1, 2], equal unit noise variances (so
    # CoLiDE-EV's model is right and the DAG identifiable), n = 1000.
    B = simulate_dag(8, 1.5, "er", random_state=0)
    W = simulate_parameters(B, w_ranges=((-2.0, -1.0), (1.0, 2.0)), random_state=0)
    X, _ = simulate_linear_sem(W, 1000, "gaussian", 1.0, random_state=0)
    est = CoLiDE("ev")                       # the default (fast) solver, the paper's schedule
    res = bootstrap_edges(X, est, n_boot=20, random_state=0, n_jobs=2)
    assert B.sum() == 12
    assert res.frequency[B != 0].min() >= 0.9
    assert np.all((res.frequency >= 0) & (res.frequency <= 1))
    # the bagged weights point the right way and are within 30 % of the truth (L1 shrinks them:
    # the full-data fit is off by up to 26 %, with either solver)
    assert np.all(np.sign(res.weight_mean[B != 0]) == np.sign(W[B != 0]))
    assert np.max(np.abs(res.weight_mean[B != 0] - W[B != 0]) / np.abs(W[B != 0])) < 0.3
    assert res.sigma_samples.shape == (20,) and abs(np.median(res.sigma_samples) - 1.0) < 0.1


def test_failed_resamples_are_counted_and_all_failures_raise():
    class Fails(MarkerEstimator):
        def fit(self, X):
            X = np.asarray(X)
            if not np.any(X[:, 0] == 100.0):
                raise FloatingPointError("no marker")
            return super().fit(X)

    res = bootstrap_edges(_marker_data(), Fails(), n_boot=30, random_state=2)
    assert res.n_failed > 0 and res.n_ok + res.n_failed == 30
    assert res.frequency[0, 1] == 1.0                # only resamples with the marker succeeded
    assert all("no marker" in e for e in res.errors)
    with pytest.raises(ValueError, match="Every bootstrap fit failed.*no marker"):
        bootstrap_edges(np.random.default_rng(0).normal(size=(20, 3)), Fails(), n_boot=3, random_state=0)


@pytest.mark.parametrize(
    "kwargs, exc, message",
    [
        ({"n_boot": 0}, ValueError, "n_boot"),
        ({"n_jobs": 0}, ValueError, "n_jobs"),
        ({"random_state": -1}, ValueError, "random_state"),
        ({"random_state": "x"}, ValueError, "random_state"),
        ({"callback": 3}, ValueError, "callable"),
    ],
)
def test_bad_arguments(kwargs, exc, message):
    with pytest.raises(exc, match=message):
        bootstrap_edges(_marker_data(), MarkerEstimator(), **kwargs)


def test_bad_data_and_estimator():
    X = _marker_data()
    X[0, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_edges(X, MarkerEstimator())
    with pytest.raises(TypeError, match="get_params"):
        bootstrap_edges(_marker_data(), object())
    # The fits use sklearn's clone + set_params: a fresh estimator, the original untouched.
    original = CoLiDE("ev", lambda1=0.1)
    copy = clone(original).set_params(lambda1=0.2)
    assert copy.get_params()["lambda1"] == 0.2 and original.lambda1 == 0.1


def test_stability_selection_on_a_chain():
    # x0 -> x1 -> x2 with weights 2 and -2 and equal unit noise (CoLiDE-EV identifies the order).
    W = np.array([[0, 2.0, 0], [0, 0, -2.0], [0, 0, 0]])
    X, _ = simulate_linear_sem(W, 400, "gaussian", 1.0, random_state=3)
    seen = []
    est = CoLiDE("ev", max_iter=(500, 500, 500, 1000), lr=3e-3, checkpoint=100)
    res = stability_selection(X, est, lambdas=[0.05, 0.2], n_subsamples=6, pi_thr=0.6,
                              random_state=0, callback=lambda done, total: seen.append(total))
    assert seen == [12] * 12
    assert res.selection_probability.shape == (2, 3, 3)
    np.testing.assert_array_equal(res.stable, W != 0)
    assert res.n_candidates == 6
    # E[V] <= q^2 / ((2 pi_thr - 1) p) with the estimated q
    assert res.q_hat >= 2
    assert res.expected_false_positives_bound == pytest.approx(res.q_hat ** 2 / ((2 * 0.6 - 1) * 6))
    table = res.stable_edges()
    assert set(zip(table["source"], table["target"])) == {("0", "1"), ("1", "2")}
    # forbidding 0 -> 2 and 2 -> 0 leaves p = 4 candidate edges
    res2 = stability_selection(X, CoLiDE("ev", forbidden=[(0, 2), (2, 0)], **TINY), lambdas=[0.05],
                               n_subsamples=2, random_state=0)
    assert res2.n_candidates == 4
    with pytest.raises(ValueError, match="pi_thr"):
        stability_selection(X, CoLiDE("ev"), lambdas=[0.05], pi_thr=0.5)
    with pytest.raises(ValueError, match="lambdas"):
        stability_selection(X, CoLiDE("ev"), lambdas=[])


class RowRecorder(BaseEstimator):
    """A stub that records the rows of each fit: column 0 of the data holds each row's index."""

    seen = []

    def fit(self, X, conditions=None, targets=None, callback=None):
        RowRecorder.seen.append(tuple(np.asarray(X, dtype=float)[:, 0].astype(int)))
        d = np.shape(X)[1]
        self.adjacency_ = np.zeros((d, d))
        return self


def test_bootstrap_edges_and_bootstrap_shifts_draw_the_same_rows_with_design_resample():
    # The one resampler (issue 47): resample b of either function is Design.resample seeded with the
    # b-th child of SeedSequence(seed). Written out independently: without conditions
    # default_rng(child).integers(0, n, n); within conditions, condition by condition in the order
    # the labels first appear ("b" then "a" here, "b" in two blocks), its rows indexed by
    # integers(0, n_c, n_c) from one generator.
    from colide_core.data.design import Design
    from colide_core.evaluation.interventions import bootstrap_shifts

    n, n_boot, seed = 30, 4, 9
    X = np.column_stack([np.arange(n), np.random.default_rng(1).normal(size=(n, 2))])
    conds = np.array(["b"] * 10 + ["a"] * 12 + ["b"] * 8)
    children = np.random.SeedSequence(seed).spawn(n_boot)
    plain = [tuple(np.random.default_rng(c).integers(0, n, n)) for c in children]
    members = [np.flatnonzero(conds == "b"), np.flatnonzero(conds == "a")]
    within = []
    for c in children:
        rng = np.random.default_rng(c)
        within.append(tuple(np.concatenate([m[rng.integers(0, m.size, m.size)] for m in members])))
    assert [tuple(Design.create(["r", "x", "y"], conds).resample(c)) for c in children] == within
    for cond, want in ((None, plain), (conds, within)):
        RowRecorder.seen.clear()
        res = bootstrap_edges(X, RowRecorder(), n_boot=n_boot, random_state=seed, conditions=cond)
        edges = sorted(RowRecorder.seen)
        RowRecorder.seen.clear()
        got = bootstrap_shifts(RowRecorder(), X, shift={1: 0.5}, conditions=cond, n_bootstrap=n_boot,
                               random_state=seed, weights="fit")
        assert res.n_ok == n_boot and got.shape == (n_boot, 3)
        assert RowRecorder.seen == want  # in resample order
        assert edges == sorted(want)
