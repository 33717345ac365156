"""Tests for `python -m colide_core` (run as subprocesses) and its helpers."""
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from colide_core import CoLiDE, is_dag
from colide_core.run.cli import ProgressBar, UsageError, load_bench_config, main, summarize
from colide_core.data.io import read_table, validate_data
from colide_core.run.manifest import load_manifest

ROOT = Path(__file__).resolve().parent.parent
SHORT = "500,500,500,1000"

pytestmark = pytest.mark.filterwarnings("ignore::colide_core.ConvergenceWarning")


def cli(*args, cwd, timeout=180):
    """Run the CLI in a fresh interpreter, as a user would."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    return subprocess.run([sys.executable, "-m", "colide_core", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    """`simulate` once: a 6-node ER2 NV dataset (CSV) and the same data as Parquet."""
    d = tmp_path_factory.mktemp("sim")
    r = cli("simulate", "--out", "sim", "--nodes", 6, "--samples", 300, "--variance", "nv", "--seed", 3, cwd=d)
    assert r.returncode == 0, r.stderr
    r2 = cli("simulate", "--out", "simpq", "--nodes", 6, "--samples", 300, "--variance", "nv", "--seed", 3,
             "--format", "parquet", cwd=d)
    assert r2.returncode == 0, r2.stderr
    return d


def test_simulate_writes_data_and_ground_truth(simulated):
    sim = simulated / "sim"
    assert sorted(p.name for p in sim.iterdir()) == [
        "B_true.csv", "W_true.csv", "data.csv", "noise_std.csv", "simulation.json"]
    X = pd.read_csv(sim / "data.csv")
    assert X.shape == (300, 6) and list(X.columns) == [f"X{i}" for i in range(1, 7)]
    B = pd.read_csv(sim / "B_true.csv", index_col=0)
    W = pd.read_csv(sim / "W_true.csv", index_col=0)
    assert is_dag(B.to_numpy())
    assert ((B.to_numpy() != 0) == (W.to_numpy() != 0)).all()  # same support
    # ER2 on 6 nodes: round(2 * 6) = 12 edges.
    assert int(B.to_numpy().sum()) == 12 == json.loads((sim / "simulation.json").read_text())["n_edges"]
    # NV, the Simulate page's default weights +-[0.5, 2] (colide_core.defaults.SIM_W_RANGE), noise std in
    # sqrt([0.5, 10]).
    w = np.abs(W.to_numpy()[W.to_numpy() != 0])
    assert w.min() >= 0.5 and w.max() <= 2.0
    std = pd.read_csv(sim / "noise_std.csv")["noise_std"].to_numpy()
    assert std.min() >= np.sqrt(0.5) and std.max() <= np.sqrt(10.0)
    # Same seed, same data: the Parquet twin holds identical numbers.
    Xpq = pd.read_parquet(simulated / "simpq" / "data.parquet")
    np.testing.assert_allclose(Xpq.to_numpy(), X.to_numpy(), rtol=1e-15)


def test_fit_writes_outputs_and_a_reproducible_manifest(simulated, tmp_path):
    data = simulated / "sim" / "data.csv"
    r = cli("fit", data, "--variant", "nv", "--lambda1", 0.05, "--threshold", 0.3, "--max-iter", SHORT,
            "--truth", simulated / "sim" / "B_true.csv", "--export", "graphml,json,dagitty,svg",
            "--random-state", 11, "--out", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "\r" not in r.stderr  # no progress bar when stderr is not a terminal
    out = tmp_path / "out"
    names = {p.name for p in out.iterdir()}
    assert {"edges.csv", "W.csv", "adjacency.csv", "sigma.csv", "manifest.json",
            "graph.graphml", "graph.json", "graph.dagitty.txt", "graph.svg"} <= names
    man = load_manifest(out / "manifest.json")
    assert man.params["max_iter"] == (500, 500, 500, 1000) and man.raw["random_state"] == 11
    assert man.node_names == [f"X{i}" for i in range(1, 7)]
    assert set(man.metrics) >= {"shd", "tpr", "fdr", "sid", "shd_cpdag"}
    # The CSVs agree with the manifest.
    W = pd.read_csv(out / "W.csv", index_col=0)
    assert np.array_equal(W.to_numpy(), man.W)
    edges = pd.read_csv(out / "edges.csv")
    assert len(edges) == np.count_nonzero(man.adjacency)
    for s, t, w in edges.itertuples(index=False):
        assert man.adjacency[int(s[1:]) - 1, int(t[1:]) - 1] == w
    sigma = pd.read_csv(out / "sigma.csv")
    assert np.array_equal(sigma["sigma"].to_numpy(), man.sigma)
    # Reproduce in this process from the same file, read the way the CLI reads it: identical W.
    X = validate_data(read_table(data.read_bytes(), data.name), min_rows=2).X
    refit = man.reproduce(X)
    assert np.array_equal(refit.W_, man.W)


def test_fit_out_of_core_stats_matches_in_memory_fit(simulated, tmp_path):
    r = cli("fit", simulated / "simpq" / "data.parquet", "--stats", "--variant", "ev", "--max-iter", SHORT,
            "--solver", "adam", "--out", "big", "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""  # --quiet
    big = load_manifest(tmp_path / "big" / "manifest.json")
    assert big.data["kind"] == "stats" and big.data["n_samples"] == 300
    assert big.node_names == [f"X{i}" for i in range(1, 7)]
    # The in-memory fit on the same numbers: same covariance up to rounding (Dask's Chan merge
    # versus one matmul), hence the same W to solver precision and the same graph. The faithful
    # solver is used: cut short at these tiny budgets, the fast solver's line searches can branch
    # differently on 1e-16 differences.
    X = pd.read_csv(simulated / "sim" / "data.csv")
    mem = CoLiDE("ev", max_iter=(500, 500, 500, 1000), solver="adam").fit(X)
    np.testing.assert_allclose(big.W, mem.W_, atol=1e-6)
    assert np.array_equal(big.adjacency != 0, mem.adjacency_ != 0)


BENCH = """
[bench]
seeds = [0, 1]

[data]
graph = ["er", "sf"]
n_nodes = 5
n_samples = 200
variance = "nv"

[methods.CoLiDE-NV]
max_iter = [500, 500, 500, 1000]

[methods.sortnreg]
method = "SortNRegress"
"""


def test_bench_writes_tidy_table_and_summary_then_reuses(tmp_path):
    (tmp_path / "b.toml").write_text(BENCH)
    r = cli("bench", "b.toml", "--jobs", 1, "--out", "res", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    res = tmp_path / "res"
    df = pd.read_parquet(res / "results.parquet")
    # 2 methods x 2 graphs x 2 seeds = 8 runs, one row each.
    assert len(df) == 8 and df["key"].is_unique
    assert sorted(df["label"].unique()) == ["CoLiDE-NV", "sortnreg"]
    assert (df["status"] == "ok").all()
    assert df["sigma_rel_err"].notna().sum() == 4  # only CoLiDE estimates sigma
    csv = pd.read_csv(res / "results.csv")
    assert list(csv.columns) == list(df.columns) and len(csv) == 8
    summary = pd.read_csv(res / "summary.csv")
    shd = summary[(summary["metric"] == "shd_norm")]
    assert len(shd) == 4 and (shd["n"] == 2).all()  # 2 labels x 2 graphs, 2 seeds each
    mean_er = df[(df["label"] == "sortnreg") & (df["graph"] == "er")]["shd_norm"].mean()
    assert shd[(shd["label"] == "sortnreg") & (shd["graph"] == "er")]["mean"].item() == pytest.approx(mean_er)
    text = (res / "summary.txt").read_text()
    assert "== SHD / d (divided by the number of nodes, as in the paper's figures) (mean ± std over seeds) ==" in text
    assert "== SHD (raw count of edge errors, as on the Compare page) (mean ± std" in text and "sortnreg" in text
    meta = json.loads((res / "bench.json").read_text())
    assert meta["n_computed"] == 8 and meta["backend"] == "joblib"
    again = cli("bench", "b.toml", "--jobs", 1, "--out", "res", cwd=tmp_path)
    assert again.returncode == 0 and "0 runs computed, 8 reused" in again.stdout
    assert len((res / "results.jsonl").read_text().splitlines()) == 8


def test_killed_bench_resumes_without_recomputing(tmp_path):
    (tmp_path / "b.toml").write_text(BENCH)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    proc = subprocess.Popen([sys.executable, "-m", "colide_core", "bench", "b.toml", "--jobs", "1", "--out", "res"],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store = tmp_path / "res" / "results.jsonl"
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if store.exists() and len(store.read_text().splitlines()) >= 2:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL  # killed mid-sweep, not finished
    n_before = len(store.read_text().splitlines())
    assert 2 <= n_before < 8
    r = cli("bench", "b.toml", "--jobs", 1, "--out", "res", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"{8 - n_before} runs computed, {n_before} reused" in r.stdout
    df = pd.read_csv(tmp_path / "res" / "results.csv")
    assert len(df) == 8 and df["key"].is_unique
    assert len(store.read_text().splitlines()) == 8


def test_bad_arguments_in_a_subprocess_exit_2_without_traceback(tmp_path):
    r = cli("fit", "missing.csv", "--out", "o", cwd=tmp_path, timeout=60)
    assert r.returncode == 2
    assert "fit: error: data file not found: missing.csv" in r.stderr and "Traceback" not in r.stderr
    r = cli("bench", "--jobs", "x", "c.toml", cwd=tmp_path, timeout=60)
    assert r.returncode == 2 and "argument --jobs: invalid int value: 'x'" in r.stderr


@pytest.mark.parametrize("args,message", [
    (("fit", "missing.csv", "--out", "o"), "data file not found: missing.csv"),
    (("fit", "d.csv", "--out", "o", "--variant", "xx"), "argument --variant: invalid choice: 'xx'"),
    (("fit", "d.csv", "--out", "o", "--threshold", "abc"), "argument --threshold: not a number: 'abc'"),
    # any number of stages, as the library takes; the schedules must then have as many entries
    (("fit", "d.csv", "--out", "o", "--max-iter", "1,2"), "max_iter must have one entry per stage"),
    (("fit", "d.csv", "--out", "o", "--lr", "0"), "argument --lr: lr = 0.0 must be a float in the range (0.0, inf)"),
    (("fit", "d.csv", "--out", "o", "--max-iter", "1.5"), "argument --max-iter: max_iter = (1.5,) must be"),
    (("fit", "d.csv", "--out", "o", "--export", "gml"), "--export: unknown format(s) gml"),
    (("fit", "d.csv", "--out", "o", "--truth", "t.csv"), "--truth file not found: t.csv"),
    (("fit", "d.csv", "--out", "o", "--columns", "a,zz"), "--columns: not in d.csv: zz"),
    (("fit", "d.csv"), "the following arguments are required: --out"),
    (("fit", "text.csv", "--out", "o"), "text.csv:"),
    (("simulate", "--out", "o", "--nodes", "0"), "argument --nodes: must be >= 1, got 0"),
    (("bench", "bad.toml"), "bad.toml: invalid TOML"),
    (("bench", "nomethod.toml"), "unknown method 'NOTEARS'"),
    (("bench", "badparam.toml"), "unknown parameter(s) ['lambda9'] for CoLiDE-EV"),
    (("bench", "nothere.toml"), "config file not found: nothere.toml"),
    ((), "the following arguments are required"),
])
def test_bad_arguments_exit_with_status_2_and_a_clear_message(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("a,b\n1,2\n3,5\n4,4\n")
    (tmp_path / "text.csv").write_text("a,b\nx,y\nz,w\n")
    (tmp_path / "bad.toml").write_text("[bench\nseeds = 1")
    (tmp_path / "nomethod.toml").write_text("[methods.NOTEARS]\n")
    (tmp_path / "badparam.toml").write_text("[methods.CoLiDE-EV]\nlambda9 = 1\n")
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()  # nothing half-written


def test_load_bench_config_grid_and_errors(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[bench]\nn_seeds = 3\n[data]\nnoise = ["gaussian", "gumbel"]\nn_nodes = [5, 10]\n'
                   '[methods.GES]\n[methods.lam]\nmethod = "CoLiDE-EV"\nlambda1 = 0.1\n')
    c = load_bench_config(cfg)
    assert c["seeds"] == [0, 1, 2]
    assert c["grid"] == [{"noise": "gaussian", "n_nodes": 5}, {"noise": "gaussian", "n_nodes": 10},
                         {"noise": "gumbel", "n_nodes": 5}, {"noise": "gumbel", "n_nodes": 10}]
    assert c["methods"] == {"GES": ("GES", {}), "lam": ("CoLiDE-EV", {"lambda1": 0.1})}
    cfg.write_text('[data]\nnodes = 5\n[methods.GES]\n')
    with pytest.raises(UsageError, match=r"unknown key\(s\) in \[data\]: \['nodes'\]"):
        load_bench_config(cfg)
    cfg.write_text('[data]\nnoise = "cauchy"\n[methods.GES]\n')
    with pytest.raises(UsageError, match="bad \\[data\\] setting"):
        load_bench_config(cfg)
    cfg.write_text('[bench]\n')
    with pytest.raises(UsageError, match="no methods"):
        load_bench_config(cfg)
    # (low, high) settings: one flat pair is one value, a list of pairs is a grid axis.
    cfg.write_text('[data]\nw_range = [0.3, 1.5]\nnoise_var_range = [[0.5, 10], [1, 2]]\n[methods.GES]\n')
    assert load_bench_config(cfg)["grid"] == [{"w_range": [0.3, 1.5], "noise_var_range": [0.5, 10]},
                                              {"w_range": [0.3, 1.5], "noise_var_range": [1, 2]}]
    cfg.write_text('[data]\nw_range = [2.0, 1.0]\n[methods.GES]\n')
    with pytest.raises(UsageError, match=r"bad \[data\] setting .*low <= high"):
        load_bench_config(cfg)


def test_summarize_groups_by_pair_settings_read_back_from_json():
    # Rows read back from results.jsonl hold (low, high) pairs as lists; they are grouped as tuples.
    df = pd.DataFrame({"label": ["A"] * 4, "w_range": [[0.5, 2.0], [0.5, 2.0], [0.25, 1.0], [0.25, 1.0]],
                       "status": ["ok"] * 4, "shd_norm": [1.0, 3.0, 2.0, 6.0]})
    s = summarize(df, metrics=("shd_norm",))
    assert list(zip(s["w_range"], s["mean"], s["n"])) == [((0.5, 2.0), 2.0, 2), ((0.25, 1.0), 4.0, 2)]


def test_summarize_hand_computed():
    df = pd.DataFrame({"label": ["A", "A", "B", "B"], "graph": ["er"] * 4, "status": ["ok", "ok", "ok", "error"],
                       "shd_norm": [1.0, 3.0, 2.0, np.nan]})
    s = summarize(df, metrics=("shd_norm",)).set_index("label")
    # A: mean of 1 and 3 = 2, sample std sqrt(2); B: one ok run, one failure.
    assert s.loc["A", "mean"] == 2.0 and s.loc["A", "std"] == pytest.approx(np.sqrt(2.0))
    assert s.loc["B", "n"] == 1 and s.loc["B", "n_failed"] == 1 and s.loc["A", "n_failed"] == 0


def test_progress_bar_only_on_a_tty():
    class FakeTTY(io.StringIO):
        def isatty(self):
            return True

    tty, pipe = FakeTTY(), io.StringIO()
    for stream in (tty, pipe):
        bar = ProgressBar(10, label="fit", stream=stream)
        bar.update(10, suffix="done")
        bar.close()
    assert pipe.getvalue() == ""
    assert tty.getvalue().startswith("\rfit [" + "#" * 30 + "] 100%") and tty.getvalue().endswith("\n")


@pytest.mark.parametrize("solver", ["auto", "adam"])
def test_fit_progress_bar_rises_through_every_stage_with_either_solver(simulated, tmp_path, monkeypatch, solver):
    # On a terminal the bar is redrawn at the solver's checkpoints. Both solvers report progress in
    # faithful steps (colide_core.progress_fraction), so the percentages never go down and the last
    # redraw is in the last stage, past the first three stages' share of the budget.
    class FakeTTY(io.StringIO):
        def isatty(self):
            return True

    tty = FakeTTY()
    monkeypatch.setattr(sys, "stderr", tty)
    monkeypatch.setattr(ProgressBar, "update", _unthrottled(ProgressBar.update))
    rc = main(["fit", str(simulated / "sim" / "data.csv"), "--max-iter", SHORT, "--solver", solver,
               "--out", str(tmp_path / "o")])
    assert rc in (0, None)
    every = [d for d in tty.getvalue().split("\r") if d.startswith("fit [")]
    # solver="auto" ends with CoLiDE-TOPO's order search from the fast solution: its swaps at 100 %
    draws = [d for d in every if "stage " in d]
    if solver == "auto":
        assert "TOPO swaps" in every[-1] and every[-1].startswith("fit [" + "#" * 30 + "] 100%")
    pcts = [int(d.split("]")[1].split("%")[0]) for d in draws]
    stages = [int(d.split("stage ")[1].split("/")[0]) for d in draws]
    assert len(draws) >= 4 and pcts == sorted(pcts) and stages == sorted(stages)
    assert stages[-1] == 4 and stages[0] == 1
    budgets = (500, 500, 500, 1000)
    assert pcts[-1] >= int(100 * sum(budgets[:3]) / sum(budgets)) - 1


def _unthrottled(update):
    """ProgressBar.update without its 0.1 s redraw throttle (every checkpoint is drawn)."""
    def wrapper(self, value, suffix=""):
        self._last = -1e9
        return update(self, value, suffix)
    return wrapper


def test_simulate_defaults_to_nv_like_the_dashboard(tmp_path):
    # Issue 28, point 7: `simulate` defaulted to EV while the dashboard's Simulate page defaults to NV.
    from dashboard.infra.state import WIDGET_DEFAULTS

    r = cli("simulate", "--out", "sim", "--nodes", 5, "--samples", 200, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    std = pd.read_csv(tmp_path / "sim" / "noise_std.csv")["noise_std"].to_numpy()
    assert WIDGET_DEFAULTS["sim_variance"] == "NV"
    assert len(np.unique(std)) == 5  # one noise variance per node: NV (EV would give a single value)
