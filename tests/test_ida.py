"""Local IDA (Maathuis, Kalisch and Buehlmann 2009): hand-worked classes, and causal-learn's CPDAGs.

Convention: CPDAGs in gadjid's coding (1: directed i -> j, 2 both ways: undirected).
"""
import numpy as np
import pytest

from colide_core._params import InvalidParameterError
from colide_core.evaluation._metrics import cpdag_from_dag
from colide_core.evaluation.ida import (admissible_parent_sets, cpdag_from_causallearn, ges_cpdag, ida,
                                        ida_effects, pc_cpdag)

# x0 = e0, x1 = 2 x0 + e1, x2 = 3 x1 + e2, unit noise: var0 = 1, cov01 = 2, var1 = 4 + 1 = 5,
# cov12 = 3 var1 = 15, cov02 = 3 cov01 = 6, var2 = 9 var1 + 1 = 46.
CHAIN_COV = np.array([[1.0, 2, 6], [2, 5, 15], [6, 15, 46]])
CHAIN_CPDAG = np.array([[0, 2, 0], [2, 0, 2], [0, 2, 0]])  # 0 -- 1 -- 2, no v-structure


def test_the_undirected_chain_by_hand():
    assert (cpdag_from_dag([[0, 1, 0], [0, 0, 1], [0, 0, 0]]) == CHAIN_CPDAG).all()
    r = ida(CHAIN_CPDAG, cov=CHAIN_COV, x=1)
    # sib(1) = {0, 2}; {0, 2} together would make 0 -> 1 <- 2, a new v-structure: three sets.
    assert r.parent_sets == [(), (0,), (2,)] and not r.identified
    # on x2: P = {}: cov12 / var1 = 15 / 5 = 3; P = {0}: x2 = 3 x1 + e2 gives 3; P = {2}: 0.
    np.testing.assert_allclose(r.effects[:, 2], [3, 3, 0], atol=1e-12)
    # on x0: P = {}: cov01 / var1 = 2 / 5; P = {0}: 0 (a parent); P = {2}: x0 _||_ x2 | x1, 2 / 5.
    np.testing.assert_allclose(r.effects[:, 0], [0.4, 0, 0.4], atol=1e-12)
    np.testing.assert_allclose(r.effects[:, 1], 1.0)
    np.testing.assert_allclose(r.effect, [0.8 / 3, 1, 2], atol=1e-12)  # the mean of each column
    low = ida(CHAIN_CPDAG, cov=CHAIN_COV, x=1, aggregate="min_abs")
    np.testing.assert_allclose(low.effect, [0, 1, 0], atol=1e-12)
    # x0, an end of the chain: {} or {1}; its effect on x2 is 2 * 3 = 6 or 0.
    r0 = ida(CHAIN_CPDAG, cov=CHAIN_COV, x=0)
    assert r0.parent_sets == [(), (1,)]
    np.testing.assert_allclose(r0.effects[:, 2], [6, 0], atol=1e-12)


def test_the_true_dag_identifies_the_effect_when_the_class_is_a_dag():
    # the v-structure 0 -> 2 <- 1 with 2 -> 3 is its own class: every effect is one number, the
    # product of the weights on the directed paths (2 -> 3 weight 0.5, 0 -> 2 weight 1.5).
    W = np.array([[0, 0, 1.5, 0], [0, 0, -1.0, 0], [0, 0, 0, 0.5], [0, 0, 0, 0]])
    T = np.linalg.inv(np.eye(4) - W)
    cov = T.T @ T  # unit noise: cov = (I - W)^-T (I - W)^-1
    C = cpdag_from_dag(W != 0)
    assert (C == np.where(W != 0, 1, 0)).all()
    r = ida(C, cov=cov, x=0)
    assert r.identified
    np.testing.assert_allclose(r.effect, [1, 0, 1.5, 0.75], atol=1e-12)
    r2 = ida(C, cov=cov, x=2)
    np.testing.assert_allclose(r2.effect, [0, 0, 1, 0.5], atol=1e-12)


def test_a_pdag_whose_orientation_would_add_a_collider():
    # PC may return 0 -> 1 -- 2 with 0, 2 non-adjacent (not a CPDAG: Meek's rule 1 would orient
    # 1 -> 2). Taking 2 as a parent of 1 would make 0 -> 1 <- 2: only pa(1) = {0} is admissible.
    C = np.array([[0, 1, 0], [0, 0, 2], [0, 2, 0]])
    assert admissible_parent_sets(C, 1) == [(0,)]
    # and from 2's side: 2's undirected neighbour 1 has the directed parent 0, not adjacent to 2;
    # orienting 2 -> 1 would make 0 -> 1 <- 2, so 1 must be 2's parent.
    assert admissible_parent_sets(C, 2) == [(1,)]


def test_the_data_path_equals_the_covariance_path_and_refusals():
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal(500)
    x1 = 2 * x0 + rng.standard_normal(500)
    X = np.column_stack([x0, x1, 3 * x1 + rng.standard_normal(500)])
    S = np.cov(X.T, bias=True)
    np.testing.assert_allclose(ida(CHAIN_CPDAG, X, 1).effects, ida(CHAIN_CPDAG, cov=S, x=1).effects, rtol=1e-10)
    # the regression baseline is IDA's empty set: cov(x1, y) / var(x1)
    np.testing.assert_allclose(ida(CHAIN_CPDAG, X, 1).effects[0], S[1] / S[1, 1], rtol=1e-10)
    with pytest.raises(InvalidParameterError, match="not both"):
        ida(CHAIN_CPDAG, X, 1, cov=S)
    with pytest.raises(InvalidParameterError, match="aggregate"):
        ida(CHAIN_CPDAG, X, 1, aggregate="median")
    with pytest.raises(InvalidParameterError, match="node"):
        ida_effects(CHAIN_CPDAG, S, 3)
    with pytest.raises(ValueError, match="coded"):
        ida_effects(CHAIN_CPDAG * 3, S, 1)


def test_causal_learn_codings_and_its_searches():
    # causal-learn: G[j, i] == 1 and G[i, j] == -1 for i -> j; -1 both ways for i -- j
    G = np.array([[0, -1, 0], [1, 0, -1], [0, -1, 0]])  # 0 -> 1 -- 2
    np.testing.assert_array_equal(cpdag_from_causallearn(G), [[0, 1, 0], [0, 0, 2], [0, 2, 0]])
    # A collider 0 -> 2 <- 1 with strong weights and 2,000 rows: GES and PC both find the class,
    # which is the DAG itself (the v-structure is compelled).
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(2000), rng.standard_normal(2000)
    X = np.column_stack([a, b, 1.5 * a - b + rng.standard_normal(2000)])
    want = np.array([[0, 0, 1], [0, 0, 1], [0, 0, 0]])
    np.testing.assert_array_equal(ges_cpdag(X), want)
    np.testing.assert_array_equal(pc_cpdag(X), want)
