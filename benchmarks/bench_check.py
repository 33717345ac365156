"""Time of the Check page's work on Sachs: every model check, and writing the one-file HTML report.

Usage::

    .venv/bin/python benchmarks/bench_check.py [--repeats 5]

Fits CoLiDE-EV and CoLiDE-NV on Sachs (fast solver, paper defaults, threshold 0.3), then times,
median of ``--repeats`` runs each:

* every check of :func:`colide_core.evaluation.checks.run_checks` on the NV graph, without and with the
  refits (standardised data and 3 random rescalings: 4 solves more), 100 random DAGs in the
  Markov check; targets (issue 24): under 2 s;
* :func:`colide_core.render.report.build_report` of both fits against the ground truth, with a λ path,
  plus writing it to disk; target: under 5 s.

It also prints what the checks say on Sachs (sortability, the EV-or-NV verdict, the Markov
check against random DAGs), for docs/checks.md. Prints a paste-ready markdown table.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import colide_core
from colide_core import checks
from colide_core.render import report
from colide_core.run.manifest import build_manifest


def _timed(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    from colide_core.solver._fast import warmup

    warmup()  # numba kernels loaded outside the timed parts
    X, B = colide_core.load_sachs()
    fits, models = [], {}
    for v in ("nv", "ev"):
        m = colide_core.CoLiDE(v).fit(X)
        models[v] = m
        fits.append(report.ReportFit(v.upper(), m.W_, m.adjacency_, m.sigma_, m.get_params(), build_manifest(m, X, B_true=B)))
    nv = models["nv"]
    rows = []
    t, base = _timed(lambda: checks.run_checks(X, nv.adjacency_, W=nv.W_, n_random=100, n_rescale=0), args.repeats)
    rows.append(("checks, no refits (sortability, residuals, Markov vs 100 DAGs, evidence)", t, 2.0))
    t, full = _timed(lambda: checks.run_checks(X, nv.adjacency_, W=nv.W_, estimator=colide_core.CoLiDE("nv"),
                                               n_random=100, n_rescale=3), args.repeats)
    rows.append(("checks with standardise-and-refit and 3 rescalings", t, 2.0))
    t_path, path = _timed(lambda: colide_core.lambda_path(X, variant="nv"), 1)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "report.html"

        def write():
            html = report.build_report(X, fits, dataset_name="Sachs", B_true=B, checks=full, path=path)
            report.write_report(target, html)
            return len(html)

        t, size = _timed(write, args.repeats)
    rows.append((f"report: build + write ({size / 1e6:.1f} MB, EV and NV, with a λ path)", t, 5.0))
    rows.append(("(λ path of the report, 9 λ warm-started; not part of the report time)", t_path, None))

    print("| step (Sachs, 853 x 11) | median s | target s |")
    print("|---|---:|---:|")
    for name, secs, target in rows:
        print(f"| {name} | {secs:.3f} | {'' if target is None else f'< {target:g}'} |")
    s, r, m = full.sortability, full.residuals, full.markov
    print()
    print(f"varsortability along the learned NV graph: {s.varsortability:.3f}; R2-sortability: {s.r2_sortability:.3f}")
    print(f"varsortability along the consensus graph: {colide_core.data.simulate.varsortability(X.to_numpy(), B.to_numpy()):.3f}; "
          f"R2-sortability: {checks.r2_sortability(X, B.to_numpy()):.3f}")
    print(f"EV or NV: {r.noise_model} (Brown-Forsythe p = {r.equal_var_p:.3g}, variance ratio {r.variance_ratio:.1f}); "
          f"Gaussian residuals at {int(r.table['normal'].sum())} of {len(r.table)} nodes")
    print(f"Markov: {m.n_tests} tests, {m.share_rejected:.1%} rejected; random DAGs median "
          f"{float(np.nanmedian(m.random_shares)):.1%}; share of random DAGs as good: "
          f"{m.share_random_as_good:.2f}")
    truth = checks.markov_check(X, B.to_numpy(), n_random=100, random_state=0)
    print(f"Markov, consensus graph: {truth.n_tests} tests, {truth.share_rejected:.1%} rejected; share of random "
          f"DAGs as good: {truth.share_random_as_good:.2f}")
    print(f"standardise and refit: {full.standardized.n_changed} edges change; rescalings: {full.scale.n_changed.tolist()}")


if __name__ == "__main__":
    main()
