"""The Learn page's solver settings are generated from the settings table (issue 39, point 1):
a setting typed there reaches the fits, their manifest and the manifest's exact command."""
import json
import shlex

import numpy as np

import colide_core
from colide_core.run.cli import _settings_of, build_parser
from colide_core.run.manifest import fit_command
from dashboard.infra import state
from dashboard.settings_form import ADVANCED, apply_advanced


def _submit(at):
    [button] = [b for b in at.button if "learn_advanced_settings" in str(b.key)]
    button.click().run()
    assert not at.exception, at.exception


def test_typed_settings_reach_the_fit_its_manifest_and_its_command(new_app):
    at = new_app()
    at.session_state["learn_tab"] = "Downloads"  # the form's tab (only the open tab is built, issue 41)
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    # three stages (the CLI used to force four) and a checkpoint the report's command omitted
    for name, text in (("max_iter", "400,400,800"), ("mu_schedule", "1,0.1,0.01"), ("s_schedule", "1,0.9,0.8"),
                       ("checkpoint", "200")):
        at.text_input(key=f"adv_{name}").set_value(text)
    _submit(at)
    overrides = at.session_state[state.SOLVER_OVERRIDES]
    assert overrides == {"max_iter": (400, 400, 800), "mu_schedule": (1.0, 0.1, 0.01),
                         "s_schedule": (1.0, 0.9, 0.8), "checkpoint": 200}
    results = at.session_state["fit_results"]
    assert results, "the live page fits with the new settings"
    res = next(iter(results.values()))
    assert dict(res.params)["max_iter"] == (400, 400, 800)
    ds = at.session_state["dataset"]
    model = colide_core.CoLiDE(dict(res.params)["variant"], lambda1=dict(res.params)["lambda1"],
                               **overrides).fit(ds.X)
    np.testing.assert_allclose(res.result.W, model.W_, atol=1e-12)
    from dashboard.manifests import fit_manifest_json

    doc = json.loads(fit_manifest_json(res, ds, 0.3))
    args = build_parser().parse_args(shlex.split(fit_command(doc))[3:])
    assert {k: v for k, v in _settings_of(args).items() if k in overrides} == overrides


def test_bad_texts_are_refused_all_at_once_and_nothing_changes(new_app):
    at = new_app()
    at.session_state["learn_tab"] = "Downloads"  # the form's tab (only the open tab is built, issue 41)
    at.switch_page("pages/learn.py").run()
    before = dict(at.session_state[state.SOLVER_OVERRIDES])
    at.text_input(key="adv_lr").set_value("0")            # the library refuses a step of 0
    at.text_input(key="adv_max_iter").set_value("1,2")     # 2 stages against 4 of the schedules
    at.text_input(key="adv_tol").set_value("<b>x</b>")     # not a number (shown escaped)
    _submit(at)
    errors = " ".join(e.value for e in at.error)
    assert "Not applied" in errors and "not a number" in errors and "&lt;b&gt;" in errors  # escaped once
    plain = errors.replace("\\", "")  # markdown escapes, undone by the renderer
    assert "lr = 0.0 must be" in plain and "one entry per stage" in plain
    assert dict(at.session_state[state.SOLVER_OVERRIDES]) == before


def test_apply_advanced_keeps_other_overrides_and_drops_defaults():
    texts = {row.name: row.format(row.default) if row.default is not None else "" for row in ADVANCED}
    texts["lr"] = "0.001"
    out = apply_advanced({"solver": "adam", "required": (("a", "b"),), "lr": 0.01, "tol": 1e-3}, texts)
    assert out == {"solver": "adam", "required": (("a", "b"),), "lr": 0.001}
