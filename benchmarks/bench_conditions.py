"""Conditions at the limit (issue 42, Medium 4): what the statistics of K conditions cost.

``defaults.MAX_CONDITIONS`` (1,000) and ``K * n_nodes**2 <= defaults.MAX_CELLS`` (5e7) admit
1,000 conditions at d = 200, which a 3,000-row file reaches. For each size this measures, each in
a fresh process (so the peak resident set size is the measurement's own):

* **stats**: ``ConditionStats.from_data`` and ``node_covariances()`` (the statistics every fit
  with conditions builds first): wall time and the process's peak RSS;
* **stop**: ``CoLiDE("nv").fit(X, conditions, targets, callback=...)`` whose callback asks to
  stop at its first call: the time until ``fit`` returns (how long Stop takes to be heard) and
  the peak RSS;
* **first checkpoint**: the time until the callback is first called.

The data: K conditions of ``--rows`` rows each (3 by default: 3,000 rows at K = 1,000) over d
Gaussian columns; condition c > 0 targets node ``c % d`` (so with K = 1,000 and d = 200 every
node is targeted in 5 conditions and there are 200 target patterns). With ``--baseline REV`` the
same measurements run on the library as it was at git revision ``REV`` (``git archive``), side by
side in one table.

Usage::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_conditions.py [--baseline REV]
        [--sizes 1000x200,100x200,51x200] [--rows 3] [--out PATH]

Prints a paste-ready markdown table (and writes it to ``--out`` when given).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, resource, sys, time, warnings
import numpy as np
K, d, rows, what = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = np.random.default_rng(0)
X = rng.standard_normal((K * rows, d))
conditions = np.repeat([f"c{k}" for k in range(K)], rows)
targets = {f"c{k}": [k % d] for k in range(1, K)}
import colide_core
from colide_core import CoLiDE
from colide_core.data.conditions import ConditionStats
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out = {"rss_before_mb": rss0}
t0 = time.perf_counter()
if what == "stats":
    stats = ConditionStats.from_data(X, conditions, targets)
    node = stats.node_covariances()
    out["groups"] = int(node.covs.shape[0])
    out["seconds"] = time.perf_counter() - t0
else:
    first = []

    def stop(stage, iteration, objective):
        first.append(time.perf_counter() - t0)
        return True

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = CoLiDE("nv").fit(X, conditions, targets, callback=stop)
    out["seconds"] = time.perf_counter() - t0
    out["first_callback"] = first[0] if first else None
    out["stopped"] = bool(m.stopped_)
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def measure(src, K, d, rows, what):
    """Run one measurement in a fresh interpreter with ``src`` first on ``sys.path``."""
    env = {**os.environ, "PYTHONPATH": str(src), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(K), str(d), str(rows), what], env=env,
                          capture_output=True, text=True, cwd=tempfile.gettempdir())
    if proc.returncode != 0:
        raise RuntimeError(f"measurement failed ({src}, {K}x{d}, {what}):\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def checkout(rev, into):
    """``git archive rev`` unpacked into ``into``; returns the path."""
    archive = Path(into) / "src.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), rev], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(Path(into) / "src", filter="data")
    return Path(into) / "src"


def _rev(rev="HEAD"):
    """The short hash of ``rev`` in this repository ("?" outside git)."""
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", default=None, metavar="REV", help="also measure the library at this git revision")
    ap.add_argument("--sizes", default="1000x200,100x200,51x200", help="KxD pairs, comma-separated")
    ap.add_argument("--rows", type=int, default=3, help="rows per condition")
    ap.add_argument("--out", default=None, help="also write the table to this file")
    args = ap.parse_args(argv)
    sizes = [tuple(int(x) for x in s.split("x")) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        sources = [(f"this tree (on {_rev()})", ROOT)]
        if args.baseline:
            sources.insert(0, (f"{args.baseline} ({_rev(args.baseline)})", checkout(args.baseline, tmp)))
        lines = [
            f"Conditions at the limit, {platform.node()} ({os.cpu_count()} cores), commit {_rev()}, "
            f"{args.rows} rows per condition, OPENBLAS_NUM_THREADS=1, one fresh process per cell. "
            "RSS: the process's peak (the interpreter with numpy, scipy and the library is about "
            "the 'before' column).",
            "",
            "| code | K x d | target patterns | RSS before (MB) | stats: time (s) | stats: peak RSS (MB) "
            "| fit stopped at once: time (s) | its first callback (s) | its peak RSS (MB) |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for K, d in sizes:
            for name, src in sources:
                s = measure(src, K, d, args.rows, "stats")
                f = measure(src, K, d, args.rows, "fit")
                first = "-" if f["first_callback"] is None else f"{f['first_callback']:.2f}"
                lines.append(f"| {name} | {K} x {d} | {s['groups']} | {s['rss_before_mb']:.0f} | {s['seconds']:.2f} "
                             f"| {s['peak_rss_mb']:.0f} | {f['seconds']:.2f} | {first} | {f['peak_rss_mb']:.0f} |")
                print(lines[-1], file=sys.stderr, flush=True)
    return emit(lines, args.out)


def emit(lines, out=None):
    """Print the table's ``lines`` (and write them to ``out`` when given); return the text."""
    table = "\n".join(lines)
    print(table)
    if out:
        Path(out).write_text(table + "\n")
    return table


if __name__ == "__main__":
    main()
