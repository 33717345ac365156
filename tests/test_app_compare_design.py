"""Compare takes the experimental design (issue 38, point 1).

On Sachs with all nine conditions, Compare's "current dataset" run used to fit the pooled rows:
CoLiDE-EV gave another graph than Learn, and GIES, given no conditions, returned GES's graph.
These tests pin Compare's rows to the library calls *with* the design, and show that the calls
without it differ, so they fail on a page that pools the rows again.
"""
import json

import numpy as np
import pytest

import colide_core
from colide_core.evaluation import baselines
from colide_core.evaluation._metrics import evaluate
from colide_core.data.conditions import centre_by_condition
from dashboard.comparison import design_caption
from dashboard.fitting import fit_dataset, solver_params
from tests._app_sachs import QUICK, sachs_all_app

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

LAM, THR = 0.05, 0.3


@pytest.fixture(scope="module")
def compare_run():
    """One Compare run on the nine-condition Sachs: CoLiDE-EV, GES and GIES on the current data."""
    from streamlit.testing.v1 import AppTest

    from tests.conftest import _ROOT

    at, record = sachs_all_app(lambda: AppTest.from_file(str(_ROOT / "app.py"), default_timeout=600),
                               "pages/compare.py")
    at.session_state["learn_lambda1"] = LAM
    at.radio(key="cmp_source").set_value("current").run()
    at.multiselect(key="cmp_methods").set_value(["CoLiDE-EV", "GES", "GIES", "SortNRegress"]).run()
    at.number_input(key="cmp_threshold").set_value(THR).run()
    at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    return at, record


def _row(at, method):
    frame = at.session_state["compare_results"]["rows"]
    row = frame[frame["method"] == method]
    assert len(row) == 1, frame
    return row.iloc[0]


def test_compare_colide_is_learns_fit_on_nine_conditions(compare_run):
    at, record = compare_run
    ds = at.session_state["dataset"]
    assert len(ds.design.labels) == 9
    truth = ds.B_true.to_numpy()
    # Learn's fit: the dashboard's own fit of this dataset (conditions and targets from its meta)
    learn = fit_dataset(ds, solver_params("ev", LAM, QUICK))
    A_learn = colide_core.threshold_to_dag(learn.result.W, THR)
    expected = evaluate(truth, A_learn)
    row = _row(at, "CoLiDE-EV")
    assert row["error"] is None or row["error"] != row["error"]  # None or NaN: no failure
    assert row["design"] == "design"
    for key in ("shd", "nnz", "sid", "shd_cpdag"):
        assert row[key] == pytest.approx(expected[key]), key
    # ... and the pooled fit that the page used to run is another graph (13 vs 9 edges in the issue)
    pooled = colide_core.CoLiDE("ev", lambda1=LAM, threshold=THR, **QUICK).fit(ds.X).adjacency_
    assert not np.array_equal(pooled != 0, A_learn != 0)
    assert (row["shd"], row["nnz"]) != (evaluate(truth, pooled)["shd"], evaluate(truth, pooled)["nnz"])


def test_compare_gies_uses_the_targets_and_differs_from_ges(compare_run):
    at, _ = compare_run
    ds = at.session_state["dataset"]
    truth = ds.B_true.to_numpy()
    design = {"conditions": ds.design.row_labels(), "targets": ds.design.targets_by_name()}
    gies, ges = _row(at, "GIES"), _row(at, "GES")
    assert gies["design"] == "design" and ges["design"] == "centred"
    # GIES on the page = the library's GIES with the nine conditions and their targets
    W_gies = baselines.run_method("GIES", ds.X, conditions=design["conditions"], targets=design["targets"])
    assert gies["shd"] == evaluate(truth, W_gies)["shd"] and gies["nnz"] == np.count_nonzero(W_gies)
    # GES cannot take the design: it ran on the rows centred within each condition, as labelled
    W_ges = baselines.ges_dag(centre_by_condition(ds.X.to_numpy(), design["conditions"]))
    assert ges["shd"] == evaluate(truth, W_ges)["shd"] and ges["nnz"] == np.count_nonzero(W_ges)
    # The defect of the issue: GIES returned exactly GES's graph. Not any more.
    assert (gies["shd"], gies["nnz"]) != (ges["shd"], ges["nnz"])


def test_compare_table_and_downloads_record_the_design(compare_run):
    at, _ = compare_run
    table = [d.value for d in at.dataframe if "data used" in getattr(d.value, "columns", [])]
    assert len(table) == 1
    used = table[0]["data used"].to_dict()
    assert used["CoLiDE-EV"] == baselines.DESIGN_USES["design"]
    assert used["GIES"] == baselines.DESIGN_USES["design"]
    assert used["GES"] == used["SortNRegress"] == baselines.DESIGN_USES["centred"]
    captions = " ".join(c.value for c in at.caption)
    assert "9 conditions" in captions and "centred within each condition" in captions
    manifest = json.loads(at.session_state["compare_results"]["manifest"])
    assert manifest["schema"] == "colide-comparison/1"
    assert len(manifest["design"]["labels"]) == 9 and sum(manifest["design"]["counts"]) == 7466
    assert manifest["design"]["targets"]  # by node name
    assert {m: v["design"] for m, v in manifest["methods"].items()} == {
        "CoLiDE-EV": "design", "GES": "centred", "GIES": "design", "SortNRegress": "centred"}
    assert manifest["methods"]["CoLiDE-EV"]["params"]["lambda1"] == LAM
    assert {r["design"] for r in manifest["runs"]} == {"design", "centred"}


def test_design_caption_names_the_methods_that_cannot_use_the_design():
    assert design_caption(["CoLiDE-EV"], 1, False) == ""
    assert "GES cannot use it" in design_caption(["GIES", "GES"], 3, True)


def test_run_method_never_pools_conditions_silently():
    # Two conditions whose means differ by 5 on both nodes, no edge within a condition: pooled,
    # the shift alone correlates X0 and X1 (a spurious edge); centred per condition, it is gone.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 2))
    X[200:] += 5.0
    labels = ["obs"] * 200 + ["shift"] * 200
    with pytest.raises(ValueError, match="does not take conditions"):
        baselines.run_method("GES", X, conditions=labels)
    assert np.count_nonzero(baselines.run_method("GES", X)) == 1  # pooled: the spurious edge
    assert np.count_nonzero(baselines.run_method("GES", X, conditions=labels, unused_design="centre")) == 0
    assert baselines.design_use("GES", labels, unused_design="centre") == "centred"
    assert baselines.design_use("GIES", labels) == "conditions"
    with pytest.raises(ValueError):
        baselines.design_use("GES", labels, unused_design="refuse")
