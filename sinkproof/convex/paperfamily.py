"""Theorem 3 in the paper's setting with fixed values, at every non-trigger position.

Values are the tokens with their BOS coordinate dropped (``W_O W_V = I - e_0 e_0^T``,
so ``v_BOS = 0``).  At a non-trigger position ``t`` the target is 0, so an error
``<= ε`` forces ``α_t0 >= 1 - ε/d(S)``, ``d(S)`` the distance from 0 to the hull of
the values of ``S = {x_1..x_t}``.  Every non-BOS value has trigger + bias
coordinates summing to 1, so ``d(S) >= 1/√2`` always, after the trigger too.

For each occurring ``S`` the exact min-norm point ``z`` of the hull is computed (a
float QP finds the active face, then the face's min-norm point is solved in
rationals and its optimality checked exactly), so ``d(S)² = z·z`` exactly and the
certificate's ``d`` is ``sqrt(z·z)`` rounded down to 12 digits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from math import isqrt
from typing import Any

import numpy as np

from ..certformat import format_rational
from ..checker.paperhull import KIND, Situation, entry, occurring, paper_values
from ..errors import SinkproofError
from ..exact_numbers import error_level
from ..tasks.paper import PaperTask
from .certfile import CertificateMixin, envelope
from .minnorm import min_norm_points
from .rational import (
    certified_distance,
    floor_significant,
    floor_to,
    integer_direction,
    solve_exact,
)

Vector = list[Fraction]


def universal_direction(p: int) -> Vector:
    """``e_trigger + e_bias``: ``w·v = 1`` on every non-BOS value, ``||w|| = √2``."""
    return [Fraction(1)] + [Fraction(0)] * (p - 2) + [Fraction(1)]


@dataclass(frozen=True)
class PaperSituation:
    """One token set: ``d_sq`` the exact ``d(S)²`` (None if only a lower bound was
    certified), ``w`` the direction, ``d`` the certified rational distance, ``bound``."""

    key: Situation
    w: Vector
    d: Fraction
    bound: Fraction
    d_sq: Fraction | None


@dataclass(frozen=True)
class PaperFamilyCertificate(CertificateMixin):
    """Theorem 3 over the paper's finite family (fixed values), one entry per token set."""

    task: PaperTask
    eps: Fraction
    situations: tuple[PaperSituation, ...]

    @property
    def min_bound(self) -> Fraction:
        return min(s.bound for s in self.situations)

    @property
    def min_bound_after_trigger(self) -> Fraction:
        return min(s.bound for s in self.situations if s.key[1] is not None)

    @property
    def min_distance(self) -> Fraction:
        return min(s.d for s in self.situations)

    def to_dict(self) -> dict[str, Any]:
        """The certificate file content (kind ``paper-hull-family``)."""
        instance = {"task": self.task.describe(),
                    "content_vectors": [[format_rational(Fraction(float(v))) for v in c]
                                        for c in self.task.content],
                    "values": "fixed", "eps": format_rational(self.eps)}
        claim = {"statement": (f"Theorem 3 in the paper's setting, {self.task!r}, fixed values, "
                               f"eps={format_rational(self.eps)}: BOS mass >= "
                               f"{format_rational(self.min_bound)} at every non-trigger "
                               "position"),
                 "min_bound": format_rational(self.min_bound)}
        data = {"situations": [entry(s.key, s.w, s.d, s.bound) for s in self.situations]}
        return envelope(KIND, instance, claim, data)

    def __repr__(self) -> str:
        return (f"PaperFamilyCertificate({self.task!r}, eps={format_rational(self.eps)}: "
                f"{len(self.situations)} situations, min d = {float(self.min_distance):.6g}, "
                f"BOS mass >= {float(self.min_bound):.6g} everywhere, "
                f">= {float(self.min_bound_after_trigger):.6g} after the trigger)")


def _exact_min_norm(points: list[Vector], weights: np.ndarray) -> Vector | None:
    """The exact min-norm point of ``conv points``, from the float weights' support."""
    order = np.argsort(-weights)
    support = [int(order[0])]  # an affinely independent subset of the float support
    for i in order[1:]:
        if weights[i] <= 1e-7 * weights.max():
            break
        trial = [*support, int(i)]
        diffs = np.array([[float(a - b) for a, b in zip(points[k], points[trial[0]])]
                          for k in trial[1:]])
        if np.linalg.matrix_rank(diffs, tol=1e-9) == len(trial) - 1:
            support = trial
    base = points[support[0]]
    dots = [[sum(a * b for a, b in zip(points[i], points[j])) for j in support]
            for i in support]
    # Σ_j μ_j = 1 and (v_i - v_0)·z = 0 for the other support points i
    columns = [[dots[a][c] - dots[0][c] for a in range(1, len(support))] + [Fraction(1)]
               for c in range(len(support))]
    mu = solve_exact(columns, [Fraction(0)] * (len(support) - 1) + [Fraction(1)])
    if mu is None or any(x < 0 for x in mu):
        return None
    z = [sum((m * points[i][r] for m, i in zip(mu, support)), Fraction(0))
         for r in range(len(base))]
    zz = sum(x * x for x in z)
    if zz == 0 or any(sum(a * b for a, b in zip(z, v)) < zz for v in points):
        return None  # not optimal over the whole hull
    return z


def _sqrt_lower(x: Fraction) -> Fraction:
    """A rational ``<= sqrt(x)`` to about 12 digits (``x > 0``)."""
    scale = 10**12
    return floor_significant(Fraction(isqrt(math.floor(x * scale * scale)), scale))


def require_one_layer_finite(task: Any, what: str) -> None:
    """``task`` is a one-layer :class:`PaperTask` with a finite content set, or a clear
    error naming ``what`` needs it."""
    if not isinstance(task, PaperTask):
        raise TypeError(f"task must be a PaperTask, got {type(task).__name__}")
    if not task.finite:
        raise SinkproofError(f"{what} needs a finite content set (content=<array> or "
                             "'grid'); this task's content is 'uniform'")
    if task.residual:
        raise SinkproofError(f"{what} is for the one-layer targets: use residual=False")


def paper_family_certificate(task: PaperTask, eps: Any) -> PaperFamilyCertificate:
    """Certify ``α_t0 >= 1 - ε/d(S_t)`` at every non-trigger position of ``task``'s family.

    ``task``: a one-layer :class:`PaperTask` with a finite content set.
    """
    require_one_layer_finite(task, "a family certificate")
    eps = error_level(eps, "eps")
    content = [[Fraction(float(v)) for v in c] for c in task.content]
    tokens, triggers = paper_values(content)
    needed = occurring(task.m, task.L)
    point_sets = [[tokens[i] for i in s[0]] + ([] if s[1] is None else [triggers[s[1]]])
                  for s in needed]
    floats = [np.array([[float(x) for x in v] for v in pts]) for pts in point_sets]
    solved = min_norm_points(floats)
    out = []
    for s, pts, sol in zip(needed, point_sets, solved):
        z = _exact_min_norm(pts, sol.weights)
        if z is not None:
            d_sq: Fraction | None = sum((x * x for x in z), Fraction(0))
            w, d = z, _sqrt_lower(d_sq)
        else:  # a certified lower bound: the float direction's, or trigger + bias (1/√2)
            d_sq = None
            w, d = universal_direction(len(pts[0])), Fraction(7071067811, 10**10)
            direction = integer_direction(sol.direction)
            better = certified_distance(direction, pts) if direction else None
            if better is not None and better > d:
                w, d = direction, better
        bound = floor_to(1 - eps / d)
        out.append(PaperSituation(s, w, d, bound, d_sq))
    return PaperFamilyCertificate(task, eps, tuple(out))


__all__ = ["PaperFamilyCertificate", "PaperSituation", "paper_family_certificate"]
