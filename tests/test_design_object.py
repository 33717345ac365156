"""The experimental design as one object (issue 47, point 1): ``design=`` everywhere.

``colide_core.data.design.resolve_design`` is the one entry: a ``Design`` given (checked against
the data, never with loose ``conditions``/``targets`` too), or one built from the loose arguments
(validated once). Every function that takes ``(conditions, targets)`` also takes ``design=`` and
must give exactly what the loose call gives: checked here for the estimator's fit, one statistic,
the manifest's record and evaluation functions, on nine-condition Sachs and on a hand-made
2-condition dataset. The dashboard's dataset holds its ``Design``.

Convention: ``X`` is (n_samples, n_nodes); ``W[i, j] != 0`` means i -> j.
"""
import numpy as np
import pandas as pd
import pytest

import colide_core
import colide_core.data._labels as conditions_module  # where check_conditions lives (the design imports it there)
from colide_core import CoLiDE
from colide_core.data.conditions import ConditionStats, condition_design
from colide_core.data.design import Design, resolve_design
from colide_core.data.stats import condition_summary
from colide_core.evaluation import baselines
from colide_core.evaluation.checks import edge_evidence
from colide_core.exceptions import ConditionsError, InvalidParameterError
from colide_core.run.manifest import build_manifest, conditions_record

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _two_conditions():
    """a -> b -> c; 60 observational rows ("obs", label 0) and 40 where b is set by the experiment
    ("kd", label 1: b is fresh noise, so its own equation must not be fitted there)."""
    rng = np.random.default_rng(7)
    n_obs, n_kd = 60, 40
    a = rng.normal(size=n_obs + n_kd)
    b = np.concatenate([1.5 * a[:n_obs] + rng.normal(size=n_obs), 3.0 + rng.normal(size=n_kd)])
    c = -2.0 * b + rng.normal(size=n_obs + n_kd)
    X = pd.DataFrame({"a": a, "b": b, "c": c})
    labels = np.array([0] * n_obs + [1] * n_kd)  # integers: the design keeps them as text "0", "1"
    return X, labels, {1: ["b"]}


@pytest.fixture(scope="module")
def small():
    X, cond, targets = _two_conditions()
    return X, cond, targets, Design.create(list(X.columns), cond, targets)


@pytest.fixture(scope="module")
def sachs9():
    rec = colide_core.load_sachs(rows="all", return_record=True)
    return rec.X, rec.conditions, rec.targets, Design.create(list(rec.X.columns), rec.conditions, rec.targets)


# --- the one entry ---------------------------------------------------------------------------

def test_resolve_design_refuses_both_forms_and_a_design_that_does_not_fit(small):
    X, cond, targets, design = small
    names, n = list(X.columns), X.shape[0]
    with pytest.raises(InvalidParameterError, match="not both"):
        resolve_design(design, cond, node_names=names, n_samples=n)
    with pytest.raises(InvalidParameterError, match="not both"):
        resolve_design(design, targets=targets, node_names=names, n_samples=n)
    with pytest.raises(ValueError, match="labels 100 rows but the data have 99"):
        resolve_design(design, node_names=names, n_samples=n - 1)
    with pytest.raises(ValueError, match="3 nodes but the data have 4"):
        resolve_design(design, n_samples=n, n_nodes=4)
    with pytest.raises(ValueError, match="node names differ"):
        resolve_design(design, node_names=["a", "c", "b"], n_samples=n)
    with pytest.raises(InvalidParameterError, match="must be a colide_core.data.design.Design"):
        resolve_design({"conditions": cond}, node_names=names, n_samples=n)
    # the same refusals reach the public functions
    with pytest.raises(InvalidParameterError, match="not both"):
        CoLiDE(solver="fast").fit(X, conditions=cond, design=design)
    with pytest.raises(ValueError, match="labels 100 rows but the data have 99"):
        CoLiDE(solver="fast").fit(X.iloc[:99], design=design)
    with pytest.raises(InvalidParameterError, match="not both"):
        condition_summary(X, cond, design=design)
    # given as it is; loose arguments give an equal design; no conditions give None
    assert resolve_design(design, node_names=names, n_samples=n) is design
    again = resolve_design(None, cond, targets, node_names=names, n_samples=n)
    assert again.labels == design.labels == ("0", "1") and again.targets == design.targets == {"0": (), "1": (1,)}
    assert np.array_equal(again.codes, design.codes) and again.reference == "0"
    assert resolve_design(node_names=names, n_samples=n) is None
    assert resolve_design(Design.create(names), node_names=names, n_samples=n) is None
    with pytest.raises(ConditionsError, match="targets need conditions"):
        resolve_design(targets=targets, node_names=names, n_samples=n)


def test_condition_design_from_a_design_masks_the_targeted_rows(small):
    X, cond, targets, design = small
    codes, unmasked = condition_design(design=design, n_samples=X.shape[0], node_names=list(X.columns))
    # b is targeted in the 40 "kd" rows (the last 40): exactly those are masked, nothing else
    assert unmasked.sum(axis=0).tolist() == [100, 60, 100]
    assert not unmasked[60:, 1].any() and codes.tolist() == [0] * 60 + [1] * 40
    loose = condition_design(cond, targets, X.shape[0], list(X.columns))
    assert np.array_equal(loose[0], codes) and np.array_equal(loose[1], unmasked)


# --- the same results through design= -----------------------------------------------------------

@pytest.mark.parametrize("which", ["small", "sachs9"])
def test_fit_with_a_design_is_the_fit_with_loose_arguments(which, request):
    X, cond, targets, design = request.getfixturevalue(which)
    loose = CoLiDE(solver="fast").fit(X, conditions=cond, targets=targets)
    one = CoLiDE(solver="fast").fit(X, design=design)
    assert np.array_equal(loose.W_, one.W_) and np.array_equal(loose.sigma_, one.sigma_)
    assert loose.conditions_ == one.conditions_ == design.labels
    assert loose.targets_ == one.targets_ == design.targets
    assert loose.condition_counts_ == one.condition_counts_ == tuple(np.bincount(design.codes).tolist())
    # the manifest's record: from the Design, equal to the loose record of the loose fit
    rec_loose = build_manifest(loose, X, conditions=cond)["conditions"]
    rec_design = build_manifest(one, X, design=design)["conditions"]
    assert rec_loose == rec_design
    assert {k: v for k, v in rec_design.items() if k != "sha256"} == design.record()
    assert conditions_record(design=design) == conditions_record(
        loose.conditions_, loose.condition_counts_, loose.targets_, list(X.columns), conditions=cond)
    # the statistics of the fit: the same numbers
    a = ConditionStats.from_data(X, cond, targets)
    b = ConditionStats.from_data(X, design=design)
    assert a.labels == b.labels and a.n == b.n and a.targets == b.targets
    assert np.array_equal(a.covs, b.covs) and np.array_equal(a.means, b.means)


@pytest.mark.parametrize("which", ["small", "sachs9"])
def test_statistic_and_evaluation_with_a_design_equal_the_loose_calls(which, request):
    X, cond, targets, design = request.getfixturevalue(which)
    pd.testing.assert_frame_equal(condition_summary(X, cond, targets), condition_summary(X, design=design))
    d = X.shape[1]
    A = np.triu(np.ones((d, d)), 1) * (np.arange(d)[None, :] - np.arange(d)[:, None] <= 2)  # a DAG (i < j)
    pd.testing.assert_frame_equal(edge_evidence(X, A, conditions=cond, targets=targets),
                                  edge_evidence(X, A, design=design))
    assert baselines.design_use("GES", cond, targets) == baselines.design_use("GES", design=design) == "centred"
    assert baselines.design_use("CoLiDE-EV", design=design) == "design"


def test_run_method_with_a_design_equals_the_loose_call(small):
    X, cond, targets, design = small
    for name in ("CoLiDE-EV", "SortNRegress"):  # one fits with the design, one on centred rows
        loose = baselines.run_method(name, X, conditions=cond, targets=targets, unused_design="centre")
        one = baselines.run_method(name, X, design=design, unused_design="centre")
        assert np.array_equal(loose, one)
    with pytest.raises(ValueError, match="does not take conditions"):
        baselines.run_method("SortNRegress", X, design=design)  # refused unless told to centre


def test_check_conditions_runs_once_per_fit(small, monkeypatch):
    X, cond, targets, _ = small
    calls = []
    real = conditions_module.check_conditions

    def counted(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(conditions_module, "check_conditions", counted)
    CoLiDE(solver="fast").fit(X, conditions=cond, targets=targets)
    assert len(calls) == 1  # the loose call: resolved once
    design = Design.create(list(X.columns), cond, targets)
    assert len(calls) == 2  # built once
    CoLiDE(solver="fast").fit(X, design=design)
    CoLiDE(solver="fast").fit(X, design=design)
    assert len(calls) == 2  # a fit with a design checks nothing again


# --- the rest of the library: prediction, resampling, planning, the λ path (issue 47, point 1) ----

def _chain_dag(d):
    """A DAG on the columns' order: i -> i + 1 and i -> i + 2 (the upper band, i < j)."""
    return np.triu(np.ones((d, d)), 1) * (np.arange(d)[None, :] - np.arange(d)[:, None] <= 2)


@pytest.mark.parametrize("which", ["small", "sachs9"])
def test_refit_weights_and_prediction_with_a_design_equal_the_loose_calls(which, request):
    from colide_core.evaluation.interventions import predict_intervention, refit_weights
    from colide_core.evaluation.residuals import residual_checks

    X, cond, targets, design = request.getfixturevalue(which)
    A = _chain_dag(X.shape[1])
    W = refit_weights(A, X, design=design)
    assert np.array_equal(refit_weights(A, X, conditions=cond, targets=targets), W)
    # the targeted rows leave their node's equation: not the refit that keeps them
    assert not np.array_equal(refit_weights(A, X, conditions=cond), W)
    pd.testing.assert_frame_equal(residual_checks(X, A, conditions=cond, targets=targets).table,
                                  residual_checks(X, A, design=design).table)
    model = CoLiDE(solver="fast").fit(X, conditions=cond, targets=targets)
    node = X.columns[0]
    for weights in ("fit", "refit"):  # the loose form takes the targets from the model, design= from the design
        loose = predict_intervention(model, X, do={node: 1.0}, conditions=cond, weights=weights)
        one = predict_intervention(model, X, do={node: 1.0}, design=design, weights=weights)
        pd.testing.assert_frame_equal(loose.table, one.table)
    with pytest.raises(InvalidParameterError, match="not both"):
        predict_intervention(model, X, do={node: 1.0}, conditions=cond, design=design)
    with pytest.raises(InvalidParameterError, match="not both"):
        refit_weights(A, X, targets=targets, design=design)


def test_bootstrapped_prediction_and_experiment_with_a_design_equal_the_loose_calls(small):
    from colide_core.evaluation.experiment import run_experiment
    from colide_core.evaluation.interventions import intervention_table, predict_intervention

    X, cond, targets, design = small
    model = CoLiDE(solver="fast").fit(X, design=design)
    loose = predict_intervention(model, X, shift={"a": 1.0}, conditions=cond, n_bootstrap=3, random_state=4)
    one = predict_intervention(model, X, shift={"a": 1.0}, design=design, n_bootstrap=3, random_state=4)
    assert one.n_bootstrap == 3 and np.array_equal(loose.samples, one.samples)
    pd.testing.assert_frame_equal(loose.table, one.table)
    # the table alone: the reference rows are condition "0"'s (60 rows), as the loose labels say
    table = intervention_table(model.adjacency_, X, do={"a": 2.0}, design=design).table
    assert table.loc["a", "reference_mean"] == pytest.approx(X["a"].iloc[:60].mean(), abs=1e-12)
    pd.testing.assert_frame_equal(intervention_table(model.adjacency_, X, do={"a": 2.0}, conditions=cond).table, table)
    W_true = np.array([[0, 1.5, 0], [0, 0, -2.0], [0, 0, 0]])  # the SEM of _two_conditions
    a = run_experiment(X, W_true, "c", 40, conditions=cond, targets=targets, estimator=CoLiDE(solver="fast"),
                       B_true=W_true != 0, random_state=0)
    b = run_experiment(X, W_true, "c", 40, design=design, estimator=CoLiDE(solver="fast"), B_true=W_true != 0,
                       random_state=0)
    assert np.array_equal(a.W_after, b.W_after) and (a.label, a.shd_after, a.oriented) == (b.label, b.shd_after,
                                                                                             b.oriented)


@pytest.mark.parametrize("which", ["small", "sachs9"])
def test_bootstrap_with_a_design_draws_and_fits_as_the_loose_call(which, request):
    from colide_core.evaluation.stability import bootstrap_edges

    X, cond, targets, design = request.getfixturevalue(which)
    est = CoLiDE(solver="fast", max_iter=(100, 100, 100, 200))
    loose = bootstrap_edges(X, est, n_boot=2, random_state=11, conditions=cond, targets=targets)
    one = bootstrap_edges(X, est, n_boot=2, random_state=11, design=design)
    assert one.n_ok == 2 and np.array_equal(loose.adjacency_samples, one.adjacency_samples)
    if which == "small":  # the estimator without targets would fit b's equation on the kd rows too
        other = bootstrap_edges(X, est, n_boot=2, random_state=11, conditions=cond)
        assert not np.array_equal(other.adjacency_samples, one.adjacency_samples)
        with pytest.raises(InvalidParameterError, match="not both"):
            bootstrap_edges(X, est, n_boot=2, conditions=cond, design=design)


def test_stability_selection_and_ranking_with_a_design_equal_the_loose_calls(small):
    from colide_core.evaluation.planning import rank_interventions
    from colide_core.evaluation.stability import stability_selection

    X, cond, targets, design = small
    est = CoLiDE(solver="fast", max_iter=(100, 100, 100, 200))
    loose = stability_selection(X, est, [0.05, 0.2], n_subsamples=2, random_state=3, conditions=cond, targets=targets)
    one = stability_selection(X, est, [0.05, 0.2], n_subsamples=2, random_state=3, design=design)
    assert np.array_equal(loose.selection_probability, one.selection_probability) and loose.q_hat == one.q_hat
    loose = rank_interventions(X, estimator=est, conditions=cond, targets=targets, n_bootstrap=2, random_state=5)
    one = rank_interventions(X, estimator=est, design=design, n_bootstrap=2, random_state=5)
    pd.testing.assert_frame_equal(loose, one)
    assert loose.attrs == one.attrs and one.attrs["family"] == [["b"]]  # condition "1" targets b


@pytest.mark.parametrize("which", ["small", "sachs9"])
def test_lambda_path_with_a_design_equals_the_loose_call(which, request):
    from colide_core.solver.path import lambda_path

    X, cond, targets, design = request.getfixturevalue(which)
    kw = {"lambdas": [0.05, 0.2], "thresholds": [0.3], "solver": "fast"}
    loose = lambda_path(X, conditions=cond, targets=targets, **kw)
    one = lambda_path(X, design=design, **kw)
    assert np.array_equal(loose.W, one.W) and np.array_equal(loose.bic, one.bic)
    # a design without conditions is the path without conditions
    plain = lambda_path(X, design=Design.create(list(X.columns)), **kw)
    assert np.array_equal(plain.W, lambda_path(X, **kw).W)
    with pytest.raises(InvalidParameterError, match="not both"):
        lambda_path(X, conditions=cond, design=design, **kw)


# --- the dashboard's dataset -------------------------------------------------------------------

def test_the_dashboard_dataset_of_nine_condition_sachs_holds_its_design(sachs9):
    from dashboard.data import make_dataset, sachs_dataset
    from dashboard.manifests import dataset_conditions_record

    X, cond, targets, design = sachs9
    ds = sachs_dataset(rows="all")
    assert isinstance(ds.design, Design)
    assert ds.design.labels == design.labels and ds.design.targets == design.targets
    assert np.array_equal(ds.design.codes, design.codes)
    record = dataset_conditions_record(ds)  # what the manifest stores of it
    assert ds.design.record(ds.meta.get("conditions_column")) == {k: v for k, v in record.items() if k != "sha256"}
    # the manifest of the library's loose fit records the same design
    loose = {"conditions": list(ds.meta["conditions"]), "targets": ds.meta["targets"]}  # the raw labels
    model = CoLiDE(solver="fast").fit(ds.X, conditions=loose["conditions"], targets=loose["targets"])
    assert build_manifest(model, ds.X, conditions=loose["conditions"],
                          conditions_column=ds.meta.get("conditions_column"))["conditions"] == record
    # data of one condition: a design without conditions; the key still covers the design
    plain = make_dataset("d", X)
    assert not plain.design.has_conditions and dataset_conditions_record(plain) is None
    # labels that cannot be used are refused where the design is read, as a fit refuses them
    bad = make_dataset("d", X.iloc[:5], meta={"conditions": ["x"] * 4 + ["y"]})
    with pytest.raises(ConditionsError, match="each condition needs at least"):
        bad.design
