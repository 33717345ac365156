"""The HTML pages are autoescaped Jinja2 templates (colide_core/render/templates/).

* ``colide_core/render/report.py`` and ``graph_html.py`` escape nothing by hand: no call of any
  ``*escape`` function is left in their source, user strings reach HTML only through Jinja's
  autoescape and JSON in ``<script>`` only through ``|tojson``;
* hostile node names come out of the report and of the Playback page escaped exactly once: the
  escaped form is there, the raw form is not, nor a doubly escaped one (``&amp;lt;``), and a name
  that looks like a Jinja expression is printed as text, never evaluated;
* the shared environment has autoescape on and is built once per process.

Convention: ``W[i, j] != 0`` means i -> j; X is (n_samples, n_nodes).
"""
import ast
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import colide_core
from colide_core.evaluation.checks import run_checks
from colide_core.render.graph_html import playback_html, template_environment
from colide_core.render.report import ReportFit, build_report
from colide_core.run.manifest import build_manifest

RENDER = Path(__file__).resolve().parents[1] / "colide_core" / "render"
SCRIPT = "</script><script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
JINJA = "{{7*7}}"
NAMES = [SCRIPT, IMG, JINJA, "Raf", "Mek"]
# the one HTML escape (markupsafe: & < > " ')
ESCAPED = {SCRIPT: "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;",
           IMG: "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;", JINJA: JINJA}
# in a <script>: JSON with < > & ' as \u escapes (|tojson), '"' as \"
JSON_ESCAPED = {SCRIPT: "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e",
                IMG: '\\"\\u003e\\u003cimg src=x onerror=alert(1)\\u003e', JINJA: JINJA}


@pytest.mark.parametrize("module", ["report.py", "graph_html.py"])
def test_no_hand_written_escape_is_left(module):
    source = (RENDER / module).read_text(encoding="utf-8")
    assert not re.search(r"\b(?:html_escape|markupsafe\.escape|escape)\(", source)
    called = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            called.add(f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "")
    assert not {c for c in called if c.lower().endswith("escape")}, called
    # ... and no hand-written JSON-for-<script> loop either
    assert "\\\\u003c" not in source and "u003c" not in source


def test_the_environment_autoescapes_and_is_built_once():
    env = template_environment()
    assert env is template_environment()
    assert env.autoescape is True or all(env.autoescape(t) for t in env.list_templates())
    assert {"report.html.j2", "graph_page.html.j2", "graph_parts.html.j2", "playback.html.j2"} <= set(
        env.list_templates())
    # a value printed by a template is escaped, |tojson escapes for <script>
    assert env.from_string("{{ x }}").render(x=SCRIPT) == ESCAPED[SCRIPT]
    assert env.from_string("{{ x|tojson }}").render(x=SCRIPT) == '"' + JSON_ESCAPED[SCRIPT] + '"'


def _data():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 5))
    X[:, 1] += X[:, 0]
    X[:, 2] += 0.8 * X[:, 1]
    X[:, 4] += X[:, 3]
    B = np.zeros((5, 5), dtype=int)
    B[0, 1] = B[1, 2] = B[3, 4] = 1
    return pd.DataFrame(X, columns=NAMES), B


def _outside_srcdoc(html):
    """The report without its graph pages: each is a whole page (vis-network included, whose
    code holds the text "&lt;") escaped once into an iframe's srcdoc attribute."""
    return re.sub(r'srcdoc="[^"]*"', 'srcdoc=""', html)


def test_hostile_names_are_escaped_once_in_the_report():
    X, B = _data()
    model = colide_core.CoLiDE("ev").fit(X)
    fit = ReportFit(IMG, model.W_, model.adjacency_, model.sigma_, model.get_params(), build_manifest(model, X))
    checks = run_checks(X, model.adjacency_, W=model.W_, n_random=5)
    html = build_report(X, [fit], dataset_name=SCRIPT, B_true=B, reference_label=JINJA, checks=checks,
                        notes=[IMG, JINJA], created="2024-01-01")
    body = _outside_srcdoc(html)
    for name in NAMES[:3]:
        assert f"<td>{ESCAPED[name]}</td>" in body  # the data table, escaped once by autoescape
    assert f"<title>CoLiDE report · {ESCAPED[SCRIPT]}</title>" in body
    assert f"<p>{ESCAPED[IMG]}</p>" in body and f"<p>{JINJA}</p>" in body  # the notes
    assert f"data-fit=\"{ESCAPED[IMG]}\"" in body  # an attribute
    assert SCRIPT not in html and IMG not in html and "<img src=x" not in html
    assert "&amp;lt;" not in body and "&amp;gt;" not in body and "&amp;#34;" not in body
    assert ">49<" not in body and "against 49" not in body  # {{7*7}} is text, not a template
    # the graph page in srcdoc is escaped once: its names are JSON-escaped, never "&lt;"-escaped
    for srcdoc in re.findall(r'srcdoc="([^"]*)"', html):
        assert JSON_ESCAPED[SCRIPT].replace("&", "&amp;") in srcdoc
        assert "&amp;amp;lt;" not in srcdoc and "&lt;script&gt;alert" not in srcdoc
    # the manifest in <script> is |tojson: parses back to the names as written
    blob = re.search(r'<script type="application/json" class="manifest"[^>]*>(.*?)</script>', html, re.S).group(1)
    assert JSON_ESCAPED[SCRIPT] in blob and "</script>" not in blob
    assert json.loads(blob)["results"]["node_names"] == NAMES


def test_hostile_names_are_escaped_once_in_the_playback_page():
    W0 = np.zeros((5, 5))
    W1 = W0.copy()
    W1[0, 1], W1[1, 2] = 0.9, -0.6
    captions = [f"step 0 {SCRIPT}", f"step 1 {IMG} {JINJA}"]
    html = playback_html([W0, W1], NAMES, captions=captions)
    for name in NAMES[:3]:
        assert JSON_ESCAPED[name] in html
    assert SCRIPT not in html and IMG not in html and "<img src=x" not in html
    assert "&amp;lt;" not in html and "&lt;script&gt;" not in html and "&lt;img" not in html
    m = re.search(r"var FRAMES = (\[.*?\]), CAPTIONS = (\[.*?\]), START", html, re.S)
    frames, shown = json.loads(m.group(1)), json.loads(m.group(2))
    assert shown == captions  # decoded: the captions as written, {{7*7}} included
    assert any(SCRIPT in e["title"] for e in frames[1])
