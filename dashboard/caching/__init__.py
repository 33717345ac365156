"""The dashboard's one caching policy: :func:`cache_data` and its hash functions.

A ``st.cache_data`` entry is shared by every session of the server, so a cache key that leaves
out part of what the function returns lets one session change what another one sees or
downloads. :func:`cache_data` is ``st.cache_data`` with two rules that make the key cover the
output:

* **full hashes.** Streamlit hashes a numpy array of 500,000 values or more, and a data frame
  of 50,000 rows or more, from a fixed random *sample* of its values; :data:`HASH_FUNCS`
  hashes arrays and frames in full (:func:`colide_core.hashing.canonical`), a
  :class:`dashboard.data.Dataset` by its content hash *and* its name, source, notes and meta,
  and a :class:`dashboard.fitting.FitResult` by :attr:`~dashboard.fitting.FitResult.content_key`
  (every field of the record, the solver's ``W``, ``sigma`` and history included).
* **no silent holes.** Streamlit leaves every parameter whose name starts with ``_`` out of the
  key. :func:`cache_data` refuses such a parameter unless the decorator names it in
  ``unhashed`` with the reason why the output does not depend on it beyond the hashed
  parameters (e.g. ``_X`` whose content hash is the ``data_key`` parameter).

This module imports no other module of the dashboard, so every adapter can cache through it
(issue 47: :mod:`dashboard.data` and :mod:`dashboard.caching.cached` imported each other for it); the
cached renderers are in :mod:`dashboard.caching.cached`, which re-exports these names.
``tests/test_security_cache.py`` checks that every cached function of ``dashboard/`` and
``pages/`` follows these rules.
"""
from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import streamlit as st

from colide_core.hashing import fingerprint

__all__ = ["HASH_FUNCS", "UNHASHED", "cache_data", "dataset_cache_key"]


def dataset_cache_key(dataset) -> str:
    """What a cached function may read of a :class:`dashboard.data.Dataset`, as one SHA-256.

    Parameters
    ----------
    dataset : dashboard.data.Dataset

    Returns
    -------
    str
        The digest of ``key`` (the content hash of ``X``, its column names, ``B_true`` and
        ``sigma_true``), ``name``, ``source``, ``notes`` and ``meta``: two datasets with the
        same numbers under different file names get different keys.
    """
    # meta's per-row condition labels and targets are left to ``key``: the content hash covers them
    # (dashboard.data.make_dataset), so they are hashed once per dataset, not on every rerun that
    # calls a cached function of it (issue 42: 7,466 labels, about 6 ms a call)
    meta = {k: v for k, v in dataset.meta.items() if k not in _IN_CONTENT_HASH}
    return fingerprint("colide-dataset-view/2", {
        "key": dataset.key, "name": dataset.name, "source": dataset.source,
        "notes": list(dataset.notes), "meta": meta})


#: ``Dataset.meta`` entries that ``Dataset.key`` (:func:`dashboard.data.content_hash`) already covers.
_IN_CONTENT_HASH = ("conditions", "targets")


def _full(obj) -> str:
    return fingerprint("colide-cache-value/1", obj)


#: ``hash_funcs`` of every cached function: full hashes, no sampling, no field left out.
HASH_FUNCS = {
    np.ndarray: _full,
    pd.DataFrame: _full,
    pd.Series: _full,
    "dashboard.data.Dataset": dataset_cache_key,
    "dashboard.fitting.FitResult": lambda result: result.content_key,
}

#: Qualified name of each function decorated with :func:`cache_data` -> its ``unhashed`` reasons.
UNHASHED: dict = {}


def cache_data(*, unhashed=None, **kwargs):
    """``st.cache_data`` with :data:`HASH_FUNCS`, refusing unexplained unhashed parameters.

    Parameters
    ----------
    unhashed : dict of str to str, optional
        Parameter name (starting with ``_``) -> why the output does not depend on it beyond
        the hashed parameters. Every ``_``-parameter of the function must be listed, and
        nothing else.
    **kwargs
        Passed to ``st.cache_data`` (``show_spinner``, ``max_entries``, ...).

    Returns
    -------
    callable
        The decorator.

    Raises
    ------
    TypeError
        At decoration time, if the function has a ``_``-parameter not in ``unhashed`` (or
        ``unhashed`` names a parameter that is not a ``_``-parameter of the function).
    """
    unhashed = dict(unhashed or {})

    def decorate(fn):
        hidden = {p for p in inspect.signature(fn).parameters if p.startswith("_")}
        if hidden != set(unhashed):
            raise TypeError(
                f"{fn.__qualname__}: Streamlit leaves the parameters {sorted(hidden)} out of the cache key; "
                f"list each in unhashed= with the reason the output does not depend on it (listed: "
                f"{sorted(unhashed)})")
        UNHASHED[f"{fn.__module__}.{fn.__qualname__}"] = unhashed
        return st.cache_data(hash_funcs=HASH_FUNCS, **kwargs)(fn)

    return decorate
