"""The per-iteration kernels of the fast loop (:mod:`colide_core.solver._fast`), twice each.

Each kernel exists as a numpy version (``*_py``) and a numba version (``*_nb``, compiled with
``cache=True``: the first call in a fresh environment compiles it once, later processes load it
from numba's disk cache, which is keyed on this file, so ``make``'s stamp recompiles when it
changes) with the same signature and the same arithmetic: the Adam phase of a stage
(``_adam_chunk``: Adam steps on W with the closed-form sigma, the O(d^2) domain certificates and
the d x d inverses of ``s I - W o W``), the gradient and the proximal step of the polishing
phase (``_grad``, ``_prox``). :func:`_kernels` picks a set by engine name.

Conventions: ``cov`` is the ``(n_nodes, n_nodes)`` covariance ``X.T @ X / n`` of centred data
``X`` of shape ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means the edge i -> j.

This module imports no loop: :mod:`colide_core.solver._fast` imports it.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.linalg import lapack

from colide_core.solver._jit import njit
from colide_core.solver._objective import _DOMAIN_TOL, _sigma_from_resid

try:  # numba is optional: without it the same algorithm runs on numpy (slower at small d)
    import numba as _numba
except ImportError:  # pragma: no cover - exercised only where numba is absent
    _numba = None

HAVE_NUMBA = _numba is not None

#: Relative margin of the O(d^2) domain certificate (:func:`_certify_py`).
_CERT_MARGIN = 1e-8
_VCODE = {"ev": 0, "nv": 1, "ls": 2}
_VARIANT = {code: variant for variant, code in _VCODE.items()}


# --------------------------------------------------------------------------------------
# Kernels. Each exists twice: a numba version (compiled once, cached on disk) and a numpy
# version with the same signature and the same arithmetic.
# --------------------------------------------------------------------------------------
def _adam_chunk_py(W, m, v, MinvT, R, resid, isig, cov, lam, mask, mu, s, lr, b1, b2, b1t, b2t,
                   sig0, vcode, nsteps, max_halvings, Wbar, ema, refresh, lag, xc, refine,
                   gcov, gcols, gptr, wts, wsum, grouped, rq_i=None, rq_j=None, tau=0.0):
    """``nsteps`` BCD iterations (one Adam step on W, then the closed-form sigma), in place.

    ``grouped``: the per-node covariance form (several conditions with known targets): ``cov``
    is then its ``own`` matrix, ``cov @ W`` is :func:`_grouped_dot_py` of the weighted group
    covariances ``gcov`` (nodes ``gcols[gptr[g]:gptr[g + 1]]`` in group g), and the sigma update
    uses the node weights ``wts`` (sum ``wsum``); else those are placeholders.

    ``rq_i, rq_j, tau``: the required edges ``rq_i[k] -> rq_j[k]``, each counted in the
    acyclicity function with ``tau`` (``M = s I - W o W - tau R`` in the inverses and the
    certificates; :func:`colide_core.solver._objective.required_offset`); two empty int64 arrays
    (or None) without required edges, which leaves the arithmetic as it was.

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
    rq = None if rq_i is None or len(rq_i) == 0 else (rq_i, rq_j, tau)
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
                _certify_py(Wn, s, xc, rq) or (refine and _refine_cert_py(Wn, MinvT, s, xc, rq))
            ):
                lag[0] += 1
                break
            M = -(Wn * Wn)
            if rq is not None:
                M[rq[0], rq[1]] -= rq[2]
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


def _certify_py(Wn, s, xc, rq=None):
    """True if ``(s I - Wn o Wn) xc > 0`` entry-wise, for some ``xc > 0``.

    ``rq``: ``(rows, cols, tau)`` of the required edges, then ``M = s I - Wn o Wn - tau R``
    (:func:`_adam_chunk_py`); None: none.

    A Z-matrix ``M`` with ``M x > 0`` for a positive ``x`` (a semipositive Z-matrix) is a
    nonsingular M-matrix (Berman and Plemmons, *Nonnegative Matrices in the Mathematical
    Sciences*, 1994, Theorem 6.2.3): ``s > rho(Wn o Wn)`` and ``inv(M) >= 0``, i.e. ``Wn``
    is inside the log-det domain. With ``xc = inv(M_old) @ 1`` for a nearby earlier ``M_old``,
    ``M xc`` is close to 1, so this O(d^2) test passes for every small step away from the
    boundary and replaces the O(d^3) inverse as the domain test. A relative margin guards
    against rounding.
    """
    y = s * xc - (Wn * Wn) @ xc
    if rq is not None:
        np.subtract.at(y, rq[0], rq[2] * xc[rq[1]])
    return bool(np.all(xc > 0.0) and np.all(y > _CERT_MARGIN * s * xc))


def _refine_cert_py(Wn, MinvT, s, xc, rq=None):
    """The certificate of :func:`_certify_py` with ``x2 = xc + inv(M_old) (1 - M xc)``.

    ``MinvT`` is ``inv(M_old).T`` from the last inverse, ``M = s I - Wn o Wn``. One step of
    iterative refinement towards ``inv(M) 1``: with ``E = (M - M_old) inv(M_old)``, ``M xc``
    is ``1 + E 1`` (for ``xc = inv(M_old) 1``) and ``M x2`` is ``1 - E^2 1``, so a step that
    moved ``M`` too far for ``xc`` (near the boundary of the domain ``inv(M)`` is large and
    ``E`` is not small) can still be certified, at O(d^2) instead of an inverse. The test
    stays exact (any ``x > 0`` with ``M x > 0`` proves ``s > rho(Wn o Wn)``). On success
    ``xc`` takes the value ``x2`` (the next steps start from the refined vector). ``rq``: the
    required edges, as in :func:`_certify_py`.
    """
    M = -(Wn * Wn)
    if rq is not None:
        M[rq[0], rq[1]] -= rq[2]
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
    _njit = njit()  # numba.njit(cache=True, nogil=True), its disk cache locked across processes
    # For the O(d^2) Adam pass only: no zero-division branch in the loop, so LLVM can vectorise it.
    _njit_vec = njit(error_model="numpy")

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
    def _mx_req_nb(rq_i, rq_j, tau, x, y):  # pragma: no cover - compiled
        """``y -= tau R x``: the required edges' part of ``M x`` for ``M = s I - Wn o Wn - tau R``
        (nothing without required edges: empty ``rq_i``)."""
        for k in range(rq_i.shape[0]):
            y[rq_i[k]] -= tau * x[rq_j[k]]

    @_njit
    def _mt_req_nb(rq_i, rq_j, tau, Mt):  # pragma: no cover - compiled
        """``Mt -= tau R.T``: the required edges in the transposed matrix ``Mt = M.T``."""
        for k in range(rq_i.shape[0]):
            Mt[rq_j[k], rq_i[k]] -= tau

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
        empty = np.zeros(0, dtype=np.int64)
        return _refine_cert_rq_nb(Wn, MinvT, s, xc, y, x2, y2, empty, empty, 0.0)

    @_njit
    def _refine_cert_rq_nb(Wn, MinvT, s, xc, y, x2, y2, rq_i, rq_j, tau):  # pragma: no cover - compiled
        """:func:`_refine_cert_nb` with the required edges ``rq_i -> rq_j`` counted with ``tau``."""
        d = Wn.shape[0]
        for i in range(d):
            x2[i] = xc[i]
        for j in range(d):  # x2 += inv(M_old) (1 - y), reading MinvT row by row
            rj = 1.0 - y[j]
            for i in range(d):
                x2[i] += MinvT[j, i] * rj
        _mx_nb(Wn, s, x2, y2)
        _mx_req_nb(rq_i, rq_j, tau, x2, y2)
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
                       gcov, gcols, gptr, wts, wsum, grouped, rq_i, rq_j, tau):  # pragma: no cover
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
                    _sub_nb(W, D, lr, Wn)
                    _mx_nb(Wn, s, xc, y)
                    _mx_req_nb(rq_i, rq_j, tau, xc, y)  # required edges (none: no-op)
                    if _certified_nb(xc, y, s) or (
                            refine and _refine_cert_rq_nb(Wn, MinvT, s, xc, y, x2, y2, rq_i, rq_j, tau)):
                        lag[0] += 1  # inside the domain (certified); MinvT is kept, lag[0] steps old
                        break
                    _build_mt_nb(Wn, s, Mt)
                else:
                    _step_nb(W, D, lr, s, Wn, Mt)
                _mt_req_nb(rq_i, rq_j, tau, Mt)
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
