"""The Learn page draws the Check page's "the data prefer the reverse" (issue 48, m-7): once the
Check page has checked a fit, that fit's drawing marks the disputed edges with a "?", the legend
names the mark and the caption says whose checks they are; before, the caption says Check has not
checked the fits (the evidence is never computed on a λ step)."""
import json

import numpy as np
import pytest

from colide_core.evaluation.checks import run_checks
from colide_core.render import tables
from colide_core.render.graph_style import DISPUTED_STYLE
from tests._app_sachs import sachs_all_app


pytestmark = pytest.mark.usefixtures("fresh_caches")


def _drawings(at) -> dict:
    """The long-lived drawings the page shows, by their heading (the component's ``label``)."""
    out = {}
    for el in at.get("component_instance"):
        if el.proto.component_name.endswith(".colide_drawing"):
            args = json.loads(el.proto.json_args)
            out[args["label"]] = args["drawing"]
    return out


def test_learn_marks_the_edges_the_checks_dispute(new_app):
    from dashboard import checks as dc
    from dashboard.infra.state.check import CHECK_RESULT

    at, _ = sachs_all_app(new_app)
    at.session_state["learn_variant"] = "NV"
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "The Check page has not checked these fits" in captions
    before = _drawings(at)
    assert any(label.startswith("CoLiDE-NV") for label in before) and "Ground truth" in before
    assert not any("markFont" in e for d in before.values() for e in d["edges"])

    # what the Check page stores once it has checked this fit (dashboard.checks.harvest_checks)
    ds = at.session_state["dataset"]
    res = at.session_state["fit_results"]["nv"]
    threshold = float(at.session_state["learn_threshold"])
    A = dc.shown_graph(res, threshold, ds.node_names)
    report = run_checks(ds.X, A, W=res.W, n_random=2, design=ds.design)
    at.session_state[CHECK_RESULT] = {"key": dc.checks_key(ds.key, res, threshold, 2, 3, False, None),
                                      "report": report, "error": None}
    at.run()
    assert not at.exception, at.exception
    disputed = tables.disputed_edges(report.evidence, ds.node_names)
    assert disputed.any()  # nine-condition Sachs: the data prefer the reverse of some learned edges
    after = _drawings(at)
    edges = next(d for label, d in after.items() if label.startswith("CoLiDE-NV"))["edges"]
    assert not any("markFont" in e for e in after["Ground truth"]["edges"])  # the truth is not checked
    marked = {(e["from"], e["to"]) for e in edges if "markFont" in e}
    assert marked == {(int(i), int(j)) for i, j in zip(*np.nonzero(disputed))}
    assert all(e["label"] == DISPUTED_STYLE["marker"] for e in edges if "markFont" in e)
    legend = " ".join(h.proto.body for h in at.get("html"))
    assert DISPUTED_STYLE["text"] in legend
    captions = " ".join(c.value for c in at.caption)
    assert "An edge marked “?”: the data prefer its reverse (the Check page's edge evidence on NV)" in captions
