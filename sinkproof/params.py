"""The meaningful range of every parameter a user gives by name, checked one way.

A CLI option (``--eps``, ``--T``, ``--seeds``) and a sweep setting (``eps``, ``T``,
``task.T`` in a check job) with the same name are checked by the same rule, so a
meaningless value (``eps >= 1``, where every sink bound is vacuous; a BOS mass above 1;
a negative count or seed; ``T = 0``) is refused the same way everywhere, before any
work, with a message naming it.  Numbers are read exactly (:mod:`sinkproof.exact_numbers`).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from .exact_numbers import bos_mass, bounded, error_level

INTEGERS: dict[str, int] = {
    "p": 1, "T": 1, "k": 1, "heads": 1, "steps": 1, "restarts": 1, "maxiter": 1,
    "batch_size": 1, "n_train": 1, "n_heldout": 1, "n_longer": 1, "n_probe": 1,
    "record_every": 1, "longer_T": 2, "radius": 0, "rows": 0, "seed": 0, "content_seed": 0,
    "seeds": 1, "jobs": 1, "workers": 1, "max_jobs": 1, "max_work": 1,
}
"""Integer parameters and the least meaningful value of each."""


def _eps(value: Any, name: str) -> Fraction:
    return error_level(value, name, positive=True)


def _error(value: Any, name: str) -> Fraction:
    return error_level(value, name)


def _positive(value: Any, name: str) -> Fraction:
    return bounded(value, name, 0, low_open=True)


NUMBERS: dict[str, Callable[[Any, str], Fraction]] = {
    "eps": _eps, "max_error": _error, "min_bos_mass": bos_mass, "max_bos_mass": bos_mass,
    "lr": _positive, "budget": _positive,
}
"""Number parameters and their checks: an error level in ``(0, 1)`` (``eps``: a bound is
computed) or ``[0, 1)``, a BOS mass in ``[0, 1]``, a rate or a budget ``> 0``."""


def integer(value: Any, name: str, minimum: int) -> int:
    """``value`` (an int or its decimal text) as an int ``>= minimum``."""
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check(name: str, value: Any) -> Any:
    """``value`` checked for the parameter ``name`` (the last part of a dotted name:
    ``task.T`` is ``T``): an int for an integer parameter, the exact Fraction for a number;
    ``None`` (a default) and parameters without a rule are returned unchanged."""
    key = name.rsplit(".", 1)[-1]
    if value is None:
        return None
    if key in INTEGERS:
        return integer(value, name, INTEGERS[key])
    if key in NUMBERS:
        return NUMBERS[key](value, name)
    return value


__all__ = ["INTEGERS", "NUMBERS", "check", "integer"]
