"""Property tests of the loader and validator: whatever bytes or table arrive, the result is either a
valid dataset (with its invariants) or a DataValidationError with a documented kind -- never any other
exception type."""
import csv
import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colide_core.data.io import ERROR_KINDS, DataValidationError, ValidatedData, read_table, validate_data

# Any warning (e.g. pandas' ParserWarning about silently truncated rows) fails the test.
pytestmark = pytest.mark.filterwarnings("error")

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Cell texts: numbers of every scale, special values, junk, quotes and delimiters.
_cells = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(min_value=-1e3, max_value=1e3).map(lambda x: f"{x:.6g}"),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.sampled_from(["", "NA", "nan", "NaN", "inf", "-inf", "Infinity", "1e400", "-1e-400", "null",
                     "True", "false", " ", '"', "1,5", "1;2", "\t", "#N/A", "0x1F", "1_000"]),
    st.text(max_size=6),
)
_names = st.text(min_size=0, max_size=8)  # any unicode, incl. empty, control chars, newlines
_delims = st.sampled_from([",", ";", "\t", "|", " "])
_filenames = st.sampled_from(["x.csv", "x.tsv", "x.txt", "x", "x.parquet", "X.CSV", "a.b.tab"])


def _check_outcome(fn):
    """Run fn(); return the ValidatedData or the DataValidationError, failing on anything else."""
    try:
        return fn()
    except DataValidationError as err:
        assert err.kind in ERROR_KINDS
        assert isinstance(err.message, str) and err.message.strip()
        return err


def _check_valid(v, min_rows=10):
    assert isinstance(v, ValidatedData)
    X = v.X
    assert X.shape[0] >= min_rows and X.shape[1] >= 2
    assert all(dt == np.float64 for dt in X.dtypes)
    assert np.isfinite(X.to_numpy()).all()
    names = v.node_names
    assert len(set(names)) == len(names) and all(n.strip() == n and n for n in names)
    assert v.dropped_rows == len(v.dropped_row_labels)
    assert all(isinstance(w, str) for w in v.warnings)


def _load_and_validate(data, filename, **kw):
    def run():
        df = read_table(data, filename, max_bytes=200_000)
        assert isinstance(df, pd.DataFrame)
        return validate_data(df, **kw)

    out = _check_outcome(run)
    if isinstance(out, ValidatedData):
        _check_valid(out, kw.get("min_rows", 10))
    return out


@FUZZ
@given(data=st.binary(max_size=2000), filename=_filenames)
def test_random_bytes(data, filename):
    _load_and_validate(data, filename)


@FUZZ
@given(
    names=st.lists(_names, min_size=1, max_size=6),
    n_rows=st.integers(min_value=0, max_value=25),
    cells=st.lists(_cells, min_size=1, max_size=200),
    delim=_delims,
    quoted=st.booleans(),
    filename=_filenames,
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1"]),
    drops=st.tuples(st.booleans(), st.booleans()),
)
def test_random_delimited_text(names, n_rows, cells, delim, quoted, filename, encoding, drops):
    rows = [names] + [[cells[(i * len(names) + j) % len(cells)] for j in range(len(names))]
                      for i in range(n_rows)]
    buf = io.StringIO()
    if quoted:
        csv.writer(buf, delimiter=delim, lineterminator="\n").writerows(rows)
    else:  # raw join: stray quotes and delimiters inside cells make ragged, malformed files
        buf.write("\n".join(delim.join(r) for r in rows))
    data = buf.getvalue().encode(encoding, errors="replace")
    _load_and_validate(data, filename, drop_non_numeric=drops[0], drop_nonfinite_rows=drops[1])


@FUZZ
@given(
    n=st.integers(min_value=0, max_value=30),
    d=st.integers(min_value=0, max_value=8),
    scale=st.sampled_from([1e-200, 1e-170, 1.0, 1e150, 1e160, 1e300]),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    n_bad=st.integers(min_value=0, max_value=10),
    names=st.lists(_names, min_size=8, max_size=8),
    collinear=st.booleans(),
    drops=st.tuples(st.booleans(), st.booleans()),
    via=st.sampled_from(["frame", "csv", "parquet"]),
)
def test_random_tables_with_nan_inf(n, d, scale, seed, n_bad, names, collinear, drops, via):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    if collinear and d >= 3:
        X[:, 2] = X[:, 0] - 0.5 * X[:, 1]
    if n and d:
        for _ in range(n_bad):  # random NaN / Inf placement
            X[rng.integers(n), rng.integers(d)] = rng.choice([np.nan, np.inf, -np.inf])
    df = pd.DataFrame(X, columns=names[:d])
    kw = dict(drop_non_numeric=drops[0], drop_nonfinite_rows=drops[1])
    if via == "frame":
        out = _check_outcome(lambda: validate_data(df, **kw))
        if isinstance(out, ValidatedData):
            _check_valid(out)
            # rows with a NaN/Inf were dropped, the others kept exactly
            kept = np.isfinite(X).all(axis=1)
            np.testing.assert_array_equal(out.X.to_numpy(), X[kept])
    elif via == "csv":
        _load_and_validate(df.to_csv(index=False).encode(), "x.csv", **kw)
    else:
        buf = io.BytesIO()
        try:
            df.to_parquet(buf, index=False)
        except (ValueError, TypeError):  # pyarrow refuses some names (e.g. duplicates); not our code
            return
        _load_and_validate(buf.getvalue(), "x.parquet", **kw)
