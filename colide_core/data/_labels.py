"""The rows' condition labels and each condition's targets, checked (split from
:mod:`colide_core.data.conditions`, issue 47, so that :mod:`colide_core.data.design` and the
conditions' statistics both build on it without an import cycle).

Conventions: ``X`` is ``(n_samples, n_nodes)``; labels are kept as text (an integer label 3 is
``"3"``), in the order they first appear.
"""
from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd

from colide_core._validation import NodeNameError, check_node_names, node_index
from colide_core import defaults
from colide_core.exceptions import ConditionsError, UnknownNodeError

__all__ = ["check_conditions", "check_targets"]


def _shorten(text, limit=40):
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _label_text(value, kind):
    """The text of one label value of a checked kind ("int", "float", "bool", "text")."""
    if kind == "float":
        value = float(value)
        return str(int(value)) if value.is_integer() else repr(value)
    if kind == "int":
        return str(int(value))
    return str(value)


def _kind_of_array(values):
    """The label kind of a 1-D array: "int", "float", "bool", "text", or raise."""
    if values.dtype.kind in "iu":
        return "int"
    if values.dtype.kind == "f":
        if not np.all(np.isfinite(values)):
            raise ConditionsError("A condition label is missing (NaN or infinite): every row needs a condition.",
                                  "condition_missing", rows=tuple(np.flatnonzero(~np.isfinite(values))[:10]))
        return "float"
    if values.dtype.kind == "b":
        return "bool"
    if values.dtype.kind in "US":
        return "text"
    if values.dtype.kind != "O":
        raise ConditionsError(f"Condition labels must be text or integers, got values of type {values.dtype}.",
                              "condition_bad_label")
    missing = pd.isna(values)
    if np.any(missing):
        raise ConditionsError("A condition label is missing (None or NaN): every row needs a condition.",
                              "condition_missing", rows=tuple(np.flatnonzero(missing)[:10]))
    inferred = pd.api.types.infer_dtype(values, skipna=False)
    if inferred == "string":
        return "text"
    if inferred == "integer":
        return "int"
    if inferred in ("floating", "mixed-integer-float"):
        return "float"
    if inferred == "boolean":
        return "bool"
    has_text = any(isinstance(v, str) for v in values)
    has_number = any(isinstance(v, (Integral, float, np.number)) and not isinstance(v, (bool, np.bool_))
                     for v in values)
    if inferred in ("mixed", "mixed-integer") and has_text and has_number:
        raise ConditionsError("The condition labels mix numbers and text (e.g. 1 on one row and 'ctrl' on another): "
                              "make the column all text or all integers.", "condition_mixed_types")
    raise ConditionsError(f"Condition labels must be text or integers, got {inferred} values.", "condition_bad_label")


def check_conditions(conditions, n_samples):
    """Check the condition labels of the rows of ``X`` and code them.

    Parameters
    ----------
    conditions : array-like or pandas.Series of shape (n_samples,)
        One label per row: text, integers (or integral floats), or booleans, one kind for the
        whole column. Not modified.
    n_samples : int
        Rows of ``X``.

    Returns
    -------
    labels : tuple of str
        The distinct labels as text, in the order they first appear (an integer 3 is ``"3"``).
    codes : ndarray of int64 of shape (n_samples,)
        ``labels[codes[i]]`` is row i's condition.

    Raises
    ------
    ConditionsError
        (a ``ValueError``) With ``kind``: ``"condition_length"`` (not one label per row, or not
        1-D), ``"condition_missing"`` (None, NaN, empty text), ``"condition_mixed_types"``
        (numbers on some rows and text on others), ``"condition_bad_label"`` (another type, a
        label longer than ``defaults.MAX_CONDITION_LABEL`` characters, or two labels with the
        same text), ``"too_many_conditions"`` (more than ``defaults.MAX_CONDITIONS``) or
        ``"condition_too_few_rows"`` (a condition with fewer than
        ``defaults.MIN_CONDITION_ROWS`` rows).
    """
    if isinstance(conditions, (str, bytes)) or not hasattr(conditions, "__len__"):
        raise ConditionsError("conditions must be one label per row (a list, an array or a column), "
                              f"not a {type(conditions).__name__}.", "condition_length")
    if len(conditions) != n_samples:
        raise ConditionsError(f"conditions has {len(conditions)} labels but the data have {n_samples} rows: "
                              "give one label per row.", "condition_length")
    if isinstance(conditions, (pd.Series, pd.Index)):
        values = conditions.to_numpy(dtype=object) if conditions.dtype == object or isinstance(
            conditions.dtype, pd.CategoricalDtype) else conditions.to_numpy()
    elif isinstance(conditions, np.ndarray):
        values = conditions
    else:
        values = np.empty(len(conditions), dtype=object)
        values[:] = list(conditions)
    if values.ndim != 1:
        raise ConditionsError(f"conditions must be 1-D (one label per row), got shape {values.shape}.",
                              "condition_length")
    kind = _kind_of_array(values)
    codes, uniques = pd.factorize(values, sort=False)
    if len(uniques) > defaults.MAX_CONDITIONS:
        raise ConditionsError(f"{len(uniques)} distinct conditions, more than {defaults.MAX_CONDITIONS}: is this "
                              "really a condition column?", "too_many_conditions")
    labels = tuple(_label_text(u, kind) for u in uniques)
    if any(lab.strip() == "" for lab in labels):
        raise ConditionsError("A condition label is empty text: every row needs a condition.", "condition_missing")
    long = [lab for lab in labels if len(lab) > defaults.MAX_CONDITION_LABEL]
    if long:
        raise ConditionsError(f"A condition label is longer than {defaults.MAX_CONDITION_LABEL} characters: "
                              f"{_shorten(long[0])!r}.", "condition_bad_label")
    if len(set(labels)) != len(labels):
        raise ConditionsError("Two different condition values read as the same label; make the labels distinct.",
                              "condition_bad_label")
    # the node-name policy (issue 42): labels reach HTML, CSV, JSON and the report as names do, so
    # control characters, bidirectional overrides and other invisible characters are refused, and
    # labels equal after NFC normalisation are duplicates
    try:
        labels = tuple(check_node_names(labels, what="condition"))
    except NodeNameError as exc:
        raise ConditionsError(str(exc), "condition_bad_label") from None
    counts = np.bincount(codes, minlength=len(labels))
    small = [(lab, int(c)) for lab, c in zip(labels, counts) if c < defaults.MIN_CONDITION_ROWS]
    if small:
        lab, c = small[0]
        raise ConditionsError(f"Condition {_shorten(lab)!r} has {c} row(s); each condition needs at least "
                              f"{defaults.MIN_CONDITION_ROWS} (its own mean and covariance).", "condition_too_few_rows")
    return labels, codes.astype(np.int64)


def _label_key(key, labels):
    """The label a targets key names (text as is, an integer as its text), or None."""
    if isinstance(key, str):
        text = key
    elif isinstance(key, (bool, np.bool_)):
        text = str(bool(key))
    elif isinstance(key, (Integral, np.integer)):
        text = str(int(key))
    elif isinstance(key, (float, np.floating)) and np.isfinite(key) and float(key).is_integer():
        text = str(int(key))
    else:
        return None
    return text if text in labels else None


def check_targets(targets, labels, node_names=None, *, n_nodes=None, counts=None):
    """Check the intervention targets of each condition and resolve them to node indices.

    Parameters
    ----------
    targets : mapping or None
        ``{label: nodes}``: for a condition label (text, or an integer for integer labels), the
        nodes it intervenes on, by name (when ``node_names`` is given) or by index; ``nodes``
        may be one node or a list. A condition not named has no target. None: no target.
    labels : sequence of str
        The conditions' labels (:func:`check_conditions`).
    node_names : sequence of str, optional
        The nodes' names, in column order.
    n_nodes : int, optional
        Number of nodes; default ``len(node_names)``.
    counts : sequence of int, optional
        Rows per condition (in the order of ``labels``): with it, a node targeted in every
        row is refused.

    Returns
    -------
    dict
        ``{label: tuple of int}`` for every label, the sorted distinct node indices it targets
        (an empty tuple for none).

    Raises
    ------
    ConditionsError
        With ``kind``: ``"targets_malformed"`` (not a mapping; a list of more nodes than there
        are, or more entries than labels), ``"target_unknown_condition"``,
        ``"target_unknown_node"`` or ``"target_every_row"`` (no row left to fit a node's
        equation).
    """
    labels = tuple(labels)
    if n_nodes is None:
        if node_names is None:
            raise ValueError("check_targets needs node_names or n_nodes.")
        n_nodes = len(node_names)
    out = {lab: () for lab in labels}
    if targets is None:
        return out
    if not hasattr(targets, "items"):
        raise ConditionsError("targets must be a mapping {condition label: [node, ...]}, not a "
                              f"{type(targets).__name__}.", "targets_malformed")
    if len(targets) > len(labels):
        raise ConditionsError(f"targets has {len(targets)} entries for {len(labels)} conditions.", "targets_malformed")
    for key, nodes in targets.items():
        lab = _label_key(key, labels)
        if lab is None:
            raise ConditionsError(f"targets names condition {_shorten(key)!r}, which is not among the condition "
                                  f"labels ({', '.join(repr(_shorten(x, 20)) for x in labels[:8])}"
                                  f"{', ...' if len(labels) > 8 else ''}).", "target_unknown_condition")
        if nodes is None:
            continue
        if isinstance(nodes, (str, Integral, np.integer)):
            nodes = [nodes]
        if not hasattr(nodes, "__len__") or hasattr(nodes, "items"):
            raise ConditionsError(f"The targets of condition {_shorten(lab)!r} must be a node or a list of nodes.",
                                  "targets_malformed")
        if len(nodes) > n_nodes:
            raise ConditionsError(f"Condition {_shorten(lab)!r} lists {len(nodes)} targets for {n_nodes} nodes.",
                                  "targets_malformed")
        idx = set()
        for node in list(nodes):
            try:  # the one node lookup; its error becomes this ConditionsError kind
                j = node_index(node, node_names, n_nodes)
            except UnknownNodeError:
                raise ConditionsError(f"Condition {_shorten(lab)!r} targets {_shorten(node)!r}, which is not a node "
                                      "of the data.", "target_unknown_node", columns=(_shorten(node),)) from None
            idx.add(j)
        out[lab] = tuple(sorted(set(out[lab]) | idx))
    if counts is not None:
        counts = np.asarray(counts, dtype=np.int64)
        kept = np.full(n_nodes, counts.sum())
        for lab, c in zip(labels, counts):
            for j in out[lab]:
                kept[j] -= c
        bad = np.flatnonzero(kept <= 0)
        if bad.size:
            name = node_names[bad[0]] if node_names is not None else str(bad[0])
            raise ConditionsError(f"Node {_shorten(name)!r} is a target in every condition: no row is left to fit "
                                  "its own equation.", "target_every_row", columns=(_shorten(name),))
    return out
