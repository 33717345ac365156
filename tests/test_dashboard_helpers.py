"""Tests of the small pure helpers of the dashboard: escaping, data hashing, figures."""
import io
import threading

import numpy as np
import pandas as pd
import pytest

from dashboard.data import content_hash, make_dataset
from colide_core.render.figures import compare_figure, noise_figure
from dashboard.fitting import progress_fraction, solver_params
from dashboard.infra.text import html_escape, md_escape


def test_html_escape():
    assert html_escape("<b>&'\"") == "&lt;b&gt;&amp;&#39;&#34;"
    assert html_escape(3) == "3"


def test_md_escape_neutralises_markdown_and_directives():
    # Emphasis, links, LaTeX and Streamlit's colour directive become literal (backslash-escaped),
    # and HTML special characters become entities.
    assert md_escape("*a*") == r"\*a\*"
    assert md_escape("[x](http://e.com)") == r"\[x\]\(http\://e\.com\)"
    assert md_escape("$x$") == r"\$x\$"
    assert md_escape(":red[hi]") == r"\:red\[hi\]"
    assert md_escape("<img src=x>") == "&lt;img src\\=x&gt;"
    assert md_escape("Raf") == "Raf"


def test_content_hash_depends_on_values_names_and_truth():
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0.0, 1.0, 5.0]})
    h = content_hash(X)
    assert h == content_hash(X.copy())
    assert h != content_hash(X.rename(columns={"a": "z"}))
    X2 = X.copy()
    X2.iloc[0, 0] = 1.0000001
    assert h != content_hash(X2)
    assert h != content_hash(X, B_true=np.zeros((2, 2)))
    ds = make_dataset("toy", X, B_true=[[0, 1], [0, 0]], sigma_true=[1, 2], source="simulated")
    assert ds.key == content_hash(ds.X, ds.B_true, ds.sigma_true)
    assert ds.B_true.loc["a", "b"] == 1.0 and ds.shape == (3, 2)
    with pytest.raises(ValueError, match="B_true"):
        make_dataset("bad", X, B_true=np.zeros((3, 3)))


def test_progress_fraction_counts_faithful_steps():
    budget = (10, 10, 10, 70)  # 100 iterations in total
    assert progress_fraction(budget, 0, 0) == 0.0
    assert progress_fraction(budget, 0, 5) == pytest.approx(0.05)
    assert progress_fraction(budget, 2, 10) == pytest.approx(0.30)
    assert progress_fraction(budget, 3, 35) == pytest.approx(0.65)
    assert progress_fraction(budget, 3, 70) == 1.0
    assert progress_fraction(budget, 3, 10_000) == 1.0  # clipped


@pytest.mark.filterwarnings("ignore::colide_core.ConvergenceWarning")
@pytest.mark.parametrize("cov, scale", [(np.array([[1.0, 0.5], [0.5, 1.0]]), 10),   # full step scale
                                        (np.diag([1.0, 1e8]), 1)])                     # ill-conditioned
def test_fast_solver_reports_progress_in_faithful_steps(cov, scale):
    # The fast solver takes `scale` times longer steps; its callback still reports each stage's
    # progress in faithful steps (the unit of max_iter), so a stage that uses its whole budget ends
    # at T_k whatever the scale, and progress_fraction needs no solver-specific budgets.
    from colide_core.solver._fast import fast_solve

    seen = []
    res = fast_solve(cov, variant="ev", max_iter=(2000, 2000), mu_schedule=(1.0, 0.1), s_schedule=(1.0, 0.9),
                     tol=1e-300, checkpoint=500, chatter_tol=None, polish=False,
                     callback=lambda stage, it, obj: seen.append((stage, it)) and False)
    first = [it for stage, it in seen if stage == 0]
    assert first == [500, 1000, 1500, 2000]                    # faithful units, checkpoint apart
    assert res.history["iteration"][len(first) - 1] == 2000 // scale   # the solver's own steps
    assert progress_fraction((2000, 2000), 0, first[-1]) == 0.5


def test_fit_progress_with_the_fast_solver_rises_and_stays_in_range():
    # A real fast solve on Sachs: the fractions the job would show never go down and end in (0, 1].
    import colide_core

    X, _ = colide_core.load_sachs()
    fractions = []
    model = colide_core.CoLiDE("nv", solver="auto")

    def cb(stage, iteration, objective):
        fractions.append(progress_fraction(model.max_iter, stage, iteration))
        return False

    model.fit(X, callback=cb)
    assert len(fractions) >= 4
    assert all(b >= a for a, b in zip(fractions, fractions[1:]))
    assert 0.0 <= fractions[0] and 0.0 < fractions[-1] <= 1.0
    # The last stage was reached, so at least the first three stages' share is shown as done.
    T = model.max_iter
    assert fractions[-1] >= sum(T[:3]) / sum(T)


def test_solver_params_is_hashable_and_sorted():
    p = solver_params("nv", 0.05, {"max_iter": [1, 2, 3, 4]})
    assert p == (("lambda1", 0.05), ("max_iter", (1, 2, 3, 4)), ("variant", "nv"))
    hash(p)


def test_noise_figure_escapes_names_and_draws_ev_as_line():
    fig = noise_figure(["<b>x</b>", "y"], {"NV": np.array([1.0, 2.0]), "EV": 1.5}, sigma_true=[1.0, 1.0])
    bars = [t for t in fig.data if t.type == "bar"]
    assert [t.name for t in bars] == ["true σ", "NV σ̂"]
    assert list(bars[1].x) == ["&lt;b&gt;x&lt;/b&gt;", "y"]
    assert [s["y0"] for s in fig.layout.shapes] == [1.5]  # EV: one horizontal line


def test_compare_figure_groups_methods():
    summary = pd.DataFrame({"shd_mean": [3.0, 5.0], "shd_std": [1.0, np.nan]}, index=["A", "<i>B</i>"])
    fig = compare_figure(summary, metrics=("shd", "sid"))  # sid absent: skipped
    assert [t.name for t in fig.data] == ["A", "&lt;i&gt;B&lt;/i&gt;"]
    assert list(fig.data[0].x) == ["SHD"] and list(fig.data[1].error_y.array) == [0.0]
    summary["shd_cpdag_mean"], summary["shd_cpdag_std"] = [1.0, 2.0], [0.5, 0.5]
    fig = compare_figure(summary, metrics=("shd", "shd_cpdag"), labels={"shd_cpdag": "SHD-C"})
    assert list(fig.data[0].x) == ["SHD", "SHD-C"] and list(fig.data[0].y) == [3.0, 1.0]


def test_is_running_and_stop_job_on_a_real_background_job():
    import threading

    from dashboard.infra.jobs import Job, is_running, stop_job

    release = threading.Event()

    def until_stopped(job):
        steps = 0
        while not job.progress(steps, 1000):      # runs until Stop is requested
            steps += 1
            release.wait(0.01)
        return steps

    state = {"job": None}
    assert not is_running(state, "job") and not is_running(state, "missing")
    stop_job(state, "job")                      # no job: a no-op, not an error
    state["job"] = Job(until_stopped, "Waiting").start()
    assert is_running(state, "job") and not state["job"].stop_requested
    stop_job(state, "job")
    assert state["job"].wait(10) and state["job"].stop_requested
    assert not is_running(state, "job")
    job = state["job"]
    assert job.result >= 0 and job.error is None and job.fraction == 1.0 and job.status == "Waiting: finished"


def test_job_reports_progress_and_turns_exceptions_into_messages():
    from dashboard.infra.jobs import Job, JobSlot, is_running, start_job

    seen = []

    def counting(job):
        for k in range(4):
            job.progress(k + 0.5 if k == 3 else k, 4)
            seen.append((job.fraction, job.status))
        return "done"

    job = Job(counting, "Count", key=("data", 1)).start()
    assert job.wait(10) and job.result == "done" and job.key == ("data", 1)
    assert seen == [(0.0, "Count: 0 of 4"), (0.25, "Count: 1 of 4"), (0.5, "Count: 2 of 4"),
                    (0.875, "Count: 3.5 of 4")]
    assert job.report(7.0, "x") is False and job.fraction == 1.0     # clipped to [0, 1]

    def failing(job):
        raise ValueError("X has a constant column 'b'")

    def broken(job):
        raise KeyError("oops")

    failed = Job(failing, "Bootstrap").start()
    assert failed.wait(10) and failed.result is None
    assert failed.error == "Bootstrap failed: X has a constant column 'b'"
    crashed = Job(broken, "Path").start()
    assert crashed.wait(10) and crashed.error == "Path: unexpected error (KeyError): 'oops'"

    # start_job: one job per slot; a start clears the slot's messages.
    slot = JobSlot("job", "messages", stop_key="stop", stop_help="")
    gate = threading.Event()
    state = {"job": None, "messages": [("error", "old")]}
    made = []

    def make():
        made.append(Job(lambda job: gate.wait(10), "Gate"))
        return made[-1]

    assert start_job(state, slot, make) and state["messages"] == [] and state["job"] is made[0]
    state["messages"] = [("info", "kept")]
    assert not start_job(state, slot, make) and len(made) == 1 and state["messages"] == [("info", "kept")]
    gate.set()
    assert made[0].wait(10) and not is_running(state, slot)
    assert start_job(state, slot, make) and len(made) == 2
    assert made[1].wait(10)


def test_one_colour_per_method_in_bars_and_curves():
    # Issue 28, point 7: red was DAGMA in the bars and CoLiDE-NV in the curves of the Compare page.
    from dashboard import comparison as cmp
    from colide_core.render.figures import METHOD_COLOURS, method_colour

    assert len(set(METHOD_COLOURS.values())) == len(METHOD_COLOURS)  # no two methods share a colour
    methods = ["DAGMA-linear", "CoLiDE-NV", "my method"]
    summary = pd.DataFrame({"shd_mean": [3.0, 5.0, 4.0], "shd_std": [1.0, 1.0, 1.0]}, index=methods)
    bars = {t.name: t.marker.color for t in compare_figure(summary, metrics=("shd",)).data}
    grid = np.linspace(0, 1, 3)
    bands = {}
    for m in methods:
        b = pd.DataFrame({"grid": grid, "tpr_mean": grid, "tpr_std": 0 * grid})
        b.attrs.update(auroc_mean=0.5, auroc_std=0.0, n_seeds=1)
        bands[m] = b
    lines = {t.legendgroup: t.line.color for t in cmp.band_figure(bands, "roc").data if t.legendgroup}
    assert bars == lines == {m: method_colour(m) for m in methods}
    assert method_colour("my method") == method_colour("my method") not in METHOD_COLOURS.values()
