"""A leaf's certificate: weak-duality multipliers of its relaxation, rounded to rationals.

The multipliers are those the trusted checker (:mod:`sinkproof.checker.rules.tree`) reads:
``(z_i, s_i)`` with ``||z_i|| <= s_i`` per constraint prefix and ``s_0 >= ||Σ z_i||``.  They
are found by solving the dual SOCP explicitly (minimise ``c0`` subject to
``h_l + a_l <= -margin`` on the classes the multipliers touch, ``h_l`` using the box's
support function).  With the direct programs (:mod:`sinkproof.bnb.conic`, the default)
it is first solved over the prefixes the leaf's own relaxation solve leaned on; where
that fails, and always on the CVXPY route, in three stages: the least ``c0``; the fewest
active prefixes (least ``Σ s_i``) within ``1e-6`` of it; the least ``c0`` over those
prefixes alone, with the margin.  Rounding keeps every strict inequality (cones are
rounded tight, a prefix whose multiplier rounds to zero is dropped); the equalities
that an infinite box end forces (``G_l = 0`` in a coordinate the box leaves open on the
side the sign needs) are restored exactly by solving for a correction of the ``z_i`` in
rational arithmetic.  The result is checked exactly by the producer's own code
(:func:`sinkproof.bnb.exact.leaf_c0`, in integers) before it is returned; the whole certificate then
goes to :func:`sinkproof.checker.verify`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import numpy as np

from ..certformat import paper_instance
from ..convex import interruptible
from ..convex.interruptible import cvxpy as cp
from . import conic
from .box import ValueBox
from .exact import leaf_c0_integers
from .primal import SOLVER
from .relaxation import Relaxation
from .result import KIND, PAPER_KIND

DENOMINATOR = 1 << 40
MARGINS = (1e-7, 1e-5, 1e-3)


def _fmt(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def _solve_dual(relax: Relaxation, box: ValueBox, rows: np.ndarray, margin: float,
                touched_only: bool, empty: bool = False, sparsify: float | None = None,
                bos_zero: bool = False) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Float ``(z, s, c0)`` over the prefixes ``rows``, or ``None`` when the solve fails.

    ``sparsify``: instead of minimising ``c0``, minimise ``Σ s_i`` (few active prefixes)
    subject to ``c0 <= sparsify``.
    """
    M, Y = relax.M[rows], relax.Y[rows]
    m, n, p = M.shape[0], relax.n, relax.dim
    eps = float(relax.eps)
    lo, hi = box.arrays(relax.key)
    flo, fhi = np.isfinite(lo), np.isfinite(hi)
    z = cp.Variable((m, p))
    s = cp.Variable(m, nonneg=True)
    s0 = cp.Variable(nonneg=True)
    S = cp.Variable((n, p))
    G = M.T @ z
    cons = [cp.SOC(s, z, axis=1), s0 == 0 if bos_zero else cp.SOC(s0, -cp.sum(z, axis=0))]
    if flo.any():
        cons.append(cp.multiply(flo, S) >= cp.multiply(np.where(flo, lo, 0.0), G))
    if fhi.any():
        cons.append(cp.multiply(fhi, S) >= cp.multiply(np.where(fhi, hi, 0.0), G))
    if (~flo).any():
        cons.append(cp.multiply(~flo, G) >= 0)
    if (~fhi).any():
        cons.append(cp.multiply(~fhi, G) <= 0)
    both = (~flo) & (~fhi)
    if both.any():
        cons.append(cp.multiply(both, S) >= 0)
    zy = cp.sum(cp.multiply(z, Y), axis=1)
    coeff = eps * s - zy
    h = M.T @ coeff + cp.sum(S, axis=1)
    touched = (M > 0).any(axis=0) if touched_only else np.ones(n, dtype=bool)
    cons.append(h + (0 if empty else relax.a) <= -margin * touched)
    c0 = eps * s0 + cp.sum(coeff)
    cons.append(c0 >= -1)
    if sparsify is None:
        problem = cp.Problem(cp.Minimize(c0), cons)
    else:
        problem = cp.Problem(cp.Minimize(cp.sum(s) + s0), [*cons, c0 <= sparsify])
    try:
        interruptible.solve(problem, SOLVER, callback=False)
    except cp.error.SolverError:
        return None
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or z.value is None:
        return None
    return np.asarray(z.value), np.asarray(s.value), float(problem.value)


def _round(x: float) -> Fraction:
    return Fraction(round(x * DENOMINATOR), DENOMINATOR)


def _round_up_norm(vec: list[Fraction], floor: float) -> Fraction:
    """A short rational ``s >= max(floor, ||vec||)`` exactly."""
    sq = sum((a * a for a in vec), Fraction(0))
    guess = max(floor, math.sqrt(float(sq))) * (1 + 1e-12) + 1.0 / DENOMINATOR
    s = Fraction(math.ceil(guess * DENOMINATOR), DENOMINATOR)
    while s * s < sq:
        s *= 2
    return s


def _solve_exact(A: list[list[int]], b: list[Fraction]) -> list[Fraction] | None:
    """One solution of ``A x = b`` in rationals (integer ``A``; fraction-free Gauss-Jordan
    on integers, the right-hand side brought to one denominator), or ``None`` if
    inconsistent."""
    rows, cols = len(A), len(A[0]) if A else 0
    den = math.lcm(*(x.denominator for x in b)) if b else 1
    aug = [[int(v) for v in A[r]] + [int(b[r] * den)] for r in range(rows)]
    pivots: list[int] = []
    r = 0
    for c in range(cols):
        pivot = next((i for i in range(r, rows) if aug[i][c] != 0), None)
        if pivot is None:
            continue
        aug[r], aug[pivot] = aug[pivot], aug[r]
        top = aug[r]
        for i in range(rows):
            f = aug[i][c]
            if i != r and f != 0:
                row = [a * top[c] - f * t for a, t in zip(aug[i], top)]
                g = math.gcd(*row)
                aug[i] = [v // g for v in row] if g > 1 else row
        pivots.append(c)
        r += 1
        if r == rows:
            break
    if any(v != 0 for row in aug[r:] for v in row[-1:]):
        return None
    x = [Fraction(0)] * cols
    for i, c in enumerate(pivots):
        x[c] = Fraction(aug[i][-1], aug[i][c] * den)
    return x


def _repair(relax: Relaxation, box: ValueBox, rows: np.ndarray, numer: list[list[int]],
            G_float: np.ndarray, tol: float) -> tuple[list[list[int]], int] | None:
    """The multipliers ``z = numer / DENOMINATOR`` (integer numerators) made to give
    ``G_l = Σ_i m_il z_i`` exactly zero wherever an infinite box end needs a sign that the
    float solution met only to within ``tol``: per coordinate, a correction of the
    numerators that solves those equations in rationals.  Returns the corrected ``z`` as
    integer numerators over one denominator, ``(numerators, denominator)`` (``None``:
    no correction exists)."""
    lo, hi = box.arrays(relax.key)
    M = relax.M[rows].astype(np.int64)
    used = (M > 0).any(axis=0)
    open_end = ~np.isfinite(lo) | ~np.isfinite(hi)
    fixes: list[tuple[int, int, Fraction]] = []
    for c in range(relax.dim):
        forced = np.flatnonzero(used & open_end[:, c] & (np.abs(G_float[:, c]) <= tol))
        if not forced.size:
            continue
        column = [int(row[c]) for row in numer]
        A = [[int(x) for x in M[:, l]] for l in forced]
        G = [sum(m * x for m, x in zip(row, column) if m) for row in A]
        if not any(G):
            continue
        delta = _solve_exact(A, [Fraction(-g) for g in G])
        if delta is None:
            return None
        fixes.extend((i, c, d) for i, d in enumerate(delta) if d)
    k = math.lcm(1, *(d.denominator for _, _, d in fixes))
    out = [[x * k for x in row] for row in numer]
    for i, c, d in fixes:
        out[i][c] += d.numerator * (k // d.denominator)
    return out, DENOMINATOR * k


def leaf_certificate(relax: Relaxation, box: ValueBox, empty: bool = False,
                     values: str = "learned", hint: float | None = None,
                     instance: Any = None, solution: Any = None,
                     backend: str = "clarabel", reuse: bool = True
                     ) -> tuple[dict[str, Any], Fraction] | None:
    """A checked leaf entry (as :mod:`sinkproof.checker.rules.tree` reads it) and its
    ``c0``, or ``None``.

    ``Z* <= 1 + c0`` on ``box`` for every accurate model (no model when ``c0 < 0``);
    ``empty``: look for a proof that no accurate model has values in ``box``; ``values``:
    ``"fixed"`` also uses ``v_BOS = 0``; ``hint``: the leaf's optimal ``c0`` if known (the
    primal bound, ``-1`` for an empty leaf), which saves the first dual solve (CVXPY
    route).  ``solution``: the leaf's :class:`~sinkproof.bnb.primal.LeafSolution`; with
    the direct backend its working set and multipliers name the few prefixes to solve
    the margin program over (``backend="cvxpy"``: the three CVXPY stages of the module
    docstring over every prefix).  Every candidate is rounded and checked exactly
    (:func:`sinkproof.bnb.exact.leaf_c0`); ``instance`` is accepted for compatibility
    and unused (the whole certificate goes to :func:`sinkproof.checker.verify`).
    ``reuse`` (direct backend): first round the multipliers the leaf's own solve returned
    (its dual point, or its certificate of infeasibility, over its working set): any
    point of the dual is a bound, so when they pass the exact check no dual program is
    solved at all; ``False`` always solves one (the engine before this shortcut).
    """
    bz = values == "fixed"
    lo, hi = box.arrays(relax.key)
    if backend == "clarabel":
        own = _own_multipliers(solution) if reuse else None
        if own is not None and _may_certify(relax, box, *own):
            checked = _rounded_leaf(relax, box, *own, bz)
            if checked:
                return checked
        live = _solved_support(solution)
        if live is not None:  # the prefixes the leaf's own solve leaned on
            got = conic.solve_dual(relax, lo, hi, live, MARGINS[0], True, empty, bos_zero=bz)
            if got is None:  # no margin possible there: an interior point may still round
                got = conic.solve_dual(relax, lo, hi, live, 0.0, True, empty, bos_zero=bz)
            checked = got and _rounded_leaf(relax, box, live, got[0], got[1], bz)
            if checked:
                return checked
        for keep in _row_sets(relax, box, solution, hint, empty, bz):
            for margin in MARGINS:
                got = conic.solve_dual(relax, lo, hi, keep, margin, True, empty, bos_zero=bz)
                checked = got and _rounded_leaf(relax, box, keep, got[0], got[1], bz)
                if checked:
                    return checked
        return None
    all_rows = np.arange(relax.m)
    sparse = None
    if hint is not None and math.isfinite(hint):
        sparse = _solve_dual(relax, box, all_rows, 0.0, True, empty,
                             sparsify=hint + 1e-6 * (1 + abs(hint)), bos_zero=bz)
    if sparse is None:
        first = _solve_dual(relax, box, all_rows, 0.0, True, empty, bos_zero=bz)
        if first is None:
            return None
        best = first[2]
        sparse = _solve_dual(relax, box, all_rows, 0.0, True, empty,
                             sparsify=best + 1e-6 * (1 + abs(best)), bos_zero=bz) or first
    s1 = sparse[1]
    support_rows = np.flatnonzero(s1 > 1e-6 * max(1.0, float(s1.max())))
    for margin in MARGINS:
        keep = support_rows
        second = _solve_dual(relax, box, keep, margin, True, empty, bos_zero=bz)
        if second is None:
            keep = all_rows
            second = _solve_dual(relax, box, keep, margin, True, empty, bos_zero=bz)
        if second is None:
            continue
        checked = _rounded_leaf(relax, box, keep, second[0], second[1], bz)
        if checked:
            return checked
    return None


def _own_multipliers(solution: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(rows, z, s)``: the working set of the leaf's own solve and the solver's
    multipliers on its cones (``None``: no such solve)."""
    rows, z, s = (getattr(solution, k, None) for k in ("rows", "z", "s"))
    if rows is None or z is None or s is None or not len(rows):
        return None
    z = np.asarray(z, dtype=float)
    if not np.isfinite(z).all():
        return None
    return np.asarray(rows), z, np.asarray(s, dtype=float)


SLACK = 1e-10
"""Relative float slack within which :func:`_may_certify` still tries the exact check."""


def _may_certify(relax: Relaxation, box: ValueBox, rows: np.ndarray, z: np.ndarray,
                 s: np.ndarray) -> bool:
    """Whether float multipliers look worth rounding: ``h_l + a_l <= SLACK·scale`` on every
    class the rows or the target touch (or, with ``c0 < 0``, every ``h_l`` that small),
    ``h`` computed in floating point with tight cones and the forced zeros of ``G`` as
    zeros.  Only a filter (it skips the rounding of points that would fail it); what
    certifies is the exact check."""
    lo, hi = box.arrays(relax.key)
    M, eps = relax.M[rows], float(relax.eps)
    coeff = eps * np.linalg.norm(z, axis=1) - (z * relax.Y[rows]).sum(axis=1)
    G = M.T @ z
    G = np.where(np.abs(G) <= 1e-6 * max(1.0, float(s.max(initial=0))), 0.0, G)
    with np.errstate(invalid="ignore"):
        sigma = np.where(G > 0, G * hi, np.where(G < 0, G * lo, 0.0)).sum(axis=1)
    h = M.T @ coeff + sigma
    touched = (M > 0).any(axis=0) | (relax.a > 0)
    slack = SLACK * max(1.0, float(np.abs(z).max(initial=0)))
    c0 = eps * float(np.linalg.norm(z.sum(axis=0))) + float(coeff.sum())
    worst = float((h + relax.a)[touched].max(initial=-np.inf))
    if c0 < 0:
        worst = min(worst, float(h[touched].max(initial=-np.inf)))
    return bool(worst <= slack)


def _solved_support(solution: Any) -> np.ndarray | None:
    """The prefixes of the leaf's working set whose cone multiplier its solve left
    clearly non-zero (``None``: no such solve)."""
    rows, s = getattr(solution, "rows", None), getattr(solution, "s", None)
    if rows is None or s is None or not len(rows):
        return None
    live = rows[s > 1e-6 * max(1.0, float(s.max()))]
    return live if len(live) else None


def _row_sets(relax: Relaxation, box: ValueBox, solution: Any, hint: float | None,
              empty: bool, bz: bool) -> Iterator[np.ndarray]:
    """Prefix sets to solve a leaf's margin program over, fewest first: the support of
    the fewest-prefix multipliers (least ``Σ s_i`` within ``1e-6`` of the least ``c0``)
    over the leaf's working set, the same over every prefix, then every prefix."""
    rows = getattr(solution, "rows", None)
    every = np.arange(relax.m)
    bases = [every] if rows is None or len(rows) in (0, relax.m) else [np.asarray(rows), every]
    for base in bases:
        live = _support(relax, box, base, hint, empty, bz)
        if live is not None:
            yield live
    yield every


def _support(relax: Relaxation, box: ValueBox, base: np.ndarray, hint: float | None,
             empty: bool, bz: bool) -> np.ndarray | None:
    """The prefixes of ``base`` that the fewest-prefix multipliers use (``None``: none)."""
    lo, hi = box.arrays(relax.key)
    sparse = None
    if hint is not None and math.isfinite(hint):
        sparse = conic.solve_dual(relax, lo, hi, base, 0.0, True, empty,
                                  sparsify=hint + 1e-6 * (1 + abs(hint)), bos_zero=bz)
    if sparse is None:
        first = conic.solve_dual(relax, lo, hi, base, 0.0, True, empty, bos_zero=bz)
        if first is None:
            return None
        best = first[2]
        sparse = conic.solve_dual(relax, lo, hi, base, 0.0, True, empty,
                                  sparsify=best + 1e-6 * (1 + abs(best)), bos_zero=bz) or first
    s1 = sparse[1]
    live = base[s1 > 1e-6 * max(1.0, float(s1.max(initial=0)))]
    return live if len(live) else None


def _ceil_norm(vec: list[Fraction]) -> Fraction:
    """The least rational over ``vec``'s common denominator ``d`` that is ``>= ||vec||``
    exactly: ``ceil(sqrt(Σ n_c²)) / d`` for the integer numerators ``n_c``."""
    d = math.lcm(1, *(x.denominator for x in vec))
    return Fraction(_ceil_sqrt(sum((x.numerator * (d // x.denominator)) ** 2 for x in vec)), d)


def _ceil_sqrt(n: int) -> int:
    """``ceil(sqrt(n))`` exactly, for an integer ``n >= 0``."""
    r = math.isqrt(n)
    return r + (r * r < n)


def _rounded_leaf(relax: Relaxation, box: ValueBox, keep: np.ndarray, zf: np.ndarray,
                  sf: np.ndarray, bz: bool) -> tuple[dict[str, Any], Fraction] | None:
    """Float multipliers on the prefixes ``keep`` rounded to rationals (forced zeros of
    ``G`` restored exactly), as a leaf entry with its exact ``c0``; ``None`` when the
    rounded multipliers fail the exact check.

    Each ``z`` is rounded to a multiple of ``1/DENOMINATOR`` and kept as integer
    numerators over one denominator throughout (the forced-zero correction, when one is
    needed, moves them to a common multiple); each ``s`` is the least multiple of that
    denominator at or above ``||z_i||`` (tight cones: ``h`` and ``c0`` only fall), and the
    exact check runs in integers (:func:`~sinkproof.bnb.exact.leaf_c0_integers`)."""
    keep = np.asarray(keep, dtype=np.int64)
    zf = np.asarray(zf, dtype=float)
    small = np.abs(zf) <= 1e-10 * max(1.0, float(np.abs(zf).max(initial=0)))
    numer = [[0 if small[i, c] else int(round(zf[i, c] * DENOMINATOR))
              for c in range(zf.shape[1])] for i in range(len(keep))]
    M = relax.M[keep].astype(np.int64)
    G_float = M.T @ zf
    tol = 1e-6 * max(1.0, float(np.asarray(sf).max(initial=0)))
    lo, hi = box.arrays(relax.key)
    open_end = ~np.isfinite(lo) | ~np.isfinite(hi)
    forced = ((M > 0).any(axis=0)[:, None] & open_end & (np.abs(G_float) <= tol))
    den = DENOMINATOR
    if forced.any():
        repaired = _repair(relax, box, keep, numer, G_float, tol=tol)
        if repaired is None:
            return None
        numer, den = repaired
    # a prefix whose z rounds to 0 only adds eps s >= 0 to h and c0: left out
    used = [i for i in range(len(keep)) if any(numer[i])]
    Z = [numer[i] for i in used]
    S = [_ceil_sqrt(sum(x * x for x in row)) for row in Z]
    S0 = 0 if bz else _ceil_sqrt(sum(sum(row[c] for row in Z) ** 2 for c in range(relax.dim)))
    c0 = leaf_c0_integers(relax, box, [int(keep[i]) for i in used], Z, S, S0, den,
                          learned=not bz)
    if c0 is None:
        return None

    def fmt(n: int) -> str:
        return _fmt(Fraction(n, den))

    leaf = {"box": box.to_json(),
            "constraints": [list(relax.prefixes[keep[i]]) for i in used],
            "z": [[fmt(x) for x in row] for row in Z],
            "s": [fmt(x) for x in S], "s0": fmt(S0)}
    return leaf, c0


def instance_dict(task: Any, eps: Fraction, values: str) -> dict[str, Any]:
    """``instance`` of the engine's certificate for ``task``: with positions a
    ``bnb-learned-values`` instance over ``S_T``; without, the token-pair relaxation's
    (``paper-bnb-learned-values``: every content vector as the exact rational of its float)."""
    if not task.has_positions:
        return {**paper_instance(task), "values": values, "eps": _fmt(Fraction(eps)),
                "family": "paper"}
    out: dict[str, Any] = {"task": task.describe(), "values": values, "family": "S_T",
                           "eps": _fmt(Fraction(eps))}
    if task.content_scheme != "signed":
        out["content_vectors"] = [[_fmt(Fraction(float(x))) for x in row] for row in task.content]
    return out


def certificate_format(task: Any, eps: Fraction, values: str) -> tuple[dict[str, Any], str, str]:
    """``(instance, kind, statement head)`` of the engine's certificate for ``task``: the
    kind names the relaxation the trees are of (position classes, or token-pair classes
    for a task without positional features)."""
    inst = instance_dict(task, eps, values)
    if not task.has_positions:
        return (inst, PAPER_KIND,
                f"paper setting, one softmax head, {values} values, error <= {eps}")
    return inst, KIND, f"one softmax head, {values} values, error <= {eps} on S_T"
