"""Issue 22, class 5: the node-name policy for hostile CSV headers.

One policy (colide_core._validation.check_node_names), applied by the loader
(io.validate_data -> check_column_names), by the library's DataFrame input (_validation.check_X, so
CoLiDE.fit) and by every exporter: names are NFC-normalised; control characters, zero-width and other
invisible format characters, line/paragraph separators, noncharacters and a trailing backslash are
refused with a clear error; names equal after normalisation are duplicates.
"""
import re

import numpy as np
import pandas as pd
import pytest

from colide_core._validation import NodeNameError, check_node_names, check_X
from colide_core.graph.export import export_graph
from colide_core.data.io import ERROR_KINDS, DataValidationError, check_column_names, read_table, validate_data

E_ACUTE_NFC = "\u00e9"  # é, one code point
E_ACUTE_NFD = "e\u0301"  # e + combining acute accent: the same text, decomposed


def _data(names, n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(names)))
    X[:, 1] += 0.8 * X[:, 0]
    return pd.DataFrame(X, columns=names)


def _csv(names):
    return _data(names).to_csv(index=False).encode("utf-8")


@pytest.mark.parametrize("bad, code", [
    ("a\x00b", "U+0000"),        # NUL
    ("a\x07b", "U+0007"),        # bell
    ("a\x1b[31mred", "U+001B"),  # terminal escape
    ("a\x7fb", "U+007F"),        # DEL
    ("a\x85b", "U+0085"),        # NEL (C1 control)
    ("ab\u200b", "U+200B"),      # zero-width space
    ("a\u200db", "U+200D"),      # zero-width joiner
    ("\ufeffa", "U+FEFF"),       # byte order mark inside a name
    ("a\u202eb", "U+202E"),      # right-to-left override (spoofs the displayed name)
    ("a\u00adb", "U+00AD"),      # soft hyphen
    ("a\u2028b", "U+2028"),      # line separator
    ("a\u2029b", "U+2029"),      # paragraph separator
    ("a\ufffeb", "U+FFFE"),      # noncharacter (invalid in XML)
])
def test_policy_refuses_control_and_invisible_characters(bad, code):
    with pytest.raises(NodeNameError, match=re.escape(code)) as info:
        check_node_names(["ok", bad])
    assert info.value.kind == "bad_column_name" and info.value.names == (bad,)
    assert "position 2" in str(info.value)
    assert repr(bad)[1:-1][:20] in str(info.value)  # shown with repr: the invisible character is visible


def test_loader_refuses_control_and_zero_width_names_with_a_clear_kind():
    # tab-separated file so that the names can hold commas; \x01 and a zero-width space in headers
    for bad in ["gene\x01", "ge\u200bne", "gene\u202e"]:
        df = _data(["x", bad])
        with pytest.raises(DataValidationError) as info:
            validate_data(df)
        assert info.value.kind == "bad_column_name" and info.value.columns == (bad,)
        assert "U+" in info.value.message and "invisible" in info.value.message
    assert "bad_column_name" in ERROR_KINDS
    # through the file reader too: a C1 control inside a quoted CSV header
    raw = 'x,"ge\x85ne"\n' + "\n".join(f"{i},{i * i % 7}" for i in range(20))
    with pytest.raises(DataValidationError) as info:
        validate_data(read_table(raw.encode("utf-8"), "x.csv"))
    assert info.value.kind == "bad_column_name"


def test_loader_normalises_to_nfc():
    v = validate_data(read_table(_csv(["caf" + E_ACUTE_NFD, "b"]), "x.csv"))
    assert v.node_names == ["caf" + E_ACUTE_NFC, "b"]
    assert len(v.node_names[0]) == 4


def test_names_equal_after_normalisation_are_duplicates():
    df = _data([E_ACUTE_NFC, E_ACUTE_NFD, "z"])
    with pytest.raises(DataValidationError) as info:
        validate_data(df)
    err = info.value
    assert err.kind == "duplicate_column_name" and err.columns == (E_ACUTE_NFC,)
    assert "normalisation" in err.message
    # the library's DataFrame input: one policy, same verdict
    with pytest.raises(ValueError, match="Duplicate column names.*normalisation"):
        check_X(df)
    with pytest.raises(ValueError, match="unique"):
        export_graph(np.zeros((2, 2)), [E_ACUTE_NFC, E_ACUTE_NFD], "graphml")


def test_library_dataframe_input_uses_the_same_policy():
    with pytest.raises(ValueError, match="U\\+200B"):
        check_X(_data(["a", "b\u200b"]))
    X, names = check_X(_data(["caf" + E_ACUTE_NFD, "b"]))
    assert names == ["caf" + E_ACUTE_NFC, "b"]
    from colide_core import CoLiDE

    with pytest.raises(ValueError, match="U\\+0000"):
        CoLiDE(max_iter=(5, 5, 5, 5)).fit(_data(["a\x00", "b"]))


def test_trailing_backslash_and_empty_names_are_refused():
    with pytest.raises(NodeNameError, match="backslash"):
        check_node_names(["a", "b\\"])
    with pytest.raises(NodeNameError, match="empty"):
        check_node_names(["a", ""])
    # a backslash elsewhere is kept
    assert check_node_names(["a\\b", "c"]) == ["a\\b", "c"]


def test_honest_and_hostile_but_visible_names_are_kept_verbatim():
    names = ["raf", "p 38", "PIP3", "gène", "日本", "😀", '"><img src=x>', "a:b", "=1+1", "-x", "1", "1.0", "01",
             "x\u00a0y"]
    assert check_node_names(names) == names
    df = _data(names)
    assert check_column_names(df) == names
    assert validate_data(df).node_names == names


def test_a_byte_order_mark_at_the_start_of_the_file_is_not_part_of_a_name():
    # Excel writes UTF-8 CSV with a BOM: honest input that must keep loading
    body = "\n".join(f"{i},{(i * i) % 7}" for i in range(20))
    v = validate_data(read_table(("\ufeffa,b\n" + body).encode("utf-8"), "x.csv"))
    assert v.node_names == ["a", "b"]
