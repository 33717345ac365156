"""The look-ahead planner (issue 52, item 4): colide_core.evaluation.lookahead.

Convention: W[i, j] != 0 means i -> j; X is (n_samples, n_nodes).
"""
import numpy as np
import pytest
from sklearn.base import BaseEstimator

import colide_core
from colide_core import CoLiDE
from colide_core._params import InvalidParameterError
from colide_core.data.simulate import simulate_linear_sem
from colide_core.evaluation.lookahead import lookahead_interventions, lookahead_work

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

CHAIN = ((0, 1), (1, 2))  # the skeleton 0 -- 1 -- 2


class ChainLearner(BaseEstimator):
    """A learner one can check by hand, on the skeleton 0 -- 1 -- 2.

    Each edge a -- b of the chain is oriented
    * by an experiment when a condition targets a or b: from the target t to its neighbour j when
      t and j are correlated (|r| > 0.3) in that condition's rows (t drives j), else j -> t (the
      intervention cut the edge into t);
    * otherwise by a coin the data toss: a -> b when the observational rows' mean of column a is
      >= 0, else b -> a. The data are centred, so the fit to all rows orients 0 -> 1 -> 2 and a
      bootstrap resample flips each edge about half the time.
    Weights 0.8 in the edge's direction (the SEM the look-ahead simulates from).
    """

    def fit(self, X, conditions=None, targets=None):
        X = np.asarray(X, dtype=float)
        labels = np.asarray(["obs"] * len(X) if conditions is None else conditions, dtype=object)
        targets = targets or {}
        obs = np.array([not targets.get(lab) for lab in labels])
        W = np.zeros((3, 3))
        for a, b in CHAIN:
            forward = X[obs, a].mean() >= 0
            for lab, tg in targets.items():
                for t, j in ((a, b), (b, a)):
                    if t in tg:
                        rows = labels == lab
                        drives = abs(np.corrcoef(X[rows, t], X[rows, j])[0, 1]) > 0.3
                        forward = (t == a) == drives
            W[(a, b) if forward else (b, a)] = 0.8
        self.adjacency_ = W
        return self


@pytest.fixture
def chain_data():
    """400 rows of 0 -> 1 -> 2 (weights 0.8), each column centred (mean exactly 0)."""
    W = np.array([[0, 0.8, 0], [0, 0, 0.8], [0, 0, 0]])
    X, _ = simulate_linear_sem(W, 400, random_state=3)
    return X - X.mean(axis=0)


def test_the_middle_of_a_chain_ranks_first(chain_data):
    # The truth, by hand. The fit A is 0 -> 1 -> 2 (the centred means are >= 0). SEM b is a resample's
    # graph G_b, each edge flipped or not by the resample's coin. An experiment on t orients the edges
    # at t as G_b has them (the simulated rows follow G_b: t drives j iff t -> j in G_b) and leaves the
    # other edge as A has it (the observational rows, untouched, toss the same coin). So the SHD gain
    # against G_b of do(t) is the number of edges at t that G_b has reversed with respect to A:
    # do(1) fixes both edges, do(0) only 0 -- 1, do(2) only 1 -- 2, so gain(1) = gain(0) + gain(2),
    # and the middle node ranks first whenever some resample flipped an edge.
    r = lookahead_interventions(chain_data, estimator=ChainLearner(), n_sems=8, n_rows=300, random_state=0)
    assert list(r.index)[0] == "X1"
    assert r.loc["X1", "gain"] == pytest.approx(r.loc["X0", "gain"] + r.loc["X2", "gain"])
    assert r.loc["X0", "gain"] > 0 and r.loc["X2", "gain"] > 0
    # the fit's own SEM (no bootstrap) makes no disagreement: rows drawn from A orient as A, so
    # nothing changes and nothing is gained: the bootstrap is what this criterion sees
    p = lookahead_interventions(chain_data, estimator=ChainLearner(), n_sems=3, n_rows=300, sems="point",
                                random_state=0)
    assert p["gain"].tolist() == [0.0, 0.0, 0.0] and p["change"].tolist() == [0.0, 0.0, 0.0]
    # every edge the refit moves is one it fixes here, so change equals gain draw by draw
    assert r["change"].tolist() == r["gain"].tolist()
    assert r.attrs["refits"] == r.attrs["work"] == lookahead_work(3, n_sems=8) == 1 + 8 + 3 * 8
    assert r["draws"].tolist() == [8, 8, 8]


def test_same_seed_same_ranking_with_colide():
    W = np.array([[0, 1.0, 0, 0], [0, 0, 0.8, 0], [0, 0, 0, -0.7], [0, 0, 0, 0]])
    X, _ = simulate_linear_sem(W, 200, noise_var=[1.0, 0.5, 1.7, 0.8], random_state=1)
    kw = dict(estimator=CoLiDE("nv", threshold=0.3), n_sems=2, n_rows=100, candidates=[1, 3])
    a = lookahead_interventions(X, random_state=7, **kw)
    b = lookahead_interventions(X, random_state=7, **kw)
    assert a.equals(b) and a.attrs == b.attrs
    assert a.attrs["refits"] == lookahead_work(2, n_sems=2) == 7


def test_refits_are_warm_started_from_the_fit(monkeypatch):
    W = np.array([[0, 1.0, 0], [0, 0, 0.8], [0, 0, 0]])
    X, _ = simulate_linear_sem(W, 150, random_state=2)
    inits = []
    real_fit = colide_core.CoLiDE.fit

    def recording_fit(self, X, conditions=None, targets=None, callback=None, W_init=None, *, design=None):
        inits.append(None if W_init is None else np.array(W_init))
        return real_fit(self, X, conditions=conditions, targets=targets, callback=callback, W_init=W_init,
                        design=design)

    monkeypatch.setattr(colide_core.CoLiDE, "fit", recording_fit)
    point = CoLiDE("nv").fit(X)
    inits.clear()
    lookahead_interventions(X, n_sems=1, n_rows=50, sems="point", candidates=[0, 2], random_state=0)
    # the fit to all rows (cold), then one refit per candidate, each from the fit's raw weights
    assert len(inits) == 3 and inits[0] is None
    for w in inits[1:]:
        np.testing.assert_allclose(w, point.W_)


def test_the_callback_stops_between_refits(chain_data):
    calls = []

    def stop_at_five(done, total):
        calls.append((done, total))
        return done >= 5

    r = lookahead_interventions(chain_data, estimator=ChainLearner(), n_sems=2, n_rows=100, random_state=0,
                                callback=stop_at_five)
    # total = 1 fit + 2 resamples + 3 candidates x 2 SEMs = 9; done counts fits: 1, 2, 3 (the bootstrap),
    # then 4 (SEM 0, do(0)) and 5 (SEM 0, do(1)), where it stops: do(2) never runs
    assert [c[0] for c in calls] == [1, 2, 3, 4, 5] and {c[1] for c in calls} == {9}
    assert r.attrs["stopped"] and r.attrs["refits"] == 5
    assert r.loc[["X0", "X1", "X2"], "draws"].tolist() == [1, 1, 0]
    assert list(r.index)[-1] == "X2" and np.isnan(r.loc["X2", "score"])


def test_a_stop_inside_a_refit_keeps_what_was_done():
    W = np.array([[0, 1.0, 0], [0, 0, 0.8], [0, 0, 0]])
    X, _ = simulate_linear_sem(W, 150, random_state=2)
    seen = []

    def stop_in_first_experiment(done, total):  # asked at the solver's checkpoints too
        seen.append(done)
        return done >= 2  # 1 fit and 1 resample done: stops inside the first experiment's refit

    r = lookahead_interventions(X, n_sems=1, n_rows=50, random_state=0, callback=stop_in_first_experiment)
    assert r.attrs["stopped"] and r["draws"].tolist() == [0, 0, 0] and r["score"].isna().all()
    assert max(seen) == 2 and r.attrs["refits"] == 2


@pytest.mark.parametrize("kwargs", [{"score": "shd"}, {"sems": "posterior"}, {"n_sems": 0}, {"n_sems": 1.5},
                                    {"n_rows": 0}, {"n_rows": True}, {"callback": 3}])
def test_invalid_arguments_raise(chain_data, kwargs):
    with pytest.raises(InvalidParameterError):
        lookahead_interventions(chain_data, estimator=ChainLearner(), **kwargs)


def test_unknown_candidate_and_bad_work_arguments(chain_data):
    with pytest.raises(ValueError, match="X7|7"):
        lookahead_interventions(chain_data, estimator=ChainLearner(), candidates=[7])
    with pytest.raises(InvalidParameterError):
        lookahead_work(0)
    with pytest.raises(InvalidParameterError):
        lookahead_work(3, sems="bayes")
