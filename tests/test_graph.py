"""Hand-worked tests of the DAG post-processing (threshold_to_dag) and is_dag."""
import numpy as np
import pytest

from colide_core import is_dag, threshold_to_dag


def test_is_dag_chain_and_cycle():
    # 0 -> 1 -> 2 is a DAG; adding 2 -> 0 closes a directed cycle.
    W = np.zeros((3, 3))
    W[0, 1] = W[1, 2] = 1.0
    assert is_dag(W)
    W[2, 0] = 0.5
    assert not is_dag(W)


def test_self_loop_is_a_cycle():
    W = np.zeros((2, 2))
    W[1, 1] = 1.0
    assert not is_dag(W)


def test_threshold_zeroes_small_weights_including_equality():
    # |w| <= threshold is removed, so 0.3 itself goes; -0.31 survives.
    W = np.array([[0.0, 0.3, -0.31], [0.0, 0.0, 0.2], [0.0, 0.0, 0.0]])
    out = threshold_to_dag(W, 0.3)
    expected = np.array([[0.0, 0.0, -0.31], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(out, expected)


def test_cycle_broken_at_its_weakest_edge():
    # Cycle 0 -> 1 -> 2 -> 0 with weights 2, 1.5, 0.5 plus a strong chord 0 -> 2 (1.0).
    # After thresholding at 0.3 all four edges remain; the smallest edge on the cycle,
    # 2 -> 0 (0.5), is the first dropped, and that already leaves a DAG.
    W = np.zeros((3, 3))
    W[0, 1], W[1, 2], W[2, 0], W[0, 2] = 2.0, 1.5, 0.5, 1.0
    out = threshold_to_dag(W, 0.3)
    expected = W.copy()
    expected[2, 0] = 0.0
    np.testing.assert_array_equal(out, expected)
    assert is_dag(out)


def test_edges_on_no_cycle_survive_cycle_breaking():
    # Blocker of issue 28: only edges on a cycle may go. The weak edge 3 -> 0 (0.4) lies on no
    # cycle, so it stays although it is weaker than the cycle 1 <-> 2's weaker edge 2 -> 1 (0.6),
    # which is the one removed. (The old drop-smallest-until-acyclic rule removed 3 -> 0 too.)
    W = np.zeros((4, 4))
    W[1, 2], W[2, 1], W[3, 0], W[0, 1] = 0.9, 0.6, 0.4, 1.2
    out, removed = threshold_to_dag(W, 0.3, return_removed=True)
    expected = W.copy()
    expected[2, 1] = 0.0
    np.testing.assert_array_equal(out, expected)
    assert removed == [(2, 1, 0.6)]


def test_each_cycle_loses_its_own_weakest_edge():
    # Two disjoint cycles: 0 -> 1 -> 2 -> 0 (1.0, 0.8, 0.5) and 3 <-> 4 (2.0, 1.5), joined by a
    # weak bridge 2 -> 3 (0.35) that lies on no cycle. Each cycle loses only its weakest edge
    # (2 -> 0 and 4 -> 3); the bridge, weaker than both, stays.
    W = np.zeros((5, 5))
    W[0, 1], W[1, 2], W[2, 0], W[3, 4], W[4, 3], W[2, 3] = 1.0, 0.8, 0.5, 2.0, 1.5, 0.35
    out, removed = threshold_to_dag(W, 0.3, return_removed=True)
    assert removed == [(4, 3, 1.5), (2, 0, 0.5)]  # strongest first
    expected = W.copy()
    expected[4, 3] = expected[2, 0] = 0.0
    np.testing.assert_array_equal(out, expected)


def test_removed_edges_each_lie_on_a_cycle_of_stronger_kept_edges():
    # Invariant on random dense graphs: every removed edge i -> j is closed into a cycle by a
    # path j ~> i of kept edges that are all at least as strong, and every edge outside the
    # strongly connected components is kept.
    import networkx as nx
    rng = np.random.default_rng(3)
    for _ in range(20):
        W = rng.normal(size=(9, 9)) * (rng.random((9, 9)) < 0.4)
        np.fill_diagonal(W, 0.0)
        out, removed = threshold_to_dag(W, 0.3, return_removed=True)
        assert is_dag(out)
        above = (np.abs(W) > 0.3)
        G = nx.from_numpy_array(above.astype(int), create_using=nx.DiGraph)
        comp = {v: k for k, c in enumerate(nx.strongly_connected_components(G)) for v in c}
        for i, j in zip(*np.nonzero(above)):
            if comp[i] != comp[j]:
                assert out[i, j] == W[i, j]
        assert int(above.sum()) - len(removed) == int((out != 0).sum())
        for i, j, w in removed:
            strong = nx.from_numpy_array((np.abs(out) >= abs(w)).astype(int), create_using=nx.DiGraph)
            assert nx.has_path(strong, j, i)


def test_threshold_to_dag_never_mutates_and_always_returns_dag():
    rng = np.random.default_rng(0)
    for _ in range(20):
        W = rng.normal(size=(8, 8))
        before = W.copy()
        out = threshold_to_dag(W, 0.1)
        np.testing.assert_array_equal(W, before)
        assert is_dag(out)
        assert np.all(np.diag(out) == 0)


@pytest.mark.parametrize("bad", [np.zeros((2, 3)), np.array([[0.0, np.nan], [0.0, 0.0]])])
def test_bad_matrices_raise(bad):
    with pytest.raises(ValueError):
        threshold_to_dag(bad)


def test_negative_threshold_raises():
    with pytest.raises(ValueError, match="threshold"):
        threshold_to_dag(np.zeros((2, 2)), -0.1)


def test_required_edges_survive_threshold_and_cycle_breaking():
    # 0 -> 1 (0.1, required) would be thresholded away at 0.3 but is kept. The cycle
    # 0 -> 1 -> 2 -> 0 must then be broken at a non-required edge: 1 -> 2 (0.5) is the
    # smallest of those, so it goes, while 2 -> 0 (0.9) stays.
    W = np.zeros((3, 3))
    W[0, 1], W[1, 2], W[2, 0] = 0.1, 0.5, 0.9
    req = np.zeros((3, 3), dtype=bool)
    req[0, 1] = True
    out = threshold_to_dag(W, 0.3, required=req)
    expected = np.zeros((3, 3))
    expected[0, 1], expected[2, 0] = 0.1, 0.9
    np.testing.assert_array_equal(out, expected)


def test_cyclic_required_edges_raise():
    W = np.array([[0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="required edges form a directed cycle"):
        threshold_to_dag(W, 0.3, required=np.ones((2, 2), dtype=bool) & ~np.eye(2, dtype=bool))
