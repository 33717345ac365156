"""Messages and numbers the user can trust (issue 25, points 2, 3 and 7).

The early stages of CoLiDE's central path are meant to end on their step budget; what decides
whether a result can be trusted is its *last* stage. ``SolverResult.stage_converged`` records
each stage, and no message calls a fit whose last stage converged an "iteration limit".
"""
import numpy as np
import pandas as pd
import pytest

import colide_core
from colide_core import SolverResult
from dashboard.comparison import LABELS, format_summary
from colide_core.render.figures import compare_figure, objective_figure
from dashboard.infra.text import convergence_note, fmt_lambda, fmt_seconds, plural, safe_filename


def _record(stage_converged, stages, objectives, stopped=False):
    return SolverResult(W=np.zeros((2, 2)), sigma=1.0, n_iter=8118, n_iter_per_stage=(1, 1),
                        history={"stage": list(stages), "objective": list(objectives)}, objective=objectives[-1],
                        converged=all(stage_converged), stopped=stopped, fit_time=0.0304,
                        stage_converged=tuple(stage_converged))


def test_final_relative_change_reads_the_last_stage_only():
    # Stages 0,0,1,1,1 with objectives 5,4,3,2,1.5: the last stage's last step goes 2 -> 1.5,
    # a relative change |1.5 - 2| / 2 = 0.25 (the 4 -> 3 jump is a stage change, not counted).
    rec = _record((False, True), [0, 0, 1, 1, 1], [5.0, 4.0, 3.0, 2.0, 1.5])
    assert rec.final_relative_change == pytest.approx(0.25)
    assert rec.last_stage_converged is True and rec.converged is False
    # one checkpoint in the last stage: nothing to compare
    assert np.isnan(_record((True, True), [0, 0, 1], [5.0, 4.0, 3.0]).final_relative_change)
    # a record without per-stage flags (an old manifest, a λ-path entry) does not say
    assert _record((), [0], [1.0]).last_stage_converged is None
    # a stopped solve's last stage did not converge
    assert _record((True, True), [0, 1, 1], [3.0, 2.0, 1.0], stopped=True).last_stage_converged is False


def test_a_converged_last_stage_is_a_success_without_iteration_limit():
    level, text = convergence_note(_record((False, False, False, True), [3, 3], [2.0, 1.999998]), tol=1e-6)
    assert level == "success" and "iteration limit" not in text
    assert "the last stage converged" in text and "1.0e-06" in text  # |1.999998 - 2| / 2
    assert "8,118 iterations in 30 ms" in text                         # never "0.0 s"


def test_an_unconverged_last_stage_warns_and_says_what_to_do():
    level, text = convergence_note(_record((True, False), [1, 1], [2.0, 1.9]), tol=1e-6)
    assert level == "warning"
    assert "raise the last entry of max_iter" in text and "5.0e-02" in text  # |1.9 - 2| / 2


@pytest.mark.parametrize("solver", ["auto", "adam"])
def test_both_loops_record_each_stage(solver):
    X, _ = colide_core.load_sachs()
    # 10 steps per stage cannot meet tol = 1e-6 anywhere: every stage is recorded as unconverged
    short = colide_core.CoLiDE("nv", solver=solver, max_iter=(10, 10, 10, 10), checkpoint=5)
    with pytest.warns(colide_core.ConvergenceWarning):
        res = short.fit(X).result_
    assert res.stage_converged == (False, False, False, False) and res.last_stage_converged is False
    assert len(res.stage_converged) == len(res.n_iter_per_stage)


def test_sachs_default_fit_converges_in_its_last_stage():
    # The case: Sachs NV with the defaults. Not every stage meets tol (the early stages
    # end on their budget), so `converged` is False, but the last stage does.
    X, _ = colide_core.load_sachs()
    res = colide_core.CoLiDE("nv").fit(X).result_
    assert res.converged is False and res.last_stage_converged is True
    assert res.stage_converged[-1] is True and len(res.stage_converged) == 4
    level, text = convergence_note(res, tol=1e-6)
    assert level == "success" and "iteration limit" not in text


@pytest.mark.usefixtures("fresh_caches")
def test_no_success_message_on_the_learn_page_says_iteration_limit(new_app):
    at = new_app().run()
    at.switch_page("pages/learn.py").run()
    at.button(key="learn_run").click().run()
    assert not at.exception, at.exception
    res = at.session_state["fit_results"]["nv"]
    assert res.last_stage_converged is True and res.converged is False
    successes = [s.value for s in at.success]
    assert any("NV finished" in s and "the last stage converged" in s for s in successes), successes
    shown = successes + [m.value for m in at.warning] + [m.value for m in at.info] + [c.value for c in at.caption]
    assert not any("iteration limit" in text for text in shown), shown
    assert not any(" 0.0 s" in text for text in shown), shown


def test_durations_lambdas_and_counts_read_well():
    assert [fmt_seconds(t) for t in (0.0304, 0.0004, 0.15, 1.73, 12.3, 150)] == \
        ["30 ms", "0.4 ms", "150 ms", "1.7 s", "12 s", "2.5 min"]
    # issue 41: two significant digits, never a rounded-down "1 s" or an exponent at a unit's edge
    assert [fmt_seconds(t) for t in (1.9, 1.0, 99.4, 99.9, 5999, 6000, 90000)] == \
        ["1.9 s", "1 s", "99 s", "1.7 min", "1.7 h", "1.7 h", "25 h"]
    assert fmt_lambda(0.158113883) == "0.158" and fmt_lambda(0.05) == "0.05" and fmt_lambda(2) == "2"
    assert plural(1, "check") == "1 check" and plural(3, "check") == "3 checks"


def test_download_names_are_safe():
    assert safe_filename("colide_Sachs (CD3/CD28)_nv_lambda0.05_thr0.3") == "colide_Sachs_CD3_CD28_nv_lambda0.05_thr0.3"
    assert safe_filename("../../etc/passwd") == "etc_passwd"
    assert safe_filename("<>") == "colide"


def test_compare_summary_one_run_and_tiny_spreads():
    summary = pd.DataFrame({"runs": [1, 3], "failed": [0, 0], "error": ["", ""],
                            **{f"{m}_{k}": [np.nan, np.nan] for m in ("shd", "shd_cpdag", "sid", "nnz", "fdr",
                                                                      "tpr", "time", "sigma_err")
                               for k in ("mean", "std")}}, index=["A", "B"])
    summary.loc["A", ["shd_mean", "time_mean"]] = [4.0, 0.012]          # one run: no std (ddof=1)
    summary.loc["B", ["shd_mean", "shd_std", "time_mean", "time_std"]] = [2.0, 0.04, 0.012, 0.001]
    table = format_summary(summary)
    time_col = LABELS["time"]
    # one run: the value as counted, no "± —" (issue 41)
    assert table.loc["A", LABELS["shd"]] == "4" and table.loc["A", time_col] == "12 ms"
    assert table.loc["B", LABELS["shd"]] == "2.0 ± 0.04"               # not "2.0 ± 0.0"
    assert table.loc["B", time_col] == "12 ms ± 1 ms"                  # not "0.01 ± 0.00"


def test_shd_error_bars_never_go_below_zero():
    summary = pd.DataFrame({"shd_mean": [0.5], "shd_std": [1.2]}, index=["X"])
    bar = compare_figure(summary, metrics=("shd",)).data[0]
    assert bar.error_y.arrayminus[0] == pytest.approx(0.5) and bar.error_y.array[0] == pytest.approx(1.2)


def test_convergence_figure_is_log_scale_with_stage_boundaries():
    rec = _record((True, True), [0, 0, 1, 1, 1], [5.0, 4.0, 3.0, 2.0, 1.5])
    fig = objective_figure({"NV": rec})
    assert fig.layout.yaxis.type == "log"
    # one boundary, between checkpoint 2 (stage 0) and checkpoint 3 (stage 1)
    assert [s.x0 for s in fig.layout.shapes] == [2.5]


def test_log_axes_label_each_power_of_ten_only_over_decades():
    # Issue 41: plotly labels a log axis at 2 and 5 of every decade over a short range, a crowd of
    # small numbers over a few decades. Over >= 2 decades: one label per power of ten (dtick=1),
    # powers written as 10^k below 0.001; over less, plotly's own ticks.
    from colide_core.render.figures import playback_figure
    from colide_core.render.plots import log_axis

    assert log_axis([0.5, 4.0]) == {"type": "log"}                        # under a decade: plotly's choice
    wide = log_axis([0.001, 0.05, 1.0, -3.0, float("nan")])               # 3 decades; junk ignored
    assert wide["type"] == "log" and wide["dtick"] == 1 and "exponentformat" not in wide
    assert log_axis([1e-12, 10.0])["exponentformat"] == "power"           # h(W) falls to 1e-12
    rec = _record((True, True), [0, 0, 1, 1, 1], [5000.0, 400.0, 30.0, 2.0, 1.5])
    fig = objective_figure({"NV": rec})
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.dtick == 1
    fig = playback_figure({"stage": [0, 0, 1], "h": [1.0, 1e-4, 1e-9], "objective": [3.0, 2.0, 1.0]},
                          [1.0, 0.1], [1.0, 0.9])
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.dtick == 1 and fig.layout.yaxis.exponentformat == "power"
