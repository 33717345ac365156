"""Tests for colide_core.run.manifest: build, save, load, validate and reproduce a run."""
import json

import numpy as np
import pandas as pd
import pytest

from colide_core import CoLiDE, threshold_to_dag
from colide_core.evaluation._metrics import evaluate
from colide_core.run.manifest import (
    SCHEMA,
    ManifestError,
    build_manifest,
    data_fingerprint,
    manifest_from_result,
    git_commit,
    load_manifest,
    manifest_to_json,
    save_manifest,
)
from colide_core.data.simulate import simulate_dag, simulate_linear_sem, simulate_parameters

pytestmark = pytest.mark.filterwarnings("ignore::colide_core.ConvergenceWarning")

from tests._schedules import TINY as SHORT  # noqa: E402 - the suite's short schedule


@pytest.fixture(scope="module")
def problem():
    """A 6-node ER2 linear SEM with unequal noise variances, 300 samples."""
    B = simulate_dag(6, 2, "er", random_state=0)
    W_true = simulate_parameters(B, random_state=1)
    X, std = simulate_linear_sem(W_true, 300, "gaussian", noise_var=np.linspace(0.5, 2.0, 6),
                                 random_state=2)
    X = pd.DataFrame(X, columns=[f"g{i}" for i in range(6)])
    model = CoLiDE("nv", random_state=7, solver="fast", **SHORT).fit(X)  # the central path's dense W
    return X, B, std, model


def test_manifest_round_trip_and_reproduction(problem, tmp_path):
    X, B, std, model = problem
    man = build_manifest(model, X, B_true=B, sigma_true=std, data_source="sim.csv", wall_time=1.5)
    path = save_manifest(man, tmp_path / "run" / "manifest.json")
    loaded = load_manifest(path)

    # Stored results reload bit-for-bit (shortest-repr floats).
    assert np.array_equal(loaded.W, model.W_)
    assert np.array_equal(loaded.adjacency, model.adjacency_)
    assert np.array_equal(loaded.sigma, model.sigma_)
    assert loaded.node_names == list(X.columns)
    assert list(loaded.W_frame().columns) == list(X.columns)
    # Every parameter is recorded, schedules come back as tuples, random_state is kept.
    assert loaded.params == model.get_params()
    assert loaded.raw["random_state"] == 7
    assert loaded.data == {**data_fingerprint(X), "source": "sim.csv"}
    assert loaded.data["n_samples"] == 300 and loaded.data["n_nodes"] == 6
    assert loaded.raw["timing"]["wall_seconds"] == 1.5
    assert loaded.raw["timing"]["fit_seconds"] == pytest.approx(model.fit_time_)
    assert loaded.environment["packages"]["numpy"] == np.__version__
    # Metrics are evaluate() on the thresholded DAG, with the sigma error.
    expected = evaluate(B, model.adjacency_, sigma_true=std, sigma_est=model.sigma_)
    assert loaded.metrics.keys() == expected.keys()
    assert loaded.metrics["shd"] == expected["shd"]
    assert loaded.metrics["sigma_rel_err"] == pytest.approx(expected["sigma_rel_err"])

    # Refit with the recorded parameters on the same data: the very same W.
    refit = loaded.reproduce(X)
    assert np.array_equal(refit.W_, model.W_)
    assert refit.n_iter_ == model.n_iter_


def test_the_fit_record_round_trips_and_needs_no_fitted_estimator(problem):
    X, B, std, model = problem
    # From the estimator, and from its record alone: the same document (bar the creation time).
    a = build_manifest(model, X, B_true=B, sigma_true=std)
    b = manifest_from_result(model.result_, model.get_params(), X, node_names=list(X.columns),
                             fit_time=model.fit_time_, B_true=B, sigma_true=std)
    for doc in (a, b):
        doc["timing"].pop("created_utc")
    assert a == b
    # The record comes back from the JSON: W and sigma bit for bit, the history per checkpoint.
    rec = load_manifest(manifest_to_json(a)).solver_result()
    res = model.result_
    assert np.array_equal(rec.W, res.W) and np.array_equal(rec.sigma, res.sigma)
    assert (rec.n_iter, rec.n_iter_per_stage, rec.converged, rec.stopped, rec.stop_reason) == \
        (res.n_iter, tuple(res.n_iter_per_stage), res.converged, res.stopped, res.stop_reason)
    assert rec.objective == res.objective and rec.lr_used == tuple(res.lr_used) and rec.s_used == tuple(res.s_used)
    assert rec.history["objective"] == res.history["objective"] and len(res.history["objective"]) >= 4
    assert rec.history["iteration"] == res.history["iteration"]
    np.testing.assert_array_equal(np.array(rec.history["sigma"]), np.array(res.history["sigma"]))
    # The stored DAG is W thresholded at the recorded threshold: another threshold, another graph.
    loose = manifest_from_result(model.result_, {**model.get_params(), "threshold": 0.0}, X)
    assert np.array_equal(np.array(loose["results"]["adjacency"]) != 0,
                          threshold_to_dag(model.W_, 0.0) != 0)
    assert np.count_nonzero(loose["results"]["adjacency"]) > np.count_nonzero(a["results"]["adjacency"])


def test_the_auto_choice_round_trips_and_a_forged_one_is_dropped(problem):
    # solver="auto" records which candidate won and every candidate's objective (issue 51); a
    # loaded manifest is user input: a choice of another shape is not carried into the record.
    X = problem[0]
    model = CoLiDE("nv", **SHORT).fit(X)
    doc = json.loads(manifest_to_json(build_manifest(model, X)))
    rec = load_manifest(json.dumps(doc)).solver_result()
    assert rec.choice["solver"] == model.result_.choice["solver"]
    assert rec.choice["candidates"] == pytest.approx(model.result_.choice["candidates"], rel=1e-12)
    doc["results"]["choice"] = {"solver": "<b>x</b>", "candidates": {"fast": 1.0}}
    assert load_manifest(json.dumps(doc)).solver_result().choice is None


def test_a_manifest_without_the_solver_history_still_gives_a_record(problem):
    # Manifests written before the record's history was stored: empty history, NaN objective.
    X, _, _, model = problem
    doc = json.loads(manifest_to_json(build_manifest(model, X)))
    for key in ("objective", "n_iter_per_stage", "history", "stop_reason", "lr_used", "s_used"):
        del doc["results"][key]
    rec = load_manifest(doc).solver_result()
    assert np.array_equal(rec.W, model.W_) and rec.n_iter == model.n_iter_
    assert rec.history == {} and np.isnan(rec.objective) and rec.n_iter_per_stage == ()


def test_reproduce_rejects_other_data_and_tampered_results(problem):
    X, _, _, model = problem
    man = build_manifest(model, X)
    other = X.copy()
    other.iloc[0, 0] += 1e-9  # a single tiny change alters the fingerprint
    with pytest.raises(ManifestError, match="data differ"):
        load_manifest(man).reproduce(other)
    renamed = X.rename(columns={"g0": "h0"})
    with pytest.raises(ManifestError, match="data differ"):
        load_manifest(man).check_data(renamed)

    tampered = json.loads(manifest_to_json(man))
    tampered["results"]["W"][0][1] += 0.01
    with pytest.raises(ManifestError, match="does not reproduce W: max \\|difference\\| = 0.01"):
        load_manifest(tampered).reproduce(X)


def test_fit_from_stats_manifest_reproduces(problem):
    X, _, _, _ = problem
    A = X.to_numpy()
    cov = np.cov(A, rowvar=False, bias=True)
    model = CoLiDE("ev", **SHORT).fit_from_stats(cov, 300, node_names=list(X.columns))
    loaded = load_manifest(manifest_to_json(build_manifest(model, cov=cov, n=300)))
    assert loaded.data["kind"] == "stats" and loaded.data["n_samples"] == 300
    assert isinstance(loaded.sigma, float) and loaded.sigma == model.sigma_
    refit = loaded.reproduce(cov=cov, n=300)
    assert np.array_equal(refit.W_, model.W_)
    with pytest.raises(ManifestError, match="fitted from statistics"):
        loaded.reproduce(A)


def test_nan_metric_becomes_null_and_json_is_strict(problem):
    X, _, _, model = problem
    text = manifest_to_json(build_manifest(model, X, metrics={"shd": 3, "sid": float("nan")}))
    assert "NaN" not in text
    assert load_manifest(text.encode()).metrics == {"shd": 3, "sid": None}


def test_validation_errors(problem, tmp_path):
    X, _, _, model = problem
    good = json.loads(manifest_to_json(build_manifest(model, X)))
    with pytest.raises(ManifestError, match="unsupported manifest schema 'other/2'"):
        load_manifest({**good, "schema": "other/2"})
    with pytest.raises(ManifestError, match="lacks the field 'results'"):
        load_manifest({k: v for k, v in good.items() if k != "results"})
    bad = json.loads(json.dumps(good))
    bad["results"]["W"] = bad["results"]["W"][:5]
    with pytest.raises(ManifestError, match="results.W must have shape \\(6, 6\\), got \\(5, 6\\)"):
        load_manifest(bad)
    bad = json.loads(json.dumps(good))
    bad["results"]["sigma"] = [1.0, 2.0]
    with pytest.raises(ManifestError, match="sigma must have 6 entries"):
        load_manifest(bad)
    with pytest.raises(ManifestError, match="not valid JSON"):
        load_manifest(b"{not json")
    with pytest.raises(ManifestError, match="cannot read manifest"):
        load_manifest(tmp_path / "missing.json")
    with pytest.raises(ManifestError, match="not fitted"):
        build_manifest(CoLiDE(), X)
    with pytest.raises(ManifestError, match="give the data"):
        manifest_from_result(model.result_, model.get_params())
    with pytest.raises(ManifestError, match="give the data"):
        build_manifest(model)
    with pytest.raises(ManifestError, match="the data have 3 nodes but the model has 6"):
        build_manifest(model, X.iloc[:, :3])
    assert good["schema"] == SCHEMA


def test_git_commit_fails_gracefully(tmp_path, monkeypatch):
    info = git_commit()
    # Inside this repository: a 40-hex commit (or None when git is absent on the machine).
    assert info["commit"] is None or (len(info["commit"]) == 40 and int(info["commit"], 16) >= 0)
    assert git_commit(tmp_path) == {"commit": None, "dirty": None}  # not a repository
    monkeypatch.setenv("PATH", str(tmp_path))  # no git executable at all
    assert git_commit() == {"commit": None, "dirty": None}


def test_data_fingerprint_is_deterministic_and_value_sensitive():
    A = np.arange(12.0).reshape(4, 3)
    fp = data_fingerprint(A)
    assert fp == data_fingerprint(A.copy()) and fp["columns"] is None
    assert fp["n_samples"] == 4 and fp["n_nodes"] == 3 and len(fp["sha256"]) == 64
    assert data_fingerprint(A.T.copy().T)["sha256"] == fp["sha256"]  # memory layout does not matter
    B = A.copy()
    B[3, 2] = np.nextafter(B[3, 2], 100.0)  # one ulp
    assert data_fingerprint(B)["sha256"] != fp["sha256"]
    assert data_fingerprint(A.reshape(3, 4))["sha256"] != fp["sha256"]  # same bytes, other shape


def test_environment_records_the_gies_and_jax_versions():
    # GIES is the interventional baseline and JAX the fast solver's backend: a manifest must say
    # which versions produced it (issue 31).
    from importlib import metadata

    from colide_core.run.manifest import PACKAGES, environment_info

    assert {"gies", "jax", "jaxlib"} <= set(PACKAGES)
    packages = environment_info()["packages"]
    for name in ("gies", "jax", "jaxlib"):
        assert packages[name] == metadata.version(name)
