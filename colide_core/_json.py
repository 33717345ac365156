"""The one bounded reader of a user's JSON document (run manifests, prior knowledge, metadata).

A JSON document from a user is hostile input: :func:`read_json` bounds its size and its nesting
*before* parsing (Python's parser recurses once per level), decodes bytes as UTF-8 and turns
every failure into a :class:`~colide_core.exceptions.DataValidationError` with a stable ``kind``,
never a ``RecursionError`` or a traceback. It serves the run manifest
(:mod:`colide_core.run.manifest`), prior-knowledge files (:mod:`colide_core.graph.constraints`),
intervention targets (:mod:`colide_core.data.conditions`) and the pandas metadata inside Parquet
files (:mod:`colide_core.data.io`, which re-exports it with its limits).
"""
from __future__ import annotations

import json
import re

import numpy as np

from colide_core.exceptions import DataValidationError

__all__ = ["read_json", "JSON_MAX_BYTES", "JSON_MAX_DEPTH"]

#: Default upper bound on the size of a user's JSON document (manifest, constraints), in bytes.
#: A manifest of a 200-node fit is about 1.5 MB.
JSON_MAX_BYTES = 10_000_000

#: Deepest nesting of JSON arrays and objects accepted (a manifest nests 4 deep). Checked before
#: parsing: Python's parser recurses once per level and raises RecursionError near 1000.
JSON_MAX_DEPTH = 64


def _human_size(nbytes: int) -> str:
    """A size for a message: ``12.3 MB``, ``4.5 kB`` or ``12 bytes`` (also :mod:`colide_core.data.io`'s)."""
    if nbytes >= 1_000_000:
        return f"{nbytes / 1e6:.1f} MB"
    if nbytes >= 1_000:
        return f"{nbytes / 1e3:.1f} kB"
    return f"{nbytes} bytes"


def _exc_text(exc) -> str:
    """An exception's text on one line, at most 300 characters (also :mod:`colide_core.data.io`'s)."""
    return " ".join(str(exc).split())[:300]


def read_json(data, *, what: str = "JSON document", max_bytes: int = JSON_MAX_BYTES,
              max_depth: int = JSON_MAX_DEPTH):
    """Parse a user's JSON document with its size and nesting bounded before parsing.

    The one JSON entry point for user files (run manifests, prior-knowledge files, the pandas
    metadata inside Parquet): every failure becomes a :class:`DataValidationError`, never a
    RecursionError or a traceback.

    Parameters
    ----------
    data : str, bytes, bytearray or memoryview
        The document; bytes are decoded as UTF-8 (a BOM is allowed).
    what : str, default "JSON document"
        How the document is named in messages (e.g. ``"manifest"``).
    max_bytes : int, default 10_000_000
        Largest accepted size, in bytes (in characters for ``str``).
    max_depth : int, default 64
        Deepest accepted nesting of arrays and objects (``[[1]]`` has depth 2).

    Returns
    -------
    object
        What :func:`json.loads` returns (dict, list, str, int, float, bool or None).

    Raises
    ------
    DataValidationError
        ``kind="bad_type"`` if ``data`` is not text or bytes; ``"too_large"`` above ``max_bytes``;
        ``"empty_file"`` for blank input; ``"not_json"`` for text that is not UTF-8 or not JSON
        (including integers of more than 4300 digits, which Python refuses to convert);
        ``"too_deep"`` when arrays / objects nest deeper than ``max_depth``.

    Notes
    -----
    The depth is measured in linear time before :func:`json.loads` runs: escaped characters and
    string literals are removed with ``str.replace`` and a non-backtracking regex, then the
    brackets' running depth is a cumulative sum (numpy). Outside a valid prefix the measure may
    over-count, which only turns an invalid document's error into ``"too_deep"``.
    """
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, (bytes, str)):
        raise DataValidationError(
            f"Expected the {what} as text or bytes, got {type(data).__name__}.", "bad_type")
    if len(data) > max_bytes:
        raise DataValidationError(
            f"The {what} is {_human_size(len(data))}, above the limit of {_human_size(max_bytes)}.",
            "too_large")
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DataValidationError(
                f"The {what} is not valid JSON: it is not UTF-8 text ({exc.reason} at byte "
                f"{exc.start}).", "not_json"
            ) from None
    else:
        text = data
    if not text.strip():
        raise DataValidationError(f"The {what} is empty.", "empty_file")
    depth = _json_depth(text, max_depth)
    if depth > max_depth:
        raise DataValidationError(
            f"The {what} nests arrays / objects {depth} deep; at most {max_depth} levels are "
            f"accepted.", "too_deep")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataValidationError(
            f"The {what} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}).",
            "not_json") from None
    except (ValueError, RecursionError, TypeError, OverflowError) as exc:
        raise DataValidationError(
            f"The {what} cannot be read as JSON ({type(exc).__name__}: {_exc_text(exc)}).",
            "not_json") from None


_JSON_STRING_RE = re.compile(r'"[^"]*"')  # after escapes are removed: cannot backtrack


def _json_depth(text: str, limit: int) -> int:
    """Deepest nesting of ``[``/``{`` outside string literals; linear time, no recursion.

    Exact when above ``limit``; when it cannot exceed ``limit`` (no more opening brackets than
    ``limit``), the number of opening brackets is returned instead, an upper bound.
    """
    opening = text.count("[") + text.count("{")
    if opening <= limit:
        return opening
    bare = text.replace("\\\\", "").replace('\\"', "")  # escaped backslashes, then escaped quotes
    bare = _JSON_STRING_RE.sub("", bare)
    codes = np.frombuffer(bare.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    step = ((codes == ord("[")) | (codes == ord("{"))).astype(np.int32)
    step -= ((codes == ord("]")) | (codes == ord("}"))).astype(np.int32)
    return int(np.cumsum(step, dtype=np.int32).max(initial=0))
