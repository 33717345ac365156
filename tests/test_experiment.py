"""colide_core.evaluation.experiment.run_experiment: the one "simulate the experiment, refit, compare".

Checked on a hand-built chain against the computation the Predict page did before it moved into
the library, for reproducibility, for the caller's arrays, and for Stop.
"""
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from colide_core import CoLiDE, evaluate
from colide_core.data.simulate import simulate_experiment, simulate_linear_sem
from colide_core.evaluation.experiment import ExperimentResult, experiment_label, run_experiment
from colide_core.exceptions import ExperimentStopped, Stopped, UnknownNodeError

# The chain X0 -> X1 -> X2, weights 1.5 and -1.2, equal noise variances (EV: identifiable, and the
# fit finds it). Its Markov equivalence class leaves both edges undirected (no v-structure: the
# CPDAG is X0 -- X1 -- X2). An intervention on the middle node X1 cuts the target set {X1}, and
# both edges have exactly one end in it, so both become directed (Hauser and Buehlmann 2012,
# Theorem 10 (iii)): the experiment on X1 orients X0 -> X1 and X1 -> X2.
W_CHAIN = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, -1.2], [0.0, 0.0, 0.0]])
NAMES = ["X0", "X1", "X2"]


@pytest.fixture
def chain():
    X, _ = simulate_linear_sem(W_CHAIN, 400, random_state=3)
    return pd.DataFrame(X, columns=NAMES)


def _old_dashboard_path(X, params, threshold, node, rows, seed):
    """What ``dashboard.planning.try_experiment`` computed before issue 47 (one observational
    condition, no ``before``): draw the rows, fit before, refit warm-started from it, score."""
    names = list(X.columns)
    t = names.index(node)
    new = simulate_experiment(W_CHAIN, [t], rows, "gaussian", noise_var=np.ones(3),
                              random_state=np.random.default_rng(seed))
    label = f"planned: do({node})"
    model = CoLiDE(**{**params, "threshold": threshold})
    first = model.fit(X, conditions=None, targets=None, callback=None)
    refit = clone(model).fit(pd.DataFrame(np.vstack([X.to_numpy(), new]), columns=names),
                             conditions=["obs"] * len(X) + [label] * rows, targets={"obs": [], label: [node]},
                             callback=None, W_init=first.W_)
    B = W_CHAIN != 0
    return {"label": label, "shd_before": int(evaluate(B, first.adjacency_)["shd"]),
            "shd_after": int(evaluate(B, refit.adjacency_)["shd"]), "A_after": refit.adjacency_,
            "choice": refit.result_.choice}


def test_the_chain_experiment_on_the_middle_node_matches_the_old_path_and_orients_both_edges(chain, quick):
    params = {"variant": "ev", **quick}
    old = _old_dashboard_path(chain, params, 0.3, "X1", 300, seed=7)
    res = run_experiment(chain, W_CHAIN, "X1", 300, estimator=params, threshold=0.3, B_true=W_CHAIN != 0,
                         random_state=np.random.default_rng(7))
    assert isinstance(res, ExperimentResult)
    assert (res.label, res.node, res.node_index, res.rows) == (old["label"], "X1", 1, 300)
    assert (res.shd_before, res.shd_after) == (old["shd_before"], old["shd_after"]) == (0, 0)
    np.testing.assert_array_equal(res.A_after, old["A_after"])
    timeless = [{k: v for k, v in c.items() if k != "seconds"} for c in (res.choice, old["choice"])]
    assert timeless[0] == timeless[1] and "warm" in res.choice["candidates"]  # the fit before, a candidate
    assert res.gain == 0
    assert res.oriented == (("X0", "X1"), ("X1", "X2"))  # derived above
    # the experiment's rows follow the cut SEM: X1 no longer depends on X0
    assert abs(np.corrcoef(res.X_experiment[:, :2].T)[0, 1]) < 0.15
    assert abs(np.corrcoef(chain[["X0", "X1"]].to_numpy().T)[0, 1]) > 0.7


def test_an_experiment_on_an_end_of_the_chain_orients_its_edge_then_meek_the_other(chain, quick):
    # do(X0) orients X0 -> X1 (one end in {X0}); then X0 -> X1 -- X2 with X0, X2 non-adjacent:
    # Meek's R1 orients X1 -> X2. An array X: nodes by index, named "X<j>".
    res = run_experiment(chain.to_numpy(), W_CHAIN, 0, 200, estimator=CoLiDE("ev", **quick), B_true=W_CHAIN,
                         random_state=0)
    assert res.label == "planned: do(X0)" and res.shd_after == 0
    assert res.oriented == (("X0", "X1"), ("X1", "X2"))


def test_random_state_reproduces_and_the_callers_arrays_are_untouched(chain, tiny):
    X = chain.to_numpy()
    X_copy, W_copy = X.copy(), W_CHAIN.copy()
    conditions = np.array(["a"] * 200 + ["b"] * 200, dtype=object)
    targets = {"b": [2]}
    kwargs = dict(conditions=conditions, targets=targets, estimator={"variant": "ev", **tiny}, B_true=W_CHAIN)
    one = run_experiment(X, W_CHAIN, 1, 150, random_state=11, **kwargs)
    two = run_experiment(X, W_CHAIN, 1, 150, random_state=11, **kwargs)
    other = run_experiment(X, W_CHAIN, 1, 150, random_state=12, **kwargs)
    np.testing.assert_array_equal(one.X_experiment, two.X_experiment)
    np.testing.assert_array_equal(one.W_after, two.W_after)
    assert (one.shd_before, one.shd_after) == (two.shd_before, two.shd_after)
    assert not np.array_equal(one.X_experiment, other.X_experiment)
    np.testing.assert_array_equal(X, X_copy)
    np.testing.assert_array_equal(W_CHAIN, W_copy)
    assert list(conditions) == ["a"] * 200 + ["b"] * 200 and targets == {"b": [2]}
    assert not one.X_experiment.flags.writeable and not one.A_after.flags.writeable
    # the data's targets stay in the family: {X2} already orients X1 -> X2 (one end in {X2}), so on
    # the chain (the fit finds it) do(X1) adds only X0 -> X1
    assert one.shd_after == 0
    assert one.oriented == (("X0", "X1"),)


def test_intercepts_shift_the_experiments_rows_by_the_cut_sems_mean(chain, tiny):
    # with b = (1, 2, 3) and X1 cut: mu0 = 1, mu1 = 2 (its parent cut), mu2 = -1.2 * 2 + 3 = 0.6
    res = run_experiment(chain, W_CHAIN, "X1", 4000, intercepts=[1.0, 2.0, 3.0], estimator={"variant": "ev", **tiny},
                         random_state=0)
    np.testing.assert_allclose(res.X_experiment.mean(axis=0), [1.0, 2.0, 0.6], atol=0.1)
    assert res.shd_before is None and res.gain is None  # no truth given


def test_a_callback_returning_true_stops_with_the_librarys_exception(chain, tiny):
    calls = []

    def stop(stage, iteration, objective):
        calls.append(stage)
        return True

    with pytest.raises(ExperimentStopped, match="without the experiment") as info:
        run_experiment(chain, W_CHAIN, "X1", 100, estimator={"variant": "ev", **tiny}, random_state=0, callback=stop)
    assert calls and isinstance(info.value, Stopped)  # the library's one stopped exception catches it
    assert info.value.partial.stopped_  # the stopped fit, for a caller to show
    # with the fit before given, only the refit runs: the stop ends it
    with pytest.raises(ExperimentStopped, match="refit"):
        run_experiment(chain, W_CHAIN, "X1", 100, estimator={"variant": "ev", **tiny}, before=W_CHAIN != 0,
                       random_state=0, callback=stop)


def test_refusals(chain):
    with pytest.raises(UnknownNodeError, match="unknown node"):
        run_experiment(chain, W_CHAIN, "X9", 10)
    with pytest.raises(ValueError, match="rows must be a positive integer"):
        run_experiment(chain, W_CHAIN, "X1", 0)
    with pytest.raises(ValueError, match="W must have shape"):
        run_experiment(chain, np.zeros((2, 2)), "X1", 10)
    with pytest.raises(ValueError, match="targets need conditions"):
        run_experiment(chain, W_CHAIN, "X1", 10, targets={"a": ["X0"]})


def test_the_label_avoids_the_datas_own():
    assert experiment_label("X1", {"planned: do(X1)", "planned: do(X1)'"}) == "planned: do(X1)''"
