"""The model checks carry the conditions and targets (issue 31): refits, residuals, Markov check."""
import numpy as np
import pandas as pd
import pytest

from colide_core import CoLiDE
from colide_core.data.conditions import centre_by_condition
from colide_core.data.simulate import standardize
from colide_core.evaluation import checks as ch


@pytest.fixture(scope="module")
def shifted():
    """a -> b -> c and a lone d, 3 conditions of 200 rows.

    "shift" moves the means of a and d by +6 and of c by -5 (a batch effect: no edge changes);
    "knock" sets b by intervention (b ~ N(5, 3^2), independent of a), so b's equation holds
    only in "obs" and "shift".
    """
    rng = np.random.default_rng(0)
    n = 200
    labels = np.repeat(["obs", "shift", "knock"], n)
    c = np.repeat([0, 1, 2], n)
    a = rng.normal(size=3 * n) + np.array([0, 6, 0])[c]
    b = 0.8 * a + rng.normal(size=3 * n)
    b[c == 2] = rng.normal(size=n) * 3 + 5
    cc = -0.7 * b + rng.normal(size=3 * n) + np.array([0, -5, 0])[c]
    d = rng.normal(size=3 * n) + np.array([0, 6, 0])[c]
    X = pd.DataFrame(np.c_[a, b, cc, d], columns=["a", "b", "c", "d"])
    A = np.zeros((4, 4))
    A[0, 1] = A[1, 2] = 1
    return X, labels, {"knock": ["b"]}, A


def test_refit_with_conditions_is_colide_fit_with_conditions(shifted):
    X, labels, targets, _ = shifted
    est = CoLiDE(lambda1=0.05)
    Z = pd.DataFrame(standardize(X.to_numpy()), columns=X.columns)
    direct = CoLiDE(lambda1=0.05).fit(Z, conditions=labels, targets=targets).adjacency_
    # the refit's graph is CoLiDE.fit with the same conditions and targets, weight for weight
    refitted = ch._fitted_graph(est, Z, None, labels, targets)
    np.testing.assert_allclose(refitted, direct, rtol=0, atol=1e-10)
    assert (direct != 0).sum() == 2 and direct[0, 1] != 0 and direct[1, 2] != 0
    same = ch.refit_compare(X, est, direct, conditions=labels, targets=targets)
    assert same.kept == [(0, 1), (1, 2)] and same.n_changed == 0
    # pooled (the old refit), the mean shifts create edges to d and lose a -> b
    pooled = ch.refit_compare(X, est, direct)
    assert pooled.n_changed >= 3 and (0, 1) not in pooled.kept


def test_scale_sensitivity_refits_with_conditions(shifted):
    X, labels, targets, _ = shifted
    est = CoLiDE(lambda1=0.05)
    direct = CoLiDE(lambda1=0.05).fit(X, conditions=labels, targets=targets).adjacency_
    sc = ch.scale_sensitivity(X, est, direct, n_repeats=1, low=1.0, high=1.0, conditions=labels, targets=targets)
    # factors of 1: the refit is the fit itself, so nothing changes
    np.testing.assert_allclose(sc.factors, 1.0)
    assert sc.n_changed.tolist() == [0] and sc.verdict == "scale-robust"


def test_residuals_centred_per_condition_and_masked(shifted):
    X, labels, targets, A = shifted
    res = ch.residual_checks(X, A, conditions=labels, targets=targets)
    r = res.refit.residuals
    knock = labels == "knock"
    # b is a target in "knock": no residual there, every other node has one on every row
    assert np.isnan(r[knock, 1]).all() and not np.isnan(r[~knock, 1]).any()
    assert not np.isnan(r[:, [0, 2, 3]]).any()
    for lab in ("obs", "shift", "knock"):
        rows = labels == lab
        means = np.nanmean(r[rows][:, [0, 2, 3]], axis=0)
        np.testing.assert_allclose(means, 0.0, atol=1e-10)
    for lab in ("obs", "shift"):
        assert abs(np.mean(r[labels == lab, 1])) < 1e-10
    # slopes within conditions recover the simulated 0.8 and -0.7 (pooled they do not)
    assert res.refit.W[0, 1] == pytest.approx(0.8, abs=0.1)
    assert res.refit.W[1, 2] == pytest.approx(-0.7, abs=0.05)
    pooled = ch.residual_checks(X, A)
    assert abs(pooled.refit.W[0, 1] - 0.8) > 0.3
    # dof of b: 400 unmasked rows - 1 parent - 2 condition intercepts
    assert res.refit.dof[1] == 397


def test_condition_mean_shift_is_not_non_gaussian_after_centring(shifted):
    X, labels, targets, A = shifted
    pooled = ch.residual_checks(X, A)
    centred = ch.residual_checks(X, A, conditions=labels, targets=targets)
    # pooled, the +6 shift of a and d makes their residuals bimodal: normality is rejected hard
    assert pooled.table["normality_p"].iloc[0] < 1e-20 and pooled.table["normality_p"].iloc[3] < 1e-20
    assert int(pooled.table["normal"].sum()) == 0
    # centred per condition the noise is the simulated Gaussian at every node (level 0.05 / 4)
    assert centred.table["normal"].tolist() == [True, True, True, True]


def test_markov_check_on_per_condition_centred_data(shifted):
    X, labels, _, A = shifted
    pooled = ch.markov_check(X, A, n_random=0, random_state=0)
    centred = ch.markov_check(X, A, n_random=0, random_state=0, conditions=labels)
    # a and d are independent in every condition; their shared shift makes them look dependent
    a_d = lambda m: m.tests[(m.tests["node"] == "a") & (m.tests["other"] == "d")]["p_value"].iloc[0]
    assert a_d(pooled) < 1e-12 and a_d(centred) > 0.5
    assert pooled.share_rejected == pytest.approx(6 / 7) and centred.share_rejected == 0.0


def test_centre_by_condition_gives_zero_means(shifted):
    X, labels, _, _ = shifted
    Z = centre_by_condition(X, labels)
    for lab in ("obs", "shift", "knock"):
        np.testing.assert_allclose(Z[labels == lab].mean(axis=0), 0.0, atol=1e-10)
    np.testing.assert_allclose(Z, X.to_numpy() - X.groupby(labels).transform("mean").to_numpy(), atol=1e-12)


def test_run_checks_passes_the_design(shifted):
    X, labels, targets, A = shifted
    rep = ch.run_checks(X, A, n_random=0, conditions=labels, targets=targets)
    assert rep.markov.share_rejected == 0.0
    assert np.isnan(rep.residuals.refit.residuals[labels == "knock", 1]).all()
