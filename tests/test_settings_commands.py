"""Every command and the URL speak the one settings table (issue 47, point 3).

The tests walk :data:`colide_core.settings.SETTINGS`: each setting with a CLI flag reaches the
estimator of ``fit``, ``report``, ``predict`` and ``plan`` (the fit is intercepted at its entry,
so no solve runs); a setting given to a solver that ignores it (``Setting.solvers``) is refused by
every command; each setting the dashboard offers travels in a Learn link and reads back the same,
within the dashboard's bounds. A new row is covered the day it is declared.
"""
import numpy as np
import pandas as pd
import pytest

import colide_core
from colide_core import defaults
from colide_core.run.cli import main
from colide_core.settings import INTERACTIVE, SETTINGS, Options, check_setting, solvers_reading
from dashboard.infra.urlstate import SETTING_KEYS, URL_KEYS, parse_view, view_params

COMMANDS = ("fit", "report", "predict", "plan")
FLAG_ROWS = [row for row in SETTINGS if row.flag is not None]


def _other_value(row, limits=None):
    """A value of ``row`` other than its default, accepted under ``limits`` (library by default)."""
    kw = {} if limits is None else {"limits": limits}
    if isinstance(row.constraint, Options):
        preferred = {"device": "auto", "solver": "topo"}  # "auto" runs on this machine, GPU or not
        options = [preferred.get(row.name)] + [v for v in row.constraint.values if v != row.default]
        return check_setting(row.name, next(v for v in options if v is not None and v != row.default), **kw)
    if row.default is None:
        candidates = [7 if row.name == "random_state" else 30.0]
    elif isinstance(row.default, tuple):
        candidates = [tuple(type(v)(v * 2) for v in row.default), tuple(type(v)(v // 2 if isinstance(v, int) else v / 2)
                                                                       for v in row.default)]
    else:
        candidates = [type(row.default)(row.default * 2), type(row.default)(row.default / 2)]
    for value in candidates:
        try:
            return check_setting(row.name, value, **kw)
        except ValueError:
            continue
    raise AssertionError(f"no other value of {row.name} within {limits}")


class _Reached(Exception):
    """Raised by the intercepted fit: the settings reached the estimator."""


@pytest.fixture
def data_file(tmp_path):
    rng = np.random.default_rng(0)
    x1 = rng.normal(size=60)
    df = pd.DataFrame({"X1": x1, "X2": 0.8 * x1 + rng.normal(size=60), "X3": rng.normal(size=60)})
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    return path


def _argv(command, data, out):
    return {"fit": ["fit", str(data), "--out", str(out)],
            "report": ["report", str(data), "--out", str(out)],
            "predict": ["predict", str(data), "--out", str(out), "--do", "X1=1"],
            "plan": ["plan", str(data), "--n-bootstrap", "0"]}[command]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("row", FLAG_ROWS, ids=lambda r: r.name)
def test_every_setting_reaches_every_command(row, command, data_file, tmp_path, monkeypatch, capsys):
    seen = []

    def fit(self, X, *args, **kwargs):
        seen.append(self.get_params())
        raise _Reached

    monkeypatch.setattr(colide_core.CoLiDE, "fit", fit)
    value = _other_value(row)
    assert value != row.default
    argv = _argv(command, data_file, tmp_path / "out") + [row.flag, row.format(value)]
    with pytest.raises(SystemExit):  # the intercepted fit ends the command (status 2, "unexpected _Reached")
        main(argv)
    assert "_Reached" in capsys.readouterr().err
    assert seen, (row.name, command)
    got = seen[0][row.name]
    assert (tuple(got) if isinstance(got, list) else got) == value, (row.name, command, got)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_setting_its_solver_ignores_is_refused_by_every_command(command, data_file, tmp_path, capsys):
    refused = 0
    for row in FLAG_ROWS:
        readers = solvers_reading(row.name)
        for solver in defaults.SOLVERS:
            if solver in readers:
                continue
            argv = _argv(command, data_file, tmp_path / f"o-{row.name}-{solver}") + [
                "--solver", solver, row.flag, row.format(_other_value(row))]
            with pytest.raises(SystemExit) as exit_:
                main(argv)
            assert exit_.value.code == 2
            err = capsys.readouterr().err
            assert f"{row.flag} is read by --solver {' or '.join(readers)} only; --solver {solver} would ignore it" \
                in err, err
            refused += 1
    # topo_sizes under the fast and the paper-faithful solver, at least ("auto" runs TOPO's search too)
    assert refused >= 2 and solvers_reading("topo_sizes") == ("auto", "topo")


def test_fit_command_leaves_out_what_its_solver_ignores():
    # a dashboard fit with the paper-faithful solver and TOPO sizes left in the advanced form: the
    # printed command must be one the CLI accepts (W does not depend on the ignored setting)
    from colide_core.run.manifest import fit_command

    command = fit_command({"params": {"solver": "adam", "topo_sizes": [5, 50, 500], "lr": 0.001}})
    assert "--topo-sizes" not in command and "--solver adam" in command and "--lr 0.001" in command
    assert "--topo-sizes 5,50,500" in fit_command({"params": {"solver": "topo", "topo_sizes": [5, 50, 500]}})


def _ss(overrides):
    return {"learn_lambda1": 0.1, "learn_threshold": 0.3, "learn_variant": "NV", "learn_layout": "Circle",
            "solver_overrides": overrides}


@pytest.mark.parametrize("name", SETTING_KEYS)
def test_the_url_round_trips_every_setting(name):
    from dashboard.data import sachs_dataset

    row = next(r for r in SETTINGS if r.name == name)
    value = _other_value(row, INTERACTIVE)
    params = view_params(sachs_dataset(), _ss({name: value, "forbidden": [["Raf", "Mek"]]}))
    assert set(params) <= set(URL_KEYS) and params[name] == row.format(value)
    view = parse_view(params)
    assert view.problems == [] and view.settings == {name: value}
    # a default is not written
    assert name not in view_params(sachs_dataset(), _ss({name: row.default}))


def test_every_setting_the_dashboard_offers_travels():
    offered = {row.name for row in SETTINGS if row.dashboard in ("own", "advanced")}
    assert set(SETTING_KEYS) == offered - {"variant", "lambda1", "threshold"}  # those have model, lam, thr
    assert {"device", "random_state", "record_W"}.isdisjoint(URL_KEYS)  # the server's choice never travels


def test_a_link_is_bounded_by_the_interactive_limits_and_the_solver():
    v = parse_view({"solver": "topo", "topo_sizes": f"1,2,{defaults.MAX_TOPO_SIZE + 1}", "lr": "abc",
                    "max_iter": "10,20", "mu_schedule": "1,0.1", "s_schedule": "1,0.9,0.8"})
    assert v.settings == {"solver": "topo"}
    assert v.problems == ["lr: not a value within the dashboard's bounds",
                          "topo_sizes: not a value within the dashboard's bounds",
                          "mu_schedule, s_schedule, max_iter: do not fit together within the dashboard's bounds"]
    v = parse_view({"solver": "fast", "topo_sizes": "5,50,500", "checkpoint": "500"})
    assert v.settings == {"solver": "fast", "checkpoint": 500}
    assert v.problems == ["topo_sizes: not read by solver fast"]
    v = parse_view({"max_iter": "10,20", "mu_schedule": "1,0.1", "s_schedule": "1,0.9"})  # two stages, consistent
    assert v.problems == [] and v.settings["max_iter"] == (10, 20)
    assert parse_view({"max_time": "1" * 300}).problems == ["max_time: too long"]


def test_a_topo_link_reopens_as_topo(new_app, fresh_caches):
    at = new_app()
    at.query_params = {"data": "sachs", "lam": "0.1", "solver": "topo", "topo_sizes": "5,50,500"}
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    assert at.session_state["solver_choice"] == "topo"
    assert at.session_state["solver_overrides"]["solver"] == "topo"
    assert at.session_state["solver_overrides"]["topo_sizes"] == (5, 50, 500)
    fits = at.session_state["fit_results"]
    assert fits and all(dict(r.params)["solver"] == "topo" for r in fits.values()), fits
    # and the URL the page writes carries them on
    assert at.query_params["solver"] in ("topo", ["topo"])
    assert at.query_params["topo_sizes"] in ("5,50,500", ["5,50,500"])


def test_the_reports_lambda_path_takes_the_fits_settings(data_file, tmp_path, monkeypatch, capsys):
    # `report --path` solved the path with the fit's solver and prior only: max_iter, topo_sizes, ...
    # of the fit reached the fit and not its path
    import colide_core.solver.path as path_module

    seen = {}

    def lambda_path(X, **kwargs):
        seen.update(kwargs)
        raise _Reached

    monkeypatch.setattr(path_module, "lambda_path", lambda_path)
    with pytest.raises(SystemExit):
        main(["report", str(data_file), "--out", str(tmp_path / "r"), "--path", "--random-graphs", "3",
              "--rescalings", "0", "--solver", "topo", "--topo-sizes", "2,4,8", "--lr", "0.01"])
    assert "_Reached" in capsys.readouterr().err
    assert (seen["solver"], tuple(seen["topo_sizes"]), seen["lr"]) == ("topo", (2, 4, 8), 0.01)
    assert "lambda1" not in seen and "threshold" not in seen
