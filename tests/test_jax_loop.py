"""The whole stage loop on the device (colide_core.solver._jax_loop, issue 50), tested on JAX's CPU build.

Invariants checked here:

* the whole Adam phase compiled as one loop (chunks, checkpoint evaluation, convergence test,
  chatter control) gives the numpy solver's checkpoints and iterates (EV and NV, an edge mask,
  per-edge L1 weights) and issue 33's chunk-by-chunk backend's to rounding, on whole fits too;
* the host hears the loop at a bounded rate: the callback once per visit with the last
  checkpoint, every checkpoint still in the history; ``Stop`` lands at a visit's last
  checkpoint with that checkpoint's state; ``max_time`` is honoured;
* ``record_W`` takes the chunk path (W at every checkpoint is the host's);
* the step's inverse is selectable (``_jax._INVERSE``: the block recursion or one
  ``jnp.linalg.inv``, issue 50's item 2) without changing the iterates beyond rounding, and the
  direct inverse refuses a step outside the log-det domain as the block one does.

No timing is asserted (benchmarks/bench_jax_host.py measures the host share). The visit rate is
set by replacing ``VISIT_S`` (0: a visit per checkpoint; huge: a visit per buffer), so the
tests do not depend on the clock.
"""
import os
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

from colide_core.data.simulate import simulate_dag, simulate_linear_sem, simulate_parameters
from colide_core.solver._fast import fast_solve

try:
    import jax  # noqa: F401
except ImportError:  # pragma: no cover - jax is pinned in requirements.txt
    pytest.fail("jax and jaxlib are pinned in requirements.txt and must be installed", pytrace=False)

from colide_core.solver import _jax_loop  # noqa: E402
from colide_core.solver._jax import _on_device, jax_kernels, kernel_stats, resolve_device  # noqa: E402
from colide_core.solver._jax_loop import loop_stats  # noqa: E402

DEVICE = os.environ.get("COLIDE_JAX_TEST_DEVICE", "jax-cpu")
#: Three stages of the central path, no polishing: the Adam phase alone.
THREE = dict(max_iter=(3000, 2000, 2000), mu_schedule=(1.0, 0.1, 0.01), s_schedule=(1.0, 0.9, 0.8), checkpoint=200,
             polish=False)


def _cov(d, seed, n=None):
    B = simulate_dag(d, 4, "er", random_state=seed)
    W = simulate_parameters(B, w_ranges=((-2.0, -0.5), (0.5, 2.0)), random_state=seed)
    X, _ = simulate_linear_sem(W, n or max(2 * d, 200), "gaussian", 1.0, random_state=seed)
    X = X - X.mean(axis=0)
    return X.T @ X / X.shape[0], B


def _on(loop=True, inverse=None, **kw):
    cov = kw.pop("cov")
    with _on_device(resolve_device(DEVICE), inverse=inverse), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fast_solve(cov, engine=jax_kernels(loop=loop), **kw)


def _same_history(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if key == "sigma":
            assert_allclose(np.array(a[key], dtype=float), np.array(b[key], dtype=float), rtol=0, atol=0)
        else:
            assert a[key] == b[key], key


def _prior(d, B, seed):
    rng = np.random.default_rng(seed)
    edge_mask = rng.random((d, d)) > 0.15
    edge_mask[np.nonzero(B)[0][0], np.nonzero(B)[1][0]] = False  # a true edge forbidden
    l1_mask = rng.uniform(0.0, 2.0, (d, d))
    l1_mask[rng.random((d, d)) < 0.2] = 0.0  # edges without L1
    return edge_mask, l1_mask


@pytest.mark.parametrize("variant", ["ev", "nv"])
def test_the_whole_loop_has_the_numpy_solvers_checkpoints_and_iterates(variant):
    d = 20
    cov, B = _cov(d, 2)
    edge_mask, l1_mask = _prior(d, B, 3)
    kw = dict(variant=variant, edge_mask=edge_mask, l1_mask=l1_mask, **THREE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = fast_solve(cov, engine="numpy", **kw)
    loop_stats(reset=True)
    kernel_stats(reset=True)
    res = _on(cov=cov, **kw)
    st = loop_stats()
    # every checkpoint came from the device loop, in far fewer host visits
    assert st["checkpoints"] == len(res.history["objective"]) == len(ref.history["objective"]) > 10
    assert st["visits"] == 3  # one per stage: no callback, no deadline, nothing to hear in between
    assert st["steps"] == kernel_stats()["steps"] == res.n_iter == ref.n_iter
    assert res.history["iteration"] == ref.history["iteration"] and res.history["stage"] == ref.history["stage"]
    assert res.n_iter_per_stage == ref.n_iter_per_stage
    assert_allclose(res.history["objective"], ref.history["objective"], rtol=1e-10)
    assert_allclose(res.history["h"], ref.history["h"], rtol=1e-8, atol=1e-12)
    assert_allclose(np.array(res.history["sigma"], dtype=float), np.array(ref.history["sigma"], dtype=float),
                    rtol=1e-8)  # sigma follows W, which rounding moves by up to ~1e-9 between kernels
    assert_allclose(res.W, ref.W, rtol=0, atol=1e-8)
    assert res.lr_used == pytest.approx(ref.lr_used, rel=1e-12)  # the same chatter halvings
    assert res.stage_converged == ref.stage_converged
    assert np.all(res.W[~edge_mask] == 0.0)


@pytest.mark.parametrize("variant", ["ev", "nv", "ls"])
def test_whole_fits_equal_the_chunk_by_chunk_backend(variant):
    # The default fast schedule with its polishing: the decisions are the same per checkpoint, so
    # the loop's fit is the chunk path's (issue 33) to rounding, with the same steps.
    cov, _ = _cov(15, 4)
    chunked = _on(cov=cov, loop=False, variant=variant)
    loop_stats(reset=True)
    whole = _on(cov=cov, variant=variant)
    assert loop_stats()["visits"] >= 4  # one stage at least each
    assert whole.n_iter == chunked.n_iter and whole.history["iteration"] == chunked.history["iteration"]
    assert_allclose(whole.history["objective"], chunked.history["objective"], rtol=1e-10)
    assert_allclose(whole.W, chunked.W, rtol=0, atol=1e-10)
    assert whole.objective == pytest.approx(chunked.objective, rel=1e-10)


def test_faithful_schedule_with_required_edges_on_the_whole_loop():
    # Algorithm 1's schedule (no averaging: the loop evaluates no running average) with a required
    # edge counted in h_ldet: colide_solve's iterates.
    from colide_core import colide_solve
    from colide_core.solver._jax import ALGORITHM_1

    cov, B = _cov(10, 6)
    i, j = np.nonzero(B)
    required = np.zeros_like(B, dtype=bool)
    required[i[0], j[0]] = True
    kw = dict(variant="nv", max_iter=(2000, 1500, 1500, 2000), checkpoint=250, required_mask=required)
    ref = colide_solve(cov, **kw)
    loop_stats(reset=True)
    res = _on(cov=cov, **kw, **ALGORITHM_1, switch_tol=1e-6)
    assert loop_stats()["checkpoints"] == len(ref.history["objective"])
    assert res.n_iter_per_stage == ref.n_iter_per_stage
    assert_allclose(res.W, ref.W, rtol=0, atol=1e-10)
    assert_allclose(res.history["objective"], ref.history["objective"], rtol=1e-10)


def test_the_callback_is_heard_once_per_visit_and_the_history_stays_whole(monkeypatch):
    cov, _ = _cov(12, 5)
    kw = dict(cov=cov, variant="ev", **THREE)
    full = _on(**kw)
    calls = []

    def note(stage, iteration, objective):
        calls.append((stage, iteration, objective))
        return False

    monkeypatch.setattr(_jax_loop, "VISIT_S", 1e9)  # a visit per buffer: few calls
    loop_stats(reset=True)
    res = _on(callback=note, **kw)
    visits = loop_stats()["visits"]
    assert len(calls) == visits < len(res.history["objective"])
    _same_history(res.history, full.history)
    assert np.array_equal(res.W, full.W)
    for stage, _, objective in calls:  # each call is a recorded checkpoint's
        assert objective in [o for s, o in zip(res.history["stage"], res.history["objective"]) if s == stage]
    monkeypatch.setattr(_jax_loop, "VISIT_S", 0.0)  # a visit per checkpoint: every one heard
    calls.clear()
    res = _on(callback=note, **kw)
    assert [c[2] for c in calls] == res.history["objective"] == full.history["objective"]


@pytest.mark.parametrize("visit_s", [0.0, 1e9])
def test_stop_lands_at_a_visits_last_checkpoint_with_its_state(monkeypatch, visit_s):
    cov, _ = _cov(12, 5)
    kw = dict(cov=cov, variant="nv", **THREE)
    full = _on(**kw)
    monkeypatch.setattr(_jax_loop, "VISIT_S", visit_s)
    calls = []

    def stop_at_third(stage, iteration, objective):
        calls.append(objective)
        return len(calls) == 3

    res = _on(callback=stop_at_third, **kw)
    assert res.stopped and res.stop_reason == "callback" and len(calls) == 3
    n = len(res.history["objective"])
    assert res.history["objective"][-1] == calls[-1] == res.objective
    # the history up to the stop is the uninterrupted fit's; the stopped W is that checkpoint's
    assert res.history["objective"] == full.history["objective"][:n]
    assert res.history["iteration"] == full.history["iteration"][:n]
    if visit_s == 0.0:
        assert n == 3
    from colide_core.solver._objective import stage_objective

    stage = res.history["stage"][-1]
    value, _ = stage_objective(res.W, res.history["sigma"][-1], cov, "nv", THREE["mu_schedule"][stage], 0.05,
                               THREE["s_schedule"][stage])  # lambda1: defaults.LAMBDA1 = 0.05
    assert value == pytest.approx(res.objective, rel=1e-10)


def test_max_time_is_honoured():
    cov, _ = _cov(30, 4)
    full = _on(cov=cov, variant="ev", checkpoint=10)
    res = _on(cov=cov, variant="ev", checkpoint=10, max_time=0.05)
    assert res.stopped and res.stop_reason == "max_time" and not res.converged
    assert 0 < res.n_iter < full.n_iter and np.all(np.isfinite(res.W))
    n = len(res.history["objective"])
    assert res.history["objective"] == full.history["objective"][:n]


def test_record_w_takes_the_chunk_path():
    cov, _ = _cov(8, 3)
    loop_stats(reset=True)
    res = _on(cov=cov, variant="nv", record_W=True, max_iter=(300, 300, 300, 600), checkpoint=100)
    assert loop_stats()["visits"] == 0
    assert len(res.W_history) == len(res.history["objective"]) > 0


def _spy_phase(monkeypatch):
    """The compiled loop's keys as the solves ask for them (the last one is the step's inverse)."""
    keys = []
    real = _jax_loop._compiled_phase

    def spy(*key):
        keys.append(key[1:])
        return real(*key)

    monkeypatch.setattr(_jax_loop, "_compiled_phase", spy)
    return keys


def test_the_direct_inverse_gives_the_block_inverses_iterates(monkeypatch):
    # d = 80 > the block inverse's 64-wide leaf, so "block" recurses once and "direct" is one
    # jnp.linalg.inv: two different inverses whose steps agree to rounding (1e-13 relative here),
    # so the checkpoints' decisions and the iterates are the same. A wrong inverse (a transposed
    # one, a wrong Schur sign) moves the gradient's 2 inv(M)^T o W term at the first step and
    # fails these tolerances by orders of magnitude.
    from colide_core.solver import _jax

    assert _jax._INVERSE == {"cpu": "block", "gpu": "block"}  # measured on an H200: the block inverse is faster there too (docs/gpu.md)
    d = 80
    cov, _ = _cov(d, 7)
    kw = dict(cov=cov, variant="nv", max_iter=(600, 400, 400), mu_schedule=(1.0, 0.1, 0.01),
              s_schedule=(1.0, 0.9, 0.8), checkpoint=100, polish=False)
    keys = _spy_phase(monkeypatch)
    block = _on(**kw)
    direct = _on(inverse="direct", **kw)
    assert [k[-1] for k in keys] == ["block"] * 3 + ["direct"] * 3  # one compiled loop per stage and inverse
    assert direct.n_iter == block.n_iter > 0 and direct.history["iteration"] == block.history["iteration"]
    assert direct.lr_used == pytest.approx(block.lr_used, rel=1e-12)
    assert_allclose(direct.history["objective"], block.history["objective"], rtol=1e-10)
    assert_allclose(direct.W, block.W, rtol=0, atol=1e-9 * np.abs(block.W).max())
    assert np.abs(block.W).max() > 0.3  # a fitted graph, not a trivial one


def test_the_direct_inverse_refuses_steps_outside_the_log_det_domain(monkeypatch):
    # A huge step (lr = 5, no L1) leaves the log-det domain at once; the step's inverse is what
    # refuses it (the O(d^2) certificate fails first, then the inverse's test: finite and
    # entry-wise >= -1e-6), the step halves, and every stage ends inside the domain, with the
    # block inverse's halvings. (NV at d = 80 like the test above: the same compiled loops.)
    cov, _ = _cov(80, 8)
    kw = dict(cov=cov, variant="nv", lambda1=0.0, lr=5.0, max_iter=(200, 200, 200), mu_schedule=(1.0, 0.1, 0.01),
              s_schedule=(1.0, 0.9, 0.8), checkpoint=50, polish=False)
    block = _on(**kw)
    direct = _on(inverse="direct", **kw)
    assert all(lr < 5.0 * c for lr, c in zip(direct.lr_used, (10, 10, 10)))  # halved from the scaled step
    assert direct.lr_used == pytest.approx(block.lr_used, rel=1e-12)
    assert np.all(np.isfinite(direct.history["h"]))
    assert np.all(np.linalg.inv(0.8 * np.eye(80) - direct.W * direct.W) >= -1e-6)
    # steps this large amplify the two inverses' rounding (max |dW| measured 9e-7), not their decisions
    assert_allclose(direct.W, block.W, rtol=0, atol=1e-5 * np.abs(block.W).max())
    with pytest.raises(ValueError, match="inverse"):
        _on(inverse="cholesky", **kw)
