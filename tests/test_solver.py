"""The CoLiDE core: gradients, closed-form noise updates, solver invariants, estimator contract.

Everything here is checked against numbers derived by hand or against finite differences;
accuracy on Sachs and on simulated SEMs lives in tests/test_accuracy.py.
"""
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_less

from colide_core import (
    CoLiDE,
    ConvergenceWarning,
    colide_solve,
    h_ldet,
    is_dag,
    score_ev,
    score_ls,
    score_nv,
    sigma_update,
)
from colide_core import stage_objective
from colide_core.solver._common import default_sigma0

from tests._schedules import TINY as SHORT  # noqa: E402 - the suite's short schedule


def _numgrad(f, W, eps=1e-6):
    G = np.zeros_like(W)
    for idx in np.ndindex(W.shape):
        E = np.zeros_like(W)
        E[idx] = eps
        G[idx] = (f(W + E) - f(W - E)) / (2 * eps)
    return G


def _random_cov(d, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(5 * d, d))
    return A.T @ A / (5 * d)


@pytest.mark.parametrize("seed", [0, 1])
def test_gradients_match_finite_differences(seed):
    d = 5
    rng = np.random.default_rng(seed)
    cov = _random_cov(d, seed)
    W = 0.2 * rng.normal(size=(d, d))
    sig_ev = 0.7
    sig_nv = rng.uniform(0.5, 2.0, size=d)
    rng_l1 = rng.uniform(0.0, 2.0, size=(d, d))
    for f in (
        lambda W: score_ev(W, cov, sig_ev),
        lambda W: score_nv(W, cov, sig_nv),
        lambda W: score_ls(W, cov),
        lambda W: h_ldet(W, 1.0),
        lambda W: h_ldet(W, 0.8),
        # the stage objective mu (score + L1) + h_ldet: W has no zero entry, so the L1 term is
        # differentiable and its subgradient is the gradient
        lambda W: stage_objective(W, sig_ev, cov, "ev", 0.1, 0.05, 0.9),
        lambda W: stage_objective(W, sig_nv, cov, "nv", 0.01, 0.05 * rng_l1, 0.8),
        lambda W: stage_objective(W, None, cov, "ls", 1.0, 0.2, 1.0),
    ):
        _, g = f(W)
        assert_allclose(g, _numgrad(lambda V: f(V)[0], W), rtol=1e-5, atol=1e-7)
    # the stage objective is mu (score + sum(lambda1 |W|)) + h_ldet, term by term
    value, _ = stage_objective(W, sig_nv, cov, "nv", 0.01, 0.05 * rng_l1, 0.8)
    expected = 0.01 * (score_nv(W, cov, sig_nv)[0] + np.sum(0.05 * rng_l1 * np.abs(W))) + h_ldet(W, 0.8)[0]
    assert value == pytest.approx(expected, rel=1e-12)
    # outside the log-det domain: infinite value, no gradient
    assert stage_objective(3.0 * np.ones((d, d)), sig_ev, cov, "ev", 0.1, 0.05, 0.9) == (np.inf, None)


def test_scores_equal_their_data_forms():
    # ||X - XW||_F^2 / (2 n sigma) + d sigma / 2 with cov = X^T X / n (paper eq. 3 and 6).
    rng = np.random.default_rng(3)
    n, d = 50, 4
    X = rng.normal(size=(n, d))
    X -= X.mean(0)
    cov = X.T @ X / n
    W = 0.3 * rng.normal(size=(d, d))
    E = X - X @ W
    assert_allclose(score_ev(W, cov, 1.7)[0], (E**2).sum() / (2 * n * 1.7) + d * 1.7 / 2)
    s = np.array([0.5, 1.0, 2.0, 4.0])
    assert_allclose(score_nv(W, cov, s)[0], 0.5 * ((E**2).sum(0) / n / s).sum() + 0.5 * s.sum())
    assert_allclose(score_ls(W, cov)[0], (E**2).sum() / (2 * n))


def test_h_ldet_is_zero_on_dags_and_positive_on_cycles():
    # A DAG's W o W is nilpotent, so det(sI - W o W) = s^d and h = 0 for every s.
    W = np.array([[0.0, 0.9, 0.0], [0.0, 0.0, -0.8], [0.0, 0.0, 0.0]])
    for s in (1.0, 0.7):
        assert h_ldet(W, s)[0] == pytest.approx(0.0, abs=1e-12)
    # 2-cycle with weights a, b: det(I - W o W) = 1 - a^2 b^2, so h = -log(1 - a^2 b^2).
    C = np.array([[0.0, 0.5], [0.6, 0.0]])
    assert h_ldet(C, 1.0)[0] == pytest.approx(-np.log(1 - 0.25 * 0.36))


def test_h_ldet_outside_domain_raises():
    C = np.array([[0.0, 1.5], [1.5, 0.0]])  # spectral radius of W o W is 2.25 > s = 1
    with pytest.raises(FloatingPointError, match="log-det domain"):
        h_ldet(C, 1.0)


def test_sigma_update_two_node_population_case():
    # x1 ~ N(0, 4); x2 = 3 x1 + z2, z2 ~ N(0, 1). Population cov = [[4, 12], [12, 37]].
    # With the true W (W[0, 1] = 3) the residual variances are (4, 1):
    #   NV: sigma = (2, 1);  EV: sigma = sqrt((4 + 1) / 2).
    cov = np.array([[4.0, 12.0], [12.0, 37.0]])
    W = np.array([[0.0, 3.0], [0.0, 0.0]])
    assert_allclose(sigma_update(W, cov, "nv", np.array([0.01, 0.01])), [2.0, 1.0])
    assert sigma_update(W, cov, "ev", 0.01) == pytest.approx(np.sqrt(2.5))
    # The floor applies: with a floor of 1.5 on node 2, NV gives (2, 1.5).
    assert_allclose(sigma_update(W, cov, "nv", np.array([0.01, 1.5])), [2.0, 1.5])


def test_sigma_update_minimises_the_score():
    # Eq. 5 and 7 are the exact minimisers in sigma for fixed W: any perturbation is worse.
    cov = _random_cov(6, 7)
    W = 0.1 * np.random.default_rng(7).normal(size=(6, 6))
    s_ev = sigma_update(W, cov, "ev", 1e-3)
    s_nv = sigma_update(W, cov, "nv", np.full(6, 1e-3))
    for f in (0.9, 1.1):
        assert score_ev(W, cov, s_ev)[0] < score_ev(W, cov, s_ev * f)[0]
        for j in range(6):
            pert = s_nv.copy()
            pert[j] *= f
            assert score_nv(W, cov, s_nv)[0] < score_nv(W, cov, pert)[0]


def test_default_sigma0_follows_the_paper():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3)) * [1.0, 2.0, 3.0]
    X -= X.mean(0)
    cov = X.T @ X / 100
    # EV: ||X||_F / sqrt(d n) * 1e-2;  NV: sqrt(diag cov) * 1e-2.
    assert default_sigma0(cov, "ev") == pytest.approx(np.linalg.norm(X) / np.sqrt(3 * 100) * 1e-2)
    assert_allclose(default_sigma0(cov, "nv"), np.sqrt(np.diag(cov)) * 1e-2)


@pytest.mark.parametrize("variant", ["ev", "nv", "ls"])
def test_objective_non_increasing_within_stages(variant):
    # BCD with small Adam steps decreases the stage objective between checkpoints. Adam with
    # the L1 sub-gradient is not a strict descent method: once a stage is stationary the
    # objective jitters at the 1e-9 level, so increases are bounded relative to the stage's
    # starting objective (1e-6, the default tol), far below any real progress.
    cov = _random_cov(6, 11)
    res = colide_solve(cov, variant=variant, max_iter=(2000, 2000, 2000, 3000), checkpoint=200, tol=0)
    st = np.array(res.history["stage"])
    ob = np.array(res.history["objective"])
    for k in range(4):
        costs = ob[st == k]
        assert len(costs) >= 2
        assert_array_less(np.diff(costs), 1e-6 * abs(costs[0]))
        assert costs[-1] < costs[0]


def test_stage_stops_on_checkpoint_rule():
    # With tol = 1 (100 % relative change) every stage stops at its 2nd checkpoint.
    cov = _random_cov(5, 2)
    res = colide_solve(cov, variant="nv", max_iter=(5000,) * 4, checkpoint=100, tol=1.0)
    assert res.n_iter_per_stage == (200, 200, 200, 200)
    assert res.converged


def test_last_stage_at_max_iter_warns():
    cov = _random_cov(5, 2)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        res = colide_solve(cov, variant="ev", max_iter=(50, 50, 50, 50), checkpoint=10, tol=0)
    assert not res.converged and res.n_iter == 200


def test_callback_stops_and_keeps_partial_result():
    cov = _random_cov(5, 4)
    calls = []

    def cb(stage, it, obj):
        calls.append((stage, it, obj))
        return stage == 1 and it >= 200

    res = colide_solve(cov, variant="nv", max_iter=(1000,) * 4, checkpoint=100, tol=0, callback=cb)
    assert res.stopped and res.stop_reason == "callback"
    assert calls[-1][:2] == (1, 200)
    assert res.n_iter == 1000 + 200
    assert np.all(np.isfinite(res.W))


def test_max_time_stops_with_warning():
    cov = _random_cov(5, 4)
    with pytest.warns(ConvergenceWarning, match="max_time"):
        res = colide_solve(cov, variant="ev", max_iter=(10**7,) * 4, checkpoint=100, tol=0, max_time=1e-9)
    # The budget is checked every step, so the very first step already runs out of time.
    assert res.stopped and res.stop_reason == "max_time" and res.n_iter == 1
    assert res.history["iteration"] == [1]


def test_domain_backoff_keeps_iterates_inside():
    # A huge step size would jump out of the log-det domain; the solver halves it instead.
    cov = np.array([[1.0, 0.95], [0.95, 1.0]])
    res = colide_solve(cov, variant="ls", lambda1=0.0, lr=5.0, max_iter=(200,) * 4, checkpoint=50)
    assert all(lr < 5.0 for lr in res.lr_used)
    M = 0.7 * np.eye(2) - res.W * res.W
    assert np.all(np.linalg.inv(M) >= -1e-6)
    assert np.isfinite(res.objective)


def test_warm_start_outside_domain_raises_s():
    # W_init with a 2-cycle of weight 0.9 is inside s = 1 (0.81 < 1) but not s = 0.7: the
    # solver restarts stage 0 with a larger s (s + 0.1 per try, at most 10 tries).
    cov = _random_cov(2, 5)
    W0 = np.array([[0.0, 0.9], [0.9, 0.0]])
    res = colide_solve(cov, variant="ls", W_init=W0, s_schedule=(0.7,), mu_schedule=(1.0,),
                       max_iter=(10,), checkpoint=5)
    assert res.s_used[0] > 0.81


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(variant="xx"), "variant"),
        (dict(mu_schedule=(1.0, 0.1)), "one entry per stage"),
        (dict(lambda1=-1.0), "lambda1"),
        (dict(lr=0.0), "lr"),
        (dict(max_iter=(10, 10, 10, 0.5)), "max_iter"),
    ],
)
def test_invalid_parameters_raise_in_fit(kwargs, match):
    X = np.random.default_rng(0).normal(size=(30, 3))
    est = CoLiDE(**kwargs)  # __init__ only stores
    with pytest.raises(ValueError, match=match):
        est.fit(X)


@pytest.mark.parametrize(
    "X, match",
    [
        (np.ones((5,)), "2-D"),
        (np.zeros((1, 3)), "at least 2"),
        (np.array([[1.0, np.nan], [2.0, 3.0], [0.0, 1.0]]), "NaN"),
        (np.array([["a", "b"], ["c", "d"]]), "numeric"),
    ],
)
def test_bad_data_raises_clear_errors(X, match):
    with pytest.raises(ValueError, match=match):
        CoLiDE("ev").fit(X)


def test_constant_column_is_named():
    import pandas as pd

    X = pd.DataFrame({"a": np.arange(20.0), "flat": np.ones(20), "c": np.arange(20.0) ** 2})
    with pytest.raises(FloatingPointError, match="flat"):
        CoLiDE("nv").fit(X)


def test_estimator_contract_no_mutation_and_returns_self():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 4)) + 10.0
    X_before = X.copy()
    mu = (1.0, 0.1, 0.01, 0.001)
    est = CoLiDE("nv", mu_schedule=mu, **SHORT)
    assert est.fit(X) is est
    np.testing.assert_array_equal(X, X_before)  # not centred in place
    assert est.mu_schedule == (1.0, 0.1, 0.01, 0.001)
    assert est.W_.shape == (4, 4) and est.sigma_.shape == (4,)
    assert is_dag(est.adjacency_)
    assert est.node_names_ is None
    assert est.n_iter_ == sum(est.result_.n_iter_per_stage)
    assert set(est.history_) == {"stage", "iteration", "objective", "h", "sigma"}


def test_dataframe_names_and_bit_identical_refits():
    import pandas as pd

    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.normal(size=(150, 3)), columns=["a", "b", "c"])
    m1 = CoLiDE("ev", random_state=0, **SHORT).fit(X)
    m2 = CoLiDE("ev", random_state=0, **SHORT).fit(X)
    assert m1.node_names_ == ["a", "b", "c"]
    np.testing.assert_array_equal(m1.W_, m2.W_)
    assert m1.sigma_ == m2.sigma_ and isinstance(m1.sigma_, float)


def test_fit_from_stats_equals_fit():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 4))
    X[:, 1] += 1.5 * X[:, 0]
    Xc = X - X.mean(0)
    a = CoLiDE("nv", **SHORT).fit(X)
    b = CoLiDE("nv", **SHORT).fit_from_stats(Xc.T @ Xc / 300, 300, node_names=list("wxyz"))
    assert_allclose(a.W_, b.W_, rtol=1e-10, atol=1e-12)
    assert b.node_names_ == ["w", "x", "y", "z"]


def test_final_objective_reported_matches_recomputation():
    cov = _random_cov(5, 9)
    res = colide_solve(cov, variant="ev", **SHORT)
    obj, _ = stage_objective(res.W, res.sigma, cov, "ev", 0.001, 0.05, 0.7)
    assert res.objective == pytest.approx(obj, rel=1e-12)


def test_edge_mask_holds_forbidden_edges_at_zero_and_l1_mask_exempts():
    # x1 = 2 x0 + noise: without constraints 0 -> 1 is learned. Forbidding it keeps it at
    # exactly zero for the whole solve.
    rng = np.random.default_rng(5)
    x0 = rng.normal(size=500)
    X = np.c_[x0, 2 * x0 + rng.normal(size=500), rng.normal(size=500)]
    X -= X.mean(0)
    cov = X.T @ X / 500
    mask = np.ones((3, 3), dtype=bool)
    mask[0, 1] = False
    res = colide_solve(cov, variant="nv", edge_mask=mask, **SHORT)
    assert res.W[0, 1] == 0.0
    free = colide_solve(cov, variant="nv", **SHORT)
    assert abs(free.W[0, 1]) + abs(free.W[1, 0]) > 0.1
    # An L1 exemption changes the objective's penalty term only on that edge.
    l1 = np.ones((3, 3))
    l1[2, 0] = 0.0
    r2 = colide_solve(cov, variant="nv", l1_mask=l1, **SHORT)
    obj, _ = stage_objective(r2.W, r2.sigma, cov, "nv", 0.001, 0.05 * l1, 0.7)
    assert r2.objective == pytest.approx(obj, rel=1e-12)
