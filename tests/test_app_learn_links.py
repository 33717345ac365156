"""Where a page sends the user to the Learn page, it gives a link, not only words (issue 48, the
last walk's minor "the 'go to Learn' text that is not a link"; Check, Predict and Simulate had
theirs): the Prior knowledge page, with no fit yet to audit and with a fit run before the knowledge
now applied ("Run it again on the Learn page"), and Edge confidence before any fit ("open the
Learn page first to measure how long one fit takes")."""
import json

import pytest

from tests._schedules import QUICK

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _links(at):
    """The page's links to Learn in its body (the sidebar's navigation links are labelled "Learn")."""
    return [(link.proto.label, link.proto.page) for link in at.get("page_link") if link.proto.label == "Go to Learn"]


def test_prior_knowledge_links_to_learn(new_app):
    at = new_app()
    at.run()
    at.session_state["solver_overrides"] = dict(QUICK)
    at.switch_page("pages/prior_knowledge.py").run()
    assert not at.exception, at.exception
    assert any("No fit yet" in i.value for i in at.info)
    assert len(_links(at)) == 1 and "learn" in _links(at)[0][1], _links(at)

    # a fit without the knowledge applied afterwards: "Run it again on the Learn page", with the link
    at.switch_page("pages/learn.py").run()
    at.button(key="learn_run").click().run()
    assert not at.exception, at.exception
    at.switch_page("pages/prior_knowledge.py").run()
    assert _links(at) == []  # a fit to audit, nothing applied: no errand to Learn
    at.text_area(key="prior_json_text").input(json.dumps({"required": [["PKC", "PKA"]]})).run()
    at.button(key="prior_load_text").click().run()
    at.button(key="prior_apply").click().run()
    assert not at.exception, at.exception
    assert any("Run it again on the Learn page" in c.value for c in at.caption)
    assert len(_links(at)) == 1, _links(at)


def test_edge_confidence_links_to_learn_before_any_fit(new_app):
    at = new_app()
    at.run()
    at.session_state["solver_overrides"] = dict(QUICK)
    at.switch_page("pages/edge_confidence.py").run()
    assert not at.exception, at.exception
    assert any("open the Learn page first" in i.value for i in at.info)
    assert len(_links(at)) == 1, _links(at)
    at.switch_page("pages/learn.py").run()  # a fit measured: the estimate is given, no errand to Learn
    at.switch_page("pages/edge_confidence.py").run()
    assert any("the last fit on this dataset took" in i.value for i in at.info)
    assert _links(at) == []
