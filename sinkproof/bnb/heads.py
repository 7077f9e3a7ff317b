"""One step of the several-head engine: a dual SOCP for ``H`` fixed-value softmax heads.

Single out one head (any: the heads are alike).  Its logit-sharing variables ``u >= 0``
(one per class of (query token, ``π(t)``, key token, ``π(j)``)) and, per prefix ``X_i`` of
``S_T``, the other heads' weight on each class in its units, ``λ_il >= 0``, satisfy

- ``|| Σ_l m_il u_l v_l + Σ_l λ_il v_l - Z_i y_i || <= eps Z_i`` with ``Z_i = 1 + m_i·u``
  (the heads' outputs add; ``v_l`` the ``U_fix`` value of class ``l``'s key token),
- ``Σ_l λ_il <= (H - 1) Z_i``, and, for each proved lemma "every head has
  ``a_k·u <= c_k``", ``Σ_l (a_kl / m_il + c_k) λ_il <= (H - 1) c_k Z_i`` and ``a_k·u <= c_k``.

The least BOS mass of the singled-out head at a target ``X*`` is at least ``1/(1 + c0)``
for every dual-feasible point of ``max a*·u`` over these constraints (multipliers ``(z_i,
s_i)`` on the cones, ``μ_i``, ``ν_ik``, ``κ_k`` on the linear rows), so it holds in every
head.  This module solves that dual in floating point, rounds it to rationals, makes
the ``λ`` coefficients ``q_il <= 0`` hold exactly by raising ``μ_i``, and checks the step
in exact arithmetic (:meth:`HeadsProgram.check`) before returning it; the certificate is
verified as a whole by the trusted checker (:mod:`sinkproof.checker.rules.tree`, kind
``bnb-heads``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import scipy.sparse as sp_sparse

from ..convex import interruptible
from ..convex.interruptible import cvxpy as cp
from ..task import TRIG, TriggerTask
from .dual import _fmt, _round, _round_up_norm
from .primal import SOLVER
from .relaxation import build_relaxation, exact_target

MARGINS = (1e-7, 1e-5, 1e-3)
DROP = 1e-10
"""Relative size below which a multiplier is dropped before rounding."""


@dataclass(frozen=True)
class Lemma:
    """A proved step: every head has ``a·u <= c`` (BOS mass ``>= b = 1/(1 + c)`` at
    ``target``); ``index`` is its place among the certificate's steps."""

    index: int
    target: tuple[int, ...]
    bound: Fraction

    @property
    def c(self) -> Fraction:
        return 1 / self.bound - 1


class HeadsProgram:
    """The dual of one step, compiled once per lemma set; the target enters as a parameter.

    ``parametrised=False`` builds a fresh problem at every solve (the baseline of
    ``benchmarks/bench_bnb.py``).
    """

    def __init__(self, task: TriggerTask, eps: Fraction, heads: int,
                 lemmas: list[Lemma] = (), parametrised: bool = True) -> None:
        if heads < 1:
            raise ValueError(f"heads must be >= 1, got {heads}")
        relax = build_relaxation(task, Fraction(eps), (0,) if task.k else (TRIG,))
        self.task, self.eps, self.heads, self.relax = task, Fraction(eps), heads, relax
        self.lemmas = list(lemmas)
        self.index = {c: i for i, c in enumerate(relax.classes)}
        table = {tok: (np.zeros(task.p) if tok == TRIG else np.asarray(task.content[tok]))
                 for tok in relax.tokens}
        self.V = np.array([table[int(t)] for t in relax.key]).reshape(relax.n, task.p)
        self.A_lem = np.zeros((len(self.lemmas), relax.n))
        for k, lem in enumerate(self.lemmas):
            self.A_lem[k] = self.counts(lem.target)
        self.c_lem = np.array([float(lem.c) for lem in self.lemmas])
        M = relax.M
        # ν pairs: a lemma is used on a prefix when they share a class
        self.pairs = [(i, k) for i in range(relax.m) for k in range(len(self.lemmas))
                      if (self.A_lem[k][M[i] > 0] > 0).any()]
        self.parametrised = parametrised
        if parametrised:
            self._a = cp.Parameter(relax.n, nonneg=True)
            self._margin = cp.Parameter(relax.n, nonneg=True)
            self._built = self._build(self._a, self._margin, np.arange(relax.m))

    def counts(self, prefix: tuple[int, ...]) -> np.ndarray:
        """Class counts ``a`` of ``prefix`` (every class of a prefix of ``S_T`` is indexed)."""
        from_task = build_relaxation(self.task, self.eps, prefix, prefixes=[])
        out = np.zeros(self.relax.n)
        for cls, mult in zip(from_task.classes, from_task.a):
            out[self.index[cls]] = mult
        return out

    def _build(self, a, margin, rows: np.ndarray):
        """The dual over the constraint prefixes ``rows`` (lemma rows ``κ`` always)."""
        r, H = self.relax, self.heads
        p = r.task.p
        M = r.M[rows]
        m = len(rows)
        I, L = np.nonzero(M)
        at = {int(i): row for row, i in enumerate(rows)}
        pairs = [(at[i], k) for i, k in self.pairs if i in at]
        P, K = len(pairs), len(self.lemmas)
        z = cp.Variable((m, p))
        s = cp.Variable(m, nonneg=True)
        mu = cp.Variable(m, nonneg=True)
        nu = cp.Variable(P, nonneg=True) if P else None
        kappa = cp.Variable(K, nonneg=True) if K else None
        zv = cp.sum(cp.multiply(z[I], self.V[L]), axis=1)  # z_i·v_l on the entries m_il > 0
        q = zv - mu[I]
        eps_s = float(r.eps) * s - cp.sum(cp.multiply(z, r.Y[rows]), axis=1)
        extra = mu
        if P:
            brow, bcol, bval, crow, ccol, cval = [], [], [], [], [], []
            entry = {(i, l): e for e, (i, l) in enumerate(zip(I, L))}
            for pnum, (i, k) in enumerate(pairs):
                for l in np.flatnonzero(M[i] > 0):
                    brow.append(entry[(i, l)])
                    bcol.append(pnum)
                    bval.append(self.A_lem[k, l] / M[i, l] + self.c_lem[k])
                crow.append(i)
                ccol.append(pnum)
                cval.append(self.c_lem[k])
            B = sp_sparse.csr_matrix((bval, (brow, bcol)), shape=(len(I), P))
            C = sp_sparse.csr_matrix((cval, (crow, ccol)), shape=(m, P))
            q = q - B @ nu
            extra = mu + C @ nu
        rho = eps_s + (H - 1) * extra
        G = M.T @ z
        h = M.T @ rho + cp.sum(cp.multiply(G, self.V), axis=1)
        c0 = cp.sum(rho)
        if K:
            h = h - self.A_lem.T @ kappa
            c0 = c0 + self.c_lem @ kappa
        cons = [cp.SOC(s, z, axis=1), q <= 0, h + a <= -margin, c0 >= -1]
        problem = cp.Problem(cp.Minimize(c0), cons)
        return problem, z, s, mu, nu, kappa, rows, pairs

    def solve(self, target: tuple[int, ...], margin: float = 0.0,
              rows: np.ndarray | None = None) -> tuple[Any, ...] | None:
        """Float ``(rows, pairs, z, s, mu, nu, kappa, c0)`` for ``target`` over the constraint
        prefixes ``rows`` (default all; then the margin applies to the target's classes, else
        to every class the rows touch), or ``None`` (infeasible: no bound here)."""
        a = self.counts(target)
        if rows is None:
            vec = margin * (a > 0)
            if self.parametrised:
                self._a.value, self._margin.value = a, vec
                built = self._built
            else:
                built = self._build(a, vec, np.arange(self.relax.m))
        else:
            touched = (self.relax.M[rows] > 0).any(axis=0) | (a > 0)
            built = self._build(a, margin * touched, rows)
        problem, z, s, mu, nu, kappa, rows, pairs = built
        try:
            interruptible.solve(problem, SOLVER, callback=False)
        except cp.error.SolverError:
            return None
        if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or z.value is None:
            return None

        def val(x, size):
            return np.zeros(size) if x is None else np.asarray(x.value)

        return (rows, pairs, np.asarray(z.value), np.asarray(s.value), np.asarray(mu.value),
                val(nu, len(pairs)), val(kappa, len(self.lemmas)), float(problem.value))

    def step(self, target: tuple[int, ...]) -> tuple[dict[str, Any], Fraction] | None:
        """A verified step entry ``{"target", "bound", "leaf"}`` and its ``c0``, or ``None``.

        Lemma indices in the entry are the lemmas' ``index`` (their places among the
        certificate's steps); the stated bound is ``1/(1 + c0)`` rounded down.
        """
        first = self.solve(target)
        if first is None:
            return None
        _, _, z, s, mu, nu, _, _ = first
        scale = max(1.0, float(s.max(initial=0)))
        live = s > 1e-7 * scale  # a row without a cone multiplier only adds (H - 1) μ_i
        for (i, _k), x in zip(first[1], nu):
            live[i] |= x > 1e-7 * scale
        support = np.flatnonzero(live)
        for margin in MARGINS:
            got = self.solve(target, margin, support) if support.size else None
            if got is None:
                continue
            leaf = self._rounded(*got[:7])
            c0 = self.check(target, leaf)
            if c0 is None:
                continue
            bound = Fraction(1) if c0 < 0 else _round_bound(1 / (1 + c0))
            return {"target": list(target), "bound": _fmt(bound), "leaf": leaf}, c0
        return None

    def check(self, target: tuple[int, ...], leaf: dict[str, Any]) -> Fraction | None:
        """``c0`` of a step entry's multipliers when they pass every exact test of the
        weighted sum ``0 <= c0 + Σ_l h_l u_l + Σ_il q_il λ_il`` (the module docstring's
        dual, in rationals: cones, signs, every ``q_il <= 0``, ``h + a* <= 0``), else
        ``None``.  The producer's own check, written from that sum; the certificate is
        verified again by :func:`sinkproof.checker.verify`."""
        r, others = self.relax, self.heads - 1
        row_of = {pre: i for i, pre in enumerate(r.prefixes)}
        rows = [row_of.get(tuple(c)) for c in leaf["constraints"]]
        if None in rows:
            return None
        z = [[Fraction(x) for x in row] for row in leaf["z"]]
        s, mu = [Fraction(x) for x in leaf["s"]], [Fraction(x) for x in leaf["mu"]]
        step = {lem.index: k for k, lem in enumerate(self.lemmas)}
        nu: list[list[tuple[int, Fraction]]] = [[] for _ in rows]
        for i, idx, x in leaf["nu"]:
            nu[i].append((step[idx], Fraction(x)))
        kappa = [(step[idx], Fraction(x)) for idx, x in leaf["kappa"]]
        if any(x < 0 for x in s + mu) or any(x < 0 for row in nu for _, x in row) or \
                any(x < 0 for _, x in kappa) or \
                any(sum((a * a for a in zi), Fraction(0)) > si * si for zi, si in zip(z, s)):
            return None
        c = [lem.c for lem in self.lemmas]
        values = self._exact_values()
        c0 = sum((x * c[k] for k, x in kappa), Fraction(0))
        h: dict[int, Fraction] = {}
        for i, zi in enumerate(z):
            y = exact_target(self.task, r.prefixes[rows[i]])
            rho = (r.eps * s[i] - sum((a * b for a, b in zip(zi, y)), Fraction(0))
                   + others * (mu[i] + sum((x * c[k] for k, x in nu[i]), Fraction(0))))
            c0 += rho
            for l in np.flatnonzero(r.M[rows[i]]):
                m = int(r.M[rows[i], l])
                zv = sum((a * b for a, b in zip(zi, values[l])), Fraction(0))
                q = zv - mu[i] - sum((x * (Fraction(int(self.A_lem[k, l]), m) + c[k])
                                      for k, x in nu[i]), Fraction(0))
                if q > 0:
                    return None
                h[int(l)] = h.get(int(l), Fraction(0)) + m * (rho + zv)
        for k, x in kappa:
            for l in np.flatnonzero(self.A_lem[k]):
                h[int(l)] = h.get(int(l), Fraction(0)) - x * int(self.A_lem[k, l])
        a = self.counts(target)
        for l in np.flatnonzero(a):
            h.setdefault(int(l), Fraction(0))
        if any(v + int(a[l]) > 0 for l, v in h.items()):
            return None
        return c0

    def _exact_values(self) -> list[tuple[Fraction, ...]]:
        """``U_fix``'s value of each class's key token exactly (content vectors as the
        exact rationals of their floats, TRIG 0)."""
        return [tuple(Fraction(float(x)) for x in row) for row in self.V]

    def _rounded(self, rows, pairs, z, s, mu, nu, kappa) -> dict[str, Any]:
        """Rationals for the float multipliers: tiny rows dropped, ``s`` rounded up to the
        cone, ``μ`` raised exactly until every ``q_il <= 0``."""
        r = self.relax
        scale = max(1.0, float(np.abs(z).max(initial=0)), float(s.max(initial=0)))
        small = DROP * scale
        nu_by_row: dict[int, list[tuple[int, Fraction]]] = {}
        for (i, k), x in zip(pairs, nu):
            if x > small:
                nu_by_row.setdefault(i, []).append((k, max(Fraction(0), _round(x))))
        keep = [i for i in range(len(rows)) if s[i] > small or i in nu_by_row]
        out_z, out_s, out_mu, out_nu = [], [], [], []
        for row, i in enumerate(keep):
            zi = [Fraction(0) if abs(x) <= small else _round(x) for x in z[i]]
            out_z.append(zi)
            out_s.append(_round_up_norm(zi, float(s[i])))
            need = max(Fraction(0), _round(mu[i]))
            for l in np.flatnonzero(r.M[rows[i]] > 0):
                zv = sum((a * Fraction(float(b)) for a, b in zip(zi, self.V[l])), Fraction(0))
                lem = sum((x * (Fraction(int(self.A_lem[k, l]), int(r.M[rows[i], l]))
                                + self.lemmas[k].c) for k, x in nu_by_row.get(i, [])),
                          Fraction(0))
                need = max(need, zv - lem)
            out_mu.append(need)
            out_nu.extend([row, self.lemmas[k].index, _fmt(x)] for k, x in nu_by_row.get(i, []))
        out_kappa = [[self.lemmas[k].index, _fmt(_round(x))] for k, x in enumerate(kappa)
                     if x > small]
        return {"constraints": [list(r.prefixes[rows[i]]) for i in keep],
                "z": [[_fmt(x) for x in row] for row in out_z],
                "s": [_fmt(x) for x in out_s], "mu": [_fmt(x) for x in out_mu],
                "nu": out_nu, "kappa": out_kappa}


def _round_bound(x: Fraction, digits: int = 9) -> Fraction:
    """The largest multiple of ``10^-digits`` that is ``<= x`` (at least ``10^-digits``)."""
    scale = 10**digits
    return max(Fraction(int(x * scale), scale), Fraction(1, scale))


def instance_dict(task: TriggerTask, eps: Fraction, heads: int) -> dict[str, Any]:
    """``instance`` of a ``bnb-heads`` certificate (values ``U_fix``)."""
    out: dict[str, Any] = {"task": task.describe(), "values": "fixed", "family": "S_T",
                           "eps": _fmt(Fraction(eps)), "heads": heads}
    if task.content_scheme != "signed":
        out["content_vectors"] = [[_fmt(Fraction(float(x))) for x in row] for row in task.content]
    return out
