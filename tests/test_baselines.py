"""Tests of colide_core.evaluation.baselines: the registry, each method on tiny hand-made problems, error paths,
and the acceptance test (CoLiDE-NV no worse than DAGMA-linear on heteroscedastic ER2 data)."""
import numpy as np
import pandas as pd
import pytest

from colide_core import baselines, evaluate, is_dag
from colide_core import simulate as sim


def adj(d, edges):
    A = np.zeros((d, d))
    for i, j in edges:
        A[i, j] = 1.0
    return A


def sem_data(W, n, noise_var, seed):
    X, _ = sim.simulate_linear_sem(W, n, "gaussian", noise_var=noise_var, random_state=seed)
    return X


def test_registry_names_and_specs():
    assert list(baselines.METHODS) == ["CoLiDE-EV", "CoLiDE-NV", "DAGMA-linear", "SortNRegress", "GES", "GIES"]
    for name, spec in baselines.METHODS.items():
        assert spec.name == name and callable(spec.fit) and spec.description
    assert baselines.METHODS["GES"].max_nodes == 30 and baselines.METHODS["GES"].slow
    assert baselines.METHODS["CoLiDE-NV"].defaults["lambda1"] == 0.05
    with pytest.raises(TypeError):
        baselines.METHODS["GES"].defaults["maxP"] = 3  # read-only defaults


def test_sortnregress_recovers_a_varsortable_chain():
    # 0 -> 1 -> 2 with weights 2 and unit noise: variances 1, 5, 21 increase along the chain, so the
    # variance order is the causal order and the lasso keeps exactly the two true parents.
    W = adj(3, [(0, 1), (1, 2)]) * 2.0
    X = sem_data(W, 2000, 1.0, seed=0)
    W_hat = baselines.run_method("SortNRegress", X)
    np.testing.assert_array_equal(W_hat != 0, W != 0)
    np.testing.assert_allclose(W_hat[W != 0], [2.0, 2.0], atol=0.1)
    # relabelling the nodes (reversing the column order) gives the relabelled answer
    W_rev = baselines.run_method("SortNRegress", X[:, ::-1])
    np.testing.assert_array_equal(W_rev != 0, (W != 0)[::-1, ::-1])


def test_ges_finds_a_v_structure_exactly():
    # 0 -> 2 <- 1: both edges are compelled, so GES's CPDAG has no undirected edge to orient.
    W = adj(3, [(0, 2), (1, 2)])
    X = sem_data(W, 2000, 1.0, seed=1)
    W_hat = baselines.run_method("GES", X)
    np.testing.assert_array_equal(W_hat, W)


def test_ges_chain_is_returned_as_a_member_of_its_equivalence_class():
    # 0 -> 1 -> 2: GES returns 0 -- 1 -- 2; pdag2dag orients it into one DAG of the class, so SHD-C is 0
    # while SHD may be 0, 1 or 2 depending on the member chosen.
    W = adj(3, [(0, 1), (1, 2)])
    X = sem_data(W, 2000, 1.0, seed=2)
    W_hat = baselines.run_method("GES", X)
    assert is_dag(W_hat)
    m = evaluate(W, W_hat)
    assert m["shd_cpdag"] == 0 and m["nnz"] == 2


@pytest.mark.parametrize("name", ["CoLiDE-EV", "CoLiDE-NV", "DAGMA-linear"])
def test_colide_family_on_a_two_edge_graph(name):
    # 0 -> 1, 0 -> 2 with weights 1.5 and unit noise, n = 1000: an easy problem every variant solves.
    W = adj(3, [(0, 1), (0, 2)]) * 1.5
    X = sem_data(W, 1000, 1.0, seed=3)
    calls = []
    W_hat = baselines.run_method(name, pd.DataFrame(X, columns=list("abc")),
                                 callback=lambda stage, it, obj: calls.append(stage))
    assert W_hat.shape == (3, 3) and is_dag(W_hat)
    m = evaluate(W, W_hat)
    # the skeleton is found; the direction of these Markov-equivalent edges is what the score decides
    assert m["shd_cpdag"] == 0
    assert len(calls) > 0  # progress reached the callback


def test_run_method_errors_are_clear():
    X = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(KeyError, match="registered methods"):
        baselines.run_method("NOTEARS", X)
    with pytest.raises(ValueError, match="Unknown parameter"):
        baselines.run_method("SortNRegress", X, alpha=1.0)
    with pytest.raises(ValueError, match="limited to 30 nodes"):
        baselines.run_method("GES", np.random.default_rng(0).normal(size=(50, 31)))
    with pytest.raises(ValueError, match="NaN"):
        baselines.run_method("SortNRegress", np.full((5, 3), np.nan))
    # a failure inside the method is wrapped, naming the method, with the cause chained
    X_const = X.copy()
    X_const[:, 1] = 1.0
    with pytest.raises(baselines.MethodError, match="CoLiDE-NV failed") as info:
        baselines.run_method("CoLiDE-NV", X_const)
    assert info.value.__cause__ is not None


def test_run_method_safe_never_raises():
    X = np.random.default_rng(0).normal(size=(50, 3))
    ok = baselines.run_method_safe("SortNRegress", X)
    assert ok["error"] is None and ok["W"].shape == (3, 3) and ok["time"] >= 0
    for bad in (("NOTEARS", X), ("GES", np.zeros((3, 40))), ("SortNRegress", "not data")):
        res = baselines.run_method_safe(*bad)
        assert res["W"] is None and isinstance(res["error"], str) and res["error"]
    X_const = X.copy()
    X_const[:, 0] = 0.0
    res = baselines.run_method_safe("DAGMA-linear", X_const)
    assert res["W"] is None and "DAGMA-linear failed" in res["error"]


def test_acceptance_colide_nv_not_worse_than_dagma_on_heteroscedastic_er2():
    """ER2, d=20, Gaussian NV noise in the paper's heteroscedastic setting (Section 5.2: variances
    U[0.5, 10], weights +-[0.25, 1]), n=1000, seeds 0, 1, 2 (the first three; not selected).

    The issue's acceptance criterion: mean SHD of CoLiDE-NV <= mean SHD of DAGMA-linear (same
    optimiser, least-squares score). Measured honestly, it does NOT hold in the high-SNR variant
    with weights +-[0.5, 2] on these seeds (CoLiDE-NV SHD 0/3/3 vs DAGMA 0/1/1): the NV score acts
    per node like a square-root lasso, so a noisy node's weak parents get an effective L1 weight of
    about lambda1 * sigma_j and are dropped. That result is reported in the issue note.
    """
    shd = {"CoLiDE-NV": [], "DAGMA-linear": []}
    for seed in (0, 1, 2):
        rng = np.random.default_rng(seed)
        B = sim.simulate_dag(20, 2, "er", random_state=rng)
        W = sim.simulate_parameters(B, ((-1.0, -0.25), (0.25, 1.0)), random_state=rng)
        var = sim.draw_noise_variances(20, 0.5, 10.0, random_state=rng)
        X, _ = sim.simulate_linear_sem(W, 1000, "gaussian", var, random_state=rng)
        for name in shd:
            shd[name].append(evaluate(B, baselines.run_method(name, X))["shd"])
    assert np.mean(shd["CoLiDE-NV"]) <= np.mean(shd["DAGMA-linear"]), shd


# --------------------------------------------------------------------------------------------
# GIES (issue 31): known intervention targets orient what observational data cannot
# --------------------------------------------------------------------------------------------

def _chain_with_intervention(order, seed, n=3000):
    """A 3-node chain order[0] -> order[1] -> order[2] (weights 1.5, unit noise): n observational
    rows, then n rows with a hard intervention on the middle node (its parent ignored)."""
    W = np.zeros((3, 3))
    W[order[0], order[1]] = W[order[1], order[2]] = 1.5
    X_obs = sem_data(W, n, 1.0, seed)
    W_do = W.copy()
    W_do[:, order[1]] = 0.0
    X_do = sem_data(W_do, n, 1.0, seed + 100) + 5.0  # a condition-wide shift too
    labels = np.array(["obs"] * n + ["do_mid"] * n, dtype=object)
    return W, np.vstack([X_obs, X_do]), labels


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0)])
def test_gies_orients_a_chain_with_a_known_intervention(order):
    # Observationally 0 - 1 - 2 is one Markov equivalence class (three members). Intervening on the
    # middle node orients both of its edges (Hauser & Buehlmann 2012, Thm 10: an edge is compelled
    # when exactly one of its ends is a target), so the I-essential graph is the true chain in both
    # directions. Without the targets the class is undirected and the one member returned cannot
    # be right for both directions.
    W, X, labels = _chain_with_intervention(order, seed=7)
    mid = order[1]
    W_hat = baselines.run_method("GIES", X, conditions=labels, targets={"do_mid": [mid]})
    np.testing.assert_array_equal(W_hat, W != 0)
    by_name = baselines.run_method("GIES", pd.DataFrame(X, columns=["a", "b", "c"]), conditions=labels,
                                   targets={"do_mid": ["abc"[mid]]})
    np.testing.assert_array_equal(by_name, W_hat)


def test_gies_without_targets_is_ges_up_to_the_member_of_the_class():
    # One condition, no target: GIES's score is GES's BIC, so the essential graph is the undirected
    # chain 0 - 1 - 2 and the DAG returned is a member of its class (SHD-C 0, two edges).
    W, X, labels = _chain_with_intervention((0, 1, 2), seed=8)
    m = evaluate(W, baselines.run_method("GIES", X[labels == "obs"]))
    assert m["shd_cpdag"] == 0 and m["nnz"] == 2
    # Conditions without targets leave the chain undirected whichever way it points, so the same
    # member comes back for 0 -> 1 -> 2 and 2 -> 1 -> 0: it is wrong for at least one of them.
    shd = []
    for order in ((0, 1, 2), (2, 1, 0)):
        W_o, X_o, lab_o = _chain_with_intervention(order, seed=9)
        shd.append(evaluate(W_o, baselines.run_method("GIES", X_o, conditions=lab_o))["shd"])
    assert max(shd) > 0


def test_conditions_are_refused_where_a_method_would_pool_them():
    W, X, labels = _chain_with_intervention((0, 1, 2), seed=10, n=200)
    with pytest.raises(ValueError, match="GES does not take conditions"):
        baselines.run_method("GES", X, conditions=labels)
    with pytest.raises(ValueError, match="targets need conditions"):
        baselines.run_method("GIES", X, targets={"do_mid": [1]})
    from colide_core.exceptions import ConditionsError
    with pytest.raises(ConditionsError, match="not a node"):
        baselines.run_method("GIES", X, conditions=labels, targets={"do_mid": [3]})
    with pytest.raises(ConditionsError, match="every condition"):
        baselines.run_method("GIES", X, conditions=labels, targets={"do_mid": [1], "obs": [1]})
    res = baselines.run_method_safe("GIES", X, conditions=labels, targets={"nope": [1]})
    assert res["W"] is None and "nope" in res["error"]


def test_run_method_passes_conditions_and_targets_to_colide():
    # Needs the estimator's fit(X, conditions=, targets=) (issue 31, colide_core.data.conditions):
    # the registry gives the same W as the estimator called directly, targets by name or index.
    from colide_core import CoLiDE

    W, X, labels = _chain_with_intervention((2, 1, 0), seed=7, n=500)
    direct = CoLiDE("nv").fit(X, conditions=labels, targets={"do_mid": [1]}).adjacency_
    np.testing.assert_array_equal(baselines.run_method("CoLiDE-NV", X, conditions=labels, targets={"do_mid": [1]}),
                                  direct)
    np.testing.assert_array_equal(
        baselines.run_method("CoLiDE-NV", pd.DataFrame(X, columns=["a", "b", "c"]), conditions=labels,
                             targets={"do_mid": "b"}), direct)
