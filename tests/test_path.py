"""The lambda x threshold explorer (colide_core.solver.path): warm-started path, thresholds, BIC, metrics.

Convention: W[i, j] != 0 means i -> j; X has shape (n_samples, n_nodes).
"""
import numpy as np
import pytest

from colide_core import is_dag, threshold_to_dag
from colide_core.evaluation._metrics import evaluate
from colide_core.solver.path import bic_score, default_lambdas, lambda_path, path_metrics
from colide_core.data.simulate import draw_noise_variances, simulate_dag, simulate_linear_sem, simulate_parameters

from tests._schedules import TINY as _TINY  # noqa: E402 - the suite's short schedule
TINY = {**_TINY, "lr": 3e-3}  # a larger step: the tiny schedule then still converges


def _sem(d=6, seed=0, n=500):
    B = simulate_dag(d, 1.5, "er", random_state=seed)
    W = simulate_parameters(B, w_ranges=((-2.0, -0.5), (0.5, 2.0)), random_state=seed)
    X, _ = simulate_linear_sem(W, n, "gaussian", draw_noise_variances(d, random_state=seed), random_state=seed)
    return X, B


# --- BIC -------------------------------------------------------------------------------------------
def _bic_by_hand(X, A):
    """BIC from the raw data with numpy least squares (an independent implementation)."""
    X = X - X.mean(axis=0)
    n, d = X.shape
    total = 0.0
    for j in range(d):
        P = np.flatnonzero(A[:, j])
        r = X[:, j] if P.size == 0 else X[:, j] - X[:, P] @ np.linalg.lstsq(X[:, P], X[:, j], rcond=None)[0]
        s2 = r @ r / n
        total += -0.5 * n * (np.log(2 * np.pi * s2) + 1)
    return -2 * total + ((A != 0).sum() + d) * np.log(n)


def test_bic_matches_a_direct_regression_and_prefers_the_true_graph():
    rng = np.random.default_rng(0)
    n = 400
    x0 = rng.normal(size=n)
    x1 = 2.0 * x0 + rng.normal(size=n)
    x2 = rng.normal(size=n)                       # independent of the others
    X = np.column_stack([x0, x1, x2])
    Xc = X - X.mean(axis=0)
    cov = Xc.T @ Xc / n
    true = np.zeros((3, 3))
    true[0, 1] = 1
    extra = true.copy()
    extra[2, 1] = 1                               # a useless parent costs log(n) and gains ~nothing
    for A in (true, extra, np.zeros((3, 3)), true.T):
        assert bic_score(cov, n, A) == pytest.approx(_bic_by_hand(X, A), rel=1e-10)
    assert bic_score(cov, n, true) < bic_score(cov, n, np.zeros((3, 3))) - 100   # strong dependence
    assert bic_score(cov, n, true) < bic_score(cov, n, extra)
    # score-equivalent: x0 -> x1 and x1 -> x0 are Markov equivalent
    assert bic_score(cov, n, true) == pytest.approx(bic_score(cov, n, true.T), rel=1e-12)
    # rescaling a column shifts every graph's BIC by the same constant
    S = np.diag([1.0, 1000.0, 0.01])
    shifts = [bic_score(S @ cov @ S, n, A) - bic_score(cov, n, A) for A in (true, extra, np.zeros((3, 3)))]
    assert np.ptp(shifts) < 1e-6
    with pytest.raises(ValueError, match="n must be"):
        bic_score(cov, 1, true)


# --- the path ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("solver, lr, w_tol", [("adam", 3e-3, 0.02), ("auto", 3e-4, 0.1)])
def test_warm_path_gives_the_same_graphs_as_independent_fits_with_fewer_iterations(solver, lr, w_tol):
    # Acceptance 3. Converged solves (paper schedule lengths, tol 1e-6): the warm path (increasing
    # lambda, last stage only) and independent fits agree. The faithful solver runs with lr 3e-3 so
    # that it converges quickly; the fast one with the paper's 3e-4, its design point (it already
    # takes 6-10x longer steps: with 3e-3 its warm-started last stage chatters and measured no
    # saving at all, 11,526 against 10,722 iterations). Both stop on a relative objective change,
    # and the objective is flat: the fast solver's two answers differ by up to 0.05 in a weight
    # (objectives within 1e-5, same graphs at every threshold), hence its looser weight tolerance.
    X, _ = _sem(d=6, seed=0)
    lambdas = np.geomspace(0.01, 0.1, 4)
    kw = {"lr": lr, "checkpoint": 200, "solver": solver}
    warm = lambda_path(X, lambdas, (0.1, 0.3, 0.5), "nv", **kw)
    indep = lambda_path(X, lambdas, (0.1, 0.3, 0.5), "nv", warm_start=False, **kw)
    assert indep.converged.all() and warm.converged.all()
    np.testing.assert_array_equal(warm.adjacency != 0, indep.adjacency != 0)   # every cell, same graph
    assert np.abs(warm.W - indep.W).max() < w_tol
    np.testing.assert_allclose(warm.objective, indep.objective, rtol=1e-3)
    # "faster", counted in solver iterations (wall time is in benchmarks/bench_path.py)
    assert warm.n_iter[0] == indep.n_iter[0]                        # the first lambda is a full solve
    assert warm.n_iter.sum() < 0.6 * indep.n_iter.sum()


def test_thresholds_are_applied_without_re_solving(monkeypatch):
    # The path picks its loop from the estimator's table of solvers: count the "adam" entry's calls.
    from colide_core import SOLVERS

    calls = []
    real = SOLVERS["adam"]

    def counting(*args, **kwargs):
        calls.append(args[1].lambda1)  # the loops take the checked RunSettings
        return real(*args, **kwargs)

    monkeypatch.setitem(SOLVERS, "adam", counting)
    X, _ = _sem(d=5, seed=1, n=200)
    thresholds = (0.5, 0.0, 0.2, 0.3, 1.0)
    path = lambda_path(X, [0.1, 0.02, 0.05], thresholds, "ev", solver="adam", **TINY)
    assert calls == [0.02, 0.05, 0.1]                 # one solve per lambda, in increasing order
    np.testing.assert_array_equal(path.lambdas, [0.02, 0.05, 0.1])
    np.testing.assert_array_equal(path.thresholds, [0.0, 0.2, 0.3, 0.5, 1.0])
    for i in range(3):
        for j, thr in enumerate(path.thresholds):
            np.testing.assert_array_equal(path.graph(i, j), threshold_to_dag(path.W[i], thr))
            assert is_dag(path.graph(i, j))
    # more threshold, never more edges (survivors are the longest acyclic prefix by magnitude)
    assert np.all(np.diff(path.edge_counts, axis=1) <= 0)
    assert path.edge_counts.shape == (3, 5) and path.bic.shape == (3, 5)


def test_metrics_grid_and_best_bic():
    X, B = _sem(d=5, seed=2, n=300)
    path = lambda_path(X, [0.02, 0.2], (0.1, 0.3), "nv", **TINY)
    grid = path_metrics(path, B)
    for i in range(2):
        for j in range(2):
            m = evaluate(B, path.graph(i, j))
            assert grid["shd"][i, j] == m["shd"] and grid["tpr"][i, j] == m["tpr"] and grid["fdr"][i, j] == m["fdr"]
    i, j = path.best_bic()
    assert path.bic[i, j] == path.bic.min()
    table = path.table()
    assert len(table) == 4 and list(table.columns) == ["lambda1", "threshold", "edges", "bic"]
    assert path.cell(0.05, 0.3) == (0, 1) and path.cell(0.15, 0.12) == (1, 0)   # nearest on log(lambda)


def test_constraints_hold_along_the_whole_path():
    X, B = _sem(d=5, seed=3, n=300)
    true = [tuple(map(int, e)) for e in zip(*np.nonzero(B))]
    forbidden = true[:1]
    i0, j0 = true[1]
    required = [(j0, i0)]                             # the reversal of a true edge
    path = lambda_path(X, [0.01, 0.1, 0.5], (0.1, 0.3, 1.0), "ev", forbidden=forbidden, required=required, **TINY)
    assert np.all(path.W[:, forbidden[0][0], forbidden[0][1]] == 0.0)
    assert np.all(path.adjacency[:, :, j0, i0] != 0)   # required: kept even at threshold 1.0
    with pytest.raises(ValueError, match="directed cycle"):
        lambda_path(X, [0.1], required=[(0, 1), (1, 0)], **TINY)


def test_callback_progress_and_stop():
    X, _ = _sem(d=4, seed=4, n=200)
    seen = []
    path = lambda_path(X, [0.01, 0.1, 0.3], (0.3,), "ev", callback=lambda done, total: seen.append((done, total)), **TINY)
    assert all(t == 3 for _, t in seen) and seen[-1] == (3.0, 3)
    assert all(b >= a for (a, _), (b, _) in zip(seen, seen[1:]))     # monotone progress
    assert not path.stopped
    stopped = lambda_path(X, [0.01, 0.1, 0.3], (0.3,), "ev", callback=lambda done, total: done >= 1.0, **TINY)
    assert stopped.stopped and list(stopped.lambdas) == [0.01]
    with pytest.raises(ValueError, match="stopped before the first"):
        lambda_path(X, [0.01], (0.3,), "ev", callback=lambda done, total: True, **TINY)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"lambdas": [-0.1]}, "lambdas"),
        ({"lambdas": []}, "lambdas"),
        ({"thresholds": [np.nan]}, "thresholds"),
        ({"warm_stages": 5}, "warm_stages"),
        ({"solver": "sgd"}, "solver"),
        ({"callback": "x"}, "callable"),
    ],
)
def test_bad_arguments(kwargs, message):
    X, _ = _sem(d=3, seed=0, n=50)
    with pytest.raises(ValueError, match=message):
        lambda_path(X, **{"lambdas": [0.1], **kwargs})


def test_bad_data():
    X = np.ones((20, 3))
    X[:, 1] = np.arange(20)
    with pytest.raises(ValueError, match="Constant column"):
        lambda_path(X, [0.1])
    with pytest.raises(ValueError, match="NaN"):
        lambda_path(np.full((5, 2), np.nan), [0.1])


def test_default_lambdas_contain_the_paper_value():
    lam = default_lambdas()
    assert lam.size == 9 and lam[0] == pytest.approx(0.005) and lam[-1] == pytest.approx(0.5)
    assert lam[4] == pytest.approx(0.05)
    assert np.allclose(np.diff(np.log(lam)), np.log(10) / 4)


def test_default_lambdas_read_as_written():
    # Issue 41: a link carried lam=0.049999999999999996 from the Explorer's λ grid (geomspace).
    from colide_core.solver.path import default_lambdas

    lams = default_lambdas()
    assert lams[4] == 0.05 and repr(float(lams[4])) == "0.05"
    np.testing.assert_allclose(lams, np.geomspace(0.005, 0.5, 9), rtol=1e-11)
