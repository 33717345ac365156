"""What a CoLiDE fit of a given size would cost on this CPU, computed from a measurement (issue 33).

The dashboard accepts :data:`colide_core.data.io.INTERACTIVE_MAX_NODES` nodes without a GPU; for
larger data it says what a fit would cost here instead of starting one. Rule of the project
(CONTRIBUTING.md, "Performance claims"): a time shown to a user is computed from a measurement.

How. :func:`measure_step` times the fast solver's Adam phase (the numba kernel with its default
inverse schedule and certificate, the step of a default fit) for a few dozen steps on a fixed
random ER2 problem of ``probe_nodes`` nodes, on this machine, now, and keeps the fastest of a few
timings. :func:`estimate_fit_cost` scales that step to ``n_nodes`` by the O(d^3) law of the step
(the gradient's ``cov @ W`` and the ``d x d`` inverse are d^3 flops; a measurement at the full
size would cost seconds per step above 1,000 nodes) and multiplies it by the number of steps
fast fits take (:data:`TYPICAL_STEPS`, measured) and by the schedule's whole budget (an upper
bound). Below ``probe_nodes`` nodes the step is measured at ``n_nodes`` itself and nothing is
extrapolated.

Where the steps count comes from: the fast solver's fits of ER4 graphs at 200 and 500 nodes in
``benchmarks/results/gpu_paired_cpu_*.md`` (``benchmarks/bench_gpu.py --paired``).
"""
from __future__ import annotations

import math
import threading
import time
import warnings
from dataclasses import dataclass

import numpy as np

from colide_core import defaults
from colide_core.solver._topo_cost import TopoCostEstimate, estimate_topo_cost  # noqa: F401 - public here

__all__ = ["PROBE_NODES", "TYPICAL_STEPS", "FitCostEstimate", "measure_step", "estimate_fit_cost",
           "estimate_topo_cost", "TopoCostEstimate", "gpu_present", "runs_on_device"]

#: Size at which :func:`measure_step` times the step for larger graphs: the dashboard's node limit
#: without a GPU (a step there takes about a millisecond, so the probe costs a fraction of a second).
PROBE_NODES = 200
#: First-order steps (Adam steps and polishing evaluations) of fast-solver fits, fewest and most
#: measured: 1,433 (ER4 NV, d = 200) to 13,071 (ER4 EV, d = 200), with 8,493 at d = 500 NV
#: (``benchmarks/results/gpu_paired_cpu_d200_short.md``, ``gpu_paired_cpu_d500_nv_paper.md``).
TYPICAL_STEPS = (1_433, 13_071)

_LOCK = threading.Lock()


@dataclass(frozen=True)
class FitCostEstimate:
    """What one CoLiDE fit (one noise model, the fast solver) of ``n_nodes`` nodes would cost here.

    Attributes
    ----------
    n_nodes : int
        The size asked about.
    probe_nodes : int
        The size at which the step was measured (``min(n_nodes, PROBE_NODES)`` by default).
    probe_step_seconds : float
        Measured: seconds per step of the fast solver at ``probe_nodes`` nodes, on this machine.
    scale : float
        ``(n_nodes / probe_nodes) ** 3``: the O(d^3) law applied to the measured step (1 when
        measured at ``n_nodes``).
    step_seconds : float
        ``probe_step_seconds * scale``: the expected seconds per step at ``n_nodes``.
    steps : tuple of int
        ``(fewest, most)`` steps of fast fits measured (:data:`TYPICAL_STEPS`).
    low, high : float
        ``step_seconds * steps``: the expected wall seconds of a fit, fewest and most steps.
    budget_steps : int
        The schedule's whole iteration budget, ``sum(max_iter)``.
    budget_seconds : float
        ``step_seconds * budget_steps``: a fit that runs its whole budget (an upper bound).
    """

    n_nodes: int
    probe_nodes: int
    probe_step_seconds: float
    scale: float
    step_seconds: float
    steps: tuple
    low: float
    high: float
    budget_steps: int
    budget_seconds: float

    @property
    def extrapolated(self) -> bool:
        """True when the step was measured at fewer nodes and scaled by the O(d^3) law."""
        return self.probe_nodes != self.n_nodes


def _probe_covariance(n_nodes, variant, seed=0):
    """The population covariance of a fixed random ER2 SEM (weights +-[0.5, 2]; EV unit noise,
    NV variances U[0.5, 10]), ``(n_nodes, n_nodes)``: no samples are drawn."""
    from colide_core.data.simulate import simulate_dag, simulate_parameters

    B = simulate_dag(n_nodes, 2, "er", random_state=seed)
    W = simulate_parameters(B, random_state=seed)
    rng = np.random.default_rng(seed)
    var = np.ones(n_nodes) if variant == "ev" else rng.uniform(0.5, 10.0, n_nodes)
    A = np.linalg.inv(np.eye(n_nodes) - W)  # X = Z (I - W)^-1 for rows X, Z
    return A.T @ (var[:, None] * A)


def _check_int(value, name, low, high):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}.")
    return int(value)


#: Seconds a probe measurement is reused (issue 48, M-5b: a probe measured once per process under
#: load kept saying "about 2.9 s–26 s" for a 96 ms fit). After it, the probe is measured again and
#: the lower of the last two measurements is used: one slow probe under a load spike never decides.
PROBE_TTL_S = 300.0
_PROBES: dict = {}


def _measured(n_nodes, variant, steps, repeats, *, now=None):
    key = (n_nodes, variant, steps, repeats)
    now = time.monotonic() if now is None else now
    old = _PROBES.get(key)
    if old is not None and now - old[0] < PROBE_TTL_S:
        return old[1]
    fresh = _probe(n_nodes, variant, steps, repeats)
    best = fresh if old is None else min(fresh, old[2])
    if len(_PROBES) > 64:  # a handful of sizes in practice; never unbounded
        _PROBES.clear()
    _PROBES[key] = (now, best, fresh)
    return best


def _probe(n_nodes, variant, steps, repeats):
    from colide_core.exceptions import ConvergenceWarning
    from colide_core.solver._fast import fast_solve, warmup

    warmup()  # numba's kernels compiled or loaded before anything is timed
    cov = _probe_covariance(n_nodes, variant)
    best = math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for _ in range(repeats + 1):  # the first run loads the kernels for this size; the fastest is kept
            t0 = time.perf_counter()
            r = fast_solve(cov, variant=variant, mu_schedule=(1.0,), s_schedule=(1.0,), max_iter=(steps,),
                           checkpoint=steps, tol=0.0, switch_tol=0.0, polish=False)
            elapsed = time.perf_counter() - t0
            best = min(best, elapsed / max(int(r.n_iter), 1))
    return best


def measure_step(n_nodes=PROBE_NODES, variant="nv", *, steps=60, repeats=2):
    """Seconds per step of the fast solver at ``n_nodes`` nodes, measured now on this machine.

    Runs the fast solver's Adam phase (``fast_solve`` with one stage, no polishing: the default
    kernel, inverse schedule and certificate of a fit) for ``steps`` steps on a fixed random ER2
    covariance, ``repeats + 1`` times, and returns the fastest time per step (a load spike on a
    shared machine inflates one timing). Reused for :data:`PROBE_TTL_S` seconds per arguments (a
    fraction of a second at 200 nodes), then measured again; the lower of the last two
    measurements is returned, so neither a stale nor a single slow probe decides for long.

    Parameters
    ----------
    n_nodes : int, default=200
        Size of the probe problem, in [2, :data:`colide_core.defaults.MAX_NODES`].
    variant : {"ev", "nv", "ls"}, default="nv"
    steps : int, default=60
        Steps per timing, in [1, 10000] (about 60 of them are a few fast-solver chunks).
    repeats : int, default=2
        Timings kept after the first, in [1, 100].

    Returns
    -------
    float
        Seconds per step (> 0).

    Raises
    ------
    ValueError
        For an argument outside its range.
    """
    n_nodes = _check_int(n_nodes, "n_nodes", 2, defaults.MAX_NODES)
    if variant not in defaults.VARIANTS:
        raise ValueError(f"variant must be one of {defaults.VARIANTS}, got {variant!r}.")
    steps = _check_int(steps, "steps", 1, 10_000)
    repeats = _check_int(repeats, "repeats", 1, 100)
    with _LOCK:  # two sessions asking at once time one probe, not two competing ones
        return _measured(n_nodes, variant, steps, repeats)


def estimate_fit_cost(n_nodes, variant="nv", *, probe_nodes=PROBE_NODES, step_seconds=None,
                      max_iter=defaults.MAX_ITER):
    """What a fast-solver CoLiDE fit of ``n_nodes`` nodes would cost on this CPU.

    ``step_seconds`` (by default :func:`measure_step` at ``min(n_nodes, probe_nodes)`` nodes) is
    scaled to ``n_nodes`` by the O(d^3) law of a step, then multiplied by the steps fast fits
    take (:data:`TYPICAL_STEPS`, measured) and by the schedule's budget ``sum(max_iter)``.

    Parameters
    ----------
    n_nodes : int
        Nodes of the graph to fit, in [2, 100000].
    variant : {"ev", "nv", "ls"}, default="nv"
    probe_nodes : int, default=200
        Largest size at which the step is measured, in [2, :data:`colide_core.defaults.MAX_NODES`].
    step_seconds : float, optional
        Seconds per step at ``min(n_nodes, probe_nodes)`` nodes, when the caller measured it
        already; by default :func:`measure_step` measures it.
    max_iter : sequence of int, default=defaults.MAX_ITER
        The schedule whose whole budget gives :attr:`FitCostEstimate.budget_seconds`.

    Returns
    -------
    FitCostEstimate

    Raises
    ------
    ValueError
        For an argument outside its range, or a ``step_seconds`` that is not a finite number > 0.
    """
    n_nodes = _check_int(n_nodes, "n_nodes", 2, 100_000)
    probe = min(n_nodes, _check_int(probe_nodes, "probe_nodes", 2, defaults.MAX_NODES))
    if step_seconds is None:
        step_seconds = measure_step(probe, variant)
    step_seconds = float(step_seconds)
    if not (math.isfinite(step_seconds) and step_seconds > 0):
        raise ValueError(f"step_seconds must be a finite number > 0, got {step_seconds!r}.")
    budget = int(sum(int(t) for t in max_iter))
    if budget < 1:
        raise ValueError(f"max_iter must hold a positive budget, got {max_iter!r}.")
    scale = (n_nodes / probe) ** 3
    per_step = step_seconds * scale
    return FitCostEstimate(n_nodes=n_nodes, probe_nodes=probe, probe_step_seconds=step_seconds, scale=scale,
                           step_seconds=per_step, steps=tuple(TYPICAL_STEPS), low=per_step * TYPICAL_STEPS[0],
                           high=per_step * TYPICAL_STEPS[1], budget_steps=budget, budget_seconds=per_step * budget)


def gpu_present() -> bool:
    """Whether this process can run ``device="gpu"`` (JAX installed and seeing a GPU).

    The public face of :func:`colide_core.solver._jax.gpu_present`: probed once per process, on
    the first call (importing JAX then takes about a second).

    Returns
    -------
    bool
    """
    from colide_core.solver import _jax

    return _jax.gpu_present()


def runs_on_device(solver, device, n_nodes=None) -> bool:
    """Whether a fit with ``solver`` on ``device`` runs on the JAX backend, so that no CPU estimate applies.

    The public face of :func:`colide_core.solver._jax.runs_on_device` (the rule of
    ``CoLiDE(device=...)``): :func:`estimate_fit_cost` measures the CPU solvers' step, which says
    nothing of a GPU's (docs/gpu.md, "The whole loop on a GPU": 14.8 s at d = 1000 on an H200,
    against minutes on one CPU thread).

    Parameters
    ----------
    solver : {"auto", "fast", "adam", "topo"}
    device : {"cpu", "gpu", "auto", "jax-cpu"}
    n_nodes : int, optional

    Returns
    -------
    bool
    """
    from colide_core.solver import _jax

    return _jax.runs_on_device(solver, device, n_nodes)
