"""The one content hash of the package: SHA-256 of a tag, a canonical JSON header and float64 arrays.

Every content fingerprint goes through :func:`digest`: the data fingerprint stored in run
manifests (:func:`colide_core.run.manifest.data_fingerprint`), the dashboard's dataset keys
(``dashboard.data.content_hash``) and the cache keys of the dashboard's fit records and
datasets (:func:`fingerprint`).

Why it is unambiguous
---------------------
The bytes hashed are ``tag + header + array bytes``:

* ``tag`` is a fixed ASCII word (lower-case letters, digits, ``.``, ``/``, ``-``) and can
  hold none of the characters a JSON value starts with, so the tag ends where the header
  starts;
* ``header`` is canonical JSON (:func:`canonical_json`: ``json.dumps`` with sorted keys, every
  non-ASCII or control character escaped). A JSON text is prefix-free (no valid JSON value is
  a proper prefix of another), so the header ends at a determined byte, and any string in it
  (a column name holding quotes, separators, newlines, lone surrogates) is escaped, never
  joined with a separator it could contain;
* the header states the shape of every array that follows, and the arrays are written as
  little-endian float64 in row-major order, so the byte count of each is determined.

Two different inputs therefore give different byte strings, and equal ones equal digests.
:func:`fingerprint` hashes a whole record: :func:`canonical` first describes it as tagged plain
JSON (numpy arrays, data frames and dataclasses by their own full SHA-256); anything it does not
know raises ``TypeError`` rather than being hashed through a lossy ``repr``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re

import numpy as np
import pandas as pd

__all__ = ["digest", "fingerprint", "canonical", "canonical_json", "json_digest"]

_TAG = re.compile(r"[a-z0-9][a-z0-9./-]*\Z")
_HASH_CHUNK_BYTES = 1 << 20  # digest hashes arrays in row blocks of about this size


def canonical(obj):
    """A plain-JSON description of ``obj`` that determines it (for hashing, not for reading back).

    Every container is tagged with its kind (``["list", [...]]``, ``["dict", {...}]``,
    ``["ndarray", shape, dtype, sha256]``, ...), so no value can imitate another's description.

    Parameters
    ----------
    obj : object
        ``None``, bool, int, float, str, numpy scalars, lists and tuples (both are lists),
        dicts with string keys, numpy arrays, pandas DataFrames and Series, and dataclass
        instances, nested in any way.

    Returns
    -------
    object
        JSON-serialisable. A numeric numpy array becomes ``["ndarray", shape, dtype, sha256]``
        (its bytes hashed in full: no sampling), a frame its columns, index and values, a
        dataclass ``["dataclass", qualified name, {field: value}]``, a NaN or infinite float
        ``["float", repr]``.

    Raises
    ------
    TypeError
        For any other type, or a dict whose keys are not all strings.
    """
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else ["float", repr(f)]
    if isinstance(obj, (list, tuple)):
        return ["list", [canonical(v) for v in obj]]
    if isinstance(obj, dict):
        if not all(isinstance(k, str) for k in obj):
            raise TypeError("cannot hash a dict whose keys are not all strings")
        return ["dict", {k: canonical(v) for k, v in obj.items()}]
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "biufc":
            A = np.ascontiguousarray(obj)
            return ["ndarray", list(A.shape), A.dtype.str, hashlib.sha256(A.tobytes()).hexdigest()]
        return ["ndarray", list(obj.shape), obj.dtype.str, canonical(obj.tolist())]
    if isinstance(obj, pd.DataFrame):
        return ["frame", canonical([str(c) for c in obj.columns]), canonical(obj.index.to_numpy()),
                canonical(obj.to_numpy())]
    if isinstance(obj, pd.Series):
        return ["series", str(obj.name), canonical(obj.index.to_numpy()), canonical(obj.to_numpy())]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return ["dataclass", f"{type(obj).__module__}.{type(obj).__qualname__}",
                {f.name: canonical(getattr(obj, f.name)) for f in dataclasses.fields(obj)}]
    raise TypeError(f"cannot hash an object of type {type(obj).__qualname__}")


def canonical_json(obj, *, compact: bool = False, allow_nan: bool = True) -> str:
    """Canonical JSON text of a plain JSON value (sorted keys, ASCII only): the package's one form.

    Every JSON text that is hashed goes through here: the header of :func:`digest`, the sweep's
    task keys (:func:`colide_core.run.tasks.task_key`, ``compact=True``) and the dashboard's
    drawing tokens (``dashboard.caching.cached.graph_drawing_cached``, ``allow_nan=False``).

    Parameters
    ----------
    obj : None, bool, int, float, str, list or dict with string keys, nested
        Plain JSON only (tuples count as lists); describe anything else with
        :func:`canonical` first.
    compact : bool, default=False
        Separators ``","`` and ``":"`` (no spaces) instead of ``", "`` and ``": "``. Both forms
        are persisted and must keep their bytes: :func:`digest`'s (the data fingerprints in run
        manifests) is the spaced one, the task keys of a sweep's ``results.jsonl`` the compact one.
    allow_nan : bool, default=True
        Write a NaN or infinite float as ``NaN`` / ``Infinity`` (not standard JSON); with False
        such a float raises ``ValueError``.

    Returns
    -------
    str
        ``json.dumps(obj, sort_keys=True, ensure_ascii=True)`` with those separators.

    Raises
    ------
    TypeError
        If ``obj`` holds anything else.
    ValueError
        If ``allow_nan`` is False and ``obj`` holds a NaN or infinite float.

    Examples
    --------
    >>> print(canonical_json({"b": [1, 2.5], "a": "\u00e9"}))
    {"a": "\\u00e9", "b": [1, 2.5]}
    >>> canonical_json({"b": [1, 2.5], "a": None}, compact=True)
    '{"a":null,"b":[1,2.5]}'
    """
    _check_plain(obj)
    return json.dumps(obj, sort_keys=True, ensure_ascii=True, allow_nan=allow_nan,
                      separators=(",", ":") if compact else (", ", ": "))


def json_digest(obj, *, compact: bool = False, allow_nan: bool = True) -> str:
    """SHA-256 of :func:`canonical_json` of ``obj`` (ASCII bytes), untagged.

    For identities whose bytes are already fixed (a sweep's task keys are stored in its
    ``results.jsonl``); a new content hash should use :func:`digest`, whose tag names what is
    hashed.

    Parameters
    ----------
    obj : plain JSON value
    compact, allow_nan : bool
        As in :func:`canonical_json`.

    Returns
    -------
    str
        The hex digest (64 characters) of the text's ASCII bytes.

    Raises
    ------
    TypeError, ValueError
        As :func:`canonical_json` raises them (not plain JSON; a NaN with ``allow_nan=False``).

    Examples
    --------
    >>> import hashlib
    >>> json_digest({"a": 1}, compact=True) == hashlib.sha256(b'{"a":1}').hexdigest()
    True
    """
    return hashlib.sha256(canonical_json(obj, compact=compact, allow_nan=allow_nan).encode("ascii")).hexdigest()


def _check_plain(obj):
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return
    if isinstance(obj, (list, tuple)):
        for v in obj:
            _check_plain(v)
        return
    if isinstance(obj, dict) and all(isinstance(k, str) for k in obj):
        for v in obj.values():
            _check_plain(v)
        return
    raise TypeError(f"a hash header must be plain JSON, got {type(obj).__qualname__}")


def digest(tag: str, header, arrays=()) -> str:
    """SHA-256 of ``tag``, the canonical JSON of ``header`` and ``arrays`` as little-endian float64.

    Parameters
    ----------
    tag : str
        A fixed name of what is hashed, with its version (e.g. ``"colide-data/1"``): ASCII
        lower-case letters, digits, ``.``, ``/`` and ``-`` only.
    header : plain JSON value
        See :func:`canonical_json`. It must state the shape of every array in ``arrays``
        (that is what makes the hash unambiguous).
    arrays : sequence of array-like
        Numeric arrays, hashed in full as little-endian float64 in row-major (C) order, so
        the memory layout does not matter.

    Returns
    -------
    str
        64 hex characters.

    Raises
    ------
    ValueError
        If ``tag`` has other characters.
    TypeError
        If ``header`` is not plain JSON.
    """
    if not _TAG.match(tag):
        raise ValueError(f"invalid hash tag {tag!r}")
    h = hashlib.sha256()
    h.update(tag.encode("ascii"))
    h.update(canonical_json(header).encode("ascii"))
    for A in arrays:
        A = np.asarray(A)
        rows = A.reshape(A.shape[0], math.prod(A.shape[1:])) if A.ndim > 1 else A.reshape(1, A.size)
        step = max(1, _HASH_CHUNK_BYTES // max(1, 8 * rows.shape[1]))
        for start in range(0, rows.shape[0], step):  # the same bytes in row blocks: no copy of the whole array
            h.update(np.ascontiguousarray(rows[start:start + step], dtype="<f8"))
    return h.hexdigest()


def fingerprint(tag: str, obj) -> str:
    """:func:`digest` of ``obj`` alone (arrays inside it are hashed in full by :func:`canonical`).

    Parameters
    ----------
    tag : str
    obj : object
        Anything :func:`canonical` accepts (e.g. a dict of a record's fields).

    Returns
    -------
    str
        64 hex characters.
    """
    return digest(tag, canonical(obj))
