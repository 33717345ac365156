"""The dashboard's long-lived drawing (dashboard.graphview, issue 41): one document per drawing,
redrawn in place from data at each rerun, with a fallback to a page per drawing.

Browser behaviour (the same document redrawn at a λ step; the drawing waits for its frame's
height) is tested in tests/e2e/test_live_learn.py; here: the files served, the data sent, its
digest, the fallback, and hostile names.
"""
import hashlib
import json

import numpy as np

from colide_core.render.graph_html import graph_drawing, graph_html, vis_assets
from dashboard import graphview
from dashboard.infra import assets
from tests._drawing import drawing_in, shown_drawings

EVIL = '<img src=x onerror="alert(1)">&amp;'


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_component_folder_holds_the_library_files_and_nothing_remote(static_dir):
    assert graphview.drawing_component() is not None
    (folder,) = static_dir.iterdir()
    assert folder.name.startswith("graph-drawing-")
    served = {p.name for p in folder.iterdir()}
    assert served == {"index.html", "component.js", "graph_draw.js", "vis-network.min.js", "vis-network.css"}
    # the very files the library inlines in its pages: one drawing code, one vis-network
    for name, source in vis_assets().items():
        assert _sha(folder / name) == _sha(source)
    draw_js = folder / "graph_draw.js"
    assert draw_js.read_text(encoding="utf-8") in graph_html(np.zeros((2, 2)), ["a", "b"])
    page = (folder / "index.html").read_text(encoding="utf-8")
    assert "http" not in page.replace("http-equiv", "") and "//" not in page.replace("<!--", "")
    protocol = (folder / "component.js").read_text(encoding="utf-8")
    assert "event.source !== window.parent" in protocol   # data from the parent frame only
    # a second call (another rerun) writes nothing new: same folder, same files
    graphview._declared.cache_clear()
    assert graphview.drawing_component() is not None
    assert [p.name for p in static_dir.iterdir()] == [folder.name]
    # a folder removed while the server runs (a cleaned static/) is written again at the next rerun
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()
    assert graphview.drawing_component() is not None
    assert {p.name for p in folder.iterdir()} == served


def test_the_digest_changes_with_the_drawing_and_only_with_it():
    W = np.array([[0.0, 0.8, 0.0], [0.0, 0.0, -0.5], [0.0, 0.0, 0.0]])
    names = ("a", "b", "c")
    one, t1 = graphview.drawing_data(W, names, legend=False)
    again, t2 = graphview.drawing_data(W.copy(), list(names), legend=False)
    assert t1 == t2 and one == again
    _, t3 = graphview.drawing_data(W * (np.abs(W) > 0.6), names, legend=False)   # a λ step that drops an edge
    _, t4 = graphview.drawing_data(W, names, sigma=np.array([1.0, 2.0, 3.0]), legend=False)   # tooltips change
    assert len({t1, t3, t4}) == 3
    assert t1 == hashlib.sha256(json.dumps(one, sort_keys=True).encode()).hexdigest()
    # what is sent is what the library's page draws (less the page around it)
    page = drawing_in(graph_html(W, list(names), height_px=None, legend=False))
    assert {k: v for k, v in one.items() if k != "legend"} == page and one["legend"] is None


def test_hostile_names_travel_as_data_and_the_legend_is_escaped_once():
    W = np.array([[0.0, 0.8], [0.0, 0.0]])
    truth = np.array([[0.0, 0.0], [1.0, 0.0]])     # the edge is reversed: the legend lists it
    drawing = graph_drawing(W, [EVIL, "b"], truth)
    assert [n["label"] for n in drawing["nodes"]] == [EVIL, "b"]    # as is: drawn as canvas text
    assert drawing["nodes"][0]["title"] == EVIL                     # a tooltip set through textContent
    # the legend is data (issue 53): plain strings, built in the browser with textContent
    assert "legend_html" not in drawing
    assert drawing["legend"][0] == {"text": "reversed (true edge points the other way)", "colour": "#ff7f0e",
                                    "dashed": False}
    assert all(set(e) <= {"text", "colour", "dashed", "marker"} for e in drawing["legend"])


def test_without_a_writable_folder_each_drawing_is_a_page_again(new_app, static_dir, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError("read-only install")

    monkeypatch.setattr(assets, "install_file", refuse)
    at = new_app().run()
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    assert len(at.get("component_instance")) == 0
    docs = shown_drawings(at)
    assert len(docs) == 3 and all(d.startswith("<!DOCTYPE html>") for d in docs)   # EV, NV, truth as pages


def test_the_learn_page_sends_each_drawing_its_heading(new_app):
    at = new_app().run()
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    args = [json.loads(el.proto.json_args) for el in at.get("component_instance")]
    assert [a["label"] for a in args] == ["CoLiDE-EV · λ = 0.05", "CoLiDE-NV · λ = 0.05", "Ground truth"]
    assert all(len(a["token"]) == 64 and a["height"] > 0 for a in args)
