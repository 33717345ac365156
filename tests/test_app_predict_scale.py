"""The Predict page says when the variables' scales do not carry CoLiDE's prediction, and shows
GES + IDA's beside it (issue 52, item 2): Sachs standardised as the Data page's transform makes it."""
import numpy as np
import pytest

from colide_core.evaluation.scale import ges_ida_cpdag, ida_prediction
from tests._schedules import QUICK

pytestmark = pytest.mark.usefixtures("fresh_caches")


def test_standardised_sachs_warns_and_shows_ges_ida(new_app):
    from dashboard.infra import state
    from dashboard.data import transformed_dataset
    from dashboard.infra.state import predict as ps

    at = new_app()
    at.run()
    at.session_state["solver_overrides"] = dict(QUICK)
    ds = transformed_dataset(at.session_state[state.DATASET], "standardize")
    at.session_state[state.DATASET] = ds
    at.session_state["fit_results"] = {}
    at.switch_page("pages/learn.py").run()
    at.switch_page("pages/predict.py").run()
    assert not at.exception, at.exception
    # the rule reads the dataset's transform (and the unit variances): the warning names it
    warnings = [w.value for w in at.warning if "standardised" in w.value]
    assert warnings and "GES + IDA" in warnings[0], [w.value for w in at.warning]
    [table] = [d.value for d in at.dataframe if "shift (sd), doing" in d.value.columns]
    assert ps.GES_COLUMNS[0] not in table.columns  # GES has not run: a job, started by a button
    # the job: re-run until its result is in (conditions, not time)
    at.button(key="pred_ges_run").click().run()
    for _ in range(20):
        if at.session_state[ps.GES_RESULT] is not None:
            break
        at.run()
    assert not at.exception, at.exception
    assert at.session_state[ps.GES_RESULT] is not None, at.session_state[ps.GES_MESSAGES]
    [table] = [d.value for d in at.dataframe if "shift (sd), doing" in d.value.columns]
    cols = list(table.columns)
    assert cols.index(ps.GES_COLUMNS[0]) == cols.index("shift (sd), doing") + 1  # beside CoLiDE's
    # the column is the library's GES + IDA for the page's question (Raf shifted by 1 sd)
    X = ds.X
    want = ida_prediction(ges_ida_cpdag(X), X, shift={"Raf": float(X["Raf"].std(ddof=1))}).table
    np.testing.assert_allclose(table[ps.GES_COLUMNS[0]], want["ida_shift_sd"].round(3), atol=1e-9)
    assert table.loc["Raf", ps.GES_COLUMNS[0]] == pytest.approx(1.0)
    assert not [b for b in at.button if b.key == "pred_ges_run"]  # done: no button until the data change


def test_the_report_carries_the_ges_ida_prediction_shown_beside_colides():
    # issue 52 item 2: the Check page's report download gets the GES + IDA columns of the
    # prediction the Predict page showed (dashboard.infra.state.predict.for_report -> report_html)
    import pandas as pd

    from colide_core import CoLiDE
    from colide_core.evaluation.interventions import predict_intervention
    from colide_core.render.report import ReportFit
    from colide_core.run.manifest import build_manifest
    from dashboard import checks as dc
    from dashboard.infra.state import predict as ps

    rng = np.random.default_rng(0)
    a = rng.standard_normal(500)
    X = pd.DataFrame({"a": a, "b": 0.9 * a + rng.standard_normal(500), "c": rng.standard_normal(500)})
    model = CoLiDE("nv", solver="fast").fit(X)
    pred = predict_intervention(model, X, shift={"a": 1.0})
    ida_pred = ida_prediction(ges_ida_cpdag(X), X, shift={"a": 1.0})
    ss = {ps.LAST_PREDICTION: {"key": ("k", "f", 0.3), "prediction": pred, "ida": ida_pred}, ps.PLAN_RESULT: None}
    predictions, plan, ida = ps.for_report(ss, "k", "f", 0.3)
    assert predictions == (pred,) and plan is None and ida == (ida_pred,)
    assert ps.for_report(ss, "k", "f", 0.25) == ((), None, ())  # another threshold: not this fit
    fit = ReportFit("NV", model.W_, model.adjacency_, model.sigma_, model.get_params(), build_manifest(model, X))
    from colide_core.evaluation.checks import run_checks

    checks = run_checks(X, model.adjacency_, W=model.W_, n_random=5, n_rescale=1, random_state=0)
    html = dc.report_html("k", ("NV",), 0.3, None, None, None, X, [fit], None, "truth", checks, None, None, "d",
                          None, "DATA.csv", predictions, plan, ida).decode()
    assert "shift (sd), GES + IDA (mean)" in html and "GES + IDA: possible shifts (sd)" in html
