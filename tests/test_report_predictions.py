"""The report records the Predict page's intervention and next-experiment ranking (issue 40)."""
import numpy as np
import pandas as pd

import colide_core
from colide_core.evaluation.interventions import intervention_table
from colide_core.evaluation.planning import rank_interventions
from colide_core.render.report import ReportFit, build_report


def _chain_data():
    # "<b>a</b>" -> b with weight 2: a hostile node name, escaped once by the report
    rng = np.random.default_rng(0)
    a = rng.standard_normal(400)
    return pd.DataFrame({"<b>a</b>": a, "b": 2 * a + rng.standard_normal(400)})


def test_prediction_and_plan_sections():
    X = _chain_data()
    A = np.array([[0, 2.0], [0, 0]])
    fit = ReportFit("EV", A, A, None, colide_core.CoLiDE("ev").get_params())
    # shift a by 1: b moves by 2 (the weight), in b's sd; seeing equals doing here (no confounding)
    pred = intervention_table(A, X, shift={"<b>a</b>": 1.0})
    plan = rank_interventions(X, variant="ev", n_bootstrap=0, criterion="oriented")
    html = build_report(X, [fit], predictions=[pred], plan=plan)
    assert "id='interventions'" in html and "id='plan'" in html
    assert "&lt;b&gt;a&lt;/b&gt; shifted by +1" in html and "<b>a</b>" not in html  # escaped once
    assert "&amp;lt;b&amp;gt;a&amp;lt;/b&amp;gt; shifted" not in html
    shift_b = 2.0 / X["b"].std(ddof=1)
    assert f"{shift_b:.4g}" in html  # b's shift in sd, doing
    # the chain's one edge is settled by an intervention at either end: both candidates score 1
    assert plan["score"].tolist() == [1.0, 1.0]
    assert "expected edges settled" in html


def test_no_sections_without_them():
    X = _chain_data()
    A = np.array([[0, 2.0], [0, 0]])
    html = build_report(X, [ReportFit("EV", A, A, None, colide_core.CoLiDE("ev").get_params())])
    assert "id='interventions'" not in html and "id='plan'" not in html
