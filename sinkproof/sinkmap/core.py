"""``sink_map``: Theorem 6's certified lower bound on BOS mass at every position asked for.

For each target prefix ``X* = (x_1..x_t)`` (its bound holds at position ``t`` of every
sequence starting with it) we solve the logit-sharing SOCP of its block over a
*subfamily* of constraints (any subfamily gives a valid, possibly weaker bound):

- ``"splice"``: the prefixes obtained from ``X*`` by overwriting any set of its key
  positions with one token ``b`` (``(k+1)·2^(t-1)`` at most); measured to lose nothing
  against the full family on the instances of ``benchmarks/bench_sinkmap.py``;
- ``"hamming"``: the prefixes that differ from ``X*`` in at most ``radius`` key
  positions -- they share all but ``radius`` of ``X*``'s variables;
- ``"full"``: every prefix of the block (the exact relaxation of the family);
- ``"auto"`` (default): ``"full"`` for blocks of at most 256 prefixes, else ``"splice"``.

Prefixes holding a trigger are left out when the target holds none and the trigger's
value is zero: such a constraint is met by raising its own trigger variable, so it
never binds.  When a subfamily leaves the program unbounded, the full block is tried
before "no bound" is reported, and "no bound" comes with a verified ray.
"""

from __future__ import annotations

import gc
import itertools
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import numpy as np

from .._validate import as_int, choice
from ..convex.values import ValueTable, value_table
from ..errors import Interrupted
from ..exact_numbers import error_level
from ..progress import Progress
from ..task import TRIG, TriggerTask
from ..tasks.protocol import Task, require
from .blocks import Block, build_block
from .certify import (
    ExactInstance,
    envelope,
    instance_dict,
    rationalise,
    ray_entry,
    single_key_ray,
    symmetry_text,
    token_images,
    transport_ray,
)
from .gated import gated_sink_map
from .kinds import sink_measure
from .learned import learned_sink_map
from .result import Entry, SinkMap
from .routes import hull_sink_map, token_set_sink_map, witness_sink_map
from .solve import DEFAULT_SOLVER, BlockSolver
from .symmetry import Orbits, canonical_all, identity_symmetry, token_symmetries

SUBFAMILIES = ("auto", "splice", "hamming", "full")
MAX_FULL_PREFIXES = 20000
"""Largest block solved in full when a subfamily leaves the program unbounded."""
AUTO_FULL_PREFIXES = 256
"""``subfamily="auto"`` solves blocks of at most this many prefixes in full (one compiled
program per block serves every target), larger ones by their splices."""
MARGINS = (1e-7, 1e-5, 1e-3)
"""Dual margins tried in turn until the rounded certificate verifies."""


def parse_eps(eps: Any) -> Fraction:
    """``0 < eps < 1`` as an exact rational (:func:`sinkproof.exact_numbers.error_level`: a
    float is read by its shortest decimal form, ``0.1`` means 1/10); from ``eps = 1`` on
    every bound of the map would be vacuous, so it is refused."""
    return error_level(eps, "eps", positive=True)


def known_values(task: TriggerTask, values: Any) -> ValueTable:
    """The known value map (``"fixed"``, an explicit ``U`` or a one-head model's) with its
    exact values."""
    if isinstance(values, str) and values == "learned":
        raise ValueError("values='learned' makes Theorem 6's constraints bilinear: the sink "
                         "map needs known values ('fixed' or an explicit U of shape (p, p+3))")
    return value_table(task, values)


def _target_prefixes(task: TriggerTask, positions: Any) -> list[tuple[int, ...]]:
    """Distinct target prefixes (codes), in a stable order."""
    if positions is None:
        out = []
        for t in range(1, task.T + 1):
            for block in task.prefix_blocks(t):
                rows = block.codes[block.codes[:, -1] != task.trig_code]
                out.extend(map(tuple, rows.tolist()))
        return out
    if isinstance(positions, (str, bytes)) or not isinstance(positions, Iterable):
        raise TypeError("positions must be a list of (sequence, position) pairs")
    seen: dict[tuple[int, ...], None] = {}
    for item in positions:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(f"each position must be a (sequence, position) pair, got {item!r}")
        seq, pos = item
        codes = task.encode(seq)
        t = as_int("position", pos, minimum=1)
        if t > codes.size:
            raise ValueError(f"position {t} is past the end of sequence {list(seq)}")
        seen[tuple(int(c) for c in codes[:t])] = None
    if not seen:
        raise ValueError("positions is empty: give at least one (sequence, position) pair")
    return list(seen)


def _listed_prefixes(task: TriggerTask, family: Iterable[Sequence[int]]) -> set[tuple[int, ...]]:
    if isinstance(family, (str, bytes)) or not isinstance(family, Iterable):
        raise TypeError("family must be a list of sequences (or None for S_T)")
    out: set[tuple[int, ...]] = set()
    for seq in family:
        codes = tuple(int(c) for c in task.encode(seq))
        out.update(codes[:t] for t in range(1, len(codes) + 1))
    if not out:
        raise ValueError("family is empty: give at least one sequence")
    return out


class _Planner:
    """Chooses the constraint prefixes of a target's block and caches full-block solvers
    (instances of ``solver_class``)."""

    solver_class = BlockSolver

    def __init__(self, task: TriggerTask, V: np.ndarray, eps: float, subfamily: str,
                 radius: int, listed: set[tuple[int, ...]] | None, solver: str,
                 all_triggers: bool = False) -> None:
        self.task, self.V, self.eps = task, V, eps
        self.subfamily, self.radius, self.listed, self.solver = subfamily, radius, listed, solver
        self.trigger_matters = all_triggers or bool(np.any(V[task.trig_code] != 0))
        self._full: dict[tuple[int, int, float, bool], BlockSolver] = {}

    def _allowed(self, keys: tuple[int, ...], with_trigger: bool) -> bool:
        n_trig = keys.count(self.task.trig_code)
        if n_trig and not with_trigger:
            return False
        return self.task.triggers == "multi" or n_trig <= 1

    def full_prefixes(self, q: int, t: int, with_trigger: bool) -> np.ndarray:
        """Every key prefix ``x_1..x_{t-1}`` of the block in the family, ``(m, t-1)``."""
        task = self.task
        if self.listed is not None:
            rows = [pre[:-1] for pre in self.listed if len(pre) == t and pre[-1] == q
                    and self._allowed(pre[:-1], with_trigger)]
            return np.array(sorted(rows), dtype=np.int64).reshape(len(rows), t - 1)
        if t == 1:
            return np.zeros((1, 0), dtype=np.int64)
        chunks = [b.codes for b in task.prefix_blocks(t - 1)]
        rows = np.concatenate(chunks, axis=0)
        if not with_trigger:
            rows = rows[~np.any(rows == task.trig_code, axis=1)]
        return rows

    def block_size(self, q: int, t: int, with_trigger: bool) -> int:
        """Number of prefixes of the block in the family (without enumerating them)."""
        if self.listed is not None:
            return sum(len(pre) == t and pre[-1] == q for pre in self.listed)
        k, n = self.task.k, t - 1
        if not with_trigger:
            return k**n
        return (k + 1) ** n if self.task.triggers == "multi" else k**n + n * k ** max(n - 1, 0)

    def ball(self, target: tuple[int, ...], with_trigger: bool) -> np.ndarray:
        """Key prefixes within Hamming distance ``radius`` of the target's keys."""
        keys, t = target[:-1], len(target)
        if self.listed is not None:
            full = self.full_prefixes(target[-1], t, with_trigger)
            near = (full != np.array(keys)[None, :]).sum(axis=1) <= self.radius
            return full[near]
        tokens = range(self.task.k + 1)
        rows = []
        for h in range(min(self.radius, t - 1) + 1):
            for where in itertools.combinations(range(t - 1), h):
                choices = [[b for b in tokens if b != keys[j]] for j in where]
                for alt in itertools.product(*choices):
                    row = list(keys)
                    for j, b in zip(where, alt):
                        row[j] = b
                    if self._allowed(tuple(row), with_trigger):
                        rows.append(row)
        return np.array(rows, dtype=np.int64).reshape(len(rows), t - 1)

    def splices(self, target: tuple[int, ...], with_trigger: bool) -> np.ndarray:
        """Key prefixes made from the target's by overwriting any set of key positions with
        one token ``b`` (``(k+1)·2^(t-1)`` at most)."""
        keys, t = target[:-1], len(target)
        if self.listed is not None:
            full = self.full_prefixes(target[-1], t, with_trigger)
            changed = full != np.array(keys)[None, :]
            ok = [len(set(row[c].tolist())) <= 1 for row, c in zip(full, changed)]
            return full[np.array(ok, dtype=bool)]
        rows: dict[tuple[int, ...], None] = {}
        for b in range(self.task.k + 1):
            for mask in itertools.product((False, True), repeat=t - 1):
                row = tuple(b if m else x for m, x in zip(mask, keys))
                if self._allowed(row, with_trigger):
                    rows[row] = None
        return np.array(list(rows), dtype=np.int64).reshape(len(rows), t - 1)

    def solver_for(self, target: tuple[int, ...], full: bool) -> tuple[BlockSolver, Block] | None:
        q, t = target[-1], len(target)
        with_trigger = self.trigger_matters or self.task.trig_code in target[:-1]
        if full or self.subfamily == "full" or (
                self.subfamily == "auto" and self.block_size(q, t, with_trigger)
                <= AUTO_FULL_PREFIXES):
            key = (q, t, self.eps, with_trigger)
            if key not in self._full:
                rows = self.full_prefixes(q, t, with_trigger)
                if rows.shape[0] == 0 or rows.shape[0] > MAX_FULL_PREFIXES:
                    return None
                blk = build_block(self.task, self.V, q, t, rows, self.eps)
                self._full[key] = self.solver_class(blk, self.solver)
            solver = self._full[key]
            return solver, solver.block
        if self.subfamily == "hamming":
            rows = self.ball(target, with_trigger)
        else:
            rows = self.splices(target, with_trigger)
        if rows.shape[0] == 0:
            return None
        blk = build_block(self.task, self.V, q, t, rows, self.eps)
        return self.solver_class(blk, self.solver), blk


def _solve_target(planner: _Planner, inst: ExactInstance, target: tuple[int, ...],
                  ) -> tuple[dict[str, Any], Entry]:
    """Certificate data (``("bound", cert)`` / ``("ray", ray)`` / ``("none", None)``) and entry."""
    task = planner.task
    ray = single_key_ray(task, inst, target)
    if ray is not None:
        return {"ray": ray}, Entry("no bound", 0.0, None, 0.0, ray["why"], 0, "null key")
    attempts = [False, True]
    float_bound, used, unbounded, notes = 0.0, 0, False, []
    for full in attempts:
        got = planner.solver_for(target, full)
        if got is None:
            continue
        solver, blk = got
        a0 = blk.indicator(target)
        label = "full" if blk.m == planner.block_size(
            target[-1], len(target), planner.trigger_matters
            or task.trig_code in target[:-1]) else (
            f"hamming<={planner.radius}" if planner.subfamily == "hamming" else "splice")
        for margin in MARGINS:
            sol = solver.solve(a0, margin)
            if sol.note:
                notes.append(sol.note)
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
    if unbounded and not sol.inaccurate:
        return {}, Entry("no bound", 0.0, None, 0.0, "unbounded (ray not certified)", used, "")
    # a failed or inaccurate answer settles nothing: the position stays open
    why = "the solver's infeasibility report is inaccurate" if unbounded else "solver failed"
    if notes:
        why += f" ({notes[-1]})"
    return {}, Entry("uncertified", 0.0, None, 0.0, why, used, "")


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while the map's many small, acyclic containers are
    built: each automatic pass scans every live one, which doubled the cost at p=2, T=8."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _settled(task: TriggerTask, targets: list[tuple[int, ...]], orbits: Orbits | None,
             solved: list[tuple[dict[str, Any], Entry]]) -> dict[tuple[int, ...], Entry]:
    """Entries of the targets whose representative was solved before an interruption (the
    first ``len(solved)`` representatives; none if the orbits were not all found yet)."""
    if orbits is None:  # targets are their own representatives, solved in order
        return {task.decode(t): e for t, (_, e) in zip(targets, solved)} if solved else {}
    return {task.decode(t): solved[r][1] if own else solved[r][1].detached()
            for t, r, own in zip(targets, orbits.rep_id, orbits.is_rep) if r < len(solved)}


def _spread(task: TriggerTask, targets: list[tuple[int, ...]], orbits: Orbits | None,
            solved: list[tuple[dict[str, Any], Entry]], index: dict[int, int],
            ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[tuple[int, ...], Entry]]:
    """Every target's entry, derived certificate or transported ray, from its
    representative's (``index``: representative number -> certificate number)."""
    trig = task.trig_code
    users = [tgt if trig not in tgt else tuple([TRIG if c == trig else c for c in tgt])
             for tgt in targets]
    derived: list[dict[str, Any]] = []
    rays: list[dict[str, Any]] = []
    entries: dict[tuple[int, ...], Entry] = {}
    if orbits is None:
        for user, (data, entry) in zip(users, solved):
            entries[user] = entry
            if "ray" in data:
                rays.append({k: v for k, v in data["ray"].items() if k != "why"})
        return derived, rays, entries
    texts = [symmetry_text(sym) for sym in orbits.to_target]
    images = [token_images(task, sym) for sym in orbits.to_target]
    for user, r, own, positions, s in zip(users, orbits.rep_id, orbits.is_rep,
                                          orbits.positions, orbits.sym):
        data, entry = solved[r]
        if own:
            entries[user] = entry
            if "ray" in data:
                rays.append({k: v for k, v in data["ray"].items() if k != "why"})
            continue
        entries[user] = entry.detached()
        if "ray" in data:
            rays.append(transport_ray(data["ray"], positions, images[s], user))
        elif "bound" in data:
            tokens, matrix = texts[s]
            derived.append({"target": list(user), "from": index[r], "positions": positions,
                            "tokens": tokens, "matrix": matrix,
                            "bound": data["bound"]["bound"]})
    return derived, rays, entries


def sink_map(
    task: TriggerTask,
    eps: Any,
    values: Any = "fixed",
    positions: Iterable[tuple[Sequence[int], int]] | None = None,
    family: Iterable[Sequence[int]] | None = None,
    *,
    subfamily: str = "auto",
    radius: int = 2,
    solver: str = DEFAULT_SOLVER,
    all_triggers: bool = False,
    progress: bool | None = None,
    kind: str = "softmax",
) -> SinkMap:
    """Certified least BOS mass of any eps-accurate single-head softmax model, per position
    (``kind``: the least sink measure of another attention map's head).

    For every non-trigger position of ``S_T`` (or each ``(sequence, position)`` in
    ``positions``), a lower bound ``1/Z*`` on the BOS mass that every single-head
    softmax model with values ``values`` (``"fixed"``, an explicit ``U`` or a one-head
    :class:`~sinkproof.model.AttentionModel` whose ``U`` is used), *any*
    score function of (query token, position, key token, position), and error
    ``<= eps`` on ``family`` (default: the task's family ``S_T``) has there
    (Theorem 6 of docs/theory.md), each backed by an exact rational certificate
    (:attr:`SinkMap.certificate`), or "no bound" with the reason.

    ``values="learned"``: bounds for every value map, from the branch-and-bound engine on
    small instances (:func:`sinkproof.sinkmap.learned.learned_sink_map`).
    ``subfamily``/``radius``: which constraints of each block to keep (module docstring);
    ``all_triggers``: keep prefixes holding a trigger even where they cannot bind (to
    measure that leaving them out costs nothing).  Ctrl-C raises
    :class:`~sinkproof.errors.Interrupted` whose ``partial`` is the map of the targets
    settled so far (their entries only: its ``certificate`` is left empty, unbuilt).

    ``kind``: an attention map of :data:`sinkproof.attention.MAPS`; its sink measure and
    the argument behind each bound (:func:`sinkproof.sinkmap.kinds.sink_measure`):
    logit sharing (softmax: BOS mass; sink logit, softmax1: the null mass, slot plus BOS,
    from the same program), Theorem 3's hull bound (sparsemax, entmax-1.5: BOS mass), the
    two together for gated softmax's null mass (logit sharing split over the gate,
    :mod:`.gated`), or "no bound" at every position shown by a sink-free head the
    checker verifies (sigmoid: BOS share; ReLU, ReLU/length: BOS weight).  Maps other than
    softmax take known values only; a null measure needs BOS to carry value 0.

    A task without positional features (the paper's setting) is read by token sets
    (:func:`~sinkproof.sinkmap.routes.token_set_sink_map`: fixed values from the exact
    hull distances, learned values from the engine); a :class:`TokenSetSinkMap`.
    """
    if isinstance(task, Task) and not task.has_positions:  # read by token sets
        if positions is not None or family is not None:
            raise ValueError("positions= and family= are for a task with positional "
                             "features; a token-set sink map covers every non-trigger "
                             "position")
        return token_set_sink_map(task, eps, values, kind, progress=progress)
    require(task, "has_positions", "a logit-sharing sink map")
    measure = sink_measure(kind)
    learned = isinstance(values, str) and values == "learned"
    if learned and kind != "softmax":
        raise ValueError(f"values='learned' sink maps exist for softmax only (the "
                         f"branch-and-bound engine); kind={kind!r} needs known values")
    if learned:  # bilinear: the bnb engine's route
        return learned_sink_map(task, eps, positions, family, progress=progress)
    eps_q = parse_eps(eps)
    choice("subfamily", subfamily, SUBFAMILIES)
    radius = as_int("radius", radius, minimum=0)
    table = known_values(task, values)
    if measure.null and table.factor != 1:
        raise ValueError(f"the {kind} sink map bounds the null mass (BOS and a zero-valued "
                         f"slot), which needs BOS to carry value 0: U e(BOS) = 0, as in U_fix")
    if measure.route != "logit sharing":
        if family is not None:
            raise ValueError(f"family= is for the logit-sharing maps; the {kind} sink map "
                             f"holds on S_T")
        with _gc_paused():
            targets = _target_prefixes(task, positions)
        if measure.route == "gate split":
            def level(eps_k: Fraction, at: list[tuple[tuple[int, ...], int]]) -> SinkMap:
                return sink_map(task, eps_k, values, at, subfamily=subfamily, radius=radius,
                                solver=solver, progress=progress)

            return gated_sink_map(task, eps_q, table, targets, level)
        route = hull_sink_map if measure.route == "hull" else witness_sink_map
        return route(task, eps_q, kind, table, targets)
    U = table.U
    V = task.token_table @ U.T
    with _gc_paused():
        targets = _target_prefixes(task, positions)
    listed = None if family is None else _listed_prefixes(task, family)
    symmetric = listed is None
    syms = token_symmetries(task, V) if symmetric else [identity_symmetry(task)]
    inst_d = instance_dict(table, eps_q, "S_T" if symmetric else "listed")
    inst = ExactInstance.of(table, eps_q)
    planner = _Planner(task, V, float(eps_q), subfamily, radius, listed, solver, all_triggers)

    solved: list[tuple[dict[str, Any], Entry]] = []
    orbits: Orbits | None = None

    def stopped() -> Interrupted:
        """Ctrl-C: the map of the targets settled so far, built with the collector paused
        (a pass over the big heap here was most of the time from Ctrl-C to the exit)."""
        with _gc_paused():
            entries = _settled(task, targets, orbits if symmetric else None, solved)
            return Interrupted(SinkMap(task=task, eps=eps_q, U=U, entries=entries,
                                       certificate={}, subfamily=subfamily, radius=radius,
                                       family="S_T" if symmetric else "listed", kind=kind),
                               f"{len(entries)} of {len(targets)} positions settled")

    try:
        with _gc_paused():
            try:
                orbits = canonical_all(targets, syms) if symmetric else None
                reps = orbits.reps if orbits is not None else targets
                with Progress(len(reps), "sink map", progress) as bar:
                    for rep in reps:
                        solved.append(_solve_target(planner, inst, rep))
                        bar.update(1)
            except KeyboardInterrupt:  # before the collector is enabled again
                raise stopped() from None
    except KeyboardInterrupt as exc:  # also one landing as the collector is enabled again
        if isinstance(exc, Interrupted):
            raise
        raise stopped() from None
    with _gc_paused():
        certificates: list[dict[str, Any]] = []
        index: dict[int, int] = {}
        for r, (data, _) in enumerate(solved):
            if "bound" in data:
                index[r] = len(certificates)
                certificates.append(data["bound"])
        derived, rays, entries = _spread(task, targets, orbits, solved, index)
    head = "single-head softmax" if kind == "softmax" else (
        f"single-head {kind} (bounds on its {measure.description}: the same program with the "
        f"slot merged into BOS)")
    statement = (f"Theorem 6 sink map: eps={eps_q}, {head}, values "
                 f"{'U_fix' if table.fixed else 'U'}, any score function")
    cert = envelope(inst_d, certificates, derived, rays, statement, kind)
    return SinkMap(task=task, eps=eps_q, U=U, entries=entries, certificate=cert,
                   subfamily=subfamily, radius=radius, family="S_T" if symmetric else "listed",
                   kind=kind)


__all__ = ["SUBFAMILIES", "known_values", "parse_eps", "sink_map"]

