"""The shipped Sachs data: shape, first row, names and the 17-edge consensus DAG."""
import numpy as np

from colide_core import SACHS_NODES, is_dag, load_sachs


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
