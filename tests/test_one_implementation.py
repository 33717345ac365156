"""Issue 47, point 2: one implementation each of canonical JSON, the sweep summary, the ROC /
precision-recall drawing and the "stopped" exception; the old paths agree with the new one."""
import hashlib
import json
import math
import pickle

import numpy as np
import pandas as pd
import pytest

from colide_core.hashing import canonical_json, digest, json_digest


# --------------------------------------------------------------------------------------------
# canonical JSON: the persisted bytes stay what they were
# --------------------------------------------------------------------------------------------

def test_task_keys_keep_their_compact_bytes():
    from colide_core.run.tasks import task_key

    # The keys in a sweep's results.jsonl were SHA-256 of this exact text: sorted keys, no spaces
    # (tuples written as lists), so a resumed sweep finds its finished tasks.
    text = b'{"dataset":{"n":1},"method":"GES","params":{"a":[1,2]},"seed":0}'
    assert task_key("GES", {"a": (1, 2)}, {"n": 1}, 0) == hashlib.sha256(text).hexdigest()
    # the old expression of tasks.py on a document with non-ASCII text, nesting and None
    doc = {"method": "CoLiDE-NV", "params": {"λ": 0.1, "max_iter": [1, 2], "tag": "é\n\""},
           "dataset": {"sha256": "ab"}, "seed": None}
    old = hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert json_digest(doc, compact=True) == old


def test_digest_headers_keep_their_spaced_bytes():
    # The data fingerprints in run manifests: tag, then json.dumps(header, sort_keys=True) with the
    # default ", " and ": " separators, then the arrays as little-endian float64.
    A = np.array([[1.0, 2.0]])
    expected = hashlib.sha256(b'colide-test/1{"a": 1, "b": [1, 2]}' + A.astype("<f8").tobytes()).hexdigest()
    assert digest("colide-test/1", {"b": [1, 2], "a": 1}, [A]) == expected
    assert canonical_json({"b": [1, 2], "a": 1}) == '{"a": 1, "b": [1, 2]}'
    assert canonical_json({"b": [1, 2], "a": 1}, compact=True) == '{"a":1,"b":[1,2]}'


def test_the_drawing_token_is_the_old_hash_and_refuses_nan():
    from colide_core.render.graph_html import graph_drawing
    from dashboard.caching.cached import graph_drawing_cached

    W = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, -0.8], [0.0, 0.0, 0.0]])
    drawing, token = graph_drawing_cached(W, ("a", "b", "c"))
    assert drawing == graph_drawing(W, ["a", "b", "c"])
    old = hashlib.sha256(json.dumps(drawing, sort_keys=True, allow_nan=False).encode()).hexdigest()
    assert token == old == json_digest(drawing, allow_nan=False)
    with pytest.raises(ValueError):
        json_digest({"x": float("nan")}, allow_nan=False)
    with pytest.raises(TypeError):  # plain JSON only: a numpy integer is not hashed through a guess
        canonical_json({"x": np.int64(1)})


# --------------------------------------------------------------------------------------------
# one sweep summary
# --------------------------------------------------------------------------------------------

def _compare_rows():
    from dashboard.comparison import REPORTED

    def row(method, shd=None, error=None, design=None):
        ok = error is None
        return {"method": method, "seed": 0, "error": error, "time": 0.5 if ok else np.nan, "design": design,
                "n_conditions": 2, **{k: (float(shd) if ok else np.nan) for k in REPORTED}}

    return pd.DataFrame([row("A", 2, design="centred"), row("A", error="ValueError: boom"), row("A", 4),
                         row("B", 5), row("C", error="E: one"), row("C", error="E: two")])


def test_compare_summary_hand_worked():
    from dashboard.comparison import summarize

    s = summarize(_compare_rows())
    assert list(s.index) == ["A", "B", "C"]                       # first-appearance order
    assert s.loc["A", ["runs", "failed"]].tolist() == [3, 1] and s.loc["A", "error"] == "ValueError: boom"
    assert s.loc["A", "design"] == "centred" and s.loc["B", "design"] == ""
    # A's successful SHDs are 2 and 4: mean 3, sample std sqrt(((2-3)^2 + (4-3)^2) / 1) = sqrt(2)
    assert s.loc["A", "shd_mean"] == 3.0 and s.loc["A", "shd_std"] == pytest.approx(math.sqrt(2))
    assert s.loc["A", "time_std"] == 0.0
    # one successful run: its value, no spread (ddof=1); none: no value
    assert s.loc["B", "shd_mean"] == 5.0 and math.isnan(s.loc["B", "shd_std"])
    assert s.loc["C", ["runs", "failed"]].tolist() == [2, 2] and s.loc["C", "error"] == "E: one"
    assert math.isnan(s.loc["C", "shd_mean"]) and math.isnan(s.loc["C", "shd_std"])


def test_compare_summary_is_the_bench_summary():
    # The Compare page's table and bench's summary.csv are one computation, laid out two ways.
    from colide_core.run.bench_config import summarize as bench_summarize
    from dashboard.comparison import REPORTED, summarize

    rows = _compare_rows()
    wide = summarize(rows)
    tidy = rows.rename(columns={"method": "label"}).assign(status=np.where(rows["error"].isna(), "ok", "error"))
    long = bench_summarize(tidy.drop(columns=["design", "n_conditions"]), (*REPORTED, "time"))
    for _, r in long.iterrows():
        assert wide.loc[r["label"], f"{r['metric']}_mean"] == r["mean"]
        assert np.array_equal(wide.loc[r["label"], f"{r['metric']}_std"], r["std"], equal_nan=True)
        assert wide.loc[r["label"], "failed"] == r["n_failed"] == wide.loc[r["label"], "runs"] - r["n"]


# --------------------------------------------------------------------------------------------
# one drawing of ROC / precision-recall curves
# --------------------------------------------------------------------------------------------

_B = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0]], dtype=float)
_WS = [_B * 1.2 + np.array([[0, 0, 0.5, 0], [0.1, 0, 0, 0.9], [0, 0, 0, 0], [0.3, 0, 0, 0]]),
       _B * 0.4 + np.array([[0, 0, 0, 0.6], [0, 0, 0, 0], [0.2, 0, 0, 0], [0, 0.7, 0, 0]])]


def _lines(fig):
    return [(t.name, tuple(np.asarray(t.x, float)), tuple(np.asarray(t.y, float)), t.line.color, t.line.shape)
            for t in fig.data]


def test_the_check_pages_roc_draws_the_curves_and_the_shared_chance_line():
    from colide_core.evaluation.curves import edge_score_curves
    from colide_core.render import plots

    curves = {"EV": edge_score_curves(_B, _WS[0]), "N<V>": edge_score_curves(_B, _WS[1])}
    fig = plots.roc_figure(curves, "ground truth")
    for trace, c in zip(fig.data, curves.values()):
        np.testing.assert_array_equal(trace.x, c.fpr)
        np.testing.assert_array_equal(trace.y, c.tpr)
        assert trace.line.shape == "hv"
    assert fig.data[1].name == f"N&lt;V&gt; (AUROC {curves['N<V>'].auroc:.3f})"
    pr = plots.pr_figure(curves)
    np.testing.assert_array_equal(pr.data[0].x, curves["EV"].recall)
    np.testing.assert_array_equal(pr.data[0].y, curves["EV"].precision)
    # the chance diagonal of the Check page and of the Compare page is one trace
    from colide_core.evaluation.curves import bands_over_seeds, curves_on_grid

    bands = {"EV": bands_over_seeds([curves_on_grid(_B, W) for W in _WS])}
    assert _lines(fig)[-1] == _lines(plots.band_figure(bands, "roc"))[-1] == ("chance", (0, 1), (0, 1), "#888", None)


def test_the_compare_pages_bands_are_the_librarys_drawing():
    from colide_core.evaluation.curves import bands_over_seeds, curves_on_grid
    from colide_core.render import plots
    from colide_core.render.figures import method_colour
    from dashboard import comparison as cmp

    bands = {"CoLiDE-NV": bands_over_seeds([curves_on_grid(_B, W) for W in _WS]),
             "GES": bands_over_seeds([curves_on_grid(_B, _WS[0])])}
    for kind, y in (("roc", "tpr"), ("pr", "precision")):
        fig = cmp.band_figure(bands, kind)
        assert _lines(fig) == _lines(plots.band_figure(bands, kind, colour=method_colour))
        band, line = fig.data[0], fig.data[1]
        b = bands["CoLiDE-NV"]
        grid, mean, std = b["grid"].to_numpy(), b[f"{y}_mean"].to_numpy(), b[f"{y}_std"].to_numpy()
        np.testing.assert_array_equal(line.x, grid)
        np.testing.assert_array_equal(line.y, mean)
        # the band: up along mean + std, back along mean - std, clipped to [0, 1]
        np.testing.assert_array_equal(band.x, np.concatenate([grid, grid[::-1]]))
        np.testing.assert_array_equal(band.y, np.concatenate([np.clip(mean + std, 0, 1),
                                                              np.clip(mean - std, 0, 1)[::-1]]))
        assert line.line.color == method_colour("CoLiDE-NV") and line.line.shape == ("hv" if kind == "roc" else "linear")
    with pytest.raises(ValueError, match="kind"):
        cmp.band_figure(bands, "auc")


# --------------------------------------------------------------------------------------------
# one "stopped" exception; the dashboard's exceptions in one module
# --------------------------------------------------------------------------------------------

def test_the_old_stopped_names_catch_the_one_exception():
    from colide_core.exceptions import StatisticsStopped, Stopped
    from dashboard import checks, fitting
    from dashboard.infra import errors

    assert fitting.FitStopped is errors.FitStopped
    assert checks.ChecksStopped is errors.ChecksStopped and checks.PathStopped is errors.PathStopped
    for cls, old_name, message in ((errors.FitStopped, "result", "stopped by the user"),
                                   (errors.ChecksStopped, "report", "the checks were stopped"),
                                   (errors.PathStopped, "path", "the λ path was stopped")):
        partial = object()
        with pytest.raises(cls) as info:     # the old form: Cls(partial)
            raise cls(partial)
        assert getattr(info.value, old_name) is partial and info.value.partial is partial
        assert str(info.value) == message and isinstance(info.value, Stopped)
        copy = pickle.loads(pickle.dumps(cls([1, 2])))
        assert type(copy) is cls and getattr(copy, old_name) == copy.partial == [1, 2] and str(copy) == message
    # one name does not catch another's stop
    with pytest.raises(errors.ChecksStopped):
        try:
            raise errors.ChecksStopped("report")
        except errors.FitStopped:  # pragma: no cover - must not happen
            pytest.fail("FitStopped caught ChecksStopped")
    with pytest.raises(Stopped) as info:
        raise StatisticsStopped("Stopped while the statistics of the conditions were built.")
    assert isinstance(info.value, RuntimeError) and info.value.partial is None


def test_a_real_stop_of_the_statistics_is_a_stopped(monkeypatch):
    from colide_core.data import conditions
    from colide_core.data.conditions import ConditionStats
    from colide_core.exceptions import StatisticsStopped, Stopped

    monkeypatch.setattr(conditions, "_HEAR_EVERY", 0.0)  # listen at every chance (50 ms otherwise)
    X = np.random.default_rng(1).standard_normal((40, 3))
    with pytest.raises(Stopped) as info:
        ConditionStats.from_data(X, np.repeat(["a", "b"], 20), {"b": [1]}, callback=lambda: True)
    assert type(info.value) is StatisticsStopped


def test_the_dashboards_exceptions_live_in_one_module():
    from dashboard import data, manifests
    from dashboard.infra import errors, jobs

    assert data.UploadProblem is errors.UploadProblem and jobs.SlotBusy is errors.SlotBusy
    assert manifests.ManifestProblem is errors.ManifestProblem and manifests.DataMismatch is errors.DataMismatch
    assert issubclass(errors.DataMismatch, errors.ManifestProblem) and issubclass(errors.ManifestProblem, ValueError)
    assert issubclass(errors.SlotBusy, RuntimeError) and not issubclass(errors.SlotBusy, errors.Stopped)
    exc = errors.UploadProblem("bad file", problems=(ValueError("x"),))
    assert str(exc) == "bad file" and len(exc.problems) == 1
    for name in errors.__all__:
        assert getattr(errors, name).__module__ == "dashboard.infra.errors"
