"""Issue 28, point 6: a Check page a biologist can read (AppTest on Sachs, and the helpers behind it).

* the residual and Markov tables and the residual chart name the proteins, never X0..X10;
* p-values read "< 0.001" or 3 significant digits, headers are words, empty cells "—";
* a one-line answer to "should I believe this graph?" on top, and a traffic light per check and per
  edge with its word (Holds / Caution / Problem, with a Material icon: no emoji), never colour alone;
* the residual spread chart uses a log axis only where the values span a decade, and its EV line
  sits at the pooled value on either axis (it used to put the axis at 10^126).
"""
import math
import re

import numpy as np
import pandas as pd
import pytest

import colide_core
from colide_core.evaluation import checks
from colide_core.render import plots
from dashboard import checks as dc

pytestmark = pytest.mark.usefixtures("fresh_caches")

SACHS = ["Raf", "Mek", "Plcg", "PIP2", "PIP3", "Erk", "Akt", "PKA", "PKC", "P38", "Jnk"]


@pytest.mark.parametrize("p, shown", [(0.0, "< 0.001"), (1e-50, "< 0.001"), (0.000999, "< 0.001"),
                                      (0.001, "0.001"), (0.012345, "0.0123"), (0.5, "0.5"), (0.98765, "0.988"),
                                      (math.nan, "—"), (None, "—")])
def test_p_values_are_formatted_for_people(p, shown):
    assert dc.format_p(p) == shown


def test_the_residual_chart_uses_a_log_axis_only_over_decades_and_its_line_at_the_pooled_value():
    table = pd.DataFrame({"node": ["a", "b", "c"], "residual_sd": [1.0, 2.0, 3.0]})
    fig = plots.residual_sd_figure(table, "NV")
    assert fig.layout.yaxis.type == "linear"
    line = [t for t in fig.data if t.type == "scatter"][0]
    pooled = math.sqrt((1 + 4 + 9) / 3)
    assert list(line.y) == pytest.approx([pooled] * 3)
    assert not fig.layout.shapes                       # no shape whose y a log axis reads as 10^y
    wide = pd.DataFrame({"node": ["a", "b"], "residual_sd": [0.5, 126.0]})
    fig = plots.residual_sd_figure(wide, "NV")
    assert fig.layout.yaxis.type == "log" and "log scale" in fig.layout.yaxis.title.text
    assert [t for t in fig.data if t.type == "scatter"][0].y[0] == pytest.approx(math.sqrt((0.25 + 126.0 ** 2) / 2))


def test_run_checks_names_the_nodes_in_every_table():
    X, _ = colide_core.load_sachs()
    model = colide_core.CoLiDE("nv").fit(X)
    r = checks.run_checks(X, model.adjacency_, n_random=3, n_rescale=0)
    assert list(r.residuals.table["node"]) == SACHS
    assert set(r.markov.tests["node"]) <= set(SACHS) and not any(n.startswith("X") and n[1:].isdigit()
                                                                  for n in r.markov.tests["node"])


def test_lights_and_the_answer_follow_the_verdicts():
    X, _ = colide_core.load_sachs()
    model = colide_core.CoLiDE("nv").fit(X)
    r = checks.run_checks(X, model.adjacency_, n_random=20, n_rescale=0)
    lights = dc.check_lights(r, "nv")
    names = [c for _, c, _, _ in lights]
    assert set(names) == {"Markov check", "Noise model", "Sortability"}
    by = {c: (lt, text) for lt, c, text, _ in lights}
    # Sachs residuals are not Gaussian at most nodes (the checks say so): the noise model is a caution
    assert r.residuals.noise_model == "NV"
    assert by["Noise model"][0] == ("ok" if r.residuals.table["normal"].all() else "warn")
    expected = "ok" if not r.sortability.scale_warning else "warn"
    assert by["Sortability"][0] == expected
    order = {"bad": 0, "warn": 1, "ok": 2, "info": 3}
    assert [order[lt] for lt, *_ in lights] == sorted(order[lt] for lt, *_ in lights)
    light, answer = dc.overall_answer(lights)
    worst = min((lt for lt, *_ in lights), key=order.get)
    assert light == (worst if worst in ("bad", "warn") else "ok")
    assert answer.split(":")[0] in {"Not as it stands", "With caution", "Yes, as far as these checks can tell"}
    # one edge: strong ΔBIC, half the resamples, a third of the rescalings -> a problem, with its reasons
    ev = pd.DataFrame({"source": ["a", "b"], "target": ["b", "c"], "delta_bic_remove": [40.0, 5.0],
                       "bootstrap_frequency": [0.45, 0.95]})

    class Scale:
        edge_kept = np.array([[0, 1 / 3, 0], [0, 0, 1.0], [0, 0, 0]])

    shown = dc.edge_lights(ev, Scale(), ["a", "b", "c"])
    assert shown[0] == "problem: in 45% of resamples; kept in 33% of rescalings"
    assert shown[1] == "caution: ΔBIC 5.0: positive, not strong"
    # issue 38: with the design, a target can contradict the direction (Sachs: Raf -> Mek, -6,752.6)
    ev["delta_bic_reverse"] = [-6752.6, -5.0]
    shown = dc.edge_lights(ev, None, ["a", "b", "c"])
    assert shown[0] == "problem: the data prefer b → a (ΔBIC if reversed -6,752.6); in 45% of resamples"
    assert shown[1] == "caution: ΔBIC 5.0: positive, not strong; the data prefer c → b (ΔBIC if reversed -5.0)"


def test_the_check_page_reads_as_plain_language_with_names(new_app):
    at = new_app()
    at.run()
    at.switch_page("pages/learn.py").run()
    at.button(key="learn_run").click().run()  # the default Noise model, Both: EV and NV
    at.switch_page("pages/check.py").run()
    assert not at.exception, at.exception
    md = [m.value for m in at.markdown]
    top = [m for m in md if "Should I believe this graph?" in m]
    assert len(top) == 1 and re.match(r"^### :(green|orange|red)\[:material/(check_circle|warning|cancel):\] Should I believe this graph\? ", top[0])
    lines = [m for m in md if re.match(r"^:(green|orange|red|blue)\[:material/[a-z_]+:\] \*\*(Markov check|Noise model|Sortability) — "
                                        r"(Holds|Caution|Problem|Nothing to test)\.\*\*", m)]
    assert len(lines) == 3                          # one traffic light with its word per check
    assert not any("normality_p" in m or "Fisher" in m for m in lines)   # test names stay in the details
    def frame(column):
        return [d.value for d in at.dataframe if column in d.value.columns][0]

    resid = frame("Residual SD")
    assert list(resid.columns) == ["Node", "Parents", "Residual SD", "Gaussian? (p)", "Spread constant? (p)"]
    assert list(resid["Node"]) == SACHS
    cells = " ".join(resid["Gaussian? (p)"]) + " " + " ".join(resid["Spread constant? (p)"])
    assert "None" not in cells and "nan" not in cells
    for p in re.findall(r"\(([^()]*)\)", cells):
        assert p in ("no parents", "< 0.001") or re.fullmatch(r"\d\.\d{0,3}|0\.0*\d{1,3}|1", p), p
    markov = frame("Independent of")
    assert list(markov.columns) == ["Node", "Independent of", "Given", "p-value", "Rejected?"]
    assert set(markov["Node"]) <= set(SACHS)
    assert all(len(p) <= 7 for p in markov["p-value"])          # never 50 digits
    evidence = frame("delta_bic_remove")
    assert all(re.match(r"^(strong|caution|problem)", e) for e in evidence["evidence"])


def test_answers_agree_in_number():
    # issue 41: "point(s)", "raise(s)" and "11.0 edge(s)" on the Check page
    one = dc.overall_answer([("bad", "Residuals", "", ""), ("ok", "Markov", "", "")])[1]
    two = dc.overall_answer([("bad", "Residuals", "", ""), ("bad", "Markov", "", "")])[1]
    assert one == "Not as it stands: Residuals points to real problems."
    assert two == "Not as it stands: Residuals, Markov point to real problems."
    warn = dc.overall_answer([("warn", "Scale sensitivity", "", "")])[1]
    assert warn == "With caution: every check runs, but Scale sensitivity raises doubts (details below)."
