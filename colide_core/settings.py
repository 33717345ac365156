"""Run settings: one frozen object, one declarative table of constraints, one validation path.

Every place that takes CoLiDE's run settings from a user builds a :class:`RunSettings` through
:meth:`RunSettings.create` (or :func:`check_settings` for a partial mapping): the estimator
(:class:`colide_core.CoLiDE`), the three stage loops (``colide_solve``, ``fast_solve``,
``topo_solve``), the λ path, the run-manifest reader, the CLI's ``fit`` and ``bench`` and the
dashboard. A setting that is invalid is therefore refused at the first place a user gives it,
with the same message everywhere (``"lr = 'x' must be a float in the range (0.0, inf)"``).

The constraints are declared once, in :data:`CONSTRAINTS` (scikit-learn's
``sklearn.utils._param_validation`` objects; :class:`colide_core._params.Number` refuses bools),
with two named sets of limits:

* :data:`LIBRARY`: what the solvers can run at all (types, domains, ``max_iter`` entries up to
  :data:`colide_core.defaults.MAX_ITER_LIMIT`);
* :data:`INTERACTIVE`: the dashboard's bounds (:mod:`colide_core.defaults` ``*_RANGE``,
  ``MAX_STAGES``, ``MAX_ITER_TOTAL``, ``MAX_CHECKPOINTS``, ``MAX_TOPO_SIZE``) for settings from
  a browser, a URL or an uploaded manifest, so that no setting can start a fit that never ends.

Adding a solver option means one entry in :data:`CONSTRAINTS` and one field of
:class:`RunSettings` (with its default in :mod:`colide_core.defaults`), read by the loop that
uses it; the estimator exposes it as a parameter (scikit-learn's ``get_params`` reads
``__init__``). Nothing else changes: the manifest, the CLI and the dashboard check it here.
"""
from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from numbers import Integral, Real
from types import MappingProxyType

import numpy as np
from sklearn.utils._param_validation import StrOptions

from colide_core import defaults
from colide_core._params import NON_NEGATIVE, POSITIVE, POSITIVE_INT, SEED, Number
from colide_core.exceptions import RunSettingsError

__all__ = ["RunSettings", "Limits", "LIBRARY", "INTERACTIVE", "CONSTRAINTS", "SETTING_NAMES", "check_settings"]

_short = reprlib.Repr()
_short.maxstring = _short.maxother = 60
_short.maxlist = _short.maxtuple = 8


@dataclass(frozen=True)
class Schedule:
    """A constraint on a 1-D sequence of numbers, element by element (not ``"array-like"``,
    which ``numpy.asarray`` would satisfy with ``["0.1"]`` or ``[True, 0.5]``).

    Parameters
    ----------
    element : Number
        The constraint on each entry.
    min_len, max_len : int or None
        Bounds on the length (inclusive; None: unbounded).
    """

    element: Number
    min_len: int = 1
    max_len: int | None = None

    def __str__(self):
        if self.max_len is None:
            n = "a non-empty flat list" if self.min_len <= 1 else f"a flat list of at least {self.min_len} entries"
        elif self.min_len == self.max_len:
            n = f"a flat list of exactly {self.min_len} entries"
        else:
            n = f"a flat list of {self.min_len} to {self.max_len} entries"
        return f"{n}, each {self.element}"

    def normalise(self, value):
        """The entries as a tuple of Python numbers, or None when ``value`` is not such a list."""
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
        if not all(self.element.is_satisfied_by(v) for v in items):
            return None
        if len(items) < self.min_len or (self.max_len is not None and len(items) > self.max_len):
            return None
        cast = int if self.element.type is Integral else float
        return tuple(cast(v) for v in items)


class _RandomState:
    """None, an int seed in [0, 2**32) or a numpy RandomState / Generator."""

    def __str__(self):
        return f"None, {SEED} or a numpy RandomState or Generator"

    def is_satisfied_by(self, value):
        return value is None or SEED.is_satisfied_by(value) or isinstance(
            value, (np.random.RandomState, np.random.Generator))


class _Bool:
    def __str__(self):
        return "True or False"

    def is_satisfied_by(self, value):
        return isinstance(value, (bool, np.bool_))


#: Per setting, the library's constraint: what the solvers can run at all.
CONSTRAINTS = MappingProxyType({
    "variant": StrOptions(set(defaults.VARIANTS)),
    "lambda1": NON_NEGATIVE,
    "mu_schedule": Schedule(POSITIVE),
    "s_schedule": Schedule(POSITIVE),
    "max_iter": Schedule(Number(Integral, 1, defaults.MAX_ITER_LIMIT, closed="both")),
    "lr": POSITIVE,
    "tol": NON_NEGATIVE,
    "threshold": NON_NEGATIVE,
    "solver": StrOptions(set(defaults.SOLVERS)),
    "checkpoint": POSITIVE_INT,
    "max_time": Number(Real, 0, None, closed="neither"),  # or None
    "topo_sizes": Schedule(POSITIVE_INT, 3, 3),
    "record_W": _Bool(),
    "device": StrOptions(set(defaults.DEVICES)),
    "random_state": _RandomState(),
})
#: The settings, in the order of :class:`RunSettings`' fields.
SETTING_NAMES = tuple(CONSTRAINTS)
_OPTIONAL = frozenset({"max_time"})  # None is allowed


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


def _closed(range_, type_=Real, closed="both"):
    return Number(type_, range_[0], range_[1], closed=closed)


#: What the solvers accept: :data:`CONSTRAINTS` alone.
LIBRARY = Limits("library")
#: The dashboard's bounds: settings from a browser, a URL or an uploaded manifest.
INTERACTIVE = Limits(
    "the dashboard's limit",
    constraints={
        "lambda1": _closed(defaults.LAMBDA1_RANGE),
        "threshold": _closed(defaults.THRESHOLD_RANGE),
        "lr": _closed(defaults.LR_RANGE),
        "tol": _closed(defaults.TOL_RANGE),
        "checkpoint": _closed(defaults.CHECKPOINT_RANGE, Integral),
        "max_iter": Schedule(Number(Integral, 1, defaults.MAX_ITER_TOTAL, closed="both")),
        "max_time": _closed(defaults.MAX_TIME_RANGE, closed="right"),
        "topo_sizes": Schedule(Number(Integral, 1, defaults.MAX_TOPO_SIZE, closed="both"), 3, 3),
        "random_state": Number(Integral, 0, 2**32 - 1, closed="both"),  # or None: JSON holds no Generator
    },
    max_stages=defaults.MAX_STAGES,
    max_iter_total=defaults.MAX_ITER_TOTAL,
    max_checkpoints=defaults.MAX_CHECKPOINTS,
)


def _check_one(name, value, limits):
    """``(normalised value, problem or None)`` for one setting."""
    constraint = limits.constraints.get(name, CONSTRAINTS[name])
    if value is None and (name in _OPTIONAL or (name == "random_state")):
        return None, None
    where = "" if constraint is CONSTRAINTS[name] else f" ({limits.name})"
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
        raise RunSettingsError([f"the run settings must be a mapping of names to values, got {type(params).__name__}"])
    if not isinstance(limits, Limits):
        raise TypeError(f"limits must be a Limits (LIBRARY or INTERACTIVE), got {type(limits).__name__}.")
    problems, out = [], {}
    unknown = sorted(str(k) for k in params if k not in CONSTRAINTS)
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
        raise RunSettingsError(problems)
    return out if partial else merged


@dataclass(frozen=True)
class RunSettings:
    """CoLiDE's run settings, checked: build with :meth:`create`, never directly.

    Attributes
    ----------
    variant : {"nv", "ev", "ls"}
        Noise model: non-equal variances (paper eq. 6-7), equal variance (eq. 3-5), or the
        least-squares score (DAGMA-linear's, a baseline).
    lambda1 : float
        L1 weight, >= 0.
    mu_schedule, s_schedule : tuple of float
        Central-path weights ``mu_k`` and log-det parameters ``s_k``, one per stage, > 0.
    max_iter : tuple of int
        Iterations ``T_k`` per stage, each in ``[1, MAX_ITER_LIMIT]``.
    lr : float
        Adam step size, > 0.
    tol : float
        Relative objective change between checkpoints that ends a stage, >= 0.
    threshold : float
        Post-processing magnitude threshold on ``|W|``, >= 0.
    solver : {"auto", "fast", "adam", "topo"}
        Stage loop (:data:`colide_core.SOLVERS`).
    checkpoint : int
        Steps between convergence checks, history entries and callback calls, >= 1.
    max_time : float or None
        Wall-clock budget of the solve in seconds, > 0.
    topo_sizes : tuple of 3 int
        CoLiDE-TOPO's candidate-set sizes ``(s0, s_small, s_large)``, increasing.
    record_W : bool
        Keep W at every checkpoint (continuous solvers).
    device : {"cpu", "gpu", "auto", "jax-cpu"}
        Where the stage loops run: the numpy / numba solvers ("cpu"), the JAX backend on a GPU
        ("gpu"), the GPU when there is one ("auto"), or the JAX backend on the CPU ("jax-cpu");
        :mod:`colide_core.solver._jax`, ``docs/gpu.md``.
    random_state : None, int, numpy RandomState or Generator
        Accepted for API symmetry; the solvers are deterministic.
    """

    variant: str = defaults.VARIANT
    lambda1: float = defaults.LAMBDA1
    mu_schedule: tuple = defaults.MU_SCHEDULE
    s_schedule: tuple = defaults.S_SCHEDULE
    max_iter: tuple = defaults.MAX_ITER
    lr: float = defaults.LR
    tol: float = defaults.TOL
    threshold: float = defaults.THRESHOLD
    solver: str = defaults.SOLVER
    checkpoint: int = defaults.CHECKPOINT
    max_time: float | None = None
    topo_sizes: tuple = defaults.TOPO_SIZES
    record_W: bool = False
    device: str = defaults.DEVICE
    random_state: object = None

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
            raise RunSettingsError([f"the run settings must be a mapping of names to values, got {type(given).__name__}"])
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


_DEFAULTS = RunSettings().as_dict()


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
        raise RunSettingsError([f"the run settings must be a mapping of names to values, got {type(params).__name__}"])
    skip = set(ignore)
    out = _check({k: v for k, v in params.items() if k not in skip}, limits, partial=True)
    return {**out, **{k: v for k, v in params.items() if k in skip}}
