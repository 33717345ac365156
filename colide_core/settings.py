"""Run settings: one frozen object, one declarative table of constraints, one validation path.

Every place that takes CoLiDE's run settings from a user builds a :class:`RunSettings` through
:meth:`RunSettings.create` (or :func:`check_settings` for a partial mapping): the estimator
(:class:`colide_core.CoLiDE`), the three stage loops (``colide_solve``, ``fast_solve``,
``topo_solve``), the λ path, the run-manifest reader, the CLI's ``fit`` and ``bench`` and the
dashboard. A setting that is invalid is therefore refused at the first place a user gives it,
with the same message everywhere (``"lr = 'x' must be a float in the range (0.0, inf)"``).

Each setting is declared once, as a row of :data:`SETTINGS` (:class:`Setting`): its default,
the library's constraint (scikit-learn's ``sklearn.utils._param_validation`` objects, described
lightly by :class:`Num`, :class:`Options` and :class:`Schedule` and built on first use, so that
reading the table costs no scikit-learn import; :class:`colide_core._params.Number` refuses
bools), the dashboard's narrower bound, its CLI flag and help, whether the fitted ``W`` depends on
it, the loops that read it and its place on the dashboard. Two named sets of limits:

* :data:`LIBRARY`: what the solvers can run at all (types, domains, ``max_iter`` entries up to
  :data:`colide_core.defaults.MAX_ITER_LIMIT`);
* :data:`INTERACTIVE`: the dashboard's bounds (the rows' ``interactive`` constraints,
  ``MAX_STAGES``, ``MAX_ITER_TOTAL``, ``MAX_CHECKPOINTS``) for settings from a browser, a URL or an
  uploaded manifest, so that no setting can start a fit that never ends.

Adding a solver option means one row here, the loop that reads it and a parameter of
:class:`colide_core.CoLiDE` (scikit-learn's ``get_params`` reads ``__init__``); the CLI's flag,
the manifest's command, the dashboard's keys and form are derived (CONTRIBUTING.md).
"""
from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from numbers import Integral, Real
from types import MappingProxyType

from colide_core import defaults

# scikit-learn (its parameter validation, and RunSettingsError, an InvalidParameterError) and numpy
# are imported on the first check, not here: the table of settings is read by `colide --help`,
# which must not pay scikit-learn's import (2 s), nor numpy's (issue 47).

__all__ = ["RunSettings", "Setting", "SETTINGS", "setting", "Limits", "LIBRARY", "INTERACTIVE", "CONSTRAINTS",
           "SETTING_NAMES", "RESULT_SETTINGS", "SCHEDULE_SETTINGS", "NOT_SETTINGS", "PRIOR_KEYS",
           "check_setting", "check_settings", "SOLVER_LOOPS", "solvers_reading", "ignored_settings",
           "check_solver_reads"]

_short = reprlib.Repr()
_short.maxstring = _short.maxother = 60
_short.maxlist = _short.maxtuple = 8


@dataclass(frozen=True)
class Schedule:
    """A constraint on a 1-D sequence of numbers, element by element (not ``"array-like"``,
    which ``numpy.asarray`` would satisfy with ``["0.1"]`` or ``[True, 0.5]``).

    Parameters
    ----------
    element : Num
        The constraint on each entry.
    min_len, max_len : int or None
        Bounds on the length (inclusive; None: unbounded).
    """

    element: "Num"
    min_len: int = 1
    max_len: int | None = None

    def __str__(self):
        if self.max_len is None:
            n = "a non-empty flat list" if self.min_len <= 1 else f"a flat list of at least {self.min_len} entries"
        elif self.min_len == self.max_len:
            n = f"a flat list of exactly {self.min_len} entries"
        else:
            n = f"a flat list of {self.min_len} to {self.max_len} entries"
        return f"{n}, each {self.element.build()}"

    def normalise(self, value):
        """The entries as a tuple of Python numbers, or None when ``value`` is not such a list."""
        import numpy as np

        if isinstance(value, np.ndarray):
            if value.ndim != 1:
                return None
            items = value.tolist()
        elif isinstance(value, (list, tuple)):
            items = list(value)
        elif (hasattr(value, "__len__") and hasattr(value, "__iter__")
              and not isinstance(value, (str, bytes, Mapping, Set))):
            items = list(value)  # a pandas Series, a range
        else:
            return None
        items = [v.item() if isinstance(v, np.generic) else v for v in items]
        element = self.element.build()
        if not all(element.is_satisfied_by(v) for v in items):
            return None
        if len(items) < self.min_len or (self.max_len is not None and len(items) > self.max_len):
            return None
        cast = int if self.element.type == "int" else float
        return tuple(cast(v) for v in items)


class _RandomState:
    """None, an int seed in [0, 2**32) or a numpy RandomState / Generator."""

    def __str__(self):
        from colide_core._params import SEED

        return f"None, {SEED} or a numpy RandomState or Generator"

    def is_satisfied_by(self, value):
        import numpy as np

        from colide_core._params import SEED

        return value is None or SEED.is_satisfied_by(value) or isinstance(
            value, (np.random.RandomState, np.random.Generator))


class _Bool:
    def __str__(self):
        return "True or False"

    def is_satisfied_by(self, value):
        import numpy as np

        return isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class Num:
    """A light description of :class:`colide_core._params.Number` (built on first use).

    Parameters
    ----------
    type : {"real", "int"}
    low, high : float or None
        Bounds (None: unbounded).
    closed : {"both", "left", "right", "neither"}
    """

    type: str
    low: float | None = None
    high: float | None = None
    closed: str = "both"

    def build(self):
        """The scikit-learn constraint (:class:`colide_core._params.Number`)."""
        return _built(self)


@dataclass(frozen=True)
class Options:
    """A light description of scikit-learn's ``StrOptions`` (built on first use).

    Parameters
    ----------
    values : tuple of str
    """

    values: tuple

    def build(self):
        """The scikit-learn constraint (``StrOptions``)."""
        return _built(self)


_BUILT: dict = {}


def _error(problems):
    """:class:`colide_core.exceptions.RunSettingsError` listing ``problems`` (imported on first use)."""
    from colide_core.exceptions import RunSettingsError

    return RunSettingsError(problems)


def _built(spec):
    """The scikit-learn constraint a light spec stands for (cached); other constraints as they are."""
    if not isinstance(spec, (Num, Options)):
        return spec
    out = _BUILT.get(spec)
    if out is None:
        if isinstance(spec, Options):
            from sklearn.utils._param_validation import StrOptions

            out = StrOptions(set(spec.values))
        else:
            from colide_core._params import Number

            out = Number(Integral if spec.type == "int" else Real, spec.low, spec.high, closed=spec.closed)
        _BUILT[spec] = out
    return out


def _closed(range_, type_="real", closed="both"):
    return Num(type_, range_[0], range_[1], closed)


NON_NEGATIVE, POSITIVE = Num("real", 0, None, "left"), Num("real", 0, None, "neither")
POSITIVE_INT = Num("int", 1, None, "left")


#: The stage loops, as :attr:`Setting.solvers` names them.
_ALL_LOOPS = ("adam", "fast", "topo")


@dataclass(frozen=True)
class Setting:
    """One run setting, declared once with its interfaces (:data:`SETTINGS` holds them all).

    Every interface is derived from these rows: :class:`RunSettings`' fields and checks, the
    CLI's flags (:func:`colide_core.run.cli.build_parser`), the manifest's exact ``fit``
    command (:func:`colide_core.run.manifest.fit_command`), the dashboard's cache keys, λ-path
    and Check keys, bootstrap match, manifest loader and advanced-settings form.

    Attributes
    ----------
    name : str
        The keyword of :class:`colide_core.CoLiDE` and the field of :class:`RunSettings`.
    default : object
        The library's default (immutable: tuples for schedules).
    constraint : object
        What the solvers accept (a ``sklearn.utils._param_validation`` constraint,
        :class:`colide_core._params.Number` or :class:`Schedule`).
    help : str
        One line for ``--help``, the widget and the docs (units and range).
    interactive : object or None
        The dashboard's narrower constraint (:data:`INTERACTIVE`), None: the library's.
    flag : str or None
        The CLI flag (``"--max-iter"``); None: not offered on the command line.
    metavar : str or None
        The CLI's placeholder.
    result : bool
        Whether the fitted ``W`` depends on it: it then enters cache keys, the λ path's keys and
        the bootstrap match (the threshold and the seed do not).
    solvers : tuple of str
        The stage loops that read it (``"adam"``, ``"fast"``, ``"topo"``); a ``solver`` option
        reads it when one of its loops does (:data:`SOLVER_LOOPS`, :func:`solvers_reading`), and
        the commands refuse it given to a solver that ignores it (:func:`check_solver_reads`).
    optional : bool
        None is accepted (no budget).
    dashboard : {"own", "advanced", None}
        On the dashboard: a widget of its own (``variant``, ``lambda1``, ``threshold``,
        ``solver``), the generated advanced-settings form, or not offered (the server's choice).
    """

    name: str
    default: object
    constraint: object
    help: str
    interactive: object = None
    flag: str | None = None
    metavar: str | None = None
    result: bool = True
    solvers: tuple = _ALL_LOOPS
    optional: bool = False
    dashboard: str | None = "advanced"

    def parse(self, text):
        """The value written as ``text`` (a CLI argument, a form field), unchecked.

        Numbers are read as numbers, schedules as comma-separated numbers, switches as
        true/false; :func:`check_settings` checks the result, so the command line accepts
        exactly what the library accepts.

        Parameters
        ----------
        text : str

        Returns
        -------
        object
            A float, an int, a tuple, a bool, a str, or None for an empty optional value.

        Raises
        ------
        ValueError
            If the text is not a number (or list of numbers) where one is expected.

        Examples
        --------
        >>> setting("max_iter").parse("100,200")
        (100, 200)
        >>> setting("lr").parse("1e-3")
        0.001
        """
        text = str(text).strip()
        c = self.constraint
        if self.optional and text.lower() in ("", "none"):
            return None
        if isinstance(c, Schedule):
            cast = int if c.element.type == "int" else float
            try:
                return tuple(_number(cast, v) for v in text.split(","))
            except ValueError:
                raise ValueError(f"expected comma-separated {'whole ' if cast is int else ''}numbers, "
                                 f"got {_short.repr(text)}") from None
        if isinstance(c, _Bool):
            if text.lower() in ("true", "1", "yes"):
                return True
            if text.lower() in ("false", "0", "no"):
                return False
            raise ValueError(f"expected true or false, got {_short.repr(text)}")
        try:
            if isinstance(c, Num):
                return _number(int if c.type == "int" else float, text)
            if isinstance(c, _RandomState):
                return _number(int, text)
        except ValueError:
            raise ValueError(f"not a number: {_short.repr(text)}") from None
        return text

    def format(self, value) -> str:
        """``value`` as :meth:`parse` reads it back (the inverse, for commands and forms).

        Examples
        --------
        >>> setting("max_iter").format((100, 200))
        '100,200'
        """
        if isinstance(value, (tuple, list)):
            return ",".join(repr(v) if isinstance(v, float) else str(v) for v in value)
        if isinstance(value, float):
            return repr(value)
        return str(value)


def _number(cast, text):
    """``text`` as an int or a float; an int is refused where it has a fraction."""
    text = str(text).strip()
    if cast is int:
        try:
            return int(text)
        except ValueError:
            value = float(text)  # "1e3" is 1000; "1.5" is refused by the constraint check
            return int(value) if value.is_integer() else value
    return float(text)


#: Every run setting, in the order of :class:`RunSettings`' fields: the one declaration.
SETTINGS = (
    Setting("variant", defaults.VARIANT, Options(defaults.VARIANTS),
            "noise model: nv, non-equal variances (eq. 6-7); ev, equal (eq. 3-5); ls, DAGMA least squares",
            flag="--variant", dashboard="own"),
    Setting("lambda1", defaults.LAMBDA1, NON_NEGATIVE, "L1 weight lambda1 (>= 0)",
            interactive=_closed(defaults.LAMBDA1_RANGE), flag="--lambda1", dashboard="own"),
    Setting("mu_schedule", defaults.MU_SCHEDULE, Schedule(POSITIVE),
            "central-path weights mu_k, one per stage (> 0)", flag="--mu-schedule", metavar="M1,M2,...",
            solvers=_ALL_LOOPS),
    Setting("s_schedule", defaults.S_SCHEDULE, Schedule(POSITIVE),
            "log-det parameters s_k, one per stage (> 0)", flag="--s-schedule", metavar="S1,S2,..."),
    Setting("max_iter", defaults.MAX_ITER, Schedule(Num("int", 1, defaults.MAX_ITER_LIMIT)),
            "iterations T_k per stage, one per stage", flag="--max-iter", metavar="T1,T2,...",
            interactive=Schedule(Num("int", 1, defaults.MAX_ITER_TOTAL))),
    Setting("lr", defaults.LR, POSITIVE, "Adam step size (> 0)", interactive=_closed(defaults.LR_RANGE),
            flag="--lr"),
    Setting("tol", defaults.TOL, NON_NEGATIVE,
            "relative objective change between checkpoints that ends a stage (>= 0)",
            interactive=_closed(defaults.TOL_RANGE), flag="--tol"),
    Setting("threshold", defaults.THRESHOLD, NON_NEGATIVE, "edge threshold on |W| for the DAG (>= 0)",
            interactive=_closed(defaults.THRESHOLD_RANGE), flag="--threshold", result=False, dashboard="own"),
    Setting("solver", defaults.SOLVER, Options(defaults.SOLVERS),
            "stage loop: auto or fast, the fast solver; adam, the paper-faithful Algorithm 1; topo, "
            "CoLiDE-TOPO (Appendix E)", flag="--solver", dashboard="own"),
    Setting("checkpoint", defaults.CHECKPOINT, POSITIVE_INT,
            "steps between convergence checks, history entries and progress calls (>= 1)",
            interactive=_closed(defaults.CHECKPOINT_RANGE, "int"), flag="--checkpoint"),
    Setting("max_time", None, POSITIVE, "time budget of the solve in seconds (> 0)",
            interactive=_closed(defaults.MAX_TIME_RANGE, closed="right"), flag="--max-time", optional=True),
    Setting("topo_sizes", defaults.TOPO_SIZES, Schedule(POSITIVE_INT, 3, 3),
            "CoLiDE-TOPO's candidate-set sizes s0,s_small,s_large (increasing)", flag="--topo-sizes",
            metavar="S0,SMALL,LARGE", solvers=("topo",),
            interactive=Schedule(Num("int", 1, defaults.MAX_TOPO_SIZE), 3, 3)),
    Setting("record_W", False, _Bool(), "keep W at every checkpoint (continuous solvers; for Playback)",
            result=False, solvers=("adam", "fast"), dashboard=None),
    Setting("device", defaults.DEVICE, Options(defaults.DEVICES),
            "where the stage loops run: cpu (numpy/numba), gpu (JAX on a GPU), auto (the GPU when there "
            "is one), jax-cpu (JAX on the CPU; docs/gpu.md)", flag="--device", solvers=("adam", "fast"),
            dashboard=None),
    Setting("random_state", None, _RandomState(), "seed, recorded in the manifest (the solvers are deterministic)",
            interactive=Num("int", 0, 2**32 - 1), flag="--random-state", metavar="SEED",
            result=False, optional=True, dashboard=None),
)
_BY_NAME = MappingProxyType({row.name: row for row in SETTINGS})


#: The stage loops each ``solver`` option runs: ``auto`` the fast loop, then CoLiDE-TOPO's order
#: search when its measured cost fits the time budget (:mod:`colide_core.solver._auto`); ``topo``
#: the fast loop's continuous start, then the search (:mod:`colide_core.solver._topo`).
SOLVER_LOOPS = MappingProxyType({"auto": ("fast", "topo"), "fast": ("fast",), "adam": ("adam",),
                                 "topo": ("fast", "topo")})


def solvers_reading(name) -> tuple:
    """The ``solver`` options that read the setting ``name`` (one of their loops reads it).

    Parameters
    ----------
    name : str
        A name of :data:`SETTINGS`.

    Returns
    -------
    tuple of str
        In the order of :data:`colide_core.defaults.SOLVERS`.

    Raises
    ------
    KeyError
        If no setting has that name.

    Examples
    --------
    >>> solvers_reading("topo_sizes")
    ('auto', 'topo')
    """
    loops = set(setting(name).solvers)
    return tuple(s for s in defaults.SOLVERS if loops & set(SOLVER_LOOPS.get(s, ())))


def ignored_settings(names, solver) -> list:
    """Of ``names``, the settings that ``solver`` ignores (:attr:`Setting.solvers`), in table order.

    Parameters
    ----------
    names : iterable of str
        Names of :data:`SETTINGS` (others are skipped).
    solver : str
        A ``solver`` option (:data:`colide_core.defaults.SOLVERS`).

    Returns
    -------
    list of str

    Examples
    --------
    >>> ignored_settings(["topo_sizes", "lr"], "fast")
    ['topo_sizes']
    >>> ignored_settings(["topo_sizes"], "auto")
    []
    """
    given = set(names)
    return [row.name for row in SETTINGS if row.name in given and solver not in solvers_reading(row.name)]


def check_solver_reads(names, solver) -> None:
    """Refuse settings given to a solver that ignores them (a silent no-op otherwise).

    Parameters
    ----------
    names : iterable of str
        The settings a user gave explicitly (a command's flags, a link's parameters).
    solver : str
        The ``solver`` they are given to.

    Raises
    ------
    RunSettingsError
        (a ``ValueError``) One problem per ignored setting, naming the solvers that read it.

    Examples
    --------
    >>> check_solver_reads(["topo_sizes"], "fast")
    Traceback (most recent call last):
    ...
    colide_core.exceptions.RunSettingsError: unusable run settings: topo_sizes is read by solver 'auto' or 'topo' only; solver='fast' would ignore it
    """
    problems = [f"{name} is read by solver {' or '.join(map(repr, solvers_reading(name)))} only; "
                f"solver={solver!r} would ignore it" for name in ignored_settings(names, solver)]
    if problems:
        raise _error(problems)


def setting(name) -> Setting:
    """The row of :data:`SETTINGS` named ``name``.

    Raises
    ------
    KeyError
        If no setting has that name.
    """
    return _BY_NAME[name]


#: The settings, in the order of :class:`RunSettings`' fields.
SETTING_NAMES = tuple(row.name for row in SETTINGS)
_SPECS = MappingProxyType({row.name: row.constraint for row in SETTINGS})


def __getattr__(name):
    # CONSTRAINTS (per setting, the library's scikit-learn constraint: what the solvers can run at
    # all) is built on first use, with scikit-learn (PEP 562).
    if name == "CONSTRAINTS":
        return MappingProxyType({k: _built(v) for k, v in _SPECS.items()})
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
_OPTIONAL = frozenset(row.name for row in SETTINGS if row.optional)  # None is allowed
#: Settings whose fitted ``W`` depends on them: cache keys, λ-path keys, the bootstrap match.
RESULT_SETTINGS = tuple(row.name for row in SETTINGS if row.result)
#: Settings whose values are sequences (tuples; JSON writes them as lists).
SCHEDULE_SETTINGS = tuple(row.name for row in SETTINGS if isinstance(row.constraint, Schedule))
#: The estimator's parameters that are not run settings: prior knowledge and TOPO's start order,
#: checked against the data's nodes by :class:`colide_core.graph.constraints.PriorKnowledge`.
NOT_SETTINGS = ("forbidden", "required", "tiers", "init_order", "warm_start")
#: Of :data:`NOT_SETTINGS`, the prior knowledge (forbidden and required edges, tiers).
PRIOR_KEYS = ("forbidden", "required", "tiers")


@dataclass(frozen=True)
class Limits:
    """A named set of limits on the run settings, on top of :data:`CONSTRAINTS`.

    Attributes
    ----------
    name : str
        Shown in messages ("the dashboard's limit").
    constraints : mapping of str to constraint
        Per setting, a constraint that replaces the library's (a narrower range).
    max_stages : int or None
        Most stages (entries of the schedules).
    max_iter_total : int or None
        Most iterations of one fit, ``sum(max_iter)``.
    max_checkpoints : int or None
        Most checkpoints of one fit, ``sum(max_iter) / checkpoint``.
    """

    name: str
    constraints: Mapping = field(default_factory=dict)
    max_stages: int | None = None
    max_iter_total: int | None = None
    max_checkpoints: int | None = None


#: What the solvers accept: :data:`CONSTRAINTS` alone.
LIBRARY = Limits("library")
#: The dashboard's bounds: settings from a browser, a URL or an uploaded manifest.
INTERACTIVE = Limits(
    "the dashboard's limit",
    constraints={row.name: row.interactive for row in SETTINGS if row.interactive is not None},
    max_stages=defaults.MAX_STAGES,
    max_iter_total=defaults.MAX_ITER_TOTAL,
    max_checkpoints=defaults.MAX_CHECKPOINTS,
)


def _check_one(name, value, limits):
    """``(normalised value, problem or None)`` for one setting."""
    import numpy as np

    from colide_core._params import Number

    spec = limits.constraints.get(name, _SPECS[name])
    constraint = _built(spec)
    if value is None and name in _OPTIONAL:
        return None, None
    where = "" if spec is _SPECS[name] else f" ({limits.name})"
    if isinstance(constraint, Schedule):
        out = constraint.normalise(value)
        if out is None:
            return None, f"{name} = {_short.repr(value)} must be {constraint}{where}"
        if limits.max_stages is not None and name != "topo_sizes" and len(out) > limits.max_stages:
            return None, f"{name} has {len(out)} stages; at most {limits.max_stages} ({limits.name})"
        return out, None
    if isinstance(value, np.generic):
        value = value.item()
    if not constraint.is_satisfied_by(value):
        return None, f"{name} = {_short.repr(value)} must be {constraint}{where}"
    if isinstance(constraint, Number):
        value = int(value) if constraint.type is Integral else float(value)
    return value, None


def _check(params, limits, partial):
    """Check a mapping of settings; return the normalised ones or raise listing every problem."""
    if not isinstance(params, Mapping):
        raise _error([f"the run settings must be a mapping of names to values, got {type(params).__name__}"])
    if not isinstance(limits, Limits):
        raise TypeError(f"limits must be a Limits (LIBRARY or INTERACTIVE), got {type(limits).__name__}.")
    problems, out = [], {}
    unknown = sorted(str(k) for k in params if k not in _SPECS)
    if unknown:
        problems.append("unknown setting(s) " + ", ".join(_short.repr(k) for k in unknown[:10]))
    for name in SETTING_NAMES:
        if name in params:
            value, problem = _check_one(name, params[name], limits)
            if problem:
                problems.append(problem)
            else:
                out[name] = value
    # Across settings: a setting that failed above takes its default here, so every problem
    # is listed at once.
    merged = {**_DEFAULTS, **out}
    stages = {k: len(merged[k]) for k in ("mu_schedule", "s_schedule", "max_iter")}
    if len(set(stages.values())) != 1:
        problems.append("mu_schedule, s_schedule and max_iter must have one entry per stage, got "
                        + ", ".join(f"{n} in {k}" for k, n in stages.items()))
    s0, s_small, s_large = merged["topo_sizes"]
    if not s0 <= s_small <= s_large:
        problems.append(f"topo_sizes = {merged['topo_sizes']!r} must be increasing (s0 <= s_small <= s_large)")
    if merged["record_W"] and merged["solver"] == "topo":
        problems.append("record_W is available for the continuous solvers, not solver='topo'")
    total = sum(merged["max_iter"])
    if limits.max_iter_total is not None and total > limits.max_iter_total:
        problems.append(f"max_iter = {_short.repr(merged['max_iter'])} adds up to {total:,} iterations; "
                        f"at most {limits.max_iter_total:,} per fit ({limits.name})")
    elif limits.max_checkpoints is not None and total / merged["checkpoint"] > limits.max_checkpoints:
        problems.append(f"checkpoint = {merged['checkpoint']} with {total:,} iterations records "
                        f"{total // merged['checkpoint']:,} checkpoints; at most {limits.max_checkpoints:,} "
                        f"({limits.name})")
    if problems:
        raise _error(problems)
    return out if partial else merged


class _RunSettingsBase:
    """The methods of :class:`RunSettings` (its fields come from :data:`SETTINGS`)."""

    @classmethod
    def create(cls, params=None, *, limits=LIBRARY, ignore=(), **kwargs):
        """Check settings and build the object.

        Parameters
        ----------
        params : mapping, optional
            Settings by name (e.g. ``CoLiDE.get_params()``, a manifest's ``params``); the
            missing ones take their defaults (:mod:`colide_core.defaults`).
        limits : Limits, default=LIBRARY
            :data:`LIBRARY` (what the solvers accept) or :data:`INTERACTIVE` (the dashboard's
            bounds).
        ignore : iterable of str, default=()
            Names in ``params`` that are not run settings and are checked elsewhere (prior
            knowledge, ``init_order``): skipped, not reported as unknown.
        **kwargs
            More settings by name (override ``params``).

        Returns
        -------
        RunSettings

        Raises
        ------
        RunSettingsError
            (an ``InvalidParameterError``: a ValueError and a TypeError) Listing every
            offending setting at once: an unknown name, a value of the wrong type (a bool or a
            string for a number, a float where a whole number is asked), out of its range, NaN
            or inf, schedules of different lengths, ``topo_sizes`` not increasing, and under
            :data:`INTERACTIVE` the dashboard's bounds and totals.

        Examples
        --------
        >>> RunSettings.create(lambda1=0.1).lambda1
        0.1
        >>> RunSettings.create(topo_sizes=(100, 10, 1000))
        Traceback (most recent call last):
        ...
        colide_core.exceptions.RunSettingsError: unusable run settings: topo_sizes = (100, 10, 1000) must be increasing (s0 <= s_small <= s_large)
        """
        given = {} if params is None else params
        if not isinstance(given, Mapping):
            raise _error([f"the run settings must be a mapping of names to values, got {type(given).__name__}"])
        skip = set(ignore)
        merged = {**{k: v for k, v in given.items() if k not in skip}, **kwargs}
        return cls(**_check(merged, limits, partial=False))

    def replace(self, limits=LIBRARY, **changes):
        """A copy with some settings changed, checked again.

        Parameters
        ----------
        limits : Limits, default=LIBRARY
        **changes
            Settings by name.

        Returns
        -------
        RunSettings

        Raises
        ------
        RunSettingsError
            As :meth:`create`.
        """
        return type(self).create({**self.as_dict(), **changes}, limits=limits)

    def as_dict(self) -> dict:
        """Every setting by name (``CoLiDE(**settings.as_dict())`` rebuilds the estimator's)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def _settings_doc():
    lines = ["CoLiDE's run settings, checked: build with :meth:`create`, never directly.", "",
             "The fields are the rows of :data:`SETTINGS`, in order (the one declaration of each setting).",
             "", "Attributes", "----------"]
    for row in SETTINGS:
        c = row.constraint
        kind = (f"{{{', '.join(repr(v) for v in c.values)}}}" if isinstance(c, Options)
                else ("int" if c.type == "int" else "float") if isinstance(c, Num)
                else f"tuple of {'int' if c.element.type == 'int' else 'float'}" if isinstance(c, Schedule)
                else "bool" if isinstance(c, _Bool) else "None, int, numpy RandomState or Generator")
        lines += [f"{row.name} : {kind}" + (" or None" if row.optional and kind[:4] != "None" else ""),
                  f"    {row.help[:1].upper()}{row.help[1:]}. Default {row.default!r}."]
    return "\n".join(lines) + "\n"


RunSettings = dataclasses.make_dataclass(
    "RunSettings", [(row.name, object, dataclasses.field(default=row.default)) for row in SETTINGS],
    bases=(_RunSettingsBase,), frozen=True, namespace={"__doc__": _settings_doc(), "__module__": __name__})
RunSettings.__qualname__ = "RunSettings"

_DEFAULTS = RunSettings().as_dict()


def check_setting(name, value, *, limits=LIBRARY):
    """Check one setting on its own (the checks across settings wait for :meth:`RunSettings.create`).

    Parameters
    ----------
    name : str
        A name of :data:`SETTINGS`.
    value : object
    limits : Limits, default=LIBRARY

    Returns
    -------
    object
        The value normalised (numbers as float or int, schedules as tuples).

    Raises
    ------
    RunSettingsError
        With the one problem, as :meth:`RunSettings.create` words it, or for an unknown name.

    Examples
    --------
    >>> check_setting("lr", 0)
    Traceback (most recent call last):
    ...
    colide_core.exceptions.RunSettingsError: unusable run settings: lr = 0 must be a float in the range (0.0, inf) (not a bool)
    >>> check_setting("max_iter", [100, 200])
    (100, 200)
    """
    if name not in _SPECS:
        raise _error([f"unknown setting {_short.repr(name)}"])
    value, problem = _check_one(name, value, limits)
    if problem:
        raise _error([problem])
    return value


def check_settings(params, *, limits=LIBRARY, ignore=()):
    """Check a partial mapping of settings; return the given ones, normalised.

    Parameters
    ----------
    params : mapping
        Some settings by name (the missing ones are not added, but take part in the checks
        across settings with their defaults).
    limits : Limits, default=LIBRARY
    ignore : iterable of str, default=()
        Names that are not run settings (passed through unchanged, unchecked).

    Returns
    -------
    dict
        The given settings normalised (numbers as float or int, schedules as tuples), then the
        ignored names as given.

    Raises
    ------
    RunSettingsError
        As :meth:`RunSettings.create`.
    """
    if not isinstance(params, Mapping):
        raise _error([f"the run settings must be a mapping of names to values, got {type(params).__name__}"])
    skip = set(ignore)
    out = _check({k: v for k, v in params.items() if k not in skip}, limits, partial=True)
    return {**out, **{k: v for k, v in params.items() if k in skip}}
