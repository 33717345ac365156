"""Required edges and the acyclicity step (issue 42): does requiring an edge make the post-processing cut another?

On Sachs (853 baseline rows, raw), each of the 17 consensus edges is required in turn, for
CoLiDE-EV and CoLiDE-NV (34 fits, lambda1 = 0.05, threshold 0.3, the chosen solver). For each fit
the table records the edges ``threshold_to_dag`` removed to break a cycle
(``CoLiDE.removed_for_acyclicity_``) and the SHD against the 17-edge truth. With
``--baseline REV`` the same fits run on the library as it was at git revision ``REV`` (before
the solve counted required edges in ``h_ldet``), side by side.

Usage::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_required_edges.py [--baseline REV]
        [--solver auto|adam] [--out PATH]

Prints paste-ready markdown: a summary row per code and one row per case where either code cut an
edge or the two graphs differ.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

try:
    from benchmarks.bench_conditions import ROOT, _rev, checkout, emit
except ImportError:  # run as a script from benchmarks/
    from bench_conditions import ROOT, _rev, checkout, emit

_CHILD = r"""
import json, sys, warnings
import numpy as np
from colide_core import CoLiDE, load_sachs
from colide_core.evaluation._metrics import evaluate
warnings.simplefilter("ignore")
X, B = load_sachs()
names = list(X.columns)
out = []
for variant in ("ev", "nv"):
    for i, j in zip(*np.nonzero(B.to_numpy())):
        m = CoLiDE(variant, solver=sys.argv[1], required=[(names[i], names[j])]).fit(X)
        out.append({"case": f"{variant.upper()} {names[i]}->{names[j]}",
                    "removed": [[names[a], names[b], float(w)] for a, b, w in m.removed_for_acyclicity_],
                    "edges": [f"{names[a]}->{names[b]}" for a, b in zip(*np.nonzero(m.adjacency_))],
                    "w_required": float(m.W_[i, j]),
                    "shd": int(evaluate(B.to_numpy(), m.adjacency_ != 0)["shd"])})
print(json.dumps(out))
"""


def run(src, solver):
    env = {**os.environ, "PYTHONPATH": str(src), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", _CHILD, solver], env=env, capture_output=True, text=True,
                          cwd=tempfile.gettempdir())
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _cut(rec):
    return ", ".join(f"{a}->{b} ({w:+.2f})" for a, b, w in rec["removed"]) or "nothing"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", default=None, metavar="REV")
    ap.add_argument("--solver", default="auto", choices=("auto", "adam"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        if args.baseline:
            runs.append((f"{args.baseline} ({_rev(args.baseline)})", run(checkout(args.baseline, tmp), args.solver)))
        runs.append((f"this tree (on {_rev()})", run(ROOT, args.solver)))
    lines = [f"Sachs, 17 consensus edges required one at a time, EV and NV, solver={args.solver}, lambda1 = 0.05, "
             "threshold 0.3.", "",
             "| code | fits | fits where the acyclicity step cut an edge | mean SHD (17-edge truth) |",
             "|---|---|---|---|"]
    for name, recs in runs:
        cut = sum(bool(r["removed"]) for r in recs)
        lines.append(f"| {name} | {len(recs)} | {cut} | {sum(r['shd'] for r in recs) / len(recs):.2f} |")
    if len(runs) == 2:
        (_, old), (_, new) = runs
        lines += ["", "| case | before: cut | before: SHD | after: cut | after: SHD | edges lost / gained |",
                  "|---|---|---|---|---|---|"]
        for a, b in zip(old, new):
            if a["removed"] or b["removed"] or a["edges"] != b["edges"]:
                lost = sorted(set(a["edges"]) - set(b["edges"]))
                gained = sorted(set(b["edges"]) - set(a["edges"]))
                lines.append(f"| {a['case']} | {_cut(a)} | {a['shd']} | {_cut(b)} | {b['shd']} | "
                             f"{', '.join(lost) or '-'} / {', '.join(gained) or '-'} |")
        same = sum(a["edges"] == b["edges"] for a, b in zip(old, new))
        lines += ["", f"Graphs identical before and after: {same} of {len(old)}."]
    return emit(lines, args.out)


if __name__ == "__main__":
    main()
