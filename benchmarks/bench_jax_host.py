"""The host's share of a fit on the JAX backend, and one device inverse against the block inverse (issue 50).

Usage::

    nice -n 19 .venv/bin/python benchmarks/bench_jax_host.py --sizes 200,500 --out benchmarks/results/jax_host_cpu.md
    .venv/bin/python benchmarks/bench_jax_host.py --sizes 1000 --device gpu --no-compare   # on a GPU
    .venv/bin/python benchmarks/bench_jax_host.py --linalg 500,1000                        # the linalg table only
    .venv/bin/python benchmarks/bench_jax_host.py --sizes 1000 --device gpu --inverse block,direct --no-compare

Problems: the NV setting of ``benchmarks/bench_gpu.py`` (ER4, ``n = 2 d``, weights +-[0.25, 1],
noise variances U[0.5, 10]) fitted by CoLiDE-NV's fast schedule (``solver="fast"``: the stage loop
itself, without ``"auto"``'s order search after it) with the paper's budgets (or ``--schedule
short``, a tenth), on ``device`` (default ``jax-cpu``, XLA held to one thread like the one-thread
CPU solvers). The size's compile is paid beforehand by a short fit, so the table is the fit's own.

Columns of the fit table:

* ``inverse``: the step's ``d x d`` inverse (``--inverse``: ``block``, the 2 x 2 Schur recursion,
  or ``direct``, one ``jnp.linalg.inv``; ``colide_core.solver._jax._INVERSE``, issue 50's item 2),
  one row per size and inverse; ``default`` is the platform's choice;
* ``fit s``: the whole fit (``fast_solve`` on the covariance); ``loop s``: seconds inside the
  compiled stage loop (:func:`colide_core.solver._jax_loop.loop_stats`: dispatch, device work and
  transfers; since the polishing and the stages' evaluations moved onto the device, those too);
  ``host %``: ``1 - loop / fit``, the share the host adds (the visits' bookkeeping, the solve's
  set-up and Python); ``polish s``: the last stage's polishing (a compiled loop on the device,
  :func:`colide_core.solver._jax_loop.polish_phase`, counted in ``loop s``; on the host, an LU +
  inverse per evaluation, only where the device declines) and its evaluations;
* ``steps``: Adam steps plus polishing evaluations; ``checkpoints`` / ``visits``: checkpoints the
  loop evaluated and the host's visits to it; ``SHD (0.3)``: ``colide_core.evaluate``'s SHD of
  ``|W| > 0.3`` against the simulated graph;
* ``max|W_jax - W_cpu|``: against the CPU solver's fit (numba kernels) of the same problem, with
  the CPU fit's ``SHD (0.3)`` and ``edges differing``, the entries where the two graphs at 0.3
  disagree (issue 50's "the same graphs as the CPU at d = 200");
  ``max|W_loop - W_chunk|``: against issue 33's backend (only the chunks compiled, every
  checkpoint on the host), with its fit time and host share beside (``--no-compare`` skips both;
  ``--compare-max-d`` keeps them to the small sizes). The comparisons run without ``max_time``:
  when the loop's fit is cut (``stopped``) they compare a partial fit with whole ones. Only the
  size's first inverse is compared; the others get ``max|W - W_first|``, against that first
  inverse's fit of the same problem (read it on fits that ended: two fits cut by ``max_time``
  stopped at different steps and differ by their progress, not by their inverse).

The linalg table (``--linalg``): one ``d x d`` M-matrix ``s I - W o W``, each operation jitted
and timed on the device (fastest of five, after its compile): the loop's block inverse (2 x 2
Schur recursion, 64-wide leaves), ``jnp.linalg.inv``, ``jnp.linalg.solve(M, I)``,
``jnp.linalg.slogdet``, and the checkpoint's ``lu_factor`` + ``lu_solve(I)``.

The linalg table comes first, then the fit rows: printed as markdown and written to ``--out``
after each (a run cut short keeps what it measured).
"""
from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")  # one XLA thread, as bench_gpu.py

PAPER = (20000, 20000, 20000, 70000)
SHORT = (2000, 2000, 2000, 7000)


def _simulate(d):
    from bench_gpu import simulate  # benchmarks/ is the script's directory: the same problems

    X, B = simulate("NV", d)
    X = X - X.mean(axis=0)
    return X.T @ X / X.shape[0], B


def fit_row(d, device, schedule, compare, max_time=None, inverse=None, W_first=None):
    """One size and inverse: the loop's fit, its host share, and the comparisons. Returns a dict.

    ``inverse``: the step's inverse (None: the platform's); ``W_first``: the size's first
    inverse's W, for ``dW_first``. The row carries its W (``"W"``) for the next inverse.
    """
    import warnings

    import numpy as np

    from colide_core.exceptions import ConvergenceWarning
    from colide_core.solver import _fast
    from colide_core.solver._jax import _on_device, jax_kernels, resolve_device
    from colide_core.solver._jax_loop import loop_stats

    warnings.simplefilter("ignore", ConvergenceWarning)
    cov, B = _simulate(d)
    dev = resolve_device(device)
    polish_s = [0.0]
    polish = _fast._polish

    def timed_polish(*a, **k):  # the benchmark's own probe: how much of the host part is polishing
        t0 = time.perf_counter()
        try:
            return polish(*a, **k)
        finally:
            polish_s[0] += time.perf_counter() - t0

    _fast._polish = timed_polish
    kw = dict(variant="nv", max_iter=schedule, max_time=max_time)
    row = {"d": d, "inverse": inverse or "default"}
    try:
        t0 = time.perf_counter()
        _fast.warmup()  # the polishing's numba kernels, loaded before anything is timed
        with _on_device(dev, inverse=inverse):  # the size's compile (chunk and loop), paid once before timing
            fast_solve = _fast.fast_solve
            # one short stage compiles the loop every stage of the fit uses (its key is the size and
            # the solve's switches, not the stage), and the device's polishing loop (a few
            # evaluations); the chunk path's warm-up does not polish: on the host at d = 4000 an
            # LU + inverse is seconds
            warm = dict(variant="nv", max_iter=(10,), mu_schedule=(1.0,), s_schedule=(1.0,))
            fast_solve(cov, engine=jax_kernels(), **warm)
            if compare:
                fast_solve(cov, engine=jax_kernels(loop=False), **dict(warm, polish=False))
        row["compile_s"] = time.perf_counter() - t0
        polish_s[0] = 0.0
        loop_stats(reset=True)
        t0 = time.perf_counter()
        with _on_device(dev, inverse=inverse):
            res = fast_solve(cov, engine=jax_kernels(), **kw)
        row["fit_s"] = time.perf_counter() - t0
        st = loop_stats()
        row.update(loop_s=st["seconds"] + st.get("evaluation_seconds", 0.0), polish_s=polish_s[0] + st.get("polish_seconds", 0.0), steps=res.n_iter, checkpoints=st["checkpoints"],
                   visits=st["visits"], objective=res.objective, stopped=res.stop_reason,
                   polish_evals=res.n_iter - st["steps"])
        row["host_share"] = 1.0 - row["loop_s"] / row["fit_s"]
        row["W"] = res.W
        row["shd"] = _shd(B, res.W)
        if W_first is not None:
            row["dW_first"] = float(np.abs(res.W - W_first).max())
        if compare:
            from colide_core.solver._jax import kernel_stats

            kernel_stats(reset=True)
            t0 = time.perf_counter()
            with _on_device(dev, inverse=inverse):
                chunk = fast_solve(cov, engine=jax_kernels(loop=False), **dict(kw, max_time=None))
            row["chunk_fit_s"] = time.perf_counter() - t0
            row["chunk_host_share"] = 1.0 - kernel_stats()["seconds"] / row["chunk_fit_s"]
            row["dW_chunk"] = float(np.abs(res.W - chunk.W).max())
            row["chunk_steps"] = chunk.n_iter
            t0 = time.perf_counter()
            cpu = fast_solve(cov, engine="auto", **dict(kw, max_time=None))
            row["cpu_fit_s"] = time.perf_counter() - t0
            row["dW_cpu"] = float(np.abs(res.W - cpu.W).max())
            row["cpu_steps"] = cpu.n_iter
            row["dobj_cpu"] = abs(res.objective - cpu.objective) / abs(cpu.objective)
            row["cpu_shd"] = _shd(B, cpu.W)
            row["edges_vs_cpu"] = int(((np.abs(res.W) > 0.3) != (np.abs(cpu.W) > 0.3)).sum())
    finally:
        _fast._polish = polish
    return row


def _shd(B, W, threshold=0.3):
    """SHD of ``|W| > threshold`` against the DAG ``B``, ``colide_core.evaluate``'s (NOTEARS'
    convention: extra and missing skeleton edges plus reversed edges), written here so that the
    bench needs no gadjid (``evaluate``'s SID), which a bare device image may lack."""
    import numpy as np

    E, T = np.abs(W) > threshold, np.asarray(B) != 0
    lower = np.tri(E.shape[0], k=-1, dtype=bool)
    SE, ST = (E | E.T) & lower, (T | T.T) & lower
    return int((SE & ~ST).sum() + (ST & ~SE).sum() + (E & ~T & T.T).sum())


def linalg_rows(sizes, device, repeats=5):
    """Seconds of one jitted device operation on an M-matrix of each size: a list of dicts."""
    import numpy as np

    from colide_core.solver._jax import _import_jax, _parts, resolve_device

    jax = _import_jax()
    jnp, jsl = jax.numpy, jax.scipy.linalg
    dev = resolve_device(device)
    P = _parts()
    ops = {
        "block inverse": P.block_inv,
        "jnp.linalg.inv": jnp.linalg.inv,
        "solve(M, I)": lambda M: jnp.linalg.solve(M, jnp.eye(M.shape[0], dtype=M.dtype)),
        "slogdet": lambda M: jnp.linalg.slogdet(M)[1],
        "lu_factor + lu_solve(I)": lambda M: jsl.lu_solve(jsl.lu_factor(M), jnp.eye(M.shape[0], dtype=M.dtype)),
    }
    rows = []
    for d in sizes:
        rng = np.random.default_rng(d)
        W = rng.uniform(-1, 1, (d, d)) * (rng.random((d, d)) < 8.0 / d) * 0.3
        M = jax.device_put(np.eye(d) - W * W, dev)
        ref = np.linalg.inv(np.asarray(M))
        row = {"d": d}
        for name, op in ops.items():
            f = jax.jit(op)
            out = f(M)
            jax.block_until_ready(out)
            best = float("inf")
            for _ in range(repeats):
                t0 = time.perf_counter()
                jax.block_until_ready(f(M))
                best = min(best, time.perf_counter() - t0)
            row[name] = best * 1e3
            if name != "slogdet":
                row[name + " err"] = float(np.abs(np.asarray(out) - ref).max() / np.abs(ref).max())
        rows.append(row)
    return rows, list(ops)


def _f(x, fmt):
    return "" if x is None else format(x, fmt)


def fit_table(rows, compare):
    head = ["d", "inverse", "fit s", "loop s", "host %", "polish s", "polish evals", "steps", "checkpoints", "visits",
            "SHD (0.3)", "max abs W - W_first"]
    if compare:
        head += ["max abs W_jax - W_cpu", "obj rel diff vs cpu", "cpu SHD (0.3)", "edges differing", "cpu fit s", "cpu steps",
                 "max abs W_loop - W_chunk", "chunk fit s", "chunk host %"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        fit = _f(r["fit_s"], ".1f") + (f" (stopped: {r['stopped']})" if r.get("stopped") else "")
        cells = [str(r["d"]), r["inverse"], fit, _f(r["loop_s"], ".1f"), _f(100 * r["host_share"], ".1f"),
                 _f(r["polish_s"], ".2f"), str(r["polish_evals"]), str(r["steps"]), str(r["checkpoints"]), str(r["visits"]),
                 str(r["shd"]), _f(r.get("dW_first"), ".1e")]
        if compare and "dW_cpu" not in r:
            cells += [""] * 9
        elif compare:
            cells += [_f(r["dW_cpu"], ".1e"), _f(r["dobj_cpu"], ".1e"), str(r["cpu_shd"]), str(r["edges_vs_cpu"]),
                      _f(r["cpu_fit_s"], ".1f"), str(r["cpu_steps"]),
                      _f(r["dW_chunk"], ".1e"), _f(r["chunk_fit_s"], ".1f"), _f(100 * r["chunk_host_share"], ".1f")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def linalg_table(rows, names):
    head = ["d"] + [f"{n} ms" for n in names]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join([str(r["d"])] + [_f(r[n], ".1f") for n in names]) + " |")
    errs = [f"{n}: {max(r[n + ' err'] for r in rows):.1e}" for n in names if n + " err" in rows[0]]
    return "\n".join(lines) + "\n\nmax |X - inv(M)| / max |inv(M)| (numpy's inverse as the reference): " + "; ".join(errs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="200,500", help="fit sizes (comma-separated; empty: none)")
    ap.add_argument("--device", default="jax-cpu", choices=["jax-cpu", "gpu"])
    ap.add_argument("--schedule", default="paper", choices=["paper", "short"])
    ap.add_argument("--no-compare", action="store_true", help="skip the CPU solver's and the chunk path's fits")
    ap.add_argument("--compare-max-d", type=int, default=None, help="compare only at sizes up to this d")
    ap.add_argument("--max-time", default="", help="max_time (s) of each fit: one number, or one per size")
    ap.add_argument("--linalg", default="", help="sizes of the linalg table (comma-separated; empty: none)")
    ap.add_argument("--inverse", default="", help="the step's inverses, a row each per size: block,direct "
                    "(empty: the platform's default)")
    ap.add_argument("--inverse-max-d", type=int, default=None,
                    help="fit the sizes above this d with the first inverse only")
    ap.add_argument("--out", default=None, help="markdown file to write")
    a = ap.parse_args(argv)
    sizes = [int(x) for x in a.sizes.split(",") if x]
    compare = not a.no_compare
    caps = [float(x) for x in a.max_time.split(",") if x]
    caps = (caps * len(sizes) if len(caps) == 1 else caps) or [None] * len(sizes)
    if len(caps) != len(sizes):
        ap.error("--max-time takes one number or one per size")
    schedule = PAPER if a.schedule == "paper" else SHORT
    inverses = [x for x in a.inverse.split(",") if x]
    if any(x not in ("block", "direct") for x in inverses):
        ap.error("--inverse takes block and / or direct")
    inverses = inverses or [None]  # none named: the platform's default
    import jax

    head = (f"{platform.node() or 'host'}, {os.cpu_count()} CPUs, {a.device} ({jax.devices()[0].device_kind}), "
            f"jax {jax.__version__}, XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}, one BLAS thread; "
            f"CoLiDE-NV fast schedule, max_iter = {schedule}, max_time = {a.max_time or None}, ER4 NV n = 2d; "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    parts = [head, ""]
    rows = []

    def write(extra=()):  # after every row: a run cut short keeps what it measured
        text = "\n".join(parts + ([fit_table(rows, compare), ""] if rows else []) + list(extra))
        if a.out:
            Path(a.out).write_text(text + "\n")
        return text

    extra = []
    if a.linalg:  # first: seconds, and what decides the inverse; a run cut short in the fits keeps it
        lrows, names = linalg_rows([int(x) for x in a.linalg.split(",") if x], a.device)
        extra = [linalg_table(lrows, names), ""]
        print(extra[0], flush=True)
        write(extra)
    for d, cap in zip(sizes, caps):
        W_first = None
        several = a.inverse_max_d is None or d <= a.inverse_max_d
        for k, inverse in enumerate(inverses if several else inverses[:1]):
            cmp = compare and k == 0 and (a.compare_max_d is None or d <= a.compare_max_d)
            rows.append(fit_row(d, a.device, schedule, cmp, cap, inverse, W_first))
            W = rows[-1].pop("W")
            W_first = W if k == 0 else W_first
            print(fit_table(rows[-1:], compare), flush=True)
            write(extra)
    print(write(extra))


if __name__ == "__main__":
    main()
