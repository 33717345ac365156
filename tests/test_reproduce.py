"""Reproducible from end to end (issue 28, point 5): a manifest exported from the dashboard after an
upload with a text column and missing values, a log transform and a required edge; the command the
report prints (colide_core.run.manifest.fit_command) reproduces the same W from the raw file, and
``report --manifest`` accepts the transformed fit."""
import json
import shlex

import numpy as np
import pandas as pd
import pytest

from colide_core.graph.constraints import PriorKnowledge
from colide_core.run.cli import main as cli_main
from colide_core.run.manifest import fit_command

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _raw_csv():
    # a chain a -> b -> c of positive values (log is defined), a text column, one missing value
    rng = np.random.default_rng(3)
    a = np.exp(rng.normal(size=300))
    b = a * np.exp(0.3 * rng.normal(size=300))
    c = b ** 0.8 * np.exp(0.3 * rng.normal(size=300))
    df = pd.DataFrame({"a": a, "sample": [f"s{i}" for i in range(300)], "b": b, "c": c})
    df.loc[7, "c"] = np.nan
    return df.to_csv(index=False).encode()


def test_dashboard_manifest_reproduced_by_the_cli_from_the_raw_file(new_app, tmp_path):
    raw = _raw_csv()
    at = new_app()
    at.run()
    at.session_state["data_drop_non_numeric"] = True
    at.session_state["data_drop_nonfinite_rows"] = True
    at.file_uploader(key="data_upload").set_value(("panel.csv", raw, "text/csv")).run()
    assert at.session_state["dataset"].shape == (299, 3)
    at.radio(key="data_xform_kind").set_value("log").run()
    at.button(key="data_xform_apply").click().run()
    at.session_state["solver_overrides"] = PriorKnowledge.create(required=[("c", "a")]).as_kwargs()
    at.session_state["learn_variant"] = "EV"
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    res, ds = at.session_state["fit_results"]["ev"], at.session_state["dataset"]
    from dashboard.manifests import fit_manifest_json

    manifest = json.loads(fit_manifest_json(res, ds, 0.3))
    assert manifest["extra"]["preprocess"]["dropped_columns"] == ["sample"]
    assert manifest["extra"]["preprocess"]["dropped_rows"] == 1
    assert [t["kind"] for t in manifest["transform"]] == ["log"]

    (tmp_path / "raw.csv").write_bytes(raw)
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    command = fit_command(manifest, str(tmp_path / "raw.csv"), manifest_name=str(tmp_path / "manifest.json"))
    assert "--drop-non-numeric --drop-nonfinite-rows --transform log --prior" in command
    argv = shlex.split(command)[3:]  # after "python -m colide_core"
    argv[argv.index("--out") + 1] = str(tmp_path / "out")
    assert cli_main(argv) == 0
    W = pd.read_csv(tmp_path / "out" / "W.csv", index_col=0).to_numpy()
    np.testing.assert_allclose(W, res.W, rtol=0, atol=1e-10)   # the same W, from the raw file
    assert W[2, 0] != 0  # the required edge c -> a

    # report --manifest applies the recorded steps (it used to fail: "the data differ")
    assert cli_main(["report", str(tmp_path / "raw.csv"), "--manifest", str(tmp_path / "out" / "manifest.json"),
                     "--out", str(tmp_path / "rep"), "--rescalings", "0", "--random-graphs", "10"]) == 0
    assert (tmp_path / "rep" / "report.html").stat().st_size > 0
