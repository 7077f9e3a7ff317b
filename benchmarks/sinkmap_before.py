"""The sink map as it was before its fast paths: the baseline of ``bench_sinkmap.py``.

Kept here (not in the package) so that the benchmark measures the previous implementation
in the same run as the current one.  It differs from :func:`sinkproof.sink_map` in
exactly the three places that were made faster, each kept as it was:

- orbits: :func:`canonical_before`, one target at a time in Python (every symmetry's
  image sorted with ``sorted``), one ``Orbit`` per target;
- solves: :class:`BlockSolverBefore`, every block's dual program built and compiled by
  CVXPY (target and margin as parameters, re-solved within a block), no retry;
- spreading each representative's result over its orbit: per target, ``task.decode``,
  ``dataclasses.replace`` and the symmetry matrix formatted again for every derived entry.

Everything else (subfamilies, block data, rounding, the certificate format) is the
package's own code, so both paths produce certificates of the same kind and bounds equal
within the solver's tolerance.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np

from sinkproof.checker.rules.dual import Instance
from sinkproof.checker.schema import format_rational
from sinkproof.sinkmap.certify import (
    envelope,
    instance_dict,
    rationalise,
    ray_entry,
    single_key_ray,
)
from sinkproof.sinkmap.core import (
    MARGINS,
    _Planner,
    _target_prefixes,
    known_values,
    parse_eps,
)
from sinkproof.sinkmap.result import Entry, SinkMap
from sinkproof.sinkmap.solve import BlockSolver, CvxpyDual, DualSolution
from sinkproof.sinkmap.symmetry import Orbit, TokenSymmetry, token_symmetries


def canonical_before(prefix: tuple[int, ...], syms: list[TokenSymmetry]) -> Orbit:
    """The orbit representative of a target prefix, one symmetry at a time."""
    best: tuple | None = None
    for sym in syms:
        keys = [sym.code(c) for c in prefix[:-1]]
        order = sorted(range(len(keys)), key=lambda i: keys[i])
        rep = (*[keys[i] for i in order], sym.code(prefix[-1]))
        cand = (rep[-1], rep[:-1])
        if best is None or cand < best[0]:
            best = (cand, rep, tuple(i + 1 for i in order), sym)
    assert best is not None
    _, rep, positions, sym = best
    return Orbit(rep=rep, positions=positions, to_target=sym.inverse())


class BlockSolverBefore(BlockSolver):
    """Every block through CVXPY (compiled on its first solve), no retry."""

    def solve(self, target: np.ndarray, margin: float = 1e-7) -> DualSolution:
        if np.any(target[~self.used] > 0):
            return DualSolution("unbounded", np.inf)
        if self._cvxpy is None:
            self._cvxpy = CvxpyDual(self.block, self.margin_cols)
        status, value, w, z, u = self._cvxpy.solve(target, margin, "CLARABEL")
        if status in ("infeasible", "infeasible_inaccurate"):
            return DualSolution("unbounded", np.inf)
        if status not in ("optimal", "optimal_inaccurate") or w is None:
            return DualSolution("failed", np.nan)
        return DualSolution("bounded", value, w, z, u)


class _PlannerBefore(_Planner):
    solver_class = BlockSolverBefore


def _solve_target_before(planner: _Planner, inst: Instance, target: tuple[int, ...],
                         ) -> tuple[dict[str, Any], Entry]:
    task = planner.task
    ray = single_key_ray(task, inst, target)
    if ray is not None:
        return {"ray": ray}, Entry("no bound", 0.0, None, 0.0, ray["why"], 0, "null key")
    float_bound, used, unbounded = 0.0, 0, False
    for full in (False, True):
        got = planner.solver_for(target, full)
        if got is None:
            continue
        solver, blk = got
        a0 = blk.indicator(target)
        label = "full" if blk.m == planner.block_size(
            target[-1], len(target), planner.trigger_matters
            or task.trig_code in target[:-1]) else "splice"
        for margin in MARGINS:
            sol = solver.solve(a0, margin)
            if sol.status != "bounded":
                break
            float_bound, used = sol.bound, blk.m
            cert = rationalise(task, inst, blk, target, sol)
            if cert is not None:
                entry = Entry("certified", float(cert["stated"]), cert["stated"], sol.bound,
                              "", len(cert["constraints"]), label, u=sol.u, block=blk)
                return {"bound": cert}, entry
        if sol.status == "bounded":
            return {}, Entry("uncertified", float_bound, None, float_bound,
                             "rounded multipliers failed the exact check", used, label)
        unbounded = sol.status == "unbounded"
        if unbounded:
            d = solver.ray(a0)
            if d is not None:
                ray = ray_entry(task, inst, blk, target, d)
                if ray is not None:
                    ray["why"] = "the logit-sharing program is unbounded along a verified ray"
                    return {"ray": ray}, Entry("no bound", 0.0, None, 0.0, ray["why"], blk.m,
                                               label)
    why = ("unbounded (ray not certified)" if unbounded else "solver failed")
    return {}, Entry("no bound" if unbounded else "failed", 0.0, None, 0.0, why, used, "")


def _derived_before(task, target, source: int, orbit: Orbit, bound: str) -> dict[str, Any]:
    sym = orbit.to_target
    return {"target": list(task.decode(target)), "from": source,
            "positions": list(orbit.positions), "tokens": list(sym.perm),
            "matrix": [[format_rational(Fraction(float(v))) for v in row] for row in sym.matrix],
            "bound": bound}


def _transport_before(task, ray: dict[str, Any], orbit: Orbit, target) -> dict[str, Any]:
    t = len(target)
    sym = orbit.to_target
    direction = []
    for b, j, v in ray["direction"]:
        code = task.trig_code if b == -1 else b
        direction.append([task.decode([sym.code(code)])[0],
                          j if j == t else orbit.positions[j - 1], v])
    return {"target": list(task.decode(target)), "direction": direction}


def sink_map_before(task, eps: Any, values: Any = "fixed") -> SinkMap:
    """:func:`sinkproof.sink_map` over all of ``S_T`` (``subfamily="auto"``), as before."""
    eps_q = parse_eps(eps)
    table = known_values(task, values)
    V = task.token_table @ table.U.T
    targets = _target_prefixes(task, None)
    syms = token_symmetries(task, V)
    inst_d = instance_dict(table, eps_q, "S_T")
    inst = Instance(inst_d)
    planner = _PlannerBefore(task, V, float(eps_q), "auto", 2, None, "CLARABEL")
    orbits = {tgt: canonical_before(tgt, syms) for tgt in targets}
    reps = list(dict.fromkeys(o.rep for o in orbits.values()))
    solved = {rep: _solve_target_before(planner, inst, rep) for rep in reps}
    certificates: list[dict[str, Any]] = []
    index: dict[tuple[int, ...], int] = {}
    for rep, (data, _) in solved.items():
        if "bound" in data:
            index[rep] = len(certificates)
            certificates.append(data["bound"])
    derived, rays, entries = [], [], {}
    for tgt in targets:
        orbit = orbits[tgt]
        rep = orbit.rep
        data, entry = solved[rep]
        entries[task.decode(tgt)] = entry if tgt == rep else replace(entry, u=None, block=None)
        if "ray" in data:
            if rep != tgt:
                rays.append(_transport_before(task, data["ray"], orbit, tgt))
            else:
                rays.append({k: v for k, v in data["ray"].items() if k != "why"})
        elif "bound" in data and tgt != rep:
            derived.append(_derived_before(task, tgt, index[rep], orbit, data["bound"]["bound"]))
    statement = (f"Theorem 6 sink map: eps={eps_q}, single-head softmax, values "
                 f"{'U_fix' if table.fixed else 'U'}, any score function")
    cert = envelope(inst_d, certificates, derived, rays, statement)
    return SinkMap(task=task, eps=eps_q, U=table.U, entries=entries, certificate=cert,
                   subfamily="auto", radius=2, family="S_T")
