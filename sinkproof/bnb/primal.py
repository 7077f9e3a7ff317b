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
from .conic import PrimalProgram
from .relaxation import Relaxation

SOLVER = "CLARABEL"
BACKENDS = ("clarabel", "cvxpy")
ROUNDS = 12
"""Most solves of one leaf's constraint generation."""
ADD = 8
"""Most prefixes added to the working set per solve."""
"""How the engine states its programs: straight to Clarabel, or through CVXPY."""


@dataclass
class LeafSolution:
    """``bound``: float max of ``Z* - 1`` (``inf`` when it reaches the cap, ``-inf`` when the
    relaxation is infeasible); ``u``, ``W``: the maximiser (``None`` when infeasible)."""

    bound: float
    u: np.ndarray | None
    W: np.ndarray | None
    status: str
    rows: np.ndarray | None = None
    z: np.ndarray | None = None
    s: np.ndarray | None = None
    """The direct backend's working set of prefixes and the solver's multipliers on their
    cones: a candidate leaf certificate (the box's certificate is still found, rounded and
    checked in :mod:`sinkproof.bnb.dual`)."""


class PrimalSolver:
    """Solves the relaxation of :class:`Relaxation` on any box.

    ``backend="clarabel"`` (the default) writes the program straight into Clarabel's
    standard form (:class:`~sinkproof.bnb.conic.PrimalProgram`: the prefix cones built
    once, the box's rows per leaf); ``"cvxpy"`` states it in CVXPY, where
    ``parametrised=True`` compiles one problem whose box enters through parameters and
    ``False`` builds a fresh problem per leaf (the baselines of
    ``benchmarks/bench_bnb.py``).  ``bos_zero``: ``v_BOS = 0`` (fixed values).
    """

    def __init__(self, relax: Relaxation, cap: float = 1e4, parametrised: bool = True,
                 bos_zero: bool = False, backend: str = "clarabel") -> None:
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        self.relax, self.cap, self.parametrised = relax, float(cap), parametrised
        self.bos_zero, self.backend = bos_zero, backend
        self._start: np.ndarray | None = None
        self._check: PrimalSolver | None = None
        n, p = relax.n, relax.dim
        if backend == "clarabel":
            self._program = PrimalProgram(relax, self.cap, bos_zero)
        elif parametrised:
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

    def warm(self, rows: np.ndarray | None) -> None:
        """Impose the prefixes ``rows`` from the outset in the next :meth:`solve` (the
        parent's working set; direct backend only)."""
        self._start = rows

    def solve(self, box: ValueBox, whole: bool = False) -> LeafSolution:
        """Solve the relaxation on ``box`` (``whole``: over every prefix from the outset,
        no constraint generation)."""
        lo, hi = box.arrays(self.relax.key)
        if self.backend == "clarabel":
            start, self._start = self._start, None
            if whole:
                start = np.arange(self.relax.m)
            return self._solve_direct(lo, hi, start)
        return self._solve_cvxpy(lo, hi)

    def resolve(self, box: ValueBox, above: float = -np.inf) -> LeafSolution:
        """Solve the relaxation on ``box`` again: for a leaf whose first bound came out
        doubtful (above ``above``, its parent's bound, on a smaller box).  The direct
        backend's restricted programs can end "optimal" at a maximum that a prefix more
        raised (seen: -0.22, then 0.50 on a box whose whole program is infeasible), and
        its working set then looks complete.  First the whole program (direct backend),
        then, where that is no lower than ``above`` either, CVXPY's (a problem built for
        this box)."""
        if self.backend == "clarabel":
            lo, hi = box.arrays(self.relax.key)
            got = self._solve_direct(lo, hi, np.arange(self.relax.m))
            if got.bound <= above:
                return got
        if self._check is None:
            self._check = PrimalSolver(self.relax, self.cap, False, self.bos_zero, "cvxpy")
        return self._check.solve(box)

    def _solve_cvxpy(self, lo: np.ndarray, hi: np.ndarray) -> LeafSolution:
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

    def _solve_direct(self, lo: np.ndarray, hi: np.ndarray,
                      start: np.ndarray | None) -> LeafSolution:
        """Constraint generation: solve over a working set of prefixes, add the ones the
        maximiser breaks most, until it breaks none (then it is the relaxation's maximiser)
        or :data:`ROUNDS` solves are spent (the last bound is still an upper bound: fewer
        constraints only loosen the program)."""
        prog, relax = self._program, self.relax
        rows = np.arange(0) if start is None else np.asarray(start, dtype=np.int64)
        tol = 1e-7
        for _ in range(ROUNDS):
            out = prog.solve(lo, hi, rows, inaccurate=True)
            if out.status == "infeasible":
                return LeafSolution(-np.inf, None, None, out.status, out.rows, out.z, out.s)
            if out.status != "optimal":
                if len(rows) < relax.m:  # retry over every prefix before giving up
                    rows = np.arange(relax.m)
                    continue
                fallback = PrimalSolver(relax, self.cap, False, self.bos_zero, "cvxpy")
                return fallback._solve_cvxpy(lo, hi)
            broken = prog.violation(out.u, out.W, out.vb)
            broken[rows] = -np.inf
            scale = tol * (1 + float(relax.a @ out.u))
            worst = np.flatnonzero(broken > scale)
            if not worst.size:
                break
            worst = worst[np.argsort(-broken[worst])][:ADD]
            rows = np.sort(np.r_[rows, worst])
        value = float(out.value)
        bound = np.inf if float(relax.a @ out.u) >= self.cap * (1 - 1e-6) else value
        return LeafSolution(bound, out.u, out.W, out.status, out.rows, out.z, out.s)
