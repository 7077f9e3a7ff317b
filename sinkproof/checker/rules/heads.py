"""One attention head of the paper's stack for the ``paper-witness`` checker, on exact or
interval rows.

A row is either a list of :class:`fractions.Fraction` (exact: the tokens, and every
layer output computed from exact rows by a rational map) or a list of mpmath intervals.

- **Exact rows**: queries, keys, values and scores ``s_k = q·k_k`` are exact rationals.
  ``relu``, ``relu_length`` and ``sparsemax`` weights are then exact
  (:mod:`sinkproof.checker.maps`), and so is the head's output; entmax-1.5 is exact where
  its weights are rational; every other map's weights (and a gate ``σ(w·x + c)``) are
  enclosed by outward-rounded intervals from the rational scores.
- **Interval rows**: scores are intervals.  Softmax, the sink logit (``b``; softmax1 at
  ``b = 0``), sigmoid (``σ(s + b)``), the gate and the ReLUs are evaluated in interval
  arithmetic.  Sparsemax and entmax-1.5 are enclosed by monotonicity: their Jacobian is
  ``diag(g) - g g^T / Σ g`` with ``g >= 0``, so ``α_j`` is nondecreasing in ``s_j`` and
  nonincreasing in every other score; evaluating the map (exactly, or with the checker's
  entmax intervals) at the corners ``(s_j low, others high)`` and ``(s_j high, others
  low)`` of the score box bounds ``α_j``.

Every interval end point is converted to a rational exactly before a decision is taken.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mpmath import iv

from ...errors import CertificateError
from ..interval import as_iv, ivpair, ivq, lower, upper
from ..maps import MAP_PARAMETERS, row_weights

Row = list[Any]
"""A row of Fractions (exact) or of mpmath intervals."""


def is_exact(row: Sequence[Any]) -> bool:
    return all(isinstance(x, Fraction) for x in row)


def matvec(M: list[list[Fraction]], v: Row) -> Row:
    """``M v`` exactly when ``v`` is exact, else in intervals."""
    if is_exact(v):
        return [sum((a * b for a, b in zip(row, v) if a and b), Fraction(0)) for row in M]
    return [sum((ivq(a) * b for a, b in zip(row, v) if a), iv.mpf(0)) for row in M]


def dot(a: Row, b: Row) -> Any:
    if is_exact(a) and is_exact(b):
        return sum((x * y for x, y in zip(a, b)), Fraction(0))
    return sum((as_iv(x) * as_iv(y) for x, y in zip(a, b)), iv.mpf(0))


@dataclass(frozen=True)
class HeadParams:
    """One head's exact weights: ``W_Q, W_K, W_V`` ``(n, n)``, the map's parameters, and a
    gate ``(w, c)`` (gated maps only)."""

    W_Q: list[list[Fraction]]
    W_K: list[list[Fraction]]
    W_V: list[list[Fraction]]
    params: list[Fraction]
    gate_w: list[Fraction] | None = None
    gate_c: Fraction = Fraction(0)


def head_extras(data: dict[str, Any], kind: str) -> tuple[tuple[str, ...], bool]:
    """The parameter names and whether a gate is expected for a head of map ``kind``;
    a :class:`~sinkproof.errors.CertificateError` when ``data`` holds ``map_params`` for a
    map without parameters, or a gate for an ungated map."""
    names = MAP_PARAMETERS.get(kind, ())
    if not names and "map_params" in data:
        raise CertificateError(f"data.map_params: the {kind} map has no parameters")
    gated = kind == "gated_softmax"
    if not gated and ("gate_w" in data or "gate_c" in data):
        raise CertificateError(f"data.gate_w/gate_c: the {kind} map has no gate")
    return names, gated


@dataclass
class HeadOutput:
    """A head at one query: its output (exact or intervals), effective BOS weight
    ``g α_0`` (an exact Fraction or an interval) and an upper bound on its BOS share
    ``α_0 / Σ_j α_j`` (0 when every weight is 0)."""

    out: Row
    bos: Any
    share_upper: Fraction


def _share_upper(w: list[Any]) -> Fraction:
    """An upper bound on ``α_0 / Σ_j α_j`` (increasing in ``α_0``, decreasing in the rest)."""
    top = upper(w[0])
    if top <= 0:
        return Fraction(0)
    rest = sum((max(lower(x), Fraction(0)) for x in w[1:]), Fraction(0))
    return top / (top + rest)


def head_output(kind: str, head: HeadParams, query: Row, keys: list[Row], values: list[Row],
                t: int) -> HeadOutput:
    """The head's output at query row ``query`` over ``keys``/``values`` of rows ``0..t``."""
    q = matvec(head.W_Q, query)
    scores = [dot(q, k) for k in keys]
    w = row_weights(kind, scores, t, head.params)
    share = _share_upper(w)
    if head.gate_w is not None:
        g = 1 / (1 + iv.exp(-(as_iv(dot(head.gate_w, query)) + ivq(head.gate_c))))
        w = [as_iv(x) * g for x in w]
    exact = all(isinstance(x, Fraction) for x in w) and all(is_exact(v) for v in values)
    d = len(values[0])
    if exact:
        out: Row = [sum((a * v[i] for a, v in zip(w, values) if a), Fraction(0))
                    for i in range(d)]
    else:
        out = [sum((as_iv(a) * as_iv(v[i]) for a, v in zip(w, values)), iv.mpf(0))
               for i in range(d)]
    return HeadOutput(out, w[0], share)


__all__ = ["HeadOutput", "HeadParams", "Row", "as_iv", "dot", "head_extras", "head_output",
           "is_exact",
           "ivpair", "ivq", "lower", "matvec", "upper"]
