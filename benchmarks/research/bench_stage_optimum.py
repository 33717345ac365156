"""Does the faithful schedule's early stopping matter on ill-conditioned CoLiDE-EV?

Usage::

    .venv/bin/python -m benchmarks.research.bench_stage_optimum [--settings EV] [--sizes 50]
        [--seeds 10] [--trap 20] [--n-jobs 2] [--budget 200000] [--out rows.json]

On simulated EV SEMs with d >= 50 (weights +-[0.5, 2]) ``cond(cov)`` reaches 1e7..1e9 and the
paper-faithful schedule (Algorithm 1, ``CoLiDE(solver="adam")``) spends the whole 20,000-step
budget of each of its first three stages: those stages end on the step count, not on their
convergence test. The fast solver therefore follows that path at the faithful step on such
covariances (``_fast._conditioning_factor``), which is why it is only 2-4x faster there.

The issue's trap (L-BFGS-B solving each stage to full convergence lands in worse optima on
small, well-conditioned ER2 graphs) suggests that the stage end matters. This script measures
whether it does here. For each simulated ER4 problem (the settings and seeds of
``bench_solver.py``; ``X`` of shape ``(n_samples, n_nodes)``, ``cov = X.T X / n`` of centred
``X``) it fits:

* ``faithful``: ``CoLiDE(variant, solver="adam")``, stages of (20k, 20k, 20k, 70k) steps;
* ``converged``: the same Adam path at the faithful step (``fast_solve`` with step scale 1),
  but every stage run until its objective changes by less than 1e-9 (relative) per checkpoint
  or ``--budget`` steps, i.e. each central-path stage solved to its optimum from the previous
  one's;
* ``fast``: the default ``CoLiDE(variant, solver="fast")``.

With ``--trap N`` it also fits the issue's trap problem (``bench_trap.py``: ER2, d = 10,
n = 2000, equal noise variances, seeds 0..N-1) with both variants.

It prints one row per problem and, per setting and size, the mean SHD of each (a reversed edge
costs 1) and how many ``converged`` fits have a different SHD from the faithful one, a final
objective (eq. 4 / eq. 6 at the last ``mu, s``) more than 1e-3 (relative) higher, or a lower one.
``converged`` costs 3-5x the faithful steps: this is a question about the fixed points a faster
stage solver may aim at, not a timing (``bench_solver.py`` times). ``--n-jobs`` may use every core.
"""
from __future__ import annotations

import argparse
import json
import os
import warnings
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from joblib import Parallel, delayed  # noqa: E402

from benchmarks.bench_solver import SEED0, SETTINGS, simulate  # noqa: E402
from benchmarks.research.bench_sensitivity import fit_into  # noqa: E402
from benchmarks.research.bench_trap import D as TRAP_D, problem as trap_problem  # noqa: E402
from colide_core import ConvergenceWarning, evaluate  # noqa: E402
from colide_core.solver import _fast  # noqa: E402
from colide_core.graph._dag import threshold_to_dag  # noqa: E402
from colide_core._validation import data_covariance  # noqa: E402

#: Relative objective change per checkpoint that ends a ``converged`` stage.
STAGE_TOL = 1e-9


def one_problem(setting, d, seed, budget=200_000):
    """Fit the faithful, stage-converged and fast solvers on one simulated problem.

    Parameters
    ----------
    setting : {"EV", "NV", "TRAP-EV", "TRAP-NV"}
        Simulation setting of ``bench_solver.SETTINGS`` (ER4, n = 1000) and the CoLiDE variant it
        is fitted with; ``TRAP-*``: ``bench_trap.py``'s ER2 problem (d = 10, n = 2000, equal noise
        variances) fitted with CoLiDE-EV or -NV.
    d : int
        Number of nodes (ignored for ``TRAP-*``).
    seed : int
        Graph, weight and noise seed.
    budget : int, default=200000
        Step budget of each ``converged`` stage.

    Returns
    -------
    dict
        ``setting, d, seed, cond`` (condition number of ``cov``) and, for each of ``faithful,
        converged, fast``, ``shd_*`` (thresholded at 0.3, against the truth), ``obj_*`` (final
        objective) and ``it_*`` (steps).
    """
    if setting.startswith("TRAP-"):
        (X, B), variant, d = trap_problem(seed), setting[5:].lower(), TRAP_D
    else:
        (X, B), variant = simulate(setting, d, seed), SETTINGS[setting]["variant"]
    cov, n, _ = data_covariance(X)
    row = dict(setting=setting, d=d, seed=seed, cond=float(np.linalg.cond(cov)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for name, solver in (("faithful", "adam"), ("fast", "fast")):
            fit_into(row, name, variant, solver, cov, n, B)
        res = _fast.fast_solve(cov, variant=variant, max_iter=(budget,) * 4, tol=STAGE_TOL,
                               step_scale=(1.0,) * 4)
        row["shd_converged"] = int(evaluate(B, threshold_to_dag(res.W, 0.3))["shd"])
        row["obj_converged"] = float(res.objective)
        row["it_converged"] = int(res.n_iter)
    return row


def summarise(rows):
    """Markdown table per (setting, d): mean SHD of the three fits and the per-case comparison."""
    print("\n| setting | d | problems | mean SHD faithful | mean SHD converged | mean SHD fast "
          "| converged: SHD differs / obj > +1e-3 / obj lower | mean steps faithful / converged / fast |")
    print("|---|---|---|---|---|---|---|---|")
    for key in sorted({(r["setting"], r["d"]) for r in rows}):
        rs = [r for r in rows if (r["setting"], r["d"]) == key]
        rel = [(r["obj_converged"] - r["obj_faithful"]) / abs(r["obj_faithful"]) for r in rs]
        differs = sum(r["shd_converged"] != r["shd_faithful"] for r in rs)
        worse = sum(x > 1e-3 for x in rel)
        lower = sum(x < 0 for x in rel)
        mean = {k: np.mean([r[f"shd_{k}"] for r in rs]) for k in ("faithful", "converged", "fast")}
        steps = {k: np.mean([r[f"it_{k}"] for r in rs]) for k in ("faithful", "converged", "fast")}
        print(f"| {key[0]} | {key[1]} | {len(rs)} | {mean['faithful']:.1f} | {mean['converged']:.1f} "
              f"| {mean['fast']:.1f} | {differs} / {worse} / {lower} "
              f"| {steps['faithful']:.0f} / {steps['converged']:.0f} / {steps['fast']:.0f} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settings", default="EV", help="comma-separated settings (default EV)")
    ap.add_argument("--sizes", default="50", help="comma-separated d (default 50)")
    ap.add_argument("--seeds", type=int, default=10, help="problems per size (default 10)")
    ap.add_argument("--n-jobs", type=int, default=2, help="parallel fits (joblib; default 2)")
    ap.add_argument("--trap", type=int, default=0, metavar="N",
                    help="also N seeds (0..N-1) of bench_trap.py's ER2 problem, EV and NV")
    ap.add_argument("--budget", type=int, default=200_000, help="steps per converged stage")
    ap.add_argument("--out", default=None, help="write all rows as JSON here")
    args = ap.parse_args(argv)
    jobs = [(st, int(d), SEED0 + k) for st in args.settings.split(",") for d in args.sizes.split(",")
            for k in range(args.seeds)]
    jobs += [(f"TRAP-{v}", TRAP_D, k) for v in ("EV", "NV") for k in range(args.trap)]
    rows = Parallel(n_jobs=args.n_jobs)(delayed(one_problem)(st, d, s, args.budget) for st, d, s in jobs)
    print("| setting | d | seed | cond(cov) | SHD faithful / converged / fast | obj faithful | obj converged "
          "| rel diff | obj fast |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        rel = (r["obj_converged"] - r["obj_faithful"]) / abs(r["obj_faithful"])
        print(f"| {r['setting']} | {r['d']} | {r['seed']} | {r['cond']:.1e} | {r['shd_faithful']} / "
              f"{r['shd_converged']} / {r['shd_fast']} | {r['obj_faithful']:.6g} | {r['obj_converged']:.6g} "
              f"| {rel:+.1e} | {r['obj_fast']:.6g} |")
    summarise(rows)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
