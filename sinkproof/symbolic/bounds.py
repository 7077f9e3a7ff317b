"""Closed-form bounds as SymPy expressions with fast numeric twins, and the exact constants
they take.

A :class:`Formula` holds one expression in named symbols; ``formula.exact(...)``
substitutes exact values (rationals, square roots) and ``formula(...)`` evaluates
in floating point (NumPy, vectorised).  The constants a task supplies - content
norms, ray gaps ``g(c, c')``, hull distances ``d_t`` - are computed exactly here.
The theorems' own formulas live with their statements in :mod:`sinkproof.theorems`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import combinations
from typing import Any

import numpy as np
import sympy

from .exact import as_fraction

EPS = sympy.Symbol("ε", positive=True)
"""The error level of the hypothesis ``E <= ε``."""
VALUE_NORM = sympy.Symbol("‖v_c‖", positive=True)
CONTENT_NORM = sympy.Symbol("‖c‖", positive=True)
GAP = sympy.Symbol("g", positive=True)
HULL = sympy.Symbol("d_t", positive=True)


def exact_number(x: Any) -> sympy.Expr:
    """A SymPy number from a rational-like value (floats convert exactly) or a SymPy expression."""
    if isinstance(x, sympy.Expr):
        return x
    f = as_fraction(x)
    return sympy.Rational(f.numerator, f.denominator)


def exact_sqrt(x: Any) -> sympy.Expr:
    """``√x`` for a rational ``x >= 0``, exactly.  Small rationals get SymPy's simplified
    form (``sqrt(2)/2``); huge ones (exact floats) an unevaluated root, so SymPy does not
    spend seconds factoring their numerators."""
    q = as_fraction(x)
    if q < 0:
        raise ValueError(f"square root of a negative number {q}")
    if max(q.numerator, q.denominator) < 10**12:
        return sympy.sqrt(exact_number(q))
    root = math.isqrt(q.numerator * q.denominator)
    if root * root == q.numerator * q.denominator:
        return sympy.Rational(root, q.denominator)
    return sympy.Pow(exact_number(q), sympy.Rational(1, 2), evaluate=False)


def sqrt_float(x: Any) -> float:
    """``√x`` for a rational ``x >= 0`` as a float within one unit in the last place, at any
    scale: the root is taken on integers (``isqrt`` of ``x·4^k`` scaled to 64+ bits), so a square
    that is subnormal or beyond the float range as a float still gives its accurate root."""
    q = as_fraction(x)
    if q < 0:
        raise ValueError(f"square root of a negative number {q}")
    if q == 0:
        return 0.0
    n, d = q.numerator, q.denominator
    k = max(0, (130 - (n.bit_length() - d.bit_length())) // 2 + 1)  # n·4^k/d >= 2^128
    root = math.isqrt((n << (2 * k)) // d)  # floor(√x · 2^k), at least 64 bits
    shift = max(0, root.bit_length() - 64)  # float() of a 1024-bit int would overflow
    try:
        return math.ldexp(float(root >> shift), shift - k)
    except OverflowError:
        return math.inf


@dataclass(frozen=True)
class Formula:
    """A bound ``expr`` in the symbols ``args``, with exact and numeric evaluation."""

    name: str
    expr: sympy.Expr
    args: tuple[sympy.Symbol, ...]
    meaning: str
    names: tuple[str, ...] = ()
    _numeric: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_numeric", None)  # compiled on the first float call

    def _function(self) -> Any:
        """The float form, by ``sympy.lambdify`` (which loads numpy's code printers: made on
        first use, so defining the registry's formulas costs no compilation)."""
        if self._numeric is None:
            fn = sympy.lambdify(self.args, self.expr, "numpy", dummify=True)
            object.__setattr__(self, "_numeric", fn)
        return self._numeric

    @property
    def keywords(self) -> list[str]:
        """The keyword names ``__call__`` and ``exact`` take, in the order of ``args``."""
        return list(self.names) if self.names else [str(a) for a in self.args]

    def _values(self, values: dict[str, Any]) -> list[Any]:
        names = self.keywords
        missing = [n for n in names if n not in values]
        extra = sorted(set(values) - set(names))
        if missing or extra:
            raise TypeError(f"{self.name} takes {', '.join(names)}"
                            f"{'; missing ' + ', '.join(missing) if missing else ''}"
                            f"{'; unknown ' + ', '.join(extra) if extra else ''}")
        return [values[n] for n in names]

    def exact(self, **values: Any) -> sympy.Expr:
        """The bound with exact values substituted (SymPy's automatic simplification only)."""
        vals = self._values(values)
        return self.expr.subs({a: exact_number(v) for a, v in zip(self.args, vals)})

    def __call__(self, **values: Any) -> Any:
        """The bound in floating point (arrays broadcast)."""
        vals = self._values(values)
        return self._function()(*[np.asarray(v, dtype=float) for v in vals])

    def __repr__(self) -> str:
        return f"{self.name}: {sympy.sstr(self.expr)}"


# ------------------------------------------------------------------- exact constants
def _vector(name: str, v: Any) -> tuple[Fraction, ...]:
    arr = np.asarray(v, dtype=object)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty vector, got shape {arr.shape}")
    return tuple(as_fraction(x) for x in arr)


def _dot(a: Sequence[Fraction], b: Sequence[Fraction]) -> Fraction:
    return sum((x * y for x, y in zip(a, b)), Fraction(0))


def norm_exact(v: Any) -> sympy.Expr:
    """``‖v‖`` exactly (the square root of a rational)."""
    x = _vector("v", v)
    return exact_sqrt(_dot(x, x))


class _RationalRoot:
    """A quantity known exactly through its rational square (``_square`` names the field)."""

    _square = ""

    @property
    def exact(self) -> sympy.Expr:
        return exact_sqrt(getattr(self, self._square))

    @property
    def value(self) -> float:
        return sqrt_float(getattr(self, self._square))


@dataclass(frozen=True)
class RayGap(_RationalRoot):
    """``g(c, c') = min_{‖u‖=1} max(d(c, R_+u), d(c', R_+u))`` exactly, with its case.

    Closed form (the optimal ``u`` lies in the plane of ``c, c'``, between them): if
    ``c·(c+c') < 0`` then ``g = ‖c‖``; if ``c'·(c+c') < 0`` then ``g = ‖c'‖``; else
    ``g² = (‖c‖²‖c'‖² - (c·c')²) / ‖c+c'‖² = ‖c ∧ c'‖² / ‖c+c'‖²`` (and ``g = ‖c‖`` when
    ``c' = -c``).
    ``g_squared`` is an exact rational.
    """

    g_squared: Fraction
    case: str
    _square = "g_squared"


def ray_gap(c: Any, c2: Any) -> RayGap:
    """The ray gap of two content vectors (rational or float entries, converted exactly)."""
    a, b = _vector("c", c), _vector("c'", c2)
    if len(a) != len(b):
        raise ValueError(f"c and c' must have the same length, got {len(a)} and {len(b)}")
    aa, bb, ab = _dot(a, a), _dot(b, b), _dot(a, b)
    if aa + ab < 0:
        return RayGap(aa, "c·(c+c') < 0: g = ‖c‖")
    if bb + ab < 0:
        return RayGap(bb, "c'·(c+c') < 0: g = ‖c'‖")
    s = aa + bb + 2 * ab
    if s == 0:
        return RayGap(aa, "c' = -c: g = ‖c‖")
    return RayGap((aa * bb - ab * ab) / s, "g = ‖c ∧ c'‖ / ‖c + c'‖")


def ray_distance(z: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``d(z, R_+u)`` for unit vectors ``u`` (rows), in floating point."""
    proj = np.maximum(u @ z, 0.0)
    return np.sqrt(np.maximum(z @ z - proj**2, 0.0))


@dataclass(frozen=True)
class HullDistance(_RationalRoot):
    """``d = dist(0, conv V)`` exactly: ``d_squared`` rational, the min-norm point ``x``
    (rational) and its barycentric weights.  ``x`` is its own certificate: ``x·v >= x·x``
    for every ``v ∈ V`` (so ``‖z‖ >= ‖x‖`` for every ``z`` in the hull)."""

    d_squared: Fraction
    point: tuple[Fraction, ...]
    weights: tuple[Fraction, ...]
    _square = "d_squared"


def _solve(M: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction] | None:
    """Exact Gaussian elimination; ``None`` when ``M`` is singular."""
    n = len(M)
    aug = [row[:] + [r] for row, r in zip(M, rhs)]
    for col in range(n):
        piv = next((r for r in range(col, n) if aug[r][col] != 0), None)
        if piv is None:
            return None
        aug[col], aug[piv] = aug[piv], aug[col]
        for r in range(n):
            if r != col and aug[r][col] != 0:
                f = aug[r][col] / aug[col][col]
                aug[r] = [x - f * y for x, y in zip(aug[r], aug[col])]
    return [aug[i][n] / aug[i][i] for i in range(n)]


def hull_distance(vectors: Any) -> HullDistance:
    """``dist(0, conv V)`` exactly for a small set of rational vectors (active-set enumeration).

    Every face is tried: the min-norm point of its affine hull solves a rational
    linear system; the answer is the one with non-negative weights that passes the
    optimality certificate ``x·v >= x·x`` for all ``v``.  Cost grows as ``2^|V|``:
    meant for the handful of distinct values a prefix can hold.
    """
    arr = np.asarray(vectors, dtype=object)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise ValueError(f"vectors must be a non-empty (m, p) array, got shape {arr.shape}")
    pts = list(dict.fromkeys(tuple(as_fraction(x) for x in row) for row in arr))
    if len(pts) > 12:
        raise ValueError(f"hull_distance enumerates faces; {len(pts)} distinct points is too many")
    for size in range(1, len(pts) + 1):
        for face in combinations(pts, size):
            gram = [[_dot(u, v) for v in face] + [Fraction(1)] for u in face]
            lam = _solve(gram + [[Fraction(1)] * size + [Fraction(0)]],
                         [Fraction(0)] * size + [Fraction(1)])
            if lam is None or any(x < 0 for x in lam[:size]):
                continue
            x = tuple(sum((w * v[i] for w, v in zip(lam, face)), Fraction(0))
                      for i in range(len(face[0])))
            xx = _dot(x, x)
            if all(_dot(x, v) >= xx for v in pts):
                weights = tuple(lam[face.index(v)] if v in face else Fraction(0) for v in pts)
                return HullDistance(xx, x, weights)
    raise AssertionError("no face passed the optimality test")  # impossible: some face is optimal
