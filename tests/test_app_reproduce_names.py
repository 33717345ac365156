"""The report's commands name the files the dashboard offers, under the names it offers them
(issue 48, m-8): on an upload with conditions, targets and prior knowledge, the Learn page offers
targets.json, and each fit's `--prior` file is the manifest the Learn page downloads for that fit
(it was "manifest.json", then the report's own "colide_EV_manifest.json": a Learn download had to
be renamed), one file per noise model. The files downloaded from the page, put in one folder with
the user's own CSV, run the report's EV and NV commands in a shell to the app's W.

Convention: X is (n_samples, n_nodes); W[i, j] != 0 means i -> j.
"""
import html
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from colide_core.data.simulate import simulate_dataset
from tests._schedules import QUICK

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fresh_caches")]

NAMES = [f"P{k}" for k in range(5)]


def _panel():
    sim = simulate_dataset({"graph": "er", "degree": 2, "n_nodes": 5, "n_samples": 400}, 1,
                           interventions={"n_conditions": 2, "n_targets": 1, "n_per_condition": 200})
    df = pd.DataFrame(sim.X, columns=NAMES)
    df.insert(2, "treatment", sim.conditions)
    targets = {c: [NAMES[j] for j in v] for c, v in sim.targets.items() if len(v)}
    return df.to_csv(index=False).encode(), "\n".join(f"{c},{v[0]}" for c, v in targets.items())


def test_the_reports_commands_read_the_files_the_dashboard_offers(new_app, downloads, monkeypatch, tmp_path):
    import streamlit

    raw, targets_text = _panel()
    at = new_app()
    at.run()
    at.session_state["data_drop_non_numeric"] = False
    at.file_uploader(key="data_upload").set_value(("my panel.csv", raw, "text/csv")).run()
    at.selectbox(key="data_condition_column").set_value("treatment").run()
    at.text_area(key="data_targets_text").set_value(targets_text).run()
    ds = at.session_state["dataset"]
    assert ds.source == "upload" and ds.meta["targets"], ds.meta.get("targets")
    at.session_state["solver_overrides"] = {**QUICK, "required": (("P0", "P4"),)}  # prior knowledge
    at.session_state["learn_variant"] = "Both"
    at.session_state["learn_tab"] = "Downloads"
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    results = at.session_state["fit_results"]
    assert set(results) == {"ev", "nv"}
    offered = dict(downloads)
    assert "targets.json" in offered, sorted(offered)  # an upload's targets are offered too

    # the Check page's report, built as its button builds it
    made = {}
    real = streamlit.download_button

    def spy(label, data, *args, **kwargs):
        if kwargs.get("key") == "check_dl_report":
            made["report"] = data
        return real(label, data, *args, **kwargs)

    monkeypatch.setattr(streamlit, "download_button", spy)
    at.session_state["check_n_random"] = 0
    at.session_state["check_n_rescale"] = 1
    at.switch_page("pages/check.py").run()
    assert not at.exception, at.exception
    page = made["report"]()
    page = page.decode() if isinstance(page, bytes) else page
    assert "could not be built" not in page, page[:500]

    links = re.findall(r'<a download="([^"]+_manifest\.json)"', page)
    commands = [html.unescape(c) for c in re.findall(r"(python -m colide_core fit [^<]+)", page)]
    assert len(links) == 2 and len(commands) == 2, (links, commands)
    priors = [re.search(r"--prior (\S+)", c).group(1).strip("'") for c in commands]
    assert priors == links, (priors, links)  # the command reads the manifest the report saves ...
    assert len(set(priors)) == 2, priors     # ... one per noise model
    for name in priors:                      # ... under the name the Learn page downloads it
        assert name in offered, (name, sorted(offered))

    # every file the commands read, from the page's downloads and the user's own file, in one folder
    (tmp_path / "my panel.csv").write_bytes(raw)
    (tmp_path / "targets.json").write_bytes(offered["targets.json"][-1])
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for command, name in zip(commands, priors):
        (tmp_path / name).write_bytes(offered[name][-1])
        assert "'my panel.csv'" in command and "--targets targets.json" in command, command
        variant = re.search(r"--variant (ev|nv)", command).group(1)
        out = tmp_path / variant
        done = subprocess.run(command.replace("--out results", f"--out {variant}") + " --quiet", shell=True,
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (command, done.stderr[-2000:])
        W = pd.read_csv(out / "W.csv", index_col=0).to_numpy()
        assert np.max(np.abs(W - results[variant].result.W)) <= 1e-8, command
