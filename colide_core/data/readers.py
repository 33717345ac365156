"""Reading user files: the bytes of an upload to a :class:`pandas.DataFrame`, bounded.

:func:`read_table` is the first of the two steps of :mod:`colide_core.data.io` (the second,
:func:`colide_core.data.io.validate_data`, checks the table is a usable data matrix ``X`` of shape
``(n_samples, n_nodes)``). It reads CSV, TSV, other delimited text (the delimiter sniffed from a
bounded sample, linear work only) and Parquet (what to read decided from the footer, with bounded
metadata checks, before any data is read). It never unpickles and never touches the file system:
the file name is used only for its extension. :func:`check_file` is its first named check (type,
size, emptiness), usable alone.

Every problem is a :class:`~colide_core.exceptions.DataValidationError` (a ``ValueError``) with a
human message and a machine-readable ``kind``; no other exception escapes for any content of the
file. The short message helpers (a quoted name, a bounded list) and the numeric-dtype test live
here and are shared with :mod:`colide_core.data.io`.
"""
from __future__ import annotations

import contextlib
import csv
import io as _io
import re

import pandas as pd

from colide_core.exceptions import DataValidationError
from colide_core._json import JSON_MAX_BYTES, _exc_text, _human_size, read_json

__all__ = ["read_table", "check_file", "DEFAULT_MAX_BYTES"]

#: Default upper bound on the size of an uploaded file, in bytes (50 MB).
DEFAULT_MAX_BYTES = 50_000_000

# Candidate delimiters for delimited text, in order of preference.
_DELIMITERS = (",", "\t", ";", "|", " ")
# How many listed names / rows a message shows before "... and k more".
_MAX_LISTED = 8
# Longest column name shown verbatim in a message.
_MAX_NAME_CHARS = 60
_PARQUET_MAGIC = b"PAR1"
#: A Parquet file may decode to at most this many times ``max_bytes`` (so 250 MB for the default
#: 50 MB): the float64 matrix of the ``max_bytes // 2`` cells a text file can hold (4x), plus room
#: for validity bitmaps, levels and page headers.
_PARQUET_EXPANSION = 5
# Deepest Parquet schema accepted (a flat table has depth 2).
_PARQUET_SCHEMA_DEPTH = 16
_PARQUET_EXTENSIONS = (".parquet", ".pq", ".parq")
_TSV_EXTENSIONS = (".tsv", ".tab")


# ----------------------------------------------------------------------------------------------
# formatting helpers
# ----------------------------------------------------------------------------------------------
def _short(name) -> str:
    """Quote a (possibly hostile or huge) name for a message: repr-quoted, control chars escaped."""
    s = str(name)
    if len(s) > _MAX_NAME_CHARS:
        s = s[: _MAX_NAME_CHARS - 1] + "…"
    return repr(s)


def _list(items, quote=True) -> str:
    items = list(items)
    shown = [(_short(x) if quote else str(x)) for x in items[:_MAX_LISTED]]
    text = ", ".join(shown)
    if len(items) > _MAX_LISTED:
        text += f" and {len(items) - _MAX_LISTED} more"
    return text


def _is_numeric_dtype(dt) -> bool:
    return (
        pd.api.types.is_bool_dtype(dt)
        or pd.api.types.is_integer_dtype(dt)
        or pd.api.types.is_float_dtype(dt)
    ) and not isinstance(dt, pd.CategoricalDtype)


# ----------------------------------------------------------------------------------------------
# reading
# ----------------------------------------------------------------------------------------------
def read_table(
    data, filename: str, *, max_bytes: int = DEFAULT_MAX_BYTES, max_columns: int | None = 10_000
) -> pd.DataFrame:
    """Parse the bytes of an uploaded CSV / TSV / delimited-text / Parquet file into a DataFrame.

    Two steps: :func:`check_file` (type, size, emptiness), then parsing. Call
    :func:`~colide_core.data.io.validate_data` on the result to check it is a usable data matrix
    ``X`` of shape ``(n_samples, n_nodes)``.

    Parameters
    ----------
    data : bytes, bytearray or memoryview
        The raw file content. Never written to disk, never unpickled.
    filename : str
        The uploaded file's name; only its extension is used (``.parquet``/``.pq`` -> Parquet,
        ``.tsv``/``.tab`` -> tab-separated, anything else -> delimited text with the delimiter
        sniffed among ``, TAB ; | space``). A file starting and ending with the Parquet magic
        ``PAR1`` is read as Parquet whatever its name.
    max_bytes : int, default 50_000_000
        Largest accepted size in bytes. A Parquet file is also refused, from its footer and
        before any data is read, when it declares more than ``max_bytes // 2`` cells (the most a
        text file of ``max_bytes`` bytes can hold), or when its column chunks declare, or decode
        to, more than ``5 * max_bytes`` bytes (so a small, highly compressed file cannot exhaust
        memory).
    max_columns : int or None, default 10_000
        Most columns accepted, checked on the header before parsing (building a DataFrame with
        hundreds of thousands of columns takes pandas many seconds); ``None`` means no limit.

    Returns
    -------
    pandas.DataFrame
        One column per field, column labels exactly as in the header (whitespace stripped, duplicates
        and empty names kept so that :func:`~colide_core.data.io.validate_data` can report them),
        index numbering the data rows from 1 (header excluded). Numeric columns are
        int/float/bool; others keep their text (Parquet text columns as pandas categoricals: each
        distinct string is held once).

    Raises
    ------
    DataValidationError
        ``kind="bad_type"`` if ``data`` is not bytes-like; ``"empty_file"`` if it is empty or
        whitespace only; ``"too_large"`` above ``max_bytes`` or the Parquet limits above;
        ``"too_many_nodes"`` above ``max_columns``; ``"not_tabular"`` for binary or compressed
        content, undecodable text, ragged rows, corrupt Parquet or any other parser failure;
        ``"unsupported_column_type"`` for Parquet columns that are nested, binary, of an extension
        type or hold Python objects; ``"duplicate_column_name"`` for a Parquet file with two
        columns of the same name. No other exception escapes for any content of ``data``.

    Notes
    -----
    Text is decoded as UTF-8 (BOM allowed), UTF-16 when it starts with a UTF-16 BOM, else Latin-1.
    The first non-blank line is always the header. Numbers use ``.`` as decimal mark; for ``;``,
    tab, ``|`` or space delimited files a decimal comma is tried when it turns more columns numeric.

    Every step is linear in the size of the file: the delimiter is guessed from at most the first
    50 lines / 64 KiB by trying each candidate with the C ``csv`` tokenizer (no
    :class:`csv.Sniffer`, whose regexes are quadratic in the line length), and pandas' C parser
    reads the file. Parquet is read with ``pyarrow.parquet``: the footer decides what is read
    (fixed-width columns as they are, text columns as dictionaries, never expanded row by row;
    pandas' stored index columns are skipped), and the pandas metadata is stripped, so no stored
    object is ever reconstructed. Compressed uploads (gzip, bzip2, xz, zip) are refused, never
    decompressed.
    """
    if max_columns is not None and max_columns < 1:
        raise ValueError(f"max_columns must be None or a positive int, got {max_columns!r}")
    data = check_file(data, max_bytes=max_bytes)
    if not isinstance(filename, str):
        filename = "" if filename is None else str(filename)
    ext = ("." + filename.rsplit(".", 1)[-1].lower()) if "." in filename else ""
    looks_parquet = data[:4] == _PARQUET_MAGIC and data[-4:] == _PARQUET_MAGIC
    if ext in _PARQUET_EXTENSIONS or looks_parquet:
        if not looks_parquet:
            raise DataValidationError(
                "The file is named like Parquet but is not a Parquet file (no 'PAR1' signature).",
                "not_tabular",
            )
        with _parse_failures_as_errors():
            return _read_parquet(data, max_cells=max_bytes // 2, max_columns=max_columns,
                                 max_decoded=_PARQUET_EXPANSION * max_bytes)
    with _parse_failures_as_errors():
        return _read_text(data, ext, max_columns)


#: Exceptions a parser may raise on hostile input; :func:`read_table` turns them into a :class:`DataValidationError` (pyarrow's errors derive from these too, except
#: its base ``ArrowException``, matched by name).
_PARSE_FAILURES = (ValueError, TypeError, OverflowError, UnicodeError, csv.Error, IndexError,
                   KeyError, OSError, NotImplementedError, RecursionError, MemoryError)


@contextlib.contextmanager
def _parse_failures_as_errors():
    """Turn any parser failure into a DataValidationError (never a traceback in a UI)."""
    try:
        yield
    except DataValidationError:
        raise
    except MemoryError:
        raise DataValidationError(
            "The file needs more memory to read than this process can spare.", "too_large"
        ) from None
    except Exception as exc:
        if not (isinstance(exc, _PARSE_FAILURES)
                or any(c.__name__ == "ArrowException" for c in type(exc).__mro__)):
            raise
        raise DataValidationError(
            f"The file cannot be read ({type(exc).__name__}: {_exc_text(exc)}).", "not_tabular"
        ) from None


def check_file(data, *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """Check the raw content of an uploaded file before any parsing: type, size, emptiness.

    Parameters
    ----------
    data : bytes, bytearray or memoryview
        The raw file content.
    max_bytes : int, default 50_000_000
        Largest accepted size in bytes.

    Returns
    -------
    bytes
        ``data`` as ``bytes``.

    Raises
    ------
    DataValidationError
        ``kind="bad_type"`` if ``data`` is not bytes-like; ``"too_large"`` above ``max_bytes``;
        ``"empty_file"`` if it is empty or whitespace only.
    ValueError
        If ``max_bytes`` is not a positive int.
    """
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise DataValidationError(
            f"Expected the file content as bytes, got {type(data).__name__}.", "bad_type"
        )
    if max_bytes is None or max_bytes <= 0:
        raise ValueError(f"max_bytes must be a positive int, got {max_bytes!r}")
    size = len(data)
    if size > max_bytes:
        raise DataValidationError(
            f"The file is {_human_size(size)}, above the limit of {_human_size(max_bytes)}.",
            "too_large",
        )
    if size == 0 or not data.strip():
        raise DataValidationError("The file is empty.", "empty_file")
    return data


def _decode(data: bytes) -> str:
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise DataValidationError(
                f"The file starts like UTF-16 text but cannot be decoded ({exc.reason} at byte "
                f"{exc.start}).",
                "not_tabular",
            ) from None
    if b"\x00" in data:
        hint = ""
        if data[:4] == b"PK\x03\x04":
            hint = " It looks like a ZIP / Excel (.xlsx) file: export the sheet as CSV."
        elif data[:2] == b"\x1f\x8b" or data[:3] == b"BZh" or data[:6] == b"\xfd7zXZ\x00":
            hint = (" It looks like a compressed (gzip / bzip2 / xz) file: compressed uploads are "
                    "not read; upload the uncompressed table.")
        raise DataValidationError(
            "The file is binary, not a text table (it contains NUL bytes)." + hint, "not_tabular"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


_NEWLINE_RE = re.compile(r"\r\n|\r|\n")
_SNIFF_CHARS = 65536


def _sample_lines(text: str, k: int = 50) -> list:
    """Up to ``k`` non-blank lines from the first 64 KiB of ``text`` (a cut last line is dropped)."""
    cut = len(text) > _SNIFF_CHARS
    lines = _NEWLINE_RE.split(text[:_SNIFF_CHARS])
    if cut and len(lines) > 1:
        lines = lines[:-1]
    return [line for line in lines if line.strip()][:k]


def _split(lines, delim, strict=False):
    if delim == " ":
        return _ws_records(lines, strict)
    return list(csv.reader(lines, delimiter=delim, skipinitialspace=True, strict=strict))


def _ws_records(lines, strict=False) -> list:
    """Split like pandas' whitespace separator ``\\s+`` (runs of spaces and tabs; leading and
    trailing ones ignored; double-quoted fields may hold whitespace), with the C csv tokenizer."""
    cleaned = (line.strip(" \t").replace("\t", " ") for line in lines)
    return [rec for rec in csv.reader(cleaned, delimiter=" ", skipinitialspace=True, strict=strict)]


def _first_records(text: str, delim: str, k: int) -> list:
    """The first ``k`` non-blank records of ``text`` (quoted newlines respected)."""
    out = []
    if delim == " ":
        lines = iter(_ws_records(_NEWLINE_RE.split(text[: _SNIFF_CHARS * 16])))
    else:
        lines = csv.reader(_io.StringIO(text), delimiter=delim, skipinitialspace=True)
    for rec in lines:
        if rec and not (len(rec) == 1 and not rec[0].strip()):  # pandas skips blank lines
            out.append(rec)
            if len(out) >= k:
                break
    return out


def _consistent(lines, delim, strict=False) -> bool:
    """True when ``delim`` splits the header into >= 2 fields and every sampled row alike."""
    try:
        rows = _split(lines, delim, strict)
    except csv.Error:
        return False
    if not rows or len(rows[0]) < 2:
        return False
    k = len(rows[0])
    # The last sampled line may be cut by a quoted newline; ignore it when there are many.
    body = rows[1:-1] if len(rows) > 3 else rows[1:]
    return all(len(r) == k for r in body if r)


def _sniff_delimiter(text: str, ext: str) -> str:
    """The delimiter of ``text``, from a bounded sample and linear work only.

    The sample is :func:`_sample_lines` (at most 50 lines from the first 64 KiB). Each candidate of
    ``, TAB ; | space`` is tried in that order, first with the strict CSV dialect (a quote must
    close a field) and then leniently; the first that splits the header into >= 2 fields and every
    sampled row alike wins. Each try is one pass of the C ``csv`` tokenizer over the sample, so the
    whole guess reads at most ``2 * 5 * 64 KiB`` characters whatever the file holds.
    :class:`csv.Sniffer` is not used: its quote-detection regexes are quadratic in the length of a
    line (a 60 kB line of ``;"`` took 15 s, holding the GIL).
    """
    if ext in _TSV_EXTENSIONS:
        return "\t"
    lines = _sample_lines(text)
    if not lines:
        return ","
    for strict in (True, False):
        for delim in _DELIMITERS:
            if _consistent(lines, delim, strict=strict):
                return delim
    # Nothing splits consistently: the delimiter most frequent in the sample; the parser then
    # reports the first ragged row.
    sample = "\n".join(lines)
    counts = {d: sample.count(d) for d in _DELIMITERS if d != " "}
    best = max(counts, key=counts.get)
    return best if counts[best] > 0 else ","


def _too_many_columns(k: int, max_columns) -> None:
    if max_columns is not None and k > max_columns:
        raise DataValidationError(
            f"The file has {k} columns; at most {max_columns} can be read.", "too_many_nodes"
        )


def _read_text(data: bytes, ext: str, max_columns=None) -> pd.DataFrame:
    text = _decode(data)
    if not text.strip():
        raise DataValidationError("The file is empty.", "empty_file")
    delim = _sniff_delimiter(text, ext)
    try:
        first = _first_records(text, delim, 1)
    except csv.Error as exc:
        raise DataValidationError(
            f"The header line cannot be parsed as delimited text ({_exc_text(exc)}).", "not_tabular"
        ) from None
    if first:  # cheap count first: pandas needs seconds for a frame with 1e5 columns
        _too_many_columns(len(first[0]), max_columns)
    # The header and first data row as pandas itself tokenizes them. With header=None pandas
    # refuses a second row longer than the first, whereas with header=0 and index_col=False it
    # would silently truncate a too-long first data row.
    top = _call_read_csv(text, delim, header=None, nrows=2, dtype=str, keep_default_na=False,
                         na_filter=False)
    if top.shape[0] == 0 or top.shape[1] == 0:
        raise DataValidationError("The file has no header line.", "empty_file")
    header = [str(h).strip() for h in top.iloc[0].tolist()]
    _too_many_columns(len(header), max_columns)
    df = _parse_delimited(text, delim, header, decimal=".")
    if delim != "," and _n_numeric(df) < df.shape[1]:
        try:
            alt = _parse_delimited(text, delim, header, decimal=",")
        except DataValidationError:
            alt = None
        if alt is not None and _n_numeric(alt) > _n_numeric(df):
            df = alt
    return df


def _call_read_csv(text, delim, **kwargs) -> pd.DataFrame:
    """pandas.read_csv on ``text`` with the house options; parser failures become not_tabular."""
    sep = r"\s+" if delim == " " else delim
    try:
        return pd.read_csv(
            _io.StringIO(text),
            sep=sep,
            index_col=False,
            skipinitialspace=True,
            skip_blank_lines=True,
            engine="c",
            low_memory=False,
            **kwargs,
        )
    except pd.errors.EmptyDataError:
        raise DataValidationError("The file has no data.", "empty_file") from None
    except pd.errors.ParserError as exc:
        msg = str(exc).replace("Error tokenizing data. C error: ", "").strip()
        raise DataValidationError(
            f"The file is not a regular table: {msg}. Every row must have as many fields as the "
            f"header (delimiter {delim!r}).",
            "not_tabular",
        ) from None
    except (ValueError, OverflowError, csv.Error, UnicodeError) as exc:
        raise DataValidationError(
            f"The file cannot be parsed as a table ({type(exc).__name__}: {_exc_text(exc)}).", "not_tabular"
        ) from None


def _parse_delimited(text, delim, header, decimal) -> pd.DataFrame:
    df = _call_read_csv(text, delim, header=0, names=list(range(len(header))), decimal=decimal)
    df.columns = pd.Index(header, dtype=object)
    df.index = pd.RangeIndex(1, len(df) + 1, name="row")
    return df


def _n_numeric(df) -> int:
    return sum(_is_numeric_dtype(dt) for dt in df.dtypes)


def _parquet_kind(t, fld) -> str:
    """How a Parquet column of Arrow type ``t`` is read: "fixed", "text" or why it is refused.

    "fixed": a fixed-width type (numbers, booleans, decimals, dates and times, null), decoded
    into ``num_rows * width`` bytes whatever the file declares; "text": a string column, read as a
    dictionary (each distinct string once, never expanded per row); anything else is a reason to
    refuse the column without reading it.
    """
    import pyarrow as pa

    if isinstance(t, pa.BaseExtensionType) or (fld is not None and fld.metadata and any(
            k.startswith(b"ARROW:extension") for k in fld.metadata)):
        return "an Arrow extension type"
    if pa.types.is_dictionary(t):
        inner = _parquet_kind(t.value_type, None)
        return inner if inner in ("fixed", "text") else f"dictionary type {t}"
    if pa.types.is_nested(t) or pa.types.is_union(t) or pa.types.is_run_end_encoded(t):
        return f"nested type {t}"
    if (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
            or pa.types.is_binary_view(t)):
        return "raw binary"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "text"
    if pa.types.is_null(t):
        return "fixed"
    try:
        t.bit_width
    except ValueError:
        return f"type {t}"
    return "fixed"


def _parquet_index_columns(schema) -> set:
    """Names of pandas' stored index columns, read from the JSON metadata (never executed)."""
    raw = (schema.metadata or {}).get(b"pandas")
    if raw is None:
        return set()
    try:
        pmeta = read_json(raw, what="Parquet pandas metadata", max_bytes=JSON_MAX_BYTES)
    except DataValidationError:
        return set()
    cols = pmeta.get("index_columns", []) if isinstance(pmeta, dict) else []
    return {c for c in cols if isinstance(c, str)} if isinstance(cols, list) else set()


def _plan_parquet(pf, n_bytes: int, *, max_cells: int, max_columns, max_decoded: int):
    """Decide from the footer alone which columns to read, or refuse the file.

    Returns ``(names, text_leaves)``: the names of the columns to read (in file order; pandas'
    stored index columns are left out) and the leaf indices of the text columns among them (read
    as dictionaries). Raises :class:`DataValidationError` for too many columns or cells, declared or
    decoded sizes above ``max_decoded`` bytes, inconsistent metadata or unsupported column types.
    """
    meta = pf.metadata
    schema = pf.schema_arrow
    n_rows, n_leaves = int(meta.num_rows), int(meta.num_columns)
    _too_many_columns(max(n_leaves, len(schema)), max_columns)
    if n_rows < 0 or sum(int(meta.row_group(g).num_rows) for g in range(meta.num_row_groups)) != n_rows:
        raise DataValidationError(
            "The Parquet file's metadata are inconsistent (row counts of the row groups do not add "
            "up).", "not_tabular")
    if n_rows * max(n_leaves, 1) > max_cells:
        raise DataValidationError(
            f"The Parquet file declares {n_rows} rows x {n_leaves} columns, more than the "
            f"{max_cells} cells allowed.",
            "too_large",
        )
    index_cols = _parquet_index_columns(schema)
    fields = [(k, f) for k, f in enumerate(schema) if f.name not in index_cols]
    bad = [(f.name, why) for _, f in fields
           if (why := _parquet_kind(f.type, f)) not in ("fixed", "text")]
    if not bad and n_leaves != len(schema):  # a nested index column: leaves no longer map to fields
        bad = [(f.name, f"nested type {f.type}") for f in schema
               if _parquet_kind(f.type, f) not in ("fixed", "text")]
    if bad:
        desc = "; ".join(f"{_short(n)} ({why})" for n, why in bad[:_MAX_LISTED])
        raise DataValidationError(
            f"Unsupported column type in the Parquet file: {desc}. Only numbers (and text, which "
            f"can be dropped) are accepted.",
            "unsupported_column_type",
            columns=[str(n) for n, _ in bad],
        )
    names = [f.name for _, f in fields]
    seen: dict = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    dups = [n for n, k in seen.items() if k > 1]
    if dups:
        raise DataValidationError(
            f"Duplicate column names: {_list(dups)}. Every column needs a unique name.",
            "duplicate_column_name",
            columns=[str(n) for n in dups],
        )
    # Sizes: what the footer declares for the chunks to read, and what decoding them yields.
    declared = 0
    compressed = 0
    decoded = 0
    text_leaves = []
    for k, f in fields:
        for g in range(meta.num_row_groups):
            chunk = meta.row_group(g).column(k)
            u, c = int(chunk.total_uncompressed_size), int(chunk.total_compressed_size)
            if u < 0 or c < 0:
                raise DataValidationError(
                    "The Parquet file's metadata are inconsistent (negative sizes).", "not_tabular")
            declared += u
            compressed += c
        if _parquet_kind(f.type, f) == "text":
            text_leaves.append(k)
            decoded += 4 * n_rows  # dictionary indices; the distinct strings are in `declared`
        else:
            t = f.type.value_type if hasattr(f.type, "value_type") else f.type
            width = 0 if t.id == 0 else max(t.bit_width // 8, 1)  # id 0: the null type
            decoded += width * n_rows
    if compressed > n_bytes:
        raise DataValidationError(
            "The Parquet file's metadata are inconsistent (its column chunks are larger than the "
            "file).", "not_tabular")
    if declared > max_decoded or decoded > max_decoded:
        raise DataValidationError(
            f"The Parquet file expands to {_human_size(max(declared, decoded))} when read "
            f"(declared in its metadata), above the limit of {_human_size(max_decoded)}: a small "
            f"file that decompresses to far more data is refused.",
            "too_large",
        )
    return names, text_leaves


def _read_parquet(data: bytes, *, max_cells: int, max_columns=None, max_decoded: int) -> pd.DataFrame:
    """Parquet bytes to a DataFrame, deciding from the footer what to read before reading it.

    See :func:`_plan_parquet` for the checks. Numeric columns are read as they are (dictionary
    encoded ones cast to their value type: at most 8 bytes per cell); text columns are read as
    dictionaries and become pandas categoricals, never one string per row, so dictionary encoding
    cannot multiply a small file into gigabytes. After reading, the Arrow table's real size is
    checked against the same limit.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    def open_file(read_dictionary=None):
        return pq.ParquetFile(pa.BufferReader(data), read_dictionary=read_dictionary,
                              thrift_string_size_limit=len(data), thrift_container_size_limit=1_000_000,
                              schema_depth_limit=_PARQUET_SCHEMA_DEPTH)

    try:
        names, text_leaves = _plan_parquet(open_file(), len(data), max_cells=max_cells,
                                           max_columns=max_columns, max_decoded=max_decoded)
        pf = open_file(read_dictionary=text_leaves or None)
        table = pf.read(columns=names, use_pandas_metadata=False)
    except DataValidationError:
        raise
    except (pa.ArrowException, OSError, ValueError, TypeError, IndexError, KeyError,
            NotImplementedError) as exc:
        raise DataValidationError(
            f"The Parquet file cannot be read ({type(exc).__name__}: {_exc_text(exc)}).", "not_tabular"
        ) from None
    if table.nbytes > max_decoded:  # the pages said more than the footer: refuse all the same
        raise DataValidationError(
            f"The Parquet file expands to {_human_size(table.nbytes)} when read, above the limit of "
            f"{_human_size(max_decoded)}.",
            "too_large",
        )
    table = table.replace_schema_metadata(None)
    arrays = []
    for i, fld in enumerate(table.schema):
        t = fld.type
        col = table.column(i)
        if pa.types.is_decimal(t):
            try:
                col = col.cast(pa.float64())
            except pa.ArrowException:
                raise DataValidationError(
                    f"Unsupported column type in the Parquet file: {_short(fld.name)} (decimal type "
                    f"{t} that does not fit float64).",
                    "unsupported_column_type", columns=[str(fld.name)]) from None
        elif pa.types.is_dictionary(t) and _parquet_kind(t.value_type, None) == "fixed":
            col = col.cast(t.value_type)  # at most 8 bytes per cell: bounded by the cell limit
        arrays.append(col)
    try:
        plain = pa.Table.from_arrays(arrays, names=[f"c{i}" for i in range(len(arrays))])
        df = plain.to_pandas()
    except (pa.ArrowException, ValueError, TypeError, OverflowError) as exc:
        raise DataValidationError(
            f"The Parquet file cannot be converted to a table ({type(exc).__name__}: {_exc_text(exc)}).",
            "not_tabular",
        ) from None
    objects = [names[j] for j in range(df.shape[1])
               if df.iloc[:, j].dtype == object and not _is_text_series(df.iloc[:, j])]
    if objects:
        raise DataValidationError(
            f"Parquet columns {_list(objects)} hold Python objects; only numbers are accepted.",
            "unsupported_column_type",
            columns=[str(n) for n in objects],
        )
    df.columns = pd.Index([str(n).strip() for n in names], dtype=object)
    df.index = pd.RangeIndex(1, len(df) + 1, name="row")
    return df


def _is_text_series(s: pd.Series) -> bool:
    """True when every non-missing value is a str (object columns from Arrow strings)."""
    values = s.dropna()
    return all(isinstance(v, str) for v in values.to_numpy(dtype=object))
