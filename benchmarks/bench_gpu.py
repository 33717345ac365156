"""CoLiDE on every backend present, side by side: time per step and per fit, SHD, peak memory (issue 33).

Usage::

    .venv/bin/python benchmarks/bench_gpu.py --quick              # this 2-core CPU: a few minutes
    .venv/bin/python benchmarks/bench_gpu.py                      # d = 200 ... 4000, every backend
    .venv/bin/python benchmarks/bench_gpu.py --sizes 200,500 --backends cpu,jax-cpu --fit-sizes 200
        [--settings EV,NV] [--schedule paper|short] [--steps 50] [--max-time 900] [--out FILE]

Problems: ER4 linear-Gaussian SEMs with ``n = 2 d`` samples, the project's protocol
(``benchmarks/bench_solver.py``): "EV" weights +-[0.5, 2] and unit noise variances, fitted with
CoLiDE-EV; "NV" weights +-[0.25, 1] and variances U[0.5, 10], fitted with CoLiDE-NV. Up to
``defaults.MAX_NODES`` nodes they come from :func:`colide_core.data.simulate.simulate_dataset`;
above (d = 4000) from the same protocol written out here (exactly ``4 d`` edges on a random
order), as the simulator refuses more nodes.

Backends (``CoLiDE(device=...)``): ``cpu`` (today's solvers: numba kernels, one BLAS thread),
``jax-cpu`` (the JAX backend on the CPU, XLA held to one thread for a like-for-like comparison)
and ``gpu`` (the JAX backend on the first GPU, when JAX sees one). Every case runs in its own
process (its peak memory is its own), the backends of a case one after the other.

Columns:

* ``step ms``: one Algorithm 1 step (gradient, Adam, the d x d inverse, the sigma update), the
  fastest of three timings over ``--steps`` steps of the faithful schedule (``fast_solve(engine=..., **ALGORITHM_1)``; the
  numba or the JAX kernel, JAX compiled beforehand); ``compile s``: JAX's one-off compile for
  this d;
* ``fit s``, ``iters``, ``SHD``: the whole fit with the default (fast) schedule, its first-order
  steps and evaluations, and the SHD of the thresholded graph (0.3) against the truth;
  ``kernel %``: the share of the fit spent in the compiled Adam phase (transfers included; the
  rest is checkpoints and polishing on the host);
* ``peak RSS MB``: the process's peak resident memory (JAX's runtime included); ``peak dev MB``:
  the GPU's peak allocation (JAX ``memory_stats``), blank on the CPU;
* ``vs cpu``: time ratio of the backend to ``cpu`` for the step and the fit (< 1: faster).

``--cpu-max-d`` / ``--cpu-fit-max-d`` leave the CPU backends out above a size (the GPU
script, ``benchmarks/gpu_check.sh``, times their steps up to d = 1000 and fits nothing on them).

``--paired N``: whole fits only, the CPU solvers and ``jax-cpu`` alternated N times in one process
(the fastest of each kept): the time ratio on a machine whose load changes.

``--quick``: d = 200 and 500, backends present, whole fits at d = 200
with the short schedule (``max_iter = (2000, 2000, 2000, 7000)``, a tenth of the paper's) and one
JAX fit at d = 500 (NV). The table is printed as markdown and written to ``--out`` (default
``benchmarks/results/gpu_bench_<host>.md``).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

PAPER = (20000, 20000, 20000, 70000)
SHORT = (2000, 2000, 2000, 7000)
SETTINGS = {"EV": {"variance": "ev", "variant": "ev", "w": (0.5, 2.0)},
            "NV": {"variance": "nv", "variant": "nv", "w": (0.25, 1.0)}}
ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------------
# one case, in its own process
# ------------------------------------------------------------------------------------------
def simulate(setting, d, seed=0):
    """``(X, B_true)`` for one ER4 SEM of the protocol, ``n = 2 d`` rows."""
    import numpy as np
    from colide_core import defaults

    spec = SETTINGS[setting]
    n = 2 * d
    if d <= defaults.MAX_NODES:
        from colide_core.data.simulate import simulate_dataset

        sim = simulate_dataset(graph="er", degree=4, n_nodes=d, n_samples=n, noise="gaussian",
                               variance=spec["variance"], random_state=seed)
        return sim.X, sim.B_true
    rng = np.random.default_rng(seed)  # the same protocol above the simulator's node limit
    iu = np.flatnonzero(np.tri(d, k=-1, dtype=bool).ravel())
    B = np.zeros(d * d)
    B[rng.choice(iu, size=4 * d, replace=False)] = 1.0
    perm = rng.permutation(d)
    B = B.reshape(d, d).T[np.ix_(perm, perm)]  # upper triangular on a random order: i -> j
    lo, hi = spec["w"]
    W = B * rng.uniform(lo, hi, (d, d)) * rng.choice([-1.0, 1.0], (d, d))
    var = np.ones(d) if spec["variance"] == "ev" else rng.uniform(0.5, 10.0, d)
    Z = rng.standard_normal((n, d)) * np.sqrt(var)
    X = np.linalg.solve((np.eye(d) - W).T, Z.T).T  # X = X W + Z
    return X - X.mean(axis=0), B


def run_case(case):
    """Time one (d, setting, backend): the step, and the whole fit when asked. Returns a dict."""
    import resource
    import warnings

    import numpy as np

    from colide_core import CoLiDE, evaluate
    from colide_core.exceptions import ConvergenceWarning
    from colide_core.solver._fast import fast_solve

    d, setting, backend = case["d"], case["setting"], case["backend"]
    variant = SETTINGS[setting]["variant"]
    X, B = simulate(setting, d)
    Xc = X - X.mean(axis=0)
    cov = Xc.T @ Xc / X.shape[0]
    row = {"d": d, "setting": setting, "backend": backend, "n": X.shape[0]}
    warnings.simplefilter("ignore", ConvergenceWarning)
    one = dict(variant=variant, mu_schedule=(1.0,), s_schedule=(1.0,), tol=0.0)
    if backend == "cpu":
        engine, ctx = "auto", None
        from colide_core.solver._fast import warmup

        warmup()  # numba's kernels loaded from its cache before anything is timed
    else:
        from colide_core.solver import _jax

        dev = _jax.resolve_device("gpu" if backend == "gpu" else "jax-cpu")
        row["device"] = str(dev)
        engine, ctx = _jax.jax_kernels(), _jax._on_device(dev)
        t0 = time.perf_counter()
        with ctx:
            fast_solve(cov, engine=engine, max_iter=(2,), checkpoint=1, **one, **_jax.ALGORITHM_1)
        row["compile_s"] = time.perf_counter() - t0
    steps = case["steps"]
    kw = dict(max_iter=(steps,), checkpoint=steps, switch_tol=0.0, step_scale=1, polish=False, chatter_tol=None,
              average=False, inverse_every=1)
    best = float("inf")
    for _ in range(3):  # the fastest of three: a load spike on a shared machine inflates one
        if ctx is None:
            r = fast_solve(cov, engine=engine, **one, **kw)
        else:
            with _jax._on_device(dev):
                r = fast_solve(cov, engine=engine, **one, **kw)
        best = min(best, r.fit_time / r.n_iter * 1e3)
    row["step_ms"] = best
    if case["fit"]:
        dev_name = {"cpu": "cpu", "jax-cpu": "jax-cpu", "gpu": "gpu"}[backend]
        if backend != "cpu":
            from colide_core.solver._jax import kernel_stats

            kernel_stats(reset=True)
        t0 = time.perf_counter()
        m = CoLiDE(variant, device=dev_name, max_iter=case["schedule"], max_time=case["max_time"]).fit(X)
        row["fit_s"] = time.perf_counter() - t0
        row["iters"] = int(m.n_iter_)
        row["stopped"] = bool(m.stopped_)
        row["shd"] = int(evaluate(B, m.adjacency_)["shd"])
        if backend != "cpu":
            row["kernel_share"] = kernel_stats()["seconds"] / row["fit_s"]
    row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    if backend == "gpu":
        stats = dev.memory_stats() or {}
        if "peak_bytes_in_use" in stats:
            row["peak_dev_mb"] = stats["peak_bytes_in_use"] / 2**20
    return row


def paired(sizes, settings, schedule, repeats, device="jax-cpu"):
    """Whole fits, CPU solvers and the JAX backend alternated in one process, ``repeats`` times each.

    On a shared machine the load changes over minutes; alternating the two and keeping each
    one's fastest run gives a ratio that does not depend on when each ran. Returns markdown.
    """
    import warnings

    import numpy as np

    from colide_core import CoLiDE, evaluate
    from colide_core.exceptions import ConvergenceWarning
    from colide_core.solver._fast import warmup

    warnings.simplefilter("ignore", ConvergenceWarning)
    warmup()
    lines = ["| d | setting | cpu fit s (min) | jax fit s (min) | jax / cpu | cpu iters | jax iters | cpu SHD | jax SHD "
             "| max abs dW | objective rel diff |", "|" + "---|" * 11]
    for d in sizes:
        for setting in settings:
            variant = SETTINGS[setting]["variant"]
            X, B = simulate(setting, d)
            CoLiDE(variant, device=device, max_iter=(2, 2, 2, 2)).fit(X)  # compile for this d
            best = {"cpu": np.inf, device: np.inf}
            fits = {}
            for r in range(repeats):
                for dev in (("cpu", device) if r % 2 == 0 else (device, "cpu")):
                    t0 = time.perf_counter()
                    fits[dev] = CoLiDE(variant, device=dev, max_iter=schedule).fit(X)
                    best[dev] = min(best[dev], time.perf_counter() - t0)
            a, b = fits["cpu"], fits[device]
            lines.append(
                f"| {d} | {setting} | {best['cpu']:.1f} | {best[device]:.1f} | {best[device] / best['cpu']:.2f} "
                f"| {a.n_iter_} | {b.n_iter_} | {evaluate(B, a.adjacency_)['shd']} | {evaluate(B, b.adjacency_)['shd']} "
                f"| {np.abs(a.W_ - b.W_).max():.1e} | {(b.result_.objective - a.result_.objective) / abs(a.result_.objective):.1e} |")
            print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# the driver
# ------------------------------------------------------------------------------------------
def backends_present():
    """``cpu``, plus ``jax-cpu`` when JAX imports, plus ``gpu`` when JAX sees a GPU."""
    out = ["cpu"]
    probe = subprocess.run([sys.executable, "-c", "import jax; print(','.join(sorted({d.platform for d in jax.devices()})))"],
                           capture_output=True, text=True, timeout=300)
    if probe.returncode == 0:
        out.append("jax-cpu")
        if "gpu" in probe.stdout or "cuda" in probe.stdout:
            out.append("gpu")
    return out


def _env(backend):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    if backend == "jax-cpu":  # one XLA thread: like for like with the one-thread CPU solvers
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false").strip()
    if backend == "gpu":
        env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # peak memory is the fit's own
    return env


def run_in_subprocess(case, timeout):
    cmd = [sys.executable, str(Path(__file__).resolve()), "--case", json.dumps(case)]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env(case["backend"]),
                           cwd=str(ROOT))
    except subprocess.TimeoutExpired:
        return {**{k: case[k] for k in ("d", "setting", "backend")}, "error": f"timed out after {timeout} s"}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
        return {**{k: case[k] for k in ("d", "setting", "backend")}, "error": tail[0][:200]}
    row = json.loads(lines[-1])
    row["wall_s"] = time.perf_counter() - t0
    return row


def _f(x, fmt):
    return "" if x is None else format(x, fmt)


def table(rows):
    """The markdown table: one row per (d, setting, backend), ratios against ``cpu``."""
    base = {(r["d"], r["setting"]): r for r in rows if r["backend"] == "cpu" and "error" not in r}
    head = ("| d | setting | backend | step ms | step vs cpu | compile s | fit s | fit vs cpu | iters | SHD "
            "| kernel % | peak RSS MB | peak dev MB |")
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['d']} | {r['setting']} | {r['backend']} | error: {r['error']} |" + " |" * 9)
            continue
        b = base.get((r["d"], r["setting"]), {})
        step_ratio = r["step_ms"] / b["step_ms"] if b.get("step_ms") and r["backend"] != "cpu" else None
        fit_ratio = r["fit_s"] / b["fit_s"] if b.get("fit_s") and r.get("fit_s") and r["backend"] != "cpu" else None
        fit = _f(r.get("fit_s"), ".1f") + (" (max_time)" if r.get("stopped") else "")
        share = r.get("kernel_share")
        out.append(
            f"| {r['d']} | {r['setting']} | {r['backend']} | {_f(r.get('step_ms'), '.2f')} | {_f(step_ratio, '.2f')} "
            f"| {_f(r.get('compile_s'), '.1f')} | {fit} | {_f(fit_ratio, '.2f')} | {r.get('iters', '')} "
            f"| {r.get('shd', '')} | {_f(None if share is None else 100 * share, '.0f')} "
            f"| {_f(r.get('peak_rss_mb'), '.0f')} | {_f(r.get('peak_dev_mb'), '.0f')} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true", help="d = 200 and 500, short schedule: minutes on 2 cores")
    ap.add_argument("--sizes", default="200,500,1000,2000,4000")
    ap.add_argument("--settings", default="EV,NV")
    ap.add_argument("--backends", default=None, help="default: every backend present")
    ap.add_argument("--fit-sizes", default=None,
                    help="sizes with whole fits (default: all; --quick: 200, and 500 for the JAX backends, NV)")
    ap.add_argument("--schedule", choices=("paper", "short"), default=None,
                    help="max_iter of the whole fits: the paper's (default) or a tenth of it (--quick)")
    ap.add_argument("--steps", type=int, default=None, help="steps per step timing, in one compiled chunk (default 100: a fit's chunk is ceil(checkpoint / c) = 100 steps at the default scale)")
    ap.add_argument("--cpu-max-d", type=int, default=None,
                    help="skip the CPU backends (cpu, jax-cpu) above this d (a one-thread step at d = 4000 "
                         "takes seconds; default: none skipped)")
    ap.add_argument("--cpu-fit-max-d", type=int, default=None,
                    help="whole fits on the CPU backends only up to this d (default: no limit)")
    ap.add_argument("--max-time", type=float, default=1800.0, help="seconds per fit (then stopped, marked)")
    ap.add_argument("--timeout", type=float, default=7200.0, help="seconds per case before it is abandoned")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--paired", type=int, default=None, metavar="REPEATS",
                    help="instead of the table: whole fits on cpu and jax-cpu alternated REPEATS times in one "
                         "process, each one's fastest kept (ratios on a loaded machine)")
    args = ap.parse_args(argv)
    if args.paired:
        schedule = SHORT if args.schedule == "short" else PAPER
        sizes = [int(x) for x in args.sizes.split(",")]
        settings = [s.strip().upper() for s in args.settings.split(",")]
        text = (f"# Paired fits, cpu and jax-cpu alternated {args.paired} times (benchmarks/bench_gpu.py --paired)\n\n"
                f"{platform.node()}, {os.cpu_count()} CPUs; max_iter = {schedule}; fastest of each; "
                f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n\n"
                + paired(sizes, settings, schedule, args.paired) + "\n")
        print(text)
        if args.out:
            args.out.write_text(text, encoding="utf-8")
        return 0
    if args.case:
        print(json.dumps(run_case(json.loads(args.case))))
        return 0
    sizes = [200, 500] if args.quick else [int(x) for x in args.sizes.split(",")]
    settings = [s.strip().upper() for s in args.settings.split(",")]
    backends = args.backends.split(",") if args.backends else backends_present()
    schedule = SHORT if (args.schedule == "short" or (args.schedule is None and args.quick)) else PAPER
    steps = args.steps or 100
    fit_sizes = None if args.fit_sizes is None else {int(x) for x in args.fit_sizes.split(",")}

    def wants_fit(d, setting, backend):
        if backend != "gpu" and args.cpu_fit_max_d is not None and d > args.cpu_fit_max_d:
            return False
        if fit_sizes is not None:
            return d in fit_sizes
        if args.quick:
            return d == 200 or (d == 500 and backend != "cpu" and setting == "NV")
        return True

    t_start = time.perf_counter()
    host = platform.node() or "host"
    out = args.out or ROOT / "benchmarks" / "results" / f"gpu_bench_{host}{'_quick' if args.quick else ''}.md"
    out.parent.mkdir(parents=True, exist_ok=True)

    def write(rows):
        header = (f"# CoLiDE backends side by side (benchmarks/bench_gpu.py{' --quick' if args.quick else ''})\n\n"
                  f"{host}, {os.cpu_count()} CPUs, backends {', '.join(backends)}; ER4, n = 2d; whole fits with "
                  f"max_iter = {schedule}, steps timed over {steps} faithful steps; one BLAS / XLA thread on the "
                  f"CPU; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
                  f"{time.perf_counter() - t_start:.0f} s so far.\n")
        text = header + "\n" + table(rows) + "\n"
        out.write_text(text, encoding="utf-8")
        out.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
        return text

    text = ""
    rows = []
    for d in sizes:
        for setting in settings:
            for backend in backends:
                if backend != "gpu" and args.cpu_max_d is not None and d > args.cpu_max_d:
                    continue
                case = {"d": d, "setting": setting, "backend": backend, "steps": steps, "schedule": schedule,
                        "fit": wants_fit(d, setting, backend), "max_time": args.max_time}
                row = run_in_subprocess(case, args.timeout)
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
                text = write(rows)  # after every case: a run cut short keeps what it measured
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
