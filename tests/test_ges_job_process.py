"""The Predict page's GES + IDA job runs its search in a worker process (dashboard/infra/state/predict.py).

causal-learn's GES reports nothing while it searches, so in the job's thread Stop could only drop
its answer when the search ended: the job held its compute slot for the whole search (half a
minute and more at 40 nodes, docs/predict.md). In a worker process, Stop ends the search
``workers.STOP_GRACE_S`` after the request. Every wait is on a condition (with a bound only a
broken build reaches); no timing is asserted.
"""
import numpy as np
import pandas as pd

from dashboard.infra import workers
from dashboard.infra.slots import ComputeSlots
from dashboard.infra.state import predict as ps
from tests._waits import BOUND, processes_on, until as _until  # noqa: F401 (processes_on: an autouse fixture)


def _dataset(d, n, seed):
    from colide_core.data.simulate import simulate_dag, simulate_linear_sem, simulate_parameters
    from dashboard.data import make_dataset

    B = simulate_dag(d, 4 if d > 10 else 2, random_state=seed)
    X, _ = simulate_linear_sem(simulate_parameters(B, random_state=seed + 1), n, random_state=seed + 2)
    names = [f"x{i}" for i in range(d)]
    return make_dataset(f"ges-{d}-{seed}", pd.DataFrame(X, columns=names), source="simulated")


def _run(job):
    """Start ``job`` (a :func:`ps.ges_job`) on slots of its own, as start_job would."""
    job._slots = ComputeSlots(2, reserved=0)
    return job.start()


def test_the_ges_job_in_a_worker_gives_the_cpdag_of_a_direct_search():
    from colide_core.evaluation.scale import ges_ida_cpdag

    ds = _dataset(6, 400, seed=3)
    seen = []
    job = _run(ps.ges_job(ds, None))
    assert job.wait(BOUND)
    assert job.error is None
    want = ges_ida_cpdag(ds.X, callback=lambda done, total: seen.append((done, total)))
    np.testing.assert_array_equal(job.result, want)
    assert seen == [(0, 1), (1, 1)]          # the core's callback: before and after the search
    assert job.fraction == 1.0 and job.status == "GES + IDA: finished"
    assert ps.ges_known(ds)                  # the page's cache knows it (the job ran the cached function)
    ss = {}
    assert ps.harvest_ges(ss, job)[0][0] == "success" and ss[ps.GES_RESULT]["key"] == job.key


def test_stop_ends_a_search_that_hears_no_stop_and_keeps_nothing(monkeypatch):
    # 40 nodes at four parents a node: GES searches for tens of seconds (docs/predict.md). In the
    # job's thread Stop waited for the end and the CPDAG came back; the worker is ended instead.
    monkeypatch.setattr(workers, "STOP_GRACE_S", 0.2)
    ds = _dataset(40, 1000, seed=11)
    job = _run(ps.ges_job(ds, None))
    # the child's callback(0, 1) reached the job: the search has begun in the worker
    _until(lambda: job.fraction >= 0.05 and workers.live_workers() == 1, "the search running in its worker")
    job.request_stop()
    assert job.wait(BOUND)
    assert job.result is None and job.stop_requested
    assert "was stopped" in job.error and "nothing it computed was kept" in job.error
    assert not ps.ges_known(ds)              # a stopped search is not cached
    assert ps.harvest_ges({}, job) == [("info", "Stopped: GES's answer was dropped.")]
    assert workers.live_workers() == 0


def test_the_stop_help_says_what_stop_does():
    assert f"{workers.STOP_GRACE_S:g} s" in ps.GES_SLOT.stop_help if workers.ENABLED else \
        "when the search ends" in ps.GES_SLOT.stop_help
