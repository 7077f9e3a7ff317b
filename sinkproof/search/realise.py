"""From a relaxation's optimum to an actual model: how far is the certified bound from the truth?

A primal solution ``u`` of a target's block (or, where there is no bound, the
verified ray ``d``, scaled up) prescribes the logit differences
``s(q,t,b,j) - s(q,t,BOS,0) = log u(b,j)``.  Scores are ``φ_tᵀ A φ_j``, linear in
``A``, so a least-squares change ``ΔA`` of an accurate base model (Theorem 5's
construction) moves the target block towards those logits while keeping every
other logit difference.  We then take the step ``A + τΔA`` (``0 <= τ <= 1``) with
the smallest BOS mass at the target among those with error ``<= eps`` on the
whole family, and hand that model to the search layer's high-precision witness
verification.  The result is an upper end for the least BOS mass; the certified
bound is the lower end; their difference is the gap.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..constructions import softmax_score_matrix
from ..measures import evaluate
from ..model import AttentionModel
from ..sinkmap.blocks import n_variables, variable_index
from ..sinkmap.certify import ExactInstance, single_key_ray
from ..sinkmap.core import _Planner, known_values
from ..sinkmap.result import SinkMap
from ..task import TriggerTask
from . import engine
from .verify import verify_witness

FREE_BELOW = 1e-3
"""Block variables with less than this share of the largest ``u`` get no logit target."""
RAY_SCALE = 1e6
"""A ray ``d`` is realised as ``u = RAY_SCALE · d``."""
STEPS = np.linspace(0.0, 1.0, 21)


@dataclass
class Realisation:
    """One target: the certified ``bound``; the best accurate model found (``model``), its
    float ``error`` and ``bos_mass`` at the target; ``step``: the ``τ`` of the least-squares
    step (nan for a search witness); ``verified``: the search layer's high-precision
    witness check (``None`` when not run)."""

    prefix: tuple[int, ...]
    bound: float
    bos_mass: float
    error: float
    step: float
    verified: bool | None
    model: AttentionModel

    @property
    def gap(self) -> float:
        return self.bos_mass - self.bound

    def __repr__(self) -> str:
        v = {None: "unverified", True: "verified", False: "NOT verified"}[self.verified]
        return (f"Realisation({list(self.prefix)}: bound {self.bound:.6f} <= realised BOS mass "
                f"{self.bos_mass:.6f} (gap {self.gap:.3g}), error {self.error:.3g}, {v})")


def _phi(task: TriggerTask, code: int, t: int) -> np.ndarray:
    return np.concatenate([task.token_table[code], task.position_features(t)])


def _block_logits(task: TriggerTask, u: np.ndarray, q: int, t: int) -> list[tuple[int, int, float]]:
    """``(key code, key position, target logit difference)`` for the block variables that
    carry weight (``u >= FREE_BELOW · max u``); the others are left free."""
    k = task.k
    top = float(np.max(u)) if u.size else 0.0
    out = []
    for j in range(1, t + 1):
        keys = [q] if j == t else range(k + 1)
        for b in keys:
            val = u[variable_index(k, b, j, t)]
            if val > FREE_BELOW * top and val > 0:
                out.append((b, j, float(np.log(val))))
    return out


def logit_change(task: TriggerTask, A: np.ndarray, q: int, t: int,
                 targets: list[tuple[int, int, float]], weight: float = 10.0) -> np.ndarray:
    """Least-squares ``ΔA``: block (q, t) logit differences to ``targets``, all others kept."""
    D = task.D
    bos0 = _phi(task, task.bos_code, 0)
    rows, rhs = [], []
    goal = {(b, j): s for b, j, s in targets}
    for a in range(task.k + 1):
        for tq in range(1, task.T + 1):
            phq = _phi(task, a, tq)
            for j in range(1, tq + 1):
                for b in ([a] if j == tq else range(task.k + 1)):
                    diff = _phi(task, b, j) - bos0
                    row = np.outer(phq, diff).ravel()
                    if a == q and tq == t:
                        if (b, j) in goal:
                            current = phq @ A @ diff
                            rows.append(weight * row)
                            rhs.append(weight * (goal[(b, j)] - current))
                    else:
                        rows.append(row)
                        rhs.append(0.0)
    sol, *_ = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)
    return sol.reshape(D, D)


def _base_model(task: TriggerTask, eps: float) -> AttentionModel:
    """Theorem 5's construction with the smallest ``L`` on a grid whose error is ``<= 0.9 eps``
    (the smallest BOS masses the construction offers while accurate)."""
    for L in np.arange(1.0, 40.0, 0.25):
        model = AttentionModel(task, "softmax", softmax_score_matrix(task, float(L)))
        if evaluate(model).max_error <= 0.9 * eps:
            return model
    raise ValueError(f"no construction reaches error {0.9 * eps:g} on {task!r}")


def _best_step(base: AttentionModel, dA: np.ndarray, prefix: Sequence[int],
               eps: float) -> tuple[AttentionModel, float, float, float]:
    t = len(prefix)
    best = None
    for tau in STEPS:
        model = base.replace(A=base.A[0] + tau * dA)
        err = evaluate(model).max_error
        if err > eps:
            continue
        bos = float(model.bos_mass(list(prefix))[0, t])
        if best is None or bos < best[2]:
            best = (model, float(tau), bos, err)
    assert best is not None  # tau = 0 is the accurate base model
    return best


def _verify(model: AttentionModel, eps: float, bos: float, prefix: tuple[int, ...],
            dps: int) -> bool:
    where = [(tuple(prefix), len(prefix))]
    report = verify_witness(model, eps, min(1.0, bos * (1 + 1e-6) + 1e-12), where=where, dps=dps)
    return bool(report.verified)


def search_refine(task: TriggerTask, eps: float, prefix: tuple[int, ...], lo: float, hi: float,
                  steps: int = 4, restarts: int = 4, seed: int = 0) -> Realisation | None:
    """Bisect the search layer's target BOS mass between ``lo`` (the certified bound) and
    ``hi`` (a realised mass): the best verified witness found, or ``None``."""
    best = None
    where = [(tuple(prefix), len(prefix))]
    for _ in range(steps):
        mid = (lo + hi) / 2
        res = engine.search(task, values="fixed", max_error=eps, max_bos_mass=mid, where=where,
                     restarts=restarts, seed=seed)
        if res.found and res.verified:
            best = Realisation(tuple(prefix), lo, res.bos_mass, res.error, float("nan"), True,
                               res.model)
            hi = min(mid, res.bos_mass)
        else:
            lo = mid
    return best


def realise(smap: SinkMap, prefixes: Iterable[Sequence[int]] | None = None, *,
            positions: str | None = None, refine: bool = False, verify: bool = True,
            dps: int = 30, slack: float = 0.05) -> list[Realisation]:
    """Build accurate models aimed at each target's relaxation optimum; fills
    ``entry.realised`` of the sink map.  Default targets: every prefix of a small map
    (at most 10), else the prefixes of the five lowest distinct certified bounds and three
    without a bound.

    ``positions``: positional scheme of the realised models (default: the task's own;
    ``"onehot"`` is the most expressive, and every scheme is in the certificate's class).
    ``refine``: then bisect with the search layer (:func:`search_refine`; fixed values
    only) between the bound and the realised mass, keeping the best verified witness.
    ``slack``: the block is re-solved at ``eps·(1 - slack)`` so the realised logits have room.
    """
    if smap.kind != "softmax":
        raise ValueError(f"realise builds softmax heads; the sink map is of the {smap.kind} "
                         f"map (kind={smap.kind!r})")
    task = smap.task if positions is None else smap.task.replace(positions=positions)
    eps = float(smap.eps)
    if prefixes is None and len(smap.entries) <= 10:
        chosen = list(smap.entries)
    elif prefixes is None:
        free = [k for k, e in smap.entries.items() if e.status == "no bound"][:3]
        distinct: dict[tuple[int, float], tuple[int, ...]] = {}
        for key, e in smap.lowest(len(smap.entries)):
            distinct.setdefault((len(key), round(e.bound, 9)), key)
            if len(distinct) == 5:
                break
        chosen = list(distinct.values()) + free
    else:
        chosen = [tuple(int(c) for c in p) for p in prefixes]
    table = known_values(task, smap.U)
    V = task.token_table @ table.U.T
    planner = _Planner(task, V, eps * (1 - slack), "full", 0, None, "CLARABEL")
    inst = ExactInstance.of(table, smap.eps)
    base = _base_model(task, eps)
    out = []
    for prefix in chosen:
        entry = smap.entries.get(prefix)
        if entry is None:
            raise KeyError(f"prefix {list(prefix)} is not in the sink map")
        codes = tuple(int(c) for c in task.encode(prefix))
        q, t = codes[-1], len(codes)
        u = _target_u(task, planner, inst, codes)
        if u is None:
            continue
        dA = logit_change(task, base.A[0], q, t, _block_logits(task, u, q, t))
        model, tau, bos, err = _best_step(base, dA, prefix, eps)
        ok = _verify(model, eps, bos, prefix, dps) if verify else None
        best = Realisation(prefix, entry.bound, bos, err, tau, ok, model)
        if refine and smap.certificate["instance"]["values"] == "fixed":
            found = search_refine(task, eps, prefix, entry.bound, bos)
            if found is not None and found.bos_mass < best.bos_mass:
                best = Realisation(prefix, entry.bound, found.bos_mass, found.error,
                                   found.step, True, found.model)
        if best.verified is not False:
            entry.realised = best.bos_mass
        out.append(best)
    return out


def _target_u(task: TriggerTask, planner: _Planner, inst: ExactInstance,
              codes: tuple[int, ...]) -> np.ndarray | None:
    """The relaxation's optimal ``u`` for the target, or a scaled verified ray."""
    ray = single_key_ray(task, inst, codes)
    if ray is not None:
        u = np.zeros(n_variables(task.k, len(codes)))
        for b, j, _ in ray["direction"]:
            code = task.trig_code if b == -1 else b
            u[variable_index(task.k, code, j, len(codes))] = RAY_SCALE
        return u
    got = planner.solver_for(codes, True)
    if got is None:
        return None
    solver, blk = got
    sol = solver.solve(blk.indicator(codes))
    return sol.u if sol.status == "bounded" else None


__all__ = ["Realisation", "logit_change", "realise", "search_refine"]
