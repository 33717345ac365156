"""How far does the paper-faithful solver move under a 1e-12 perturbation of its input?

Usage::

    .venv/bin/python -m benchmarks.research.bench_sensitivity [--settings EV,NV] [--sizes 20,50]
        [--seeds 10] [--n-jobs 2] [--early-scale 10 | --early-scale 1,10,10]
        [--inverse-every 3] [--out rows.json]

Issue 4 judges the fast solver by comparing it, case by case, with the faithful one
(``CoLiDE(solver="adam")``): mean SHD per setting within max(1, 3%) and the final objective at
most 1e-3 (relative) higher. This script measures what that comparison can resolve. For each
simulated ER4 problem (the settings and seeds of ``bench_solver.py``) it fits, from the
covariance ``cov`` of ``X`` (shape ``(n_samples, n_nodes)``):

* ``faithful``: ``CoLiDE(variant, solver="adam").fit_from_stats(cov, n)``;
* ``faithful, perturbed``: the same on ``cov * (1 + 1e-12 E)``, ``E`` a symmetric standard
  normal matrix (a relative change far below the sampling error of ``cov``, about the size of
  rounding differences between two BLAS builds);
* ``fast``: ``CoLiDE(variant, solver="fast")`` on the unperturbed ``cov``;
* with ``--early-scale C``, also ``early``: the fast solver with its first three stages at step
  scale ``C`` whatever the conditioning (its default falls back to the faithful step, scale 1,
  on ill-conditioned covariances) and its default last stage: the experiment behind that
  fall-back. ``--early-scale C1,C2,C3`` gives each of the first three stages its own scale
  (e.g. ``1,10,10``: is only the first stage, where the basin is chosen from W = 0, fragile?);
* with ``--inverse-every K``, also ``inverse every K``: the fast solver with ``inverse_every=K``
  on every covariance (until 2026-11-24 the default took the inverse at every step where
  ``cond(cov) > 1e6``; since then it is 3, and from stop 17 on 10 where the step scale is 1).

and prints, per setting and size, the mean SHD of the three, and for the perturbed and the fast
fit the number of problems whose SHD differs from the faithful one and whose final objective is
more than 1e-3 (relative) higher. Where the faithful solver does not agree with itself under
the perturbation, a per-case difference between the two solvers is not evidence against either:
the central path of these non-convex problems branches, and which branch Adam follows is set by
rounding. Only distributions over many seeds compare them.

No timing is reported (``bench_solver.py`` does that), so ``--n-jobs`` may use every core.
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
from colide_core import CoLiDE, ConvergenceWarning, evaluate  # noqa: E402
from colide_core.solver import _fast  # noqa: E402
from colide_core.graph._dag import threshold_to_dag  # noqa: E402
from colide_core._validation import data_covariance  # noqa: E402

#: Relative size of the perturbation of ``cov``.
EPS = 1e-12


def perturb(cov, seed, eps=EPS):
    """Relative symmetric perturbation of a covariance.

    Parameters
    ----------
    cov : ndarray of shape (n_nodes, n_nodes)
        Symmetric covariance (not modified).
    seed : int
        Seed of ``np.random.default_rng`` for ``E``.
    eps : float, default=1e-12
        Relative size.

    Returns
    -------
    ndarray of shape (n_nodes, n_nodes)
        ``cov * (1 + eps * E)`` with ``E = (G + G.T) / 2``, ``G`` standard normal: still symmetric.
    """
    E = np.random.default_rng(seed).normal(size=cov.shape)
    return cov * (1.0 + eps * (E + E.T) / 2.0)


def fit_into(row, name, variant, solver, cov, n, B_true):
    """Fit ``CoLiDE(variant, solver=solver)`` from ``(cov, n)`` and store its figures in ``row``.

    Parameters
    ----------
    row : dict
        Gets ``shd_<name>`` (the thresholded graph against ``B_true``, a reversal costing 1),
        ``obj_<name>`` (final objective, eq. 4 / eq. 6 at the last ``mu, s``) and ``it_<name>``.
    name : str
        Suffix of the keys.
    variant : {"ev", "nv"}
    solver : {"adam", "fast"}
    cov : ndarray of shape (n_nodes, n_nodes)
        Covariance of centred ``X`` of shape ``(n_samples, n_nodes)``.
    n : int
        Number of samples.
    B_true : ndarray of shape (n_nodes, n_nodes)
        True adjacency.
    """
    est = CoLiDE(variant, solver=solver).fit_from_stats(cov, n)
    row[f"shd_{name}"] = int(evaluate(B_true, est.adjacency_)["shd"])
    row[f"obj_{name}"] = float(est.result_.objective)
    row[f"it_{name}"] = int(est.n_iter_)


def one_problem(setting, d, seed, early_scale=None, inverse_every=None):
    """Fit the faithful, perturbed-faithful and fast solvers on one simulated ER4 problem.

    Parameters
    ----------
    setting : {"EV", "NV"}
        Simulation setting of ``bench_solver.SETTINGS`` (and the CoLiDE variant it is fitted with).
    d : int
        Number of nodes.
    seed : int
        Graph, weight and noise seed.
    early_scale : float or tuple of 1 or 3 floats, optional
        Also fit ``early``: the fast solver with step scale ``early_scale`` in the first three
        stages (one scale for all three, or one each) and its default last-stage scale.
    inverse_every : int, optional
        Also fit ``inv``: the fast solver with ``inverse_every`` fixed at this value (its default,
        ``"auto"``, is 10 where the step scale is 1 and 3 elsewhere).

    Returns
    -------
    dict
        ``setting, d, seed`` and, for each of ``faithful, perturbed, fast`` (and ``early``,
        ``inv``), ``shd_*`` (SHD of the thresholded graph against the truth, a reversal costing
        1), ``obj_*`` (final objective, eq. 4 / eq. 6 at the last ``mu, s``) and ``it_*``
        (iterations).
    """
    X, B = simulate(setting, d, seed)
    cov, n, _ = data_covariance(X)
    variant = SETTINGS[setting]["variant"]
    row = dict(setting=setting, d=d, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for name, solver, C in (("faithful", "adam", cov), ("perturbed", "adam", perturb(cov, seed)),
                                ("fast", "fast", cov)):
            fit_into(row, name, variant, solver, C, n, B)
        extra = {}
        if early_scale is not None:
            default = _fast._default_scales(_fast._conditioning_factor(cov), variant, 3e-4, 4)
            early = tuple(np.broadcast_to(np.asarray(early_scale, dtype=float), (3,)))
            extra["early"] = dict(step_scale=early + default[3:])
        if inverse_every is not None:
            extra["inv"] = dict(inverse_every=int(inverse_every))
        for name, kw in extra.items():
            res = _fast.fast_solve(cov, variant=variant, **kw)
            row[f"shd_{name}"] = int(evaluate(B, threshold_to_dag(res.W, 0.3))["shd"])
            row[f"obj_{name}"] = float(res.objective)
            row[f"it_{name}"] = int(res.n_iter)
    return row


#: Column labels of the optional extra fits of :func:`one_problem`.
EXTRA_LABELS = {"early": "early", "inv": "inverse every K"}


def summarise(rows):
    """Markdown table: per (setting, d), mean SHD and disagreement counts (and, for the optional
    ``early`` / ``inv`` fits, their mean SHD, disagreement counts and mean iterations)."""
    extras = [name for name in EXTRA_LABELS if f"shd_{name}" in rows[0]]
    head = ("| setting | d | problems | mean SHD faithful | mean SHD faithful, perturbed | mean SHD fast "
            "| perturbed: SHD differs / obj > +1e-3 | fast: SHD differs / obj > +1e-3 |")
    for name in extras:
        head += f" mean SHD {EXTRA_LABELS[name]} | {EXTRA_LABELS[name]}: SHD differs / obj > +1e-3 |"
    if extras:
        head += " mean iterations faithful / fast / " + " / ".join(EXTRA_LABELS[x] for x in extras) + " |"
    lines = [head, "|---|---|---|---|---|---|---|---|" + "---|---|" * len(extras) + ("---|" if extras else "")]
    groups = {}
    for r in rows:
        groups.setdefault((r["setting"], r["d"]), []).append(r)
    for (setting, d), rs in sorted(groups.items()):
        def count(name):
            differs = sum(r[f"shd_{name}"] != r["shd_faithful"] for r in rs)
            higher = sum((r[f"obj_{name}"] - r["obj_faithful"]) > 1e-3 * abs(r["obj_faithful"]) for r in rs)
            return f"{differs} / {higher}"
        line = (
            f"| {setting} | {d} | {len(rs)} | {np.mean([r['shd_faithful'] for r in rs]):.1f} | "
            f"{np.mean([r['shd_perturbed'] for r in rs]):.1f} | {np.mean([r['shd_fast'] for r in rs]):.1f} | "
            f"{count('perturbed')} | {count('fast')} |"
        )
        for name in extras:
            line += f" {np.mean([r[f'shd_{name}'] for r in rs]):.1f} | {count(name)} |"
        if extras:
            line += " " + " / ".join(f"{np.mean([r[f'it_{k}'] for r in rs]):.0f}"
                                     for k in ("faithful", "fast", *extras)) + " |"
        lines.append(line)
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settings", default="EV,NV", help="comma-separated settings (default EV,NV)")
    ap.add_argument("--sizes", default="20,50", help="comma-separated d (default 20,50)")
    ap.add_argument("--seeds", type=int, default=10, help="problems per size (default 10)")
    ap.add_argument("--n-jobs", type=int, default=2, help="parallel fits (joblib; default 2)")
    ap.add_argument("--early-scale", default=None, metavar="C",
                    help="also fit the fast solver with its first three stages at step scale C (>= 1), "
                         "or at C1,C2,C3, one scale per stage")
    ap.add_argument("--inverse-every", type=int, default=None, metavar="K",
                    help="also fit the fast solver with inverse_every=K (>= 1) whatever the conditioning")
    ap.add_argument("--out", default=None, help="write all rows as JSON here")
    args = ap.parse_args(argv)
    early = None
    if args.early_scale is not None:
        try:
            early = tuple(float(c) for c in args.early_scale.split(","))
        except ValueError:
            ap.error(f"--early-scale must be C or C1,C2,C3, got {args.early_scale!r}")
        if len(early) not in (1, 3) or not all(c >= 1 for c in early):
            ap.error("--early-scale must be one scale >= 1 or three, comma-separated")
    if args.inverse_every is not None and args.inverse_every < 1:
        ap.error("--inverse-every must be >= 1")
    settings = [s.strip() for s in args.settings.split(",")]
    if not set(settings) <= set(SETTINGS):
        ap.error(f"--settings must be among {sorted(SETTINGS)}, got {args.settings!r}")
    sizes = [int(x) for x in args.sizes.split(",")]
    if args.seeds < 1 or any(d < 2 for d in sizes):
        ap.error("--seeds must be >= 1 and every size >= 2")
    jobs = [(s, d, SEED0 + k) for s in settings for d in sizes for k in range(args.seeds)]
    jobs.sort(key=lambda j: -j[1])  # largest first: better load balance
    rows = Parallel(n_jobs=args.n_jobs)(delayed(one_problem)(*j, early, args.inverse_every) for j in jobs)
    print(f"# bench_sensitivity: faithful solver under a {EPS:g} relative perturbation of cov, "
          f"and the fast solver; ER4, n = 1000, seeds {SEED0}..{SEED0 + args.seeds - 1}")
    print(summarise(rows))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
