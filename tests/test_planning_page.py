"""The Predict page's experiment ranking under the default criterion (issue 52: "entropy").

The entropy of the bootstrap's directions is 0 for every candidate when the refits all agree, as on
the observational Sachs rows, while an experiment would still settle edges there: the page names
the score by its criterion and says "no experiment would settle" only when none settles any
(colide_core.evaluation.planning.settles_nothing), not when every score is 0.
"""
import pytest

from colide_core import defaults
from colide_core.evaluation.planning import SCORE_LABELS, settles_nothing
from tests._apps import open_ranked

pytestmark = pytest.mark.usefixtures("fresh_caches")

NOTHING = "No single-node experiment would settle"


def test_a_ranking_of_zero_entropy_on_observational_sachs_still_shows_what_would_settle(new_app):
    from dashboard.data import sachs_dataset

    at = open_ranked(new_app, sachs_dataset(), 2)
    table = at.session_state["plan_result"]["table"]
    assert table.attrs["criterion"] == defaults.PLAN_CRITERIA[0] == "entropy"
    assert (table["score"] == 0).all()                 # both refits agree on every direction
    assert table["point_estimate"].max() > 0 and not settles_nothing(table)
    assert not any(NOTHING in i.value for i in at.info)
    [shown] = [d.value for d in at.dataframe if SCORE_LABELS["entropy"] in d.value.columns]
    assert "expected edges settled" not in shown.columns
    # the top candidate is the one the fit's count puts first (the tie-break of an all-zero score)
    assert table.index[0] == table["point_estimate"].idxmax()
