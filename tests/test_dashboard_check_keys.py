"""The Check page's keys and curves are computed by dashboard.checks, not on the page (issue 39)."""
import numpy as np
import pytest

from dashboard import checks as dc
from dashboard.fitting import FitResult, solver_params
from colide_core.solver._common import SolverResult


def _result(W, variant="nv"):
    d = W.shape[0]
    rec = SolverResult(W=W, sigma=np.ones(d), objective=0.0, n_iter=1, n_iter_per_stage=(1,), converged=True,
                       history={"objective": [0.0]})
    return FitResult(result=rec, variant=variant, params=solver_params(variant, 0.05), data_key="k",
                     node_names=[f"X{i}" for i in range(d)], fit_time=0.0)


def test_path_key_covers_what_the_path_depends_on_and_nothing_else():
    key = dc.path_key("data", "nv", {"max_iter": [10, 20], "device": "jax-cpu", "threshold": 0.4, "random_state": 3,
                                     "required": (("a", "b"),)})
    # lists as tuples; the threshold and the seed do not change the path's W
    assert key == ("data", "nv", (("device", "jax-cpu"), ("max_iter", (10, 20)), ("required", (("a", "b"),))))


def test_curves_against_a_hand_worked_chain():
    # Truth 0 -> 1 -> 2. The fit puts 0.9 and 0.8 on the true edges and 0.1 on 0 -> 2: |W| ranks
    # both true edges above every other pair, so AUROC = AUPRC = 1; at threshold 0.3 the shown
    # graph is the truth (SHD 0, every precision and recall 1).
    truth = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=float)
    W = np.array([[0, 0.9, 0.1], [0, 0, 0.8], [0, 0, 0]])
    rocs, curves, table = dc.curves_against(truth, {"NV": _result(W)}, 0.3, ["X0", "X1", "X2"])
    assert table.loc["AUROC", "NV"] == pytest.approx(1.0) and table.loc["AUPRC", "NV"] == pytest.approx(1.0)
    assert table.loc["SHD", "NV"] == 0
    assert table.loc[["adjacency precision", "adjacency recall", "arrowhead precision", "arrowhead recall"],
                     "NV"].tolist() == [1.0, 1.0, 1.0, 1.0]
    # at threshold 0.05 the 0 -> 2 edge is kept too: one extra edge, SHD 1, adjacency precision 2/3
    _, _, loose = dc.curves_against(truth, {"NV": _result(W)}, 0.05, ["X0", "X1", "X2"])
    assert loose.loc["SHD", "NV"] == 1 and loose.loc["adjacency precision", "NV"] == pytest.approx(2 / 3)
    assert set(rocs) == set(curves) == {"NV"}
