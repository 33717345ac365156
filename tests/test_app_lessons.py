"""The Lessons page (AppTest): one click loads the lesson's dataset and settings and opens Learn."""
import numpy as np
import pytest

from colide_core.data.lessons import LESSONS

pytestmark = pytest.mark.usefixtures("fresh_caches")


def test_every_lesson_has_a_button_and_markov_loads_and_shows_its_idea(new_app):
    at = new_app()
    at.run()
    at.switch_page("pages/lessons.py").run()
    assert not at.exception, at.exception
    assert [b.key for b in at.button if b.key.startswith("lesson_open_")] == [f"lesson_open_{k}" for k in LESSONS]
    at.button(key="lesson_open_markov").click().run()
    assert not at.exception, at.exception
    ds = at.session_state["dataset"]
    assert ds.source == "lesson" and ds.meta == {"lesson": "markov"} and ds.node_names == ["rain", "wet"]
    assert at.session_state["learn_variant"] == "EV"
    assert at.session_state["learn_lambda1"] == 0.05 and at.session_state["learn_threshold"] == 0.3
    # the Learn page is shown, with the lesson's explanation
    assert at.title[0].value.startswith("Learn")
    assert any("Markov equivalence" in i.value for i in at.info)
    # AppTest's next run goes back to the page it was told to run: stay on Learn explicitly
    at.session_state["learn_tab"] = "Metrics"  # only the open tab is built (issue 41)
    at.switch_page("pages/learn.py").run()
    at.button(key="learn_run").click().run()
    assert not at.exception, at.exception
    shd = [m.value for m in at.metric if m.label == "SHD · EV"]
    assert shd == ["1"]  # the reversed edge: SHD 1 ...
    table = [d.value for d in at.dataframe if len(d.value.index) and d.value.index[0] == "SHD"][0]
    assert table.loc["SHD-C", "EV"] == 0  # ... which SHD-C forgives



def test_the_interventions_lesson_fits_with_its_targets_on_learn(new_app):
    at = new_app()
    at.run()
    at.switch_page("pages/lessons.py").run()
    at.button(key="lesson_open_iv_known").click().run()
    at.session_state["learn_tab"] = "Metrics"  # only the open tab is built (issue 41)
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    assert at.session_state["dataset"].meta["targets"]["iv1"] == ["X5"]  # seed 21 (issue 51)
    assert [m.value for m in at.metric if m.label == "SHD · NV"] == ["0"]  # the targets known: no error
    assert any("3,000 rows in 5 conditions (4 with targets)" in c.value for c in at.caption)


def test_the_real_scales_lessons_load_ecoli70(new_app):
    at = new_app()
    at.run()
    at.switch_page("pages/lessons.py").run()
    assert not at.button(key="lesson_open_real_raw").disabled
    assert not any("pip install" in c.value for c in at.caption)
    at.button(key="lesson_open_real_std").click().run()
    assert not at.exception, at.exception
    ds = at.session_state["dataset"]
    assert ds.source == "lesson" and ds.meta == {"lesson": "real_std"} and len(ds.node_names) == 46
    assert ds.node_names[:2] == ["aceB", "asnA"] and int(np.asarray(ds.B_true).sum()) == 70
    assert at.session_state["learn_variant"] == "NV"


def test_without_the_networks_extra_the_real_scales_lessons_say_how_to_get_it(new_app, no_extra):
    at = new_app()
    at.run()
    at.switch_page("pages/lessons.py").run()
    assert not at.exception, at.exception
    assert at.button(key="lesson_open_real_raw").disabled and at.button(key="lesson_open_real_std").disabled
    assert not at.button(key="lesson_open_markov").disabled
    assert sum("pip install 'colide-dashboard[networks]'" in c.value for c in at.caption) == 2
