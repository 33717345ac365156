"""Every place that fits or scores takes the dataset's design, or says loudly that it does not
(issue 38, point 2).

The walk records every call of the library's entry points that fit or score
(``CoLiDE.fit``, ``CoLiDE.fit_from_stats``, ``baselines.run_method`` and the model checks) while
each page of the dashboard, and each command of the CLI, does its work on data with conditions
and known targets. Every call must carry the conditions; a method that cannot use them (GES,
SortNRegress) must have been told what to do with them (``unused_design="centre"``) and its
row labelled so. The walk covers the pages of ``dashboard.infra.nav.PAGES`` and the sub-commands of
``colide_core.run.cli.build_parser`` one by one: a new page or command fails here until it is
walked, that is until its author says how it takes the design.

Convention: W[i, j] != 0 means i -> j; X is (n_samples, n_nodes).
"""
import json
import threading

import numpy as np
import pandas as pd
import pytest

from colide_core.evaluation import baselines, checks, markov, residuals
from colide_core.solver._estimator import CoLiDE
from dashboard.infra.nav import PAGES
from tests._app_sachs import sachs_all_app

pytestmark = [pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
              pytest.mark.usefixtures("fresh_caches")]


def _carried(conditions, kw):
    """Whether a call carried the design: loose conditions, or a Design with conditions (issue 47)."""
    return conditions is not None or getattr(kw.get("design"), "has_conditions", False)


class Recorder:
    """Calls of the fitting and scoring entry points: (what, carried the design)."""

    def __init__(self):
        self.calls = []
        self._lock = threading.Lock()

    def add(self, what, ok):
        with self._lock:
            self.calls.append((what, bool(ok)))

    def take(self):
        with self._lock:
            out, self.calls = self.calls, []
        return out


@pytest.fixture
def recorder(monkeypatch):
    rec = Recorder()
    real_fit, real_stats = CoLiDE.fit, CoLiDE.fit_from_stats

    def fit(self, X, conditions=None, *args, **kw):
        rec.add("CoLiDE.fit", _carried(conditions, kw))
        return real_fit(self, X, conditions, *args, **kw)

    def fit_from_stats(self, cov, *args, **kw):  # conditions travel inside ConditionStats
        rec.add("CoLiDE.fit_from_stats", len(getattr(cov, "labels", ())) > 1)
        return real_stats(self, cov, *args, **kw)

    monkeypatch.setattr(CoLiDE, "fit", fit)
    monkeypatch.setattr(CoLiDE, "fit_from_stats", fit_from_stats)
    from dashboard.infra import workers

    monkeypatch.setattr(workers, "ENABLED", False)  # the spies live in this process: jobs compute in their threads
    real_run = baselines.run_method

    def run_method(name, X, *, conditions=None, unused_design="refuse", **kw):
        # a method that cannot use the design must have been told (centred), never pool silently
        rec.add(f"run_method[{name}]", _carried(conditions, kw))
        return real_run(name, X, conditions=conditions, unused_design=unused_design, **kw)

    monkeypatch.setattr(baselines, "run_method", run_method)
    import colide_core
    from colide_core.solver import path as path_module

    real_path = path_module.lambda_path

    def lambda_path(*args, conditions=None, **kw):  # the λ path runs the loops itself, not CoLiDE.fit
        rec.add("lambda_path", _carried(conditions, kw))
        return real_path(*args, conditions=conditions, **kw)

    monkeypatch.setattr(path_module, "lambda_path", lambda_path)
    from colide_core.evaluation import interventions

    real_refit = interventions.refit_weights

    def refit_weights(W, X, *, conditions=None, targets=None, design=None):  # the Predict page's SEM weights
        rec.add("refit_weights", _carried(conditions, {"design": design}))
        return real_refit(W, X, conditions=conditions, targets=targets, design=design)

    monkeypatch.setattr(interventions, "refit_weights", refit_weights)
    monkeypatch.setattr(colide_core, "lambda_path", lambda_path, raising=False)
    for module, name in ((checks, "edge_evidence"), (checks, "residual_checks"), (residuals, "residual_checks"),
                         (checks, "markov_check"), (markov, "markov_check"), (checks, "refit_compare"),
                         (checks, "scale_sensitivity")):
        real = getattr(module, name)

        def wrapped(*args, __real=real, __name=name, conditions=None, **kw):
            rec.add(__name, _carried(conditions, kw))
            return __real(*args, conditions=conditions, **kw)

        monkeypatch.setattr(module, name, wrapped)
    return rec


def _ok(at):
    assert not at.exception, at.exception


# --- the pages: what each does with the nine Sachs conditions --------------------------------

def _data(at):
    at.switch_page("pages/data.py").run()


def _learn(at):
    at.session_state["learn_variant"] = "Both"
    at.switch_page("pages/learn.py").run()
    _ok(at)
    assert at.session_state["fit_results"], "Learn fitted nothing"
    at.session_state["learn_variant"] = "NV"
    at.session_state["learn_tab"] = "Playback"
    at.run()
    at.toggle(key="learn_playback_on").set_value(True).run()
    _ok(at)
    assert at.session_state["learn_playback_result"] is not None, "Playback recorded nothing"
    at.session_state["learn_tab"] = "Graph"


def _simulate(at):
    at.switch_page("pages/simulate.py").run()  # opening it fits nothing (Simulate replaces the data)


def _compare(at):
    at.switch_page("pages/compare.py").run()
    at.radio(key="cmp_source").set_value("current").run()
    at.multiselect(key="cmp_methods").set_value(list(baselines.METHODS)).run()
    at.button(key="cmp_run").click().run()
    _ok(at)
    rows = at.session_state["compare_results"]["rows"]
    assert rows["error"].isna().all(), rows[["method", "error"]]
    # every row says how its method used the nine conditions
    assert set(rows["design"]) == {"design", "centred"}
    centred = set(rows.loc[rows["design"] == "centred", "method"])
    assert centred == {m for m, spec in baselines.METHODS.items() if not spec.accepts_conditions}


def _edge_confidence(at):
    at.switch_page("pages/edge_confidence.py").run()
    at.number_input(key="boot_n").set_value(2).run()
    at.button(key="boot_run").click().run()
    at.number_input(key="stab_n").set_value(2).run()
    at.multiselect(key="stab_lambdas").set_value([0.05]).run()
    at.button(key="stab_run").click().run()
    _ok(at)
    assert at.session_state["trust_boot_result"] and at.session_state["trust_stab_result"]


def _explorer(at):
    at.switch_page("pages/explorer.py").run()
    at.number_input(key="exp_n_lambdas").set_value(2).run()
    at.button(key="exp_run").click().run()
    _ok(at)
    assert at.session_state["trust_path_result"]


def _prior_knowledge(at):
    at.switch_page("pages/prior_knowledge.py").run()  # knowledge only: the fits happen on Learn


def _check(at):
    at.session_state["check_n_random"] = 2
    at.session_state["check_n_rescale"] = 1
    at.switch_page("pages/check.py").run()
    _ok(at)
    at.button(key="check_refit").click().run()
    at.button(key="check_path_run").click().run()
    _ok(at)
    report = at.session_state["check_result"]["report"]
    assert report is not None and report.standardized is not None and at.session_state["check_path"]


def _predict(at):
    at.switch_page("pages/predict.py").run()
    _ok(at)
    at.segmented_control(key="pred_weights").set_value("refit").run()  # least squares (an NV fit's default is its own)
    _ok(at)
    at.number_input(key="pred_n_boot").set_value(2).run()
    at.button(key="pred_boot_run").click().run()
    _ok(at)
    assert at.session_state["pred_boot_result"] is not None
    at.number_input(key="plan_n_boot").set_value(2).run()  # which experiment next: refits with the design
    at.button(key="plan_run").click().run()
    _ok(at)
    assert at.session_state["plan_result"] is not None


def _lessons(at):
    at.switch_page("pages/lessons.py").run()  # opening it fits nothing (a lesson replaces the data)


#: page -> (its walk, whether it fits or scores the current data)
WALK = {
    "pages/data.py": (_data, False),
    "pages/learn.py": (_learn, True),
    "pages/simulate.py": (_simulate, False),
    "pages/compare.py": (_compare, True),
    "pages/edge_confidence.py": (_edge_confidence, True),
    "pages/explorer.py": (_explorer, True),
    "pages/prior_knowledge.py": (_prior_knowledge, False),
    "pages/check.py": (_check, True),
    "pages/predict.py": (_predict, True),
    "pages/lessons.py": (_lessons, False),
}


def test_the_walk_covers_every_page():
    assert set(WALK) == {path for path, *_ in PAGES}


def test_every_page_takes_the_design(new_app, recorder):
    at, rec = sachs_all_app(new_app)
    assert len(set(rec.conditions)) == 9
    recorder.take()  # loading the data fits nothing that matters here
    seen = {}
    for page, (walk, fits) in WALK.items():
        walk(at)
        _ok(at)
        calls = recorder.take()
        seen[page] = calls
        pooled = sorted({what for what, ok in calls if not ok})
        assert not pooled, f"{page} fitted or scored the pooled rows: {pooled}"
        if fits:
            assert calls, f"{page} was walked but fitted nothing: the walk no longer reaches its work"
        else:
            assert not calls, f"{page} fits now ({calls[:3]}): walk its work and make it take the design"
    kinds = {what for calls in seen.values() for what, _ in calls}
    # the walk reached every kind of entry point (else a page stopped fitting and this test says nothing)
    assert {"CoLiDE.fit", "lambda_path", "edge_evidence", "residual_checks", "markov_check", "refit_compare",
            "refit_weights"} <= kinds
    assert {f"run_method[{m}]" for m in ("GES", "GIES", "SortNRegress")} <= kinds


# --- the commands --------------------------------------------------------------------------

def _design_files(tmp_path):
    from colide_core.data.simulate import simulate_dataset

    sim = simulate_dataset({"n_nodes": 5, "n_samples": 300, "variance": "ev"}, 1,
                           interventions={"n_conditions": 2, "n_targets": 1, "n_per_condition": 150})
    df = pd.DataFrame(sim.X, columns=[f"g{j}" for j in range(5)])
    df["cond"] = sim.conditions
    df.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "t.json").write_text(json.dumps({k: [f"g{j}" for j in v] for k, v in sim.targets.items() if v}))
    (tmp_path / "b.toml").write_text(
        '[bench]\nseeds = [0]\n[data]\nn_nodes = 5\nn_samples = 200\n[interventions]\nn_conditions = 2\n'
        '[methods.CoLiDE-NV]\nmax_iter = [200, 200, 200, 400]\n[methods.GES]\n')


SHORT = ["--max-iter", "200,200,200,400"]
#: sub-command -> its arguments on data with conditions, or None for a command that fits nothing
COMMANDS = {
    "fit": ["fit", "d.csv", "--out", "f", "--conditions", "cond", "--targets", "t.json", "--quiet", *SHORT],
    "report": ["report", "d.csv", "--out", "r", "--conditions", "cond", "--targets", "t.json",
               "--random-graphs", "2", "--rescalings", "1"],
    "bench": ["bench", "b.toml", "--out", "b", "--jobs", "1"],
    "predict": ["predict", "d.csv", "--out", "p", "--do", "g0=1", "--conditions", "cond", "--targets", "t.json",
                "--bootstrap", "2"],
    "plan": ["plan", "d.csv", "--out", "plan.csv", "--conditions", "cond", "--targets", "t.json",
             "--n-bootstrap", "2"],
    "simulate": None,
    "app": None,
}


def test_the_walk_covers_every_command():
    from colide_core.run.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert set(sub.choices) == set(COMMANDS)


def test_every_command_takes_the_design(tmp_path, monkeypatch, recorder):
    from colide_core.run.cli import main

    _design_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    for name, argv in COMMANDS.items():
        if argv is None:
            continue
        assert main(argv) == 0, name
        calls = recorder.take()
        assert calls, f"`{name}` fitted nothing"
        pooled = sorted({what for what, ok in calls if not ok})
        assert not pooled, f"`{name}` fitted or scored the pooled rows: {pooled}"
    # what each did is on record: the fit's manifest and the bench's rows
    manifest = json.loads((tmp_path / "f" / "manifest.json").read_text())
    assert len(manifest["conditions"]["labels"]) == 3 and manifest["conditions"]["targets"]
    rows = pd.read_csv(tmp_path / "b" / "results.csv")
    assert dict(zip(rows["label"], rows["design"])) == {"CoLiDE-NV": "design", "GES": "centred"}
    assert set(rows["n_conditions"]) == {3}
    assert "Conditions" in (tmp_path / "r" / "report.html").read_text()


@pytest.mark.parametrize("name", [n for n, argv in COMMANDS.items() if argv and "--targets" in argv])
def test_targets_without_conditions_is_refused_before_any_work(name, tmp_path, monkeypatch, capsys, recorder):
    from colide_core.run.cli import main

    _design_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    at = COMMANDS[name].index("--conditions")
    argv = COMMANDS[name][:at] + COMMANDS[name][at + 2:]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"python -m colide_core {name}: error: --targets needs --conditions (the column of each row's condition)" in err
    assert recorder.take() == []  # nothing fitted
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.toml", "d.csv", "t.json"]  # nothing written
