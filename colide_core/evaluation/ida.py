"""Local IDA: the possible total effects of an intervention given an equivalence class, not a DAG.

When the data identify only a Markov equivalence class (a CPDAG: Gaussian noise of unequal
variances), an intervention's effect on a node is not one number but a set: one value per DAG of
the class. Maathuis, Kalisch and Buehlmann (2009, "Estimating high-dimensional intervention effects
from observational data", Ann. Statist. 37(6A), Section 3, the *local* algorithm) read that set off
the CPDAG's neighbourhood of the intervened node x:

1. pa(x), its directed parents, and sib(x), its undirected neighbours;
2. every subset S of sib(x) that, oriented S -> x and x -> sib(x) \\ S, makes no new v-structure
   (pcalg's ``has.new.coll``: S pairwise adjacent, each of S adjacent to each of pa(x), and each
   directed parent of a node of sib(x) \\ S adjacent to x) is an admissible parent set
   ``P = pa(x) + S``;
3. for each, the effect of x on y is the coefficient of x in the least-squares regression of y on
   x and P (0 when y is in P): the back-door adjustment of a linear Gaussian model.

The multiset of effects (one per admissible set) is what the data allow. The aggregate this
module uses for a point prediction is its mean (``aggregate="mean"``); Maathuis et al. summarise
by the minimum absolute value, a lower bound (``aggregate="min_abs"``). Both are offered.

The regressions are computed from the covariance alone (centred within each condition when the
data have conditions), so one pass over the data serves every node and every parent set.

The CPDAG coding is gadjid's (:func:`colide_core.evaluation._metrics.cpdag_from_dag`):
``C[i, j] == 1`` and ``C[j, i] == 0`` for a directed edge i -> j, ``C[i, j] == C[j, i] == 2`` for an
undirected edge. :func:`cpdag_from_causallearn` converts causal-learn's endpoint coding (GES and PC,
:func:`ges_cpdag`, :func:`pc_cpdag`). Data ``X`` are ``(n_samples, n_nodes)`` (the paper writes
d x n).
"""
from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass

import numpy as np

from colide_core._params import InvalidParameterError
from colide_core._validation import check_X
from colide_core.exceptions import import_optional

__all__ = ["IDAResult", "AGGREGATES", "admissible_parent_sets", "ida", "ida_effects", "cpdag_from_causallearn",
           "ges_cpdag", "pc_cpdag", "MAX_SIBLINGS"]

#: How the possible effects are summarised into one prediction: their mean (the default), or the
#: one of least magnitude (Maathuis et al.'s lower bound).
AGGREGATES = ("mean", "min_abs")
#: Undirected neighbours of the intervened node beyond which the 2^k subsets are refused.
MAX_SIBLINGS = 16


def _check_cpdag(C):
    C = np.asarray(C)
    if C.ndim != 2 or C.shape[0] != C.shape[1]:
        raise ValueError(f"the CPDAG must be a square matrix, got shape {C.shape}.")
    if not np.all(np.isin(C, (0, 1, 2))):
        raise ValueError("the CPDAG must be coded 0 / 1 (directed) / 2 (undirected), as cpdag_from_dag's.")
    if np.any(np.diag(C)):
        raise ValueError("the CPDAG has a self-loop.")
    return C.astype(np.int8)


def _node(x, d):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)) or not 0 <= int(x) < d:
        raise InvalidParameterError(f"node must be an index in [0, {d}), got {x!r}.")
    return int(x)


def admissible_parent_sets(C, x) -> list:
    """The parent sets of ``x`` the CPDAG allows, read off its neighbourhood (local IDA).

    Parameters
    ----------
    C : array-like of shape (n_nodes, n_nodes)
        A CPDAG (or any PDAG, e.g. PC's output) in gadjid's coding: ``C[i, j] == 1, C[j, i] == 0``
        for i -> j; ``C[i, j] == C[j, i] == 2`` for i -- j. A pair coded 1 both ways (PC's
        bidirected conflict) is read as undirected.
    x : int
        The intervened node.

    Returns
    -------
    list of tuple of int
        Each admissible parent set ``pa(x) + S``, sorted, S over the subsets of sib(x) in order of
        size then index (the first is ``pa(x)`` alone, always admissible).

    Raises
    ------
    ValueError
        For a matrix that is not a coded PDAG, or more than :data:`MAX_SIBLINGS` undirected
        neighbours of x (2^k sets).
    InvalidParameterError
        For a node out of range.

    Notes
    -----
    The check of new v-structures is pcalg's ``has.new.coll`` (Kalisch et al. 2012), of Maathuis,
    Kalisch and Buehlmann (2009), Section 3.2: orienting S -> x and x -> sib(x) \\ S is allowed when
    S is a clique, every node of S is adjacent to every directed parent of x, and every directed
    parent of a node of sib(x) \\ S is adjacent to x. In a valid CPDAG the last two always hold.
    """
    C = _check_cpdag(C)
    d = C.shape[0]
    x = _node(x, d)
    skel = (C != 0) | (C.T != 0)
    undirected = ((C != 0) & (C.T != 0))
    directed = (C != 0) & ~undirected  # directed[i, j]: i -> j
    pa = [int(i) for i in np.flatnonzero(directed[:, x])]
    sib = [int(i) for i in np.flatnonzero(undirected[:, x])]
    if len(sib) > MAX_SIBLINGS:
        raise ValueError(f"node {x} has {len(sib)} undirected neighbours: more than {MAX_SIBLINGS} "
                         f"(2^{len(sib)} parent sets) is refused.")
    out = []
    for r in range(len(sib) + 1):
        for S in itertools.combinations(sib, r):
            if any(not skel[a, b] for a, b in itertools.combinations(S, 2)):
                continue  # two non-adjacent nodes of S pointing at x: a new v-structure
            if any(not skel[s, p] for s in S for p in pa):
                continue  # s -> x <- p with s, p non-adjacent
            away = [s for s in sib if s not in S]
            if any(not skel[q, x] for s in away for q in np.flatnonzero(directed[:, s]) if q != x):
                continue  # x -> s <- q with x, q non-adjacent
            out.append(tuple(sorted(pa + list(S))))
    return out


def ida_effects(C, cov, x) -> tuple:
    """The possible total effects of ``x`` on every node, one row per admissible parent set.

    Parameters
    ----------
    C : array-like of shape (n_nodes, n_nodes)
        The CPDAG (:func:`admissible_parent_sets`).
    cov : array-like of shape (n_nodes, n_nodes)
        The data's covariance (any positive multiple of it gives the same effects).
    x : int
        The intervened node.

    Returns
    -------
    effects : ndarray of shape (n_sets, n_nodes)
        ``effects[k, y]``: the coefficient of x in the regression of y on x and the k-th parent
        set P_k (data units of y per unit of x); 1 at y = x, 0 for y in P_k.
    parent_sets : list of tuple of int
        The admissible parent sets, in the order of the rows.

    Raises
    ------
    ValueError
        As :func:`admissible_parent_sets`; or a covariance of the wrong shape, not finite, or
        singular on {x} and a parent set.
    """
    C = _check_cpdag(C)
    d = C.shape[0]
    S = np.asarray(cov, dtype=float)
    if S.shape != (d, d) or not np.all(np.isfinite(S)):
        raise ValueError(f"cov must be a finite ({d}, {d}) matrix.")
    x = _node(x, d)
    sets = admissible_parent_sets(C, x)
    effects = np.empty((len(sets), d))
    for k, P in enumerate(sets):
        Z = [x, *P]
        try:
            beta = np.linalg.solve(S[np.ix_(Z, Z)], S[Z])[0]  # the coefficient of x, for every y at once
        except np.linalg.LinAlgError:
            raise ValueError(f"the covariance of node {x} and its parent set {P} is singular.") from None
        beta[list(P)] = 0.0
        beta[x] = 1.0
        effects[k] = beta
    return effects, sets


@dataclass(frozen=True)
class IDAResult:
    """Local IDA's answer for one intervened node.

    Attributes
    ----------
    node : int
        The intervened node x.
    effects : ndarray of shape (n_sets, n_nodes)
        The possible total effects of x on every node (data units of y per unit of x), one row per
        admissible parent set.
    parent_sets : list of tuple of int
        Those parent sets (``pa(x)`` plus an admissible subset of the undirected neighbours).
    aggregate : str
        How :attr:`effect` summarises the rows (:data:`AGGREGATES`).
    effect : ndarray of shape (n_nodes,)
        The summary: the mean of each column, or the value of least magnitude.
    """

    node: int
    effects: np.ndarray
    parent_sets: list
    aggregate: str
    effect: np.ndarray

    @property
    def identified(self) -> bool:
        """True when the class allows one parent set: the effect is then a number, not a set."""
        return len(self.parent_sets) == 1


def _covariance(X, conditions, design=None):
    values, _ = check_X(X)
    if conditions is None and design is None:
        Xc = values - values.mean(axis=0)
    else:
        from colide_core.data.conditions import centre_by_condition
        from colide_core.data.design import resolve_design

        design = resolve_design(design, conditions, n_samples=values.shape[0], n_nodes=values.shape[1])
        Xc = values - values.mean(axis=0) if design is None else centre_by_condition(values, design=design)
    return Xc.T @ Xc / values.shape[0]


def ida(C, X=None, x=0, *, cov=None, conditions=None, aggregate="mean", design=None) -> IDAResult:
    """Local IDA (Maathuis, Kalisch and Buehlmann 2009) for an intervention on node ``x``.

    Parameters
    ----------
    C : array-like of shape (n_nodes, n_nodes)
        The CPDAG in gadjid's coding (:func:`colide_core.evaluation._metrics.cpdag_from_dag` of a
        DAG, :func:`ges_cpdag`, :func:`pc_cpdag`).
    X : array-like or DataFrame of shape (n_samples, n_nodes), optional
        The data (data units); the covariance is computed from it (within conditions).
    x : int
        The intervened node.
    cov : array-like of shape (n_nodes, n_nodes), optional
        Instead of ``X``: the covariance.
    conditions : array-like of shape (n_samples,), optional
        With ``X``: centre each condition on its own means before the covariance.
    aggregate : {"mean", "min_abs"}, default="mean"
        The summary of the possible effects (:data:`AGGREGATES`).
    design : colide_core.data.design.Design, optional
        With ``X``: the rows' conditions in one object, instead of ``conditions`` (its targets
        are not used; :func:`colide_core.data.design.resolve_design`).

    Returns
    -------
    IDAResult

    Raises
    ------
    InvalidParameterError
        For neither or both of ``X`` and ``cov``, or an unknown aggregate.
    ValueError
        As :func:`ida_effects`.

    Examples
    --------
    The undirected chain 0 -- 1 -- 2 (the class of 0 -> 1 -> 2), with the covariance of
    x0 = e0, x1 = 2 x0 + e1, x2 = 3 x1 + e2 (unit noise): x1's parent set is {}, {0} or {2}, and
    its effect on x2 is 3, 3 or 0.

    >>> C = np.array([[0, 2, 0], [2, 0, 2], [0, 2, 0]])
    >>> S = np.array([[1.0, 2, 6], [2, 5, 15], [6, 15, 46]])
    >>> r = ida(C, cov=S, x=1)
    >>> r.parent_sets, r.effects[:, 2].round(12).tolist()
    ([(), (0,), (2,)], [3.0, 3.0, 0.0])
    """
    if (X is None) == (cov is None):
        raise InvalidParameterError("give the data X or its covariance cov, not both.")
    if aggregate not in AGGREGATES:
        raise InvalidParameterError(f"aggregate must be one of {AGGREGATES}, got {str(aggregate)[:40]!r}.")
    S = _covariance(X, conditions, design) if cov is None else cov
    effects, sets = ida_effects(C, S, x)
    if aggregate == "mean":
        effect = effects.mean(axis=0)
    else:
        effect = effects[np.argmin(np.abs(effects), axis=0), np.arange(effects.shape[1])]
    return IDAResult(node=int(x), effects=effects, parent_sets=sets, aggregate=aggregate, effect=effect)


def cpdag_from_causallearn(G) -> np.ndarray:
    """causal-learn's endpoint coding of a graph, in gadjid's CPDAG coding.

    Parameters
    ----------
    G : causallearn.graph.GeneralGraph.GeneralGraph or ndarray of shape (n_nodes, n_nodes)
        ``G.graph[j, i] == 1 and G.graph[i, j] == -1``: i -> j; ``-1`` both ways: i -- j; ``1``
        both ways: i <-> j (a conflict PC can leave).

    Returns
    -------
    ndarray of shape (n_nodes, n_nodes), dtype int8
        ``C[i, j] == 1, C[j, i] == 0`` for i -> j; 2 both ways for an undirected edge, and for a
        bidirected one (its direction is not decided).
    """
    A = np.asarray(getattr(G, "graph", G))
    arrow = (A.T == 1) & (A == -1)  # arrow[i, j]: i -> j
    both = ((A == -1) & (A.T == -1)) | ((A == 1) & (A.T == 1))
    C = np.zeros(A.shape, dtype=np.int8)
    C[arrow] = 1
    C[both] = 2
    return C


def ges_cpdag(X, *, lambda_value=0.5, maxP=None) -> np.ndarray:
    """GES (causal-learn, linear-Gaussian BIC) as a CPDAG in gadjid's coding.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_nodes)
        Data (not modified).
    lambda_value : float, default=0.5
        causal-learn's BIC penalty per parameter, times log(n) (0.5: the standard BIC).
    maxP : int or None
        Bound on the parents per node in the search.

    Returns
    -------
    ndarray of shape (n_nodes, n_nodes), dtype int8

    Raises
    ------
    MissingExtraError
        (an ImportError) Without causal-learn.

    Notes
    -----
    :func:`causallearn.search.ScoreBased.GES.ges` with ``score_func="local_score_BIC"`` (Chickering
    2002); its ``G`` is the CPDAG, converted by :func:`cpdag_from_causallearn`.
    """
    ges = import_optional("causallearn.search.ScoreBased.GES", "GES").ges
    A, _ = check_X(X, min_samples=2, min_features=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        record = ges(A, score_func="local_score_BIC", maxP=maxP, lambda_value=float(lambda_value))
    return cpdag_from_causallearn(record["G"])


def pc_cpdag(X, *, alpha=0.05) -> np.ndarray:
    """The PC algorithm (causal-learn, Fisher-z tests) as a PDAG in gadjid's coding.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_nodes)
        Data (not modified).
    alpha : float in (0, 1), default=0.05
        The tests' level (causal-learn's default).

    Returns
    -------
    ndarray of shape (n_nodes, n_nodes), dtype int8
        PC's output (stable PC, causal-learn's default orientation rules); a conflict left
        bidirected is read as undirected (:func:`cpdag_from_causallearn`).

    Raises
    ------
    MissingExtraError
        (an ImportError) Without causal-learn.

    Notes
    -----
    :func:`causallearn.search.ConstraintBased.PC.pc` with ``indep_test="fisherz"`` (Spirtes,
    Glymour and Scheines 2000; Colombo and Maathuis 2014 for the stable variant).
    """
    pc = import_optional("causallearn.search.ConstraintBased.PC", "PC").pc
    A, _ = check_X(X, min_samples=4, min_features=1)
    if not 0 < float(alpha) < 1:
        raise InvalidParameterError(f"alpha must be in (0, 1), got {alpha!r}.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cg = pc(A, float(alpha), "fisherz", show_progress=False)
    return cpdag_from_causallearn(cg.G)
