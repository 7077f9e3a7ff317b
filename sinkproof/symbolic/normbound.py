"""Theorem 5: a softmax head with fixed values and ``‖A‖_2 <= B`` has error ``>= ε_min(B)``.

On ``X^c_n`` every logit gap obeys ``s_{nj} - s_{n0} >= -B ‖φ_n‖ ‖φ_j - φ_0‖``, so
``1 - α_0 >= Q/(1+Q)`` with ``Q = Σ_{j=1}^n exp(-B ‖φ_n‖ ‖φ_j - φ_0‖)`` and the error at
position ``n`` is ``(1 - α_0)‖c‖``.  Hence ``E >= ε_min(B) = max_{c,n} ‖c‖ Q/(1+Q)``.
The constants ``‖φ_n‖²`` and ``‖φ_j - φ_0‖²`` are exact rationals of the task's
actual features.  ``‖φ_n‖`` never increases with ``n >= 1`` in the three positional
schemes (checked exactly), so each ``Q_{c,n} <= Q_{c,T}`` term by term and the maximum
over ``n`` is attained at ``n = T``; the maximum over content norms stays explicit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from ..exact_numbers import bounded
from ..numerics import logsumexp
from ..task import TriggerTask
from ..tasks.protocol import require
from .bounds import EPS, exact_number, exact_sqrt
from .exact import interval_context

B_SYMBOL = sympy.Symbol("B", nonnegative=True)


def _sq(v: list[Fraction]) -> Fraction:
    return sum((x * x for x in v), Fraction(0))


@dataclass(frozen=True)
class NormBoundTerms:
    """Exact constants of ``ε_min`` for one content norm ``‖c‖``: ``a_j = ‖φ_T‖ ‖φ_j - φ_0‖``
    for ``j = 1..T`` as ``(‖c‖², ‖φ_T‖², (‖φ_j - φ_0‖²)_j)``, all rational."""

    content_norm_sq: Fraction
    query_norm_sq: Fraction
    key_gap_sq: tuple[Fraction, ...]

    def rates(self) -> np.ndarray:
        """``a_j`` in floating point (``Q = Σ_j exp(-B a_j)``)."""
        q = math.sqrt(self.query_norm_sq)
        return np.array([q * math.sqrt(g) for g in self.key_gap_sq])


def _content_norms(task: TriggerTask) -> list[Fraction]:
    norms = {_sq(task.token_features_exact(c)[: task.p]) for c in range(task.k)}
    return sorted(norms)


def theorem5_terms(task: TriggerTask) -> list[NormBoundTerms]:
    """The exact constants of ``ε_min(B)`` for ``task``, one entry per distinct ``‖c‖``."""
    require(task, "has_positions", "Theorem 5's norm bound (its position features)")
    pos = [task.position_features_exact(t) for t in range(task.T + 1)]
    pos_sq = [_sq(v) for v in pos]
    if any(pos_sq[n + 1] > pos_sq[n] for n in range(1, task.T)):
        raise AssertionError("‖π(n)‖ increases with n: the reduction to n = T does not apply")
    out = []
    for cc in _content_norms(task):
        # φ_j - φ_0 = [c; 1; 0; -1; π(j) - π(0)]: norm² = ‖c‖² + 2 + ‖π(j) - π(0)‖²
        gaps = tuple(cc + 2 + _sq([a - b for a, b in zip(pos[j], pos[0])])
                     for j in range(1, task.T + 1))
        out.append(NormBoundTerms(cc, cc + 1 + pos_sq[task.T], gaps))
    return out


def eps_min_expr(task: TriggerTask) -> sympy.Expr:
    """``ε_min(B)`` as a SymPy expression in ``B`` with the task's exact constants."""
    parts = []
    for term in theorem5_terms(task):
        # exact_sqrt: SymPy's own root factors the rational, and its factoring raises
        # ValueError on some 107-bit integers (float contents give such numerators)
        Q = sympy.Add(*[sympy.exp(-B_SYMBOL * exact_sqrt(term.query_norm_sq * g))
                        for g in term.key_gap_sq])
        parts.append(exact_sqrt(term.content_norm_sq) * Q / (1 + Q))
    return parts[0] if len(parts) == 1 else sympy.Max(*parts)


def log_eps_min(task: TriggerTask, B: Any) -> Any:
    """``log ε_min(B)`` in floating point, computed in the log domain (no underflow)."""
    B = np.asarray(B, dtype=float)
    if np.any(B < 0) or not np.all(np.isfinite(B)):
        raise ValueError("B must be finite and >= 0")
    best = np.full(B.shape, -np.inf)
    for term in theorem5_terms(task):
        if term.content_norm_sq == 0:
            continue  # a zero content vector contributes error 0
        log_q = logsumexp(-np.multiply.outer(B, term.rates()), axis=-1)
        # log(‖c‖ Q/(1+Q)) = log‖c‖ - log(1 + 1/Q)
        log_c = 0.5 * (math.log(term.content_norm_sq.numerator)
                       - math.log(term.content_norm_sq.denominator))  # exact ‖c‖², any size
        best = np.maximum(best, log_c - np.logaddexp(0.0, -log_q))
    return best if best.ndim else float(best)


def eps_min(task: TriggerTask, B: Any) -> Any:
    """``ε_min(B)`` in floating point (``B`` may be an array); see :func:`log_eps_min`."""
    out = np.exp(log_eps_min(task, B))
    return out if np.ndim(out) else float(out)


def eps_min_enclosure(task: TriggerTask, B: Any, prec: int = 96) -> tuple[float, float]:
    """A rigorous interval ``[lo, hi]`` containing ``ε_min(B)`` (``B`` rational or float, exact).

    ``lo`` is a certified lower bound on the error of every model of the class with
    ``‖A‖_2 <= B`` (rounded down to a float).
    """
    ctx = interval_context(prec)
    b = exact_number(B)
    if b < 0:
        raise ValueError(f"B must be >= 0, got {B}")
    b_iv = ctx.mpf(int(b.p)) / ctx.mpf(int(b.q))
    lo = hi = -math.inf
    for term in theorem5_terms(task):
        q = ctx.sqrt(_iv(ctx, term.query_norm_sq))
        Q = sum((ctx.exp(-b_iv * q * ctx.sqrt(_iv(ctx, g))) for g in term.key_gap_sq), ctx.mpf(0))
        val = ctx.sqrt(_iv(ctx, term.content_norm_sq)) * Q / (1 + Q)
        lo = max(lo, math.nextafter(float(val.a), -math.inf))
        hi = max(hi, math.nextafter(float(val.b), math.inf))
    return max(lo, 0.0), hi


def _iv(ctx: Any, x: Fraction) -> Any:
    return ctx.mpf(x.numerator) / ctx.mpf(x.denominator)


def norm_needed_closed_form(task: TriggerTask) -> sympy.Expr:
    """A readable necessary condition, valid for ``ε < min ‖c‖``: error ``<= ε`` forces
    ``B >= max_c log(T (‖c‖ - ε)/ε) / (‖φ_T‖ max_j ‖φ_j - φ_0‖)``, i.e. ``B = Ω(log 1/ε)``.

    (From ``Q >= T exp(-B max_j a_j)`` and ``‖c‖ Q/(1+Q) <= ε ⟺ Q <= ε/(‖c‖ - ε)``.)
    """
    parts = []
    for term in theorem5_terms(task):
        c = exact_sqrt(term.content_norm_sq)
        rate = exact_sqrt(term.query_norm_sq * max(term.key_gap_sq))
        parts.append(sympy.log(task.T * (c - EPS) / EPS) / rate)
    return parts[0] if len(parts) == 1 else sympy.Max(*parts)


@dataclass(frozen=True)
class NormNeeded:
    """What error ``<= eps`` costs in weight norm (Theorem 5), certified.

    ``below``: every single-head softmax model with fixed values and ``‖A‖_2 <= below``
    has error ``> eps`` (certified by interval arithmetic: ``enclosure_below[0] > eps``);
    ``above``: ``ε_min(above) <= eps``, so the theorem alone cannot rule out
    ``‖A‖_2 = above`` (the needed norm lies in ``(below, above]`` up to the bisection
    tolerance).  ``closed_form``: the simpler sufficient ``B`` from
    :func:`norm_needed_closed_form`.
    """

    eps: float
    below: float
    above: float
    enclosure_below: tuple[float, float]
    closed_form: float

    def __repr__(self) -> str:
        return (f"NormNeeded(eps={self.eps:g}: error <= eps needs ‖A‖_2 > {self.below:.6g} "
                f"(certified), bisection bracket ({self.below:.6g}, {self.above:.6g}], "
                f"closed form {self.closed_form:.6g})")

    def _repr_markdown_(self) -> str:
        return (f"error ≤ {self.eps:g} needs ‖A‖_2 > **{self.below:.6g}** (certified: "
                f"ε_min ≥ {self.enclosure_below[0]:.6g} there); closed form {self.closed_form:.6g}")


def norm_needed(task: TriggerTask, eps: Any, rtol: Any = 1e-9) -> NormNeeded:
    """The least ``B`` with ``ε_min(B) <= eps``, bracketed and certified from below
    (``eps > 0`` and ``rtol`` in ``(0, 1)`` read exactly: ``"1/20"``, Fraction, Decimal)."""
    eps = float(bounded(eps, "eps", 0, low_open=True))
    rtol = float(bounded(rtol, "rtol", 0, 1, low_open=True, high_open=True))
    top = eps_min(task, 0.0)
    if eps >= top:
        return NormNeeded(eps, 0.0, 0.0, (0.0, 0.0), 0.0)
    lo, hi = 0.0, 1.0
    while eps_min(task, hi) > eps:
        lo, hi = hi, 2 * hi
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if eps_min(task, mid) > eps else (lo, mid)
    enc = eps_min_enclosure(task, lo)
    while enc[0] <= eps and lo > 0:  # float bisection overshot: step down until certified
        lo = lo * (1 - 1e-6)
        enc = eps_min_enclosure(task, lo)
    closed = max((math.log(task.T * (math.sqrt(t.content_norm_sq) - eps) / eps) / t.rates().max()
                  for t in theorem5_terms(task) if math.sqrt(t.content_norm_sq) > eps), default=0.0)
    return NormNeeded(eps, lo, hi, enc, max(closed, 0.0))
