"""The shipped Sachs data: shape, first row, names, the nine conditions and the three ground truths."""
import numpy as np
import pandas as pd
import pytest

from colide_core import SACHS_NODES, SACHS_TRUTHS, SachsData, is_dag, load_sachs
from colide_core.exceptions import InvalidParameterError


def test_sachs_shape_names_and_first_row():
    X, B = load_sachs()
    assert X.shape == (853, 11)
    assert tuple(X.columns) == SACHS_NODES == (
        "Raf", "Mek", "Plcg", "PIP2", "PIP3", "Erk", "Akt", "PKA", "PKC", "P38", "Jnk"
    )
    # First row of cdt 0.6.0's cyto_full_data.csv (the CD3/CD28 condition).
    np.testing.assert_array_equal(
        X.iloc[0].to_numpy(), [26.4, 13.2, 8.82, 18.3, 58.8, 6.61, 17.0, 414.0, 17.0, 44.9, 40.0]
    )
    # Raw values: not logged, not standardised (PKA's mean is in the hundreds).
    assert X["PKA"].mean() > 500


def test_sachs_consensus_dag():
    X, B = load_sachs()
    assert list(B.index) == list(B.columns) == list(X.columns)
    assert int(B.to_numpy().sum()) == 17
    assert set(np.unique(B.to_numpy())) == {0, 1}
    assert is_dag(B.to_numpy())
    edges = {(a, b) for a in B.index for b in B.columns if B.loc[a, b]}
    assert {("Raf", "Mek"), ("PKC", "PKA"), ("PIP3", "PIP2"), ("Erk", "Akt"), ("PKA", "Jnk")} <= edges
    assert ("Mek", "Raf") not in edges


def test_load_sachs_returns_fresh_copies():
    X1, B1 = load_sachs()
    X1.iloc[0, 0] = -1.0
    B1.iloc[0, 0] = 1
    X2, B2 = load_sachs()
    assert X2.iloc[0, 0] == 26.4 and B2.iloc[0, 0] == 0


# --------------------------------------------------------------------------------------------
# The nine conditions (issue 31): rows, targets and the three ground truths
# --------------------------------------------------------------------------------------------
# Rows per condition of Sachs et al.'s nine spreadsheets (asserted in juangamella/gnies-paper's
# sachs/sachs_2005/main.py), and the first cell of each, copied from those spreadsheets.
SACHS_BLOCKS = {
    "cd3cd28": (853, [26.4, 13.2, 8.82, 18.3, 58.8, 6.61, 17, 414, 17, 44.9, 40]),
    "cd3cd28icam2": (902, [36.5, 22.3, 17.5, 142, 9.06, 16.1, 22.1, 661, 6.55, 27.6, 20.2]),
    "cd3cd28+aktinhib": (911, [14.6, 18.6, 3.16, 5.67, 19.1, 21.3, 33.1, 308, 1, 1.65, 4.29]),
    "cd3cd28+g0076": (723, [176, 294, 337, 644, 9.73, 18.4, 101, 5.99, 93.1, 505, 142]),
    "cd3cd28+psitect": (810, [39.2, 8.9, 4.26, 9.22, 1.88, 25.9, 46.6, 223, 3.02, 31.6, 65.5]),
    "cd3cd28+u0126": (799, [2436, 3685, 16.4, 40, 11.2, 1, 41.8, 105, 6.38, 23.7, 77.7]),
    "cd3cd28+ly": (848, [14.6, 18.6, 18.3, 16.3, 3.16, 4.57, 16.7, 474, 6.85, 26.2, 28.6]),
    "pma": (913, [23.5, 13.6, 40.7, 372, 37.9, 4.96, 14.1, 851, 9.14, 30, 85.8]),
    "b2camp": (707, [24.1, 1, 13, 403, 84.3, 20.5, 21.5, 255, 1.63, 84.3, 1.36]),
}
SACHS_TARGETS = {"cd3cd28": [], "cd3cd28icam2": [], "cd3cd28+aktinhib": ["Akt"], "cd3cd28+g0076": ["PKC"],
                 "cd3cd28+psitect": ["PIP2"], "cd3cd28+u0126": ["Mek"], "cd3cd28+ly": ["PIP3"],
                 "pma": ["PKC"], "b2camp": ["PKA"]}


@pytest.mark.parametrize("rows, n_conditions, n", [("all", 9, 7466), ("utigsp", 7, 5846)])
def test_sachs_conditions_rows_blocks_and_targets(rows, n_conditions, n):
    d = load_sachs(rows=rows)
    assert isinstance(d, SachsData) and d.rows == rows and d.truth_name == "consensus17"
    assert d.X.shape == (n, 11) and tuple(d.X.columns) == SACHS_NODES and len(d.conditions) == n
    assert list(d.X.index) == list(d.conditions.index) == list(range(n))
    labels = list(SACHS_BLOCKS)[:n_conditions]
    # contiguous blocks in file order, with Sachs's counts and first cells
    assert list(d.conditions.drop_duplicates()) == labels
    start = 0
    for label in labels:
        count, first = SACHS_BLOCKS[label]
        block = d.conditions.iloc[start:start + count]
        assert (block == label).all() and (d.conditions == label).sum() == count, label
        np.testing.assert_array_equal(d.X.iloc[start].to_numpy(), first, err_msg=label)
        start += count
    assert start == n
    assert d.targets == {k: SACHS_TARGETS[k] for k in labels}
    assert list(d.table["condition"]) == labels and d.table["n_rows"].sum() == n
    assert (d.table["utigsp"] == "yes").sum() == 7


def test_sachs_first_block_is_the_baseline_and_default_is_unchanged():
    X, B = load_sachs()
    assert type(load_sachs()) is tuple
    d = load_sachs(rows="all")
    pd.testing.assert_frame_equal(d.X.iloc[:853], X)  # the 853 rows of today, bit for bit
    pd.testing.assert_frame_equal(d.B_true, B)
    Xr, Br = d  # a record unpacks like the plain result
    assert Xr is d.X and Br is d.B_true
    rec = load_sachs(return_record=True)
    pd.testing.assert_frame_equal(rec.X, X)
    assert set(rec.conditions) == {"cd3cd28"} and rec.targets == {"cd3cd28": []}


def _edges(B):
    return {(a, b) for a in B.index for b in B.columns if B.loc[a, b]}


def test_sachs_three_truths():
    truths = {name: load_sachs(truth=name)[1] for name in SACHS_TRUTHS}
    for name, count in (("consensus17", 17), ("utigsp18", 18), ("cmu20", 20)):
        B = truths[name]
        assert int(B.to_numpy().sum()) == count and is_dag(B.to_numpy()), name
        assert set(np.unique(B.to_numpy())) == {0, 1} and list(B.index) == list(SACHS_NODES)
    ut, cmu, cons = (_edges(truths[k]) for k in ("utigsp18", "cmu20", "consensus17"))
    # CMU = UT-IGSP's 18 plus Erk -> Akt and PKC -> PKA (cmu-phil/example-causal-datasets)
    assert ut < cmu and cmu - ut == {("Erk", "Akt"), ("PKC", "PKA")}
    # UT-IGSP (csquires/utigsp sachs_meta.py) puts PIP3 -> Plcg where the consensus has Plcg -> PIP3,
    # adds Plcg -> PKC, PIP2 -> PKC and PIP3 -> Akt, and drops Erk -> Akt and PKC -> PKA.
    assert cons - ut == {("Erk", "Akt"), ("Plcg", "PIP3"), ("PKC", "PKA")}
    assert ut - cons == {("PIP3", "Plcg"), ("Plcg", "PKC"), ("PIP2", "PKC"), ("PIP3", "Akt")}
    d = load_sachs(rows="utigsp", truth="utigsp18")
    pd.testing.assert_frame_equal(d.B_true, truths["utigsp18"])
    assert d.truth_name == "utigsp18"


@pytest.mark.parametrize("kwargs, match", [
    ({"rows": "everything"}, "rows must be one of 'baseline', 'utigsp', 'all'"),
    ({"rows": 9}, "rows must be one of"),
    ({"truth": "cdt18"}, "truth must be one of 'consensus17', 'utigsp18', 'cmu20'"),
    ({"truth": None}, "truth must be one of"),
    ({"return_record": "yes"}, "return_record must be True or False"),
])
def test_sachs_invalid_options(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        load_sachs(**kwargs)


def test_sachs_records_are_fresh():
    d1 = load_sachs(rows="all")
    d1.targets["pma"].append("Raf")
    d1.X.iloc[0, 0] = -1.0
    d2 = load_sachs(rows="all")
    assert d2.targets["pma"] == ["PKC"] and d2.X.iloc[0, 0] == 26.4
