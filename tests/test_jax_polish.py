"""The host's last evaluations moved onto the device (issue 50), tested on JAX's CPU build.

The last stage's polishing (proximal gradient with Barzilai-Borwein steps and a nonmonotone,
domain-aware Armijo line search, :func:`colide_core.solver._fast._polish`) was the largest part
of a JAX fit left on the host: an LU and an inverse per evaluation. It now runs as one compiled
loop (:func:`colide_core.solver._jax_loop.polish_phase`). The stages' warm starts and the running
average's point are evaluated on the device too (:func:`colide_core.solver._jax_loop.evaluate_point`).

Invariants checked here:

* from the same Adam iterate, the device's polishing takes the host's steps: the same
  checkpoints, evaluations and step sizes, objectives to 1e-9 and W to 1e-9 of max|W| (EV, NV,
  an edge mask with per-edge L1 weights, a required edge counted in ``h_ldet``). The comparison
  stops after 60 evaluations: over hundreds, BB's step sizes turn rounding into a different
  path, as they do between the host's own numba and numpy kernels (both measured here);
* whole fits whose polishing is short equal the host-polished fits;
* the host hears the polishing at a bounded rate: the callback once per visit with its last
  checkpoint, every checkpoint in the history; ``Stop`` during the polishing lands at a visit's
  last checkpoint with that checkpoint's W;
* ``record_W`` and a W outside the log-det domain are left to the host / refused as the host does;
* a point evaluated on the device is the host's to rounding, and refused exactly where the host
  refuses it, down to 1e-6 of the domain's edge; a fit evaluates its warm starts there.

No timing is asserted (benchmarks/bench_jax_host.py measures the host share).
"""
import copy
import os
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

from colide_core.data.simulate import simulate_dag, simulate_linear_sem, simulate_parameters
from colide_core.solver import _fast
from colide_core.solver._fast import fast_solve

try:
    import jax  # noqa: F401
except ImportError:  # pragma: no cover - jax is pinned in requirements.txt
    pytest.fail("jax and jaxlib are pinned in requirements.txt and must be installed", pytrace=False)

from colide_core.solver import _jax, _jax_loop  # noqa: E402
from colide_core.solver._jax import _on_device, jax_kernels, resolve_device  # noqa: E402
from colide_core.solver._jax_loop import loop_stats  # noqa: E402
from tests.test_jax_loop import _prior  # noqa: E402 - the same prior knowledge (edge mask, L1 weights)

DEVICE = os.environ.get("COLIDE_JAX_TEST_DEVICE", "jax-cpu")
#: Two stages; the last one is polished.
TWO = dict(max_iter=(3000, 2000), mu_schedule=(1.0, 0.1), s_schedule=(1.0, 0.9), checkpoint=200)


def _cov(d, seed, n=None):
    B = simulate_dag(d, 4, "er", random_state=seed)
    W = simulate_parameters(B, w_ranges=((-2.0, -0.5), (0.5, 2.0)), random_state=seed)
    X, _ = simulate_linear_sem(W, n or 1000, "gaussian", 1.0, random_state=seed)
    X = X - X.mean(axis=0)
    return X.T @ X / X.shape[0], B


def _fit(device_polish=True, **kw):
    """A fit on the device's Adam phase, polished on the device or (``device_polish=False``) on the host."""
    cov = kw.pop("cov")
    kernels = jax_kernels()
    saved = kernels[0].polish_phase
    if not device_polish:
        del kernels[0].polish_phase
    try:
        with _on_device(resolve_device(DEVICE)), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fast_solve(cov, engine=kernels, **kw)
    finally:
        kernels[0].polish_phase = saved


def _polish_input(monkeypatch, **kw):
    """The arguments the fast loop hands its (host) polishing, captured from a real fit."""
    seen = {}
    host = _fast._polish

    def spy(*args):
        seen.setdefault("args", args)
        return host(*args)

    monkeypatch.setattr(_fast, "_polish", spy)
    _fit(device_polish=False, **kw)
    monkeypatch.setattr(_fast, "_polish", host)
    return seen["args"]


def _fresh(run):
    twin = copy.copy(run)
    twin.history = {k: [] for k in run.history}
    return twin


def _host(args, max_it, ck=1, kernels=None, callback=None):
    (W, cov, s, mu, lam, mask, vcode, sig0, grad_fn, prox_fn, lr, tol, _, _, stage, _, run, _, _, _, node,
     offset) = args
    grad_fn, prox_fn = kernels or (grad_fn, prox_fn)
    run = _fresh(run)
    out = _fast._polish(W.copy(), cov, s, mu, lam, mask, vcode, sig0, grad_fn, prox_fn, lr, tol, max_it, ck, stage,
                        0, run, callback, 0, 1.0, node, offset)
    return out, run


def _device(args, max_it, ck=1, callback=None):
    (W, cov, s, mu, lam, mask, vcode, sig0, _, _, lr, tol, _, _, stage, _, run, _, _, _, node, offset) = args
    run = _fresh(run)
    with _on_device(resolve_device(DEVICE)):
        out = _jax_loop.polish_phase(W.copy(), backend=_jax, cov=cov, s=s, mu=mu, lam=lam, mask=mask, vcode=vcode,
                                     sig0=sig0, lr=lr, tol=tol, max_it=max_it, ck=ck, stage=stage, t0=0, run=run,
                                     callback=callback, used0=0, unit=1.0, node=node, offset=offset)
    return out, run


def _cases():
    cov, B = _cov(20, 3)
    edge_mask, l1_mask = _prior(20, B, 3)
    i, j = np.nonzero(B)
    required = np.zeros_like(B, dtype=bool)
    required[i[1], j[1]] = True
    return {
        "ev": dict(cov=cov, variant="ev", **TWO),
        "nv": dict(cov=cov, variant="nv", **TWO),
        "nv-prior": dict(cov=cov, variant="nv", edge_mask=edge_mask, l1_mask=l1_mask, **TWO),
        "ev-required": dict(cov=cov, variant="ev", required_mask=required, **TWO),
    }


@pytest.mark.parametrize("case", ["ev", "nv", "nv-prior", "ev-required"])
def test_the_device_polishing_takes_the_hosts_steps(monkeypatch, case):
    args = _polish_input(monkeypatch, **_cases()[case])
    assert (args[-1] is not None) == (case == "ev-required")  # the required edge's tau R reached the polishing
    (p_h, n_h, conv_h, stop_h), run_h = _host(args, max_it=60)
    (p_d, n_d, conv_d, stop_d), run_d = _device(args, max_it=60)
    assert n_d == n_h == 60 and conv_d == conv_h and stop_d is stop_h is None
    # ck = 1: a checkpoint per accepted step, at the same evaluation counts (the line search's
    # refusals and halvings included)
    assert run_d.history["iteration"] == run_h.history["iteration"]
    assert len(run_h.history["iteration"]) > 30
    assert_allclose(run_d.history["objective"], run_h.history["objective"], rtol=1e-9)
    assert_allclose(run_d.history["h"], run_h.history["h"], rtol=1e-7, atol=1e-12)
    scale = np.abs(p_h.W).max()
    assert_allclose(p_d.W, p_h.W, rtol=0, atol=1e-9 * scale)
    # the point handed back is whole: the host's evaluation of the device's W
    again = _fast._evaluate(p_d.W.copy(), args[1], args[2], args[3], args[4], args[6], args[7], None, args[-1])
    assert_allclose(p_d.obj, again.obj, rtol=1e-12)
    assert_allclose(p_d.MinvT, again.MinvT, rtol=1e-9, atol=1e-12)
    # R's entries are sums of n products: a GPU's float64 GEMM sums them in another order than the
    # host's BLAS (an H200 gave 2.1e-14 on entries of 1e-2 with max|R| = 0.73), so rounding is
    # measured against max|R|, not against each entry alone
    assert_allclose(p_d.R, again.R, rtol=1e-12, atol=1e-12 * np.abs(again.R).max())
    assert_allclose(p_d.isig, again.isig, rtol=1e-12)


def test_the_comparison_could_tell_a_different_rule(monkeypatch):
    # The test above can fail: a device loop with a monotone line search (memory 1, where the
    # host's compares with the largest of the last five objectives) takes other steps within
    # the same 60 evaluations.
    args = _polish_input(monkeypatch, **_cases()["nv"])
    (_, _, _, _), run_h = _host(args, max_it=60)
    monkeypatch.setattr(_fast, "_NM_MEMORY", 1)
    _jax_loop._compiled_polish.cache_clear()
    try:
        (_, _, _, _), run_d = _device(args, max_it=60)
    finally:
        monkeypatch.undo()
        _jax_loop._compiled_polish.cache_clear()
    k = min(len(run_d.history["objective"]), len(run_h.history["objective"]))
    differs = (run_d.history["iteration"] != run_h.history["iteration"]
               or not np.allclose(run_d.history["objective"][:k], run_h.history["objective"][:k], rtol=1e-9))
    assert differs


def test_over_hundreds_of_evaluations_device_and_host_part_as_the_hosts_own_kernels_do(monkeypatch):
    # What the 60-evaluation bound above rests on: the host's numba and numpy kernels, both in
    # float64 on the same machine, also leave each other's path over a long polishing, and the
    # device stays as close to the numba kernels as the numpy kernels do for the first 60.
    args = _polish_input(monkeypatch, **_cases()["ev"])
    (p_nb, n_nb, _, _), run_nb = _host(args, max_it=400)
    (p_np, n_np, _, _), run_np = _host(args, max_it=400, kernels=(_fast._grad_py, _fast._prox_py))
    (p_d, n_d, _, _), run_d = _device(args, max_it=400)
    assert n_nb == n_np == n_d == 400
    head = [i for i in run_nb.history["iteration"] if i <= 60]
    assert run_np.history["iteration"][:len(head)] == run_d.history["iteration"][:len(head)] == head
    # ... and later the two host kernels part: their checkpoints differ
    assert run_np.history["iteration"] != run_nb.history["iteration"]
    # all three end near one point (measured: numpy 3.3e-3, device 6e-4 from numba, relative)
    assert_allclose([p_np.obj, p_d.obj], p_nb.obj, rtol=1e-2)


@pytest.mark.parametrize("variant", ["ev", "nv"])
def test_whole_fits_with_a_short_polishing_equal_the_host_polished_fits(variant):
    cov, _ = _cov(20, 4)
    # the last stage's budget (60 faithful steps) bounds its polishing to a few dozen evaluations
    kw = dict(cov=cov, variant=variant, max_iter=(3000, 60), mu_schedule=(1.0, 0.1), s_schedule=(1.0, 0.9),
              checkpoint=20)
    loop_stats(reset=True)
    dev = _fit(**kw)
    evals = loop_stats(reset=True).get("polish_evals", 0)
    host = _fit(device_polish=False, **kw)
    assert loop_stats().get("polish_evals", 0) == 0  # the host polished the second fit
    assert evals > 5 and dev.n_iter == host.n_iter and dev.n_iter_per_stage == host.n_iter_per_stage
    assert dev.history["iteration"] == host.history["iteration"]
    assert_allclose(dev.history["objective"], host.history["objective"], rtol=1e-9)
    assert_allclose(dev.W, host.W, rtol=0, atol=1e-9 * np.abs(host.W).max())
    assert_allclose(np.asarray(dev.sigma, dtype=float), np.asarray(host.sigma, dtype=float), rtol=1e-9)
    assert dev.converged == host.converged


def _calls_and_stop(stop_at=None):
    calls = []

    def note(stage, iteration, objective):
        calls.append((stage, iteration, objective))
        return stop_at is not None and len(calls) >= stop_at

    return calls, note


def test_the_polishing_is_heard_once_per_visit_and_the_history_stays_whole(monkeypatch):
    args = _polish_input(monkeypatch, **_cases()["ev"])
    (_, n_q, _, _), quiet = _device(args, max_it=120, ck=3)
    # a visit per checkpoint: the callback hears every one of them
    monkeypatch.setattr(_jax_loop, "VISIT_S", 0.0)
    calls, note = _calls_and_stop()
    (_, n_1, _, _), each = _device(args, max_it=120, ck=3, callback=note)
    assert n_1 == n_q == 120 and each.history == quiet.history
    assert [c[1] for c in calls] == each.history["iteration"] and len(calls) > 10
    # a visit per buffer: the callback hears one checkpoint per visit, the history keeps all
    monkeypatch.setattr(_jax_loop, "VISIT_S", 1e9)
    calls, note = _calls_and_stop()
    (_, _, _, _), few = _device(args, max_it=120, ck=3, callback=note)
    assert few.history == quiet.history
    assert 1 <= len(calls) < len(quiet.history["iteration"]) and calls[-1][1] == quiet.history["iteration"][-1]


def test_stop_during_the_polishing_lands_at_a_visits_last_checkpoint(monkeypatch):
    args = _polish_input(monkeypatch, **_cases()["nv"])
    monkeypatch.setattr(_jax_loop, "VISIT_S", 0.0)  # a visit per checkpoint
    calls, note = _calls_and_stop(stop_at=4)
    (p_d, n_d, conv_d, stop_d), run_d = _device(args, max_it=200, ck=2, callback=note)
    calls_h, note_h = _calls_and_stop(stop_at=4)
    (p_h, n_h, conv_h, stop_h), run_h = _host(args, max_it=200, ck=2, callback=note_h)
    assert stop_d == stop_h == "callback" and not conv_d and not conv_h
    assert n_d == n_h == run_d.history["iteration"][-1] and len(calls) == 4
    assert run_d.history["iteration"] == run_h.history["iteration"]
    assert_allclose(p_d.W, p_h.W, rtol=0, atol=1e-9 * np.abs(p_h.W).max())


def test_record_w_and_a_point_outside_the_domain_stay_with_the_host(monkeypatch):
    args = _polish_input(monkeypatch, **_cases()["ev"])
    run = _fresh(args[16])
    run.W_history = []
    with _on_device(resolve_device(DEVICE)):
        declined = _jax_loop.polish_phase(args[0].copy(), backend=_jax, cov=args[1], s=args[2], mu=args[3],
                                          lam=args[4], mask=args[5], vcode=args[6], sig0=args[7], lr=args[10],
                                          tol=args[11], max_it=10, ck=1, stage=args[14], t0=0, run=run,
                                          callback=None, used0=0, unit=1.0, node=None, offset=None)
    assert declined is None and run.history["iteration"] == []
    # s I - W o W with a 2-cycle of weight 2 > sqrt(s) is outside the log-det domain: no polishing
    outside = list(args)
    W = np.zeros_like(args[0])
    W[0, 1] = W[1, 0] = 2.0
    outside[0] = W
    assert _fast._evaluate(W.copy(), args[1], args[2], args[3], args[4], args[6], args[7]) is None
    (p, n, conv, stop), run_o = _device(tuple(outside), max_it=10)
    assert (p, n, conv, stop) == (None, 0, False, None) and run_o.history["iteration"] == []


def _edge_case(d, seed, delta):
    """``W`` with ``s I - W o W`` at ``(1 + delta)`` times its Perron root: inside for delta > 0."""
    rng = np.random.default_rng(seed)
    W = rng.uniform(0.2, 1.0, (d, d)) * (rng.random((d, d)) < 6.0 / d)
    np.fill_diagonal(W, 0.0)
    rho = float(np.max(np.abs(np.linalg.eigvals(W * W))))
    return W, rho * (1.0 + delta)


@pytest.mark.parametrize("variant", ["ev", "nv", "ls"])
def test_a_point_evaluated_on_the_device_is_the_hosts(variant):
    # _jax_loop.evaluate_point serves the fast loop's stage entries and running averages on the
    # device: the host's point (_fast._evaluate) to rounding, and None exactly where the host's
    # domain test refuses, down to 1e-6 of the domain's edge (the Perron root of W o W), with and
    # without a required edge's tau R.
    cov, _ = _cov(30, 8)
    vcode = {"ev": 0, "nv": 1, "ls": 2}[variant]
    sig0 = np.full(30, 1e-3) if variant != "ls" else np.ones(30)
    lam = np.random.default_rng(1).uniform(0.0, 0.1, (30, 30))
    offset = np.zeros((30, 30))
    offset[3, 7] = 0.05
    seen = {True: 0, False: 0}
    for seed in range(4):
        for delta in (1e-1, 1e-3, 1e-6, -1e-6, -1e-3):
            W, s = _edge_case(30, seed, delta)
            for off in (None, offset):
                host = _fast._evaluate(W.copy(), cov, s, 0.1, lam, vcode, sig0, None, off)
                with _on_device(resolve_device(DEVICE)):
                    dev = _jax_loop.evaluate_point(W.copy(), cov, s, 0.1, lam, vcode, sig0, None, off, backend=_jax)
                assert (dev is None) == (host is None), (seed, delta, off is None)
                seen[host is None] += 1
                if host is None:
                    continue
                assert dev.obj == pytest.approx(host.obj, rel=1e-10)
                assert dev.h == pytest.approx(host.h, rel=1e-8, abs=1e-10)
                assert_allclose(dev.MinvT, host.MinvT, rtol=1e-8, atol=1e-12 * np.abs(host.MinvT).max())
                assert_allclose(dev.R, host.R, rtol=1e-12, atol=1e-14)
                assert_allclose(dev.isig, host.isig, rtol=1e-12)
                assert_allclose(np.asarray(dev.sigma, dtype=float), np.asarray(host.sigma, dtype=float), rtol=1e-12)
    assert seen[True] >= 8 and seen[False] >= 16  # both sides of the edge were visited


def test_a_fit_on_the_device_evaluates_its_warm_starts_there():
    cov, _ = _cov(20, 5)
    loop_stats(reset=True)
    res = _fit(cov=cov, variant="nv", **TWO)
    st = loop_stats()
    # a warm start per stage (no back-off here: s was accepted at once) and a running average per stage
    assert tuple(res.s_used) == TWO["s_schedule"]
    assert st["evaluations"] == 2 * len(TWO["mu_schedule"])
