"""Readable tables of the model checks, for people: the Check page and the HTML report show the same.

The checks of :mod:`colide_core.evaluation.checks` return tables with machine column names
(``normality_p``, ``hetero_p``, ``p_value``, ...) and raw floats; these functions turn them into
tables of text with word headers, p-values written ``"< 0.001"`` or with 3 significant digits,
and ``"—"`` for a missing value. They return plain text (node names and condition labels as
they are): whoever shows a cell escapes it once where it meets HTML (Jinja's autoescape in the
report, Streamlit's table on the page). No drawing library is imported here.
"""
from __future__ import annotations

import math

import pandas as pd

__all__ = ["MISSING", "format_p", "format_number", "residual_table", "markov_table", "condition_table"]

#: Shown for a missing value.
MISSING = "—"


def format_p(p) -> str:
    """A p-value for people: ``"< 0.001"``, else 3 significant digits; ``"—"`` when missing.

    Parameters
    ----------
    p : float or None

    Returns
    -------
    str
        ``"< 0.001"`` for p < 0.001, e.g. ``"0.0123"`` otherwise, :data:`MISSING` for None, NaN
        or a value that is not a number.
    """
    try:
        p = float(p)
    except (TypeError, ValueError):
        return MISSING
    if math.isnan(p):
        return MISSING
    if p < 0.001:
        return "< 0.001"
    return f"{p:.3g}"


def format_number(x, fmt=".3g") -> str:
    """``x`` formatted with ``fmt`` (a :func:`format` spec); :data:`MISSING` when missing or not a number.

    Parameters
    ----------
    x : float or None
    fmt : str, default=".3g"

    Returns
    -------
    str
    """
    try:
        x = float(x)
    except (TypeError, ValueError):
        return MISSING
    return MISSING if math.isnan(x) else format(x, fmt)


def residual_table(table) -> pd.DataFrame:
    """:attr:`colide_core.evaluation.checks.ResidualChecks.table` with word headers and formatted p-values.

    Parameters
    ----------
    table : pandas.DataFrame
        ``node``, ``parents``, ``residual_sd``, ``normality_p``, ``hetero_p``, ``normal``,
        ``homoscedastic``.

    Returns
    -------
    pandas.DataFrame
        Columns "Node", "Parents", "Residual SD", "Gaussian? (p)", "Spread constant? (p)"; text
        cells only (node names as they are).
    """
    return pd.DataFrame({
        "Node": list(table["node"]),
        "Parents": [int(v) for v in table["parents"]],
        "Residual SD": [format_number(v, ".4g") for v in table["residual_sd"]],
        "Gaussian? (p)": [f"{'yes' if ok else 'no'} ({format_p(p)})"
                          for ok, p in zip(table["normal"], table["normality_p"])],
        "Spread constant? (p)": ["— (no parents)" if pd.isna(p) else f"{'yes' if ok else 'no'} ({format_p(p)})"
                                 for ok, p in zip(table["homoscedastic"], table["hetero_p"])],
    })


def markov_table(tests) -> pd.DataFrame:
    """:attr:`colide_core.evaluation.checks.MarkovCheck.tests` with word headers and formatted p-values.

    Parameters
    ----------
    tests : pandas.DataFrame
        ``node``, ``other``, ``given``, ``p_value``, ``rejected``.

    Returns
    -------
    pandas.DataFrame
        Columns "Node", "Independent of", "Given", "p-value", "Rejected?"; text cells only.
    """
    return pd.DataFrame({
        "Node": list(tests["node"]),
        "Independent of": list(tests["other"]),
        "Given": [g if g else MISSING for g in tests["given"]],
        "p-value": [format_p(p) for p in tests["p_value"]],
        "Rejected?": ["rejected" if r else "not rejected" for r in tests["rejected"]],
    })


def condition_table(summary) -> pd.DataFrame:
    """:func:`colide_core.data.stats.condition_summary` with word headers and shifts as signed text.

    Parameters
    ----------
    summary : pandas.DataFrame
        ``condition``, ``n``, ``targets``, ``baseline`` and one float column per node (the
        median shift from the baseline condition in baseline standard deviations).

    Returns
    -------
    pandas.DataFrame
        Columns "Condition", "Rows", "Targets" (``"—"`` for none; "(baseline)" marks the
        baseline), then one column per node with the shift written ``"+0.52"`` (``"—"`` where it
        is undefined); text cells only (labels and node names as they are).
    """
    fixed = ("condition", "n", "targets", "baseline")
    nodes = [c for c in summary.columns if c not in fixed]
    out = pd.DataFrame({
        "Condition": [f"{c} (baseline)" if b else str(c) for c, b in zip(summary["condition"], summary["baseline"])],
        "Rows": [f"{int(v):,}" for v in summary["n"]],
        "Targets": [t if t else MISSING for t in summary["targets"]],
    })
    for k, node in enumerate(nodes):
        # rounded first, + 0.0: a shift of -0.001 reads "+0.00", not "-0.00"
        out.insert(3 + k, str(node), [format_number(round(float(v), 2) + 0.0, "+.2f") for v in summary[node]],
                   allow_duplicates=True)
    return out
