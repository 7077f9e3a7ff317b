"""Exact rational arithmetic for the checks, and the signal of a failed inequality."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction

from mpmath import libmp

from .limits import FLAGS, LimitExceeded, current
from .schema import format_rational

Vector = Sequence[Fraction]


class InequalityFailed(Exception):
    """A well-formed certificate whose inequality does not hold (the CLI exits 1, not 2);
    ``figures``: what the rule measured before it failed (a witness's bounds), if any."""

    def __init__(self, message: str, figures: object = None) -> None:
        super().__init__(message)
        self.figures = figures


def common_denominator(values: Iterable[Fraction], what: str) -> int:
    """The least common multiple of the denominators of ``values``, refused
    (:class:`~sinkproof.checker.limits.LimitExceeded`) as soon as it passes the
    ``denominator_digits`` limit: numbers with unrelated large denominators would make
    every exact sum as long as all of them together."""
    limit = current().denominator_digits
    cap = int(limit * math.log2(10)) + 1  # bits
    out = 1
    for x in values:
        out = math.lcm(out, x.denominator)
        if out.bit_length() > cap:
            raise LimitExceeded(f"{what}: the common denominator has more than {limit} digits "
                                f"(raise it with {FLAGS['denominator_digits']})",
                                "denominator_digits")
    return out


def dot(u: Vector, v: Vector) -> Fraction:
    """Exact inner product."""
    if len(u) != len(v):
        raise ValueError(f"vectors of lengths {len(u)} and {len(v)} cannot be multiplied")
    return sum((a * b for a, b in zip(u, v)), Fraction(0))


def norm_sq(u: Vector) -> Fraction:
    """Exact squared Euclidean norm ``u·u``."""
    return dot(u, u)


def show(x: Fraction) -> str:
    """A rational with its decimal value, for messages: ``"99/100 (0.99)"``.

    Never converts through ``float`` or ``str`` of a huge integer (either can raise on a
    number of thousands of digits, which would turn a failed inequality into a malformed
    file): the text is cut by digit count and the value comes from mpmath's arbitrary
    exponent."""
    x = Fraction(x)
    length = _length(x)
    if length > 60:  # a long rational is shown by its value only
        text = f"{format_rational(x)[:24] if length < 4000 else _lead(x)}...({length} characters)"
    else:
        text = format_rational(x)
    if x.denominator == 1:
        return text
    return f"{text} (~{approx(x)})"


def approx(x: Fraction) -> str:
    """``x`` to 6 significant digits (``%.6g``), also beyond the range of a double (from
    mpmath's unbounded exponent), for messages."""
    try:
        return f"{float(x):.6g}"
    except OverflowError:
        return libmp.to_str(libmp.from_rational(x.numerator, x.denominator, 53,
                                                libmp.round_nearest), 6)


def _digits(n: int) -> int:
    """Decimal digits of ``|n|``, exactly, without ``str`` of a huge ``n``."""
    n = abs(n)
    if n < 10**4000:
        return len(str(n))
    guess = int(n.bit_length() * 0.30102999566398120)
    return guess + (n >= 10**guess)


def _length(x: Fraction) -> int:
    """Characters of :func:`format_rational` of ``x``."""
    sign = x.numerator < 0
    if x.denominator == 1:
        return sign + _digits(x.numerator)
    return sign + _digits(x.numerator) + 1 + _digits(x.denominator)


def _lead(x: Fraction) -> str:
    """The first 24 characters of :func:`format_rational` of a huge ``x``."""
    n = abs(x.numerator)
    head = str(n // 10 ** max(0, _digits(n) - 24))
    return ("-" if x.numerator < 0 else "") + head[: 24 - (x.numerator < 0)]


def check_leq(lhs: Fraction, rhs: Fraction, what: str) -> None:
    """Require ``lhs <= rhs`` exactly; otherwise raise :class:`InequalityFailed` naming ``what``."""
    if not lhs <= rhs:
        raise InequalityFailed(f"{what}: {show(lhs)} <= {show(rhs)} is false")


def check_lt(lhs: Fraction, rhs: Fraction, what: str) -> None:
    """Require ``lhs < rhs`` exactly."""
    if not lhs < rhs:
        raise InequalityFailed(f"{what}: {show(lhs)} < {show(rhs)} is false")


def check_eq(lhs: Fraction, rhs: Fraction, what: str) -> None:
    """Require ``lhs == rhs`` exactly."""
    if lhs != rhs:
        raise InequalityFailed(f"{what}: {show(lhs)} == {show(rhs)} is false")


def check_scaled_norm_leq(d: Fraction, w: Vector, value: Fraction, what: str) -> None:
    """Require ``d·||w|| <= value`` with ``d >= 0``, without square roots.

    Equivalent exact form: ``value >= 0`` and ``d²·(w·w) <= value²``.
    """
    if d < 0:
        raise InequalityFailed(f"{what}: distance {show(d)} is negative")
    if value < 0:
        raise InequalityFailed(f"{what}: {show(value)} >= 0 is false (needed for d·||w|| <= it)")
    if norm_sq(w) == 0:
        raise InequalityFailed(f"{what}: w = 0 separates nothing")
    lhs = d * d * norm_sq(w)
    if not lhs <= value * value:
        raise InequalityFailed(
            f"{what}: d·||w|| <= w·v fails: d²·||w||² = {show(lhs)} "
            f"> (w·v)² = {show(value * value)}"
        )


def check_hull_bound(w: Vector, d: Fraction, bound: Fraction, values: Iterable[tuple[str, Vector]],
                     factor: int, eps: Fraction, what: str) -> None:
    """Require that ``w`` and ``d`` bound the hull's distance from 0 and ``bound <= 1 - f·ε/d``.

    ``d > 0`` and ``d·||w|| <= w·v`` for every named value ``v`` give ``d <= dist(0, conv{v})``
    (Theorem 3's separating direction); the bound is checked multiplied by ``d``.
    """
    check_lt(Fraction(0), d, f"{what}: distance d > 0")
    for name, v in values:
        check_scaled_norm_leq(d, w, dot(w, v), f"{what}: {name}")
    check_leq(bound * d, d - factor * eps, f"{what}: bound <= 1 - {factor}·ε/d, times d")
