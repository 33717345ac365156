"""Which experiment next? Interventional essential graphs and a ranking of single-node interventions.

A DAG learnt from observational data is known only up to its Markov equivalence class; data from
interventions shrink that class (Hauser and Buehlmann 2012). This module answers "which node
should the next experiment intervene on, to settle the most edge directions?":

* :func:`interventional_essential_graph` is the I-essential graph of a DAG under a family of
  intervention targets (Hauser and Buehlmann, JMLR 13, 2012, "Characterization and greedy learning
  of interventional Markov equivalence classes of directed acyclic graphs"): the edges whose
  direction every DAG of the interventional Markov equivalence class shares are directed, the others
  undirected. With no targets it is the CPDAG (:func:`colide_core.evaluation._metrics.cpdag_from_dag`).
* :func:`rank_interventions` scores every candidate target t by the expected number of edges the
  experiment "intervene on t" would orient: on each bootstrap refit G_b of the data, the edges at t
  (which an intervention on t orients by itself) and those Meek's rules then orient in the
  I-essential graph of G_b, averaged over b. Counting only the edges still open in the class is the
  single-vertex criterion of Hauser and Buehlmann's active learning (Int. J. Approx. Reasoning 55,
  2014, "Two optimal strategies for active learning of causal models from interventional data",
  pcalg's ``opt.target``; ``criterion="mec"`` here); a bootstrap-entropy ranking is
  ``criterion="entropy"``. Which one and why, with the measurements: ``docs/planning.md``.

Conventions: data ``X`` has shape ``(n_samples, n_nodes)`` (the paper writes d x n);
``B[i, j] != 0`` means i -> j; a graph of the class is coded as gadjid's CPDAGs (1 at ``[i, j]``
only: i -> j; 2 at ``[i, j]`` and ``[j, i]``: i -- j). This module never prints; progress goes
through ``callback(done, total)``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import clone

from colide_core import defaults
from colide_core._params import InvalidParameterError, is_int
from colide_core._validation import check_square_matrix

__all__ = ["interventional_essential_graph", "rank_interventions", "CRITERIA", "EDGE_DASH"]

#: The ranking criteria of :func:`rank_interventions`, the default first.
CRITERIA = defaults.PLAN_CRITERIA

#: How an undirected edge is written in the ``edges`` column ("Raf\u2014Mek").
EDGE_DASH = "\u2014"


# --------------------------------------------------------------------------------------------
# The I-essential graph
# --------------------------------------------------------------------------------------------

def _family_mask(d, family):
    """``M[a, b]``: some target set of ``family`` holds exactly one of a and b (the edge a -- b is
    then oriented by that intervention, Hauser and Buehlmann 2012, Theorem 10 (iii))."""
    M = np.zeros((d, d), dtype=bool)
    for T in family:
        v = np.zeros(d, dtype=bool)
        v[list(T)] = True
        M |= v[:, None] != v[None, :]
    return M


def _v_structure_edges(A):
    """``A[a, b]`` edges that are part of a v-structure a -> b <- c (a and c non-adjacent)."""
    adj = A | A.T
    out = np.zeros_like(A)
    for b in range(A.shape[0]):
        pa = np.flatnonzero(A[:, b])
        if pa.size < 2:
            continue
        sub = adj[np.ix_(pa, pa)]
        np.fill_diagonal(sub, True)
        out[pa[~sub.all(axis=1)], b] = True  # a parent with a non-adjacent co-parent
    return out


def _meek_closure(D, U):
    """Close the partially directed graph (``D[a, b]``: a -> b; ``U`` symmetric: a -- b) under
    Meek's rules R1-R4 (Meek, UAI 1995), in place; returns ``(D, U)``.

    R1: c -> x -- y, c and y non-adjacent: x -> y. R2: x -> c -> y and x -- y: x -> y.
    R3: x -- c -> y, x -- c' -> y, c and c' non-adjacent, x -- y: x -> y.
    R4: x -- c -> c' -> y, x adjacent to c', c and y non-adjacent, x -- y: x -> y.
    """
    changed = True
    while changed:
        changed = False
        xs, ys = np.nonzero(np.triu(U))
        for a, b in zip(xs.tolist(), ys.tolist()):
            if not U[a, b]:
                continue
            adj = D | D.T | U
            for x, y in ((a, b), (b, a)):
                if _forced(x, y, D, U, adj):
                    D[x, y] = True
                    U[x, y] = U[y, x] = False
                    changed = True
                    break
    return D, U


def _forced(x, y, D, U, adj):
    """Whether one of Meek's rules orients the undirected edge x -- y as x -> y."""
    if np.any(D[:, x] & ~adj[:, y]):  # R1 (c = y is excluded: y -- x is undirected)
        return True
    if np.any(D[x] & D[:, y]):  # R2
        return True
    cs = np.flatnonzero(U[x] & D[:, y])
    if cs.size >= 2:  # R3
        sub = adj[np.ix_(cs, cs)]
        np.fill_diagonal(sub, True)
        if not sub.all():
            return True
    for c in np.flatnonzero(U[x] & ~adj[:, y]):  # R4
        if c != y and np.any(D[c] & D[:, y] & adj[x]):
            return True
    return False


def _essential(A, M, vstruct=None):
    """gadjid-coded I-essential graph of the boolean DAG ``A`` with ``M`` from :func:`_family_mask`."""
    if vstruct is None:
        vstruct = _v_structure_edges(A)
    D = A & (vstruct | M)
    U = (A & ~D)
    U = U | U.T
    D, U = _meek_closure(D, U)
    return D.astype(np.int8) + 2 * U.astype(np.int8)


def _check_family(targets_family, d, node_names=None):
    """The family as a list of frozensets of node indices (the empty set always in it)."""
    if targets_family is None:
        targets_family = ()
    if isinstance(targets_family, (str, bytes)) or not hasattr(targets_family, "__iter__"):
        raise InvalidParameterError("targets_family must be a sequence of target sets (sequences of nodes), "
                                    f"got {type(targets_family).__name__}.")
    family = [frozenset()]
    for T in targets_family:
        if isinstance(T, (str, bytes)) or not hasattr(T, "__iter__"):
            raise InvalidParameterError(f"each target set must be a sequence of nodes, got {T!r:.60}.")
        family.append(frozenset(_node_index(v, node_names, d) for v in T))
    return list(dict.fromkeys(family))


def _node_index(node, names, d):
    if is_int(node) and 0 <= int(node) < d:
        return int(node)
    if isinstance(node, str) and names is not None and node in names:
        return names.index(node)
    raise InvalidParameterError(f"unknown node {str(node)[:60]!r}: give a node index in [0, {d}) "
                                f"or a node name.")


def interventional_essential_graph(B, targets_family=(), *, node_names=None) -> np.ndarray:
    """The interventional essential graph (I-essential graph) of a DAG.

    Parameters
    ----------
    B : array-like of shape (n_nodes, n_nodes)
        A DAG; ``B[i, j] != 0`` means i -> j.
    targets_family : sequence of sequences of nodes, default=()
        The intervention targets of the experiments run (one set per condition: the nodes a hard
        or soft intervention acted on), as node indices or, with ``node_names``, names. The
        observational (empty) set is always in the family, so the family is conservative in
        Hauser and Buehlmann's sense.
    node_names : sequence of str, optional
        To give targets by name.

    Returns
    -------
    E : ndarray of shape (n_nodes, n_nodes), dtype int8
        gadjid's coding, as :func:`colide_core.evaluation._metrics.cpdag_from_dag`: ``E[i, j] == 1``
        and ``E[j, i] == 0`` for an edge i -> j directed in every DAG of the interventional Markov
        equivalence class; ``E[i, j] == E[j, i] == 2`` for an edge whose direction the class leaves
        open; 0 elsewhere. With an empty family it equals the CPDAG.

    Raises
    ------
    ValueError
        If ``B`` is not square, not finite or has a directed cycle.
    InvalidParameterError
        For a malformed family or an unknown node.

    Notes
    -----
    Hauser and Buehlmann (JMLR 13, 2012), Theorem 10 and Section 4: two DAGs are I-equivalent iff
    they have the same skeleton, the same v-structures, and the same direction of every edge with
    exactly one end in some target set. The I-essential graph is built by directing those edges
    (and the edges of v-structures) as in ``B`` and closing the partially directed graph under
    Meek's rules R1-R4 (Meek, UAI 1995), which are complete for such background knowledge.
    ``tests/test_planning.py`` checks it against ``gies.utils.replace_unprotected`` (the
    protected-edge construction of Hauser and Buehlmann's Algorithm 1) on random DAGs and families.

    Examples
    --------
    A chain 0 -> 1 -> 2: observationally both edges are undirected; intervening on 0 orients
    0 -> 1, and then Meek's R1 orients 1 -> 2.

    >>> B = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    >>> interventional_essential_graph(B).tolist()
    [[0, 2, 0], [2, 0, 2], [0, 2, 0]]
    >>> interventional_essential_graph(B, [[0]]).tolist()
    [[0, 1, 0], [0, 0, 1], [0, 0, 0]]
    """
    from colide_core.graph._dag import is_dag

    A = np.asarray(check_square_matrix(B, "B", what="adjacency")) != 0
    np.fill_diagonal(A, False)
    if not is_dag(A):
        raise ValueError("interventional_essential_graph needs a DAG; B has a directed cycle.")
    d = A.shape[0]
    names = None if node_names is None else [str(n) for n in node_names]
    if names is not None and len(names) != d:
        raise ValueError(f"node_names has {len(names)} names for {d} nodes.")
    return _essential(A, _family_mask(d, _check_family(targets_family, d, names)))


def _settled(A, M, candidates, strict=False):
    """For one DAG: ``{t: boolean (d, d) upper-triangular mask of the edges an experiment on t settles}``.

    ``strict`` (Hauser and Buehlmann 2014): the edges undirected in the I-essential graph under
    ``M`` and directed under ``M`` plus the target set ``{t}``. Otherwise (the ``"oriented"``
    criterion) also every edge at t not yet cut by a target set of ``M``, whether or not the
    observational class already compels it: the experiment orients it by itself (Hauser and
    Buehlmann 2012, Theorem 10 (iii)).
    """
    d = A.shape[0]
    skeleton = A | A.T
    vs = _v_structure_edges(A)
    before = _essential(A, M, vs) == 2
    out = {}
    for t in candidates:
        Mt = M.copy()
        Mt[t, :] = True
        Mt[:, t] = True
        Mt[t, t] = False
        new = before & ~(_essential(A, Mt, vs) == 2) if before.any() else np.zeros((d, d), dtype=bool)
        if not strict:
            new = new | (skeleton & Mt & ~M)
        out[t] = np.triu(new)
    return out


# --------------------------------------------------------------------------------------------
# Ranking single-node experiments
# --------------------------------------------------------------------------------------------

def _binary_entropy(p):
    """Entropy in bits of a coin with probability ``p`` (0 at p = 0 and p = 1)."""
    from scipy.special import entr

    p = np.asarray(p, dtype=float)
    return (entr(p) + entr(1.0 - p)) / np.log(2.0)


def _check_candidates(candidates, names, d):
    if candidates is None:
        return list(range(d))
    if isinstance(candidates, (str, bytes)) or not hasattr(candidates, "__iter__"):
        candidates = [candidates]
    out = list(dict.fromkeys(_node_index(c, names, d) for c in candidates))
    if not out:
        raise InvalidParameterError("candidates is empty: give at least one node, or None for every node.")
    return out


def rank_interventions(X, *, variant=defaults.VARIANT, conditions=None, targets=None, candidates=None,
                       n_bootstrap=defaults.PLAN_BOOTSTRAP, random_state=None, estimator=None,
                       criterion=defaults.PLAN_CRITERIA[0], min_probability=0.5, n_jobs=1, callback=None,
                       scheduler=None) -> pd.DataFrame:
    """Rank single-node interventions by the number of edge directions they would settle.

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
        The data so far (the paper writes d x n); finite numbers, at least 4 rows. Never modified.
    variant : {"ev", "nv"}, default="nv"
        The CoLiDE variant of the default estimator (ignored when ``estimator`` is given).
    conditions : array-like of shape (n_samples,), optional
        Each row's condition, as :meth:`colide_core.CoLiDE.fit` takes it (the same checks): the fits
        use the design, and the bootstrap resamples within conditions.
    targets : mapping, optional
        ``{condition: [node, ...]}``, the experiments already run, as in
        :meth:`colide_core.CoLiDE.fit` (needs ``conditions``). Their target sets, with the
        observational empty set, form the current family.
    candidates : sequence of nodes, optional
        The nodes one may intervene on (names or indices); default every node.
    n_bootstrap : int, default=20
        Refits on rows resampled with replacement within conditions
        (:func:`colide_core.evaluation.stability.bootstrap_edges`); 0 scores the point estimate
        alone (Hauser and Buehlmann's criterion on one graph).
    random_state : None, int, SeedSequence or Generator
        Seeds the resampling (as :func:`~colide_core.evaluation.stability.bootstrap_edges`).
    estimator : scikit-learn estimator, optional
        Default ``CoLiDE(variant)``; any estimator with ``fit(X, conditions=, targets=)`` and
        ``adjacency_`` (e.g. ``CoLiDE(solver="topo")``). Cloned, never modified.
    criterion : {"oriented", "mec", "entropy"}, default="oriented"
        What ``score`` counts, on each graph G_b (the bootstrap refits, or the point estimate when
        ``n_bootstrap=0``), averaged over b:

        * ``"oriented"``: the edges the experiment orients: every edge of G_b at t (an intervention
          on t orients the edges with exactly one end in {t}: Hauser and Buehlmann 2012, Theorem 10
          (iii)) that no earlier target already cuts, plus the edges Meek's rules then orient in the
          I-essential graph of G_b (undirected under the current family, directed once {t} joins);
        * ``"mec"``: only the edges undirected in the I-essential graph of G_b under the current
          family and directed under the family plus {t}: Hauser and Buehlmann's (2014) single-vertex
          criterion (pcalg's ``opt.target``), averaged over the bootstrap instead of the worst case
          over one class;
        * ``"entropy"``: the baseline of issue 40, the sum over t's neighbours j of the bootstrap's
          adjacency frequency of t -- j times the binary entropy (bits) of its direction.

        ``docs/planning.md`` compares the three on simulated NV data: "oriented" is the default
        because it picked best (well above a random target, and at least as well as
        "entropy"), while "mec" did worse than random: CoLiDE-NV's errors are not confined to the
        edges its observational class leaves open, so "mec" ignores most of what an experiment fixes.
    min_probability : float in [0, 1], default=0.5
        The ``edges`` column lists the edges settled in at least this share of the graphs.
    n_jobs, scheduler
        As in :func:`~colide_core.evaluation.stability.bootstrap_edges`.
    callback : callable, optional
        ``callback(done, total)`` after each bootstrap refit (``total = n_bootstrap``); returning
        True stops the bootstrap, and the ranking uses the refits done (``attrs["stopped"]``).

    Returns
    -------
    pandas.DataFrame
        Indexed by the candidate's node name (``"X0"``... for an array), best first (ties: more
        edges settled in the point estimate first, then column order). Columns:

        * ``score``: the criterion (above): for "oriented" and "mec", the expected number of edges
          whose direction the experiment settles;
        * ``edges``: the edges settled in at least ``min_probability`` of the graphs, most often
          first, written ``"A\u2014B"`` (:data:`EDGE_DASH`; A before B in column order);
        * ``edge_pairs``: those edges as a tuple of ``(A, B)`` name pairs (A before B in column
          order: the direction is what the experiment would tell);
        * ``edge_probability``: ``{"A\u2014B": share of the graphs}`` for every edge settled in any;
        * ``point_estimate``: the number of edges the intervention settles in the I-essential
          graph of the fit on all the rows;
        * ``undirected``: the mean number of undirected edges before the experiment (same for
          every candidate).

        ``attrs`` holds ``criterion``, ``n_bootstrap`` (asked), ``n_graphs`` (refits used; 0: the point
        estimate alone),
        ``stopped``, ``family`` (the current target sets, by name) and ``point_adjacency``
        (the point estimate's weights, ``W[i][j]``, as nested lists: ``np.asarray`` it).

    Raises
    ------
    InvalidParameterError
        For an unknown candidate or criterion, ``n_bootstrap`` not an integer in
        ``[0, colide_core.defaults.MAX_RESAMPLES]``, ``min_probability`` outside [0, 1].
    ValueError
        For invalid data, conditions or targets (the checks of :meth:`colide_core.CoLiDE.fit`;
        :class:`colide_core.exceptions.ConditionsError` is a ValueError), or when every refit fails.

    Notes
    -----
    Why this criterion: an intervention on t orients the edges at t and then whatever Meek's rules
    propagate (Hauser and Buehlmann 2012, 2014). Counting them needs the true DAG, for which the
    bootstrap's graphs stand in, so an edge counts by how often the refits have it. Hauser and
    Buehlmann count only the edges still open in the class; but a learnt graph is also wrong about
    edges its class compels, and an experiment on t fixes those too, so "oriented" counts every
    edge at t. A ranking by the bootstrap's orientation entropy alone measures how the fit wavers,
    not what the experiment settles: an estimate that is consistently wrong looks certain to it.
    """
    from colide_core.evaluation.stability import _as_data, _checked_conditions, bootstrap_edges

    if criterion not in CRITERIA:
        raise InvalidParameterError(f"criterion must be one of {CRITERIA}, got {criterion!r:.60}.")
    if not is_int(n_bootstrap) or not 0 <= n_bootstrap <= defaults.MAX_RESAMPLES:
        raise InvalidParameterError(f"n_bootstrap must be an integer in [0, {defaults.MAX_RESAMPLES:,}], "
                                    f"got {n_bootstrap!r:.60}.")
    if isinstance(min_probability, bool) or not isinstance(min_probability, (int, float, np.floating)) \
            or not 0 <= float(min_probability) <= 1:
        raise InvalidParameterError(f"min_probability must be a number in [0, 1], got {min_probability!r:.60}.")
    if callback is not None and not callable(callback):
        raise InvalidParameterError("callback must be callable.")
    values, names = _as_data(X)
    n, d = values.shape
    names_or_default = names or [f"X{j}" for j in range(d)]
    cand = _check_candidates(candidates, names_or_default, d)
    family = [frozenset()]
    if conditions is None:
        if targets is not None:
            raise ValueError("targets need conditions: give the condition of each row.")
    else:
        cond, _, _ = _checked_conditions(conditions, targets, n, d, names)
        family += [frozenset(T) for T in cond[2].values()]
    family = list(dict.fromkeys(family))
    M = _family_mask(d, family)
    if estimator is None:
        from colide_core import CoLiDE

        estimator = CoLiDE(variant)
    data = pd.DataFrame(values, columns=names) if names is not None else values.copy()

    point = clone(estimator)
    point.fit(data, conditions=conditions, targets=targets)
    W_point = np.array(point.adjacency_, dtype=float)

    stopped = False
    if n_bootstrap:
        asked = {"stop": False}

        def progress(done, total):
            stop = bool(callback(done, total)) if callback is not None else False
            asked["stop"] = asked["stop"] or stop
            return stop

        try:
            boot = bootstrap_edges(data, estimator, n_boot=int(n_bootstrap), random_state=random_state,
                                   n_jobs=n_jobs, callback=progress, scheduler=scheduler,
                                   conditions=conditions, targets=targets)
            graphs = [a != 0 for a in boot.adjacency_samples]
            stopped = bool(boot.stopped)
        except ValueError:
            if not asked["stop"]:
                raise
            graphs, stopped = [], True  # stopped before the first refit: the point estimate alone
    else:
        graphs = []
    n_graphs = len(graphs)
    if not graphs:
        graphs = [W_point != 0]

    point_settled = _settled(W_point != 0, M, cand, strict=criterion == "mec")
    counts = {t: np.zeros((d, d)) for t in cand}
    undirected = []
    for A in graphs:
        undirected.append(int((np.triu(_essential(A, M) == 2)).sum()))
        for t, mask in _settled(A, M, cand, strict=criterion == "mec").items():
            counts[t] += mask
    G = np.stack(graphs).astype(float)
    freq = G.mean(axis=0)
    rows = []
    for t in cand:
        prob = counts[t] / len(graphs)
        if criterion != "entropy":
            score = float(prob.sum())
        else:
            adj = freq[t] + freq[:, t]
            direction = np.divide(freq[t], adj, out=np.full(d, 0.5), where=adj > 0)
            score = float(np.sum(np.where(adj > 0, adj * _binary_entropy(direction), 0.0)))
        pairs = sorted(zip(*np.nonzero(prob)), key=lambda ij: (-prob[ij], ij))
        shown = [(names_or_default[i], names_or_default[j]) for i, j in pairs if prob[i, j] >= float(min_probability)]
        rows.append({"node": names_or_default[t], "score": score,
                     "edges": ", ".join(f"{a}{EDGE_DASH}{b}" for a, b in shown),
                     "edge_pairs": tuple(shown),
                     "edge_probability": {f"{names_or_default[i]}{EDGE_DASH}{names_or_default[j]}": float(prob[i, j])
                                          for i, j in pairs},
                     "point_estimate": int(point_settled[t].sum()),
                     "undirected": float(np.mean(undirected)), "_order": t})
    frame = pd.DataFrame(rows).sort_values(["score", "point_estimate", "_order"], ascending=[False, False, True],
                                           kind="stable")
    frame = frame.drop(columns="_order").set_index("node")
    frame.attrs.update({"criterion": criterion, "n_bootstrap": int(n_bootstrap),
                        "n_graphs": n_graphs,
                        "stopped": stopped,
                        "family": [sorted(names_or_default[v] for v in T) for T in family if T],
                        "point_adjacency": W_point.tolist()})  # lists: pandas compares attrs with ==
    return frame
