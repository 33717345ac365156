"""Parameter checks of the public API: scikit-learn's declarative validation, with bools refused.

Every public function and estimator of :mod:`colide_core` checks its parameters with
scikit-learn's parameter validation (``sklearn.utils._param_validation``): the estimator through
``_parameter_constraints``, functions through the :func:`validate_params` decorator re-exported
here. A refused value raises :class:`InvalidParameterError`, which is both a ``ValueError`` and a
``TypeError``, with a message that names the parameter, what it must be and what it got.

Two additions to scikit-learn's constraints:

* :class:`Number` is :class:`~sklearn.utils._param_validation.Interval` that refuses ``bool`` and
  ``numpy.bool_``. scikit-learn's ``Interval(Real, ...)`` and ``Interval(Integral, ...)`` accept
  ``True`` as the number 1 (``bool`` subclasses ``int``; checked with scikit-learn 1.9.1), so
  ``CoLiDE(lambda1=True)`` would pass. Strings, None, NaN and +/-inf are refused by ``Interval``
  itself (an open bound excludes inf), and a float is refused where an ``Integral`` is asked
  (``checkpoint=2.5`` is an error, not truncated to 2).
* :func:`check_sequence` checks a sequence of numbers (a schedule, a grid of ``lambda1``) element
  by element with a :class:`Number`, which ``"array-like"`` does not: ``numpy.asarray`` would turn
  ``["0.1"]`` into 0.1 and ``[True, 0.5]`` into ``[1.0, 0.5]``.
"""
from __future__ import annotations

import reprlib
from collections.abc import Mapping, Set
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    StrOptions,
    validate_params,
)

__all__ = [
    "Number",
    "StrOptions",
    "InvalidParameterError",
    "validate_params",
    "check_number",
    "check_sequence",
    "is_int",
    "is_real",
    "NON_NEGATIVE",
    "POSITIVE",
    "POSITIVE_INT",
    "SEED",
]

_BOOLS = (bool, np.bool_)
_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60
_short.maxlist = _short.maxtuple = 8


def is_int(value) -> bool:
    """True for an integer (``int``, ``numpy.integer``), False for a bool and anything else."""
    return isinstance(value, Integral) and not isinstance(value, _BOOLS)


def is_real(value) -> bool:
    """True for a real number (``int``, ``float``, numpy's), False for a bool, a string, None."""
    return isinstance(value, Real) and not isinstance(value, _BOOLS)


class Number(Interval):
    """``Interval`` over ``Real`` or ``Integral`` that refuses ``bool`` and ``numpy.bool_``.

    Parameters
    ----------
    type : {numbers.Real, numbers.Integral}
    left, right : number or None
        Bounds (None: unbounded). An unbounded or open side excludes +/-inf; NaN is never in.
    closed : {"left", "right", "both", "neither"}
    """

    def is_satisfied_by(self, val):
        if isinstance(val, _BOOLS):
            return False
        return super().is_satisfied_by(val)

    def __str__(self):
        return super().__str__() + " (not a bool)"


#: A finite number >= 0.
NON_NEGATIVE = Number(Real, 0, None, closed="left")
#: A finite number > 0.
POSITIVE = Number(Real, 0, None, closed="neither")
#: An int >= 1.
POSITIVE_INT = Number(Integral, 1, None, closed="left")
#: An integer seed accepted by numpy's SeedSequence and scikit-learn (0 <= seed < 2**32).
SEED = Number(Integral, 0, 2**32 - 1, closed="both")


def check_number(value, name, caller, constraint):
    """Check one number against a :class:`Number` (or any scikit-learn constraint).

    Parameters
    ----------
    value : object
    name : str
        The parameter's name, for the message.
    caller : str
        The function or class that takes it, for the message.
    constraint : Number

    Returns
    -------
    value
        Unchanged.

    Raises
    ------
    InvalidParameterError
        (a ValueError and a TypeError) If ``value`` does not satisfy ``constraint``.
    """
    if not constraint.is_satisfied_by(value):
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be {constraint}. Got {_short.repr(value)} instead."
        )
    return value


def check_sequence(values, name, caller, element, *, min_len=1, max_len=None):
    """Check a 1-D sequence of numbers element by element; return it as a tuple.

    Parameters
    ----------
    values : list, tuple, 1-D ndarray or another sized iterable (a pandas Series, a range)
        Strings, bytes, mappings, sets and scalars are refused, as are arrays of bool, str,
        complex or object dtype whose elements are not numbers.
    name, caller : str
        For the message.
    element : Number
        The constraint every element must satisfy.
    min_len : int, default=1
    max_len : int, optional

    Returns
    -------
    tuple
        The elements, as Python ``int`` (``Integral`` constraints) or ``float``.

    Raises
    ------
    InvalidParameterError
        (a ValueError and a TypeError) naming the parameter, the first bad element and what it
        must be.
    """
    def fail(what):
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be {what}. Got {_short.repr(values)} instead."
        )

    seq_text = f"a sequence whose entries are each {element}"
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            fail(f"a 1-D {seq_text}")
        items = values.tolist()  # numpy scalars -> Python int / float / bool / str / complex
    elif isinstance(values, (list, tuple)):
        items = list(values)
    elif (hasattr(values, "__len__") and hasattr(values, "__iter__")
          and not isinstance(values, (str, bytes, Mapping, Set))):
        items = [v.item() if isinstance(v, np.generic) else v for v in values]  # a Series, a range
    else:
        fail(seq_text)
    for k, v in enumerate(items):
        if isinstance(v, np.generic):
            v = v.item()
        if not element.is_satisfied_by(v):
            raise InvalidParameterError(
                f"The {name!r} parameter of {caller} must be {seq_text}; element {k} is {_short.repr(v)}."
            )
    if len(items) < min_len or (max_len is not None and len(items) > max_len):
        bound = f"at least {min_len}" if max_len is None else f"between {min_len} and {max_len}"
        fail(f"{seq_text} with {bound} elements")
    cast = int if element.type is Integral else float
    return tuple(cast(v) for v in items)
