"""The numba kernels of CoLiDE-TOPO (:mod:`colide_core.solver._topo`): exact node solves on the covariance.

For a fixed topological order, node j is regressed on its allowed predecessors by a smoothed
concomitant lasso that reads only the covariance (``docs/topo.md``, "The inner problem"):

* :func:`_solve_nodes_py` (compiled: ``_solve_nodes``): coordinate descent on the covariance,
  alternated with the closed-form sigma update (eq. 5 / eq. 7), with an exact active-set solve
  (:func:`_active_solve`) after each round; the fallback of the search;
* :func:`_solve_nodes_fs_py` (compiled: ``_solve_nodes_fs``): the search's kernel (issue 32),
  the feature-sign active-set search (:func:`_feature_sign`) on each node's linear piece
  ``w = a - sigma b`` (:func:`_piece`), with the direct-mapped cache of solved pieces.

Each kernel is compiled with numba when it is installed (``cache=True``: numba's disk cache is
keyed on this file, so ``make``'s stamp recompiles when it changes); otherwise the same Python
source runs uncompiled. The kernels take ``covs`` of shape ``(n_groups, d, d)`` and a node ->
group index ``grp`` (one group for a plain covariance; one per distinct target pattern with known
intervention targets, ``docs/conditions.md``).

This module imports no loop: :mod:`colide_core.solver._topo` imports it.
"""
from __future__ import annotations

import math

import numpy as np

from colide_core.solver._jit import njit

try:  # numba is optional: without it the same kernel runs as plain Python (slower)
    import numba as _numba
except ImportError:  # pragma: no cover - exercised only where numba is absent
    _numba = None

#: Caps of the inner loops (never reached on the benchmark problems; they only bound the cost
#: of a degenerate covariance).
_MAX_SWEEPS = 10000
_MAX_OUTER = 500


# --------------------------------------------------------------------------------------
# Kernel: coordinate descent on the covariance, for a set of nodes of one order.
# --------------------------------------------------------------------------------------
def _cd_sweeps(C, j, idx, m, w, g, pen, scale, s, step_tol, max_sweeps):
    """Cyclic coordinate descent on one node's lasso at penalty ``pen * s``; w, g in place.

    ``g = c - G w`` on entry and on exit. Stops when no coefficient moves by more than
    ``step_tol`` (in the units of the data: ``|delta| sqrt(C_kk)``). Returns the sweeps.
    """
    sweeps = 0
    for _sweep in range(max_sweeps):
        sweeps += 1
        biggest = 0.0
        for k in range(m):
            ik = idx[k]
            gkk = C[ik, ik]
            old = w[k]
            z = g[k] + gkk * old
            thr = pen[k] * s
            if z > thr:
                new = (z - thr) / gkk
            elif z < -thr:
                new = (z + thr) / gkk
            else:
                new = 0.0
            if new != old:
                delta = new - old
                w[k] = new
                for b in range(m):
                    g[b] -= delta * C[idx[b], ik]
                change = abs(delta) * scale[k]
                if change > biggest:
                    biggest = change
        if biggest <= step_tol:
            break
    return sweeps


def _gradient(C, j, idx, m, w, g):
    """``g = c - G w`` from the nonzero weights only."""
    for a in range(m):
        g[a] = C[idx[a], j]
    for b in range(m):
        wb = w[b]
        if wb != 0.0:
            ib = idx[b]
            for a in range(m):
                g[a] -= C[idx[a], ib] * wb


def _chol_solve2(L, n, x1, x2):
    """Solve ``L L^T x = b`` in place for two right-hand sides held in ``x1[:n]`` and ``x2[:n]``
    (forward, then back substitution with the lower Cholesky factor ``L``)."""
    for a in range(n):
        acc1 = x1[a]
        acc2 = x2[a]
        for b in range(a):
            acc1 -= L[a, b] * x1[b]
            acc2 -= L[a, b] * x2[b]
        x1[a] = acc1 / L[a, a]
        x2[a] = acc2 / L[a, a]
    for a in range(n - 1, -1, -1):
        acc1 = x1[a]
        acc2 = x2[a]
        for b in range(a + 1, n):
            acc1 -= L[b, a] * x1[b]
            acc2 -= L[b, a] * x2[b]
        x1[a] = acc1 / L[a, a]
        x2[a] = acc2 / L[a, a]


def _active_solve(C, j, idx, m, w, pen, s, adapt, sigma0_j, kkt_tol, S, L, x1, x2, wS, rq):
    """Exact solution on the active set and sign pattern of ``w``, or ``-1.0`` if it fails.

    With ``S`` the nonzero coefficients and ``z`` their signs, the lasso's stationarity on
    ``S`` gives ``w_S = a - s b`` with ``a = G_SS^{-1} c_S`` and ``b = G_SS^{-1} (pen o z)_S``,
    and the residual ``r(s) = r_ols + s^2 q`` with ``r_ols = C_jj - a'c_S`` and
    ``q = (pen o z)_S' b``. With ``adapt`` (NV) the sigma fixed point ``s^2 = r(s)`` is
    ``s = sqrt(r_ols / (1 - q))``, floored at ``sigma0_j`` (eq. 7). The candidate is accepted
    when every penalised coefficient keeps its sign and every other coefficient satisfies
    ``|g_k| <= pen_k s`` (to ``kkt_tol``): then it is the exact optimum. On success ``w`` is
    overwritten, ``rq[j] = (r_ols, q)`` stored (the EV loop's closed-form sigma needs them) and
    the new sigma returned.
    """
    n = 0
    for k in range(m):
        if w[k] != 0.0:
            S[n] = k
            n += 1
    # Cholesky of G_SS (lower), pivots checked
    for a in range(n):
        for b in range(a + 1):
            acc = C[idx[S[a]], idx[S[b]]]
            for k in range(b):
                acc -= L[a, k] * L[b, k]
            if a == b:
                if acc <= 1e-12 * C[idx[S[a]], idx[S[a]]]:
                    return -1.0
                L[a, a] = math.sqrt(acc)
            else:
                L[a, b] = acc / L[b, b]
    # forward / back substitution for the two right-hand sides
    for a in range(n):
        k = S[a]
        x1[a] = C[idx[k], j]
        x2[a] = pen[k] if w[k] > 0.0 else -pen[k]
    _chol_solve2(L, n, x1, x2)
    s_new = s
    r_ols = C[j, j]
    q = 0.0
    for a in range(n):
        k = S[a]
        r_ols -= x1[a] * C[idx[k], j]
        q += (pen[k] if w[k] > 0.0 else -pen[k]) * x2[a]
    if adapt:
        if q >= 1.0 or r_ols < 0.0:
            return -1.0
        s_new = math.sqrt(r_ols / (1.0 - q))
        if s_new < sigma0_j:
            s_new = sigma0_j
    for a in range(n):
        k = S[a]
        wS[a] = x1[a] - s_new * x2[a]
        if pen[k] > 0.0 and wS[a] * w[k] <= 0.0:
            return -1.0
    # KKT of the coefficients outside S
    for k in range(m):
        if w[k] != 0.0:
            continue
        acc = C[idx[k], j]
        for a in range(n):
            acc -= C[idx[k], idx[S[a]]] * wS[a]
        if abs(acc) > pen[k] * s_new + kkt_tol * math.sqrt(C[idx[k], idx[k]]):
            return -1.0
    for a in range(n):
        w[S[a]] = wS[a]
    rq[j, 0] = r_ols
    rq[j, 1] = q
    return s_new


def _solve_nodes_py(covs, grp, order, pos, allowed, lam, W, resid, sigma, sigma0, nodes, adapt, tol, max_sweeps,
                    max_outer, rq):
    """Solve the node problems of ``nodes`` for the order ``order``; W, resid, sigma in place.

    ``covs`` of shape (n_groups, d, d) holds the covariances and ``grp`` (d,) the group of each
    node: node j reads ``C = covs[grp[j]]`` (a view, never a copy; one group for a single
    covariance, several for known intervention targets, ``docs/conditions.md``). Node j (at
    position ``pos[j]``) is regressed on its allowed predecessors ``A``:
    ``min_w 1/2 w' C[A, A] w - w' C[A, j] + sigma_j sum_k lam[A_k, j] |w_k|`` (the node's term
    of the score times ``sigma_j``, over its weight ``w_j`` with targets); with ``adapt`` (NV) ``sigma_j`` is optimised too, with its
    closed form ``max(sqrt(r_j), sigma0_j)`` (eq. 7). Each round runs coordinate descent to a
    loose tolerance, then solves the active set exactly (:func:`_active_solve`, which also
    finds the sigma fixed point in closed form); when that passes the KKT test the node is done,
    otherwise the tolerance tightens by 100 and the next round starts from the CD iterate (and,
    for NV, the closed-form sigma). After ``max_outer`` rounds it falls back to plain
    alternation at tolerance ``tol``. ``resid[j]`` gets ``r_j = C_jj - 2 w'c + w'Gw`` and
    ``rq[j]`` the node's ``(r_ols, q)`` with ``r_j(s) = r_ols + s^2 q`` on its active set
    (``(r_j, 0)`` after the fallback).
    ``C[A, A]`` is never copied. Returns the number of coordinate-descent sweeps.
    """
    d = covs.shape[1]
    total = 0
    idx = np.empty(d, dtype=np.int64)
    w = np.empty(d)
    g = np.empty(d)
    pen = np.empty(d)
    scale = np.empty(d)
    S = np.empty(d, dtype=np.int64)
    L = np.empty((d, d))
    x1 = np.empty(d)
    x2 = np.empty(d)
    wS = np.empty(d)
    for t in range(nodes.shape[0]):
        j = nodes[t]
        C = covs[grp[j]]
        p = pos[j]
        m = 0
        for q in range(p):
            i = order[q]
            if allowed[i, j]:
                idx[m] = i
                w[m] = W[i, j]
                pen[m] = lam[i, j]
                scale[m] = math.sqrt(C[i, i])
                m += 1
        for i in range(d):
            W[i, j] = 0.0
        cjj = C[j, j]
        s = sigma[j]
        done = False
        loose = 1e-3
        for _round in range(max_outer):
            _gradient(C, j, idx, m, w, g)
            total += _cd_sweeps(C, j, idx, m, w, g, pen, scale, s, loose * math.sqrt(cjj), 10 * (_round + 1))
            s_new = _active_solve(C, j, idx, m, w, pen, s, adapt, sigma0[j], tol * math.sqrt(cjj), S, L, x1, x2,
                                  wS, rq)
            if s_new > 0.0:
                s = s_new
                done = True
                break
            if adapt:  # the closed-form sigma at the CD iterate (eq. 7), then another round
                acc = cjj
                for a in range(m):
                    if w[a] != 0.0:
                        acc -= w[a] * (C[idx[a], j] + g[a])
                s_alt = math.sqrt(acc) if acc > 0.0 else 0.0
                s = s_alt if s_alt > sigma0[j] else sigma0[j]
            loose = loose * 0.1 if loose > tol else tol
            if _round >= 20:
                break
        if not done:  # fallback: plain alternation at the tight tolerance
            for _outer in range(max_outer):
                _gradient(C, j, idx, m, w, g)
                total += _cd_sweeps(C, j, idx, m, w, g, pen, scale, s, tol * math.sqrt(cjj), max_sweeps)
                if not adapt:
                    break
                acc = cjj
                for a in range(m):
                    if w[a] != 0.0:
                        acc -= w[a] * (C[idx[a], j] + g[a])
                s_new = math.sqrt(acc) if acc > 0.0 else 0.0
                if s_new < sigma0[j]:
                    s_new = sigma0[j]
                moved = abs(s_new - s)
                s = s_new
                if moved <= tol * s:
                    break
        _gradient(C, j, idx, m, w, g)
        acc = cjj
        for a in range(m):
            if w[a] != 0.0:
                acc -= w[a] * (C[idx[a], j] + g[a])
        sigma[j] = s
        resid[j] = acc if acc > 0.0 else 0.0
        if not done:
            rq[j, 0] = resid[j]
            rq[j, 1] = 0.0
        for a in range(m):
            W[idx[a], j] = w[a]
    return total


if _numba is not None:
    _jit = njit()  # numba.njit(cache=True, nogil=True), its disk cache locked across processes
    _chol_solve2 = _jit(_chol_solve2)
    _cd_sweeps = _jit(_cd_sweeps)
    _gradient = _jit(_gradient)
    _active_solve = _jit(_active_solve)
    _solve_nodes = _jit(_solve_nodes_py)
else:  # pragma: no cover - exercised only where numba is absent
    _solve_nodes = _solve_nodes_py


# --------------------------------------------------------------------------------------
# Kernel of the search (issue 32): exact active-set node solves, independent of conditioning.
# --------------------------------------------------------------------------------------
def _piece(C, j, idx, m, pen, s, S, n, sg, L, x1, x2, kkt_tol, out):
    """The lasso's linear piece on the active set ``S[:n]`` with signs ``sg``, and where it holds.

    ``a = G_SS^{-1} c_S`` -> ``x1``, ``b = G_SS^{-1} (pen o sg)_S`` -> ``x2``: for every sigma
    the stationary point on ``S`` is ``w_S = a - sigma b``, with residual variance
    ``r_ols + sigma^2 q`` (``r_ols = C_jj - a'c_S``, ``q = (pen o sg)_S' b``). That point is the
    node's exact optimum at penalty ``pen * sigma`` iff every penalised coefficient keeps its
    sign and every coefficient outside ``S`` meets ``|g_k(sigma)| <= pen_k sigma`` (to
    ``kkt_tol sqrt(C_kk)``), with ``g(sigma) = e0 + sigma e1`` linear in sigma: both are linear
    inequalities in sigma, so they hold on an interval ``[lo, hi]``. Writes
    ``out = (r_ols, q, lo, hi)`` (``lo > hi``: the piece holds nowhere); returns False when
    ``G_SS`` is numerically singular. ``s`` is not used for the piece itself, only to keep the
    interval's sign tests well-posed (an empty interval is returned as ``(s, -1)``).
    """
    for a in range(n):
        for b in range(a + 1):
            acc = C[idx[S[a]], idx[S[b]]]
            for k in range(b):
                acc -= L[a, k] * L[b, k]
            if a == b:
                if acc <= 1e-12 * C[idx[S[a]], idx[S[a]]]:
                    return False
                L[a, a] = math.sqrt(acc)
            else:
                L[a, b] = acc / L[b, b]
    for a in range(n):
        k = S[a]
        x1[a] = C[idx[k], j]
        x2[a] = pen[k] * sg[k]
    _chol_solve2(L, n, x1, x2)
    r_ols = C[j, j]
    q = 0.0
    lo = 0.0
    hi = math.inf
    for a in range(n):
        k = S[a]
        r_ols -= x1[a] * C[idx[k], j]
        q += pen[k] * sg[k] * x2[a]
        if pen[k] > 0.0:  # sg_k (a_k - sigma b_k) > 0
            al = sg[k] * x1[a]
            be = sg[k] * x2[a]
            if be > 0.0:
                t = al / be
                if t < hi:
                    hi = t
            elif be < 0.0:
                t = al / be
                if t > lo:
                    lo = t
            elif al <= 0.0:
                hi = -1.0
    # KKT outside S: |e0 + sigma e1| <= pen sigma + tk  <=>  e0 + sigma (e1 - pen) <= tk and
    # -e0 - sigma (e1 + pen) <= tk
    a = 0
    for k in range(m):
        if a < n and S[a] == k:
            a += 1
            continue
        ik = idx[k]
        e0 = C[ik, j]
        e1 = 0.0
        for t2 in range(n):
            cks = C[ik, idx[S[t2]]]
            e0 -= cks * x1[t2]
            e1 += cks * x2[t2]
        tk = kkt_tol * math.sqrt(C[ik, ik])
        for half in range(2):
            sgn = 1.0 if half == 0 else -1.0
            al = sgn * e0 - tk
            be = sgn * e1 - pen[k]
            # al + sigma be <= 0
            if be > 0.0:
                t = -al / be
                if t < hi:
                    hi = t
            elif be < 0.0:
                t = -al / be
                if t > lo:
                    lo = t
            elif al > 0.0:
                hi = -1.0
    out[0] = r_ols
    out[1] = q
    out[2] = lo
    out[3] = hi
    return True


def _feature_sign(C, j, idx, m, w, pen, s, kkt_tol, S, sg, inA, L, x1, x2, out, max_iter):
    """Exact lasso at penalty ``pen * s`` by the feature-sign search; ``w`` warm start, in place.

    Lee, Battle, Raina and Ng, "Efficient sparse coding algorithms" (NIPS 2006), Algorithm 1,
    with the line search replaced by a step to the first zero crossing (the objective is the
    signed quadratic up to there, so every step lowers it): solve the signed quadratic on the
    active set; if a coefficient would change sign, stop at its zero and drop it; once the
    active set's minimiser is reached, add the coefficient that most violates ``|g_k| <=
    pen_k s`` (sign: that of ``g_k``, which provably moves it the right way) or stop. Every
    step lowers the objective, so no active set repeats and the search is finite; unlike
    coordinate descent its cost does not grow with cond(cov). Unpenalised coefficients (a
    required edge) are always active. Returns the active-set size ``n`` (``S[:n]``, ``sg``,
    ``x1``, ``x2``, ``out`` hold the final piece, see :func:`_piece`), or -1 when ``G_SS`` is
    singular or ``max_iter`` is reached (the caller falls back to coordinate descent).
    """
    for k in range(m):
        inA[k] = (w[k] != 0.0) or (pen[k] == 0.0)
        sg[k] = 1.0 if w[k] > 0.0 else (-1.0 if w[k] < 0.0 else 0.0)
    for _it in range(max_iter):
        n = 0
        for k in range(m):
            if inA[k]:
                S[n] = k
                n += 1
        if not _piece(C, j, idx, m, pen, s, S, n, sg, L, x1, x2, kkt_tol, out):
            return -1
        tstar = 1.0
        kmin = -1
        for a in range(n):
            k = S[a]
            if pen[k] > 0.0:
                xn = x1[a] - s * x2[a]
                if xn * sg[k] <= 0.0:
                    dk = xn - w[k]
                    t = -w[k] / dk if dk != 0.0 else 0.0
                    if t < tstar:
                        tstar = t
                        kmin = k
        if tstar < 0.0:
            tstar = 0.0
        for a in range(n):
            k = S[a]
            w[k] += tstar * (x1[a] - s * x2[a] - w[k])
        if kmin >= 0:
            w[kmin] = 0.0
            inA[kmin] = False
            sg[kmin] = 0.0
            continue
        if out[2] <= s <= out[3]:  # the active set's minimiser is the optimum (KKT holds)
            for a in range(n):
                w[S[a]] = x1[a] - s * x2[a]
            return n
        # add the worst violator of |g_k| <= pen_k s
        best = 0.0
        kbest = -1
        gbest = 0.0
        for k in range(m):
            if inA[k]:
                continue
            ik = idx[k]
            gk = C[ik, j]
            for a in range(n):
                gk -= C[ik, idx[S[a]]] * w[S[a]]
            viol = abs(gk) - pen[k] * s - kkt_tol * math.sqrt(C[ik, ik])
            if viol > best:
                best = viol
                kbest = k
                gbest = gk
        if kbest < 0:  # interval test failed only by rounding at its ends: accept
            return n
        inA[kbest] = True
        sg[kbest] = 1.0 if gbest > 0.0 else -1.0
    return -1


def _solve_nodes_fs_py(covs, grp, order, pos, allowed, lam, W, resid, sigma, sigma0, nodes, adapt, tol, rq, iv, A,
                       B, zobrist, ck, cj, cA, cB, cm):
    """Exact node solves by the feature-sign search; the fast path of :func:`_solve_nodes_py`.

    Same problem and arguments as :func:`_solve_nodes_py` (node j reads ``covs[grp[j]]``), plus
    the node's linear piece kept for
    the callers: ``A[:, j]``, ``B[:, j]`` with ``W[:, j] = A[:, j] - sigma B[:, j]`` on the
    piece, ``rq[j] = (r_ols, q)`` and ``iv[j] = (lo, hi)``, the sigmas where the piece is the
    node's optimum (EV moves its shared sigma inside these without re-solving). With ``adapt``
    (NV) sigma_j is the piece's fixed point ``max(sqrt(r_ols / (1 - q)), sigma0_j)`` once it
    lies in the piece's interval; else the lasso is re-solved there (at most 50 times). A node
    the search cannot finish (singular ``G_SS``, iteration caps) is solved by
    :func:`_solve_nodes_py` and keeps ``A = W``, ``B = 0``, ``rq = (r_j, 0)``,
    ``iv = (sigma_j, sigma_j)``.

    **Cache** (issue 32): a node's problem depends only on the node and its predecessor set,
    so its solved piece is kept in a direct-mapped table of ``K = ck.shape[0]`` slots
    (``K = 0``: no cache) under the key ``zobrist[d + j] XOR (XOR of zobrist[i] over the
    predecessors i)`` (Zobrist hashing; 64-bit keys, the node is stored too). A hit whose
    interval holds the current sigma (NV: always; the piece's own sigma is stored) is copied
    instead of solved; a hit outside its interval warm-starts the solve. Rows: ``ck`` key,
    ``cj`` node, ``cA`` / ``cB`` the columns ``A[:, j]`` / ``B[:, j]``, ``cm`` =
    ``(r_ols, q, lo, hi, sigma_j)``. A node's covariance is fixed for the whole search, so the
    key needs no group. Returns the number of nodes that fell back.
    """
    d = covs.shape[1]
    fallbacks = 0
    idx = np.empty(d, dtype=np.int64)
    w = np.empty(d)
    pen = np.empty(d)
    S = np.empty(d, dtype=np.int64)
    sg = np.empty(d)
    inA = np.empty(d, dtype=np.bool_)
    L = np.empty((d, d))
    x1 = np.empty(d)
    x2 = np.empty(d)
    out = np.empty(4)
    one = np.empty(1, dtype=np.int64)
    for t in range(nodes.shape[0]):
        j = nodes[t]
        C = covs[grp[j]]
        p = pos[j]
        m = 0
        for q in range(p):
            i = order[q]
            if allowed[i, j]:
                idx[m] = i
                w[m] = W[i, j]
                pen[m] = lam[i, j]
                m += 1
        s = sigma[j]
        slot = -1
        key = 0
        K = ck.shape[0]
        if K > 0:
            key = zobrist[d + j]
            for q in range(p):
                key ^= zobrist[order[q]]
            slot = key & (K - 1)
            if ck[slot] == key and cj[slot] == j:
                if adapt:
                    s = cm[slot, 4]
                if cm[slot, 2] <= s <= cm[slot, 3]:  # the stored piece is the optimum here
                    r = cm[slot, 0] + s * s * cm[slot, 1]
                    for i in range(d):
                        A[i, j] = cA[slot, i]
                        B[i, j] = cB[slot, i]
                        W[i, j] = cA[slot, i] - s * cB[slot, i]
                    resid[j] = r if r > 0.0 else 0.0
                    sigma[j] = s
                    rq[j, 0] = cm[slot, 0]
                    rq[j, 1] = cm[slot, 1]
                    iv[j, 0] = cm[slot, 2]
                    iv[j, 1] = cm[slot, 3]
                    continue
                for a in range(m):  # a better warm start: the stored piece at this sigma
                    w[a] = cA[slot, idx[a]] - s * cB[slot, idx[a]]
        kkt_tol = tol * math.sqrt(C[j, j])
        n = -1
        for _round in range(50):
            n = _feature_sign(C, j, idx, m, w, pen, s, kkt_tol, S, sg, inA, L, x1, x2, out, 4 * m + 50)
            if n < 0 or not adapt:
                break
            r_ols = out[0]
            qq = out[1]
            if qq >= 1.0 or r_ols < 0.0:
                n = -1
                break
            s_new = math.sqrt(r_ols / (1.0 - qq))
            if s_new < sigma0[j]:
                s_new = sigma0[j]
            if out[2] <= s_new <= out[3]:
                s = s_new
                break
            s = s_new
            n = -1
        for i in range(d):
            W[i, j] = 0.0
            A[i, j] = 0.0
            B[i, j] = 0.0
        if n >= 0:
            for a in range(n):
                k = S[a]
                W[idx[k], j] = x1[a] - s * x2[a]
                A[idx[k], j] = x1[a]
                B[idx[k], j] = x2[a]
            r = out[0] + s * s * out[1]
            resid[j] = r if r > 0.0 else 0.0
            sigma[j] = s
            rq[j, 0] = out[0]
            rq[j, 1] = out[1]
            iv[j, 0] = out[2]
            iv[j, 1] = out[3]
            if slot >= 0:
                ck[slot] = key
                cj[slot] = j
                for i in range(d):
                    cA[slot, i] = A[i, j]
                    cB[slot, i] = B[i, j]
                cm[slot, 0] = out[0]
                cm[slot, 1] = out[1]
                cm[slot, 2] = out[2]
                cm[slot, 3] = out[3]
                cm[slot, 4] = s
        else:  # the coordinate-descent kernel, from the warm start
            fallbacks += 1
            for a in range(m):
                W[idx[a], j] = w[a]
            one[0] = j
            _solve_nodes(covs, grp, order, pos, allowed, lam, W, resid, sigma, sigma0, one, adapt, tol, _MAX_SWEEPS,
                         _MAX_OUTER, rq)
            for i in range(d):
                A[i, j] = W[i, j]
            rq[j, 0] = resid[j]
            rq[j, 1] = 0.0
            iv[j, 0] = sigma[j]
            iv[j, 1] = sigma[j]
    return fallbacks


if _numba is not None:
    _piece = _jit(_piece)
    _feature_sign = _jit(_feature_sign)
    _solve_nodes_fs = _jit(_solve_nodes_fs_py)
else:  # pragma: no cover - exercised only where numba is absent
    _solve_nodes_fs = _solve_nodes_fs_py
