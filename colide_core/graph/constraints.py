"""Prior knowledge for CoLiDE: forbidden edges, required edges and tiers, and their audit.

Conventions: data ``X`` has shape ``(n_samples, n_nodes)``; an adjacency ``W`` has shape
``(n_nodes, n_nodes)`` and ``W[i, j] != 0`` means the edge i -> j. Every mask below uses the
same orientation: ``mask[i, j]`` is about the edge i -> j.

Three kinds of constraints are supported (the "background knowledge" of constraint-based
tools such as Tetrad's knowledge tiers):

* **forbidden** edges i -> j: CoLiDE holds their weight at exactly zero during optimisation
  (``colide_solve(edge_mask=...)``);
* **required** edges i -> j: exempt from the L1 penalty (``colide_solve(l1_mask=...)``), counted
  as present in the solver's acyclicity function (``colide_solve(required_mask=...)``: ``h_ldet``
  of ``W o W + tau R``, so the solve closes no cycle through them) and never removed by
  :func:`colide_core.threshold_to_dag` (``required=...``);
* **tiers**: an ordered list of groups of nodes (temporal or biological layers). No edge may
  point from a later tier to an earlier one; edges within a tier and edges towards later tiers
  are allowed. Nodes in no tier are unconstrained. Tiers are turned into forbidden edges.

:func:`resolve_constraints` turns any mix of these into two boolean masks and rejects
inconsistent knowledge *before* the solver runs. :func:`audit_constraints` checks a fitted
graph against the knowledge. :class:`PriorKnowledge` is a JSON-serialisable record of it.
"""
from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd

__all__ = [
    "PRIOR_KEYS",
    "PriorKnowledge",
    "audit_constraints",
    "removed_sentence",
    "resolve_constraints",
    "tier_forbidden_mask",
    "order_precedence",
]

from colide_core.settings import PRIOR_KEYS  # noqa: E402 - declared with the run settings
from colide_core._validation import node_index

#: Identifies the JSON documents written by :meth:`PriorKnowledge.to_json`.
JSON_FORMAT = "colide-prior-knowledge"
JSON_VERSION = 1


# --------------------------------------------------------------------------------------
# Node and edge parsing
# --------------------------------------------------------------------------------------
def _node_label(k, names):
    return names[k] if names is not None else str(k)


def _edge_mask_from(spec, d, names, what):
    """Boolean (d, d) mask from a boolean mask or an iterable of (source, target) pairs."""
    mask = np.zeros((d, d), dtype=bool)
    if spec is None:
        return mask
    if isinstance(spec, pd.DataFrame):
        if spec.shape == (d, d) and all(pd.api.types.is_bool_dtype(t) for t in spec.dtypes):
            if names is not None and [str(c) for c in spec.columns] != names:
                raise ValueError(f"{what}: the mask's columns must be the node names in order.")
            return spec.to_numpy(dtype=bool).copy()
        if {"source", "target"} <= set(spec.columns):
            spec = list(zip(spec["source"].tolist(), spec["target"].tolist()))
        else:
            raise ValueError(
                f"{what}: a DataFrame must be a boolean (n_nodes, n_nodes) mask or have 'source' and "
                "'target' columns."
            )
    if isinstance(spec, np.ndarray) and spec.dtype == bool:
        if spec.shape != (d, d):
            raise ValueError(f"{what}: a boolean mask must have shape {(d, d)}, got {spec.shape}.")
        return spec.copy()
    if isinstance(spec, (str, bytes)):
        raise ValueError(f"{what}: expected a boolean mask or a list of (source, target) pairs, got a string.")
    try:
        pairs = list(spec)
    except TypeError:
        raise ValueError(f"{what}: expected a boolean mask or a list of (source, target) pairs.") from None
    for pair in pairs:
        if isinstance(pair, np.ndarray):
            pair = pair.tolist()
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise ValueError(f"{what}: {pair!r} is not a (source, target) pair.")
        i = node_index(pair[0], names, d, what=what)
        j = node_index(pair[1], names, d, what=what)
        if i == j:
            raise ValueError(f"{what}: {_node_label(i, names)} -> {_node_label(i, names)} is a self-loop.")
        mask[i, j] = True
    return mask


def _tier_of(tiers, d, names):
    """Array of shape (d,) with each node's tier number, -1 for nodes in no tier."""
    tier = np.full(d, -1, dtype=int)
    if tiers is None:
        return tier
    if isinstance(tiers, (str, bytes)) or not hasattr(tiers, "__iter__"):
        raise ValueError("tiers: expected a list of lists of nodes (names or indices).")
    for t, group in enumerate(tiers):
        if isinstance(group, (str, bytes, numbers.Integral)) or not hasattr(group, "__iter__"):
            raise ValueError(f"tiers: tier {t} must be a list of nodes, got {group!r}.")
        for node in group:
            k = node_index(node, names, d, what=f"tiers (tier {t})")
            if tier[k] >= 0:
                raise ValueError(
                    f"tiers: node {_node_label(k, names)} is in tier {tier[k]} and again in tier {t}."
                )
            tier[k] = t
    return tier


def order_precedence(d, required_mask=None, tiers=None, names=None):
    """Which node must come before which in every topological order the order search tries.

    A required edge i -> j puts i before j; tiers put every node of an earlier tier before every
    node of a later one. Used by :class:`colide_core.CoLiDE` and
    :func:`colide_core.solver.path.lambda_path` for ``solver="topo"`` and ``"auto"`` alike.

    Parameters
    ----------
    d : int
        The number of nodes.
    required_mask : ndarray of bool of shape (d, d), optional
    tiers : list of list of node names or indices, optional
    names : sequence of str, optional

    Returns
    -------
    ndarray of bool of shape (d, d)
        ``precedence[i, j]``: node i must come before node j.

    Examples
    --------
    >>> order_precedence(3, tiers=[[0], [1, 2]]).astype(int)
    array([[0, 1, 1],
           [0, 0, 0],
           [0, 0, 0]])
    """
    precedence = np.zeros((d, d), dtype=bool)
    if required_mask is not None:
        precedence |= np.asarray(required_mask, dtype=bool)
    if tiers is not None:
        precedence |= tier_forbidden_mask(tiers, d, names).T  # earlier tier first
    return precedence


def tier_forbidden_mask(tiers, d, names=None):
    """Edges forbidden by an ordering of the nodes into tiers.

    Parameters
    ----------
    tiers : list of list of (str or int), or None
        Ordered tiers; each node (name or index) may appear in at most one tier.
    d : int
        Number of nodes.
    names : list of str, optional
        Node names, needed when tiers use names.

    Returns
    -------
    mask : ndarray of bool of shape (d, d)
        ``mask[i, j]`` is True when i is in a later tier than j (the edge i -> j would point
        back in time); edges within a tier, towards later tiers, or touching a node in no
        tier are allowed.

    Raises
    ------
    ValueError
        For an unknown node name, an index out of range, or a node listed twice.
    """
    tier = _tier_of(tiers, d, None if names is None else [str(n) for n in names])
    both = (tier[:, None] >= 0) & (tier[None, :] >= 0)
    return both & (tier[:, None] > tier[None, :])


def resolve_constraints(d, names=None, *, forbidden=None, required=None, tiers=None):
    """Turn prior knowledge into the masks the CoLiDE solver enforces, rejecting contradictions.

    Parameters
    ----------
    d : int
        Number of nodes (>= 2).
    names : sequence of str, optional
        Node names (the columns of ``X``); required when constraints use names.
    forbidden, required : optional
        Either a boolean mask of shape ``(d, d)`` (a numpy array of dtype bool, or a boolean
        DataFrame whose columns are the node names), True at ``[i, j]`` meaning the edge
        i -> j; or an iterable of ``(source, target)`` pairs of node names or integer indices
        (a DataFrame with ``source`` and ``target`` columns also works). Integer arrays are
        read as pairs, never as masks, so a (2, 2) integer array is two pairs.
    tiers : list of list of (str or int), optional
        Ordered layers: no edge may point from a later tier to an earlier one.

    Returns
    -------
    edge_mask : ndarray of bool of shape (d, d)
        False where an edge is forbidden (explicitly, by the tiers, or as the reverse j -> i
        of a required edge i -> j) and on the diagonal;
        pass it to ``colide_solve(edge_mask=...)``, which holds those weights at zero.
    required_mask : ndarray of bool of shape (d, d)
        True where an edge is required; pass ``(~required_mask).astype(float)`` as the
        solver's ``l1_mask``, ``required_mask`` as its ``required_mask`` and to
        ``threshold_to_dag(required=...)``.

    Raises
    ------
    ValueError
        Before any solving, with a message naming the nodes, when: a node name is unknown or
        an index is out of range; a pair is malformed or a self-loop is required; a mask has
        the wrong shape; a node is in two tiers; an edge is both required and forbidden; a
        required edge points from a later tier to an earlier one; or the required edges form
        a directed cycle (no DAG could contain them all).

    Notes
    -----
    Enforcement follows the issue "Trust the edges": forbidden edges are masked in the
    gradient (so they stay exactly zero); required edges are not L1-penalised and survive
    the post-processing. Cycle detection uses :func:`networkx.find_cycle`.
    """
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 2:
        raise ValueError(f"d must be an integer >= 2, got {d!r}.")
    d = int(d)
    if names is not None:
        names = [str(n) for n in names]
        if len(names) != d:
            raise ValueError(f"names has {len(names)} entries for {d} nodes.")
        if len(set(names)) != d:
            raise ValueError("node names must be unique to be used in constraints.")
    forb = _edge_mask_from(forbidden, d, names, "forbidden")
    req = _edge_mask_from(required, d, names, "required")
    np.fill_diagonal(forb, False)
    if np.any(np.diag(req)):
        k = int(np.flatnonzero(np.diag(req))[0])
        raise ValueError(f"required: {_node_label(k, names)} -> {_node_label(k, names)} is a self-loop.")
    tier = _tier_of(tiers, d, names)
    tier_forb = (tier[:, None] >= 0) & (tier[None, :] >= 0) & (tier[:, None] > tier[None, :])

    both = req & forb
    if np.any(both):
        bad = ", ".join(f"{_node_label(i, names)} -> {_node_label(j, names)}" for i, j in zip(*np.nonzero(both)))
        raise ValueError(f"These edges are both required and forbidden: {bad}.")
    against = req & tier_forb
    if np.any(against):
        bad = "; ".join(
            f"{_node_label(i, names)} (tier {tier[i]}) -> {_node_label(j, names)} (tier {tier[j]})"
            for i, j in zip(*np.nonzero(against))
        )
        raise ValueError(f"Required edges point from a later tier to an earlier one: {bad}.")
    G = nx.DiGraph()
    G.add_nodes_from(range(d))
    G.add_edges_from(zip(*(x.tolist() for x in np.nonzero(req))))
    try:
        cycle = nx.find_cycle(G)
    except nx.NetworkXNoCycle:
        cycle = None
    if cycle is not None:
        path = " -> ".join([_node_label(u, names) for u, _ in cycle] + [_node_label(cycle[0][0], names)])
        raise ValueError(f"The required edges form a directed cycle ({path}); no DAG can contain them all.")

    # A required edge i -> j forbids j -> i in the solve: the reverse would otherwise grow in the
    # raw W (both directions fit the same correlation) and only be cut afterwards, for acyclicity.
    edge_mask = ~(forb | tier_forb | req.T)
    np.fill_diagonal(edge_mask, False)
    return edge_mask, req


# --------------------------------------------------------------------------------------
# Audit
# --------------------------------------------------------------------------------------
def audit_constraints(W, edge_mask=None, required_mask=None, tiers=None, names=None, removed=None):
    """Check a learned graph against prior knowledge, one row per constraint.

    Parameters
    ----------
    W : array-like of shape (n_nodes, n_nodes)
        The graph to audit, usually the post-processed ``CoLiDE.adjacency_``; nonzero = edge,
        ``W[i, j] != 0`` meaning i -> j.
    edge_mask : ndarray of bool of shape (n_nodes, n_nodes), optional
        From :func:`resolve_constraints` (``CoLiDE.edge_mask_``): False = forbidden. Edges
        forbidden only because of ``tiers`` are reported in the tier rows, not one by one.
    required_mask : ndarray of bool of shape (n_nodes, n_nodes), optional
        True = required (``CoLiDE.required_mask_``).
    tiers : list of list of (str or int), optional
        The tiers the fit used.
    names : sequence of str, optional
        Node names for the table (and for tiers given by name).
    removed : sequence of (int, int, float), optional
        The edges the post-processing removed to break cycles
        (``threshold_to_dag(..., return_removed=True)``, ``CoLiDE.removed_for_acyclicity_``):
        listed in the acyclicity row.

    Returns
    -------
    pandas.DataFrame
        Columns ``constraint`` ("forbidden", "required", "tier", "acyclic"), ``source``,
        ``target`` (node names, or "" for rows about the whole graph), ``weight`` (the
        edge's weight in ``W``, NaN for whole-graph rows), ``holds`` (bool) and ``detail``
        (a sentence). Rows: every explicitly forbidden edge, every required edge, one row per
        tier after the first ("no edge from tier t into tiers 0..t-1", with the offending
        edges listed when it fails), and a final row saying whether ``W`` is a DAG and which
        edges above the threshold were removed to make it one. The reverse of a required edge,
        forbidden by it, is not listed as a forbidden row of its own.

    Raises
    ------
    ValueError
        If ``W`` is not square and finite or the masks have a different shape.

    Notes
    -----
    Acyclicity is checked with :func:`networkx.is_directed_acyclic_graph`.
    """
    A = np.asarray(W, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or not np.all(np.isfinite(A)):
        raise ValueError(f"W must be a finite square (n_nodes, n_nodes) matrix, got shape {A.shape}.")
    d = A.shape[0]
    names = None if names is None else [str(n) for n in names]
    if names is not None and len(names) != d:
        raise ValueError(f"names has {len(names)} entries for {d} nodes.")
    label = [(_node_label(k, names)) for k in range(d)]
    masks = {}
    for key, m in (("edge_mask", edge_mask), ("required_mask", required_mask)):
        if m is not None:
            m = np.asarray(m, dtype=bool)
            if m.shape != (d, d):
                raise ValueError(f"{key} must have shape {(d, d)}, got {m.shape}.")
        masks[key] = m
    tier = _tier_of(tiers, d, names)
    tier_forb = (tier[:, None] >= 0) & (tier[None, :] >= 0) & (tier[:, None] > tier[None, :])
    present = A != 0
    rows = []
    if masks["edge_mask"] is not None:
        explicit = ~masks["edge_mask"] & ~tier_forb
        if masks["required_mask"] is not None:
            explicit &= ~masks["required_mask"].T  # forbidden as the reverse of a required edge
        np.fill_diagonal(explicit, False)
        for i, j in zip(*np.nonzero(explicit)):
            ok = not present[i, j]
            rows.append(("forbidden", label[i], label[j], float(A[i, j]), ok,
                         "absent, as required" if ok else f"present with weight {A[i, j]:+.4g}"))
    if masks["required_mask"] is not None:
        for i, j in zip(*np.nonzero(masks["required_mask"])):
            ok = bool(present[i, j])
            rows.append(("required", label[i], label[j], float(A[i, j]), ok,
                         f"present with weight {A[i, j]:+.4g}" if ok else "missing"))
    n_tiers = int(tier.max()) + 1 if np.any(tier >= 0) else 0
    for t in range(1, n_tiers):
        bad = [(i, j) for i, j in zip(*np.nonzero(present & tier_forb)) if tier[i] == t]
        members = ", ".join(label[k] for k in np.flatnonzero(tier == t))
        if bad:
            detail = "violated by " + ", ".join(f"{label[i]} -> {label[j]}" for i, j in bad)
        else:
            detail = f"no edge from tier {t} ({members}) into an earlier tier"
        rows.append(("tier", f"tier {t}", f"tiers 0..{t - 1}", np.nan, not bad, detail))
    G = nx.from_numpy_array(present.astype(np.int8), create_using=nx.DiGraph)
    acyclic = nx.is_directed_acyclic_graph(G)
    if acyclic:
        detail = "the graph is a DAG"
        if removed:
            detail += "; " + removed_sentence(removed, names)
    else:
        cyc = nx.find_cycle(G)
        detail = "directed cycle " + " -> ".join([label[u] for u, _ in cyc] + [label[cyc[0][0]]])
    rows.append(("acyclic", "", "", np.nan, bool(acyclic), detail))
    frame = pd.DataFrame(rows, columns=["constraint", "source", "target", "weight", "holds", "detail"])
    frame["holds"] = frame["holds"].astype(bool)
    return frame


def removed_sentence(removed, names=None) -> str:
    """One sentence naming the edges removed to break cycles.

    Parameters
    ----------
    removed : sequence of (int, int, float)
        Edges ``(i, j, weight)`` as :func:`colide_core.threshold_to_dag` returns them with
        ``return_removed=True``.
    names : sequence of str, optional
        Node names (else the indices are used).

    Returns
    -------
    str
        For example ``"2 edges above the threshold were removed to break cycles: B -> A (0.61),
        C -> A (-0.4)"``; ``""`` when nothing was removed. Plain text, not escaped.
    """
    if not removed:
        return ""
    names = None if names is None else [str(n) for n in names]
    listed = ", ".join(f"{_node_label(i, names)} -> {_node_label(j, names)} ({w:+.3g})" for i, j, w in removed)
    n = len(removed)
    return (f"{n} edge{'s' if n != 1 else ''} above the threshold {'were' if n != 1 else 'was'} "
            f"removed to break cycles: {listed}")


# --------------------------------------------------------------------------------------
# A serialisable record
# --------------------------------------------------------------------------------------
def _pairs_tuple(spec, what):
    if spec is None:
        return ()
    if isinstance(spec, np.ndarray) and spec.dtype == bool:
        return tuple((int(i), int(j)) for i, j in zip(*np.nonzero(spec)))
    if isinstance(spec, (str, bytes)):
        raise ValueError(f"{what}: expected a list of (source, target) pairs.")
    out = []
    try:
        items = list(spec)
    except TypeError:
        raise ValueError(f"{what}: expected a list of (source, target) pairs.") from None
    for pair in items:
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise ValueError(f"{what}: {pair!r} is not a (source, target) pair.")
        out.append(tuple(_plain_node(x, what) for x in pair))
    # One copy of each pair, first seen first: 600,000 copies of one pair made every live fit
    # hash them all for its cache key (issue 30).
    return tuple(dict.fromkeys(out))


def _blank(x):
    """Whether a table cell is empty (None, NaN or "")."""
    return x is None or (isinstance(x, float) and math.isnan(x)) or str(x) == ""


def _plain_node(x, what):
    if isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{what}: {x!r} is not a node (use a node name or an integer index).")
    if isinstance(x, numbers.Integral):
        return int(x)
    if isinstance(x, str):
        return x
    raise ValueError(f"{what}: {x!r} is not a node (use a node name or an integer index).")


@dataclass(frozen=True)
class PriorKnowledge:
    """Forbidden edges, required edges and tiers, as hashable tuples (JSON round-trippable).

    Attributes
    ----------
    forbidden, required : tuple of (source, target)
        Edges source -> target, each node a name (str) or an index (int).
    tiers : tuple of tuple of (str or int)
        Ordered tiers; no edge may point from a later tier to an earlier one.

    Notes
    -----
    ``CoLiDE(**pk.as_kwargs())`` enforces the knowledge; :meth:`resolve` checks it against a
    dataset's nodes without fitting. Build one with :meth:`create`, which validates types.
    """

    forbidden: tuple = ()
    required: tuple = ()
    tiers: tuple = ()

    @classmethod
    def create(cls, forbidden=None, required=None, tiers=None):
        """Build a record from lists (or boolean masks, stored as index pairs).

        Parameters
        ----------
        forbidden, required : boolean (d, d) ndarray or iterable of (source, target), optional
        tiers : iterable of iterables of (str or int), optional

        Returns
        -------
        PriorKnowledge

        Raises
        ------
        ValueError
            If an entry is not a pair, or a node is neither a str nor an int.
        """
        tiers_t = ()
        if tiers is not None:
            if isinstance(tiers, (str, bytes)) or not hasattr(tiers, "__iter__"):
                raise ValueError("tiers: expected a list of lists of nodes.")
            groups = []
            for t, group in enumerate(tiers):
                if isinstance(group, (str, bytes)) or not hasattr(group, "__iter__"):
                    raise ValueError(f"tiers: tier {t} must be a list of nodes, got {group!r}.")
                groups.append(tuple(_plain_node(x, f"tiers (tier {t})") for x in group))
            tiers_t = tuple(g for g in groups if g)
        return cls(_pairs_tuple(forbidden, "forbidden"), _pairs_tuple(required, "required"), tiers_t)

    @property
    def is_empty(self) -> bool:
        """True when there is no constraint at all."""
        return not (self.forbidden or self.required or self.tiers)

    def summary(self) -> str:
        """A short count of the knowledge, e.g. ``"1 required, 2 forbidden, 3 tiers"``.

        Returns
        -------
        str
            ``""`` for an empty record.

        Examples
        --------
        >>> PriorKnowledge.create(required=[("a", "b")], forbidden=[("b", "c"), ("c", "a")]).summary()
        '1 required, 2 forbidden'
        """
        parts = [f"{len(self.required)} required" if self.required else "",
                 f"{len(self.forbidden)} forbidden" if self.forbidden else "",
                 (f"{len(self.tiers)} tier{'s' if len(self.tiers) != 1 else ''}") if self.tiers else ""]
        return ", ".join(p for p in parts if p)

    def as_kwargs(self) -> dict:
        """Keyword arguments for :class:`colide_core.CoLiDE` (only the non-empty ones).

        Returns
        -------
        dict
            Subset of ``{"forbidden": ..., "required": ..., "tiers": ...}`` with tuple values.
        """
        out = {}
        if self.forbidden:
            out["forbidden"] = self.forbidden
        if self.required:
            out["required"] = self.required
        if self.tiers:
            out["tiers"] = self.tiers
        return out

    def resolve(self, d, names=None):
        """:func:`resolve_constraints` for this record; returns ``(edge_mask, required_mask)``.

        Parameters
        ----------
        d : int
            Number of nodes (>= 2).
        names : sequence of str, optional
            Node names, needed when the record uses names.

        Returns
        -------
        edge_mask, required_mask : ndarray of bool of shape (d, d)
            As :func:`resolve_constraints` returns them (``mask[i, j]`` is about i -> j).

        Raises
        ------
        ValueError
            As :func:`resolve_constraints`: unknown nodes, contradictions, required cycles.
        """
        return resolve_constraints(d, names, forbidden=self.forbidden or None,
                                   required=self.required or None, tiers=self.tiers or None)

    @classmethod
    def from_params(cls, params):
        """The prior knowledge recorded in a fit's :class:`colide_core.CoLiDE` parameters.

        Parameters
        ----------
        params : dict or iterable of (str, object)
            ``CoLiDE`` keyword arguments (e.g. ``estimator.get_params()`` or the dashboard's
            sorted parameter tuple); only ``forbidden``, ``required`` and ``tiers`` are read.

        Returns
        -------
        PriorKnowledge
            Empty (:attr:`is_empty`) when the parameters carry no knowledge.

        Raises
        ------
        ValueError
            If an entry is malformed (see :meth:`create`).
        """
        p = dict(params)
        return cls.create(**{k: p.get(k) for k in PRIOR_KEYS})

    def required_mask(self, d, names=None):
        """The required-edge mask for ``threshold_to_dag(W, threshold, required=...)``.

        Re-thresholding a constrained fit without it would drop required edges whose weight
        is at or below the threshold.

        Parameters
        ----------
        d : int
            Number of nodes.
        names : sequence of str, optional
            Node names, needed when the record uses names.

        Returns
        -------
        ndarray of bool of shape (d, d) or None
            None for an empty record (no knowledge); else ``mask[i, j]`` is True when the
            edge i -> j is required.

        Raises
        ------
        ValueError
            If the knowledge does not fit these nodes (see :meth:`resolve`).
        """
        if self.is_empty:
            return None
        return self.resolve(d, names)[1]

    def to_tables(self, names):
        """Editable tables (e.g. for ``st.data_editor``) of this record.

        Parameters
        ----------
        names : sequence of str
            Node names of the dataset; integer nodes in the record are mapped to them.

        Returns
        -------
        dict of str to pandas.DataFrame
            ``"forbidden"`` and ``"required"``: str columns ``source``, ``target`` (one row
            per edge source -> target); ``"tiers"``: one row per node, columns ``node`` (str)
            and ``tier`` (nullable integer, empty = in no tier).
        """
        names = [str(n) for n in names]

        def label(x):
            return names[x] if isinstance(x, int) and 0 <= x < len(names) else str(x)

        out = {}
        for kind in ("forbidden", "required"):
            pairs = getattr(self, kind)
            out[kind] = pd.DataFrame({"source": [label(s) for s, _ in pairs],
                                      "target": [label(t) for _, t in pairs]}, dtype="object")
        tier = {n: pd.NA for n in names}
        for t, group in enumerate(self.tiers):
            for node in group:
                tier[label(node)] = t
        out["tiers"] = pd.DataFrame({"node": list(tier), "tier": pd.array(list(tier.values()), dtype="Int64")})
        return out

    @classmethod
    def from_tables(cls, forbidden, required, tiers):
        """A record from edited tables (the inverse of :meth:`to_tables`).

        Rows with an empty source or target are ignored; tiers are renumbered in increasing
        order (tiers 0, 2, 5 become 0, 1, 2) and nodes with an empty tier are in no tier.

        Parameters
        ----------
        forbidden, required : pandas.DataFrame or None
            Columns ``source`` and ``target`` (node names).
        tiers : pandas.DataFrame or None
            Columns ``node`` and ``tier`` (a whole number >= 0, or empty).

        Returns
        -------
        PriorKnowledge
            With node names (str); not yet checked against a dataset (see :meth:`resolve`).

        Raises
        ------
        ValueError
            If a tier is not a whole number >= 0.
        """
        def pairs(frame):
            out = []
            if frame is None or not len(frame):
                return out
            for s, t in zip(frame["source"].tolist(), frame["target"].tolist()):
                if _blank(s) or _blank(t):
                    continue
                out.append((str(s), str(t)))
            return out

        groups = {}
        if tiers is not None and len(tiers):
            for node, t in zip(tiers["node"].tolist(), tiers["tier"].tolist()):
                if t is None or t is pd.NA or (isinstance(t, float) and math.isnan(t)):
                    continue
                if float(t) != int(t) or int(t) < 0:
                    raise ValueError(f"The tier of {node} must be a whole number >= 0, got {t}.")
                groups.setdefault(int(t), []).append(str(node))
        ordered = [groups[k] for k in sorted(groups)]
        return cls.create(forbidden=pairs(forbidden), required=pairs(required), tiers=ordered)

    def to_json(self, names=None) -> str:
        """Serialise to a JSON document.

        Parameters
        ----------
        names : sequence of str, optional
            Node names to record alongside (informational; loading does not need them).

        Returns
        -------
        str
            ``{"format": "colide-prior-knowledge", "version": 1, "nodes": [...] or null,
            "forbidden": [[s, t], ...], "required": [[s, t], ...], "tiers": [[...], ...]}``.
        """
        doc = {
            "format": JSON_FORMAT,
            "version": JSON_VERSION,
            "nodes": None if names is None else [str(n) for n in names],
            "forbidden": [list(p) for p in self.forbidden],
            "required": [list(p) for p in self.required],
            "tiers": [list(t) for t in self.tiers],
        }
        return json.dumps(doc, indent=2, ensure_ascii=False)

    @classmethod
    def from_json(cls, text):
        """Parse a document written by :meth:`to_json` (plain JSON: never unpickles).

        Parameters
        ----------
        text : str or bytes
            The JSON document (UTF-8 when bytes), read by :func:`colide_core._json.read_json`: at
            most :data:`colide_core._json.JSON_MAX_BYTES` (10 MB) and nested at most
            :data:`colide_core._json.JSON_MAX_DEPTH` (64) deep, both checked before parsing.

        Returns
        -------
        PriorKnowledge

        Raises
        ------
        ValueError
            If the text is too large, too deeply nested, not UTF-8, not JSON, not an object of
            this format, or an entry is malformed. No other exception escapes for any content of
            ``text``.
        """
        from colide_core._json import read_json
        from colide_core.exceptions import DataValidationError

        try:
            doc = read_json(text, what="constraints file")
        except DataValidationError as exc:
            raise ValueError(str(exc)) from None
        try:
            return cls._from_document(doc)
        except ValueError:
            raise
        except (TypeError, KeyError, IndexError, OverflowError, RecursionError) as exc:
            raise ValueError(f"The constraints file is malformed ({type(exc).__name__}: "
                             f"{' '.join(str(exc).split())[:300]}).") from None

    @classmethod
    def _from_document(cls, doc):
        """:meth:`from_json` on a parsed document."""
        if not isinstance(doc, dict):
            raise ValueError("The constraints file must hold a JSON object.")
        if doc.get("format", JSON_FORMAT) != JSON_FORMAT:
            raise ValueError(f"Not a constraints file (format {doc.get('format')!r}, expected {JSON_FORMAT!r}).")
        if doc.get("version", JSON_VERSION) != JSON_VERSION:
            raise ValueError(f"Unsupported constraints file version {doc.get('version')!r}.")
        unknown = set(doc) - {"format", "version", "nodes", "forbidden", "required", "tiers"}
        if unknown:
            raise ValueError(f"Unknown keys in the constraints file: {', '.join(sorted(map(str, unknown)))}.")
        for key in ("forbidden", "required", "tiers"):
            if not isinstance(doc.get(key, []), list):
                raise ValueError(f"'{key}' must be a list in the constraints file.")
        return cls.create(doc.get("forbidden") or None, doc.get("required") or None, doc.get("tiers") or None)
