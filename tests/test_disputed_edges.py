"""Check's "the data prefer the reverse" in Learn's drawing and in the report (issue 48, m-7).

The report said "Oriented by an intervention 9 of 9" on nine-condition Sachs while its own ΔBIC
(reverse) column disputed 4 of them, its evidence table lacked the Check page's verdict column, and
Learn drew Raf -> Mek green with an "orientable" dot while Check said "the data prefer Mek -> Raf".
One verdict (:func:`colide_core.render.tables.edge_verdicts` / :func:`~colide_core.render.tables.disputed_edges`)
now feeds the Check page, the report and the drawing.

Convention: W[i, j] != 0 means i -> j; X is (n_samples, n_nodes).
"""
import html as htmllib
import math
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import colide_core
from colide_core.evaluation.checks import edge_evidence, run_checks
from colide_core.render import tables
from colide_core.render.graph_html import graph_drawing, graph_html, legend_for
from colide_core.render.graph_style import DISPUTED_STYLE, EDGE_STYLES
from colide_core.render.report import ReportFit, build_report
from tests._drawing import drawing_in
from tests.test_report_conditions import _section_tables as _report_tables  # one reader of the report's tables

# hostile node names (escaped once where they meet HTML)
A_NAME, B_NAME = "<b>a</b>", "b&'\""


def _two_nodes():
    """a -> b in 200 observational rows (b = a + noise/2); in 200 rows of condition "iv" b is set at
    random (a hard intervention on b, its target): a smallest dataset with a disputed orientable edge."""
    rng = np.random.default_rng(0)
    n = 200
    a = rng.standard_normal(2 * n)
    b = a + 0.5 * rng.standard_normal(2 * n)
    b[n:] = rng.standard_normal(n)
    labels = np.array(["obs"] * n + ["iv"] * n)
    return pd.DataFrame({A_NAME: a, B_NAME: b}), labels, {"iv": [B_NAME]}


#: The learned graph b -> a: the wrong way round.
WRONG = np.array([[0.0, 0.0], [0.8, 0.0]])


def test_the_reversal_of_a_wrong_edge_by_hand():
    """ΔBIC if reversed of b -> a, derived by hand.

    Node j's BIC term is m_j log(RSS_j / m_j) + |Pa(j)| log n on its unmasked rows (m_j of them),
    each condition centred on its own means; b's rows under "iv" (its target) are masked. Both
    graphs have one parent in all, so the log n penalties cancel, and RSS given one parent is
    RSS without it times (1 - r^2):

      b -> a:  a on b over all 400 rows, b alone over the 200 "obs" rows
      a -> b:  a alone over all 400 rows, b on a over the 200 "obs" rows

      ΔBIC_rev = 200 log(1 - r_obs^2) - 400 log(1 - r_all^2)

    with r_obs the correlation of a and b in "obs" and r_all the correlation of the per-condition
    centred pair over all rows. In the population r_obs^2 = 1 / 1.25 = 0.8 and (cov 1/2, variances
    1 and 1.125) r_all^2 = 0.25 / 1.125 = 2/9: ΔBIC_rev = 200 log 0.2 - 400 log(7/9) = -221.4, so
    the data prefer a -> b: a problem (below -10), the edge disputed.
    """
    X, labels, targets = _two_nodes()
    ev = edge_evidence(X, WRONG, conditions=labels, targets=targets)
    obs = X.to_numpy()[labels == "obs"]
    r_obs = np.corrcoef(obs.T)[0, 1]
    centred = X.to_numpy() - X.groupby(labels).transform("mean").to_numpy()
    r_all = centred[:, 0] @ centred[:, 1] / math.sqrt((centred[:, 0] @ centred[:, 0]) * (centred[:, 1] @ centred[:, 1]))
    by_hand = 200 * math.log(1 - r_obs ** 2) - 400 * math.log(1 - r_all ** 2)
    rev = float(ev["delta_bic_reverse"][0])
    assert rev == pytest.approx(by_hand, rel=1e-9)
    assert rev == pytest.approx(200 * math.log(0.2) - 400 * math.log(7 / 9), abs=40)  # sampling error at n = 200
    assert tables.edge_verdicts(ev) == [f"problem: the data prefer {A_NAME} → {B_NAME} (ΔBIC if reversed {rev:,.1f})"]
    np.testing.assert_array_equal(tables.disputed_edges(ev, [A_NAME, B_NAME]), [[False, False], [True, False]])
    # the right way round is not disputed: its reversal is the same number with the other sign
    right = edge_evidence(X, WRONG.T, conditions=labels, targets=targets)
    assert float(right["delta_bic_reverse"][0]) == pytest.approx(-rev, rel=1e-9)
    assert not tables.disputed_edges(right, [A_NAME, B_NAME]).any()


def test_prefers_reverse_is_the_check_pages_threshold():
    # the Check page's words start at -2 ("caution"), become a problem below -10 (Kass and Raftery)
    ev = pd.DataFrame({"source": ["a", "b", "c", "a"], "target": ["b", "c", "d", "d"],
                       "delta_bic_remove": [40.0, 40.0, 40.0, 40.0], "delta_bic_reverse": [-1.9, -2.1, -10.5, np.nan]})
    assert tables.edge_verdicts(ev) == ["strong", "caution: the data prefer c → b (ΔBIC if reversed -2.1)",
                                        "problem: the data prefer d → c (ΔBIC if reversed -10.5)", "strong"]
    assert sorted(zip(*np.nonzero(tables.disputed_edges(ev, list("abcd"))))) == [(1, 2), (2, 3)]
    # a row naming an unknown node, or evidence without the column, disputes nothing
    assert not tables.disputed_edges(ev.assign(source=["x"] * 4), list("abcd")).any()
    assert not tables.disputed_edges(ev.drop(columns="delta_bic_reverse"), list("abcd")).any()
    # the Check page's column is this very function
    from dashboard import checks as dc

    assert dc.edge_lights is tables.edge_verdicts


def test_report_says_orientable_and_disputed_with_the_check_pages_verdict():
    X, labels, targets = _two_nodes()
    checks = run_checks(X, WRONG, n_random=2, conditions=labels, targets=targets)
    fit = ReportFit("EV", WRONG, WRONG, None, colide_core.CoLiDE("ev").get_params())
    html = build_report(X, [fit], dataset_name="d", conditions=labels, targets=targets, checks=checks)
    text = htmllib.unescape(re.sub(r"<[^>]+>", " ", html))
    assert "Oriented by an intervention" not in html and "the interventions orient" not in html
    assert ("EV: 1 of 1 edges orientable by an intervention, 1 of them disputed by the data "
            "(ΔBIC if reversed < -2: the data prefer the reverse).") in text
    _, oriented = _report_tables(html, "conditions")
    assert oriented[0] == ["Fit", "Edges", "Orientable by an intervention", "Disputed by the data", "Which"]
    assert oriented[1] == ["EV", "1", "1 of 1", "1 of them", f"{B_NAME} → {A_NAME} (the data prefer {A_NAME} → {B_NAME})"]
    # the evidence table carries the Check page's verdict column, third, in the Check page's words
    (evidence,) = _report_tables(html, "evidence")
    assert evidence[0][:3] == ["source", "target", "evidence"]
    from dashboard import checks as dc

    assert [row[2] for row in evidence[1:]] == dc.edge_lights(checks.evidence, checks.scale, [A_NAME, B_NAME])
    assert evidence[1][2].startswith(f"problem: the data prefer {A_NAME} → {B_NAME}")
    # the hostile names are escaped once: never raw in the page, and unescaping once gives them back
    assert A_NAME not in html and "&lt;b&gt;a&lt;/b&gt;" in html


def test_report_on_nine_condition_sachs_counts_the_disputed_orientable_edges():
    """The walk's numbers: EV's 9 edges, all orientable by the six targets, of which the data
    prefer the reverse for Raf -> Mek (-6,752.6), Plcg -> PIP2, Erk -> Akt and Akt -> PKA; NV has
    Mek -> Raf, which they do not dispute."""
    rec = colide_core.load_sachs(rows="all", return_record=True)
    names = list(rec.X.columns)
    common = [("Plcg", "PIP2"), ("PIP3", "Plcg"), ("PIP3", "PIP2"), ("Erk", "Akt"), ("Erk", "PKA"),
              ("Akt", "PKA"), ("PKC", "P38"), ("PKC", "Jnk")]
    graphs = {}
    for label, first in (("EV", ("Raf", "Mek")), ("NV", ("Mek", "Raf"))):
        A = np.zeros((11, 11))
        for s, t in [first] + common:
            A[names.index(s), names.index(t)] = 1.0
        graphs[label] = A
    ev = edge_evidence(rec.X, graphs["EV"], conditions=rec.conditions, targets=rec.targets)
    disputed = tables.disputed_edges(ev, names)
    assert {(names[i], names[j]) for i, j in zip(*np.nonzero(disputed))} == {
        ("Raf", "Mek"), ("Plcg", "PIP2"), ("Erk", "Akt"), ("Akt", "PKA")}
    raf = ev[(ev["source"] == "Raf") & (ev["target"] == "Mek")].iloc[0]
    assert raf["delta_bic_reverse"] == pytest.approx(-6752.6, abs=0.1)
    checks = run_checks(rec.X, graphs["EV"], n_random=2, conditions=rec.conditions, targets=rec.targets)
    fits = [ReportFit(lab, A, A, None, colide_core.CoLiDE(lab.lower()).get_params()) for lab, A in graphs.items()]
    html = build_report(rec.X, fits, dataset_name="Sachs", conditions=rec.conditions, targets=rec.targets,
                        checks=checks)
    text = htmllib.unescape(re.sub(r"<[^>]+>", " ", html))
    assert "EV: 9 of 9 edges orientable by an intervention, 4 of them disputed by the data" in text
    assert "NV: 9 of 9 edges orientable by an intervention, 3 of them disputed by the data" in text
    (evidence,) = _report_tables(html, "evidence")
    row = next(r for r in evidence[1:] if r[:2] == ["Raf", "Mek"])
    assert row[2] == "problem: the data prefer Mek → Raf (ΔBIC if reversed -6,752.6)"
    # each report drawing carries its own fit's "?" (EV 4, NV 3)
    pages = [htmllib.unescape(p) for p in re.findall(r'srcdoc="(.*?)"></iframe>', html, re.S)]
    marked = [sum("markFont" in e for e in drawing_in(p)["edges"]) for p in pages]
    assert marked == [4, 3]


# --- the drawing -------------------------------------------------------------------------------

def _drawn(**kw):
    """truth a -> b -> c; learned a -> b (correct), c -> b (reversed), a -> c (extra)."""
    W = np.array([[0, 1.0, -2.0], [0, 0, 0], [0, 0.5, 0]])
    B = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    return W, B, graph_drawing(W, [A_NAME, B_NAME, "c"], B, **kw)


def test_the_drawing_marks_exactly_the_disputed_edges_and_keeps_their_colour():
    W, B, plain = _drawn()
    oriented = np.ones((3, 3), bool)
    disputed = np.zeros((3, 3), bool)
    disputed[0, 1] = disputed[2, 1] = True   # two drawn edges
    disputed[1, 2] = True                    # b -> c is not drawn (the learned edge is c -> b): no mark
    _, _, got = _drawn(oriented=oriented, disputed=disputed)
    before = {(e["from"], e["to"]): e for e in plain["edges"]}
    edges = {(e["from"], e["to"]): e for e in got["edges"]}
    assert {k for k, e in edges.items() if "markFont" in e} == {(0, 1), (2, 1)}
    for key in ((0, 1), (2, 1)):
        e = edges[key]
        assert e["label"] == DISPUTED_STYLE["marker"] and e["font"]["color"] == DISPUTED_STYLE["colour"]
        assert e["color"] == before[key]["color"] and e["width"] == before[key]["width"]  # not a recolouring
        assert e["arrows"]["from"]["type"] == "circle"  # still orientable: the dot stays
        assert "orientable by an intervention, but the data prefer the reverse" in e["title"]
        assert "(under the linear SEM)" not in e["title"]  # no longer reads as settled
    assert edges[(0, 1)]["color"] == EDGE_STYLES["correct"][0] and edges[(2, 1)]["color"] == EDGE_STYLES["reversed"][0]
    assert f"the data prefer the reverse ({B_NAME} → {A_NAME}, the Check page's edge evidence)" in edges[(0, 1)]["title"]
    assert "label" not in edges[(0, 2)] and "orientable by an intervention on one of its ends" in edges[(0, 2)]["title"]
    assert (1, 2) not in edges
    # the "?" is as large as the node labels (font_scale times their font; graph_draw.js keeps it so)
    assert edges[(0, 1)]["font"]["size"] == pytest.approx(DISPUTED_STYLE["font_scale"] * got["base_font"], abs=0.01)
    # without an orientable dot, the tooltip says only that the data prefer the reverse
    _, _, alone = _drawn(disputed=disputed)
    e = next(e for e in alone["edges"] if (e["from"], e["to"]) == (0, 1))
    assert "orientable" not in e["title"] and " · the data prefer the reverse (" in e["title"]
    # a true edge the fit missed is drawn dashed: never marked, whatever the mask says
    W2 = W.copy()
    W2[0, 1] = 0.0
    missing = graph_drawing(W2, [A_NAME, B_NAME, "c"], B, disputed=disputed)
    e = next(e for e in missing["edges"] if (e["from"], e["to"]) == (0, 1))
    assert e["dashes"] and "markFont" not in e and "label" not in e
    with pytest.raises(ValueError, match="disputed must have shape"):
        _drawn(disputed=np.zeros((2, 2), bool))


def test_the_legend_names_the_mark_only_when_one_is_drawn():
    entry = {"marker": DISPUTED_STYLE["marker"], "text": DISPUTED_STYLE["text"]}
    W, B, plain = _drawn()
    assert entry not in plain["legend"]
    none = np.zeros((3, 3), bool)
    assert entry not in _drawn(disputed=none)[2]["legend"]
    not_drawn = none.copy()
    not_drawn[1, 2] = True  # on an edge that is not drawn (the learned one is c -> b): no mark, no entry
    assert entry not in _drawn(disputed=not_drawn)[2]["legend"]
    one = none.copy()
    one[0, 2] = True
    assert _drawn(disputed=one)[2]["legend"][-1] == entry
    # the legend of drawings side by side (the Learn page's, legend_for) and of a page (graph_html)
    assert DISPUTED_STYLE["text"] in legend_for([W], B, disputed=one)
    assert DISPUTED_STYLE["text"] not in legend_for([W], B, disputed=not_drawn)
    assert DISPUTED_STYLE["text"] not in legend_for([W], B)
    page = graph_html(W, [A_NAME, B_NAME, "c"], B, disputed=one, assets_url="static")
    assert DISPUTED_STYLE["text"] in page
    assert A_NAME not in page and "\\u003cb\\u003ea\\u003c/b\\u003e" in page  # the names as JSON, escaped once
    assert DISPUTED_STYLE["text"] not in graph_html(W, [A_NAME, B_NAME, "c"], B, disputed=none, assets_url="static")


# --- the dashboard: read from the Check page's stored checks, never computed on a λ step -------

def test_disputed_in_session_reads_only_the_checks_of_this_fit():
    from dashboard import checks as dc
    from dashboard.infra.state.check import CHECK_RESULT

    ev = pd.DataFrame({"source": ["a"], "target": ["b"], "delta_bic_reverse": [-50.0]})
    fit = SimpleNamespace(content_key="fit-1")
    stored = {"key": ("data", "fit-1", 0.3, 100, 0, False, None), "report": SimpleNamespace(evidence=ev), "error": None}
    names = ["a", "b"]
    got = dc.disputed_in_session({CHECK_RESULT: stored}, "data", fit, 0.3, names)
    np.testing.assert_array_equal(got, [[False, True], [False, False]])
    # another dataset, another fit, another threshold, no checks, failed checks: nothing to mark
    assert dc.disputed_in_session({CHECK_RESULT: stored}, "other", fit, 0.3, names) is None
    assert dc.disputed_in_session({CHECK_RESULT: stored}, "data", SimpleNamespace(content_key="fit-2"), 0.3, names) is None
    assert dc.disputed_in_session({CHECK_RESULT: stored}, "data", fit, 0.25, names) is None
    assert dc.disputed_in_session({CHECK_RESULT: None}, "data", fit, 0.3, names) is None
    assert dc.disputed_in_session({CHECK_RESULT: dict(stored, report=None)}, "data", fit, 0.3, names) is None
