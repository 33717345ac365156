"""The Learn page's Playback tab (dashboard.playback), through AppTest (no browser).

After a Run, switching the playback on refits once with ``record_W=True`` and offers a slider over
the checkpoints; the caption at each checkpoint reports that checkpoint's numbers, which must be
the solver's own (a direct ``CoLiDE(record_W=True)`` fit), and the step buttons move it.
"""
import re

import numpy as np
import pytest

import colide_core
from colide_core.render.figures import playback_figure

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _direct():
    X, _ = colide_core.load_sachs()
    return colide_core.CoLiDE("nv", record_W=True).fit(X)


def _metric_edges(at):
    return [m.value for m in at.metric if m.label == "Edges · NV"][0]


def _player(at):
    """(frames, captions) embedded in the Playback tab's one drawing: its player is the one control."""
    import json
    import re

    pages = [f.proto.srcdoc for f in at.get("iframe") if "CAPTIONS" in (f.proto.srcdoc or "")]
    assert len(pages) == 1, len(pages)
    m = re.search(r"var FRAMES = (.*?), CAPTIONS = (.*?), START = ", pages[0], re.S)
    return json.loads(m.group(1)), json.loads(m.group(2))


def test_playback_steps_through_the_recorded_checkpoints(new_app):
    at = new_app()
    at.run()
    at.switch_page("pages/learn.py").run()
    at.button(key="learn_run").click().run()
    assert not at.exception, at.exception
    at.session_state["learn_tab"] = "Playback"  # the tab is built only while open (a click in a browser)
    at.run()
    at.toggle(key="learn_playback_on").set_value(True).run()
    assert not at.exception, at.exception
    model = _direct()
    hist, Ws = model.result_.history, model.result_.W_history
    # one control (issue 28): no Streamlit slider or caption beside the drawing's own player
    assert not [s for s in at.slider if s.key == "learn_playback_step"]
    assert not [c for c in at.caption if c.value.startswith("Checkpoint ")]
    frames, captions = _player(at)
    assert len(frames) == len(captions) == len(Ws) > 2

    def edges(k):
        return int((colide_core.threshold_to_dag(Ws[k], 0.3) != 0).sum())

    # first checkpoint: stage 1 (mu = 1, s = 1)
    assert captions[0].startswith(f"Checkpoint 1 of {len(Ws)}: stage 1 (μ = 1, s = 1)")
    assert f"{edges(0)} edges above 0.3" in captions[0]
    assert captions[1].startswith(f"Checkpoint 2 of {len(Ws)}")
    last = len(Ws) - 1
    assert f"stage {hist['stage'][last] + 1}" in captions[last]
    assert f"{edges(last)} edges above 0.3" in captions[last]
    # each frame draws that checkpoint's learned edges (plus the truth's missing ones, dashed)
    assert len([e for e in frames[last] if not e.get("dashes")]) == edges(last)
    # the last recorded W is the central path's point; the default (solver auto) returns the order
    # search's lower score from it on Sachs, and the page says the swaps are not played (issue 51)
    fast = colide_core.CoLiDE("nv", solver="fast").fit(colide_core.load_sachs()[0])
    np.testing.assert_array_equal(Ws[last], fast.W_)
    assert model.result_.choice["solver"] == "topo"
    assert any("the swaps are not played" in c.value for c in at.caption)
    at.session_state["learn_tab"] = "Metrics"  # a click on the tab (only the open tab is built, issue 41)
    at.run()
    # the Metrics tab counts the order search's graph (14 edges on Sachs NV), the last frame the
    # central path's (13): the difference the caption above the player names
    assert int(_metric_edges(at)) == int((model.adjacency_ != 0).sum()) != edges(last)
    # the optimisation is visible: the first and the last frames draw different graphs
    assert edges(0) != edges(last)


def test_playback_figure_marks_every_stage_and_the_current_checkpoint():
    model = _direct()
    res = model.result_
    fig = playback_figure(res.history, colide_core.defaults.MU_SCHEDULE, res.s_used, 3)
    labels = [a.text for a in fig.layout.annotations if re.match(r"stage \d", a.text)]
    stages = sorted(set(res.history["stage"]))
    assert labels == [f"stage {k + 1}: μ={colide_core.defaults.MU_SCHEDULE[k]:g}<br>s={res.s_used[k]:g}"
                      for k in stages]
    # the h(W) panel is on a log axis, the red line at the current checkpoint
    assert fig.layout.yaxis.type == "log"
    red = [s for s in fig.layout.shapes if s.line.color == "#d62728"]
    assert len(red) == 3 and all(s.x0 == 3 for s in red)  # one per panel
    # NV: the sigma panel shows the mean over the 11 nodes at each checkpoint
    mean = [float(np.mean(s)) for s in res.history["sigma"]]
    assert np.allclose(fig.data[2].y, mean)


def test_playback_plays_the_fit_the_noise_model_control_picks(new_app):
    # Issue 28, point 3: Playback always played NV's fit (results[order[-1]]), even with EV
    # selected, and did not say which. Now it follows the Noise model control and says so.
    at = new_app()
    at.run()
    at.switch_page("pages/learn.py").run()
    at.button(key="learn_run").click().run()
    at.segmented_control(key="learn_variant").set_value("EV").run()
    assert not at.exception, at.exception
    assert any(c.value.startswith("Playing back **CoLiDE-EV**") for c in at.caption)
    at.session_state["learn_tab"] = "Playback"
    at.run()
    at.toggle(key="learn_playback_on").set_value(True).run()
    assert not at.exception, at.exception
    X, _ = colide_core.load_sachs()
    ev = colide_core.CoLiDE("ev", record_W=True).fit(X)
    assert len(_player(at)[1]) == len(ev.result_.W_history)
    at.segmented_control(key="learn_variant").set_value("NV").run()
    assert any(c.value.startswith("Playing back **CoLiDE-NV**") for c in at.caption)


def test_playback_is_built_only_while_its_tab_is_open_and_keeps_at_most_200_frames(new_app):
    # Issue 30, point 5: every Learn rerun rebuilt and re-sent the playback page (33 MB at the
    # manifest's 10,000 checkpoints), even on the Graph tab.
    from dashboard.playback import PLAYBACK_MAX_FRAMES, thin_frames

    at = new_app()
    at.run()
    at.switch_page("pages/learn.py").run()
    at.button(key="learn_run").click().run()
    assert at.session_state["learn_tab"] == "Graph"
    assert not [t for t in at.toggle if t.key == "learn_playback_on"]  # nothing of Playback is built
    hist = {"stage": list(range(10_000)), "objective": [float(i) for i in range(10_000)]}
    Ws = [np.full((2, 2), float(i)) for i in range(10_000)]
    h, w = thin_frames(hist, Ws)
    assert len(w) == PLAYBACK_MAX_FRAMES == len(h["stage"]) and h["stage"][0] == 0 and h["stage"][-1] == 9_999
    assert [m[0, 0] for m in w] == [float(s) for s in h["stage"]]  # frames and history stay aligned
    short = {"stage": list(range(50))}
    assert thin_frames(short, Ws[:50]) == (short, tuple(Ws[:50]))  # a short recording is kept whole


def test_a_topo_fit_is_not_said_to_play_back(new_app):
    # Issue 41: Playback's caption read "Playing back CoLiDE-NV (..., CoLiDE-TOPO)" for an order
    # search, which has no continuous optimisation to play.
    at = new_app()
    at.run()
    at.session_state["solver_overrides"] = {"solver": "topo"}
    at.session_state["learn_variant"] = "NV"
    at.switch_page("pages/learn.py").run()
    if not at.session_state["fit_results"]:
        at.button(key="learn_run").click().run()
    assert not at.exception, at.exception
    captions = [c.value for c in at.caption]
    assert not any(c.startswith("Playing back") for c in captions)
    assert any("**CoLiDE-TOPO-NV**" in c and "nothing to play back" in c for c in captions)
