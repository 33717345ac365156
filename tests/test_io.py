"""Tests of colide_core.data.io: every rejection path gives a DataValidationError with a specific kind and a
message naming the column / row; good files in every supported format load identically."""
import io
import pickle

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from colide_core.data.io import (
    ERROR_KINDS,
    INTERACTIVE_MAX_NODES,
    DataValidationError,
    ValidatedData,
    read_table,
    validate_data,
)


def _frame(n=20, d=3, seed=0, names=None):
    """Independent Gaussian columns: full-rank, finite, no duplicates."""
    rng = np.random.default_rng(seed)
    names = names or [f"v{j}" for j in range(d)]
    return pd.DataFrame(rng.normal(size=(n, len(names))), columns=names)


def _csv(df, sep=",", **kw):
    return df.to_csv(index=False, sep=sep, **kw).encode()


def _raises(kind, fn, *args, **kwargs):
    with pytest.raises(DataValidationError) as info:
        fn(*args, **kwargs)
    err = info.value
    assert err.kind == kind, (err.kind, str(err))
    assert isinstance(err, ValueError)
    assert str(err) == err.message and err.message
    return err


# ------------------------------------------------------------------------------------------------
# reading: formats and delimiters
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_delimiter_is_sniffed(sep):
    df = _frame()
    got = read_table(_csv(df, sep=sep), "data.txt")
    assert list(got.columns) == ["v0", "v1", "v2"]
    np.testing.assert_allclose(got.to_numpy(), df.to_numpy(), rtol=1e-15)
    # rows are numbered from 1, header excluded
    assert got.index[0] == 1 and got.index[-1] == 20


def test_whitespace_delimited_and_tsv_extension():
    text = b"a  b   c\n1 2 3\n4   5 6.5\n"
    got = read_table(text, "x.dat")
    assert got.shape == (2, 3) and got.loc[2, "c"] == 6.5
    tsv = b"a\tb\n1\t2\n3\t4\n"
    got = read_table(tsv, "x.tsv")
    assert list(got.columns) == ["a", "b"] and got["b"].tolist() == [2, 4]


def test_spaces_after_commas_and_bom_and_crlf():
    text = "\ufeffa, b, c\r\n1, 2, 3\r\n4, 5, 6\r\n".encode("utf-8")
    got = read_table(text, "x.csv")
    assert list(got.columns) == ["a", "b", "c"]
    assert got["c"].tolist() == [3, 6]


def test_decimal_comma_with_semicolon():
    # European spreadsheet export: ';' delimiter, ',' decimal mark. 1,5 must be 1.5 not two fields.
    text = b"a;b\n1,5;2,25\n3,0;-4,5\n"
    got = read_table(text, "eu.csv")
    assert got["a"].tolist() == [1.5, 3.0] and got["b"].tolist() == [2.25, -4.5]


def test_utf16_and_latin1_names():
    df = _frame(names=["Größe", "µ-Wert", "日本"])
    got16 = read_table(df.to_csv(index=False, sep="\t").encode("utf-16"), "x.txt")
    assert list(got16.columns) == ["Größe", "µ-Wert", "日本"]
    lat = "Größe;µ\n1;2\n3;4\n".encode("latin-1")  # not valid UTF-8: falls back to Latin-1
    assert list(read_table(lat, "x.csv").columns) == ["Größe", "µ"]


def test_parquet_roundtrip_drops_stored_index():
    df = _frame(n=15)
    df.index = pd.RangeIndex(100, 115)
    buf = io.BytesIO()
    df.to_parquet(buf, index=True)  # pandas stores the index as a column with metadata
    got = read_table(buf.getvalue(), "x.parquet")
    assert list(got.columns) == ["v0", "v1", "v2"]
    np.testing.assert_array_equal(got.to_numpy(), df.to_numpy())
    # a non-range index is stored as a real column "__index_level_0__": it must be dropped too
    df.index = pd.Index(np.arange(15) * 3)
    buf = io.BytesIO()
    df.to_parquet(buf, index=True)
    got = read_table(buf.getvalue(), "whatever.bin")  # detected by the PAR1 magic
    assert list(got.columns) == ["v0", "v1", "v2"]


def test_sachs_csv_loads_and_validates():
    raw = open("colide_core/data/bundled/sachs.csv", "rb").read()
    v = validate_data(read_table(raw, "sachs.csv"))
    assert isinstance(v, ValidatedData)
    assert (v.n_samples, v.n_nodes) == (853, 11)
    assert v.node_names[:3] == ["Raf", "Mek", "Plcg"]
    assert v.X.dtypes.unique().tolist() == [np.dtype("float64")]
    assert v.warnings == () and v.dropped_rows == 0 and v.dropped_columns == ()
    assert not v.ill_posed and 1 < v.condition_number < 1e4


# ------------------------------------------------------------------------------------------------
# reading: rejections
# ------------------------------------------------------------------------------------------------
def test_empty_file():
    assert "empty" in _raises("empty_file", read_table, b"", "x.csv").message
    _raises("empty_file", read_table, b"  \n\n \t\n", "x.csv")


def test_too_large():
    err = _raises("too_large", read_table, b"a,b\n" + b"1,2\n" * 100, "x.csv", max_bytes=50)
    assert "limit" in err.message


def test_parquet_cell_bomb_rejected_from_metadata():
    # 200k rows x 3 constant columns compress to a few KB but declare 600k cells.
    df = pd.DataFrame(np.zeros((200_000, 3)), columns=list("abc"))
    buf = io.BytesIO()
    df.to_parquet(buf, index=False, compression="zstd")
    data = buf.getvalue()
    assert len(data) < 100_000
    err = _raises("too_large", read_table, data, "x.parquet", max_bytes=200_000)
    assert "200000 rows x 3 columns" in err.message


def test_binary_and_excel_not_tabular():
    err = _raises("not_tabular", read_table, b"PK\x03\x04\x14\x00\x00\x00binary", "x.xlsx")
    assert "Excel" in err.message
    _raises("not_tabular", read_table, bytes(range(256)), "x.csv")


def test_fake_and_corrupt_parquet():
    _raises("not_tabular", read_table, b"a,b\n1,2\n", "x.parquet")
    _raises("not_tabular", read_table, b"PAR1garbagegarbagePAR1", "x.parquet")


def test_ragged_rows_name_the_line():
    err = _raises("not_tabular", read_table, b"a,b\n1,2\n3,4\n5,6,7\n8,9\n", "x.csv")
    # pandas counts physical lines from 1 including the header: the bad row is line 4
    assert "line 4" in err.message and "saw 3" in err.message


def test_parquet_nested_binary_and_object_columns_rejected():
    good = pa.array(np.arange(12.0))
    table = pa.table({"x": good, "lst": pa.array([[1.0, 2.0]] * 12), "raw": pa.array([b"\x80"] * 12)})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    err = _raises("unsupported_column_type", read_table, buf.getvalue(), "x.parquet")
    assert "'lst'" in err.message and "'raw'" in err.message and err.columns == ("lst", "raw")


def test_parquet_pandas_metadata_is_never_executed():
    # Craft pandas metadata claiming an object column with a pickled payload; reading must not run it.
    table = pa.table({"a": np.arange(12.0), "b": np.arange(12.0) ** 2})

    class Boom:
        def __reduce__(self):
            return (exec, ("raise SystemExit('pickle executed')",))

    evil = {
        "index_columns": [],
        "column_indexes": [],
        "columns": [{"name": "a", "field_name": "a", "pandas_type": "object", "numpy_type": "object",
                     "metadata": {"pickle": pickle.dumps(Boom()).hex()}}],
        "pandas_version": "0.0",
    }
    import json
    table = table.replace_schema_metadata({b"pandas": json.dumps(evil).encode()})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    got = read_table(buf.getvalue(), "evil.parquet")  # no SystemExit
    assert got["b"].tolist() == [float(i * i) for i in range(12)]


def test_bad_type():
    _raises("bad_type", read_table, "a,b\n1,2\n", "x.csv")  # str, not bytes
    _raises("bad_type", validate_data, np.arange(5.0))  # 1-D


# ------------------------------------------------------------------------------------------------
# validation: rejections, each naming the column / row
# ------------------------------------------------------------------------------------------------
def test_non_numeric_named_and_droppable():
    df = _frame()
    df["label"] = ["ctrl", "treated"] * 10
    err = _raises("non_numeric", validate_data, df)
    assert "'label'" in err.message and "'ctrl'" in err.message and err.columns == ("label",)
    v = validate_data(df, drop_non_numeric=True)
    assert v.node_names == ["v0", "v1", "v2"] and v.dropped_columns == ("label",)
    assert any("label" in w for w in v.warnings)
    assert "label" in df.columns  # caller's frame untouched


def test_non_numeric_in_csv_and_dates_complex():
    raw = b"a,b,c\n1,2,x\n" + b"".join(f"{i},{i * i % 7},{i}\n".encode() for i in range(12))
    err = _raises("non_numeric", validate_data, read_table(raw, "x.csv"))
    assert err.columns == ("c",) and "'x'" in err.message
    df = _frame()
    df["when"] = pd.date_range("2020-01-01", periods=20)
    df["z"] = np.arange(20) * (1 + 1j)
    err = _raises("non_numeric", validate_data, df)
    assert err.columns == ("when", "z")


def test_nan_and_inf_name_rows_and_columns_and_drop():
    df = _frame(n=30)
    df.iloc[4, 1] = np.nan
    df.iloc[9, 2] = np.inf
    df.iloc[9, 0] = -np.inf
    err = _raises("nonfinite", validate_data, df)
    # index labels of the bad rows (0-based here because the frame has a RangeIndex from 0)
    assert "2 rows of 30" in err.message and "rows 4, 9" in err.message
    assert "'v1' (1 missing/NaN)" in err.message and "'v2' (1 infinite)" in err.message
    assert err.rows == (4, 9) and err.columns == ("v0", "v1", "v2")
    v = validate_data(df, drop_nonfinite_rows=True)
    assert v.n_samples == 28 and v.dropped_rows == 2 and v.dropped_row_labels == (4, 9)
    assert any("Dropped 2 rows" in w for w in v.warnings)
    assert 4 not in v.X.index and 5 in v.X.index


def test_nan_from_csv_reports_data_row_numbers():
    lines = ["a,b"] + [f"{i},{(i * 7) % 11}" for i in range(12)]
    lines[3] = "2,NA"  # third data row
    lines[6] = "inf,5"  # sixth data row; 'inf' parses as infinity
    err = _raises("nonfinite", validate_data, read_table("\n".join(lines).encode(), "x.csv"))
    assert "rows 3, 6" in err.message


def test_dropping_nonfinite_can_leave_too_few_rows():
    df = _frame(n=12)
    df.iloc[:5, 0] = np.nan
    err = _raises("too_few_rows", validate_data, df, drop_nonfinite_rows=True)
    assert "7 rows after dropping" in err.message


def test_constant_column():
    df = _frame()
    df["flat"] = 3.5
    err = _raises("constant_column", validate_data, df)
    assert "'flat' is always 3.5" in err.message and err.columns == ("flat",)


def test_duplicate_columns_by_value():
    df = _frame()
    df["copy_of_v0"] = df["v0"]
    err = _raises("duplicate_column", validate_data, df)
    assert "'v0' = 'copy_of_v0'" in err.message


def test_duplicate_and_empty_names():
    raw = b"a,b,a\n" + b"".join(f"{i},{i % 3},{i % 5}\n".encode() for i in range(12))
    err = _raises("duplicate_column_name", validate_data, read_table(raw, "x.csv"))
    assert "'a'" in err.message and err.columns == ("a",)
    raw = b"a,,c\n" + b"".join(f"{i},{i % 3},{i % 5}\n".encode() for i in range(12))
    err = _raises("empty_column_name", validate_data, read_table(raw, "x.csv"))
    assert "position 2" in err.message
    # pandas to_csv with its index: a nameless first column holding 0..n-1
    raw = _frame(n=12).to_csv().encode()
    err = _raises("empty_column_name", validate_data, read_table(raw, "x.csv"))
    assert "position 1" in err.message and "index" in err.message
    # trailing delimiter on every line: an empty, nameless last column
    raw = b"a,b,\n" + b"".join(f"{i},{i % 3},\n".encode() for i in range(12))
    err = _raises("empty_column_name", validate_data, read_table(raw, "x.csv"))
    assert "trailing delimiter" in err.message


def test_too_few_columns_and_rows():
    raw = b"only\n" + b"".join(f"{i}\n".encode() for i in range(20))
    err = _raises("too_few_columns", validate_data, read_table(raw, "x.csv"))
    assert "1 column" in err.message
    err = _raises("too_few_rows", validate_data, _frame(n=9))
    assert "9 rows" in err.message and "at least 10" in err.message
    v = validate_data(_frame(n=9), min_rows=5)
    assert v.n_samples == 9
    df = _frame()
    df["t"] = "x"
    err = _raises("too_few_columns", validate_data, df[["v0", "t"]], drop_non_numeric=True)
    assert "1 numeric column" in err.message


def test_header_only_is_too_few_rows():
    err = _raises("too_few_rows", validate_data, read_table(b"a,b,c\n", "x.csv"))
    assert "0 rows" in err.message


def test_n_less_than_d_is_only_a_warning():
    v = validate_data(_frame(n=10, d=15))
    assert v.ill_posed and v.n_samples == 10 and v.n_nodes == 15
    assert any("ill-posed" in w and "10 samples for 15 nodes" in w for w in v.warnings)


def test_max_nodes():
    d = INTERACTIVE_MAX_NODES + 1
    err = _raises("too_many_nodes", validate_data, _frame(n=20, d=d), max_nodes=INTERACTIVE_MAX_NODES)
    assert f"{d} columns" in err.message and "200" in err.message
    # the library itself has no limit by default
    assert validate_data(_frame(n=20, d=d)).n_nodes == d


def test_covariance_overflow():
    df = _frame()
    rng = np.random.default_rng(5)
    df["huge"] = rng.normal(size=20) * 1e200  # squares are ~1e400: inf in float64
    err = _raises("overflow", validate_data, df)
    assert err.columns == ("huge",) and "'huge'" in err.message and "Rescale" in err.message
    # 1e150 still fits (squares ~1e300) and is accepted, with a scale warning
    df["huge"] = rng.normal(size=20) * 1e150
    v = validate_data(df)
    assert any("standardizing" in w for w in v.warnings)


def test_variance_underflow():
    df = _frame()
    df["tiny"] = df["v1"] * 1e-170  # squares ~1e-340 underflow to 0
    err = _raises("singular_covariance", validate_data, df)
    assert err.columns == ("tiny",)


def test_singular_covariance_names_the_collinear_columns():
    df = _frame(n=50, d=4)
    df["s"] = 2.0 * df["v0"] - df["v2"]  # exact linear combination of v0 and v2
    err = _raises("singular_covariance", validate_data, df)
    assert set(err.columns) == {"v0", "v2", "s"}
    assert "collinear" in err.message


def test_nearly_collinear_is_a_warning():
    df = _frame(n=200, d=3, seed=3)
    rng = np.random.default_rng(9)
    df["s"] = df["v0"] + df["v1"] + 1e-5 * rng.normal(size=200)
    v = validate_data(df)
    assert v.condition_number > 1e8
    assert any("ill-conditioned" in w for w in v.warnings)


def test_names_stripped_stringified_and_input_not_mutated():
    df = pd.DataFrame({" a ": np.arange(12.0), 7: np.arange(12.0) ** 2, "c": (np.arange(12) % 5)})
    before = df.copy()
    v = validate_data(df)
    assert v.node_names == ["a", "7", "c"]
    pd.testing.assert_frame_equal(df, before)
    v.X.iloc[0, 0] = 99.0  # X is a copy, not a view on the caller's data
    assert df.iloc[0, 0] == 0.0


def test_validated_data_is_frozen():
    v = validate_data(_frame())
    with pytest.raises(AttributeError):
        v.warnings = ("x",)


def test_bool_and_nullable_int_columns_are_numeric():
    df = _frame()
    df["flag"] = np.arange(20) % 3 == 0
    df["cnt"] = pd.array((np.arange(20) * 7) % 5, dtype="Int64")
    v = validate_data(df)
    assert v.X["flag"].sum() == 7.0 and v.X.dtypes.eq(np.float64).all()


def test_hostile_names_survive_verbatim_and_messages_are_bounded():
    names = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "x" * 256]
    v = validate_data(read_table(_csv(_frame(names=names)), "x.csv"))
    assert v.node_names == names  # escaping is the renderer's job, the data keep their names
    df = _frame(names=names)
    df["y" * 256] = "text"
    err = _raises("non_numeric", validate_data, df)
    assert len(err.message) < 600  # long names are shortened in messages


def test_names_longer_than_the_limit_are_refused_before_any_drawing():
    # Issue 30, point 6: 50 names of 130,000 characters (a 6.5 MB file) made each live λ step take
    # 35-39 s and send 20-47 MB. A name has at most MAX_NAME_CHARS characters.
    from colide_core._validation import MAX_NAME_CHARS

    err = _raises("bad_column_name", validate_data, _frame(names=["a", "b", "z" * (MAX_NAME_CHARS + 1)]))
    assert f"at most {MAX_NAME_CHARS}" in err.message and len(err.message) < 400


def test_error_kinds_documented_and_bad_params():
    with pytest.raises(ValueError):
        DataValidationError("m", "no_such_kind")
    assert set(ERROR_KINDS) >= {"empty_file", "too_large", "not_tabular", "non_numeric", "nonfinite",
                                "constant_column", "duplicate_column", "duplicate_column_name",
                                "empty_column_name", "too_few_columns", "too_few_rows",
                                "too_many_nodes", "overflow", "singular_covariance"}
    with pytest.raises(ValueError):
        validate_data(_frame(), min_rows=1)
    err = pickle.loads(pickle.dumps(DataValidationError("msg", "overflow", columns=["a"])))
    assert err.kind == "overflow" and err.columns == ("a",)


def test_streamlit_server_limits_match_the_io_layer(repo_root):
    # .streamlit/config.toml [server]: the upload cap (in MiB) admits every file read_table accepts
    # by default, and XSRF protection stays on (uploads need the session's token).
    import tomllib

    from colide_core.data.readers import DEFAULT_MAX_BYTES

    cfg = tomllib.loads((repo_root / ".streamlit" / "config.toml").read_text())
    server = cfg["server"]
    assert server["enableXsrfProtection"] is True
    assert server["maxUploadSize"] == 50
    assert DEFAULT_MAX_BYTES <= server["maxUploadSize"] * 1024 * 1024
    assert server.get("enableCORS", True) is True  # Streamlit forces CORS on under XSRF anyway


# ------------------------------------------------------------------------------------------------
# the named checks of the pipeline, each alone
# ------------------------------------------------------------------------------------------------
def test_check_file():
    from colide_core.data.readers import check_file

    assert check_file(bytearray(b"a,b\n1,2\n")) == b"a,b\n1,2\n"
    assert check_file(memoryview(b"x")) == b"x"
    err = _raises("bad_type", check_file, "a,b\n")
    assert err.message == "Expected the file content as bytes, got str."
    err = _raises("too_large", check_file, b"1" * 1500, max_bytes=1000)
    assert err.message == "The file is 1.5 kB, above the limit of 1.0 kB."
    assert _raises("empty_file", check_file, b" \r\n\t").message == "The file is empty."
    with pytest.raises(ValueError, match="max_bytes"):
        check_file(b"x", max_bytes=0)


def test_as_table():
    from colide_core.data.io import as_table

    df = _frame()
    assert as_table(df) is df  # no copy: validate_data never writes into it
    got = as_table([[1.0, 2.0], [3.0, 4.0]])
    assert list(got.columns) == ["X1", "X2"] and got.to_numpy().tolist() == [[1, 2], [3, 4]]
    err = _raises("bad_type", as_table, np.arange(5.0))
    assert err.message == "Expected a 2-D table (n_samples, n_nodes), got an array of shape (5,)."


def test_check_column_names():
    from colide_core.data.io import check_column_names

    assert check_column_names(pd.DataFrame(columns=[" a ", 7, "b"])) == ["a", "7", "b"]
    err = _raises("duplicate_column_name", check_column_names, pd.DataFrame(columns=["a", " a", "b"]))
    assert err.message == "Duplicate column names: 'a'. Every column needs a unique name."
    df = pd.DataFrame({"a": [1.0, 2.0], "  ": [3.0, 4.0], "Unnamed: 2": [5.0, 6.0]})
    err = _raises("empty_column_name", check_column_names, df)
    assert err.message == ("2 columns without a name, at position 2, 3 (counting from 1). Give every "
                           "column a unique name in the header.")
    assert err.columns == ("  ", "Unnamed: 2")


def test_check_row_count():
    from colide_core.data.io import check_row_count

    check_row_count(10, 10)  # enough: no error
    err = _raises("too_few_rows", check_row_count, 1, 10)
    assert err.message == "The data has 1 row; at least 10 are needed."
    err = _raises("too_few_rows", check_row_count, 7, 10, after_dropping=True)
    assert err.message == ("The data has 7 rows after dropping rows with missing or infinite values; "
                           "at least 10 are needed.")


def test_check_numeric_columns():
    from colide_core.data.io import check_numeric_columns

    df = pd.DataFrame({"a": [1.0, 2.0], "t": [None, "x"], "b": [True, False], "i": [1, 2]})
    names = list(df.columns)
    assert check_numeric_columns(df[["a", "b", "i"]], ["a", "b", "i"]) == ([0, 1, 2], ())
    assert check_numeric_columns(df, names, drop=True) == ([0, 2, 3], ("t",))
    err = _raises("non_numeric", check_numeric_columns, df, names)
    assert err.message == "1 column not numeric: 't' ('t' holds e.g. 'x'). Drop it or fix the values."


def test_check_column_count():
    from colide_core.data.io import check_column_count

    check_column_count(["a", "b"], max_nodes=2)
    err = _raises("too_few_columns", check_column_count, ["a;b;c"])
    assert err.message == ("The data has 1 column; at least 2 are needed to learn a graph (check the "
                           "delimiter: the header was read as a single field).")
    err = _raises("too_few_columns", check_column_count, ["a"], after_dropping=True)
    assert err.message == "The data has 1 numeric column; at least 2 are needed to learn a graph."
    err = _raises("too_many_nodes", check_column_count, ["a", "b", "c"], max_nodes=2)
    assert err.message.startswith("The data has 3 columns (nodes); the limit here is 2.")


def test_check_finite_values():
    from colide_core.data.io import check_finite_values

    X = np.array([[1.0, 2.0], [np.nan, 3.0], [4.0, np.inf], [5.0, 6.0]])
    index = pd.Index([10, 11, 12, 13])
    bad = check_finite_values(X, ["a", "b"], index, drop=True)
    assert bad.tolist() == [False, True, True, False]
    assert not check_finite_values(X[[0, 3]], ["a", "b"], index[[0, 3]]).any()
    err = _raises("nonfinite", check_finite_values, X, ["a", "b"], index)
    assert err.message == ("2 rows of 4 have missing or infinite values: rows 11, 12; in columns "
                           "'a' (1 missing/NaN); 'b' (1 infinite). Drop those rows or fix the values.")
    assert err.rows == (11, 12) and err.columns == ("a", "b")


def test_check_constant_columns():
    from colide_core.data.io import check_constant_columns

    check_constant_columns(np.array([[1.0, 0.0], [2.0, 0.0 + 1e-300]]), ["a", "b"])  # not constant
    X = np.array([[1.0, 3.5, -2.0], [2.0, 3.5, -2.0]])
    err = _raises("constant_column", check_constant_columns, X, ["a", "flat", "neg"])
    assert err.message == ("2 columns constant ('flat' is always 3.5; 'neg' is always -2): 'flat', "
                           "'neg'. A constant column has zero variance and carries no information; "
                           "drop it.")


def test_check_duplicate_columns():
    from colide_core.data.io import check_duplicate_columns

    check_duplicate_columns(np.array([[1.0, 1.0], [2.0, 2.5]]), ["a", "b"])  # differ in one row
    X = np.array([[0.0, -0.0, 1.0, 5.0], [1.0, 1.0, 2.0, 2.0]])  # -0.0 == 0.0
    err = _raises("duplicate_column", check_duplicate_columns, X, ["a", "b", "c", "d"])
    assert err.message == ("Identical columns (same values in every row): 'a' = 'b'. Keep only one "
                           "of each group.")
    assert err.columns == ("a", "b")


def test_check_covariance():
    from colide_core.data.io import check_covariance

    # x = (0, 1, 2), y = (0, 2, 7): 1/n covariance [[2/3, 7/3], [7/3, 26/3]] (centred data)
    cov = check_covariance(np.array([[0.0, 0.0], [1.0, 2.0], [2.0, 7.0]]), ["x", "y"])
    np.testing.assert_allclose(cov, [[2 / 3, 7 / 3], [7 / 3, 26 / 3]], rtol=1e-15)
    huge = np.array([[1e200, 0.0], [-1e200, 1.0], [0.0, 2.0]])
    err = _raises("overflow", check_covariance, huge, ["h", "ok"])
    assert err.columns == ("h",) and "'h' reaches 1e+200" in err.message
    tiny = np.array([[1e-170, 0.0], [-1e-170, 1.0], [0.0, 2.0]])
    err = _raises("singular_covariance", check_covariance, tiny, ["t", "ok"])
    assert err.columns == ("t",) and "underflows to zero" in err.message


def test_check_collinearity():
    from colide_core.data.io import check_collinearity

    assert check_collinearity(np.diag([4.0, 9.0]), ["a", "b"]) == (1.0, None)
    # correlation [[1, r], [r, 1]] has eigenvalues 1 - r and 1 + r: condition (1 + r) / (1 - r)
    r = 1.0 - 2e-9
    cond, warning = check_collinearity(np.array([[1.0, r], [r, 1.0]]) * 4.0, ["a", "b"])
    assert cond == pytest.approx((1 + r) / (1 - r), rel=1e-6) and cond > 1e8
    assert warning.startswith("The correlation matrix is ill-conditioned (condition number 1e+09)")
    cov = np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]])  # b = 2 a exactly
    err = _raises("singular_covariance", check_collinearity, cov, ["a", "b", "c"])
    assert set(err.columns) == {"a", "b"} and "are linearly dependent" in err.message


def test_scale_warning():
    from colide_core.data.io import scale_warning

    assert scale_warning(np.diag([1e12, 1.0]), ["a", "b"]) is None  # at the limit, not above
    assert scale_warning(np.diag([1.0, 1e14]), ["a", "b"]) == (
        "Column scales differ by a factor of 1e+07 in standard deviation ('b' vs 'a'); "
        "consider standardizing.")
