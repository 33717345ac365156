"""Several conditions and known intervention targets (issue 31, method half; docs/conditions.md).

CoLiDE with an intercept per condition and the masked likelihood: node j's own equation is fitted
on the rows O_j whose condition does not target j, with ``C_j = sum_{c: j not in T_c} n_c S_c /
|O_j|`` and weight ``|O_j| / n``. Checked here: the exact reduction to today's fit, rows and
statistics giving the same W, the score against a row-by-row computation, a hand-computed 2-node
case, every refused input, clone and no mutation, and the bootstrap within conditions.
"""
import copy
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from colide_core import CoLiDE, ConditionStats, load_sachs
from colide_core.data.conditions import check_conditions, check_targets
from colide_core.exceptions import ConditionsError
from colide_core.solver._objective import NodeCovariance, sigma_update, smooth_score, stage_objective
from colide_core.solver._fast import fast_solve
from colide_core.solver._solver import colide_solve

#: A short central path for the faithful solver (its full schedule takes seconds on Sachs).
from tests._schedules import QUICK as SHORT  # noqa: E402 - the suite's short schedule


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _sem(seed, n_obs=400, n_int=300, d=5):
    """A chain-plus SEM with an observational condition and two hard interventions.

    Returns (X, labels, targets, W_true). Hard intervention on node t: its value is drawn from
    N(0, 1.5^2), its parents ignored; the other equations are unchanged. A condition-wide mean
    shift is added to every condition (each condition gets its own intercept).
    """
    rng = np.random.default_rng(seed)
    W = np.zeros((d, d))
    for j in range(1, d):
        W[j - 1, j] = rng.choice([-1, 1]) * rng.uniform(0.6, 1.2)
    W[0, d - 1] = 0.8
    sig = rng.uniform(0.5, 1.0, d)
    blocks, labels = [], []
    for lab, n, tgt in (("obs", n_obs, None), ("do1", n_int, 1), ("do3", n_int, 3)):
        Z = rng.normal(size=(n, d)) * sig
        X = np.zeros((n, d))
        for j in range(d):  # topological order 0..d-1
            X[:, j] = Z[:, j] if j == tgt else X @ W[:, j] + Z[:, j]
        if tgt is not None:
            X[:, tgt] = rng.normal(0, 1.5, n)
        blocks.append(X + rng.normal(0, 3.0, d))  # the condition's own mean
        labels += [lab] * n
    return np.vstack(blocks), labels, {"do1": [1], "do3": [3]}, W


# --------------------------------------------------------------------------------------------
# exact reduction: one condition, no target -> today's CoLiDE, to 1e-10
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["nv", "ev"])
@pytest.mark.parametrize("solver,params", [("auto", {}), ("adam", SHORT)])
def test_one_condition_no_target_is_todays_fit(variant, solver, params):
    X, _ = load_sachs()
    plain = CoLiDE(variant, solver=solver, **params).fit(X)
    one = CoLiDE(variant, solver=solver, **params).fit(X, conditions=np.zeros(len(X), dtype=int))
    stats = ConditionStats.from_data(X, ["all"] * len(X))
    from_stats = CoLiDE(variant, solver=solver, **params).fit_from_stats(stats)
    for model in (one, from_stats):
        np.testing.assert_allclose(model.W_, plain.W_, rtol=0, atol=1e-10)
        np.testing.assert_allclose(model.sigma_, plain.sigma_, rtol=0, atol=1e-10)
        np.testing.assert_array_equal(model.adjacency_, plain.adjacency_)
    assert one.conditions_ == ("0",) and one.targets_ == {"0": ()} and one.condition_counts_ == (len(X),)
    assert plain.conditions_ is None and plain.targets_ is None


def test_grouped_kernels_equal_the_plain_ones_when_groups_coincide():
    # Two groups holding the same covariance with weight 1 are the plain problem: the grouped
    # product (column blocks, numba loops) must solve it as the plain kernels do. Its sums run in
    # another order than BLAS's, and the fast solver's step-size decisions amplify rounding, so
    # the check is on the objective and the graph (the exact reduction is tested above).
    X, _ = load_sachs()
    cov = np.cov(np.asarray(X, dtype=float), rowvar=False, bias=True)
    node = NodeCovariance(np.stack([cov, cov]), np.arange(11) % 2, [1.0, 1.0])
    for solve, params in ((fast_solve, {}), (colide_solve, SHORT)):
        for variant in ("nv", "ev"):
            a = solve(cov, variant=variant, **params)
            b = solve(node, variant=variant, **params)
            assert b.objective == pytest.approx(a.objective, rel=1e-5)
            # an AMD EPYC (numba for znver3) measured 5.6e-3 on a weight of -7.96 (7e-4 relative)
            np.testing.assert_allclose(b.W, a.W, rtol=1e-3, atol=5e-3)
            np.testing.assert_array_equal(np.abs(b.W) > 0.3, np.abs(a.W) > 0.3)


# --------------------------------------------------------------------------------------------
# the score, against the rows
# --------------------------------------------------------------------------------------------
def _row_score(X, labels, targets, W, sigma, variant):
    """The masked score computed row by row (the definition), with per-condition centring."""
    labels = np.asarray(labels)
    Xc = np.empty_like(X)
    for lab in np.unique(labels):
        Xc[labels == lab] = X[labels == lab] - X[labels == lab].mean(axis=0)
    n, d = X.shape
    total = 0.0
    for j in range(d):
        rows = ~np.isin(labels, [lab for lab, t in targets.items() if j in t])
        r = Xc[rows, j] - Xc[rows] @ W[:, j]
        s = sigma if variant == "ev" else sigma[j]
        total += (r @ r / (2.0 * s) + rows.sum() * s / 2.0) / n
    return total


@pytest.mark.parametrize("variant", ["nv", "ev"])
def test_masked_score_and_gradient_match_the_rows(variant):
    X, labels, targets, _ = _sem(0)
    stats = ConditionStats.from_data(X, labels, targets)
    node = stats.node_covariances()
    assert node.covs.shape[0] == 3  # three distinct target patterns: none, {1}, {3}
    rng = np.random.default_rng(1)
    W = rng.normal(0, 0.3, (5, 5))
    np.fill_diagonal(W, 0.0)
    sigma = 0.8 if variant == "ev" else rng.uniform(0.5, 1.5, 5)
    value, grad = smooth_score(W, node, sigma, variant)
    assert value == pytest.approx(_row_score(X, labels, stats.targets, W, sigma, variant), rel=1e-10)
    eps = 1e-6
    for i, j in [(0, 1), (2, 3), (4, 1), (1, 3)]:
        E = np.zeros_like(W)
        E[i, j] = eps
        fd = (smooth_score(W + E, node, sigma, variant)[0] - smooth_score(W - E, node, sigma, variant)[0]) / (2 * eps)
        assert grad[i, j] == pytest.approx(fd, rel=1e-6, abs=1e-9)
    # The sigma update minimises the score over sigma at fixed W (eq. 5 / eq. 7 on O_j).
    s_hat = sigma_update(W, node, variant, 1e-8)
    best = smooth_score(W, node, s_hat, variant)[0]
    for f in (0.9, 1.1):
        assert smooth_score(W, node, s_hat * f, variant)[0] > best
    # and the stage objective adds mu-weighted L1 and h_ldet, with its gradient
    obj, g = stage_objective(W * 0.5, s_hat, node, variant, 0.1, 0.05, 1.0)
    assert np.isfinite(obj) and g.shape == (5, 5)


def test_node_covariance_of_a_tiny_design_by_hand():
    # Two conditions on 2 nodes; condition "b" targets node 1. Node 0's equation sees both
    # conditions: C_0 = (n_a S_a + n_b S_b) / (n_a + n_b), weight 1. Node 1's sees only "a":
    # C_1 = S_a, weight n_a / n.
    Xa = np.array([[0.0, 1.0], [2.0, 1.0], [1.0, 4.0]])
    Xb = np.array([[5.0, 0.0], [7.0, 2.0]])
    X = np.vstack([Xa, Xb])
    stats = ConditionStats.from_data(X, ["a"] * 3 + ["b"] * 2, {"b": [1]})
    Sa = np.cov(Xa, rowvar=False, bias=True)
    Sb = np.cov(Xb, rowvar=False, bias=True)
    node = stats.node_covariances()
    C0 = node.covs[node.group[0]]
    C1 = node.covs[node.group[1]]
    np.testing.assert_allclose(C0, (3 * Sa + 2 * Sb) / 5, atol=1e-14)
    np.testing.assert_allclose(C1, Sa, atol=1e-14)
    np.testing.assert_allclose(node.node_weight, [1.0, 3 / 5])
    # one intercept per node instead: node 0's rows centred on the mean of all five rows
    pooled = stats.node_covariances("pooled")
    np.testing.assert_allclose(pooled.covs[pooled.group[0]], np.cov(X, rowvar=False, bias=True), atol=1e-13)
    np.testing.assert_allclose(pooled.covs[pooled.group[1]], Sa, atol=1e-14)


def test_masking_recovers_the_weight_the_intervened_rows_dilute():
    # x0 -> x1 with weight 1; condition "do1" sets x1 by hand (hard intervention), condition
    # "do0" sets x0. With lambda = 0 the masked fit of x1's equation is the least-squares slope
    # on the rows where x1 is not a target ("obs" and "do0", each centred on its own mean):
    # beta = sum_c n_c S_c[0, 1] / sum_c n_c S_c[0, 0]. Without the mask the "do1" rows, where
    # x1 ignores x0, pull the slope towards 0.
    rng = np.random.default_rng(0)
    n = 600

    def chain(s0):
        x0 = rng.normal(0, s0, n)
        return np.c_[x0, x0 + rng.normal(0, np.sqrt(0.5), n)]

    obs, do1, do0 = chain(1.0), chain(1.0), chain(2.0)
    do1[:, 1] = rng.normal(0, 2.0, n)
    X = np.vstack([obs, do1, do0])
    labels = ["obs"] * n + ["do1"] * n + ["do0"] * n
    S = [np.cov(B, rowvar=False, bias=True) for B in (obs, do0)]
    beta = (S[0][0, 1] + S[1][0, 1]) / (S[0][0, 0] + S[1][0, 0])
    for variant in ("nv", "ev"):
        masked = CoLiDE(variant, lambda1=0.0).fit(X, conditions=labels, targets={"do1": [1], "do0": [0]})
        unmasked = CoLiDE(variant, lambda1=0.0).fit(X, conditions=labels)
        assert abs(masked.W_[1, 0]) < 1e-3
        assert masked.W_[0, 1] == pytest.approx(beta, abs=2e-3)
        assert abs(beta - 1.0) < 0.1  # the truth, up to sampling
        assert unmasked.W_[0, 1] < beta - 0.15  # diluted by the intervened rows


# --------------------------------------------------------------------------------------------
# rows == statistics
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["nv", "ev"])
def test_rows_and_statistics_give_the_same_W(variant):
    X, labels, targets, _ = _sem(3)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)])
    from_rows = CoLiDE(variant).fit(frame, conditions=labels, targets={"do1": ["x1"], "do3": ["x3"]})
    # Statistics computed independently, per condition, with pandas (n, mean, 1/n covariance)
    g = frame.groupby(np.asarray(labels), sort=False)
    order = list(dict.fromkeys(labels))
    stats = ConditionStats(
        labels=order, n=[int(g.size()[c]) for c in order],
        means=np.stack([g.get_group(c).mean().to_numpy() for c in order]),
        covs=np.stack([g.get_group(c).cov(ddof=0).to_numpy() for c in order]),
        targets=targets, node_names=list(frame.columns))
    from_stats = CoLiDE(variant).fit_from_stats(stats)
    np.testing.assert_allclose(from_stats.W_, from_rows.W_, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(from_stats.adjacency_ != 0, from_rows.adjacency_ != 0)
    assert from_rows.targets_ == {"obs": (), "do1": (1,), "do3": (3,)}
    assert from_rows.node_names_ == list(frame.columns)


def test_faithful_and_fast_solvers_agree_on_a_masked_problem():
    X, labels, targets, _ = _sem(5)
    stats = ConditionStats.from_data(X, labels, targets)
    fast = CoLiDE("nv", solver="fast").fit_from_stats(stats)  # the central path's two solvers
    faithful = CoLiDE("nv", solver="adam").fit_from_stats(stats)
    assert faithful.result_.objective == pytest.approx(fast.result_.objective, rel=1e-3)
    np.testing.assert_array_equal(faithful.adjacency_ != 0, fast.adjacency_ != 0)


def test_conditions_without_targets_work_with_topo_and_targets_too():
    # Without targets every node sees the same covariance (centred per condition), which TOPO takes.
    # With targets TOPO reads each node's own C_j (tests/test_topo_conditions.py has the details).
    X, labels, targets, _ = _sem(2)
    topo = CoLiDE("nv", solver="topo").fit(X, conditions=labels)
    stats = ConditionStats.from_data(X, labels)
    same = CoLiDE("nv", solver="topo").fit_from_stats(stats.pooled_covariance(), stats.n_samples)
    np.testing.assert_array_equal(topo.W_, same.W_)
    masked = CoLiDE("nv", solver="topo").fit(X, conditions=labels, targets=targets)
    assert masked.order_ is not None and np.all(np.diag(masked.W_) == 0) and masked.targets_ != topo.targets_


# --------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------
X_SMALL = np.random.default_rng(0).normal(size=(12, 3))


@pytest.mark.parametrize("conditions,kind", [
    (["a"] * 11, "condition_length"),
    ("aaaaaaaaaaaa", "condition_length"),
    (["a"] * 11 + [None], "condition_missing"),
    ([1.0] * 11 + [np.nan], "condition_missing"),
    (["a"] * 6 + [""] * 6, "condition_missing"),
    ([1] * 6 + ["b"] * 6, "condition_mixed_types"),
    ([1.5] * 6 + ["b"] * 6, "condition_mixed_types"),
    (["a"] * 11 + ["b"], "condition_too_few_rows"),
    ([object()] * 12, "condition_bad_label"),
    (["x" * 300] * 12, "condition_bad_label"),
])
def test_bad_conditions_are_refused(conditions, kind):
    with pytest.raises(ConditionsError) as err:
        CoLiDE().fit(X_SMALL, conditions=conditions)
    assert err.value.kind == kind


def test_too_many_conditions_are_refused(monkeypatch):
    from colide_core import defaults

    monkeypatch.setattr(defaults, "MAX_CONDITIONS", 3)
    with pytest.raises(ConditionsError) as err:
        check_conditions(np.repeat(np.arange(6), 2), 12)
    assert err.value.kind == "too_many_conditions"


@pytest.mark.parametrize("targets,kind", [
    ({"c": [0]}, "target_unknown_condition"),
    ({"a": ["nope"]}, "target_unknown_node"),
    ({"a": [3]}, "target_unknown_node"),
    ({"a": [True]}, "target_unknown_node"),
    ({"a": [0], "b": [0]}, "target_every_row"),
    ({"a": [0, 1, 2, 0]}, "targets_malformed"),
    ([("a", 0)], "targets_malformed"),
    ({"a": {"x": 1}}, "targets_malformed"),
])
def test_bad_targets_are_refused(targets, kind):
    frame = pd.DataFrame(X_SMALL, columns=["u", "v", "w"])
    with pytest.raises(ConditionsError) as err:
        CoLiDE().fit(frame, conditions=["a"] * 6 + ["b"] * 6, targets=targets)
    assert err.value.kind == kind


def test_targets_without_conditions_and_integer_labels():
    with pytest.raises(ConditionsError):
        CoLiDE().fit(X_SMALL, targets={"a": [0]})
    labels, codes = check_conditions(pd.Series([3, 3, 7, 7, 3, 7]), 6)
    assert labels == ("3", "7") and codes.tolist() == [0, 0, 1, 1, 0, 1]
    assert check_targets({7: 1}, labels, n_nodes=2) == {"3": (), "7": (1,)}
    assert check_conditions(np.array([2.0, 2.0, 5.0, 5.0]), 4)[0] == ("2", "5")


def _old_node_covariances(stats, intercept):
    # The formula before issue 42, written out: for each node, the kept conditions' scatter
    # sum_c n_c S_c (plus the mean part for "pooled") over their rows.
    mask = stats.target_mask()
    n = np.asarray(stats.n, dtype=float)
    out = []
    for j in range(stats.n_nodes):
        idx = np.flatnonzero(~mask[:, j])
        N = n[idx].sum()
        if idx.size == 1:
            out.append(np.array(stats.covs[idx[0]]))
            continue
        C = np.tensordot(n[idx], stats.covs[idx], axes=1)
        if intercept == "pooled":
            m = n[idx] @ stats.means[idx] / N
            dm = stats.means[idx] - m
            C = C + (dm * n[idx][:, None]).T @ dm
        out.append(C / N)
    return np.stack(out)


@pytest.mark.parametrize("intercept", ["condition", "pooled"])
def test_node_covariances_subtracting_the_masked_conditions_equal_the_kept_sums(intercept):
    # Issue 42: each group's covariance is now the total scatter less the conditions that mask it
    # (or the kept ones' sum when those are fewer); it must equal the kept conditions' sum. Twelve
    # conditions of 3 to 40 rows with shifted means; node 0 is a target in all but condition 0
    # (one condition kept: its own covariance, exactly), node 1 in none (the total), nodes 2
    # and 5 in conditions 3 and 7 (subtracted, one group), node 3 in 8 of 12 (the kept side
    # summed), node 4 only in the largest condition (more rows masked than kept on no side).
    rng = np.random.default_rng(7)
    K, d = 12, 6
    sizes = rng.integers(3, 40, K)
    sizes[5] = 400
    labels = np.repeat([f"c{k}" for k in range(K)], sizes)
    X = rng.standard_normal((sizes.sum(), d)) @ rng.standard_normal((d, d)) + 3.0 * rng.standard_normal(d)
    X += np.repeat(rng.standard_normal((K, d)), sizes, axis=0)
    targets = {f"c{k}": [0] for k in range(1, K)}
    for k in (3, 7):
        targets[f"c{k}"] = targets[f"c{k}"] + [2, 5]
    for k in range(4, 12):
        targets[f"c{k}"] = targets[f"c{k}"] + [3]
    targets["c5"] = targets["c5"] + [4]
    stats = ConditionStats.from_data(X, labels, targets)
    node = stats.node_covariances(intercept)
    assert node.covs.shape[0] == 5 and node.group[2] == node.group[5]
    new = node.covs[node.group]
    old = _old_node_covariances(stats, intercept)
    scale = np.abs(old).max()
    np.testing.assert_allclose(new, old, rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_array_equal(new[0], stats.covs[0])  # one kept condition: no rounding at all
    weights = np.array([stats.n[0]] + [sizes.sum() - sizes[[k for k in range(K) if j in stats.targets[f"c{k}"]]].sum()
                                       for j in range(1, d)]) / sizes.sum()
    np.testing.assert_allclose(node.node_weight, weights, rtol=1e-15)
    np.testing.assert_allclose(node.pooled, stats.pooled_covariance(intercept), rtol=0, atol=0)


def test_node_covariances_make_no_copy_of_the_stack(monkeypatch):
    # K = 1,000 conditions of 40 nodes: the (K, d, d) stack is 12.8 MB. Before issue 42 each of
    # the 40 target patterns fancy-indexed its ~995 kept conditions (a 12.7 MB copy each) and the
    # constructor copied the stack and compared it with its transpose (several stack-sized
    # temporaries). Now the statistics are built once, checked by blocks of conditions (here 16,
    # 205 kB; 2 MB by default, small beside the 320 MB stack at the limit), and each group is the
    # total less its 25 masked conditions: the peak of new allocations stays far below the stack.
    import tracemalloc

    from colide_core.data import conditions as cond_mod

    K, d, rows = 1000, 40, 3
    monkeypatch.setattr(cond_mod, "_BLOCK_CELLS", 16 * d * d)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((K * rows, d))
    labels = np.repeat([f"c{k}" for k in range(K)], rows)
    targets = {f"c{k}": [k % d] for k in range(1, K)}
    stack = K * d * d * 8
    tracemalloc.start()
    try:
        stats = ConditionStats.from_data(X, labels, targets)
        built = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        node = stats.node_covariances()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert node.covs.shape == (d, d, d)
    assert built < 1.25 * stack, (built, stack)     # the stack once (main: two copies and more)
    assert peak < 0.25 * stack, (peak, stack)       # G d^2 results and blocks (main: > one stack)


def test_the_statistics_hear_stop(monkeypatch):
    # A callback returning True stops the building of the statistics (from_data, node_covariances)
    # with StatisticsStopped; CoLiDE.fit hears it as the first callback of the fit, (0, 0, nan),
    # and ends stopped before the solve: no iteration, W zero.
    from colide_core.data import conditions as cond_mod
    from colide_core.exceptions import StatisticsStopped

    monkeypatch.setattr(cond_mod, "_HEAR_EVERY", 0.0)  # every chance to listen (50 ms otherwise)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 4))
    labels = np.repeat(["a", "b", "c"], 20)
    targets = {"b": [1], "c": [2]}
    calls = []
    with pytest.raises(StatisticsStopped):
        ConditionStats.from_data(X, labels, targets, callback=lambda: calls.append(1) or True)
    assert calls == [1]
    stats = ConditionStats.from_data(X, labels, targets, callback=lambda: False)
    with pytest.raises(StatisticsStopped):
        stats.node_covariances(callback=lambda: True)
    seen = []

    def stop(stage, iteration, objective):
        seen.append((stage, iteration, objective))
        return True

    m = CoLiDE("nv").fit(X, labels, targets, callback=stop)
    assert len(seen) == 1 and seen[0][:2] == (0, 0) and np.isnan(seen[0][2])
    assert m.stopped_ and m.n_iter_ == 0 and m.result_.stop_reason == "callback"
    assert not m.W_.any() and not m.adjacency_.any() and m.W_.shape == (4, 4)
    assert m.conditions_ is None and m.sigma_.shape == (4,)
    m = CoLiDE("ev").fit_from_stats(stats, callback=stop)  # heard in node_covariances
    assert m.stopped_ and m.n_iter_ == 0 and m.conditions_ == ("a", "b", "c")
    with pytest.raises(TypeError):
        ConditionStats.from_data(X, labels, targets, callback="stop")


def test_condition_stats_checks_its_statistics():
    ok = dict(labels=["a", "b"], n=[3, 4], means=np.zeros((2, 2)), covs=np.stack([np.eye(2)] * 2))
    ConditionStats(**ok)
    with pytest.raises(ConditionsError):
        ConditionStats(**{**ok, "n": [1, 4]})
    with pytest.raises(ValueError):
        ConditionStats(**{**ok, "covs": np.stack([np.eye(2), [[1.0, 0.5], [0.0, 1.0]]])})
    with pytest.raises(ValueError):
        ConditionStats(**{**ok, "means": np.zeros((3, 2))})
    with pytest.raises(ConditionsError):
        ConditionStats(**{**ok, "labels": ["a", "a"]})
    stats = ConditionStats(**ok)
    with pytest.raises(ValueError):
        stats.means[0, 0] = 1.0  # read-only


# --------------------------------------------------------------------------------------------
# the scikit-learn contract
# --------------------------------------------------------------------------------------------
def test_clone_and_no_mutation_of_the_callers_inputs():
    X, labels, targets, _ = _sem(4)
    X0, labels0, targets0 = X.copy(), list(labels), copy.deepcopy(targets)
    model = CoLiDE("ev", lambda1=0.1)
    model.fit(X, conditions=labels, targets=targets)
    np.testing.assert_array_equal(X, X0)
    assert labels == labels0 and targets == targets0
    twin = clone(model)
    assert twin.get_params() == model.get_params() and not hasattr(twin, "W_")
    np.testing.assert_array_equal(twin.fit(X, conditions=labels, targets=targets).W_, model.W_)
    # a refit without conditions forgets them
    assert model.fit(X).conditions_ is None


# --------------------------------------------------------------------------------------------
# carried through: the bootstrap, the lambda path
# --------------------------------------------------------------------------------------------
def test_bootstrap_resamples_within_conditions(monkeypatch):
    from colide_core.evaluation import stability

    X, labels, targets, _ = _sem(6, n_obs=60, n_int=40)
    seen = []
    real = stability._fit_one

    def spy(estimator, values, rows, names, design=None):  # the Design of all the rows (issue 47)
        seen.append((np.bincount(design.codes[rows], minlength=len(design.labels)),
                     {lab: t for lab, t in design.targets.items() if t}))
        return real(estimator, values, rows, names, design)

    monkeypatch.setattr(stability, "_fit_one", spy)
    res = stability.bootstrap_edges(X, CoLiDE("nv", max_iter=(200, 200, 200, 400)), n_boot=3, random_state=0,
                                    conditions=labels, targets=targets)
    assert res.n_ok == 3 and len(seen) == 3
    for counts, tg in seen:
        assert counts.tolist() == [60, 40, 40]  # each condition keeps its size
        assert tg == {"do1": (1,), "do3": (3,)}


def test_lambda_path_carries_the_conditions():
    from colide_core import lambda_path

    X, labels, targets, _ = _sem(7)
    path = lambda_path(X, [0.05, 0.1], [0.3], "nv", conditions=labels, targets=targets, warm_start=False)
    for k, lam in enumerate([0.05, 0.1]):
        single = CoLiDE("nv", lambda1=lam).fit(X, conditions=labels, targets=targets)
        np.testing.assert_allclose(path.W[k], single.W_, rtol=0, atol=1e-12)


def test_manifest_records_and_reproduces_the_conditions():
    from colide_core.run.manifest import ManifestError, build_manifest, load_manifest, manifest_to_json

    X, labels, targets, _ = _sem(8)
    frame = pd.DataFrame(X, columns=list("abcde"))
    model = CoLiDE("nv").fit(frame, conditions=labels, targets={"do1": ["b"], "do3": ["d"]})
    doc = build_manifest(model, frame, conditions=labels, conditions_column="treatment")
    rec = doc["conditions"]
    assert rec["column"] == "treatment" and rec["labels"] == ["obs", "do1", "do3"]
    assert rec["counts"] == [400, 300, 300] and rec["targets"] == {"do1": ["b"], "do3": ["d"]}
    manifest = load_manifest(manifest_to_json(doc))
    again = manifest.reproduce(frame, conditions=labels)
    np.testing.assert_array_equal(again.W_, model.W_)
    with pytest.raises(ManifestError, match="conditions"):
        manifest.reproduce(frame)
    shuffled = list(reversed(labels))
    with pytest.raises(ManifestError):
        manifest.reproduce(frame, conditions=shuffled)
    bad = dict(doc, conditions=dict(rec, targets={"do1": ["zz"]}))
    with pytest.raises(ManifestError, match="targets"):
        load_manifest(manifest_to_json(bad))
    assert build_manifest(CoLiDE().fit(frame), frame)["conditions"] is None


def test_read_targets_json_and_csv():
    from colide_core import defaults
    from colide_core.data.conditions import read_targets

    assert read_targets(b'{"do1": ["b"], "do3": "d", "obs": []}', "t.json") == {"do1": ["b"], "do3": ["d"], "obs": []}
    assert read_targets(b"condition,target\ndo1,b\ndo1,c;b\nobs,\n", "t.csv") == {"do1": ["b", "c"], "obs": []}
    for raw, name in ((b"[1, 2]", "t.json"), (b'{"a": {"b": 1}}', "t.json"), (b"cond,node\na,b\n", "t.csv"),
                      (b"\xff\xfe", "t.json"), (b" " * (defaults.MAX_TARGETS_FILE_BYTES + 1), "t.csv")):
        with pytest.raises(ConditionsError) as err:
            read_targets(raw, name)
        assert err.value.kind == "targets_malformed"


def test_cli_fit_with_a_condition_column_and_a_targets_file(tmp_path, capsys):
    import json

    from colide_core.run.cli import main
    from colide_core.run.manifest import load_manifest

    X, labels, targets, _ = _sem(9, n_obs=200, n_int=150)
    frame = pd.DataFrame(X, columns=list("abcde"))
    frame.insert(2, "treatment", labels)
    frame.to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "targets.json").write_text(json.dumps({"do1": ["b"], "do3": ["d"]}))
    rc = main(["fit", str(tmp_path / "data.csv"), "--out", str(tmp_path / "out"), "--conditions", "treatment",
               "--targets", str(tmp_path / "targets.json"), "--quiet"])
    assert rc == 0
    W = pd.read_csv(tmp_path / "out" / "W.csv", index_col=0)
    assert list(W.columns) == list("abcde")  # the condition column is not a node
    direct = CoLiDE().fit(frame.drop(columns="treatment"), conditions=labels, targets={"do1": ["b"], "do3": ["d"]})
    np.testing.assert_allclose(W.to_numpy(), direct.W_, rtol=0, atol=1e-12)
    manifest = load_manifest((tmp_path / "out" / "manifest.json").read_text())
    assert manifest.conditions["column"] == "treatment" and manifest.conditions["targets"] == {"do1": ["b"],
                                                                                                "do3": ["d"]}
    # bad input: an unknown column, an unknown node, targets without conditions
    (tmp_path / "bad.json").write_text(json.dumps({"do1": ["zz"]}))
    for extra in (["--conditions", "nope"], ["--targets", str(tmp_path / "targets.json")],
                  ["--conditions", "treatment", "--targets", str(tmp_path / "bad.json")]):
        with pytest.raises(SystemExit) as exit_:
            main(["fit", str(tmp_path / "data.csv"), "--out", str(tmp_path / "o2"), "--quiet", "--force",
                  "--drop-non-numeric", *extra])
        assert exit_.value.code == 2
    assert "'zz'" in capsys.readouterr().err


def test_stability_selection_subsamples_within_conditions(monkeypatch):
    from colide_core.evaluation import stability

    X, labels, targets, _ = _sem(10, n_obs=60, n_int=40)
    seen = []
    real = stability._fit_one

    def spy(estimator, values, rows, names, design=None):
        seen.append(np.bincount(design.codes[rows], minlength=3).tolist())
        return real(estimator, values, rows, names, design)

    monkeypatch.setattr(stability, "_fit_one", spy)
    stability.stability_selection(X, CoLiDE("nv", max_iter=(200, 200, 200, 400)), [0.05, 0.1], n_subsamples=2,
                                  random_state=0, conditions=labels, targets=targets)
    assert seen == [[30, 20, 20]] * 4  # half of each condition, for each lambda and subsample


@pytest.mark.parametrize("d", [5, 60])
def test_grouped_product_kernels(d):
    # The numba product (plain loops up to 48 nodes, one gemm per group above) and the numpy one
    # against the definition P[:, j] = w_j C_j W[:, j].
    from colide_core.solver import _fast

    rng = np.random.default_rng(d)
    A = rng.normal(size=(3, d, d))
    covs = A @ A.transpose(0, 2, 1) / d
    node = NodeCovariance(covs, rng.integers(0, 3, d), [1.0, 0.5, 0.25])
    W = rng.normal(size=(d, d))
    want = np.stack([node.node_weight[j] * covs[node.group[j]] @ W[:, j] for j in range(d)], axis=1)
    np.testing.assert_allclose(node.product(W), want, rtol=1e-12, atol=1e-12)
    cols, ptr = node.columns
    np.testing.assert_allclose(_fast._grouped_dot_py(node.weighted, cols, ptr, W), want, rtol=1e-12, atol=1e-12)
    if _fast.HAVE_NUMBA:
        out = np.empty((d, d))
        _fast._grouped_dot_nb(node.weighted, cols, ptr, W, out)
        np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("variant", ["nv", "ev", "ls"])
def test_fast_loop_in_algorithm_1_mode_is_the_faithful_loop_on_a_masked_problem(variant):
    # fast_solve's documented identity (step_scale=1, no polish/averaging/chatter control, an
    # inverse every step) holds on the per-node form too, and its numpy and numba engines agree.
    X, labels, targets, _ = _sem(5)
    node = ConditionStats.from_data(X, labels, targets).node_covariances()
    budget = dict(max_iter=(1000, 1000, 1000, 2000), checkpoint=500)
    alg1 = dict(step_scale=1, polish=False, switch_tol=1e-6, chatter_tol=None, average=False, inverse_every=1)
    faithful = colide_solve(node, variant=variant, **budget)
    for engine in ("numpy", "numba"):
        fast = fast_solve(node, variant=variant, engine=engine, **alg1, **budget)
        np.testing.assert_allclose(fast.W, faithful.W, rtol=0, atol=1e-12)


def test_prior_knowledge_applies_with_conditions():
    X, labels, targets, W_true = _sem(11)
    free = CoLiDE("nv").fit(X, conditions=labels, targets=targets)
    i, j = np.unravel_index(np.argmax(np.abs(free.W_)), free.W_.shape)
    held = CoLiDE("nv", forbidden=[(int(i), int(j))]).fit(X, conditions=labels, targets=targets)
    assert abs(free.W_[i, j]) > 0.3 and held.W_[i, j] == 0.0 and held.adjacency_[i, j] == 0.0


def test_condition_design_and_centre_by_condition_examples_run():
    # The two docstring examples are run as doctests (the suite runs no doctest otherwise): the
    # design codes the labels in order of appearance and masks node "b" on the "kd" rows;
    # centring subtracts each condition's means ((2, 10) and (11, 20)).
    import doctest

    from colide_core.data import conditions

    for func in (conditions.condition_design, conditions.centre_by_condition):
        tests = doctest.DocTestFinder().find(func, func.__name__, globs={func.__name__: func})
        assert tests and tests[0].examples, func.__name__
        runner = doctest.DocTestRunner()
        for test in tests:
            runner.run(test)
        assert runner.summarize(verbose=False) == (0, len(tests[0].examples)), func.__name__
