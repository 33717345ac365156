"""Worst parse times and memory of hostile uploads, for the 50 MB upload limit.

Usage::

    .venv/bin/python benchmarks/bench_parse.py [--mb 50] [--cases name,name]

Builds each input in memory (never on disk), then reads it in a fresh child process with
``colide_core.data.io.read_table`` followed by ``validate_data`` (what the Data page does for an
upload) and reports the wall time, the outcome (the error kind, or the shape read) and the peak
resident memory above the child's baseline (``VmHWM - VmRSS`` before reading, from /proc).

The inputs are the worst cases constructed against each parsing step:

* ``sniff_issue``: the issue's line (``"a"`` then ``;"`` repeated), scaled to the limit;
* ``quotes``: one line of ``"`` only (an unclosed quoted field);
* ``numeric_tiny``: ``0,1\\n`` repeated: the most rows per byte (12.5 M rows x 2 columns);
* ``numeric_wide``: 10 000 columns of short numbers (the column limit), as many rows as fit;
* ``floats_long``: 17-digit floats, 200 columns (the node limit);
* ``decimal_comma``: ``;``-separated decimal commas (parsed twice: ``.`` then ``,``);
* ``text_unique``: a numeric column next to a column of unique strings (object creation);
* ``one_line_fields``: a single header line of 25 M one-character fields;
* ``ragged_late``: 50 MB of good rows and one extra field in the last row;
* ``parquet_dict_bomb``: the issue's 4 kB Parquet file (4 000 x 1 MB strings by dictionary);
* ``parquet_max_cells``: a Parquet file declaring exactly the cell limit (zstd zeros + noise).

Times are for one run on the machine at hand: compare them with each other, not across machines.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, sys, time
import numpy as np, pandas, pyarrow, pyarrow.parquet
from colide_core.data.io import DataValidationError, read_table, validate_data, INTERACTIVE_MAX_NODES

def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

data = sys.stdin.buffer.read()
name = sys.argv[1]
base = status("VmRSS")
t0 = time.perf_counter()
try:
    df = read_table(data, name)
    t_read = time.perf_counter() - t0
    try:
        v = validate_data(df, max_nodes=INTERACTIVE_MAX_NODES, drop_non_numeric=True,
                          drop_nonfinite_rows=True)
        outcome = f"ok {v.n_samples}x{v.n_nodes}"
    except DataValidationError as exc:
        outcome = f"read {df.shape[0]}x{df.shape[1]}, then {exc.kind}"
except DataValidationError as exc:
    t_read = time.perf_counter() - t0
    outcome = exc.kind
total = time.perf_counter() - t0
print(json.dumps({"read_s": t_read, "total_s": total, "outcome": outcome,
                  "peak_mb": (status("VmHWM") - base) / 1e6}))
"""


def make_cases(limit: int) -> dict:
    """name -> (file name, bytes builder). Each builder returns at most ``limit`` bytes."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    def fill(unit: bytes, head: bytes = b"") -> bytes:
        return head + unit * ((limit - len(head)) // len(unit))

    def numeric_wide():
        cols = 10_000
        head = (",".join(f"c{j}" for j in range(cols)) + "\n").encode()
        rng = np.random.default_rng(0)
        row_len = cols * 2
        rows = (limit - len(head)) // row_len
        digits = rng.integers(0, 10, size=(rows, cols)).astype("U1")
        body = "\n".join(",".join(r) for r in digits) + "\n"
        return head + body.encode()

    def floats_long():
        d = 200
        rng = np.random.default_rng(0)
        head = (",".join(f"x{j}" for j in range(d)) + "\n").encode()
        line_len = d * 21
        rows = (limit - len(head)) // line_len
        X = rng.normal(size=(rows, d))
        buf = io.StringIO()
        np.savetxt(buf, X, delimiter=",", fmt="%.17g")
        return head + buf.getvalue().encode()[: limit - len(head)].rsplit(b"\n", 1)[0] + b"\n"

    def decimal_comma():
        rng = np.random.default_rng(0)
        rows = limit // 40
        X = rng.normal(size=(rows, 3))
        buf = io.StringIO()
        np.savetxt(buf, X, delimiter=";", fmt="%.8f")
        text = "a;b;c\n" + buf.getvalue().replace(".", ",")
        return text.encode()[:limit].rsplit(b"\n", 1)[0] + b"\n"

    def text_unique():
        rows = limit // 16
        k = np.arange(rows)
        lines = "x,s\n" + "\n".join(f"{i % 97},u{i:09d}" for i in k) + "\n"
        return lines.encode()[:limit].rsplit(b"\n", 1)[0] + b"\n"

    def ragged_late():
        good = fill(b"1,2\n", b"a,b\n")[:-8]
        return good + b"1,2,3\n"

    def parquet_dict_bomb():
        rows = 4000
        col = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)),
                                             pa.array(["x" * 1_000_000]))
        k = np.arange(rows)
        t = pa.table({"a": col, "b": (k % 2).astype(float), "c": (k % 3).astype(float)})
        buf = io.BytesIO()
        pq.write_table(t, buf, compression="zstd")
        return buf.getvalue()

    def parquet_max_cells():
        cells = limit // 2
        d = 100
        rows = cells // d
        X = np.zeros((rows, d))
        X[::1000] = np.random.default_rng(0).normal(size=X[::1000].shape)
        buf = io.BytesIO()
        pd.DataFrame(X, columns=[f"v{j}" for j in range(d)]).to_parquet(buf, index=False,
                                                                          compression="zstd")
        return buf.getvalue()

    return {
        "sniff_issue": ("x.csv", lambda: fill(b';"', b'"a"')),
        "quotes": ("x.csv", lambda: fill(b'"')),
        "numeric_tiny": ("x.csv", lambda: fill(b"0,1\n", b"a,b\n")),
        "numeric_wide": ("x.csv", numeric_wide),
        "floats_long": ("x.csv", floats_long),
        "decimal_comma": ("x.csv", decimal_comma),
        "text_unique": ("x.csv", text_unique),
        "one_line_fields": ("x.csv", lambda: fill(b"a,")),
        "ragged_late": ("x.csv", ragged_late),
        "parquet_dict_bomb": ("x.parquet", parquet_dict_bomb),
        "parquet_max_cells": ("x.parquet", parquet_max_cells),
    }


def run_case(name: str, filename: str, data: bytes) -> dict:
    """Read ``data`` in a fresh child process; return its measurements."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", _CHILD, filename], input=data, capture_output=True,
                          timeout=900, env=env, cwd=ROOT)
    if proc.returncode != 0:
        return {"read_s": float("nan"), "total_s": float("nan"), "peak_mb": float("nan"),
                "outcome": "CRASH " + proc.stderr.decode(errors="replace")[-300:]}
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=50.0, help="upload limit in MB (default 50)")
    parser.add_argument("--cases", default="", help="comma-separated subset of the cases")
    args = parser.parse_args(argv)
    limit = int(args.mb * 1_000_000)
    cases = make_cases(limit)
    wanted = [c for c in args.cases.split(",") if c] or list(cases)
    print(f"| case | file size | read_table (s) | + validate_data (s) | peak RSS above baseline (MB) | outcome |")
    print("|---|---|---|---|---|---|")
    worst = (0.0, "")
    for name in wanted:
        filename, build = cases[name]
        t0 = time.perf_counter()
        data = build()
        build_s = time.perf_counter() - t0
        r = run_case(name, filename, data)
        print(f"| {name} | {len(data) / 1e6:.2f} MB | {r['read_s']:.2f} | {r['total_s']:.2f} | "
              f"{r['peak_mb']:.0f} | {r['outcome']} |", flush=True)
        if r["total_s"] == r["total_s"] and r["total_s"] > worst[0]:
            worst = (r["total_s"], name)
        del data, build_s
    print(f"\nworst: {worst[1]} in {worst[0]:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
