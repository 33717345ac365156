"""CoLiDE is a scikit-learn estimator, and the solver layer has three levels without a cycle.

* ``sklearn.base.clone``, ``get_params(deep=...)``, ``set_params`` and the repr work, and the
  parameters are validated declaratively (``_parameter_constraints``) when ``fit`` runs.
* Every fitted attribute is documented in the class docstring.
* ``colide_core``'s import graph (built from the source with ``ast``) is acyclic, the two stage
  loops do not import each other, and the estimator, the lambda path and the CLI pick their
  loop from one table, ``colide_core.SOLVERS``.
"""
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.utils._param_validation import InvalidParameterError

import colide_core
from colide_core import SOLVERS, CoLiDE, colide_solve, defaults
from colide_core.solver._fast import fast_solve
from colide_core.solver._topo import topo_solve

PKG = Path(colide_core.__file__).resolve().parent
from tests._schedules import TINY as QUICK  # noqa: E402 - the suite's short schedule


def _chain(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x0 = rng.normal(size=n)
    x1 = 1.5 * x0 + rng.normal(size=n)
    return np.c_[x0, x1, -x1 + rng.normal(size=n)]


# ---------------------------------------------------------------------------------------------
# the scikit-learn contract
# ---------------------------------------------------------------------------------------------
def test_clone_keeps_the_parameters_and_drops_the_fit():
    est = CoLiDE("nv", lambda1=0.1)
    twin = clone(est)
    assert isinstance(est, BaseEstimator) and twin is not est
    assert twin.get_params() == est.get_params()
    assert (twin.variant, twin.lambda1) == ("nv", 0.1)
    fitted = CoLiDE("ev", **QUICK).fit(_chain())
    fresh = clone(fitted)
    assert hasattr(fitted, "W_") and not hasattr(fresh, "W_")
    assert fresh.get_params() == fitted.get_params()


def test_get_params_lists_every_constructor_argument_with_its_default():
    params = CoLiDE().get_params(deep=True)
    assert params == CoLiDE().get_params(deep=False)
    assert params == {
        "variant": defaults.VARIANT, "lambda1": defaults.LAMBDA1, "mu_schedule": defaults.MU_SCHEDULE,
        "s_schedule": defaults.S_SCHEDULE, "max_iter": defaults.MAX_ITER, "lr": defaults.LR, "tol": defaults.TOL,
        "threshold": defaults.THRESHOLD, "random_state": None, "solver": defaults.SOLVER,
        "checkpoint": defaults.CHECKPOINT, "max_time": None, "forbidden": None, "required": None, "tiers": None,
        "init_order": None, "topo_sizes": defaults.TOPO_SIZES, "record_W": False, "device": defaults.DEVICE,
        "warm_start": False,
    }
    # the paper's values (Appendix D, Section 5)
    assert (params["variant"], params["lambda1"], params["threshold"], params["lr"]) == ("nv", 0.05, 0.3, 3e-4)
    assert params["max_iter"] == (20000, 20000, 20000, 70000)


def test_set_params_returns_self_and_variant_stays_positional():
    est = CoLiDE("ev")
    assert est.variant == "ev"
    assert est.set_params(lambda1=0.2, solver="adam") is est
    assert (est.lambda1, est.solver, est.variant) == (0.2, "adam", "ev")
    with pytest.raises(ValueError, match="Invalid parameter"):
        est.set_params(no_such_parameter=1)


def test_repr_shows_only_the_changed_parameters():
    assert repr(CoLiDE()) == "CoLiDE()"
    assert repr(CoLiDE("nv", lambda1=0.1)) == "CoLiDE(lambda1=0.1)"
    assert repr(CoLiDE("ev", solver="adam")) == "CoLiDE(solver='adam', variant='ev')"
    assert eval(repr(CoLiDE("ev", solver="adam", lambda1=0.2)), {"CoLiDE": CoLiDE}).get_params() == \
        CoLiDE("ev", solver="adam", lambda1=0.2).get_params()


@pytest.mark.parametrize(
    "params, name",
    [
        (dict(lambda1=-1.0), "lambda1"),
        (dict(lambda1=np.inf), "lambda1"),
        (dict(variant="xx"), "variant"),
        (dict(solver="bogus"), "solver"),
        (dict(lr=0.0), "lr"),
        (dict(tol=-1e-3), "tol"),
        (dict(threshold=-0.1), "threshold"),
        (dict(checkpoint=0), "checkpoint"),
        (dict(checkpoint=2.5), "checkpoint"),
        (dict(max_time=0.0), "max_time"),
        (dict(mu_schedule=1.0), "mu_schedule"),
        (dict(random_state="seed"), "random_state"),
    ],
)
def test_invalid_parameters_raise_from_the_declarative_checks(params, name):
    est = CoLiDE(**params)  # __init__ only stores
    assert est.get_params()[name] is params[name]
    for fit in (lambda: est.fit(_chain()), lambda: est.fit_from_stats(np.eye(3), 10)):
        with pytest.raises(InvalidParameterError, match=f"{name} = ") as info:
            fit()
        assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
    assert not hasattr(est, "W_")


def test_random_state_accepts_none_int_and_generators():
    for rs in (None, 0, 7, np.random.default_rng(0), np.random.RandomState(0)):
        CoLiDE("ev", random_state=rs, **QUICK).fit(_chain())


def test_fit_returns_self_and_every_fitted_attribute_is_documented():
    est = CoLiDE("nv", required=[(0, 1)], **QUICK)
    assert est.fit(_chain()) is est
    fitted = {k for k in vars(est) if k.endswith("_") and not k.startswith("_")}
    assert fitted >= {"W_", "adjacency_", "sigma_", "n_iter_", "history_", "converged_", "stopped_",
                      "fit_time_", "result_", "edge_mask_", "required_mask_", "node_names_",
                      "n_features_in_", "n_samples_"}
    doc = CoLiDE.__doc__.split("Attributes\n    ----------")[1].split("See Also")[0]
    documented = set(re.findall(r"^    (\w+_) :", doc, flags=re.M))
    documented |= {name for line in re.findall(r"^    ((?:\w+_, )+\w+_) :", doc, flags=re.M)
                   for name in line.split(", ")}
    assert fitted <= documented, sorted(fitted - documented)
    # the fitted attributes are read from the one fit record
    res = est.result_
    assert est.W_ is res.W and est.n_iter_ == res.n_iter and est.fit_time_ == res.fit_time > 0
    assert est.required_mask_[0, 1] and est.n_samples_ == 200 and est.n_features_in_ == 3


# ---------------------------------------------------------------------------------------------
# one table of solvers
# ---------------------------------------------------------------------------------------------
def test_one_table_of_solvers_matches_the_defaults():
    from colide_core.solver._auto import auto_solve

    assert SOLVERS == {"auto": auto_solve, "fast": fast_solve, "adam": colide_solve, "topo": topo_solve}
    assert set(SOLVERS) == set(defaults.SOLVERS) and defaults.SOLVER in SOLVERS


@pytest.mark.parametrize("name", ["adam", "auto"])
def test_estimator_and_path_call_the_loop_the_table_names(monkeypatch, name):
    calls = []
    real = SOLVERS[name]

    def spy(*args, **kwargs):
        calls.append(args[1].lambda1)  # the loops take the checked RunSettings
        return real(*args, **kwargs)

    monkeypatch.setitem(SOLVERS, name, spy)
    CoLiDE("ev", lambda1=0.07, solver=name, **QUICK).fit(_chain())
    colide_core.lambda_path(_chain(), [0.02, 0.04], (0.3,), "ev", solver=name, **QUICK)
    assert calls == [0.07, 0.02, 0.04]


def test_cli_offers_the_table_and_the_defaults():
    from colide_core.run.cli import build_parser

    from colide_core.run.cli import _settings_of

    # A setting not given is absent, so the library's default applies (one declaration of it).
    args = build_parser().parse_args(["fit", "data.csv", "--out", "o"])
    assert _settings_of(args) == {}
    settings = colide_core.CoLiDE(**_settings_of(args)).get_run_settings()
    assert (settings.variant, settings.lambda1, settings.threshold, settings.solver) == (
        defaults.VARIANT, defaults.LAMBDA1, defaults.THRESHOLD, defaults.SOLVER)
    assert (settings.max_iter, settings.mu_schedule, settings.s_schedule, settings.lr, settings.tol) == (
        defaults.MAX_ITER, defaults.MU_SCHEDULE, defaults.S_SCHEDULE, defaults.LR, defaults.TOL)
    for name in SOLVERS:
        assert build_parser().parse_args(["fit", "d.csv", "--out", "o", "--solver", name]).solver == name
    with pytest.raises(SystemExit):
        build_parser().parse_args(["fit", "d.csv", "--out", "o", "--solver", "bogus"])


# ---------------------------------------------------------------------------------------------
# one formula, one place (the import rules and the three levels: tests/test_layout.py)
# ---------------------------------------------------------------------------------------------
def test_the_stage_objective_and_the_score_are_written_once():
    # The value formula mu * (score + L1) + h and the EV score appear once in the solver layer's
    # numpy code, and once more only in the device's twin of the checkpoint evaluation
    # (_jax_loop, issue 50: the whole Adam phase in one compiled loop, which cannot call numpy).
    # The twin is pinned to _objective's values by tests/test_jax_loop.py (every checkpoint's
    # objective against the numpy solver's, 1e-10 relative), as the numba kernels' gradient is.
    src = {p.stem: p.read_text() for p in (PKG / "solver").glob("_*.py")}
    stage = sorted(m for m, text in src.items() for _ in re.finditer(r"mu \* \(.*np\.abs\(W\)", text))
    assert stage == ["_jax_loop", "_objective"]
    ev = sorted(m for m, text in src.items() for _ in re.finditer(r"/ \(2\.0 \* sigma\)", text))
    assert ev == ["_jax_loop", "_objective"]
    # no solver default written in a loop, the path or the estimator
    for name in ("_solver", "_fast", "_estimator", "path"):
        text = (PKG / "solver" / f"{name}.py").read_text()
        assert not re.search(r"^\s*\w+=\(20000, 20000, 20000, 70000\)", text, flags=re.M), name
        assert not re.search(r"^\s*(lambda1=0\.05|lr=3e-4|tol=1e-6|threshold=0\.3),", text, flags=re.M), name


def test_the_numba_kernels_compile():
    from colide_core.solver._fast import HAVE_NUMBA, warmup

    assert warmup() >= 0.0
    if HAVE_NUMBA:
        from colide_core.solver import _fast

        assert _fast._adam_chunk_nb.signatures  # compiled (or loaded from numba's cache)
