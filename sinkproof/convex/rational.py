"""From float solver output to exact rationals, rounding in the safe direction.

A certificate's numbers are rationals; whatever is *derived* from them (a
distance, a bound) is recomputed exactly from the rounded data and rounded
down, so a certified bound may be slightly weaker than the float one but never
stronger.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from ..certformat import dot, norm_sq
from ..numerics import stable_norm

Vector = list[Fraction]

DIRECTION_SCALE = 10**9
"""Directions are rounded to integer vectors of this magnitude (scale is irrelevant)."""

BOUND_DENOMINATOR = 10**12
"""Derived distances and bounds are rounded down to this denominator."""


def exact_vector(x: Sequence[float] | np.ndarray) -> Vector:
    """Floats to rationals, exactly (``Fraction(float)`` is the binary value)."""
    return [Fraction(float(v)) for v in np.asarray(x, dtype=float).ravel()]


def floor_to(x: Fraction, denominator: int = BOUND_DENOMINATOR) -> Fraction:
    """The largest multiple of ``1/denominator`` that is ``<= x``."""
    return Fraction(math.floor(x * denominator), denominator)


def floor_significant(x: Fraction, digits: int = 12) -> Fraction:
    """``x > 0`` rounded down to ``digits`` significant decimal digits."""
    if x <= 0:
        raise ValueError("floor_significant needs x > 0")
    exponent = len(str(x.numerator)) - len(str(x.denominator))  # within one of log10(x)
    denominator = Fraction(10) ** (digits - exponent)
    return Fraction(math.floor(x * denominator)) / denominator


def sqrt_upper(x: Fraction) -> Fraction:
    """A rational ``u >= sqrt(x)`` (``x >= 0``), tight to about one part in ``10^12``."""
    if x < 0:
        raise ValueError("square root of a negative number")
    scale = BOUND_DENOMINATOR**2
    n = x.numerator * scale * x.denominator  # sqrt(x) = sqrt(n) / (den * 10^12)
    r = math.isqrt(n)
    if r * r < n:
        r += 1
    return Fraction(r, x.denominator * BOUND_DENOMINATOR)


def integer_direction(w: Sequence[float] | np.ndarray) -> Vector | None:
    """``w`` scaled to norm ``DIRECTION_SCALE`` and rounded to integers (``None`` if ``w ≈ 0``)."""
    w = np.asarray(w, dtype=float).ravel()
    norm = float(stable_norm(w))
    if not np.isfinite(norm) or norm == 0.0:
        return None
    ints = [Fraction(round(v)) for v in w / norm * DIRECTION_SCALE]
    return ints if any(ints) else None


def certified_distance(w: Vector, points: Sequence[Vector]) -> Fraction | None:
    """A rational ``d`` (rounded down to 12 digits) with ``d·||w|| <= w·v`` for all ``v``, or None.

    ``d = floor(min_v w·v / u)`` with ``u >= ||w||`` rational, so ``d`` never
    exceeds ``dist(0, conv points)``.  ``None`` when ``min_v w·v <= 0``.
    """
    m = min(dot(w, v) for v in points)
    if m <= 0:
        return None
    return floor_significant(m / sqrt_upper(norm_sq(w)))


def solve_exact(columns: Sequence[Vector], rhs: Vector) -> Vector | None:
    """Solve ``Σ_i x_i columns[i] = rhs`` exactly; ``None`` if inconsistent or not unique."""
    n = len(columns)
    rows = [[col[r] for col in columns] + [rhs[r]] for r in range(len(rhs))]
    pivots: list[int] = []
    r = 0
    for c in range(n):
        pivot = next((i for i in range(r, len(rows)) if rows[i][c] != 0), None)
        if pivot is None:
            return None  # a free variable: the columns are dependent
        rows[r], rows[pivot] = rows[pivot], rows[r]
        inv = 1 / rows[r][c]
        rows[r] = [v * inv for v in rows[r]]
        for i in range(len(rows)):
            if i != r and rows[i][c] != 0:
                f = rows[i][c]
                rows[i] = [a - f * b for a, b in zip(rows[i], rows[r])]
        pivots.append(c)
        r += 1
    if any(row[-1] != 0 for row in rows[r:]):
        return None
    return [rows[i][-1] for i in range(n)]
