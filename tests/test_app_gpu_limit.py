"""AppTest: the dashboard's node limit with and without a GPU (issue 33).

Without a GPU, data or simulations above 200 nodes are refused with what a fit at that size would
cost on this CPU (from a measured step); with one, they are accepted up to 2,000 nodes and their
fits run on ``device="auto"`` (on Run: the GPU at that size, the CPU for what the device cannot run). The GPU probe (``colide_core.solver._jax.gpu_present``)
and the step measurement (``colide_core.solver.cost.measure_step``) are replaced by monkeypatch,
so both branches run on a CPU-only machine.
"""
import numpy as np
import pandas as pd
import pytest

from colide_core.solver import _jax, cost

pytestmark = pytest.mark.usefixtures("fresh_caches")

#: 1 ms a step at 200 nodes: at 400 nodes 8 ms (x 8), 1,433-13,071 steps = 11 s to 1.7 min.
STEP = 1e-3


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(_jax, "gpu_present", lambda: False)
    monkeypatch.setattr(cost, "measure_step", lambda n_nodes, variant: STEP if n_nodes == 200 else pytest.fail())


@pytest.fixture
def gpu(monkeypatch):
    monkeypatch.setattr(_jax, "gpu_present", lambda: True)


def _simulate(new_app, d, n=300):
    at = new_app().run()
    at.switch_page("pages/simulate.py").run()
    at.number_input(key="sim_d").set_value(d)
    at.number_input(key="sim_n").set_value(n)
    at.button(key="sim_run").click().run()
    assert not at.exception, at.exception
    return at


def _csv(d, n=300):
    X = np.random.default_rng(0).standard_normal((n, d))
    return pd.DataFrame(X, columns=[f"g{j}" for j in range(d)]).to_csv(index=False).encode()


def test_without_a_gpu_a_large_simulation_is_refused_with_its_measured_cost(new_app, no_gpu):
    at = _simulate(new_app, 400)
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    assert "400 nodes" in errors[0] and "up to 200 nodes" in errors[0] and "2,000 nodes" in errors[0]
    assert "about 11 s to 1.7 min" in errors[0] and "measured now at 200 nodes took 1 ms" in errors[0]
    assert at.session_state["dataset"].source == "sachs"  # nothing was simulated


def test_at_200_nodes_nothing_is_probed(new_app, monkeypatch):
    monkeypatch.setattr(_jax, "gpu_present", lambda: pytest.fail("probed for a size the CPU takes"))
    at = _simulate(new_app, 200, n=50)
    assert at.session_state["dataset"].shape == (50, 200)


def test_with_a_gpu_a_large_simulation_is_accepted_and_fitted_on_the_gpu(new_app, gpu, monkeypatch):
    at = _simulate(new_app, 250)
    assert at.session_state["dataset"].shape == (300, 250)
    assert not at.error
    started = []

    def capture(dataset, params_list):  # the job FitJob would be: record its settings, start nothing
        from colide_core.exceptions import RunSettingsError

        started.append((dataset.shape, [dict(p) for p in params_list]))
        raise RunSettingsError(["captured by the test"])

    from dashboard import fitting

    monkeypatch.setattr(fitting, "FitJob", capture)
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    at.button(key="learn_run").click().run()
    assert started and started[0][0] == (300, 250)
    assert [p.get("device") for p in started[0][1]] == ["auto"] * len(started[0][1])


def test_upload_above_the_cpu_limit_without_and_with_a_gpu(new_app, monkeypatch):
    monkeypatch.setattr(cost, "measure_step", lambda n_nodes, variant: STEP if n_nodes == 200 else pytest.fail())
    monkeypatch.setattr(_jax, "gpu_present", lambda: False)
    at = new_app().run()
    at.file_uploader(key="data_upload").set_value(("wide.csv", _csv(400), "text/csv")).run()
    assert not at.exception, at.exception
    errors = [e.value.replace("\\", "") for e in at.error]  # the Data page's markdown escapes
    assert len(errors) == 1 and "400 columns" in errors[0] and "fit of 400 nodes" in errors[0], errors
    assert "about 11 s to 1.7 min" in errors[0]
    assert at.session_state["dataset"].source == "sachs"

    monkeypatch.setattr(_jax, "gpu_present", lambda: True)  # the same file where a GPU is present
    at = new_app().run()
    at.file_uploader(key="data_upload").set_value(("wide.csv", _csv(400), "text/csv")).run()
    assert not at.exception, at.exception
    ds = at.session_state["dataset"]
    assert ds.source == "upload" and ds.shape == (300, 400)


def test_a_file_refused_from_its_header_says_at_least(new_app, no_gpu):
    at = new_app().run()
    at.file_uploader(key="data_upload").set_value(("wider.csv", _csv(450, n=20), "text/csv")).run()
    errors = [e.value.replace("\\", "") for e in at.error]
    # 450 columns > 400 read before parsing: the cost of at least 401 nodes, (401/200)^3 = 8.06 x 1 ms
    assert len(errors) == 1 and "450 columns" in errors[0] and "at least 401 nodes" in errors[0], errors


def test_comparisons_stay_within_the_cpu_limit(new_app, gpu):
    at = new_app().run()
    at.switch_page("pages/compare.py").run()
    at.session_state["sim_d"] = 250  # allowed on the Simulate page with a GPU; the comparison's fits are CPU fits
    at.run()
    assert not at.exception, at.exception
    assert any("Comparisons run on the CPU, up to 200 nodes; these data have 250" in w.value for w in at.warning)
    assert at.button(key="cmp_run").disabled
