"""Carrying a certified tree from one target to another whose logits it dominates.

If target ``X'`` uses every class of target ``X`` at least ``λ`` times as often
(``a'_l >= λ a_l``, ``λ > 0``), then every leaf of ``X'`` 's tree with multipliers divided
by ``λ`` is a leaf for ``X``: ``h/λ + a <= (h + a')/λ <= 0`` and ``a·u <= c0'/λ``.  So
``(BOS, c, c)``'s bound at ``t = 2`` (its class twice) gives ``(BOS, c)`` at ``t = 1`` the
bound ``1/(1 + c0/2)``.  The scaled tree is re-verified by the trusted checker like any other.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

from ..task import TriggerTask
from .relaxation import prefix_classes
from .result import TargetOutcome


def dominance(task: TriggerTask, target: tuple[int, ...], other: tuple[int, ...],
              classes: dict[tuple[int, ...], dict] | None = None) -> Fraction:
    """The largest ``λ`` with ``a_other >= λ a_target`` on every class (0 if none);
    ``classes``: the targets' class counts already read (filled as they are)."""
    table = {} if classes is None else classes
    for row in (target, other):
        if row not in table:
            table[row] = prefix_classes(task, row)
    mine, theirs = table[target], table[other]
    if not set(mine) <= set(theirs):
        return Fraction(0)
    return min(Fraction(theirs[c], m) for c, m in mine.items())


def _scale(leaf: dict[str, Any], factor: Fraction) -> dict[str, Any]:
    def fmt(x: Fraction) -> str:
        return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"

    return {**copy.deepcopy(leaf),
            "z": [[fmt(Fraction(x) * factor) for x in row] for row in leaf["z"]],
            "s": [fmt(Fraction(x) * factor) for x in leaf["s"]],
            "s0": fmt(Fraction(leaf["s0"]) * factor)}


def transferred(task: TriggerTask, outcome: TargetOutcome,
                donors: list[TargetOutcome],
                classes: dict[tuple[int, ...], dict] | None = None) -> TargetOutcome:
    """``outcome``, or a donor's tree carried to its target when that certifies more
    (``classes``: as in :func:`dominance`, shared by the calls of one proof)."""
    best = outcome
    for donor in donors:
        if donor is outcome or donor.certified is None:
            continue
        lam = dominance(task, outcome.target, donor.target, classes)
        if lam <= 1 and not (lam == 1 and best.certified is None):
            continue
        leaves = {key: (_scale(leaf, 1 / lam), c0 / lam)
                  for key, (leaf, c0) in donor.leaves.items()}
        bounds = [1 / (1 + c0) for _, c0 in leaves.values() if c0 >= 0]
        certified = min(bounds) if bounds else Fraction(1)
        if best.certified is None or certified > best.certified:
            best = TargetOutcome(outcome.target, donor.tree, leaves, certified)
    return best
