"""The current dataset of the dashboard: a frozen record plus the loaders that build one.

Convention (as in ``colide_core``): ``X`` has shape ``(n_samples, n_nodes)`` and a weighted
adjacency ``W[i, j] != 0`` means the edge i -> j.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dashboard.caching import cache_data
from dashboard.infra.limits import (  # noqa: F401 - re-exported: the pages read them from here
    UPLOAD_MAX_COLUMNS, _cpu_limit, fit_device, node_limit, too_large_message)

__all__ = ["Dataset", "content_hash", "make_dataset", "sachs_dataset", "network_dataset", "NETWORK_CAPTION", "dataset_from_upload", "UploadProblem",
           "transformed_dataset", "dataset_transform", "UPLOAD_MAX_COLUMNS", "node_limit", "fit_device",
           "too_large_message"]


@dataclass(frozen=True, eq=False)
class Dataset:
    """One dataset the dashboard works on.

    Attributes
    ----------
    name : str
        Display name (a file name for uploads: user-supplied, escape before rendering).
    X : pandas.DataFrame of shape (n_samples, n_nodes)
        Float64 observations, one column per node.
    B_true : pandas.DataFrame of shape (n_nodes, n_nodes) or None
        Ground-truth DAG (nonzero = edge, ``B_true.iloc[i, j] != 0`` means i -> j), when known.
    sigma_true : ndarray of shape (n_nodes,) or None
        True noise standard deviations, when known (simulated data).
    source : {"sachs", "upload", "simulated", "network", "lesson"}
        Where the data came from ("network": a bnlearn network, :func:`network_dataset`).
    key : str
        SHA-256 content hash of ``X`` (values and names), ``B_true`` and ``sigma_true``;
        used as the cache key of every computation on this dataset.
    notes : tuple of str
        Messages worth showing next to the data (e.g. validation warnings).
    meta : dict
        Free-form extra information (e.g. the simulation parameters).
    design : colide_core.data.design.Design
        The rows' conditions and each condition's targets (``meta["conditions"]``,
        ``meta["targets"]``), validated once when the dataset is made; a design without
        conditions for data of one condition. Covered by ``key`` (it is built from what the
        content hash covers), so cached functions pass it as ``design=ds.design``. Reading it
        raises the :class:`~colide_core.exceptions.ConditionsError` of labels that cannot be used.
    """

    name: str
    X: pd.DataFrame
    B_true: pd.DataFrame | None
    sigma_true: np.ndarray | None
    source: str
    key: str
    notes: tuple = ()
    meta: dict = field(default_factory=dict)
    _design: object = field(init=False, default=None, repr=False)

    def __post_init__(self):
        from colide_core.data.design import Design
        from colide_core.exceptions import ConditionsError

        cond = self.meta.get("conditions")
        try:  # once, here: every page passes this object down instead of the loose labels
            design = Design.create(self.node_names, cond, None if cond is None else self.meta.get("targets"),
                                   n_samples=self.X.shape[0])
        except ConditionsError as exc:  # raised where the design is used, as a fit would have raised it
            design = exc
        object.__setattr__(self, "_design", design)

    @property
    def design(self):
        """colide_core.data.design.Design: the dataset's design (see the class docstring)."""
        if isinstance(self._design, Exception):
            raise self._design
        return self._design

    @property
    def node_names(self) -> list[str]:
        """Column names of ``X`` as strings."""
        return [str(c) for c in self.X.columns]

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_samples, n_nodes)``."""
        return self.X.shape


def content_hash(X: pd.DataFrame, B_true=None, sigma_true=None, *, conditions=None, targets=None) -> str:
    """SHA-256 hex digest identifying a dataset by content.

    Parameters
    ----------
    X : pandas.DataFrame of shape (n_samples, n_nodes)
    B_true : array-like of shape (n_nodes, n_nodes), optional
    sigma_true : array-like of shape (n_nodes,), optional
    conditions : sequence of str of length n_samples, optional
        Each row's condition (the same rows with other conditions are another fit).
    targets : mapping of str -> list of str, optional
        The nodes each condition intervenes on.

    Returns
    -------
    str
        64 hex characters. Equal content (values, shape, column names, ground truth) gives
        equal hashes, and different content different ones: the column names are
        JSON-escaped in a header that also states every array's shape
        (:func:`colide_core.hashing.digest`, the same hash as the manifests' data
        fingerprint), never joined with a separator a name could contain.
    """
    from colide_core.hashing import digest

    values = X.to_numpy(dtype=np.float64)
    extras = [None if e is None else np.asarray(e, dtype=np.float64) for e in (B_true, sigma_true)]
    header = {"X": list(values.shape), "columns": [str(c) for c in X.columns],
              "B_true": None if extras[0] is None else list(extras[0].shape),
              "sigma_true": None if extras[1] is None else list(extras[1].shape)}
    if conditions is not None:  # only then: the keys of data without conditions are unchanged
        header["conditions"] = [str(c) for c in conditions]
        header["targets"] = {str(k): sorted(str(v) for v in vs) for k, vs in sorted((targets or {}).items())}
    return digest("colide-dataset/1", header, [values] + [e for e in extras if e is not None])


def make_dataset(name, X, *, B_true=None, sigma_true=None, source="upload", notes=(), meta=None) -> Dataset:
    """Build a :class:`Dataset`, copying the inputs and computing its content hash.

    Parameters
    ----------
    name : str
    X : pandas.DataFrame of shape (n_samples, n_nodes)
        Numeric data; converted to float64 (a copy, the caller's frame is not modified).
    B_true : array-like or DataFrame of shape (n_nodes, n_nodes), optional
        Ground truth, nonzero = edge; stored as a DataFrame labelled by the column names.
    sigma_true : array-like of shape (n_nodes,), optional
    source : str
    notes : sequence of str
    meta : dict, optional

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        If ``B_true`` or ``sigma_true`` does not match the number of columns of ``X``.
    """
    X = pd.DataFrame(X, copy=False).astype(np.float64).copy()  # one real copy (astype alone is lazy)
    X.columns = [str(c) for c in X.columns]
    d = X.shape[1]
    names = list(X.columns)
    if B_true is not None:
        B = np.asarray(B_true, dtype=np.float64)
        if B.shape != (d, d):
            raise ValueError(f"B_true must have shape ({d}, {d}), got {B.shape}.")
        B_true = pd.DataFrame(B, index=names, columns=names)
    if sigma_true is not None:
        sigma_true = np.asarray(sigma_true, dtype=np.float64).reshape(-1).copy()
        if sigma_true.shape != (d,):
            raise ValueError(f"sigma_true must have {d} entries, got {sigma_true.shape[0]}.")
    meta = dict(meta or {})
    if meta.get("conditions") is not None:
        meta["conditions"] = tuple(str(c) for c in meta["conditions"])
        if len(meta["conditions"]) != len(X):
            raise ValueError(f"{len(meta['conditions'])} condition labels for {len(X)} rows.")
        meta["targets"] = {str(k): [str(v) for v in vs] for k, vs in (meta.get("targets") or {}).items()}
    key = content_hash(X, B_true, sigma_true, conditions=meta.get("conditions"), targets=meta.get("targets"))
    return Dataset(str(name), X, B_true, sigma_true, source, key, tuple(notes), meta)


def oriented_by_interventions(dataset):
    """Which edges an intervention orients: j -> k when some condition targets j or k.

    :func:`colide_core.data.conditions.oriented_by_targets` on the dataset's targets.

    Parameters
    ----------
    dataset : Dataset

    Returns
    -------
    ndarray of bool of shape (n_nodes, n_nodes) or None
        ``M[j, k]`` True when a condition targets node j or node k; None without targets.
    """
    from colide_core.data.conditions import oriented_by_targets  # the one rule, shared with the report

    return oriented_by_targets(dataset.design.targets_by_name() or None, list(dataset.node_names))


#: The Sachs versions offered (``colide_core.load_sachs(rows=...)``) and their names on the pages.
SACHS_ROW_LABELS = {"baseline": "CD3/CD28 only (853 cells, observational)",
                    "utigsp": "UT-IGSP split (5,846 cells: 2 observational + 5 inhibitions)",
                    "all": "All nine conditions (7,466 cells, with interventions)"}
#: The Sachs ground truths (``colide_core.load_sachs(truth=...)``), named by source.
SACHS_TRUTH_LABELS = {"consensus17": "17-edge consensus (Sachs et al. 2005, as in the CoLiDE paper)",
                      "utigsp18": "18 edges of UT-IGSP (Squires et al. 2020)",
                      "cmu20": "20 edges of the CMU causal-datasets repository"}


def sachs_dataset(rows="baseline", truth="consensus17") -> Dataset:
    """The bundled Sachs et al. (2005) data and a ground truth.

    Parameters
    ----------
    rows : {"baseline", "utigsp", "all"}, default "baseline"
        Which cells (:data:`SACHS_ROW_LABELS`); other than the baseline, the dataset carries each
        row's condition and each condition's targets (``meta["conditions"]``, ``meta["targets"]``).
    truth : {"consensus17", "utigsp18", "cmu20"}, default "consensus17"

    Returns
    -------
    Dataset
        Raw intensities (``colide_core.load_sachs``), ``B_true`` the chosen truth.
    """
    import colide_core

    if (rows, truth) != ("baseline", "consensus17"):
        rec = colide_core.load_sachs(rows=rows, truth=truth, return_record=True)
        meta = {"sachs_rows": rows, "truth_name": truth}
        if rows != "baseline":
            meta.update(conditions=list(rec.conditions.astype(str)), targets=dict(rec.targets))
        n_cond = len(set(meta.get("conditions", ()))) or 1
        return make_dataset(f"Sachs ({SACHS_ROW_LABELS[rows]}; truth: {SACHS_TRUTH_LABELS[truth]})"
                            if rows != "baseline" else
                            f"Sachs (CD3/CD28, 853 cells x 11 proteins; truth: {SACHS_TRUTH_LABELS[truth]})",
                            rec.X, B_true=rec.B_true, source="sachs", meta=meta,
                            notes=() if n_cond == 1 else (
                                f"{n_cond} conditions: CoLiDE fits an intercept per condition and masks each "
                                "node's own equation in the conditions that target it (docs/conditions.md).",))
    X, B_true = colide_core.load_sachs()
    return make_dataset(
        "Sachs (CD3/CD28, 853 cells x 11 proteins)",
        X,
        B_true=B_true,
        source="sachs",
        notes=("Raw flow-cytometry intensities (not logged, not standardised). Ground truth: the "
               "17-edge consensus network.",),
    )


#: What the Data page says of the bnlearn networks (plain text, no user string).
NETWORK_CAPTION = ("The bnlearn repository's Gaussian Bayesian networks: graphs and parameters estimated from real "
                   "data in their papers, not validated causal truths. Rows are drawn from each network's linear "
                   "Gaussian SEM, in the scales of its source (magic-irri's coefficients reach |w| = 27 and its "
                   "noise variances 77), read offline from the pgmpy-no-torch 1.0.4 package (docs/networks.md).")


def network_dataset(name, n, seed, n_conditions=0) -> Dataset:
    """Rows of a bnlearn Gaussian network with its true graph and SEM (``colide_core.data.networks``).

    Parameters
    ----------
    name : str
        A key of :data:`colide_core.data.networks.NETWORKS`.
    n : int
        Observational rows (and rows per interventional condition).
    seed : int
    n_conditions : int, default 0
        Interventional conditions, each a hard intervention on one node drawn at random
        (``load_network(interventions=...)``); 0: observational data.

    Returns
    -------
    Dataset
        ``source="network"``; ``B_true`` the network's arcs, ``sigma_true`` its noise standard
        deviations; ``meta`` holds ``network``, ``n``, ``seed``, ``n_conditions``, ``W_true``,
        ``intercepts``, ``varsortability`` (of the drawn rows) and, with interventions, the
        conditions and targets.

    Raises
    ------
    colide_core.exceptions.MissingExtraError
        Without the ``networks`` extra.
    ValueError
        For a size the library refuses.
    """
    from colide_core.data.networks import NETWORKS, load_network
    from colide_core.data.simulate import varsortability

    k = int(n_conditions)
    data = load_network(name, int(n), int(seed),
                        interventions={"n_conditions": k, "n_targets": 1} if k else None)
    info = NETWORKS[data.name]
    meta = {"network": data.name, "n": int(n), "seed": int(seed), "n_conditions": k, "W_true": data.W_true,
            "intercepts": data.intercepts,
            "varsortability": float(varsortability(data.X.iloc[:int(n)], data.W_true))}
    if data.conditions is not None:
        meta.update(conditions=[str(c) for c in data.conditions], targets=data.targets)
    rows = f"n={int(n):,}" if not k else f"n={int(n):,} per condition, {k} interventional ({len(data.X):,} rows)"
    return make_dataset(f"bnlearn {data.name} ({info.nodes} nodes, {info.arcs} arcs; {rows}; seed {int(seed)})",
                        data.X, B_true=data.B_true, sigma_true=data.noise_std, source="network", meta=meta,
                        notes=(f"{info.title}: {info.source}. " + NETWORK_CAPTION,))


from dashboard.infra.errors import UploadProblem  # noqa: E402,F401 - re-exported (its old home; dashboard/infra/errors.py)


def upload_columns(data: bytes, filename: str) -> list:
    """The column names of an uploaded table (for the condition-column picker), or [] if unreadable.

    Parameters
    ----------
    data : bytes
    filename : str

    Returns
    -------
    list of str
    """
    from colide_core import io as cio

    try:
        df = cio.read_table(data, filename, max_columns=UPLOAD_MAX_COLUMNS)
    except Exception:  # noqa: BLE001 - the upload's own message says why
        return []
    return [str(c) for c in df.columns]


def dataset_from_upload(data: bytes, filename: str, *, drop_non_numeric=False,
                        drop_nonfinite_rows=False, drop_constant_columns=False, condition_column=None,
                        targets_text=None) -> Dataset:
    """Parse and validate an uploaded table with ``colide_core.data.io``.

    Parameters
    ----------
    data : bytes
        The raw file content (never unpickled: only CSV/TSV/Parquet are read).
    filename : str
        User-supplied file name (used for format sniffing and as the dataset name).
    drop_non_numeric, drop_nonfinite_rows, drop_constant_columns : bool
        Passed to ``colide_core.data.io.validate_data``; what they dropped is kept in the
        dataset's ``meta["upload"]`` (and so in the run manifest).
    condition_column : str, optional
        The column holding each row's condition (text or integers; not a node): the dataset then
        carries the conditions (``meta["conditions"]``), checked by
        ``colide_core.data.conditions.check_conditions``.
    targets_text : str, optional
        The nodes each condition targets: JSON ``{condition: [node, ...]}`` or CSV
        ``condition,target`` rows (``colide_core.data.conditions.read_targets``, size bounded),
        checked against the conditions and the nodes (``check_targets``).

    Returns
    -------
    Dataset

    Raises
    ------
    UploadProblem
        With a message naming the problem (non-numeric columns, NaN/Inf, constant columns,
        too few rows or columns, unreadable file), or saying that upload support is missing.
    """
    try:
        from colide_core import io as cio
    except ImportError:
        raise UploadProblem(
            "Uploading is not available yet: this installation has no `colide_core.data.io` module "
            "(read_table / validate_data). The bundled Sachs data is still loaded."
        ) from None
    fixes = {"drop_non_numeric": bool(drop_non_numeric), "drop_nonfinite_rows": bool(drop_nonfinite_rows),
             "drop_constant_columns": bool(drop_constant_columns)}
    try:
        # the header is counted before the file is parsed (issue 30: a 10,000-column file was parsed in
        # full, 4.5 s and 1 GB, before being refused); room is left for columns the user drops
        df = cio.read_table(data, filename, max_columns=UPLOAD_MAX_COLUMNS)
    except cio.DataValidationError as exc:
        if exc.kind != "too_many_nodes":
            raise UploadProblem(str(exc)) from None
        if node_limit() <= _cpu_limit():  # no GPU (probed only now)
            raise UploadProblem(f"{exc} {too_large_message(UPLOAD_MAX_COLUMNS + 1, at_least=True)}") from None
        try:  # a GPU is present (probed only now): room for its limit, and for columns dropped
            df = cio.read_table(data, filename, max_columns=2 * node_limit())
        except cio.DataValidationError as exc2:
            raise UploadProblem(str(exc2)) from None
    # the GPU is probed only for files with more columns than the CPU limit (dashboard.data.node_limit)
    max_nodes = node_limit(len(df.columns))
    labels = None
    if condition_column is not None:
        names_in = [str(c) for c in df.columns]
        if names_in.count(str(condition_column)) != 1:
            raise UploadProblem(f"the condition column {str(condition_column)[:80]!r} is not a column of this file")
        at = names_in.index(str(condition_column))
        labels = df.iloc[:, at]
        df = df.drop(columns=df.columns[at])
    if targets_text and labels is None:
        raise UploadProblem("intervention targets need a condition column (each row's condition)")
    try:
        validated = cio.validate_data(df, max_nodes=max_nodes, **fixes)
    except cio.DataValidationError as exc:
        if exc.kind == "too_many_nodes":  # what a fit at that size would cost here, and what a GPU changes
            raise UploadProblem(f"{exc} {too_large_message(len(exc.columns))}") from None
        # every problem at once, each with its fix (a user used to meet them one at a time)
        raise UploadProblem(str(exc), cio.data_problems(df, max_nodes=max_nodes, **fixes)) from None
    notes = tuple(str(w) for w in getattr(validated, "warnings", ()))
    meta = {"upload": {**fixes, "dropped_columns": [str(c) for c in validated.dropped_columns],
                       "dropped_rows": int(validated.dropped_rows)}}
    if labels is not None:
        from colide_core import defaults
        from colide_core.data.conditions import read_targets
        from colide_core.data.design import Design
        from colide_core.exceptions import ConditionsError

        kept = labels.loc[validated.X.index]  # the rows validate_data kept
        names = [str(c) for c in validated.X.columns]
        try:
            got = Design.create(names, kept, n_samples=len(kept)).labels  # the labels first: their count is bounded
            if len(got) > defaults.MAX_CONDITIONS_DASHBOARD:  # issue 42: every fit builds their statistics
                raise ConditionsError(
                    f"{len(got):,} distinct conditions in column {str(condition_column)[:80]!r}, more than the "
                    f"{defaults.MAX_CONDITIONS_DASHBOARD} this app takes: each fit here keeps a covariance per "
                    "condition (at 1,000 conditions of 200 nodes, 320 MB for each fit and bootstrap worker). "
                    "Merge rare conditions into one, or fit with the command line (colide fit DATA --conditions "
                    f"COLUMN), which takes up to {defaults.MAX_CONDITIONS:,}.", "too_many_conditions")
            text = str(targets_text or "").strip()
            if text and not text.startswith("{") and "condition" not in text.splitlines()[0].lower():
                text = "condition,target\n" + text  # CSV lines typed without their header
            targets = {} if not text else read_targets(text, "targets.json" if text.startswith("{") else "targets.csv")
            design = Design.create(names, kept, targets, n_samples=len(kept))  # the Dataset's own validation
        except ConditionsError as exc:
            raise UploadProblem(f"conditions: {exc}") from None
        meta.update(conditions=list(design.row_labels()), targets={str(k): [str(v) for v in vs]
                                                                  for k, vs in targets.items()},
                    conditions_column=str(condition_column))
        notes += (f"{len(got)} conditions from column {str(condition_column)[:80]!r}: an intercept per condition"
                  + (", targets masked." if targets else "."),)
    meta["upload_file"] = str(filename)  # the raw file a printed `fit` command reads (Reproduction)
    return make_dataset(filename, validated.X, source="upload", notes=notes, meta=meta)


def dataset_transform(dataset) -> list:
    """The transform steps applied to a dataset so far (``meta["transform"]``; ``[]`` for raw data).

    Parameters
    ----------
    dataset : Dataset

    Returns
    -------
    list of dict
        :func:`colide_core.data.transforms.transform_step` records, oldest first.
    """
    return [dict(s) for s in dataset.meta.get("transform", ())]


def repeated_transform(dataset, kind):
    """Why applying ``kind`` to ``dataset`` now is refused (None: it is allowed).

    The same transform twice is never what a user means: log twice gives log(log x) silently, and a
    second z-score changes nothing (issue 28). Other sequences (log, then standardise) are allowed.

    Parameters
    ----------
    dataset : Dataset
    kind : {"log", "asinh", "standardize"}

    Returns
    -------
    str or None
    """
    if any(step.get("kind") == kind for step in dataset_transform(dataset)):
        return (f"{kind} is already applied to these data; applying it again would transform the transformed "
                "values. Undo it first to apply it with other settings.")
    return None


def undo_transform(dataset, raw):
    """``dataset`` without its last transform step, recomputed from the raw data.

    Parameters
    ----------
    dataset : Dataset
        The current, transformed dataset (``meta["transform"]`` non-empty).
    raw : Dataset
        The data before any transform (its key is ``dataset.meta["transform_base"]``).

    Returns
    -------
    Dataset
        ``raw`` itself when one step was applied, else ``raw`` with the remaining steps applied again.

    Raises
    ------
    ValueError
        If ``raw`` is not the data ``dataset`` was transformed from, or nothing was transformed.
    """
    steps = dataset_transform(dataset)
    if not steps:
        raise ValueError("these data are not transformed: there is nothing to undo")
    if dataset.meta.get("transform_base") != raw.key:
        raise ValueError("the raw data these were transformed from are no longer held")
    out = raw
    for step in steps[:-1]:
        out = transformed_dataset(out, step["kind"], cofactor=step.get("cofactor"))
    return out


def transformed_dataset(dataset, kind, *, cofactor=None) -> Dataset:
    """A new :class:`Dataset` holding ``dataset``'s columns transformed (log, asinh or z-score).

    Parameters
    ----------
    dataset : Dataset
        The current dataset (``X`` of shape (n_samples, n_nodes)); not modified.
    kind : {"log", "asinh", "standardize"}
        See :func:`colide_core.data.transforms.transform_columns`.
    cofactor : float, optional
        For ``"asinh"`` (default :data:`colide_core.data.transforms.ASINH_COFACTOR`).

    Returns
    -------
    Dataset
        Same source and ground-truth graph ``B_true`` (a monotone transform of each variable keeps
        the causal graph); its own content hash; the name says the transform; ``meta["transform"]``
        lists every step so far (recorded in the run manifest). The true noise scales
        ``sigma_true`` are divided by each column's standard deviation for ``"standardize"``
        (exact), and dropped for log and asinh (no longer defined); a simulated dataset's
        ``meta["W_true"]`` is rescaled likewise (``W[i, j] s_i / s_j``) for ``"standardize"`` and
        kept for log and asinh (the weights that generated the raw data: the true graph).

    Raises
    ------
    ValueError
        From :func:`colide_core.data.transforms.transform_columns` (values <= 0 for log, a constant
        column, a bad cofactor, an unknown kind).
    """
    from colide_core.data.transforms import describe_step, transform_columns, transform_step

    step = transform_step(kind, cofactor=cofactor)
    X = transform_columns(dataset.X, step["kind"], cofactor=step.get("cofactor"))
    meta = dict(dataset.meta)
    meta.setdefault("transform_base", dataset.key)  # the raw data's key: Undo starts again from it
    meta["transform"] = dataset_transform(dataset) + [step]
    sigma_true = None
    if step["kind"] == "standardize":
        sd = dataset.X.to_numpy(dtype=np.float64).std(axis=0)
        if dataset.sigma_true is not None:
            sigma_true = np.asarray(dataset.sigma_true, dtype=np.float64) / sd
        if meta.get("W_true") is not None:
            meta["W_true"] = np.asarray(meta["W_true"], dtype=np.float64) * sd[:, None] / sd[None, :]
    for stale in ("varsortability",):  # a property of the raw units
        meta.pop(stale, None)
    notes = tuple(dataset.notes) + (f"Transformed: {describe_step(step)} of every column.",)
    return make_dataset(f"{dataset.name} · {describe_step(step)}", X, B_true=dataset.B_true,
                        sigma_true=sigma_true, source=dataset.source, notes=notes, meta=meta)


def rows_and_truth(dataset) -> str:
    """One line saying which rows a fit on ``dataset`` uses and which truth scores it.

    Parameters
    ----------
    dataset : Dataset

    Returns
    -------
    str
        E.g. ``"7,466 rows in 9 conditions (7 with targets) · truth: 18 edges of UT-IGSP (Squires
        et al. 2020)"``; plain text (node and condition names are not in it).
    """
    n = dataset.shape[0]
    design = dataset.design
    if not design.has_conditions:
        rows = f"{n:,} rows"
    else:
        k, t = len(design.labels), len(design.targets_by_name())
        rows = f"{n:,} rows in {k} conditions ({t} with targets)"
    if dataset.B_true is None:
        return rows + " · no ground truth"
    name = dataset.meta.get("truth_name")
    if dataset.source == "sachs":
        return rows + " · truth: " + SACHS_TRUTH_LABELS[name or "consensus17"]
    if dataset.source == "network":
        return rows + f" · truth: the {int((dataset.B_true.to_numpy() != 0).sum())} arcs of bnlearn's {dataset.meta['network']}"
    return rows + f" · truth: {int((dataset.B_true.to_numpy() != 0).sum())}-edge " + (
        "simulated graph" if dataset.source == "simulated" else "graph given with the data")


def data_as_fitted(dataset) -> "Reproduction":
    """The files and command that reproduce a fit of ``dataset``, built once per dataset.

    Cached by :func:`cached_data_as_fitted` around :func:`build_data_as_fitted`.

    Parameters
    ----------
    dataset : Dataset

    Returns
    -------
    Reproduction
    """
    return cached_data_as_fitted(dataset)


@cache_data(show_spinner=False, max_entries=8, unhashed={
    "_dataset": "key is the dataset's content hash (the rows, the conditions and the targets); the name, the "
                "condition column's name, the source and the upload's file name, the other inputs, are the other "
                "parameters"})
def _data_as_fitted(key, name, column, source, upload_file, _dataset):
    return build_data_as_fitted(_dataset)


def cached_data_as_fitted(dataset):
    """:func:`build_data_as_fitted`, cached on the dataset's key, name, condition column,
    source and upload file name.

    The file holds every row and its condition label: built once per dataset, not on every rerun
    of the page that offers it (issue 42: about 0.1 s for nine-condition Sachs).

    Parameters
    ----------
    dataset : dashboard.data.Dataset

    Returns
    -------
    dashboard.data.Reproduction
        See :func:`dashboard.data.data_as_fitted`.
    """
    return _data_as_fitted(dataset.key, str(dataset.name), dataset.meta.get("conditions_column"), dataset.source,
                           dataset.meta.get("upload_file"), dataset)


#: At most this many characters of a download's name come from the dataset (issue 48, M-2): the
#: rest (noise model, λ, threshold, transforms, "as_fitted") is never cut.
DATASET_STEM_MAX = 40


def dataset_stem(dataset) -> str:
    """A short file-name stem that identifies ``dataset``: its source, rows, truth and transforms.

    Bundled Sachs is ``Sachs`` / ``Sachs9`` (nine conditions) / ``SachsUTIGSP`` with its truth
    (``Sachs9_utigsp18``); an upload is its file's stem; a simulation its name. The user-text part
    is cut to :data:`DATASET_STEM_MAX` characters; the transforms (``_asinh5``, ``_log``, ``_z``)
    follow it uncut.

    Parameters
    ----------
    dataset : Dataset

    Returns
    -------
    str
        Only ``A-Za-z0-9._-`` (:func:`dashboard.infra.text.safe_filename`).

    Examples
    --------
    >>> import pandas as pd
    >>> ds = make_dataset("Sachs (x)", pd.DataFrame({"a": [1.0, 2.0], "b": [0.5, 1.0]}), source="sachs",
    ...                   meta={"sachs_rows": "all", "truth_name": "utigsp18", "transform": [{"kind": "asinh", "cofactor": 5.0}]})
    >>> dataset_stem(ds)
    'Sachs9_utigsp18_asinh5'
    """
    from dashboard.infra.text import safe_filename

    meta = dataset.meta
    if dataset.source == "sachs":
        rows = {"all": "Sachs9", "utigsp": "SachsUTIGSP"}.get(meta.get("sachs_rows"), "Sachs")
        base = f"{rows}_{meta.get('truth_name') or 'consensus17'}"
    elif dataset.source == "upload" and meta.get("upload_file"):
        base = str(meta["upload_file"]).rsplit(".", 1)[0]
    elif dataset.source == "network" and meta.get("network"):
        base = f"{meta['network']}_n{meta['n']}_seed{meta['seed']}" + (
            f"_iv{meta['n_conditions']}" if meta.get("n_conditions") else "")
    else:
        base = str(dataset.name).split(" · ")[0]
    base = safe_filename(base, max_len=DATASET_STEM_MAX)
    for step in meta.get("transform", ()):
        kind = {"standardize": "z"}.get(step["kind"], step["kind"])
        base += f"_{kind}{step['cofactor']:g}" if step.get("cofactor") is not None else f"_{kind}"
    return base


def download_name(dataset, *parts, ext) -> str:
    """A download's file name: :func:`dataset_stem`, then ``parts`` (the noise model, λ,
    threshold, ...) uncut, then ``ext``; ``colide_`` in front.

    Parameters
    ----------
    dataset : Dataset
    *parts : str
        E.g. ``"nv"``, ``"lambda0.05"``, ``"thr0.3"``.
    ext : str
        E.g. ``"_edges.csv"``, ``".graphml"``.

    Returns
    -------
    str
        Safe characters only; distinct for distinct ``parts`` whatever the dataset's name.
    """
    from dashboard.infra.text import safe_filename

    tail = "_".join(safe_filename(str(p), max_len=60) for p in parts)
    return f"colide_{dataset_stem(dataset)}" + (f"_{tail}" if tail else "") + ext


def _fitted_stem(dataset) -> str:
    return f"colide_{dataset_stem(dataset)}_as_fitted"


@dataclass(frozen=True)
class Reproduction:
    """The one pairing of a printed ``fit`` command and the data file it reads (issue 48, B-1).

    Attributes
    ----------
    data_name : str
        The file the command reads: an upload's own file name (the raw file: the command replays
        its cleaning and transforms), else the "data as fitted" download (already transformed: the
        command replays nothing).
    replay : bool
        Whether the command replays the recorded cleaning and transform steps.
    file_name : str
        The "data as fitted" download's file name (safe characters; ``== data_name`` unless
        ``replay``).
    csv : bytes
        The data as fitted: the nodes, then the condition column (formula-like cells neutralised
        by ``colide_core.graph.export.to_csv_safe``); floats written exactly (shortest repr).
    targets_name : str
        ``"targets.json"``, the name the command's ``--targets`` gives.
    targets : bytes or None
        ``{condition: [node, ...]}`` as JSON, None without targets.
    """

    data_name: str
    replay: bool
    file_name: str
    csv: bytes
    targets_name: str
    targets: bytes | None

    def command(self, manifest, manifest_name="manifest.json") -> str:
        """The shell command that refits ``manifest``'s fit from :attr:`data_name`.

        Parameters
        ----------
        manifest : dict
            The fit's run manifest (:func:`dashboard.manifests.fit_manifest`).
        manifest_name : str, default "manifest.json"
            The name the manifest is downloaded under (its ``--prior`` file).

        Returns
        -------
        str
            From :func:`colide_core.run.manifest.fit_command` with this file and ``replay``;
            a sentence in parentheses when no single command can be exact.
        """
        from colide_core.run.manifest import fit_command

        try:
            return fit_command(manifest, self.data_name, manifest_name=manifest_name, replay=self.replay)
        except ValueError as exc:
            return f"(no single command reproduces this fit: {exc}; load its manifest instead)"


def build_data_as_fitted(dataset) -> Reproduction:
    """The data file and command that reproduce a fit of ``dataset`` (uncached).

    One function decides both what the printed ``fit`` command reads and whether it replays the
    preprocessing, so the two cannot disagree: an upload's command names the user's own raw
    file (recorded at upload, ``meta["upload_file"]``) and replays its cleaning and transforms;
    every other dataset's command names the "data as fitted" download, which holds the
    transformed values, and replays nothing.

    Parameters
    ----------
    dataset : Dataset

    Returns
    -------
    Reproduction
    """
    import json

    from colide_core.graph.export import to_csv_safe

    frame = dataset.X.copy()
    design = dataset.design
    if design.has_conditions:
        column = str(dataset.meta.get("conditions_column") or "condition")
        frame[column] = list(design.row_labels())
    file_name = f"{_fitted_stem(dataset)}.csv"
    targets = design.targets_by_name()
    upload = dataset.source == "upload"
    return Reproduction(
        data_name=str(dataset.meta.get("upload_file") or dataset.name) if upload else file_name, replay=upload,
        file_name=file_name, csv=to_csv_safe(frame, index=False).encode("utf-8"), targets_name="targets.json",
        targets=None if not targets else json.dumps(targets, indent=1).encode("utf-8"))


def command_data_file(dataset) -> str:
    """The data file a printed ``fit`` command names for ``dataset`` (:attr:`Reproduction.data_name`)."""
    return data_as_fitted(dataset).data_name
