"""The HTML report of data from several conditions (issue 31), its readable check tables, and the
one rule of which edges interventions orient (colide_core.data.conditions.oriented_by_targets).

Convention: W[i, j] != 0 means i -> j; X is (n_samples, n_nodes).
"""
import html as htmllib
import re

import numpy as np
import pandas as pd
import pytest

import colide_core
from colide_core.data.conditions import oriented_by_targets
from colide_core.data.stats import condition_summary
from colide_core.exceptions import ConditionsError
from colide_core.render import tables
from colide_core.render.report import ReportFit, build_report
from colide_core.run.manifest import build_manifest

# hostile user strings: node names and condition labels
NODES = ["<script>alert(1)</script>", "\"&'", "c&d", "</td><b>x"]
BASE, SHIFTED, OTHER = "<b>base</b>", "\"&' iv", "<script>alert(2)</script>"


def _data():
    # chain 0 -> 1 -> 2 -> 3 (unit weights), 3 conditions of 300 rows; condition SHIFTED adds 3 to
    # node 0 (an intervention on node 0's level: its median moves by about 3 baseline SDs, and through
    # the unit-weight edge node 1's by about 3 / sqrt(2) of node 1's baseline SD of sqrt(2))
    rng = np.random.default_rng(1)
    n = 300
    X = rng.standard_normal((3 * n, 4))
    X[n:2 * n, 0] += 3.0
    for j in range(1, 4):
        X[:, j] += X[:, j - 1]
    labels = np.array([BASE] * n + [SHIFTED] * n + [OTHER] * n, dtype=object)
    return pd.DataFrame(X, columns=NODES), labels, {SHIFTED: [NODES[0]]}


def _chain():
    A = np.zeros((4, 4))
    A[0, 1] = A[1, 2] = A[2, 3] = 1.0
    return A


@pytest.fixture(scope="module")
def report_html():
    X, labels, targets = _data()
    A = _chain()
    fit = ReportFit("NV", A, A, np.ones(4), colide_core.CoLiDE("nv").get_params())
    return X, labels, targets, build_report(X, [fit], dataset_name="d", conditions=labels, targets=targets)


def _section_tables(html, section):
    """The tables of one section as lists of rows of unescaped cell texts (header row first)."""
    start = html.index(f"<h2 id='{section}'>")
    end = html.index("<h2 ", start + 5)
    out = []
    for tab in re.findall(r"<table.*?</table>", html[start:end], re.S):
        rows = re.findall(r"<tr>(.*?)</tr>", tab, re.S)
        out.append([[htmllib.unescape(c) for c in re.findall(r"<t[hd]>(.*?)</t[hd]>", r, re.S)] for r in rows])
    return out


def test_report_has_a_section_per_condition_with_the_library_summary(report_html):
    X, labels, targets, html = report_html
    cond, oriented = _section_tables(html, "conditions")
    # header: words, then the node names (escaped once: unescaping once gives the name back)
    assert cond[0] == ["Condition", "Rows", "Targets"] + NODES
    summary = condition_summary(X, labels, targets)
    assert [r[0] for r in cond[1:]] == [BASE + " (baseline)", SHIFTED, OTHER]
    assert [r[1] for r in cond[1:]] == ["300", "300", "300"]
    assert [r[2] for r in cond[1:]] == ["—", NODES[0], "—"]
    # the shifts are condition_summary's numbers (the one implementation), 2 decimals with a sign
    for row, (_, srow) in zip(cond[1:], summary.iterrows()):
        assert [float(c) for c in row[3:]] == pytest.approx([round(srow[name], 2) for name in NODES], abs=1e-12)
        assert all(c[0] in "+-" and len(c.split(".")[1]) == 2 for c in row[3:])
    # the shifted condition's node 0 moved by about 3 baseline SDs; the baseline's row is 0
    shift0 = float(cond[2][3])
    assert 2.6 < shift0 < 3.4  # sampling error of two medians and an SD at n = 300: about 0.1
    assert cond[1][3:] == ["+0.00"] * 4
    # which edges the interventions orient: only 0 -> 1 of the chain touches the target, node 0
    # "orientable", not "oriented", and how many of them the edge evidence disputes (m-7): the data
    # were made along the chain, so they prefer 0 -> 1 as drawn (tests/test_disputed_edges.py has one
    # they dispute)
    assert oriented[0] == ["Fit", "Edges", "Orientable by an intervention", "Disputed by the data", "Which"]
    assert oriented[1] == ["NV", "3", "1 of 3", "0 of them", f"{NODES[0]} → {NODES[1]}"]


def test_hostile_labels_are_escaped_exactly_once(report_html):
    _, _, _, html = report_html
    start = html.index("<h2 id='conditions'>")
    part = html[start:html.index("<h2 ", start + 5)]
    assert "<script>" not in part and "<b>" not in part
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in part and "&lt;b&gt;base&lt;/b&gt; (baseline)" in part
    assert "&#34;&amp;&#39; iv" in part            # "&' once
    assert "&amp;lt;" not in part and "&amp;amp;" not in part and "&amp;#" not in part  # never twice
    # nowhere in the page does a label or name appear as markup
    assert "<script>alert(1)</script>" not in html and "<script>alert(2)</script>" not in html


def test_report_tables_use_the_check_pages_readable_format(report_html):
    _, _, _, html = report_html
    start = html.index("<h2 id='checks'>")
    part = html[start:html.index("<h2 ", start + 5)]
    assert "normality_p" not in part and "p_value" not in part and "hetero_p" not in part
    assert "<th>Gaussian? (p)</th>" in part and "<th>Independent of</th>" in part and "<th>p-value</th>" in part
    # the chain's Markov statements on this data are rejected hard somewhere (the condition shift is
    # pooled in the checks' data only where not centred): at least one p-value is written "< 0.001"
    # or as 3 significant digits, never as a raw float with many digits
    cells = re.findall(r"<td>([^<]*)</td>", part)
    p_cells = [htmllib.unescape(c) for c in cells if re.fullmatch(r"(&lt; 0\.001|0\.\d+|1|[\d.]+e-\d+)", c)]
    assert p_cells and all(len(c) <= 7 for c in p_cells)
    # the dashboard's tables are the same functions (one implementation)
    from dashboard import checks as dc
    assert dc.residual_table is tables.residual_table and dc.markov_table is tables.markov_table
    assert dc.format_p is tables.format_p


def test_format_p_and_tables_by_hand():
    assert tables.format_p(0.0004) == "< 0.001"
    assert tables.format_p(0.012345) == "0.0123"
    assert tables.format_p(float("nan")) == "—" and tables.format_p(None) == "—"
    res = pd.DataFrame({"node": ["a"], "parents": [1], "residual_sd": [1.23456], "normality_stat": [3.0],
                        "normality_p": [0.5], "hetero_stat": [9.0], "hetero_p": [1e-5], "normal": [True],
                        "homoscedastic": [False]})
    t = tables.residual_table(res)
    assert t.iloc[0].tolist() == ["a", 1, "1.235", "yes (0.5)", "no (< 0.001)"]


def test_report_without_conditions_has_no_condition_section():
    X, _, _ = _data()
    A = _chain()
    html = build_report(X, [ReportFit("NV", A, A, None, colide_core.CoLiDE("nv").get_params())])
    assert "id='conditions'" not in html
    with pytest.raises(ValueError, match="targets need conditions"):
        build_report(X, [ReportFit("NV", A, A, None, {})], targets={"x": [0]})


def test_report_from_a_manifest_with_conditions_shows_rows_and_targets():
    X, labels, targets = _data()
    model = colide_core.CoLiDE("nv", max_iter=(300, 300, 300, 600)).fit(X, conditions=labels, targets=targets)
    fit = ReportFit("NV", model.W_, model.adjacency_, model.sigma_, model.get_params(),
                    build_manifest(model, X, conditions=labels))
    html = build_report(X, [fit])  # the rows' labels are not given: the manifest's record is used
    cond, _ = _section_tables(html, "conditions")
    assert cond[0] == ["Condition", "Rows", "Targets"]
    assert cond[1:] == [[BASE, "300", "—"], [SHIFTED, "300", NODES[0]], [OTHER, "300", "—"]]


def test_oriented_by_targets_by_hand():
    names = ["a", "b", "c"]
    M = oriented_by_targets({"iv": ["b"]}, names)
    # b is targeted: every pair with b (a-b, b-c, both directions) is oriented, a-c is not
    expected = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], dtype=bool)
    np.testing.assert_array_equal(M, expected)
    np.testing.assert_array_equal(oriented_by_targets({0: [1], 1: []}, n_nodes=3), expected)
    assert oriented_by_targets(None, names) is None and oriented_by_targets({"x": []}, names) is None
    with pytest.raises(ConditionsError) as err:
        oriented_by_targets({"iv": ["zz"]}, names)
    assert err.value.kind == "target_unknown_node"


def test_cli_report_with_conditions_and_targets(tmp_path):
    import json

    from colide_core.run.cli import main

    X, labels, targets = _data()
    df = X.copy()
    df["cond"] = labels
    df.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "t.json").write_text(json.dumps(targets))
    small = ["--random-graphs", "5", "--rescalings", "0"]
    assert main(["report", str(tmp_path / "d.csv"), "--out", str(tmp_path / "r"), "--conditions", "cond",
                 "--targets", str(tmp_path / "t.json")] + small) == 0
    html = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    cond, oriented = _section_tables(html, "conditions")
    assert [r[:3] for r in cond[1:]] == [[BASE + " (baseline)", "300", "—"], [SHIFTED, "300", NODES[0]],
                                         [OTHER, "300", "—"]]
    assert oriented[1][0] == "NV" and "<script>alert(2)</script>" not in html
    # the fit it reports is CoLiDE's fit with the conditions and targets
    model = colide_core.CoLiDE("nv").fit(X, conditions=labels, targets=targets)
    man = re.search(r'<script type="application/json" class="manifest"[^>]*>(.*?)</script>', html, re.S).group(1)
    doc = json.loads(man)
    assert doc["conditions"]["counts"] == [300, 300, 300]
    assert doc["conditions"]["targets"] == {SHIFTED: [NODES[0]]}
    assert oriented[1][1] == str(int(model.adjacency_.astype(bool).sum()))
    # --targets without --conditions: a usage error (2)
    with pytest.raises(SystemExit) as exit_:
        main(["report", str(tmp_path / "d.csv"), "--out", str(tmp_path / "r2"), "--targets", str(tmp_path / "t.json")])
    assert exit_.value.code == 2
    # issue 47: a manifest with conditions needs no --conditions: its recorded column and targets are taken
    (tmp_path / "m.json").write_text(json.dumps(doc))
    assert main(["report", str(tmp_path / "d.csv"), "--out", str(tmp_path / "r3"), "--manifest",
                 str(tmp_path / "m.json"), "--drop-non-numeric"] + small) == 0
    cond3, _ = _section_tables((tmp_path / "r3" / "report.html").read_text(encoding="utf-8"), "conditions")
    assert cond3 == cond
    assert main(["report", str(tmp_path / "d.csv"), "--out", str(tmp_path / "r4"), "--manifest",
                 str(tmp_path / "m.json"), "--conditions", "cond"] + small) == 0
    cond4, _ = _section_tables((tmp_path / "r4" / "report.html").read_text(encoding="utf-8"), "conditions")
    assert cond4 == cond  # targets from the manifest's record: the same section


def test_dashboard_report_carries_the_datasets_design():
    # the Check page's download (dashboard.checks.report_html) passes the dataset's Design to the report
    from colide_core.data.design import Design
    from dashboard import checks as dc

    X, labels, targets = _data()
    A = _chain()
    fit = ReportFit("NV", A, A, None, colide_core.CoLiDE("nv").get_params())
    checks = colide_core.evaluation.checks.run_checks(X, A, n_random=3, conditions=labels, targets=targets)
    html = dc.report_html("k", ("NV",), 0.3, None, None, None, X, [fit], None, "ground truth", checks, None, None,
                          "d", Design.create(NODES, labels, targets)).decode("utf-8")
    cond, oriented = _section_tables(html, "conditions")
    assert [r[1] for r in cond[1:]] == ["300", "300", "300"] and oriented[1][2] == "1 of 3"
    bare = dc.report_html("k", ("NV",), 0.3, None, None, None, X, [fit], None, "ground truth", checks, None, None,
                          "d").decode("utf-8")
    assert "id='conditions'" not in bare


def test_cli_report_manifest_refuses_another_design(tmp_path, capsys):
    # Issue 42 (low): `report --manifest` accepted conditions or targets other than the
    # manifest's without a word (Manifest.reproduce checked them). Now both are checked.
    import json

    from colide_core.run.cli import main

    X, labels, targets = _data()
    df = X.copy()
    df["cond"] = labels
    df.to_csv(tmp_path / "d.csv", index=False)
    model = colide_core.CoLiDE("nv", max_iter=(300, 300, 300, 600)).fit(X, conditions=labels, targets=targets)
    from colide_core.run.manifest import manifest_to_json

    (tmp_path / "m.json").write_text(manifest_to_json(build_manifest(model, X, conditions=labels)))
    (tmp_path / "other.json").write_text(json.dumps({OTHER: [NODES[1]]}))
    small = ["--random-graphs", "0", "--rescalings", "0"]
    with pytest.raises(SystemExit) as exit_:
        main(["report", str(tmp_path / "d.csv"), "--out", str(tmp_path / "r"), "--manifest", str(tmp_path / "m.json"),
              "--conditions", "cond", "--targets", str(tmp_path / "other.json")] + small)
    assert exit_.value.code == 2 and "targets differ" in capsys.readouterr().err
    shuffled = df.copy()
    shuffled["cond"] = list(reversed(labels))  # the same labels on other rows
    shuffled.to_csv(tmp_path / "s.csv", index=False)
    with pytest.raises(SystemExit) as exit_:
        main(["report", str(tmp_path / "s.csv"), "--out", str(tmp_path / "r2"), "--manifest", str(tmp_path / "m.json"),
              "--conditions", "cond"] + small)
    assert exit_.value.code == 2 and "row labels differ" in capsys.readouterr().err
