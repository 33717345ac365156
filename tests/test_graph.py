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


def test_smallest_edges_dropped_even_when_off_cycle():
    # Drop-smallest-until-acyclic removes the globally smallest edges first: the weak edge
    # 3 -> 0 (0.4, not on any cycle) is dropped before the cycle 1 <-> 2's weaker edge (0.6).
    W = np.zeros((4, 4))
    W[1, 2], W[2, 1], W[3, 0], W[0, 1] = 0.9, 0.6, 0.4, 1.2
    out = threshold_to_dag(W, 0.3)
    expected = W.copy()
    expected[3, 0] = expected[2, 1] = 0.0
    np.testing.assert_array_equal(out, expected)


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
