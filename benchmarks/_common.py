"""What the benchmark scripts share: the markdown tables they print and write to ``results/``, and
their resumable JSON-lines records."""
from __future__ import annotations

__all__ = ["append_jsonl", "markdown_table", "read_jsonl"]


def markdown_table(columns, rows) -> list[str]:
    """A paste-ready markdown table, one string per line (without tabulate, which is not a dependency).

    Parameters
    ----------
    columns : iterable
        The header cells, written with :class:`str`.
    rows : iterable of iterable
        The body, one iterable of cells per row, each cell written with :class:`str` as it is
        (format numbers before; no escaping: the benchmarks' cells are their own text).

    Returns
    -------
    list of str
        The header line, the separator (``|---|`` per column) and one line per row, each
        ``"| a | b |"``; join them with ``"\\n"`` to write the table.

    Examples
    --------
    >>> markdown_table(["d", "SHD"], [[10, "3.0"], [20, "5.5"]])
    ['| d | SHD |', '|---|---|', '| 10 | 3.0 |', '| 20 | 5.5 |']
    """
    head = [str(c) for c in columns]
    return [_line(head), "|" + "---|" * len(head)] + [_line(row) for row in rows]


def _line(cells):
    return "| " + " | ".join(str(c) for c in cells) + " |"


def read_jsonl(*paths) -> list[dict]:
    """Every record of the JSON-lines files ``paths`` (a missing file holds none), in order.

    The benchmarks' ``--raw`` files: one fit a line, appended as each ends (:func:`append_jsonl`),
    so a run can be stopped and resumed, or split across processes.
    """
    import json
    from pathlib import Path

    records = []
    for path in paths:
        if path is not None and Path(path).exists():
            records += [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line]
    return records


def append_jsonl(path, record: dict) -> None:
    """Append ``record`` to the JSON-lines file ``path`` as one line (nothing when ``path`` is None)."""
    import json

    if path is not None:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")

