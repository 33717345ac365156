"""A finished Run's lines on the Learn page describe that fit only (issue 48, the walk's leftover).

After Run, "EV finished: …" and "NV finished: …" (about 60 px each) stood above the drawings; they
stayed there on every later λ step, so with the Stale notice the next λ's drawings started half
below the fold at 1280×720. They now go once the data, λ, noise model or solver options change,
and stay while only the threshold (which never re-runs the solver) moves.
"""
import pytest

from tests._schedules import QUICK  # the suite's short schedule: the test is about the page's lines

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _finished(at):
    return [m.value for m in (*at.success, *at.info, *at.warning) if " finished: " in m.value]


def test_a_runs_lines_go_when_lambda_moves_and_stay_when_only_the_threshold_does(new_app):
    at = new_app()
    at.run()
    at.session_state["solver_overrides"] = dict(QUICK)
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    at.button(key="learn_run").click().run()  # Both: EV and NV, as a job the page follows to its end
    assert not at.exception, at.exception
    lines = _finished(at)
    assert [line.split(" finished: ")[0] for line in lines] == ["EV", "NV"], lines
    at.slider(key="learn_threshold").set_value(0.4).run()  # the same fits, another threshold: still theirs
    assert _finished(at) == lines
    options = at.select_slider(key="learn_lambda1").options
    lam = float(at.session_state["learn_lambda1"])
    other = next(o for o in options if float(o) != lam)
    at.select_slider(key="learn_lambda1").set_value(other).run()  # another λ: those lines are not about it
    assert not at.exception, at.exception
    assert _finished(at) == []
    at.select_slider(key="learn_lambda1").set_value(lam).run()  # and they do not come back
    assert _finished(at) == []
