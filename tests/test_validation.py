"""colide_core._validation: the one numeric-array validator behind the solver, the baselines, the
metrics, the graph helpers and the streaming statistics. Each check is exercised alone, with the
exact message; the covariance is checked against a hand-worked 3 x 2 example."""
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import colide_core
from colide_core import baselines, evaluate, is_dag, threshold_to_dag
from colide_core._validation import (
    centred_covariance,
    check_adjacency,
    check_data,
    check_square_matrix,
    check_X,
    data_covariance,
)
from colide_core.data.stats import partition_moments


# ------------------------------------------------------------------------------------------------
# check_X
# ------------------------------------------------------------------------------------------------
def test_check_X_returns_a_float_copy_and_the_frame_names():
    X = np.arange(12).reshape(4, 3)  # int input
    values, names = check_X(X)
    assert values.dtype == np.float64 and names is None
    np.testing.assert_array_equal(values, X)
    values[0, 0] = 99.0
    assert X[0, 0] == 0  # a copy, the caller's array is untouched
    F = np.asfortranarray(np.ones((5, 2)) * [1.0, 2.0])
    out, _ = check_X(F)
    assert not np.shares_memory(out, F) and out.flags.writeable and out.flags.f_contiguous
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], 7: [True, False, True]})
    values, names = check_X(df)
    assert names == ["a", "7"]
    np.testing.assert_array_equal(values, [[1, 1], [2, 0], [3, 1]])
    values[0, 0] = -1.0
    assert df.iloc[0, 0] == 1.0


@pytest.mark.parametrize(
    "X, message",
    [
        (np.ones(5), "X must be 2-D (n_samples, n_nodes), got 1-D."),
        (np.ones((2, 2, 2)), "X must be 2-D (n_samples, n_nodes), got 3-D."),
        (np.zeros((1, 3)), "X needs at least 2 rows and 2 columns, got shape (1, 3)."),
        (np.zeros((5, 1)), "X needs at least 2 rows and 2 columns, got shape (5, 1)."),
        (np.array([[1.0, np.nan], [2.0, 3.0]]), "X contains NaN or Inf."),
        (np.array([[1.0, -np.inf], [2.0, 3.0]]), "X contains NaN or Inf."),
        (np.array([["a", "b"], ["c", "d"]]), "X must be numeric: could not convert string to float"),
        (np.array([[1 + 1j, 2.0], [3.0, 4.0]]), "X holds complex numbers; only real numbers are accepted."),
        (pd.DataFrame({"a": [1.0, 2.0], "t": ["x", "y"]}), "X has non-numeric columns: t."),
        (pd.DataFrame({"a": [1.0, 2.0], "z": [1j, 2.0]}), "X has complex-valued columns: z; only real"),
        (pd.DataFrame(np.ones((3, 2)), columns=["a", "a"]), "X has duplicate column names: a."),
        (sp.csr_matrix(np.eye(3)), "X must be numeric: Sparse data was passed"),
    ],
)
def test_check_X_messages(X, message):
    with pytest.raises(ValueError) as info:
        check_X(X)
    assert str(info.value).startswith(message), str(info.value)


def test_check_X_bounds_and_options():
    with pytest.raises(ValueError, match=r"needs at least 4 rows and 1 column, got shape \(3, 1\)"):
        check_X(np.ones((3, 1)), min_samples=4, min_features=1)
    empty, _ = check_X(np.empty((0, 3)), min_samples=0, min_features=0)
    assert empty.shape == (0, 3)
    with_nan, _ = check_X([[1.0, np.nan], [0.0, 1.0]], ensure_finite=False)
    assert np.isnan(with_nan[0, 1])
    A = np.ones((3, 2))
    assert check_X(A, copy=False)[0] is A  # no copy asked, none made for float64 input
    with pytest.raises(ValueError, match=r"^data must be 2-D"):
        check_X(np.ones(3), name="data")


def test_check_X_reads_nullable_and_missing_values_as_nan():
    df = pd.DataFrame({"a": pd.array([1, None, 3], dtype="Int64"), "b": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="X contains NaN or Inf"):
        check_X(df)
    values, _ = check_X(df, ensure_finite=False)
    assert np.isnan(values[1, 0]) and values[2, 0] == 3.0


def test_check_data_messages_and_copy():
    with pytest.raises(ValueError, match=r"X needs at least 4 rows and 2 columns, got shape \(3, 2\)"):
        check_data(np.ones((3, 2)), min_rows=4)
    values, names = check_data(pd.DataFrame({"x": [0.0, 1.0], "y": [2.0, 5.0]}))
    assert names == ["x", "y"] and values.tolist() == [[0.0, 2.0], [1.0, 5.0]]


# ------------------------------------------------------------------------------------------------
# square matrices
# ------------------------------------------------------------------------------------------------
def test_check_square_matrix():
    M = np.array([[0, 1], [0, 0]], dtype=bool)
    out = check_square_matrix(M)
    assert out.dtype == np.float64 and out.tolist() == [[0.0, 1.0], [0.0, 0.0]]
    A = np.zeros((3, 3))
    assert check_square_matrix(A) is A and check_square_matrix(A, copy=True) is not A
    with pytest.raises(ValueError, match=r"^W must be a square \(n_nodes, n_nodes\) matrix, got shape \(2, 3\)\.$"):
        check_square_matrix(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"^B must be a square \(n_nodes, n_nodes\) adjacency matrix, got shape \(4,\)\.$"):
        check_square_matrix(np.zeros(4), "B", what="adjacency matrix")
    with pytest.raises(ValueError, match=r"^W_est contains NaN or Inf; clean it first\.$"):
        check_square_matrix([[0.0, np.inf], [0.0, 0.0]], "W_est", hint="clean it first")
    with pytest.raises(ValueError, match=r"^W holds complex numbers"):
        check_square_matrix(np.eye(2) * 1j)


def test_check_adjacency_checks_the_number_of_nodes():
    assert check_adjacency(np.eye(3), 3).shape == (3, 3)
    with pytest.raises(ValueError, match=r"^required must have shape \(3, 3\), got \(2, 2\)\.$"):
        check_adjacency(np.eye(2), 3, "required")
    with pytest.raises(ValueError, match="must be a square"):
        check_adjacency(np.zeros((3, 2)), 3)


# ------------------------------------------------------------------------------------------------
# covariance
# ------------------------------------------------------------------------------------------------
def test_centred_covariance_hand_worked():
    # x = (0, 1, 2): mean 1, centred (-1, 0, 1); y = (0, 2, 7): mean 3, centred (-3, -1, 4).
    # 1/n covariance: var x = 2/3, cov xy = (3 + 0 + 4)/3 = 7/3, var y = (9 + 1 + 16)/3 = 26/3.
    X = np.array([[0.0, 0.0], [1.0, 2.0], [2.0, 7.0]])
    mean, cov = centred_covariance(X)
    np.testing.assert_allclose(mean, [1.0, 3.0])
    np.testing.assert_allclose(cov, [[2 / 3, 7 / 3], [7 / 3, 26 / 3]], rtol=1e-15)
    assert X[0, 1] == 0.0  # input not centred in place
    cov2, n, names = data_covariance(pd.DataFrame(X, columns=["x", "y"]))
    assert n == 3 and names == ["x", "y"] and cov2.tobytes() == cov.tobytes()


def test_covariance_overflow():
    X = np.random.default_rng(0).normal(size=(20, 3)) * 1e200
    _, cov = centred_covariance(X)  # no warning, no exception: inf left for the caller
    assert not np.isfinite(cov).all()
    with pytest.raises(FloatingPointError, match="^The covariance of X overflows: rescale the data.$"):
        data_covariance(X)


# ------------------------------------------------------------------------------------------------
# the callers use it
# ------------------------------------------------------------------------------------------------
def test_callers_refuse_complex_input_instead_of_dropping_the_imaginary_part():
    W = np.zeros((2, 2), dtype=complex)
    W[0, 1] = 1j  # real part 0: a cast would silently lose the edge
    for call in (lambda: is_dag(W), lambda: threshold_to_dag(W), lambda: evaluate(np.zeros((2, 2)), W)):
        with pytest.raises(ValueError, match="complex"):
            call()
    X = np.random.default_rng(0).normal(size=(30, 3)) + 0j
    with pytest.raises(ValueError, match="complex"):
        baselines.run_method("SortNRegress", X)
    with pytest.raises(ValueError, match="complex"):
        baselines.sortnregress(X)
    with pytest.raises(ValueError, match="complex"):
        partition_moments(X)
    with pytest.raises(ValueError, match="complex"):
        colide_core.CoLiDE("ev").fit(X)


def test_threshold_to_dag_required_mask_is_validated():
    W = np.array([[0.0, 0.1], [0.0, 0.0]])
    with pytest.raises(ValueError, match=r"^required must have shape \(2, 2\), got \(3, 3\)\.$"):
        threshold_to_dag(W, 0.3, required=np.zeros((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="required contains NaN"):
        threshold_to_dag(W, 0.3, required=[[0.0, np.nan], [0.0, 0.0]])
    # a 0/1 integer mask works like a boolean one: the weak required edge survives
    assert threshold_to_dag(W, 0.3, required=[[0, 1], [0, 0]])[0, 1] == 0.1


def test_run_method_rejects_a_bad_result_as_a_method_error():
    spec = baselines.MethodSpec("bad", lambda X: np.full((X.shape[1], X.shape[1]), np.nan))
    X = np.random.default_rng(0).normal(size=(20, 3))
    original = baselines.METHODS
    baselines.METHODS = {"bad": spec}
    try:
        with pytest.raises(baselines.MethodError, match="bad returned an invalid matrix: .* NaN or Inf"):
            baselines.run_method("bad", X)
    finally:
        baselines.METHODS = original
