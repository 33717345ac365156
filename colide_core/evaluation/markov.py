"""The local Markov check of a learned DAG, against random DAGs with as many edges.

Conventions: data ``X`` has shape ``(n_samples, n_nodes)`` (the paper writes X as d x n); a graph
``A`` has shape ``(n_nodes, n_nodes)`` and ``A[i, j] != 0`` means the edge i -> j.

A DAG implies that each node is independent of its non-descendants given its parents
(:func:`implied_independences`); :func:`markov_check` tests these statements with causal-learn's
Fisher-z test and compares the share rejected with the same share for random DAGs. causal-learn
is optional (the ``baselines`` extra): without it :func:`markov_check` raises
:class:`~colide_core.exceptions.MissingExtraError`.

Work is bounded before it is spent: at most ``max_tests`` tests per graph (a random subset beyond
that, drawn with ``random_state``) and at most :data:`MAX_RANDOM_GRAPHS` random graphs; a
``callback(done, total)`` is called after every random graph and every 200 tests, and returning
True stops the check, which returns what it finished (``stopped=True``).

Part of the model checks of :mod:`colide_core.evaluation.checks`, which re-exports these names
and runs them all (:func:`colide_core.evaluation.checks.run_checks`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd

from colide_core.exceptions import MissingExtraError, import_optional  # noqa: F401
from colide_core.data.conditions import centre_by_condition
from colide_core.data.simulate import simulate_dag
from colide_core.evaluation._check_inputs import _check_alpha, _check_callback, _check_count, _data_and_graph

__all__ = ["MAX_RANDOM_GRAPHS", "MAX_TESTS", "MarkovCheck", "markov_check", "implied_independences"]

#: Most random graphs of one Markov check.
MAX_RANDOM_GRAPHS = 1000
#: Default (and largest allowed) number of conditional-independence tests per graph.
MAX_TESTS = 5000


def implied_independences(A):
    """The local Markov statements of a DAG: each node against each non-descendant given its parents.

    Parameters
    ----------
    A : array-like of shape (n_nodes, n_nodes)
        A DAG, ``A[i, j] != 0`` meaning i -> j.

    Returns
    -------
    list of (int, int, tuple of int)
        ``(i, j, parents_of_i)`` for every node i and every non-descendant j of i that is not a
        parent of i: the graph implies ``X_i`` independent of ``X_j`` given ``X_Pa(i)``.

    Raises
    ------
    ValueError
        If ``A`` is not a square DAG.
    """
    B = np.asarray(A) != 0
    if B.ndim != 2 or B.shape[0] != B.shape[1]:
        raise ValueError(f"A must be square, got shape {B.shape}.")
    G = nx.from_numpy_array(B.astype(np.int8), create_using=nx.DiGraph)
    if not nx.is_directed_acyclic_graph(G):
        raise ValueError("A must be a DAG.")
    d = B.shape[0]
    out = []
    for i in range(d):
        pa = tuple(int(p) for p in np.flatnonzero(B[:, i]))
        excluded = nx.descendants(G, i) | set(pa) | {i}
        out += [(i, j, pa) for j in range(d) if j not in excluded]
    return out


@dataclass(frozen=True, eq=False)
class MarkovCheck:
    """Local Markov check of a DAG on data, against random DAGs with as many edges.

    Attributes
    ----------
    tests : pandas.DataFrame
        One row per test of the learned graph: ``node``, ``other``, ``given`` (names joined by
        ", "), ``p_value``, ``rejected`` (p < alpha).
    n_tests : int
        Tests run on the learned graph (at most ``max_tests``).
    n_implied : int
        Statements the learned graph implies (tests are a random subset when larger than
        ``max_tests``).
    share_rejected : float in [0, 1] or nan
        Share of the learned graph's tests rejected at ``alpha`` (nan when it implies none).
    random_shares : ndarray of shape (n_random,)
        The same share for each random DAG (nan for a random DAG implying no statement).
    share_random_as_good : float in [0, 1] or nan
        Share of the random DAGs whose share of rejections is at most the learned graph's (an
        empirical p-value: small means the learned graph explains the data better than chance).
    alpha : float
    verdict, summary : str
    stopped : bool
        True when the callback stopped the check: ``random_shares`` holds only the random DAGs
        tested before (and ``tests`` only the learned graph's tests run before, if it stopped
        there).
    """

    tests: pd.DataFrame
    n_tests: int
    n_implied: int
    share_rejected: float
    random_shares: np.ndarray
    share_random_as_good: float
    alpha: float
    verdict: str
    summary: str
    stopped: bool = False


#: Conditional-independence tests between two calls of a Markov check's callback.
_TESTS_PER_REPORT = 200


def _run_tests(cit, statements, max_tests, rng, should_stop=None):
    """Fisher-z p-values of ``statements`` (a random subset of ``max_tests`` when more).

    ``should_stop(k)`` is asked every :data:`_TESTS_PER_REPORT` tests with the count done; when
    it says True the tests done so far are returned, with True as third value.
    """
    if len(statements) > max_tests:
        keep = np.sort(rng.choice(len(statements), size=max_tests, replace=False))
        statements = [statements[k] for k in keep]
    p = np.empty(len(statements))
    for k, (i, j, pa) in enumerate(statements):
        if should_stop is not None and k and k % _TESTS_PER_REPORT == 0 and should_stop(k):
            return statements[:k], p[:k], True
        try:
            p[k] = float(cit(i, j, list(pa)))
        except ValueError:  # singular correlation submatrix
            p[k] = math.nan
    return statements, p, False


def markov_check(X, A, *, n_random=100, alpha=0.05, max_tests=MAX_TESTS, random_state=None,
                 conditions=None, callback=None, design=None) -> MarkovCheck:
    """Test the conditional independences the learned DAG implies, against random DAGs.

    For every node i and every non-descendant j that is not a parent, the DAG implies
    ``X_i independent of X_j given X_Pa(i)`` (local Markov property). Each statement is tested
    with the Fisher-z partial-correlation test; the share rejected at ``alpha`` is compared with
    the same share for ``n_random`` random DAGs with the same number of edges (the ER graphs of
    :func:`colide_core.data.simulate.simulate_dag`: uniform over edge sets and node orders).

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_nodes)
        At least 5 rows.
    A : array-like of shape (n_nodes, n_nodes)
        The learned DAG, ``A[i, j] != 0`` meaning i -> j.
    n_random : int in [0, MAX_RANDOM_GRAPHS], default=100
    alpha : float in (0, 1), default=0.05
    max_tests : int in [1, MAX_TESTS], default=MAX_TESTS
        Most tests per graph; beyond it a random subset of the statements is tested.
    random_state : int, numpy Generator or None
        Seeds the random DAGs and the subsets.
    conditions : array-like of shape (n_samples,), optional
        The rows' condition labels: the tests then run on the data centred per condition
        (:func:`colide_core.data.conditions.centre_by_condition`), so a shift of a condition's
        means does not make two nodes look dependent. The tests do not drop targeted rows.
    callback : callable, optional
        ``callback(done, n_random + 1)`` after the learned graph's tests and after each random
        DAG (``done`` counts the graphs tested; fractional within a graph, every 200 tests);
        returning True stops the check, which keeps what it tested (``stopped`` True).
    design : colide_core.data.design.Design, optional
        The rows' conditions in one object (validated once), instead of ``conditions``; its
        targets are not used (:func:`colide_core.data.design.resolve_design`).

    Returns
    -------
    MarkovCheck

    Raises
    ------
    ValueError
        For invalid data or a graph that is not a DAG; with ``n_random > 0``, for more than
        ``defaults.MAX_NODES`` nodes or more than ``defaults.MAX_DEGREE * n_nodes`` edges (the
        bounds of :func:`~colide_core.data.simulate.simulate_dag`); InvalidParameterError for bad
        counts or a ``callback`` that is not callable.
    MissingExtraError
        (an ``ImportError``) If causal-learn is not installed (``pip install
        'colide-dashboard[baselines]'``).

    Notes
    -----
    Tests: :func:`causallearn.utils.cit.CIT` with ``"fisherz"`` (one object per dataset, so the
    random graphs reuse its p-value cache). The comparison with random graphs follows DoWhy's
    ``falsify_graph`` (Eulig et al., 2023): a share of rejections is only meaningful next to
    what a graph unrelated to the data gets. Multiple testing is not corrected: the share of
    rejections of a correct graph is about ``alpha``. Gaussian (linear) partial correlations
    only see linear dependence.
    """
    CIT = import_optional("causallearn.utils.cit", "The Markov check").CIT

    alpha = _check_alpha(alpha)
    n_random = _check_count(n_random, "n_random", 0, MAX_RANDOM_GRAPHS)
    max_tests = _check_count(max_tests, "max_tests", 1, MAX_TESTS)
    _check_callback(callback)
    values, names, B = _data_and_graph(X, A)
    n, d = values.shape
    if n < 5:
        raise ValueError(f"the Fisher-z test needs at least 5 samples, got {n}.")
    rng = np.random.default_rng(random_state)
    if conditions is not None or design is not None:
        from colide_core.data.design import resolve_design

        design = resolve_design(design, conditions, n_samples=n, n_nodes=d)  # the rows only: no targets here
        if design is not None:
            values = centre_by_condition(values, design=design)
    cit = CIT(values, "fisherz")
    implied = implied_independences(B)
    total = n_random + 1

    def within(graph):  # should_stop of _run_tests for the graph-th graph (0: the learned one)
        if callback is None:
            return None
        return lambda k: bool(callback(graph + min(k / max_tests, 0.99), total))

    statements, p, stopped = _run_tests(cit, implied, max_tests, rng, within(0))
    rejected = p < alpha
    share = float(np.mean(rejected)) if len(statements) else math.nan
    n_edges = int(B.sum())
    shares = np.full(n_random, math.nan)
    if stopped or (callback is not None and n_random and callback(1.0, total)):
        stopped, n_random = True, 0
    for r in range(n_random):
        # a DAG with exactly n_edges edges, uniform over edge sets and node orders: simulate_dag's ER
        random_graph = simulate_dag(d, n_edges / d, "er", random_state=rng) != 0
        _, pr, cut = _run_tests(cit, implied_independences(random_graph), max_tests, rng, within(r + 1))
        if cut:
            stopped, n_random = True, r
            break
        if pr.size:
            shares[r] = float(np.mean(pr < alpha))
        if callback is not None and r + 1 < n_random and callback(float(r + 2), total):
            stopped, n_random = True, r + 1
            break
    shares = shares[:n_random]
    valid = shares[~np.isnan(shares)]
    as_good = float(np.mean(valid <= share)) if (valid.size and not math.isnan(share)) else math.nan
    tests = pd.DataFrame({
        "node": [names[i] for i, _, _ in statements],
        "other": [names[j] for _, j, _ in statements],
        "given": [", ".join(names[k] for k in pa) for _, _, pa in statements],
        "p_value": p, "rejected": rejected,
    })
    if math.isnan(share):
        verdict = "nothing to test"
        summary = ("The graph implies no conditional independence (every pair is joined by a directed "
                   "path or an edge), so the Markov check has nothing to test.")
    else:
        base = (f"The learned graph implies {len(implied)} conditional independences"
                + (f" ({len(statements)} tested, a random subset)" if len(statements) < len(implied) else "")
                + f"; the data reject {share:.0%} of them (Fisher-z, level {alpha:g}; about "
                f"{alpha:.0%} are rejected by chance when the graph is right).")
        if valid.size:
            base += (f" Random DAGs with the same {n_edges} edges get {np.median(valid):.0%} rejected "
                     f"(median of {valid.size}); {as_good:.0%} of them do at least as well as the "
                     "learned graph.")
            if as_good <= 0.05:
                verdict = "better than random graphs"
                base += " The learned graph explains the data's independences better than chance."
            else:
                verdict = "not better than random graphs"
                base += (" The learned graph does not explain the data's independences clearly better "
                         "than a random graph with as many edges.")
        else:
            verdict = "no random comparison"
        if share > 2 * alpha and share > 0.1:
            base += (" Many implied independences are rejected: edges are probably missing or "
                     "misdirected.")
        summary = base
    if stopped:
        summary += (f" (Stopped early: {len(statements)} of the learned graph's tests and {shares.size} random "
                    "DAGs were run.)")
    return MarkovCheck(tests, len(statements), len(implied), share, shares, as_good, alpha, verdict, summary,
                       stopped)
