"""The gated softmax head's sink map: logit sharing split over the gate, and the hull bound.

A gated head outputs ``g_t Σ_j α_tj v_j`` (softmax ``α``, gate ``g_t ∈ (0, 1)`` a function of
the query row); its null mass is ``(1 - g_t) + g_t α_t0``, the rest ``M = g_t (1 - α_t0)``.
The gate is not a logit in the softmax normaliser (it scales the whole row), so the
ratios that logit sharing uses do not absorb it.  But ``g`` is one number for all prefixes
of a block (same query token, same position), and at a content query every target is 0, so
accuracy ``eps`` of the gated head there is accuracy ``eps/g`` of the softmax head with the
same scores.  For gates ``g ∈ [g_k, g_{k+1}]`` the softmax sink map at ``eps/g_k`` bounds
``α_t0 >= B_k``, whence ``M <= g_{k+1}(1 - B_k)``; below the lowest gate ``M <= g_1``.  The
bound is ``1 - max`` of these, and the larger of it and Theorem 3's hull bound is kept.

:func:`gate_grid` chooses the starting gates (factors 4/5 below 1, down to where ``eps/g``
reaches 9/10); levels are solved from the top down and stop at the first that certifies
nothing (lower gates would not either: a larger eps only loosens the program); then the
intervals that set some target's bound are split where the grid costs most
(:func:`_refine`).  Any grid gives a valid bound; refining only tightens it.  One
``sinkmap-gated`` certificate holds the hull certificate and every level's ``sinkmap-socp``
certificate (kind ``sinkmap-gated``, the dual rule's gate split).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from .. import checker
from ..certformat import FORMAT, VERSION, format_rational
from ..convex import family_certificate
from ..convex.values import ValueTable
from ..errors import Interrupted
from ..task import TRIG, TriggerTask
from .certify import instance_dict, round_down_bound
from .result import Entry, SinkMap

__all__ = ["LEVEL_CAP", "MAX_LEVELS", "gate_grid", "gated_sink_map"]

LEVEL_CAP = Fraction(9, 10)
"""The largest ``eps/g`` a level is solved at."""

MAX_LEVELS = 24
"""Most gate levels (softmax sink maps) one gated map solves."""
SLACK = Fraction(1, 1000)
"""A binding interval is split while it loses more than this to the grid."""

LevelMap = Callable[[Fraction, list[tuple[tuple[int, ...], int]]], SinkMap]


def _split_bound(gates: list[Fraction], level_bounds: list[Fraction]) -> Fraction:
    """The null-mass bound a grid of gates ``g_1 < ... < g_K`` with level bounds ``B_k``
    gives, ``1 - max(g_1, max_k g_{k+1} (1 - B_k))`` with ``g_{K+1} = 1`` (what the
    checker's ``sinkmap-gated`` rule recomputes from the file)."""
    return 1 - max([gates[0], *_terms(gates, level_bounds)])


def gate_grid(eps: Fraction) -> list[Fraction]:
    """The starting gates ``g_1 < ... < g_K < 1``: ``(4/5)^i`` down to where ``eps/g`` reaches
    9/10 (a level at ``g = 1`` would add nothing: its interval is a point whose bound
    ``1 - B(eps)`` the level below already exceeds)."""
    gates: list[Fraction] = []
    g = Fraction(1)
    while True:
        g *= Fraction(4, 5)
        if eps / g >= LEVEL_CAP:
            return gates[::-1]
        gates.append(g)


def _between(lo: Fraction, hi: Fraction) -> Fraction:
    """A short rational strictly between ``lo < hi``, near their geometric mean."""
    mid = Fraction(round(math.sqrt(lo * hi) * 1000), 1000)
    return mid if lo < mid < hi else (lo + hi) / 2


def _terms(gates: list[Fraction], bounds: list[Fraction]) -> list[Fraction]:
    """``g_{k+1}(1 - B_k)`` per interval ``k`` (``g_{K+1} = 1``)."""
    return [(gates[k + 1] if k + 1 < len(gates) else Fraction(1)) * (1 - b)
            for k, b in enumerate(bounds)]


def _refine(solved: dict[Fraction, SinkMap], hard: list[tuple[int, ...]],
            solve: Callable[[Fraction], SinkMap]) -> None:
    """Split the intervals that bind some target's bound and lose most to the grid (their
    slack ``(g_{k+1} - g_k)(1 - B_k)``), two per round, up to :data:`MAX_LEVELS` levels or
    until no binding interval loses more than :data:`SLACK`."""
    while solved and len(solved) < MAX_LEVELS:
        gates = sorted(solved)
        uppers = [*gates[1:], Fraction(1)]
        slack: dict[int, Fraction] = {}
        for u in hard:
            bounds = [solved[g].entries[u].exact or Fraction(0) for g in gates]
            terms = _terms(gates, bounds)
            k = max(range(len(terms)), key=terms.__getitem__)
            if terms[k] > gates[0]:  # the bound is set by this interval, not by g_1
                slack[k] = (uppers[k] - gates[k]) * (1 - bounds[k])
        worst = sorted((k for k in slack if slack[k] > SLACK), key=lambda k: -slack[k])[:2]
        if not worst:
            return
        for k in worst:
            g = _between(gates[k], uppers[k])
            solved[g] = solve(g)


def gated_sink_map(task: TriggerTask, eps: Fraction, table: ValueTable,
                   targets: list[tuple[int, ...]], level_map: LevelMap) -> SinkMap:
    """Null-mass bounds of one gated softmax head at every target prefix (codes);
    ``level_map(eps_k, positions)`` is the softmax sink map at ``eps_k``."""
    users = [task.decode(t) for t in targets]
    fam = family_certificate(task, eps, table.U)
    hull_cert = fam.to_dict()
    by_set = {s.tokens: s for s in fam.situations}
    hull = {u: by_set[tuple(sorted(set(u)))] for u in users}
    hard = [u for u in users if TRIG not in u and (hull[u].bound is None or hull[u].bound <= 0)]
    at = [(u, len(u)) for u in hard]
    solved: dict[Fraction, SinkMap] = {}
    try:
        for g in reversed(gate_grid(eps)) if hard else ():
            level = level_map(eps / g, at)
            if level.count("certified") == 0:
                break
            solved[g] = level
        _refine(solved, hard, lambda g: level_map(eps / g, at))
    except KeyboardInterrupt:  # a level's partial map is about softmax: report none of it
        empty = SinkMap(task=task, eps=eps, U=table.U, entries={}, certificate={},
                        subfamily="gate split", radius=0, family="S_T", kind="gated_softmax")
        raise Interrupted(empty, f"{len(solved)} gate levels solved (no position settled)"
                          ) from None
    gates = sorted(solved)
    levels = [solved[g] for g in gates]
    entries: dict[tuple[int, ...], Entry] = {}
    stated: list[dict[str, Any]] = []
    for u in users:
        sit = hull[u]
        h = sit.bound if sit.bound is not None and sit.bound > 0 else Fraction(0)
        split = Fraction(0)
        if u in hard and gates:
            got = [lv.entries[u].exact or Fraction(0) for lv in levels]
            split = max(_split_bound(gates, got), Fraction(0))
        best = max(h, split)
        if best > 0:
            bound = round_down_bound(best)
            how = "gate split" if split > h else "hull"
            entries[u] = Entry("certified", float(bound), bound, float(best), "",
                               len(gates) if how == "gate split" else 1, how)
            stated.append({"target": list(u), "bound": format_rational(bound)})
        elif sit.zero_combination is not None or sit.bound is not None:
            after = " and the trigger's zero-valued key can take the mass" if TRIG in u else (
                "; logit sharing split over the gate certified nothing here")
            entries[u] = Entry("no bound", 0.0, None, 0.0,
                               f"{sit.reason or 'the hull bound is vacuous'} (verified){after}",
                               0, "hull")
        else:
            entries[u] = Entry("uncertified", 0.0, None, 0.0, sit.reason, 0, "hull")
    outer = instance_dict(table, eps, "S_T")
    cert = {"format": FORMAT, "version": VERSION, "kind": "sinkmap-gated", "instance": outer,
            "claim": {"statement": (f"gated softmax sink map: eps={format_rational(eps)}, "
                                    f"null mass (1 - g) + g·α_0 of one gated head, values "
                                    f"{'U_fix' if table.fixed else 'U'}, any score function "
                                    f"and query gate"),
                      "bounds": len(stated)},
            "data": {"hull": hull_cert,
                     "levels": [{"gate": format_rational(g), "certificate": lv.certificate}
                                for g, lv in zip(gates, levels)],
                     "targets": stated}}
    if not checker.verify(cert).ok:  # pragma: no cover - every bound is rounded down
        raise ArithmeticError("the gated sink-map certificate failed its own exact check")
    return SinkMap(task=task, eps=eps, U=table.U, entries=entries, certificate=cert,
                   subfamily="gate split", radius=0, family="S_T", kind="gated_softmax")
