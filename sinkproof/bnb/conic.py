"""The engine's two programs written straight into Clarabel's standard form (no CVXPY).

Clarabel solves ``min q·x`` subject to ``A x + s = b``, ``s`` in a product of cones
(zero, non-negative orthant, second-order ``||s[1:]|| <= s[0]``).  Both programs of a
leaf are small (tens of classes, around a hundred prefixes) and share everything but
the box's rows, so they are assembled here from numpy index arrays in a fraction of a
millisecond, where CVXPY spends tens of milliseconds canonicalising each one:

- :class:`PrimalProgram`, the relaxation of :mod:`sinkproof.bnb.primal`: variables
  ``x = (u, W, v_BOS)``, maximise ``a·u``; its prefix cones are built once per
  relaxation, only the McCormick rows of the box change from leaf to leaf;
- :func:`solve_dual`, the weak-duality program of :mod:`sinkproof.bnb.dual`: variables
  ``(z, s, s_0, S)`` with ``S_l ≥ σ_B(G_l)`` coordinate-wise, minimise ``c0`` (or
  ``Σ s`` under a cap on ``c0``) subject to ``h_l + a_l <= -margin``.

Floating point only proposes: every multiplier found here is rounded to rationals and
checked exactly before it enters a certificate, and the certificate is verified by the
trusted checker.  Clarabel stops at its next iteration on Ctrl-C (a termination
callback polls :func:`sinkproof.interrupts.pending`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import interrupts
from .relaxation import Relaxation

SOLVED = ("Solved", "AlmostSolved")
INFEASIBLE = ("PrimalInfeasible", "AlmostPrimalInfeasible")
CANDIDATE = ("NumericalError", "InsufficientProgress", "MaxIterations")
"""Statuses whose last iterate is still worth rounding: every multiplier is checked
exactly, so an inaccurate point costs one check, never a wrong certificate."""


def _stop(_info: Any) -> bool:
    return interrupts.pending()


@dataclass
class Rows:
    """Sparse rows of ``A`` (triplets), their right-hand side ``b`` and cone list."""

    r: list[np.ndarray]
    c: list[np.ndarray]
    v: list[np.ndarray]
    b: list[np.ndarray]
    cones: list[tuple[str, int]]
    count: int = 0

    @classmethod
    def empty(cls) -> Rows:
        return cls([], [], [], [], [])

    def add(self, kind: str, rows: int, r: np.ndarray, c: np.ndarray, v: np.ndarray,
            b: np.ndarray) -> None:
        """Append ``rows`` rows of cone ``kind`` (``"zero"``, ``"nonneg"`` or ``"soc<d>"``
        repeated ``rows // d`` times); ``r`` counts from the block's first row."""
        if rows == 0:
            return
        self.r.append(np.asarray(r, dtype=np.int64) + self.count)
        self.c.append(np.asarray(c, dtype=np.int64))
        self.v.append(np.asarray(v, dtype=float))
        self.b.append(np.broadcast_to(np.asarray(b, dtype=float), (rows,)).copy())
        if kind.startswith("soc"):
            d = int(kind[3:])
            self.cones.extend([("soc", d)] * (rows // d))
        else:
            self.cones.append((kind, rows))
        self.count += rows

    def extend(self, other: Rows) -> Rows:
        """A new :class:`Rows` with ``other``'s rows after this one's."""
        out = Rows(list(self.r), list(self.c), list(self.v), list(self.b), list(self.cones),
                   self.count)
        for r, c, v, b in zip(other.r, other.c, other.v, other.b):
            out.r.append(r + self.count)
            out.c.append(c)
            out.v.append(v)
            out.b.append(b)
        out.cones.extend(other.cones)
        out.count += other.count
        return out


_EMPTY_P: dict[int, Any] = {}
_CONES: dict[tuple, list] = {}
"""Clarabel's inputs that recur from solve to solve: the zero ``P`` per size, the cone
lists per layout (a few hundred layouts per proof)."""
_KEEP = 4096
REFINE = False
"""Clarabel's iterative refinement of each KKT solve: off.  At the engine's sizes (a
few hundred variables and rows) it costs about a third of every solve, and the trees,
their nodes and bounds stay what they were to the digits ``benchmarks/bench_engine.py``
prints (it runs both, parts (a), (b) and (d)); every multiplier is rounded and checked
exactly either way, so a less accurate point costs a failed check, never a wrong
certificate."""


def _cones(layout: list[tuple[str, int]]) -> list:
    """Clarabel's cone objects for ``layout`` (kept for the next solve with it)."""
    import clarabel

    key = tuple(layout)
    got = _CONES.get(key)
    if got is None:
        got = []
        for kind, size in _merged(layout):
            if kind == "zero":
                got.append(clarabel.ZeroConeT(size))
            elif kind == "nonneg":
                got.append(clarabel.NonnegativeConeT(size))
            else:
                got.append(clarabel.SecondOrderConeT(size))
        if len(_CONES) >= _KEEP:
            _CONES.clear()
        _CONES[key] = got
    return got


def solve(q: np.ndarray, rows: Rows, tol: float | None = None) -> Any:
    """Clarabel's solution of ``min q·x`` over ``rows`` (``x`` of ``len(q)`` entries)."""
    import clarabel
    import scipy.sparse as sp_sparse

    n = len(q)
    A = sp_sparse.csc_matrix((np.concatenate(rows.v), (np.concatenate(rows.r),
                                                       np.concatenate(rows.c))),
                             shape=(rows.count, n))
    P = _EMPTY_P.get(n)
    if P is None:
        P = _EMPTY_P[n] = sp_sparse.csc_matrix((n, n))
    cones = _cones(rows.cones)
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.iterative_refinement_enable = REFINE
    if tol is not None:
        settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = tol
    solver = clarabel.DefaultSolver(P, np.asarray(q, dtype=float), A,
                                    np.concatenate(rows.b), cones, settings)
    solver.set_termination_callback(_stop)
    with interrupts.deferred():
        return solver.solve()


def _merged(cones: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Adjacent zero / non-negative blocks merged (second-order cones stay one each)."""
    out: list[tuple[str, int]] = []
    for kind, size in cones:
        if out and kind != "soc" and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + size)
        else:
            out.append((kind, size))
    return out


def status_of(solution: Any) -> str:
    """Clarabel's status as a bare name (``"Solved"``, ``"PrimalInfeasible"``, ...)."""
    return str(solution.status).rsplit(".", 1)[-1]


@dataclass
class PrimalOutcome:
    """One solve of :class:`PrimalProgram`: ``status`` ``"optimal"``, ``"infeasible"`` or
    ``"failed"``; the maximiser ``(u, W, v_BOS)`` and its objective ``value`` when optimal;
    ``z``, ``s``: the solver's multipliers of the prefix cones of ``rows`` (its dual, or its
    certificate of infeasibility), a candidate leaf certificate."""

    status: str
    rows: np.ndarray
    u: np.ndarray | None = None
    W: np.ndarray | None = None
    vb: np.ndarray | None = None
    value: float = float("nan")
    z: np.ndarray | None = None
    s: np.ndarray | None = None


class PrimalProgram:
    """The relaxation of one target in standard form, over any subset of its prefix
    constraints; :meth:`solve` takes a box's float ends per class and coordinate (``±inf``
    for open ends) and the prefixes to impose.

    ``x = (u_1..u_n, W_11..W_np, v_BOS)``; maximise ``(a + margin)·u`` subject to
    ``u >= 0``, ``lo u_l <= W_l <= hi u_l`` (finite ends), ``a·u <= cap``,
    ``||v_BOS|| <= eps`` (``v_BOS = 0`` when ``bos_zero``) and, per imposed prefix ``i``,
    ``|| v_BOS + M_i W - Y_i (1 + M_i·u) || <= eps (1 + M_i·u)``.  Leaving prefixes out
    only loosens the program: its maximum still bounds the full relaxation's, and its
    multipliers are a leaf certificate over the prefixes imposed.
    """

    def __init__(self, relax: Relaxation, cap: float, bos_zero: bool) -> None:
        self.relax, self.cap = relax, float(cap)
        n, m, p = relax.n, relax.m, relax.dim
        self.n_var = n + n * p + p
        self.eps = eps = float(relax.eps)
        u = np.arange(n)
        W = n + np.arange(n * p).reshape(n, p)
        vb = n + n * p + np.arange(p)
        fixed = Rows.empty()
        fixed.add("nonneg", n, np.arange(n), u, -np.ones(n), 0.0)  # u >= 0
        fixed.add("nonneg", 1, np.zeros(n, dtype=np.int64), u, relax.a, self.cap)
        if bos_zero:
            fixed.add("zero", p, np.arange(p), vb, np.ones(p), 0.0)
        else:
            fixed.add(f"soc{p + 1}", p + 1, 1 + np.arange(p), vb, -np.ones(p),
                      np.r_[eps, np.zeros(p)])
        self.fixed = fixed
        # prefix i's cone, rows (t, R_1..R_p) local to the prefix; s = b - A x
        I, L = np.nonzero(relax.M)
        mult = relax.M[I, L]
        r, c, v, owner = [np.zeros_like(I)], [u[L]], [-eps * mult], [I]
        for col in range(p):
            r += [np.full_like(I, 1 + col)] * 2
            c += [W[L, col], u[L]]
            v += [-mult, relax.Y[I, col] * mult]
            owner += [I, I]
            r.append(np.full(m, 1 + col))
            c.append(np.full(m, vb[col]))
            v.append(-np.ones(m))
            owner.append(np.arange(m))
        order = np.argsort(np.concatenate(owner), kind="stable")
        self._cone_r = np.concatenate(r)[order]
        self._cone_c = np.concatenate(c)[order]
        self._cone_v = np.concatenate(v)[order]
        owners = np.concatenate(owner)[order]
        self._cone_start = np.searchsorted(owners, np.arange(m + 1))
        b = np.zeros((m, p + 1))
        b[:, 0] = eps
        b[:, 1:] = -relax.Y
        self._cone_b = b
        self.q = np.zeros(self.n_var)
        self.q[:n] = -relax.a
        self._u, self._W, self._vb = u, W, vb
        self._M = relax.M
        self._last_box: tuple[np.ndarray, np.ndarray, Rows] | None = None

    def box_rows(self, lo: np.ndarray, hi: np.ndarray) -> Rows:
        """``lo u_l - W_lc <= 0`` and ``W_lc - hi u_l <= 0`` on the finite ends."""
        rows = Rows.empty()
        for ends, sign in ((lo, 1.0), (hi, -1.0)):
            L, C = np.nonzero(np.isfinite(ends))
            k = len(L)
            idx = np.arange(k)
            rows.add("nonneg", k, np.r_[idx, idx], np.r_[self._u[L], self._W[L, C]],
                     np.r_[sign * ends[L, C], -sign * np.ones(k)], 0.0)
        return rows

    def cone_rows(self, rows: np.ndarray) -> Rows:
        """The cones of the prefixes ``rows``, in that order."""
        p = self.relax.dim
        out = Rows.empty()
        if not len(rows):
            return out
        starts, ends = self._cone_start[rows], self._cone_start[rows + 1]
        lengths = ends - starts
        idx = np.repeat(ends - lengths.cumsum(), lengths) + np.arange(lengths.sum())
        block = np.repeat(np.arange(len(rows)) * (p + 1), lengths)
        out.add(f"soc{p + 1}", len(rows) * (p + 1), self._cone_r[idx] + block,
                self._cone_c[idx], self._cone_v[idx], self._cone_b[rows].ravel())
        return out

    def violation(self, u: np.ndarray, W: np.ndarray, vb: np.ndarray) -> np.ndarray:
        """``||R_i|| - eps Z_i`` per prefix of the relaxation at ``(u, W, v_BOS)``
        (positive where the point breaks prefix ``i``'s constraint)."""
        Mu = self._M @ u
        R = vb[None, :] + self._M @ W - self.relax.Y * (1 + Mu)[:, None]
        return np.linalg.norm(R, axis=1) - self.eps * (1 + Mu)

    def solve(self, lo: np.ndarray, hi: np.ndarray, rows: np.ndarray,
              margin: np.ndarray | None = None, inaccurate: bool = False) -> PrimalOutcome:
        """The program on the box ``[lo, hi]`` imposing the prefixes ``rows`` (objective
        ``a + margin``: the margin makes the multipliers strictly dual feasible);
        ``inaccurate``: take the last iterate of a solve that stalled as its answer."""
        n, p = self.relax.n, self.relax.dim
        rows = np.asarray(rows, dtype=np.int64)
        last = self._last_box
        if last is None or last[0] is not lo or last[1] is not hi:
            last = self._last_box = (lo, hi, self.fixed.extend(self.box_rows(lo, hi)))
        program = last[2]  # a leaf's rounds share its box's rows
        head = program.count
        program = program.extend(self.cone_rows(rows))
        q = self.q if margin is None else np.r_[self.q[:n] - margin, self.q[n:]]
        sol = solve(q, program)
        status = status_of(sol)
        if inaccurate and status in CANDIDATE and sol.x is not None and \
                np.isfinite(np.asarray(sol.x)).all() and np.isfinite(sol.obj_val):
            status = "Solved"  # the search may branch on an inaccurate point: it proves nothing
        if status in INFEASIBLE or status in SOLVED:
            dual = np.asarray(sol.z)[head:head + len(rows) * (p + 1)].reshape(len(rows), p + 1)
            z, s = dual[:, 1:].copy(), np.maximum(dual[:, 0], 0.0)
            if status in INFEASIBLE:
                return PrimalOutcome("infeasible", rows, z=z, s=s)
            x = np.asarray(sol.x)
            u = np.maximum(x[:n], 0.0)
            return PrimalOutcome("optimal", rows, u, x[n:n + n * p].reshape(n, p),
                                 x[n + n * p:], float(-sol.obj_val), z, s)
        return PrimalOutcome("failed", rows)


def solve_dual(relax: Relaxation, lo: np.ndarray, hi: np.ndarray, rows: np.ndarray,
               margin: float, touched_only: bool, empty: bool = False,
               sparsify: float | None = None, bos_zero: bool = False
               ) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Float ``(z, s, c0)`` of the weak-duality program over the prefixes ``rows`` (the
    same program as :func:`sinkproof.bnb.dual._solve_dual`), or ``None`` when Clarabel
    finds none.

    Variables ``z`` (``m x p``), ``s`` (``m``), ``s_0``, ``S`` (``n x p``, classes the rows
    touch); ``G = M^T z``; ``S_lc >= lo G_lc`` and ``>= hi G_lc`` on finite ends,
    ``G_lc >= 0`` (``<= 0``) where ``lo`` (``hi``) is open; ``h = M^T (eps s - z·y) + Σ_c
    S`` with ``h + a <= -margin`` on the touched classes (``a`` left out when
    ``empty``), ``c0 = eps s_0 + Σ (eps s - z·y) >= -1``; minimise ``c0``, or with
    ``sparsify`` minimise ``Σ s + s_0`` subject to ``c0 <= sparsify``.
    """
    M, Y = relax.M[rows], relax.Y[rows]
    m, n, p = M.shape[0], relax.n, relax.dim
    eps = float(relax.eps)
    touched = (M > 0).any(axis=0) if m else np.zeros(n, dtype=bool)
    a = np.zeros(n) if empty else relax.a
    if (a[~touched] > 0).any():
        return None  # an untouched class of the target: no finite bound from these rows
    touched_margin = touched if touched_only else np.ones(n, dtype=bool)
    Z = np.arange(m * p).reshape(m, p)
    sv = m * p + np.arange(m)
    s0 = m * p + m
    cls = np.flatnonzero(touched)
    S = s0 + 1 + np.arange(len(cls) * p).reshape(len(cls), p)
    n_var = s0 + 1 + len(cls) * p
    out = Rows.empty()
    # G_lc rows: G_lc = Σ_i M_il z_ic; entries (class position k, coordinate c)
    I, K = np.nonzero(M[:, cls])
    mult = M[I, cls[K]]
    lo_t, hi_t = lo[cls], hi[cls]

    def g_rows(kind_mask: np.ndarray, scale: np.ndarray, with_S: bool) -> None:
        """One row per (k, c) with ``kind_mask[k, c]``: ``scale G_kc - S_kc <= 0``."""
        ks, cs = np.nonzero(kind_mask)
        if not len(ks):
            return
        row_of = -np.ones((len(cls), p), dtype=np.int64)
        row_of[ks, cs] = np.arange(len(ks))
        r, c, v = [], [], []
        for col in range(p):
            hit = row_of[K, col] >= 0
            r.append(row_of[K[hit], col])
            c.append(Z[I[hit], col])
            v.append(mult[hit] * scale[K[hit], col])
        if with_S:
            r.append(np.arange(len(ks)))
            c.append(S[ks, cs])
            v.append(-np.ones(len(ks)))
        out.add("nonneg", len(ks), np.concatenate(r), np.concatenate(c), np.concatenate(v),
                0.0)

    flo, fhi = np.isfinite(lo_t), np.isfinite(hi_t)
    g_rows(flo, np.where(flo, lo_t, 0.0), True)
    g_rows(fhi, np.where(fhi, hi_t, 0.0), True)
    g_rows(~flo, -np.ones_like(lo_t), False)   # open below: G >= 0
    g_rows(~fhi, np.ones_like(hi_t), False)    # open above: G <= 0
    both = ~flo & ~fhi
    if both.any():
        ks, cs = np.nonzero(both)
        out.add("nonneg", len(ks), np.arange(len(ks)), S[ks, cs], -np.ones(len(ks)), 0.0)
    # h_l + a_l <= -margin: Σ_i M_il (eps s_i - Σ_c Y_ic z_ic) + Σ_c S_lc
    r = [K, ]
    c = [sv[I]]
    v = [eps * mult]
    for col in range(p):
        r.append(K)
        c.append(Z[I, col])
        v.append(-mult * Y[I, col])
    r.append(np.repeat(np.arange(len(cls)), p))
    c.append(S.ravel())
    v.append(np.ones(len(cls) * p))
    out.add("nonneg", len(cls), np.concatenate(r), np.concatenate(c), np.concatenate(v),
            -a[cls] - margin * touched_margin[cls])
    # c0 = eps s0 + Σ_i (eps s_i - z_i·y_i)
    c0_cols = np.r_[s0, sv, Z.ravel()]
    c0_vals = np.r_[eps, np.full(m, eps), -Y.ravel()]
    out.add("nonneg", 1, np.zeros(len(c0_cols)), c0_cols, -c0_vals, 1.0)  # c0 >= -1
    if sparsify is not None:
        out.add("nonneg", 1, np.zeros(len(c0_cols)), c0_cols, c0_vals, sparsify)
    if bos_zero:
        out.add("zero", 1, [0], [s0], [1.0], 0.0)
    else:  # (s0, -Σ z_i) in the cone
        r = [np.zeros(1, dtype=np.int64)]
        c = [np.array([s0])]
        v = [-np.ones(1)]
        for col in range(p):
            r.append(np.full(m, 1 + col))
            c.append(Z[:, col])
            v.append(np.ones(m))
        out.add(f"soc{p + 1}", p + 1, np.concatenate(r), np.concatenate(c),
                np.concatenate(v), 0.0)
    # (s_i, z_i) in the cone
    blk = np.arange(m) * (p + 1)
    r = [blk] + [blk + 1 + col for col in range(p)]
    c = [sv] + [Z[:, col] for col in range(p)]
    out.add(f"soc{p + 1}", m * (p + 1), np.concatenate(r), np.concatenate(c),
            -np.ones(m * (p + 1)), 0.0)
    q = np.zeros(n_var)
    if sparsify is None:
        q[c0_cols] = c0_vals
    else:
        q[sv] = 1.0
        q[s0] = 1.0
    sol = solve(q, out)
    if status_of(sol) not in SOLVED + CANDIDATE or sol.x is None or \
            not np.isfinite(np.asarray(sol.x)).all():
        return None
    x = np.asarray(sol.x)
    c0 = float(c0_vals @ x[c0_cols])
    return x[Z], np.maximum(x[sv], 0.0), c0
