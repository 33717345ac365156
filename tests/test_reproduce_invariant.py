"""Reproduce is an invariant (issue 48, point 1; the walk's blocker B-1).

The report printed ``fit DATA --transform asinh --cofactor 5`` for bundled Sachs, while the file
behind DATA ("data as fitted") already held the transformed values: the command transformed them
twice and printed 3 edges for the app's 6, exit 0. Now one function
(:func:`dashboard.data.build_data_as_fitted`, a :class:`dashboard.data.Reproduction`) gives both
the file and the command. This test runs the printed command in a shell, next to the files the
app offers under the names the command uses, for every source × transform × design, and
compares W with the app's fit.

Convention: W[i, j] != 0 means i -> j; X is (n_samples, n_nodes).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import colide_core
from dashboard.data import build_data_as_fitted, dataset_from_upload, sachs_dataset, transformed_dataset
from dashboard.fitting import fit_dataset, solver_params
from dashboard.manifests import fit_manifest
from dashboard.simulation import SimConfig, simulate_dataset

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fresh_caches")]

# A short schedule: the invariant is about the file and the flags, not the optimum.
QUICK = {"max_iter": (300, 300, 300, 600), "checkpoint": 150}
TRANSFORMS = [None, "log", "asinh", "standardize"]
DESIGNS = ["conditions", "dropped rows", "prior knowledge"]


def _upload_bytes(design):
    # A user's file made from Sachs's positive intensities (log is defined): 400 rows of three
    # conditions, a text column; with "dropped rows" three rows lose a value.
    rec = colide_core.load_sachs(rows="all", truth="utigsp18", return_record=True)
    keep = np.concatenate([np.flatnonzero(rec.conditions.astype(str) == c)[:150]
                           for c in sorted(set(rec.conditions.astype(str)))[:3]])
    df = rec.X.iloc[keep, :6].reset_index(drop=True)
    df.insert(1, "sample id", [f"c{i}" for i in range(len(df))])
    df["cond"] = np.asarray(rec.conditions.astype(str))[keep]
    if design == "dropped rows":
        df.loc[[3, 170, 402], df.columns[2]] = np.nan
    targets = {c: [n for n in ts if n in df.columns] for c, ts in rec.targets.items() if c in set(df["cond"])}
    return df.to_csv(index=False).encode(), {c: t for c, t in targets.items() if t}


def _dataset(source, design):
    if source == "sachs":
        return sachs_dataset(rows="all" if design == "conditions" else "baseline",
                             truth="utigsp18" if design == "conditions" else "consensus17")
    if source == "simulated":
        config = SimConfig(d=6, n=300, interventions=2 if design == "conditions" else 0)
        return simulate_dataset(config, 4)
    data, targets = _upload_bytes(design)
    with_conditions = design == "conditions"
    return dataset_from_upload(data, "phospho panel (v2).csv", drop_non_numeric=True,
                               drop_nonfinite_rows=design == "dropped rows",
                               condition_column="cond" if with_conditions else None,
                               targets_text=json.dumps(targets) if with_conditions else None)


def _overrides(ds, design):
    if design != "prior knowledge":
        return dict(QUICK)
    a, b = ds.node_names[0], ds.node_names[-1]
    return {**QUICK, "required": ((a, b),), "forbidden": ((b, a),)}


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("transform", TRANSFORMS, ids=lambda t: t or "raw")
@pytest.mark.parametrize("source", ["sachs", "simulated", "upload"])
def test_the_printed_command_gives_the_apps_graph(tmp_path, source, transform, design):
    ds = _dataset(source, design)
    if transform is not None:
        if transform == "log" and source == "simulated":
            # simulated SEMs take negative values: the app refuses log, so there is no fit to reproduce
            with pytest.raises(ValueError, match="log"):
                transformed_dataset(ds, "log")
            return
        ds = transformed_dataset(ds, transform, cofactor=5.0 if transform == "asinh" else None)
    res = fit_dataset(ds, solver_params("nv", 0.05, _overrides(ds, design)))
    doc = fit_manifest(res, ds, 0.3)
    repro = build_data_as_fitted(ds)
    manifest_name = "colide_fit_manifest.json"
    command = repro.command(doc, manifest_name=manifest_name)
    assert not command.startswith("("), command

    # the files, under the names the command uses: the user's own file for an upload, else what
    # the Learn page offers
    if source == "upload":
        assert repro.replay and repro.data_name == "phospho panel (v2).csv"
        (tmp_path / repro.data_name).write_bytes(_upload_bytes(design)[0])
    else:
        assert not repro.replay and repro.data_name == repro.file_name
        assert "--transform" not in command  # the file holds the transformed values already
        (tmp_path / repro.file_name).write_bytes(repro.csv)
    if "--targets" in command:
        assert repro.targets is not None
        (tmp_path / repro.targets_name).write_bytes(repro.targets)
    (tmp_path / manifest_name).write_text(json.dumps(doc))

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(command + " --quiet", shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, (command, done.stderr[-2000:])
    W = pd.read_csv(tmp_path / "results" / "W.csv", index_col=0)
    assert list(W.columns) == ds.node_names
    assert np.max(np.abs(W.to_numpy() - res.result.W)) <= 1e-8, command
    edges = pd.read_csv(tmp_path / "results" / "adjacency.csv", index_col=0).to_numpy() != 0
    np.testing.assert_array_equal(edges, np.asarray(doc["results"]["adjacency"]) != 0)


def test_the_blocker_as_the_walk_met_it():
    # B-1 exactly: nine-condition Sachs, asinh with cofactor 5. The command must not transform the
    # "data as fitted" again, and an upload's command must name the user's file, not the display
    # name "x.csv · log" (M-1).
    ds = transformed_dataset(sachs_dataset(rows="all", truth="utigsp18"), "asinh", cofactor=5.0)
    repro = build_data_as_fitted(ds)
    assert repro.file_name == "colide_Sachs9_utigsp18_asinh5_as_fitted.csv"
    command = repro.command({"params": {"variant": "nv", "lambda1": 0.05, "threshold": 0.3},
                             "transform": ds.meta["transform"], "conditions": {"column": "condition",
                                                                               "targets": ds.meta["targets"]}})
    assert "--transform" not in command and "--cofactor" not in command
    assert f"fit {repro.file_name} " in command and "--targets targets.json" in command
    first = pd.read_csv(__import__("io").BytesIO(repro.csv)).iloc[0, :11].to_numpy(dtype=float)
    np.testing.assert_array_equal(first, ds.X.iloc[0].to_numpy())  # transformed values, written exactly

    data, _ = _upload_bytes("dropped rows")
    up = transformed_dataset(dataset_from_upload(data, "x.csv", drop_non_numeric=True, drop_nonfinite_rows=True), "log")
    assert up.name.startswith("x.csv ·")
    repro = build_data_as_fitted(up)
    assert repro.replay and repro.data_name == "x.csv" and repro.file_name == "colide_x_log_as_fitted.csv"


def test_every_download_on_the_learn_page_has_its_own_name(new_app, downloads):
    # M-2: on nine-condition Sachs the dataset's 120-character name was cut and took the noise
    # model, λ and threshold with it: EV and NV downloaded under identical names. The dataset part
    # is now short (Sachs9_consensus17_asinh5) and the rest is never cut.
    from tests._app_sachs import QUICK, sachs_all_app

    at, _ = sachs_all_app(new_app)
    at.button(key="data_xform_apply").click().run()   # asinh, cofactor 5 (the Data page's default)
    assert not at.exception, at.exception
    at.switch_page("pages/learn.py").run()
    at.session_state["learn_tab"] = "Downloads"
    at.run()
    downloads.clear()
    at.run()  # one run: every file the tab offers, once each
    assert not at.exception, at.exception
    names = sorted(downloads)
    assert all(len(v) == 1 for v in downloads.values()), {k: len(v) for k, v in downloads.items()}
    stems = {"ev", "nv"}
    for v in stems:
        assert f"colide_Sachs9_consensus17_asinh5_{v}_lambda0.05_thr0.3_manifest.json" in names, names
        assert f"colide_Sachs9_consensus17_asinh5_{v}_lambda0.05_thr0.3_edges.csv" in names, names
    assert "colide_Sachs9_consensus17_asinh5_as_fitted.csv" in names and "targets.json" in names
    assert len(names) >= 9 and all(len(n) <= 100 for n in names), names
