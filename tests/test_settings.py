"""One settings object, one validation path (colide_core.settings).

Every place a user gives CoLiDE's run settings (the estimator, the stage loops, the λ path, a run
manifest, a bench config, the dashboard) checks them through :class:`RunSettings`, so a bad
setting is refused before any solve, with the same message everywhere.
"""
import inspect
import json

import numpy as np
import pytest

import colide_core
from colide_core import CoLiDE, defaults
from colide_core.exceptions import InvalidParameterError, RunSettingsError
from colide_core.settings import CONSTRAINTS, INTERACTIVE, LIBRARY, SETTING_NAMES, RunSettings, check_settings

BAD_TOPO = {"solver": "topo", "topo_sizes": (100, 10, 1000)}
#: The one message for the issue's example, wherever it is given.
TOPO_MESSAGE = "topo_sizes = (100, 10, 1000) must be increasing (s0 <= s_small <= s_large)"
from tests._schedules import TINY  # noqa: E402 - the suite's short schedule
QUICK = {**TINY, "lr": 1e-3}  # a larger step: the tiny schedule then still converges


def _chain(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x0 = rng.normal(size=n)
    x1 = 0.8 * x0 + rng.normal(size=n)
    return np.column_stack([x0, x1, -0.7 * x1 + rng.normal(size=n)])


@pytest.fixture
def no_solve(monkeypatch):
    """Every stage loop raises if it is ever reached."""
    def refuse(*args, **kwargs):
        raise AssertionError("a solver ran")

    for name in list(colide_core.SOLVERS):
        monkeypatch.setitem(colide_core.SOLVERS, name, refuse)


@pytest.fixture(scope="module")
def manifest_doc():
    from colide_core.run.manifest import build_manifest, manifest_to_json

    X = _chain()
    return json.loads(manifest_to_json(build_manifest(CoLiDE("ev", **QUICK).fit(X), X)))


def test_the_issue_example_is_refused_everywhere_before_solving_with_one_message(manifest_doc, no_solve, tmp_path):
    X = _chain()
    messages = []
    with pytest.raises(RunSettingsError) as info:  # the estimator
        CoLiDE(**BAD_TOPO).fit(X)
    messages.append(str(info.value))
    with pytest.raises(InvalidParameterError) as info:  # the λ path (sklearn's validate_params re-raises it)
        colide_core.lambda_path(X, [0.1], topo_sizes=(100, 10, 1000), solver="topo")
    messages.append(str(info.value))
    from colide_core.solver._topo import topo_solve
    with pytest.raises(RunSettingsError) as info:  # the loop itself (the only place that refused it before)
        topo_solve(np.cov(X.T), topo_sizes=(100, 10, 1000))
    messages.append(str(info.value))
    # a manifest
    from colide_core.run.manifest import ManifestError, load_manifest
    doc = json.loads(json.dumps(manifest_doc))
    doc["params"].update({"solver": "topo", "topo_sizes": [100, 10, 1000]})
    with pytest.raises(ManifestError) as info:
        load_manifest(doc).estimator()
    messages.append(str(info.value))
    # a bench config
    from colide_core.run.cli import UsageError, load_bench_config
    (tmp_path / "c.toml").write_text('[methods.x]\nmethod = "CoLiDE-NV"\nsolver = "topo"\ntopo_sizes = [100, 10, 1000]\n')
    with pytest.raises(UsageError) as info:
        load_bench_config(tmp_path / "c.toml")
    messages.append(str(info.value))
    assert all(TOPO_MESSAGE in m for m in messages), messages


def test_every_problem_is_listed_at_once_and_is_a_parameter_error():
    with pytest.raises(RunSettingsError) as info:
        RunSettings.create(lr="x", tol=-1, checkpoint=2.5, variant="bogus", lamda1=0.1)
    problems = info.value.problems
    assert len(problems) == 5
    assert any(p.startswith("unknown setting(s) 'lamda1'") for p in problems)
    assert "lr = 'x' must be a float in the range (0.0, inf) (not a bool)" in problems
    assert "checkpoint = 2.5 must be an int in the range [1, inf) (not a bool)" in problems
    assert isinstance(info.value, InvalidParameterError) and isinstance(info.value, TypeError)


def test_library_and_interactive_limits_are_two_named_sets():
    # tol = 0 and lambda1 = 50 are legal for the library, outside the dashboard's ranges.
    assert RunSettings.create(tol=0, lambda1=50).tol == 0.0
    with pytest.raises(RunSettingsError, match=r"tol = 0 must be a float in the range \[1e-12, 0.1\]") as info:
        RunSettings.create(tol=0, lambda1=50, limits=INTERACTIVE)
    assert "lambda1 = 50 must be a float in the range [0.0, 10.0]" in str(info.value)
    assert "(the dashboard's limit)" in str(info.value)
    # TOPO's candidate sets are bounded interactively (issue 30: (20000,)*3 ran 284 s unchecked).
    with pytest.raises(RunSettingsError, match="topo_sizes"):
        RunSettings.create(topo_sizes=(20_000,) * 3, limits=INTERACTIVE)
    assert RunSettings.create(topo_sizes=(20_000,) * 3).topo_sizes == (20_000,) * 3


def test_the_table_the_object_and_the_estimator_agree():
    assert SETTING_NAMES == tuple(f for f in RunSettings.__dataclass_fields__)
    assert set(SETTING_NAMES) == set(CONSTRAINTS)
    est = CoLiDE().get_params()
    assert set(SETTING_NAMES) <= set(est)
    assert {k: est[k] for k in SETTING_NAMES} == RunSettings().as_dict()  # one set of defaults
    # normalisation: numpy numbers and arrays become Python numbers and tuples
    s = RunSettings.create(lambda1=np.float32(0.25), max_iter=np.array([5, 5, 5, 5]), checkpoint=np.int64(5))
    assert s.lambda1 == 0.25 and s.max_iter == (5, 5, 5, 5) and type(s.checkpoint) is int
    with pytest.raises(Exception):
        s.lambda1 = 1.0  # frozen


def test_loops_take_the_settings_object_and_settings_by_name_alike():
    from colide_core.solver._fast import fast_solve

    cov = np.cov(_chain().T, bias=True)
    by_object = fast_solve(cov, RunSettings.create(variant="ev", lambda1=0.1, **QUICK))
    by_name = fast_solve(cov, variant="ev", lambda1=0.1, **QUICK)
    np.testing.assert_array_equal(by_object.W, by_name.W)
    for loop in colide_core.SOLVERS.values():  # no loop lists the run settings in its signature again
        params = inspect.signature(loop).parameters
        assert "settings" in params and not set(SETTING_NAMES) & set(params), loop.__name__


def test_check_settings_returns_only_the_given_settings_and_passes_prior_knowledge_through():
    out = check_settings({"lr": 1, "required": [("a", "b")]}, ignore=("required",))
    assert out == {"lr": 1.0, "required": [("a", "b")]}
    assert defaults.MAX_TOPO_SIZE >= defaults.TOPO_SIZES[2]
    assert LIBRARY.name == "library"
