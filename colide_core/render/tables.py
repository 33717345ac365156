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

import numpy as np
import pandas as pd

__all__ = ["MISSING", "REVERSE_PREFERRED", "REVERSE_STRONG", "format_p", "format_number", "residual_table",
           "markov_table", "condition_table", "prefers_reverse", "edge_verdicts", "disputed_edges"]

#: Shown for a missing value.
MISSING = "—"
#: A ΔBIC if reversed below this says the data prefer the edge's other direction: "positive"
#: evidence on Kass and Raftery's (1995) BIC scale. The edge evidence's verdict then says "the data
#: prefer b → a" (:func:`edge_verdicts`), and the edge is disputed (:func:`disputed_edges`).
REVERSE_PREFERRED = -2.0
#: Below this the evidence for the other direction is "strong" (Kass and Raftery 1995): a problem.
REVERSE_STRONG = -10.0


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


# --------------------------------------------------------------------------------------------
# the edge evidence's verdict (the Check page's "evidence" column, the report's, Learn's marks)
# --------------------------------------------------------------------------------------------

def prefers_reverse(delta_bic_reverse) -> bool:
    """Whether the data prefer an edge's other direction: its ΔBIC if reversed is below
    :data:`REVERSE_PREFERRED`.

    Parameters
    ----------
    delta_bic_reverse : float or None
        BIC of the graph with the edge reversed minus the graph's
        (:func:`colide_core.evaluation.checks.edge_evidence`; NaN when reversing makes a cycle).

    Returns
    -------
    bool
        False for a missing value, NaN or anything that is not a number.

    Examples
    --------
    >>> [prefers_reverse(v) for v in (-6752.6, -2.5, -1.0, 0.0, float("nan"), None)]
    [True, True, False, False, False, False]
    """
    try:
        value = float(delta_bic_reverse)
    except (TypeError, ValueError):
        return False
    return not math.isnan(value) and value < REVERSE_PREFERRED


def edge_verdicts(evidence, scale=None, names=None) -> list:
    """A verdict per edge from its ΔBIC, bootstrap frequency and survival of rescalings: the words
    of the Check page's "evidence" column and of the report's edge evidence table.

    Parameters
    ----------
    evidence : pandas.DataFrame
        :func:`colide_core.evaluation.checks.edge_evidence` (``source``, ``target``,
        ``delta_bic_remove``, optionally ``delta_bic_reverse`` and ``bootstrap_frequency``), one
        row per edge.
    scale : colide_core.evaluation.checks.ScaleSensitivity, optional
        Its ``edge_kept`` (share of rescalings keeping each edge).
    names : list of str, optional
        Node names, to find each edge's indices in ``scale.edge_kept``.

    Returns
    -------
    list of str
        One "strong", "caution: …" or "problem: …" text per row, naming what is weak (words, not
        emoji: a table cell shows text as it is). Node names as they are: escape them where they
        meet HTML or markdown.

    Notes
    -----
    ΔBIC if removed > 10 is strong evidence for the edge, 2-10 positive, <= 2 weak (Kass and
    Raftery 1995, on the BIC scale); a ΔBIC if reversed below :data:`REVERSE_STRONG` (below
    :data:`REVERSE_PREFERRED`, :func:`prefers_reverse`) is strong (positive) evidence for the other
    direction: "the data prefer b → a", a problem (a caution). With one condition a reversal that
    keeps the Markov equivalence class scores 0; interventional data (the conditions and targets of
    :func:`colide_core.evaluation.checks.edge_evidence`) can break that. A bootstrap frequency
    >= 0.7 is stable, < 0.5 unstable; an edge kept in >= 80 % of the rescalings survives them.
    """
    index = {n: k for k, n in enumerate(names or [])}
    out = []
    for row in evidence.itertuples(index=False):
        row = row._asdict()
        worst, why = "ok", []
        dbic = float(row.get("delta_bic_remove", math.nan))
        if not math.isnan(dbic):
            if dbic <= 2:
                worst = "bad"
                why.append(f"ΔBIC {dbic:.1f}: the data barely prefer it")
            elif dbic <= 10:
                worst = "warn"
                why.append(f"ΔBIC {dbic:.1f}: positive, not strong")
        rev = row.get("delta_bic_reverse", math.nan)
        if prefers_reverse(rev):  # the direction is contradicted (conditions break score equivalence)
            rev = float(rev)
            worst = "bad" if rev < REVERSE_STRONG else ("warn" if worst == "ok" else worst)
            why.append(f"the data prefer {row['target']} → {row['source']} (ΔBIC if reversed {rev:,.1f})")
        freq = row.get("bootstrap_frequency")
        if freq is not None and not math.isnan(float(freq)):
            if freq < 0.5:
                worst = "bad"
                why.append(f"in {freq:.0%} of resamples")
            elif freq < 0.7:
                worst = "warn" if worst == "ok" else worst
                why.append(f"in {freq:.0%} of resamples")
        if scale is not None and row["source"] in index and row["target"] in index:
            kept = float(scale.edge_kept[index[row["source"]], index[row["target"]]])
            if kept < 0.8:
                worst = "warn" if worst == "ok" else worst
                why.append(f"kept in {kept:.0%} of rescalings")
        word = {"ok": "strong", "warn": "caution", "bad": "problem"}[worst]
        out.append(word + (f": {'; '.join(why)}" if why else ""))
    return out


def disputed_edges(evidence, names):
    """The edges whose reverse the data prefer: the rows of the edge evidence whose verdict
    (:func:`edge_verdicts`) says "the data prefer b → a", as a mask.

    Parameters
    ----------
    evidence : pandas.DataFrame
        :func:`colide_core.evaluation.checks.edge_evidence` of a learned graph (``source``,
        ``target``, ``delta_bic_reverse``).
    names : sequence of str
        The node names, in the graph's order (``n_nodes`` of them).

    Returns
    -------
    ndarray of bool of shape (n_nodes, n_nodes)
        ``[i, j]`` True when the learned edge i -> j is disputed (:func:`prefers_reverse` of its
        ΔBIC if reversed); rows naming a node not in ``names`` are ignored.

    Examples
    --------
    >>> import pandas as pd
    >>> ev = pd.DataFrame({"source": ["a", "b"], "target": ["b", "c"], "delta_bic_reverse": [-12.0, 0.0]})
    >>> disputed_edges(ev, ["a", "b", "c"]).nonzero()
    (array([0]), array([1]))
    """
    names = [str(n) for n in names]
    index = {n: k for k, n in enumerate(names)}
    out = np.zeros((len(names), len(names)), dtype=bool)
    if "delta_bic_reverse" not in getattr(evidence, "columns", ()):
        return out
    for source, target, rev in zip(evidence["source"], evidence["target"], evidence["delta_bic_reverse"]):
        i, j = index.get(str(source)), index.get(str(target))
        if i is not None and j is not None and prefers_reverse(rev):
            out[i, j] = True
    return out
