"""Attention weights for the checker: exact rationals where the map is rational, else intervals.

Given rational scores ``s_0..s_t`` of one query (key 0 is BOS) and rational map
parameters, this module computes the weights ``α_0..α_t`` of each attention map
with nothing but the standard library and mpmath:

- **exact** (:func:`exact_weights`, :class:`fractions.Fraction`): ``relu``
  ``max(0, s_j)``; ``relu_length`` ``max(0, s_j) / max(t, 1)``; ``sparsemax``, the
  Euclidean projection onto the simplex, ``α_j = max(0, s_j - τ)`` with
  ``τ = (Σ_{j∈S} s_j - 1)/|S|`` rational for the support ``S``;
- **intervals** (:func:`interval_weights`, pairs ``(lo, hi)`` of Fractions that
  contain the true value, from mpmath's outward-rounded interval arithmetic):
  ``softmax``/``gated_softmax`` ``α_j = 1 / Σ_k exp(s_k - s_j)``; ``sink_logit``
  (parameter ``b``) ``α_j = 1 / (exp(b - s_j) + Σ_k exp(s_k - s_j))``, its zero-valued
  slot taking ``1 / (1 + Σ_k exp(s_k - b))``; ``softmax1`` the same at ``b = 0``;
  ``sigmoid`` (parameter ``b``) ``α_j = 1 / (1 + exp(-s_j - b))``; ``entmax15``
  ``α_j = max(0, s_j/2 - τ)^2`` with ``Σ_j α_j = 1``, where the support and
  ``τ = m - sqrt((1 - q)/|S|)`` (``m`` the support's mean of ``s_j/2``, ``q`` its
  sum of squared deviations) are decided exactly and only the square root is
  enclosed; ``stick_breaking`` with keys taken from ``t`` down to 0,
  ``α_k = σ(s_k) Π_{k<l<=t} (1 - σ(s_l))`` (``σ`` the logistic sigmoid), its remainder
  ``Π_{l<=t} (1 - σ(s_l))`` a zero-valued null (the weights lie under the simplex and
  weights plus null sum to 1); :func:`gate_interval` encloses a gate ``σ(z)``.

Each map is one row of :data:`RULES` (its parameters, its exact form if any, its interval
form, its null mass): the checker looks a map up by name and never branches on it.

The support of sparsemax and entmax-1.5 is found by the sort-based rule and then
confirmed exactly: every key in the support lies at or above ``τ`` and every
other key at or below it, which makes ``τ`` the unique root of the defining
equation ``Σ_j [x_j - τ]_+^r = 1``.  Written independently of the producer's float
code; it imports nothing of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from mpmath import libmp

__all__ = [
    "INTERVAL_MAPS",
    "MAP_NAMES",
    "MAP_PARAMETERS",
    "NULL_MAPS",
    "RULES",
    "MapRule",
    "RATIONAL_MAPS",
    "Interval",
    "exact_entmax15_weights",
    "exact_weights",
    "gate_interval",
    "interval_weights",
    "null_slot_interval",
]

Interval = tuple[Fraction, Fraction]
"""A closed interval ``[lo, hi]`` of rationals."""

MAP_NAMES = ("softmax", "sink_logit", "softmax1", "sparsemax", "entmax15", "sigmoid", "relu",
             "relu_length", "gated_softmax", "stick_breaking")
RATIONAL_MAPS = ("relu", "relu_length", "sparsemax")
"""Maps whose weights at rational scores are rational (computed exactly)."""
INTERVAL_MAPS = tuple(m for m in MAP_NAMES if m not in RATIONAL_MAPS)
MAP_PARAMETERS = {"sink_logit": ("b",), "sigmoid": ("b",)}
"""Per-head parameters of each map (maps not listed have none)."""
NULL_MAPS = ("sink_logit", "softmax1", "stick_breaking")
"""Maps whose weights lie under the simplex with the remainder a zero-valued null: their
"null mass" is the mass on zero-valued keys plus the null (:func:`null_slot_interval`)."""

DEFAULT_DIGITS = 50

_Mpi = tuple[tuple, tuple]  # libmp interval: (lower mpf, upper mpf)


# ------------------------------------------------------------------ input checks

def _rationals(name: str, values: Sequence[object]) -> list[Fraction]:
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, Fraction)):
            raise TypeError(f"{name}[{i}] must be an int or Fraction, got {type(v).__name__}")
        out.append(Fraction(v))
    return out


def _inputs(name: str, scores: Sequence[object], t: int, params: Sequence[object]
            ) -> tuple[list[Fraction], list[Fraction]]:
    if name not in MAP_NAMES:
        raise ValueError(f"unknown attention map {name!r}; expected one of {', '.join(MAP_NAMES)}")
    s = _rationals("scores", scores)
    if not s:
        raise ValueError("scores must hold at least the BOS score")
    if isinstance(t, bool) or not isinstance(t, int) or t < 0:
        raise ValueError(f"t must be a nonnegative int, got {t!r}")
    if len(s) != t + 1:
        raise ValueError(f"a query at t={t} has {t + 1} keys, got {len(s)} scores")
    want = MAP_PARAMETERS.get(name, ())
    p = _rationals("params", params)
    if len(p) != len(want):
        raise ValueError(f"the {name} map takes parameters ({', '.join(want)}), "
                         f"got {len(p)} values")
    return s, p


# ------------------------------------------------------------------ exact maps

def _threshold_support(x: list[Fraction], power: int) -> tuple[list[int], Fraction, Fraction]:
    """Support ``S`` (indices), mean ``m`` of ``x`` over ``S`` and, for power 2, ``δ`` with
    ``τ = m - sqrt(δ)``; for power 1, ``τ = m - 1/|S|`` and ``δ = 0``.

    Confirms exactly that ``x_j >= τ`` on ``S`` and ``x_j <= τ`` off it.
    """
    order = sorted(range(len(x)), key=lambda j: -x[j])
    best = 0
    total = sq = Fraction(0)
    for k, j in enumerate(order, start=1):
        total += x[j]
        sq += x[j] * x[j]
        mean = total / k
        if power == 1:
            inside = x[j] > mean - Fraction(1, k)
        else:
            delta = (1 - (sq - k * mean * mean)) / k
            inside = delta >= 0 and (mean <= x[j] or (mean - x[j]) ** 2 <= delta)
        if inside:
            best = k
    support = order[:best]
    mean = sum((x[j] for j in support), Fraction(0)) / best
    delta = Fraction(0)
    if power == 2:
        delta = (1 - sum(((x[j] - mean) ** 2 for j in support), Fraction(0))) / best
    for j in range(len(x)):
        if not _tau_side_ok(x[j], mean, delta, best, power, j in support):
            raise ArithmeticError("threshold support check failed (a bug in checker/maps.py)")
    return support, mean, delta


def _tau_side_ok(xj: Fraction, mean: Fraction, delta: Fraction, k: int, power: int,
                 inside: bool) -> bool:
    """Exactly: ``x_j >= τ`` if ``inside`` else ``x_j <= τ``, for τ as in the support rule."""
    if power == 1:
        tau = mean - Fraction(1, k)
        return xj >= tau if inside else xj <= tau
    if delta < 0:
        return False
    d = mean - xj  # x_j >= τ  <=>  d <= sqrt(δ)
    if inside:
        return d <= 0 or d * d <= delta
    return d >= 0 and d * d >= delta


def exact_weights(name: str, scores: Sequence[object], t: int,
                  params: Sequence[object] = ()) -> list[Fraction]:
    """Exact weights of a rational map (``relu``, ``relu_length``, ``sparsemax``)."""
    s, p = _inputs(name, scores, t, params)
    exact = RULES[name].exact
    if exact is None:
        raise ValueError(f"the {name} map is not rational: use interval_weights")
    return exact(s, t, p)


def _relu(s: list[Fraction], t: int, p: list[Fraction]) -> list[Fraction]:
    return [max(v, Fraction(0)) for v in s]


def _relu_length(s: list[Fraction], t: int, p: list[Fraction]) -> list[Fraction]:
    length = max(t, 1)
    return [max(v, Fraction(0)) / length for v in s]


def _sparsemax(s: list[Fraction], t: int, p: list[Fraction]) -> list[Fraction]:
    support, mean, _ = _threshold_support(s, 1)
    tau = mean - Fraction(1, len(support))
    return [s[j] - tau if j in support else Fraction(0) for j in range(len(s))]


def _rational_sqrt(x: Fraction) -> Fraction | None:
    """``sqrt(x)`` when it is rational (numerator and denominator perfect squares), else None."""
    if x < 0:
        return None
    n, d = int(libmp.isqrt(x.numerator)), int(libmp.isqrt(x.denominator))
    return Fraction(n, d) if n * n == x.numerator and d * d == x.denominator else None


def exact_entmax15_weights(scores: Sequence[object], t: int) -> list[Fraction] | None:
    """Exact entmax-1.5 weights where they are rational, else ``None``.

    On ``x = s/2`` the support ``S`` (confirmed exactly) gives ``α_j = (x_j - m + sqrt(δ))^2``;
    this is rational when ``sqrt(δ)`` is, and also when every ``x_j`` of the support equals
    the mean ``m`` (then ``α_j = δ = 1/|S|``, the uniform weights on a tie).
    """
    s, _ = _inputs("entmax15", scores, t, ())
    x = [v / 2 for v in s]
    support, mean, delta = _threshold_support(x, 2)
    if all(x[j] == mean for j in support):
        return [delta if j in support else Fraction(0) for j in range(len(x))]
    root = _rational_sqrt(delta)
    if root is None:
        return None
    return [(x[j] - mean + root) ** 2 if j in support else Fraction(0) for j in range(len(x))]


# ------------------------------------------------------------------ intervals

def _prec(digits: int) -> int:
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 10:
        raise ValueError(f"digits must be an int >= 10, got {digits!r}")
    return libmp.dps_to_prec(digits) + 10


def _point(x: Fraction, prec: int) -> _Mpi:
    return (libmp.from_rational(x.numerator, x.denominator, prec, libmp.round_floor),
            libmp.from_rational(x.numerator, x.denominator, prec, libmp.round_ceiling))


def _to_interval(a: _Mpi) -> Interval:
    lo, hi = (Fraction(*libmp.to_rational(e)) for e in a)
    return lo, hi


def _exp(x: Fraction, prec: int) -> _Mpi:
    return libmp.mpi_exp(_point(x, prec), prec)


def _inverse_sum_of_exps(gaps: list[Fraction], prec: int) -> _Mpi:
    """An interval holding ``1 / Σ_i exp(gaps_i)`` (exact zeros in ``gaps`` give 1)."""
    total = _point(Fraction(0), prec)
    for g in gaps:
        total = libmp.mpi_add(total, _point(Fraction(1), prec) if g == 0 else _exp(g, prec),
                              prec)
    return libmp.mpi_div(_point(Fraction(1), prec), total, prec)


def _sigmoid(z: Fraction, prec: int) -> _Mpi:
    return _inverse_sum_of_exps([Fraction(0), -z], prec)


def gate_interval(z: object, digits: int = DEFAULT_DIGITS) -> Interval:
    """An interval holding the gate ``σ(z) = 1 / (1 + exp(-z))`` for rational ``z``."""
    (zq,) = _rationals("z", [z])
    return _to_interval(_sigmoid(zq, _prec(digits)))


def interval_weights(name: str, scores: Sequence[object], t: int,
                     params: Sequence[object] = (), digits: int = DEFAULT_DIGITS
                     ) -> list[Interval]:
    """Intervals holding the weights ``α_0..α_t`` of any map (rational maps: points).

    ``gated_softmax`` gives the softmax weights; the head multiplies them by its gate
    (:func:`gate_interval`).
    """
    s, p = _inputs(name, scores, t, params)
    prec = _prec(digits)
    rule = RULES[name]
    if rule.exact is not None:
        return [(w, w) for w in rule.exact(s, t, p)]
    return [_to_interval(a) for a in rule.interval(s, p, prec)]


def _softmax(s: list[Fraction], p: list[Fraction], prec: int) -> list[_Mpi]:
    return [_inverse_sum_of_exps([sk - sj for sk in s], prec) for sj in s]


def _slot_logit(p: list[Fraction]) -> Fraction:
    return p[0] if p else Fraction(0)  # sink_logit's b; softmax1's slot has logit 0


def _sink_logit(s: list[Fraction], p: list[Fraction], prec: int) -> list[_Mpi]:
    b = _slot_logit(p)
    return [_inverse_sum_of_exps([b - sj] + [sk - sj for sk in s], prec) for sj in s]


def _sink_null(s: list[Fraction], p: list[Fraction], prec: int) -> _Mpi:
    b = _slot_logit(p)
    return _inverse_sum_of_exps([Fraction(0)] + [sk - b for sk in s], prec)


def _sigmoid_map(s: list[Fraction], p: list[Fraction], prec: int) -> list[_Mpi]:
    return [_sigmoid(sj + p[0], prec) for sj in s]


def _entmax15(s: list[Fraction], p: list[Fraction], prec: int) -> list[_Mpi]:
    """On ``x = s/2``: ``α_j = (x_j - τ)^2`` on the support, ``τ = m - sqrt(δ)``."""
    x = [v / 2 for v in s]
    support, mean, delta = _threshold_support(x, 2)
    root = libmp.mpi_sqrt(_point(delta, prec), prec)
    zero = _point(Fraction(0), prec)
    out: list[_Mpi] = []
    for j, xj in enumerate(x):
        if j not in support:
            out.append(zero)
            continue
        gap = libmp.mpi_add(_point(xj - mean, prec), root, prec)  # x_j - τ >= 0
        lo, hi = libmp.mpi_mul(gap, gap, prec)
        out.append((lo if libmp.mpf_sign(lo) >= 0 else libmp.fzero, hi))
    return out


def _sticks(s: list[Fraction], prec: int) -> tuple[list[_Mpi], _Mpi]:
    """Stick-breaking from key ``t`` down to 0: each key takes ``σ(s_k)`` of what the keys
    after it left; returns the weights (in key order) and the remainder, the null."""
    left = _point(Fraction(1), prec)
    out: list[_Mpi] = [left] * len(s)
    for k in range(len(s) - 1, -1, -1):
        out[k] = libmp.mpi_mul(_sigmoid(s[k], prec), left, prec)
        left = libmp.mpi_mul(_sigmoid(-s[k], prec), left, prec)  # 1 - σ(s) = σ(-s)
    return out, left


def _stick_breaking(s: list[Fraction], p: list[Fraction], prec: int) -> list[_Mpi]:
    return _sticks(s, prec)[0]


def _stick_null(s: list[Fraction], p: list[Fraction], prec: int) -> _Mpi:
    return _sticks(s, prec)[1]


@dataclass(frozen=True)
class MapRule:
    """One attention map as the checker evaluates it: ``exact`` weights at rational scores
    (rational maps), else outward-rounded ``interval`` weights; ``null``: the mass of the
    zero-valued null (maps under the simplex), else ``None`` (no null)."""

    exact: Callable[[list[Fraction], int, list[Fraction]], list[Fraction]] | None = None
    interval: Callable[[list[Fraction], list[Fraction], int], list[_Mpi]] | None = None
    null: Callable[[list[Fraction], list[Fraction], int], _Mpi] | None = None


RULES: dict[str, MapRule] = {
    "softmax": MapRule(interval=_softmax),
    "gated_softmax": MapRule(interval=_softmax),  # the head multiplies by its gate
    "sink_logit": MapRule(interval=_sink_logit, null=_sink_null),
    "softmax1": MapRule(interval=_sink_logit, null=_sink_null),
    "sigmoid": MapRule(interval=_sigmoid_map),
    "entmax15": MapRule(interval=_entmax15),
    "relu": MapRule(exact=_relu),
    "relu_length": MapRule(exact=_relu_length),
    "sparsemax": MapRule(exact=_sparsemax),
    "stick_breaking": MapRule(interval=_stick_breaking, null=_stick_null),
}
"""The map-rule table: one row per map, looked up by name."""


def null_slot_interval(name: str, scores: Sequence[object], t: int,
                       params: Sequence[object] = (), digits: int = DEFAULT_DIGITS
                       ) -> Interval:
    """The mass of the zero-valued null: ``1 / (1 + Σ_k exp(s_k - b))`` (``sink_logit``;
    ``softmax1`` at ``b = 0``), ``Π_{l<=t} (1 - σ(s_l))`` (``stick_breaking``); ``(0, 0)``
    for maps without one."""
    s, p = _inputs(name, scores, t, params)
    null = RULES[name].null
    if null is None:
        return Fraction(0), Fraction(0)
    return _to_interval(null(s, p, _prec(digits)))
