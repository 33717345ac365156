"""``report``, ``predict`` and ``plan`` with ``--manifest`` alone (issue 47, point 4).

A fit made with ``--conditions``, ``--targets``, ``--drop-nonfinite-rows`` and ``--transform log``
records its design and preprocessing in its manifest; the three commands replay them on the raw
file, check the data's fingerprint and the design, and need no flag repeated.
"""
import json
import re

import numpy as np
import pandas as pd
import pytest

from colide_core.run.cli import main
from colide_core.run.manifest import load_manifest


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A raw file with a condition column, a missing value and positive values, and its fit."""
    tmp = tmp_path_factory.mktemp("replay")
    rng = np.random.default_rng(3)
    n = 150
    a = rng.normal(size=3 * n)
    b = 0.9 * a + 0.5 * rng.normal(size=3 * n)
    c = -0.7 * b + 0.5 * rng.normal(size=3 * n)
    cond = np.repeat(["obs", "iv_b", "other"], n)
    b[n:2 * n] = rng.normal(loc=1.0, size=n)  # b set by the intervention in iv_b
    df = pd.DataFrame({"a": np.exp(a / 3), "cond": cond, "b": np.exp(b / 3), "c": np.exp(c / 3)})
    df.loc[5, "c"] = np.nan  # dropped by --drop-nonfinite-rows, with its condition label
    df.to_csv(tmp / "raw.csv", index=False)
    (tmp / "targets.json").write_text(json.dumps({"iv_b": ["b"]}))
    assert main(["fit", str(tmp / "raw.csv"), "--out", str(tmp / "fit"), "--conditions", "cond", "--targets",
                 str(tmp / "targets.json"), "--drop-nonfinite-rows", "--transform", "log", "--variant", "ev",
                 "--lambda1", "0.05", "--quiet"]) == 0
    return tmp


def test_report_with_the_manifest_alone(fitted, capsys):
    tmp = fitted
    assert main(["report", str(tmp / "raw.csv"), "--manifest", str(tmp / "fit" / "manifest.json"), "--out",
                 str(tmp / "rep"), "--random-graphs", "5", "--rescalings", "0"]) == 0
    html = (tmp / "rep" / "report.html").read_text(encoding="utf-8")
    embedded = re.search(r'<script type="application/json" class="manifest"[^>]*>(.*?)</script>', html, re.S).group(1)
    doc = json.loads(embedded)
    recorded = json.loads((tmp / "fit" / "manifest.json").read_text())
    # the report is of the recorded fit: its W, its design (row 5 of "obs" dropped), its transform
    assert doc["results"]["W"] == recorded["results"]["W"]
    assert doc["conditions"]["counts"] == [149, 150, 150] and doc["conditions"]["targets"] == {"iv_b": ["b"]}
    assert doc["transform"] == [{"kind": "log"}]
    assert "Dropped 1 row" in capsys.readouterr().err


def test_predict_and_plan_with_the_manifest_alone(fitted, capsys):
    tmp = fitted
    man = load_manifest(tmp / "fit" / "manifest.json")
    assert main(["predict", str(tmp / "raw.csv"), "--manifest", str(tmp / "fit" / "manifest.json"), "--out",
                 str(tmp / "pred"), "--do", "a=0.5"]) == 0
    table = pd.read_csv(tmp / "pred" / "prediction.csv").set_index("node")
    assert table.loc["a", "predicted_mean"] == pytest.approx(0.5)  # do(a = 0.5), in the fit's (log) units
    assert table.loc["b", "shift"] > 0  # a -> b with a positive weight: b follows a
    out = json.loads((tmp / "pred" / "manifest.json").read_text())
    # the fit predicted from is the manifest's, unchanged, with its preprocessing and the prediction added
    assert out["results"]["W"] == man.raw["results"]["W"] and out["data"] == man.raw["data"]
    assert out["extra"]["preprocess"]["drop_nonfinite_rows"] is True and "prediction" in out["extra"]
    assert out["extra"]["prediction"]["reference"] == "obs"
    # ... so the written manifest serves --manifest in turn
    assert main(["plan", str(tmp / "raw.csv"), "--manifest", str(tmp / "pred" / "manifest.json"), "--n-bootstrap",
                 "0", "--out", str(tmp / "plan.csv")]) == 0
    plan = pd.read_csv(tmp / "plan.csv")
    # b was intervened on already: the plan ranks every node, and the manifest keeps the fit's data
    assert sorted(plan["node"]) == ["a", "b", "c"]
    assert json.loads((tmp / "plan.manifest.json").read_text())["data"] == man.raw["data"]
    capsys.readouterr()


def test_other_data_or_settings_next_to_the_manifest_are_refused(fitted, capsys):
    tmp = fitted
    df = pd.read_csv(tmp / "raw.csv")
    df.loc[0, "a"] *= 1.5
    df.to_csv(tmp / "other.csv", index=False)
    manifest = str(tmp / "fit" / "manifest.json")
    for argv, message in [
        (["report", str(tmp / "other.csv"), "--manifest", manifest, "--out", str(tmp / "r2")], "the data differ"),
        (["predict", str(tmp / "raw.csv"), "--manifest", manifest, "--out", str(tmp / "p2"), "--do", "a=1",
          "--lambda1", "0.1"], "carries the fit's run settings: drop --lambda1"),
        (["plan", str(tmp / "raw.csv"), "--manifest", manifest, "--conditions", "a"], "the fit's nodes"),
    ]:
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
        assert message in capsys.readouterr().err, argv


# ---- the data's flags, declared once for the four commands (issue 47, point 3) ------------------

DATA_FLAGS = {"--columns", "--drop-non-numeric", "--drop-nonfinite-rows", "--drop-constant-columns", "--prior",
              "--conditions", "--targets", "--transform", "--cofactor"}


def test_the_four_commands_take_the_same_data_flags():
    from colide_core.run.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices
    for command in ("fit", "report", "predict", "plan"):
        flags = {s for a in sub[command]._actions for s in a.option_strings}
        assert DATA_FLAGS <= flags, (command, DATA_FLAGS - flags)


def test_predict_and_plan_without_a_manifest_take_the_fits_preprocessing(fitted, capsys):
    """``predict``/``plan`` with the flags ``fit`` was given fit the same graph and record the same steps
    (before, ``--drop-nonfinite-rows`` and ``--transform`` were "unrecognized arguments" there)."""
    tmp = fitted
    flags = ["--conditions", "cond", "--targets", str(tmp / "targets.json"), "--drop-nonfinite-rows",
             "--transform", "log", "--variant", "ev", "--lambda1", "0.05"]
    assert main(["predict", str(tmp / "raw.csv"), "--out", str(tmp / "pred_flags"), "--do", "a=0.5", *flags]) == 0
    assert main(["plan", str(tmp / "raw.csv"), "--n-bootstrap", "0", "--out", str(tmp / "plan_flags.csv"),
                 *flags]) == 0
    fit = json.loads((tmp / "fit" / "manifest.json").read_text())
    for written in (tmp / "pred_flags" / "manifest.json", tmp / "plan_flags.manifest.json"):
        doc = json.loads(written.read_text())
        # the same rows (149 + 150 + 150 after the dropped one), the same log values, the same fit
        assert doc["data"] == fit["data"], written.name
        assert doc["transform"] == [{"kind": "log"}]
        assert doc["extra"]["preprocess"]["drop_nonfinite_rows"] is True
        assert doc["extra"]["preprocess"]["dropped_rows"] == 1
        np.testing.assert_allclose(doc["results"]["W"], fit["results"]["W"], atol=1e-10)
    # ... and each manifest serves --manifest in turn: predicting from it replays the same steps
    assert main(["predict", str(tmp / "raw.csv"), "--manifest", str(tmp / "pred_flags" / "manifest.json"),
                 "--out", str(tmp / "pred_again"), "--do", "a=0.5"]) == 0
    first = pd.read_csv(tmp / "pred_flags" / "prediction.csv")
    again = pd.read_csv(tmp / "pred_again" / "prediction.csv")
    np.testing.assert_allclose(again["predicted_mean"], first["predicted_mean"], atol=1e-12)
    assert "Dropped 1 row" in capsys.readouterr().err  # predict says what validating dropped, as fit does


def test_prior_knowledge_reaches_predict_and_plan(fitted, tmp_path, capsys):
    """``--prior`` forbidding a -> b: the fit behind the prediction has no a -> b, so do(a) leaves b
    where it is (the data's b follows a with weight 0.9, so without the prior b moves)."""
    tmp = fitted
    prior = tmp_path / "prior.json"
    prior.write_text(json.dumps({"forbidden": [["a", "b"]]}))
    base = ["predict", str(tmp / "raw.csv"), "--do", "a=2", "--conditions", "cond", "--targets",
            str(tmp / "targets.json"), "--drop-nonfinite-rows", "--transform", "log", "--variant", "ev"]
    assert main([*base, "--out", str(tmp_path / "free")]) == 0
    assert main([*base, "--out", str(tmp_path / "prior"), "--prior", str(prior)]) == 0
    free = pd.read_csv(tmp_path / "free" / "prediction.csv").set_index("node")
    held = pd.read_csv(tmp_path / "prior" / "prediction.csv").set_index("node")
    assert abs(free.loc["b", "shift"]) > 0.1
    doc = json.loads((tmp_path / "prior" / "manifest.json").read_text())
    assert doc["params"]["forbidden"] == [["a", "b"]]
    assert doc["results"]["adjacency"][0][1] == 0  # no a -> b
    assert abs(held.loc["b", "shift"]) < abs(free.loc["b", "shift"])
    capsys.readouterr()


def test_a_flag_the_manifest_already_records_is_refused_when_it_differs(fitted, capsys):
    tmp = fitted
    manifest = str(tmp / "fit" / "manifest.json")
    for argv, message in [
        (["predict", str(tmp / "raw.csv"), "--manifest", manifest, "--out", str(tmp / "p3"), "--do", "a=1",
          "--transform", "asinh"], "--transform differs from the transform the fit recorded (log)"),
        (["plan", str(tmp / "raw.csv"), "--manifest", manifest, "--prior", manifest], "leave --prior out"),
        (["report", str(tmp / "raw.csv"), "--out", str(tmp / "r3"), "--cofactor", "3"],
         "--cofactor applies to --transform asinh only"),
    ]:
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
        assert message in capsys.readouterr().err, argv
    # the same transform as recorded is accepted (it is the one replayed)
    assert main(["predict", str(tmp / "raw.csv"), "--manifest", manifest, "--out", str(tmp / "p4"), "--do", "a=1",
                 "--transform", "log"]) == 0
    capsys.readouterr()
