"""The Check page on the nine Sachs conditions (issue 31): its checks, refits and λ path carry the
conditions and targets, as the Learn page's fit does.

Convention: W[i, j] != 0 means i -> j; X is (n_samples, n_nodes).
"""
import numpy as np
import pytest

import colide_core
from colide_core import CoLiDE
from colide_core.evaluation import checks
from dashboard.infra.state import check as cs
from tests._app_sachs import QUICK, sachs_all_app

pytestmark = pytest.mark.usefixtures("fresh_caches")

def _check_page_on_sachs_all(new_app):
    at, rec = sachs_all_app(new_app)
    at.session_state["learn_variant"] = "NV"
    at.session_state["learn_tab"] = "Noise"  # the EV-or-NV line's tab (only the open tab is built, issue 41)
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    at.learn_captions = [c.value for c in at.caption]
    at.session_state["check_n_random"] = 0
    at.session_state["check_n_rescale"] = 1
    at.switch_page("pages/check.py").run()
    assert not at.exception, at.exception
    return at, rec


def test_check_page_checks_and_refits_carry_the_nine_conditions(new_app):
    at, rec = _check_page_on_sachs_all(new_app)
    res = at.session_state["fit_results"]["nv"]
    threshold = float(at.session_state["learn_threshold"])
    A = colide_core.threshold_to_dag(res.W, threshold)
    report = at.session_state[cs.CHECK_RESULT]["report"]
    # residuals: one intercept per condition, each node's targeted rows left out
    expected = checks.residual_checks(rec.X, A, conditions=rec.conditions, targets=rec.targets)
    np.testing.assert_allclose(report.residuals.table["normality_p"], expected.table["normality_p"], rtol=1e-10)
    labels = np.asarray(rec.conditions)
    names = list(rec.X.columns)
    for lab, nodes in rec.targets.items():
        for node in nodes:
            assert np.isnan(report.residuals.refit.residuals[labels == lab, names.index(node)]).all()
    pooled = checks.residual_checks(rec.X, A)
    assert not np.allclose(report.residuals.table["residual_sd"], pooled.table["residual_sd"])
    # the Learn page's EV-or-NV line reads the same per-condition residuals
    assert "NV: " + expected.ev_nv_line in at.learn_captions
    assert expected.ev_nv_line != pooled.ev_nv_line
    # the caption says what the checks do with conditions; the refits are offered, not refused
    captions = " ".join(c.value for c in at.caption)
    assert "9 conditions (7 with known targets)" in captions and "not offered" not in captions
    assert "centred per condition" in captions

    at.button(key="check_refit").click().run()
    assert not at.exception, at.exception
    report = at.session_state[cs.CHECK_RESULT]["report"]
    est = CoLiDE(**{**dict(res.params), "threshold": threshold})
    direct = checks.refit_compare(rec.X, est, A, conditions=rec.conditions, targets=rec.targets)
    assert report.standardized.kept == direct.kept and report.standardized.added == direct.added
    assert report.standardized.reversed == direct.reversed and report.standardized.removed == direct.removed
    pooled_refit = checks.refit_compare(rec.X, est, A)
    assert (pooled_refit.kept, pooled_refit.added) != (direct.kept, direct.added)  # the design matters


def test_check_page_lambda_path_carries_the_conditions(new_app):
    from colide_core.solver.path import lambda_path

    at, rec = _check_page_on_sachs_all(new_app)
    at.button(key="check_path_run").click().run()
    assert not at.exception, at.exception
    path = at.session_state[cs.PATH]["path"]
    direct = lambda_path(rec.X, path.lambdas, path.thresholds, "nv", conditions=rec.conditions,
                         targets=rec.targets, **QUICK)
    np.testing.assert_allclose(path.W, direct.W, atol=1e-10)
    pooled = lambda_path(rec.X, path.lambdas[:1], path.thresholds, "nv", **QUICK)
    assert not np.allclose(path.W[:1], pooled.W)


def test_check_page_edge_evidence_carries_the_conditions(new_app):
    # Issue 38, point 2: "ΔBIC if reversed" was 0 for every edge on the nine conditions (the
    # pooled rows are score equivalent), the weights came from the pooled rows. The evidence now
    # fits each edge with an intercept per condition and each node on its unmasked rows.
    at, rec = _check_page_on_sachs_all(new_app)
    res = at.session_state["fit_results"]["nv"]
    A = colide_core.threshold_to_dag(res.W, float(at.session_state["learn_threshold"]))
    evidence = at.session_state[cs.CHECK_RESULT]["report"].evidence
    direct = checks.edge_evidence(rec.X, A, W=res.W, conditions=rec.conditions, targets=rec.targets)
    np.testing.assert_allclose(evidence["delta_bic_reverse"].to_numpy(float),
                               direct["delta_bic_reverse"].to_numpy(float), rtol=1e-9)
    pooled = checks.edge_evidence(rec.X, A, W=res.W)
    assert np.allclose(pooled["delta_bic_reverse"].dropna(), 0.0, atol=1e-6)  # score equivalence, pooled
    targeted = set(n for nodes in rec.targets.values() for n in nodes)
    at_target = evidence[evidence["source"].isin(targeted) | evidence["target"].isin(targeted)]
    assert len(at_target) and (at_target["delta_bic_reverse"].dropna().abs() > 1.0).all()
