"""Issue 30, point 3: the Check page's and Playback's heavy work honours Stop, slots and session end.

Library side: the Markov check (up to 1,000 random DAGs), the rescaling refits (up to 50 solves) and
``run_checks`` take a ``callback(done, total)`` and stop when it returns True, keeping what they
finished. Dashboard side (AppTest): the Check page's checks, its λ path and the Playback refit run as
:class:`dashboard.infra.jobs.Job` s that wait for a compute slot and end on Stop.

Convention: ``W[i, j] != 0`` means i -> j; X is ``(n_samples, n_nodes)``.
"""
import threading

import numpy as np
import pytest

import colide_core
from colide_core.evaluation import checks
from colide_core.evaluation.markov import _TESTS_PER_REPORT


@pytest.fixture(scope="module")
def sachs_nv():
    X, _ = colide_core.load_sachs()
    model = colide_core.CoLiDE("nv").fit(X)
    return X, model


def test_the_markov_check_stops_when_its_callback_says_so(sachs_nv):
    X, model = sachs_nv
    calls = []

    def callback(done, total):
        calls.append((done, total))
        return done >= 4          # the learned graph and 3 random DAGs are done

    m = checks.markov_check(X, model.adjacency_, n_random=1000, random_state=0, callback=callback)
    assert m.stopped
    assert m.random_shares.size == 3                 # not 1,000
    assert all(t == 1001 for _, t in calls) and calls[-1][0] == 4
    assert "Stopped early" in m.summary
    # the same three random DAGs as an unstopped run with n_random=3 (same seed, same draws)
    full = checks.markov_check(X, model.adjacency_, n_random=3, random_state=0)
    np.testing.assert_array_equal(m.random_shares, full.random_shares)
    assert not full.stopped and m.share_rejected == full.share_rejected


def test_the_markov_check_stops_inside_a_large_graphs_tests():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 60))
    A = np.zeros((60, 60))                 # empty graph: 60*59 = 3540 implied independences
    seen = []
    m = checks.markov_check(X, A, n_random=1000, random_state=0,
                            callback=lambda done, total: seen.append(done) or True)
    assert m.stopped and m.random_shares.size == 0
    assert m.n_tests == _TESTS_PER_REPORT and len(m.tests) == _TESTS_PER_REPORT
    assert len(seen) == 1 and 0 < seen[0] < 1


def test_the_rescaling_refits_stop_when_their_callback_says_so(sachs_nv):
    X, model = sachs_nv
    est = colide_core.CoLiDE("nv")
    refits_seen = set()

    def stop_in_the_third(done, total):
        assert total == 50
        refits_seen.add(int(done))
        return done >= 2.0            # stop once two refits are done (in the third's first report)

    s = checks.scale_sensitivity(X, est, model.adjacency_, n_repeats=50, random_state=0,
                                 callback=stop_in_the_third)
    assert s.stopped and len(s.changes) == 2 and s.factors.shape == (2, X.shape[1])
    assert refits_seen == {0, 1, 2}
    full = checks.scale_sensitivity(X, est, model.adjacency_, n_repeats=2, random_state=0)
    np.testing.assert_allclose(s.factors, full.factors)
    np.testing.assert_array_equal(s.n_changed, full.n_changed)
    # stopped inside the first refit: nothing to compare, nothing partial returned
    assert checks.scale_sensitivity(X, est, model.adjacency_, n_repeats=50, callback=lambda d, t: True) is None
    assert checks.refit_compare(X, est, model.adjacency_, callback=lambda d, t: True) is None


def test_run_checks_stops_and_says_so(sachs_nv):
    X, model = sachs_nv
    est = colide_core.CoLiDE("nv")
    totals = set()

    def callback(done, total):
        totals.add(total)
        return done >= 1.0            # after the Markov check, before the standardised refit

    r = checks.run_checks(X, model.adjacency_, W=model.W_, estimator=est, n_random=5, n_rescale=50,
                          callback=callback)
    assert r.stopped and totals == {52}
    assert r.standardized is None and r.scale is None and not r.markov.stopped
    assert r.markov.random_shares.size == 5 and len(r.evidence) == r.n_edges
    done = checks.run_checks(X, model.adjacency_, W=model.W_, n_random=5, n_rescale=0,
                             callback=lambda d, t: False)
    assert not done.stopped


@pytest.mark.parametrize("bad", ["stop", 3])
def test_a_callback_that_is_not_callable_is_refused(sachs_nv, bad):
    X, model = sachs_nv
    with pytest.raises(ValueError, match="callback"):
        checks.markov_check(X, model.adjacency_, n_random=1, callback=bad)


@pytest.mark.parametrize("raw, grace", [("", 30.0), ("2", 2.0), ("0", 0.0), ("-5", 0.0), ("1e9", 3600.0),
                                        ("nan", 30.0), ("soon", 30.0)])
def test_the_session_grace_comes_from_the_environment_within_bounds(monkeypatch, raw, grace):
    from dashboard.infra import jobs

    monkeypatch.setenv("COLIDE_SESSION_GRACE_S", raw)
    assert jobs._grace_s() == grace
