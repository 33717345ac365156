"""Several conditions and known intervention targets: labels, checks and per-condition statistics.

Data often come from several conditions (treatments, donors, batches), some of which intervene
on known nodes (an inhibitor on its target protein). CoLiDE then fits (``docs/conditions.md``):

* an intercept per condition: each condition's rows are centred on their own mean, so a
  condition-wide mean shift is not read as an edge;
* the masked likelihood of GIES and DCDI: node j's own equation is fitted only on the rows
  ``O_j`` of the conditions that do not target j, while intervened rows still serve as
  regressors for the other nodes.

Both need only per-condition counts ``n_c``, means ``m_c`` and 1/n covariances ``S_c``
(:class:`ConditionStats`), so the cost of a solver step does not grow with the rows. Node j's
equation sees ``C_j = sum_{c: j not in T_c} n_c S_c / |O_j|`` with weight ``|O_j| / n``; nodes
masked in the same conditions share one ``C_j`` (:meth:`ConditionStats.node_covariances`).

Conventions: ``X`` is ``(n_samples, n_nodes)``; labels are kept as text (an integer label 3 is
``"3"``), in the order they first appear.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import pandas as pd

from colide_core import defaults
from colide_core._validation import centred_covariance, check_data, check_X, node_index
from colide_core.exceptions import ConditionsError, InvalidParameterError, StatisticsStopped, UnknownNodeError

__all__ = ["ConditionStats", "centre_by_condition", "check_conditions", "check_targets", "condition_design",
           "oriented_by_targets", "read_targets"]


from colide_core.data._labels import (_label_key, _label_text, _shorten,  # noqa: F401 - the checks live there
                                      check_conditions, check_targets)


def condition_design(conditions=None, targets=None, n_samples=None, node_names=None, n_nodes=None, *, design=None):
    """Code the rows' conditions and mark, per node, the rows where it is not a target.

    Parameters
    ----------
    conditions : array-like of shape (n_samples,) or None
        One label per row (:func:`check_conditions`); None: one condition.
    targets : mapping or None
        ``{label: nodes}`` (:func:`check_targets`).
    design : colide_core.data.design.Design, optional
        The design in one object, instead of ``conditions`` and ``targets``
        (:func:`colide_core.data.design.resolve_design`).
    n_samples : int
        Rows of the data.
    node_names : sequence of str, optional
        Column names, to resolve targets given by name.
    n_nodes : int, optional
        Number of nodes; default ``len(node_names)``.

    Returns
    -------
    codes : ndarray of int64 of shape (n_samples,)
        Row i's condition index (all 0 without conditions).
    unmasked : ndarray of bool of shape (n_samples, n_nodes)
        ``unmasked[i, j]`` is False where row i's condition intervenes on node j: that row does
        not follow node j's observational equation.

    Raises
    ------
    ConditionsError
        (a ``ValueError``) For bad labels or targets, as the two checks above.
    InvalidParameterError
        For ``targets`` without ``conditions``, or ``design`` with either.

    Examples
    --------
    Four rows in two conditions; condition ``"kd"`` intervenes on node ``"b"``:

    >>> codes, unmasked = condition_design(["obs", "obs", "kd", "kd"], {"kd": ["b"]}, 4,
    ...                                    node_names=["a", "b"])
    >>> codes.tolist()
    [0, 0, 1, 1]
    >>> unmasked.tolist()
    [[True, True], [True, True], [True, False], [True, False]]
    """
    from colide_core.data.design import resolve_design

    d = int(n_nodes if n_nodes is not None else len(node_names))
    if design is None and conditions is None:
        if targets:
            raise InvalidParameterError("targets need conditions (one label per row).")
        return np.zeros(n_samples, dtype=np.int64), np.ones((n_samples, d), dtype=bool)
    design = resolve_design(design, conditions, targets, node_names=node_names, n_samples=n_samples, n_nodes=d)
    if design is None:  # a design without conditions
        return np.zeros(n_samples, dtype=np.int64), np.ones((n_samples, d), dtype=bool)
    return np.array(design.codes), ~design.masks()


def centre_by_condition(X, conditions=None, *, design=None):
    """Subtract each condition's own column means (per-condition centring).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_nodes)
        Finite data. Not modified.
    conditions : array-like of shape (n_samples,) or None
        One label per row; None centres on the pooled means.
    design : colide_core.data.design.Design, optional
        The rows' conditions in one object, instead of ``conditions`` (its targets are not used).

    Returns
    -------
    ndarray of shape (n_samples, n_nodes)
        ``X`` minus, on each row, the mean of its condition's rows: every condition has column
        means 0. A shift of a condition's means (an intervention on the level of a node, or a
        batch effect) is removed, as CoLiDE with conditions removes it with one intercept per
        condition.

    Raises
    ------
    ValueError
        For invalid data or labels.

    Examples
    --------
    Condition ``"x"`` has column means ``(2, 10)``, condition ``"y"`` ``(11, 20)``:

    >>> centre_by_condition([[1.0, 10.0], [3.0, 10.0], [10.0, 20.0], [12.0, 20.0]],
    ...                     ["x", "x", "y", "y"]).tolist()
    [[-1.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [1.0, 0.0]]
    """
    values, _ = check_X(X, min_samples=1)
    codes, _ = condition_design(conditions, None, values.shape[0], n_nodes=values.shape[1], design=design)
    k = int(codes.max()) + 1
    sums = np.zeros((k, values.shape[1]))
    np.add.at(sums, codes, values)
    means = sums / np.bincount(codes, minlength=k)[:, None]
    return values - means[codes]


def oriented_by_targets(targets, node_names=None, *, n_nodes=None):
    """Which edges the interventions orient: j -> k (or k -> j) when some condition targets j or k.

    Parameters
    ----------
    targets : mapping or None
        ``{label: nodes}``, nodes by name (with ``node_names``) or by index, as
        :func:`check_targets` takes them (the labels themselves are not read).
    node_names : sequence of str, optional
        The nodes' names, in column order.
    n_nodes : int, optional
        Number of nodes; default ``len(node_names)``.

    Returns
    -------
    ndarray of bool of shape (n_nodes, n_nodes) or None
        ``M[j, k]`` True when a condition targets node j or node k; None when no condition has a
        target.

    Raises
    ------
    ConditionsError
        ``"targets_malformed"`` for targets that are not a mapping, ``"target_unknown_node"`` for
        a node that is not one of the nodes.

    Notes
    -----
    An intervention on j changes j's distribution and, through the edge, k's when j -> k, but
    not j's when k -> j: the two directions are told apart (the interventional Markov
    equivalence class of Hauser and Bühlmann, 2012, orients every edge at a target). The rule
    is the one the Learn page's drawing and the HTML report mark as "intervention".
    """
    if n_nodes is None:
        if node_names is None:
            raise ValueError("oriented_by_targets needs node_names or n_nodes.")
        n_nodes = len(node_names)
    if not targets:
        return None
    if not hasattr(targets, "items"):
        raise ConditionsError("targets must be a mapping {condition label: [node, ...]}, not a "
                              f"{type(targets).__name__}.", "targets_malformed")
    hit = np.zeros(int(n_nodes), dtype=bool)
    for nodes in targets.values():
        if nodes is None:
            continue
        if isinstance(nodes, (str, Integral, np.integer)):
            nodes = [nodes]
        for node in list(nodes):
            try:
                j = node_index(node, node_names, n_nodes)
            except UnknownNodeError:
                raise ConditionsError(f"A condition targets {_shorten(node)!r}, which is not a node of the data.",
                                      "target_unknown_node", columns=(_shorten(node),)) from None
            hit[j] = True
    if not hit.any():
        return None
    return hit[:, None] | hit[None, :]


#: Numbers (float64) of the per-condition covariances handled at once when the statistics are
#: checked or summed: a few temporaries of ``_BLOCK_CELLS * 8`` bytes (2 MB), whatever K.
_BLOCK_CELLS = 1 << 18
#: Seconds between two calls of the callback while the statistics are built.
_HEAR_EVERY = 0.05


class _Listener:
    """Calls ``callback()`` at most every ``_HEAR_EVERY`` seconds; raises StatisticsStopped on True."""

    __slots__ = ("callback", "last")

    def __init__(self, callback):
        if callback is not None and not callable(callback):
            raise InvalidParameterError(f"callback must be callable or None, got {type(callback).__name__}.")
        self.callback = callback
        self.last = time.perf_counter()

    def __call__(self):
        if self.callback is None:
            return
        now = time.perf_counter()
        if now - self.last < _HEAR_EVERY:
            return
        self.last = now
        if self.callback():
            raise StatisticsStopped("Stopped while the statistics of the conditions were built.")


def _blocks(K, d):
    """Slices of at most ``_BLOCK_CELLS / d**2`` (at least 1) conditions covering ``range(K)``."""
    step = max(1, _BLOCK_CELLS // max(d * d, 1))
    return [slice(a, min(a + step, K)) for a in range(0, K, step)]


class _Owned:
    """Arrays :meth:`ConditionStats.from_data` built itself: the constructor keeps them without a copy."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array


def _own_float_array(value):
    """``value`` as a private float64 array: the array itself when it is ``_Owned``, else a copy."""
    if isinstance(value, _Owned):
        return value.array
    return np.array(value, dtype=float)


@dataclass(frozen=True, eq=False)
class ConditionStats:
    """Per-condition sufficient statistics: all that CoLiDE with conditions needs of the data.

    Build it from rows with :meth:`from_data`, or directly from statistics computed elsewhere
    (e.g. per condition with :func:`colide_core.data.stats.sufficient_stats`). The constructor
    checks everything and keeps private read-only copies.

    Parameters
    ----------
    labels : sequence of str
        The conditions' labels, distinct (``K`` of them).
    n : sequence of int
        Rows per condition, each ``>= defaults.MIN_CONDITION_ROWS``.
    means : array-like of shape (K, n_nodes)
        Each condition's column means.
    covs : array-like of shape (K, n_nodes, n_nodes)
        Each condition's 1/n covariance, centred on its own mean (symmetric, finite).
    targets : mapping, optional
        ``{label: nodes}`` as :func:`check_targets` takes it; stored resolved, ``{label: tuple
        of int}`` for every label.
    node_names : sequence of str, optional
        The nodes' names (needed to give targets by name).

    Attributes
    ----------
    labels : tuple of str
    n : tuple of int
    means : ndarray of shape (K, n_nodes)
    covs : ndarray of shape (K, n_nodes, n_nodes)
    targets : dict
        ``{label: tuple of int}`` for every label.
    node_names : tuple of str or None

    Raises
    ------
    ConditionsError
        For labels, counts or targets that cannot be used (see :func:`check_conditions`,
        :func:`check_targets`).
    ValueError
        If the shapes do not agree, or a number is not finite, or a covariance is not symmetric.
    """

    labels: tuple
    n: tuple
    means: np.ndarray
    covs: np.ndarray
    targets: dict = None
    node_names: tuple = None

    def __post_init__(self):
        labels = tuple(self.labels)
        if not labels or not all(isinstance(x, str) for x in labels) or len(set(labels)) != len(labels):
            raise ConditionsError("labels must be distinct texts, at least one.", "condition_bad_label")
        if len(labels) > defaults.MAX_CONDITIONS:
            raise ConditionsError(f"{len(labels)} conditions, more than {defaults.MAX_CONDITIONS}.",
                                  "too_many_conditions")
        K = len(labels)
        n = tuple(int(x) for x in self.n)
        if len(n) != K or any(isinstance(x, bool) for x in self.n):
            raise ValueError(f"n must hold {K} integer counts, one per condition.")
        for lab, c in zip(labels, n):
            if c < defaults.MIN_CONDITION_ROWS:
                raise ConditionsError(f"Condition {_shorten(lab)!r} has {c} row(s); each condition needs at least "
                                      f"{defaults.MIN_CONDITION_ROWS}.", "condition_too_few_rows")
        built = isinstance(self.covs, _Owned)  # by from_data: each an Xc.T @ Xc / n, symmetric
        means = _own_float_array(self.means)
        covs = _own_float_array(self.covs)
        if means.ndim != 2 or means.shape[0] != K or means.shape[1] < 2:
            raise ValueError(f"means must have shape ({K}, n_nodes) with n_nodes >= 2, got {means.shape}.")
        d = means.shape[1]
        if covs.shape != (K, d, d):
            raise ValueError(f"covs must have shape {(K, d, d)}, got {covs.shape}.")
        # Checked by blocks of conditions: no temporary of the stack's size (K = 1,000 at d = 200
        # is 320 MB; issue 42).
        blocks = _blocks(K, d)
        if not (np.all(np.isfinite(means)) and all(np.all(np.isfinite(covs[b])) for b in blocks)):
            raise FloatingPointError("The per-condition statistics are not finite (the data overflow): rescale them.")
        scale = 0.0 if built else max(float(np.abs(covs[b]).max(initial=0.0)) for b in blocks)
        if not built and not all(np.allclose(covs[b], covs[b].transpose(0, 2, 1), rtol=1e-10, atol=1e-14 * scale)
                                 for b in blocks):
            raise ValueError("Each condition's covariance must be symmetric.")
        names = None if self.node_names is None else tuple(str(x) for x in self.node_names)
        if names is not None and len(names) != d:
            raise ValueError(f"node_names must have {d} names, one per node.")
        targets = check_targets(self.targets, labels, names, n_nodes=d, counts=n)
        for attr, value in (("labels", labels), ("n", n), ("targets", targets), ("node_names", names)):
            object.__setattr__(self, attr, value)
        for attr, value in (("means", means), ("covs", covs)):
            value.setflags(write=False)
            object.__setattr__(self, attr, value)

    # ---- construction ---------------------------------------------------------------------
    @classmethod
    def from_data(cls, X, conditions=None, targets=None, node_names=None, *, callback=None, design=None):
        """The statistics of rows ``X`` labelled by ``conditions``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_nodes)
            Numeric, finite observations (checked as for :meth:`colide_core.CoLiDE.fit`). Not
            modified.
        conditions : array-like or pandas.Series of shape (n_samples,)
            One label per row (:func:`check_conditions`).
        targets : mapping, optional
            ``{label: nodes}`` (:func:`check_targets`).
        node_names : sequence of str, optional
            The nodes' names; default the DataFrame's columns.
        callback : callable, optional
            ``callback() -> bool``, called every 50 ms or so while the conditions' statistics
            are computed; True stops (a fit passes its own callback, so Stop is heard here too).
        design : colide_core.data.design.Design, optional
            The conditions and targets in one object, validated once
            (:func:`colide_core.data.design.resolve_design`); instead of ``conditions`` and
            ``targets``. One of the two forms is needed.

        Returns
        -------
        ConditionStats

        Raises
        ------
        StatisticsStopped
            When ``callback`` returned True.
        ValueError
            As :func:`colide_core._validation.check_data` for ``X``.
        ConditionsError
            As :func:`check_conditions` and :func:`check_targets`, and ``"too_many_conditions"``
            when ``K * n_nodes**2`` exceeds ``defaults.MAX_CELLS``; ``"condition_length"`` without
            conditions.
        InvalidParameterError
            For ``design`` together with ``conditions`` or ``targets``.
        FloatingPointError
            If a covariance overflows.
        """
        from colide_core.data.design import resolve_design

        listen = _Listener(callback)
        values, names = check_data(X)
        if node_names is not None:
            names = [str(x) for x in node_names]
        design = resolve_design(design, conditions, targets, node_names=names, n_samples=values.shape[0],
                                n_nodes=values.shape[1])
        if design is None:
            raise ConditionsError("ConditionStats.from_data needs the rows' conditions (conditions= or design=).",
                                  "condition_length")
        labels, codes = design.labels, design.codes
        K, d = len(labels), values.shape[1]
        if K * d * d > defaults.MAX_CELLS:
            raise ConditionsError(f"{K} conditions of {d} nodes need {K * d * d} numbers of statistics, more than "
                                  f"{defaults.MAX_CELLS}.", "too_many_conditions")
        means = np.empty((K, d))
        covs = np.empty((K, d, d))
        if K == 1:
            # The same arithmetic as a fit without conditions (data_covariance), bit for bit.
            means[0], covs[0] = centred_covariance(values)
        else:
            order = np.argsort(codes, kind="stable")
            bounds = np.searchsorted(codes[order], np.arange(K + 1))
            for c in range(K):
                listen()
                means[c], covs[c] = centred_covariance(values[order[bounds[c]:bounds[c + 1]]])
        counts = np.bincount(codes, minlength=K)
        listen()
        return cls(labels, tuple(int(x) for x in counts), _Owned(means), _Owned(covs), design.targets, names)

    # ---- derived --------------------------------------------------------------------------
    @property
    def n_samples(self):
        """Total rows ``n``."""
        return int(sum(self.n))

    @property
    def n_nodes(self):
        """Number of nodes ``d``."""
        return self.means.shape[1]

    def target_mask(self):
        """``mask[c, j]`` True when condition ``c`` targets node ``j``; shape (K, n_nodes), bool."""
        mask = np.zeros((len(self.labels), self.n_nodes), dtype=bool)
        for c, lab in enumerate(self.labels):
            mask[c, list(self.targets[lab])] = True
        return mask

    def _weighted_sum(self, idx, listen):
        """``sum_{c in idx} n_c S_c``, (d, d), by blocks of conditions (no stack-sized temporary)."""
        n = np.asarray(self.n, dtype=float)
        d = self.n_nodes
        out = np.zeros((d, d))
        for b in _blocks(idx.size, d):
            listen()
            part = idx[b]
            out += np.tensordot(n[part], self.covs[part], axes=1)
        return out

    def _total(self, listen):
        """``sum_c n_c S_c`` over every condition: one matrix-vector product on the stack seen as
        ``(K, d * d)`` (a view, no copy)."""
        listen()
        return np.tensordot(np.asarray(self.n, dtype=float), self.covs, axes=1)

    def _covariance_of(self, keep, intercept, total=None, listen=None):
        """The covariance of the rows of the conditions ``keep`` (bool (K,)) and their count.

        The scatter ``sum_{c in keep} n_c S_c`` is summed over whichever side is shorter: the
        kept conditions, or ``total`` (all of them) less the dropped ones when those are fewer and
        hold fewer rows. A group masked in a few of 1,000 conditions then costs a few d x d
        additions, not a copy of the stack (issue 42); the result agrees to rounding.
        """
        listen = listen or _Listener(None)
        idx = np.flatnonzero(keep)
        n = np.asarray(self.n, dtype=float)
        N = float(n[idx].sum())
        if idx.size == 1:  # exactly the condition's own covariance (no rounding)
            return np.array(self.covs[idx[0]]), int(N)
        drop = np.flatnonzero(~np.asarray(keep, dtype=bool))
        if drop.size == 0:
            C = self._total(listen) if total is None else total.copy()
        elif drop.size <= idx.size and float(n[drop].sum()) <= N:
            C = (self._total(listen) if total is None else total) - self._weighted_sum(drop, listen)
        else:
            C = self._weighted_sum(idx, listen)
        if intercept == "pooled":
            m = n[idx] @ self.means[idx] / N
            dm = self.means[idx] - m
            C = C + (dm * n[idx][:, None]).T @ dm
        return C / N, int(N)

    def pooled_covariance(self, intercept=defaults.INTERCEPT, *, callback=None):
        """The 1/n covariance of all rows: centred per condition (``"condition"``) or on the grand mean.

        Parameters
        ----------
        intercept : {"condition", "pooled"}, default="condition"
        callback : callable, optional
            As in :meth:`node_covariances`.

        Returns
        -------
        ndarray of shape (n_nodes, n_nodes)
        """
        _check_intercept(intercept)
        return self._covariance_of(np.ones(len(self.labels), dtype=bool), intercept,
                                   listen=_Listener(callback))[0]

    def node_covariances(self, intercept=defaults.INTERCEPT, *, callback=None):
        """The per-node covariance form the solvers take (``NodeCovariance``).

        Node j's equation sees ``C_j = sum_{c: j not in T_c} n_c S_c / |O_j|`` (an intercept per
        condition) or the covariance of the rows ``O_j`` around their common mean (``"pooled"``,
        one intercept per node), with weight ``|O_j| / n``. Nodes masked in the same conditions
        share one group, so the result holds ``G * n_nodes**2`` numbers with ``G`` the number of
        distinct target patterns (one when nothing is targeted).

        Cost: ``sum_c n_c S_c`` is summed once, and each group's covariance is that total less
        the conditions that mask it (or the sum of the ones that keep it, when those are fewer):
        ``O((K + m) d^2)`` time for ``m`` masked (condition, group) pairs, and no temporary of the
        ``(K, d, d)`` stack's size (measured in ``docs/security.md``).

        Parameters
        ----------
        intercept : {"condition", "pooled"}, default="condition"
        callback : callable, optional
            ``callback() -> bool``, called every 50 ms or so; True stops.

        Returns
        -------
        colide_core.solver._objective.NodeCovariance
            With one condition and no target: one group of weight 1 whose covariance is the
            condition's own, which the solvers treat exactly as a plain covariance.

        Raises
        ------
        StatisticsStopped
            When ``callback`` returned True.
        """
        from colide_core.solver._objective import NodeCovariance

        _check_intercept(intercept)
        listen = _Listener(callback)
        mask = self.target_mask()  # (K, d)
        patterns, group = np.unique(mask.T, axis=0, return_inverse=True)
        group = np.asarray(group).reshape(-1)
        n_total = float(self.n_samples)
        d = self.n_nodes
        total = None if len(self.labels) == 1 else self._total(listen)
        covs = np.empty((patterns.shape[0], d, d))
        weight = np.empty(patterns.shape[0])
        for g, p in enumerate(patterns):
            listen()
            covs[g], N = self._covariance_of(~p, intercept, total, listen)
            weight[g] = 1.0 if N == self.n_samples else N / n_total
        pooled = self._covariance_of(np.ones(len(self.labels), dtype=bool), intercept, total, listen)[0]
        return NodeCovariance(covs, group.astype(np.int64), weight, pooled=pooled)

    def summary(self):
        """One row per condition: label, rows, targets (names when known).

        Returns
        -------
        pandas.DataFrame
            Columns ``condition``, ``n``, ``targets`` (a ``", "``-joined text).
        """
        def name(j):
            return self.node_names[j] if self.node_names is not None else str(j)
        return pd.DataFrame({
            "condition": list(self.labels),
            "n": list(self.n),
            "targets": [", ".join(name(j) for j in self.targets[lab]) for lab in self.labels],
        })


def _check_intercept(intercept):
    if intercept not in defaults.INTERCEPTS:
        raise ValueError(f"intercept must be one of {defaults.INTERCEPTS}, got {intercept!r}.")


def read_targets(data, name="targets.json"):
    """Read a targets file: JSON ``{label: [node, ...]}`` or a CSV of ``condition,target`` rows.

    Parameters
    ----------
    data : bytes or str
        The file's content, at most ``defaults.MAX_TARGETS_FILE_BYTES`` bytes.
    name : str, default="targets.json"
        The file's name: ``.json`` is read as JSON (:func:`colide_core._json.read_json`, size
        and nesting bounded), anything else as CSV with a header holding ``condition`` and
        ``target`` (or ``targets``) columns, one node per row (several in one cell separated by
        ``;``; an empty cell is a condition without target).

    Returns
    -------
    dict
        ``{label: [node name, ...]}`` (text), to be checked against the data by
        :func:`check_targets`.

    Raises
    ------
    ConditionsError
        ``kind="targets_malformed"``: too large, not UTF-8, not the JSON object or the CSV
        columns described, or a label or node that is not text or a number.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ConditionsError(f"targets must be read from bytes, not a {type(data).__name__}.", "targets_malformed")
    raw = bytes(data)
    if len(raw) > defaults.MAX_TARGETS_FILE_BYTES:
        raise ConditionsError(f"The targets file is larger than {defaults.MAX_TARGETS_FILE_BYTES:,} bytes.",
                              "targets_malformed")
    out = {}
    if str(name).lower().endswith(".json"):
        from colide_core._json import read_json

        try:
            doc = read_json(raw, what="targets file", max_bytes=defaults.MAX_TARGETS_FILE_BYTES, max_depth=3)
        except ValueError as exc:
            raise ConditionsError(f"The targets file is not readable JSON: {exc}", "targets_malformed") from None
        if not isinstance(doc, dict):
            raise ConditionsError("The targets file must hold a JSON object {condition: [node, ...]}.",
                                  "targets_malformed")
        for key, nodes in doc.items():
            if isinstance(nodes, (str, int)) and not isinstance(nodes, bool):
                nodes = [nodes]
            if nodes is None:
                nodes = []
            if not isinstance(nodes, list) or not all(isinstance(x, (str, int)) and not isinstance(x, bool)
                                                      for x in nodes):
                raise ConditionsError(f"The targets of {_shorten(key)!r} must be a list of node names.",
                                      "targets_malformed")
            out[str(key)] = [str(x) for x in nodes]
        return out
    import io

    try:
        text = raw.decode("utf-8-sig")
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, skipinitialspace=True)
    except (UnicodeDecodeError, ValueError, pd.errors.ParserError) as exc:
        raise ConditionsError(f"The targets file is not readable CSV: {type(exc).__name__}.",
                              "targets_malformed") from None
    cols = {str(c).strip().lower(): c for c in frame.columns}
    tcol = cols.get("target", cols.get("targets"))
    if "condition" not in cols or tcol is None:
        raise ConditionsError("The targets CSV needs a header with 'condition' and 'target' columns.",
                              "targets_malformed")
    seen = {}  # label -> dict of its nodes (ordered, O(1) membership: issue 42, the list was quadratic)
    for lab, cell in zip(frame[cols["condition"]], frame[tcol]):
        nodes = seen.setdefault(str(lab).strip(), {})
        for x in str(cell).split(";"):
            if x.strip():
                nodes.setdefault(x.strip(), None)
    for lab, nodes in seen.items():
        out[lab] = list(nodes)
    return out
