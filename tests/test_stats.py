"""Tests for colide_core.data.stats: streaming (n, mean, 1/n cov) with Dask."""
import numpy as np
import pandas as pd
import pytest

from colide_core.data.stats import merge_moments, partition_moments, sufficient_stats


def _write_parquet_parts(df, directory, n_parts):
    """Split df row-wise into n_parts Parquet files of unequal sizes under directory."""
    directory.mkdir(parents=True, exist_ok=True)
    # Unequal part sizes (weights 1, 2, ..., n_parts) so the merge formula sees n_a != n_b.
    weights = np.arange(1, n_parts + 1)
    cuts = np.concatenate([[0], np.cumsum(weights)]) * len(df) // weights.sum()
    for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        df.iloc[a:b].to_parquet(directory / f"part-{i:03d}.parquet", index=False)
    return cuts


def _rel_err(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


def test_merge_of_two_hand_worked_blocks():
    # Block a = {0, 2} (mean 1, M2 = 2), block b = {4} (mean 4, M2 = 0).
    # Union {0, 2, 4}: mean 2, M2 = 4 + 0 + 4 = 8; the formula gives
    # 2 + 0 + (4-1)^2 * 2*1/3 = 2 + 6 = 8.
    a = partition_moments(np.array([[0.0], [2.0]]))
    b = partition_moments(np.array([[4.0]]))
    assert a[0] == 2 and a[1][0] + a[2][0] == 1.0 and a[3][0, 0] == 2.0
    n, shift, mean_dev, m2 = merge_moments(a, b)
    assert n == 3
    assert shift[0] + mean_dev[0] == pytest.approx(2.0)
    assert m2[0, 0] == pytest.approx(8.0)
    # Merging with an empty block is the identity.
    empty = partition_moments(np.empty((0, 1)))
    assert merge_moments(empty, b)[3][0, 0] == 0.0 and merge_moments(a, empty)[0] == 2


def test_partitioned_parquet_matches_numpy(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 6)) @ rng.normal(size=(6, 6)) + rng.normal(size=6) * 3
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(6)])
    _write_parquet_parts(df, tmp_path / "ds", n_parts=7)
    n, mean, cov, cols = sufficient_stats(tmp_path / "ds", return_columns=True, scheduler="threads")
    assert n == 5000
    assert cols == list(df.columns)
    np.testing.assert_allclose(mean, X.mean(axis=0), rtol=1e-12)
    ref = np.cov(X, rowvar=False, bias=True)
    assert _rel_err(cov, ref) < 1e-10
    assert np.array_equal(cov, cov.T)


def test_large_offset_is_stable_where_naive_formula_fails(tmp_path):
    # Columns are 1e8 + unit-scale noise: E[xx^T] ~ 1e16, covariance ~ 1,
    # so E[xx^T] - mu mu^T cancels all ~16 significant digits.
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(4000, 3))
    Z[:, 1] += 0.5 * Z[:, 0]
    X = 1e8 + Z
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    _write_parquet_parts(df, tmp_path / "big", n_parts=5)
    n, mean, cov = sufficient_stats(str(tmp_path / "big" / "part-*.parquet"), scheduler="threads")
    ref = np.cov(X, rowvar=False, bias=True)
    assert n == 4000
    assert _rel_err(cov, ref) < 1e-10
    # The naive one-pass formula on the same data is badly wrong: shows the test discriminates.
    naive = X.T @ X / len(X) - np.outer(X.mean(0), X.mean(0))
    assert _rel_err(naive, ref) > 1e-3


def test_csv_glob_and_column_selection(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(900, 4)) * [1.0, 10.0, 0.1, 5.0]
    df = pd.DataFrame(X, columns=list("pqrs"))
    df["label"] = "cell"  # a non-numeric column must be excluded by `columns`
    for i, part in enumerate(np.array_split(np.arange(900), 3)):
        df.iloc[part].to_csv(tmp_path / f"chunk{i}.csv", index=False)
    n, mean, cov = sufficient_stats(str(tmp_path / "chunk*.csv"), columns=["s", "p"], scheduler="threads")
    ref = np.cov(X[:, [3, 0]], rowvar=False, bias=True)
    assert n == 900
    assert _rel_err(cov, ref) < 1e-10
    np.testing.assert_allclose(mean, X[:, [3, 0]].mean(0), rtol=1e-12)


def test_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="matches no file"):
        sufficient_stats(str(tmp_path / "nothing-*.parquet"))
    with pytest.raises(FileNotFoundError, match="no such file"):
        sufficient_stats(tmp_path / "missing.csv")
    pd.DataFrame({"a": [1.0, 2.0, 3.0], "name": ["x", "y", "z"]}).to_csv(tmp_path / "mixed.csv", index=False)
    with pytest.raises(ValueError, match="non-numeric columns \\['name'\\]"):
        sufficient_stats(tmp_path / "mixed.csv", scheduler="synchronous")
    with pytest.raises(ValueError, match="columns not found"):
        sufficient_stats(tmp_path / "mixed.csv", columns=["nope"], scheduler="synchronous")
    pd.DataFrame({"a": [1.0, np.nan, 3.0]}).to_csv(tmp_path / "nan.csv", index=False)
    with pytest.raises(ValueError, match="NaN or infinite"):
        sufficient_stats(tmp_path / "nan.csv", scheduler="synchronous")
    (tmp_path / "data.xlsx").write_bytes(b"")
    with pytest.raises(ValueError, match="cannot tell the format"):
        sufficient_stats(tmp_path / "data.xlsx")
