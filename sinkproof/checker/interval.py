"""Outward-rounded interval arithmetic for the checker, in one module: every enclosure a
rule takes, with its end points converted exactly to rationals before any decision.

Three representations, each for the computation that uses it (merging them into one type
is issue 23's next step; each here rounds every end point outward):

- **libmp pairs** ``(lower mpf, upper mpf)`` for a map's weights at exact rational scores
  (:mod:`sinkproof.checker.maps`): :func:`point`, :func:`exp_interval`,
  :func:`inverse_sum_of_exps`, :func:`sigmoid_interval`, :func:`to_rationals`;
- **fixed point** :class:`FixedPoint`, integers ``(lo, hi)`` over ``2^P``, for the softmax
  witness's table of terms (sums exact, products and quotients rounded outward);
- **mpmath.iv** intervals for the rows of a stack witness once a layer is not exact
  (:mod:`sinkproof.checker.rules.heads`): :func:`ivq`, :func:`ivpair`, :func:`lower`,
  :func:`upper`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from mpmath import iv, libmp

from ..errors import CertificateError

Interval = tuple[Fraction, Fraction]
"""A closed interval ``[lo, hi]`` of rationals."""

Mpi = tuple[tuple, tuple]  # libmp interval: (lower mpf, upper mpf)


def prec_of(digits: int) -> int:
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 10:
        raise ValueError(f"digits must be an int >= 10, got {digits!r}")
    return libmp.dps_to_prec(digits) + 10


def point(x: Fraction, prec: int) -> Mpi:
    return (libmp.from_rational(x.numerator, x.denominator, prec, libmp.round_floor),
            libmp.from_rational(x.numerator, x.denominator, prec, libmp.round_ceiling))


def to_rationals(a: Mpi) -> Interval:
    lo, hi = (Fraction(*libmp.to_rational(e)) for e in a)
    return lo, hi


def exp_interval(x: Fraction, prec: int) -> Mpi:
    return libmp.mpi_exp(point(x, prec), prec)


def inverse_sum_of_exps(gaps: list[Fraction], prec: int) -> Mpi:
    """An interval holding ``1 / Σ_i exp(gaps_i)`` (exact zeros in ``gaps`` give 1)."""
    total = point(Fraction(0), prec)
    for g in gaps:
        total = libmp.mpi_add(total, point(Fraction(1), prec) if g == 0 else exp_interval(g, prec),
                              prec)
    return libmp.mpi_div(point(Fraction(1), prec), total, prec)


def sigmoid_interval(z: Fraction, prec: int) -> Mpi:
    return inverse_sum_of_exps([Fraction(0), -z], prec)


class FixedPoint:
    """Rigorous interval arithmetic in fixed point: ``(lo, hi)`` integers standing for
    ``[lo / 2^P, hi / 2^P]``.

    Sums are exact; products and quotients round ``lo`` down and ``hi`` up; ``exp``
    comes from mpmath's outward-rounded interval exponential (``libmpi.mpi_exp``).
    ``P`` is the bit precision of ``digits`` decimal digits.  Quantities stay in a
    range where an absolute precision of ``2^-P`` is ample: softmax denominators are
    ``>= 1`` (the BOS term is ``exp(0)``).
    """

    def __init__(self, digits: int) -> None:
        self.P = libmp.dps_to_prec(digits)
        self.one = 1 << self.P

    def of(self, x: Fraction) -> tuple[int, int]:
        """The tightest interval holding the rational ``x``."""
        n = x.numerator << self.P
        return n // x.denominator, -((-n) // x.denominator)

    def exp(self, x: Fraction) -> tuple[int, int]:
        """An interval holding ``exp(x)``."""
        prec = self.P + 20
        a = (libmp.from_rational(x.numerator, x.denominator, prec, libmp.round_floor),
             libmp.from_rational(x.numerator, x.denominator, prec, libmp.round_ceiling))
        lo, hi = libmp.mpi_exp(a, prec)
        return (libmp.to_int(libmp.mpf_shift(lo, self.P), libmp.round_floor),
                libmp.to_int(libmp.mpf_shift(hi, self.P), libmp.round_ceiling))

    @staticmethod
    def scale(a: tuple[int, int], v: Fraction) -> tuple[int, int]:
        """``a · v`` for an exact rational ``v``."""
        n, d = v.numerator, v.denominator
        lo, hi = (a[0] * n, a[1] * n) if n >= 0 else (a[1] * n, a[0] * n)
        return lo // d, -((-hi) // d)

    def div(self, a: tuple[int, int], z: tuple[int, int]) -> tuple[int, int]:
        """``a / z`` for ``z > 0``."""
        n0, n1 = a[0] << self.P, a[1] << self.P
        lo = min(n0 // z[0], n0 // z[1])
        hi = max(-((-n1) // z[0]), -((-n1) // z[1]))
        return lo, hi

    def square_upper(self, a: tuple[int, int]) -> Fraction:
        """An upper bound on ``x²`` over the interval ``a``, exactly."""
        return Fraction(max(a[0] * a[0], a[1] * a[1]), self.one * self.one)

    def lower(self, a: tuple[int, int]) -> Fraction:
        return Fraction(a[0], self.one)


def ivq(q: Fraction) -> Any:
    """An interval holding the rational ``q``."""
    return iv.mpf(q.numerator) / q.denominator


def ivpair(lo: Fraction, hi: Fraction) -> Any:
    """An interval holding ``[lo, hi]``."""
    return iv.mpf([ivq(lo).a, ivq(hi).b])


def as_iv(x: Any) -> Any:
    return ivq(x) if isinstance(x, Fraction) else x


def _end(x: Any, which: int) -> Fraction:
    sign, man, exp, bc = x._mpi_[which]
    if man == 0 and (exp, bc) != (0, 0):  # mpmath's inf and nan have no mantissa
        raise CertificateError("an interval overflowed: the model's numbers are out of range")
    value = Fraction(man) * (Fraction(2) ** exp)
    return -value if sign else value


def lower(x: Any) -> Fraction:
    """The lower end point exactly (a Fraction is its own)."""
    return x if isinstance(x, Fraction) else _end(x, 0)


def upper(x: Any) -> Fraction:
    """The upper end point exactly (a Fraction is its own)."""
    return x if isinstance(x, Fraction) else _end(x, 1)
