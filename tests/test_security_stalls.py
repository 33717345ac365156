"""Issue 22, class 2: CPU stalls that hold the GIL.

The work of every parsing step is bounded by construction, not by a clock: the delimiter guess
reads a bounded sample with the C csv tokenizer only (csv.Sniffer, whose regexes are quadratic in
the line length, never sees user text), and the JSON depth check is a linear scan. The tests count
what each step is given; timings belong in benchmarks/bench_parse.py.
"""
import csv

import numpy as np
import pytest

import colide_core.data.readers as cio
import colide_core._json as cjson
from colide_core._json import read_json
from colide_core.data.io import DataValidationError, read_table

# The issue's example: 60 kB on one line; csv.Sniffer took about 15 s on it, holding the GIL.
HOSTILE_60KB = b'"a"' + b';"' * 30_000

# Other lines built to make a backtracking sniffer or regex work quadratically.
HOSTILE = {
    "issue": HOSTILE_60KB,
    "open_quotes": b'"' * 60_000,
    "quote_delims": b'"' + b'a";"' * 15_000,
    "tab_quotes": b'\t"' * 30_000,
    "many_lines": (b'"a";"' * 20 + b"\n") * 3_000,
    "one_long_field": b"a," + b"x" * 1_000_000 + b"\n1,2\n",
}


@pytest.fixture
def sniff_budget(monkeypatch):
    """Forbid csv.Sniffer and count the characters the delimiter guess tokenizes."""
    def no_sniffer(self, *args, **kwargs):
        raise AssertionError("csv.Sniffer ran on user text")

    monkeypatch.setattr(csv.Sniffer, "sniff", no_sniffer)
    monkeypatch.setattr(csv.Sniffer, "has_header", no_sniffer)
    seen = []
    real = cio._split

    def counting(lines, *args, **kwargs):
        lines = list(lines)
        seen.append(sum(len(x) for x in lines))
        return real(lines, *args, **kwargs)

    monkeypatch.setattr(cio, "_split", counting)
    return seen


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_lines_never_reach_the_sniffer_and_the_guess_is_bounded(name, sniff_budget):
    data = HOSTILE[name]
    try:
        read_table(data, "x.csv")
    except DataValidationError:
        pass  # refused with a clear error is fine; what matters is the work spent
    # at most 2 dialects x 5 candidates, each over at most the 64 KiB sample
    assert len(sniff_budget) <= 10
    assert all(n <= cio._SNIFF_CHARS for n in sniff_budget), sniff_budget


def test_the_issue_example_is_refused_quickly_by_construction(sniff_budget):
    with pytest.raises(DataValidationError) as info:
        read_table(HOSTILE_60KB, "x.csv")
    # ";" is a quoted field: 15 001 fields, refused by the column limit before pandas builds a frame
    assert info.value.kind == "too_many_nodes" and "15001 columns" in info.value.message


def test_sample_is_bounded_in_lines_and_characters():
    text = ("a,b\n" + "1,2\n" * 100_000)
    lines = cio._sample_lines(text)
    assert len(lines) == 50 and sum(map(len, lines)) < cio._SNIFF_CHARS
    long_line = "x" * (10 * cio._SNIFF_CHARS)
    assert sum(map(len, cio._sample_lines(long_line))) <= cio._SNIFF_CHARS


@pytest.mark.parametrize("sep", [",", ";", "\t", "|", " "])
def test_honest_delimiters_still_found_without_the_sniffer(sep, sniff_budget):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3))
    names = ['"p q"', "b", "c"] if sep == " " else ["p q", "b", "c"]
    text = sep.join(names) + "\n" + "\n".join(sep.join(f"{v:.5f}" for v in row) for row in X) + "\n"
    df = read_table(text.encode(), "x.txt")
    assert list(df.columns) == ["p q", "b", "c"]
    np.testing.assert_allclose(df.to_numpy(dtype=float), X, atol=1e-5)


def test_quoted_fields_holding_other_delimiters():
    text = '"x,1";"x,2"\n1,5;2,5\n3,5;4,25\n'.encode()  # ';' with decimal commas and quoted ','
    df = read_table(text, "x.csv")
    assert list(df.columns) == ["x,1", "x,2"] and df["x,2"].tolist() == [2.5, 4.25]


def test_json_depth_scan_is_linear_on_escape_heavy_text(monkeypatch):
    # The depth scan must not run a backtracking regex over strings of escaped quotes: it removes
    # escapes with str.replace first, so the string regex sees no backslash at all.
    seen = []
    real = cjson._JSON_STRING_RE

    class Spy:
        def sub(self, repl, text):
            seen.append(text)
            return real.sub(repl, text)

    monkeypatch.setattr(cjson, "_JSON_STRING_RE", Spy())
    doc = '["' + '\\"' * 200_000 + '"' + ", [" * 100 + "]" * 100 + "]"
    with pytest.raises(DataValidationError) as info:
        read_json(doc)
    assert info.value.kind == "too_deep" and "101 deep" in info.value.message
    assert len(seen) == 1 and "\\" not in seen[0]
