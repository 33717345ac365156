"""Shared pytest fixtures. The repository root is importable through ``pythonpath = .`` in
pytest.ini (and the editable install that ``make`` does), not through ``sys.path`` edits."""
import os
from pathlib import Path

import pytest

# The live Learn page decides from timings (dashboard.fitting.LIVE_MAX_SECONDS, LIVE_TIME_LIMIT). On a
# loaded 2-core machine a 0.4 s fit can take 3 s, and tests that are not about that rule must not
# depend on it: the suite (and the app servers its browser tests start, which inherit the
# environment) runs with both bounds far away; the rule's own tests set them (tests/test_app_live.py).
os.environ.setdefault("COLIDE_LIVE_MAX_SECONDS", "600")
os.environ.setdefault("COLIDE_LIVE_TIME_LIMIT", "600")

_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _own_job_results_only(monkeypatch):
    """Each test counts only its own jobs' kept results in the server's memory budget.

    A job's result is counted while anything keeps it (``dashboard.infra.memory._RESULTS``, weak
    references). An AppTest's page script leaves its results in reference cycles (its globals) that
    live until a full collection, so a bootstrap or ranking run by one test was still counted in
    the next tests' exact byte counts (``tests/test_memory_peak.py``, ``tests/test_security_round5.py``).
    Nothing is imported here: a test that has not loaded the module yet has nothing to count.
    """
    import sys

    module = sys.modules.get("dashboard.infra.memory")
    if module is not None:
        monkeypatch.setattr(module, "_RESULTS", {})


@pytest.fixture(autouse=True)
def _no_job_outlives_its_test():
    """Each test's background jobs are stopped and awaited when it ends.

    An AppTest leaves the jobs its page started (a Learn fit, a bootstrap) running in their
    threads after the test. A later test then shares the process with that computation: on
    CPython 3.11, ``tracemalloc.start()`` / ``stop()`` in a memory test while such a thread
    allocates inside a numba kernel without the GIL crashed the run with a segfault (CPython
    gh-128679; reproduced 2 times in 4 by ``tests/test_security_round5.py`` then
    ``tests/test_stability_summary.py``). Stop is what a session's end does to its jobs
    (``dashboard.infra.jobs``); a job stops at its next progress report. Nothing is imported
    here: a test that never loaded the jobs module started no job.
    """
    yield
    import sys

    jobs = sys.modules.get("dashboard.infra.jobs")
    if jobs is None:
        return
    running = jobs.live_jobs()
    for job in running:
        job.request_stop()
    for job in running:
        job.wait(timeout=300)  # a progress report comes every chunk of steps; bounded in case one hangs


@pytest.fixture
def repo_root():
    """The checkout's root folder (where app.py, pages/ and requirements.txt are)."""
    return _ROOT


@pytest.fixture
def fresh_caches():
    """The dashboard's process-wide caches, emptied before and after the test.

    AppTest runs the app in this process, so whatever one test caches (``st.cache_data`` fits in
    ``dashboard.fitting.fit_colide``, the run manifests of ``dashboard.manifests.fit_manifest_json``,
    the Compare page's ``st.cache_resource`` run store) would otherwise be served to the next test.
    Use it with ``pytestmark = pytest.mark.usefixtures("fresh_caches")`` or as a test argument.
    """
    from dashboard import comparison, fitting, manifests
    from dashboard.infra.state import predict as predict_state

    def clear():
        fitting.fit_colide.clear()
        fitting._COMPUTED.clear()
        manifests.fit_manifest_json.clear()
        comparison.run_store().clear()
        predict_state.ges_cpdag_of.clear()  # GES + IDA (issue 52), and the runs that said it was cached
        predict_state._GES_DONE.clear()

    clear()
    yield
    clear()


@pytest.fixture
def static_dir(tmp_path, monkeypatch):
    """The app's ``static/`` folder moved to a fresh temporary one, with the copies made into it
    forgotten before and after (vis-network's, :mod:`dashboard.infra.assets`; the long-lived drawing's,
    :func:`dashboard.graphview.drawing_component`)."""
    from dashboard import graphview
    from dashboard.infra import assets

    monkeypatch.setattr(assets, "STATIC_DIR", tmp_path / "static")
    assets._installed.cache_clear()
    graphview._declared.cache_clear()
    yield tmp_path / "static"
    assets._installed.cache_clear()
    graphview._declared.cache_clear()


@pytest.fixture
def new_app():
    """A factory of ``AppTest`` instances of the dashboard's ``app.py`` (not yet run).

    ``new_app()`` gives the app with a 300 s limit per script run (fits run inside the run and the
    machine may be shared); ``new_app(timeout=120)`` sets another limit.
    """
    from streamlit.testing.v1 import AppTest

    def make(timeout=300):
        return AppTest.from_file(str(_ROOT / "app.py"), default_timeout=timeout)

    return make


@pytest.fixture
def solver_calls(monkeypatch):
    """A list that grows by one entry (the variant) per real ``CoLiDE.fit`` call (cache misses)."""
    import colide_core

    calls = []
    real_fit = colide_core.CoLiDE.fit

    def counting_fit(self, X, conditions=None, targets=None, callback=None, W_init=None, *, design=None):
        calls.append(self.variant)
        return real_fit(self, X, conditions=conditions, targets=targets, callback=callback, W_init=W_init,
                        design=design)

    monkeypatch.setattr(colide_core.CoLiDE, "fit", counting_fit)
    return calls


@pytest.fixture
def downloads(monkeypatch):
    """Every file offered for download, by file name, in the order offered (a list per name)."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    files = {}
    real = MemoryMediaFileStorage.load_and_get_id

    def capture(self, path_or_data, mimetype, kind, filename=None):
        if filename is not None and isinstance(path_or_data, (bytes, str)):
            data = path_or_data.encode() if isinstance(path_or_data, str) else path_or_data
            files.setdefault(filename, []).append(data)
        return real(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", capture)
    return files


@pytest.fixture
def quick():
    """A copy of :data:`tests._schedules.QUICK` (CoLiDE keyword arguments)."""
    from tests._schedules import QUICK

    return dict(QUICK)


@pytest.fixture
def tiny():
    """A copy of :data:`tests._schedules.TINY` (CoLiDE keyword arguments)."""
    from tests._schedules import TINY

    return dict(TINY)


@pytest.fixture
def no_extra(monkeypatch):
    """As if pgmpy-no-torch (the ``networks`` extra) were not installed (its files cached by no earlier read)."""
    import importlib.metadata

    from colide_core.data import networks

    real = importlib.metadata.distribution

    def missing(name):
        if name == "pgmpy-no-torch":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    networks._read_network.cache_clear()
    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    yield
    networks._read_network.cache_clear()
