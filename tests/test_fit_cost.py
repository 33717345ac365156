"""What a fit at a size the dashboard refuses would cost (colide_core.solver.cost), the GPU probe
(colide_core.solver._jax.gpu_present) and the dashboard's node limit built on them (issue 33).

The cost is a measured step scaled by arithmetic; the tests check the arithmetic on the
measurement (the step itself is whatever this machine gives: no timing is asserted).
"""
import importlib.util
import math

import pytest

from colide_core import defaults
from colide_core.solver import _jax, cost
from colide_core.solver.cost import TYPICAL_STEPS, estimate_fit_cost, measure_step
from dashboard import data as ddata


def test_a_given_step_is_scaled_by_the_cube_law_and_the_measured_steps():
    # 400 nodes from a 2 ms step at 200: (400 / 200)^3 = 8, so 16 ms a step;
    # 1,433 and 13,071 steps give 22.928 s and 209.136 s; the paper's 130,000 steps 2,080 s.
    est = estimate_fit_cost(400, step_seconds=2e-3)
    assert (est.probe_nodes, est.scale, est.extrapolated) == (200, 8.0, True)
    assert est.step_seconds == pytest.approx(0.016, rel=1e-12)
    assert (est.low, est.high) == (pytest.approx(22.928, rel=1e-12), pytest.approx(209.136, rel=1e-12))
    assert est.budget_steps == 130_000 and est.budget_seconds == pytest.approx(2080.0, rel=1e-12)
    assert est.steps == TYPICAL_STEPS
    # a shorter schedule only changes the budget: (2000 + 2000 + 2000 + 7000) * 16 ms = 208 s
    assert estimate_fit_cost(400, step_seconds=2e-3, max_iter=(2000, 2000, 2000, 7000)).budget_seconds == \
        pytest.approx(208.0, rel=1e-12)


def test_the_estimate_is_built_from_its_measurement():
    measured = measure_step(20, "nv", steps=20, repeats=1)
    assert math.isfinite(measured) and measured > 0
    assert measure_step(20, "nv", steps=20, repeats=1) == measured  # measured once per process
    # the default estimate measures at min(n_nodes, probe_nodes) with measure_step's defaults
    est = estimate_fit_cost(60, "nv", probe_nodes=20)
    assert est.probe_step_seconds == measure_step(20, "nv")
    assert est.scale == 27.0 and est.step_seconds == pytest.approx(27.0 * est.probe_step_seconds, rel=1e-12)
    assert est.low == pytest.approx(TYPICAL_STEPS[0] * est.step_seconds, rel=1e-12)
    # at or below the probe size the step is measured at the size itself: nothing extrapolated
    small = estimate_fit_cost(12, "ev", probe_nodes=20)
    assert (small.probe_nodes, small.scale, small.extrapolated) == (12, 1.0, False)
    assert small.step_seconds == measure_step(12, "ev")


@pytest.mark.parametrize("call", [
    lambda: measure_step(True), lambda: measure_step(1), lambda: measure_step(10, "xx"),
    lambda: measure_step(10, steps=0), lambda: estimate_fit_cost(300, step_seconds=0.0),
    lambda: estimate_fit_cost(300, step_seconds=float("nan")), lambda: estimate_fit_cost(2.5, step_seconds=1.0),
    lambda: estimate_fit_cost(300, step_seconds=1.0, max_iter=(0,)),
])
def test_bad_arguments_are_refused(call):
    with pytest.raises(ValueError):
        call()


def test_gpu_probe_runs_once_and_imports_nothing_without_jax(monkeypatch):
    monkeypatch.setattr(_jax, "_GPU_PROBE", {})
    looked = []

    def no_jax(name, *args):
        looked.append(name)
        return None

    monkeypatch.setattr(importlib.util, "find_spec", no_jax)
    monkeypatch.setattr(_jax, "_import_jax", lambda: pytest.fail("JAX must not be imported when it is absent"))
    assert _jax.gpu_present() is False and _jax.gpu_present() is False
    assert looked == ["jax"]  # probed once per process


def test_gpu_probe_agrees_with_the_device_jax_resolves(monkeypatch):
    monkeypatch.setattr(_jax, "_GPU_PROBE", {})
    jax = _jax._import_jax()
    # asked of JAX itself, not through the module's own helper (that comparison was a tautology)
    expected = any(d.platform in ("gpu", "cuda", "rocm") for d in jax.devices()) if jax is not None else False
    assert _jax.gpu_present() is expected


def test_node_limit_probes_only_above_the_cpu_limit(monkeypatch):
    monkeypatch.setattr(_jax, "gpu_present", lambda: pytest.fail("probed for a size the CPU takes"))
    assert ddata.node_limit(200) == 200 and ddata.fit_device(200) == {}
    monkeypatch.setattr(_jax, "gpu_present", lambda: True)
    assert ddata.node_limit(201) == defaults.MAX_NODES == 2000 and ddata.fit_device(201) == {"device": "auto"}
    monkeypatch.setattr(_jax, "gpu_present", lambda: False)
    assert ddata.node_limit(201) == 200 and ddata.node_limit() == 200
    # "auto" takes the GPU from AUTO_GPU_MIN_NODES nodes up: every size above the CPU limit, so the
    # dashboard's "auto" means the device wherever it can run
    assert ddata.node_limit(200) + 1 >= defaults.AUTO_GPU_MIN_NODES


def test_the_refusal_states_the_cost_computed_from_the_measured_step(monkeypatch):
    monkeypatch.setattr(cost, "measure_step", lambda n_nodes, variant: 1e-3 if n_nodes == 200 else pytest.fail())
    text = ddata.too_large_message(400, "nv")
    # 1 ms at 200 nodes x 8 = 8 ms a step; 1,433 steps 11.464 s, 13,071 steps 104.568 s (1.7 min),
    # 130,000 steps 1,040 s (17 min)
    for part in ("up to 200 nodes", "2,000 nodes", "CoLiDE-NV fit of 400 nodes", "about 11 s to 1.7 min",
                 "up to 17 min", "130,000 steps", "measured now at 200 nodes took 1 ms", "(×8)"):
        assert part in text, (part, text)


def test_the_probe_expires_and_one_slow_probe_does_not_decide(monkeypatch):
    # Issue 48, M-5b: the probe was measured once per process (an lru_cache), so a measurement made
    # under load stayed for the server's life. Now it is reused for PROBE_TTL_S, then measured
    # again, and the lower of the last two measurements is used.
    from colide_core.solver import cost

    timings = iter([0.004, 0.030, 0.002])           # s per step: normal, a load spike, quiet again
    monkeypatch.setattr(cost, "_probe", lambda *a: next(timings))
    monkeypatch.setattr(cost, "_PROBES", {})
    args = (30, "nv", 60, 2)
    assert cost._measured(*args, now=0.0) == 0.004
    assert cost._measured(*args, now=cost.PROBE_TTL_S - 1) == 0.004            # reused, not measured
    assert cost._measured(*args, now=cost.PROBE_TTL_S + 1) == 0.004            # the spike: min(0.030, 0.004)
    assert cost._measured(*args, now=2 * cost.PROBE_TTL_S + 2) == 0.002        # measured again
