"""Responsiveness of the Learn page on Sachs: wall time of a click on "Run", as the user sees it.

Usage::

    .venv/bin/python benchmarks/bench_app.py [--repeats 5]

Drives the real app with ``streamlit.testing.v1.AppTest`` (no browser): opens the Learn page,
clicks **Run** for NV, then EV, then NV again (a cache hit), and times each script run from the
click until the page is redrawn with the result. That time includes the background fit job,
the ``st.cache_data`` lookup and store, the page's polling loop and the rendering of the graph,
tables and figures. Each repetition clears the fit cache first. Both solvers are measured: the
default fast one and the paper-faithful schedule (sidebar choice "adam").

Prints a markdown table (median and max over repetitions) and the first-click time of the first
repetition separately, which includes loading the numba kernels if the warm-up thread has not
finished yet.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from dashboard import fitting

ROOT = Path(__file__).resolve().parent.parent


def one_session(solver):
    """Times (s) of: NV click, EV click, NV click again (cached), for one fresh session."""
    fitting.fit_colide.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.run()
    at.switch_page("pages/learn.py").run()
    if solver != "auto":
        at.sidebar.radio(key="solver_choice").set_value(solver).run()
    times = []
    for variant in ("NV", "EV", "NV"):
        at.segmented_control(key="learn_variant").set_value(variant).run()
        t0 = time.perf_counter()
        at.button(key="learn_run").click().run()
        times.append(time.perf_counter() - t0)
        if at.exception:
            raise RuntimeError(at.exception)
        if not any(f"{variant} finished" in s.value for s in at.success):
            raise RuntimeError(f"{variant} did not finish: {[s.value for s in at.success]}")
    return times


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    rows = []
    first = None
    for solver in ("auto", "adam"):
        runs = [one_session(solver) for _ in range(args.repeats if solver == "auto" else 1)]
        if first is None:
            first = runs[0][0]
        for i, label in enumerate(("NV (solve)", "EV (solve)", "NV again (cache hit)")):
            vals = [r[i] for r in runs]
            rows.append((solver, label, statistics.median(vals), max(vals), len(vals)))
    print("| solver | click | median s | max s | runs |")
    print("|---|---|---|---|---|")
    for solver, label, med, mx, k in rows:
        print(f"| {solver} | {label} | {med:.3f} | {mx:.3f} | {k} |")
    print(f"\nFirst click of the first session (fast solver, numba kernels possibly still loading): {first:.3f} s")


if __name__ == "__main__":
    main()
