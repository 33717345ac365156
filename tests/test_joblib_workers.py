"""No joblib worker is left after a parallel job (issue 42, low).

joblib keeps its loky workers 300 s after a run (``idle_worker_timeout``), each holding what its
fits allocated: measured about 600 MB for two workers after a 4-resample bootstrap on nine-condition
Sachs, kept on a dashboard server that may not run another job for hours. The executor now shuts the
pool down when the last joblib run of the process ends (``colide_core.run.executor._joblib_run``);
runs that overlap in two threads share it, and neither loses its workers to the other.
"""
import os
import threading
from pathlib import Path

import numpy as np

from colide_core import CoLiDE
from colide_core.data.simulate import simulate_dag, simulate_linear_sem, simulate_parameters
from colide_core.evaluation.stability import bootstrap_edges

from tests._schedules import TINY


def _worker_pids() -> set:
    """This process's child processes other than the two resource trackers (multiprocessing's and
    loky's, which live as long as the process and hold no fit's memory), read from /proc."""
    me, pids = os.getpid(), set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if ppid == me and "resource_tracker" not in cmd:
            pids.add(int(entry.name))
    return pids


def _data(seed=0, d=5, n=200):
    B = simulate_dag(d, 2, "er", random_state=seed)
    return simulate_linear_sem(simulate_parameters(B, random_state=seed), n, random_state=seed)[0]


def _bootstrap(X, out, seen):
    def callback(*_):
        seen.update(_worker_pids())  # the workers that run the fits, while they run
    out.append(bootstrap_edges(X, CoLiDE(variant="ev", **TINY), n_boot=6, random_state=1, n_jobs=2,
                               callback=callback))


def test_no_worker_process_is_left_after_a_parallel_bootstrap():
    X, seen, out = _data(), set(), []
    before = _worker_pids()
    # in a thread, as the dashboard runs its jobs
    job = threading.Thread(target=_bootstrap, args=(X, out, seen))
    job.start()
    job.join(timeout=600)
    assert not job.is_alive()
    [res] = out
    assert res.n_ok == 6 and not res.stopped
    assert len(seen - before) >= 1  # the fits ran in worker processes ...
    assert _worker_pids() - before == set()  # ... and none is left once the job has returned
    # a next job starts a fresh pool and gives the same answer (resamples are seeded)
    again = []
    _bootstrap(X, again, set())
    np.testing.assert_array_equal(again[0].frequency, res.frequency)
    assert _worker_pids() - before == set()


def test_overlapping_jobs_keep_their_workers_until_the_last_one_ends():
    X, outs, seens = _data(seed=2), [[], []], [set(), set()]
    before = _worker_pids()  # children the suite started before (e.g. an app server): not this test's
    jobs = [threading.Thread(target=_bootstrap, args=(X, outs[i], seens[i])) for i in range(2)]
    for j in jobs:
        j.start()
    for j in jobs:
        j.join(timeout=600)
    # both complete (the first to end did not shut the pool down under the other) and agree
    assert [len(o) for o in outs] == [1, 1]
    assert all(o[0].n_ok == 6 and o[0].n_failed == 0 for o in outs)
    np.testing.assert_array_equal(outs[0][0].frequency, outs[1][0].frequency)
    assert _worker_pids() - before == set()
