"""Issue 4's trap, measured: small equal-variance ER2 problems where a stage-optimal solver goes wrong.

Usage::

    .venv/bin/python -m benchmarks.research.bench_trap [--seeds 20] [--n-jobs 1]

Issue 4 reports that L-BFGS-B, solving every stage of the central path to optimality, lands in
worse optima on small ER2 graphs (d = 10, n = 2000, Gaussian noise of variance 1, weights
+-[0.5, 2]): SHD 0-9 and sigma-hat 0.8-0.9, where the faithful schedule gets SHD 0-1 and
sigma-hat 1.00. This script fits exactly that setting, for ``--seeds`` graphs, with
``CoLiDE(variant, solver="adam")`` (the faithful schedule) and ``CoLiDE(variant, solver="fast")``
for both variants, from the data ``X`` of shape ``(n_samples, n_nodes)``, and prints per seed the
SHD of each (a reversal costs 1) and sigma-hat (CoLiDE-EV: the common sigma; CoLiDE-NV: the mean
of the per-node sigmas; the true value is 1), then the totals. Timing is not reported
(``bench_solver.py`` does that).
"""
from __future__ import annotations

import argparse
import os
import warnings

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from joblib import Parallel, delayed  # noqa: E402

from colide_core import CoLiDE, ConvergenceWarning, evaluate  # noqa: E402
from colide_core.data.simulate import simulate_dataset  # noqa: E402

D, N, DEGREE = 10, 2000, 2


def problem(seed):
    """The trap problem of ``seed``: ``(X, B_true)``, ``X`` of shape ``(N, D)``.

    Parameters
    ----------
    seed : int
        ``random_state`` of ``colide_core.data.simulate.simulate_dataset`` (EV: weights +-[0.5, 2],
        noise variance 1).

    Returns
    -------
    X : ndarray of shape (2000, 10)
        Samples of the ER2 linear-Gaussian SEM with noise variance 1.
    B_true : ndarray of shape (10, 10)
        Its binary adjacency, ``B_true[i, j] = 1`` meaning i -> j.
    """
    data = simulate_dataset(graph="er", degree=DEGREE, n_nodes=D, n_samples=N, variance="ev",
                            random_state=seed)
    return data.X, data.B_true


def one_seed(seed):
    """Fit both variants with both solvers on the ER2 problem of ``seed``.

    Parameters
    ----------
    seed : int
        The seed of :func:`problem`.

    Returns
    -------
    dict
        ``seed`` and, for ``v`` in ``ev, nv`` and ``s`` in ``adam, fast``, ``shd_v_s`` and
        ``sigma_v_s`` (sigma-hat; the mean over nodes for NV).
    """
    X, B = problem(seed)
    row = {"seed": seed}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for variant in ("ev", "nv"):
            for solver in ("adam", "fast"):
                est = CoLiDE(variant, solver=solver).fit(X)
                row[f"shd_{variant}_{solver}"] = int(evaluate(B, est.adjacency_)["shd"])
                row[f"sigma_{variant}_{solver}"] = float(np.mean(est.sigma_))
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20, help="graphs, seeds 0..seeds-1 (default 20)")
    ap.add_argument("--n-jobs", type=int, default=1, help="parallel seeds (joblib; default 1)")
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error("--seeds must be >= 1")
    rows = Parallel(n_jobs=args.n_jobs)(delayed(one_seed)(s) for s in range(args.seeds))
    print(f"# bench_trap: ER{DEGREE}, d = {D}, n = {N}, Gaussian noise of variance 1, weights +-[0.5, 2]; "
          f"seeds 0..{args.seeds - 1}")
    print("| seed | EV SHD faithful | EV SHD fast | EV sigma faithful | EV sigma fast "
          "| NV SHD faithful | NV SHD fast | NV mean sigma faithful | NV mean sigma fast |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['seed']} | {r['shd_ev_adam']} | {r['shd_ev_fast']} | {r['sigma_ev_adam']:.3f} | "
              f"{r['sigma_ev_fast']:.3f} | {r['shd_nv_adam']} | {r['shd_nv_fast']} | {r['sigma_nv_adam']:.3f} | "
              f"{r['sigma_nv_fast']:.3f} |")
    tot = {k: sum(r[k] for r in rows) for k in rows[0] if k.startswith("shd_")}
    sig = {k: (min(r[k] for r in rows), max(r[k] for r in rows)) for k in rows[0] if k.startswith("sigma_")}
    print(f"\nSummed SHD: EV faithful {tot['shd_ev_adam']}, fast {tot['shd_ev_fast']}; "
          f"NV faithful {tot['shd_nv_adam']}, fast {tot['shd_nv_fast']}")
    print("sigma-hat range: " + "; ".join(f"{k[6:]} [{lo:.3f}, {hi:.3f}]" for k, (lo, hi) in sig.items()))


if __name__ == "__main__":
    main()
