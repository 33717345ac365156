"""The whole Adam phase of a stage on the device: chunks, checkpoints and the stopping rule in one loop (issue 50).

Issue 33's backend (:func:`colide_core.solver._jax.adam_chunk_jax`) compiled only the stretch of
Adam steps between two checkpoints; every checkpoint came back to the host for the objective
(a numpy LU of ``s I - W o W``), the running average's evaluation (an LU and an inverse), the
convergence test and the chatter control. On a GPU that host part was most of a fit (75 % at
d = 1000 on an H200). Here the stage's whole Adam phase of
:func:`colide_core.solver._fast.fast_solve` is one ``jax.jit``-compiled ``lax.while_loop`` over
checkpoints, each iteration being the chunk of steps (the same traced function,
:func:`colide_core.solver._jax._chunk_fn`) followed by the checkpoint's evaluation in JAX:

* the objective at W: ``log det(s I - W o W)`` by ``slogdet`` (``-inf`` when the determinant is
  not positive, as :func:`colide_core.solver._objective._logdet`), the score of eq. 3 / eq. 6 from
  the residuals and sigma the chunk carries, the L1 term (:func:`colide_core.solver._objective.
  _stage_value`'s arithmetic);
* the running average's point, as :func:`colide_core.solver._fast._evaluate`: one LU (pivoted,
  ``jax.scipy.linalg.lu_factor``) for the determinant's sign and log, the inverse from it for the
  domain test (finite, entry-wise >= -1e-6), then its residuals, sigma and objective;
* the fast loop's decisions, in its order: the relative change of the tested objective against
  ``switch_tol`` (stage end, converged when ``switch_tol <= tol``), the budget, the chatter test
  and its halving of the step scale (with the step, Adam's decay rates and the inverse interval
  following the scale).

The host sees the loop once every ``K`` checkpoints (a *visit*): the loop returns the checkpoints'
records (iteration, progress, objective, h, sigma), the host writes them into the solve's
history, calls the callback once with the last of them (``Stop``) and checks ``max_time``. ``K``
is chosen so that a visit comes about every :data:`VISIT_S` seconds (measured on the previous
visit), never past the deadline's estimate; without a callback and a deadline there is nothing to
hear and a visit runs up to the record buffer's length. The state (about ten ``d x d`` arrays)
stays on the device between visits and comes back once per stage. ``K`` reads a clock but no
result depends on it: the decisions are the loop's, per checkpoint; only where a stop lands does
(a stop, from the callback or ``max_time``, is heard at the end of a visit).

The last stage's polishing runs on the device too (:func:`polish_phase`, one compiled loop of
proximal-gradient steps with the host's line search and rules, heard by the host at the same
bounded rate), so its LU and inverse per evaluation no longer come back to the host.

Each stage's warm start and the running average's point at its end are evaluated on the device
too (:func:`evaluate_point`, one jitted function that issue 33's chunk path uses as well, so the
two paths still take the same steps).

What stays on the host: the visits' bookkeeping, and with ``record_W`` every checkpoint (W at each
checkpoint is kept on the host: that solve takes the chunk path and polishes on the host).

Conventions: ``cov`` is the ``(n_nodes, n_nodes)`` covariance ``X.T @ X / n`` of centred data
``X`` of shape ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means the edge i -> j.
"""
from __future__ import annotations

import functools
import threading
import time
import types

import numpy as np

from colide_core.exceptions import DeviceNotSupportedError
from colide_core.solver._objective import _DOMAIN_TOL

__all__ = ["VISIT_S", "adam_phase", "evaluate_point", "loop_stats", "polish_phase"]

#: Seconds of device work between two visits of the host when it has something to hear (a
#: callback or ``max_time``): the rate at which progress, ``Stop`` and the deadline are heard.
VISIT_S = 0.25
#: Checkpoint records one visit can hold (per matrix size, so the NV sigma buffer stays small).
_BUFFER_MAX, _BUFFER_MIN, _BUFFER_CELLS = 256, 16, 2 ** 19


_LOCAL = threading.local()  # the loop's counters, per thread


def _buffer(d):
    return int(min(_BUFFER_MAX, max(_BUFFER_MIN, _BUFFER_CELLS // max(d, 1))))


def loop_stats(reset=False):
    """What :func:`adam_phase` did in this thread: visits, steps, checkpoints and seconds.

    Parameters
    ----------
    reset : bool, default=False
        Zero the counters after reading them.

    Returns
    -------
    dict
        ``{"visits": int, "steps": int, "checkpoints": int, "seconds": float}``, and once made
        ``"polish_seconds"`` / ``"polish_evals"`` (a polishing on the device) and
        ``"evaluation_seconds"`` / ``"evaluations"`` (:func:`evaluate_point`'s and the stage
        end's evaluations); ``seconds`` is the wall time in the compiled loops (the Adam phase's
        and the polishing's; their compile, dispatch and the transfers included), the
        evaluations' time is apart. The chunk counters of
        :func:`colide_core.solver._jax.kernel_stats` count the Adam phase's steps and seconds too.
    """
    stats = getattr(_LOCAL, "loop_stats", None) or {"visits": 0, "steps": 0, "checkpoints": 0, "seconds": 0.0}
    out = dict(stats)
    if reset or getattr(_LOCAL, "loop_stats", None) is None:
        _LOCAL.loop_stats = {"visits": 0, "steps": 0, "checkpoints": 0, "seconds": 0.0}
    return out


@functools.lru_cache(maxsize=None)
def _point_fns(backend, vcode, required):
    """The stage objective and the point evaluation in JAX, shared by the Adam phase and the polishing.

    ``value``: :func:`colide_core.solver._objective._stage_value`'s arithmetic, ``mu (score +
    sum(lam |W|)) + h_ldet`` (eq. 3 / eq. 6 with ``h = d log s - log det(s I - W o W)``);
    ``objective_at``: it at W from the residuals and sigma a chunk carries (``slogdet``, ``-inf``
    outside the domain); ``evaluate``: :func:`colide_core.solver._fast._evaluate` (one pivoted LU
    for the determinant's sign and log, the inverse from it for the domain test, finite and
    entry-wise >= -1e-6, then residuals, sigma and objective), returning a dict of the point's
    arrays and ``inside``.
    """
    jax = backend._import_jax()
    jnp = jax.numpy
    jsl = jax.scipy.linalg
    P = backend._parts()

    def value(W, resid, isig, lam, mu, s, logdet):
        # _objective._stage_value with _score_value: mu (score + sum(lam |W|)) + h_ldet
        d = W.shape[0]
        h = d * jnp.log(s) - logdet
        if vcode == 0:
            sigma = 1.0 / isig[0]
            score = jnp.sum(resid) / (2.0 * sigma) + d * sigma / 2.0
        elif vcode == 1:
            sigma = 1.0 / isig
            score = 0.5 * jnp.sum(resid / sigma) + 0.5 * jnp.sum(sigma)
        else:
            score = 0.5 * jnp.sum(resid)
        return mu * (score + jnp.sum(lam * jnp.abs(W))) + h, h

    def domain(W, s, A):
        d = W.shape[0]
        M = s * jnp.eye(d, dtype=W.dtype) - W * W
        return M - A if required else M

    def objective_at(W, resid, isig, lam, mu, s, A):
        sign, logabs = jnp.linalg.slogdet(domain(W, s, A))
        return value(W, resid, isig, lam, mu, s, jnp.where(sign > 0, logabs, -jnp.inf))

    def evaluate(Wb, cov, lam, sig0, mu, s, A):
        # _fast._evaluate: the point's arrays, its objective, and whether it is inside the domain
        d = Wb.shape[0]
        lu, piv = jsl.lu_factor(domain(Wb, s, A))
        diag = jnp.diagonal(lu)
        neg = jnp.sum(diag < 0) + jnp.sum(piv != jnp.arange(d, dtype=piv.dtype))
        logdet = jnp.sum(jnp.log(jnp.abs(diag)))
        Minv = jsl.lu_solve((lu, piv), jnp.eye(d, dtype=Wb.dtype))
        inside = (jnp.all(diag != 0.0) & (neg % 2 == 0) & jnp.isfinite(logdet)
                  & (jnp.min(Minv) >= _DOMAIN_TOL) & jnp.isfinite(jnp.max(Minv)))
        R, resid, isig = P.residuals_sigma(Wb, cov, jnp.ones(d, dtype=Wb.dtype), sig0, vcode)
        obj, h = value(Wb, resid, isig, lam, mu, s, logdet)
        return dict(inside=inside, obj=obj, h=h, W=Wb, MinvT=Minv.T, R=R, resid=resid, isig=isig, logdet=logdet)

    return types.SimpleNamespace(value=value, domain=domain, objective_at=objective_at, evaluate=evaluate)


@functools.lru_cache(maxsize=None)
def _compiled_phase(backend, vcode, required, average, chatter, auto_refresh, B, inverse="block"):
    """The jitted stage loop for one variant code and set of switches; compiled per matrix size.

    ``backend``: :mod:`colide_core.solver._jax` (passed in, not imported: it imports this module).
    ``average`` / ``chatter``: the running average is evaluated at checkpoints (the fast loop's
    ``average or chatter_tol``); ``auto_refresh``: ``inverse_every="auto"`` (10 steps per
    inverse with the refined certificate at step scale 1, else 3); ``B``: the record buffer;
    ``inverse``: the step's inverse, ``"block"`` or ``"direct"`` (:data:`colide_core.solver._jax._INVERSE`).
    """
    from colide_core.solver._common import _MAX_HALVINGS
    from colide_core.solver._fast import _INVERSE_EVERY, _INVERSE_EVERY_MAX

    jax = backend._import_jax()
    jnp, lax = jax.numpy, jax.lax
    chunk = backend._chunk_fn(vcode, required, inverse)
    evaluate_bar = average or chatter
    E = _point_fns(backend, vcode, required)
    objective_at = E.objective_at

    def evaluate(Wb, cov, lam, sig0, mu, s, A):
        p = E.evaluate(Wb, cov, lam, sig0, mu, s, A)
        return p["inside"], p["obj"]

    def phase(state, cov, lam, mask, sig0, A, mu, s, T, checkpoint, beta_1, beta_2, sw_tol, tol,
              chatter_tol, min_scale, inverse_every, K):
        d = state["W"].shape[0]
        f64 = state["W"].dtype

        def body(c):
            st, rec, j = c["state"], c["rec"], c["j"]
            c_cur, used, t = st["c"], st["used"], st["t"]
            b1 = jnp.maximum(1.0 - (1.0 - beta_1) * c_cur, 0.0)
            b2 = jnp.maximum(1.0 - (1.0 - beta_2) * c_cur, 0.0)
            ck = jnp.maximum(jnp.ceil(checkpoint / c_cur).astype(jnp.int64), 1)
            ema = jnp.minimum(1.0, 4.0 / ck)
            n = jnp.maximum(jnp.minimum(ck, jnp.ceil((T - used) / c_cur).astype(jnp.int64)), 1)
            if auto_refresh:
                faithful = c_cur <= 1.0 + 1e-12
                refresh = jnp.where(faithful, _INVERSE_EVERY_MAX, _INVERSE_EVERY)
                refine = faithful
            else:
                refresh, refine = inverse_every, jnp.asarray(False)
            (status, W, m, v, MinvT, R, resid, isig, Wbar, xc, lag, lr, b1t, b2t) = chunk(
                st["W"], st["m"], st["v"], st["MinvT"], st["R"], st["resid"], st["isig"], st["Wbar"], st["xc"],
                st["lag"], cov, lam, mask, sig0, A, mu, s, st["lr"], b1, b2, st["b1t"], st["b2t"], ema, n,
                _MAX_HALVINGS, refresh, refine)
            ran = status == 0
            t_n = t + jnp.where(ran, n, 0)
            used_n = used + jnp.where(ran, n * c_cur, 0.0)
            obj, h = objective_at(W, resid, isig, lam, mu, s, A)
            if evaluate_bar:
                p_in, p_obj = evaluate(Wbar, cov, lam, sig0, mu, s, A)
            else:
                p_in, p_obj = jnp.asarray(False), jnp.asarray(jnp.inf, f64)
            ok = ran & jnp.isfinite(obj)
            err = jnp.where(ran, jnp.where(ok, 0, 3), status).astype(jnp.int64)
            # the fast loop's decisions at this checkpoint, in its order
            obj_prev = st["obj_prev"]
            f_test = jnp.where(p_in, p_obj, obj) if average else obj
            conv_now = jnp.isfinite(obj_prev) & (jnp.abs(obj_prev - f_test) <= sw_tol * jnp.abs(obj_prev))
            budget = used_n >= T
            chat = (p_in & (c_cur > min_scale) & (obj - p_obj > chatter_tol * jnp.abs(p_obj))
                    & ~conv_now & ~budget) if chatter else jnp.asarray(False)
            new_c = jnp.maximum(c_cur / 2.0, min_scale)
            rec = dict(
                t=rec["t"].at[j].set(t_n), used=rec["used"].at[j].set(used_n), obj=rec["obj"].at[j].set(obj),
                h=rec["h"].at[j].set(h), isig=rec["isig"].at[j].set(isig),
            )
            st = dict(
                W=W, m=m, v=v, MinvT=MinvT, R=R, resid=resid, isig=isig, Wbar=Wbar, xc=xc, lag=lag,
                lr=jnp.where(chat, lr * (new_c / c_cur), lr), b1t=b1t, b2t=b2t,
                c=jnp.where(chat, new_c, c_cur), t=t_n, used=used_n, obj_prev=f_test,
                done=conv_now | budget, conv=conv_now & (sw_tol <= tol), err=err,
                t_err=jnp.where(ran, t_n, t), obj=obj,
                lr_cp=lr, c_cp=c_cur, ck=ck,  # the values at this checkpoint, before its halving
            )
            return dict(state=st, rec=rec, j=j + jnp.where(ok, 1, 0))

        rec0 = dict(t=jnp.zeros(B, jnp.int64), used=jnp.zeros(B, f64), obj=jnp.zeros(B, f64),
                    h=jnp.zeros(B, f64), isig=jnp.zeros((B, d), f64))
        c0 = dict(state=dict(state, err=jnp.asarray(0, jnp.int64), done=jnp.asarray(False)), rec=rec0,
                  j=jnp.asarray(0, jnp.int64))
        out = lax.while_loop(lambda c: (c["j"] < K) & ~c["state"]["done"] & (c["state"]["err"] == 0), body, c0)
        return out["state"], out["rec"], out["j"]

    return jax.jit(phase)


def _on_solve_device(backend, node, offset, is_req=None):
    """``(jax, dev, put, is_req, A)`` for a piece of the running solve: its device (the solve's, else
    JAX's first), a transfer to it, and the required edges' ``tau R`` there (a placeholder without
    any). Raises :class:`DeviceNotSupportedError` for the per-node covariance form."""
    if node is not None:
        raise DeviceNotSupportedError(backend.NO_CONDITIONS)
    jax = backend._import_jax()
    dev = getattr(backend._LOCAL, "device", None) or jax.devices()[0]
    put = functools.partial(jax.device_put, device=dev)
    is_req = offset is not None if is_req is None else is_req
    A = put(np.ascontiguousarray(offset, dtype=float) if is_req else np.zeros((1, 1)))
    return jax, dev, put, is_req, A


_ARRAYS = ("W", "MinvT", "R", "resid", "isig", "xc")


def adam_phase(state, Wbar, *, backend, stage, run, callback, cov, lam, mask, sig0, vcode, mu, s, lr, c, T, checkpoint,
               beta_1, beta_2, sw_tol, tol, average, chatter_tol, min_scale, inverse_every, grouped, required,
               offset, node):
    """Run a stage's whole Adam phase of :func:`colide_core.solver._fast.fast_solve` on the device.

    The arguments are the fast loop's, at the start of the stage's Adam phase: ``state`` (its
    ``_StageState``, updated in place), ``Wbar`` (the running average, updated in place), the
    stage's ``mu``, ``s``, step ``lr``, initial step scale ``c`` and budget ``T`` (faithful
    steps), ``sw_tol`` / ``tol`` (the stage's switch tolerance and the solve's), ``average``,
    ``chatter_tol`` (None or a number), ``min_scale``, ``inverse_every`` (None for "auto"),
    ``run`` (the solve's record, :class:`colide_core.solver._common._Solve`) and ``callback``;
    ``backend``: :mod:`colide_core.solver._jax` (its device, constants and chunk; passed in by
    its ``adam_chunk_loop``, which reaches this function as ``adam_chunk_loop.adam_phase``).

    Returns
    -------
    tuple or None
        ``(t, used, c_cur, lr_k, ck, obj, pbar, stop_reason, stage_converged)``: the loop's own
        variables after its Adam phase (steps, faithful-equivalent progress, step scale, step,
        checkpoint interval, the last checkpoint's objective, the running average's point or
        None, the stop reason or None, whether the stage met ``tol``). None when the phase
        declines (``record_W``: W at every checkpoint is the host's), and the loop then runs its
        chunks one by one.

    Raises
    ------
    FloatingPointError
        With the fast loop's messages: a step that cannot stay inside the log-det domain, Adam's
        moments overflowing, an objective that is not finite.
    DeviceNotSupportedError
        For the per-node covariance form (several conditions).
    """
    from colide_core.solver._fast import _sigma_value

    if run.W_history is not None:
        return None
    if len(grouped) >= 6 and bool(grouped[5]):
        raise DeviceNotSupportedError(backend.NO_CONDITIONS)
    t_in = time.perf_counter()
    jax, dev, put, is_req, A = _on_solve_device(backend, node, offset, len(required[0]) > 0)
    cov_d, lam_d, mask_d, sig0_d = backend._constants(jax, dev, cov, lam, mask, sig0)
    d = state.W.shape[0]
    B = _buffer(d)
    f = _compiled_phase(backend, int(vcode), is_req, bool(average), bool(chatter_tol), inverse_every is None, B,
                        backend._inverse_for(dev))
    f64, i64 = np.float64, np.int64
    carry = {name: put(getattr(state, name)) for name in _ARRAYS}
    carry.update(
        Wbar=put(Wbar), m=put(np.zeros((d, d))), v=put(np.zeros((d, d))), lag=put(i64(state.lag[0])),
        lr=put(f64(lr)), b1t=put(f64(1.0)), b2t=put(f64(1.0)), c=put(f64(c)), t=put(i64(0)), used=put(f64(0.0)),
        obj_prev=put(f64(np.inf)), conv=put(np.bool_(False)), t_err=put(i64(0)), obj=put(f64(np.nan)),
        lr_cp=put(f64(lr)), c_cp=put(f64(c)), ck=put(i64(max(int(np.ceil(checkpoint / c)), 1))),
    )
    args = (cov_d, lam_d, mask_d, sig0_d, A, f64(mu), f64(s), f64(T), f64(checkpoint), f64(beta_1), f64(beta_2),
            f64(sw_tol), f64(tol), f64(chatter_tol or 0.0), f64(min_scale), i64(inverse_every or 1))
    hear = callback is not None or run.deadline is not None
    K = 1 if hear else B
    stats = loop_stats()
    backend.kernel_stats()  # made when missing
    kstats = backend._LOCAL.stats
    stats = _LOCAL.loop_stats
    stop_reason = None
    obj = np.nan
    t_prev = 0
    seconds = time.perf_counter() - t_in
    while True:
        t0 = time.perf_counter()
        out_state, rec, j = f(carry, *args, i64(K))
        small = jax.device_get({k: out_state[k] for k in ("t", "used", "c", "lr", "ck", "done", "conv", "err", "t_err",
                                                          "lr_cp", "c_cp", "obj")})
        rec, j = jax.device_get((rec, j))
        dt = time.perf_counter() - t0
        seconds += dt
        carry = {k: out_state[k] for k in carry}
        j = int(j)
        stats["visits"] += 1
        stats["checkpoints"] += j
        kstats["calls"] += 1
        steps = int(small["t"]) - t_prev
        t_prev = int(small["t"])
        stats["steps"] += steps
        kstats["steps"] += steps
        for i in range(j):
            last = i == j - 1
            stop = run.checkpoint(stage, int(rec["t"][i]), float(rec["obj"][i]), float(rec["h"][i]),
                                  _sigma_value(rec["isig"][i], vcode), callback if last else None,
                                  float(rec["used"][i]))
            if last:
                stop_reason = stop
                obj = float(rec["obj"][i])
        err = int(small["err"])
        if err in (1, 2):
            _account(stats, kstats, seconds)
            t_e = int(small["t_err"])
            if err == 2:
                raise FloatingPointError(
                    f"Stage {stage}, step {t_e + 1}: the gradient overflows (the data's scale is too large "
                    "for this score); standardise or rescale the data."
                )
            from colide_core.solver._common import _MAX_HALVINGS

            raise FloatingPointError(
                f"Stage {stage}, step {t_e + 1}: could not stay inside the log-det domain "
                f"(step size halved {_MAX_HALVINGS} times)."
            )
        if err == 3:
            _account(stats, kstats, seconds)
            raise FloatingPointError(f"Stage {stage}, step {int(small['t_err'])}: the objective is not finite.")
        if stop_reason is not None or bool(small["done"]):
            break
        if hear:
            K = _next_visit(dt, j, B, run.deadline)
    t0 = time.perf_counter()
    host = jax.device_get({k: carry[k] for k in (*_ARRAYS, "Wbar", "lag")})
    for name in _ARRAYS:
        getattr(state, name)[...] = host[name]
    state.lag[0] = int(host["lag"])
    Wbar[...] = host["Wbar"]
    seconds += time.perf_counter() - t0
    _account(stats, kstats, seconds)
    t, used = int(small["t"]), float(small["used"])
    if stop_reason is not None:  # heard at this checkpoint: its values, before the loop's decisions there
        return t, used, float(small["c_cp"]), float(small["lr_cp"]), int(small["ck"]), obj, None, stop_reason, False
    pbar = None
    if average or chatter_tol:  # the running average's point, where it lives (the chunk path's function)
        t0 = time.perf_counter()
        f_ev = _compiled_evaluate(backend, int(vcode), is_req)
        pbar = _host_point(jax.device_get(f_ev(carry["Wbar"], cov_d, lam_d, sig0_d, f64(mu), f64(s), A)), vcode)
        _count_evaluation(time.perf_counter() - t0)
    return (t, used, float(small["c"]), float(small["lr"]), int(small["ck"]), obj, pbar, None,
            bool(small["conv"]))


@functools.lru_cache(maxsize=None)
def _compiled_evaluate(backend, vcode, required):
    """:func:`_point_fns`'s evaluation, jitted (per matrix size): one function for every evaluation
    made outside the loops (a stage's warm start, the running average's point), so that the
    whole loop and the chunk path get the same bits from it."""
    return backend._import_jax().jit(_point_fns(backend, vcode, required).evaluate)


def _host_point(p, vcode, inside=None):
    """A ``_fast._Point`` from a device evaluation's arrays (copied to the host), or None outside the
    domain (``p["inside"]``, or ``inside`` when given)."""
    from colide_core.solver._fast import _Point, _sigma_value

    if not bool(p["inside"] if inside is None else inside):
        return None
    q = _Point()
    q.W, q.MinvT, q.R = (np.ascontiguousarray(p[k]) for k in ("W", "MinvT", "R"))
    q.resid, q.isig = np.array(p["resid"], dtype=float), np.array(p["isig"], dtype=float)
    q.sigma = _sigma_value(q.isig, vcode)
    q.logdet, q.h, q.obj = float(p["logdet"]), float(p["h"]), float(p["obj"])
    return q


def _device_constants(backend, jax, dev, cov, lam, sig0):
    """The solve's device copies of ``cov``, ``lam`` and ``sig0`` when made (``_jax._constants``), else fresh ones."""
    cached = getattr(backend._LOCAL, "consts", None)
    if cached is not None and cached[0] is dev and cached[1][0] is cov and cached[1][1] is lam \
            and cached[1][3] is sig0:
        return cached[2][0], cached[2][1], cached[2][3]
    return tuple(jax.device_put(np.asarray(a, dtype=float), dev) for a in (cov, lam, sig0))


def evaluate_point(W, cov, s, mu, lam, vcode, sig0, node=None, offset=None, *, backend):
    """:func:`colide_core.solver._fast._evaluate` on the device: the stage objective at W and its point, or None.

    Same arguments, same domain test (a pivoted LU's sign and log-determinant, the inverse finite
    and entry-wise >= -1e-6) and same point (``W``, ``MinvT``, ``R``, ``resid``, ``isig``,
    ``sigma``, ``logdet``, ``h``, ``obj``) as the host's, to rounding. The fast loop uses it for
    each stage's warm start and, on the chunk path, the running average's point at each
    checkpoint (issue 50: an LU on one host thread was 0.28 s at d = 1,000 and 2.7 s at d = 2,000).
    ``W``: ``(n_nodes, n_nodes)``, ``W[i, j] != 0`` meaning i -> j; ``cov``: the covariance of
    centred data ``X`` of shape ``(n_samples, n_nodes)``.

    Raises
    ------
    DeviceNotSupportedError
        For the per-node covariance form (several conditions).
    """
    t0 = time.perf_counter()
    jax, dev, put, is_req, A = _on_solve_device(backend, node, offset)
    cov_d, lam_d, sig0_d = _device_constants(backend, jax, dev, cov, lam, sig0)
    f = _compiled_evaluate(backend, int(vcode), is_req)
    p = jax.device_get(f(put(np.ascontiguousarray(W, dtype=float)), cov_d, lam_d, sig0_d, np.float64(mu),
                         np.float64(s), A))
    _count_evaluation(time.perf_counter() - t0)
    return _host_point(p, vcode)


def _count_evaluation(seconds):
    loop_stats()  # made when missing
    stats = _LOCAL.loop_stats
    stats["evaluation_seconds"] = stats.get("evaluation_seconds", 0.0) + seconds
    stats["evaluations"] = stats.get("evaluations", 0) + 1


def _next_visit(dt, j, B, deadline):
    """Checkpoints in the next visit: about :data:`VISIT_S` seconds of them at the last visit's
    rate (``dt`` seconds for ``j`` checkpoints), at most ``B``, never far past the ``deadline``
    (a ``time.perf_counter`` value, or None)."""
    per = dt / max(j, 1)
    K = int(min(B, max(1, VISIT_S // per if per > 0 else B)))
    if deadline is not None:
        K = int(max(1, min(K, (deadline - time.perf_counter()) // per if per > 0 else K)))
    return K


def _account(stats, kstats, seconds):
    stats["seconds"] += seconds
    kstats["seconds"] += seconds



# --------------------------------------------------------------------------------------------
# The last stage's polishing on the device
# --------------------------------------------------------------------------------------------
#: The polishing's point arrays kept between visits (a dict per point: ``p``, the accepted one).
_POINT = ("W", "MinvT", "R", "resid", "isig", "obj", "h", "logdet")


@functools.lru_cache(maxsize=None)
def _compiled_polish(backend, vcode, required, B):
    """The jitted polishing of :func:`colide_core.solver._fast._polish`: ``(start, run)``; compiled per matrix size.

    ``start(W, ...)`` evaluates the first point, its gradient and the first step size; ``run(carry,
    ..., K)`` iterates proximal gradient with Barzilai-Borwein steps and the nonmonotone,
    domain-aware line search until the polishing ends or ``K`` checkpoints were recorded (a
    visit). ``B``: the record buffer.
    """
    from colide_core.solver._fast import _ARMIJO, _ETA_MAX, _ETA_MIN, _NM_MEMORY

    jax = backend._import_jax()
    jnp, lax = jax.numpy, jax.lax
    E = _point_fns(backend, vcode, required)
    NH = _NM_MEMORY + 1  # the objectives the rule reads: the last _NM_MEMORY and the one before them

    def grad(p, mu, mask):
        # _fast._grad: the smooth part's gradient, mu d score / dW + d h / dW, masked
        return (-mu * p["R"] * p["isig"][None, :] + 2.0 * p["MinvT"] * p["W"]) * mask

    def prox(W, G, eta, thr, mask):
        # _fast._prox: S_thr(W - eta G), masked
        z = W - eta * G
        a = jnp.abs(z) - thr
        return jnp.where((a > 0.0) & (mask != 0.0), jnp.where(z > 0.0, a, -a), 0.0)

    def point(p):
        return {k: p[k] for k in _POINT}

    def start(W, cov, lam, mask, sig0, A, mu, s, lr):
        p = E.evaluate(W, cov, lam, sig0, mu, s, A)
        G = grad(p, mu, mask)
        gmax = jnp.max(jnp.abs(G))
        eta = jnp.where(gmax > 0, lr / gmax, lr)
        eta = jnp.minimum(jnp.maximum(eta, _ETA_MIN), _ETA_MAX)
        hist = jnp.full(NH, -jnp.inf, dtype=W.dtype).at[0].set(p["obj"])
        return p["inside"], dict(p=point(p), G=G, eta=eta, hist=hist, nh=jnp.asarray(1, jnp.int64),
                                 n_ev=jnp.asarray(0, jnp.int64), it=jnp.asarray(0, jnp.int64),
                                 end=jnp.asarray(0, jnp.int64))

    def run(carry, cov, lam, mask, sig0, A, mu, s, tol, max_it, ck, K):
        d = carry["G"].shape[0]
        f64 = carry["G"].dtype
        thr_unit = mu * lam

        def body(c):
            st, rec, j = c["st"], c["rec"], c["j"]
            p, G, eta, hist, nh, n_ev = st["p"], st["G"], st["eta"], st["hist"], st["nh"], st["n_ev"]
            it = st["it"] + 1
            back = nh - 1 - jnp.arange(_NM_MEMORY)
            f_ref = jnp.max(jnp.where(back >= 0, hist[back % NH], -jnp.inf))

            def try_eta(ls):
                # one try of the step: accepted (1), refused and eta halved (0), or given up (2)
                eta_c, n_c = ls["eta"], ls["n_ev"]
                Wn = prox(p["W"], G, eta_c, eta_c * thr_unit, mask)
                q = E.evaluate(Wn, cov, lam, sig0, mu, s, A)
                n_c = n_c + 1
                dW = Wn - p["W"]
                ok = q["inside"] & jnp.isfinite(q["obj"])
                ok = ok & (q["obj"] <= f_ref - _ARMIJO / (2.0 * eta_c) * jnp.vdot(dW, dW))
                eta_h = jnp.where(ok, eta_c, 0.5 * eta_c)
                gave_up = ~ok & ((eta_h < _ETA_MIN) | (n_c >= max_it))
                return dict(eta=eta_h, n_ev=n_c, state=jnp.where(ok, 1, jnp.where(gave_up, 2, 0)), q=point(q))

            ls0 = dict(eta=eta, n_ev=n_ev, state=jnp.asarray(0), q=point(p))
            ls = lax.while_loop(lambda ls: ls["state"] == 0, try_eta, ls0)
            accepted = ls["state"] == 1
            eta, n_ev, q = ls["eta"], ls["n_ev"], ls["q"]
            Gq = grad(q, mu, mask)
            S = q["W"] - p["W"]
            Y = Gq - G
            sy = jnp.vdot(S, Y)
            eta_bb = jnp.where(it % 2 == 1, jnp.vdot(S, S) / sy, sy / jnp.vdot(Y, Y))
            eta_n = jnp.where(sy > 0, eta_bb, 2.0 * eta)
            eta_n = jnp.where(jnp.isfinite(eta_n), eta_n, eta)
            eta_n = jnp.minimum(jnp.maximum(eta_n, _ETA_MIN), _ETA_MAX)
            hist_n = hist.at[nh % NH].set(q["obj"])
            nh_n = nh + 1
            done = (nh_n > _NM_MEMORY) & (jnp.abs(hist_n[(nh_n - 1 - _NM_MEMORY) % NH] - q["obj"]) <= tol * jnp.abs(q["obj"]))
            record = accepted & (done | (it % ck == 0))
            rec_n = dict(t=rec["t"].at[j].set(n_ev), obj=rec["obj"].at[j].set(q["obj"]), h=rec["h"].at[j].set(q["h"]),
                         isig=rec["isig"].at[j].set(q["isig"]))
            rec = jax.tree_util.tree_map(lambda a, b: jnp.where(record, a, b), rec_n, rec)
            # end: 0 running; 1 converged (the rule's relative change); 2 no acceptable step
            # (converged when eta fell below its floor); 3 the evaluation budget spent
            end = jnp.where(accepted, jnp.where(done, 1, jnp.where(n_ev >= max_it, 3, 0)),
                            jnp.where(eta < _ETA_MIN, 1, 2))
            keep = lambda a, b: jax.tree_util.tree_map(lambda x, y: jnp.where(accepted, x, y), a, b)  # noqa: E731
            st = dict(p=keep(q, p), G=jnp.where(accepted, Gq, G), eta=jnp.where(accepted, eta_n, eta),
                      hist=jnp.where(accepted, hist_n, hist), nh=jnp.where(accepted, nh_n, nh), n_ev=n_ev, it=it,
                      end=end.astype(jnp.int64))
            return dict(st=st, rec=rec, j=j + jnp.where(record, 1, 0))

        rec0 = dict(t=jnp.zeros(B, jnp.int64), obj=jnp.zeros(B, f64), h=jnp.zeros(B, f64), isig=jnp.zeros((B, d), f64))
        c0 = dict(st=carry, rec=rec0, j=jnp.asarray(0, jnp.int64))
        out = lax.while_loop(lambda c: (c["j"] < K) & (c["st"]["end"] == 0) & (c["st"]["n_ev"] < max_it), body, c0)
        return out["st"], out["rec"], out["j"]

    return jax.jit(start), jax.jit(run)


def polish_phase(W, *, backend, cov, s, mu, lam, mask, vcode, sig0, lr, tol, max_it, ck, stage, t0, run, callback,
                 used0, unit, node, offset):
    """The last stage's polishing of :func:`colide_core.solver._fast.fast_solve` on the device (issue 50).

    The same method and decisions as :func:`colide_core.solver._fast._polish` (proximal gradient
    with Barzilai-Borwein steps, a nonmonotone Armijo line search that refuses points outside the
    log-det domain, the relative-change rule over the last five objectives), as one compiled
    ``lax.while_loop``: each evaluation's LU, inverse and objective run on the device, and the
    host sees the loop once every few checkpoints (about :data:`VISIT_S` seconds apart when it has
    a callback or a deadline to hear, as :func:`adam_phase`).

    Parameters are :func:`colide_core.solver._fast._polish`'s, by name (``W``: the
    ``(n_nodes, n_nodes)`` Adam iterate, ``W[i, j] != 0`` meaning i -> j; ``cov`` the
    covariance of centred data ``X`` of shape ``(n_samples, n_nodes)``), with ``backend``:
    :mod:`colide_core.solver._jax`.

    Returns
    -------
    tuple or None
        ``(point, n_evaluations, converged, stop_reason)`` as :func:`~colide_core.solver._fast._polish`
        (``point``: a ``_fast._Point`` built from the device's arrays, or None when W fails the
        domain test); None when the polishing declines (``record_W``, whose W at each checkpoint
        is the host's) and the host polishes.

    Raises
    ------
    FloatingPointError
        When an accepted point's objective is not finite (as the host's polishing).
    DeviceNotSupportedError
        For the per-node covariance form (several conditions).
    """
    from colide_core.solver._fast import _sigma_value

    if run.W_history is not None:
        return None
    t_in = time.perf_counter()
    jax, dev, put, is_req, A = _on_solve_device(backend, node, offset)
    cov_d, lam_d, mask_d, sig0_d = backend._constants(jax, dev, cov, lam, mask, sig0)
    d = W.shape[0]
    B = _buffer(d)
    start, step = _compiled_polish(backend, int(vcode), is_req, B)
    f64, i64 = np.float64, np.int64
    consts = (cov_d, lam_d, mask_d, sig0_d, A, f64(mu), f64(s))
    inside, carry = start(put(np.ascontiguousarray(W, dtype=float)), *consts, f64(lr))
    stats = loop_stats()
    stats = _LOCAL.loop_stats
    if not bool(inside):
        _account_polish(stats, time.perf_counter() - t_in, 0)
        return None, 0, False, None
    hear = callback is not None or run.deadline is not None
    K = 1 if hear else B
    stop = None
    seconds = 0.0
    while True:
        t1 = time.perf_counter()
        carry, rec, j = step(carry, *consts, f64(tol), i64(max_it), i64(max(int(ck), 1)), i64(K))
        small, rec, j = jax.device_get(({k: carry[k] for k in ("n_ev", "end")} | {"obj": carry["p"]["obj"]}, rec, j))
        dt = time.perf_counter() - t1
        seconds += dt
        j = int(j)
        stats["visits"] += 1
        for i in range(j):
            last = i == j - 1
            n_i = int(rec["t"][i])
            out = run.checkpoint(stage, t0 + n_i, float(rec["obj"][i]), float(rec["h"][i]),
                                 _sigma_value(rec["isig"][i], vcode), callback if last else None, used0 + n_i * unit)
            if last:
                stop = out
        if not np.isfinite(float(small["obj"])):
            _account_polish(stats, time.perf_counter() - t_in, int(small["n_ev"]))
            raise FloatingPointError(f"Stage {stage}: the objective is not finite.")
        end, n_ev = int(small["end"]), int(small["n_ev"])
        if stop is not None or end != 0 or n_ev >= max_it:
            break
        if hear:
            K = _next_visit(dt, j, B, run.deadline)
    p = _host_point(jax.device_get(carry["p"]), vcode, inside=True)
    converged = stop is None and end == 1
    history = run.history
    if stop is None and not (history["stage"] and history["stage"][-1] == stage
                             and history["iteration"][-1] == t0 + n_ev):
        stop = run.checkpoint(stage, t0 + n_ev, p.obj, p.h, p.sigma, callback, used0 + n_ev * unit)
    _account_polish(stats, time.perf_counter() - t_in, n_ev)
    return p, n_ev, converged, stop


def _account_polish(stats, seconds, n_ev):
    stats["seconds"] += seconds
    stats["polish_seconds"] = stats.get("polish_seconds", 0.0) + seconds
    stats["polish_evals"] = stats.get("polish_evals", 0) + n_ev
