"""The one-file HTML report (colide_core.render.report) and `python -m colide_core report`.

Convention: W[i, j] != 0 means i -> j; X is (n_samples, n_nodes).
"""
import html as htmllib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import colide_core
from colide_core.graph.export import export_graph
from colide_core.run.manifest import build_manifest, load_manifest
from colide_core.render.report import ReportFit, build_report

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ['<script>alert(1)</script>', 'a"b', "c&d", "</iframe><b>x", "2024-01-01"]


def _data():
    # 0 -> 1 -> 2, 0 -> 3, 4 isolated (unit weights, Gaussian noise)
    rng = np.random.default_rng(0)
    n = 400
    X = rng.standard_normal((n, 5))
    X[:, 1] += X[:, 0]
    X[:, 2] += X[:, 1]
    X[:, 3] += 0.8 * X[:, 0]
    B = np.zeros((5, 5), dtype=int)
    B[0, 1] = B[1, 2] = B[0, 3] = 1
    return pd.DataFrame(X, columns=HOSTILE), B


@pytest.fixture(scope="module")
def fitted():
    X, B = _data()
    model = colide_core.CoLiDE("nv").fit(X)
    fit = ReportFit("NV", model.W_, model.adjacency_, model.sigma_, model.get_params(), build_manifest(model, X))
    return X, B, model, fit


def test_report_is_self_contained_and_escapes_names_once(fitted):
    X, B, model, fit = fitted
    html = build_report(X, [fit], dataset_name="<i>mine</i>", B_true=B, reference_label="your reference")
    # offline: no script, style sheet, image or frame from the network
    assert not re.search(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*[\"']?(?:https?:)?//", html, re.I)
    # plotly.js inlined exactly once (its bundle starts with this banner), used by every figure
    assert html.count("* plotly.js v") == 1 and html.count("Plotly.newPlot") >= 8
    # the raw hostile name never appears as markup in the report itself
    assert "<script>alert(1)</script>" not in html
    assert "&lt;i&gt;mine&lt;/i&gt;" in html
    # the graph page is escaped once into srcdoc: unescaping it gives the graph's own page,
    # where the names are JSON-escaped by pyvis (no raw '<' from a name)
    srcdoc = re.search(r'srcdoc="([^"]*)"', html).group(1)
    inner = htmllib.unescape(srcdoc)
    assert "vis-network" in inner and "<script>alert(1)</script>" not in inner
    assert "against your reference" in html.replace("\n", " ")
    # the manifest is embedded as JSON that parses back to the same document
    blob = re.search(r'<script type="application/json" class="manifest"[^>]*>(.*?)</script>', html, re.S).group(1)
    doc = json.loads(blob)
    assert doc["results"]["node_names"] == HOSTILE
    assert np.allclose(load_manifest(doc).W, model.W_)


def test_report_sections_without_truth_and_with_a_path(fitted):
    X, _, _, fit = fitted
    path = colide_core.lambda_path(X, lambdas=[0.02, 0.05, 0.1], thresholds=[0.2, 0.3])
    html = build_report(X, [fit], path=path)
    assert "Metrics and curves" not in html and "λ and the threshold" in html
    assert "largest plateau" in html
    with pytest.raises(ValueError):
        build_report(X, [])


def _cli(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    return subprocess.run([sys.executable, "-m", "colide_core", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_cli_report_with_reference_manifest_and_errors(tmp_path):
    X, B = _data()
    X.columns = ["a", "b", "c", "d", "e"]
    X.to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "ref.graphml").write_bytes(export_graph(B, list(X.columns), "graphml"))
    (tmp_path / "bad.csv").write_text("source,target\na,zz\n")
    r = _cli("report", "data.csv", "--out", "rep", "--reference", "ref.graphml", "--random-graphs", 10,
             "--rescalings", 1, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "against your reference" in html.replace("\n", " ") and "Markov check" in html
    # never overwritten without --force
    r = _cli("report", "data.csv", "--out", "rep", cwd=tmp_path)
    assert r.returncode == 2 and "exists; pass --force" in r.stderr
    # an unknown name in the reference: a clear message, exit status 2, no traceback
    r = _cli("report", "data.csv", "--out", "rep2", "--reference", "bad.csv", cwd=tmp_path)
    assert r.returncode == 2 and "'zz'" in r.stderr and "Traceback" not in r.stderr
    # the fit of a manifest, checked against the data's fingerprint
    assert _cli("fit", "data.csv", "--out", "fit", "--quiet", cwd=tmp_path).returncode == 0
    r = _cli("report", "data.csv", "--out", "rep3", "--manifest", "fit/manifest.json", "--rescalings", 0,
             "--random-graphs", 5, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    X.iloc[:10].to_csv(tmp_path / "other.csv", index=False)
    r = _cli("report", "other.csv", "--out", "rep4", "--manifest", "fit/manifest.json", cwd=tmp_path)
    assert r.returncode == 2 and "differ from the manifest" in r.stderr


def test_above_the_summary_size_the_report_draws_the_adjacency_not_a_node_link_graph():
    # issue 53, low 1: the report drew a node-link graph at any size (75 s to build and 49 s to
    # draw at d = 200), where the dashboard shows the adjacency heatmap above SUMMARY_NODES. A
    # chain of 61 nodes (one above): no graph iframe, one heatmap per fit with one cell per pair,
    # the chain's 60 edges coloured "correct" against the truth; at 60 nodes the drawing stays.
    from colide_core.render.graph_style import SUMMARY_NODES

    def report(d):
        rng = np.random.default_rng(1)
        X = np.cumsum(rng.standard_normal((300, d)), axis=1)  # x_j = x_{j-1} + e_j: the chain
        B = np.eye(d, k=1, dtype=int)
        W = B * 1.0
        fit = ReportFit("NV", W, W, np.ones(d), {"variant": "nv", "lambda1": 0.05}, None)
        return build_report(pd.DataFrame(X, columns=[f"g{j}" for j in range(d)]), [fit], B_true=B)

    big = report(SUMMARY_NODES + 1)
    assert "<iframe class='graph'" not in big and "srcdoc=" not in big
    assert f"{SUMMARY_NODES + 1} nodes: the adjacency as a heatmap" in big
    assert big.count("* plotly.js v") == 1  # still inlined once, with the first figure (the heatmap)
    small = report(SUMMARY_NODES)
    assert small.count("<iframe class='graph'") == 1 and "the adjacency as a heatmap" not in small
