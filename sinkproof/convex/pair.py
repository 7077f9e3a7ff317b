"""The normalised / non-normalised pair at one position: the paper's message in one call.

Given values ``v_0`` (BOS), ``v_1..v_t`` and a target ``y``:

- **normalised** (weights on the simplex): ``min α_0`` s.t. ``||Σ_j α_j v_j - y|| <= ε``.
  Lower-bound certificate from the SOC dual direction ``w``: for every feasible ``α``,
  ``α_0 (w·v_0) + (1 - α_0) m <= w·y + ε||w||`` with ``m = min_{j>=1} w·v_j``, so
  ``α_0 >= (m - w·y - ε u)/(m - w·v_0)`` (``u >= ||w||`` rational) when ``m > w·v_0``;
  and the program is infeasible (Farkas) when ``min_j w·v_j > w·y + ε u``.
- **non-normalised** (``Σ_j α_j = 1`` dropped, as ReLU): a witness with ``α_0 = 0``
  whose error is checked exactly (``||Σ α_j v_j - y||² <= ε²``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._validate import as_real_array
from ..certformat import dot, norm_sq
from ..task import TriggerTask
from . import interruptible
from .interruptible import cvxpy as cp
from .minnorm import SOLVER, min_norm_point
from .rational import exact_vector, floor_to, integer_direction, sqrt_upper
from .values import check_eps, value_table


@dataclass(frozen=True)
class NormalisedSide:
    """``min α_0`` with weights on the simplex: float ``optimum`` and exact ``bound <= optimum``.

    ``optimum`` is the solver's value, raised to ``bound`` where the solver fell below the
    proven bound: its feasibility tolerance (~1e-8) cannot see values far below the target's
    scale (a key value -1.2e-38 against a target 1/2 at ε = 1/2 forces α_0 = 1 exactly, while
    the solver, for ε + 1e-9, finds α_0 ≈ 0).

    ``status``: ``"optimal"`` or ``"infeasible"`` (then ``bound`` is ``None`` and ``w`` is
    a Farkas direction).  ``w``: the certificate direction; ``u >= ||w||``.
    """

    status: str
    optimum: float
    bound: Fraction | None
    w: list[Fraction] | None
    u: Fraction | None


@dataclass(frozen=True)
class RelaxedSide:
    """``min α_0`` with ``Σ α_j = 1`` dropped: a sink-free ``witness`` (``α_0 = 0``) if one exists.

    ``error_sq``: ``||Σ α_j v_j - y||²`` of the witness, exact; ``status``: ``"optimal"``
    or ``"infeasible"``; ``optimum``: 0 when the witness exists, else the solver's float.
    """

    status: str
    optimum: float
    witness: list[Fraction] | None
    error_sq: Fraction | None

    @property
    def error(self) -> float:
        return float("nan") if self.error_sq is None else float(self.error_sq) ** 0.5


@dataclass(frozen=True)
class SimplexPair:
    """Both programs at one position, side by side."""

    values: np.ndarray
    target: np.ndarray
    eps: Fraction
    normalised: NormalisedSide
    relaxed: RelaxedSide

    def rows(self) -> list[tuple[str, str, str]]:
        n, r = self.normalised, self.relaxed
        nb = ("infeasible (Farkas, exact)" if n.bound is None
              else f"lower bound >= {float(n.bound):.6g} (exact)")
        rw = "none" if r.witness is None else f"α_0 = 0, error {r.error:.3g} <= ε (exact)"
        def opt(side: Any) -> str:
            return "infeasible" if side.status == "infeasible" else f"{side.optimum:.6g}"

        return [("", "weights on the simplex", "sum-to-one dropped (ReLU)"),
                ("min BOS mass (solver)", opt(n), opt(r)),
                ("certificate", nb, f"witness {rw}")]

    def __repr__(self) -> str:
        rows = self.rows()
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        lines = [" | ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
        head = f"SimplexPair(t={len(self.values) - 1}, ε={self.eps}):"
        return "\n".join([head, *("  " + line for line in lines)])

    def _repr_markdown_(self) -> str:
        rows = self.rows()
        out = ["| " + " | ".join(rows[0]) + " |", "|---|---|---|"]
        out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        return "\n".join(out)


def _normalised(V: np.ndarray, y: np.ndarray, eps: Fraction) -> NormalisedSide:
    Vx = [exact_vector(v) for v in V]
    yx = exact_vector(y)
    a = cp.Variable(len(V), nonneg=True)
    soc = cp.SOC(cp.Constant(float(eps)), V.T @ a - y)
    problem = cp.Problem(cp.Minimize(a[0]), [cp.sum(a) == 1, soc])
    interruptible.solve(problem, SOLVER)
    if problem.status in ("optimal", "optimal_inaccurate"):
        direction = -np.asarray(soc.dual_value[1], dtype=float).ravel()
        for cand in (direction, -direction):
            bound, w, u = _lower_bound(Vx, yx, eps, cand)
            if bound is not None:
                return NormalisedSide("optimal", max(float(problem.value), float(bound)),
                                      bound, w, u)
        return NormalisedSide("optimal", float(problem.value), Fraction(0), None, None)
    # infeasible: separate y from the hull of the values by more than ε (Farkas)
    sol = min_norm_point(V - y[None, :])
    w = integer_direction(sol.direction)
    if w is not None:
        u = sqrt_upper(norm_sq(w))
        if min(dot(w, v) for v in Vx) - dot(w, yx) > eps * u:
            return NormalisedSide("infeasible", float("nan"), None, w, u)
    raise RuntimeError(f"normalised program: solver status {problem.status}, and no exact "
                       "infeasibility certificate was found")


def _lower_bound(Vx: list[list[Fraction]], yx: list[Fraction], eps: Fraction,
                 direction: np.ndarray) -> tuple[Fraction | None, Any, Any]:
    w = integer_direction(direction)
    if w is None:
        return None, None, None
    u = sqrt_upper(norm_sq(w))
    a = dot(w, Vx[0])
    m = min(dot(w, v) for v in Vx[1:])
    if m <= a:
        return None, None, None
    bound = floor_to((m - dot(w, yx) - eps * u) / (m - a))
    return max(bound, Fraction(0)), w, u


def _relaxed(V: np.ndarray, y: np.ndarray, eps: Fraction) -> RelaxedSide:
    Vx = [exact_vector(v) for v in V]
    yx = exact_vector(y)
    a = cp.Variable(len(V) - 1, nonneg=True)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(V[1:].T @ a - y)))
    interruptible.solve(problem, SOLVER)
    if a.value is not None:
        raw = np.clip(np.asarray(a.value, dtype=float), 0.0, None)
        best = None
        for cand in (raw, np.where(raw < 1e-4 * max(raw.max(), 1.0), 0.0, raw), 0 * raw):
            alpha = [Fraction(0)] + [Fraction(float(x)).limit_denominator(10**12) for x in cand]
            out = [sum((al * v[i] for al, v in zip(alpha, Vx)), Fraction(0)) - yx[i]
                   for i in range(len(yx))]
            err = norm_sq(out)
            if err <= eps * eps and (best is None or err < best[1]):
                best = (alpha, err)
        if best is not None:
            return RelaxedSide("optimal", 0.0, *best)
    b = cp.Variable(len(V), nonneg=True)
    problem = cp.Problem(cp.Minimize(b[0]), [cp.SOC(cp.Constant(float(eps)), V.T @ b - y)])
    interruptible.solve(problem, SOLVER)
    if problem.value is None or not np.isfinite(problem.value):
        return RelaxedSide("infeasible", float("nan"), None, None)
    return RelaxedSide("optimal", float(problem.value), None, None)


def simplex_pair(values: Any, target: Any, eps: Any) -> SimplexPair:
    """Both programs for values ``(t+1, p)`` (row 0 is BOS), a target ``(p,)`` and ``ε``."""
    V = as_real_array("values", values, ndim=2)
    y = as_real_array("target", target, ndim=1)
    if V.shape[0] < 2:
        raise ValueError("values need a BOS row and at least one key row")
    if y.shape[0] != V.shape[1]:
        raise ValueError(f"target has length {y.shape[0]}, values have {V.shape[1]} columns")
    eps = check_eps(eps)
    return SimplexPair(V, y, eps, _normalised(V, y, eps), _relaxed(V, y, eps))


def simplex_pair_at(task: TriggerTask, sequence: Any, t: int, eps: Any,
                    values: Any = "fixed") -> SimplexPair:
    """:func:`simplex_pair` at position ``t`` of ``sequence`` (values of the class, task target)."""
    table = value_table(task, values)
    codes = task.encode(sequence)
    if not 1 <= t <= len(codes):
        raise ValueError(f"position t={t} is outside 1..{len(codes)}")
    rows = [table.bos] + [table.U @ task.token_table[c] for c in codes[:t]]
    target = task.targets(task.decode(codes))[t]
    return simplex_pair(np.array(rows), target, eps)
