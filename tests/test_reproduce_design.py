"""The report's exact command reproduces the dashboard's fit from the raw file, for every design
(issue 38, point 3): text columns, non-finite rows, constant columns, a condition column, targets,
prior knowledge, each solver and a schedule other than four stages.

Convention: W[i, j] != 0 means i -> j; X is (n_samples, n_nodes).
"""
import json
import shlex

import numpy as np
import pandas as pd
import pytest

from colide_core.data.simulate import simulate_dataset
from colide_core.run.cli import main
from colide_core.run.manifest import fit_command
from dashboard.data import dataset_from_upload
from dashboard.fitting import fit_dataset, solver_params
from dashboard.manifests import fit_manifest

THREE = {"max_iter": (400, 400, 800), "mu_schedule": (1.0, 0.1, 0.01), "s_schedule": (1.0, 0.9, 0.8),
         "checkpoint": 200}


def _raw_file(tmp_path):
    # A 5-node simulation with two interventional conditions, written as a user's file would be:
    # a text column, a constant column, a few rows with a missing value, the condition column.
    sim = simulate_dataset({"n_nodes": 5, "n_samples": 300, "variance": "ev"}, 3,
                           interventions={"n_conditions": 2, "n_targets": 1, "n_per_condition": 150})
    df = pd.DataFrame(sim.X, columns=[f"g{j}" for j in range(5)])
    df.insert(2, "note", "x")                # text: dropped with --drop-non-numeric
    df["flat"] = 1.0                          # constant: dropped with --drop-constant-columns
    df.loc[[4, 150, 420], "g1"] = np.nan      # rows dropped with their condition labels
    df["cond"] = sim.conditions
    path = tmp_path / "raw data.csv"
    df.to_csv(path, index=False)
    targets = {lab: [f"g{j}" for j in nodes] for lab, nodes in sim.targets.items() if nodes}
    return path, targets


@pytest.mark.parametrize("overrides", [
    {"max_iter": (300, 300, 300, 600)},
    {**THREE},
    {"solver": "adam", **THREE},
    {"solver": "topo", "topo_sizes": (4, 8, 16), "max_iter": (300, 300, 300, 600)},
    {"required": (("g0", "g3"),), "max_iter": (300, 300, 300, 600)},
], ids=["fast", "three-stages", "faithful", "topo", "prior"])
def test_the_printed_command_on_the_raw_file_gives_the_dashboards_fit(tmp_path, monkeypatch, overrides):
    path, targets = _raw_file(tmp_path)
    ds = dataset_from_upload(path.read_bytes(), path.name, drop_non_numeric=True, drop_nonfinite_rows=True,
                             drop_constant_columns=True, condition_column="cond",
                             targets_text=json.dumps(targets))
    assert ds.X.shape == (597, 5) and ds.meta["upload"]["dropped_rows"] == 3
    res = fit_dataset(ds, solver_params("ev", 0.05, overrides))
    doc = fit_manifest(res, ds, 0.3)
    (tmp_path / "manifest.json").write_text(json.dumps(doc))
    (tmp_path / "targets.json").write_text(json.dumps(targets))
    command = fit_command(doc, path.name)
    argv = shlex.split(command)[3:] + ["--quiet"]
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 0, command
    W = pd.read_csv(tmp_path / "results" / "W.csv", index_col=0)
    assert list(W.columns) == list(ds.X.columns)
    np.testing.assert_allclose(W.to_numpy(), res.result.W, rtol=0, atol=1e-10)
    shown = pd.read_csv(tmp_path / "results" / "adjacency.csv", index_col=0).to_numpy() != 0
    np.testing.assert_array_equal(shown, np.asarray(doc["results"]["adjacency"]) != 0)


def test_bundled_sachs_command_has_its_data_file_behind_it(tmp_path, monkeypatch, new_app, downloads):
    # The command for bundled Sachs named a DATA.csv and a targets.json the app did not offer.
    # The Learn page now offers both ("data as fitted"), under the names the command uses.
    import html

    from dashboard.checks import report_html
    from dashboard.data import command_data_file
    from colide_core.render.report import ReportFit
    from tests._app_sachs import QUICK, sachs_all_app

    at, rec = sachs_all_app(new_app, "pages/learn.py")
    at.session_state["learn_variant"] = "EV"
    at.run()
    assert not at.exception, at.exception
    ds = at.session_state["dataset"]
    res = at.session_state["fit_results"]["ev"]
    at.session_state["learn_tab"] = "Downloads"
    at.run()
    name = command_data_file(ds)
    assert name in downloads and "targets.json" in downloads, sorted(downloads)
    (tmp_path / name).write_bytes(downloads[name][-1])
    (tmp_path / "targets.json").write_bytes(downloads["targets.json"][-1])
    doc = fit_manifest(res, ds, 0.3)
    command = fit_command(doc, name)
    # the report prints that command (HTML-escaped once)
    import colide_core

    fit = ReportFit(res.label, res.W, colide_core.threshold_to_dag(res.W, 0.3), res.sigma, dict(res.params, threshold=0.3),
                    manifest=doc)
    page = report_html(ds.key, ("EV", 0.3), 0.3, None, None, None, ds.X, [fit], ds.B_true.to_numpy(), "truth",
                       None, None, None, ds.name, ds.design, name).decode()
    assert html.escape(command, quote=False) in page or command in html.unescape(page)
    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(command)[3:] + ["--quiet"]) == 0, command
    W = pd.read_csv(tmp_path / "results" / "W.csv", index_col=0).to_numpy()
    np.testing.assert_allclose(W, res.result.W, rtol=0, atol=1e-10)
    assert dict(res.params)["max_iter"] == QUICK["max_iter"]
