"""Hand-worked tests of colide_core.evaluation.checks: Markov check, sortability, residual tests, edge evidence.

Convention: A[i, j] = 1 means i -> j; X is (n_samples, n_nodes).
"""
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import colide_core
from colide_core import checks
from colide_core.solver.path import bic_score
from colide_core.data.simulate import standardize


def adj(d, edges):
    A = np.zeros((d, d), dtype=int)
    for i, j in edges:
        A[i, j] = 1
    return A


def sem(A, n, seed, noise_sd=None, noise="gaussian"):
    """x_j = sum_i A[i, j] x_i + e_j (weights 1, independent noises), in a topological order."""
    rng = np.random.default_rng(seed)
    d = A.shape[0]
    order = list(nx.topological_sort(nx.from_numpy_array(np.asarray(A), create_using=nx.DiGraph)))
    sd = np.ones(d) if noise_sd is None else np.asarray(noise_sd, dtype=float)
    if noise == "gaussian":
        E = rng.standard_normal((n, d))
    else:  # Student t with 3 degrees of freedom: heavy tails
        E = rng.standard_t(3, size=(n, d))
    E = E * sd
    X = np.zeros((n, d))
    for j in order:
        X[:, j] = X @ A[:, j] + E[:, j]
    return X


CHAIN = adj(3, [(0, 1), (1, 2)])        # X0 -> X1 -> X2
FORK = adj(3, [(1, 0), (1, 2)])         # X0 <- X1 -> X2
COLLIDER = adj(3, [(0, 1), (2, 1)])     # X0 -> X1 <- X2


def test_implied_independences_of_chain_fork_collider():
    # chain: X2's non-descendants are X0, X1; its parent is X1 -> one statement X2 _||_ X0 | X1.
    # X0 has no non-descendant; X1's only non-descendant X0 is its parent.
    assert checks.implied_independences(CHAIN) == [(2, 0, (1,))]
    # fork: X0 and X2 each have the other as non-descendant, given the common parent X1.
    assert checks.implied_independences(FORK) == [(0, 2, (1,)), (2, 0, (1,))]
    # collider: X0 and X2 are marginally independent (empty conditioning set).
    assert checks.implied_independences(COLLIDER) == [(0, 2, ()), (2, 0, ())]


@pytest.mark.parametrize("truth, wrong", [
    # chain data: the collider claims X0 _||_ X2, but corr(X0, X2) = 1/sqrt(3) in the chain.
    (CHAIN, COLLIDER),
    # fork data: the collider claims X0 _||_ X2, but they share the cause X1 (corr 1/2).
    (FORK, COLLIDER),
    # collider data: the chain claims X0 _||_ X2 | X1, but conditioning on a collider makes
    # X0 and X2 dependent (partial correlation -1/2 for unit weights and noises).
    (COLLIDER, CHAIN),
], ids=["chain", "fork", "collider"])
def test_markov_check_passes_true_graph_and_fails_wrong_one(truth, wrong):
    # A correct statement is rejected with probability alpha = 0.05 (see the calibration test
    # below): seeds 0 and 1 each give one p-value near 0.01; with seed 2 the p-values are 0.85
    # (chain) and 0.97 (fork, collider).
    X = sem(truth, 5000, seed=2)
    good = checks.markov_check(X, truth, n_random=0, random_state=0)
    bad = checks.markov_check(X, wrong, n_random=0, random_state=0)
    assert good.share_rejected == 0.0
    assert bad.share_rejected == 1.0
    assert bad.tests["p_value"].max() < 1e-10


def test_markov_check_is_calibrated_for_a_true_graph():
    # Under the true chain, X2 _||_ X0 | X1 holds, so its Fisher-z p-value is uniform: over 200
    # datasets about 5% are rejected at 0.05 (binomial sd 1.5%; the band is about +-2.5 sd).
    p = np.array([checks.markov_check(sem(CHAIN, 1000, seed=s), CHAIN, n_random=0).tests["p_value"][0]
                  for s in range(200)])
    assert 0.015 <= np.mean(p < 0.05) <= 0.09


def test_markov_check_against_random_graphs_on_a_larger_sem():
    # A 6-node chain: the true graph implies 10 statements, all true; random DAGs with 5 edges
    # get many rejected, so (almost) none does as well as the truth.
    A = adj(6, [(k, k + 1) for k in range(5)])
    X = sem(A, 3000, seed=2)
    res = checks.markov_check(X, A, n_random=50, random_state=0)
    assert res.n_implied == 10 and res.n_tests == 10
    assert res.share_rejected <= 0.1
    assert np.nanmedian(res.random_shares) > 0.5
    assert res.share_random_as_good <= 0.1
    assert res.verdict == "better than random graphs"


def test_markov_check_bounds_its_work():
    A = adj(6, [(0, 1)])
    X = sem(A, 500, seed=3)
    res = checks.markov_check(X, A, n_random=3, max_tests=4, random_state=0)
    assert res.n_tests == 4 and res.n_implied > 4
    with pytest.raises(ValueError):
        checks.markov_check(X, A, n_random=checks.MAX_RANDOM_GRAPHS + 1)
    with pytest.raises(ValueError):
        checks.markov_check(X, A + A.T)  # not a DAG


def test_varsortability_one_by_construction_and_half_after_standardising():
    # Chain with unit weights and unit noise: Var(X_k) = k + 1, strictly increasing along every
    # path, so every path points to a larger variance: varsortability = 1.
    A = adj(4, [(0, 1), (1, 2), (2, 3)])
    X = sem(A, 20000, seed=4)
    assert checks.sortability(X, A).varsortability == 1.0
    assert checks.sortability(X, A).scale_warning
    # Standardised, every variance is 1: every path is a tie and counts one half.
    Xs = standardize(X)
    s = checks.sortability(Xs, A)
    assert s.varsortability == 0.5
    assert not s.scale_warning
    # R^2-sortability is scale-invariant: the same before and after standardising.
    assert checks.r2_sortability(X, A) == pytest.approx(checks.r2_sortability(Xs, A))


def test_r2_scores_match_regressions():
    X = sem(adj(3, [(0, 1), (1, 2)]), 2000, seed=5)
    for j in range(3):
        others = [k for k in range(3) if k != j]
        Z = np.column_stack([np.ones(len(X)), X[:, others]])
        beta = np.linalg.lstsq(Z, X[:, j], rcond=None)[0]
        r = X[:, j] - Z @ beta
        r2 = 1 - r.var() / X[:, j].var()
        assert checks.r2_scores(X)[j] == pytest.approx(r2, rel=1e-9)


def test_residual_tests_accept_gaussian_and_reject_heavy_tails():
    A = adj(3, [(0, 1), (1, 2)])
    gauss = checks.residual_checks(sem(A, 20000, seed=6), A)
    assert gauss.table["normal"].all()
    heavy = checks.residual_checks(sem(A, 20000, seed=6, noise="t"), A)
    assert not heavy.table["normal"].any()
    assert (heavy.table["normality_p"] < 1e-10).all()


def test_ev_or_nv_verdict():
    A = adj(3, [(0, 1), (1, 2)])
    ev = checks.residual_checks(sem(A, 5000, seed=7), A)
    assert ev.noise_model == "EV" and ev.equal_var_p > 0.05
    assert "CoLiDE-EV" in ev.ev_nv_line
    nv = checks.residual_checks(sem(A, 5000, seed=7, noise_sd=[1.0, 3.0, 1.0]), A)
    assert nv.noise_model == "NV" and nv.equal_var_p < 1e-10
    assert nv.variance_ratio == pytest.approx(9.0, rel=0.1)
    assert "CoLiDE-NV" in nv.ev_nv_line


def test_heteroscedasticity_detected():
    rng = np.random.default_rng(8)
    n = 5000
    x = rng.standard_normal(n)
    A = adj(2, [(0, 1)])
    hom = checks.residual_checks(np.column_stack([x, x + rng.standard_normal(n)]), A)
    # The noise sd grows with x, hence with the fitted value x: e^2 correlates with the fit.
    het = checks.residual_checks(np.column_stack([x, x + np.exp(0.5 * x) * rng.standard_normal(n)]), A)
    assert math.isnan(hom.table.loc[0, "hetero_p"])  # a root node has no fitted values to test against
    assert hom.table.loc[1, "homoscedastic"] and hom.table.loc[1, "hetero_p"] > 0.05
    assert not het.table.loc[1, "homoscedastic"] and het.table.loc[1, "hetero_p"] < 1e-10


def test_edge_bic_change_by_hand_on_two_nodes():
    rng = np.random.default_rng(9)
    n = 400
    x = rng.standard_normal(n)
    y = 0.5 * x + rng.standard_normal(n)
    X = np.column_stack([x, y])
    A = adj(2, [(0, 1)])
    ev = checks.edge_evidence(X, A)
    # Removing x -> y: y's residual variance goes from s2(1 - r^2) to s2 (1/n variances), one
    # weight fewer: dBIC = -2 * (-n/2) log(1 - r^2) ... = -n log(1 - r^2) - log n.
    r = np.corrcoef(x, y)[0, 1]
    assert ev.loc[0, "delta_bic_remove"] == pytest.approx(-n * math.log(1 - r ** 2) - math.log(n), rel=1e-10)
    # Reversing: x -> y and y -> x are Markov equivalent and BIC is score-equivalent: dBIC = 0.
    assert ev.loc[0, "delta_bic_reverse"] == pytest.approx(0.0, abs=1e-8)
    # The same numbers from bic_score directly.
    C = np.cov(X, rowvar=False, bias=True)
    assert ev.loc[0, "delta_bic_remove"] == pytest.approx(bic_score(C, n, np.zeros((2, 2))) - bic_score(C, n, A))
    # OLS weight and its t interval agree with scipy's linregress; with no other parent the
    # partial correlation is Pearson's r.
    lr = stats.linregress(x, y)
    t = stats.t.ppf(0.975, n - 2)
    assert ev.loc[0, "ols_weight"] == pytest.approx(lr.slope, rel=1e-10)
    assert ev.loc[0, "ci_low"] == pytest.approx(lr.slope - t * lr.stderr, rel=1e-10)
    assert ev.loc[0, "ci_high"] == pytest.approx(lr.slope + t * lr.stderr, rel=1e-10)
    assert ev.loc[0, "partial_corr"] == pytest.approx(r, rel=1e-10)


def test_edge_evidence_reversal_cycle_and_bootstrap_column():
    A = adj(3, [(0, 1), (1, 2), (0, 2)])
    X = sem(A, 1000, seed=10)
    freq = np.where(A, 0.8, 0.0)
    ev = checks.edge_evidence(pd.DataFrame(X, columns=["a", "b", "c"]), A, W=A * 0.9, frequency=freq)
    assert list(ev["source"]) == ["a", "a", "b"] and list(ev["target"]) == ["b", "c", "c"]
    row = ev[(ev.source == "a") & (ev.target == "c")].iloc[0]
    assert math.isnan(row["delta_bic_reverse"])  # c -> a would close a -> b -> c -> a
    assert (ev["bootstrap_frequency"] == 0.8).all() and (ev["weight"] == 0.9).all()
    assert (ev["delta_bic_remove"] > 0).all()  # every true edge is supported


def test_compare_graphs_and_refits():
    A_ref = adj(3, [(0, 1), (1, 2)])
    A_new = adj(3, [(1, 0), (0, 2)])
    ch = checks.compare_graphs(A_ref, A_new)
    assert ch.kept == [] and ch.reversed == [(0, 1)] and ch.removed == [(1, 2)] and ch.added == [(0, 2)]
    assert ch.n_changed == 3
    # Factors of 1 change nothing: the refit reproduces the graph.
    X = pd.DataFrame(sem(adj(4, [(0, 1), (1, 2), (2, 3)]), 500, seed=11), columns=list("abcd"))
    est = colide_core.CoLiDE("nv")
    A = est.fit(X).adjacency_
    same = checks.refit_compare(X, est, A, "rescale", factors=np.ones(4))
    assert same.n_changed == 0 and len(same.kept) == int((A != 0).sum())
    sens = checks.scale_sensitivity(X, est, A, n_repeats=2, low=1.0, high=1.0, random_state=0)
    assert list(sens.n_changed) == [0, 0] and sens.verdict == "scale-robust"
    with pytest.raises(ValueError):
        checks.refit_compare(X, est, A, "rescale", factors=[1, 1, -1, 1])


def test_run_checks_on_sachs():
    X, _ = colide_core.load_sachs()
    est = colide_core.CoLiDE("nv")
    model = est.fit(X)
    rep = checks.run_checks(X, model.adjacency_, W=model.W_, estimator=est, n_random=30)
    v = rep.verdicts()
    assert list(v["check"]) == ["Sortability", "Residuals (EV or NV)", "Markov check",
                                "Standardise and refit", "Scale sensitivity"]
    assert rep.residuals.noise_model == "NV"  # raw Sachs: PKA's residual sd is ~30x PKC's
    assert len(rep.evidence) == int((model.adjacency_ != 0).sum())
    assert 0.0 <= rep.markov.share_rejected <= 1.0
