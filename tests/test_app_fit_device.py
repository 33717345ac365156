"""AppTest: every page's fits of data above the CPU limit run on the GPU, by one rule (issue 50).

:func:`dashboard.infra.limits.fit_device` decides where the dashboard's fits run: ``device="auto"``
above the CPU limit (data accepted only because a GPU is present: the GPU for what it can run,
TOPO and several conditions on the CPU), the CPU solvers at or below it. These tests shrink the CPU limit to 10 nodes (``limits._cpu_limit``) so that 12-node data
stand for 2,000 nodes, replace the GPU probe (``colide_core.solver._jax.gpu_present``) as
``tests/test_app_gpu_limit.py`` does, and check what each page's cached fit function receives:

* on a "GPU" the Check page's checks and λ path, Explorer's λ path, Edge confidence's bootstrap and
  stability selection, Predict's ranking and Learn's live fits get ``device="auto"`` in their
  cache keys; Playback's recording too; Compare stays on the CPU and stops at the CPU limit;
* Explorer's λ path and Edge confidence's bootstrap really run with JAX on the CPU standing in
  for the GPU (``_jax.resolve_device`` replaced in this process only): the device's fits run in
  the job's thread, never in a worker process (a worker would not have the stand-in and would
  fail with DeviceUnavailableError; docs/gpu.md, "The dashboard on a GPU");
* at or below the limit nothing gets a device, and neither the probe nor JAX is asked for;
* the device never appears in the page's URL.
"""
import os
import threading

import numpy as np
import pandas as pd
import pytest

from colide_core import defaults
from colide_core.solver import _jax
from dashboard.infra import limits, workers
from tests._schedules import TINY

pytestmark = pytest.mark.usefixtures("fresh_caches")

D = 12  #: nodes of the test data: above the shrunk CPU limit (10), below the real one (200)


def _dataset():
    from dashboard.data import make_dataset

    rng = np.random.default_rng(3)
    n = 300
    X = np.zeros((n, D))
    for j in range(D):  # a chain with unit noise: a clear graph for a short schedule
        X[:, j] = rng.standard_normal(n) + (0.8 * X[:, j - 1] if j else 0.0)
    B = np.diag(np.ones(D - 1), 1)
    names = [f"x{j}" for j in range(D)]
    return make_dataset("twelve", pd.DataFrame(X, columns=names), B_true=B, source="upload")


@pytest.fixture
def gpu(monkeypatch):
    """A GPU server whose CPU limit is 10 nodes: 12-node data are fitted on the device."""
    monkeypatch.setattr(limits, "_cpu_limit", lambda: 10)
    monkeypatch.setattr(defaults, "AUTO_GPU_MIN_NODES", 10)  # "auto" counts 12 nodes as large, as the limit does
    monkeypatch.setattr(_jax, "gpu_present", lambda: True)


@pytest.fixture
def cpu_only(monkeypatch):
    """A CPU-only server at its real limit (200): 12-node data never ask for the GPU nor JAX."""
    monkeypatch.setattr(_jax, "gpu_present", lambda: pytest.fail("probed for a size the CPU takes"))
    monkeypatch.setattr(_jax, "_import_jax", lambda: pytest.fail("JAX imported for a size the CPU takes"))


@pytest.fixture
def jax_cpu_for_gpu(monkeypatch):
    """``device="auto"`` (and ``"gpu"``) runs on JAX's CPU device, in this process only; each call is recorded
    with the thread and process it ran in."""
    real = _jax.resolve_device
    calls = []

    def stand_in(device):
        calls.append((device, threading.current_thread().name, os.getpid()))
        return real("jax-cpu") if device in ("gpu", "auto") else real(device)

    monkeypatch.setattr(_jax, "resolve_device", stand_in)
    monkeypatch.setattr(workers, "ENABLED", True)  # worker processes on: the device's fits must not go there
    return calls


def _fitted(ds, variant="nv"):
    """A CPU fit of ``ds`` at the tiny schedule, recorded as Learn's Run records it (its params with
    the device the server's rule gives the data)."""
    import dataclasses

    from dashboard.fitting import fit_dataset, solver_params

    res = fit_dataset(ds, solver_params(variant, 0.05, dict(TINY)))
    return dataclasses.replace(res, params=tuple(sorted({**dict(res.params), **limits.fit_device(ds.shape[1])}.items())))


def _app(new_app, ds, results=True):
    from dashboard.infra import state

    at = new_app()
    at.run()
    at.session_state[state.SOLVER_OVERRIDES] = dict(TINY)
    at.session_state[state.DATASET] = ds
    at.session_state[state.RESULTS] = {"nv": _fitted(ds)} if results else {}
    at.session_state["learn_variant"] = "NV"
    at.session_state["learn_lambda1"] = 0.05
    return at


def _no_device_in_url(at):
    assert all("device" not in k and "gpu" not in str(v) for k, v in at.query_params.items()), dict(at.query_params)


# --- the rule --------------------------------------------------------------------------------------

def test_the_rule_sets_replaces_and_drops_the_device(monkeypatch):
    monkeypatch.setattr(limits, "_cpu_limit", lambda: 10)
    assert limits.with_fit_device({"lambda1": 0.1}, 11) == {"lambda1": 0.1, "device": "auto"}
    assert limits.with_fit_device({"lambda1": 0.1, "device": "gpu"}, 10) == {"lambda1": 0.1}
    assert limits.with_fit_device((("variant", "ev"), ("device", "jax-cpu")), 11) == (("device", "auto"),
                                                                                      ("variant", "ev"))
    assert limits.cpu_node_limit() == 10


def test_a_device_computation_stays_in_the_jobs_thread(monkeypatch):
    import colide_core
    from dashboard.infra import jobs
    from dashboard.infra.slots import ComputeSlots
    from tests._device_funcs import pid_on
    from tests._waits import BOUND, until

    monkeypatch.setattr(workers, "ENABLED", True)
    ran = {}
    for device in ("cpu", "gpu"):
        job = jobs.Job(lambda job, device=device: workers.in_worker(pid_on, device=device), device,
                       slots=ComputeSlots(2, reserved=0), owner=None, budget_s=None).start()
        assert job.wait(BOUND) and job.error is None, job.error
        ran[device] = job.result
    assert ran["cpu"] != os.getpid()  # the CPU's computation: in a worker process
    assert ran["gpu"] == os.getpid()  # the device's: in the job's thread, in the server's process
    until(lambda: workers.live_workers() == 0, "every worker ended")
    assert workers.on_device((colide_core.CoLiDE(device="gpu"),), {})
    assert workers.on_device((), {"estimator": colide_core.CoLiDE(device="jax-cpu")})
    assert not workers.on_device((colide_core.CoLiDE(),), {"estimator": colide_core.CoLiDE(device="cpu")})


# --- the pages on a "GPU" --------------------------------------------------------------------------

def test_check_pages_checks_and_path_get_the_device(new_app, gpu, monkeypatch):
    from dashboard import checks as dc

    ds = _dataset()
    seen = {}
    real_checks = dc.run_checks_cached

    def checks_spy(data_key, params, *args, **kwargs):
        seen["checks"] = dict(params).get("device")
        return real_checks(data_key, tuple(p for p in params if p[0] != "device"), *args, **kwargs)

    def path_spy(data_key, variant, overrides, X, _design=None, _callback=None):
        seen["path"] = dict(overrides).get("device")
        raise ValueError("recorded by the test")

    monkeypatch.setattr(dc, "run_checks_cached", checks_spy)
    monkeypatch.setattr(dc, "path_cached", path_spy)
    at = _app(new_app, ds)
    at.session_state["check_n_random"] = 0
    at.switch_page("pages/check.py").run()
    assert not at.exception, at.exception
    at.button(key="check_path_run").click().run()
    assert not at.exception, at.exception
    assert seen == {"checks": "auto", "path": "auto"}


def test_a_bootstrap_made_by_the_rule_belongs_to_a_loaded_fit(monkeypatch):
    # a manifest's fit has no device; the Check page compares the bootstrap with the fit's settings
    # under the rule (pages/check.py, fit_params), so the device alone never detaches it
    from dashboard import checks as dc
    from dashboard.fitting import solver_params

    monkeypatch.setattr(limits, "_cpu_limit", lambda: 10)
    loaded = solver_params("nv", 0.05, dict(TINY))
    boot = {"key": ("k", limits.with_fit_device(solver_params("nv", 0.05, {**TINY, "threshold": 0.3}), D), 2, 0)}
    assert dc.bootstrap_mismatch(boot, "k", loaded) == "its device differs from this fit's"
    assert dc.bootstrap_mismatch(boot, "k", limits.with_fit_device(loaded, D)) == ""


def test_explorer_path_runs_on_the_device_in_the_jobs_thread(new_app, gpu, jax_cpu_for_gpu):
    from dashboard.infra.state import trust as ts

    at = _app(new_app, _dataset(), results=False)
    at.session_state["exp_n_lambdas"] = 2
    at.session_state["exp_warm"] = False
    at.switch_page("pages/explorer.py").run()
    assert not at.exception, at.exception
    at.button(key="exp_run").click().run()
    assert not at.exception, at.exception
    stored = at.session_state[ts.PATH_RESULT]
    assert stored is not None, [e.value for e in at.error]
    assert ("device", "auto") in stored["key"][-1]  # the job's key, as its cache, has the device
    assert stored["path"].lambdas.size == 2 and np.isfinite(stored["path"].W).all()
    assert jax_cpu_for_gpu and {c[0] for c in jax_cpu_for_gpu} == {"auto"}
    assert {c[2] for c in jax_cpu_for_gpu} == {os.getpid()}  # never in a worker process
    assert all(c[1] != threading.main_thread().name for c in jax_cpu_for_gpu)  # in the job's thread
    _no_device_in_url(at)


def test_edge_confidence_bootstrap_runs_on_the_device_one_resample_at_a_time(new_app, gpu, jax_cpu_for_gpu,
                                                                          monkeypatch):
    from colide_core.evaluation import stability
    from dashboard.infra.state import trust as ts

    asked = []
    real = stability.bootstrap_edges

    def boot_spy(X, estimator, *args, n_jobs=1, **kwargs):  # what the page asks: workers, estimator
        asked.append((n_jobs, estimator.device))
        return real(X, estimator, *args, n_jobs=n_jobs, **kwargs)

    monkeypatch.setattr(stability, "bootstrap_edges", boot_spy)
    at = _app(new_app, _dataset())
    at.switch_page("pages/edge_confidence.py").run()
    at.session_state["boot_n"] = 2
    at.session_state["boot_jobs"] = 2  # asked for two workers: the GPU's fits take one
    at.run()
    assert not at.exception, at.exception
    at.button(key="boot_run").click().run()
    assert not at.exception, at.exception
    stored = at.session_state[ts.BOOT_RESULT]
    assert stored is not None, [e.value for e in at.error]
    assert ("device", "auto") in stored["key"][1] and stored["result"].n_ok == 2
    assert asked == [(1, "auto")]
    assert {c[0] for c in jax_cpu_for_gpu} == {"auto"} and {c[2] for c in jax_cpu_for_gpu} == {os.getpid()}


def test_stability_selection_gets_the_device(new_app, gpu, monkeypatch):
    from colide_core.evaluation import stability

    seen = []

    def stab_spy(X, estimator, lambdas, *args, n_jobs=1, **kwargs):
        seen.append((estimator.device, n_jobs))
        raise ValueError("recorded by the test")

    monkeypatch.setattr(stability, "stability_selection", stab_spy)
    at = _app(new_app, _dataset())
    at.switch_page("pages/edge_confidence.py").run()
    at.session_state["stab_lambdas"] = [0.05]
    at.session_state["boot_jobs"] = 2
    at.run()
    at.button(key="stab_run").click().run()
    assert not at.exception, at.exception
    assert seen == [("auto", 1)]


def test_predict_ranking_gets_the_device(new_app, gpu, monkeypatch):
    from colide_core.evaluation import planning

    seen = []

    def rank_spy(X, *args, estimator=None, **kwargs):
        seen.append(estimator.device)
        raise ValueError("recorded by the test")

    monkeypatch.setattr(planning, "rank_interventions", rank_spy)
    at = _app(new_app, _dataset())
    at.switch_page("pages/predict.py").run()
    assert not at.exception, at.exception
    at.number_input(key="plan_n_boot").set_value(2)
    at.button(key="plan_run").click().run()
    assert not at.exception, at.exception
    assert seen == ["auto"]
    _no_device_in_url(at)


def test_learn_live_fits_and_playback_get_the_device(new_app, gpu, monkeypatch):
    from dashboard import fitting, playback

    seen = []

    def fit_spy(data_key, params, _X, _callback=None, _design=None):
        seen.append(dict(params).get("device"))
        raise ValueError("recorded by the test")

    fit_spy.clear = fitting.fit_colide.clear  # the cache fixture empties it whatever the order of teardown
    res = _fitted(_dataset())
    monkeypatch.setattr(fitting, "fit_colide", fit_spy)
    ds = _dataset()
    at = _app(new_app, ds, results=False)
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    assert seen and set(seen) == {"auto"}  # the live fits at the session's λ
    _no_device_in_url(at)
    assert dict(playback._record_params(res, D))["device"] == "auto"


def test_compare_stays_within_the_cpu_limit(new_app, gpu):
    at = new_app().run()
    at.switch_page("pages/compare.py").run()
    at.session_state["sim_d"] = D
    at.run()
    assert not at.exception, at.exception
    assert any("Comparisons run on the CPU, up to 10 nodes; these data have 12" in w.value for w in at.warning)
    assert at.button(key="cmp_run").disabled


# --- at or below the CPU limit: as before ----------------------------------------------------------

def test_below_the_limit_no_page_asks_for_a_device_nor_jax(new_app, cpu_only, monkeypatch):
    from colide_core.evaluation import planning, stability
    from dashboard import checks as dc
    from dashboard import fitting, playback
    from colide_core.solver import path

    seen = {}

    def spy(name, device_of):
        def record(*args, **kwargs):
            seen.setdefault(name, []).append(device_of(args, kwargs))
            raise ValueError("recorded by the test")
        return record

    real_checks = dc.run_checks_cached

    def checks_spy(data_key, params, *args, **kwargs):
        seen.setdefault("checks", []).append(dict(params).get("device"))
        return real_checks(data_key, params, *args, **kwargs)

    monkeypatch.setattr(dc, "run_checks_cached", checks_spy)
    monkeypatch.setattr(dc, "path_cached", spy("check path", lambda a, k: dict(a[2]).get("device")))
    monkeypatch.setattr(path, "lambda_path", spy("explorer", lambda a, k: k.get("device")))
    monkeypatch.setattr(stability, "bootstrap_edges", spy("bootstrap", lambda a, k: a[1].device))
    monkeypatch.setattr(planning, "rank_interventions", spy("ranking", lambda a, k: k["estimator"].device))
    ds = _dataset()
    at = _app(new_app, ds)
    at.session_state["check_n_random"] = 0
    at.switch_page("pages/check.py").run()
    at.button(key="check_path_run").click().run()
    at.session_state["exp_n_lambdas"] = 2
    at.switch_page("pages/explorer.py").run()
    at.button(key="exp_run").click().run()
    at.switch_page("pages/edge_confidence.py").run()
    at.session_state["boot_n"] = 2
    at.session_state["boot_jobs"] = 2
    at.run()
    at.button(key="boot_run").click().run()
    at.switch_page("pages/predict.py").run()
    at.number_input(key="plan_n_boot").set_value(2)
    at.button(key="plan_run").click().run()
    assert not at.exception, at.exception
    assert seen == {"checks": [None], "check path": [None], "explorer": [None], "bootstrap": ["cpu"],
                    "ranking": ["cpu"]}, seen
    res = _fitted(ds)
    live_spy = spy("live", lambda a, k: dict(a[1]).get("device"))
    live_spy.clear = fitting.fit_colide.clear
    monkeypatch.setattr(fitting, "fit_colide", live_spy)
    at.session_state["fit_results"] = {}
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    assert seen["live"] and set(seen["live"]) == {None}
    assert "device" not in dict(playback._record_params(res, D))


# --- what a fit on the device is said to cost ------------------------------------------------------

def test_no_cpu_estimate_is_given_for_a_fit_on_the_device(gpu):
    # The CPU's step (cost.estimate_fit_cost) says nothing of the GPU's: on an H200 d = 1000 took
    # 14.8 s where the CPU's cube law gives minutes (docs/gpu.md). Above the CPU limit the fit runs on
    # the device, so the estimate is withheld; TOPO runs on the CPU under "auto" and keeps its own.
    from colide_core.solver.cost import runs_on_device
    from dashboard.fitting import expected_fit_seconds

    ds = _dataset()
    assert runs_on_device("fast", "auto", D) and not runs_on_device("topo", "auto", D)
    assert not runs_on_device("fast", "cpu", D) and runs_on_device("fast", "gpu", D)
    assert expected_fit_seconds(ds, limits.with_fit_device(dict(TINY), D)) is None
    est = expected_fit_seconds(ds, dict(TINY))  # the same data fitted on the CPU: the measured estimate
    assert est is not None and 0 < est[0] <= est[1] and "measured on this machine" in est[2]


def test_auto_below_its_size_never_probes_for_a_gpu(monkeypatch):
    from colide_core.solver.cost import runs_on_device

    monkeypatch.setattr(_jax, "gpu_present", lambda: pytest.fail("probed below AUTO_GPU_MIN_NODES"))
    assert not runs_on_device("fast", "auto", defaults.AUTO_GPU_MIN_NODES - 1)
    assert not runs_on_device("auto", "cpu", 10_000)


@pytest.mark.parametrize("on_gpu", [True, False])
def test_learn_states_no_cpu_time_for_a_device_fit(new_app, monkeypatch, on_gpu):
    # a budget above the live bound: not live, so the page says what Run would cost
    from colide_core.defaults import LIVE_MAX_ITER_TOTAL
    from dashboard.infra import state

    if on_gpu:
        monkeypatch.setattr(limits, "_cpu_limit", lambda: 10)
        monkeypatch.setattr(defaults, "AUTO_GPU_MIN_NODES", 10)
        monkeypatch.setattr(_jax, "gpu_present", lambda: True)
    ds = _dataset()
    at = _app(new_app, ds, results=False)
    at.session_state[state.SOLVER_OVERRIDES] = {"max_iter": (LIVE_MAX_ITER_TOTAL + 1,)}
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "Press **Run**" in captions
    assert ("A fit here: about" in captions) is (not on_gpu)
    assert ("run on the GPU" in captions) is on_gpu
