"""What the benchmark scripts share: the markdown tables they print and write to ``results/``."""
from __future__ import annotations

__all__ = ["markdown_table"]


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
