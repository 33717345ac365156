"""``colide app`` (issue 39): the dashboard from one command, and every missing optional package
named with the extra that installs it instead of a traceback.

The installed wheel is tested in ``tests/test_wheel.py``; here the checkout's app and, for the
missing packages, a subprocess in which they cannot be imported (``sys.modules[name] = None``).
"""
import pickle
import shlex
import subprocess
import sys
import tomllib

import pytest

from colide_core.exceptions import OPTIONAL_PACKAGES, MissingExtraError
from colide_core.run import app
from colide_core.run.cli import main

PROG = "python -m colide_core"


def _without(modules, argv):
    """Run the CLI in a fresh interpreter in which ``modules`` cannot be imported."""
    code = ("import sys\n"
            f"for name in {list(modules)!r}:\n"
            "    sys.modules[name] = None\n"
            "from colide_core.run.cli import main\n"
            f"sys.exit(main({list(argv)!r}))\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_dry_run_is_streamlit_run_of_the_app_with_its_settings_then_the_users_options(capsys, repo_root):
    assert main(["app", "--dry-run", "--server.port", "8502", "--theme.base=dark"]) == 0
    command = shlex.split(capsys.readouterr().out)
    assert command[:6] == [sys.executable, "-P", "-m", "streamlit", "run", str(repo_root / "app.py")]
    config = tomllib.loads((repo_root / ".streamlit" / "config.toml").read_text())
    settings = [f"--{section}.{key}={str(v).lower() if isinstance(v, bool) else v}"
                for section, table in config.items() for key, v in table.items()]
    assert "--client.showSidebarNavigation=false" in settings and "--server.enableStaticServing=true" in settings
    # issue 41: no full garbage collection after each script run (0.25 s a λ step, holding the GIL)
    assert "--runner.postScriptGC=false" in settings
    # localhost first, then the app's settings (which Streamlit reads only from the current
    # directory), then the user's options: the last occurrence of an option wins in streamlit run
    assert command[6:] == ["--server.address=localhost", *settings, "--server.port", "8502", "--theme.base=dark"]


def test_the_app_is_found_next_to_the_library_and_serves_static_from_its_folder(repo_root):
    from dashboard.infra.assets import STATIC_DIR

    assert app.app_script() == repo_root / "app.py"
    assert STATIC_DIR == repo_root / "static"


def test_other_commands_still_refuse_unknown_options(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["simulate", "--out", str(tmp_path / "o"), "--server.port", "1"])
    assert exit_.value.code == 2
    assert "unrecognized arguments: --server.port 1" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_app_without_streamlit_says_which_extra_in_one_line():
    out = _without(["streamlit"], ["app"])
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == (f"{PROG} app: error: the dashboard needs streamlit, which is not installed: "
                          "pip install 'colide-dashboard[dashboard]'\n")


def test_report_without_the_drawing_libraries_names_the_dashboard_extra(tmp_path):
    # before issue 39: "error: unexpected ModuleNotFoundError: No module named 'jinja2'"
    import colide_core

    X, _ = colide_core.load_sachs()
    X.to_csv(tmp_path / "sachs.csv", index=False)
    out = _without(["plotly", "pyvis", "matplotlib", "jinja2"],
                   ["report", str(tmp_path / "sachs.csv"), "--out", str(tmp_path / "r")])
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.splitlines()) == 1
    assert out.stderr.startswith(f"{PROG} report: error: ") and out.stderr.rstrip().endswith(
        "is not installed: pip install 'colide-dashboard[dashboard]'")
    assert not (tmp_path / "r" / "report.html").exists()
    # with only causal-learn missing: the same extra (it brings the baselines), said before the fit
    out = _without(["causallearn"], ["report", str(tmp_path / "sachs.csv"), "--out", str(tmp_path / "r")])
    assert out.returncode == 2 and out.stderr == (
        f"{PROG} report: error: the report needs causal-learn, which is not installed: "
        "pip install 'colide-dashboard[dashboard]'\n")


def test_an_unknown_missing_module_stays_unexpected():
    from colide_core.run.cli import _error_message

    assert _error_message(ModuleNotFoundError("No module named 'foo'", name="foo")) == (
        2, "unexpected ModuleNotFoundError: No module named 'foo'")
    assert _error_message(ModuleNotFoundError("No module named 'gies'", name="gies")) == (
        2, "gies is not installed: pip install 'colide-dashboard[baselines]'")


def test_ges_without_causal_learn_names_the_baselines_extra(monkeypatch):
    import numpy as np

    from colide_core.evaluation.baselines import MethodError, ges_dag, run_method

    for name in [m for m in sys.modules if m == "causallearn" or m.startswith("causallearn.")] + ["causallearn"]:
        monkeypatch.setitem(sys.modules, name, None)  # also hides a submodule imported earlier
    X = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(MissingExtraError) as err:
        ges_dag(X)
    assert (err.value.package, err.value.extra) == ("causal-learn", "baselines")
    assert str(err.value) == "GES needs causal-learn, which is not installed: pip install 'colide-dashboard[baselines]'"
    with pytest.raises(MethodError, match=r"GES failed: MissingExtraError: .*colide-dashboard\[baselines\]"):
        run_method("GES", X)


def test_missing_extra_error_is_an_import_error_and_pickles():
    err = MissingExtraError("gies.utils", "GIES")
    assert isinstance(err, ImportError) and err.name == "gies.utils"
    back = pickle.loads(pickle.dumps(err))  # a Dask worker's error reaches the client whole
    assert type(back) is MissingExtraError and str(back) == str(err) and back.extra == "baselines"
    named = pickle.loads(pickle.dumps(MissingExtraError("causallearn", "the report", extra="dashboard")))
    assert (named.package, named.extra) == ("causal-learn", "dashboard")
    with pytest.raises(KeyError):
        MissingExtraError("numpy")  # not optional


def test_every_optional_package_is_in_the_extra_it_names(repo_root):
    extras = tomllib.loads((repo_root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for module, (dist, extra) in OPTIONAL_PACKAGES.items():
        names = {req.split(">")[0].split("=")[0].split("[")[0].strip() for req in extras[extra]}
        assert dist in names, (module, dist, extra)
    assert set(OPTIONAL_PACKAGES) >= {"streamlit", "causallearn", "gies", "jinja2", "matplotlib"}


def test_a_streamlit_py_in_the_working_directory_is_never_run(tmp_path):
    # issue 53, medium 2: `python -m streamlit` puts the current directory first on sys.path, so a
    # streamlit.py in the folder `colide app` starts from ran instead of Streamlit (rc 3 and its
    # marker). The command's interpreter and its options, asked for Streamlit's version from a
    # folder holding such a file, must import the installed Streamlit and leave no marker.
    marker = tmp_path / "ran"
    (tmp_path / "streamlit.py").write_text(f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit(3)\n")
    command = app.app_command()
    interpreter = command[:command.index("streamlit") + 1]      # python [options] -m streamlit
    out = subprocess.run([*interpreter, "version"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Streamlit, version ") and not marker.exists()
