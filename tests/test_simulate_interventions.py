"""Simulated interventions (issue 31): hard interventions on chosen or random targets, condition-wide
intercept shifts, the same observational rows for the same seed, and the CLI's ``simulate`` flags."""
import json

import numpy as np
import pandas as pd
import pytest

from colide_core.data.simulate import check_interventions, simulate_dataset
from colide_core.run.cli import main as cli_main

SPEC = {"graph": "er", "degree": 2, "n_nodes": 10, "n_samples": 2000, "variance": "nv"}


def _node_with_parents(B):
    """The node with the most parents (ties: the lowest index)."""
    return int(np.argmax((B != 0).sum(axis=0)))


def test_a_hard_intervened_node_is_independent_of_its_parents_in_its_condition():
    base = simulate_dataset(SPEC, 4)
    j = _node_with_parents(base.B_true)
    parents = np.flatnonzero(base.B_true[:, j])
    assert len(parents) >= 2
    m = 4000
    data = simulate_dataset(SPEC, 4, interventions={"targets": [[j]], "n_per_condition": m})
    obs, iv = data.X[data.conditions == "obs"], data.X[data.conditions == "iv1"]
    assert iv.shape == (m, 10) and data.targets == {"obs": [], "iv1": [j]}
    r_iv = [np.corrcoef(iv[:, j], iv[:, p])[0, 1] for p in parents]
    r_obs = [np.corrcoef(obs[:, j], obs[:, p])[0, 1] for p in parents]
    # Under independence the sample correlation has standard error ~ 1/sqrt(m) = 0.016: 4 SE
    # (two-sided p ~ 6e-5 per pair). Observationally the same pairs are clearly correlated.
    assert max(abs(r) for r in r_iv) < 4 / np.sqrt(m)
    assert max(abs(r) for r in r_obs) > 10 / np.sqrt(len(obs))
    # The target's own law: its noise, N(0, sigma_j^2) (sd within 4 SE ~ 4 sigma / sqrt(2m)).
    np.testing.assert_allclose(iv[:, j].std(), data.noise_std[j], rtol=4 / np.sqrt(2 * m))
    # Every other node keeps its equation: residual x_k - x W[:, k] has the noise variance.
    for k in set(range(10)) - {j}:
        resid = iv[:, k] - iv @ data.W_true[:, k]
        np.testing.assert_allclose(resid.std(), data.noise_std[k], rtol=4 / np.sqrt(2 * m))


@pytest.mark.parametrize("extra", [{}, {"variance": "ev", "standardize": True}, {"noise": "gumbel"}])
def test_observational_rows_and_truth_are_unchanged_by_interventions(extra):
    plain = simulate_dataset({**SPEC, **extra}, 7)
    for iv in ({"n_conditions": 3, "n_per_condition": 100, "mean_shift": 1.5}, {"targets": [[0, 1], [], [9]]}):
        data = simulate_dataset({**SPEC, **extra}, 7, interventions=iv)
        np.testing.assert_array_equal(data.X[:2000], plain.X, strict=True)
        for name in ("B_true", "W_true", "noise_std", "scale"):
            np.testing.assert_array_equal(getattr(data, name), getattr(plain, name), strict=True)
        assert list(data.conditions[:2000]) == ["obs"] * 2000
    # no interventions: exactly today's result, no condition fields
    for none in (None, {}, {"n_conditions": 0}):
        same = simulate_dataset({**SPEC, **extra}, 7, interventions=none)
        np.testing.assert_array_equal(same.X, plain.X, strict=True)
        assert same.conditions is same.targets is same.shifts is None and same.spec == plain.spec


def test_condition_wide_shifts_move_each_condition_mean_through_the_sem():
    m = 3000
    data = simulate_dataset(SPEC, 2, interventions={"n_conditions": 2, "n_per_condition": m, "n_targets": 2,
                                                     "mean_shift": 3.0})
    assert data.shifts.shape == (3, 10) and np.all(data.shifts[0] == 0) and np.all(data.shifts[1:] != 0)
    obs = data.X[data.conditions == "obs"]
    np.testing.assert_allclose(obs.mean(axis=0), 0, atol=5 * obs.std(axis=0).max() / np.sqrt(len(obs)))
    for c, label in ((1, "iv1"), (2, "iv2")):
        X = data.X[data.conditions == label]
        W_c = data.W_true.copy()
        W_c[:, data.targets[label]] = 0.0
        # x = x W_c + z + c_k  =>  E[x] = c_k (I - W_c)^-1 ; within 5 standard errors per node
        expected = data.shifts[c] @ np.linalg.inv(np.eye(10) - W_c)
        se = X.std(axis=0) / np.sqrt(m)
        assert np.all(np.abs(X.mean(axis=0) - expected) < 5 * se), label
        assert np.max(np.abs(expected) / se) > 50  # the shift is far outside the noise: the test can fail
    no_shift = simulate_dataset(SPEC, 2, interventions={"n_conditions": 2, "n_per_condition": m, "n_targets": 2})
    assert np.all(no_shift.shifts == 0)
    np.testing.assert_allclose(no_shift.X.mean(axis=0), 0, atol=5 * no_shift.X.std(axis=0).max() / np.sqrt(len(no_shift.X)))


def test_random_targets_are_distinct_per_condition_and_reproducible():
    iv = {"n_conditions": 20, "n_per_condition": 5, "n_targets": 3}
    a = simulate_dataset(SPEC, 1, interventions=iv)
    b = simulate_dataset(SPEC, 1, interventions=iv)
    np.testing.assert_array_equal(a.X, b.X, strict=True)
    assert a.targets == b.targets and list(a.targets) == ["obs"] + [f"iv{k}" for k in range(1, 21)]
    assert all(len(set(t)) == 3 and all(0 <= v < 10 for v in t) for k, t in a.targets.items() if k != "obs")
    assert len({tuple(t) for t in a.targets.values()}) > 10  # drawn, not all the same
    assert a.X.shape == (2000 + 20 * 5, 10) and pd.Series(a.conditions).value_counts()["iv7"] == 5
    assert a.spec["interventions"]["targets"] == [a.targets[f"iv{k}"] for k in range(1, 21)]


@pytest.mark.parametrize("iv, message", [
    ({"n_conditoins": 2}, r"unknown intervention setting\(s\) \['n_conditoins'\]"),
    ({"n_conditions": -1}, "n_conditions"),
    ({"n_conditions": 2.0}, "n_conditions"),
    ({"n_conditions": True}, "n_conditions"),
    ({"n_conditions": 1000}, "MAX_CONDITIONS"),
    ({"targets": [[0]] * 1000}, "MAX_CONDITIONS"),
    ({"n_conditions": 2, "targets": [[0]]}, "has 1 lists but n_conditions is 2"),
    ({"targets": [[10]]}, r"node indices in \[0, 10\)"),
    ({"targets": [["X1"]]}, r"node indices in \[0, 10\)"),
    ({"targets": [[1, 1]]}, "names a node twice"),
    ({"targets": "0,1"}, "list of lists"),
    ({"n_conditions": 1, "n_targets": 11}, "n_targets"),
    ({"n_conditions": 1, "n_per_condition": 0}, "n_per_condition"),
    ({"n_conditions": 1, "mean_shift": -1.0}, "mean_shift"),
    ({"n_conditions": 1, "mean_shift": float("nan")}, "mean_shift"),
    ({"n_conditions": 999, "n_per_condition": 1000}, "rows in all conditions"),
])
def test_bad_intervention_settings_are_refused_before_any_work(iv, message):
    with pytest.raises(ValueError, match=message):
        simulate_dataset(SPEC, 0, interventions=iv)
    with pytest.raises(ValueError, match=message):
        check_interventions(iv, 10, 2000)


def test_cli_simulate_writes_conditions_and_targets(tmp_path):
    out = tmp_path / "sim"
    args = ["simulate", "--out", str(out), "--nodes", "6", "--samples", "300", "--variance", "nv", "--seed", "5",
            "--w-range", "0.5,2",
            "--intervene", "X2,X5", "--intervene", "X1", "--per-condition", "40", "--mean-shift", "2"]
    assert cli_main(args) == 0
    df = pd.read_csv(out / "data.csv")
    ref = simulate_dataset({"n_nodes": 6, "n_samples": 300, "variance": "nv", "degree": 2.0, "w_range": (0.5, 2.0)}, 5,
                           interventions={"targets": [[1, 4], [0]], "n_per_condition": 40, "mean_shift": 2.0})
    np.testing.assert_array_equal(df[[f"X{i}" for i in range(1, 7)]].to_numpy(), ref.X)
    assert list(df["condition"]) == list(ref.conditions) and list(df.columns)[-1] == "condition"
    assert json.loads((out / "targets.json").read_text()) == {"obs": [], "iv1": ["X2", "X5"], "iv2": ["X1"]}
    meta = json.loads((out / "simulation.json").read_text())
    assert meta["spec"]["interventions"]["targets"] == [[1, 4], [0]]
    # random targets, and errors as usage errors (exit code 2, no files)
    assert cli_main(["simulate", "--out", str(tmp_path / "r"), "--nodes", "6", "--samples", "50",
                     "--interventions", "2", "--targets-per-condition", "2"]) == 0
    t = json.loads((tmp_path / "r" / "targets.json").read_text())
    assert list(t) == ["obs", "iv1", "iv2"] and all(len(v) == 2 for k, v in t.items() if k != "obs")
    for bad in (["--intervene", "X7"], ["--interventions", "2", "--intervene", "X1"],
                ["--interventions", "1", "--targets-per-condition", "7"]):
        with pytest.raises(SystemExit) as exc:
            cli_main(["simulate", "--out", str(tmp_path / "bad"), "--nodes", "6", *bad])
        assert exc.value.code == 2
    assert not (tmp_path / "bad").exists()
    # without the flags: no condition column, no targets.json (today's files)
    assert cli_main(["simulate", "--out", str(tmp_path / "plain"), "--nodes", "6", "--samples", "50"]) == 0
    assert "condition" not in pd.read_csv(tmp_path / "plain" / "data.csv").columns
    assert not (tmp_path / "plain" / "targets.json").exists()
