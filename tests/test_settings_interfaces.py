"""Each run setting is declared once (``colide_core.settings.SETTINGS``) and every interface is
derived from it (issue 39, point 1): the CLI's flags, the manifest's exact command, the
dashboard's λ-path and bootstrap keys, the manifest loader.

The table-driven tests walk every row, so a new setting is covered the day it is declared.
"""
import inspect
import json
import shlex

import numpy as np
import pytest

import colide_core
from colide_core import defaults
from colide_core.run.cli import _settings_of, build_parser
from colide_core.run.manifest import build_manifest, fit_command, manifest_to_json
from colide_core.settings import (INTERACTIVE, NOT_SETTINGS, RESULT_SETTINGS, SETTING_NAMES, SETTINGS, Num, Options,
                                  RunSettings, Schedule, check_setting, setting)

#: Per kind of setting, texts a user may type: some the library accepts, some it refuses.
TEXTS = {
    "real": ["0", "0.1", "1e-3", "-1", "nan", "inf", "abc", "", "True", "1,2"],
    "int": ["1", "1000", "0", "-5", "2.5", "1e3", "abc", "", "True"],
    "schedule": ["1", "1,2", "100,200,300,400", "0.5,0.1", "0", "-1,2", "a,b", "", "1,,2", "nan", "1,2,3,4,5,6,7,8"],
    "options": None,  # every option, and a few that are not
}


def _kind(row):
    c = row.constraint
    if isinstance(c, Options):
        return "options"
    if isinstance(c, Schedule):
        return "schedule"
    if isinstance(c, Num):
        return c.type
    return "int"  # random_state: a seed


def _flag_rows():
    return [row for row in SETTINGS if row.flag is not None]


@pytest.mark.parametrize("row", _flag_rows(), ids=lambda r: r.name)
def test_the_cli_accepts_exactly_what_the_library_accepts(row):
    texts = (list(row.constraint.values) + ["", "x", row.constraint.values[0].upper()]
             if _kind(row) == "options" else TEXTS[_kind(row)])
    parser = build_parser()
    checked = 0
    for text in texts:
        try:
            value = row.parse(text)
            check_setting(row.name, value)
            library_ok = True
        except ValueError:  # a text that is no value, or a value the library refuses
            library_ok = False
        try:
            args = parser.parse_args(["fit", "d.csv", "--out", "o", f"{row.flag}={text}"])
            cli_ok = True
        except SystemExit:
            cli_ok = False
        assert cli_ok == library_ok, (row.name, text)
        if cli_ok:
            assert _settings_of(args) == {row.name: check_setting(row.name, row.parse(text))}
        checked += 1
    assert checked == len(texts)


def test_options_use_the_library_choices_and_strings_are_refused_by_the_library():
    # "auto" is a solver; "AUTO" is not (the library's StrOptions is case-sensitive)
    assert check_setting("solver", "auto") == "auto"
    with pytest.raises(ValueError):
        check_setting("solver", "AUTO")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["fit", "d.csv", "--out", "o", "--solver", "AUTO"])


def test_lr_zero_and_any_number_of_stages():
    # Two defects of the hand-written flags: --lr 0 was accepted (the library refuses a step of
    # 0), and --max-iter forced exactly 4 stages (the library takes 1 or more).
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["fit", "d.csv", "--out", "o", "--lr", "0"])
    args = parser.parse_args(["fit", "d.csv", "--out", "o", "--max-iter", "300,400", "--mu-schedule", "1,0.1",
                              "--s-schedule", "1,0.9"])
    settings = colide_core.CoLiDE(**_settings_of(args)).get_run_settings()
    assert settings.max_iter == (300, 400) and settings.mu_schedule == (1.0, 0.1)


def test_the_estimator_signature_is_the_table():
    # scikit-learn reads CoLiDE's parameters from __init__: every setting is one, with the table's
    # default, and the only others are the prior knowledge and TOPO's start order.
    params = inspect.signature(colide_core.CoLiDE.__init__).parameters
    assert set(params) - {"self"} == set(SETTING_NAMES) | set(NOT_SETTINGS)
    for row in SETTINGS:
        assert params[row.name].default == row.default, row.name
    assert [f for f in RunSettings.__dataclass_fields__] == list(SETTING_NAMES)
    assert RunSettings().as_dict() == {row.name: row.default for row in SETTINGS}
    # the dashboard's bounds are the rows' interactive constraints
    assert set(INTERACTIVE.constraints) == {row.name for row in SETTINGS if row.interactive is not None}


#: Manifests to round-trip: one setting away from the defaults at a time, and all together.
CHANGES = [
    {},
    {"variant": "ev", "lambda1": 0.2, "threshold": 0.25},
    {"solver": "topo", "topo_sizes": (5, 50, 500)},
    {"max_iter": (300, 300, 500), "mu_schedule": (1.0, 0.1, 0.01), "s_schedule": (1.0, 0.9, 0.8)},
    {"checkpoint": 100, "max_time": 30.0, "lr": 1e-3, "tol": 1e-5},
    {"solver": "adam", "random_state": 7},
    {"device": "jax-cpu"},
]


@pytest.mark.parametrize("change", CHANGES, ids=lambda c: ",".join(c) or "defaults")
def test_fit_command_round_trips_every_manifest(change):
    # The report's "exact command" used to omit topo_sizes, checkpoint and max_time, and wrote
    # a command the CLI refused for a schedule of other than four stages.
    model = colide_core.CoLiDE(**change)
    doc = json.loads(manifest_to_json({"params": model.get_params()}))
    command = fit_command(doc, "my data.csv")
    argv = shlex.split(command)
    assert argv[:4] == ["python", "-m", "colide_core", "fit"]
    args = build_parser().parse_args(argv[3:])
    assert args.data == "my data.csv"
    again = colide_core.CoLiDE(**_settings_of(args)).get_run_settings().as_dict()
    want = model.get_run_settings().as_dict()
    flagless = {row.name for row in SETTINGS if row.flag is None}
    assert {k: v for k, v in again.items() if k not in flagless} == {k: v for k, v in want.items() if k not in flagless}


def test_fit_command_of_a_real_topo_manifest(tmp_path):
    from colide_core.data.simulate import simulate_dataset

    X = simulate_dataset({"n_nodes": 5, "n_samples": 200}, 0).X
    model = colide_core.CoLiDE("ev", solver="topo", topo_sizes=(4, 8, 16), checkpoint=500,
                               max_iter=(500, 500)).set_params(mu_schedule=(1.0, 0.1), s_schedule=(1.0, 0.9)).fit(X)
    command = fit_command(build_manifest(model, X))
    for part in ("--solver topo", "--topo-sizes 4,8,16", "--checkpoint 500", "--max-iter 500,500",
                 "--mu-schedule 1.0,0.1", "--s-schedule 1.0,0.9"):
        assert part in command, (part, command)


def test_derived_dashboard_keys():
    from dashboard.checks import _FIT_KEYS, bootstrap_mismatch
    from dashboard.fitting import PATH_KEYS, solver_params

    assert set(PATH_KEYS) == (set(RESULT_SETTINGS) - {"variant", "lambda1"}) | {"forbidden", "required", "tiers"}
    assert "threshold" not in _FIT_KEYS and "random_state" not in _FIT_KEYS and "device" in _FIT_KEYS
    # A bootstrap run with another value of a setting that changes W is not this fit's: the
    # device (jax and numba reach different optima) was such an unlisted setting.
    boot = {"key": ("data-1", solver_params("nv", 0.05, {"device": "jax-cpu"}), 10, 0)}
    assert "device" in bootstrap_mismatch(boot, "data-1", solver_params("nv", 0.05))
    assert bootstrap_mismatch(boot, "data-1", solver_params("nv", 0.05, {"device": "jax-cpu"})) == ""
    # every setting that changes W is in the bootstrap match, the λ path's keys and (hence) cache keys
    for name in RESULT_SETTINGS:
        assert name in _FIT_KEYS


def test_a_topo_manifest_sets_the_sidebar_to_topo():
    # Loading a TOPO manifest left the sidebar saying "Fast" while the fits ran TOPO.
    from dashboard import manifests
    from dashboard.data import sachs_dataset

    ds = sachs_dataset()
    model = colide_core.CoLiDE("nv", solver="topo", device="cpu").fit(ds.X)
    doc = json.loads(manifest_to_json(build_manifest(model, ds.X)))
    doc["params"]["device"] = "gpu"  # a manifest cannot choose the server's device
    run = manifests.run_from_manifest(json.dumps(doc).encode(), ds)
    assert run.overrides.get("solver") == "topo" and "device" not in run.overrides
    assert any("device = 'gpu'" in note for note in run.notes)
    state = {"fit_results": {}, "prior_version": 0}
    manifests.apply_to_state(state, run)
    assert state["solver_choice"] == "topo"


def test_setting_parse_and_format_are_inverse():
    for row in SETTINGS:
        value = row.default
        if value is None:
            continue
        assert row.parse(row.format(value)) == value, row.name
    assert setting("max_iter").parse("1e3,2000") == (1000, 2000)
    assert np.isnan(setting("lr").parse("nan"))
    with pytest.raises(ValueError, match="not a number"):
        setting("lr").parse("abc")
    assert defaults.TOPO_SIZES == setting("topo_sizes").default


def test_simulation_bounds_are_one_table_for_widgets_and_links(new_app):
    # The Simulate page's widgets and a link's parameters read colide_core.data.simulate's
    # INTERACTIVE_BOUNDS; before, each kept its own copy.
    from colide_core.data.io import INTERACTIVE_MAX_NODES
    from colide_core.data.simulate import INTERACTIVE_BOUNDS as B
    from dashboard.infra.urlstate import SIM_BOUNDS, _SIM_KEYS

    for key, name in _SIM_KEYS.items():
        high = INTERACTIVE_MAX_NODES if key == "d" else B[name][2]
        assert SIM_BOUNDS[key] == (B[name][0], B[name][1], high), key
    at = new_app()
    at.switch_page("pages/simulate.py").run()
    assert not at.exception, at.exception
    widgets = {"sim_d": "n_nodes", "sim_degree": "degree", "sim_n": "n_samples", "sim_seed": "seed",
               "sim_interventions": "n_conditions", "sim_iv_targets": "n_targets", "sim_mean_shift": "mean_shift"}
    for key, name in widgets.items():
        w = at.number_input(key=key)
        assert (w.min, w.max) == B[name][1:], key
    for key, name in (("sim_w_range", "w_range"),):
        s = at.slider(key=key)
        assert (s.min, s.max) == B[name][1:], key
