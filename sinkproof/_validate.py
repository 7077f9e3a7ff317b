"""Input checks shared by the public API: clear errors before numpy sees bad data."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


def as_int(name: str, value: Any, minimum: int | None = None) -> int:
    """Return ``value`` as a Python int, or raise a TypeError/ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def as_real(name: str, value: Any, minimum: float | None = None, strict: bool = False) -> float:
    """Return ``value`` as a finite float, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    try:
        value = float(value)
    except OverflowError:  # an integer or fraction beyond the float range: bad input
        raise ValueError(f"{name} must be finite, got a number beyond the float range "
                         "(about 1.8e308)") from None
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if minimum is not None and (value <= minimum if strict else value < minimum):
        op = ">" if strict else ">="
        raise ValueError(f"{name} must be {op} {minimum}, got {value}")
    return value


def as_real_array(name: str, value: Any, ndim: int | tuple[int, ...] | None = None) -> np.ndarray:
    """A fresh float64 copy of ``value``; rejects non-numeric, complex and non-finite input."""
    try:
        arr = np.array(value, copy=True)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} must be a numeric array: {exc}") from None
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.integer)
        or np.issubdtype(arr.dtype, np.floating)
        or np.issubdtype(arr.dtype, np.bool_)
    ):
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in allowed:
            want = " or ".join(str(d) for d in allowed)
            raise ValueError(f"{name} must have {want} dimensions, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains non-finite values (nan or inf)")
    return arr


def choice(name: str, value: Any, options: tuple[str, ...]) -> str:
    """Check that ``value`` is one of ``options``."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"unknown {name} {value!r}; expected one of {', '.join(options)}")
    return value
