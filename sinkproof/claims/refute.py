"""Does a model refute a claim?  Float64 proposes, high precision decides.

A model refutes a claim when it belongs to the claim's class, its error on the
hypothesis family is ``<= ε`` and the conclusion fails:

- ``positions="every"``: at some position of the set, the BOS mass is ``< b`` in every
  head (``heads="some"``) or in some head (``heads="every"``);
- ``positions="some"``: at every position of the set it is.

A stack (a task without positions) is measured in float64 over its whole finite family
by :func:`family_bos`; its witness file is then verified by the trusted checker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import mpmath
import numpy as np

from ..attention import bos_measure
from ..model import AttentionModel
from ..modelclass import ModelClass
from ..stack import StackModel
from .positions import PositionMass, scan
from .precise import DIGITS, PreciseModel, max_error
from .schema import Claim

MAX_CONFIRMED = 64
"""At most this many violated positions are re-checked in high precision (one suffices
for a ``positions="every"`` claim; a ``"some"`` claim needs them all)."""


@dataclass(frozen=True)
class Refutation:
    """A verified refutation: the model, its error, the violated positions (masses in
    high precision), and the precision used."""

    model: AttentionModel
    error: float
    worst: tuple[int, ...]
    violations: tuple[PositionMass, ...]
    digits: int = DIGITS


def violated(masses: tuple[float, ...] | tuple[mpmath.mpf, ...], bound: float, heads: str) -> bool:
    """The conclusion fails at one position: every (``heads="some"``) or some
    (``heads="every"``) head is below ``bound``."""
    below = [m < bound for m in masses]
    return all(below) if heads == "some" else any(below)


def model_in_class(model: AttentionModel, claim: Claim) -> bool:
    """The witness is a model of the claim's class (on the claim's task)."""
    return model.task == claim.task and ModelClass.of(model).is_subclass_of(claim.model_class)


def _precise_threshold(claim: Claim, bound_at: Callable[[tuple[int, ...]], float],
                       prefix: tuple[int, ...]) -> mpmath.mpf | float:
    """The BOS threshold at ``prefix`` at ``DIGITS`` digits: the claim's ``b`` as written, or
    a theorem's bound rounded down (``bound_at.exact``, when the threshold has one)."""
    q = claim.conclusion.b_exact
    exact = getattr(bound_at, "exact", None)
    if q is None and exact is not None:
        q = exact(prefix)
    if q is None:
        return bound_at(prefix)
    with mpmath.workdps(DIGITS):
        return mpmath.mpf(q.numerator) / q.denominator


def refutes(model: AttentionModel, claim: Claim,
            bound_at: Callable[[tuple[int, ...]], float]) -> Refutation | None:
    """A verified :class:`Refutation` of ``claim`` by ``model`` (BOS threshold
    ``bound_at(prefix)``), or ``None`` when the model does not refute it in high precision."""
    if not model_in_class(model, claim):
        return None
    con = claim.conclusion
    masses = scan(model, con.at)
    cands = [pm for pm in masses
             if violated(pm.masses, bound_at(pm.sequence[:pm.position]), con.heads)]
    if con.positions == "some" and len(cands) < len(masses):
        return None
    if not cands:
        return None
    precise = PreciseModel(model)
    confirmed = []
    task = claim.task
    for pm in cands[: MAX_CONFIRMED if con.positions == "every" else None]:
        at = precise.at(tuple(int(c) for c in task.encode(pm.sequence)))
        if violated(at.bos, _precise_threshold(claim, bound_at, pm.sequence[:pm.position]),
                    con.heads):
            confirmed.append(PositionMass(pm.sequence, pm.position,
                                          tuple(float(m) for m in at.bos), pm.null))
        elif con.positions == "some":
            return None
    if not confirmed:
        return None
    err, worst = max_error(precise, claim.hypothesis.family_sequences(task))
    eps = claim.hypothesis.eps_exact
    if not err * eps.denominator <= eps.numerator:
        return None
    return Refutation(model, float(err), worst, tuple(confirmed))


def family_bos(model: StackModel, trigger_rows: bool = False
               ) -> tuple[float, list[tuple[tuple[int, ...], np.ndarray]]]:
    """Float measurement over the whole finite family: the largest error, and per distinct
    non-trigger prefix (every prefix of length ``>= 1`` with ``trigger_rows``) its BOS
    measure ``(layers, heads)`` at the last position (the weight on the simplex, the share
    off it: :func:`sinkproof.search.engine.bos_measure`)."""
    share = bos_measure(model.kind) == "share"
    task = model.task
    per: list[tuple[tuple[int, ...], np.ndarray]] = []
    empty = np.zeros((1, 0), dtype=np.int64)
    fw = model.forward_batch(task.prefix_features(empty))
    worst = float(np.linalg.norm(fw.out[0, -1] - task.prefix_targets(empty)[0]))
    for t in range(1, task.max_depth + 1):
        for block in task.prefix_blocks(t):
            codes = block.codes
            fw = model.forward_batch(task.prefix_features(codes))
            err = np.linalg.norm(fw.out[:, -1] - task.prefix_targets(codes), axis=-1)
            worst = max(worst, float(err.max()))
            bos = fw.w[:, :, :, -1, 0]  # (layers, heads, N)
            if share:
                total = fw.w[:, :, :, -1, :].sum(axis=-1)
                bos = np.where(total > 0, bos / np.where(total > 0, total, 1.0), 0.0)
            rows = np.arange(len(codes)) if trigger_rows else \
                np.flatnonzero(~task.is_trigger(codes[:, -1]))
            for i in rows:
                per.append((tuple(int(c) for c in codes[i]), bos[:, :, i]))
    return worst, per
