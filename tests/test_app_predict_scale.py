"""The Predict page says when the variables' scales do not carry CoLiDE's prediction, and shows
GES + IDA's beside it (issue 52, item 2): Sachs standardised as the Data page's transform makes it."""
import numpy as np
import pytest

from colide_core.evaluation.scale import ges_ida_cpdag, ida_prediction
from tests._schedules import QUICK

pytestmark = pytest.mark.usefixtures("fresh_caches")


def test_standardised_sachs_warns_and_shows_ges_ida(new_app):
    from dashboard import state
    from dashboard.data import transformed_dataset
    from dashboard.state import predict as ps

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
