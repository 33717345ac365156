"""colide_core.render.graph_html.playback_html: the animated drawing of a fit's checkpoints.

The player's data are read back from the page (the JSON literals of its script) and compared
with hand-made checkpoints thresholded by colide_core.threshold_to_dag (as the Playback tab does,
dashboard.caching.cached.playback_html_cached).
"""
import json
import re

import numpy as np
import pytest

from colide_core import threshold_to_dag
from colide_core.render.graph_html import playback_html, set_playback_start

EVIL = "</script><script>alert(1)</script>"


def _player(html):
    m = re.search(r"var FRAMES = (\[.*?\]), CAPTIONS = (\[.*?\]), START = /\*start\*/(\d+)/\*start\*/;", html,
                  re.DOTALL)
    assert m, "no player script"
    return json.loads(m.group(1)), json.loads(m.group(2)), int(m.group(3))


def _checkpoints():
    # a 3-node fit in three checkpoints: nothing yet; 0->1 appears; then 1->2 (negative) too, and
    # a weak 0->2 that the 0.3 threshold removes
    W0 = np.zeros((3, 3))
    W1 = W0.copy(); W1[0, 1] = 0.8
    W2 = W1.copy(); W2[1, 2] = -1.6; W2[0, 2] = 0.1
    return [threshold_to_dag(W, 0.3) for W in (W0, W1, W2)]


def test_frames_are_the_thresholded_checkpoints_with_the_drawings_styles():
    B = np.zeros((3, 3)); B[0, 1] = B[1, 2] = 1
    html = playback_html(_checkpoints(), ["a", "b", "c"], B, captions=["c0", "c1", "c2"])
    frames, captions, start = _player(html)
    assert captions == ["c0", "c1", "c2"] and start == 0
    kept = [sorted((e["from"], e["to"]) for e in f if e["color"] != "#7f7f7f") for f in frames]
    assert kept == [[], [(0, 1)], [(0, 1), (1, 2)]]
    # missing true edges are drawn dashed grey in each frame until found
    missing = [sorted((e["from"], e["to"]) for e in f if e["dashes"]) for f in frames]
    assert missing == [[(0, 1), (1, 2)], [(1, 2)], []]
    # arrowhead = sign: 1->2 has a negative weight (a bar), 0->1 a positive one (an arrow)
    heads = {(e["from"], e["to"]): e["arrows"]["to"]["type"] for e in frames[2]}
    assert heads == {(0, 1): "arrow", (1, 2): "bar"}
    # the widest edge of a frame is the largest |w| of that frame
    widths = {(e["from"], e["to"]): e["width"] for e in frames[2]}
    assert widths[(1, 2)] == pytest.approx(8.0) and widths[(0, 1)] == pytest.approx(1 + 7 * 0.8 / 1.6)
    # one legend for every frame: correct, missing and both arrowheads
    assert 'id="legend"' in html and "negative weight" in html and "missing" in html


def test_names_are_escaped_once_in_the_player_data():
    html = playback_html(_checkpoints(), ["a", EVIL, "c"], captions=["x", "y", "z"])
    assert EVIL not in html and "<script>alert(1)" not in html
    frames, _, _ = _player(html)
    titles = [e["title"] for f in frames for e in f]
    assert any(EVIL in t for t in titles)  # decoded, the title is the name as written


def test_start_is_set_without_rebuilding_and_inputs_are_checked():
    html = playback_html(_checkpoints(), list("abc"), captions=["x", "y", "z"])
    assert _player(set_playback_start(html, 2))[2] == 2
    assert _player(set_playback_start(html, -4))[2] == 0
    with pytest.raises(ValueError, match="captions"):
        playback_html(_checkpoints(), list("abc"), captions=["x"])
    with pytest.raises(ValueError, match="no checkpoint"):
        playback_html([], list("abc"), captions=[])
    with pytest.raises(ValueError, match="same square shape"):
        playback_html([np.zeros((3, 3)), np.zeros((2, 2))], list("abc"), captions=["x", "y"])


def test_required_edges_are_labelled_in_every_frame_and_in_the_picture():
    # Issue 28, point 2: required edges were marked in the Learn drawings but not in Playback or
    # in the PNG/SVG download, where a constrained fit looked unconstrained.
    from colide_core.render.graph_html import playback_html
    from colide_core.render.picture import to_image

    A0 = np.array([[0, 0.8, 0], [0, 0, 0.5], [0, 0, 0]])
    A1 = np.array([[0, 0.9, 0.4], [0, 0, 0.6], [0, 0, 0]])
    req = np.zeros((3, 3), dtype=bool)
    req[0, 1] = True
    page = playback_html([A0, A1], ["a", "b", "c"], captions=["one", "two"], required=req)
    m = re.search(r"var FRAMES = (.*?), CAPTIONS = ", page, re.S)
    frames = json.loads(m.group(1))
    for frame in frames:
        labels = {(e["from"], e["to"]): e.get("label") for e in frame}
        assert labels[(0, 1)] == "required" and labels[(1, 2)] is None
    svg = to_image(A1, ["a", "b", "c"], fmt="svg", required=req).decode()
    assert "0.90 required" in svg and "0.60 required" not in svg
