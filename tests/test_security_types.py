"""Issue 22, class 8: loose types in the public API.

Every public entry point checks its parameters the scikit-learn way (``_parameter_constraints`` /
``validate_params``, ``InvalidParameterError`` = ValueError and TypeError) and refuses, instead of
converting: numbers given as strings, bools given as numbers, None, NaN, inf, floats where an int
is asked (not truncated), complex data (not cast to its real part); sizes beyond the documented
limits are refused before any memory is spent. Honest values (Python and numpy numbers, arrays,
tuples, lists, Series) keep working.
"""
from numbers import Real

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, InvalidParameterError

from colide_core import CoLiDE, defaults, evaluate, threshold_to_dag
from colide_core.run.executor import run_sweep
from colide_core.solver.path import bic_score, default_lambdas, lambda_path
from colide_core.data.simulate import (
    check_spec,
    draw_noise_variances,
    simulate_dag,
    simulate_dataset,
    simulate_linear_sem,
    simulate_parameters,
)
from colide_core.evaluation.stability import bootstrap_edges, stability_selection

QUICK = dict(max_iter=(30, 30, 30, 30), checkpoint=10)  # not the suite's TINY: hostile values only need a fit to start
# The documented limits (colide_core.defaults; docs/security.md).
MAX_NODES, MAX_SAMPLES, MAX_PATH_LAMBDAS, MAX_RESAMPLES = 2_000, 1_000_000, 100, 100_000

pytestmark = pytest.mark.filterwarnings("ignore::colide_core.ConvergenceWarning")


def _chain(n=60, seed=0):
    rng = np.random.default_rng(seed)
    x0 = rng.normal(size=n)
    x1 = 0.9 * x0 + rng.normal(size=n)
    x2 = -0.8 * x1 + rng.normal(size=n)
    return np.column_stack([x0, x1, x2])


def _refused(fn, *args, match=None, **kwargs):
    """The call raises InvalidParameterError or ValueError (never a bare TypeError/OverflowError)."""
    with pytest.raises(ValueError, match=match) as info:
        fn(*args, **kwargs)
    return info.value


def test_the_documented_limits():
    assert (defaults.MAX_NODES, defaults.MAX_SAMPLES, defaults.MAX_CELLS, defaults.MAX_DEGREE) == (
        MAX_NODES, MAX_SAMPLES, 50_000_000, 100.0)
    assert (defaults.MAX_PATH_LAMBDAS, defaults.MAX_PATH_THRESHOLDS, defaults.MAX_RESAMPLES) == (
        MAX_PATH_LAMBDAS, 100, MAX_RESAMPLES)
    assert (defaults.MAX_ITER_LIMIT, defaults.MAX_SWEEP_RUNS) == (1_000_000_000, 10_000)


# --------------------------------------------------------------------------------------------
# why a Number constraint: scikit-learn's Interval takes True as 1
# --------------------------------------------------------------------------------------------

def test_sklearn_interval_accepts_bools_and_number_does_not():
    from colide_core._params import Number

    # scikit-learn 1.9.1: bool subclasses int, so Interval(Real/Integral) accepts True.
    assert Interval(Real, 0, None, closed="left").is_satisfied_by(True)
    c = Number(Real, 0, None, closed="left")
    assert not c.is_satisfied_by(True) and not c.is_satisfied_by(np.bool_(True))
    assert not c.is_satisfied_by("0.1") and not c.is_satisfied_by(None)
    assert not c.is_satisfied_by(float("nan")) and not c.is_satisfied_by(float("inf"))
    assert c.is_satisfied_by(0) and c.is_satisfied_by(np.float32(0.5)) and c.is_satisfied_by(np.int64(3))


def test_check_sequence_checks_each_entry():
    from colide_core._params import Number, check_sequence

    pos = Number(Real, 0, None, closed="neither")
    assert check_sequence([1, np.float64(0.5)], "s", "f", pos) == (1.0, 0.5)
    assert check_sequence(pd.Series([0.1, 0.2]), "s", "f", pos) == (0.1, 0.2)
    for bad in (["0.1"], [True, 0.5], np.array([True]), "abc", 0.5, {0.1}, np.ones((2, 2)), [], [1 + 2j]):
        with pytest.raises(InvalidParameterError):
            check_sequence(bad, "s", "f", pos)


# --------------------------------------------------------------------------------------------
# the estimator
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("params, name", [
    (dict(lambda1="0.1"), "lambda1"),
    (dict(lambda1=True), "lambda1"),
    (dict(lambda1=np.bool_(False)), "lambda1"),
    (dict(threshold=None), "threshold"),
    (dict(threshold=True), "threshold"),
    (dict(lr=float("nan")), "lr"),
    (dict(tol=float("inf")), "tol"),
    (dict(checkpoint=2.5), "checkpoint"),
    (dict(checkpoint=True), "checkpoint"),
    (dict(max_time=True), "max_time"),
    (dict(random_state=True), "random_state"),
    (dict(random_state=-1), "random_state"),
    (dict(mu_schedule=(1.0, 0.1, "0.01", 0.001)), "mu_schedule"),
    (dict(s_schedule=(True, 0.9, 0.8, 0.7)), "s_schedule"),
    (dict(max_iter=(20.5, 30, 30, 30)), "max_iter"),
    (dict(max_iter=(1e12, 30, 30, 30)), "max_iter"),
    (dict(max_iter=(10**12, 30, 30, 30)), "max_iter"),  # above MAX_ITER_LIMIT
    (dict(max_iter=(30, 30, 30, True)), "max_iter"),
])
def test_estimator_refuses_loose_types(params, name):
    est = CoLiDE(**{**QUICK, **params})
    for fit in (lambda: est.fit(_chain()), lambda: est.fit_from_stats(np.cov(_chain().T), 60)):
        with pytest.raises(InvalidParameterError, match=f"{name} = ") as info:
            fit()
        assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
    assert not hasattr(est, "W_")


def test_schedules_of_different_lengths_are_a_parameter_error():
    with pytest.raises(InvalidParameterError, match="one entry per stage"):
        CoLiDE(mu_schedule=(1.0, 0.1), **QUICK).fit(_chain())


def test_honest_numpy_values_are_accepted_and_clone_works():
    est = CoLiDE("ev", lambda1=np.float32(0.05), threshold=np.float64(0.3), checkpoint=np.int64(10),
                 max_iter=np.array([30, 30, 30, 30]), mu_schedule=[1.0, 0.1, 0.01, 0.001],
                 random_state=np.int64(3))
    W = est.fit(_chain()).W_
    assert W.shape == (3, 3)
    np.testing.assert_array_equal(clone(est).fit(_chain()).W_, W)


@pytest.mark.parametrize("n", [300.0, True, "300", float("inf"), float("nan"), 1])
def test_fit_from_stats_n_must_be_an_int(n):
    with pytest.raises(InvalidParameterError, match="'n' parameter of CoLiDE.fit_from_stats"):
        CoLiDE(**QUICK).fit_from_stats(np.cov(_chain().T), n)


def test_complex_data_and_covariance_are_refused_not_cast():
    X = _chain().astype(complex)
    X[0, 0] += 1j
    _refused(CoLiDE(**QUICK).fit, X, match="complex")
    _refused(CoLiDE(**QUICK).fit, pd.DataFrame(X, columns=list("abc")), match="complex")
    cov = np.cov(_chain().T) + 0j
    _refused(CoLiDE(**QUICK).fit_from_stats, cov, 60, match="complex")


def test_duplicate_column_names_are_named_as_such():
    df = pd.DataFrame(_chain(), columns=["a", "a", "b"])
    err = _refused(CoLiDE(**QUICK).fit, df, match="duplicate column names: a")
    assert "non-numeric" not in str(err)


def test_callback_must_be_callable():
    _refused(CoLiDE(**QUICK).fit, _chain(), callback="print", match="callable")


# --------------------------------------------------------------------------------------------
# functions
# --------------------------------------------------------------------------------------------

def test_threshold_to_dag_refuses_strings_bools_and_none():
    W = np.array([[0, 0.5], [0, 0]])
    for bad in ("0.3", True, None, float("nan"), -0.1):
        _refused(threshold_to_dag, W, bad, match="threshold")
    assert threshold_to_dag(W, np.float32(0.3))[0, 1] == 0.5


@pytest.mark.parametrize("kwargs, name", [
    ({"lambdas": ["0.1"]}, "lambdas"),
    ({"lambdas": [True]}, "lambdas"),
    ({"lambdas": 0.1}, "lambdas"),
    ({"lambdas": list(np.linspace(0.01, 1, MAX_PATH_LAMBDAS + 1))}, "lambdas"),
    ({"thresholds": [None]}, "thresholds"),
    ({"warm_start": "no"}, "warm_start"),
    ({"warm_stages": 1.0}, "warm_stages"),
    ({"warm_stages": True}, "warm_stages"),
    ({"checkpoint": 2.5}, "checkpoint"),
    ({"lr": "0.1"}, "lr"),
    ({"max_iter": (30, 30, 30, 30.0)}, "max_iter"),
    ({"variant": None}, "variant"),
])
def test_lambda_path_refuses_loose_types(kwargs, name):
    # path parameters are lambda_path's own; run settings are refused by RunSettings, same message as CoLiDE's
    with pytest.raises(InvalidParameterError, match=f"('{name}' parameter of lambda_path|{name} = )"):
        lambda_path(_chain(), **{"lambdas": [0.1], **QUICK, **kwargs})


def test_lambda_path_accepts_a_series_of_lambdas():
    path = lambda_path(_chain(), pd.Series([0.05, 0.1]), thresholds=(0.3,), **QUICK)
    np.testing.assert_allclose(path.lambdas, [0.05, 0.1])


def test_default_lambdas_and_bic_score_refuse_loose_types():
    _refused(default_lambdas, True)
    _refused(default_lambdas, 9, "0.005")
    _refused(default_lambdas, 9.0)
    cov = np.cov(_chain().T)
    for n in (float("inf"), 60.0, True, "60"):
        _refused(bic_score, cov, n, np.zeros((3, 3)), match="n must be an integer")
    _refused(bic_score, cov + 0j, 60, np.zeros((3, 3)), match="complex")


def test_evaluate_refuses_text_sigmas_and_odd_on_cyclic():
    B = np.array([[0, 1], [0, 0]])
    _refused(evaluate, B, B, sigma_true=[1.0, 1.0], sigma_est="1.0", match="sigma_est")
    _refused(evaluate, B, B, sigma_true=True, sigma_est=[1.0, 1.0], match="sigma_true")
    _refused(evaluate, B, B, on_cyclic=["nan"], match="on_cyclic")
    assert evaluate(B, B, sigma_true=np.float64(1.0), sigma_est=[1.0, 1.0])["sigma_rel_err"] == 0.0


def test_stability_and_bootstrap_refuse_loose_types_before_fitting():
    X = _chain(n=40)
    est = CoLiDE(**QUICK)
    _refused(stability_selection, X, est, [0.1], pi_thr=True, match="pi_thr")
    _refused(stability_selection, X, est, ["0.1"], match="lambdas")
    _refused(stability_selection, X, est, [0.1], n_subsamples=2.0, match="n_subsamples")
    _refused(stability_selection, X, est, [0.1] * 11, n_subsamples=MAX_RESAMPLES // 10,
             match="MAX_RESAMPLES")
    _refused(bootstrap_edges, X, est, n_boot=10**12, match="MAX_RESAMPLES")  # refused before spawning seeds
    _refused(bootstrap_edges, X, est, n_boot=True, match="n_boot")
    _refused(bootstrap_edges, X, est, n_jobs=True, match="n_jobs")
    # A bad estimator setting fails once, with the estimator's message, not as "every fit failed".
    _refused(bootstrap_edges, X, CoLiDE(lambda1=True, **QUICK), n_boot=2, match="lambda1 = ")


def test_run_sweep_refuses_loose_arguments_before_running():
    for kwargs, name in [({"retries": 1.5}, "retries"), ({"retries": True}, "retries"),
                         ({"retries": 10**9}, "retries"), ({"n_jobs": 0}, "n_jobs"),
                         ({"n_jobs": True}, "n_jobs"), ({"n_jobs": "2"}, "n_jobs"),
                         ({"callback": 1}, "callback"), ({"timeout": float("nan")}, "timeout"),
                         ({"connect_timeout": 0}, "connect_timeout")]:
        _refused(run_sweep, [], match=name, **kwargs)
    assert run_sweep([], retries=0, n_jobs=1).rows == []


# --------------------------------------------------------------------------------------------
# the simulation protocol: types and size limits, before any memory is spent
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("settings, message", [
    ({"degree": "2"}, "degree must be a finite number"),
    ({"degree": True}, "degree must be a finite number"),
    ({"degree": 1e308}, "MAX_DEGREE"),
    ({"degree": float("nan")}, "degree must be a finite number"),
    ({"n_nodes": 5.0}, "n_nodes must be a positive integer"),
    ({"n_nodes": True}, "n_nodes must be a positive integer"),
    ({"n_nodes": MAX_NODES + 1}, "MAX_NODES"),
    ({"n_samples": MAX_SAMPLES + 1}, "MAX_SAMPLES"),
    ({"n_nodes": 2000, "n_samples": 100_000}, "200,000,000 cells is more than the 50,000,000 allowed"),
    ({"noise_var": "1"}, "noise_var must be a finite number > 0"),
    ({"noise_var": True}, "noise_var must be a finite number > 0"),
    ({"noise_var_range": ("0.5", 10)}, "noise_var_range must be a pair"),
    ({"w_range": (True, 2.0)}, "w_range must be a pair"),
    ({"w_range": (0.5, 2.0, 3.0)}, "w_range must be a pair"),
    ({"standardize": "no"}, "standardize must be True or False"),
    ({"graph": ["er"]}, "graph must be 'er' or 'sf'"),
    ({"noise": None}, "noise must be one of"),
])
def test_check_spec_refuses_loose_types_and_oversized_settings(settings, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_spec(settings)


def test_the_dashboards_largest_simulation_is_within_the_limits():
    spec = check_spec(n_nodes=200, n_samples=200_000, degree=10.0, standardize=np.bool_(True))
    assert (spec["n_nodes"], spec["n_samples"], spec["degree"], spec["standardize"]) == (200, 200_000, 10.0, True)


def test_simulation_building_blocks_refuse_loose_types():
    _refused(simulate_dag, 5, "2", match="degree")
    _refused(simulate_dag, 10, 1e308, match="degree")  # an OverflowError on the unchecked path
    _refused(simulate_dag, MAX_NODES + 1, 1, match="MAX_NODES")
    _refused(simulate_dag, 5.0, 1, match="positive integer")
    B = simulate_dag(4, 1, random_state=0)
    _refused(simulate_parameters, B, w_ranges=(("0.5", "2"),), match="w_ranges")
    _refused(draw_noise_variances, 3, "0.5", 10.0, match="low")
    W = simulate_parameters(B, random_state=0)
    _refused(simulate_linear_sem, W, 10.0, match="positive integer")
    _refused(simulate_linear_sem, W, MAX_SAMPLES + 1, match="MAX_SAMPLES")
    _refused(simulate_linear_sem, W, 10, noise_var="1", match="noise_var")
    _refused(simulate_linear_sem, W, 10, noise=3, match="noise must be")
    X = simulate_dataset(n_nodes=4, n_samples=10, degree=np.float64(1.0), random_state=0).X
    assert X.shape == (10, 4)


@pytest.mark.parametrize("bad", [{"lambda1": True}, {"lambda1": "0.1"}, {"lr": "1e-3"}, {"tol": None},
                                 {"checkpoint": 2.5}, {"max_iter": (10.0,)}, {"mu_schedule": (True,)}])
def test_stage_loops_called_directly_refuse_loose_types(bad):
    # The loops are public too (colide_core.colide_solve, _fast.fast_solve): their shared set-up
    # (_common._check_solver_params) refuses bools, strings and floats for ints like the estimator.
    from colide_core import colide_solve
    from colide_core.solver._fast import fast_solve

    cov = np.array([[1.0, 0.5], [0.5, 1.0]])
    kw = {"mu_schedule": (1.0,), "s_schedule": (1.0,), "max_iter": (10,), "checkpoint": 5}
    kw.update(bad)
    for solve in (colide_solve, fast_solve):
        with pytest.raises(ValueError):
            solve(cov, variant="ev", **kw)
