"""The checker's one outward-rounded interval type, mpmath's ``iv`` (why not Arb:
``docs/certificates.md``, "The trusted base"), and :class:`FixedPoint`, enclosures on the
grid ``2^-P`` where the softmax witness's sums are exact.  End points leave as exact
:class:`fractions.Fraction`, so every decision is taken on rationals."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

from mpmath import iv, libmp

from ..errors import CertificateError

Interval = tuple[Fraction, Fraction]
"""A closed interval ``[lo, hi]`` of rationals (an interval's exact end points)."""


def prec_of(digits: int) -> int:
    """Working bits for ``digits`` decimal digits, with 10 guard bits."""
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 10:
        raise ValueError(f"digits must be an int >= 10, got {digits!r}")
    return libmp.dps_to_prec(digits) + 10


@contextmanager
def precision(prec: int) -> Iterator[None]:
    """Run the block with ``prec`` working bits for every interval operation."""
    saved = iv.prec
    iv.prec = prec
    try:
        yield
    finally:
        iv.prec = saved


def point(q: Fraction) -> Any:
    """The tightest interval holding the rational ``q`` at the working precision."""
    n, d = q.numerator, q.denominator
    return iv.make_mpf((libmp.from_rational(n, d, iv.prec, libmp.round_floor),
                        libmp.from_rational(n, d, iv.prec, libmp.round_ceiling)))


def ivq(q: Fraction) -> Any:
    """An interval holding the rational ``q``: its numerator over its denominator."""
    return iv.mpf(q.numerator) / q.denominator


def ivpair(lo: Fraction, hi: Fraction) -> Any:
    """An interval holding ``[lo, hi]``."""
    return iv.mpf([ivq(lo).a, ivq(hi).b])


def as_iv(x: Any) -> Any:
    """``x`` as an interval (a Fraction by :func:`ivq`)."""
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


def ends(x: Any) -> Interval:
    """Both end points exactly."""
    return lower(x), upper(x)


class FixedPoint:
    """Enclosures on the grid ``2^-P``: ``(lo, hi)`` integers stand for ``[lo/2^P, hi/2^P]``.

    Sums are exact; products with a rational and quotients round ``lo`` down and ``hi``
    up; ``exp`` is this module's interval rounded outward onto the grid.  ``P`` is the bit
    precision of ``digits`` decimal digits; quantities stay where an absolute precision of
    ``2^-P`` is ample (softmax denominators are ``>= 1``, the BOS term being ``exp(0)``).
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
        with precision(self.P + 20):
            lo, hi = iv.exp(point(x))._mpi_
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
        return (min(n0 // z[0], n0 // z[1]), max(-((-n1) // z[0]), -((-n1) // z[1])))

    def square_upper(self, a: tuple[int, int]) -> Fraction:
        """An upper bound on ``x²`` over the interval ``a``, exactly."""
        return Fraction(max(a[0] * a[0], a[1] * a[1]), self.one * self.one)

    def lower(self, a: tuple[int, int]) -> Fraction:
        return Fraction(a[0], self.one)
