"""The one least-squares refit on given parents (issue 47): ``colide_core.evaluation.refit`` and the
four entry points that use it (``interventions.refit_weights``, ``residuals.ols_refit``,
``residuals._refit_by_condition``, ``solver.path.bic_score``).

Truths: a hand-worked 3-node example (closed form derived in the comments), the masked case by
hand, and on nine-condition Sachs each entry point against ``numpy.linalg.lstsq`` per node on the
rows it keeps, centred as it centres (an independent computation from the data, not a pasted
output)."""
import math

import numpy as np
import pytest

import colide_core
from colide_core.data.conditions import centre_by_condition
from colide_core.evaluation.interventions import refit_weights
from colide_core.evaluation.residuals import _refit_by_condition, ols_refit, residual_checks
from colide_core.solver.path import bic_score

# Three nodes, four rows: a = (-1, -1, 1, 1), b = (-1, 1, -1, 1) (both of mean 0, a'b = 0,
# a'a = b'b = 4), c = (0, 1, 2, 5) (mean 2, centred (-2, -1, 0, 3)); graph a -> c <- b.
# Because a and b are orthogonal, c's least-squares weights are one-variable slopes:
#   w_ac = a'c / a'a = (2 + 1 + 0 + 3) / 4 = 1.5,   w_bc = b'c / b'b = (2 - 1 + 0 + 3) / 4 = 1.0;
# intercept 2 - 0 * 1.5 - 0 * 1.0 = 2; residuals (-2, -1, 0, 3) - 1.5 a - 1.0 b = (0.5, -0.5, -0.5, 0.5),
# RSS 1, d.o.f. 4 - 2 parents - 1 intercept = 1, so the unbiased variance is 1 and the maximum
# likelihood one 1/4; (Z'Z)^-1 = I / 4, standard errors sqrt(1/4 * 1) = 0.5 for both weights.
# a and b have no parents: their residuals are themselves centred, RSS 4, d.o.f. 3, ML variance 1.
A3 = np.array([-1.0, -1.0, 1.0, 1.0])
B3 = np.array([-1.0, 1.0, -1.0, 1.0])
C3 = np.array([0.0, 1.0, 2.0, 5.0])
X3 = np.column_stack([A3, B3, C3])
G3 = np.zeros((3, 3))
G3[0, 2] = G3[1, 2] = 1.0  # a -> c <- b


def test_three_nodes_by_hand_every_entry_point():
    want = np.zeros((3, 3))
    want[0, 2], want[1, 2] = 1.5, 1.0
    np.testing.assert_allclose(refit_weights(G3, X3), want, atol=1e-12)
    ref = ols_refit(X3, G3)
    np.testing.assert_allclose(ref.W, want, atol=1e-12)
    np.testing.assert_allclose(ref.se[[0, 1], 2], [0.5, 0.5], atol=1e-12)
    assert not ref.se[:, :2].any()
    np.testing.assert_allclose(ref.intercept, [0.0, 0.0, 2.0], atol=1e-12)
    np.testing.assert_allclose(ref.residuals[:, 2], [0.5, -0.5, -0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(ref.fitted[:, 2], C3 - [0.5, -0.5, -0.5, 0.5], atol=1e-12)
    assert ref.dof.tolist() == [3, 3, 1]
    np.testing.assert_allclose(ref.residual_var, [4 / 3, 4 / 3, 1.0], atol=1e-12)
    # BIC = sum_j n (log(2 pi s2_j) + 1) + (|edges| + d) log n with the ML variances (1, 1, 1/4)
    cov = (X3 - X3.mean(0)).T @ (X3 - X3.mean(0)) / 4
    bic = 3 * 4 * (math.log(2 * math.pi) + 1) + 4 * math.log(0.25) + (2 + 3) * math.log(4)
    assert bic_score(cov, 4, G3) == pytest.approx(bic, rel=1e-12)
    # one condition and no target: the per-condition refit is the plain one
    by_cond, keep = _refit_by_condition(X3, ["a", "b", "c"], G3 != 0, ["o"] * 4, None)
    assert keep.all()
    for field in ("W", "se", "intercept", "residuals", "fitted", "dof", "residual_var"):
        np.testing.assert_allclose(getattr(by_cond, field), getattr(ref, field), atol=1e-12, err_msg=field)


def test_masked_rows_leave_the_targets_equation_by_hand():
    # The four rows above are condition "obs"; condition "iv" (two rows) sets c at will, c = (100, -100),
    # with a = (0, 2), b = (5, 5). Masked, c's equation reads only the "obs" rows: the weights, the
    # intercept (obs's), RSS 1 and d.o.f. 4 - 2 - 1 = 1 of the hand-worked case, and c's residuals are
    # NaN on the "iv" rows. a and b (no parents, not targeted) keep all six rows, centred per condition:
    # a's "iv" rows centre to (-1, 1), b's to (0, 0): RSS_a = 4 + 2 = 6, RSS_b = 4, d.o.f. 6 - 2 = 4.
    X = np.vstack([X3, [[0.0, 5.0, 100.0], [2.0, 5.0, -100.0]]])
    conds = ["obs"] * 4 + ["iv"] * 2
    targets = {"iv": ["c"]}
    want = np.zeros((3, 3))
    want[0, 2], want[1, 2] = 1.5, 1.0
    np.testing.assert_allclose(refit_weights(G3, X, conditions=conds, targets={"iv": [2]}), want, atol=1e-12)
    ref, keep = _refit_by_condition(X, ["a", "b", "c"], G3 != 0, conds, targets)
    assert keep[:, :2].all() and keep[:, 2].tolist() == [True] * 4 + [False] * 2
    np.testing.assert_allclose(ref.W, want, atol=1e-12)
    assert np.isnan(ref.residuals[4:, 2]).all() and np.isnan(ref.fitted[4:, 2]).all()
    np.testing.assert_allclose(ref.residuals[:4, 2], [0.5, -0.5, -0.5, 0.5], atol=1e-12)
    assert ref.dof.tolist() == [4, 4, 1]
    np.testing.assert_allclose(ref.residual_var, [6 / 4, 4 / 4, 1.0], atol=1e-12)
    assert ref.intercept[2] == pytest.approx(2.0)
    np.testing.assert_allclose(ref.se[[0, 1], 2], [0.5, 0.5], atol=1e-12)
    # unmasked, the "iv" rows enter c's equation: a'c gains (-1)(100) + (1)(-100) = -200, so
    # w_ac = (6 - 200) / (4 + 2) = -97 / 3 (b's "iv" rows centre to 0 and change nothing: w_bc = 1)
    np.testing.assert_allclose(refit_weights(G3, X, conditions=conds)[[0, 1], 2], [-97 / 3, 1.0], atol=1e-12)


@pytest.fixture(scope="module")
def sachs9():
    rec = colide_core.load_sachs(rows="all", return_record=True)
    X = rec.X.to_numpy(dtype=float)
    # two supports: the 17-edge consensus and the complete DAG in column order (up to 10 parents)
    supports = [rec.B_true.to_numpy() != 0, np.triu(np.ones((11, 11), dtype=bool), 1)]
    return rec, X, np.asarray(rec.conditions), rec.targets, supports


def _kept_rows(conds, targets, names):
    """(n, d) bool: row i enters node j's equation unless its condition targets j (docs/conditions.md)."""
    keep = np.ones((len(conds), len(names)), dtype=bool)
    for lab, nodes in targets.items():
        for node in nodes:
            keep[conds == lab, names.index(node)] = False
    return keep


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10 * max(1.0, float(np.max(np.abs(want)))))


def test_sachs_nine_conditions_every_entry_point_equals_lstsq_per_node(sachs9):
    rec, X, conds, targets, supports = sachs9
    names = list(rec.X.columns)
    n, d = X.shape
    keep = _kept_rows(conds, targets, names)
    assert keep.all(axis=1).sum() == 853 + 902 and (~keep).sum() == n - 853 - 902  # seven conditions, one target each
    Xc = centre_by_condition(X, conds)  # an intercept per condition
    Xg = X - X.mean(axis=0)  # one intercept
    for B in supports:
        masked = refit_weights(B, rec.X, conditions=conds, targets=targets)
        by_cond, kept = _refit_by_condition(X, names, B, conds, targets)
        np.testing.assert_array_equal(kept, keep)
        plain = ols_refit(X, B)
        cov = Xg.T @ Xg / n
        loglik = 0.0
        for j in range(d):
            P = np.flatnonzero(B[:, j])
            rows = keep[:, j]
            if P.size:
                beta = np.linalg.lstsq(Xc[rows][:, P], Xc[rows, j], rcond=None)[0]
                _close(masked[P, j], beta)
                _close(by_cond.W[P, j], beta)
                r = Xc[rows, j] - Xc[rows][:, P] @ beta
                beta_g = np.linalg.lstsq(Xg[:, P], Xg[:, j], rcond=None)[0]
                _close(plain.W[P, j], beta_g)
                r_g = Xg[:, j] - Xg[:, P] @ beta_g
            else:
                r, r_g = Xc[rows, j], Xg[:, j]
            k = len(np.unique(conds[rows]))
            assert by_cond.dof[j] == rows.sum() - P.size - k and plain.dof[j] == n - P.size - 1
            _close(by_cond.residuals[rows, j], r)
            _close(by_cond.residual_var[j], r @ r / by_cond.dof[j])
            _close(plain.residuals[:, j], r_g)
            _close(plain.residual_var[j], r_g @ r_g / plain.dof[j])
            loglik += -0.5 * n * (math.log(2 * math.pi * (r_g @ r_g) / n) + 1)
            assert np.isnan(by_cond.residuals[~rows, j]).all()
            assert not masked[~B[:, j], j].any() and not plain.W[~B[:, j], j].any()
        _close(bic_score(cov, n, B), -2 * loglik + (B.sum() + d) * math.log(n))


def test_residual_checks_use_the_masked_refit(sachs9):
    rec, X, conds, targets, supports = sachs9
    names = list(rec.X.columns)
    checks = residual_checks(rec.X, supports[0], conditions=conds, targets=targets)
    ref, _ = _refit_by_condition(X, names, supports[0], conds, targets)
    np.testing.assert_allclose(checks.refit.W, ref.W, rtol=0, atol=0)
    np.testing.assert_allclose(checks.table["residual_sd"], np.sqrt(ref.residual_var), rtol=1e-12)
