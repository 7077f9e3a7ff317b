"""Error floors: a certified ``ε_0 > 0`` below which no one-head, fixed-value model of a map
is accurate on a task's family (then every "must an accurate head ..." question holds
vacuously, no exact solution exists and no norm reaches a smaller error).

Two theorems, each checking its hypotheses on the task and the map's declared properties:

- **A position-blind own key** (tasks without positional features, exactly one trigger,
  one length ``L``: the paper's setting; maps with ``own_key_local``: ReLU, sigmoid,
  stick-breaking).  The trigger row's trigger coordinate is the trigger's weight on itself
  (no other key has a trigger coordinate), a function of the trigger token alone, which must
  be within ``ε`` of ``1/2`` at ``j = 2`` and of ``1/(L-1)`` at ``j = L - 1``:
  ``ε >= (1/2 - 1/(L-1))/2`` (:func:`sinkproof.constructions.position_free_error_bound`).
- **Recency cannot average two keys at one position** (stick-breaking; tasks whose
  positions 1 and 2 carry the same features, as the inverse scheme's ``r_1 = r_2 = 1``, with
  two orthonormal content vectors ``a ⊥ b`` and ``T >= 3``).  At the trigger of
  ``(BOS, a, b, TRIG)`` the weights are ``u σ_b`` on ``b`` and ``u σ_a (1 - σ_b)`` on ``a``
  (``u = 1 - σ(s_TT) <= 1``; ``σ_a, σ_b`` depend on the key token only, positions 1 and 2
  being alike), and at the trigger of ``(BOS, b, a, TRIG)`` ``u σ_a`` and ``u σ_b (1 - σ_a)``;
  the target is ``(a + b)/2``.  Error ``<= ε`` puts ``x = u σ_a`` and ``y = u σ_b`` within
  ``ε`` of ``1/2``; then ``u σ_a (1 - σ_b) <= x (1 - y) <= (1/2 + ε)^2`` must be
  ``>= 1/2 - ε``, so ``ε^2 + 2ε - 1/4 >= 0``: ``ε >= (√5 - 2)/2 ≈ 0.118``.  The floor returned
  is the largest rational with :data:`DIGITS` decimals that still violates the inequality.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..attention import MAPS
from ..constructions import position_free_error_bound

__all__ = ["DIGITS", "Floor", "error_floor", "recency_floor"]

DIGITS = 4


@dataclass(frozen=True)
class Floor:
    """Every one-head fixed-value model has error ``> bound`` (``>=`` where ``strict`` is
    false) on the task's family, by the argument ``reason``."""

    bound: Fraction
    strict: bool
    reason: str

    @property
    def relation(self) -> str:
        return ">" if self.strict else ">="


def _orthonormal_pair(task: Any) -> tuple[int, int] | None:
    """Two content codes whose vectors are orthonormal, decided exactly."""
    vecs = [list(task.token_features_exact(c))[: task.p] for c in range(task.k)]
    for i, a in enumerate(vecs):
        if sum(x * x for x in a) != 1:
            continue
        for j in range(i + 1, len(vecs)):
            b = vecs[j]
            if sum(x * x for x in b) == 1 and sum(x * y for x, y in zip(a, b)) == 0:
                return i, j
    return None


def _below_root() -> Fraction:
    """The largest ``m / 10^DIGITS`` with ``m² + 2m - 1/4 < 0`` (below ``(√5 - 2)/2``)."""
    scale = 10**DIGITS
    m = 0
    while True:
        e = Fraction(m + 1, scale)
        if e * e + 2 * e - Fraction(1, 4) >= 0:
            return Fraction(m, scale)
        m += 1


def recency_floor(task: Any) -> Floor | None:
    """The recency theorem's floor on ``task`` (module docstring), ``None`` where its
    hypotheses fail: no positional features to compare, ``T < 3``, positions 1 and 2 told
    apart by their features, or no orthonormal content pair."""
    if not (getattr(task, "has_positions", False) and task.finite) or task.T < 3:
        return None
    if list(task.position_features_exact(1)) != list(task.position_features_exact(2)):
        return None
    pair = _orthonormal_pair(task)
    if pair is None:
        return None
    a, b = (f"c{c}" for c in pair)
    return Floor(_below_root(), True,
                 f"positions 1 and 2 carry the same features, so the keys of (BOS, {a}, {b}, "
                 f"TRIG) and (BOS, {b}, {a}, TRIG) score {a} and {b} by their tokens only; "
                 "stick-breaking gives the later key u sig(s_2) and the earlier u sig(s_1) "
                 "(1 - sig(s_2)), u <= 1 what the trigger key left, and both orders within "
                 "eps of 1/2 need eps^2 + 2 eps - 1/4 >= 0, eps >= (sqrt 5 - 2)/2")


def _blind_own_key_floor(task: Any) -> Floor | None:
    if getattr(task, "has_positions", True) or not (task.single_trigger and task.fixed_length):
        return None
    bound = position_free_error_bound(task)
    if bound <= 0:
        return None
    return Floor(bound, False,
                 "its weight of the query's own key is a function of that key's score alone "
                 "(no positions in the tokens); at the trigger row the trigger coordinate of "
                 "the output is the trigger's weight on itself (no other key has a trigger "
                 "coordinate), which the same trigger token needs within eps of 1/2 at j = 2 "
                 f"and of 1/{task.L - 1} at j = {task.L - 1}")


def error_floor(task: Any, kind: str) -> Floor | None:
    """The strongest floor a theorem above gives for one fixed-value head of map ``kind`` on
    ``task``, or ``None``."""
    props = MAPS[kind].properties
    floors = []
    if props.own_key_local:
        floors.append(_blind_own_key_floor(task))
    if props.stick_process:  # the recency theorem's hypothesis
        floors.append(recency_floor(task))
    found = [f for f in floors if f is not None]
    return max(found, key=lambda f: f.bound) if found else None
