"""choose_threshold: the post-processing threshold with the lowest BIC (issue 49), on hand-worked graphs."""
from math import comb, log, pi

import numpy as np
import pytest

from colide_core.graph._dag import threshold_to_dag
from colide_core.solver.path import bic_score, choose_threshold


def _data_with_covariance(cov, n, seed=0):
    """Rows whose 1/n covariance (after centring) is exactly ``cov``: whitened noise times a Cholesky factor."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, cov.shape[0]))
    Z -= Z.mean(axis=0)
    Z = Z @ np.linalg.inv(np.linalg.cholesky(Z.T @ Z / n)).T  # sample covariance exactly I
    return Z @ np.linalg.cholesky(cov).T


# The chain 0 -> 1 -> 2, both weights 1, unit noises: cov = [[1, 1, 1], [1, 2, 2], [1, 2, 3]].
CHAIN_COV = np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 2.0], [1.0, 2.0, 3.0]])
# A fit with the two true edges (1.0 and 0.8) and a spurious 0 -> 2 at 0.2: cuts 0, 0.2, 0.8, 1.0.
CHAIN_W = np.array([[0.0, 1.0, 0.2], [0.0, 0.0, 0.8], [0.0, 0.0, 0.0]])


def test_chain_drops_the_spurious_edge_and_the_scores_are_the_hand_worked_ones():
    n = 200
    X = _data_with_covariance(CHAIN_COV, n)
    t, table = choose_threshold(X, CHAIN_W)
    # At t = 0 and t = 0.2 every residual variance is 1 (node 2 on {0, 1} or on {1}: residual 1),
    # so -2 loglik = 3 n (log 2 pi + 1) in both, and the extra edge costs exactly log n.
    # At t = 0.8 node 2 loses its parent (s2 = 3); at t = 1.0 the graph is empty (s2 = 1, 2, 3).
    base = 3 * n * (log(2 * pi) + 1)
    assert t == 0.2
    assert table["threshold"].tolist() == [0.0, 0.2, 0.8, 1.0]
    assert table["edges"].tolist() == [3, 2, 1, 0]
    assert table["chosen"].tolist() == [False, True, False, False]
    assert table["bic"].iloc[1] == pytest.approx(base + 5 * log(n), rel=1e-10)
    assert table["bic"].iloc[0] - table["bic"].iloc[1] == pytest.approx(log(n), rel=1e-8)
    assert table["bic"].iloc[2] == pytest.approx(base + n * log(3) + 4 * log(n), rel=1e-10)
    assert table["bic"].iloc[3] == pytest.approx(base + n * (log(2) + log(3)) + 3 * log(n), rel=1e-10)
    assert table["score"].tolist() == table["bic"].tolist()  # gamma = 0: the plain BIC
    # the returned threshold reproduces the chosen graph
    assert np.array_equal(threshold_to_dag(CHAIN_W, t) != 0, np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], bool))


def test_choice_is_scale_free_in_the_data():
    X = _data_with_covariance(CHAIN_COV, 200)
    t, table = choose_threshold(X * np.array([1.0, 1000.0, 0.01]), CHAIN_W)
    ref = choose_threshold(X, CHAIN_W)[1]
    assert t == 0.2
    # rescaling columns adds the same constant to every graph's BIC
    diff = table["bic"].to_numpy() - ref["bic"].to_numpy()
    assert np.ptp(diff) == pytest.approx(0.0, abs=1e-6)
    assert abs(diff[0]) > 1.0


def test_extended_bic_drops_an_edge_the_bic_keeps():
    # Two nodes, correlation r with r^2 = 0.00725, n = 1000: the edge gains -n log(1 - r^2) = 7.276
    # in -2 loglik; the BIC charges log n = 6.908 (kept), the EBIC at gamma = 0.5 adds
    # 2 * 0.5 * log C(2, 1) = log 2 = 0.693, so 7.601 (dropped).
    n, r = 1000, np.sqrt(0.00725)
    X = _data_with_covariance(np.array([[1.0, r], [r, 1.0]]), n)
    W = np.array([[0.0, 0.5], [0.0, 0.0]])
    t_bic, tab_bic = choose_threshold(X, W)
    t_ebic, tab_ebic = choose_threshold(X, W, gamma=0.5)
    assert (t_bic, t_ebic) == (0.0, 0.5)
    gain = tab_bic["bic"].iloc[1] - tab_bic["bic"].iloc[0]  # empty minus one edge
    assert gain == pytest.approx(-n * np.log(1 - r**2) - np.log(n), rel=1e-8)
    assert tab_ebic["score"].iloc[0] - tab_ebic["bic"].iloc[0] == pytest.approx(log(comb(2, 1)), rel=1e-12)
    assert tab_ebic["score"].iloc[1] == tab_ebic["bic"].iloc[1]  # C(2, 0) = 1


def test_default_candidates_are_every_cut_and_match_a_brute_force_scan():
    rng = np.random.default_rng(3)
    d, n = 6, 300
    B = np.triu(rng.uniform(0.5, 1.5, (d, d)) * (rng.random((d, d)) < 0.5), 1)
    X = rng.standard_normal((n, d)) @ np.linalg.inv(np.eye(d) - B)
    W = B + np.triu(rng.uniform(0.01, 0.3, (d, d)), 1) * (B == 0)  # weak spurious edges everywhere else
    W[3, 1] = 0.25  # and one backwards, making a cycle for the low thresholds
    t, table = choose_threshold(X, W)
    cuts = np.concatenate([[0.0], np.unique(np.abs(W[W != 0]))])
    assert table["threshold"].tolist() == cuts.tolist()
    X_c = X - X.mean(axis=0)
    brute = [bic_score(X_c.T @ X_c / n, n, threshold_to_dag(W, c)) for c in cuts]
    assert np.allclose(table["bic"], brute, rtol=1e-12)
    assert t == cuts[int(np.argmin(brute))]
    # the rank-spaced first pass with a refinement scores fewer cuts and finds the same minimum here
    t_small, small = choose_threshold(X, W, max_candidates=5)
    assert len(small) < len(cuts)
    assert t_small == t


def test_a_given_grid_is_scored_as_given():
    X = _data_with_covariance(CHAIN_COV, 200)
    t, table = choose_threshold(X, CHAIN_W, thresholds=[0.5, 0.1, 0.3])
    assert table["threshold"].tolist() == [0.1, 0.3, 0.5]
    assert table["edges"].tolist() == [3, 2, 2]
    assert t == 0.5  # 0.3 and 0.5 give the same (true) graph: the tie goes to the larger threshold


@pytest.mark.parametrize("kwargs", [{"thresholds": [-0.1]}, {"gamma": 1.5}, {"gamma": True},
                                    {"max_candidates": 2}, {"W": np.zeros((2, 2))}])
def test_refused(kwargs):
    X = _data_with_covariance(CHAIN_COV, 50)
    W = kwargs.pop("W", CHAIN_W)
    with pytest.raises(ValueError):
        choose_threshold(X, W, **kwargs)
