"""The map-rule table: attention weights for the checker, exact rationals where the map is
rational, else mpmath's outward-rounded intervals; one row of :data:`RULES` per map, looked
up by name.  The formulas of every row: ``docs/soundness.md``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mpmath import iv, libmp

from .interval import Interval, as_iv, ends, ivpair, lower, point, prec_of, precision, upper

DEFAULT_DIGITS = 50


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
Iv = Any
"""An interval of :mod:`sinkproof.checker.interval` (an ``iv.mpf``)."""


def gate_interval(z: object, digits: int = DEFAULT_DIGITS) -> Interval:
    """An interval holding the gate ``σ(z) = 1 / (1 + exp(-z))`` for rational ``z``."""
    (zq,) = _rationals("z", [z])
    with precision(prec_of(digits)):
        return ends(_inverse_sum_of_exps([Fraction(0), -zq]))


def interval_weights(name: str, scores: Sequence[object], t: int,
                     params: Sequence[object] = (), digits: int = DEFAULT_DIGITS
                     ) -> list[Interval]:
    """Intervals holding the weights ``α_0..α_t`` of any map (rational maps: points).

    ``gated_softmax`` gives the softmax weights; the head multiplies them by its gate
    (:func:`gate_interval`).
    """
    s, p = _inputs(name, scores, t, params)
    rule = RULES[name]
    if rule.exact is not None:
        return [(w, w) for w in rule.exact(s, t, p)]
    with precision(prec_of(digits)):
        return [ends(a) for a in rule.interval(s, p)]


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
    with precision(prec_of(digits)):
        return ends(null(s, p))


def weigh(name: str, scores: Sequence[object], t: int, params: Sequence[object] = (),
          gate: object = None) -> tuple[list[Interval], Interval]:
    """A head's weights ``α_0..α_t`` at rational scores (exact points where rational,
    entmax-1.5 included, else outward intervals) and its null slot's mass; with the gate's
    logit ``gate = z`` the effective weights ``σ(z) α_j`` and the slot ``1 - σ(z)``."""
    partial = RULES[name].partial if name in RULES else None
    w = partial(scores, t) if partial is not None else None
    iv_w = [(x, x) for x in w] if w is not None else interval_weights(name, scores, t, params)
    slot = null_slot_interval(name, scores, t, params)
    if gate is None:
        return iv_w, slot
    g0, g1 = gate_interval(gate)
    iv_w = [(min(p := [a * g0, a * g1, b * g0, b * g1]), max(p)) for a, b in iv_w]
    return iv_w, (1 - g1, 1 - g0)


def row_weights(name: str, scores: list[Any], t: int, params: list[Fraction]) -> list[Any]:
    """A head's weights on its scores: exact Fractions where the scores are exact and the
    weights rational there, else intervals (at exact scores of a map with a partial exact
    form, :func:`interval_weights`; otherwise :attr:`MapRule.boxed` at the working
    precision on the scores' enclosures)."""
    rule = RULES[name]
    if all(isinstance(x, Fraction) for x in scores):
        if rule.exact is not None:
            return list(exact_weights(name, scores, t))
        if rule.partial is not None:
            w = rule.partial(scores, t)
            return list(w) if w is not None else [
                ivpair(lo, hi) for lo, hi in interval_weights(name, scores, t)]
    return rule.boxed([as_iv(x) for x in scores], t, params)


def _inverse_sum_of_exps(gaps: list[Fraction]) -> Iv:
    """``1 / Σ_i exp(gaps_i)`` (an exact zero in ``gaps`` gives exactly 1)."""
    total = point(Fraction(0))
    for g in gaps:
        total = total + (point(Fraction(1)) if g == 0 else iv.exp(point(g)))
    return point(Fraction(1)) / total


def _softmax(s: list[Fraction], p: list[Fraction]) -> list[Iv]:
    return [_inverse_sum_of_exps([sk - sj for sk in s]) for sj in s]


def _slot_logit(p: list[Any]) -> Any:
    return p[0] if p else Fraction(0)  # sink_logit's b; softmax1's slot has logit 0


def _sink_logit(s: list[Fraction], p: list[Fraction]) -> list[Iv]:
    b = _slot_logit(p)
    return [_inverse_sum_of_exps([b - sj] + [sk - sj for sk in s]) for sj in s]


def _sink_null(s: list[Fraction], p: list[Fraction]) -> Iv:
    b = _slot_logit(p)
    return _inverse_sum_of_exps([Fraction(0)] + [sk - b for sk in s])


def _sigmoid_map(s: list[Fraction], p: list[Fraction]) -> list[Iv]:
    return [_inverse_sum_of_exps([Fraction(0), -(sj + p[0])]) for sj in s]


def _entmax15(s: list[Fraction], p: list[Fraction]) -> list[Iv]:
    """On ``x = s/2``: ``α_j = (x_j - τ)^2`` on the support, ``τ = m - sqrt(δ)``."""
    x = [v / 2 for v in s]
    support, mean, delta = _threshold_support(x, 2)
    root = iv.sqrt(point(delta))
    out: list[Iv] = []
    for j, xj in enumerate(x):
        if j not in support:
            out.append(point(Fraction(0)))
            continue
        gap = point(xj - mean) + root  # x_j - τ >= 0
        lo, hi = (gap * gap)._mpi_
        out.append(iv.make_mpf((lo if libmp.mpf_sign(lo) >= 0 else libmp.fzero, hi)))
    return out


def _sticks(s: list[Fraction]) -> tuple[list[Iv], Iv]:
    """Stick-breaking from key ``t`` down to 0: each key takes ``σ(s_k)`` of what the keys
    after it left; returns the weights (in key order) and the remainder, the null."""
    left = point(Fraction(1))
    out: list[Iv] = [left] * len(s)
    for k in range(len(s) - 1, -1, -1):
        out[k] = _inverse_sum_of_exps([Fraction(0), -s[k]]) * left
        left = _inverse_sum_of_exps([Fraction(0), s[k]]) * left  # 1 - σ(s) = σ(-s)
    return out, left


# ---------------------------------------------------- weights on interval scores
def _boxed_relu(s: list[Iv], t: int, p: list[Fraction], div: int = 1) -> list[Iv]:
    return [x / div if x.a >= 0 else iv.mpf(0) if x.b <= 0 else iv.mpf([0, x.b]) / div
            for x in s]


def _boxed_softmax(s: list[Iv], t: int, p: list[Fraction], slot: Any = None) -> list[Iv]:
    ref = iv.mpf(max(x.b for x in s))  # any reference point: exp(s - ref) <= 1
    e = [iv.exp(x - ref) for x in s]
    total = sum(e, iv.mpf(0))
    if slot is not None:
        total += iv.exp(slot - ref)
    return [x / total for x in e]


def _boxed_sink(s: list[Iv], t: int, p: list[Fraction]) -> list[Iv]:
    b = p[0] if p else None
    return _boxed_softmax(s, t, p, iv.mpf(0) if b is None else as_iv(b))


def _boxed_sigmoid(s: list[Iv], t: int, p: list[Fraction]) -> list[Iv]:
    b = as_iv(p[0])
    return [1 / (1 + iv.exp(-(x + b))) for x in s]


def _corners(name: str) -> Callable[[list[Iv], int, list[Fraction]], list[Iv]]:
    """Weights of a map whose ``α_j`` increases with ``s_j`` and does not increase with any
    other score (sparsemax and entmax-1.5: Jacobian ``diag(g) - g g^T / Σ g``, ``g >= 0``;
    stick-breaking: it decreases with the later keys' scores and ignores the earlier ones):
    on a box of scores ``α_j`` lies between its values at the corners ``(s_j low, others
    high)`` and ``(s_j high, others low)``."""
    def boxed(s: list[Iv], t: int, p: list[Fraction]) -> list[Iv]:
        lo_s, hi_s = [lower(x) for x in s], [upper(x) for x in s]
        out = []
        for j in range(len(s)):
            low = [hi_s[k] if k != j else lo_s[j] for k in range(len(s))]
            high = [lo_s[k] if k != j else hi_s[j] for k in range(len(s))]
            a = interval_weights(name, low, t)[j][0]
            b = interval_weights(name, high, t)[j][1]
            out.append(ivpair(max(a, Fraction(0)), b))
        return out
    return boxed


@dataclass(frozen=True)
class MapRule:
    """One attention map as the checker evaluates it.  ``params``: its per-head parameter
    names; ``exact``: its weights at rational scores when they are rational (rational
    maps); ``interval``: else their outward-rounded enclosure at rational scores; ``null``:
    the mass of the zero-valued null (maps under the simplex), else ``None``; ``boxed``:
    an enclosure of the weights when the scores are themselves intervals; ``partial``: the
    exact weights where they happen to be rational, else ``None``; ``gated``: the head
    multiplies its weights by a gate ``σ(w·φ + c)``; ``grid``: the weights are
    ``exp(s_j - s_0) / Σ_k exp(s_k - s_0)``, which a witness may sum on the fixed-point grid
    from one enclosure of ``exp(s_j - s_0)`` per (query, key) class."""

    boxed: Callable[[list[Iv], int, list[Fraction]], list[Iv]]
    exact: Callable[[list[Fraction], int, list[Fraction]], list[Fraction]] | None = None
    interval: Callable[[list[Fraction], list[Fraction]], list[Iv]] | None = None
    null: Callable[[list[Fraction], list[Fraction]], Iv] | None = None
    params: tuple[str, ...] = ()
    partial: Callable[[list[Fraction], int], list[Fraction] | None] | None = None
    gated: bool = False
    grid: bool = False


RULES: dict[str, MapRule] = {
    "softmax": MapRule(_boxed_softmax, interval=_softmax, grid=True),
    "sink_logit": MapRule(_boxed_sink, interval=_sink_logit, null=_sink_null, params=("b",)),
    "softmax1": MapRule(_boxed_sink, interval=_sink_logit, null=_sink_null),
    "sparsemax": MapRule(_corners("sparsemax"), exact=_sparsemax),
    "entmax15": MapRule(_corners("entmax15"), interval=_entmax15,
                        partial=lambda s, t: exact_entmax15_weights(s, t)),
    "sigmoid": MapRule(_boxed_sigmoid, interval=_sigmoid_map, params=("b",)),
    "relu": MapRule(_boxed_relu, exact=_relu),
    "relu_length": MapRule(lambda s, t, p: _boxed_relu(s, t, p, max(t, 1)), exact=_relu_length),
    "gated_softmax": MapRule(_boxed_softmax, interval=_softmax, gated=True),
    "stick_breaking": MapRule(_corners("stick_breaking"), interval=lambda s, p: _sticks(s)[0],
                              null=lambda s, p: _sticks(s)[1]),
}
"""The map-rule table: one row per map, looked up by name; no rule branches on a name."""

MAP_NAMES = tuple(RULES)
RATIONAL_MAPS = tuple(m for m, r in RULES.items() if r.exact is not None)
"""Maps whose weights at rational scores are rational (computed exactly)."""
INTERVAL_MAPS = tuple(m for m in MAP_NAMES if m not in RATIONAL_MAPS)
MAP_PARAMETERS = {m: r.params for m, r in RULES.items() if r.params}
"""Per-head parameters of each map (maps not listed have none)."""
NULL_MAPS = tuple(m for m, r in RULES.items() if r.null is not None)
"""Maps whose weights lie under the simplex with the remainder a zero-valued null: their
"null mass" is the mass on zero-valued keys plus the null (:func:`null_slot_interval`)."""
