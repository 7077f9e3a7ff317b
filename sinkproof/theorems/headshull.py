"""Several heads with learned values: the hull of the heads' value differences bounds the
heads' **total** non-BOS mass (the strongest statement of this kind; with fixed values it
is Theorem 7, with one head Theorem 3).

One layer of ``H`` heads whose weights lie on the simplex (any scores), head ``h`` with
value map ``V_h`` and output block ``W_O^h`` (heads summed: ``W_O^h = I``); write
``v^h_x = W_O^h V_h φ(x)`` for the value head ``h`` writes for a key ``x`` and
``w^h_k = v^h_{x_k} - v^h_{BOS}``.

**Theorem (heads' hull).** At a position ``t`` whose target is 0, of any sequence ``X``
whose target at position 0 is 0: if the error is ``<= ε`` at positions 0 and ``t``, then

    Σ_h (1 - α^h_t0) <= 2ε / D_t,   D_t = dist(0, conv{w^h_k : 1 <= h <= H, 1 <= k <= t}),

so every head has ``α^h_t0 >= 1 - 2ε/D_t`` (``ε/D_t`` when every ``v^h_BOS = 0``).

*Proof.* ``f_0 = Σ_h v^h_BOS`` and ``f_t = Σ_h Σ_k α^h_tk v^h_{x_k} = f_0 + Σ_h Σ_{k>=1}
α^h_tk w^h_k``.  With ``S = Σ_h (1 - α^h_t0)``, the double sum is ``S`` times a convex
combination of the ``w^h_k`` (weights ``α^h_tk / S``), so its norm is ``>= S D_t``; and it is
``f_t - f_0``, of norm ``<= 2ε``.  ∎

``D_t`` is a function of the value maps: the bound is about a model's values, as Theorem 3's
is with learned values.  It is silent exactly when 0 lies in the hull — when the heads'
value differences can cancel, as in the cancelling pair
(:func:`sinkproof.constructions.cancelling_pair_solution`: ``w^1 = -w^0`` for every token,
``D_t = 0``), where no head sinks off the trigger.  So for several heads with learned values
the sink is not a per-head necessity but a property of the value maps: whenever the heads'
value differences on the tokens seen are kept away from cancelling (``D_t > 0``), the heads
together must put all but ``2ε/D_t`` of their mass on BOS.

No head has to sink at any row ``t >= 1``, the trigger row included
(:func:`sinkproof.constructions.cancelling_pair_solution` with ``rest="trigger"``;
:func:`sinkproof.constructions.paper_split_solution` in the paper's setting).  What every
accurate model must do is move mass at the trigger row:

**Theorem (the trigger row's displacement).**  For a prefix ``(BOS, x_1..x_m)`` and a next
token ``x_{m+1}``, write ``α^h`` for head ``h``'s weights at row ``m`` (``α^h_{m+1} = 0``),
``α'^h`` for its weights at row ``m+1`` and ``Δ^h_k = α'^h_k - α^h_k``.  If the error is
``<= ε`` at rows ``m`` and ``m+1``, then for any reference points ``r_h``

    Σ_h Σ_{k=0}^{m+1} |Δ^h_k| ‖v^h_{x_k} - r_h‖ >= ‖y_{m+1} - y_m‖ - 2ε.

*Proof.* ``f_{m+1} - f_m = Σ_h Σ_k Δ^h_k v^h_{x_k}``, and ``Σ_k Δ^h_k = 0`` (both rows lie on
the simplex), so it equals ``Σ_h Σ_k Δ^h_k (v^h_{x_k} - r_h)``; its norm is at least
``‖y_{m+1} - y_m‖ - 2ε``.  ∎  On ``(BOS, c^m)`` followed by the trigger, with ``r_h = v^h_c``,
only BOS and the trigger have non-zero gaps: :func:`trigger_row_displacement` computes both
sides on a given model, with ``r_h`` the value of ``x_1``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from ..stack import StackModel
from ..symbolic.bounds import exact_number, hull_distance
from .instance import float_down


def _exact(a: np.ndarray) -> list[list[Fraction]]:
    return [[Fraction(float(v)) for v in row] for row in np.atleast_2d(a)]


def _matvec(M: list[list[Fraction]], v: list[Fraction]) -> list[Fraction]:
    return [sum((m * x for m, x in zip(row, v)), Fraction(0)) for row in M]


def head_values(model: StackModel, rows: np.ndarray) -> list[list[tuple[Fraction, ...]]]:
    """``v^h_k = W_O^h V_h x_k`` exactly (the floats' exact values) for every head ``h`` of a
    one-layer model and every input row ``x_k`` of ``rows`` ``(T, D)``: ``[h][k]``."""
    if not isinstance(model, StackModel) or model.n_layers != 1:
        raise ValueError("the heads' hull theorem is about one layer of heads")
    layer = model.layers[0]
    rows_q = [[Fraction(float(v)) for v in r] for r in np.asarray(rows, dtype=float)]
    out, start = [], 0
    for head in layer.heads:
        V = _exact(head.V)
        WO = None if layer.W_O is None else _exact(layer.W_O[:, start:start + head.dv])
        start += head.dv
        vals = []
        for r in rows_q:
            v = _matvec(V, r)
            vals.append(tuple(v if WO is None else _matvec(WO, v)))
        out.append(vals)
    return out


@dataclass(frozen=True)
class HeadsHullBound:
    """The theorem at one position: ``D_t²`` exactly, the allowed total non-BOS mass
    ``2ε/D_t`` (``None`` when ``D_t = 0``: no bound), and the measured total."""

    t: int
    d_squared: Fraction
    eps: sympy.Expr
    measured_total: float

    @property
    def allowed_total(self) -> sympy.Expr | None:
        """``2ε / D_t`` (``None`` when 0 lies in the hull)."""
        if self.d_squared == 0:
            return None
        return 2 * self.eps / sympy.sqrt(sympy.Rational(self.d_squared.numerator,
                                                        self.d_squared.denominator))

    @property
    def per_head(self) -> float | None:
        """``1 - 2ε/D_t`` rounded down: a lower bound on every head's BOS weight."""
        allowed = self.allowed_total
        return None if allowed is None else float_down(1 - allowed)

    @property
    def holds(self) -> bool:
        """The measured total does not exceed the allowed one (float, relative 1e-9)."""
        allowed = self.allowed_total
        return allowed is None or self.measured_total <= float(allowed) * (1 + 1e-9)


def heads_hull_bound(model: StackModel, rows: Any, t: int, eps: Any) -> HeadsHullBound:
    """The theorem on ``model`` (one layer of simplex heads) at position ``t`` of the input
    rows ``rows`` ``(T, D)`` (``task.features(seq)``; in the paper's setting the token
    matrix), whose targets at 0 and ``t`` are 0, at error level ``eps`` (the model's error
    at positions 0 and ``t`` must be ``<= eps`` for the bound to speak about it)."""
    rows = np.asarray(rows, dtype=float)
    t = int(t)
    if not 1 <= t < rows.shape[0]:
        raise ValueError(f"t must lie in 1..{rows.shape[0] - 1}")
    if not all(h.map.properties.on_simplex for h in model.layers[0].heads):
        raise ValueError("the heads' hull theorem needs weights on the simplex")
    _, w = model.forward_rows(rows)
    eps = exact_number(eps)
    vals = head_values(model, rows[: t + 1])
    diffs = [tuple(a - b for a, b in zip(vals[h][k], vals[h][0]))
             for h in range(len(vals)) for k in range(1, t + 1)]
    d2 = hull_distance(diffs).d_squared
    total = float(np.sum(1.0 - w[0, :, t, 0]))
    return HeadsHullBound(t, d2, eps, total)


@dataclass(frozen=True)
class TriggerRowDisplacement:
    """The displacement theorem at rows ``m, m+1`` of one prefix: ``weighted`` is
    ``Σ_h Σ_k |Δ^h_k| ‖v^h_{x_k} - r_h‖`` (``r_h`` the value head ``h`` writes for ``x_1``),
    ``required`` is ``‖y_{m+1} - y_m‖ - 2ε``; ``moved`` is ``Σ_h Σ_k |Δ^h_k|`` over the keys
    whose value differs from ``r_h`` and ``gap`` the largest ``‖v^h_{x_k} - r_h‖``, so that
    ``moved >= required / gap`` (floats; the gaps from the exact values)."""

    m: int
    weighted: float
    required: float
    moved: float
    gap: float
    per_head: tuple[float, ...]

    @property
    def holds(self) -> bool:
        """``weighted >= required`` (float, relative 1e-9)."""
        return self.weighted >= self.required - 1e-9 * max(1.0, abs(self.required))

    @property
    def least_moved(self) -> float:
        """``required / gap``: the least total mass the heads must move (0 if no gap)."""
        return max(0.0, self.required) / self.gap if self.gap > 0 else 0.0


def trigger_row_displacement(model: StackModel, rows: Any, targets: Any, eps: Any
                             ) -> TriggerRowDisplacement:
    """The displacement theorem on ``model`` (one layer of simplex heads) at the last two
    rows of ``rows`` ``(m+2, D)`` (``task.features(seq)``; the paper's token matrix up to
    the trigger), whose targets are the last two rows of ``targets``; ``eps`` is the error
    level at those two rows."""
    rows = np.asarray(rows, dtype=float)
    targets = np.asarray(targets, dtype=float)
    if rows.shape[0] < 3 or targets.shape[0] != rows.shape[0]:
        raise ValueError("rows and targets need the same number of rows, at least 3 "
                         "(BOS, x_1..x_m, x_{m+1} with m >= 1)")
    if not all(h.map.properties.on_simplex for h in model.layers[0].heads):
        raise ValueError("the displacement theorem needs weights on the simplex")
    m = rows.shape[0] - 2
    _, w = model.forward_rows(rows)
    vals = head_values(model, rows)
    weighted = moved = gap = 0.0
    per_head = []
    for h, hv in enumerate(vals):
        delta = w[0, h, m + 1].copy()
        delta[: m + 1] -= w[0, h, m, : m + 1]
        mine = 0.0
        for k, v in enumerate(hv):
            g = math.sqrt(float(sum(((a - b) ** 2 for a, b in zip(v, hv[1])), Fraction(0))))
            mine += abs(float(delta[k])) * g
            if g > 0:
                moved += abs(float(delta[k]))
                gap = max(gap, g)
        per_head.append(mine)
        weighted += mine
    required = float(np.linalg.norm(targets[m + 1] - targets[m])) - 2 * float(exact_number(eps))
    return TriggerRowDisplacement(m, weighted, required, moved, gap, tuple(per_head))


__all__ = ["HeadsHullBound", "TriggerRowDisplacement", "head_values", "heads_hull_bound",
           "trigger_row_displacement"]
