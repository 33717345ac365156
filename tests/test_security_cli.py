"""Issue 22, class 6: the CLI never destroys files and refuses oversized work before doing any.

* No output replaces an existing file without ``--force``; none replaces an input, even with
  ``--force`` (same path, a symbolic link or a hard link to it).
* Bench outputs stay in the directory named: ``[bench].out`` from a TOML file cannot be absolute or
  climb with ``..``; method labels cannot hold path separators or control characters.
* Files are written atomically (temporary file + ``os.replace``): a failure leaves the old file
  whole and no temporary file behind.
* Out-of-range sizes (``--nodes 100000``, ``--degree 1e308``, a sweep of 864,000 runs) are refused
  before any work, with exit status 2 and a one-line ``error:`` message, never a traceback.

The commands run in-process through ``colide_core.run.cli.main`` (fast), and one case per command as a
real subprocess, as a user would run them.
"""
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from colide_core.run.cli import UsageError, load_bench_config, main

QUICK = ["--max-iter", "20,20,20,20"]
# The documented limits (colide_core.defaults; docs/security.md).
MAX_NODES, MAX_SWEEP_RUNS = 2_000, 10_000

pytestmark = pytest.mark.filterwarnings("ignore::colide_core.ConvergenceWarning")


def run(argv, capsys):
    """``main(argv)`` -> (exit status, stderr)."""
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exc:
        status = exc.code
    return status, capsys.readouterr().err


def _data(path, n=40, d=3, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d))
    X[:, 1] += X[:, 0]
    pd.DataFrame(X, columns=[f"x{i}" for i in range(d)]).to_csv(path, index=False)
    return path.read_bytes()


# --------------------------------------------------------------------------------------------
# no overwriting without --force
# --------------------------------------------------------------------------------------------

def test_simulate_does_not_replace_an_existing_data_file_without_force(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "data.csv").write_text("precious\n")
    status, err = run(["simulate", "--out", "out", "--nodes", 3, "--samples", 20], capsys)
    assert status == 2
    assert "error: out/data.csv exists; pass --force to replace it" in err and "Traceback" not in err
    assert (tmp_path / "out" / "data.csv").read_text() == "precious\n"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["data.csv"]  # nothing else written
    status, _ = run(["simulate", "--out", "out", "--nodes", 3, "--samples", 20, "--force"], capsys)
    assert status == 0
    assert pd.read_csv(tmp_path / "out" / "data.csv").shape == (20, 3)


def test_fit_checks_every_output_before_fitting(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _data(tmp_path / "d.csv")
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "manifest.json").write_text("{}")  # the last file fit writes
    status, err = run(["fit", "d.csv", "--out", "o", *QUICK], capsys)
    assert status == 2 and "o/manifest.json exists; pass --force" in err
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["manifest.json"]  # no partial output
    status, err = run(["fit", "d.csv", "--out", "o", "--force", *QUICK, "--quiet"], capsys)
    assert status == 0, err
    assert {"edges.csv", "W.csv", "adjacency.csv", "sigma.csv", "manifest.json"} == {
        p.name for p in (tmp_path / "o").iterdir()}


# --------------------------------------------------------------------------------------------
# never over an input, even with --force
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("force", [[], ["--force"]])
def test_fit_never_overwrites_its_own_input(tmp_path, capsys, monkeypatch, force):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dir").mkdir()
    original = _data(tmp_path / "dir" / "W.csv")
    status, err = run(["fit", "dir/W.csv", "--out", "dir", *force, *QUICK], capsys)
    assert status == 2
    assert "refusing to write dir/W.csv: it is an input of this command" in err
    assert (tmp_path / "dir" / "W.csv").read_bytes() == original


@pytest.mark.parametrize("link", ["symlink", "hardlink", "dotted path"])
def test_fit_never_overwrites_an_input_reached_another_way(tmp_path, capsys, monkeypatch, link):
    monkeypatch.chdir(tmp_path)
    original = _data(tmp_path / "d.csv")
    (tmp_path / "o").mkdir()
    if link == "symlink":
        os.symlink(tmp_path / "d.csv", tmp_path / "o" / "W.csv")
        data = "d.csv"
    elif link == "hardlink":
        os.link(tmp_path / "d.csv", tmp_path / "o" / "W.csv")
        data = "d.csv"
    else:  # the input named through ".." and the output directory through a symlink
        (tmp_path / "o" / "W.csv").write_bytes(original)
        os.symlink(tmp_path / "o", tmp_path / "alias")
        data = "o/../o/W.csv"
    status, err = run(["fit", data, "--out", "alias" if link == "dotted path" else "o", "--force", *QUICK], capsys)
    assert status == 2 and "it is an input of this command" in err
    assert (tmp_path / "d.csv").read_bytes() == original


def test_fit_never_overwrites_the_truth_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _data(tmp_path / "d.csv")
    (tmp_path / "o").mkdir()
    truth = "node,x0,x1,x2\nx0,0,1,0\nx1,0,0,0\nx2,0,0,0\n"
    (tmp_path / "o" / "adjacency.csv").write_text(truth)
    status, err = run(["fit", "d.csv", "--truth", "o/adjacency.csv", "--out", "o", "--force", *QUICK], capsys)
    assert status == 2 and "refusing to write o/adjacency.csv" in err
    assert (tmp_path / "o" / "adjacency.csv").read_text() == truth


def test_bench_never_overwrites_its_config(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = "[data]\nn_nodes = 3\nn_samples = 20\n[methods.SortNRegress]\n"
    (tmp_path / "summary.txt").write_text(cfg)  # a config that happens to be named like an output
    status, err = run(["bench", "summary.txt", "--out", ".", "--force", "--jobs", 1], capsys)
    assert status == 2 and "it is an input of this command" in err
    assert (tmp_path / "summary.txt").read_text() == cfg
    assert not (tmp_path / "results.jsonl").exists()


def test_bench_never_takes_another_tools_results_for_its_own(tmp_path, capsys, monkeypatch):
    # Issue 30, point 8 (data loss): a user's folder with another tool's results.jsonl and their own
    # summary.csv was taken for a sweep to resume: summary.csv replaced, results.jsonl appended to.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.toml").write_text("[bench]\nseeds = [0]\n[data]\nn_nodes = 3\nn_samples = 20\n[methods.SortNRegress]\n")
    user = tmp_path / "mine"
    user.mkdir()
    (user / "results.jsonl").write_text('{"theirs": 1}\n')
    (user / "summary.csv").write_text("my,own\n1,2\n")
    status, err = run(["bench", "c.toml", "--out", "mine", "--jobs", 1], capsys)
    assert status == 2 and "is not a colide bench sweep" in err
    assert (user / "results.jsonl").read_text() == '{"theirs": 1}\n'
    assert (user / "summary.csv").read_text() == "my,own\n1,2\n"
    # Our own sweep writes the marker, and a second run resumes it without --force.
    assert run(["bench", "c.toml", "--out", "ours", "--jobs", 1], capsys)[0] == 0
    assert (tmp_path / "ours" / ".colide-bench.json").is_file()
    lines = (tmp_path / "ours" / "results.jsonl").read_text().splitlines()
    assert run(["bench", "c.toml", "--out", "ours", "--jobs", 1], capsys)[0] == 0
    assert (tmp_path / "ours" / "results.jsonl").read_text().splitlines() == lines  # reused, not recomputed
    # --force replaces a foreign results.jsonl (never appends to it).
    assert run(["bench", "c.toml", "--out", "mine", "--jobs", 1, "--force"], capsys)[0] == 0
    assert '"theirs"' not in (user / "results.jsonl").read_text()


# --------------------------------------------------------------------------------------------
# bench outputs stay inside the directory named
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("out", ["/tmp/colide-escape", "../escape", "a/../../escape"])
def test_bench_out_from_a_toml_file_cannot_leave_the_config_directory(tmp_path, out):
    (tmp_path / "c.toml").write_text(f'[bench]\nout = "{out}"\n[methods.SortNRegress]\n')
    with pytest.raises(UsageError, match=r"\[bench\]\.out .* must be a relative path inside"):
        load_bench_config(tmp_path / "c.toml")


def test_bench_out_inside_the_config_directory_is_fine(tmp_path):
    (tmp_path / "c.toml").write_text('[bench]\nout = "runs/first"\n[methods.SortNRegress]\n')
    assert load_bench_config(tmp_path / "c.toml")["out"] == "runs/first"


@pytest.mark.parametrize("label", ['"../evil"', '"a/b"', '"bell\\u0007"', '"esc\\u001b[2J"', '"."'])
def test_method_labels_must_be_plain_names(tmp_path, label):
    (tmp_path / "c.toml").write_text(f'[methods.{label}]\nmethod = "SortNRegress"\n')
    with pytest.raises(UsageError, match="method label"):
        load_bench_config(tmp_path / "c.toml")


def test_check_plain_name():
    from colide_core.run.cli import check_plain_name

    assert check_plain_name("CoLiDE-NV λ=0.1", "label") == "CoLiDE-NV λ=0.1"
    for bad in ("", " ", ".", "..", "a/b", "a\\b", "nul\x00", "x" * 101, 3):
        with pytest.raises(UsageError):
            check_plain_name(bad, "label")


# --------------------------------------------------------------------------------------------
# atomic writes
# --------------------------------------------------------------------------------------------

def test_a_failed_write_leaves_the_old_file_whole_and_no_temporary_file(tmp_path):
    from colide_core.run.cli import OutputDir

    (tmp_path / "f.csv").write_text("old\n")
    out = OutputDir(tmp_path, force=True)

    def explode(fh):
        fh.write(b"half a ")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        out.write("f.csv", explode)
    assert (tmp_path / "f.csv").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.csv"]
    out.write("f.csv", "new\n")
    assert (tmp_path / "f.csv").read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.csv"]


def test_force_replaces_a_symlink_itself_never_its_target(tmp_path):
    from colide_core.run.cli import OutputDir

    (tmp_path / "elsewhere.txt").write_text("keep me\n")
    (tmp_path / "o").mkdir()
    os.symlink(tmp_path / "elsewhere.txt", tmp_path / "o" / "f.csv")
    with pytest.raises(UsageError, match="exists"):
        OutputDir(tmp_path / "o").write("f.csv", "x")
    OutputDir(tmp_path / "o", force=True).write("f.csv", "new\n")
    assert not (tmp_path / "o" / "f.csv").is_symlink()
    assert (tmp_path / "o" / "f.csv").read_text() == "new\n"
    assert (tmp_path / "elsewhere.txt").read_text() == "keep me\n"


def test_written_files_get_the_usual_permissions(tmp_path):
    from colide_core.run.cli import OutputDir

    old = os.umask(0o022)
    try:
        path = OutputDir(tmp_path).write("f.csv", "a\n")
    finally:
        os.umask(old)
    assert (path.stat().st_mode & 0o777) == 0o644


def test_output_names_are_plain(tmp_path):
    from colide_core.run.cli import OutputDir

    for bad in ("../x.csv", "/etc/passwd", "a/b.csv"):
        with pytest.raises(UsageError, match="output file name"):
            OutputDir(tmp_path, force=True).write(bad, "x")


def test_out_that_is_a_file_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    status, err = run(["simulate", "--out", "afile", "--nodes", 3, "--samples", 20], capsys)
    assert status == 2 and "--out afile exists and is not a directory" in err
    assert (tmp_path / "afile").read_text() == "x"


# --------------------------------------------------------------------------------------------
# sizes refused before any work
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--nodes", "100000"], f"n_nodes must be a positive integer <= {MAX_NODES}"),
    (["--degree", "1e308"], "degree must be a finite number in [0, 100]"),
    (["--degree", "nan"], "argument --degree: must be a finite number"),
    (["--degree", "inf"], "argument --degree: must be a finite number"),
    (["--samples", "2000000"], "n_samples must be a positive integer <= 1,000,000"),
    (["--nodes", "2000", "--samples", "100000"], "200,000,000 cells is more than the 50,000,000 allowed"),
    (["--noise-var-range", "nan,1"], "noise_var_range must be finite"),
    (["--seed", "-1"], "argument --seed: must be >= 0"),
])
def test_simulate_refuses_out_of_range_numbers_before_any_work(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    status, err = run(["simulate", "--out", "o", *args], capsys)
    assert status == 2
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_a_sweep_of_864000_runs_is_refused_before_the_grid_is_built(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    seeds = "[bench]\nn_seeds = 100\n"
    data = "[data]\nn_nodes = [" + ", ".join(str(k) for k in range(2, 122)) + "]\n"  # 120 settings
    data += "degree = [" + ", ".join(str(k) for k in range(1, 73)) + "]\n"  # x 72 = 8640
    (tmp_path / "big.toml").write_text(seeds + data + "[methods.SortNRegress]\n")
    status, err = run(["bench", "big.toml", "--out", "res"], capsys)
    assert status == 2
    assert "the sweep has 864,000 runs (1 methods x 8,640 data settings x 100 seeds)" in err
    assert f"more than the {MAX_SWEEP_RUNS:,} allowed" in err
    assert not (tmp_path / "res").exists()


def test_huge_n_seeds_is_refused_without_building_the_list(tmp_path):
    (tmp_path / "c.toml").write_text("[bench]\nn_seeds = 1000000000000\n[methods.SortNRegress]\n")
    with pytest.raises(UsageError, match="1,000,000,000,000 runs"):
        load_bench_config(tmp_path / "c.toml")


@pytest.mark.parametrize("toml, message", [
    ('[data]\nn_nodes = 100000\n', "n_nodes must be a positive integer <= 2000"),
    ('[data]\ndegree = "2"\n', "degree must be a finite number"),
    ('[data]\nstandardize = "no"\n', "standardize must be True or False"),
    ('[bench]\nseeds = [true, 1]\n', "seeds must be a non-empty list of integers"),
    ('[bench]\nretries = 1.5\n', "retries must be an integer in [0, 100]"),
    ('[methods.x]\nmethod = "CoLiDE-NV"\nmax_iter = [1e12, 1, 1, 1]\n', "max_iter = [1000000000000.0, 1, 1, 1] must be"),
    ('[methods.x]\nmethod = "CoLiDE-EV"\nlambda1 = "0.1"\n', "lambda1 = '0.1' must be"),
])
def test_bench_settings_are_checked_before_any_run(tmp_path, toml, message):
    if "[methods" not in toml:
        toml += "[methods.SortNRegress]\n"
    (tmp_path / "c.toml").write_text(toml)
    with pytest.raises(UsageError) as info:
        load_bench_config(tmp_path / "c.toml")
    assert message in str(info.value)


def test_fit_refuses_bad_solver_settings_before_reading_the_data(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("not,read\n")
    status, err = run(["fit", "d.csv", "--out", "o", "--lr", "0"], capsys)
    assert status == 2 and "lr = 0.0 must be a float in the range (0.0, inf)" in err
    assert not (tmp_path / "o").exists()


# --------------------------------------------------------------------------------------------
# one error handler: exit 2, `error: ...`, no traceback
# --------------------------------------------------------------------------------------------

def test_bad_data_and_unexpected_errors_exit_2_with_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 this is not parquet PAR1")
    status, err = run(["fit", "bad.parquet", "--out", "o"], capsys)
    assert status == 2 and "fit: error: " in err and "Traceback" not in err
    # A TOML nested deeper than the parser's recursion limit.
    (tmp_path / "deep.toml").write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    status, err = run(["bench", "deep.toml"], capsys)
    assert status == 2 and "bench: error: " in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_control_characters_in_messages_are_shown_escaped(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d\x1b[2J.csv").write_text("a,b\n1,x\n2,y\n3,z\n")
    status, err = run(["fit", "d\x1b[2J.csv", "--out", "o"], capsys)
    assert status == 2 and "\x1b" not in err and "d\\x1b[2J.csv" in err


def test_in_a_subprocess_simulate_refuses_to_overwrite_and_exits_2(tmp_path, repo_root):
    env = {**os.environ, "PYTHONPATH": str(repo_root), "PYTHONWARNINGS": "ignore"}
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "data.csv").write_text("precious\n")
    r = subprocess.run([sys.executable, "-m", "colide_core", "simulate", "--out", "o", "--nodes", "3"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.strip() == ("python -m colide_core simulate: error: o/data.csv exists; pass --force to "
                                "replace it, or choose another --out")
    assert (tmp_path / "o" / "data.csv").read_text() == "precious\n"
