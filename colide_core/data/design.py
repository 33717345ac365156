"""The experimental design as one object: rows' conditions, targets, node names (issue 47).

Before this module the design travelled as loose arguments (``conditions``, ``targets``, node
names) through 32 functions, each validating and looking nodes up in its own way (four
``_node_index`` functions with three signatures and two exception types). Here:

* :func:`node_index` is the one node lookup (a name or an index, one exception type,
  :class:`~colide_core.exceptions.UnknownNodeError`, which is a ``ValueError``);
* :class:`Design` holds the rows' conditions, each condition's targets, the node names and the
  reference condition, validated once (:func:`colide_core.data.conditions.check_conditions` and
  :func:`~colide_core.data.conditions.check_targets`), with the masks, the reference rows, a
  within-condition resampler that keeps names, and the record a manifest stores.

Convention: ``X`` has shape ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means i -> j.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from colide_core._validation import node_index  # the one node lookup, re-exported here

__all__ = ["node_index", "Design", "resolve_design"]


@dataclass(frozen=True)
class Design:
    """Which rows come from which condition, and which nodes each condition targets.

    Build it with :meth:`create` (it validates); the fields are then normalised.

    Attributes
    ----------
    node_names : tuple of str
        One per node (``X``'s columns), in column order.
    labels : tuple of str
        The distinct conditions, in the order :func:`~colide_core.data.conditions.check_conditions`
        gives them (first the first row's). Empty without conditions.
    codes : ndarray of int of shape (n_samples,) or None
        Each row's condition as an index into ``labels``; None without conditions.
    targets : dict of str -> tuple of int
        Each condition's targets as node indices (every label present; ``()`` for none).
    reference : str or None
        The reference (observational) condition: the first label without targets, else the first
        label; None without conditions.
    """

    node_names: tuple
    labels: tuple = ()
    codes: object = None
    targets: dict = field(default_factory=dict)
    reference: object = None

    @classmethod
    def create(cls, node_names, conditions=None, targets=None, *, n_samples=None, n_nodes=None):
        """Validate a design once.

        Parameters
        ----------
        node_names : sequence of str or None
            The nodes, in ``X``'s column order; None for an array's nodes (then ``n_nodes`` is
            needed, the nodes are named ``"0"``, ``"1"``, ... and ``targets`` must give indices).
        conditions : array-like of shape (n_samples,), optional
            Each row's condition label (text or integers).
        targets : mapping, optional
            ``{label: [node, ...]}``, nodes by name or index (needs ``conditions``).
        n_samples : int, optional
            The rows ``conditions`` must label (default: its length).
        n_nodes : int, optional
            The number of nodes when ``node_names`` is None.

        Returns
        -------
        Design

        Raises
        ------
        ConditionsError
            (a ``ValueError``) From :func:`~colide_core.data.conditions.check_conditions` and
            :func:`~colide_core.data.conditions.check_targets`, or for targets without conditions.
        """
        from colide_core.data._labels import check_conditions, check_targets
        from colide_core.exceptions import ConditionsError

        if node_names is None:
            if n_nodes is None:
                raise ValueError("Design.create needs node_names or n_nodes.")
            names, lookup = tuple(str(j) for j in range(int(n_nodes))), None
        else:
            names = tuple(str(n) for n in node_names)
            lookup = list(names)
        if conditions is None:
            if targets:
                raise ConditionsError("targets need conditions: give the condition of each row.",
                                      "target_unknown_condition")
            return cls(node_names=names)
        n = len(conditions) if n_samples is None else int(n_samples)
        labels, codes = check_conditions(conditions, n)
        resolved = check_targets(targets, labels, lookup, n_nodes=len(names),
                                 counts=np.bincount(codes, minlength=len(labels)))
        tmap = {str(lab): tuple(int(j) for j in resolved.get(lab, ())) for lab in labels}
        reference = next((lab for lab in tmap if not tmap[lab]), str(labels[0]))
        codes = np.asarray(codes, dtype=np.int64)
        codes.setflags(write=False)
        return cls(node_names=names, labels=tuple(str(x) for x in labels), codes=codes, targets=tmap,
                   reference=reference)

    # -- what the design says ---------------------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        """int: the number of nodes."""
        return len(self.node_names)

    @property
    def has_conditions(self) -> bool:
        """bool: whether the rows carry conditions."""
        return self.codes is not None

    def node(self, node, what=None) -> int:
        """:func:`node_index` among this design's nodes."""
        return node_index(node, self.node_names, self.n_nodes, what=what)

    def row_labels(self):
        """ndarray of str of shape (n_samples,): each row's condition (None without conditions)."""
        return None if self.codes is None else np.asarray(self.labels, dtype=object)[self.codes]

    def targets_by_name(self) -> dict:
        """``{label: [node name, ...]}`` of the conditions with targets (what ``CoLiDE.fit`` takes)."""
        return {lab: [self.node_names[j] for j in t] for lab, t in self.targets.items() if t}

    def masks(self):
        """ndarray of bool of shape (n_samples, n_nodes): ``True`` where a row's condition targets the
        node (its own equation is masked there; ``docs/conditions.md``); None without conditions."""
        if self.codes is None:
            return None
        per = np.zeros((len(self.labels), self.n_nodes), dtype=bool)
        for k, lab in enumerate(self.labels):
            per[k, list(self.targets.get(lab, ()))] = True
        return per[self.codes]

    def reference_rows(self):
        """ndarray of int: the rows of the reference condition (every row without conditions is None)."""
        if self.codes is None:
            return None
        return np.flatnonzero(self.codes == self.labels.index(self.reference))

    def resample(self, random_state=None):
        """Row indices of one bootstrap sample drawn within each condition (names and labels kept by
        indexing ``X`` and :meth:`row_labels` with them).

        Parameters
        ----------
        random_state : None, int or numpy Generator

        Returns
        -------
        ndarray of int of shape (n_samples,)
            Each condition's rows resampled with replacement, as many as it has, in row order of
            the conditions; every row once per draw on average.

        Raises
        ------
        ValueError
            Without conditions (resample all rows as one condition instead, as
            ``colide_core.evaluation.stability`` does).
        """
        rng = np.random.default_rng(random_state)
        if self.codes is None:
            raise ValueError("resample needs the rows' conditions (or use np.random.choice on all rows).")
        out = np.empty(len(self.codes), dtype=np.int64)
        at = 0
        for k in range(len(self.labels)):
            rows = np.flatnonzero(self.codes == k)
            out[at:at + len(rows)] = rng.choice(rows, size=len(rows), replace=True)
            at += len(rows)
        return out

    def record(self, column=None) -> dict or None:
        """What a run manifest stores of the design: the condition column, the labels with their row
        counts, the targets by name and the reference; None without conditions."""
        if self.codes is None:
            return None
        counts = np.bincount(self.codes, minlength=len(self.labels))
        return {"column": None if column is None else str(column), "labels": list(self.labels),
                "counts": [int(c) for c in counts], "targets": self.targets_by_name(),
                "reference": self.reference}


def resolve_design(design=None, conditions=None, targets=None, *, node_names=None, n_samples=None, n_nodes=None):
    """The one entry of a design into a function: a :class:`Design` given, or one built from loose arguments.

    Every public function that takes ``conditions`` and ``targets`` also takes ``design=`` and
    calls this once; what it passes down is the :class:`Design` (validated once), never the
    loose arguments again. Nothing is cached.

    Parameters
    ----------
    design : Design, optional
        A design built before (:meth:`Design.create`); then ``conditions`` and ``targets`` must
        be None, and it must fit the data: ``n_samples`` rows and the same nodes.
    conditions : array-like of shape (n_samples,), optional
        Each row's condition label (:func:`colide_core.data.conditions.check_conditions`).
    targets : mapping, optional
        ``{label: [node, ...]}`` (:func:`colide_core.data.conditions.check_targets`), needs
        ``conditions``.
    node_names : sequence of str, optional
        The data's node (column) names; None for an array's nodes.
    n_samples : int, optional
        The data's rows (``X.shape[0]``); default the length of ``conditions``.
    n_nodes : int, optional
        The data's nodes (``X.shape[1]``); default ``len(node_names)``.

    Returns
    -------
    Design or None
        None when the rows carry no conditions (no design, or a design without conditions that
        fits the data).

    Raises
    ------
    InvalidParameterError
        (a ``ValueError``) If ``design`` is given together with ``conditions`` or ``targets``, or
        is not a :class:`Design`.
    ValueError
        If ``design`` does not fit the data: another number of rows or nodes, or other node names.
    ConditionsError
        (a ``ValueError``) From :meth:`Design.create` for loose ``conditions`` and ``targets``.

    Examples
    --------
    >>> d = resolve_design(conditions=["obs", "obs", "kd", "kd"], targets={"kd": ["b"]},
    ...                    node_names=["a", "b"], n_samples=4)
    >>> d.labels, d.targets, d.reference
    (('obs', 'kd'), {'obs': (), 'kd': (1,)}, 'obs')
    >>> resolve_design(d, node_names=["a", "b"], n_samples=4) is d
    True
    >>> resolve_design(d, ["obs"] * 4, node_names=["a", "b"], n_samples=4)
    Traceback (most recent call last):
    ...
    sklearn.utils._param_validation.InvalidParameterError: give the design either as design= or as conditions=/targets=, not both.
    """
    from colide_core.exceptions import InvalidParameterError

    if n_nodes is None and node_names is not None:
        n_nodes = len(node_names)
    if design is None:
        if conditions is None and not targets:
            return None
        if node_names is None and n_nodes is None:
            raise ValueError("resolve_design needs node_names or n_nodes to build a design.")
        return Design.create(node_names, conditions, targets, n_samples=n_samples, n_nodes=n_nodes)
    if conditions is not None or targets is not None:
        raise InvalidParameterError("give the design either as design= or as conditions=/targets=, not both.")
    if not isinstance(design, Design):
        raise InvalidParameterError(f"design must be a colide_core.data.design.Design (Design.create), "
                                    f"not a {type(design).__name__}.")
    if n_nodes is not None and design.n_nodes != int(n_nodes):
        raise ValueError(f"the design has {design.n_nodes} nodes but the data have {int(n_nodes)}.")
    if node_names is not None and tuple(str(x) for x in node_names) != design.node_names:
        raise ValueError("the design's node names differ from the data's columns "
                         f"({', '.join(design.node_names[:8])} against {', '.join(str(x) for x in node_names)[:200]}).")
    if not design.has_conditions:
        return None
    if n_samples is not None and len(design.codes) != int(n_samples):
        raise ValueError(f"the design labels {len(design.codes)} rows but the data have {int(n_samples)}.")
    return design
