"""Tests of dashboard.fitting: caching on (data hash, params), Stop keeps an uncached partial result."""
import time

import numpy as np
import pandas as pd
import pytest

from dashboard.data import make_dataset, sachs_dataset
from dashboard.fitting import FitJob, FitResult, FitStopped, fit_colide, solver_params

from tests._schedules import TINY as QUICK  # noqa: E402 - the suite's short schedule

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _chain_data(n=400, seed=0):
    # x0 -> x1 -> x2 with weights 1.5 and -1.0, unit Gaussian noise.
    rng = np.random.default_rng(seed)
    x0 = rng.normal(size=n)
    x1 = 1.5 * x0 + rng.normal(size=n)
    x2 = -1.0 * x1 + rng.normal(size=n)
    return make_dataset("chain", pd.DataFrame({"x0": x0, "x1": x1, "x2": x2}), source="simulated")


def test_fit_is_cached_on_hash_and_params(solver_calls):
    ds = _chain_data()
    params = solver_params("nv", 0.05, QUICK)
    before = len(solver_calls)
    r1 = fit_colide(ds.key, params, ds.X)
    assert len(solver_calls) == before + 1
    r2 = fit_colide(ds.key, params, ds.X)          # same key: served from the cache
    assert len(solver_calls) == before + 1
    np.testing.assert_array_equal(r1.W, r2.W)
    assert r1.variant == "nv" and r1.W.shape == (3, 3) and np.shape(r1.sigma) == (3,)
    assert r1.node_names == ["x0", "x1", "x2"] and not r1.stopped
    fit_colide(ds.key, solver_params("nv", 0.1, QUICK), ds.X)   # new lambda: a new solve
    assert len(solver_calls) == before + 2
    ev = fit_colide(ds.key, solver_params("ev", 0.05, QUICK), ds.X)
    assert np.ndim(ev.sigma) == 0 and ev.sigma_per_node.shape == (3,)


def test_stop_keeps_partial_result_and_never_caches_it(solver_calls):
    ds = sachs_dataset()
    # The paper-faithful solver, so the solve lasts long enough to be stopped mid-way:
    # 130 000 iterations at most, checkpoints every 1000.
    params = solver_params("nv", 0.05, {"solver": "adam"})
    job = FitJob(ds, [params]).start()
    deadline = time.monotonic() + 60
    while job.fraction == 0.0 and not job.done and time.monotonic() < deadline:
        time.sleep(0.01)
    job.request_stop()
    assert job.wait(60)
    assert job.errors == []
    (res,) = job.results
    assert res.stopped and res.label == "NV (stopped, partial)"
    assert 0 < res.n_iter < 130_000 and 0.0 < job.fraction <= 1.0
    # The partial fit was not cached: the same key runs the solver again (and stops at once).
    before = len(solver_calls)
    with pytest.raises(FitStopped) as info:
        fit_colide(ds.key, params, ds.X, lambda stage, it, obj: True)
    assert len(solver_calls) == before + 1
    assert info.value.result.n_iter == 1000          # the first checkpoint


def test_job_reports_solver_errors_without_raising():
    X = pd.DataFrame({"a": np.arange(20.0), "b": np.ones(20)})   # b is constant
    ds = make_dataset("bad", X)
    job = FitJob(ds, [solver_params("ev", 0.05, QUICK), solver_params("nv", 0.05, QUICK)]).start()
    assert job.wait(60)
    assert job.results == []
    assert len(job.errors) == 2 and all("b" in e and "failed" in e for e in job.errors)
    assert job.errors[0].startswith("EV:") and job.errors[1].startswith("NV:")


def test_the_fit_record_is_the_solvers_record():
    # One fit record: FitResult keeps the estimator's SolverResult and reads W, sigma, ... from it.
    import colide_core

    ds = _chain_data()
    params = solver_params("nv", 0.05, QUICK)
    res = fit_colide(ds.key, params, ds.X)
    model = colide_core.CoLiDE(**dict(params)).fit(ds.X)
    assert isinstance(res.result, colide_core.SolverResult)
    np.testing.assert_array_equal(res.W, model.result_.W)
    np.testing.assert_array_equal(res.sigma, model.result_.sigma)
    assert res.W is res.result.W and res.sigma is res.result.sigma
    assert (res.n_iter, res.converged, res.stopped) == (model.n_iter_, model.converged_, model.stopped_)
    assert res.objective == model.result_.objective
    assert res.objective_trace == tuple(model.history_["objective"]) and len(res.objective_trace) >= 4
    assert res.fit_time > 0 and res.node_names == ["x0", "x1", "x2"] and res.label == "NV"


def test_a_path_cell_becomes_a_fit_record():
    from colide_core.solver.path import lambda_path

    ds = _chain_data()
    path = lambda_path(ds.X, [0.01, 0.1], (0.3,), "ev", **QUICK)
    params = solver_params("ev", 0.1, QUICK)
    res = FitResult.from_path(path, 1, params, ds.key, ds.node_names)
    np.testing.assert_array_equal(res.W, path.W[1])
    assert res.sigma == path.sigma[1] and np.ndim(res.sigma) == 0
    assert (res.n_iter, res.objective, res.converged, res.stopped) == \
        (int(path.n_iter[1]), float(path.objective[1]), bool(path.converged[1]), False)
    assert res.fit_time == float(path.fit_time[1]) and res.objective_trace == ()
    assert res.variant == "ev" and res.params == params and res.data_key == ds.key


def test_a_bootstrap_belongs_to_a_fit_only_when_everything_that_shapes_w_matches():
    # Issue 28, point 2: an unconstrained bootstrap was attached to a constrained fit on variant and
    # λ alone (the required edge then showed frequency 0). Now data, noise model, λ, solver,
    # schedule and prior knowledge must all match, and a mismatch is named.
    from types import SimpleNamespace

    import numpy as np

    from dashboard.checks import bootstrap_frequency, bootstrap_mismatch
    from dashboard.fitting import solver_params

    plain = solver_params("nv", 0.05, {"threshold": 0.3})
    constrained = solver_params("nv", 0.05, {"required": (("Raf", "Mek"),)})
    boot = {"key": ("data-1", plain, 100, 0), "result": SimpleNamespace(frequency=np.eye(2), n_ok=100)}
    assert bootstrap_mismatch(None, "data-1", plain) is None
    assert bootstrap_mismatch(boot, "data-1", solver_params("nv", 0.05)) == ""  # the threshold is not the fit
    assert bootstrap_frequency(boot, "data-1", solver_params("nv", 0.05))[0].shape == (2, 2)
    assert bootstrap_mismatch(boot, "data-1", constrained) == "its prior knowledge differs from this fit's"
    assert bootstrap_frequency(boot, "data-1", constrained) is None
    assert bootstrap_mismatch(boot, "data-2", plain) == "it was run on other data"
    assert bootstrap_mismatch(boot, "data-1", solver_params("ev", 0.1, {"solver": "adam"})) == \
        "its variant, λ, solver differ from this fit's"
    assert bootstrap_mismatch(boot, "data-1", solver_params("nv", 0.05, {"solver": "auto"})) == ""  # the default


def test_topo_cost_fits_nothing_and_is_made_once_per_dataset_and_model(monkeypatch):
    # Issue 42 (high): the Learn page's TOPO estimate ran a whole fast fit in the page's thread on
    # every rerun and every λ (12.5 s at d = 200, no Stop). It now fits nothing: the start's cost
    # comes from the measured step model, and the estimate is cached on (data, noise model).
    import colide_core
    from colide_core.solver import cost
    from dashboard.fitting import topo_cost

    monkeypatch.setattr(colide_core.CoLiDE, "fit", lambda *a, **k: pytest.fail("the estimate fitted"))
    calls = []
    real = cost.estimate_topo_cost
    monkeypatch.setattr(cost, "estimate_topo_cost", lambda *a, **k: calls.append(k) or real(*a, **k))
    topo_cost.clear()
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(200, 12)), columns=[f"v{j}" for j in range(12)])
    first = topo_cost("key-12", "nv", X)
    again = topo_cost("key-12", "nv", X)
    assert first is not None and again == first and len(calls) == 1
    assert first.seconds >= calls[0]["start_seconds"] > 0
