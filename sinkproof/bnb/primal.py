"""The bounding step: an SOCP relaxation of one leaf, solved in floating point (it searches,
the dual certificate decides).

Over a box ``B`` of values each product ``w_l = u_l v_{key(l)}`` is replaced by its exact
cone hull ``u_l lo <= w_l <= u_l hi`` (``u_l >= 0``; an infinite end drops its side): the
McCormick envelope of ``u ∈ [0, ∞)`` times ``v ∈ [lo, hi]``.  The relaxation loses only the
coupling of one token's products across classes (``w_l / u_l`` need not agree), which
splitting the boxes restores.  Maximising ``Z* = 1 + a·u`` subject to the cone constraints
of :class:`~sinkproof.bnb.relaxation.Relaxation` bounds the least BOS mass ``1/Z*`` on ``B``.
``a·u`` is capped at ``cap`` so that an unbounded leaf still returns a point to branch on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..convex import interruptible
from ..convex.interruptible import cvxpy as cp
from .box import ValueBox
from .relaxation import Relaxation

SOLVER = "CLARABEL"


@dataclass
class LeafSolution:
    """``bound``: float max of ``Z* - 1`` (``inf`` when it reaches the cap, ``-inf`` when the
    relaxation is infeasible); ``u``, ``W``: the maximiser (``None`` when infeasible)."""

    bound: float
    u: np.ndarray | None
    W: np.ndarray | None
    status: str


class PrimalSolver:
    """Solves the relaxation of :class:`Relaxation` on any box.

    ``parametrised=True`` compiles one CVXPY problem whose box enters through parameters
    (each leaf re-uses the compiled program); ``False`` builds a fresh problem per leaf
    (the baseline of ``benchmarks/bench_bnb.py``).  ``bos_zero``: ``v_BOS = 0`` (fixed values).
    """

    def __init__(self, relax: Relaxation, cap: float = 1e4, parametrised: bool = True,
                 bos_zero: bool = False) -> None:
        self.relax, self.cap, self.parametrised = relax, float(cap), parametrised
        self.bos_zero = bos_zero
        n, p = relax.n, relax.dim
        if parametrised:
            self._flo = cp.Parameter((n, p))
            self._alo = cp.Parameter((n, p))
            self._fhi = cp.Parameter((n, p))
            self._bhi = cp.Parameter((n, p))
            self._problem, self._u, self._W = self._build(self._flo, self._alo, self._fhi,
                                                          self._bhi)

    def _build(self, flo, alo, fhi, bhi):
        r = self.relax
        n, m, p = r.n, r.m, r.dim
        eps = float(r.eps)
        u = cp.Variable(n, nonneg=True)
        W = cp.Variable((n, p))
        vb = cp.Variable(p)
        U = cp.reshape(u, (n, 1), order="C") @ np.ones((1, p))
        cons = [cp.multiply(flo, W) >= cp.multiply(alo, U),
                cp.multiply(fhi, W) <= cp.multiply(bhi, U),
                cp.SOC(cp.Constant(eps), vb),
                r.a @ u <= self.cap]
        if self.bos_zero:
            cons.append(vb == 0)
        if m:
            Mu = r.M @ u
            Z = 1 + Mu
            R = (np.ones((m, 1)) @ cp.reshape(vb, (1, p), order="C") + r.M @ W - r.Y
                 - cp.multiply(r.Y, cp.reshape(Mu, (m, 1), order="C") @ np.ones((1, p))))
            cons.append(cp.SOC(eps * Z, R, axis=1))
        problem = cp.Problem(cp.Maximize(r.a @ u), cons)
        return problem, u, W

    @staticmethod
    def _box_data(lo: np.ndarray, hi: np.ndarray):
        flo = np.isfinite(lo).astype(float)
        fhi = np.isfinite(hi).astype(float)
        return flo, np.where(flo > 0, lo, 0.0), fhi, np.where(fhi > 0, hi, 0.0)

    def solve(self, box: ValueBox) -> LeafSolution:
        """Solve the relaxation on ``box``."""
        lo, hi = box.arrays(self.relax.key)
        flo, alo, fhi, bhi = self._box_data(lo, hi)
        if self.parametrised:
            self._flo.value, self._alo.value, self._fhi.value, self._bhi.value = flo, alo, fhi, bhi
            problem, u, W = self._problem, self._u, self._W
        else:
            problem, u, W = self._build(flo, alo, fhi, bhi)
        try:
            interruptible.solve(problem, SOLVER, callback=False)
        except cp.error.SolverError:
            interruptible.solve(problem, "SCS", eps=1e-9, max_iters=200000)
        status = problem.status
        if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            return LeafSolution(-np.inf, None, None, status)
        if u.value is None:
            return LeafSolution(np.inf, None, None, status)
        value = float(self.relax.a @ u.value)
        bound = np.inf if value >= self.cap * (1 - 1e-6) else value
        return LeafSolution(bound, np.asarray(u.value), np.asarray(W.value), status)
