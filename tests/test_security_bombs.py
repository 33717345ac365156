"""Issue 22, class 1: decompression bombs.

A Parquet file is a few kilobytes of footer and compressed pages; what it expands to is decided by
its metadata. ``colide_core.data.io.read_table`` must decide from the footer alone, before reading any
data, and never let a small file become gigabytes in memory. The attack files are built here, at
test time, without ever holding their expanded content.
"""
import gzip
import io
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from colide_core.data.io import DataValidationError, read_table, validate_data
from colide_core.data.readers import DEFAULT_MAX_BYTES


def dictionary_bomb(rows: int = 4000, width: int = 1_000_000) -> bytes:
    """The issue's example: one ``width``-character string repeated ``rows`` times through
    dictionary encoding. The file is a few kB; expanded row by row it is ``rows * width`` bytes
    (4 GB by default). Built from a DictionaryArray, so the test never holds the expansion."""
    indices = pa.array(np.zeros(rows, dtype=np.int32))
    column = pa.DictionaryArray.from_arrays(indices, pa.array(["x" * width]))
    k = np.arange(rows)
    table = pa.table({"a": column, "b": pa.array((k % 2).astype(np.float64)),
                      "c": pa.array((k % 3).astype(np.float64))})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def _kind(fn, *args, **kw):
    with pytest.raises(DataValidationError) as info:
        fn(*args, **kw)
    return info.value


# ----------------------------------------------------------------------------------------------
# the example, in a separate process whose memory is measured and capped
# ----------------------------------------------------------------------------------------------
_CHILD = textwrap.dedent("""
    import json, resource, sys
    from colide_core.data.io import DataValidationError, read_table

    def status(key):
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024

    data = open(sys.argv[1], "rb").read()
    import pyarrow, pyarrow.parquet, pandas  # imported before the baseline is taken
    # No more than 1.5 GB of extra address space: a 4 GB expansion fails instead of hurting the
    # machine, and the parent sees it.
    extra = 1_500_000_000
    resource.setrlimit(resource.RLIMIT_AS, (status("VmSize") + extra, status("VmSize") + extra))
    before = status("VmRSS")
    out = {}
    try:
        df = read_table(data, "bomb.parquet")
        out["shape"] = list(df.shape)
        out["dtypes"] = [str(t) for t in df.dtypes]
        out["first"] = [len(str(df.iloc[0, 0]))]
    except DataValidationError as exc:
        out["kind"] = exc.kind
        out["message"] = exc.message
    except BaseException as exc:
        out["crash"] = type(exc).__name__ + ": " + str(exc)[:200]
    out["peak_delta"] = status("VmHWM") - before
    print(json.dumps(out))
""")


def _read_in_child(root, tmp_path, data):
    path = tmp_path / "bomb.parquet"
    path.write_bytes(data)
    env = dict(os.environ, PYTHONPATH=str(root), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True,
                          timeout=300, env=env, cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_4kb_dictionary_bomb_stays_small_in_memory(tmp_path, repo_root):
    data = dictionary_bomb()
    assert len(data) < 10_000  # a few kB on disk ...
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    assert meta.num_rows * meta.num_columns <= DEFAULT_MAX_BYTES // 2  # ... passing the cell check
    out = _read_in_child(repo_root, tmp_path, data)
    # on main: the cast to 4 GB of strings fails in the capped child (uncapped it takes 4 GB)
    assert "crash" not in out and "kind" not in out, out
    # 4 GB expanded; read as a dictionary it costs about one copy of the string plus 4 bytes/row.
    assert out["peak_delta"] < 150_000_000, out
    assert out["shape"] == [4000, 3] and out["dtypes"][0] == "category" and out["first"] == [1_000_000]


def test_dictionary_text_column_is_never_expanded_row_by_row():
    data = dictionary_bomb(rows=400, width=100_000)  # 40 MB if expanded
    pool_before = pa.total_allocated_bytes()
    df = read_table(data, "x.parquet")
    assert isinstance(df["a"].dtype, pd.CategoricalDtype)
    assert len(df["a"].cat.categories) == 1 and len(df["a"].cat.categories[0]) == 100_000
    assert df["a"].memory_usage(deep=True) < 1_000_000
    assert pa.total_allocated_bytes() - pool_before < 5_000_000
    # the text column is still reported by name (or dropped on request) by validate_data
    err = _kind(validate_data, df)
    assert err.kind == "non_numeric" and err.columns == ("a",)
    v = validate_data(df, drop_non_numeric=True)
    assert v.node_names == ["b", "c"] and v.dropped_columns == ("a",)
    np.testing.assert_array_equal(v.X["c"].to_numpy(), np.arange(400.0) % 3)


# ----------------------------------------------------------------------------------------------
# refused from the footer, before any data is read
# ----------------------------------------------------------------------------------------------
@pytest.fixture
def no_data_read(monkeypatch):
    """Fail if read_table reads any column data (ParquetFile.read / read_row_group)."""
    calls = []

    def forbidden(self, *args, **kwargs):
        calls.append(args)
        raise AssertionError("column data was read before the footer was checked")

    monkeypatch.setattr(pq.ParquetFile, "read", forbidden)
    monkeypatch.setattr(pq.ParquetFile, "read_row_group", forbidden)
    monkeypatch.setattr(pq.ParquetFile, "read_row_groups", forbidden)
    return calls


def test_plain_encoded_text_bomb_refused_from_declared_sizes(no_data_read):
    # 20 strings of 1 MB, plain-encoded and zstd-compressed: ~1 kB of pages declaring 20 MB.
    table = pa.table({"s": pa.array(["y" * 1_000_000] * 20), "v": pa.array(np.arange(20.0))})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", use_dictionary=False)
    data = buf.getvalue()
    assert len(data) < 20_000
    err = _kind(read_table, data, "x.parquet", max_bytes=1_000_000)  # 5 MB may be decoded
    assert err.kind == "too_large"
    assert "expands to 20.0 MB" in err.message and "5.0 MB" in err.message
    assert no_data_read == []


def test_wide_fixed_width_bomb_refused_from_decoded_size(no_data_read):
    # decimal256 cells decode to 32 bytes each: 200k cells pass the cell limit but not the bytes.
    col = pa.array([0] * 50_000, type=pa.decimal256(40, 0))
    table = pa.table({"a": col, "b": col, "c": col, "d": col})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    err = _kind(read_table, buf.getvalue(), "x.parquet", max_bytes=1_000_000)
    assert err.kind == "too_large" and "expands to 6.4 MB" in err.message
    assert no_data_read == []


def test_cell_bomb_and_unsupported_types_refused_before_reading(no_data_read):
    df = pd.DataFrame(np.zeros((200_000, 3)), columns=list("abc"))
    buf = io.BytesIO()
    df.to_parquet(buf, index=False, compression="zstd")
    assert _kind(read_table, buf.getvalue(), "x.parquet", max_bytes=200_000).kind == "too_large"
    table = pa.table({"x": pa.array(np.arange(12.0)), "lst": pa.array([[1.0, 2.0]] * 12),
                      "raw": pa.array([b"\x80"] * 12)})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    err = _kind(read_table, buf.getvalue(), "x.parquet")
    assert err.kind == "unsupported_column_type" and err.columns == ("lst", "raw")
    assert no_data_read == []


def test_duplicate_parquet_names_refused_before_reading(no_data_read):
    table = pa.Table.from_arrays([pa.array(np.arange(12.0)), pa.array(np.arange(12.0) ** 2)],
                                 names=["a", "a"])
    buf = io.BytesIO()
    pq.write_table(table, buf)
    err = _kind(read_table, buf.getvalue(), "x.parquet")
    assert err.kind == "duplicate_column_name" and err.columns == ("a",)


def test_row_counts_that_do_not_add_up_are_refused():
    # Claims 2 rows in the footer while its row group holds 12: rewrite the footer's num_rows.
    table = pa.table({"a": np.arange(12.0), "b": np.arange(12.0) ** 2})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="none")
    data = buf.getvalue()
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    assert meta.num_rows == 12
    # the FileMetaData struct: field 3 (num_rows, i64, zigzag varint 24 = 0x18) follows the schema
    footer_len = int.from_bytes(data[-8:-4], "little")
    footer = data[-8 - footer_len:-8]
    needle = b"\x16\x18"  # field delta 1 (after field 2), type i64; value 12 -> zigzag 24
    at = footer.find(needle)
    assert at > 0
    forged = footer[:at] + b"\x16\x04" + footer[at + 2:]  # 2 rows
    data = data[:-8 - footer_len] + forged + data[-8:]
    assert pq.ParquetFile(io.BytesIO(data)).metadata.num_rows == 2
    err = _kind(read_table, data, "x.parquet")
    assert err.kind == "not_tabular" and "inconsistent" in err.message


def test_honest_parquet_is_read_as_before():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(30, 3)), columns=["a", "b", "c"])
    df["i"] = np.arange(30, dtype=np.int32)
    df["flag"] = rng.random(30) > 0.5
    df["cat"] = pd.Categorical(rng.choice([1.5, 2.5], size=30))  # numeric dictionary column
    df["label"] = rng.choice(["ctrl", "treated"], size=30)
    df.index = pd.Index(np.arange(30) * 3)
    buf = io.BytesIO()
    df.to_parquet(buf, index=True)
    got = read_table(buf.getvalue(), "x.parquet")
    assert list(got.columns) == ["a", "b", "c", "i", "flag", "cat", "label"]  # index dropped
    np.testing.assert_array_equal(got[["a", "b", "c"]].to_numpy(), df[["a", "b", "c"]].to_numpy())
    assert got["i"].tolist() == list(range(30)) and got["flag"].tolist() == df["flag"].tolist()
    np.testing.assert_array_equal(got["cat"].to_numpy(dtype=float), df["cat"].to_numpy(dtype=float))
    assert got["label"].astype(str).tolist() == df["label"].tolist()
    v = validate_data(got, drop_non_numeric=True)
    assert v.dropped_columns == ("label",) and v.n_nodes == 6


def test_compressed_text_uploads_are_refused_never_decompressed():
    csv = ("a,b\n" + "1,2\n" * 1000).encode()
    for blob in (gzip.compress(csv), b"BZh91AY&SY" + b"\x00" * 20, b"\xfd7zXZ\x00\x00" + b"\x00" * 20):
        err = _kind(read_table, blob, "x.csv")
        assert err.kind == "not_tabular" and "compressed" in err.message
