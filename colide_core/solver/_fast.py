"""Fast solver for CoLiDE-EV / CoLiDE-NV: same problems, same central path, far fewer and cheaper steps.

:func:`fast_solve` is a drop-in replacement for :func:`colide_core.solver._solver.colide_solve` (it returns
the same :class:`~colide_core.SolverResult`, and shares its set-up and finish in
:mod:`colide_core.solver._common` and its objective in :mod:`colide_core.solver._objective`). It solves, stage after stage, exactly the
paper's problems: ``mu_k * (score(W, sigma) + lambda1 |W|_1) + h_ldet(W, s_k)`` with the score of
eq. 4 (EV) or eq. 6 (NV) and sigma given by the closed forms of eq. 5 / eq. 7, warm-started along
the same central path ``(mu_k, s_k)``. What changes is how each stage is solved: see
:func:`fast_solve` and ``docs/fast-solver.md``.

Conventions: ``cov`` is the ``(n_nodes, n_nodes)`` covariance ``X.T @ X / n`` of centred data
``X`` of shape ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means the edge i -> j.

The per-iteration kernels are compiled with numba when it is installed (``cache=True``: the first
call in a fresh environment compiles them once, later processes load them from disk); otherwise an
equivalent vectorised numpy implementation is used. Both give the same iterates up to rounding.
"""
from __future__ import annotations

import contextlib
import math
import threading
import time
import warnings

import numpy as np
from scipy.linalg import lapack
from threadpoolctl import ThreadpoolController

from colide_core import defaults
from colide_core.solver._common import loop_settings, _MAX_HALVINGS, ConvergenceWarning, _Solve
from colide_core.solver._objective import _DOMAIN_TOL, _sigma_from_resid, _stage_value, as_node_form

__all__ = ["fast_solve", "HAVE_NUMBA", "warmup"]

try:  # numba is optional: without it the same algorithm runs on numpy (slower at small d)
    import numba as _numba
except ImportError:  # pragma: no cover - exercised only where numba is absent
    _numba = None

HAVE_NUMBA = _numba is not None

#: Default step-scale factor per stage (see :func:`fast_solve`): 10 for every stage but the
#: last. In the last stage, where the barrier dominates, larger Adam steps can drift to worse
#: local optima: measured against the faithful solver (with the chatter tolerance below),
#: CoLiDE-EV keeps its graphs with 6 (mean SHD within 0.5 on 20 ER4 graphs with d = 10/20,
#: same SHD on Sachs) but not with 10 (ER4-EV d = 20: mean SHD 11.7 -> 13.1); CoLiDE-NV keeps
#: them with 10 (36 ER4 graphs, d = 10..100: mean SHD equal or lower, ~10% fewer steps than 6).
_SCALE_EARLY = 10.0
_SCALE_LAST = {"ev": 6.0, "nv": 10.0, "ls": 6.0}
#: Relative change of the averaged objective between checkpoints that ends the last stage's
#: Adam phase (the polishing phase then converges to ``tol / 10``). Not looser: with 1e-4 the
#: last stage of ill-conditioned EV fits is cut short and lands elsewhere (bench problems EV
#: d = 50 / 100, 10 seeds each: mean SHD 27.8 / 51.4 -> 30.2 / 52.6, seed 101 at d = 50 62 -> 86
#: with the objective +2.2e-2, for 10% fewer steps).
_SWITCH_TOL_LAST = 1e-5
#: Polishing: nonmonotone memory, sufficient-decrease constant, step bounds.
_NM_MEMORY = 5
_ARMIJO = 1e-4
_ETA_MIN, _ETA_MAX = 1e-12, 1e3
#: Condition number of cov up to which the full default step scale is used.
_COND_REF = 1e6
#: The step size the default scales were measured with (Algorithm 1's 3e-4). A larger ``lr``
#: shrinks the default scales by ``_LR_REF / lr`` (never below 1): the scaled step
#: ``c_k * lr`` then stays at most ``c_k * 3e-4``, where it was validated. Measured without
#: this cap on a d = 8 EV SEM with ``lr = 3e-3`` and budgets (500, 500, 500, 1000): objective
#: 1% above the faithful solver's and weights 58% off the truth, against 26% for the faithful.
_LR_REF = 3e-4
#: Default chatter tolerance ``_CHATTER_REF[variant] * phi`` with ``phi`` in [0.1, 1] the
#: conditioning factor. CoLiDE-NV tolerates 1e-3 (ER4-NV d = 100, 8 graphs: 2.3x fewer steps
#: with the last-stage scale 6, same mean SHD). CoLiDE-EV needs 3e-4: with 1e-3 a scaled stage
#: can hover about 1e-3 above the stage optimum the faithful step reaches, and the next stages
#: start from a different point (ER4-EV, 10 graphs each, against the faithful solver: d = 20
#: mean SHD 12.0 -> 11.1 (faithful 11.7), final objective > +1e-3 on 3 -> 1 graphs, 8% more
#: steps; d = 10, 50, 100 and the issue's trap: same mean SHD within 0.1, at most 9% more
#: steps). Ill-conditioned covariances need the tight end (scaled EV steps with a loose
#: tolerance cost SHD at d >= 50, measured).
_CHATTER_REF = {"ev": 3e-4, "nv": 1e-3, "ls": 1e-3}
#: Relative margin of the O(d^2) domain certificate (:func:`_certify_py`).
_CERT_MARGIN = 1e-8
#: Adam steps per d x d inverse under ``inverse_every="auto"``: ``_INVERSE_EVERY_MAX`` at the
#: faithful step (step scale 1), ``_INVERSE_EVERY`` at larger ones (:func:`_auto_inverse_every`).
_INVERSE_EVERY = 3
_INVERSE_EVERY_MAX = 10
_VCODE = {"ev": 0, "nv": 1, "ls": 2}
_VARIANT = {code: variant for variant, code in _VCODE.items()}


# --------------------------------------------------------------------------------------
# BLAS thread pool. Measured on this 2-core box, idle, OpenBLAS's default pool of one thread per
# core against one thread (benchmarks/research/bench_blas_threads.py, results/bench_blas_threads.txt):
# the numpy engine's steps are 8.9x slower at d = 200 and 3.1x at d = 300 (LAPACK's threaded
# getri on matrices this small); the numba engine's steps are 1.3x slower at d = 100, equal at
# d <= 50, and 9-18% faster at d = 200-300. As soon as two fits overlap (two app sessions,
# joblib workers) two threads per fit oversubscribe the cores (a 150 x 150 inverse measured at
# 0.8 ms -> 15 ms under load). So a solve runs with a one-thread pool unless the caller says
# otherwise: never much slower, often much faster, and its speed does not depend on the load.
# --------------------------------------------------------------------------------------
_BLAS = {"lock": threading.Lock(), "busy": False, "controller": None}


@contextlib.contextmanager
def _blas_threads(n):
    """Run the block with at most ``n`` BLAS threads (threadpoolctl); ``None``: leave them.

    OpenBLAS's pool is process-wide, so one solve at a time owns the limit: it sets it on entry
    and restores the previous setting on exit, in its own thread (threadpoolctl's ownership
    rule). A solve that starts in another thread while the limit is held runs under it without
    touching it, and after the owner restores the setting it runs with the process's default:
    slower, never wrong, and no limit is left behind.
    """
    if n is None:
        yield
        return
    with _BLAS["lock"]:
        owner = not _BLAS["busy"]
        _BLAS["busy"] = True
    if not owner:
        yield
        return
    try:
        if _BLAS["controller"] is None:
            _BLAS["controller"] = ThreadpoolController()
        with _BLAS["controller"].limit(limits=int(n), user_api="blas"):
            yield
    finally:
        with _BLAS["lock"]:
            _BLAS["busy"] = False


# --------------------------------------------------------------------------------------
# Kernels. Each exists twice: a numba version (compiled once, cached on disk) and a numpy
# version with the same signature and the same arithmetic.
# --------------------------------------------------------------------------------------
def _adam_chunk_py(W, m, v, MinvT, R, resid, isig, cov, lam, mask, mu, s, lr, b1, b2, b1t, b2t,
                   sig0, vcode, nsteps, max_halvings, Wbar, ema, refresh, lag, xc, refine,
                   gcov, gcols, gptr, wts, wsum, grouped):
    """``nsteps`` BCD iterations (one Adam step on W, then the closed-form sigma), in place.

    ``grouped``: the per-node covariance form (several conditions with known targets): ``cov``
    is then its ``own`` matrix, ``cov @ W`` is :func:`_grouped_dot_py` of the weighted group
    covariances ``gcov`` (nodes ``gcols[gptr[g]:gptr[g + 1]]`` in group g), and the sigma update
    uses the node weights ``wts`` (sum ``wsum``); else those are placeholders.

    Returns ``(status, lr, b1t, b2t)``; ``status`` is 0, 1 when the step had to be halved
    more than ``max_halvings`` times to stay in the log-det domain, or 2 when Adam's moments
    overflow (gradients beyond ~1e154); W is then unchanged.

    ``MinvT`` is ``inv(s I - W o W).T`` at most ``refresh - 1`` steps old: ``lag[0]`` (an int64
    array of one) is its age in steps (-1: no certificate, invert at the next step) and ``xc``
    the certificate vector ``inv(M) @ 1`` of :func:`_certify_py`, both carried across calls.
    ``refine``: when the certificate fails, try once more with the refined vector of
    :func:`_refine_cert_py` before inverting.
    """
    d = W.shape[0]
    diag = np.arange(d)
    for _ in range(nsteps):
        G = R * (-mu * isig)[None, :]
        G += (mu * lam) * np.sign(W)
        G += 2.0 * MinvT * W
        G *= mask
        m *= b1
        m += (1.0 - b1) * G
        v *= b2
        v += (1.0 - b2) * (G * G)
        b1t *= b1
        b2t *= b2
        if not (np.isfinite(v).all() and np.isfinite(m).all()):
            return 2, lr, b1t, b2t
        D = (m * (1.0 / (1.0 - b1t))) / (np.sqrt(v) * (1.0 / math.sqrt(1.0 - b2t)) + 1e-8)
        halvings = 0
        while True:
            Wn = W - lr * D
            if lag[0] + 1 < refresh and lag[0] >= 0 and (
                _certify_py(Wn, s, xc) or (refine and _refine_cert_py(Wn, MinvT, s, xc))
            ):
                lag[0] += 1
                break
            M = -(Wn * Wn)
            M[diag, diag] += s
            ok = _inv_into_py(M, MinvT)
            if ok:
                lag[0] = 0 if _colsums_py(MinvT, xc) else -1
                break
            halvings += 1
            if halvings > max_halvings:
                return 1, lr, b1t, b2t
            lr *= 0.5
        W[...] = Wn
        Wbar *= 1.0 - ema
        Wbar += ema * Wn
        np.subtract(cov, _grouped_dot_py(gcov, gcols, gptr, W) if grouped else cov @ W, out=R)
        resid[...] = np.diagonal(R) - np.sum(W * R, axis=0)
        _isig_py(resid, sig0, vcode, isig, wts if grouped else None)
    return 0, lr, b1t, b2t


def _grouped_dot_py(gcov, gcols, gptr, W):
    """``P[:, j] = gcov[g(j)] @ W[:, j]``: ``cov @ W`` of the per-node covariance form."""
    out = np.empty_like(W)
    for g in range(gptr.shape[0] - 1):
        J = gcols[gptr[g]:gptr[g + 1]]
        if J.size:
            out[:, J] = gcov[g] @ W[:, J]
    return out


def _certify_py(Wn, s, xc):
    """True if ``(s I - Wn o Wn) xc > 0`` entry-wise, for some ``xc > 0``.

    A Z-matrix ``M`` with ``M x > 0`` for a positive ``x`` (a semipositive Z-matrix) is a
    nonsingular M-matrix (Berman and Plemmons, *Nonnegative Matrices in the Mathematical
    Sciences*, 1994, Theorem 6.2.3): ``s > rho(Wn o Wn)`` and ``inv(M) >= 0``, i.e. ``Wn``
    is inside the log-det domain. With ``xc = inv(M_old) @ 1`` for a nearby earlier ``M_old``,
    ``M xc`` is close to 1, so this O(d^2) test passes for every small step away from the
    boundary and replaces the O(d^3) inverse as the domain test. A relative margin guards
    against rounding.
    """
    y = s * xc - (Wn * Wn) @ xc
    return bool(np.all(xc > 0.0) and np.all(y > _CERT_MARGIN * s * xc))


def _refine_cert_py(Wn, MinvT, s, xc):
    """The certificate of :func:`_certify_py` with ``x2 = xc + inv(M_old) (1 - M xc)``.

    ``MinvT`` is ``inv(M_old).T`` from the last inverse, ``M = s I - Wn o Wn``. One step of
    iterative refinement towards ``inv(M) 1``: with ``E = (M - M_old) inv(M_old)``, ``M xc``
    is ``1 + E 1`` (for ``xc = inv(M_old) 1``) and ``M x2`` is ``1 - E^2 1``, so a step that
    moved ``M`` too far for ``xc`` (near the boundary of the domain ``inv(M)`` is large and
    ``E`` is not small) can still be certified, at O(d^2) instead of an inverse. The test
    stays exact (any ``x > 0`` with ``M x > 0`` proves ``s > rho(Wn o Wn)``). On success
    ``xc`` takes the value ``x2`` (the next steps start from the refined vector).
    """
    M = -(Wn * Wn)
    M.flat[:: M.shape[0] + 1] += s
    x2 = xc + MinvT.T @ (1.0 - M @ xc)
    if not (np.all(x2 > 0.0) and np.all(M @ x2 > _CERT_MARGIN * s * x2)):
        return False
    xc[:] = x2
    return True


def _colsums_py(MinvT, xc):
    """``xc = inv(M) @ 1`` (the column sums of ``MinvT``); False unless all are > 0."""
    xc[:] = MinvT.sum(axis=0)
    return bool(np.all(xc > 0.0))


def _inv_into_py(M, out):
    try:
        lu, piv, info = lapack.dgetrf(M)
        if info != 0:
            return False
        inv, info = lapack.dgetri(lu, piv)
    except (ValueError, np.linalg.LinAlgError):  # pragma: no cover - defensive
        return False
    if info != 0:
        return False
    mn = inv.min()
    if not (mn >= _DOMAIN_TOL) or not np.isfinite(inv.max()):
        return False
    out[...] = inv.T
    return True


def _isig_py(resid, sig0, vcode, isig, weight=None):
    """``isig = 1 / sigma`` with sigma the closed-form update (eq. 5 / eq. 7) of the residuals.

    ``sig0`` is the floor as an array of shape (d,) (all equal for EV); 1 for "ls". ``weight``:
    the node weights of the per-node covariance form (``resid`` weighted), else None.
    """
    if vcode == 2:
        isig[:] = 1.0
    else:
        isig[:] = 1.0 / _sigma_from_resid(resid, _VARIANT[vcode], sig0[0] if vcode == 0 else sig0, weight)


def _grad_py(W, R, MinvT, isig, mu, mask, G):
    """Gradient of the smooth part, ``mu * d score / dW + d h / dW``, masked, into ``G``."""
    np.multiply(R, (-mu * isig)[None, :], out=G)
    G += 2.0 * MinvT * W
    G *= mask
    return G


def _prox_py(W, G, eta, thr, mask, out):
    """Soft-thresholded gradient step ``S_{thr}(W - eta G)``, masked, into ``out``."""
    Z = W - eta * G
    np.multiply(np.sign(Z), np.maximum(np.abs(Z) - thr, 0.0), out=out)
    out *= mask
    return out


_adam_chunk = _adam_chunk_py
_grad = _grad_py
_prox = _prox_py

#: Up to this many nodes the per-node covariance form's product is plain loops (see
#: ``_grouped_dot_nb``); above it, one BLAS gemm per group of nodes.
_GROUPED_LOOP_MAX = 48

#: Blocks up to this size are inverted by scalar Gauss-Jordan in the block inverse of the
#: numba kernels (measured: 16..32 equally fast for d = 50..400, slower outside).
_INV_LEAF = 32

if HAVE_NUMBA:
    _njit = _numba.njit(cache=True, nogil=True)
    # For the O(d^2) Adam pass only: no zero-division branch in the loop, so LLVM can vectorise it.
    _njit_vec = _numba.njit(cache=True, nogil=True, error_model="numpy")

    @_njit
    def _gj_inv_nb(A):  # pragma: no cover - compiled
        """``(ok, inv(A))`` for a small block by Gauss-Jordan without pivoting.

        ``ok`` is False as soon as a pivot is not > 0: for a Z-matrix (all ``s I - W o W`` are)
        the pivots are all positive exactly when it is a nonsingular M-matrix, i.e. when
        ``s > rho(W o W)``, the log-det domain (the leading principal minors test).
        """
        b = A.shape[0]
        P = A.copy()
        for k in range(b):
            p = P[k, k]
            if not (p > 0.0):
                return False, P
            ip = 1.0 / p
            for j in range(b):
                P[k, j] *= ip
            P[k, k] = ip
            for i in range(b):
                if i != k:
                    f = P[i, k]
                    if f != 0.0:
                        for j in range(b):
                            P[i, j] -= f * P[k, j]
                        P[i, k] = -f * ip
        return True, P

    @_njit
    def _block_inv_nb(M):  # pragma: no cover - compiled
        """``(ok, inv(M))`` by 2 x 2 block recursion on Schur complements, no pivoting.

        With ``M = [[A, B], [C, D]]`` and ``S = D - C A^-1 B``: ``inv(M) = [[A^-1 + A^-1 B
        S^-1 C A^-1, -A^-1 B S^-1], [-S^-1 C A^-1, S^-1]]``. Six half-size products per level
        put almost all of the 2 d^3 flops in BLAS gemm, which runs 3-4x faster than LAPACK's
        getri here (d = 200: ~0.65 ms against ~1.5 ms for numba's ``np.linalg.inv``). Without
        pivoting this is stable for M-matrices, whose Schur complements are again M-matrices;
        the pivots of the leaves are those of the unpivoted LU of M, so ``ok`` is the exact
        domain test of :func:`_gj_inv_nb` for the whole matrix.
        """
        d = M.shape[0]
        if d <= _INV_LEAF:
            return _gj_inv_nb(M)
        h = d // 2
        A = M[:h, :h].copy()
        B = M[:h, h:].copy()
        C = M[h:, :h].copy()
        D = M[h:, h:].copy()
        ok, Ai = _block_inv_nb(A)
        if not ok:
            return False, M
        CAi = C @ Ai
        ok, Si = _block_inv_nb(D - CAi @ B)
        if not ok:
            return False, M
        X12 = (Ai @ B) @ Si
        out = np.empty((d, d))
        out[:h, :h] = Ai + X12 @ CAi
        out[:h, h:] = -X12
        out[h:, :h] = -(Si @ CAi)
        out[h:, h:] = Si
        return True, out

    @_njit
    def _inv_into_nb(Mt, outT):  # pragma: no cover - compiled
        """``outT = inv(Mt) = inv(M).T`` if M is inside the log-det domain, else False.

        ``Mt`` is ``M.T`` (C-contiguous), so the inverse comes out already transposed. The
        test is the solver's (a finite, entry-wise >= -1e-6 inverse) and the exact M-matrix
        test of :func:`_block_inv_nb` (positive unpivoted pivots).
        """
        ok, inv = _block_inv_nb(Mt)
        if not ok:
            return False
        d = Mt.shape[0]
        # Test and copy in one pass. On failure outT is left partly overwritten: the caller then
        # retries a shorter step (which overwrites it again) or gives up, never reading it.
        for i in range(d):
            for j in range(d):
                x = inv[i, j]
                if not (x >= _DOMAIN_TOL) or not (x < np.inf):
                    return False
                outT[i, j] = x
        return True

    @_njit
    def _sub_nb(W, D, lr, Wn):  # pragma: no cover - compiled
        """``Wn = W - lr D`` over the flat arrays (vectorised)."""
        n = W.size
        Wf = W.reshape(n)
        Df = D.reshape(n)
        Wnf = Wn.reshape(n)
        for k in range(n):
            Wnf[k] = Wf[k] - lr * Df[k]

    @_njit
    def _build_mt_nb(Wn, s, Mt):  # pragma: no cover - compiled
        """``Mt = (s I - Wn o Wn).T``, in 32 x 32 tiles (for a step the certificate did not vouch for)."""
        d = Wn.shape[0]
        for i0 in range(0, d, 32):
            i1 = min(i0 + 32, d)
            for j0 in range(0, d, 32):
                j1 = min(j0 + 32, d)
                for i in range(i0, i1):
                    for j in range(j0, j1):
                        wn = Wn[i, j]
                        Mt[j, i] = -wn * wn
        for i in range(d):
            Mt[i, i] += s

    @_njit
    def _step_nb(W, D, lr, s, Wn, Mt):  # pragma: no cover - compiled
        """``Wn = W - lr D`` and ``Mt = (s I - Wn o Wn).T`` (:func:`_build_mt_nb`)."""
        _sub_nb(W, D, lr, Wn)
        _build_mt_nb(Wn, s, Mt)

    @_njit
    def _mx_nb(Wn, s, x, y):  # pragma: no cover - compiled
        """``y = M x`` for ``M = s I - Wn o Wn``, without building ``M``.

        ``y_i`` is summed along row ``i`` of ``Wn`` in the order ``j = 0, 1, ...``, each term
        ``(-Wn[i, j] * Wn[i, j] + s [i == j]) * x[j]``: the IEEE operations of a product with
        an explicit ``M``. Four rows at a time (four independent sums).
        """
        d = Wn.shape[0]
        i0 = 0
        while i0 + 4 <= d:
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for j in range(d):
                xj = x[j]
                w0 = Wn[i0, j]
                w1 = Wn[i0 + 1, j]
                w2 = Wn[i0 + 2, j]
                w3 = Wn[i0 + 3, j]
                a0 += (-w0 * w0 + (s if j == i0 else 0.0)) * xj
                a1 += (-w1 * w1 + (s if j == i0 + 1 else 0.0)) * xj
                a2 += (-w2 * w2 + (s if j == i0 + 2 else 0.0)) * xj
                a3 += (-w3 * w3 + (s if j == i0 + 3 else 0.0)) * xj
            y[i0] = a0
            y[i0 + 1] = a1
            y[i0 + 2] = a2
            y[i0 + 3] = a3
            i0 += 4
        for i in range(i0, d):
            a = 0.0
            for j in range(d):
                w = Wn[i, j]
                a += (-w * w + (s if j == i else 0.0)) * x[j]
            y[i] = a

    @_njit
    def _certified_nb(x, y, s):  # pragma: no cover - compiled
        """True if ``x > 0`` and ``y = M x > margin * s * x`` entry-wise (:func:`_certify_py`)."""
        for i in range(x.shape[0]):
            if not (x[i] > 0.0) or not (y[i] > _CERT_MARGIN * s * x[i]):
                return False
        return True

    @_njit
    def _step_cert_nb(W, D, lr, s, Wn, xc, y):  # pragma: no cover - compiled
        """``Wn = W - lr D``, and True if ``M xc > 0`` with ``xc > 0`` (``M = s I - Wn o Wn``).

        The certificate of :func:`_certify_py` without building ``M`` (:func:`_mx_nb`). On
        return ``y`` (shape (d,)) holds ``M xc``.
        """
        _sub_nb(W, D, lr, Wn)
        _mx_nb(Wn, s, xc, y)
        return _certified_nb(xc, y, s)

    @_njit
    def _refine_cert_nb(Wn, MinvT, s, xc, y, x2, y2):  # pragma: no cover - compiled
        """:func:`_refine_cert_py` for the numba kernel.

        ``y`` is ``M xc`` (from :func:`_step_cert_nb`) and ``MinvT`` is ``inv(M_old).T`` from
        the last inverse; ``x2`` and ``y2`` are scratch of shape (d,).
        """
        d = Wn.shape[0]
        for i in range(d):
            x2[i] = xc[i]
        for j in range(d):  # x2 += inv(M_old) (1 - y), reading MinvT row by row
            rj = 1.0 - y[j]
            for i in range(d):
                x2[i] += MinvT[j, i] * rj
        _mx_nb(Wn, s, x2, y2)
        if not _certified_nb(x2, y2, s):
            return False
        for i in range(d):
            xc[i] = x2[i]
        return True

    @_njit
    def _colsums_nb(MinvT, xc):  # pragma: no cover - compiled
        """``xc = inv(M) @ 1`` (the column sums of ``MinvT``); False unless all are > 0."""
        d = MinvT.shape[0]
        for j in range(d):
            xc[j] = 0.0
        for i in range(d):
            for j in range(d):
                xc[j] += MinvT[i, j]
        for j in range(d):
            if not (xc[j] > 0.0):
                return False
        return True

    @_njit_vec
    def _adam_dir_nb(W, m, v, R, isig, MinvT, lam, mask, mu, b1, b2, c1, c2, D):  # pragma: no cover
        """Adam's update of the moments ``m``, ``v`` and its direction ``D``, in place.

        Returns how many moment entries are not finite (0 unless Adam's moments overflow or a
        NaN got in). Two passes that LLVM vectorises (AVX ``vsqrtpd`` / ``vdivpd``): the
        gradient into ``D`` row by row, then the moments and the direction over the flat
        arrays, which touches only three arrays (few runtime alias checks). Compiled with
        numba's ``error_model="numpy"`` (no zero-division branch: the denominator is
        ``>= 1e-8``) and with an integer count of non-finite entries (a float accumulator
        is a serial reduction LLVM may not reorder). Each entry gets the same IEEE operations
        in the same order as the one-pass scalar loop it replaces, so the iterates are
        bit-identical; a whole step is 1.3-1.6x cheaper (d = 20..200, measured).
        """
        d = W.shape[0]
        for i in range(d):
            for j in range(d):
                w = W[i, j]
                sg = (1.0 if w > 0.0 else 0.0) - (1.0 if w < 0.0 else 0.0)
                D[i, j] = (mu * (-R[i, j] * isig[j] + lam[i, j] * sg) + 2.0 * MinvT[i, j] * w) * mask[i, j]
        n = d * d
        mf = m.reshape(n)
        vf = v.reshape(n)
        Df = D.reshape(n)
        bad = 0
        for k in range(n):
            g = Df[k]
            mm = b1 * mf[k] + (1.0 - b1) * g
            vv = b2 * vf[k] + (1.0 - b2) * (g * g)
            bad += 0 if (vv + abs(mm)) < np.inf else 1
            mf[k] = mm
            vf[k] = vv
            Df[k] = (mm * c1) / (math.sqrt(vv) * c2 + 1e-8)
        return bad

    @_njit
    def _grouped_dot_nb(gcov, gcols, gptr, Wn, CW):  # pragma: no cover - compiled
        """``CW[:, j] = gcov[g(j)] @ Wn[:, j]`` (:func:`_grouped_dot_py`), one gemm per group.

        Up to ``_GROUPED_LOOP_MAX`` nodes, plain loops instead (no gather, no allocation: at
        d = 11 with 7 groups the gathers cost more than the products).
        """
        d = Wn.shape[0]
        if d <= _GROUPED_LOOP_MAX:
            for g in range(gptr.shape[0] - 1):
                for kk in range(gptr[g], gptr[g + 1]):
                    j = gcols[kk]
                    for i in range(d):
                        acc = 0.0
                        for k in range(d):
                            acc += gcov[g, i, k] * Wn[k, j]
                        CW[i, j] = acc
            return
        for g in range(gptr.shape[0] - 1):
            a = gptr[g]
            m = gptr[g + 1] - a
            if m == 0:
                continue
            Wg = np.empty((d, m))
            for i in range(d):
                for k in range(m):
                    Wg[i, k] = Wn[i, gcols[a + k]]
            P = np.dot(gcov[g], Wg)
            for i in range(d):
                for k in range(m):
                    CW[i, gcols[a + k]] = P[i, k]

    @_njit
    def _adam_chunk_nb(W, m, v, MinvT, R, resid, isig, cov, lam, mask, mu, s, lr, b1, b2, b1t, b2t,
                       sig0, vcode, nsteps, max_halvings, Wbar, ema, refresh, lag, xc, refine,
                       gcov, gcols, gptr, wts, wsum, grouped):  # pragma: no cover
        d = W.shape[0]
        D = np.empty_like(W)
        Wn = np.empty_like(W)
        Mt = np.empty_like(W)  # (s I - Wn o Wn).T, built only for the steps that invert
        CW = np.empty_like(W)  # cov @ Wn, written in place by BLAS gemm
        y = np.empty(d)  # certificate scratch
        x2 = np.empty(d)
        y2 = np.empty(d)
        for _ in range(nsteps):
            b1t *= b1
            b2t *= b2
            c1 = 1.0 / (1.0 - b1t)
            c2 = 1.0 / math.sqrt(1.0 - b2t)
            if _adam_dir_nb(W, m, v, R, isig, MinvT, lam, mask, mu, b1, b2, c1, c2, D) != 0:
                return 2, lr, b1t, b2t  # moments overflow (or NaN): never a silent zero step
            halvings = 0
            while True:
                if lag[0] + 1 < refresh and lag[0] >= 0:
                    if _step_cert_nb(W, D, lr, s, Wn, xc, y) or (refine and _refine_cert_nb(Wn, MinvT, s, xc, y, x2, y2)):
                        lag[0] += 1  # inside the domain (certified); MinvT is kept, lag[0] steps old
                        break
                    _build_mt_nb(Wn, s, Mt)
                else:
                    _step_nb(W, D, lr, s, Wn, Mt)
                if _inv_into_nb(Mt, MinvT):
                    lag[0] = 0 if _colsums_nb(MinvT, xc) else -1
                    break
                halvings += 1
                if halvings > max_halvings:
                    return 1, lr, b1t, b2t
                lr *= 0.5
            if grouped:
                _grouped_dot_nb(gcov, gcols, gptr, Wn, CW)
            else:
                np.dot(cov, Wn, CW)
            for j in range(d):
                resid[j] = 0.0
            for i in range(d):  # row by row (cache order); per column the same sums as before
                for j in range(d):
                    wn = Wn[i, j]
                    W[i, j] = wn
                    Wbar[i, j] += ema * (wn - Wbar[i, j])
                    x = cov[i, j] - CW[i, j]
                    R[i, j] = x
                    resid[j] -= wn * x
            tot = 0.0
            for j in range(d):
                r = resid[j] + R[j, j]
                resid[j] = r
                tot += r
            if vcode == 0:  # wsum is d without conditions (the same IEEE division)
                sg0 = max(math.sqrt(max(tot, 0.0) / wsum), sig0[0])
                for j in range(d):
                    isig[j] = 1.0 / sg0
            elif vcode == 1:  # wts[j] is 1 without conditions (an exact division)
                for j in range(d):
                    isig[j] = 1.0 / max(math.sqrt(max(resid[j] / wts[j], 0.0)), sig0[j])
        return 0, lr, b1t, b2t

    @_njit
    def _grad_nb(W, R, MinvT, isig, mu, mask, G):  # pragma: no cover - compiled
        d = W.shape[0]
        for i in range(d):
            for j in range(d):
                G[i, j] = (-mu * R[i, j] * isig[j] + 2.0 * MinvT[i, j] * W[i, j]) * mask[i, j]
        return G

    @_njit
    def _prox_nb(W, G, eta, thr, mask, out):  # pragma: no cover - compiled
        d = W.shape[0]
        for i in range(d):
            for j in range(d):
                z = W[i, j] - eta * G[i, j]
                a = abs(z) - thr[i, j]
                if a > 0.0 and mask[i, j] != 0.0:
                    out[i, j] = a if z > 0.0 else -a
                else:
                    out[i, j] = 0.0
        return out

    _adam_chunk = _adam_chunk_nb
    _grad = _grad_nb
    _prox = _prox_nb


def _conditioning_factor(cov):
    """``min(1, COND_REF / cond(cov))``, at least 0.1: how much of the default step scale to use.

    On very ill-conditioned covariances (simulated equal-variance SEMs with strong weights reach
    cond(cov) = 1e7..1e9 at d >= 50) the faithful Adam path is at the edge of its own stability:
    any larger step visibly drags the trajectory (measured), so the scale falls back towards 1.
    """
    ev = np.linalg.eigvalsh(cov)
    if not ev[0] > 0:
        return 0.1
    return float(min(1.0, max(0.1, _COND_REF / (ev[-1] / ev[0]))))


def _default_scales(phi, variant, lr, K):
    """The default step scales ``c_k`` of :func:`fast_solve` for ``K`` stages (see its item 1).

    ``phi`` is :func:`_conditioning_factor` of ``cov``; the scales are ``_SCALE_EARLY`` for all
    stages but the last and ``_SCALE_LAST[variant]`` for the last, times ``phi`` and times
    ``min(1, 3e-4 / lr)``, each at least 1.
    """
    shrink = phi * min(1.0, _LR_REF / float(lr))
    return tuple(max(1.0, c * shrink) for c in (_SCALE_EARLY,) * (K - 1) + (_SCALE_LAST[variant],))


def _is_faithful_step(c):
    """True at step scale ``c = 1`` (Algorithm 1's step), the regime of the "auto" choices below."""
    return float(c) <= 1.0 + 1e-12


def _auto_inverse_every(c):
    """Adam steps per inverse under ``inverse_every="auto"`` at step scale ``c >= 1``.

    ``_INVERSE_EVERY_MAX`` (10) at the faithful step (``c = 1``: the covariances with
    ``cond(cov) >= 1e7``, where the default step scale falls back to 1 and a step is 1.1-1.2x
    cheaper than with an inverse every third step), else ``_INVERSE_EVERY`` (3). With an
    inverse every ``k`` steps at scale ``c`` the log-det gradient lags at most ``(k - 1) c``
    faithful-equivalent steps: 20 at the default scale 10 and 9 at ``c = 1``. An inverse every
    5 to 10 steps at an intermediate scale (2.2) moved one of 30 simulated EV graphs to a worse
    branch (d = 20 seed 101: SHD 9 -> 20, objective +1.1e-2), so the longer interval is kept to
    the faithful step, where no graph got worse (``benchmarks/research/bench_sensitivity.py``).
    """
    return _INVERSE_EVERY_MAX if _is_faithful_step(c) else _INVERSE_EVERY


def _auto_refine(c):
    """Whether ``inverse_every="auto"`` refines a failed domain certificate at step scale ``c``.

    Only at the faithful step (``c = 1``), as the inverse every tenth step: there the
    certificate failed on 60-88% of the last stage's steps of ill-conditioned EV problems
    (d = 50, 100; near the domain's boundary, where ``inv(M)`` is large), each failure paying
    a full inverse, and with the refinement (:func:`_refine_cert_py`) none failed, with the
    same SHD and objective (within 1e-5) on all 20 simulated EV problems at d = 50 and 100.
    At larger scales it moved one d = 20 EV graph (seed 102, scale 9.6) to a worse optimum
    (SHD 11 -> 19, objective +1.3e-2), as longer inverse intervals there had.
    """
    return _is_faithful_step(c)


def _is_auto(x):
    return isinstance(x, str) and x == "auto"


def _kernels(engine):
    if engine == "auto":
        engine = "numba" if HAVE_NUMBA else "numpy"
    if engine == "numba":
        if not HAVE_NUMBA:
            raise ValueError("engine='numba' needs the numba package, which is not installed.")
        return _adam_chunk_nb, _grad_nb, _prox_nb
    if engine == "numpy":
        return _adam_chunk_py, _grad_py, _prox_py
    if isinstance(engine, tuple) and len(engine) == 3 and all(callable(f) for f in engine):
        return engine  # another backend's kernels, e.g. the JAX backend's (colide_core/solver/_jax.py)
    raise ValueError(f"engine must be 'auto', 'numba', 'numpy' or a tuple of 3 kernels, got {engine!r}.")


def warmup():
    """Compile (or load from the on-disk cache) the numba kernels on a 3-node toy problem.

    Calling this once, e.g. in a background thread when an app starts, moves numba's one-off
    compile time out of the first real fit. Without numba it does nothing.

    Returns
    -------
    float
        Seconds spent.
    """
    t0 = time.perf_counter()
    if HAVE_NUMBA:
        cov = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, 0.3], [0.2, 0.3, 1.0]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for variant in ("ev", "nv"):
                fast_solve(cov, variant=variant, max_iter=(20, 20), mu_schedule=(1.0, 0.1),
                           s_schedule=(1.0, 0.9), checkpoint=10)
    return time.perf_counter() - t0


# --------------------------------------------------------------------------------------
# Point evaluation (used at stage starts, checkpoints and by the polishing phase).
# --------------------------------------------------------------------------------------
class _Point:
    """W and everything derived from it for a given stage ``(mu, s)``."""

    __slots__ = ("W", "MinvT", "R", "resid", "isig", "sigma", "logdet", "h", "obj")


def _evaluate(W, cov, s, mu, lam, vcode, sig0, node=None):
    """Evaluate the stage objective at W, or return None if W is outside the log-det domain.

    ``node``: the per-node covariance form (``cov`` is then its ``own`` matrix), or None.

    One LU factorisation gives both ``log det(s I - W o W)`` and the inverse (needed by the
    gradient); the domain test is the solver's: a finite, entry-wise >= -1e-6 inverse of a
    matrix with positive determinant.
    """
    d = W.shape[0]
    M = -(W * W)
    M.flat[:: d + 1] += s
    lu, piv, info = lapack.dgetrf(M, overwrite_a=1)
    if info != 0:
        return None
    diag = np.diagonal(lu)
    neg = int(np.count_nonzero(diag < 0)) + int(np.count_nonzero(piv != np.arange(d)))
    if neg % 2:
        return None  # det < 0: not an M-matrix
    logdet = float(np.sum(np.log(np.abs(diag))))
    Minv, info = lapack.dgetri(lu, piv, overwrite_lu=1)
    if info != 0 or not np.isfinite(logdet):
        return None
    mn = Minv.min()
    if not (mn >= _DOMAIN_TOL) or not np.isfinite(Minv.max()):
        return None
    p = _Point()
    p.W = W
    p.MinvT = Minv.T  # getri returns Fortran order: the transpose view is C-contiguous
    weight = None if node is None else node.node_weight
    p.R = cov - (cov @ W if node is None else node.product(W))
    p.resid = np.diagonal(p.R) - np.sum(W * p.R, axis=0)
    p.isig = np.empty(d)
    _isig_py(p.resid, sig0, vcode, p.isig, weight)
    p.sigma = _sigma_value(p.isig, vcode)
    p.logdet = logdet
    p.obj, p.h = _stage_value(W, p.resid, p.sigma, _VARIANT[vcode], mu, lam, s, logdet=logdet, weight=weight)
    return p


def _sigma_value(isig, vcode):
    if vcode == 0:
        return float(1.0 / isig[0])
    if vcode == 1:
        return 1.0 / isig
    return None


# --------------------------------------------------------------------------------------
# The solver.
# --------------------------------------------------------------------------------------
def fast_solve(
    cov,
    settings=None,
    *,
    beta_1=defaults.BETA_1,
    beta_2=defaults.BETA_2,
    sigma0=None,
    W_init=None,
    callback=None,
    edge_mask=None,
    l1_mask=None,
    step_scale=None,
    switch_tol=None,
    chatter_tol="auto",
    average=True,
    min_scale=1.0,
    polish=None,
    engine="auto",
    blas_threads=1,
    inverse_every="auto",
    **params,
):
    """Solve CoLiDE's central path (paper eq. 4 / eq. 6) several times faster than Algorithm 1.

    Drop-in replacement for :func:`~colide_core.colide_solve` (same arguments, same
    :class:`~colide_core.SolverResult`); ``CoLiDE(solver="auto")`` (the default) and
    ``CoLiDE(solver="fast")`` call it.

    Stage ``k`` solves the paper's problem
    ``F_k(W) = mu_k (score(W, sigma(W)) + lambda1 |W|_1) + h_ldet(W, s_k)``, with ``sigma(W)``
    the closed-form noise update of eq. 5 / eq. 7, warm-started along the same central path
    ``(mu_k, s_k)`` and with the same back-off rules as Algorithm 1. Each stage keeps
    Algorithm 1's dynamics (one Adam step on W, then the closed-form sigma), read as an ODE in
    the time ``lr * t`` and integrated with fewer, cheaper steps:

    1. **Scaled Adam**: the step is ``c_k * lr`` and Adam's memories are shortened by the same
       factor; budgets and checkpoints are counted in the same ODE time as the faithful run.
       Default ``c_k = 10`` (last stage: 6 for EV and "ls", 10 for NV), times
       ``min(1, 1e6 / cond(cov))`` and ``min(1, 3e-4 / lr)``, at least 1.
    2. **Chatter control**: at each checkpoint, when the iterate's objective exceeds that of the
       running average of the iterates by more than ``chatter_tol`` (relative), the step scale
       is halved (down to ``min_scale``).
    3. **Stage end**: on the relative change of the averaged iterate's objective (``tol``;
       ``max(tol, 1e-5)`` in the last stage), keeping the averaged iterate when it is better;
       the last stage is then **polished** by proximal gradient with Barzilai-Borwein steps and
       a nonmonotone, domain-aware line search, to ``tol / 10``.
    4. **Cheaper steps**: one d x d inverse shared by the domain test and the gradient, computed
       only every few steps (``inverse_every``) with an exact O(d^2) M-matrix certificate in
       between; with numba the whole Adam loop between checkpoints is one compiled kernel.

    The method, the measurements behind every default and the dead ends tried are described in
    ``docs/fast-solver.md``.
    Parameters
    ----------
    cov : ndarray of shape (n_nodes, n_nodes) or NodeCovariance
        ``X.T @ X / n`` for centred data ``X`` of shape ``(n_samples, n_nodes)``; or the
        per-node form of several conditions with known intervention targets
        (:class:`colide_core.solver._objective.NodeCovariance`, ``docs/conditions.md``).
    settings : colide_core.settings.RunSettings, optional
        The checked run settings (default: the defaults). This loop reads ``variant``
        (``"ev"``: eq. 4, ``"nv"``: eq. 6, ``"ls"``: DAGMA-linear's score), ``lambda1``, the
        central path ``mu_schedule`` and ``s_schedule``, ``max_iter`` (Algorithm 1's budgets
        ``T_k`` in faithful steps: the Adam phase of stage k stops after ``T_k`` faithful
        steps' worth of ODE time, about ``T_k / c_k`` steps, and the polishing phase may take
        ``ceil(T_k / c_k)`` more function evaluations), ``lr`` (Algorithm 1's step size; stage
        k starts with ``c_k * lr``), ``tol`` (see 3. above), ``checkpoint`` (faithful steps
        between checkpoints: the Adam phase checks every ``ceil(checkpoint / c)`` steps, the
        polishing phase every ``ceil(checkpoint / c_K)`` iterations and at its end),
        ``max_time`` (seconds, checked at checkpoints; the solve then stops with
        ``stopped=True`` and a :class:`~colide_core.ConvergenceWarning`) and ``record_W``
        (keep a copy of W at every checkpoint in ``SolverResult.W_history``).
    **params
        Run settings by name, applied over ``settings`` and checked by
        :meth:`colide_core.settings.RunSettings.create`.
    beta_1, beta_2 : float, default=0.99, 0.999
        Algorithm 1's Adam decay rates, rescaled with the step as described above.
    sigma0 : float or ndarray of shape (n_nodes,), optional
        Noise floor; defaults to :func:`~colide_core.solver._common.default_sigma0`. Sigma starts at
        ``100 * sigma0`` as in the faithful solver.
    W_init : ndarray of shape (n_nodes, n_nodes), optional
        Warm start (default zeros). Not modified.
    callback : callable, optional
        ``callback(stage, iteration, objective)`` at every checkpoint; returning True stops
        the solve and returns the partial result with ``stopped=True``. ``iteration`` is the
        stage's progress in faithful-equivalent steps (ODE time / ``lr``, the unit of
        ``max_iter``; polishing evaluations count as one scaled step each), so
        :func:`colide_core.progress_fraction` reads it the same way for both solvers. The
        history's ``"iteration"`` counts this solver's own steps and evaluations.
    edge_mask : ndarray of bool of shape (n_nodes, n_nodes), optional
        False marks a forbidden edge: its weight is exactly zero throughout (gradient masked
        in the Adam phase, projected in the polishing phase).
    l1_mask : ndarray of float of shape (n_nodes, n_nodes), optional
        Non-negative per-edge multiplier of ``lambda1``.
    step_scale : float or tuple of float, optional
        The initial factors ``c_k`` (>= 1), one per stage or one for all; default as in 1.
        above.
    switch_tol : float or tuple of float, optional
        Relative change of the averaged objective between checkpoints that ends the Adam phase
        of each stage; default ``tol`` (``max(tol, 1e-5)`` in the last stage).
    chatter_tol : float, "auto" or None, default="auto"
        Relative objective excess of the iterate over its running average above which the step
        scale is halved; None disables the control. "auto": ``c * phi`` with ``c = 3e-4`` for
        CoLiDE-EV and ``1e-3`` otherwise, and ``phi = min(1, 1e6 / cond(cov))`` (at least
        0.1), the factor of the default step scale.
    average : bool, default=True
        Test convergence on, and end each stage with, the running average of the iterates.
    min_scale : float, default=1.0
        Lower bound of the step scale under chatter control.
    polish : bool or tuple of bool, optional
        Polish each stage (per stage or for all); default: the last stage only.
    engine : {"auto", "numba", "numpy"} or tuple of 3 callables, default="auto"
        Kernel implementation; "auto" uses numba when installed. All give the same iterates
        up to rounding. A tuple ``(adam_chunk, grad, prox)`` with the signatures of the numpy
        kernels: another backend's (:func:`colide_core.solver._jax.jax_kernels`, the Adam phase
        compiled with JAX; ``CoLiDE(device=...)`` picks it).
    inverse_every : int or "auto", default="auto"
        Adam steps per d x d inverse (>= 1); 1 inverts at every step, as Algorithm 1 does.
        "auto": 10 in the chunks of steps run at step scale 1 (the faithful step, on
        ill-conditioned covariances), with the refined certificate there, else 3 (measured
        in ``docs/fast-solver.md``).
    blas_threads : int or None, default=1
        Size of the BLAS thread pool during the solve, set and restored with threadpoolctl;
        None leaves the process's setting alone. The per-step products are small: on a 2-core
        machine OpenBLAS's default pool (one thread per core) makes the numpy engine's steps
        8.9x slower at d = 200 and the numba engine's 1.3x slower at d = 100, and gains at most
        18% (numba, d = 300, idle machine); with fits running side by side it oversubscribes
        the cores (``benchmarks/research/bench_blas_threads.py``). The pool is process-wide: while one solve
        holds the limit, solves started in other threads run under it without changing it.

    Returns
    -------
    SolverResult
        As :func:`~colide_core.colide_solve`. ``n_iter`` counts Adam steps plus
        polishing function evaluations (each costs one LU and inverse); ``lr_used`` is the Adam
        step each stage ended with (scaled by ``c``).

    Raises
    ------
    ValueError
        For invalid parameters (as :func:`~colide_core.colide_solve`, plus a bad
        ``step_scale``, betas, ``engine``, ``blas_threads`` or ``inverse_every``).
    FloatingPointError
        If the iterates cannot be kept inside the log-det domain, or the objective becomes
        non-finite.

    Warns
    -----
    ConvergenceWarning
        If the last stage uses its budget before meeting ``tol``, or ``max_time`` runs out.

    Notes
    -----
    ``step_scale=1, polish=False, switch_tol=tol, chatter_tol=None, average=False`` is
    Algorithm 1 itself: the same iterates as :func:`~colide_core.colide_solve` up to
    rounding (tested).

    References
    ----------
    Saboksayr, Mateos and Tepper, "CoLiDE: Concomitant Linear DAG Estimation", ICLR 2024,
    Section 4 (eq. 4-7, Algorithm 1) and Appendix B; Kingma and Ba (2015), Adam; Barzilai and
    Borwein (1988); Grippo, Lampariello and Lucidi (1986), nonmonotone line search; Wright,
    Nowak and Figueiredo (2009), SpaRSA (proximal gradient with BB steps).
    """
    st = loop_settings(settings, params)
    if blas_threads is not None and (
        isinstance(blas_threads, bool) or not isinstance(blas_threads, (int, np.integer)) or blas_threads < 1
    ):
        raise ValueError(f"blas_threads must be None or an integer >= 1, got {blas_threads!r}.")
    if not _is_auto(inverse_every) and (
        isinstance(inverse_every, bool) or not isinstance(inverse_every, (int, np.integer)) or inverse_every < 1
    ):
        raise ValueError(f"inverse_every must be 'auto' or an integer >= 1, got {inverse_every!r}.")
    # Overflow and NaN never pass silently: they are detected explicitly (moments, objective,
    # line search) and raised as FloatingPointError, so numpy's own RuntimeWarnings are muted.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"), _blas_threads(blas_threads):
        return _fast_solve(
            cov, st, beta_1, beta_2, sigma0, W_init, callback, edge_mask, l1_mask, step_scale, switch_tol,
            chatter_tol, average, min_scale, polish, engine, inverse_every,
        )


def _fast_solve(cov, st, beta_1, beta_2, sigma0, W_init, callback, edge_mask, l1_mask, step_scale, switch_tol,
                chatter_tol, average, min_scale, polish, engine, inverse_every):
    cov, node = as_node_form(cov)
    run = _Solve(cov, st, beta_1=beta_1, beta_2=beta_2, sigma0=sigma0, W_init=W_init, edge_mask=edge_mask,
                 l1_mask=l1_mask, node=node)
    variant, lr, tol, checkpoint = st.variant, st.lr, st.tol, st.checkpoint
    mu_schedule, s_schedule, max_iter = st.mu_schedule, st.s_schedule, st.max_iter
    cov, d, mask, lam, W = run.cov, run.d, run.mask, run.lam, run.W
    K = len(mu_schedule)
    phi = (_conditioning_factor(cov if node is None else node.pooled)
           if (step_scale is None or _is_auto(chatter_tol)) else 1.0)
    # The per-node covariance form's arrays for the kernels (placeholders without it).
    if node is None:
        grouped = (np.zeros((1, 1, 1)), np.zeros(1, dtype=np.int64), np.zeros(2, dtype=np.int64), np.ones(d),
                   float(d), False)
    else:
        cols, ptr = node.columns
        grouped = (node.weighted, cols, ptr, np.array(node.node_weight), float(np.sum(node.node_weight)), True)
    auto_refresh = _is_auto(inverse_every)
    if _is_auto(chatter_tol):
        chatter_tol = _CHATTER_REF[variant] * phi
    elif chatter_tol is not None and (
        isinstance(chatter_tol, str) or not (np.isfinite(chatter_tol) and chatter_tol >= 0)
    ):
        raise ValueError(f"chatter_tol must be 'auto', None or a number >= 0, got {chatter_tol!r}.")
    if step_scale is None:
        scales = _default_scales(phi, variant, lr, K)
    elif np.ndim(step_scale) == 0:
        scales = (float(step_scale),) * K
    else:
        scales = tuple(float(c) for c in step_scale)
    if len(scales) != K or any(not (np.isfinite(c) and c >= 1.0) for c in scales):
        raise ValueError(f"step_scale must be a number >= 1 or {K} such numbers, got {step_scale!r}.")
    adam_chunk, grad_fn, prox_fn = _kernels(engine)
    vcode = _VCODE[variant]
    # The kernels take the noise floor as an array of shape (d,) (all equal for EV; 1 for "ls").
    sig0 = np.ones(d) if variant == "ls" else np.broadcast_to(run.sigma0, (d,)).astype(float)

    # Sigma starts at 100 * sigma0 as in the faithful solver: the first Adam step uses it.
    isig0 = np.ones(d) if variant == "ls" else 1.0 / (100.0 * sig0)
    stop_reason = None
    obj = np.nan
    sigma_out = run.sigma
    first_stage = True

    for k, (mu, s, T) in enumerate(zip(mu_schedule, s_schedule, max_iter)):
        mu, c = float(mu), scales[k]
        last = k == K - 1
        point, lr_k, s_k = run.enter_stage(
            k, float(lr) * c, s, lambda s_try: _evaluate(W, cov, s_try, mu, lam, vcode, sig0, node)
        )
        T_adam = max(int(math.ceil(T / c)), 1)
        if switch_tol is None:
            sw_tol = max(float(tol), _SWITCH_TOL_LAST) if last else float(tol)
        else:
            sw_tol = float(switch_tol[k] if np.ndim(switch_tol) else switch_tol)
        state = _StageState(point, d)
        if first_stage:
            state.isig[:] = isig0  # the faithful first step uses sigma = 100 sigma0
            first_stage = False

        # ---- phase 1: scaled Adam ------------------------------------------------------
        m = np.zeros((d, d))
        v = np.zeros((d, d))
        b1t = b2t = 1.0
        Wbar = state.W.copy()
        t = 0
        used = 0.0  # faithful-equivalent steps (ODE time / lr) spent so far
        c_cur = c
        obj_prev = np.inf
        adam_done = False
        stage_converged = False
        while not adam_done:
            b1 = max(1.0 - (1.0 - beta_1) * c_cur, 0.0)
            b2 = max(1.0 - (1.0 - beta_2) * c_cur, 0.0)
            ck = max(int(math.ceil(checkpoint / c_cur)), 1)
            ema = min(1.0, 4.0 / ck)
            n = max(min(ck, int(math.ceil((T - used) / c_cur))), 1)
            status, lr_k, b1t, b2t = adam_chunk(
                state.W, m, v, state.MinvT, state.R, state.resid, state.isig, cov, lam, mask,
                mu, s_k, lr_k, b1, b2, b1t, b2t, sig0, vcode, n, _MAX_HALVINGS, Wbar, ema,
                _auto_inverse_every(c_cur) if auto_refresh else inverse_every, state.lag, state.xc,
                auto_refresh and _auto_refine(c_cur), *grouped,
            )
            if status == 2:
                raise FloatingPointError(
                    f"Stage {k}, step {t + 1}: the gradient overflows (the data's scale is too large "
                    "for this score); standardise or rescale the data."
                )
            if status != 0:
                raise FloatingPointError(
                    f"Stage {k}, step {t + 1}: could not stay inside the log-det domain "
                    f"(step size halved {_MAX_HALVINGS} times)."
                )
            t += n
            used += n * c_cur
            obj, h = state.objective(mu, s_k, lam, vcode, run.weight)
            if not np.isfinite(obj):
                raise FloatingPointError(f"Stage {k}, step {t}: the objective is not finite.")
            pbar = _evaluate(Wbar.copy(), cov, s_k, mu, lam, vcode, sig0, node) if (average or chatter_tol) else None
            stop_reason = run.checkpoint(k, t, obj, h, state.sigma(vcode), callback, used, W=state.W)
            if stop_reason is not None:
                break
            f_test = pbar.obj if (average and pbar is not None) else obj
            if np.isfinite(obj_prev) and abs(obj_prev - f_test) <= sw_tol * abs(obj_prev):
                adam_done = True
                stage_converged = sw_tol <= tol
            elif used >= T:
                adam_done = True
            elif (chatter_tol and pbar is not None and c_cur > min_scale
                  and obj - pbar.obj > chatter_tol * abs(pbar.obj)):
                # The iterate chatters around its running average by more than chatter_tol:
                # the step is too large for this stage's stiffest directions. Halve it (and the
                # Adam memories' time scale) down to min_scale.
                new_c = max(c_cur / 2.0, min_scale)
                lr_k *= new_c / c_cur
                c_cur = new_c
            obj_prev = f_test
        if average and stop_reason is None and pbar is not None and pbar.obj <= obj:
            state = _StageState(pbar, d)
            obj = pbar.obj
        polish_k = last if polish is None else bool(polish[k] if np.ndim(polish) else polish)
        if stop_reason is None and polish_k:
            W_p, n_ev, stage_converged, stop_reason = _polish(
                state.W.copy(), cov, s_k, mu, lam, mask, vcode, sig0, grad_fn, prox_fn, lr_k,
                float(tol) / 10.0, T_adam, ck, k, t, run, callback, used, c_cur, node,
            )
            t += n_ev
            state = _StageState(W_p, d)
        W = state.W
        sigma_out = state.sigma(vcode)
        obj = state.obj if polish_k and stop_reason is None else obj
        run.end_stage(t, t, lr_k, s_k, stage_converged)
        if stop_reason is not None:
            break
    return run.result(W, sigma_out, obj, stop_reason, stacklevel=4)


class _StageState:
    """Mutable arrays the Adam kernel updates in place, built from a :class:`_Point`."""

    def __init__(self, point, d):
        if not isinstance(point, _Point):
            raise TypeError  # pragma: no cover - internal misuse
        self.W = np.ascontiguousarray(point.W).copy()
        self.MinvT = np.ascontiguousarray(point.MinvT).copy()
        self.R = np.ascontiguousarray(point.R).copy()
        self.resid = np.array(point.resid, dtype=float)
        self.isig = np.array(point.isig, dtype=float)
        self.obj = point.obj
        # Domain certificate vector inv(M) @ 1 and the age (in steps) of MinvT; -1: no
        # certificate (the next step inverts).
        self.xc = np.empty(d)
        self.lag = np.array([0 if _colsums_py(self.MinvT, self.xc) else -1], dtype=np.int64)

    def sigma(self, vcode):
        s = _sigma_value(self.isig, vcode)
        return s.copy() if isinstance(s, np.ndarray) else s

    def objective(self, mu, s, lam, vcode, weight=None):
        """``(objective, h)`` of the stage at the current W (:func:`colide_core.solver._objective._stage_value`)."""
        return _stage_value(self.W, self.resid, _sigma_value(self.isig, vcode), _VARIANT[vcode], mu, lam, s,
                            weight=weight)


def _polish(W, cov, s, mu, lam, mask, vcode, sig0, grad_fn, prox_fn, lr, tol, max_it, ck,
            stage, t0, run, callback, used0, unit, node=None):
    """Proximal gradient with BB steps and a nonmonotone domain-aware line search on stage F.

    Progress reported to the callback: ``used0`` faithful-equivalent steps before polishing plus
    ``unit`` per function evaluation (the Adam phase's last step scale).

    Returns ``(point, n_evaluations, converged, stop_reason)``.
    """
    d = W.shape[0]
    p = _evaluate(W, cov, s, mu, lam, vcode, sig0, node)
    G = grad_fn(p.W, p.R, p.MinvT, p.isig, mu, mask, np.empty((d, d)))
    thr_unit = mu * lam
    gmax = float(np.abs(G).max())
    eta = lr / gmax if gmax > 0 else lr
    eta = min(max(eta, _ETA_MIN), _ETA_MAX)
    hist = [p.obj]
    n_ev = 0
    converged = False
    stop = None
    Wn = np.empty((d, d))
    it = 0
    while n_ev < max_it:
        it += 1
        f_ref = max(hist[-_NM_MEMORY:])
        while True:
            prox_fn(p.W, G, eta, eta * thr_unit, mask, Wn)
            q = _evaluate(Wn.copy(), cov, s, mu, lam, vcode, sig0, node)
            n_ev += 1
            if q is not None and np.isfinite(q.obj):
                dW = q.W - p.W
                dd = float(np.vdot(dW, dW))
                if q.obj <= f_ref - _ARMIJO / (2.0 * eta) * dd:
                    break
            eta *= 0.5
            if eta < _ETA_MIN or n_ev >= max_it:
                q = None
                break
        if q is None:
            # No acceptable step even with a tiny step size: p is stationary to working precision.
            converged = eta < _ETA_MIN
            break
        Gq = grad_fn(q.W, q.R, q.MinvT, q.isig, mu, mask, np.empty((d, d)))
        S = q.W - p.W
        Y = Gq - G
        sy = float(np.vdot(S, Y))
        eta_prev = eta
        if sy > 0:
            eta = float(np.vdot(S, S)) / sy if it % 2 else sy / float(np.vdot(Y, Y))
        else:
            eta *= 2.0
        if not np.isfinite(eta):
            eta = eta_prev
        eta = min(max(eta, _ETA_MIN), _ETA_MAX)
        p, G = q, Gq
        hist.append(p.obj)
        if not np.isfinite(p.obj):
            raise FloatingPointError(f"Stage {stage}: the objective is not finite.")
        done = len(hist) > _NM_MEMORY and abs(hist[-1 - _NM_MEMORY] - p.obj) <= tol * abs(p.obj)
        if done or it % ck == 0:
            stop = run.checkpoint(stage, t0 + n_ev, p.obj, p.h, _sigma_value(p.isig, vcode), callback,
                                  used0 + n_ev * unit, W=p.W)
            if stop is not None:
                break
        if done:
            converged = True
            break
    history = run.history
    if stop is None and not (history["stage"] and history["stage"][-1] == stage
                             and history["iteration"][-1] == t0 + n_ev):
        stop = run.checkpoint(stage, t0 + n_ev, p.obj, p.h, _sigma_value(p.isig, vcode), callback,
                              used0 + n_ev * unit, W=p.W)
    return p, n_ev, converged, stop
