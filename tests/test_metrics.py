"""Hand-worked tests of colide_core.evaluate (SHD, TPR, FDR, FPR, NNZ, SHD-C, SID).

Convention: A[i, j] = 1 means i -> j; evaluate(B_true, W_est).
"""
import math

import gadjid
import networkx as nx
import numpy as np
import pandas as pd
import pytest
from causallearn.graph.Dag import Dag
from causallearn.graph.GraphNode import GraphNode
from causallearn.graph.SHD import SHD
from causallearn.utils.DAG2CPDAG import dag2cpdag

from colide_core import evaluate
from colide_core.evaluation._metrics import cpdag_from_dag


def adj(d, edges):
    A = np.zeros((d, d), dtype=int)
    for i, j in edges:
        A[i, j] = 1
    return A


def random_dag(d, p, rng):
    A = np.triu(rng.random((d, d)) < p, 1).astype(int)
    perm = rng.permutation(d)
    return A[np.ix_(perm, perm)]


KEYS = {"shd", "tpr", "fdr", "fpr", "nnz", "shd_cpdag", "sid", "shd_norm", "shd_cpdag_norm", "sid_norm"}


def test_reversed_edge_in_two_node_chain():
    # truth X0 -> X1, estimate X1 -> X0.
    B = adj(2, [(0, 1)])
    m = evaluate(B, B.T)
    assert set(m) == KEYS
    # Skeletons agree (no extra, no missing); one reversal counts ONCE: SHD = 1.
    assert m["shd"] == 1
    # No correctly oriented edge: TPR = 0/1. The single prediction is a reversal: FDR = 1/1.
    assert m["tpr"] == 0.0 and m["fdr"] == 1.0 and m["nnz"] == 1
    # FPR denominator: d(d-1)/2 - |T| = 1 - 1 = 0 -> max(0, 1) = 1, so FPR = 1/1.
    assert m["fpr"] == 1.0
    # X0 -> X1 and X1 -> X0 are Markov equivalent (both CPDAGs are X0 -- X1): SHD-C = 0.
    assert m["shd_cpdag"] == 0
    # SID: pair (0, 1): Pa_est(0) = {1}, a descendant of 0 in the truth -> wrong.
    # pair (1, 0): Pa_est(1) = {} leaves the path 1 <- 0 open; p(x0 | x1) != p(x0) -> wrong. SID = 2.
    assert m["sid"] == 2
    assert m["shd_norm"] == 0.5 and m["shd_cpdag_norm"] == 0.0 and m["sid_norm"] == 1.0


def test_empty_estimate_against_two_node_chain():
    B = adj(2, [(0, 1)])
    m = evaluate(B, np.zeros((2, 2)))
    # One missing edge: SHD = 1, SHD-C = 1 (pair (0,1) undirected in the truth's CPDAG, absent here).
    assert m["shd"] == 1 and m["shd_cpdag"] == 1
    # Nothing predicted: TPR = 0/1, FDR = 0/max(0,1) = 0, NNZ = 0.
    assert m["tpr"] == 0.0 and m["fdr"] == 0.0 and m["nnz"] == 0
    # SID: pair (0,1): adjusting for Pa_est(0) = {} gives p(x1 | x0), correct in the truth.
    # pair (1,0): adjusting for {} gives p(x0 | x1), but the truth's p(x0 | do x1) = p(x0). SID = 1.
    assert m["sid"] == 1


def test_identical_graphs_score_perfectly():
    B = adj(4, [(0, 1), (1, 2), (0, 3), (3, 2)])
    m = evaluate(B, 0.7 * B)  # weighted estimate: nonzero = edge
    assert m["shd"] == 0 and m["shd_cpdag"] == 0 and m["sid"] == 0
    assert m["tpr"] == 1.0 and m["fdr"] == 0.0 and m["fpr"] == 0.0 and m["nnz"] == 4


def test_v_structure_reversal_costs_in_shd_c():
    # truth: v-structure 0 -> 2 <- 1 (both edges compelled).
    B = adj(3, [(0, 2), (1, 2)])
    # estimate reverses 1 -> 2 into 2 -> 1: the chain 0 -> 2 -> 1, whose CPDAG is 0 -- 2 -- 1.
    E = adj(3, [(0, 2), (2, 1)])
    m = evaluate(B, E)
    assert m["shd"] == 1  # one reversal
    # pairs (0,2) and (1,2) are directed in the truth's CPDAG but undirected in the estimate's: SHD-C = 2.
    assert m["shd_cpdag"] == 2
    # TPR: 0 -> 2 correct out of 2 true edges; FDR: 1 reversal out of 2 predictions.
    assert m["tpr"] == 0.5 and m["fdr"] == 0.5
    # FPR: 1 reversal / (3 - 2) non-adjacent true pairs.
    assert m["fpr"] == 1.0


def test_supergraph_has_zero_sid_but_positive_shd():
    # truth chain 0 -> 1 -> 2; estimate adds 0 -> 2 (a complete DAG with the same order).
    B = adj(3, [(0, 1), (1, 2)])
    E = adj(3, [(0, 1), (1, 2), (0, 2)])
    m = evaluate(B, E)
    assert m["shd"] == 1 and m["tpr"] == 1.0 and m["nnz"] == 3
    assert m["fdr"] == pytest.approx(1 / 3)
    # FPR: 1 false positive / (3 - 2) non-adjacent true pairs.
    assert m["fpr"] == 1.0
    # Both CPDAGs are fully undirected (no v-structure); only pair (0,2) differs: SHD-C = 1.
    assert m["shd_cpdag"] == 1
    # SID: Pa_est(0) = {}, Pa_est(1) = {0}, Pa_est(2) = {0,1} are all valid adjustment sets in the chain
    # (and j in Pa_est(i) only when j is not a descendant of i): SID = 0.
    assert m["sid"] == 0


def test_sid_edge_direction_matches_gadjid_row_to_column():
    # truth fork 2 -> 0, 2 -> 1 vs the empty estimate. With {} adjustment:
    #   (2,0), (2,1): 2 is a root, p(x_j | x_2) is right;
    #   (0,1), (1,0): back-door 0 <- 2 -> 1 open -> wrong;
    #   (0,2), (1,2): p(x2 | x0) != p(x2) = p(x2 | do x0) -> wrong.   SID = 4.
    fork = adj(3, [(2, 0), (2, 1)])
    assert evaluate(fork, np.zeros((3, 3)))["sid"] == 4
    # Its transpose is the collider 0 -> 2 <- 1: only (2,0) and (2,1) are wrong. SID = 2.
    # (A reading with the opposite edge direction would swap these two answers.)
    assert evaluate(fork.T, np.zeros((3, 3)))["sid"] == 2
    # SID is not symmetric: the empty truth vs the fork estimate is 0 (the fork's adjustment sets
    # {}, {2}, {2} are valid when all variables are independent).
    assert evaluate(np.zeros((3, 3)), fork)["sid"] == 0


def test_sid_equals_gadjid_called_directly():
    rng = np.random.default_rng(0)
    for _ in range(20):
        A = random_dag(8, 0.35, rng)
        E = random_dag(8, 0.35, rng)
        direct = gadjid.sid(A.astype(np.int8), E.astype(np.int8), edge_direction="from row to column")
        assert evaluate(A, E)["sid"] == direct[1]
        # gadjid normalises by d(d-1); we normalise by d (the paper's convention)
        assert evaluate(A, E)["sid_norm"] == pytest.approx(direct[0] * 7)


def test_cpdag_coding_with_a_meek_compelled_edge():
    # 0 -> 2 <- 1 is a v-structure, and 2 -> 3 is compelled (reversing it would create a new
    # v-structure 0 -> 2 <- 3); 3 -> 4 is compelled too (same argument one step further).
    B = adj(5, [(0, 2), (1, 2), (2, 3), (3, 4)])
    C = cpdag_from_dag(B)
    np.testing.assert_array_equal(C, B)  # every edge compelled: coded 1 one way, 0 the other
    # A chain has no compelled edge: all undirected, coded 2 both ways.
    chain = adj(3, [(0, 1), (1, 2)])
    np.testing.assert_array_equal(cpdag_from_dag(chain), 2 * (chain + chain.T))
    with pytest.raises(ValueError, match="cycle"):
        cpdag_from_dag(adj(2, [(0, 1), (1, 0)]))


def test_compelled_edge_reversal():
    B = adj(4, [(0, 2), (1, 2), (2, 3)])
    E = adj(4, [(0, 2), (1, 2), (3, 2)])  # 2 -> 3 reversed: now three parents of 2, all compelled
    m = evaluate(B, E)
    assert m["shd"] == 1
    # only pair (2,3) differs, with opposite directed marks: SHD-C = 1
    assert m["shd_cpdag"] == 1


def test_shd_cpdag_matches_causallearn_shd_class():
    rng = np.random.default_rng(1)

    def cl_cpdag(A):
        nodes = [GraphNode(f"X{i}") for i in range(A.shape[0])]
        g = Dag(nodes)
        for i, j in zip(*np.nonzero(A)):
            g.add_directed_edge(nodes[i], nodes[j])
        return dag2cpdag(g)

    for _ in range(10):
        A = random_dag(7, 0.4, rng)
        E = random_dag(7, 0.4, rng)
        expected = SHD(cl_cpdag(A), cl_cpdag(E)).get_shd()
        assert evaluate(A, E)["shd_cpdag"] == expected


def test_symmetry_and_zero_invariants_on_random_dags():
    rng = np.random.default_rng(2)
    for _ in range(10):
        A = random_dag(10, 0.3, rng)
        E = random_dag(10, 0.3, rng)
        ab, ba = evaluate(A, E), evaluate(E, A)
        # SHD and SHD-C are symmetric (extra <-> missing, reversals symmetric); SID is not required to be.
        assert ab["shd"] == ba["shd"] and ab["shd_cpdag"] == ba["shd_cpdag"]
        # SHD counts at most one per unordered pair
        assert 0 <= ab["shd"] <= 45
        assert evaluate(A, A)["shd"] == 0 and evaluate(A, A)["sid"] == 0


def test_cyclic_estimate_gives_nan_for_dag_only_metrics_or_raises():
    B = adj(2, [(0, 1)])
    E = adj(2, [(0, 1), (1, 0)])  # 2-cycle
    m = evaluate(B, E)
    # Skeleton identical; (0,1) is a true positive and (1,0) a reversal: SHD = 1, FDR = 1/2.
    assert m["shd"] == 1 and m["tpr"] == 1.0 and m["fdr"] == 0.5 and m["nnz"] == 2
    assert math.isnan(m["sid"]) and math.isnan(m["shd_cpdag"])
    assert math.isnan(m["sid_norm"]) and math.isnan(m["shd_cpdag_norm"])
    with pytest.raises(ValueError, match="cycle"):
        evaluate(B, E, on_cyclic="raise")
    # a self-loop is a cycle and an extra skeleton edge
    m = evaluate(B, np.array([[1, 1], [0, 0]]))
    assert m["shd"] == 1 and m["nnz"] == 2 and math.isnan(m["sid"])


def test_bad_inputs_raise_clear_errors():
    B = adj(3, [(0, 1)])
    with pytest.raises(ValueError, match="same shape"):
        evaluate(B, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="square"):
        evaluate(np.zeros((2, 3)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="B_true must be a DAG"):
        evaluate(adj(2, [(0, 1), (1, 0)]), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        evaluate(B, np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match="on_cyclic"):
        evaluate(B, B, on_cyclic="ignore")
    with pytest.raises(ValueError, match="sigma_est"):
        evaluate(B, B, sigma_true=np.ones(3), sigma_est=np.ones(2))


def test_dataframes_are_aligned_by_node_name():
    names = ["a", "b", "c"]
    B = pd.DataFrame(adj(3, [(0, 1), (1, 2)]), index=names, columns=names)  # a -> b -> c
    # the same graph a -> b -> c, with rows/columns listed in the order c, a, b
    order = ["c", "a", "b"]
    E = B.loc[order, order]
    m = evaluate(B, E)
    assert m["shd"] == 0 and m["sid"] == 0
    # the arrays without names are NOT the same graph
    assert evaluate(B.to_numpy(), E.to_numpy())["shd"] > 0
    other = pd.DataFrame(np.zeros((3, 3)), index=["a", "b", "z"], columns=["a", "b", "z"])
    with pytest.raises(ValueError, match="different node names"):
        evaluate(B, other)


def test_sigma_relative_error_broadcasts_a_scalar_estimate():
    B = adj(3, [(0, 1)])
    # ||[2,2,2] - [1,2,2]|| / ||[1,2,2]|| = 1 / 3
    m = evaluate(B, B, sigma_true=[1.0, 2.0, 2.0], sigma_est=2.0)
    assert m["sigma_rel_err"] == pytest.approx(1 / 3)
    assert "sigma_rel_err" not in evaluate(B, B, sigma_true=[1.0, 2.0, 2.0])


def test_inputs_are_not_modified():
    B = adj(3, [(0, 1), (1, 2)])
    E = np.array([[0, 0.5, 0], [0, 0, -0.4], [0.2, 0, 0]])  # cyclic
    B0, E0 = B.copy(), E.copy()
    evaluate(B, E)
    np.testing.assert_array_equal(B, B0)
    np.testing.assert_array_equal(E, E0)
    assert nx.is_directed_acyclic_graph(nx.from_numpy_array(B, create_using=nx.DiGraph))


def _causallearn_cpdag(A):
    """causal-learn's CPDAG of ``A`` in gadjid's coding (the oracle for our array version)."""
    d = A.shape[0]
    nodes = [GraphNode(f"X{i}") for i in range(d)]
    g = Dag(nodes)
    for i, j in zip(*np.nonzero(A)):
        g.add_directed_edge(nodes[i], nodes[j])
    G = dag2cpdag(g).graph  # i -> j: G[i, j] == -1 and G[j, i] == 1; i -- j: both -1
    C = np.zeros((d, d), dtype=np.int8)
    C[(G == -1) & (G.T == 1)] = 1
    C[(G == -1) & (G.T == -1)] = 2
    return C


@pytest.mark.parametrize("d,p", [(4, 0.5), (8, 0.3), (8, 0.7), (15, 0.2), (25, 0.15), (12, 1.0)])
def test_cpdag_equals_causallearns_on_random_dags(d, p):
    # Chickering's edge labelling on arrays must give causal-learn's CPDAG mark for mark, on sparse
    # and dense DAGs (p = 1: a complete DAG, whose CPDAG is complete and undirected) in shuffled
    # node orders, so that no topological-order shortcut can pass by luck.
    rng = np.random.default_rng(d * 100 + int(10 * p))
    for _ in range(25):
        A = random_dag(d, p, rng)
        np.testing.assert_array_equal(cpdag_from_dag(A), _causallearn_cpdag(A))


def test_cpdag_hand_worked_cases():
    # collider 0 -> 2 <- 1 with 2 -> 3: the v-structure is compelled, and 2 -> 3 is compelled by
    # Meek's rule 1 (0 -> 2 -- 3 with 0, 3 not adjacent would form a new v-structure if reversed).
    A = adj(4, [(0, 2), (1, 2), (2, 3)])
    C = cpdag_from_dag(A)
    assert C[0, 2] == 1 and C[1, 2] == 1 and C[2, 3] == 1 and C[2, 0] == 0 and C[3, 2] == 0
    # a shielded collider (0 -> 1, 0 -> 2, 1 -> 2: a complete triangle) has no v-structure: all undirected
    T = adj(3, [(0, 1), (0, 2), (1, 2)])
    np.testing.assert_array_equal(cpdag_from_dag(T), 2 * ((T + T.T) > 0))
    # a fork 1 <- 0 -> 2 is Markov equivalent to the chain: undirected
    F = adj(3, [(0, 1), (0, 2)])
    np.testing.assert_array_equal(cpdag_from_dag(F), 2 * (F + F.T))
