"""Tests for ``colide simulate --network NAME`` (issue 49): a bnlearn network's rows and truth, written as
``simulate`` writes a random SEM's."""
import json

import numpy as np
import pandas as pd
import pytest

from colide_core.data.networks import NETWORKS, load_network, read_network
from colide_core.run.cli import NETWORK_NAMES, main


def test_the_cli_offers_exactly_the_library_networks():
    assert NETWORK_NAMES == tuple(NETWORKS)


def test_simulate_network_writes_the_rows_and_the_networks_truth(tmp_path, capsys):
    out = tmp_path / "eco"
    assert main(["simulate", "--network", "ecoli70", "--out", str(out), "--samples", "200", "--seed", "4"]) == 0
    assert "ecoli70 (46 nodes, 70 arcs)" in capsys.readouterr().out
    # the same files as `simulate` of a random SEM
    assert sorted(p.name for p in out.iterdir()) == [
        "B_true.csv", "W_true.csv", "data.csv", "noise_std.csv", "simulation.json"]
    net = read_network("ecoli70")
    X = pd.read_csv(out / "data.csv")
    assert list(X.columns) == list(net.nodes) and X.shape == (200, 46)
    # the rows are load_network's for the same n and seed
    np.testing.assert_allclose(X.to_numpy(), load_network("ecoli70", 200, random_state=4).X.to_numpy(), rtol=1e-12)
    B = pd.read_csv(out / "B_true.csv", index_col=0)
    W = pd.read_csv(out / "W_true.csv", index_col=0)
    assert list(B.columns) == list(B.index) == list(net.nodes)
    assert np.array_equal(B.to_numpy(), net.B) and int(B.to_numpy().sum()) == 70
    np.testing.assert_array_equal(W.to_numpy(), net.W)
    # ecoli70.json: aceB = 0.1324 + 1.0464 icdA + z, Var z = 0.0853, so its noise sd is sqrt(0.0853)
    assert W.loc["icdA", "aceB"] == 1.0464
    sd = pd.read_csv(out / "noise_std.csv").set_index("node")["noise_std"]
    assert sd["aceB"] == pytest.approx(np.sqrt(0.0853), rel=1e-12)
    meta = json.loads((out / "simulation.json").read_text())
    assert meta["spec"] == {"network": "ecoli70", "n_samples": 200, "seed": 4}
    assert meta["n_edges"] == 70 and meta["network"]["name"] == "ecoli70" and meta["intercepts"]["aceB"] == 0.1324


def test_simulate_network_interventions_cut_the_targets_from_their_parents(tmp_path):
    out = tmp_path / "iv"
    assert main(["simulate", "--network", "ecoli70", "--out", str(out), "--samples", "2000", "--seed", "1",
                 "--intervene", "aceB,lacZ", "--format", "parquet"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "B_true.csv", "W_true.csv", "data.parquet", "noise_std.csv", "simulation.json", "targets.json"]
    assert json.loads((out / "targets.json").read_text()) == {"obs": [], "iv1": ["aceB", "lacZ"]}
    df = pd.read_parquet(out / "data.parquet")
    assert df.shape == (4000, 47) and df.columns[-1] == "condition"
    assert (df["condition"] == "obs").sum() == 2000 and (df["condition"] == "iv1").sum() == 2000
    # aceB's only parent is icdA (weight 1.0464, residual variance 0.0853): observed, the two are
    # almost collinear; under the hard intervention aceB no longer listens to icdA, so the sample
    # correlation of 2,000 independent rows is within a few 1 / sqrt(2000) = 0.022 of zero.
    obs, iv = df[df["condition"] == "obs"], df[df["condition"] == "iv1"]
    assert obs["aceB"].corr(obs["icdA"]) > 0.9
    assert abs(iv["aceB"].corr(iv["icdA"])) < 0.1


@pytest.mark.parametrize("flags, message", [
    (["--nodes", "5"], "--nodes shape(s) a random SEM"),
    (["--variance", "ev", "--standardize"], "--variance, --standardize shape(s) a random SEM"),
    (["--intervene", "aceB,nosuchgene"], "unknown node(s) ['nosuchgene']"),
    (["--samples", "2000000"], "n_samples must be"),
])
def test_simulate_network_refuses_what_does_not_apply_and_writes_nothing(tmp_path, capsys, flags, message):
    out = tmp_path / "bad"
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--network", "ecoli70", "--out", str(out), *flags])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_simulate_network_without_the_extra_says_how_to_get_it(tmp_path, capsys, no_extra):
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--network", "magic-niab", "--out", str(tmp_path / "x")])
    assert exc.value.code == 2
    assert "pip install 'colide-dashboard[networks]'" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
