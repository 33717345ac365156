"""Issue 22, class 7: tracebacks in the UI. Every user file goes through one loader layer.

Data tables go through ``colide_core.data.io.read_table`` (only DataValidationError escapes), JSON
documents through ``colide_core._json.read_json`` (size and nesting bounded before parsing), which
``colide_core.run.manifest.load_manifest`` (only ManifestError escapes) and
``PriorKnowledge.from_json`` (only ValueError escapes) use. The pages show those messages, never a
traceback with server paths.
"""
import io
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import colide_core.data.io as cio
from colide_core._json import _json_depth, read_json
from colide_core.graph.constraints import PriorKnowledge
from colide_core.data.io import DataValidationError, read_table
from colide_core.run.manifest import ManifestError, load_manifest

DEEP = "[" * 100_000 + "]" * 100_000  # RecursionError in json.loads


def _deep_object(depth):
    return '{"a": ' * depth + "1" + "}" * depth


# ----------------------------------------------------------------------------------------------
# JSON documents: constraints and manifests
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("doc", [DEEP, '{"forbidden": ' + DEEP + "}", _deep_object(50_000)])
def test_deep_constraints_json_is_a_value_error_not_a_recursion_error(doc):
    with pytest.raises(ValueError) as info:
        PriorKnowledge.from_json(doc)
    assert type(info.value) is ValueError
    assert "deep" in str(info.value) and "at most 64 levels" in str(info.value)


@pytest.mark.parametrize("doc", [DEEP, '{"schema": "colide-manifest/1", "results": ' + DEEP + "}",
                                 _deep_object(50_000)])
def test_deep_manifest_is_a_manifest_error(doc):
    with pytest.raises(ManifestError) as info:
        load_manifest(doc.encode())
    assert "deep" in str(info.value)


def _manifest_doc(**results):
    doc = {"schema": "colide-manifest/1", "estimator": "CoLiDE", "params": {},
           "data": {"kind": "data", "sha256": "0" * 64, "n_samples": 10, "n_nodes": 2},
           "results": {"W": [[0, 1], [0, 0]], "adjacency": [[0, 1], [0, 0]]}}
    doc["results"].update(results)
    return doc


@pytest.mark.parametrize("text", [
    '{"schema": "colide-manifest/1", "n": ' + "1" * 5000 + "}",     # int beyond 4300 digits
    json.dumps(_manifest_doc(sigma=["a", "b"])),                       # strings where numbers go
    json.dumps(_manifest_doc(sigma=[[1, 2], [3]])),                    # ragged
    json.dumps(_manifest_doc(W=[[0, 1], [0, "x"]])),
    "\ufeff" + json.dumps(_manifest_doc(sigma={"a": 1})),
    b"\xff\xfe{\x00}\x00",                                            # not UTF-8
    "",
    "   ",
])
def test_malformed_manifests_are_manifest_errors(text):
    data = text if isinstance(text, bytes) else text.encode()
    with pytest.raises(ManifestError):
        load_manifest(data)


def test_manifest_size_is_bounded_before_parsing(tmp_path):
    text = json.dumps(_manifest_doc())
    assert load_manifest(text.encode()).W.shape == (2, 2)
    with pytest.raises(ManifestError, match="above the limit"):
        load_manifest(text.encode(), max_bytes=100)
    path = tmp_path / "m.json"
    path.write_text(text + " " * 1000)
    with pytest.raises(ManifestError, match="above the limit"):
        load_manifest(path, max_bytes=len(text) + 10)  # a path is read only up to the limit
    with pytest.raises(ManifestError, match="cannot read manifest"):
        load_manifest(tmp_path / "missing.json")


def test_constraints_errors_are_plain_value_errors():
    for text in ("", b"\xff", "[1, 2]", '{"forbidden": [[1, 2, 3]]}', '{"tiers": [[1.5]]}',
                 '{"forbidden": ' + "1" * 5000 + "}"):
        with pytest.raises(ValueError):
            PriorKnowledge.from_json(text)
    pk = PriorKnowledge.from_json('{"forbidden": [["a", "b"]], "tiers": [["a"], ["b"]]}')
    assert pk.forbidden == (("a", "b"),) and pk.tiers == (("a",), ("b",))


def test_read_json_limits_and_kinds():
    assert read_json(b'\xef\xbb\xbf{"a": [1, [2]]}') == {"a": [1, [2]]}
    assert read_json("[" * 64 + "]" * 64) is not None
    kinds = {
        "too_deep": "[" * 65 + "]" * 65,
        "too_large": "[" + "0," * 10 + "0]",
        "not_json": b"\x80abc",
        "empty_file": " \n ",
        "bad_type": 12,
    }
    for kind, doc in kinds.items():
        with pytest.raises(DataValidationError) as info:
            read_json(doc, max_bytes=20 if kind == "too_large" else 1000)
        assert info.value.kind == kind, (kind, info.value.message)
    # brackets inside strings and escaped quotes do not count
    assert read_json('["' + "[" * 500 + '\\"' + "{" * 500 + '"]') == ["[" * 500 + '"' + "{" * 500]
    assert _json_depth('["\\\\", [[1]]]', 0) == 3


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(
    st.binary(max_size=300),
    st.text(alphabet='[]{}"\\:,0123456789aeflnrstu -.Ee\n', max_size=300),
    st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
                 lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
                 max_leaves=30).map(lambda x: json.dumps(x)),
))
def test_any_input_gives_only_the_documented_errors(blob):
    for load, expected in ((read_json, DataValidationError), (load_manifest, ManifestError),
                           (PriorKnowledge.from_json, ValueError)):
        if load is load_manifest and isinstance(blob, str) and not blob.lstrip().startswith("{"):
            blob_ = blob.encode()  # a str not starting with "{" means a path to load_manifest
        else:
            blob_ = blob
        try:
            load(blob_)
        except expected:
            pass


# ----------------------------------------------------------------------------------------------
# data tables
# ----------------------------------------------------------------------------------------------
def test_deep_pandas_metadata_in_parquet_does_not_crash_the_reader():
    table = pa.table({"a": np.arange(12.0), "b": np.arange(12.0) ** 2})
    table = table.replace_schema_metadata({b"pandas": DEEP.encode()})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    df = read_table(buf.getvalue(), "x.parquet")  # on main: RecursionError
    assert list(df.columns) == ["a", "b"] and df["b"].tolist() == [float(i * i) for i in range(12)]


@pytest.mark.parametrize("exc", [RecursionError("deep"), MemoryError(), pa.ArrowException("arrow"),
                                 UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"), OverflowError("x")])
def test_any_parser_failure_becomes_a_data_validation_error(monkeypatch, exc):
    def boom(*args, **kwargs):
        raise exc

    monkeypatch.setattr(pd, "read_csv", boom)
    with pytest.raises(DataValidationError) as info:
        read_table(b"a,b\n1,2\n3,4\n", "x.csv")
    assert info.value.kind in ("not_tabular", "too_large")
    monkeypatch.setattr(pq.ParquetFile, "read", boom)
    buf = io.BytesIO()
    pq.write_table(pa.table({"a": np.arange(3.0)}), buf)
    with pytest.raises(DataValidationError):
        read_table(buf.getvalue(), "x.parquet")


def test_programming_errors_are_not_hidden(monkeypatch):
    def bug(*args, **kwargs):
        raise AttributeError("a bug, not a bad file")

    monkeypatch.setattr(pd, "read_csv", bug)
    with pytest.raises(AttributeError):
        read_table(b"a,b\n1,2\n3,4\n", "x.csv")


# ----------------------------------------------------------------------------------------------
# the pages
# ----------------------------------------------------------------------------------------------
def _shown(at):
    return [e.value for e in at.error]


def test_prior_knowledge_page_shows_a_message_for_a_deep_document(new_app):
    at = new_app(timeout=120).run()
    at.switch_page("pages/prior_knowledge.py").run()
    assert not at.exception, at.exception
    at.text_area(key="prior_json_text").input('{"forbidden": ' + "[" * 5000 + "]" * 5000 + "}").run()
    at.button(key="prior_load_text").click().run()
    assert not at.exception, at.exception  # on main: RecursionError with the server's paths
    errors = _shown(at)
    assert any("Could not load the constraints" in e and "deep" in e for e in errors), errors
    assert not any("Traceback" in e or ".py" in e for e in errors)


def test_learn_page_shows_a_message_for_a_deep_manifest(new_app):
    at = new_app(timeout=120).run()
    at.session_state["learn_tab"] = "Downloads"  # only the open tab is built (issue 41)
    at.switch_page("pages/learn.py").run()
    data = ('{"schema": "colide-manifest/1", "results": ' + "[" * 5000 + "]" * 5000 + "}").encode()
    at.file_uploader(key="learn_manifest_upload").set_value(("deep.json", data, "application/json")).run()
    assert not at.exception, at.exception
    errors = _shown(at)
    assert any("cannot be loaded" in e and "deep" in e for e in errors), errors
