"""The norm price: a certified lower bound on the weight norm a head needs for error ``ε``.

Two sequences share logits: ``X = (BOS, c)`` at position 1 (target 0) and
``Y = (BOS, c, TRIG)`` at position 2 (target ``c``), with fixed values.  Write
``ε' = ε/||c||``, ``φ_0, φ_1, φ_2`` the rows of BOS at 0, ``c`` at 1, TRIG at 2,
``Δ = φ_2 - φ_1``, and ``ℓ(ε') = log((1 - ε')/ε')``.  Error ``<= ε`` at both positions
forces the key ``c`` to be weighted ``<= ε'`` by the content query and ``>= 1 - ε'`` by
the trigger query, which needs (each for every map parameter ``b`` and gate bias):

- ``softmax``: ``(s_0 - s_1) + (s'_1 - s'_0) >= 2ℓ``, and that sum is
  ``Δ^T A (φ_1 - φ_0) <= ||A|| ||Δ|| ||φ_1 - φ_0||``;
- ``sink_logit``, ``softmax1``: either the slot or BOS outweighs the key ``c`` by
  ``(1-ε')/(2ε')`` in ``X`` while both are ``<= ε'/(1-ε')`` of it in ``Y``, so
  ``||A|| ||Δ|| max(||φ_1||, ||φ_1 - φ_0||) >= 2ℓ - log 2``;
- ``sigmoid``, and every map with ``α_tj <= σ(s_tj + b)``, equal at the query's own key
  (``sigmoid_bounded``: stick-breaking too): the own key ``c`` of ``X`` has weight
  ``σ(s_1 + b) <= ε'`` and the key ``c`` of ``Y`` needs ``σ(s'_1 + b) >= 1 - ε'``, so
  ``s'_1 - s_1 >= 2ℓ`` and ``s'_1 - s_1 = Δ^T A φ_1``: ``||A|| ||Δ|| ||φ_1|| >= 2ℓ``;
- ``gated_softmax`` (norm ``max(||A||, ||w||)``): ``g α_1 <= ε'`` puts the gate or the
  weight below ``sqrt(ε')``, so ``max(||A|| ||φ_1 - φ_0||, ||w||) ||Δ|| >= ℓ(ε') + ℓ(sqrt ε')``.

On a task without positional features the two positions are ``(BOS, a)`` at 1 and
``(BOS, a, T)`` at 2, ``T`` the trigger carrying ``a``'s content (:func:`_stack_bound`).

The bound a map gets is chosen by its declared properties (:func:`price_class`), never by
its name.  Each right side grows like ``log(1/ε)``: the norm needed is unbounded as ``ε → 0``.  The
bound is computed in mpmath interval arithmetic and rounded down; ``None`` where it is
vacuous (``ε' >= 1/2``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from mpmath import iv

from ..attention import MAPS
from ..task import TriggerTask

__all__ = ["NORM_PRICE_MAPS", "STACK_PRICE_MAPS", "norm_lower_bound", "norm_price_formula",
           "price_class", "price_maps", "price_text"]


def price_class(kind: str) -> str | None:
    """Which argument of the module docstring bounds map ``kind``, by its properties: a gate
    (``"gated_softmax"``), a σ-bounded key weight (``"sigmoid"``), strictly positive weights on
    the simplex (``"softmax"``), a normalised virtual slot (``"sink_logit"``); ``None``."""
    amap = MAPS[kind]
    props = amap.properties
    if props.gated:
        return "gated_softmax"
    if props.sigmoid_bounded:
        return "sigmoid"
    if props.on_simplex and not props.exact_zeros:
        return "softmax"
    if props.virtual_null and amap.factorisation == "normalised":
        return "sink_logit"
    return None


NORM_PRICE_MAPS = tuple(k for k in MAPS if price_class(k) is not None)

_FORMULA = {
    "softmax": "||A|| >= 2 l(e') / (|D| |phi1-phi0|)",
    "sink_logit": "||A|| >= (2 l(e') - log 2) / (|D| max(|phi1|, |phi1-phi0|))",
    "sigmoid": "||A|| >= 2 l(e') / (|D| |phi1|)",
    "gated_softmax": "max(||A||,||w||) >= (l(e') + l(sqrt e')) / (|D| max(|phi1-phi0|, 1))",
}


_STACK_FORMULA = {
    "softmax": "||A|| >= (l(e') + m(e)) / (|a-T| |a-e0|)",
    "sink_logit": "||A|| >= (l(e') - log 2 + m(e)) / (|a-T| |a-e0|)",
    "gated_softmax": "max(||A||,||w||) >= (l(sqrt e') + m(e)) / (|a-T| |a-e0|)",
}
STACK_PRICE_MAPS = tuple(k for k in MAPS if price_class(k) in _STACK_FORMULA)
"""The maps priced on a task without positional features (by their price class)."""


def norm_price_formula(kind: str, task: Any = None) -> str:
    """The bound of :func:`norm_lower_bound` for ``kind`` in words (``l(x) = log((1-x)/x)``,
    ``e' = ε/||c||``, ``D = φ(TRIG, 2) - φ(c, 1)``; on a task without positions
    ``m(ε) = log((1-2ε)/(4ε))``)."""
    if task is not None and not task.has_positions:
        return _STACK_FORMULA[price_class(kind) or kind]
    return _FORMULA[price_class(kind) or kind]


def price_maps(task: Any) -> tuple[str, ...]:
    """The maps :func:`norm_lower_bound` prices on ``task``."""
    return NORM_PRICE_MAPS if task.has_positions else STACK_PRICE_MAPS


def price_text(task: Any, kind: str) -> str:
    """How the bound is derived, for a table cell."""
    if task.has_positions:
        return (f"two sequences share logits: {norm_price_formula(kind, task)}, "
                "l(x) = log((1-x)/x), growing like log(1/eps)")
    return (f"(BOS, a) at 1 and (BOS, a, T) at 2 share logits: "
            f"{norm_price_formula(kind, task)}, l(x) = log((1-x)/x), m(e) = "
            "log((1-2e)/(4e)), e' = eps/|a|, growing like 2 log(1/eps)")


def _sq(v: list[Fraction]) -> Fraction:
    return sum((x * x for x in v), Fraction(0))


def _ivq(x: Fraction) -> Any:
    return iv.mpf(x.numerator) / iv.mpf(x.denominator)


def _ell(x: Any) -> Any:
    return iv.log((1 - x) / x)


def norm_lower_bound(task: TriggerTask, kind: str, eps: Any) -> float | None:
    """A certified lower bound on the weight norm of every one-head ``kind`` model with
    fixed values and error ``<= eps`` on ``(BOS, c)`` and ``(BOS, c, TRIG)``, maximised
    over the content tokens ``c`` (rounded down to a float; ``None``: no bound).  On a task
    without positional features: :func:`_stack_bound`."""
    if not task.has_positions:
        return _stack_bound(task, kind, eps)
    if kind not in NORM_PRICE_MAPS:
        raise ValueError(f"no norm price bound for {kind!r}; maps: {', '.join(NORM_PRICE_MAPS)}")
    if task.T < 2:
        raise ValueError("the norm price needs T >= 2 (the trigger at position 2)")
    e = Fraction(eps)
    if e <= 0:
        raise ValueError(f"eps must be > 0, got {eps}")
    best: float | None = None
    saved, iv.prec = iv.prec, 120
    try:
        for code in range(task.k):
            cont = list(task.token_features_exact(code))
            cnorm_sq = _sq(cont[: task.p])
            if cnorm_sq == 0:
                continue
            phi0 = list(task.token_features_exact(task.bos_code)) + \
                list(task.position_features_exact(0))
            phi1 = cont + list(task.position_features_exact(1))
            phi2 = list(task.token_features_exact(task.trig_code)) + \
                list(task.position_features_exact(2))
            d = iv.sqrt(_ivq(_sq([a - b for a, b in zip(phi2, phi1)])))
            n1_sq, n10_sq = _sq(phi1), _sq([a - b for a, b in zip(phi1, phi0)])
            n1, n10 = iv.sqrt(_ivq(n1_sq)), iv.sqrt(_ivq(n10_sq))
            ep = _ivq(e) / iv.sqrt(_ivq(cnorm_sq))
            if not ep.b < 0.5:
                continue
            how = price_class(kind)
            if how == "softmax":
                val = 2 * _ell(ep) / (d * n10)
            elif how == "sink_logit":
                big = n1 if n1_sq >= n10_sq else n10  # compared exactly
                val = (2 * _ell(ep) - iv.log(2)) / (d * big)
            elif how == "sigmoid":
                val = 2 * _ell(ep) / (d * n1)
            else:
                big = n10 if n10_sq >= 1 else iv.mpf(1)
                val = (_ell(ep) + _ell(iv.sqrt(ep))) / (d * big)
            lo = float(val.a)
            if lo > 0:
                lo = math.nextafter(lo, 0.0)
                best = lo if best is None else max(best, lo)
    finally:
        iv.prec = saved
    return best


def _stack_bound(task: Any, kind: str, eps: Any) -> float | None:
    """A certified lower bound on the norm of every fixed-value ``kind`` head with error
    ``<= eps`` at position 1 of ``(BOS, a)`` and position 2 of ``(BOS, a, T)``, ``a`` a
    content token and ``T`` the trigger carrying its content, maximised over ``a`` (a task
    without positional features: BOS ``e_0``, trigger, content, bias coordinates).

    Write ``e' = ε/||a||``, ``l(x) = log((1-x)/x)``, ``m(ε) = log((1-2ε)/(4ε))``.  At
    ``(BOS, a)`` the weight of ``a`` is ``<= e'``; at ``(BOS, a, T)`` (target ``(a+T)/2``)
    the bias and trigger coordinates put ``α_1, α_2`` within ``ε`` of ``1/2``, so BOS (and
    a slot) weigh ``<= 4ε/(1-2ε)`` of ``a``.  For softmax the two log-odds add to
    ``(a - T)^T A (e_0 - a) <= ||A|| ||a - T|| ||a - e_0||``; a slot ``b`` (sink logit,
    softmax1) costs ``log 2`` (BOS or the slot outweighs ``a`` by half the odds; the slot
    case is bounded by ``||a|| < ||a - e_0||``); a gate (``g(a) α_1 <= e'``: the gate or the
    weight is ``<= sqrt e'``, and ``g(T) >= 1 - 2ε``) gives the ``sqrt e'`` form with the
    gate's ``||w|| ||a - T||`` (``||a - e_0|| > 1``).  Interval arithmetic, rounded down;
    ``None`` when vacuous.
    """
    if kind not in STACK_PRICE_MAPS:
        raise ValueError(f"no norm price bound for {kind!r} on a task without positions; "
                         f"maps: {', '.join(STACK_PRICE_MAPS)}")
    e = Fraction(eps)
    if not 0 < e < Fraction(1, 6):
        return None
    best: float | None = None
    saved, iv.prec = iv.prec, 120
    try:
        for c in task.content:
            csq = sum((Fraction(float(v)) ** 2 for v in c), Fraction(0))
            a_norm = iv.sqrt(_ivq(csq + 1))
            a_e0 = iv.sqrt(_ivq(csq + 2))
            a_T = iv.sqrt(iv.mpf(2))
            ep = _ivq(e) / a_norm
            how = price_class(kind)
            if how == "gated_softmax":
                ep = iv.sqrt(ep)
            if ep.b >= 0.5:
                continue
            num = iv.log((1 - ep) / ep) + iv.log((1 - 2 * _ivq(e)) / (4 * _ivq(e)))
            if how == "sink_logit":
                num = num - iv.log(2)
            bound = num / (a_T * a_e0)
            low = float(bound.a)
            if low > 0 and (best is None or low > best):
                best = math.nextafter(low, -math.inf)
    finally:
        iv.prec = saved
    return best
