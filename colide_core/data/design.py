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

__all__ = ["node_index", "Design"]


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
    def create(cls, node_names, conditions=None, targets=None, *, n_samples=None):
        """Validate a design once.

        Parameters
        ----------
        node_names : sequence of str
            The nodes, in ``X``'s column order.
        conditions : array-like of shape (n_samples,), optional
            Each row's condition label (text or integers).
        targets : mapping, optional
            ``{label: [node, ...]}``, nodes by name or index (needs ``conditions``).
        n_samples : int, optional
            The rows ``conditions`` must label (default: its length).

        Returns
        -------
        Design

        Raises
        ------
        ConditionsError
            (a ``ValueError``) From :func:`~colide_core.data.conditions.check_conditions` and
            :func:`~colide_core.data.conditions.check_targets`, or for targets without conditions.
        """
        from colide_core.data.conditions import check_conditions, check_targets
        from colide_core.exceptions import ConditionsError

        names = tuple(str(n) for n in node_names)
        if conditions is None:
            if targets:
                raise ConditionsError("targets need conditions: give the condition of each row.",
                                      "target_unknown_condition")
            return cls(node_names=names)
        n = len(conditions) if n_samples is None else int(n_samples)
        labels, codes = check_conditions(conditions, n)
        resolved = check_targets(targets, labels, list(names), n_nodes=len(names),
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
            the conditions; every row once per draw on average. Without conditions, all rows.
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
