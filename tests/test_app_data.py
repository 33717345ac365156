"""The Data page (issue 28, point 7): every problem of a file at once, each with its fix; the
same transform cannot be applied twice by accident, and Undo goes back one step."""
import numpy as np
import pandas as pd
import pytest

from colide_core.data.io import FIXABLE, data_problems

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _three_problem_csv():
    # 40 rows: a text column, one missing value in "b", and a constant column "c"
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "e"])
    df["c"] = 4.0
    df["label"] = [f"cell{i}" for i in range(40)]
    df.loc[5, "b"] = np.nan
    return df.to_csv(index=False).encode()


def test_data_problems_lists_every_fixable_problem_in_order():
    df = pd.read_csv(__import__("io").BytesIO(_three_problem_csv()))
    kinds = [p.kind for p in data_problems(df)]
    assert kinds == ["non_numeric", "nonfinite", "constant_column"]
    assert set(kinds) == set(FIXABLE)
    # fixes already chosen are not reported again; all three chosen: the table passes
    assert [p.kind for p in data_problems(df, drop_non_numeric=True)] == ["nonfinite", "constant_column"]
    assert data_problems(df, drop_non_numeric=True, drop_nonfinite_rows=True, drop_constant_columns=True) == []


def test_a_problem_no_drop_fixes_ends_the_list():
    df = pd.DataFrame({"a": np.arange(12.0), "b": np.arange(12.0), "t": ["x"] * 12})
    kinds = [p.kind for p in data_problems(df)]
    assert kinds == ["non_numeric", "duplicate_column"]  # identical columns: no checkbox fixes that


def test_upload_shows_all_problems_at_once_and_each_fix_works(new_app):
    at = new_app()
    at.run()
    at.file_uploader(key="data_upload").set_value(("panel.csv", _three_problem_csv(), "text/csv")).run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "3 problem(s)" in errors[0], errors
    for fix in ("Drop non-numeric columns", "Drop rows with missing / infinite values", "Drop constant columns"):
        assert fix in errors[0], errors[0]
    assert at.session_state["dataset"].source == "sachs"  # nothing was lost or half-loaded
    at.checkbox(key="data_drop_non_numeric").check().run()
    at.checkbox(key="data_drop_nonfinite_rows").check().run()
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "1 problem(s)" in errors[0] and "constant" in errors[0], errors
    at.checkbox(key="data_drop_constant").check().run()
    ds = at.session_state["dataset"]
    assert ds.source == "upload" and ds.node_names == ["a", "b", "e"] and ds.shape == (39, 3)
    assert ds.meta["upload"]["dropped_columns"] == ["label", "c"] and ds.meta["upload"]["dropped_rows"] == 1


def test_the_same_transform_twice_is_refused_and_undo_goes_back(new_app):
    at = new_app()
    at.run()
    raw_key = at.session_state["dataset"].key
    at.radio(key="data_xform_kind").set_value("asinh").run()
    at.button(key="data_xform_apply").click().run()
    once = at.session_state["dataset"]
    assert [s["kind"] for s in once.meta["transform"]] == ["asinh"]
    assert at.button(key="data_xform_apply").disabled  # asinh(asinh(x)) cannot happen by accident
    at.radio(key="data_xform_kind").set_value("standardize").run()
    assert not at.button(key="data_xform_apply").disabled  # another transform after it is allowed
    at.button(key="data_xform_apply").click().run()
    twice = at.session_state["dataset"]
    assert [s["kind"] for s in twice.meta["transform"]] == ["asinh", "standardize"]
    at.button(key="data_xform_undo").click().run()
    assert at.session_state["dataset"].key == once.key  # recomputed from the raw data: the same values
    at.button(key="data_xform_undo").click().run()
    assert at.session_state["dataset"].key == raw_key
    assert at.button(key="data_xform_undo").disabled
