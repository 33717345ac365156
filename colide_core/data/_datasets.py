"""Bundled datasets: the Sachs et al. (2005) protein-signalling data, its nine experimental
conditions with their intervention targets, and three published ground-truth DAGs.

The files live in ``colide_core/data/bundled/`` and are read as package resources; their
provenance, licences and checksums are in ``colide_core/data/bundled/README.md``.
"""
from __future__ import annotations

import gzip
import io
from dataclasses import dataclass
from importlib.resources import files
from types import MappingProxyType

import numpy as np
import pandas as pd

from colide_core.exceptions import InvalidParameterError

__all__ = ["load_sachs", "SACHS_NODES", "SACHS_ROWS", "SACHS_TRUTHS", "SachsData"]

#: The bundled files, read as package resources (so they work from a wheel, a zip or a checkout).
_BUNDLED = files("colide_core.data") / "bundled"

#: The 11 proteins, in the column order of the shipped data.
SACHS_NODES = ("Raf", "Mek", "Plcg", "PIP2", "PIP3", "Erk", "Akt", "PKA", "PKC", "P38", "Jnk")

#: Row selections of :func:`load_sachs` and what each holds.
SACHS_ROWS = MappingProxyType({
    "baseline": "CD3/CD28 only: 853 observational rows (the data of the CoLiDE paper).",
    "utigsp": "UT-IGSP's 5,846-row split: CD3/CD28 and CD3/CD28+ICAM-2 (observational) and the five "
              "inhibitions with their targets; PMA and b2cAMP dropped.",
    "all": "All nine conditions, 7,466 rows: the seven of 'utigsp' plus the activators PMA (PKC) and "
           "b2cAMP (PKA).",
})

#: Ground truths of :func:`load_sachs`: name -> (bundled edge list, number of edges, source).
SACHS_TRUTHS = MappingProxyType({
    "consensus17": ("sachs_consensus_edges.csv", 17,
                    "the 17-edge consensus network of the CoLiDE paper (Table 4) and most DAG-learning papers"),
    "utigsp18": ("sachs_truth_utigsp18_edges.csv", 18,
                 "UT-IGSP (Squires, Wang and Uhler, UAI 2020), csquires/utigsp real_data_analysis/sachs/sachs_meta.py"),
    "cmu20": ("sachs_truth_cmu20_edges.csv", 20,
              "CMU example-causal-datasets real/sachs/ground.truth (CC0): the 18 of UT-IGSP plus Erk->Akt "
              "and PKC->PKA"),
})

#: Condition labels of the bundled rows, in file order (the stems of Sachs's nine spreadsheets).
_CONDITIONS = ("cd3cd28", "cd3cd28icam2", "cd3cd28+aktinhib", "cd3cd28+g0076", "cd3cd28+psitect",
               "cd3cd28+u0126", "cd3cd28+ly", "pma", "b2camp")
_N_ROWS = (853, 902, 911, 723, 810, 799, 848, 913, 707)


@dataclass(frozen=True, eq=False)
class SachsData:
    """Sachs data with its condition labels, intervention targets and one ground truth.

    Returned by :func:`load_sachs` when ``rows`` is not ``"baseline"`` (or when
    ``return_record=True``). ``X, B_true = record`` also works (it unpacks like the plain result),
    but then the conditions are dropped: pass ``record.conditions`` and ``record.targets`` to
    :meth:`colide_core.CoLiDE.fit` to use them.

    Attributes
    ----------
    X : pandas.DataFrame of shape (n_samples, 11)
        Raw flow-cytometry intensities (not logged, not standardised), one row per cell, columns
        :data:`SACHS_NODES`; index ``0 .. n_samples - 1``.
    B_true : pandas.DataFrame of shape (11, 11), dtype int
        The chosen ground truth, 0/1; ``B_true.loc[a, b] == 1`` means a -> b.
    conditions : pandas.Series of shape (n_samples,), dtype object (str)
        Each row's condition label (the stem of its original spreadsheet, e.g. ``"cd3cd28+u0126"``),
        aligned with ``X``; named ``"condition"``.
    targets : dict[str, list[str]]
        Condition label -> the nodes it intervenes on, for every condition in ``conditions``
        (an empty list for the observational ones): the ``targets`` argument of
        :meth:`colide_core.CoLiDE.fit`. A fresh dict on every call.
    table : pandas.DataFrame
        One row per condition present, in file order: ``condition``, ``n_rows``, ``first_row`` (in
        the full 7,466-row file), ``targets`` (";"-joined), ``kind`` ("observational",
        "inhibition" or "activation"), ``reagent``, ``utigsp`` ("yes"/"no": part of UT-IGSP's
        split) and ``description``.
    truth_name : str
        A key of :data:`SACHS_TRUTHS`.
    rows : str
        A key of :data:`SACHS_ROWS`.
    """

    X: pd.DataFrame
    B_true: pd.DataFrame
    conditions: pd.Series
    targets: dict
    table: pd.DataFrame
    truth_name: str
    rows: str

    def __iter__(self):
        """Unpack as ``X, B_true`` (the plain :func:`load_sachs` result)."""
        return iter((self.X, self.B_true))


def _read(name):
    """A bundled file's text stream (UTF-8), for :func:`pandas.read_csv`; ``.gz`` files are unzipped."""
    resource = _BUNDLED / name
    if name.endswith(".gz"):
        return io.StringIO(gzip.decompress(resource.read_bytes()).decode("utf-8"))
    return io.StringIO(resource.read_text(encoding="utf-8"))


def _option(value, name, options):
    if not isinstance(value, str) or value not in options:
        raise InvalidParameterError(
            f"{name} must be one of {', '.join(repr(o) for o in options)}; got {value!r}."
        )
    return value


def _truth(name):
    """The bundled edge list ``name`` (a key of SACHS_TRUTHS) as an 11 x 11 0/1 DataFrame."""
    file, n_edges, _ = SACHS_TRUTHS[name]
    edges = pd.read_csv(_read(file), dtype=str)
    B_true = pd.DataFrame(0, index=list(SACHS_NODES), columns=list(SACHS_NODES), dtype=int)
    for src, dst in edges[["source", "target"]].itertuples(index=False):
        if src not in B_true.index or dst not in B_true.columns:
            raise ValueError(f"colide_core/data/bundled/{file} names an unknown node: {src}->{dst}.")
        B_true.loc[src, dst] = 1
    if int(B_true.to_numpy().sum()) != n_edges:
        raise ValueError(f"colide_core/data/bundled/{file} is corrupt: {int(B_true.to_numpy().sum())} edges, "
                         f"expected {n_edges}.")
    return B_true


def _table():
    table = pd.read_csv(_read("sachs_condition_table.csv"), dtype=str, keep_default_na=False)
    table["n_rows"] = table["n_rows"].astype(int)
    table["first_row"] = table["first_row"].astype(int)
    if tuple(table["condition"]) != _CONDITIONS or tuple(table["n_rows"]) != _N_ROWS:
        raise ValueError("colide_core/data/bundled/sachs_condition_table.csv is corrupt.")
    return table


def load_sachs(rows="baseline", truth="consensus17", *, return_record=False):
    """Load the Sachs et al. (2005) protein-signalling data and a ground-truth DAG.

    Parameters
    ----------
    rows : {"baseline", "utigsp", "all"}, default="baseline"
        Which cells (:data:`SACHS_ROWS`):

        * ``"baseline"``: the 853 CD3/CD28 rows, observational (the CoLiDE paper's data);
        * ``"utigsp"``: 5,846 rows, UT-IGSP's split: CD3/CD28 (853) and CD3/CD28 + ICAM-2 (902),
          both observational, and five inhibitions: AKT inhibitor (911 rows, target Akt), G06976
          (723, PKC), psitectorigenin (810, PIP2), U0126 (799, Mek), LY294002 (848, PIP3);
        * ``"all"``: all 7,466 rows: the above plus PMA (913 rows, target PKC) and b2cAMP (707
          rows, target PKA), which activate rather than inhibit and run without CD3/CD28.
    truth : {"consensus17", "utigsp18", "cmu20"}, default="consensus17"
        Which ground truth (:data:`SACHS_TRUTHS`): the 17-edge consensus; UT-IGSP's 18 edges; the
        CMU 20 edges (the 18 plus Erk -> Akt and PKC -> PKA). They disagree; say which you use.
    return_record : bool, default=False, keyword-only
        Return a :class:`SachsData` record even for ``rows="baseline"``.

    Returns
    -------
    X, B_true : tuple of pandas.DataFrame
        When ``rows="baseline"`` and ``return_record`` is False (the default, as before):
        ``X`` of shape (853, 11), raw flow-cytometry intensities (not logged, not standardised),
        one row per cell (``n_samples``) and one column per protein (``n_nodes``), columns named as
        in :data:`SACHS_NODES`; ``B_true`` of shape (11, 11), dtype int, 0/1, indexed and labelled
        by the same names, ``B_true.loc[a, b] == 1`` meaning a -> b.
    record : SachsData
        Otherwise: ``X``, ``B_true``, the per-row ``conditions``, the ``targets`` mapping, the
        per-condition ``table``, ``truth_name`` and ``rows``. It also unpacks as ``X, B_true``.

    Raises
    ------
    sklearn.utils._param_validation.InvalidParameterError
        (a ``ValueError``) if ``rows`` or ``truth`` is not one of the names above, or
        ``return_record`` is not a bool.
    FileNotFoundError
        If the shipped files in ``colide_core/data/bundled/`` are missing.
    ValueError
        If the shipped files do not have the expected shape, names or counts.

    Notes
    -----
    Source: Sachs, Perez, Pe'er, Lauffenburger and Nolan (2005), Science 308:523-529. The rows are
    ``cyto_full_data.csv`` from the ``cdt==0.6.0`` wheel (MIT), the nine original spreadsheets
    joined in file order; the condition blocks were checked value by value against the
    spreadsheets in juangamella/gnies-paper and the indicator columns of
    cmu-phil/example-causal-datasets (see ``colide_core/data/bundled/README.md``). The targets
    follow UT-IGSP (Squires, Wang and Uhler, UAI 2020) for the five inhibitors, and the
    activators' targets (PKC for PMA, PKA for b2cAMP) follow Sachs et al. The LY294002 target is
    PIP3: it inhibits PI3K, which is not measured. Parsed with :func:`pandas.read_csv`.

    Examples
    --------
    >>> X, B_true = load_sachs()                              # doctest: +SKIP
    >>> d = load_sachs(rows="all", truth="utigsp18")          # doctest: +SKIP
    >>> CoLiDE("nv").fit(d.X, conditions=d.conditions, targets=d.targets)  # doctest: +SKIP
    """
    rows = _option(rows, "rows", tuple(SACHS_ROWS))
    truth = _option(truth, "truth", tuple(SACHS_TRUTHS))
    if not isinstance(return_record, (bool, np.bool_)):
        raise InvalidParameterError(f"return_record must be True or False; got {return_record!r}.")
    B_true = _truth(truth)
    if rows == "baseline":
        X = pd.read_csv(_read("sachs.csv"), dtype=np.float64)
        if X.shape != (853, 11) or tuple(X.columns) != SACHS_NODES:
            raise ValueError(f"colide_core/data/bundled/sachs.csv is corrupt: shape {X.shape}, columns {list(X.columns)}.")
        if not return_record:
            return X, B_true
        conditions = pd.Series([_CONDITIONS[0]] * len(X), name="condition", dtype=object)
    else:
        full = pd.read_csv(_read("sachs_conditions.csv.gz"), dtype={"condition": str, **dict.fromkeys(SACHS_NODES, np.float64)})
        if full.shape != (7466, 12) or tuple(full.columns) != ("condition",) + SACHS_NODES \
                or tuple(full["condition"].value_counts(sort=False).reindex(_CONDITIONS)) != _N_ROWS:
            raise ValueError(f"colide_core/data/bundled/sachs_conditions.csv.gz is corrupt: shape {full.shape}.")
        if rows == "utigsp":
            full = full.iloc[:5846]
        X = full[list(SACHS_NODES)].reset_index(drop=True)
        conditions = full["condition"].astype(object).reset_index(drop=True).rename("condition")
    table = _table()
    table = table[table["condition"].isin(set(conditions))].reset_index(drop=True)
    targets = {c: [t for t in ts.split(";") if t] for c, ts in zip(table["condition"], table["targets"])}
    return SachsData(X=X, B_true=B_true, conditions=conditions, targets=targets, table=table,
                     truth_name=truth, rows=rows)
