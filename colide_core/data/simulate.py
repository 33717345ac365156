"""Synthetic DAGs and linear SEM data, following the NOTEARS / DAGMA / CoLiDE simulation conventions.

Conventions: data ``X`` has shape ``(n_samples, n_nodes)``; a (weighted) adjacency ``W`` has shape
``(n_nodes, n_nodes)`` with ``W[i, j] != 0`` meaning the edge i -> j; the linear SEM is
``X = X @ W + Z``, i.e. ``x_j = sum_i W[i, j] x_i + z_j`` (the paper's eq. (1), transposed).

Sources: Zheng et al. (2018), NOTEARS ``notears/utils.py`` (``simulate_dag``, ``simulate_parameter``,
``simulate_linear_sem``); Saboksayr, Mateos and Tepper (ICLR 2024), Section 5 and Appendix D;
Reisach, Seiler and Weichwald (NeurIPS 2021) for :func:`varsortability`.

All randomness comes from ``np.random.default_rng(random_state)``; nothing is seeded globally and no
input array is modified.

:func:`simulate_dataset` is **the** simulation protocol of the project: the dashboard's Simulate and
Compare pages, the sweep executor (``python -m colide_core bench``), ``python -m colide_core simulate``
and every benchmark script draw their data through it, so the same settings and seed give the same
data everywhere. The other functions are its building blocks.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from types import MappingProxyType

import networkx as nx
import numpy as np

from colide_core import defaults
from colide_core.graph._dag import is_dag
from colide_core._params import is_int as _is_int, is_real as _is_real
from colide_core.data.sortability import (  # noqa: F401 - re-exported: the simulation's names, as before the split
    path_sortability, standardize, varsortability)

__all__ = [
    "DATASET_DEFAULTS",
    "INTERVENTION_DEFAULTS",
    "SimulatedData",
    "check_spec",
    "check_interventions",
    "simulate_dataset",
    "simulate_dag",
    "simulate_parameters",
    "simulate_linear_sem",
    "simulate_experiment",
    "simulate_conditions",
    "sem_mean",
    "draw_noise_variances",
    "standardize",
    "varsortability",
    "path_sortability",
    "NOISE_TYPES",
]

#: Noise laws understood by :func:`simulate_linear_sem`.
NOISE_TYPES = ("gaussian", "exponential", "laplace", "gumbel")

_EULER_GAMMA = 0.5772156649015329


def _check_d(d, name="d (number of nodes)"):
    """An int in [1, MAX_NODES]; bools, floats and strings are refused."""
    if not _is_int(d) or d < 1:
        raise ValueError(f"{name} must be a positive integer, got {d!r}.")
    if d > defaults.MAX_NODES:
        raise ValueError(f"{name} must be a positive integer <= {defaults.MAX_NODES} "
                         f"(colide_core.defaults.MAX_NODES), got {d!r}.")
    return int(d)


def _check_n(n, d, name="n (number of samples)"):
    """An int in [1, MAX_SAMPLES] with n * d <= MAX_CELLS."""
    if not _is_int(n) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}.")
    if n > defaults.MAX_SAMPLES:
        raise ValueError(f"{name} must be a positive integer <= {defaults.MAX_SAMPLES:,} "
                         f"(colide_core.defaults.MAX_SAMPLES), got {n!r}.")
    if int(n) * int(d) > defaults.MAX_CELLS:
        raise ValueError(f"{int(n):,} samples x {int(d):,} nodes = {int(n) * int(d):,} cells is more than the "
                         f"{defaults.MAX_CELLS:,} allowed (colide_core.defaults.MAX_CELLS).")
    return int(n)


def _check_degree(degree):
    """A real number in [0, MAX_DEGREE] (not a bool or a string) as a float."""
    if not _is_real(degree) or not math.isfinite(degree) or degree < 0:
        raise ValueError(f"degree must be a finite number >= 0, got {degree!r}.")
    if degree > defaults.MAX_DEGREE:
        raise ValueError(f"degree must be a finite number in [0, {defaults.MAX_DEGREE:g}] "
                         f"(colide_core.defaults.MAX_DEGREE), got {degree!r}.")
    return float(degree)


def _check_real(value, name):
    """A finite real number (not a bool or a string) as a float."""
    if not _is_real(value) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}.")
    return float(value)


def _seed_from(rng):
    """An integer seed for networkx generators, drawn from ``rng`` (keeps everything reproducible)."""
    return int(rng.integers(0, 2**32 - 1))


def simulate_dag(d, degree, graph="er", random_state=None) -> np.ndarray:
    """Draw a random DAG: Erdos-Renyi (ERk) or scale-free (SFk), in a random node order.

    Parameters
    ----------
    d : int
        Number of nodes, in ``[1, colide_core.defaults.MAX_NODES]``.
    degree : float
        ``k`` in ERk / SFk: the graph has about ``k * d`` edges (NOTEARS' ``s0 = k * d``); in
        ``[0, colide_core.defaults.MAX_DEGREE]``.
        ER: exactly ``min(round(k * d), d(d-1)/2)`` edges. SF: ``m = round(k)`` edges per new node.
    graph : {"er", "sf"}, default="er"
        Random graph model (case-insensitive).
    random_state : int, numpy.random.Generator or None
        Seed for ``np.random.default_rng``.

    Returns
    -------
    B : ndarray of shape (d, d), dtype float
        Binary adjacency of a DAG; ``B[i, j] == 1`` means i -> j. Diagonal is zero.

    Raises
    ------
    ValueError
        If ``d`` is not an int in ``[1, MAX_NODES]``, ``degree`` is not a real number in
        ``[0, MAX_DEGREE]`` (bools and strings are refused), or ``graph`` is unknown.

    Notes
    -----
    * ER (NOTEARS ``graph_type='ER'``): an undirected G(n, m) graph with ``m = round(k * d)`` edges
      (:func:`networkx.gnm_random_graph`), oriented along a uniformly random node order.
    * SF (NOTEARS ``graph_type='SF'``): Barabasi-Albert preferential attachment
      (:func:`networkx.barabasi_albert_graph`) with ``m = round(k)`` edges per new node, each edge
      oriented from the new node to the existing node it attaches to (as igraph's
      ``Barabasi(directed=True)`` used by NOTEARS); this gives ``m * (d - m)`` edges, i.e. about
      ``k * d`` for ``d >> k``. ``m`` is clipped to ``[1, d - 1]``.
    * The result is finally relabelled by a uniformly random permutation, so node index carries no
      information about the causal order.
    """
    d = _check_d(d)
    degree = _check_degree(degree)
    kind = graph.lower() if isinstance(graph, str) else graph
    rng = np.random.default_rng(random_state)
    B = np.zeros((d, d))
    if kind == "er":
        m = min(int(round(degree * d)), d * (d - 1) // 2)
        G = nx.gnm_random_graph(d, m, seed=_seed_from(rng))
        order = rng.permutation(d)  # order[k] = node at causal position k
        rank = np.empty(d, dtype=int)
        rank[order] = np.arange(d)
        for u, v in G.edges():
            if rank[u] < rank[v]:
                B[u, v] = 1.0
            else:
                B[v, u] = 1.0
    elif kind == "sf":
        if d == 1:
            return B
        m = int(min(max(int(round(degree)), 1), d - 1))
        G = nx.barabasi_albert_graph(d, m, seed=_seed_from(rng))
        for u, v in G.edges():
            # networkx adds nodes in increasing label order: the larger label is the newcomer
            new, old = (u, v) if u > v else (v, u)
            B[new, old] = 1.0
    else:
        raise ValueError(f"graph must be 'er' or 'sf', got {graph!r}.")
    perm = rng.permutation(d)
    return B[np.ix_(perm, perm)]


def simulate_parameters(B, w_ranges=((-2.0, -0.5), (0.5, 2.0)), random_state=None) -> np.ndarray:
    """Draw edge weights on the support of ``B`` (NOTEARS ``simulate_parameter``).

    Parameters
    ----------
    B : array-like of shape (n_nodes, n_nodes)
        Binary (or weighted: only the support is used) adjacency, ``B[i, j] != 0`` means i -> j.
        Not modified.
    w_ranges : sequence of (low, high) pairs, default=((-2.0, -0.5), (0.5, 2.0))
        Each edge picks one range uniformly at random, then a weight uniformly in ``[low, high)``.
        The paper uses ``[-2, -0.5] U [0.5, 2]`` (homoscedastic) and ``[-1, -0.25] U [0.25, 1]``
        (heteroscedastic, Section 5).
    random_state : int, numpy.random.Generator or None
        Seed for ``np.random.default_rng``.

    Returns
    -------
    W : ndarray of shape (n_nodes, n_nodes)
        Weighted adjacency with the same support as ``B``.

    Raises
    ------
    ValueError
        If ``B`` is not square or holds NaN/Inf, or ``w_ranges`` is empty or has a range with
        ``low > high``.
    """
    A = np.asarray(B, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"B must be a square (n_nodes, n_nodes) matrix, got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError("B contains NaN or Inf.")
    try:
        ranges = [tuple(_check_real(v, "w_ranges") for v in r) for r in w_ranges]
    except TypeError:
        raise ValueError(f"w_ranges must be a sequence of (low, high) pairs, got {w_ranges!r}.") from None
    if not ranges or any(len(r) != 2 or r[0] > r[1] for r in ranges):
        raise ValueError(f"w_ranges must be a non-empty sequence of (low, high) with low <= high, got {w_ranges!r}.")
    rng = np.random.default_rng(random_state)
    which = rng.integers(len(ranges), size=A.shape)
    W = np.zeros(A.shape)
    for k, (low, high) in enumerate(ranges):
        U = rng.uniform(low, high, size=A.shape)
        W += (A != 0) * (which == k) * U
    return W


def draw_noise_variances(d, low=0.5, high=10.0, random_state=None) -> np.ndarray:
    """Per-node noise variances for the heteroscedastic (NV) setting, uniform on ``[low, high)``.

    Parameters
    ----------
    d : int
        Number of nodes.
    low, high : float, default=0.5, 10.0
        Variance range (the paper's Section 5 uses ``[0.5, 10]``); ``0 < low <= high``.
    random_state : int, numpy.random.Generator or None
        Seed for ``np.random.default_rng``.

    Returns
    -------
    noise_var : ndarray of shape (d,)
        Variances (squared data units), to pass as ``noise_var`` to :func:`simulate_linear_sem`.

    Raises
    ------
    ValueError
        If ``d`` is not a positive integer or the range is invalid.
    """
    d = _check_d(d)
    low, high = _check_real(low, "low"), _check_real(high, "high")
    if not (0 < low <= high):
        raise ValueError(f"need 0 < low <= high (finite), got low={low}, high={high}.")
    rng = np.random.default_rng(random_state)
    return rng.uniform(low, high, size=d)


def _draw_noise(rng, noise, std, n, center):
    """n draws of each column's noise law with standard deviation ``std[j]``; shape (n, d)."""
    d = std.shape[0]  # scaled in place (the same numbers as a new product, one n x d array instead of two)
    if noise == "gaussian":
        Z = rng.normal(0.0, 1.0, size=(n, d))
        Z *= std
        return Z
    if noise == "exponential":
        # Exp(lambda) has mean 1/lambda and variance 1/lambda^2, so scale = 1/lambda = std
        Z = rng.exponential(1.0, size=(n, d))
        Z *= std
        if center:
            Z -= std
        return Z
    if noise == "laplace":
        # Laplace(0, b) has variance 2 b^2
        Z = rng.laplace(0.0, 1.0, size=(n, d))
        Z *= std / math.sqrt(2.0)
        return Z
    if noise == "gumbel":
        # Gumbel(0, beta) has mean gamma*beta and variance pi^2 beta^2 / 6
        beta = std * math.sqrt(6.0) / math.pi
        Z = rng.gumbel(0.0, 1.0, size=(n, d))
        Z *= beta
        if center:
            Z -= _EULER_GAMMA * beta
        return Z
    raise ValueError(f"noise must be one of {NOISE_TYPES}, got {noise!r}.")


def simulate_linear_sem(W, n, noise="gaussian", noise_var=1.0, random_state=None, *, center=True):
    """Sample ``n`` rows from the linear SEM ``x_j = sum_i W[i, j] x_i + z_j``.

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        Weighted DAG adjacency, ``W[i, j] != 0`` means i -> j. Not modified.
    n : int
        Number of samples, in ``[1, colide_core.defaults.MAX_SAMPLES]`` with
        ``n * n_nodes <= colide_core.defaults.MAX_CELLS``.
    noise : {"gaussian", "exponential", "laplace", "gumbel"}, default="gaussian"
        Noise law; each is scaled so that ``Var(z_j)`` equals ``noise_var[j]``:
        Gaussian N(0, s^2); exponential Exp(lambda) with ``lambda = 1/s`` (variance ``lambda^-2``,
        paper Appendix D.4); Laplace(0, b) with ``b = s/sqrt(2)`` (variance ``2 b^2``); Gumbel(0, beta)
        with ``beta = s sqrt(6)/pi`` (variance ``pi^2 beta^2 / 6``), where ``s = sqrt(noise_var[j])``.
    noise_var : float or array-like of shape (n_nodes,), default=1.0
        Noise variance(s) (squared data units), > 0. A scalar is the equal-variance (EV) setting.
    random_state : int, numpy.random.Generator or None
        Seed for ``np.random.default_rng``.
    center : bool, default=True, keyword-only
        Subtract the mean of the exponential and Gumbel laws so that every noise has mean zero (the
        Gaussian and Laplace laws already do). Centring only shifts each column's mean; the variances
        and the graph are unchanged. NOTEARS does not centre (``center=False`` reproduces that).

    Returns
    -------
    X : ndarray of shape (n, n_nodes)
        Samples, one row per sample.
    noise_std : ndarray of shape (n_nodes,)
        The noise standard deviations ``sqrt(noise_var)`` (the ground truth for CoLiDE's ``sigma_``).

    Raises
    ------
    ValueError
        If ``W`` is not square, holds NaN/Inf, has a directed cycle or more than ``MAX_NODES``
        nodes; if ``n`` is not an int in ``[1, MAX_SAMPLES]`` or ``n * n_nodes > MAX_CELLS``
        (checked before any sample is drawn); if ``noise`` is unknown; if ``noise_var`` has the
        wrong shape or is not > 0.

    Notes
    -----
    Nodes are generated in a topological order of ``W`` (:func:`networkx.topological_sort`), as in
    NOTEARS ``simulate_linear_sem``.
    """
    A = np.asarray(W, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"W must be a square (n_nodes, n_nodes) matrix, got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError("W contains NaN or Inf.")
    if not is_dag(A):
        raise ValueError("W must be a DAG: the given adjacency has a directed cycle (or a self-loop).")
    _check_d(A.shape[0], "W's number of nodes")
    n = _check_n(n, A.shape[0])
    noise = noise.lower() if isinstance(noise, str) else noise
    if noise not in NOISE_TYPES:
        raise ValueError(f"noise must be one of {NOISE_TYPES}, got {noise!r}.")
    d = A.shape[0]
    var = np.asarray(noise_var)
    if var.dtype.kind not in "iuf":  # bools, text, complex, objects: refused, not cast
        raise ValueError(f"noise_var must be a number or an array of numbers, got {noise_var!r}.")
    var = var.astype(float)
    if var.ndim == 0:
        var = np.full(d, float(var))
    if var.shape != (d,):
        raise ValueError(f"noise_var must be a scalar or have shape ({d},), got shape {var.shape}.")
    if not np.all(np.isfinite(var)) or np.any(var <= 0):
        raise ValueError("noise_var must be finite and > 0.")
    std = np.sqrt(var)
    rng = np.random.default_rng(random_state)
    Z = _draw_noise(rng, noise, std, int(n), center)
    G = nx.from_numpy_array((A != 0).astype(np.int8), create_using=nx.DiGraph)
    X = Z  # in place, in causal order: a node's parents are final before it (one n x d array, not two)
    for j in nx.topological_sort(G):
        parents = np.flatnonzero(A[:, j])
        X[:, j] = X[:, parents] @ A[parents, j] + Z[:, j]
    return X, std


def simulate_experiment(W, targets, n, noise="gaussian", noise_var=1.0, random_state=None):
    """Sample ``n`` rows of a hard intervention on ``targets`` in the linear SEM ``W``.

    Each target loses its parents (its column of ``W`` is cut) and takes the value of its own
    noise; every other node follows its equation: ``x_j = [j not in T] sum_i W[i, j] x_i + z_j``.
    The rows an experiment that sets the targets at random (Eberhardt and Scheines 2007) would give,
    the interventional conditions of :func:`simulate_dataset`.

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        Weighted DAG, ``W[i, j] != 0`` means i -> j (data units). Not modified.
    targets : sequence of int
        The intervened nodes (indices in ``[0, n_nodes)``).
    n : int
        Rows to draw (as :func:`simulate_linear_sem`).
    noise, noise_var, random_state
        As :func:`simulate_linear_sem` (``noise_var`` the variances, squared data units).

    Returns
    -------
    ndarray of shape (n, n_nodes)
        The interventional rows, each node's noise of mean 0.

    Raises
    ------
    ValueError
        For a target out of range, or the errors of :func:`simulate_linear_sem`.

    Examples
    --------
    >>> X = simulate_experiment([[0, 2.0], [0, 0]], [1], 2000, random_state=0)
    >>> bool(abs(np.corrcoef(X.T)[0, 1]) < 0.1)   # x1 no longer follows x0
    True
    """
    W_c = np.array(W, dtype=float)
    d = W_c.shape[0] if W_c.ndim == 2 else 0
    nodes = [int(t) for t in targets]
    if any(not 0 <= t < d for t in nodes):
        raise ValueError(f"targets must be node indices in [0, {d}), got {nodes[:10]}.")
    W_c[:, nodes] = 0.0  # hard intervention: the targets lose their parents
    X, _ = simulate_linear_sem(W_c, n, noise, noise_var=noise_var, random_state=random_state)
    return X


def sem_mean(W, intercepts) -> np.ndarray:
    """The mean of every node of the linear SEM ``x = x W + z + b`` with ``E[z] = 0``.

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        Weighted DAG, ``W[i, j] != 0`` means i -> j. Not modified.
    intercepts : array-like of shape (n_nodes,)
        Each node's intercept ``b_j``, in data units.

    Returns
    -------
    ndarray of shape (n_nodes,)
        ``b (I - W)^-1``: solving ``mu = mu W + b`` (a DAG's ``I - W`` is invertible).

    Examples
    --------
    >>> sem_mean([[0.0, 2.0], [0.0, 0.0]], [1.0, 0.5])   # mu_1 = 2 * 1 + 0.5
    array([1. , 2.5])
    """
    A = np.asarray(W, dtype=float)
    return np.linalg.solve(np.eye(A.shape[0]) - A.T, np.asarray(intercepts, dtype=float))


def simulate_conditions(W, X_obs, interventions, noise, noise_var, streams, *, intercepts=None):
    """Add the interventional conditions of :func:`simulate_dataset` to observational rows.

    The one implementation of the conditions :func:`simulate_dataset` and
    :func:`colide_core.data.networks.load_network` draw: condition ``k`` (label ``"iv<k>"``) draws
    ``n_per_condition`` rows of a hard intervention on its targets ``T_k``
    (:func:`simulate_experiment`) with every node's intercept shifted by ``c_k``::

        x_j = [j not in T_k] * sum_i W[i, j] x_i + z_j + b_j + c_kj

    Parameters
    ----------
    W : ndarray of shape (n_nodes, n_nodes)
        The true weighted DAG (``W[i, j] != 0``: i -> j). Not modified.
    X_obs : ndarray of shape (n_obs, n_nodes)
        The observational rows, first in the result.
    interventions : dict
        Checked settings (:func:`check_interventions`); ``targets`` None draws them.
    noise : str
        The noise law (:data:`NOISE_TYPES`).
    noise_var : ndarray of shape (n_nodes,)
        Noise variances, squared data units.
    streams : sequence of 3 numpy.random.Generator
        The targets', the shifts' and the interventional rows' generators.
    intercepts : array-like of shape (n_nodes,), optional, keyword-only
        Each node's intercept ``b_j`` (default zero), kept under intervention (a target is
        ``b_t + z_t``); ``X_obs`` already holds them.

    Returns
    -------
    X : ndarray of shape (n_obs + n_conditions * n_per_condition, n_nodes)
    conditions : ndarray of object of shape (n_rows,)
        ``"obs"`` then ``"iv1"``, ``"iv2"``, ...
    targets : dict
        Condition label -> list of target node indices (``[]`` for ``"obs"``).
    shifts : ndarray of shape (n_conditions + 1, n_nodes)
        ``c_k`` per condition (row 0 zero), data units.
    interventions : dict
        The settings, with the drawn targets (a tuple of sorted index tuples).
    """
    iv = dict(interventions)
    d = W.shape[0]
    k, m = iv["n_conditions"], iv["n_per_condition"]
    rng_targets, rng_shift, rng_iv = streams
    b = np.zeros(d) if intercepts is None else np.asarray(intercepts, dtype=float)
    if iv["targets"] is None:
        iv["targets"] = tuple(tuple(sorted(int(v) for v in rng_targets.choice(d, iv["n_targets"], replace=False)))
                              for _ in range(k))
    shifts = np.zeros((k + 1, d))
    if iv["mean_shift"] > 0:
        shifts[1:] = rng_shift.normal(0.0, iv["mean_shift"], size=(k, d))
    n_obs = X_obs.shape[0]
    X = np.empty((n_obs + k * m, d))  # filled block by block: no list of blocks and no concatenated copy
    X[:n_obs] = X_obs
    for c, (nodes, rng) in enumerate(zip(iv["targets"], rng_iv.spawn(k)), start=1):
        X_c = simulate_experiment(W, nodes, m, noise, noise_var=noise_var, random_state=rng)
        W_c = np.array(W, dtype=float)
        W_c[:, list(nodes)] = 0.0
        # x = x W_c + z + b + c  =>  the intercepts and the shift move the mean by (b + c)(I - W_c)^-1
        X_c += sem_mean(W_c, b + shifts[c])
        X[n_obs + (c - 1) * m:n_obs + c * m] = X_c
        del X_c
    labels = ["obs"] + [f"iv{c}" for c in range(1, k + 1)]
    conditions = np.repeat(np.array(labels, dtype=object), [X_obs.shape[0]] + [m] * k)
    targets = {"obs": [], **{labels[c]: list(nodes) for c, nodes in enumerate(iv["targets"], start=1)}}
    return X, conditions, targets, shifts, iv


# --------------------------------------------------------------------------------------------
# the protocol
# --------------------------------------------------------------------------------------------

#: Settings of :func:`simulate_dataset` and their defaults (the paper's Section 5 / Appendix D).
#: ``w_range=None`` means the paper's range for the ``variance`` setting (see :func:`simulate_dataset`).
DATASET_DEFAULTS = MappingProxyType({
    "graph": "er",
    "degree": 2,
    "n_nodes": 10,
    "n_samples": 1000,
    "noise": "gaussian",
    "variance": "ev",
    "noise_var": 1.0,
    "noise_var_range": (0.5, 10.0),
    "w_range": None,
    "standardize": False,
})

#: The dashboard's bounds on the simulation settings (keys of :data:`DATASET_DEFAULTS` and
#: :data:`INTERVENTION_DEFAULTS`, and the ``seed``): ``(type, low, high)``, inclusive. The Simulate
#: page's widgets and a link's parameters (``dashboard.infra.urlstate``) read them here, the one place;
#: the library itself accepts more (:func:`check_spec`, :func:`check_interventions`).
INTERACTIVE_BOUNDS = MappingProxyType({
    "n_nodes": (int, 2, defaults.MAX_NODES),
    "degree": (float, 0.5, 10.0),
    "n_samples": (int, 10, 200_000),
    "noise_var": (float, 0.01, 100.0),
    "noise_var_range": (float, 0.05, 20.0),
    "w_range": (float, 0.05, 5.0),
    "seed": (int, 0, 2**31 - 1),
    "n_conditions": (int, 0, 50),
    "n_targets": (int, 0, 10),
    "mean_shift": (float, 0.0, 10.0),
})

#: The paper's edge-weight magnitudes: ``|w|`` in [0.5, 2] for EV, [0.25, 1] for NV (Section 5).
_PAPER_W_RANGE = {"ev": (0.5, 2.0), "nv": (0.25, 1.0)}


def _pair(value, name):
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise ValueError(f"{name} must be a pair (low, high) of numbers, got {value!r}.")
    low, high = value
    if not (_is_real(low) and _is_real(high)):
        raise ValueError(f"{name} must be a pair (low, high) of numbers, got {value!r}.")
    low, high = float(low), float(high)
    if not (math.isfinite(low) and math.isfinite(high) and low <= high):
        raise ValueError(f"{name} must be finite with low <= high, got {value!r}.")
    return low, high


def _option(value, name, options):
    if not isinstance(value, str) or value.lower() not in options:
        quoted = " or ".join(repr(o) for o in options) if len(options) == 2 else f"one of {options}"
        raise ValueError(f"{name} must be {quoted}, got {value!r}.")
    return value.lower()


def check_spec(spec=None, **settings) -> dict:
    """Validate and complete a simulation specification, within the project's size limits.

    Every caller of the simulation protocol (the dashboard, the sweep executor, the CLI's
    ``simulate`` and ``bench``) goes through this check, so the limits below hold everywhere
    and are enforced before any memory is spent.

    Parameters
    ----------
    spec : mapping, optional
        Settings (keys of :data:`DATASET_DEFAULTS`); missing keys take the defaults.
    **settings
        More settings; they override ``spec``.

    Returns
    -------
    dict
        Every key of :data:`DATASET_DEFAULTS`, normalised: ``graph``, ``noise`` and ``variance``
        lower-case; ``degree``, ``noise_var`` float; ``n_nodes``, ``n_samples`` int;
        ``noise_var_range`` and ``w_range`` ``(low, high)`` float tuples (``w_range`` filled in
        with the paper's range for ``variance`` when None); ``standardize`` bool.

    Raises
    ------
    ValueError
        For an unknown key; a graph other than "er"/"sf"; a variance other than "ev"/"nv"; an
        unknown noise law (these three must be strings); ``n_nodes`` not an int in
        ``[1, MAX_NODES]`` (2000); ``n_samples`` not an int in ``[1, MAX_SAMPLES]`` (1e6);
        ``n_samples * n_nodes > MAX_CELLS`` (5e7); ``degree`` not a real number in
        ``[0, MAX_DEGREE]`` (100); ``noise_var`` not a finite number > 0; a variance range not
        ``0 < low <= high``; a weight range not ``0 <= low <= high``; ``standardize`` not a bool.
        Numbers given as strings or bools are refused, not converted (the limits are
        :mod:`colide_core.defaults`).
    """
    given = {**dict(spec or {}), **settings}
    unknown = set(given) - set(DATASET_DEFAULTS)
    if unknown:
        raise ValueError(f"unknown dataset setting(s) {sorted(unknown, key=str)}; known: {list(DATASET_DEFAULTS)}")
    s = {**DATASET_DEFAULTS, **given}
    out = {"graph": _option(s["graph"], "graph", ("er", "sf")),
           "noise": _option(s["noise"], "noise", NOISE_TYPES),
           "variance": _option(s["variance"], "variance", ("ev", "nv"))}
    out["n_nodes"] = _check_d(s["n_nodes"], "n_nodes")
    out["n_samples"] = _check_n(s["n_samples"], out["n_nodes"], "n_samples")
    degree = _check_degree(s["degree"])
    if not _is_real(s["noise_var"]) or not math.isfinite(s["noise_var"]) or s["noise_var"] <= 0:
        raise ValueError(f"noise_var must be a finite number > 0, got {s['noise_var']!r}.")
    out["degree"] = int(s["degree"]) if _is_int(s["degree"]) else degree
    out["noise_var"] = float(s["noise_var"])
    out["noise_var_range"] = _pair(s["noise_var_range"], "noise_var_range")
    if out["noise_var_range"][0] <= 0:
        raise ValueError(f"noise_var_range must have 0 < low, got {s['noise_var_range']!r}.")
    w_range = _PAPER_W_RANGE[out["variance"]] if s["w_range"] is None else s["w_range"]
    out["w_range"] = _pair(w_range, "w_range")
    if out["w_range"][0] < 0:
        raise ValueError(f"w_range holds magnitudes: need 0 <= low, got {s['w_range']!r}.")
    if not isinstance(s["standardize"], (bool, np.bool_)):
        raise ValueError(f"standardize must be True or False, got {s['standardize']!r}.")
    out["standardize"] = bool(s["standardize"])
    return out


@dataclass(frozen=True)
class SimulatedData:
    """One dataset drawn by :func:`simulate_dataset`.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_nodes)
        The samples, one row per sample (standardised when the spec says so).
    B_true : ndarray of shape (n_nodes, n_nodes)
        0/1 adjacency of the true DAG, ``B_true[i, j] == 1`` meaning i -> j.
    W_true : ndarray of shape (n_nodes, n_nodes)
        True edge weights **in the units of** ``X``: ``X = X W_true + Z`` holds for the returned
        data (up to the column means). When standardised, ``W_true[i, j] = W[i, j] s_i / s_j``.
    noise_std : ndarray of shape (n_nodes,)
        True noise standard deviations in the units of ``X`` (``sigma_j / s_j`` when standardised);
        the ground truth for CoLiDE's ``sigma_``.
    scale : ndarray of shape (n_nodes,)
        ``s_j``: what each column was divided by (its population standard deviation before
        standardising), all ones when not standardised. Multiply back to get raw units:
        ``W_raw[i, j] = W_true[i, j] s_j / s_i``.
    spec : dict
        The complete, normalised settings (:func:`check_spec`).
    conditions : ndarray of shape (n_samples,), dtype object (str), or None
        Only with interventions (:func:`simulate_dataset`'s ``interventions``): each row's
        condition label, ``"obs"`` for the observational rows (first), then ``"iv1"``, ``"iv2"``, ...
        in blocks. None for purely observational data.
    targets : dict[str, list[int]] or None
        Only with interventions: condition label -> the node indices it intervenes on (hard
        interventions; ``[]`` for ``"obs"``), the ``targets`` argument of
        :meth:`colide_core.CoLiDE.fit` (with node indices as names). None otherwise.
    shifts : ndarray of shape (n_conditions + 1, n_nodes) or None
        Only with interventions: each condition's intercept shift ``c_k`` (row 0, the observational
        condition, is zero), in the units of ``X``. None otherwise.
    """

    X: np.ndarray
    B_true: np.ndarray
    W_true: np.ndarray
    noise_std: np.ndarray
    scale: np.ndarray
    spec: dict
    conditions: np.ndarray | None = None
    targets: dict | None = None
    shifts: np.ndarray | None = None


def _streams(random_state, k):
    """``k`` independent generators spawned from ``random_state``."""
    if isinstance(random_state, np.random.Generator):
        return random_state.spawn(k)
    if isinstance(random_state, np.random.SeedSequence):
        seq = random_state
    elif random_state is None or (isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool)):
        seq = np.random.SeedSequence(None if random_state is None else int(random_state))
    else:
        raise ValueError(f"random_state must be an int, None, a SeedSequence or a Generator, got {random_state!r}.")
    return [np.random.default_rng(s) for s in seq.spawn(k)]


#: Interventional settings of :func:`simulate_dataset` (its ``interventions`` argument) and
#: their defaults: none, so the data are observational as before.
INTERVENTION_DEFAULTS = MappingProxyType({
    "n_conditions": 0,
    "n_per_condition": None,
    "targets": None,
    "n_targets": 1,
    "mean_shift": 0.0,
})


def check_interventions(interventions, n_nodes, n_samples) -> dict:
    """Validate and complete the interventional settings of :func:`simulate_dataset`.

    Parameters
    ----------
    interventions : mapping or None
        Keys of :data:`INTERVENTION_DEFAULTS` (missing ones take the defaults):

        * ``n_conditions`` (int >= 0): interventional conditions besides the observational one;
          with ``targets`` given it may be left out (it is then ``len(targets)``);
        * ``n_per_condition`` (int >= 1 or None): rows per interventional condition; None means
          ``n_samples`` (as many as the observational rows);
        * ``targets`` (None or a sequence of ``n_conditions`` sequences of node indices): the nodes
          each condition intervenes on; None draws ``n_targets`` distinct nodes per condition
          uniformly at random;
        * ``n_targets`` (int in [0, n_nodes]): targets per condition when they are drawn;
        * ``mean_shift`` (float >= 0): standard deviation of each interventional condition's
          intercept shifts, one per node, in data units (0: no shift).
    n_nodes, n_samples : int
        The (already checked) ``n_nodes`` and ``n_samples`` of the spec.

    Returns
    -------
    dict
        Every key of :data:`INTERVENTION_DEFAULTS`: ``n_conditions``, ``n_per_condition``,
        ``n_targets`` int; ``targets`` None or a tuple of tuples of sorted int indices;
        ``mean_shift`` float.

    Raises
    ------
    ValueError
        For an unknown key; a count that is not an int in range (bools, floats and strings are
        refused); more than ``colide_core.defaults.MAX_CONDITIONS - 1`` interventional conditions (with
        the observational one, at most the ``MAX_CONDITIONS`` a fit accepts); ``targets``
        whose length differs from ``n_conditions``, naming a node outside ``[0, n_nodes)`` or the
        same node twice in one condition; a negative or non-finite ``mean_shift``; more than
        ``MAX_SAMPLES`` rows or ``MAX_CELLS`` cells in all.
    """
    given = dict(interventions or {})
    unknown = set(given) - set(INTERVENTION_DEFAULTS)
    if unknown:
        raise ValueError(f"unknown intervention setting(s) {sorted(unknown, key=str)}; "
                         f"known: {list(INTERVENTION_DEFAULTS)}")
    s = {**INTERVENTION_DEFAULTS, **given}
    out = {}
    targets = s["targets"]
    if targets is not None:
        if isinstance(targets, (str, bytes)) or not hasattr(targets, "__len__"):
            raise ValueError(f"interventions['targets'] must be a list of lists of node indices, got {targets!r}.")
        if len(targets) > defaults.MAX_CONDITIONS - 1:
            raise ValueError(f"at most {defaults.MAX_CONDITIONS - 1} interventional conditions "
                             f"(colide_core.defaults.MAX_CONDITIONS, less the observational one), got {len(targets)}.")
        if "n_conditions" not in given:
            s["n_conditions"] = len(targets)
    k = s["n_conditions"]
    if not _is_int(k) or not 0 <= k <= defaults.MAX_CONDITIONS - 1:
        raise ValueError(f"interventions['n_conditions'] must be an integer in [0, {defaults.MAX_CONDITIONS - 1}] "
                         f"(colide_core.defaults.MAX_CONDITIONS, less the observational one), got {k!r}.")
    out["n_conditions"] = int(k)
    m = n_samples if s["n_per_condition"] is None else s["n_per_condition"]
    if not _is_int(m) or m < 1:
        raise ValueError(f"interventions['n_per_condition'] must be a positive integer or None, got {m!r}.")
    out["n_per_condition"] = int(m)
    _check_n(int(n_samples) + out["n_conditions"] * int(m), n_nodes,
             "the number of rows in all conditions (n_samples + n_conditions * n_per_condition)")
    t = s["n_targets"]
    if not _is_int(t) or not 0 <= t <= n_nodes:
        raise ValueError(f"interventions['n_targets'] must be an integer in [0, n_nodes = {n_nodes}], got {t!r}.")
    out["n_targets"] = int(t)
    if targets is not None:
        if len(targets) != out["n_conditions"]:
            raise ValueError(f"interventions['targets'] has {len(targets)} lists but n_conditions is "
                             f"{out['n_conditions']}.")
        checked = []
        for c, nodes in enumerate(targets):
            if isinstance(nodes, (str, bytes)) or not hasattr(nodes, "__iter__"):
                raise ValueError(f"interventions['targets'][{c}] must be a list of node indices, got {nodes!r}.")
            nodes = list(nodes)
            if len(nodes) > n_nodes:
                raise ValueError(f"interventions['targets'][{c}] names more nodes than there are ({n_nodes}).")
            bad = [v for v in nodes if not _is_int(v) or not 0 <= v < n_nodes]
            if bad:
                raise ValueError(f"interventions['targets'][{c}] must hold node indices in [0, {n_nodes}), "
                                 f"got {bad[0]!r}.")
            if len(set(int(v) for v in nodes)) != len(nodes):
                raise ValueError(f"interventions['targets'][{c}] names a node twice: {nodes!r}.")
            checked.append(tuple(sorted(int(v) for v in nodes)))
        targets = tuple(checked)
    out["targets"] = targets
    shift = s["mean_shift"]
    if not _is_real(shift) or not math.isfinite(shift) or shift < 0:
        raise ValueError(f"interventions['mean_shift'] must be a finite number >= 0, got {shift!r}.")
    out["mean_shift"] = float(shift)
    return out


def simulate_dataset(spec=None, random_state=None, *, interventions=None, **settings) -> SimulatedData:
    """Draw one synthetic linear-SEM dataset: the project's one simulation protocol.

    Parameters
    ----------
    spec : mapping, optional
        Settings, keys of :data:`DATASET_DEFAULTS` (missing ones take the defaults):

        * ``graph`` ("er" / "sf", case-insensitive) and ``degree`` k: an ERk / SFk DAG
          (:func:`simulate_dag`) on ``n_nodes`` nodes;
        * ``variance``: "ev", every noise variance equal to ``noise_var`` (default 1); or "nv",
          one variance per node drawn uniformly from ``noise_var_range`` (default [0.5, 10]);
        * ``w_range`` ``(low, high)``: edge weight magnitudes, each weight uniform on
          ``[-high, -low] U [low, high]``; default (None) the paper's range, (0.5, 2) for "ev" and
          (0.25, 1) for "nv" (Section 5);
        * ``noise``: the noise law of :func:`simulate_linear_sem` (centred, scaled to the variance);
        * ``n_samples`` rows (the observational rows when there are interventions);
        * ``standardize``: centre and scale every column to unit variance (:func:`standardize`).
    random_state : int, numpy.random.SeedSequence, numpy.random.Generator or None
        The seed. It is split (:meth:`numpy.random.SeedSequence.spawn`) into independent streams:
        the graph, the weights, the noise variances, the observational samples, and (only used with
        interventions) the drawn targets, the shifts and the interventional samples. Changing one
        setting leaves the draws of the others alone (e.g. the same seed gives the same DAG for
        n = 100 and n = 10,000, and for EV and NV; and the same observational rows with and
        without interventions).
    interventions : mapping or None, keyword-only
        Interventional conditions (keys of :data:`INTERVENTION_DEFAULTS`, checked by
        :func:`check_interventions`); None or ``n_conditions=0``: observational data only, exactly
        as without the argument. Condition ``k`` (label ``"iv<k>"``) draws ``n_per_condition``
        rows of the SEM with **hard interventions** on its targets ``T_k``: a target's value is
        drawn from its own noise law (its parents are ignored), and every node's intercept is
        shifted by ``c_k`` (drawn ``N(0, mean_shift^2)`` per node; zero for the observational
        rows)::

            x_j = [j not in T_k] * sum_i W[i, j] x_i + z_j + c_kj
    **settings
        Settings as keywords; they override ``spec``.

    Returns
    -------
    SimulatedData
        ``X`` (n_samples, n_nodes), ``B_true``, ``W_true``, ``noise_std``, ``scale`` and the
        normalised ``spec``; with interventions, ``X`` has ``n_samples + n_conditions *
        n_per_condition`` rows (the observational block first) and ``conditions``, ``targets``
        and ``shifts`` are set, and ``spec["interventions"]`` holds the normalised settings (with
        the drawn targets).

    Raises
    ------
    ValueError
        For an unknown setting or an invalid value (:func:`check_spec`,
        :func:`check_interventions`), or an unusable ``random_state``.

    Notes
    -----
    **Standardisation rule.** Every returned quantity is in the units of the returned ``X``.
    Standardising divides column j by its standard deviation ``s_j`` (after centring), and the
    linear SEM stays exact in the new units with weights ``W[i, j] s_i / s_j`` and noise standard
    deviations ``sigma_j / s_j``; so ``W_true`` and ``noise_std`` are rescaled that way (the support
    ``B_true`` does not change). Scores that compare an estimate of ``X``'s SEM with the truth
    (``sigma_rel_err``, weight errors, varsortability of ``W_true``) are then meaningful; ``scale``
    recovers the raw units. With interventions, the mean and ``s_j`` are those of the
    observational rows (so they are standardised exactly as without interventions) and apply to
    every row; ``shifts`` are divided by ``s_j`` too.

    Protocol: Saboksayr, Mateos and Tepper (ICLR 2024), Section 5 and Appendix D; NOTEARS
    (Zheng et al., 2018) ``simulate_dag`` / ``simulate_parameter`` / ``simulate_linear_sem``.
    Hard (perfect) interventions: Hauser and Buehlmann (JMLR 2012), Section 2.
    """
    s = check_spec(spec, **settings)
    iv = check_interventions(interventions, s["n_nodes"], s["n_samples"])
    # Seven streams with interventions, else four (as before, so a caller's Generator or SeedSequence
    # spawns exactly what it did); the first four children are the same either way.
    streams = _streams(random_state, 7 if iv["n_conditions"] else 4)
    rng_graph, rng_w, rng_var, rng_x = streams[:4]
    d = s["n_nodes"]
    B = simulate_dag(d, s["degree"], s["graph"], random_state=rng_graph)
    low, high = s["w_range"]
    W = simulate_parameters(B, w_ranges=((-high, -low), (low, high)), random_state=rng_w)
    if s["variance"] == "ev":
        var = np.full(d, s["noise_var"])
    else:
        var = draw_noise_variances(d, *s["noise_var_range"], random_state=rng_var)
    X, std = simulate_linear_sem(W, s["n_samples"], s["noise"], noise_var=var, random_state=rng_x)
    conditions = targets = shifts = None
    if iv["n_conditions"]:
        X, conditions, targets, shifts, iv = simulate_conditions(W, X, iv, s["noise"], var, streams[4:])
        s = {**s, "interventions": {**iv, "targets": [list(t) for t in iv["targets"]]}}
    scale = np.ones(d)
    if s["standardize"]:
        n_obs = s["n_samples"]
        obs = X[:n_obs]
        scale = obs.std(axis=0)
        if conditions is not None and np.any(scale == 0):
            raise ValueError(f"the observational rows have constant column(s) {np.flatnonzero(scale == 0).tolist()}; "
                             "cannot standardise (draw more observational rows).")
        X = (X - obs.mean(axis=0)) / scale if conditions is not None else standardize(X)
        W = W * scale[:, None] / scale[None, :]
        std = std / scale
        if shifts is not None:
            shifts = shifts / scale
    return SimulatedData(X=X, B_true=B, W_true=W, noise_std=std, scale=scale, spec=s,
                         conditions=conditions, targets=targets, shifts=shifts)
