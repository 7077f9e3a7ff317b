"""Exact comparisons of a theorem's SymPy bound with a claim's rational threshold.

SymPy decides ``x >= b`` for most closed forms by evaluating the difference with
enough precision, but it leaves the relational undecided when the difference is
exactly zero in a form it cannot see through (``log(8)/log(2) >= 3``), and
``bool()`` of that raises.  :func:`at_least` settles those cases exactly (zero
recognised by simplification, else the sign at rising precision) and, when nothing
decides, answers ``False``: a proof route that cannot be decided does not prove.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import sympy

PRECISIONS = (60, 240, 1000)
"""Digits tried in turn when SymPy leaves a comparison undecided."""


def _number(x: Any) -> sympy.Expr:
    if isinstance(x, Fraction):
        return sympy.Rational(x.numerator, x.denominator)
    return sympy.sympify(x)


def _sign(diff: sympy.Expr) -> int | None:
    """The sign of a closed-form real number, or ``None`` when undecided."""
    if diff.is_zero:
        return 0
    if diff.is_positive:
        return 1
    if diff.is_negative:
        return -1
    try:
        if diff.equals(0):
            return 0
    except (TypeError, ValueError, NotImplementedError):
        pass
    for digits in PRECISIONS:
        value = diff.evalf(digits)
        # a Float with its own accuracy (``_prec`` bits, > 1 means digits were obtained)
        if isinstance(value, sympy.Float) and value != 0 and getattr(value, "_prec", 0) > 1:
            return 1 if value > 0 else -1
    return None


def at_least(x: Any, b: Any) -> bool:
    """``x >= b`` exactly (``x`` a SymPy closed form, ``b`` rational); ``False`` when it
    cannot be decided."""
    x, b = _number(x), _number(b)
    try:
        rel = x >= b
        if rel is sympy.true or rel is sympy.false:
            return bool(rel)
    except TypeError:
        pass
    sign = _sign(sympy.expand(x - b))
    return sign is not None and sign >= 0


def rational_below(x: Any, digits: int = 60) -> Fraction:
    """A rational ``<= x`` (a real SymPy closed form), within about ``10**-(digits-10)``
    relative of it: SymPy's ``digits``-digit value moved down by far more than its error."""
    x = _number(x)
    if x.is_Rational:
        return Fraction(int(x.p), int(x.q))
    value = x.evalf(digits)
    if not (isinstance(value, sympy.Float) and value.is_finite):
        raise ValueError(f"cannot evaluate the bound {x}")
    q = Fraction(str(value))
    slack = abs(q) * Fraction(1, 10 ** (digits - 10)) + Fraction(1, 10 ** (digits + 100))
    return q - slack
