"""Symmetries of a task's relaxations: one certified tree serves every target in its orbit.

A *symmetry* ``g = (σ, Q)`` is a permutation ``σ`` of the content tokens (the trigger and
BOS fixed) with a signed permutation ``Q`` of the value coordinates such that
``Q c = σ(c)`` for every content vector, exactly.  Then ``g`` maps the family ``S_T`` to
itself, a prefix's classes to the classes of its image (positions are untouched) with the
same multiplicities, and its target ``y`` to ``Q y`` (a mean of content vectors).  A
model with values ``v_t`` is accurate exactly when the model with values
``v'_{σ(t)} = Q v_t`` (``v'_BOS = Q v_BOS``) and the same scores on the image classes is:
``Q`` is orthogonal.  So a leaf of target ``X`` over box ``B`` with multipliers
``(z_i, s_i, s_0)`` on prefixes ``X_i`` becomes a leaf of ``σ(X)`` over ``Q B`` with
``(Q z_i, s_i, s_0)`` on ``σ(X_i)``: every norm, ``z_i·y_i``, support value ``h_l`` and
``c0`` is unchanged, exactly (signs and a permutation only).  The mapped tree is verified
by the trusted checker like any other.

Found for tasks with positional features and at most four value coordinates (the task's
``content_symmetries``: ``2^p p!`` candidates); every candidate is checked exactly on the
relaxation's prefixes, their targets and the root box before it is used.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..task import TRIG
from .box import ValueBox
from .exact import _integer_targets as integer_targets
from .result import TargetOutcome
from .tree import Node, TreeResult


def _fmt(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


@dataclass(frozen=True)
class Symmetry:
    """``σ`` (``tokens``: content token -> its image) and ``Q``: coordinate ``c`` of a
    value goes to coordinate ``perm[c]`` times ``signs[c]``."""

    tokens: tuple[tuple[int, int], ...]
    perm: tuple[int, ...]
    signs: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sigma", dict(self.tokens))

    def token(self, tok: int) -> int:
        """``σ(tok)`` (the trigger and any token outside the content: itself)."""
        return self._sigma.get(int(tok), int(tok))  # type: ignore[attr-defined]

    def prefix(self, prefix: Any) -> tuple[int, ...]:
        """The image of a prefix (user tokens, TRIG = -1)."""
        sigma = self._sigma  # type: ignore[attr-defined]
        return tuple(sigma.get(t, t) for t in prefix)

    def vector(self, v: Any) -> list[Fraction]:
        """``Q v`` exactly (entries read as rationals)."""
        return self.moved([Fraction(x) for x in v])

    def moved(self, v: list[Any]) -> list[Any]:
        """``Q v`` for entries that negate exactly (integers, rationals)."""
        out = list(v)
        for c, x in enumerate(v):
            out[self.perm[c]] = -x if self.signs[c] < 0 else x
        return out

    def inverse(self) -> Symmetry:
        """``g^{-1}``."""
        perm = [0] * len(self.perm)
        signs = [1] * len(self.perm)
        for c, (to, sign) in enumerate(zip(self.perm, self.signs)):
            perm[to], signs[to] = c, sign
        return Symmetry(tuple((b, a) for a, b in self.tokens), tuple(perm), tuple(signs))

    def box(self, box: ValueBox) -> ValueBox:
        """``Q B`` per token, listed in the box's own token order."""
        table = dict(box.bounds)
        out = []
        for tok, _ in box.bounds:
            ivs: list[Any] = [None] * len(self.perm)
            src = next(t for t in table if self.token(t) == tok)
            for c, (lo, hi) in enumerate(table[src]):
                ivs[self.perm[c]] = (lo, hi) if self.signs[c] > 0 else (
                    None if hi is None else -hi, None if lo is None else -lo)
            out.append((tok, tuple(ivs)))
        return ValueBox(tuple(out))

    def split(self, split: tuple[int, int, Fraction]) -> tuple[tuple[int, int, Fraction], bool]:
        """The image of ``v_{tok, c} <= at | >= at`` and whether its sides swap."""
        tok, c, at = split
        sign = self.signs[c]
        return (self.token(tok), self.perm[c], at if sign > 0 else -at), sign < 0

    def leaf(self, entry: dict[str, Any], box: ValueBox) -> dict[str, Any]:
        """A certified leaf entry carried to the image box: ``(Q z_i, s_i, s_0)`` on the
        image prefixes."""
        return {"box": box.to_json(),
                "constraints": [list(self.prefix(c)) for c in entry["constraints"]],
                "z": [[_fmt(x) for x in self.vector(row)] for row in entry["z"]],
                "s": list(entry["s"]), "s0": entry["s0"]}


def candidates(task: Any) -> list[Symmetry]:
    """Every symmetry of ``task``'s content set but the identity
    (:meth:`~sinkproof.tasks.trigger.TriggerTask.content_symmetries`, in its order; none
    for a task without positional features)."""
    if not getattr(task, "has_positions", False):
        return []
    out = []
    for codes, P in task.content_symmetries():
        perm, signs = [0] * task.p, [1] * task.p
        for row, col in zip(*np.nonzero(P)):  # (P v)_row = P[row, col] v_col
            perm[col], signs[col] = int(row), int(P[row, col])
        out.append(Symmetry(tuple(enumerate(codes)), tuple(perm), tuple(signs)))
    return out


def symmetries_of(relax: Any, root: ValueBox) -> list[Symmetry]:
    """The :func:`candidates` of ``relax.task`` that map ``relax``'s prefixes onto
    themselves, each exact target ``y`` to ``Q y`` and the root box onto itself (checked
    exactly; none for a program projected onto some coordinates or over named value
    tokens)."""
    if relax.coordinates is not None or relax.value_tokens:
        return []
    found = candidates(relax.task)
    if not found:
        return []
    where = {pre: i for i, pre in enumerate(relax.prefixes)}
    targets, _ = integer_targets(relax)  # numerators over one denominator, exact

    def holds(g: Symmetry) -> bool:
        for i, pre in enumerate(relax.prefixes):
            j = where.get(g.prefix(pre))
            if j is None or targets[j] != g.moved(targets[i]):
                return False
        return g.token(TRIG) == TRIG and g.box(root) == root

    return [g for g in found if holds(g)]


def mapped(outcome: TargetOutcome, g: Symmetry, target: tuple[int, ...]) -> TargetOutcome:
    """``outcome``'s tree and certified leaves carried by ``g`` to ``target`` (``g`` of
    ``outcome.target``): the same bounds, every leaf's box, splits, prefixes and
    multipliers mapped exactly."""
    start = time.perf_counter()
    leaves: dict[int, tuple[dict[str, Any], Fraction]] = {}
    tree = outcome.tree
    new_root = Node(g.box(tree.root.box), tree.root.bound, tree.root.depth)
    stack = [(tree.root, new_root)]
    while stack:
        old, new = stack.pop()
        if old.children is None:
            got = outcome.leaves.get(id(old))
            if got is not None:
                leaves[id(new)] = (g.leaf(got[0], new.box), got[1])
            continue
        split, swap = g.split(old.split)  # type: ignore[arg-type]
        kids = [Node(g.box(c.box), c.bound, c.depth) for c in old.children]
        new.split = split
        new.children = (kids[1], kids[0]) if swap else (kids[0], kids[1])
        for o, n in zip(old.children, kids):
            stack.append((o, n))
    result = TreeResult(new_root, tree.bound, tree.status, tree.nodes,
                        time.perf_counter() - start, tree.goal, list(tree.history))
    return TargetOutcome(target, result, leaves, outcome.certified, outcome.skipped)
