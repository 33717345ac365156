"""The "local" refit rule after an experiment (issue 52, "Experiments"): planning.local_update."""
import numpy as np
import pytest

from colide_core.evaluation.planning import local_update
from colide_core.graph._dag import is_dag


def _dag(rng, d, order, p=0.4):
    """Random weights forward in ``order`` (a DAG), about ``p`` of the pairs."""
    W = np.zeros((d, d))
    for a in range(d):
        for b in range(a + 1, d):
            if rng.random() < p:
                W[order[a], order[b]] = rng.uniform(0.3, 1.0)
    return W


def test_pairs_at_the_targets_come_from_the_refit_the_rest_from_before():
    rng = np.random.default_rng(3)
    d = 8
    order = rng.permutation(d)
    before, refit = _dag(rng, d, order), _dag(rng, d, order)  # one order: every merge is a DAG
    G, local = local_update(before, refit, [2, 5])
    assert local
    for i in range(d):
        for j in range(d):
            want = refit[i, j] if {i, j} & {2, 5} else before[i, j]
            assert G[i, j] == want
    assert is_dag(G)
    # the inputs are not modified
    assert not np.shares_memory(G, before) and not np.shares_memory(G, refit)


def test_no_target_keeps_before_and_every_target_is_the_refit():
    rng = np.random.default_rng(4)
    order = np.arange(6)
    before, refit = _dag(rng, 6, order), _dag(rng, 6, order)
    assert np.array_equal(local_update(before, refit, [])[0], before)
    assert np.array_equal(local_update(before, refit, range(6))[0], refit)


def test_a_merge_with_a_cycle_falls_back_to_the_refit():
    before = np.zeros((3, 3))
    before[0, 1] = before[1, 2] = 1.0  # 0 -> 1 -> 2
    refit = np.zeros((3, 3))
    refit[0, 1] = refit[2, 0] = 1.0  # 2 -> 0 -> 1, and 1 -> 2 gone
    G, local = local_update(before, refit, [0])  # 0 -> 1, 2 -> 0 from the refit, 1 -> 2 from before: a cycle
    assert not local
    assert np.array_equal(G, refit)
    # at target 1 the merge is a DAG: 0 -> 1 (the refit's), no 1 -> 2 (the refit's), no edge 0 - 2 (before's)
    G1, local1 = local_update(before, refit, [1])
    assert local1 and G1[0, 1] == 1 and G1[1, 2] == 0 and G1[2, 0] == 0


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="one shape"):
        local_update(np.zeros((3, 3)), np.zeros((4, 4)), [0])
    with pytest.raises(ValueError, match="targets"):
        local_update(np.zeros((3, 3)), np.zeros((3, 3)), [3])
    with pytest.raises(ValueError, match="targets"):
        local_update(np.zeros((3, 3)), np.zeros((3, 3)), [0.5])


def test_the_benchmarks_edge_errors_add_up_to_the_shd():
    """bench_experiments splits the SHD into reversed, extra and missing edges: their sum is evaluate's SHD."""
    from benchmarks.bench_experiments import edge_errors
    from colide_core import evaluate

    rng = np.random.default_rng(5)
    for _ in range(20):
        B = _dag(rng, 7, rng.permutation(7)) != 0
        A = _dag(rng, 7, rng.permutation(7)) != 0
        rev, extra, missing = edge_errors(B, A)
        assert rev + extra + missing == evaluate(B.astype(float), A.astype(float))["shd"]
    B = np.zeros((3, 3)); B[0, 1] = B[1, 2] = 1
    A = np.zeros((3, 3)); A[1, 0] = A[2, 0] = 1  # 0 -> 1 reversed, 2 -> 0 extra, 1 -> 2 missing
    assert edge_errors(B, A) == (1, 1, 1)
