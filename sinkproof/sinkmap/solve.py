"""Floating-point solution of Theorem 6's SOCP for one block (it searches, never certifies).

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

import numpy as np

from ..convex import interruptible
from ..convex.interruptible import cvxpy as cp
from .blocks import Block
from .conic import ConicDual

DEFAULT_SOLVER = "CLARABEL"


@dataclass(frozen=True)
class DualSolution:
    """``status``: ``"bounded"``, ``"unbounded"`` or ``"failed"``; ``c0`` the float dual value;
    ``w`` ``(m,)``, ``z`` ``(m, p)`` multipliers; ``u`` ``(n,)`` the primal shared variables;
    ``note``: how the solver(s) answered (empty for a clean first answer); ``inaccurate``:
    the answer kept was one the solver flagged as inaccurate."""

    status: str
    c0: float
    w: np.ndarray | None = None
    z: np.ndarray | None = None
    u: np.ndarray | None = None
    note: str = ""
    inaccurate: bool = False

    @property
    def bound(self) -> float:
        """Float lower bound ``1/(1 + c0)`` on the BOS mass (0 when unbounded)."""
        return 1.0 / (1.0 + self.c0) if self.status == "bounded" else 0.0


# Clarabel's and CVXPY's status names
_CLEAN = {"Solved": "bounded", "PrimalInfeasible": "unbounded",
          "optimal": "bounded", "infeasible": "unbounded"}
_INACCURATE = {"AlmostSolved": "bounded", "AlmostPrimalInfeasible": "unbounded",
               "optimal_inaccurate": "bounded", "infeasible_inaccurate": "unbounded"}
FALLBACK_SOLVER = {"CLARABEL": "SCS"}
"""Solver retried (through CVXPY) when the first answer is inaccurate or fails; any other
first solver falls back to CLARABEL."""


class CvxpyDual:
    """The dual as a CVXPY problem with the target and margin as parameters (compiled on the
    first solve, re-solved with new parameter values after that)."""

    def __init__(self, block: Block, margin_cols: np.ndarray) -> None:
        m, n = block.m, block.n
        p = block.R.shape[0] // m
        self.target = cp.Parameter(n)
        self.margin = cp.Parameter(nonneg=True, value=0.0)
        self.w = cp.Variable(m, nonneg=True)
        self.z = cp.Variable((p, m))
        zvec = cp.vec(self.z, order="F")
        g = block.eps * (block.A.T @ self.w) + block.R.T @ zvec
        self.feasibility = g + self.target <= -self.margin * margin_cols
        self.problem = cp.Problem(
            cp.Minimize(block.eps * cp.sum(self.w) + block.r0 @ zvec),
            [cp.SOC(self.w, self.z, axis=0), self.feasibility],
        )

    def solve(self, target: np.ndarray, margin: float, solver: str,
              ) -> tuple[str, float, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
        """``(status, value, w, z (m, p), u)`` with CVXPY's status names."""
        self.target.value, self.margin.value = target, margin
        try:
            interruptible.solve(self.problem, solver)
        except cp.error.SolverError:
            return cp.SOLVER_ERROR, np.nan, None, None, None
        status = self.problem.status
        if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or self.w.value is None:
            return status, np.nan, None, None, None
        u = self.feasibility.dual_value
        return (status, float(self.problem.value), np.array(self.w.value),
                np.array(self.z.value).T.copy(), None if u is None else np.maximum(u, 0.0))


class BlockSolver:
    """One block's dual program, built once; each target and margin only changes its
    right-hand side.  ``solver="CLARABEL"`` (the default) solves the standard form
    directly (:class:`~sinkproof.sinkmap.conic.ConicDual`), any other CVXPY solver name
    goes through :class:`CvxpyDual`.  An answer the solver flags as inaccurate, or a
    failure, is retried once with :data:`FALLBACK_SOLVER`."""

    def __init__(self, block: Block, solver: str = DEFAULT_SOLVER) -> None:
        self.block = block
        self.solver = solver
        self.used = np.asarray(block.A.sum(axis=0)).ravel() > 0
        # a column whose value vector is 0 in every constraint (e.g. the trigger key under a
        # content query) has g >= 0, so g <= 0 forces zero multipliers there: no margin
        self.null = self.used & (np.asarray(abs(block.R).sum(axis=0)).ravel() == 0)
        self.margin_cols = (self.used & ~self.null).astype(float)
        self._conic: ConicDual | None = None
        self._cvxpy: CvxpyDual | None = None

    def _run(self, solver: str, target: np.ndarray, margin: float,
             ) -> tuple[str, float, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
        if solver == "CLARABEL":
            if self._conic is None:
                self._conic = ConicDual(self.block)
            return self._conic.solve(-target - margin * self.margin_cols)
        if self._cvxpy is None:
            self._cvxpy = CvxpyDual(self.block, self.margin_cols)
        return self._cvxpy.solve(target, margin, solver)

    def solve(self, target: np.ndarray, margin: float = 1e-7) -> DualSolution:
        """Minimise the dual bound for the target indicator ``a*`` (margin ``η``)."""
        if np.any(target[~self.used] > 0):
            return DualSolution("unbounded", np.inf)  # a target variable no constraint limits
        first = self._run(self.solver, target, margin)
        if first[0] in _CLEAN:
            return _solution(first)
        fallback = FALLBACK_SOLVER.get(self.solver, "CLARABEL")
        second = self._run(fallback, target, margin)
        note = f"{self.solver}: {first[0]}, then {fallback}: {second[0]}"
        # prefer a clean answer, then an inaccurate bounded one (its certificate is still
        # checked exactly), then an inaccurate infeasibility (a ray is still verified)
        if second[0] in _CLEAN:
            return _solution(second, note)
        for want in ("bounded", "unbounded"):
            for got in (first, second):
                if _INACCURATE.get(got[0]) == want:
                    return _solution(got, note)
        return DualSolution("failed", np.nan, note=note)

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
            interruptible.solve(prob, self.solver)
        except cp.error.SolverError:
            return None
        if prob.status != cp.OPTIMAL or prob.value is None or prob.value < 1e-6:
            return None
        return np.maximum(np.asarray(d.value), 0.0) / float(prob.value)


def _solution(got: tuple[str, float, np.ndarray | None, np.ndarray | None, np.ndarray | None],
              note: str = "") -> DualSolution:
    status, value, w, z, u = got
    kind = _CLEAN.get(status) or _INACCURATE.get(status) or "failed"
    inaccurate = status in _INACCURATE
    if kind == "bounded" and w is not None and z is not None:
        return DualSolution("bounded", value, w, z, u, note, inaccurate)
    if kind == "unbounded":
        return DualSolution("unbounded", np.inf, note=note, inaccurate=inaccurate)
    return DualSolution("failed", np.nan, note=note)
