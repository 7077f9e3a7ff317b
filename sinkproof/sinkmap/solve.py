"""Floating-point solution of Theorem 6's SOCP for one block (CVXPY; it searches, never certifies).

For a target with variable indicator ``a*`` we solve the *dual* directly:

    minimise  eps·Σ w_i + Σ z_i·r0_i
    s.t.      ||z_i|| <= w_i,   eps·Aᵀw + Rᵀz + a* <= -η·used,

whose value ``c0`` bounds ``Z* - 1`` (weak duality), so the BOS mass is ``>= 1/(1+c0)``.
The small margin ``η`` leaves room for rounding the multipliers to rationals.  The
multipliers of the last constraint are the primal ``u`` (the bridge's search target).
When the dual is infeasible the primal is unbounded; :meth:`BlockSolver.ray` then
finds a direction ``d >= 0`` along which every constraint stays satisfied.
"""

from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from ..convex.interruptible import solver_for
from .blocks import Block

DEFAULT_SOLVER = "CLARABEL"


@dataclass(frozen=True)
class DualSolution:
    """``status``: ``"bounded"``, ``"unbounded"`` or ``"failed"``; ``c0`` the float dual value;
    ``w`` ``(m,)``, ``z`` ``(m, p)`` multipliers; ``u`` ``(n,)`` the primal shared variables."""

    status: str
    c0: float
    w: np.ndarray | None = None
    z: np.ndarray | None = None
    u: np.ndarray | None = None

    @property
    def bound(self) -> float:
        """Float lower bound ``1/(1 + c0)`` on the BOS mass (0 when unbounded)."""
        return 1.0 / (1.0 + self.c0) if self.status == "bounded" else 0.0


class BlockSolver:
    """One compiled CVXPY dual problem per block; the target enters as a parameter."""

    def __init__(self, block: Block, solver: str = DEFAULT_SOLVER, margin: float = 1e-7) -> None:
        self.block = block
        self.solver = solver
        m, n = block.m, block.n
        p = block.R.shape[0] // m
        self.used = np.asarray(block.A.sum(axis=0)).ravel() > 0
        # a column whose value vector is 0 in every constraint (e.g. the trigger key under a
        # content query) has g >= 0, so g <= 0 forces zero multipliers there: no margin
        self.null = self.used & (np.asarray(abs(block.R).sum(axis=0)).ravel() == 0)
        self.target = cp.Parameter(n)
        self.margin = cp.Parameter(nonneg=True, value=margin)
        self.w = cp.Variable(m, nonneg=True)
        self.z = cp.Variable((p, m))
        zvec = cp.vec(self.z, order="F")
        g = block.eps * (block.A.T @ self.w) + block.R.T @ zvec
        margin_cols = (self.used & ~self.null).astype(float)
        self.feasibility = g + self.target <= -self.margin * margin_cols
        self.problem = cp.Problem(
            cp.Minimize(block.eps * cp.sum(self.w) + block.r0 @ zvec),
            [cp.SOC(self.w, self.z, axis=0), self.feasibility],
        )

    def solve(self, target: np.ndarray) -> DualSolution:
        """Minimise the dual bound for the target indicator ``a*``."""
        if np.any(target[~self.used] > 0):
            return DualSolution("unbounded", np.inf)  # a target variable no constraint limits
        self.target.value = target
        try:
            self.problem.solve(solver=solver_for(self.solver))
        except cp.error.SolverError:
            return DualSolution("failed", np.nan)
        status = self.problem.status
        if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            return DualSolution("unbounded", np.inf)
        if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or self.w.value is None:
            return DualSolution("failed", np.nan)
        u = self.feasibility.dual_value
        return DualSolution("bounded", float(self.problem.value), np.array(self.w.value),
                            np.array(self.z.value).T.copy(),
                            None if u is None else np.maximum(np.asarray(u), 0.0))

    def ray(self, target: np.ndarray) -> np.ndarray | None:
        """A direction ``d >= 0`` with ``a*·d = 1`` keeping every cone constraint, or ``None``."""
        block = self.block
        m, n = block.m, block.n
        p = block.R.shape[0] // m
        d = cp.Variable(n, nonneg=True)
        res = cp.reshape(block.R @ d, (p, m), order="F")
        prob = cp.Problem(cp.Maximize(target @ d),
                          [cp.SOC(block.eps * (block.A @ d), res, axis=0), cp.sum(d) <= 1])
        try:
            prob.solve(solver=solver_for(self.solver))
        except cp.error.SolverError:
            return None
        if prob.status != cp.OPTIMAL or prob.value is None or prob.value < 1e-6:
            return None
        return np.maximum(np.asarray(d.value), 0.0) / float(prob.value)
