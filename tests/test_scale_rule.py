"""Issue 52, item 2: the rule that says, without the truth, whether the variables' scales carry
CoLiDE's prediction (colide_core.evaluation.scale), GES + IDA beside it, and the CLI's sentence."""
import json

import numpy as np
import pandas as pd
import pytest

from colide_core._params import InvalidParameterError
from colide_core.data.simulate import simulate_dataset
from colide_core.data.sortability import standardize
from colide_core.evaluation._metrics import cpdag_from_dag
from colide_core.evaluation.ida import ges_cpdag, ida
from colide_core.evaluation.scale import (VARSORTABILITY_THRESHOLD, ges_ida_cpdag, ida_prediction, is_standardised,
                                          scale_verdict)


def _growing_chain(n=2000, seed=0):
    # x0 = e0, x1 = 2 x0 + e1, x2 = 3 x1 + e2 with unit noise: variances 1, 5, 46, growing along
    # 0 -> 1 -> 2, so both directed paths of length 1 (0->1, 1->2) and the one of length 2 (0->2)
    # point to the larger variance: varsortability 3/3 = 1
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal(n)
    x1 = 2 * x0 + rng.standard_normal(n)
    x2 = 3 * x1 + rng.standard_normal(n)
    return np.column_stack([x0, x1, x2]), np.array([[0, 2.0, 0], [0, 0, 3.0], [0, 0, 0]])


def test_a_chain_with_growing_variances_is_carried_by_its_scales():
    X, W = _growing_chain()
    v = scale_verdict(X, W)
    assert v.scale_carries and not v.standardised
    assert v.varsortability == 1.0 and v.recommendation == "colide"
    assert "varsortability is 1.00" in v.reason


def test_the_same_chain_standardised_is_not_and_the_reason_says_standardised():
    X, W = _growing_chain()
    v = scale_verdict(standardize(X), W)
    assert not v.scale_carries and v.standardised and v.recommendation == "ges_ida"
    assert "standardised" in v.reason
    # every variance is 1: each pair is a tie, which counts one half
    assert v.varsortability == 0.5
    # sample-variance standardising (ddof=1) is recognised too, and so is a recorded transform
    Xs1 = (X - X.mean(0)) / X.std(0, ddof=1)
    assert is_standardised(Xs1)
    assert is_standardised(X, transforms=[{"kind": "log"}, {"kind": "standardize"}])
    assert not is_standardised(X, transforms=[{"kind": "standardize"}, {"kind": "log"}])  # the last step counts


def test_a_reversed_chain_falls_below_the_threshold():
    # the graph 2 -> 1 -> 0 on the growing chain's data: every path points to a smaller variance
    X, W = _growing_chain()
    v = scale_verdict(X, W.T)
    assert v.varsortability == 0.0 and not v.scale_carries and not v.standardised
    assert f"below {VARSORTABILITY_THRESHOLD:g}" in v.reason and v.recommendation == "ges_ida"
    # an empty graph predicts nothing: no varsortability, not carried
    e = scale_verdict(X, np.zeros((3, 3)))
    assert np.isnan(e.varsortability) and not e.scale_carries
    with pytest.raises(InvalidParameterError):
        scale_verdict(X, W, threshold=1.5)
    with pytest.raises(ValueError):
        scale_verdict(X, np.zeros((2, 2)))


def test_ges_ida_agrees_with_ida_on_the_true_cpdag_when_ges_recovers_it():
    # a sparse ER graph (6 edges, all 6 undirected in its class) that GES recovers at 5,000 rows
    sim = simulate_dataset({"graph": "er", "degree": 1, "n_nodes": 6, "n_samples": 5000, "variance": "ev",
                            "w_range": (0.8, 1.5)}, random_state=6)
    X = pd.DataFrame(sim.X, columns=[f"v{k}" for k in range(6)])
    C_true = cpdag_from_dag(sim.B_true)
    C = ges_ida_cpdag(X)
    np.testing.assert_array_equal(C, C_true)  # GES recovered the class: the premise of the comparison
    np.testing.assert_array_equal(C, ges_cpdag(X))  # without conditions, nothing is centred away
    sd = X.std(ddof=1).to_numpy()
    for t in range(6):
        node = f"v{t}"
        delta = 0.5 * sd[t]
        got = ida_prediction(C, X, shift={node: delta})
        want = ida(C_true, X, t)
        np.testing.assert_allclose(got.shifts, want.effects * delta)
        np.testing.assert_allclose(got.table["ida_shift"], want.effect * delta)
        np.testing.assert_allclose(got.table["ida_shift_sd"], want.effect * delta / sd)
        assert got.table.loc[node, "ida_low"] == got.table.loc[node, "ida_high"] == pytest.approx(delta)
        # do(v = mean + delta) is the same intervention as a shift by delta
        same = ida_prediction(C, X, do={node: float(X[node].mean() + delta)})
        np.testing.assert_allclose(same.shifts, got.shifts, atol=1e-12)
    assert any(not ida_prediction(C, X, shift={f"v{t}": 1.0}).identified for t in range(6))  # sets, not numbers


def test_ida_prediction_refuses_what_it_cannot_answer():
    X, _ = _growing_chain(200)
    C = np.array([[0, 2, 0], [2, 0, 2], [0, 2, 0]])
    with pytest.raises(InvalidParameterError):
        ida_prediction(C, X)
    with pytest.raises(InvalidParameterError):
        ida_prediction(C, X, shift={0: 1.0, 1: 1.0})
    with pytest.raises(InvalidParameterError):
        ida_prediction(C, X, shift={0: float("nan")})
    with pytest.raises(InvalidParameterError):
        ida_prediction(C, X, do={0: 1.0}, shift={0: 1.0})


@pytest.fixture(scope="module")
def standardised_sachs(tmp_path_factory):
    from colide_core import load_sachs

    X, _ = load_sachs()
    path = tmp_path_factory.mktemp("sachs") / "sachs_standardised.csv"
    pd.DataFrame(standardize(X), columns=X.columns).to_csv(path, index=False)
    return path


def test_the_cli_says_it_on_standardised_data_and_adds_ges_ida(standardised_sachs, tmp_path, capsys):
    from colide_core.run.cli import main

    out = tmp_path / "pred"
    rc = main(["predict", str(standardised_sachs), "--out", str(out), "--shift", "PKA=1", "--baseline", "ges-ida"])
    text = capsys.readouterr().out
    assert rc == 0, text
    line = next(ln for ln in text.splitlines() if ln.startswith("scale: "))
    assert "The data are standardised" in line and "GES + IDA" in line
    table = pd.read_csv(out / "prediction.csv").set_index("node")
    X = pd.read_csv(standardised_sachs)
    C = ges_cpdag(X)
    want = ida_prediction(C, X, shift={"PKA": float(X["PKA"].std(ddof=1))}).table
    np.testing.assert_allclose(table["ges_ida_shift"], want["ida_shift"].loc[table.index], rtol=1e-6, atol=1e-9)
    record = json.loads((out / "manifest.json").read_text())["extra"]["prediction"]["scale"]
    assert record["standardised"] and record["recommendation"] == "ges_ida"


def test_the_report_says_it_beside_the_prediction_and_shows_ges_ida():
    import colide_core
    from colide_core.evaluation.interventions import intervention_table
    from colide_core.render.report import ReportFit, build_report

    X, W = _growing_chain(400)
    names = ["a", "b", "c"]
    for data, carries in ((pd.DataFrame(X, columns=names), True),
                          (pd.DataFrame(standardize(X), columns=names), False)):
        fit = ReportFit("NV", W, W, None, colide_core.CoLiDE("nv").get_params())
        pred = intervention_table(W, data, shift={"a": 1.0})
        C = np.array([[0, 2, 0], [2, 0, 2], [0, 2, 0]])
        html = build_report(data, [fit], predictions=[pred], ida_predictions=[ida_prediction(C, data, shift={"a": 1.0})])
        verdict = scale_verdict(data, W)
        assert verdict.scale_carries is carries
        sentence = verdict.reason.replace("'", "&#39;")  # escaped once, by Jinja
        assert sentence in html
        assert ("class=\"scale-warn\"" in html) is not carries
        assert "GES + IDA: possible shifts (sd)" in html
