"""Tests of colide_core.data.simulate: graph models, weights, linear SEM noise laws, varsortability."""
import math

import networkx as nx
import numpy as np
import pytest

from colide_core import simulate as sim


def is_acyclic(B):
    return nx.is_directed_acyclic_graph(nx.from_numpy_array((B != 0).astype(int), create_using=nx.DiGraph))


@pytest.mark.parametrize("degree", [1, 2, 4])
def test_er_graphs_have_k_times_d_edges_and_are_dags(degree):
    d = 30
    for seed in range(10):
        B = sim.simulate_dag(d, degree, "er", random_state=seed)
        assert B.shape == (d, d)
        assert set(np.unique(B)) <= {0.0, 1.0}
        assert np.all(np.diag(B) == 0)
        assert is_acyclic(B)
        # NOTEARS' G(n, m) with m = s0 = k * d: exactly k * d edges
        assert B.sum() == degree * d


@pytest.mark.parametrize("degree", [1, 2, 4])
def test_sf_graphs_have_about_k_times_d_edges_and_are_dags(degree):
    d = 50
    counts = []
    for seed in range(10):
        B = sim.simulate_dag(d, degree, "sf", random_state=seed)
        assert is_acyclic(B) and np.all(np.diag(B) == 0)
        counts.append(B.sum())
    # Barabasi-Albert with m = k: a star of m edges, then m edges for each of the d - m - 1 new nodes:
    # m * (d - m) edges, e.g. 4 * 46 = 184 for SF4 at d = 50 (within 10% of k * d = 200).
    assert counts == [degree * (d - degree)] * 10
    assert abs(np.mean(counts) - degree * d) <= 0.1 * degree * d


def test_sf_has_hubs_er_does_not():
    # preferential attachment gives a heavy-tailed total degree; ER's max degree stays small
    d = 200
    sf = sim.simulate_dag(d, 2, "sf", random_state=0)
    er = sim.simulate_dag(d, 2, "er", random_state=0)
    deg = lambda B: (B.sum(0) + B.sum(1)).max()  # noqa: E731
    assert deg(sf) > 2 * deg(er)


def test_node_order_is_randomly_permuted():
    # a DAG built along 0..d-1 would be strictly upper-triangular; the random permutation breaks that
    upper = [np.all(np.tril(sim.simulate_dag(10, 2, g, random_state=s)) == 0)
             for g in ("er", "sf") for s in range(10)]
    assert not all(upper)


def test_simulate_dag_is_reproducible_and_rejects_bad_input():
    a = sim.simulate_dag(20, 2, "er", random_state=7)
    b = sim.simulate_dag(20, 2, "er", random_state=7)
    c = sim.simulate_dag(20, 2, "er", random_state=8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    with pytest.raises(ValueError, match="graph"):
        sim.simulate_dag(5, 1, "ba")
    with pytest.raises(ValueError, match="positive integer"):
        sim.simulate_dag(0, 1)
    with pytest.raises(ValueError, match="degree"):
        sim.simulate_dag(5, -1)
    # ER degree larger than possible is clipped to the complete DAG: d(d-1)/2 edges
    assert sim.simulate_dag(5, 10, "er", random_state=0).sum() == 10


def test_simulate_parameters_respects_support_and_ranges():
    B = sim.simulate_dag(30, 4, "er", random_state=0)
    B0 = B.copy()
    W = sim.simulate_parameters(B, random_state=1)
    np.testing.assert_array_equal(B, B0)  # input untouched
    np.testing.assert_array_equal(W != 0, B != 0)
    w = W[B != 0]
    assert np.all((np.abs(w) >= 0.5) & (np.abs(w) <= 2.0))
    # each edge picks a sign range with probability 1/2: 120 edges, both signs present in bulk
    assert 0.35 < np.mean(w > 0) < 0.65
    W2 = sim.simulate_parameters(B, w_ranges=((-1.0, -0.25), (0.25, 1.0)), random_state=1)
    assert np.all((np.abs(W2[B != 0]) >= 0.25) & (np.abs(W2[B != 0]) <= 1.0))
    np.testing.assert_array_equal(sim.simulate_parameters(B, random_state=1), W)
    with pytest.raises(ValueError, match="w_ranges"):
        sim.simulate_parameters(B, w_ranges=((1.0, 0.5),))


@pytest.mark.parametrize("noise", sim.NOISE_TYPES)
def test_each_noise_law_has_the_requested_variance(noise):
    # On a DAG, the residual X - X W is exactly the noise Z; its per-node variance must match.
    d, n = 6, 20000
    B = sim.simulate_dag(d, 1, "er", random_state=0)
    W = sim.simulate_parameters(B, random_state=1)
    var = np.array([0.5, 1.0, 2.0, 4.0, 7.0, 10.0])
    X, std = sim.simulate_linear_sem(W, n, noise, noise_var=var, random_state=2)
    assert X.shape == (n, d)
    np.testing.assert_allclose(std, np.sqrt(var))
    Z = X - X @ W
    np.testing.assert_allclose(Z.var(axis=0), var, rtol=0.10)
    # all laws are centred by default: the noise mean is within ~4 standard errors of 0
    assert np.all(np.abs(Z.mean(axis=0)) < 4 * np.sqrt(var / n))


def test_uncentred_exponential_and_gumbel_keep_their_natural_means():
    n = 20000
    W = np.zeros((2, 2))
    X, _ = sim.simulate_linear_sem(W, n, "exponential", noise_var=4.0, random_state=0, center=False)
    # Exp(lambda) with lambda^-2 = 4: mean 1/lambda = 2
    assert X.mean(axis=0) == pytest.approx([2.0, 2.0], abs=0.1)
    X, _ = sim.simulate_linear_sem(W, n, "gumbel", noise_var=1.0, random_state=0, center=False)
    # Gumbel(0, beta) with pi^2 beta^2 / 6 = 1: mean = Euler gamma * beta = 0.5772 * 0.7797 = 0.450
    assert X.mean(axis=0) == pytest.approx([0.450, 0.450], abs=0.05)


def test_equal_variance_scalar_and_data_propagate_along_edges():
    # 0 -> 1 with weight 2 and unit noise: Var(x1) = 4 Var(x0) + 1 = 5
    W = np.array([[0.0, 2.0], [0.0, 0.0]])
    X, std = sim.simulate_linear_sem(W, 20000, "gaussian", noise_var=1.0, random_state=3)
    np.testing.assert_allclose(std, [1.0, 1.0])
    assert X.var(axis=0) == pytest.approx([1.0, 5.0], rel=0.05)
    assert np.corrcoef(X.T)[0, 1] == pytest.approx(2 / math.sqrt(5), abs=0.02)


def test_simulate_linear_sem_reproducible_no_mutation_and_errors():
    B = sim.simulate_dag(8, 2, "er", random_state=0)
    W = sim.simulate_parameters(B, random_state=0)
    W0 = W.copy()
    var = sim.draw_noise_variances(8, random_state=0)
    var0 = var.copy()
    X1, _ = sim.simulate_linear_sem(W, 50, "laplace", var, random_state=5)
    X2, _ = sim.simulate_linear_sem(W, 50, "laplace", var, random_state=5)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(W, W0)
    np.testing.assert_array_equal(var, var0)
    with pytest.raises(ValueError, match="DAG"):
        sim.simulate_linear_sem(np.array([[0, 1.0], [1.0, 0]]), 10)
    with pytest.raises(ValueError, match="noise must be"):
        sim.simulate_linear_sem(W, 10, "cauchy")
    with pytest.raises(ValueError, match="noise_var"):
        sim.simulate_linear_sem(W, 10, noise_var=np.ones(3))
    with pytest.raises(ValueError, match="noise_var"):
        sim.simulate_linear_sem(W, 10, noise_var=0.0)
    with pytest.raises(ValueError, match="positive integer"):
        sim.simulate_linear_sem(W, 0)


def test_draw_noise_variances_range():
    v = sim.draw_noise_variances(1000, random_state=0)
    assert v.shape == (1000,) and v.min() >= 0.5 and v.max() < 10.0
    assert v.mean() == pytest.approx(5.25, abs=0.3)  # uniform on [0.5, 10]
    with pytest.raises(ValueError):
        sim.draw_noise_variances(3, low=2.0, high=1.0)


def test_standardize_returns_a_new_unit_variance_array():
    rng = np.random.default_rng(0)
    X = rng.normal(3.0, 5.0, size=(100, 4))
    X0 = X.copy()
    Xs = sim.standardize(X)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_allclose(Xs.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(Xs.std(axis=0), 1.0)
    with pytest.raises(ValueError, match="constant"):
        sim.standardize(np.ones((5, 2)))


def test_varsortability_hand_examples():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(1000, 3))
    Z = (Z - Z.mean(0)) / Z.std(0)
    X = Z * np.sqrt([1.0, 2.0, 3.0])  # variances exactly 1, 2, 3
    chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    # paths: length 1: 0->1 (1<2 up), 1->2 (2<3 up); length 2: 0->2 (up). 3/3.
    assert sim.varsortability(X, chain) == pytest.approx(1.0)
    # reversed chain 2 -> 1 -> 0: every path goes down in variance: 0/3.
    assert sim.varsortability(X, chain.T) == pytest.approx(0.0)
    # variances 1, 3, 2 on the chain: 0->1 up, 1->2 down, 0->2 up: 2/3.
    X2 = Z * np.sqrt([1.0, 3.0, 2.0])
    assert sim.varsortability(X2, chain) == pytest.approx(2 / 3)
    # equal variances: every path is a tie worth 1/2
    assert sim.varsortability(Z, chain) == pytest.approx(0.5)
    assert math.isnan(sim.varsortability(X, np.zeros((3, 3))))


def test_simulated_equal_variance_data_is_highly_varsortable():
    # The Reisach et al. (2021) observation: raw NOTEARS-style data has varsortability near 1;
    # after standardisation every variance is 1 (up to rounding far below tol), so every path is a tie: 0.5.
    B = sim.simulate_dag(20, 2, "er", random_state=0)
    W = sim.simulate_parameters(B, random_state=0)
    X, _ = sim.simulate_linear_sem(W, 2000, random_state=0)
    assert sim.varsortability(X, W) > 0.9
    assert sim.varsortability(sim.standardize(X), W) == pytest.approx(0.5, abs=1e-12)
