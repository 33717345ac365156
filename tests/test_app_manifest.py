"""Run manifests in the app: the Learn page's download, and loading a manifest back (AppTest),
plus the helpers of dashboard.manifests."""
import json
import re

import numpy as np
import pytest

import colide_core
from colide_core.run.manifest import build_manifest, manifest_to_json
from dashboard import manifests
from dashboard.data import sachs_dataset

from tests._schedules import QUICK  # noqa: E402 - the suite's short schedule

pytestmark = [pytest.mark.filterwarnings("ignore::colide_core.ConvergenceWarning"),
              pytest.mark.usefixtures("fresh_caches")]


def _learn_page(new_app):
    at = new_app().run()
    at.session_state["learn_tab"] = "Downloads"  # the manifests' tab (only the open tab is built, issue 41)
    at.switch_page("pages/learn.py").run()
    assert not at.exception, at.exception
    return at


def _view(at):
    """What the Learn page shows: edges table, edge count, SHD, threshold and the raw W."""
    edges = [d.value for d in at.dataframe if "source" in d.value.columns and "target" in d.value.columns]
    # one edges table per variant shown (EV first); NV is the last
    assert len(edges) == len(at.session_state["fit_results"])
    at.session_state["learn_tab"] = "Metrics"  # a click on the tab (only the open tab is built)
    at.run()
    metrics = {m.label: m.value for m in at.metric}
    at.session_state["learn_tab"] = "Downloads"
    at.run()
    return {"edges": edges[-1].reset_index(drop=True), "n_edges": metrics["Edges · NV"],
            "shd": metrics["SHD · NV"], "threshold": at.slider(key="learn_threshold").value,
            "lambda1": at.select_slider(key="learn_lambda1").value,
            "W": at.session_state["fit_results"]["nv"].W}


def _shown(markdown_source):
    """What the user reads: markdown backslash escapes undone."""
    return re.sub(r"\\(.)", r"\1", markdown_source)


def _upload(at, name, data):
    at.file_uploader(key="learn_manifest_upload").set_value((name, data, "application/json")).run()
    assert not at.exception, at.exception
    return at


def test_download_then_upload_gives_the_same_view_on_sachs(downloads, monkeypatch, new_app):
    at = _learn_page(new_app)
    at.session_state["solver_overrides"] = dict(QUICK)
    at.select_slider(key="learn_lambda1").set_value(0.1)
    at.slider(key="learn_threshold").set_value(0.25)
    at.button(key="learn_run").click().run()
    assert not at.exception, at.exception
    before = _view(at)
    # the file name says the dataset, the noise model, λ and the threshold (safe characters only)
    data = downloads["colide_Sachs_consensus17_nv_lambda0.1_thr0.25_manifest.json"][-1]
    doc = json.loads(data)
    assert doc["schema"] == "colide-manifest/1" and doc["params"]["threshold"] == 0.25
    assert doc["params"]["lambda1"] == 0.1 and doc["params"]["max_iter"] == list(QUICK["max_iter"])
    assert doc["results"]["metrics"]["shd"] == int(before["shd"])
    assert np.array_equal(np.array(doc["results"]["W"]), before["W"])  # bit for bit
    assert doc["data"]["n_samples"] == sachs_dataset().shape[0]

    # A fresh session: loading the manifest restores the view without solving again.
    def no_solve(*args, **kwargs):
        raise AssertionError("the solver must not run when a manifest is loaded")

    monkeypatch.setattr(colide_core.CoLiDE, "fit", no_solve)
    at2 = _upload(_learn_page(new_app), "run manifest.json", data)
    after = _view(at2)
    assert np.array_equal(after["W"], before["W"])
    assert after["n_edges"] == before["n_edges"] and after["shd"] == before["shd"]
    assert (after["threshold"], after["lambda1"]) == (0.25, 0.1)
    assert after["edges"].equals(before["edges"])
    assert at2.session_state["solver_overrides"] == QUICK
    assert any("Loaded **run manifest.json**" in _shown(s.value) for s in at2.success)
    loaded, fitted = at2.session_state["fit_results"]["nv"], at.session_state["fit_results"]["nv"]
    assert loaded.objective == fitted.objective
    assert loaded.objective_trace == fitted.objective_trace and len(fitted.objective_trace) >= 4
    assert (loaded.n_iter, loaded.converged, loaded.result.n_iter_per_stage) == \
        (fitted.n_iter, fitted.converged, tuple(fitted.result.n_iter_per_stage))


def test_corrupt_and_foreign_manifests_get_clear_messages(downloads, new_app):
    at = _learn_page(new_app)
    shown_before = dict(at.session_state["fit_results"])  # Sachs is live: EV and NV at λ = 0.05
    _upload(at, "broken.json", b'{"schema": "colide-manifest/1", "params": ')
    errors = [_shown(e.value) for e in at.error]
    assert any("cannot be loaded" in e and "not valid JSON" in e for e in errors), errors
    assert at.session_state["fit_results"] == shown_before  # nothing was replaced
    _upload(at, "pickle.json", b"\x80\x04\x95 not json at all")
    assert any("not valid JSON" in _shown(e.value) for e in at.error)

    # A manifest of a fit on Sachs, loaded while another dataset is current.
    ds = sachs_dataset()
    model = colide_core.CoLiDE("ev", **QUICK).fit(ds.X)
    text = manifest_to_json(build_manifest(model, ds.X, data_source="sachs"))
    at.switch_page("pages/data.py").run()
    rng = np.random.default_rng(0)
    csv = "a,b,c\n" + "\n".join(",".join(f"{v:.6f}" for v in row) for row in rng.normal(size=(40, 3)))
    at.file_uploader(key="data_upload").set_value(("other.csv", csv.encode(), "text/csv")).run()
    assert at.session_state["dataset"].shape == (40, 3)
    at.switch_page("pages/learn.py").run()
    _upload(at, "sachs_run.json", text.encode())
    errors = [_shown(e.value) for e in at.error]
    n, d = ds.shape
    assert any("is for other data" in e and f"{n} samples × {d} nodes" in e and "40 samples × 3 nodes" in e
               and "Data page" in e for e in errors), errors
    # nothing was applied: the results shown are the live fits of the current (other) data
    assert all(r.data_key == at.session_state["dataset"].key for r in at.session_state["fit_results"].values())
    assert at.session_state["learn_variant"] == "Both" and not at.session_state["learn_live_hold"]


def test_a_cli_style_manifest_with_prior_knowledge_restores_overrides():
    # A manifest written by colide_core itself (as `python -m colide_core fit` does), with a
    # required edge: the app takes its W as is and puts the knowledge back into the session.
    ds = sachs_dataset()
    names = list(ds.node_names)
    model = colide_core.CoLiDE("nv", lambda1=0.1, threshold=0.4, required=[(names[0], names[1])],
                               lr=1e-3, solver="adam", **QUICK).fit(ds.X)
    doc = build_manifest(model, ds.X, B_true=ds.B_true.to_numpy())
    run = manifests.run_from_manifest(manifest_to_json(doc).encode(), ds)
    assert (run.label, run.lambda1, run.threshold) == ("NV", 0.1, 0.4)
    assert run.overrides == {**QUICK, "lr": 1e-3, "solver": "adam",
                             "required": ((names[0], names[1]),)}
    assert np.array_equal(run.result.W, model.W_) and run.result.data_key == ds.key
    assert run.notes == []
    state = {"fit_results": {"ev": object()}, "prior_version": 3}
    manifests.apply_to_state(state, run)
    assert state["learn_threshold"] == 0.4 and set(state["fit_results"]) == {"nv"}
    assert state["solver_choice"] == "adam"          # the sidebar shows the manifest's solver
    assert state["prior_knowledge"].required == ((names[0], names[1]),) and state["prior_version"] == 4
    # The app's own manifest of that result re-thresholds to the same graph and metrics.
    again = json.loads(manifests.fit_manifest_json(run.result, ds, 0.4))
    assert np.array_equal(np.array(again["results"]["adjacency"]) != 0, model.adjacency_ != 0)
    assert again["results"]["metrics"]["shd"] == doc["results"]["metrics"]["shd"]
    # Out-of-range or foreign content is refused with a plain message.
    for change, words in ((("params", "threshold", 5.0), "threshold = 5.0 must be a float in the range"),
                          (("params", "variant", "ls"), "EV and NV noise models only"),
                          (("data", "kind", "stats"), "sufficient statistics")):
        bad = json.loads(json.dumps(doc))
        bad[change[0]][change[1]] = change[2]
        with pytest.raises(manifests.ManifestProblem, match=words):
            manifests.run_from_manifest(json.dumps(bad), ds)
