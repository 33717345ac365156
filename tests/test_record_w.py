"""``record_W``: W kept at every checkpoint by both loops, without changing any number.

The solver-identity reference (``tests/test_solver_identity.py``) pins the Sachs fits to 1e-12;
here the same fits with ``record_W=True`` must be *bit-identical* to those without (recording
only copies W), and the recorded W must be the iterate at each checkpoint: one per history
entry, the last one equal to the final W where the last checkpoint is the end of the solve.
"""
import numpy as np
import pytest

from colide_core import CoLiDE, colide_solve, defaults
from colide_core.data.simulate import simulate_dataset
from colide_core.solver._fast import fast_solve


def _cov(d=6, seed=0):
    data = simulate_dataset(n_nodes=d, degree=1, graph="er", variance="nv", n_samples=500, random_state=seed)
    X = data.X - data.X.mean(axis=0)
    return X.T @ X / X.shape[0]


SHORT = dict(mu_schedule=(1.0, 0.1), s_schedule=(1.0, 0.9), max_iter=(3000, 4000), checkpoint=500)  # two stages: frames per stage


@pytest.mark.parametrize("solve", [colide_solve, fast_solve])
@pytest.mark.parametrize("variant", ["ev", "nv"])
def test_recording_changes_nothing(solve, variant):
    cov = _cov()
    plain = solve(cov, variant=variant, **SHORT)
    rec = solve(cov, variant=variant, record_W=True, **SHORT)
    assert plain.W_history is None
    np.testing.assert_array_equal(rec.W, plain.W)
    np.testing.assert_array_equal(np.atleast_1d(rec.sigma), np.atleast_1d(plain.sigma))
    assert rec.objective == plain.objective
    assert rec.n_iter == plain.n_iter and rec.n_iter_per_stage == plain.n_iter_per_stage
    assert rec.history["objective"] == plain.history["objective"]
    assert rec.history["iteration"] == plain.history["iteration"]
    # one W per checkpoint, each a copy of shape (d, d)
    assert len(rec.W_history) == len(rec.history["stage"]) >= 2
    assert all(w.shape == cov.shape for w in rec.W_history)
    assert len({id(w) for w in rec.W_history}) == len(rec.W_history)
    # the optimisation moves: the first and the last recorded W differ
    assert np.max(np.abs(rec.W_history[0] - rec.W_history[-1])) > 1e-3


def test_recorded_w_is_the_iterate_faithful():
    # Algorithm 1 returns the iterate of its last checkpoint: the last recorded W is W.
    cov = _cov()
    rec = colide_solve(cov, variant="nv", record_W=True, **SHORT)
    np.testing.assert_array_equal(rec.W_history[-1], rec.W)
    # h(W) recorded at each checkpoint is h_ldet of the recorded W at that stage's s
    from colide_core.solver._objective import h_ldet
    for stage, h, W in zip(rec.history["stage"], rec.history["h"], rec.W_history):
        s = rec.s_used[stage]
        assert h == pytest.approx(h_ldet(W, s)[0], rel=1e-9, abs=1e-12)


def test_estimator_record_w_and_identity_on_sachs():
    from tests._sachs_fits import sachs_fit

    from colide_core import load_sachs

    X, _ = load_sachs()
    plain = sachs_fit("fast", "nv")[1]  # the fit pinned by tests/test_solver_identity.py
    rec = CoLiDE("nv", solver="fast", record_W=True).fit(X)
    np.testing.assert_array_equal(rec.W_, plain.W_)
    assert rec.n_iter_ == plain.n_iter_ and rec.result_.objective == plain.result_.objective
    assert len(rec.result_.W_history) == len(rec.history_["objective"])
    # the fast solver's last checkpoint is its polished final iterate: the last frame is W_
    np.testing.assert_array_equal(rec.result_.W_history[-1], rec.W_)
    assert plain.result_.W_history is None
    # the default (solver="auto") records the fast solver's trajectory and changes no number either
    auto_rec, auto = CoLiDE("nv", record_W=True).fit(X), CoLiDE("nv").fit(X)
    np.testing.assert_array_equal(auto_rec.W_, auto.W_)
    assert auto_rec.result_.choice["candidates"] == auto.result_.choice["candidates"]
    assert len(auto_rec.result_.W_history) == len(auto_rec.history_["objective"])


def test_record_w_refused_values():
    cov = _cov()
    with pytest.raises(ValueError, match="record_W"):
        colide_solve(cov, record_W="yes", **SHORT)
    with pytest.raises(ValueError, match="record_W"):
        CoLiDE(record_W=1).fit(np.random.default_rng(0).normal(size=(50, 3)))
    with pytest.raises(ValueError, match="record_W"):
        CoLiDE(solver="topo", record_W=True).fit(np.random.default_rng(0).normal(size=(50, 3)))
    # the memory bound is checked before any work: checkpoint=1 over 130,000 steps of a 30-node W
    big = np.eye(30)
    with pytest.raises(ValueError, match="MAX_RECORD|more than"):
        fast_solve(big, record_W=True, checkpoint=1)
    assert defaults.MAX_RECORD_W_CELLS == 25_000_000
