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
* A look-ahead that simulates each experiment and refits, instead of counting, is
  :func:`colide_core.evaluation.lookahead.lookahead_interventions` (issue 52).

Conventions: data ``X`` has shape ``(n_samples, n_nodes)`` (the paper writes d x n);
``B[i, j] != 0`` means i -> j; a graph of the class is coded as gadjid's CPDAGs (1 at ``[i, j]``
only: i -> j; 2 at ``[i, j]`` and ``[j, i]``: i -- j). This module never prints; progress goes
through ``callback(done, total)``.
"""
from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from colide_core import defaults
from colide_core._params import InvalidParameterError, is_int
from colide_core._validation import check_square_matrix, node_index

__all__ = ["interventional_essential_graph", "rank_interventions", "planning_work", "settles_nothing", "CRITERIA",
           "SCORE_LABELS", "EDGE_DASH", "local_update"]

#: The ranking criteria of :func:`rank_interventions`, the default first.
CRITERIA = defaults.PLAN_CRITERIA
#: What ``score`` is, by criterion, in the words of a table's column header (page, report, CLI).
SCORE_LABELS = {"entropy": "direction uncertainty at the target (bits)", "oriented": "expected edges settled",
                "mec": "expected open edges settled"}

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


def _meek_closure(D, U, adj=None, dirty=None):
    """Close the partially directed graph (``D[a, b]``: a -> b; ``U`` symmetric: a -- b) under
    Meek's rules R1-R4 (Meek, UAI 1995), in place; returns ``(D, U)``.

    R1: c -> x -- y, c and y non-adjacent: x -> y. R2: x -> c -> y and x -- y: x -> y.
    R3: x -- c -> y, x -- c' -> y, c and c' non-adjacent, x -- y: x -> y.
    R4: x -- c -> c' -> y, x adjacent to c', c and y non-adjacent, x -- y: x -> y.

    Incremental: orienting an edge moves it from ``U`` to ``D``, so the skeleton ``adj`` is built
    once (pass it when the caller has it), and a pass checks only the undirected edges with an end
    in ``dirty`` (boolean, length d; default every node): the first pass those, each later pass
    those with an end next to (or at) an end of an edge the previous pass oriented. Each rule's
    premise about x -- y involves only edges at x, at y or between their neighbours, so no other
    edge can have become orientable. A pass costs O(E d) (each check is a few length-d vector
    operations), where rebuilding the d x d skeleton per edge cost O(E d^2).
    """
    d = D.shape[0]
    if adj is None:
        adj = D | D.T | U
    if dirty is None:
        dirty = np.ones(d, dtype=bool)
    nonadj = None
    while dirty.any():
        touched = np.zeros(d, dtype=bool)
        rows = U & (dirty[:, None] | dirty[None, :])
        xs, ys = np.nonzero(np.triu(rows))
        if xs.size > 2 * d:  # many edges to check: the rules as matrix products, all edges at once
            if nonadj is None:
                nonadj = (~adj).astype(np.float32)
                np.fill_diagonal(nonadj, 0.0)
            xs, ys = _matrix_pass(D, U, nonadj, touched)
        for a, b in zip(xs.tolist(), ys.tolist()):
            if not U[a, b]:
                continue
            for x, y in ((a, b), (b, a)):
                if _forced(x, y, D, U, adj):
                    D[x, y] = True
                    U[x, y] = U[y, x] = False
                    touched[x] = touched[y] = True
                    break
        dirty = touched | adj[touched].any(axis=0) if touched.any() else touched
    return D, U


def _matrix_pass(D, U, nonadj, touched):
    """One pass of R1 and R2 over every undirected edge at once, in place (``touched`` marks the
    ends of what it orients); returns the undirected edges left ``(xs, ys)`` (x < y) on which R3 or
    R4 may still fire, for :func:`_forced` to check one by one.

    With ``Df`` the directed edges as 0/1: R1 orients x -- y when ``(Df.T @ nonadj)[x, y] > 0``
    (some c -> x with c, y non-adjacent), R2 when ``(Df @ Df)[x, y] > 0`` (x -> c -> y). R3 needs
    two c with x -- c -> y (``(Uf @ Df)[x, y] >= 2``); R4 some c with x -- c, c and y non-adjacent
    and a path c -> c' -> y (``(Uf @ (nonadj * (Df @ Df > 0)))[x, y] > 0``): only the edges meeting
    these necessary conditions are left to check. Every rule's premise holds in the graph it reads,
    and Meek's rules orient only as the DAG does, so orienting all at once is sound; float32 counts
    are exact below 2**24.
    """
    Df = D.astype(np.float32)
    Uf = U.astype(np.float32)
    two = (Df @ Df) > 0
    forced = U & (((Df.T @ nonadj) > 0) | two)
    forced &= ~forced.T  # never both ways (cannot happen for a graph of a DAG; then left to _forced)
    if forced.any():
        D |= forced
        U &= ~(forced | forced.T)
        touched |= forced.any(axis=0) | forced.any(axis=1)
    maybe = U & (((Uf @ Df) >= 2) | ((Uf @ (nonadj * two)) > 0))
    maybe = np.triu(maybe | maybe.T)
    return np.nonzero(maybe)


def _forced(x, y, D, U, adj):
    """Whether one of Meek's rules orients the undirected edge x -- y as x -> y (``adj``: the
    skeleton, which orienting never changes)."""
    if np.any(D[:, x] & ~adj[:, y]):  # R1 (c = y is excluded: y -- x is undirected)
        return True
    into_y = D[:, y]
    if np.any(D[x] & into_y):  # R2
        return True
    cs = np.flatnonzero(U[x] & into_y)
    if cs.size >= 2:  # R3
        sub = adj[np.ix_(cs, cs)]
        np.fill_diagonal(sub, True)
        if not sub.all():
            return True
    cs = U[x] & ~adj[:, y]  # R4: x -- c, c and y non-adjacent, c -> c' -> y with c' adjacent to x
    cs[y] = False
    if cs.any():
        mid = into_y & adj[x]
        if mid.any() and D[np.ix_(np.flatnonzero(cs), np.flatnonzero(mid))].any():
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
        family.append(frozenset(node_index(v, node_names, d) for v in T))
    return list(dict.fromkeys(family))


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
    with threadpool_limits(limits=1, user_api="blas"):
        return _essential(A, _family_mask(d, _check_family(targets_family, d, names)))


def _settled(A, M, candidates, strict=False, stop=None):
    """For one DAG: ``{t: boolean (d, d) upper-triangular mask of the edges an experiment on t settles}``.

    ``strict`` (Hauser and Buehlmann 2014): the edges undirected in the I-essential graph under
    ``M`` and directed under ``M`` plus the target set ``{t}``. Otherwise (the ``"oriented"``
    criterion) also every edge at t not yet cut by a target set of ``M``, whether or not the
    observational class already compels it: the experiment orients it by itself (Hauser and
    Buehlmann 2012, Theorem 10 (iii)).

    The graph under ``M`` is closed once; each candidate starts from that closed graph, orients
    its own undirected edges as in ``A`` and closes again from there (Meek's closure is the least
    fixed point of monotone rules, so this is the closure from scratch under ``M`` plus ``{t}``),
    checking only edges near t and near what then changes. ``stop()``, when given, is asked after
    each candidate; when it returns True the function returns None.
    """
    with threadpool_limits(limits=1, user_api="blas"):  # d x d products: threads only contend
        return _settled_one_thread(A, M, candidates, strict, stop)


def _settled_one_thread(A, M, candidates, strict, stop):
    d = A.shape[0]
    skeleton = A | A.T
    vs = _v_structure_edges(A)
    D0 = A & (vs | M)
    U0 = A & ~D0
    U0 = U0 | U0.T
    D0, U0 = _meek_closure(D0, U0, skeleton)
    before = U0
    out = {}
    for t in candidates:
        Mt = M.copy()
        Mt[t, :] = True
        Mt[:, t] = True
        Mt[t, t] = False
        if U0[t].any():
            D, U = D0.copy(), U0.copy()
            at_t = U[t].copy()
            D[t, at_t & A[t]] = True
            D[at_t & A[:, t], t] = True
            U[t, at_t] = U[at_t, t] = False
            touched = at_t.copy()
            touched[t] = True
            _meek_closure(D, U, skeleton, touched | skeleton[touched].any(axis=0))
            new = before & ~U
        else:
            new = np.zeros((d, d), dtype=bool)
        if not strict:
            new = new | (skeleton & Mt & ~M)
        out[t] = np.triu(new)
        if stop is not None and stop():
            return None
    return out


def planning_work(B, targets_family=(), *, candidates=None, n_graphs=1, node_names=None) -> int:
    """The size of :func:`rank_interventions`' Meek phase: undirected edges x candidates x graphs.

    Parameters
    ----------
    B : array-like of shape (n_nodes, n_nodes)
        A DAG standing for the bootstrap's graphs (the fit on all rows); ``B[i, j] != 0``: i -> j.
    targets_family : sequence of sequences of nodes, default=()
        The experiments already run, as in :func:`interventional_essential_graph`.
    candidates : sequence of nodes, optional
        The nodes one may intervene on; default every node.
    n_graphs : int, default=1
        The graphs the ranking scores (``max(n_bootstrap, 1)``).
    node_names : sequence of str, optional
        To give targets and candidates by name.

    Returns
    -------
    int
        The undirected edges of B's I-essential graph under the family, times the candidates,
        times ``n_graphs``: each unit is one undirected edge whose closure a candidate may have to
        recheck. :func:`rank_interventions` refuses a ranking above ``max_work``
        (``colide_core.defaults.PLAN_MAX_WORK``) before its bootstrap.

    Raises
    ------
    ValueError
        As :func:`interventional_essential_graph`.
    """
    E = interventional_essential_graph(B, targets_family, node_names=node_names)
    d = E.shape[0]
    names = None if node_names is None else [str(n) for n in node_names]
    cand = _check_candidates(candidates, names or [f"X{j}" for j in range(d)], d)
    if not is_int(n_graphs) or n_graphs < 1:
        raise InvalidParameterError(f"n_graphs must be a positive integer, got {n_graphs!r:.60}.")
    return int(np.triu(E == 2).sum()) * len(cand) * int(n_graphs)


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
    out = list(dict.fromkeys(node_index(c, names, d) for c in candidates))
    if not out:
        raise InvalidParameterError("candidates is empty: give at least one node, or None for every node.")
    return out


def local_update(before, refit, targets):
    """The "local" refit rule after an experiment: the refit's edges at its targets, the fit before's elsewhere.

    An experiment on t tells about the edges with an end at t (their direction, Hauser and Buehlmann
    2012; their presence, through t's own masked equation); everywhere else its rows add only what
    as many observational rows would. In the paper's NV setting the refit's changes away from t are
    as likely to raise the SHD as to lower it, like a refit on 500 more observational rows
    (``docs/planning.md``, "Why an experiment can raise the SHD"). This rule keeps the fit before's
    graph there. It is an option, not what :func:`colide_core.evaluation.experiment.run_experiment`
    returns.

    Parameters
    ----------
    before : array-like of shape (n_nodes, n_nodes)
        The fit before the experiment (weights or 0/1); ``before[i, j] != 0`` means i -> j.
    refit : array-like of shape (n_nodes, n_nodes)
        The refit on the rows before plus the experiment's, with its targets known.
    targets : iterable of int
        The experiment's targets (node indices).

    Returns
    -------
    graph : ndarray of shape (n_nodes, n_nodes)
        ``refit[i, j]`` where i or j is a target, ``before[i, j]`` elsewhere (values copied as they
        are). When that graph has a directed cycle (the two fits order the nodes differently), the
        refit itself.
    local : bool
        False when the cycle made it fall back to the refit.

    Raises
    ------
    ValueError
        If the matrices are not square of one shape, not finite, or a target is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> before = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])   # 0 -> 1 -> 2
    >>> refit = np.array([[0, 0, 1], [1, 0, 0], [0, 0, 0]])    # 1 -> 0 -> 2 (1 -> 2 lost)
    >>> G, local = local_update(before, refit, [0])
    >>> G.astype(int).tolist(), local                           # 1 -> 0, 0 -> 2 (at 0); 1 -> 2 kept
    ([[0, 0, 1], [1, 0, 1], [0, 0, 0]], True)
    """
    from colide_core.graph._dag import is_dag

    A0 = check_square_matrix(before, "before", copy=True)
    A1 = check_square_matrix(refit, "refit", copy=True)
    if A0.shape != A1.shape:
        raise ValueError(f"before and refit must have one shape, got {A0.shape} and {A1.shape}.")
    d = A0.shape[0]
    nodes = [t for t in targets]
    if any(not is_int(t) or not 0 <= int(t) < d for t in nodes):
        raise ValueError(f"targets must be node indices in [0, {d}), got {nodes[:10]}.")
    at = np.zeros(d, dtype=bool)
    at[[int(t) for t in nodes]] = True
    pairs = at[:, None] | at[None, :]
    graph = np.where(pairs, A1, A0)
    if not is_dag(graph):
        return A1, False
    return graph, True


def settles_nothing(ranking) -> bool:
    """Whether no candidate of a :func:`rank_interventions` table settles any edge direction, in
    the fit on all rows or in any refit, whatever the criterion.

    Parameters
    ----------
    ranking : pandas.DataFrame
        The table :func:`rank_interventions` returned (its ``point_estimate`` and
        ``edge_probability`` columns).

    Returns
    -------
    bool
        True when every ``point_estimate`` is 0 and every ``edge_probability`` is empty (for
        "oriented" that is every score 0; the entropy can be 0 everywhere while experiments would
        still settle edges: on data whose refits all agree).
    """
    return not (ranking["point_estimate"] > 0).any() and not any(map(bool, ranking["edge_probability"]))


def rank_interventions(X, *, variant=defaults.VARIANT, conditions=None, targets=None, candidates=None,
                       n_bootstrap=defaults.PLAN_BOOTSTRAP, random_state=None, estimator=None,
                       criterion=defaults.PLAN_CRITERIA[0], min_probability=0.5, n_jobs=1, callback=None,
                       scheduler=None, max_work=defaults.PLAN_MAX_WORK, design=None) -> pd.DataFrame:
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
    criterion : {"entropy", "oriented", "mec"}, default="entropy"
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
        * ``"entropy"`` (the default): the sum over t's neighbours j of the bootstrap's adjacency
          frequency of t -- j times the binary entropy (bits) of its direction, over the edges no
          experiment already run has cut (one end in its target set: those data orient it); the
          baseline of issue 40. On the point estimate alone (``n_bootstrap=0``, or a Stop before
          the first refit) no direction wavers: every score is 0 and the order is
          ``point_estimate``'s.

        ``docs/planning.md`` compares them on simulated NV data (90 graphs at d = 10 and at 20,
        the default solver): "entropy" picked better than "oriented" at both sizes on both sets of
        graphs (by 0.3-1.9 edges, within the noise of each set), both well above a random target;
        "mec" did about as well as random: CoLiDE-NV's errors are not confined to the edges its
        observational class leaves open. With the fast solver alone (the default before
        ``solver="auto"``), "oriented" was ahead instead.
    min_probability : float in [0, 1], default=0.5
        The ``edges`` column lists the edges settled in at least this share of the graphs.
    n_jobs, scheduler
        As in :func:`~colide_core.evaluation.stability.bootstrap_edges`.
    callback : callable, optional
        ``callback(done, total)`` through every step, with ``total = 2 * max(n_bootstrap, 1)`` (one
        unit per refit, one per graph scored): ``done = 0`` at every checkpoint of the point fit
        (when the estimator's ``fit`` takes a ``callback``, as :class:`~colide_core.CoLiDE`'s), the
        refit count after each bootstrap refit, then ``n_bootstrap`` plus the graphs scored so far
        (fractional: after each candidate of each graph) in the Meek phase. Returning True stops:
        the ranking uses the graphs fully scored (at least the point estimate;
        ``attrs["stopped"]``).
    max_work : int or None, default=colide_core.defaults.PLAN_MAX_WORK
        The largest Meek phase accepted (:func:`planning_work`: the point estimate's undirected
        edges x candidates x ``max(n_bootstrap, 1)``), checked after the point fit and before the
        bootstrap; None: no limit.
    design : colide_core.data.design.Design, optional
        The conditions and targets in one object (validated once), instead of ``conditions`` and
        ``targets`` (:func:`colide_core.data.design.resolve_design`): passed as it is to the point
        fit (``fit(design=...)``, the loose form for an estimator whose ``fit`` has no ``design``)
        and to the bootstrap. The same ranking as the loose form.

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
        :class:`colide_core.exceptions.ConditionsError` is a ValueError), a ``design`` of other data
        or given with ``conditions`` or ``targets``, when every refit fails,
        or when the Meek phase would exceed ``max_work`` (the message gives the count and why: a
        dense fit, e.g. a small lambda1 or threshold, leaves most edges undirected).

    Notes
    -----
    The criteria: an intervention on t orients the edges at t and then whatever Meek's rules
    propagate (Hauser and Buehlmann 2012, 2014). Counting them needs the true DAG, for which the
    bootstrap's graphs stand in, so an edge counts by how often the refits have it. Hauser and
    Buehlmann count only the edges still open in the class; but a learnt graph is also wrong about
    edges its class compels, and an experiment on t fixes those too, so "oriented" counts every
    edge at t. The entropy measures where the fit wavers rather than what the experiment settles
    (an estimate consistently wrong looks certain to it), yet it picked best under the default
    solver: the SHD an experiment recovers is mostly at edges the refits disagree on. The
    ``edges`` and ``point_estimate`` columns count what the experiment settles for every criterion.
    """
    from colide_core.evaluation.stability import _as_data, _fit_design, _resampling_design, bootstrap_edges

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
    if max_work is not None and (not is_int(max_work) or max_work < 0):
        raise InvalidParameterError(f"max_work must be a non-negative integer or None, got {max_work!r:.60}.")
    values, names = _as_data(X)
    n, d = values.shape
    names_or_default = names or [f"X{j}" for j in range(d)]
    cand = _check_candidates(candidates, names_or_default, d)
    design = _resampling_design(names, n, d, design, conditions, targets)  # once: passed down as it is
    family = [frozenset()]
    if design is not None:
        family += [frozenset(T) for T in design.targets.values() if T]
    family = list(dict.fromkeys(family))
    M = _family_mask(d, family)
    if estimator is None:
        from colide_core import CoLiDE

        estimator = CoLiDE(variant)
    data = pd.DataFrame(values, columns=names) if names is not None else values.copy()

    n_scored = max(int(n_bootstrap), 1)
    total = 2 * n_scored
    asked = {"stop": False}

    def ask(done):
        if callback is not None and not asked["stop"]:
            asked["stop"] = bool(callback(done, total))
        return asked["stop"]

    point = clone(estimator)
    fit_kwargs = _fit_design(point, design)
    if callback is not None and "callback" in inspect.signature(point.fit).parameters:
        fit_kwargs["callback"] = lambda stage, iteration, objective: ask(0)
    point.fit(data, **fit_kwargs)
    W_point = np.array(point.adjacency_, dtype=float)
    A_point = W_point != 0
    np.fill_diagonal(A_point, False)

    with threadpool_limits(limits=1, user_api="blas"):
        undirected_point = int(np.triu(_essential(A_point, M) == 2).sum())
    work = undirected_point * len(cand) * n_scored
    if max_work is not None and work > max_work:
        raise ValueError(
            f"this ranking is too large to run: the fit leaves {undirected_point:,} edges undirected, "
            f"and {len(cand):,} candidates x {n_scored:,} graphs would recheck up to {work:,} "
            f"edge closures (the limit is {int(max_work):,}). A fit with that many undirected edges "
            f"is too dense to plan on: raise lambda1 or the threshold, or rank fewer candidates "
            f"or refits.")

    stopped = bool(asked["stop"])
    graphs = []
    if n_bootstrap and not stopped:
        try:
            boot = bootstrap_edges(data, estimator, n_boot=int(n_bootstrap), random_state=random_state,
                                   n_jobs=n_jobs, callback=lambda done, _total: ask(done), scheduler=scheduler,
                                   design=design)
            # only each refit's edges are read from here on: its result (every refit's n_boot x d x d
            # float64 weights, 8 times the booleans) is given back before anything else is made
            graphs = [a != 0 for a in boot.adjacency_samples]
            stopped = bool(boot.stopped)
            del boot
        except ValueError:
            if not asked["stop"]:
                raise
            graphs, stopped = [], True  # stopped before the first refit: the point estimate alone

    strict = criterion == "mec"
    point_settled = _settled(A_point, M, cand, strict=strict)
    base = float(n_bootstrap)
    # each candidate's count of the graphs that settle each edge: at most n_scored, so the
    # smallest unsigned integers that hold it (1 byte at the page's 200 refits, not float64's 8);
    # ``counts[t] / len(graphs)`` is the same float64 either way
    counts = {t: np.zeros((d, d), dtype=np.min_scalar_type(n_scored)) for t in cand}
    undirected = []
    scored = []
    for b, A in enumerate(graphs):
        done_cand = [0]

        def after_candidate(b=b, done_cand=done_cand):
            done_cand[0] += 1
            return ask(base + b + done_cand[0] / len(cand))

        settled = None if stopped else _settled(A, M, cand, strict=strict, stop=after_candidate)
        if settled is None:
            stopped = True
            break
        with threadpool_limits(limits=1, user_api="blas"):
            undirected.append(int((np.triu(_essential(A, M) == 2)).sum()))
        for t, mask in settled.items():
            counts[t] += mask
        settled = None  # given back before the next graph's masks are made
        scored.append(A)
    graphs = scored
    n_graphs = len(graphs)
    if not graphs:
        graphs = [A_point]
        undirected = [undirected_point]
        counts = {t: point_settled[t].astype(float) for t in cand}
    # each edge's share of the graphs, counted one graph at a time (their stack as float64 was
    # 9/8 of the bootstrap's weights again): integer counts over the number of graphs, which is
    # what the mean of their 0/1 floats was, bit for bit
    hits = np.zeros((d, d), dtype=np.intp)
    for A in graphs:
        hits += A
    freq = hits / len(graphs)
    rows = []
    for t in cand:
        prob = counts[t] / len(graphs)
        if criterion != "entropy":
            score = float(prob.sum())
        else:
            adj = freq[t] + freq[:, t]
            direction = np.divide(freq[t], adj, out=np.full(d, 0.5), where=adj > 0)
            # an edge an experiment already run has cut (one end in its target set) is oriented by
            # those data: however the refits waver on it, a new experiment settles nothing there
            open_ = adj * ~M[t]
            score = float(np.sum(np.where(open_ > 0, open_ * _binary_entropy(direction), 0.0)))
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
