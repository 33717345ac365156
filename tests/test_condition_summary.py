"""colide_core.data.stats.condition_summary: rows, targets and median shifts per condition (issue 31)."""
import numpy as np
import pandas as pd
import pytest

from colide_core import load_sachs
from colide_core.data.stats import condition_summary
from colide_core.exceptions import ConditionsError


def test_hand_worked_shifts_in_baseline_sds():
    # Baseline "ctrl": a = 1, 2, 3 (median 2, population sd sqrt(2/3)); b = 10, 10, 40 (median 10,
    # sd sqrt(200)). "drug": a = 5, 6, 7 (median 6): (6 - 2) / sqrt(2/3) = 4.899; b = 0, 10, 20
    # (median 10): shift 0.
    X = pd.DataFrame({"a": [1, 2, 3, 5, 6, 7], "b": [10, 10, 40, 0, 10, 20]}, dtype=float)
    labels = ["ctrl"] * 3 + ["drug"] * 3
    t = condition_summary(X, labels, {"drug": ["a"]})
    assert list(t.columns) == ["condition", "n", "targets", "baseline", "a", "b"]
    assert list(t["condition"]) == ["ctrl", "drug"] and list(t["n"]) == [3, 3]
    assert list(t["targets"]) == ["", "a"] and list(t["baseline"]) == [True, False]
    np.testing.assert_allclose(t[["a", "b"]].to_numpy(), [[0, 0], [4 / np.sqrt(2 / 3), 0]], rtol=1e-15)
    # the other condition as the baseline: a's sd there is also sqrt(2/3), b's sqrt(200/3)
    t2 = condition_summary(X, labels, baseline="drug")
    np.testing.assert_allclose(t2[["a", "b"]].to_numpy(), [[-4 / np.sqrt(2 / 3), 0], [0, 0]], rtol=1e-15)
    assert list(t2["baseline"]) == [False, True] and list(t2["targets"]) == ["", ""]


def test_integer_labels_array_data_and_a_constant_baseline_column():
    X = np.array([[1.0, 5.0], [3.0, 5.0], [2.0, 7.0], [4.0, 9.0]])
    t = condition_summary(X, [0, 0, 1, 1], {1: [0]}, baseline=0)
    assert list(t["condition"]) == ["0", "1"] and list(t["targets"]) == ["", "0"]
    # node 0: baseline median 2, sd 1; condition 1 median 3 -> 1. Node 1 is constant in the baseline.
    assert t.loc[1, "0"] == 1.0 and np.isnan(t.loc[1, "1"]) and np.isnan(t.loc[0, "1"])


def test_sachs_inhibitors_move_their_targets_downstream():
    d = load_sachs(rows="all")
    t = condition_summary(d.X, d.conditions, d.targets).set_index("condition")
    assert list(t.index) == list(d.table["condition"]) and t["n"].sum() == 7466
    assert t.loc["cd3cd28+u0126", "targets"] == "Mek" and t.loc["cd3cd28", "baseline"]
    # U0126 inhibits MEK's activity, not its phosphorylation: pMek rises and Erk (downstream) falls.
    assert t.loc["cd3cd28+u0126", "Mek"] > 1 and t.loc["cd3cd28+u0126", "Erk"] < 0


@pytest.mark.parametrize("kwargs, error, match", [
    ({"baseline": "nope"}, ValueError, "baseline 'nope' is not one of"),
    ({"targets": {"x": ["a"]}}, ConditionsError, "not among the condition labels"),
    ({"targets": {"drug": ["z"]}}, ConditionsError, "not a node"),
    ({"node_names": ["a"]}, ValueError, "1 names for 2 columns"),
])
def test_bad_inputs_are_refused(kwargs, error, match):
    X = pd.DataFrame({"a": [1, 2, 3, 5, 6, 7], "b": [1, 0, 4, 0, 1, 2]}, dtype=float)
    with pytest.raises(error, match=match):
        condition_summary(X, ["ctrl"] * 3 + ["drug"] * 3, **kwargs)
    with pytest.raises(ConditionsError, match="5 labels but the data have 6 rows"):
        condition_summary(X, ["ctrl"] * 5)
