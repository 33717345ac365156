"""Bundled datasets: the Sachs et al. (2005) protein-signalling data and its consensus DAG."""
from __future__ import annotations

from importlib.resources import files

import numpy as np
import pandas as pd

__all__ = ["load_sachs", "SACHS_NODES"]

#: The bundled files, read as package resources (so they work from a wheel, a zip or a checkout).
_BUNDLED = files("colide_core.data") / "bundled"

#: The 11 proteins, in the column order of the shipped data.
SACHS_NODES = ("Raf", "Mek", "Plcg", "PIP2", "PIP3", "Erk", "Akt", "PKA", "PKC", "P38", "Jnk")


def _read(name):
    """A bundled file's text stream (UTF-8), for :func:`pandas.read_csv`."""
    import io

    return io.StringIO((_BUNDLED / name).read_text(encoding="utf-8"))


def load_sachs():
    """Load the Sachs CD3/CD28 observational data and its 17-edge consensus DAG.

    Returns
    -------
    X : pandas.DataFrame of shape (853, 11)
        Raw flow-cytometry intensities (not logged, not standardised), one row per cell
        (``n_samples``) and one column per protein (``n_nodes``), columns named as in
        :data:`SACHS_NODES`.
    B_true : pandas.DataFrame of shape (11, 11), dtype int
        The consensus DAG, 0/1, indexed and labelled by the same names;
        ``B_true.loc[a, b] == 1`` means a -> b. It has 17 edges.

    Raises
    ------
    FileNotFoundError
        If the shipped files in ``colide_core/data/bundled/`` are missing.
    ValueError
        If the shipped files do not have the expected shape or names.

    Notes
    -----
    Source: Sachs, Perez, Pe'er, Lauffenburger and Nolan (2005), Science 308:523-529; the
    rows are the first 853 rows of ``cyto_full_data.csv`` from the ``cdt==0.6.0`` wheel
    (see ``colide_core/data/bundled/README.md``). Parsed with :func:`pandas.read_csv`.
    """
    X = pd.read_csv(_read("sachs.csv"), dtype=np.float64)
    if X.shape != (853, 11) or tuple(X.columns) != SACHS_NODES:
        raise ValueError(f"colide_core/data/bundled/sachs.csv is corrupt: shape {X.shape}, columns {list(X.columns)}.")
    edges = pd.read_csv(_read("sachs_consensus_edges.csv"), dtype=str)
    B_true = pd.DataFrame(0, index=list(SACHS_NODES), columns=list(SACHS_NODES), dtype=int)
    for src, dst in edges[["source", "target"]].itertuples(index=False):
        if src not in B_true.index or dst not in B_true.columns:
            raise ValueError(f"colide_core/data/bundled/sachs_consensus_edges.csv names an unknown node: {src}->{dst}.")
        B_true.loc[src, dst] = 1
    return X, B_true
