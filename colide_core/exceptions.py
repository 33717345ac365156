"""Every exception and warning a user of :mod:`colide_core` can catch, in one place.

* :class:`InvalidParameterError`: a parameter or run setting is refused (scikit-learn's own class,
  both a ``ValueError`` and a ``TypeError``), raised by :mod:`colide_core.settings` and by every
  function's declarative checks;
* :class:`ConvergenceWarning`: a solve stopped on its iteration or time budget; it subclasses
  :class:`sklearn.exceptions.ConvergenceWarning`, so a filter for scikit-learn's warning also
  catches ours;
* :class:`DataValidationError`: data that cannot be used as they are (with a machine-readable
  :attr:`~DataValidationError.kind`, one of :data:`ERROR_KINDS`);
* :class:`NodeNameError`: a node (column) name that breaks the name policy;
* :class:`ManifestError`: a run manifest that is malformed or does not match the data;
* :class:`RunSettingsError`: run settings refused, with one line per problem;
* :class:`MethodError`: a peer method (a baseline) failed on the data;
* :class:`UnknownNodesError`: a graph file names nodes outside the data's columns;
* :class:`DeviceUnavailableError`: ``device="gpu"`` asked for, but JAX or a GPU is missing;
* :class:`DeviceNotSupportedError`: a solver or data form the JAX (GPU) backend does not run;
* :class:`MissingExtraError`: an optional package is missing; the message names the extra of
  ``colide-dashboard`` that installs it (:data:`OPTIONAL_PACKAGES`).
* :class:`Stopped`: a computation stopped by its callback (with what it computed before, if
  anything, as :attr:`~Stopped.partial`); :class:`StatisticsStopped` and the dashboard's stopped
  exceptions subclass it.

Messages are plain text, never escaped: a UI escapes them where they meet HTML or markdown.
"""
from __future__ import annotations

from types import MappingProxyType

from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning
from sklearn.utils._param_validation import InvalidParameterError

__all__ = [
    "ConvergenceWarning",
    "DataValidationError",
    "DeviceNotSupportedError",
    "DeviceUnavailableError",
    "ERROR_KINDS",
    "InvalidParameterError",
    "ManifestError",
    "MethodError",
    "MissingExtraError",
    "OPTIONAL_PACKAGES",
    "import_optional",
    "NodeNameError",
    "RunSettingsError",
    "UnknownNodesError",
    "UnknownNodeError",
    "ConditionsError",
    "StatisticsStopped",
    "Stopped",
    "ExperimentStopped",
]


class ConvergenceWarning(_SklearnConvergenceWarning):
    """Issued when the solver stops on ``max_iter`` or ``max_time`` before meeting ``tol``.

    A subclass of :class:`sklearn.exceptions.ConvergenceWarning`: filtering scikit-learn's
    warning filters this one too.
    """


class NodeNameError(ValueError):
    """A node (column) name breaks the name policy of :func:`colide_core._validation.check_node_names`.

    Attributes
    ----------
    kind : {"bad_column_name", "duplicate_column_name"}
        What is wrong: a refused character (or an empty name, or a trailing backslash), or two
        names that are equal after Unicode NFC normalisation.
    names : tuple of str
        The offending names, as given.
    """

    def __init__(self, message, kind, names=()):
        super().__init__(message)
        self.kind = kind
        self.names = tuple(names)


#: Every value that :attr:`DataValidationError.kind` can take, with its meaning.
ERROR_KINDS = {
    "bad_type": "the input is not bytes / not a DataFrame",
    "empty_file": "the file has no content (or only whitespace)",
    "too_large": "the file is larger than the size limit",
    "not_tabular": "the file could not be parsed as a table (binary, ragged rows, corrupt Parquet)",
    "not_json": "the document is not UTF-8 JSON text",
    "too_deep": "the JSON document nests arrays / objects deeper than the limit",
    "unsupported_column_type": "a Parquet column has a nested, binary, object or extension type",
    "empty_column_name": "a column has no name",
    "bad_column_name": "a column name holds a control or invisible character, or ends with a backslash",
    "duplicate_column_name": "two or more columns share a name",
    "too_few_columns": "fewer than 2 (numeric) columns",
    "too_few_rows": "fewer than ``min_rows`` (finite) rows",
    "too_many_nodes": "more columns than ``max_nodes``",
    "non_numeric": "some columns are not numeric (can be dropped with ``drop_non_numeric=True``)",
    "nonfinite": "NaN / missing / infinite values (rows can be dropped with ``drop_nonfinite_rows=True``)",
    "constant_column": "a column has a single repeated value (zero variance)",
    "duplicate_column": "two columns hold identical values",
    "overflow": "values so large that the covariance matrix is not finite in float64",
    "singular_covariance": "the covariance matrix is singular: perfectly collinear columns",
    # Several conditions and their intervention targets (ConditionsError, issue 31).
    "condition_length": "the condition labels are not one per row of the data",
    "condition_missing": "a condition label is missing (None, NaN or empty)",
    "condition_mixed_types": "the condition labels mix numbers and text (or another type)",
    "condition_bad_label": "a condition label is not text or an integer, is too long, or two labels read the same",
    "condition_too_few_rows": "a condition has fewer rows than MIN_CONDITION_ROWS",
    "too_many_conditions": "more distinct conditions than MAX_CONDITIONS (or their statistics exceed MAX_CELLS)",
    "target_unknown_condition": "the targets name a condition that is not among the labels",
    "target_unknown_node": "the targets name a node that is not a column of the data",
    "target_every_row": "a node is a target in every condition: no row is left to fit its equation",
    "targets_malformed": "the targets are not a mapping {label: [node, ...]} of bounded size",
}


class DataValidationError(ValueError):
    """The data cannot be used as it is; the message says why, in plain words.

    Parameters
    ----------
    message : str
        Human-readable explanation naming the offending columns / rows and, where possible, the fix.
    kind : str
        Machine-readable code, one of the keys of :data:`ERROR_KINDS` (e.g. ``"non_numeric"``).
    columns : sequence of str, optional
        Names (as strings) of the offending columns, when the problem is about columns.
    rows : sequence, optional
        Index labels of the offending rows, when the problem is about rows.

    Attributes
    ----------
    message, kind, columns, rows
        As given; ``columns`` and ``rows`` are tuples. ``str(err) == err.message``.

    Notes
    -----
    Names in the message are quoted with ``repr``-like quotes and shortened, but NOT HTML-escaped:
    a UI must escape the message before putting it into HTML or markdown.
    """

    def __init__(self, message, kind, *, columns=(), rows=()):
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown DataValidationError kind {kind!r}")
        super().__init__(message)
        self.message = str(message)
        self.kind = kind
        self.columns = tuple(columns)
        self.rows = tuple(rows)

    def __str__(self):
        return self.message

    def __reduce__(self):
        return (_rebuild_error, (self.message, self.kind, self.columns, self.rows))


def _rebuild_error(message, kind, columns, rows):
    return DataValidationError(message, kind, columns=columns, rows=rows)


class UnknownNodesError(ValueError):
    """A graph file names nodes outside the allowed names (:func:`colide_core.graph.export.read_graph` with ``nodes``).

    Attributes
    ----------
    names : list of str
        The first unknown names (at most 9), in the order met.
    """

    def __init__(self, names):
        self.names = list(names)
        super().__init__(f"{len(self.names)} or more unknown node names" if len(self.names) > 8
                         else f"{len(self.names)} unknown node name(s)")


class UnknownNodeError(InvalidParameterError):
    """A node given by name or index is not one of the data's nodes (:func:`colide_core.data.design.node_index`,
    the one node lookup). A subclass of :class:`InvalidParameterError`: a ``ValueError`` and a
    ``TypeError``."""


class MethodError(RuntimeError):
    """A registered method failed on the given data; the message names the method and the cause."""


class ManifestError(ValueError):
    """A manifest is malformed, does not match the data, or does not reproduce."""


class RunSettingsError(InvalidParameterError):
    """Run settings refused by :class:`colide_core.settings.RunSettings`, one line per problem.

    A subclass of :class:`InvalidParameterError` (so also a ``ValueError`` and a ``TypeError``).

    Attributes
    ----------
    problems : list of str
        One plain-text line per offending setting; values are quoted with ``repr`` and cut to
        60 characters (escape before showing in HTML).
    """

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("unusable run settings: " + "; ".join(self.problems))


class DeviceUnavailableError(RuntimeError):
    """``device="gpu"`` was asked for, but JAX is not installed or sees no GPU.

    Raised by :func:`colide_core.solver._jax.resolve_device` (and so by ``CoLiDE(device="gpu").fit``
    and ``colide fit --device gpu``); the message says what is missing and how to install it.
    ``device="auto"`` never raises it: it falls back to the CPU solvers.
    """


class DeviceNotSupportedError(NotImplementedError):
    """The JAX backend (``device`` other than ``"cpu"``) does not run this combination.

    CoLiDE-TOPO (``solver="topo"``) and the per-node covariance form of several conditions run
    on the CPU solvers only; use ``device="cpu"`` (or ``"auto"``) for them.
    """


class ConditionsError(DataValidationError):
    """Condition labels or intervention targets that cannot be used; the message says why.

    A :class:`DataValidationError` (so a ``ValueError``) whose :attr:`kind` is one of the
    ``condition_*`` / ``target*`` / ``too_many_conditions`` keys of :data:`ERROR_KINDS`;
    raised by :func:`colide_core.data.conditions.check_conditions`,
    :func:`colide_core.data.conditions.check_targets` and
    :class:`colide_core.data.conditions.ConditionStats`.
    """

    def __reduce__(self):
        return (_rebuild_conditions_error, (self.message, self.kind, self.columns, self.rows))


def _rebuild_conditions_error(message, kind, columns, rows):
    return ConditionsError(message, kind, columns=columns, rows=rows)


class Stopped(RuntimeError):
    """A computation ended early because its callback asked to stop (a Stop button, a closed page).

    The one "stopped" exception: each thing that can stop raises a subclass that names it
    (:class:`StatisticsStopped` here; the dashboard's ``FitStopped``, ``ChecksStopped`` and
    ``PathStopped`` in ``dashboard/infra/errors.py``), so ``except Stopped`` catches every one of them
    and ``except StatisticsStopped`` only its own.

    Parameters
    ----------
    message : str, optional
        Plain text; by default the class's :attr:`default_message`.
    partial : object, optional
        What was computed before the stop (a partial fit, report or λ path), for the caller to
        show; never a finished result (it must not be cached as one).

    Attributes
    ----------
    partial : object or None
        As given.
    default_message : str
        Class attribute: the message when none is given.

    Examples
    --------
    >>> try:
    ...     raise StatisticsStopped(partial=3)
    ... except Stopped as exc:
    ...     print(exc, exc.partial)
    stopped 3
    """

    default_message = "stopped"

    def __init__(self, message=None, *, partial=None):
        super().__init__(self.default_message if message is None else message)
        self.partial = partial


class StatisticsStopped(Stopped):
    """A callback asked to stop while the statistics of several conditions were built.

    Raised by :meth:`colide_core.data.conditions.ConditionStats.from_data` and
    :meth:`~colide_core.data.conditions.ConditionStats.node_covariances` when their
    ``callback()`` returns True. :meth:`colide_core.CoLiDE.fit` catches it: the fit then ends
    stopped (``stopped_`` True) before the solve started, with ``W_`` all zeros.
    """


class ExperimentStopped(Stopped):
    """A callback asked to stop :func:`colide_core.evaluation.experiment.run_experiment`.

    Raised after the fit without the experiment or the refit with it ended stopped: a partial
    fit says nothing about what the experiment gains, so there is no result (``partial`` is the
    stopped estimator).
    """

    default_message = "stopped before the experiment's refit finished"


#: The optional packages by the name they are imported as: (the distribution pip installs, the extra
#: of colide-dashboard that brings it), as declared in pyproject.toml's optional dependencies.
OPTIONAL_PACKAGES = MappingProxyType({
    "streamlit": ("streamlit", "dashboard"),
    "plotly": ("plotly", "dashboard"),
    "pyvis": ("pyvis", "dashboard"),
    "matplotlib": ("matplotlib", "dashboard"),
    "jinja2": ("jinja2", "dashboard"),
    "causallearn": ("causal-learn", "baselines"),
    "gies": ("gies", "baselines"),
    "dask": ("dask", "dask"),
    "distributed": ("distributed", "dask"),
    "numba": ("numba", "fast"),
    "jax": ("jax", "jax"),
    "jaxlib": ("jaxlib", "jax"),
    # only its data files are read (colide_core.data.networks), never imported
    "pgmpy": ("pgmpy-no-torch", "networks"),
})


class MissingExtraError(ModuleNotFoundError):
    """An optional package is not installed; the message says which extra installs it.

    A ``ModuleNotFoundError`` (so an ``ImportError``), raised where a function imports an optional
    package (:data:`OPTIONAL_PACKAGES`), e.g. ``MissingExtraError("causallearn", "GES")``:
    ``GES needs causal-learn, which is not installed: pip install 'colide-dashboard[baselines]'``.

    Parameters
    ----------
    module : str
        The module that failed to import (``"causallearn.search"``); its top-level name must be a
        key of :data:`OPTIONAL_PACKAGES`.
    needed_for : str, optional
        What needs it, at the start of the message (without it: ``causal-learn is not installed: ...``).
    extra : str, optional
        The extra to name instead of the package's own, for one that also brings it (the report
        needs causal-learn, but its ``[dashboard]`` extra brings every package the report needs).

    Attributes
    ----------
    package : str
        The distribution to install (``"causal-learn"``).
    extra : str
        The extra of colide-dashboard that brings it (``"baselines"``).
    needed_for : str or None
        As given.

    Raises
    ------
    KeyError
        If ``module`` is not one of the optional packages.
    """

    def __init__(self, module, needed_for=None, extra=None):
        self.package, own = OPTIONAL_PACKAGES[module.split(".")[0]]
        self.extra = extra or own
        self.needed_for = needed_for
        what = f"{needed_for} needs {self.package}, which" if needed_for else self.package
        super().__init__(f"{what} is not installed: pip install 'colide-dashboard[{self.extra}]'", name=module)

    @classmethod
    def from_error(cls, exc, needed_for=None):
        """The :class:`MissingExtraError` for a ``ModuleNotFoundError``, or None for another module.

        Parameters
        ----------
        exc : ModuleNotFoundError
            The error raised by an ``import`` (its ``name`` is the missing module).
        needed_for : str, optional
            As for the constructor.

        Returns
        -------
        MissingExtraError or None
            None when ``exc.name`` is not one of :data:`OPTIONAL_PACKAGES` (a broken installation,
            not a missing extra).
        """
        name = getattr(exc, "name", None) or ""
        if name.split(".")[0] not in OPTIONAL_PACKAGES:
            return None
        return cls(name, needed_for)

    def __reduce__(self):  # picklable (a Dask worker's error comes back to the client)
        return (type(self), (self.name, self.needed_for, self.extra))


def import_optional(module, needed_for=None):
    """Import an optional package's module, or raise :class:`MissingExtraError` naming its extra.

    Parameters
    ----------
    module : str
        The module to import (``"causallearn.utils.cit"``); its top-level package is a key of
        :data:`OPTIONAL_PACKAGES`.
    needed_for : str, optional
        What needs it, for the message (``"GES"``).

    Returns
    -------
    module

    Raises
    ------
    MissingExtraError
        When the package is not installed.
    ModuleNotFoundError
        When it is installed but one of its own imports fails (a broken installation, not a
        missing extra): that error as it is.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = MissingExtraError.from_error(exc, needed_for)
        if missing is None:
            raise
        raise missing from None
