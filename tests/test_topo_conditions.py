"""CoLiDE-TOPO with conditions and known intervention targets (issue 31; docs/conditions.md, docs/topo.md).

Node j's own equation is fitted on the rows ``O_j`` whose condition does not target j: its lasso
reads ``C_j`` (the covariance of those rows, each condition centred on its own mean) and its score
term weighs ``w_j = |O_j| / n``; NV's ``sigma_j`` is eq. 7 on ``O_j``, EV's one sigma is pooled over
every unmasked residual. Checked here: the exact reduction to plain TOPO (one condition; conditions
without targets; a grouped problem whose groups coincide), rows against statistics, a hand-worked
two-node case where a hard intervention orients the edge that the observational rows leave tied,
the optimality conditions of the node solves with ``C_j``, the search's guarantees, and the
pooled EV sigma and the objective against a row-by-row computation.
"""
import itertools
import warnings

import numpy as np
import pytest

from colide_core import CoLiDE, ConditionStats
from colide_core.data.simulate import simulate_dataset
from colide_core.solver._objective import NodeCovariance
from colide_core.solver._topo import order_solve, topo_solve
from colide_core.solver._topo_cost import estimate_topo_cost

LAM = 0.05


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _data(d=8, seed=0, variance="nv", k=4, n_per=300):
    sim = simulate_dataset({"graph": "er", "degree": 2, "n_nodes": d, "n_samples": 600, "variance": variance},
                           seed, interventions={"n_conditions": k, "n_per_condition": n_per})
    return sim


def _centred(X, labels):
    labels = np.asarray(labels)
    Xc = np.empty_like(X, dtype=float)
    for lab in np.unique(labels):
        Xc[labels == lab] = X[labels == lab] - X[labels == lab].mean(axis=0)
    return Xc


def _unmasked_rows(labels, targets, j):
    return ~np.isin(np.asarray(labels), [lab for lab, t in targets.items() if j in t])


# ---------------------------------------------------------------------------------------------
# exact reduction
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["nv", "ev", "ls"])
def test_one_condition_without_targets_is_plain_topo(variant):
    sim = _data(9, 1)
    X = sim.X[sim.conditions == "obs"]
    plain = CoLiDE(variant, solver="topo").fit(X)
    one = CoLiDE(variant, solver="topo").fit(X, conditions=["a"] * len(X))
    assert one.order_ == plain.order_
    np.testing.assert_array_equal(one.W_, plain.W_)
    assert one.result_.objective == plain.result_.objective


@pytest.mark.parametrize("variant", ["nv", "ev"])
def test_conditions_without_targets_are_topo_on_the_pooled_within_condition_covariance(variant):
    # Before targets were taken, TOPO with conditions ran on the one covariance centred per
    # condition; without targets it still does, bit for bit.
    sim = _data(9, 2)
    stats = ConditionStats.from_data(sim.X, sim.conditions)
    with_conditions = CoLiDE(variant, solver="topo").fit(sim.X, conditions=sim.conditions)
    pooled = CoLiDE(variant, solver="topo").fit_from_stats(stats.pooled_covariance(), stats.n_samples)
    assert with_conditions.order_ == pooled.order_
    np.testing.assert_array_equal(with_conditions.W_, pooled.W_)


@pytest.mark.parametrize("variant", ["nv", "ev", "ls"])
def test_grouped_kernels_equal_the_plain_ones_when_groups_coincide(variant):
    # Three groups holding the same covariance with weight 1 are the plain problem: node j reads
    # covs[grp[j]] (the same numbers), its penalty lambda1 / 1, EV's weighted sums of ones. Same
    # start order, so the search must take the same swaps and end in the same W (to rounding).
    sim = _data(10, 3)
    X = sim.X[sim.conditions == "obs"]
    X = X - X.mean(axis=0)
    cov = X.T @ X / len(X)
    node = NodeCovariance(np.stack([cov, cov, cov]), np.arange(10) % 3, [1.0, 1.0, 1.0])
    start = np.random.default_rng(0).permutation(10)
    a = topo_solve(cov, variant=variant, init_order=start)
    b = topo_solve(node, variant=variant, init_order=start)
    assert b.order == a.order and b.n_iter == a.n_iter and b.n_iter >= 2
    assert b.history["evaluated"] == a.history["evaluated"]
    np.testing.assert_allclose(b.W, a.W, rtol=0, atol=1e-12)
    assert b.objective == pytest.approx(a.objective, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# rows = statistics
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["nv", "ev"])
def test_rows_and_statistics_give_the_same_fit(variant):
    sim = _data(8, 4)
    labels = np.asarray(sim.conditions)
    targets = {lab: list(t) for lab, t in sim.targets.items()}
    rows = CoLiDE(variant, solver="topo").fit(sim.X, conditions=labels, targets=targets)
    # the statistics computed here with numpy, condition by condition
    labs = list(dict.fromkeys(labels))
    blocks = [sim.X[labels == lab] for lab in labs]
    means = np.stack([b.mean(axis=0) for b in blocks])
    covs = np.stack([np.cov(b, rowvar=False, bias=True) for b in blocks])
    stats = ConditionStats(labs, [len(b) for b in blocks], means, covs, targets)
    from_stats = CoLiDE(variant, solver="topo").fit_from_stats(stats)
    assert from_stats.order_ == rows.order_
    np.testing.assert_allclose(from_stats.W_, rows.W_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(from_stats.sigma_, rows.sigma_, rtol=1e-8)
    assert rows.targets_ == stats.targets and any(rows.targets_.values())


# ---------------------------------------------------------------------------------------------
# a hand-worked case: the intervention orients the edge
# ---------------------------------------------------------------------------------------------
RHO = 0.8


def _two_node_stats():
    """Population statistics (no sampling): x0 ~ N(0, 1), x1 = rho x0 + sqrt(1 - rho^2) e.

    Condition "obs" (n rows): cov [[1, rho], [rho, 1]]. Condition "do1" (n rows): a hard
    intervention sets x1 ~ N(0, 1) independently of x0: cov = I. Both have unit variances, so
    the observational NV score cannot tell 0 -> 1 from 1 -> 0 (below).
    """
    covs = np.array([[[1.0, RHO], [RHO, 1.0]], np.eye(2)])
    return ConditionStats(["obs", "do1"], [1000, 1000], np.zeros((2, 2)), covs, {"do1": [1]})


@pytest.mark.parametrize("variant", ["nv", "ev"])
def test_a_hard_intervention_orients_the_edge_that_observational_data_leave_tied(variant):
    # lambda1 = 0, so at the optimum r / (2 sigma) + sigma / 2 = sigma (sigma^2 = r) and each
    # order's score is a sum of weighted residual standard deviations.
    #
    # Observational rows only (cov [[1, rho], [rho, 1]]): order (0, 1): node 0 alone, r = 1;
    # node 1 on node 0, r = 1 - rho^2. Order (1, 0): the same by symmetry. NV: both orders score
    # 1 + sqrt(1 - rho^2) = 1.6; EV: sigma^2 = (2 - rho^2) / 2 and score d sigma = 2 sigma in both.
    # A tie: the data cannot orient the edge.
    #
    # Masked, both conditions (n rows each, so w_0 = 1: node 0 is never a target, w_1 = 1/2):
    # C_0 = the two conditions pooled = [[1, rho/2], [rho/2, 1]], C_1 = the obs rows' cov.
    # Order (0, 1): node 0 r = 1 (weight 1), node 1 on 0 over obs rows r = 1 - rho^2 (weight 1/2).
    #   NV: 1 + (1/2) sqrt(1 - rho^2) = 1 + 0.5 * 0.6 = 1.3.
    #   EV: sigma^2 = (1 + (1/2)(1 - rho^2)) / (3/2) and score (3/2) sigma = sqrt(1.5 * 1.18).
    # Order (1, 0): node 1 alone over obs rows r = 1 (weight 1/2), node 0 on 1 with C_0:
    #   r = 1 - (rho/2)^2 = 0.84 (weight 1).
    #   NV: 1/2 + sqrt(0.84) = 1.4165; EV: sqrt(1.5 * (0.5 + 0.84)) = sqrt(2.01).
    # The true order wins, and its weight is the observational regression, W[0, 1] = rho.
    obs_cov = np.array([[1.0, RHO], [RHO, 1.0]])
    tied = [order_solve(obs_cov, o, variant=variant, lambda1=0.0).score for o in ([0, 1], [1, 0])]
    expect_obs = 1 + np.sqrt(1 - RHO ** 2) if variant == "nv" else 2 * np.sqrt((2 - RHO ** 2) / 2)
    np.testing.assert_allclose(tied, [expect_obs, expect_obs], rtol=1e-12)

    stats = _two_node_stats()
    node = stats.node_covariances()
    forward = order_solve(node, [0, 1], variant=variant, lambda1=0.0)
    backward = order_solve(node, [1, 0], variant=variant, lambda1=0.0)
    if variant == "nv":
        expect = (1 + 0.5 * np.sqrt(1 - RHO ** 2), 0.5 + np.sqrt(1 - RHO ** 2 / 4))
        np.testing.assert_allclose(forward.sigma, [1.0, np.sqrt(1 - RHO ** 2)], rtol=1e-12)
    else:
        expect = (np.sqrt(1.5 * (1 + 0.5 * (1 - RHO ** 2))), np.sqrt(1.5 * (0.5 + 1 - RHO ** 2 / 4)))
        assert forward.sigma == pytest.approx(np.sqrt((1 + 0.5 * (1 - RHO ** 2)) / 1.5), rel=1e-12)
    assert forward.score == pytest.approx(expect[0], rel=1e-12)
    assert backward.score == pytest.approx(expect[1], rel=1e-12)
    assert forward.W[0, 1] == pytest.approx(RHO, rel=1e-12)
    assert backward.W[1, 0] == pytest.approx(RHO / 2, rel=1e-12)  # C_0's regression of x0 on x1

    # The search, started in the wrong order, swaps to the right one.
    model = CoLiDE(variant, solver="topo", lambda1=0.0, init_order=[1, 0]).fit_from_stats(stats)
    assert model.order_ == (0, 1) and model.n_iter_ == 1
    assert model.W_[0, 1] == pytest.approx(RHO, rel=1e-12) and model.W_[1, 0] == 0.0
    # Without the targets (conditions only: C = [[1, rho/2], [rho/2, 1]] for both nodes) it is a
    # tie again and the search keeps its start: the wrong edge 1 -> 0.
    unmasked = ConditionStats(stats.labels, stats.n, stats.means, stats.covs)
    model = CoLiDE(variant, solver="topo", lambda1=0.0, init_order=[1, 0]).fit_from_stats(unmasked)
    assert model.order_ == (1, 0) and model.n_iter_ == 0


# ---------------------------------------------------------------------------------------------
# optimality of the node solves with C_j
# ---------------------------------------------------------------------------------------------
def _kkt_gaps_masked(node, fit, variant, lambda1=LAM):
    """(stationarity on the support, slack off it, sigma's closed form) with C_j and w_j."""
    d = node.n_nodes
    W = fit.W
    w = node.node_weight
    s = np.ones(d) if variant == "ls" else np.broadcast_to(np.asarray(fit.sigma, float), (d,))
    G = np.empty((d, d))
    r = np.empty(d)
    for j in range(d):
        C = node.covs[node.group[j]]
        e = -W[:, j].copy()
        e[j] += 1.0
        G[:, j] = -w[j] * (C @ e) / s[j]  # the score's gradient in W[:, j] at fixed sigma
        r[j] = e @ C @ e
    pos = np.argsort(fit.order)
    forward = pos[:, None] < pos[None, :]
    nz = W != 0
    stat = np.abs(G[nz] + lambda1 * np.sign(W[nz])).max() if nz.any() else 0.0
    slack = (np.abs(G[forward & ~nz]) - lambda1).max()
    np.testing.assert_allclose(fit.resid, r, rtol=1e-9, atol=1e-12)  # resid: r_j over O_j
    if variant == "nv":
        sig = np.abs(np.maximum(np.sqrt(r), node.default_sigma0("nv")) - s).max()
    elif variant == "ev":
        sig = abs(max(np.sqrt(np.sum(w * r) / np.sum(w)), node.default_sigma0("ev")) - s[0])
    else:
        sig = 0.0
    return stat, slack, sig


@pytest.mark.parametrize("variant", ["nv", "ev", "ls"])
def test_node_solves_meet_their_optimality_conditions_with_their_own_covariance(variant):
    sim = _data(12, 5, variance="ev", k=6)
    node = ConditionStats.from_data(sim.X, sim.conditions, sim.targets).node_covariances()
    assert node.covs.shape[0] >= 3 and not node.trivial
    for seed in range(3):
        order = np.random.default_rng(seed).permutation(12)
        fit = order_solve(node, order, variant=variant, lambda1=LAM)
        stat, slack, sig = _kkt_gaps_masked(node, fit, variant)
        assert stat < 1e-8 and slack < 1e-8 and sig < 1e-8, (stat, slack, sig)
        # a node fitted on one covariance for all would not meet them: the masks matter here
        plain = order_solve(np.asarray(node.pooled), order, variant=variant, lambda1=LAM)
        assert np.abs(plain.W - fit.W).max() > 1e-3


# ---------------------------------------------------------------------------------------------
# the search
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["nv", "ev", "ls"])
def test_score_never_rises_and_the_end_is_a_local_optimum(variant):
    sim = _data(7, 6, k=3)
    node = ConditionStats.from_data(sim.X, sim.conditions, sim.targets).node_covariances()
    start = np.random.default_rng(1).permutation(7)
    res = topo_solve(node, variant=variant, init_order=start)
    scores = res.history["objective"]
    assert res.n_iter >= 1 and res.converged and not res.stopped
    assert all(b < a for a, b in zip(scores[:res.n_iter], scores[1:res.n_iter + 1]))
    order = np.array(res.order)
    assert order_solve(node, order, variant=variant).score == pytest.approx(res.objective, rel=1e-9)
    for a, b in itertools.combinations(range(7), 2):  # every swap of the final order
        o = order.copy()
        o[a], o[b] = o[b], o[a]
        assert order_solve(node, o, variant=variant).score >= res.objective * (1 - 1e-8), (a, b)


@pytest.mark.parametrize("variant", ["nv", "ev"])
def test_cached_search_equals_the_uncached_one(variant, monkeypatch):
    from colide_core.solver import _topo

    sim = _data(14, 7, k=7)
    node = ConditionStats.from_data(sim.X, sim.conditions, sim.targets).node_covariances()
    start = np.random.default_rng(3).permutation(14)
    cached = topo_solve(node, variant=variant, init_order=start)
    monkeypatch.setattr(_topo, "_CACHE_BYTES", [0])
    uncached = topo_solve(node, variant=variant, init_order=start)
    assert cached.n_iter >= 3
    assert uncached.order == cached.order and uncached.history["evaluated"] == cached.history["evaluated"]
    np.testing.assert_allclose(uncached.W, cached.W, rtol=0, atol=1e-10)


# ---------------------------------------------------------------------------------------------
# sigma and the objective against the rows
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["nv", "ev"])
def test_sigma_and_objective_match_a_row_by_row_computation(variant):
    sim = _data(8, 8, k=4)
    labels = np.asarray(sim.conditions)
    model = CoLiDE(variant, solver="topo").fit(sim.X, conditions=labels, targets=sim.targets)
    W = model.W_
    Xc = _centred(sim.X, labels)
    n, d = Xc.shape
    sq, count = np.zeros(d), np.zeros(d)
    for j in range(d):
        rows = _unmasked_rows(labels, sim.targets, j)
        e = Xc[rows, j] - Xc[rows] @ W[:, j]  # node j's residuals on O_j only
        sq[j], count[j] = e @ e, rows.sum()
    assert count.min() < n  # some nodes are masked somewhere
    if variant == "ev":
        # one sigma pooled over every unmasked residual: sum_j sum_{i in O_j} e_ij^2 / sum_j |O_j|
        assert model.sigma_ == pytest.approx(np.sqrt(sq.sum() / count.sum()), rel=1e-9)
        sigma = np.full(d, model.sigma_)
    else:
        np.testing.assert_allclose(model.sigma_, np.sqrt(sq / count), rtol=1e-9)  # eq. 7 on O_j
        sigma = model.sigma_
    score = np.sum(sq / (2 * sigma) + count * sigma / 2) / n + LAM * np.abs(W).sum()
    assert model.result_.objective == pytest.approx(score, rel=1e-9)


def test_lambda_path_and_cost_estimate_take_targets_with_topo():
    from colide_core.solver.path import lambda_path

    sim = _data(6, 9, k=3)
    path = lambda_path(sim.X, lambdas=[0.05, 0.1], thresholds=[0.3], variant="nv", solver="topo",
                       conditions=sim.conditions, targets=sim.targets)
    direct = CoLiDE("nv", solver="topo", lambda1=0.05).fit(sim.X, conditions=sim.conditions, targets=sim.targets)
    assert path.W.shape == (2, 6, 6)
    np.testing.assert_allclose(path.W[0], direct.W_, rtol=0, atol=1e-10)
    node = ConditionStats.from_data(sim.X, sim.conditions, sim.targets).node_covariances()
    est = estimate_topo_cost(node, variant="ev", probes=4)
    assert est.seconds_per_evaluation > 0 and est.evaluations == pytest.approx(2.5 * 36)
