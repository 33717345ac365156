"""Hardening round 5 (issue 53): a session's share of the compute slots, the memory budget of the
sessions' datasets.

Every test here fails on the code before issue 53: a second job of one tab started and took the
last slot; a simulation's dataset was kept whatever all sessions held together.
"""
import threading

import numpy as np

from dashboard.infra import jobs

WAIT = 30.0


def _blocking_job(label, release, units=1, preemptible=False, slots=None):
    """A job that holds its slot until ``release`` is set (or Stop)."""
    def run(job):
        while not release.wait(0.05):
            if job.report(0.5, "holding"):
                return "stopped"
        return "done"
    return jobs.Job(run, label, units=units, preemptible=preemptible, slots=slots or jobs.ComputeSlots(4))


def _no_session(monkeypatch):
    monkeypatch.setattr(jobs, "session_liveness", lambda: None)


def test_one_tab_may_not_hold_more_than_its_share_of_the_slots(monkeypatch):
    # A 2-slot server: a tab may hold 1 unit. Its first job starts; its second is refused with a
    # sentence naming the running job and the share, and starts once the first has ended.
    _no_session(monkeypatch)
    monkeypatch.setattr(jobs, "SESSION_MAX_UNITS", 1)
    monkeypatch.setattr(jobs, "MAX_CONCURRENT", 2)
    state, release = {}, threading.Event()
    intervals = jobs.JobSlot("iv_job", "iv_messages", stop_key="iv_stop", stop_help="")
    plan = jobs.JobSlot("plan_job", "plan_messages", stop_key="plan_stop", stop_help="")
    try:
        assert jobs.start_job(state, intervals, lambda: _blocking_job("Computing intervals", release))
        assert jobs.start_job(state, plan, lambda: _blocking_job("Ranking the experiments", release)) is False
        assert state.get("plan_job") is None
        [(level, text)] = state["plan_messages"]
        assert level == "warning"
        assert "“Computing intervals”" in text and "1 of the server's 2 compute slots" in text
        assert "“Ranking the experiments” again" in text
        # another tab (its own state) is not limited by this one
        other = {}
        assert jobs.start_job(other, plan, lambda: _blocking_job("Ranking the experiments", release))
    finally:
        release.set()
    assert state["iv_job"].wait(WAIT) and other["plan_job"].wait(WAIT)
    assert jobs.start_job(state, plan, lambda: _blocking_job("Ranking the experiments", release))
    assert state["plan_job"].wait(WAIT) and state["plan_job"].result == "done"


def test_a_job_alone_may_be_larger_and_preemptible_work_does_not_count(monkeypatch):
    _no_session(monkeypatch)
    monkeypatch.setattr(jobs, "SESSION_MAX_UNITS", 2)
    state, release = {}, threading.Event()
    slot = lambda name: jobs.JobSlot(name, name + "_m", stop_key=name + "_s", stop_help="")  # noqa: E731
    try:
        # a 4-worker bootstrap alone: allowed (the cap limits what a tab adds to a running job)
        assert jobs.start_job(state, slot("boot"), lambda: _blocking_job("Bootstrap", release, units=4))
        # work ahead of need (the λ prefetch, the refinement) neither counts nor is refused
        assert jobs.start_job(state, slot("refine"), lambda: _blocking_job("Refining", release, preemptible=True))
        assert [j.label for j in jobs.session_jobs(state)] == ["Bootstrap"]
        assert jobs.start_job(state, slot("fit"), lambda: _blocking_job("Fit", release)) is False
    finally:
        release.set()
    for key in ("boot", "refine"):
        assert state[key].wait(WAIT)
    # 1 + 1 units fit in a share of 2: two small jobs of one tab run together
    release2 = threading.Event()
    try:
        assert jobs.start_job(state, slot("a"), lambda: _blocking_job("A", release2))
        assert jobs.start_job(state, slot("b"), lambda: _blocking_job("B", release2))
        assert jobs.start_job(state, slot("c"), lambda: _blocking_job("C", release2)) is False
    finally:
        release2.set()
    assert state["a"].wait(WAIT) and state["b"].wait(WAIT)


# --- the memory budget of the sessions' datasets ------------------------------------------------

class _Held:
    """What a session's state keeps, for the budget: arrays in ``X`` and ``meta`` (weakly referenced)."""

    def __init__(self, X):
        self.X, self.meta = X, {}


def test_a_simulation_beyond_the_servers_dataset_budget_is_refused_with_a_sentence(new_app, monkeypatch):
    from dashboard.infra import memory

    monkeypatch.setattr(memory, "_HELD", {})
    monkeypatch.setattr(memory, "_RESERVED", {})
    monkeypatch.setattr(memory, "BUDGET_BYTES", 10 * 1024 * 1024)              # 10 MB for every session
    big = np.zeros((1_000_000,))                                               # 8 MB held by another tab
    holder = _Held(big)
    memory.record(holder, session_id="another tab")
    assert memory.held_bytes() == 8_000_000
    at = new_app()
    at.run()
    at.switch_page("pages/simulate.py").run()
    at.number_input(key="sim_d").set_value(10).run()
    at.number_input(key="sim_n").set_value(50_000).run()                       # 4 MB: 12 MB in all
    at.button(key="sim_run").click().run()
    assert not at.exception, at.exception
    assert at.session_state["dataset"].source != "simulated"                   # nothing was kept
    text = " ".join(e.value for e in at.error)
    # 50,000 x 10 x 8 bytes + the 10 x 10 truths = 4,001,600 B = 3.8 MiB; 8,000,000 B = 7.6 MiB
    assert "This simulation would take 3.8 MB" in text and "already hold 7.6 MB of its 10 MB budget" in text
    # 1,000 rows fit (80 kB): simulated, and this tab's dataset is now counted
    at.number_input(key="sim_n").set_value(1_000).run()
    at.button(key="sim_run").click().run()
    assert not at.exception and at.session_state["dataset"].source == "simulated"
    assert memory.held_bytes() == 8_000_000 + memory.dataset_nbytes(at.session_state["dataset"])
    del holder                                                                 # that tab's data freed: not counted
    assert memory.held_bytes(exclude=None) == memory.dataset_nbytes(at.session_state["dataset"])


def test_a_memory_error_while_simulating_is_a_sentence_without_a_traceback_or_path(new_app, monkeypatch):
    import dashboard.simulation

    def out_of_memory(config, seed):
        raise MemoryError("Unable to allocate 320. MiB in /srv/colide/pages/simulate.py")
    monkeypatch.setattr(dashboard.simulation, "simulate_dataset", out_of_memory)
    at = new_app()
    at.run()
    at.switch_page("pages/simulate.py").run()
    at.button(key="sim_run").click().run()
    assert not at.exception, at.exception
    [error] = [e.value for e in at.error]
    assert error.startswith("This simulation did not fit in the server's memory") and "/" not in error


def test_a_closed_tabs_dataset_is_dropped_after_the_grace_period(monkeypatch):
    from dashboard.infra import memory, state

    monkeypatch.setattr(memory, "_HELD", {})
    monkeypatch.setattr(memory, "_RESERVED", {})
    data = _Held(np.zeros(1000))
    closed_state = {state.DATASET: data, state.XFORM_RAW: None, "other": 1}
    monkeypatch.setattr(memory, "_session_states", lambda: {"closed": (False, closed_state)})
    memory.record(data, keys=(state.DATASET, state.XFORM_RAW), session_id="closed")
    memory._prune(now=100.0)                                  # first seen closed: still kept
    assert memory._HELD["closed"]["nbytes"] == 8000 and state.DATASET in closed_state
    memory._prune(now=100.0 + memory.CLOSED_GRACE_S)          # closed for the grace period: dropped
    assert "closed" not in memory._HELD and state.DATASET not in closed_state and closed_state["other"] == 1


# --- the manifest's conditions record, checked against the data it claims ----------------------

def test_a_hand_edited_conditions_record_is_refused_by_report_manifest(tmp_path, capsys):
    # Round 4 refused other row labels and other targets, but not a record that lies about the
    # data: labels "obs, iv1, XX" (the data's third condition is "iv2") with the targets kept were
    # accepted with rc 0, because the fingerprint is of the data's own labels.
    import json

    import pandas as pd
    import pytest

    from colide_core.run.cli import main

    rng = np.random.default_rng(0)
    n = 60
    a = rng.normal(size=3 * n)
    b = 0.8 * a + 0.5 * rng.normal(size=3 * n)
    b[n:2 * n] = rng.normal(size=n)                                   # iv1 sets b
    pd.DataFrame({"a": a, "b": b, "cond": np.repeat(["obs", "iv1", "iv2"], n)}).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "t.json").write_text(json.dumps({"iv1": ["b"]}))
    assert main(["fit", str(tmp_path / "d.csv"), "--out", str(tmp_path / "fit"), "--conditions", "cond",
                 "--targets", str(tmp_path / "t.json"), "--variant", "ev", "--quiet"]) == 0
    manifest = tmp_path / "fit" / "manifest.json"
    doc = json.loads(manifest.read_text())
    assert doc["conditions"]["labels"] == ["obs", "iv1", "iv2"] and doc["conditions"]["counts"] == [60, 60, 60]
    report = ["report", str(tmp_path / "d.csv"), "--manifest", str(manifest), "--random-graphs", "2",
              "--rescalings", "0"]
    assert main(report + ["--out", str(tmp_path / "rep")]) == 0      # the true record: accepted
    for labels, counts, why in [(["obs", "iv1", "XX"], [60, 60, 60], "recorded but not in the data: 'XX'"),
                                (["obs", "iv1", "iv2"], [50, 70, 60], "the rows per condition differ")]:
        edited = dict(doc, conditions=dict(doc["conditions"], labels=labels, counts=counts))
        (tmp_path / "edited.json").write_text(json.dumps(edited))
        capsys.readouterr()
        with pytest.raises(SystemExit) as exit_:
            main(["report", str(tmp_path / "d.csv"), "--manifest", str(tmp_path / "edited.json"),
                  "--random-graphs", "2", "--rescalings", "0", "--out", str(tmp_path / f"rep_{counts[0]}")])
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and "conditions record does not describe the data's conditions" in err
        assert why in err and err.count("\n") == 1 and not (tmp_path / f"rep_{counts[0]}").exists()


def test_a_link_that_simulates_asks_the_same_budget(new_app, monkeypatch):
    # ?data=sim&d=100&n=2000&k=2 was the way in: a link draws its simulation too.
    from dashboard.infra import memory

    monkeypatch.setattr(memory, "_HELD", {})
    monkeypatch.setattr(memory, "_RESERVED", {})
    monkeypatch.setattr(memory, "BUDGET_BYTES", 2_000_000)                    # 1.9 MiB for every session
    holder = _Held(np.zeros(200_000))                                          # 1.6 MB held by another tab
    memory.record(holder, session_id="another tab")
    at = new_app()
    at.query_params = {"data": "sim", "d": "50", "n": "1000", "k": "2"}        # 400,000 B + 40,000 B of truths
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    assert at.session_state["dataset"].source != "simulated"
    shown = " ".join(e.value for e in at.info)
    assert "The link's simulation would take 0.4 MB" in shown and "Showing the current dataset." in shown
    del holder
    at2 = new_app()
    at2.query_params = {"data": "sim", "d": "50", "n": "1000", "k": "2"}
    at2.switch_page("pages/learn.py").run()
    assert not at2.exception and at2.session_state["dataset"].source == "simulated"


def test_a_simulation_reserves_its_working_memory_in_one_place(monkeypatch):
    # 1,000 rows x 50 nodes: 400,000 B of X + 2 x 20,000 B of truths = 440,000 B kept; drawn, it
    # takes SIMULATION_WORKING_FACTOR (2.5) times that: 1,100,000 B reserved until it is recorded.
    from dashboard.infra import memory

    monkeypatch.setattr(memory, "_HELD", {})
    monkeypatch.setattr(memory, "_RESERVED", {})
    monkeypatch.setattr(memory, "_session_states", lambda: {})
    assert memory.simulation_refusal(1000, 50, session_id="A", budget=1_100_000) is None
    assert memory._RESERVED["A"][0] == 1_100_000
    refused = memory.simulation_refusal(1000, 50, "The link's simulation", session_id="B", budget=2_199_999)
    assert refused.startswith("The link's simulation would take 0.4 MB (1.0 MB while it is built)")


# --- round 5's load test: tabs asking together, and an idle server -------------------------------

def test_tabs_asking_together_are_counted_against_each_other(monkeypatch):
    """Round 5's load test: a group of four tabs simulating at once each passed the budget check,
    because a dataset still being built was not counted, and 3,057 MB were then held against a
    2,048 MB budget. Now an admitted dataset is reserved until its session records it."""
    from dashboard.infra import memory

    monkeypatch.setattr(memory, "_HELD", {})
    monkeypatch.setattr(memory, "_RESERVED", {})
    monkeypatch.setattr(memory, "_session_states", lambda: {})
    mb = 1024 * 1024
    budget = 10 * mb
    assert memory.refusal(6 * mb, budget=budget, session_id="A") is None   # A admitted: 6 MB reserved
    second = memory.refusal(6 * mb, budget=budget, session_id="B")         # B asks before A has built
    assert second is not None and "already hold 6.0 MB of its 10 MB budget" in second
    assert memory.refusal(4 * mb, budget=budget, session_id="B") is None   # 6 + 4 = 10 MB: fits, reserved
    assert memory.held_bytes() == 10 * mb
    built = _Held(np.zeros(6 * mb // 8))                                   # A's tab keeps it (a weak reference here)
    memory.record(built, session_id="A")                                   # A built: held, no longer reserved
    assert memory._RESERVED.keys() == {"B"} and memory.held_bytes() == 10 * mb
    assert memory.refusal(6 * mb, budget=budget, session_id="A") is None   # A's own data is not counted
    # a build that never records (it failed, or its tab closed) gives its reservation back
    since = memory._RESERVED["B"][1]
    memory._prune(now=since + memory.RESERVATION_TTL_S - 1)
    assert "B" in memory._RESERVED
    memory._prune(now=since + memory.RESERVATION_TTL_S)
    assert "B" not in memory._RESERVED


def test_the_pruner_runs_on_an_idle_server(monkeypatch):
    """Round 5's load test: a closed tab's grace started only at the next simulation or upload, so
    an idle server kept every closed tab's data. The server's pruner thread prunes on its own."""
    import threading

    from dashboard.infra import memory

    passes = threading.Event()
    monkeypatch.setattr(memory, "_PRUNER", [])
    monkeypatch.setattr(memory, "PRUNE_EVERY_S", 0.01)
    monkeypatch.setattr(memory, "_prune", lambda now=None: passes.set())
    memory._start_pruner()
    assert passes.wait(timeout=60), "the pruner never pruned"
    thread = memory._PRUNER[0]
    assert thread.daemon and thread.name == "colide-memory-pruner"
    memory._start_pruner()                                                 # once per process
    assert memory._PRUNER[0] is thread


def test_a_session_streamlit_stops_listing_is_still_dropped_and_its_memory_released(monkeypatch):
    # Streamlit's session storage is a TTL cache: after its TTL a closed session is no longer listed,
    # but the expired entry (and its state, with the dataset) stays in memory until the cache is next
    # written. The pruner remembers the state it saw, deletes the dataset's keys there, and releases
    # the freed memory once per pass that dropped something.
    from dashboard.infra import memory, state

    monkeypatch.setattr(memory, "_HELD", {})
    monkeypatch.setattr(memory, "_RESERVED", {})
    released = []
    monkeypatch.setattr(memory, "_release_memory", lambda: released.append(1))
    data = _Held(np.zeros(1000))
    closed_state = {state.DATASET: data, "other": 1}
    listing = {"closed": (False, closed_state), "open": (True, {})}
    monkeypatch.setattr(memory, "_session_states", lambda: dict(listing))
    memory.record(data, keys=(state.DATASET,), session_id="closed")
    memory._prune(now=100.0)                                  # seen closed, its state remembered
    del listing["closed"]                                     # expired from Streamlit's listing
    memory._prune(now=100.0 + memory.CLOSED_GRACE_S / 2)      # within the grace: kept, nothing released
    assert "closed" in memory._HELD and state.DATASET in closed_state and released == []
    memory._prune(now=100.0 + memory.CLOSED_GRACE_S)
    assert "closed" not in memory._HELD and state.DATASET not in closed_state and closed_state["other"] == 1
    assert released == [1]
    memory._prune(now=200.0 + memory.CLOSED_GRACE_S)          # nothing left to drop: no release
    assert released == [1]
