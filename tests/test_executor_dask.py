"""Tests for colide_core.run.executor on joblib and on a real Dask LocalCluster (2 worker processes)."""
import logging
import math
import os
import signal
import socket

import dask
import distributed
import numpy as np
import pytest

from colide_core.run.executor import (
    TIMING_COLUMNS,
    ResultStore,
    data_task,
    make_task,
    run_sweep,
    synthetic_task,
    task_key,
)

pytestmark = pytest.mark.filterwarnings("ignore::colide_core.ConvergenceWarning")

SHORT = {"max_iter": [500, 500, 500, 1000]}


def _tasks(n_seeds=2):
    """2 methods x 2 noise settings x n_seeds seeds on 5-node ER2 graphs, 200 samples."""
    out = []
    for method in ("CoLiDE-EV", "CoLiDE-NV"):
        for variance in ("ev", "nv"):
            for seed in range(n_seeds):
                out.append(make_task(synthetic_task, method=method, params=SHORT,
                                     dataset={"n_nodes": 5, "n_samples": 200, "variance": variance},
                                     seed=seed))
    return out


def _comparable(rows):
    """Rows keyed by task key, without wall-time columns; NaN replaced so == works."""
    out = {}
    for r in rows:
        clean = {k: ("nan" if isinstance(v, float) and math.isnan(v) else v)
                 for k, v in r.items() if k not in TIMING_COLUMNS}
        out[r["key"]] = clean
    return out


@pytest.fixture(scope="module")
def reference():
    """The sweep run locally with joblib: the ground truth for the Dask runs."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("DASK_SCHEDULER_ADDRESS", raising=False)  # a cluster set in the shell must not be used
        res = run_sweep(_tasks(), n_jobs=1)
    assert res.backend == "joblib" and res.n_computed == 8
    assert all(r["status"] == "ok" for r in res.rows)
    return _comparable(res.rows)


@pytest.fixture(scope="module")
def cluster():
    """A real 2-process LocalCluster; allowed-failures=0 so a killed worker's task surfaces
    as KilledWorker and exercises the executor's own resubmission."""
    with dask.config.set({"distributed.scheduler.allowed-failures": 0,
                          "distributed.comm.timeouts.connect": "20s"}):
        cl = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=logging.ERROR)
        client = distributed.Client(cl, timeout="30s")
        try:
            client.wait_for_workers(2, timeout=60)
            yield cl, client
        finally:
            client.close(timeout=10)
            cl.close(timeout=20)


def test_dask_sweep_matches_joblib_exactly(reference, cluster, tmp_path):
    cl, client = cluster
    res = run_sweep(_tasks(), scheduler=cl.scheduler_address, store=tmp_path / "r.jsonl", timeout=120)
    assert res.backend == "dask" and res.n_computed == 8 and res.n_cached == 0
    assert _comparable(res.rows) == reference
    # The store holds each row once, and reloads to the same values.
    stored = ResultStore(tmp_path / "r.jsonl").load()
    assert _comparable(stored.values()) == reference
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 8


def test_killed_worker_mid_sweep_loses_and_duplicates_nothing(reference, cluster, tmp_path):
    cl, client = cluster
    client.wait_for_workers(2, timeout=60)
    killed = []

    def kill_a_busy_worker(done, total, row):
        if killed:
            return None
        busy = [w for w, keys in client.processing().items() if keys]
        pids = client.run(os.getpid)
        victim = busy[0] if busy else next(iter(pids))
        os.kill(pids[victim], signal.SIGKILL)
        killed.append((victim, bool(busy)))
        return None

    store = tmp_path / "killed.jsonl"
    res = run_sweep(_tasks(), scheduler=client, store=store, callback=kill_a_busy_worker, retries=3,
                    timeout=120)
    assert killed, "the callback never ran"
    assert res.n_computed == 8 and len(res.rows) == 8
    assert _comparable(res.rows) == reference  # nothing lost, nothing changed
    lines = store.read_text().splitlines()
    assert len(lines) == 8  # nothing written twice
    assert len(ResultStore(store).load()) == 8
    # Whether the executor itself resubmitted depends on what the killed worker was doing at that
    # instant (these fits take milliseconds: a task computed and held in its memory, or queued, is
    # recomputed by Dask silently; seen in a full suite where `processing()` named the worker busy
    # and nothing came back as KilledWorker). The invariants above are this test;
    # test_a_task_whose_worker_dies_under_it_is_resubmitted makes the resubmission certain.


def test_env_var_selects_dask_and_resume_skips_finished(reference, cluster, tmp_path, monkeypatch):
    cl, _ = cluster
    store = tmp_path / "resume.jsonl"
    # A local run stopped after 3 rows (the callback returns True) ...
    first = run_sweep(_tasks(), store=store, n_jobs=1, callback=lambda done, total, row: done >= 3)
    assert first.stopped and first.n_computed == 3 and len(store.read_text().splitlines()) == 3
    # ... plus a torn line, as if the process had been killed while writing.
    with open(store, "a") as fh:
        fh.write('{"key": "half-writ')
    # ... resumed on the cluster named by DASK_SCHEDULER_ADDRESS: only the 5 missing runs are computed.
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", cl.scheduler_address)
    second = run_sweep(_tasks(), store=store, timeout=120)
    assert second.backend == "dask"
    assert second.n_cached == 3 and second.n_computed == 5
    assert _comparable(second.rows) == reference
    assert len(store.read_text().splitlines()) == 8
    # A third run computes nothing.
    third = run_sweep(_tasks(), store=store)
    assert third.n_computed == 0 and third.n_cached == 8


def test_a_second_sweep_on_the_same_results_file_fails_at_once(reference, tmp_path):
    store = tmp_path / "shared.jsonl"
    clashes = []

    def start_a_second_sweep(done, total, row):
        # While the first sweep is writing, a second one on the same file must refuse to start
        # (rather than compute the same runs again and interleave its rows with the first's).
        if not clashes:
            # As if the first sweep were half-way through writing a line: the refused sweep must
            # not touch the file (it used to cut such a "torn" line on opening the store).
            before = store.read_bytes()
            with open(store, "ab") as fh:
                fh.write(b'{"key": "half-writ')
            with pytest.raises(RuntimeError, match="Another sweep is writing to .*shared.jsonl"):
                run_sweep(_tasks(), store=store, n_jobs=1)
            assert store.read_bytes() == before + b'{"key": "half-writ'
            with open(store, "r+b") as fh:  # the "first writer" finishes its line: here, undo it
                fh.truncate(len(before))
            clashes.append(done)
        return False

    first = run_sweep(_tasks(), store=store, n_jobs=1, callback=start_a_second_sweep)
    assert clashes == [1]
    assert first.n_computed == 8 and _comparable(first.rows) == reference
    assert len(store.read_text().splitlines()) == 8  # nothing written by the refused sweep
    # The lock is released with the first sweep: the next one starts and reuses every row.
    again = run_sweep(_tasks(), store=store, n_jobs=1)
    assert again.n_computed == 0 and again.n_cached == 8


def _dies_once(*, method, params, dataset, seed, marker):
    """A task that kills its own worker process the first time it runs (``marker`` absent), then,
    run again, returns a fixed row: a task certainly executing when its worker dies."""
    from pathlib import Path

    flag = Path(marker)
    if not flag.exists():
        flag.write_text("killed once")
        os.kill(os.getpid(), signal.SIGKILL)
    return {"value": 1.0}


def test_a_task_whose_worker_dies_under_it_is_resubmitted(cluster, tmp_path):
    """With allowed-failures = 0, a task executing on a worker that dies comes back as KilledWorker;
    the executor resubmits it (retries), and the row is computed once and written once."""
    _, client = cluster
    client.wait_for_workers(2, timeout=60)
    marker = tmp_path / "killed-once"
    task = make_task(_dies_once, method="dies-once", params={}, dataset="none", seed=0, marker=str(marker))
    store = tmp_path / "dies.jsonl"
    res = run_sweep([task], scheduler=client, store=store, retries=3, timeout=120)
    assert marker.read_text() == "killed once"          # the first attempt killed its worker
    assert res.n_resubmitted == 1 and res.n_computed == 1
    assert [(r["status"], r["value"]) for r in res.rows] == [("ok", 1.0)]
    assert len(store.read_text().splitlines()) == 1    # written once
    client.wait_for_workers(2, timeout=60)             # the nanny restarted it for the next test


@pytest.fixture(autouse=True)
def _no_ambient_scheduler(monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)


def test_task_errors_become_rows_on_both_backends(cluster):
    cl, _ = cluster
    X = np.random.default_rng(0).normal(size=(50, 3))
    tasks = [make_task(data_task, method="CoLiDE-EV", params={"no_such_param": 1}, dataset=X, seed=0),
             make_task(data_task, method="SortNRegress", params={}, dataset=X, seed=0, bootstrap=True)]
    for kwargs in ({"n_jobs": 1}, {"scheduler": cl.scheduler_address}):
        rows = run_sweep(tasks, timeout=120, **kwargs).rows
        assert [r["status"] for r in rows] == ["error", "ok"]
        assert "Unknown parameter(s) for CoLiDE-EV: no_such_param" in rows[0]["error"]
        assert np.asarray(rows[1]["W"]).shape == (3, 3)


def test_unreachable_scheduler_is_a_clear_error():
    with pytest.raises(OSError, match="cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'"):
        run_sweep(_tasks(1)[:1], scheduler="tcp://127.0.0.1:9", connect_timeout=1)


def test_refused_scheduler_is_reported_by_the_probe_with_its_reason():
    # With Dask's default 30 s connect timeout: the TCP probe answers first, naming the reason
    # (Dask's own error would only say that it timed out, after 30 s).
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(OSError, match=rf"at 'tcp://127.0.0.1:{port}': Connection refused \(nothing "
                                      rf"answered on 127.0.0.1:{port}\)"):
        run_sweep(_tasks(1)[:1], scheduler=f"tcp://127.0.0.1:{port}")
    with pytest.raises(OSError, match="numeric port"):
        run_sweep(_tasks(1)[:1], scheduler="tcp://127.0.0.1:http")


def test_task_key_identity():
    spec = {"n_nodes": 5, "variance": "ev"}
    k = task_key("CoLiDE-NV", {"max_iter": (1, 2)}, spec, 0)
    assert len(k) == 64
    # Tuples and lists, and dict order, do not matter; seed, params and method do.
    assert k == task_key("CoLiDE-NV", {"max_iter": [1, 2]}, dict(reversed(list(spec.items()))), 0)
    assert k != task_key("CoLiDE-NV", {"max_iter": (1, 2)}, spec, 1)
    assert k != task_key("CoLiDE-EV", {"max_iter": (1, 2)}, spec, 0)
    X = np.arange(6.0).reshape(3, 2)
    assert task_key("GES", {}, X, None) == task_key("GES", {}, X.copy(), None)
    X2 = X.copy()
    X2[0, 0] = 0.5
    assert task_key("GES", {}, X, None) != task_key("GES", {}, X2, None)
    # Duplicate tasks run once.
    t = make_task(synthetic_task, method="SortNRegress", params={}, dataset={"n_nodes": 4, "n_samples": 50}, seed=0)
    res = run_sweep([t, t], n_jobs=1)
    assert res.n_computed == 1 and len(res.rows) == 1
    with pytest.raises(ValueError, match="retries must be >= 0"):
        run_sweep([t], retries=-1)


def test_sufficient_stats_on_the_cluster_matches_numpy(cluster, tmp_path):
    from colide_core.data.stats import sufficient_stats
    import pandas as pd

    _, client = cluster
    rng = np.random.default_rng(5)
    X = 1e8 + rng.normal(size=(3000, 4)) @ rng.normal(size=(4, 4))
    for i, rows in enumerate(np.array_split(np.arange(3000), [500, 1700, 2000])):
        pd.DataFrame(X[rows], columns=list("abcd")).to_parquet(tmp_path / f"p{i}.parquet", index=False)
    n, mean, cov = sufficient_stats(tmp_path, scheduler=client)
    ref = np.cov(X, rowvar=False, bias=True)
    assert n == 3000
    assert np.max(np.abs(cov - ref)) / np.max(np.abs(ref)) < 1e-10


# --------------------------------------------------------------------------------------------
# The app's bootstrap / stability selection and Compare runs go through the same executor
# --------------------------------------------------------------------------------------------

def _chain_data():
    from colide_core.data.simulate import simulate_linear_sem

    W = np.array([[0, 1.5, 0], [0, 0, -1.0], [0, 0, 0]])
    return simulate_linear_sem(W, 200, "gaussian", 1.0, random_state=0)[0]


from tests._schedules import TINY as _TINY  # noqa: E402 - the suite's short schedule
TINY = {**_TINY, "lr": 3e-3}  # a larger step: the tiny schedule then still converges


def test_bootstrap_and_stability_selection_are_identical_on_dask(cluster):
    from colide_core import CoLiDE
    from colide_core.evaluation.stability import bootstrap_edges, stability_selection

    cl, _ = cluster
    X = _chain_data()
    est = CoLiDE("nv", **TINY)
    local = bootstrap_edges(X, est, n_boot=4, random_state=7)
    remote = bootstrap_edges(X, est, n_boot=4, random_state=7, scheduler=cl.scheduler_address)
    assert remote.n_ok == local.n_ok == 4
    np.testing.assert_array_equal(remote.adjacency_samples, local.adjacency_samples)
    np.testing.assert_array_equal(remote.sigma_samples, local.sigma_samples)
    # A stop request from the callback is honoured on the cluster too: exactly the first 2 are kept.
    stopped = bootstrap_edges(X, est, n_boot=4, random_state=7, scheduler=cl.scheduler_address,
                              callback=lambda done, total: done >= 2)
    assert stopped.stopped and stopped.n_ok + stopped.n_failed == 2

    ev = CoLiDE("ev", **TINY)
    s_local = stability_selection(X, ev, lambdas=[0.05, 0.2], n_subsamples=2, random_state=0)
    s_remote = stability_selection(X, ev, lambdas=[0.05, 0.2], n_subsamples=2, random_state=0,
                                   scheduler=cl.scheduler_address)
    np.testing.assert_array_equal(s_remote.selection_probability, s_local.selection_probability)
    assert s_remote.q_hat == s_local.q_hat and s_remote.n_failed == s_local.n_failed == 0


@pytest.mark.usefixtures("fresh_caches")
def test_compare_runs_are_identical_on_dask_and_reported(cluster, monkeypatch, new_app):
    from dashboard import comparison
    from dashboard.simulation import SimConfig

    cl, _ = cluster
    config = SimConfig(d=4)
    quick = {"max_iter": (500, 500, 500, 1000)}
    tasks = [(m, comparison.method_params(m, 0.3, quick), s)
             for s in (0, 1) for m in ("CoLiDE-NV", "SortNRegress")]
    kwargs = {"data_id": comparison.data_id_for(config=config), "config": config}
    info_local, info_dask = comparison.SweepInfo(), comparison.SweepInfo()
    local = comparison.run_all(tasks, store=comparison.RunStore(), info=info_local, **kwargs)
    seen = []
    remote = comparison.run_all(tasks, store=comparison.RunStore(), info=info_dask,
                                scheduler=cl.scheduler_address,
                                on_progress=lambda done, total, row: seen.append((done, total)), **kwargs)
    assert (info_local.backend, info_dask.backend) == ("joblib", "dask")
    assert info_dask.n_computed == 4 and sorted(seen) == [(k, 4) for k in range(1, 5)]
    drop = ("time",)
    strip = [{k: v for k, v in r.items() if k not in drop} for r in local]
    assert [{k: v for k, v in r.items() if k not in drop} for r in remote] == strip
    assert all(r["error"] is None and np.isfinite(r["shd"]) for r in remote)

    # The Compare page reports the backend: Dask when DASK_SCHEDULER_ADDRESS is set.
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", cl.scheduler_address)
    at = new_app().run()
    at.switch_page("pages/compare.py").run()
    at.session_state["sim_d"] = 4
    at.multiselect(key="cmp_methods").set_value(["SortNRegress"])
    at.number_input(key="cmp_reps").set_value(2)
    at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    captions = [c.value for c in at.caption]
    assert any("Computed with: Dask cluster · 2 computed, 0 from the cache" in c for c in captions), captions
    assert at.checkbox(key="cmp_parallel").disabled
