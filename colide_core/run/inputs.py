"""What the CLI's commands read: the data and its design, the targets, the truth, the prior
knowledge, a manifest's recorded design and preprocessing, and the run settings given as flags.

:mod:`colide_core.run.commands` (``fit``, ``simulate``, ``bench``) and
:mod:`colide_core.run.design_commands` (``report``, ``predict``, ``plan``) read their inputs
through these functions, so every command reads a file, a design and a manifest the same way.
Every failure is a :class:`colide_core.run.outputs.UsageError` with a message, never a traceback.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from colide_core import defaults
from colide_core.run.outputs import UsageError, _printable

__all__ = ["DROP_KEYS", "PreparedData", "check_given_settings", "fitted_from_manifest", "prepare_data",
           "prior_flag", "read_manifest", "transform_steps"]

#: The dropping flags of ``fit`` (``validate_data``'s keywords), recorded under ``extra.preprocess``.
DROP_KEYS = ("drop_non_numeric", "drop_nonfinite_rows", "drop_constant_columns")


# --------------------------------------------------------------------------------------------
# files
# --------------------------------------------------------------------------------------------

def _read_prior(path):
    """CoLiDE keyword arguments (forbidden, required, tiers) from a constraints file or a run manifest."""
    from colide_core.data.io import JSON_MAX_BYTES
    from colide_core.graph.constraints import PriorKnowledge

    if not path.is_file():
        raise UsageError(f"--prior file not found: {path}")
    if path.stat().st_size > JSON_MAX_BYTES:
        raise UsageError(f"--prior {path.name}: larger than {JSON_MAX_BYTES:,} bytes")
    data = path.read_bytes()
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        doc = None
    if isinstance(doc, dict) and "params" in doc and "schema" in doc:  # a run manifest
        from colide_core.run.manifest import ManifestError, load_manifest

        try:
            params = load_manifest(data).params
        except ManifestError as exc:
            raise UsageError(f"--prior {path.name}: {exc}") from None
        return {k: params[k] for k in ("forbidden", "required", "tiers") if params.get(k)}
    try:
        return PriorKnowledge.from_json(data).as_kwargs()
    except ValueError as exc:
        raise UsageError(f"--prior {path.name}: {exc}") from None


def prior_flag(args, manifest=None):
    """The prior knowledge of ``--prior`` as CoLiDE keyword arguments, read before any data.

    Parameters
    ----------
    args : argparse.Namespace
        With ``prior`` (a path or None; a command without the flag counts as not given).
    manifest : pathlib.Path, optional
        ``--manifest``: its fit carries its own prior knowledge, so ``--prior`` is refused beside it.

    Returns
    -------
    dict
        ``forbidden`` / ``required`` / ``tiers`` (empty without ``--prior``).

    Raises
    ------
    UsageError
        For a missing, oversized or malformed file, or ``--prior`` next to ``--manifest``.
    """
    path = getattr(args, "prior", None)
    if path is None:
        return {}
    if manifest is not None:
        raise UsageError(f"--prior: the prior knowledge of the fit is recorded in --manifest {manifest.name}; "
                         "leave --prior out")
    return _read_prior(path)


def _read_data(path, columns, drop_non_numeric, condition_column=None, columns_from="--columns", **drops):
    """The validated data; with ``condition_column``, ``(validated data, row labels)``."""
    from colide_core.data.io import DataValidationError, read_table, validate_data

    if not path.is_file():
        raise UsageError(f"data file not found: {path}")
    raw = path.read_bytes()
    try:
        df = read_table(raw, path.name, max_bytes=len(raw) + 1)
        if condition_column is not None:
            stripped = [str(x).strip() for x in df.columns]
            if stripped.count(str(condition_column).strip()) != 1:
                raise UsageError(f"--conditions: no column {_printable(condition_column)!r} (exactly one) in {path.name}")
            at = stripped.index(str(condition_column).strip())
            labels = df.iloc[:, at].copy()
            df = df.drop(columns=df.columns[at])
            vd = _read_data_frame(df, path, columns, drop_non_numeric, columns_from, **drops)
            # rows dropped while validating (--drop-nonfinite-rows) take their condition labels with
            # them: the index of the validated data is the file's row numbers
            return vd, labels.loc[vd.X.index].reset_index(drop=True)
        return _read_data_frame(df, path, columns, drop_non_numeric, columns_from, **drops)
    except DataValidationError as exc:
        raise UsageError(f"{path.name}: {exc}") from None


def _read_data_frame(df, path, columns, drop_non_numeric, columns_from="--columns", **drops):
    from colide_core.data.io import validate_data

    if columns is not None:
        missing = [c for c in columns if c not in [str(x).strip() for x in df.columns]]
        if missing:
            raise UsageError(f"{columns_from}: not in {path.name}: {_printable(', '.join(map(str, missing[:10])))}")
        df = df.rename(columns=lambda c: str(c).strip())[columns]
    return validate_data(df, min_rows=2, drop_non_numeric=drop_non_numeric,
                         drop_nonfinite_rows=bool(drops.get("drop_nonfinite_rows")),
                         drop_constant_columns=bool(drops.get("drop_constant_columns")))


def _read_targets_file(path):
    from colide_core import defaults
    from colide_core.data.conditions import read_targets

    if not path.is_file():
        raise UsageError(f"--targets file not found: {path}")
    if path.stat().st_size > defaults.MAX_TARGETS_FILE_BYTES:
        raise UsageError(f"--targets {path.name}: larger than {defaults.MAX_TARGETS_FILE_BYTES:,} bytes")
    try:
        return read_targets(path.read_bytes(), path.name)
    except ValueError as exc:
        raise UsageError(f"--targets {path.name}: {exc}") from None


def _read_truth(path, names):
    from colide_core.graph.export import read_graph

    if not path.is_file():
        raise UsageError(f"--truth file not found: {path}")
    try:
        B = read_graph(path.read_bytes(), "adjacency_csv")
    except ValueError as exc:
        raise UsageError(f"--truth {path.name}: {exc}") from None
    if list(B.columns) != list(names):
        if sorted(B.columns) != sorted(names):
            raise UsageError(f"--truth {path.name}: its nodes {list(B.columns)} differ from the data's {list(names)}")
        B = B.loc[list(names), list(names)]
    return B


def _check_targets_need_conditions(args):
    """Refuse ``--targets`` without ``--conditions`` (``fit``, ``report``, ``predict``, ``plan``).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments of a command with ``--targets`` and ``--conditions``.

    Raises
    ------
    UsageError
        When ``--targets`` is given without ``--conditions``.
    """
    if args.targets is not None and args.conditions is None:
        raise UsageError("--targets needs --conditions (the column of each row's condition)")


def _check_device(device, solver):
    """A ``--device`` this machine cannot run, as a usage error before any file is read.

    ``gpu`` without JAX or a GPU, and ``topo`` on the JAX backend, are refused here
    (:func:`colide_core.solver._jax.device_solver`); ``cpu`` never imports JAX.
    """
    if device == "cpu":
        return
    from colide_core.exceptions import DeviceNotSupportedError, DeviceUnavailableError
    from colide_core.solver._jax import device_solver

    try:
        device_solver(solver, device)
    except (DeviceUnavailableError, DeviceNotSupportedError) as exc:
        raise UsageError(f"--device {device}: {exc}") from None


# --------------------------------------------------------------------------------------------
# run settings
# --------------------------------------------------------------------------------------------

def check_given_settings(settings, manifest=None):
    """Refuse run settings a command cannot use: ones its solver ignores, or any next to ``--manifest``.

    Parameters
    ----------
    settings : dict
        The run settings given as flags (:func:`colide_core.run.cli._settings_of`).
    manifest : pathlib.Path, optional
        The ``--manifest`` given: its fit's settings are the run's, so none may be given.

    Raises
    ------
    UsageError
        Naming the flags: ``--topo-sizes is read by --solver auto or topo only; --solver fast would
        ignore it`` (issue 47: such a setting was ignored in silence), or ``--manifest carries the
        fit's settings: drop --lambda1``.
    """
    from colide_core.settings import ignored_settings, setting, solvers_reading

    if manifest is not None and settings:
        flags = ", ".join(setting(k).flag for k in settings)
        raise UsageError(f"--manifest {manifest.name} carries the fit's run settings: drop {flags} (or drop "
                         "--manifest to fit anew)")
    solver = settings.get("solver", defaults.SOLVER)
    problems = [f"{setting(k).flag} is read by --solver {' or '.join(solvers_reading(k))} only; --solver {solver}"
                f"{'' if 'solver' in settings else ' (the default)'} would ignore it"
                for k in ignored_settings(settings, solver)]
    if problems:
        raise UsageError("; ".join(problems))


# --------------------------------------------------------------------------------------------
# a manifest's design and preprocessing (issue 47, point 4)
# --------------------------------------------------------------------------------------------

def read_manifest(path):
    """The :class:`colide_core.run.manifest.Manifest` in ``path``.

    Raises
    ------
    UsageError
        For a missing file or a manifest that does not load (:func:`~colide_core.run.manifest.load_manifest`).
    """
    from colide_core.run.manifest import ManifestError, load_manifest

    if not path.is_file():
        raise UsageError(f"--manifest file not found: {path}")
    try:
        man = load_manifest(path.read_bytes())
    except (ManifestError, ValueError) as exc:
        raise UsageError(f"--manifest {path.name}: {exc}") from None
    if man.data.get("kind") != "data":
        raise UsageError(f"--manifest {path.name}: a fit from streamed statistics (--stats) records no rows to "
                         "check this data against")
    return man


def transform_steps(args):
    """The transform of ``--transform`` / ``--cofactor`` as manifest steps, checked before any file is read.

    Parameters
    ----------
    args : argparse.Namespace
        With ``transform`` (None, ``"log"``, ``"asinh"`` or ``"standardize"``) and ``cofactor``.

    Returns
    -------
    list of dict
        ``[]`` without ``--transform``, else one step
        (:func:`colide_core.data.transforms.transform_step`).

    Raises
    ------
    UsageError
        For a cofactor that is not positive, or ``--cofactor`` without ``--transform asinh``.
    """
    from colide_core.data.transforms import transform_step

    kind, cofactor = getattr(args, "transform", None), getattr(args, "cofactor", None)
    try:
        step = None if kind is None else transform_step(kind, cofactor=cofactor)
    except ValueError as exc:
        raise UsageError(f"--cofactor: {exc}") from None
    if step is None and cofactor is not None:
        raise UsageError("--cofactor applies to --transform asinh only")
    return [] if step is None else [step]


@dataclass(frozen=True)
class PreparedData:
    """The data of a command as its fit sees it (:func:`prepare_data`).

    Attributes
    ----------
    X : pandas.DataFrame of shape (n_samples, n_nodes)
        Validated, dropped and transformed.
    labels : pandas.Series or None
        Each row's condition.
    targets : dict or None
        ``{condition: [node, ...]}``.
    warnings : list of str
        What validating the data dropped or found.
    preprocess : dict
        The dropping flags applied (:data:`DROP_KEYS`), ``dropped_columns`` and ``dropped_rows``:
        what a manifest records under ``extra.preprocess``.
    transform : list of dict
        The transform steps applied (``[]`` for none), as a manifest records them.
    """

    X: object
    labels: object
    targets: object
    warnings: list
    preprocess: dict
    transform: list


def prepare_data(args, man=None):
    """The data of ``fit``, ``report``, ``predict`` or ``plan`` as the fit sees it, with its design.

    The one reader of the four commands' data flags (:func:`colide_core.run.cli._add_data_arguments`):
    ``--columns``, the dropping flags, ``--conditions``, ``--targets``, ``--transform`` / ``--cofactor``
    (``--prior``: :func:`prior_flag`). With a manifest (``man``), what the fit recorded fills in every flag not given: the
    condition column (``conditions.column``) and the targets, the columns kept (``results.node_names``),
    the rows and columns dropped (``extra.preprocess``) and the transforms (``transform``); a
    ``--transform`` other than the recorded one is refused, and the data are checked
    against the manifest's fingerprint and design (issue 47, point 4).

    Parameters
    ----------
    args : argparse.Namespace
        With ``data`` and the data flags (a flag the command lacks counts as not given), and
        ``manifest`` (its path, for messages).
    man : colide_core.run.manifest.Manifest, optional

    Returns
    -------
    PreparedData

    Raises
    ------
    UsageError
        For a bad file, column, targets file or transform, or data or a design other than the
        manifest's.
    """
    import pandas as pd

    from colide_core.run.manifest import ManifestError

    drops = {k: bool(getattr(args, k, False)) for k in DROP_KEYS}
    column, columns = getattr(args, "conditions", None), getattr(args, "columns", None)
    targets_file = getattr(args, "targets", None)
    steps, recorded, man_columns = transform_steps(args), None, None
    where = "" if man is None else f"--manifest {args.manifest.name}: "
    if man is not None:
        pre = dict((man.raw.get("extra") or {}).get("preprocess") or {})
        drops = {k: drops[k] or bool(pre.get(k)) for k in DROP_KEYS}
        recorded_steps = list(man.transform or [])
        if steps and [dict(s) for s in steps] != [dict(s) for s in recorded_steps]:
            raise UsageError(f"{where}--transform differs from the transform the fit recorded "
                             f"({_printable(', '.join(s.get('kind', '?') for s in recorded_steps) or 'none')}); "
                             "leave it out: the manifest's is replayed")
        steps = recorded_steps
        recorded = man.conditions
        if recorded and column is None:
            column = recorded.get("column")
            if column is None:
                raise UsageError(f"{where}this fit was made with conditions but the manifest does not name their "
                                 "column: give --conditions COLUMN")
        if columns is None and man.node_names:
            columns = man_columns = [str(c) for c in man.node_names]
    path = Path(args.data)
    labels = None
    given = "--columns" if man is None or columns is not man_columns else f"{where}the fit's nodes"
    if column is None:
        vd = _read_data(path, columns, columns_from=given, **drops)
    else:
        vd, labels = _read_data(path, columns, condition_column=column, columns_from=given, **drops)
    targets = None
    if labels is not None:
        if targets_file is not None:
            targets = _read_targets_file(targets_file)
        elif recorded:
            targets = {k: list(v) for k, v in (recorded.get("targets") or {}).items() if v} or None
    X = pd.DataFrame(vd.X, columns=vd.node_names)
    if steps:
        from colide_core.data.transforms import transform_columns

        try:
            for step in steps:
                X = transform_columns(X, step["kind"], cofactor=step.get("cofactor"))
        except (KeyError, ValueError) as exc:
            raise UsageError(f"{where}--transform {_printable(str(steps[0].get('kind')))}: {exc}") from None
    if man is not None:
        try:
            man.check_data(X)
            man.check_design(labels, targets)  # issue 42: another design was accepted silently
        except (ManifestError, ValueError) as exc:
            raise UsageError(f"{where}{exc}") from None
    preprocess = {**drops, "dropped_columns": [str(c) for c in vd.dropped_columns],
                  "dropped_rows": int(vd.dropped_rows)}
    return PreparedData(X, labels, targets, list(vd.warnings), preprocess, steps)


def fitted_from_manifest(man):
    """The estimator of a manifest's fit, fitted as recorded (no refit): its thresholded ``adjacency_``,
    ``W_``, ``sigma_`` and ``targets_``, for ``predict --manifest``.

    Parameters
    ----------
    man : colide_core.run.manifest.Manifest

    Returns
    -------
    colide_core.CoLiDE
        With the manifest's settings (``clone`` refits as the fit was made).
    """
    import numpy as np

    model = man.estimator()
    names = [str(c) for c in (man.node_names or [])]
    model.W_, model.adjacency_, model.sigma_ = np.array(man.W), np.array(man.adjacency), man.sigma
    rec = man.conditions
    index = {name: j for j, name in enumerate(names)}
    model.targets_ = None if not rec else {str(k): tuple(index.get(str(v), v) for v in nodes)
                                           for k, nodes in (rec.get("targets") or {}).items()}
    return model
