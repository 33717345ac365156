"""Shareable Learn views (issue 28, point 4): the URL is hostile input, read strictly.

Pure parsing first (every malformed parameter is ignored and named, none raises), then the page
with ``AppTest.query_params`` (a link restores the dataset and the widgets once per session), then
the carrying of λ and threshold across datasets.
"""
import math

import pytest

from colide_core.data.lessons import LESSONS
from colide_core.defaults import LAMBDA1, THRESHOLD
from dashboard.infra.urlstate import URL_KEYS, parse_view, view_params

pytestmark = pytest.mark.usefixtures("fresh_caches")


def test_a_clean_link_is_read_in_full():
    v = parse_view({"data": "sim", "graph": "SF", "k": "3", "d": "12", "n": "500", "noise": "laplace",
                    "var": "EV", "nv": "2.5", "w": "0.3,1.5", "seed": "7", "std": "1",
                    "lam": "0.02", "thr": "0.25", "model": "NV", "layout": "topdown"})
    assert v.problems == []
    assert v.data == "sim"
    assert v.sim == {"d": 12, "degree": 3.0, "n": 500, "seed": 7, "noise_var": 2.5, "w_range": (0.3, 1.5),
                     "graph": "SF", "noise": "laplace", "variance": "EV", "standardize": True}
    assert v.widgets == {"learn_lambda1": 0.02, "learn_threshold": 0.25, "learn_variant": "NV",
                         "learn_layout": "Top-down"}


@pytest.mark.parametrize("key, value, reason", [
    ("lam", "nan", "not a number"), ("lam", "inf", "not a number"), ("lam", "1e999", "outside"),
    ("lam", "0x10", "not a number"), ("lam", "-0.1", "outside"), ("lam", "50", "outside"),
    ("thr", "2.5", "outside"), ("thr", "", "not a number"), ("thr", "0.3" * 40, "too long"),
    ("model", "<script>", "not one of"), ("layout", "Top-down", "not one of"),
    ("data", "file:///etc/passwd", "not one of"),
])
def test_each_bad_parameter_is_ignored_and_named(key, value, reason):
    v = parse_view({key: value, "lam": "0.1"} if key != "lam" else {key: value})
    assert len(v.problems) == 1 and v.problems[0].startswith(f"{key}: ") and reason in v.problems[0], v.problems
    widget = {"lam": "learn_lambda1", "thr": "learn_threshold", "model": "learn_variant", "layout": "learn_layout"}
    assert widget.get(key) not in v.widgets  # an invalid value sets nothing
    # the message never echoes the value (a link's text is not shown back to the user)
    assert value not in v.problems[0] or value == ""


def test_simulation_bounds_are_the_simulate_page_s():
    v = parse_view({"data": "sim", "d": "5000", "n": "3", "seed": "1.5", "nvr": "5,1", "w": "1"})
    assert v.sim == {}
    assert sorted(p.split(":")[0] for p in v.problems) == ["d", "n", "nvr", "seed", "w"]


def test_unknown_lesson_and_repeated_parameters():
    v = parse_view({"data": "lesson", "lesson": "../../secrets"})
    assert v.data is None and v.problems == ["lesson: not a lesson of this version"]
    key = next(iter(LESSONS))
    v = parse_view({"data": ["sachs", "lesson"], "lesson": [key], "lam": ["0.2", "0.1"]})
    assert (v.data, v.lesson, v.widgets["learn_lambda1"]) == ("lesson", key, 0.1)  # the last value counts


def test_what_is_written_reads_back_the_same(new_app):
    from dashboard.simulation import SimConfig, simulate_dataset

    ds = simulate_dataset(SimConfig(d=7, degree=1.5, graph="SF", variance="EV", noise_var=0.7, n=300), 11)
    ss = {"learn_lambda1": 0.1, "learn_threshold": 0.35, "learn_variant": "EV", "learn_layout": "Circle"}
    params = view_params(ds, ss)
    assert set(params) <= set(URL_KEYS)
    v = parse_view(params)
    assert v.problems == []
    assert v.sim["d"] == 7 and v.sim["degree"] == 1.5 and v.sim["seed"] == 11 and v.sim["noise_var"] == 0.7
    assert v.widgets == {"learn_lambda1": 0.1, "learn_threshold": 0.35, "learn_variant": "EV",
                         "learn_layout": "Circle"}


def _learn(new_app, query, page="pages/learn.py"):
    """A fresh session opened on ``page`` with the link's ``query``."""
    at = new_app()
    at.query_params = dict(query)
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def test_a_link_restores_a_simulation_and_the_widgets(new_app):
    at = _learn(new_app, {"data": "sim", "d": "6", "n": "200", "seed": "3", "lam": "0.1", "thr": "0.2",
                          "model": "EV", "layout": "topdown"})
    ds = at.session_state["dataset"]
    assert ds.source == "simulated" and ds.shape == (200, 6) and ds.meta["seed"] == 3
    assert at.select_slider(key="learn_lambda1").value == 0.1
    assert at.slider(key="learn_threshold").value == 0.2
    assert at.segmented_control(key="learn_variant").value == "EV"
    assert at.session_state["learn_layout"] == "Top-down"
    assert set(at.session_state["fit_results"]) == {"ev"}
    # the URL is restored once per session: later changes are the user's, and the URL follows them
    at.select_slider(key="learn_lambda1").set_value(0.2).run()
    assert at.select_slider(key="learn_lambda1").value == 0.2
    assert at.query_params["lam"] in ("0.2", ["0.2"])


def test_a_link_made_on_an_upload_says_what_was_lost(new_app):
    at = _learn(new_app, {"data": "upload", "lam": "0.02", "thr": "7"})
    texts = [i.value for i in at.info] + [w.value for w in at.warning]
    assert any("uploaded data, which cannot travel in a URL" in t for t in texts), texts
    assert any("thr: outside" in t for t in texts), texts
    assert at.session_state["dataset"].source == "sachs"
    assert at.select_slider(key="learn_lambda1").value == 0.02
    assert at.slider(key="learn_threshold").value == THRESHOLD


def test_a_link_cannot_start_a_simulation_larger_than_a_live_page(new_app):
    at = _learn(new_app, {"data": "sim", "d": "200", "n": "200000"})
    assert at.session_state["dataset"].source == "sachs"
    assert any("more than a link may start" in i.value for i in at.info)


def test_a_link_counts_conditions_and_density_in_its_bound(new_app):
    # Issue 42: ?data=sim&d=50&n=784&iv=50&ivt=10 is 784 x 50 x 51 = 1,999,200 values, under the
    # 2,000,000 of a live page, but its 51 conditions made 12.1 s fits: (1 + 50) * 50^2 = 127,500
    # fit units > 100,000 refuses it; 10 conditions (27,500) or 50 conditions on 20 nodes pass.
    from dashboard.simulation import SimConfig
    from dashboard.infra.urlstate import LINK_MAX_FIT_UNITS, link_fit_units

    assert link_fit_units(SimConfig(d=50, interventions=50)) == 127_500 > LINK_MAX_FIT_UNITS
    assert link_fit_units(SimConfig(d=50, interventions=10)) == 27_500
    assert link_fit_units(SimConfig(d=50, degree=8.0)) == 2_500 * 4       # denser: 4x the iterations
    assert link_fit_units(SimConfig(d=20, interventions=50)) == 20_400
    at = _learn(new_app, {"data": "sim", "d": "50", "n": "784", "iv": "50", "ivt": "10"})
    assert at.session_state["dataset"].source == "sachs"
    assert any("51 conditions on 50 nodes" in i.value for i in at.info), [i.value for i in at.info]


def test_lambda_resets_for_other_columns_and_carries_for_the_same(new_app):
    # A lesson's λ = 0.001 once turned a new d = 30 simulation into a 305-edge hairball: for data
    # with other columns λ and the threshold go back to the paper's defaults, and the page says so.
    at = new_app()
    at.run()
    at.session_state["learn_lambda1"] = 0.001
    at.session_state["learn_threshold"] = 0.1
    at.switch_page("pages/simulate.py").run()
    at.number_input(key="sim_d").set_value(12).run()
    at.button(key="sim_run").click().run()
    assert not at.exception, at.exception
    assert (at.session_state["learn_lambda1"], at.session_state["learn_threshold"]) == (LAMBDA1, THRESHOLD)
    assert any("reset to the paper's defaults" in text and "0.001" in text
               for _, text in at.session_state["fit_messages"])
    # the same columns (another seed of the same simulation): a chosen λ carries over, and says so
    at.session_state["learn_lambda1"] = 0.2
    at.number_input(key="sim_seed").set_value(5).run()
    at.button(key="sim_run").click().run()
    assert at.session_state["learn_lambda1"] == 0.2
    assert any("carried over" in text for _, text in at.session_state["fit_messages"])
    assert math.isclose(at.session_state["learn_threshold"], THRESHOLD)


def test_a_link_carries_the_sachs_version_and_truth(new_app):
    at = _learn(new_app, {"data": "sachs", "rows": "utigsp", "truth": "cmu20", "model": "EV"})
    ds = at.session_state["dataset"]
    assert ds.shape == (5846, 11) and ds.meta["truth_name"] == "cmu20"
    assert int((ds.B_true.to_numpy() != 0).sum()) == 20
    assert at.query_params["rows"] in ("utigsp", ["utigsp"]) and at.query_params["truth"] in ("cmu20", ["cmu20"])
    bad = parse_view({"data": "sachs", "rows": "everything"})
    assert bad.problems == ["rows: not one of baseline, utigsp, all"]


def _predict(new_app, query):
    return _learn(new_app, query, "pages/predict.py")


def test_a_predict_link_opens_on_its_question_without_visiting_learn(new_app):
    # issue 48, m-5: a refresh or a shared /predict fell back to "Learn a graph first". The link
    # names the data, Learn's λ and model, and the question; the page solves Learn's fit (live on
    # Sachs), then asks the same question: do(PKA = 2.5) with the EV fit.
    from colide_core.evaluation.interventions import intervention_table, weights_for

    at = _predict(new_app, {"data": "sachs", "lam": "0.1", "model": "EV", "pnode": "PKA", "pdo": "2.5",
                            "pfit": "EV", "solver": "fast"})
    assert not [i.value for i in at.info if "Learn a graph first" in i.value]
    assert at.selectbox(key="pred_node").value == "PKA"
    assert at.segmented_control(key="pred_kind").value == "Set to a value"
    assert at.number_input(key="pred_value").value == 2.5
    res = at.session_state["fit_results"]["ev"]
    assert res.lambda1 == 0.1 and dict(res.params)["solver"] == "fast"
    # the prediction is the one of that fit: PKA's row moves by 2.5 - its mean
    ds = at.session_state["dataset"]
    [table] = [d.value for d in at.dataframe if "shift (sd), doing" in d.value.columns]
    sd = float(ds.X["PKA"].std(ddof=1))
    assert float(table.loc["PKA", "shift (sd), doing"]) == pytest.approx((2.5 - ds.X["PKA"].mean()) / sd, abs=1e-3)
    # and the URL follows the page: a shift of 2 sd replaces the do
    at.segmented_control(key="pred_kind").set_value("Shift by k sd").run()
    at.number_input(key="pred_k").set_value(2.0).run()
    assert at.query_params["pk"] in ("2", ["2"]) and "pdo" not in at.query_params
    assert at.query_params["pnode"] in ("PKA", ["PKA"])


def test_a_predict_link_with_hostile_values_keeps_the_page_and_says_what_was_ignored(new_app):
    at = _predict(new_app, {"data": "sachs", "pnode": "<img src=x onerror=alert(1)>", "pk": "1e309",
                            "pfit": "EV; DROP"})
    texts = [w.value for w in at.warning]
    assert any("pnode: not a node of this dataset" in t and "pk: outside" in t and "pfit: not one of" in t
               for t in texts), texts
    assert not any("<img" in t for t in texts)  # never echoed
    assert at.selectbox(key="pred_node").value == at.session_state["dataset"].node_names[0]


def test_a_lesson_link_to_predict_shows_the_lessons_banner(new_app):
    at = _predict(new_app, {"data": "lesson", "lesson": "seeing_doing", "solver": "fast"})
    assert any("Lesson:" in i.value for i in at.info), [i.value for i in at.info]
