"""Where the time of one fast-solver Adam step goes: inverse, product, and the O(d^2) passes.

Usage::

    .venv/bin/python -m benchmarks.research.bench_step_parts [--sizes 50,100,200] [--settings EV,NV]
        [--steps 300]

For the simulated ER4 problems of ``bench_solver.py`` (seed ``SEED0``; ``X`` of shape
``(1000, d)``), it first runs the fast solver's first stage for 2,000 steps (``fast_solve`` with
``mu_schedule=(1.0,)``) to get a realistic dense iterate ``W`` inside the log-det domain, then
times, on that iterate, with one BLAS thread:

* ``step k=1`` / ``step k=3`` / ``step k=10``: one whole Adam step of the numba kernel
  (``_adam_chunk_nb``, mean over ``--steps`` steps) with an inverse at every step (Algorithm 1),
  every third step (the default at step scales above 1) and every tenth step (the default at
  step scale 1, where the refined certificate is on as well);
* ``inverse``: the block inverse with its domain test and the copy (``_inv_into_nb``);
* ``cov @ W``: the one d x d product of a step (BLAS dgemm);
* ``build``: ``Wn = W - lr D`` and ``(s I - Wn o Wn).T`` (``_step_nb``, on the steps that invert);
* ``certified``: ``Wn = W - lr D`` and the domain certificate ``M xc`` without building ``M``
  (``_step_cert_nb``, on the steps between inverses);
* ``colsums``: the domain certificate's vector after an inverse (``_colsums_nb``);
* ``passes``: ``step k=1`` minus ``inverse``, ``cov @ W``, ``build`` and ``colsums``, i.e. the
  Adam pass (gradient, moments, direction; vectorised) and the residual / sigma pass, both O(d^2);

each as microseconds and as a share of ``step k=1``. The column ``floor`` is ``inverse + cov @ W``:
what a step of this algorithm costs at the least with this inverse.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from benchmarks.bench_solver import SEED0, SETTINGS, simulate  # noqa: E402
from colide_core import ConvergenceWarning  # noqa: E402
from colide_core.solver import _fast  # noqa: E402
from colide_core.solver._common import default_sigma0  # noqa: E402
from colide_core._validation import data_covariance  # noqa: E402


def per_call_us(f, reps):
    """Mean wall time of ``f()`` in microseconds over ``reps`` calls, after one warm-up call."""
    f()
    t0 = time.perf_counter()
    for _ in range(reps):
        f()
    return (time.perf_counter() - t0) / reps * 1e6


def iterate(cov, variant):
    """A dense iterate ``W`` of shape ``(d, d)`` after 2,000 steps of the first stage (mu = 1, s = 1)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = _fast.fast_solve(cov, variant=variant, mu_schedule=(1.0,), s_schedule=(1.0,),
                               max_iter=(2000,), step_scale=1.0, polish=False)
    return res.W


def _PLAIN(d):
    """The kernel's placeholders of the per-node covariance form and of the required edges (unused)."""
    return (np.zeros((1, 1, 1)), np.zeros(1, dtype=np.int64), np.zeros(2, dtype=np.int64), np.ones(d), float(d),
            False, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 0.0)


def chunk_us(cov, variant, W, refresh, steps):
    """Mean time of one ``_adam_chunk_nb`` step (us) from ``W`` with an inverse every ``refresh`` steps
    (and the refined certificate where ``refresh`` is 10, as ``inverse_every="auto"`` at step scale 1)."""
    d = cov.shape[0]
    vcode = _fast._VCODE[variant]
    sig0 = np.broadcast_to(np.asarray(default_sigma0(cov, variant), dtype=float), (d,)).copy()
    lam = np.full((d, d), 0.05)
    mask = np.ones((d, d))
    state = _fast._StageState(_fast._evaluate(W.copy(), cov, 1.0, 1.0, lam, vcode, sig0), d)
    m, v, Wbar = np.zeros((d, d)), np.zeros((d, d)), state.W.copy()

    def run(n):
        return _fast._adam_chunk_nb(state.W, m, v, state.MinvT, state.R, state.resid, state.isig, cov, lam,
                                    mask, 1.0, 1.0, 3e-4, 0.99, 0.999, 1.0, 1.0, sig0, vcode, n,
                                    _fast._MAX_HALVINGS, Wbar, 0.04, refresh, state.lag, state.xc, refresh == 10,
                                    *_PLAIN(d))

    run(5)
    t0 = time.perf_counter()
    status = run(steps)[0]
    if status != 0:
        raise FloatingPointError(f"the kernel left the log-det domain (status {status})")
    return (time.perf_counter() - t0) / steps * 1e6


def row(setting, d, steps):
    """Print one table row for the ER4 problem of ``setting`` with ``d`` nodes."""
    variant = SETTINGS[setting]["variant"]
    X, _ = simulate(setting, d, SEED0)
    cov, _, _ = data_covariance(X)
    cov = np.ascontiguousarray(cov)
    W = iterate(cov, variant)
    full1 = chunk_us(cov, variant, W, 1, steps)
    full3 = chunk_us(cov, variant, W, 3, steps)
    full10 = chunk_us(cov, variant, W, 10, steps)
    Wn, Mt, out = np.empty((d, d)), np.empty((d, d)), np.empty((d, d))
    D = np.full((d, d), 1e-3)
    xc = np.empty(d)
    _fast._step_nb(W, D, 3e-4, 1.0, Wn, Mt)
    reps = max(steps, 50)
    inv = per_call_us(lambda: _fast._inv_into_nb(Mt, out), reps)
    gemm = per_call_us(lambda: cov @ Wn, reps)
    build = per_call_us(lambda: _fast._step_nb(W, D, 3e-4, 1.0, Wn, Mt), reps)
    cols = per_call_us(lambda: _fast._colsums_nb(out, xc), reps)
    _fast._colsums_nb(np.ascontiguousarray(np.linalg.inv(Mt.T).T), xc)
    cert = per_call_us(lambda: _fast._step_cert_nb(W, D, 3e-4, 1.0, Wn, xc, np.empty(d)), reps)
    passes = full1 - inv - gemm - build - cols
    parts = (inv, gemm, build, cols, passes)
    shares = " | ".join(f"{p:.1f} ({100 * p / full1:.0f}%)" for p in parts)
    print(f"| {setting} | {d} | {np.linalg.cond(cov):.1e} | {full1:.1f} | {full3:.1f} | {full10:.1f} | {shares} "
          f"| {cert:.1f} | {inv + gemm:.1f} | {full1 / (inv + gemm):.2f} |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="50,100,200")
    ap.add_argument("--settings", default="EV,NV")
    ap.add_argument("--steps", type=int, default=300)
    args = ap.parse_args(argv)
    if not _fast.HAVE_NUMBA:
        sys.exit("bench_step_parts.py times the numba kernels; install numba (requirements.txt).")
    _fast.warmup()
    print("| setting | d | cond(cov) | step k=1 (us) | step k=3 (us) | step k=10 (us) | inverse | cov @ W | build "
          "| colsums | passes | certified (us) | floor: inverse + cov @ W (us) | step k=1 / floor |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for setting in args.settings.split(","):
        for d in (int(x) for x in args.sizes.split(",")):
            row(setting, d, args.steps)


if __name__ == "__main__":
    main()
