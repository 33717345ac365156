"""The JAX backend of CoLiDE's stage loops: the same central path, compiled, on a GPU or the CPU (issue 33).

``CoLiDE(device=...)`` (the run setting ``device``, :mod:`colide_core.settings`) picks where the
stage loops run:

* ``"cpu"`` (the default): today's numpy / numba solvers, unchanged; JAX is never imported;
* ``"gpu"``: this backend on the first GPU JAX sees; :class:`~colide_core.exceptions.DeviceUnavailableError`
  when JAX is not installed or sees no GPU;
* ``"auto"``: ``"gpu"`` when JAX is installed and sees a GPU and the graph has at least
  :data:`colide_core.defaults.AUTO_GPU_MIN_NODES` (200) nodes, else ``"cpu"``;
* ``"jax-cpu"``: this backend on the CPU (what CI tests, and the side-by-side benchmark).

What runs where. Both schedules are :func:`colide_core.solver._fast.fast_solve`'s own stage loop
(Python, one implementation: stage entry and back-off, checkpoints, callback, ``Stop``,
``max_time``, the convergence record, prior knowledge, chatter control, averaging, polishing);
the paper-faithful schedule (``solver="adam"``) is that loop with its accelerations off
(:data:`ALGORITHM_1`, the same iterates as :func:`colide_core.colide_solve`, tested in
``tests/test_fast_solver.py``). This module replaces the loop's compiled kernel, the Adam phase
between two checkpoints (``fast_solve(engine=jax_kernels())``): :func:`adam_chunk_jax` runs those steps as one
``jax.jit``-compiled ``lax.while_loop`` in float64 (``jax_enable_x64``), so there is no Python
and no kernel launch per step. Each step is the numba kernel's: the gradient of the stage
objective (paper eq. 4 / 6 with the log-det term, Appendix B), Adam's moments, the step with
Algorithm 1's halving back-off inside the log-det domain, the ``d x d`` inverse (only every few
steps, with the O(d^2) M-matrix certificate in between, exactly as the fast loop does), the
closed-form sigma (eq. 5 / 7) and the running average. The inverse is a 2 x 2 block
(Schur-complement) recursion, gemm-bound like the numba kernel's, on which a GPU does best, or
one ``jnp.linalg.inv`` call: :data:`_INVERSE` chooses per platform (issue 50; ``"block"`` on both,
measured faster on an H200 at d = 1000-4000: docs/gpu.md, "The whole loop on a GPU").

Since issue 50 each stage's whole Adam phase, the checkpoints' evaluation and stopping rule
included, runs as one compiled loop on the device (:mod:`colide_core.solver._jax_loop`, reached
through :func:`adam_chunk_loop`'s ``adam_phase``, the default of :func:`jax_kernels`); the host
hears it at a bounded rate for the callback, ``Stop`` and ``max_time``.

The objective is written once, in :mod:`colide_core.solver._objective` (numpy, on the host: the
CPU solvers' and the chunk path's checkpoint objective); the whole loop's checkpoints, the last
stage's polishing and the evaluation of a stage's warm start and running average (on the device
since issue 50, :mod:`colide_core.solver._jax_loop`) repeat its arithmetic in JAX; the kernel's gradient and sigma update
repeat its arithmetic as the numba kernel does, and ``tests/test_jax_backend.py`` pins them to
:func:`~colide_core.stage_objective` to 1e-12.

JAX is imported lazily (on the first fit with a device other than ``"cpu"``): the library runs
without it. Conditions (the per-node covariance form) and CoLiDE-TOPO run on the CPU only
(:class:`~colide_core.exceptions.DeviceNotSupportedError`).

Conventions: ``cov`` is the ``(n_nodes, n_nodes)`` covariance ``X.T @ X / n`` of centred data
``X`` of shape ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means the edge i -> j.
"""
from __future__ import annotations

import contextlib
import functools
import sys
import threading
import time
import types

import numpy as np

from colide_core import defaults
from colide_core.exceptions import DeviceNotSupportedError, DeviceUnavailableError
from colide_core.solver._objective import _DOMAIN_TOL

__all__ = ["ALGORITHM_1", "adam_chunk_jax", "adam_chunk_loop", "device_solver", "gpu_present", "have_jax", "jax_kernels",
           "kernel_stats", "resolve_device"]

#: The fast loop's accelerations off: one unscaled Adam step per BCD iteration, an inverse every
#: step, the faithful stopping rule (``switch_tol`` is set to ``tol``). This is Algorithm 1 (same
#: iterates as :func:`colide_core.colide_solve` up to rounding).
ALGORITHM_1 = dict(step_scale=1, polish=False, chatter_tol=None, average=False, inverse_every=1)
#: Blocks up to this size are inverted directly in the block inverse (measured on this 2-core
#: CPU: 64 and 32 equally fast at d = 200 and 500).
_LEAF = 64
#: The step's ``d x d`` inverse, per JAX platform (issue 50): ``"block"``, the 2 x 2 Schur recursion
#: of :func:`_parts` (gemm-bound, 64-wide leaves; on this CPU as fast as ``jnp.linalg.inv`` at
#: d = 500 and 1.1x faster at d = 1000, docs/gpu.md), or ``"direct"``, one ``jnp.linalg.inv``
#: call (LAPACK / cuSOLVER's pivoted LU). Private: which one a GPU should use is what
#: ``benchmarks/gpu_check.sh host``'s tables decide (fits with both, and the linalg table). On one
#: H200 (2026-11-29) the block inverse took 3.2 / 6.5 / 14.7 ms against ``jnp.linalg.inv``'s
#: 3.5 / 7.6 / 19.7 ms at d = 1000 / 2000 / 4000, and the d = 1000 fit 14.8 s against 15.7 s:
#: both platforms keep ``"block"``. A benchmark overrides it for the solves
#: of one block with ``_on_device(dev, inverse=...)``. Never chosen by timing: a result depends on
#: the platform and this table only.
_INVERSE = {"cpu": "block", "gpu": "block"}
_INVERSES = ("block", "direct")
#: How to get JAX (the message of DeviceUnavailableError).
_INSTALL = ("pip install 'colide-dashboard[jax]' (jax==0.10.2, jaxlib==0.10.2; for NVIDIA GPUs JAX's CUDA build, "
            "jax[cuda12] or jax[cuda13])")

#: Why the backend refuses the per-node covariance form.
NO_CONDITIONS = "Several conditions (the per-node covariance form) run on the CPU solvers only; use device='cpu'."

_JAX = {}
_LOCAL = threading.local()  # the device of the running solve, its constants, and the kernel counters


def _import_jax():
    """The ``jax`` module with float64 enabled; DeviceUnavailableError when it is not installed."""
    if "jax" not in _JAX:
        try:
            import jax
        except ImportError as exc:
            raise DeviceUnavailableError(f"This device needs JAX, which is not installed: {_INSTALL}.") from exc
        jax.config.update("jax_enable_x64", True)  # CoLiDE's iterates are float64 on every backend
        _JAX["jax"] = jax
    return _JAX["jax"]


def have_jax():
    """True when JAX can be imported (without importing it twice).

    Returns
    -------
    bool
    """
    try:
        _import_jax()
    except DeviceUnavailableError:
        return False
    return True


_GPU_PROBE = {}
_GPU_PROBE_LOCK = threading.Lock()


def gpu_present():
    """Whether this process can run ``device="gpu"``: JAX is installed and sees a GPU.

    Probed once per process, on the first call (then cached): without JAX installed the answer
    is False without importing anything; otherwise JAX is imported (about a second, once) and
    asked for its GPU devices. Callers that must not pay for it (a page that does not need the
    answer, a ``device="cpu"`` fit) simply do not call it. The dashboard raises its node limit
    with it (``dashboard.data.node_limit``); tests replace it with ``monkeypatch``.

    Returns
    -------
    bool
        True when :func:`resolve_device` ``("gpu")`` would return a device.
    """
    with _GPU_PROBE_LOCK:
        if "present" not in _GPU_PROBE:
            import importlib.util

            present = False
            if importlib.util.find_spec("jax") is not None:
                try:
                    present = bool(_gpus(_import_jax()))
                except Exception:  # noqa: BLE001 - a broken CUDA install is "no usable GPU", never a crash
                    present = False
            _GPU_PROBE["present"] = present
        return _GPU_PROBE["present"]


def _gpus(jax):
    try:
        return list(jax.devices("gpu"))
    except RuntimeError:  # no GPU backend (CPU-only jaxlib, no CUDA plugin, no driver)
        return []


def resolve_device(device):
    """The JAX device a ``device`` setting runs on, or None for the numpy / numba solvers.

    Parameters
    ----------
    device : {"cpu", "gpu", "auto", "jax-cpu"}
        The run setting (:data:`colide_core.defaults.DEVICES`).

    Returns
    -------
    jax.Device or None
        None for ``"cpu"`` and for ``"auto"`` without a GPU (or without JAX).

    Raises
    ------
    DeviceUnavailableError
        ``"gpu"`` without JAX or without a GPU JAX can see; ``"jax-cpu"`` without JAX.
    ValueError
        For another value.
    """
    if device == "cpu":
        return None
    if device == "auto":
        if not have_jax():
            return None
        gpus = _gpus(_import_jax())
        return gpus[0] if gpus else None
    if device == "jax-cpu":
        return _import_jax().devices("cpu")[0]
    if device == "gpu":
        jax = _import_jax()
        gpus = _gpus(jax)
        if not gpus:
            raise DeviceUnavailableError(
                f"device='gpu': JAX {jax.__version__} sees no GPU (devices: "
                f"{', '.join(sorted({d.platform for d in jax.devices()}))}). Install a CUDA-enabled JAX "
                "(pip install 'jax[cuda12]' or 'jax[cuda13]') on a machine with an NVIDIA GPU, or use device='auto' (falls "
                "back to the CPU) or 'cpu'."
            )
        return gpus[0]
    raise ValueError(f"device must be one of {defaults.DEVICES}, got {device!r}.")


def _is_node_form(cov):
    from colide_core.solver import _objective

    node_cls = getattr(_objective, "NodeCovariance", None)
    return node_cls is not None and isinstance(cov, node_cls)


def runs_on_device(solver, device, n_nodes=None):
    """Whether :func:`device_solver` gives ``solver`` on ``device`` this backend rather than a CPU loop.

    The one rule of where a fit's stage loop runs: ``"cpu"`` never; ``"auto"`` only on a GPU
    (:func:`gpu_present`, probed only here), from :data:`colide_core.defaults.AUTO_GPU_MIN_NODES`
    nodes up, and never for ``solver="topo"``; ``"gpu"`` and ``"jax-cpu"`` always (``"topo"``
    there is refused by :func:`device_solver`). Several conditions (the per-node covariance form)
    still run on the CPU under ``"auto"``, which this rule cannot see from a solver and a size.

    Parameters
    ----------
    solver : {"auto", "fast", "adam", "topo"}
    device : {"cpu", "gpu", "auto", "jax-cpu"}
    n_nodes : int, optional
        The problem's size; None counts as large.

    Returns
    -------
    bool

    Examples
    --------
    >>> runs_on_device("fast", "cpu", 1000), runs_on_device("topo", "auto", 1000)
    (False, False)
    >>> runs_on_device("fast", "auto", 50)   # below AUTO_GPU_MIN_NODES: the CPU, no probe
    False
    """
    if device == "cpu":
        return False
    if device == "auto":
        small = n_nodes is not None and n_nodes < defaults.AUTO_GPU_MIN_NODES
        return solver != "topo" and not small and gpu_present()
    return True


def device_solver(solver, device, n_nodes=None):
    """The stage loop for ``solver`` on ``device``: a CPU loop of :data:`~colide_core.SOLVERS`, or this backend.

    Parameters
    ----------
    solver : {"auto", "fast", "adam", "topo"}
    device : {"cpu", "gpu", "auto", "jax-cpu"}
    n_nodes : int, optional
        The problem's size: ``"auto"`` uses a GPU only from
        :data:`colide_core.defaults.AUTO_GPU_MIN_NODES` nodes up (below, the CPU solvers are as
        fast or faster).

    Returns
    -------
    callable
        ``solve(cov, settings=None, **kwargs) -> SolverResult`` with the arguments of
        :func:`colide_core.solver._fast.fast_solve` / :func:`colide_core.colide_solve`.

    Raises
    ------
    DeviceUnavailableError
        As :func:`resolve_device`.
    DeviceNotSupportedError
        ``solver="topo"`` on ``"gpu"`` or ``"jax-cpu"`` (``"auto"`` runs it on the CPU); the
        returned loop raises it for the per-node covariance form (conditions) on ``"gpu"`` and
        ``"jax-cpu"``, and runs that form on the CPU solvers with ``"auto"``.
    """
    from colide_core.solver.registry import get_solver

    loop = get_solver(solver)
    small = n_nodes is not None and n_nodes < defaults.AUTO_GPU_MIN_NODES
    if device == "cpu" or (device == "auto" and (solver == "topo" or small)):  # runs_on_device's rule,
        return loop  # without its GPU probe: "auto" asks resolve_device below
    if solver == "topo":
        raise DeviceNotSupportedError(
            f"solver='topo' (CoLiDE-TOPO's order search) runs on the CPU only; use device='cpu' or 'auto', "
            f"not {device!r}."
        )
    dev = resolve_device(device)
    if dev is None:
        return loop
    faithful = solver == "adam"

    def solve(cov, settings=None, **kwargs):
        from colide_core.solver._common import loop_settings
        from colide_core.solver._fast import fast_solve

        if _is_node_form(cov):
            if device == "auto":  # "auto" runs what the device cannot on the CPU, as it does TOPO
                return loop(cov, settings, **kwargs)
            raise DeviceNotSupportedError(
                "Several conditions (the per-node covariance form) run on the CPU solvers only; use "
                "device='cpu' or 'auto'."
            )
        params = {k: kwargs.pop(k) for k in list(kwargs) if k in _setting_names()}
        st = loop_settings(settings, params)
        if solver == "auto":
            # the same candidates as on the CPU (issue 51): the fast solve on the device, then the
            # order search (a CPU loop) from it when the budget allows
            from colide_core.solver._auto import auto_solve

            def on_device(c, s, **kw):
                with _on_device(dev):
                    return fast_solve(c, s, engine=jax_kernels(), **kw)

            return auto_solve(cov, st, fast_loop=on_device, **kwargs)
        for key in ("precedence", "init_order", "budget", "start"):  # the CPU order search's own (solver="auto")
            kwargs.pop(key, None)
        extra = dict(ALGORITHM_1, switch_tol=st.tol) if faithful else {}
        with _on_device(dev):
            return fast_solve(cov, st, engine=jax_kernels(), **{**kwargs, **extra})

    solve.__name__ = f"{getattr(loop, '__name__', solver)}_on_{dev.platform}"
    solve.__doc__ = f"{getattr(loop, '__name__', solver)} on {dev} (colide_core.solver._jax.device_solver)."
    return solve


def jax_kernels(loop=True):
    """The fast loop's kernels with the Adam phase compiled by JAX: ``fast_solve(engine=jax_kernels())``.

    Parameters
    ----------
    loop : bool, default=True
        True: each stage's whole Adam phase (its chunks of steps, the checkpoint evaluations,
        the convergence test and the chatter control) runs as one compiled loop on the device,
        seen by the host only at a bounded rate (:mod:`colide_core.solver._jax_loop`, issue 50).
        False: only the chunks between two checkpoints are compiled (:func:`adam_chunk_jax`)
        and every checkpoint is evaluated on the host (issue 33's backend; the benchmark's
        comparison).

    Returns
    -------
    tuple of 3 callables
        The Adam kernel (with ``loop``, one that carries the whole phase as its ``adam_phase``
        attribute and the last stage's polishing as its ``polish_phase``, read by
        :func:`colide_core.solver._fast.fast_solve`) and the host kernels of the polishing phase
        (the numba ones when numba is installed, as ``engine="auto"``; used without ``loop`` and
        with ``record_W``).
    """
    from colide_core.solver import _fast

    if loop:
        return adam_chunk_loop, _fast._grad, _fast._prox
    return adam_chunk_jax, _fast._grad, _fast._prox


def adam_chunk_loop(*args):
    """:func:`adam_chunk_jax`, carrying the whole stage loop as its ``adam_phase`` attribute and the
    polishing as its ``polish_phase`` (issue 50).

    Same arguments and return value as the chunk kernel. :func:`colide_core.solver._fast.fast_solve`
    reads ``adam_phase`` and runs each stage's Adam phase through it
    (:func:`colide_core.solver._jax_loop.adam_phase`), falling back to this chunk kernel where the
    phase declines (``record_W``).
    """
    return adam_chunk_jax(*args)


def _whole_phase(state, Wbar, **kw):
    from colide_core.solver import _jax_loop

    return _jax_loop.adam_phase(state, Wbar, backend=sys.modules[__name__], **kw)


def _device_polish(W, **kw):
    from colide_core.solver import _jax_loop

    return _jax_loop.polish_phase(W, backend=sys.modules[__name__], **kw)


def _device_evaluate(*args):
    from colide_core.solver import _jax_loop

    return _jax_loop.evaluate_point(*args, backend=sys.modules[__name__])


adam_chunk_loop.adam_phase = _whole_phase
adam_chunk_loop.polish_phase = _device_polish


def _setting_names():
    from colide_core.settings import SETTING_NAMES

    return SETTING_NAMES


@contextlib.contextmanager
def _on_device(dev, inverse=None):
    """Run the block's kernels on ``dev``; forget the device copies of the constants afterwards.

    ``inverse``: ``"block"`` or ``"direct"`` for the solves of this block (the benchmark's
    side-by-side, issue 50), or None for the platform's choice (:data:`_INVERSE`).
    """
    if inverse is not None and inverse not in _INVERSES:
        raise ValueError(f"inverse must be one of {_INVERSES}, got {inverse!r}.")
    prev = getattr(_LOCAL, "device", None), getattr(_LOCAL, "inverse", None)
    _LOCAL.device, _LOCAL.inverse = dev, inverse
    try:
        yield
    finally:
        _LOCAL.device, _LOCAL.inverse = prev
        _LOCAL.consts = None


def _inverse_for(dev):
    """The step's inverse on ``dev``: the running block's override, else the platform's (:data:`_INVERSE`)."""
    return getattr(_LOCAL, "inverse", None) or _INVERSE.get(dev.platform, "block")


def kernel_stats(reset=False):
    """What :func:`adam_chunk_jax` did in this thread: calls, steps and seconds (compile included).

    Parameters
    ----------
    reset : bool, default=False
        Zero the counters after reading them.

    Returns
    -------
    dict
        ``{"calls": int, "steps": int, "seconds": float}``; ``seconds`` is the wall time spent
        in the kernel, transfers to and from the device included (the benchmark's "GPU share").
    """
    stats = getattr(_LOCAL, "stats", None) or {"calls": 0, "steps": 0, "seconds": 0.0}
    out = dict(stats)
    if reset or getattr(_LOCAL, "stats", None) is None:
        _LOCAL.stats = {"calls": 0, "steps": 0, "seconds": 0.0}
    return out


# --------------------------------------------------------------------------------------------
# The compiled kernel
# --------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _parts():
    """The kernel's pure pieces as JAX functions (``tests/test_jax_backend.py`` pins them to
    :mod:`colide_core.solver._objective`): the block inverse, the stage gradient, the
    residual / sigma update, and the domain certificates."""
    jax = _import_jax()
    jnp = jax.numpy
    from colide_core.solver._fast import _CERT_MARGIN

    def block_inv(M):
        """inv(M) by 2 x 2 block recursion on Schur complements (unrolled at trace time).

        With ``M = [[A, B], [C, D]]`` and ``S = D - C A^-1 B``: ``inv(M) = [[A^-1 + A^-1 B S^-1
        C A^-1, -A^-1 B S^-1], [-S^-1 C A^-1, S^-1]]``, as the numba kernel's. No pivoting:
        stable for M-matrices (their Schur complements are M-matrices); outside the domain
        the result fails the solver's test (finite and entry-wise >= -1e-6).
        """
        d = M.shape[0]
        if d <= _LEAF:
            return jnp.linalg.inv(M)
        h = d // 2
        A, B, C, D = M[:h, :h], M[:h, h:], M[h:, :h], M[h:, h:]
        Ai = block_inv(A)
        CAi = C @ Ai
        Si = block_inv(D - CAi @ B)
        X12 = (Ai @ B) @ Si
        return jnp.block([[Ai + X12 @ CAi, -X12], [-(Si @ CAi), Si]])

    def stage_grad(W, R, MinvT, isig, mu, lam, mask):
        """``(mu (-R / sigma + lam sign(W)) + 2 MinvT o W) o mask``: the (sub)gradient of the stage
        objective (eq. 4 / 6 plus h_ldet; :func:`colide_core.solver._objective._stage_grad`),
        with ``R = cov (I - W)``, ``MinvT = inv(s I - W o W).T`` and ``isig = 1 / sigma`` per node."""
        return (mu * (-R * isig[None, :] + lam * jnp.sign(W)) + 2.0 * MinvT * W) * mask

    def residuals_sigma(W, cov, isig, sig0, vcode):
        """``R = cov - cov W``, ``resid = diag((I - W)^T cov (I - W))`` and ``1 / sigma`` of eq. 5 (EV),
        eq. 7 (NV) floored at ``sig0``, or ``isig`` unchanged (LS)
        (:func:`colide_core.solver._objective.residuals`, ``_sigma_from_resid``)."""
        d = W.shape[0]
        R = cov - cov @ W
        resid = jnp.diagonal(R) - jnp.sum(W * R, axis=0)
        if vcode == 0:
            sg = jnp.maximum(jnp.sqrt(jnp.maximum(jnp.sum(resid), 0.0) / d), sig0[0])
            isig = jnp.full_like(isig, 1.0 / sg)
        elif vcode == 1:
            isig = 1.0 / jnp.maximum(jnp.sqrt(jnp.maximum(resid, 0.0)), sig0)
        return R, resid, isig

    def certify(Wn, s, x, A=None):
        """``(s I - Wn o Wn) x > margin s x`` with ``x > 0``: Wn is inside the log-det domain
        (:func:`colide_core.solver._fast._certify_py`). ``A``: the required edges' ``tau R``
        (subtracted from the matrix), or None."""
        y = s * x - (Wn * Wn) @ x
        if A is not None:
            y = y - A @ x
        return jnp.all(x > 0.0) & jnp.all(y > _CERT_MARGIN * s * x)

    def refine_cert(Wn, MinvT, s, x, A=None):
        """The refined certificate (:func:`colide_core.solver._fast._refine_cert_py`): ``(ok, x)``."""
        M = s * jnp.eye(Wn.shape[0], dtype=Wn.dtype) - Wn * Wn
        if A is not None:
            M = M - A
        x2 = x + MinvT.T @ (1.0 - M @ x)
        ok = jnp.all(x2 > 0.0) & jnp.all(M @ x2 > _CERT_MARGIN * s * x2)
        return ok, jnp.where(ok, x2, x)

    # the step's inverse by name (:data:`_INVERSE`): the block recursion, or one LAPACK / cuSOLVER call
    inverses = {"block": block_inv, "direct": jnp.linalg.inv}
    return types.SimpleNamespace(block_inv=block_inv, inverses=inverses, stage_grad=stage_grad,
                                 residuals_sigma=residuals_sigma, certify=certify, refine_cert=refine_cert)


@functools.lru_cache(maxsize=None)
def _compiled_chunk(vcode, required=False, inverse="block"):
    """The jitted Adam phase for one variant code (0 EV, 1 NV, 2 LS); compiled per matrix size.

    ``required``: the chunk's argument ``A`` is the required edges' ``tau R``, subtracted from
    ``s I - W o W`` in the inverses and the certificates (:func:`colide_core.solver._objective.
    required_offset`); else ``A`` is ignored and the traced arithmetic is the plain one.
    ``inverse``: the step's inverse, ``"block"`` or ``"direct"`` (:data:`_INVERSE`).
    """
    return _import_jax().jit(_chunk_fn(vcode, required, inverse))


@functools.lru_cache(maxsize=None)
def _chunk_fn(vcode, required=False, inverse="block"):
    """The Adam phase of :func:`_compiled_chunk` as a traceable function, not jitted: the whole
    stage loop (:mod:`colide_core.solver._jax_loop`, issue 50) calls it inside its own loop."""
    jax = _import_jax()
    jnp, lax = jax.numpy, jax.lax
    P = _parts()
    inv = P.inverses[inverse]

    def chunk(W, m, v, MinvT, R, resid, isig, Wbar, xc, lag, cov, lam, mask, sig0, A,
              mu, s, lr, b1, b2, b1t, b2t, ema, nsteps, max_halvings, refresh, refine):
        eye = jnp.eye(W.shape[0], dtype=W.dtype)
        false = jnp.asarray(False)
        A = A if required else None

        def step(carry):
            i, status, W, m, v, MinvT, R, resid, isig, Wbar, xc, lag, lr, b1t, b2t = carry
            b1t = b1t * b1
            b2t = b2t * b2
            c1 = 1.0 / (1.0 - b1t)
            c2 = 1.0 / jnp.sqrt(1.0 - b2t)
            G = P.stage_grad(W, R, MinvT, isig, mu, lam, mask)
            m = b1 * m + (1.0 - b1) * G
            v = b2 * v + (1.0 - b2) * (G * G)
            bad = ~jnp.all(jnp.isfinite(v + jnp.abs(m)))  # moments overflow: never a silent zero step
            D = (m * c1) / (jnp.sqrt(v) * c2 + 1e-8)

            def try_step(c):
                # One try of the step W - lr D: certified in O(d^2) while the inverse is fresh
                # enough (``lag``), else inverted; outside the domain lr halves (Algorithm 1).
                lr_c, halvings, _, _, _, Mt_c, x_c, lag_c = c
                Wn = W - lr_c * D
                can = (lag_c + 1 < refresh) & (lag_c >= 0)
                cert = lax.cond(can, lambda: P.certify(Wn, s, x_c, A), lambda: false)
                ref_ok, x_r = lax.cond(can & ~cert & refine, lambda: P.refine_cert(Wn, Mt_c, s, x_c, A),
                                       lambda: (false, x_c))

                def inverted():
                    Minv = inv(s * eye - Wn * Wn if A is None else s * eye - Wn * Wn - A)
                    ok = jnp.all(jnp.isfinite(Minv)) & (jnp.min(Minv) >= _DOMAIN_TOL)
                    Mt_n = Minv.T
                    x_n = Mt_n.sum(axis=0)  # inv(M) @ 1: the next certificate
                    lag_n = jnp.where(jnp.all(x_n > 0.0), 0, -1).astype(lag_c.dtype)
                    return ok, jnp.where(ok, Mt_n, Mt_c), jnp.where(ok, x_n, x_c), jnp.where(ok, lag_n, lag_c)

                ok, Mt_n, x_n, lag_n = lax.cond(cert | ref_ok, lambda: (jnp.asarray(True), Mt_c, x_r, lag_c + 1),
                                                inverted)
                halvings = halvings + jnp.where(ok, 0, 1)
                fail = ~ok & (halvings > max_halvings)
                lr_n = jnp.where(ok | fail, lr_c, 0.5 * lr_c)
                return lr_n, halvings, ok, fail, Wn, Mt_n, x_n, lag_n

            init = (lr, jnp.asarray(0), bad, false, W, MinvT, xc, lag)
            lr, _, _, fail, Wn, MinvT, xc, lag = lax.while_loop(lambda c: ~(c[2] | c[3]), try_step, init)
            status = jnp.where(bad, 2, jnp.where(fail, 1, 0))
            Wbar = Wbar + ema * (Wn - Wbar)
            R, resid, isig = P.residuals_sigma(Wn, cov, isig, sig0, vcode)
            return i + 1, status, Wn, m, v, MinvT, R, resid, isig, Wbar, xc, lag, lr, b1t, b2t

        carry = (jnp.asarray(0), jnp.asarray(0), W, m, v, MinvT, R, resid, isig, Wbar, xc, lag, lr, b1t, b2t)
        out = lax.while_loop(lambda c: (c[0] < nsteps) & (c[1] == 0), step, carry)
        return out[1:]

    return chunk


def _constants(jax, dev, cov, lam, mask, sig0):
    """Device copies of a solve's constant arrays, made once per solve (same objects: reused)."""
    cached = getattr(_LOCAL, "consts", None)
    if cached is not None and cached[0] is dev and all(a is b for a, b in zip(cached[1], (cov, lam, mask, sig0))):
        return cached[2]
    arrays = tuple(jax.device_put(np.asarray(a, dtype=float), dev) for a in (cov, lam, mask, sig0))
    _LOCAL.consts = (dev, (cov, lam, mask, sig0), arrays)
    return arrays


def adam_chunk_jax(W, m, v, MinvT, R, resid, isig, cov, lam, mask, mu, s, lr, b1, b2, b1t, b2t,
                   sig0, vcode, nsteps, max_halvings, Wbar, ema, refresh, lag, xc, refine, *grouped):
    """The fast loop's Adam kernel (:func:`jax_kernels`): ``nsteps`` compiled BCD steps, in place.

    Same arguments, same in-place updates and same return value as
    :func:`colide_core.solver._fast._adam_chunk_py` (read its docstring): the arrays are copied to
    the device of the running solve (JAX's default device outside :func:`device_solver`), the
    steps run as one ``lax.while_loop`` and the results are copied back.

    Returns
    -------
    status : int
        0; 1 when a step had to be halved more than ``max_halvings`` times; 2 when Adam's
        moments overflow.
    lr, b1t, b2t : float

    Raises
    ------
    DeviceNotSupportedError
        For the per-node covariance form (``grouped``, several conditions).

    Notes
    -----
    ``grouped`` ends with the required edges ``(rq_i, rq_j, tau)`` of the fast loop
    (:func:`colide_core.solver._fast._adam_chunk_py`): with any, the chunk compiled for them
    subtracts ``tau R`` from ``s I - W o W`` (``h_ldet`` of ``W o W + tau R``).
    """
    if len(grouped) >= 6 and bool(grouped[5]):
        raise DeviceNotSupportedError(NO_CONDITIONS)
    jax = _import_jax()
    t0 = time.perf_counter()
    dev = getattr(_LOCAL, "device", None)
    if dev is None:
        dev = jax.devices()[0]
    put = functools.partial(jax.device_put, device=dev)
    cov_d, lam_d, mask_d, sig0_d = _constants(jax, dev, cov, lam, mask, sig0)
    rq_i, rq_j, tau = grouped[6:9] if len(grouped) >= 9 else ((), (), 0.0)
    required = len(rq_i) > 0
    if required:
        A = np.zeros(np.shape(W))
        A[np.asarray(rq_i), np.asarray(rq_j)] = float(tau)
    else:
        A = np.zeros((1, 1))  # ignored by the plain chunk
    f = _compiled_chunk(int(vcode), required, _inverse_for(dev))
    out = f(put(W), put(m), put(v), put(MinvT), put(R), put(resid), put(isig), put(Wbar), put(xc),
            put(np.int64(lag[0])), cov_d, lam_d, mask_d, sig0_d, put(A),
            float(mu), float(s), float(lr), float(b1), float(b2), float(b1t), float(b2t), float(ema),
            int(nsteps), int(max_halvings), int(refresh), bool(refine))
    status, W_o, m_o, v_o, Mt_o, R_o, resid_o, isig_o, Wbar_o, xc_o, lag_o, lr_o, b1t_o, b2t_o = jax.device_get(out)
    for dst, src in ((W, W_o), (m, m_o), (v, v_o), (MinvT, Mt_o), (R, R_o), (resid, resid_o), (isig, isig_o),
                     (Wbar, Wbar_o), (xc, xc_o)):
        dst[...] = src
    lag[0] = int(lag_o)
    stats = getattr(_LOCAL, "stats", None)
    if stats is None:
        stats = _LOCAL.stats = {"calls": 0, "steps": 0, "seconds": 0.0}
    stats["calls"] += 1
    stats["steps"] += int(nsteps)
    stats["seconds"] += time.perf_counter() - t0
    return int(status), float(lr_o), float(b1t_o), float(b2t_o)


# Both paths (the whole loop and issue 33's chunks) evaluate a stage's warm start and the running
# average's point on the device, with one function: the loop's fit stays the chunk path's.
adam_chunk_loop.evaluate_point = adam_chunk_jax.evaluate_point = _device_evaluate
