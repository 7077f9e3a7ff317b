"""Theorem 7 (every fixed-value head sinks): for any number of normalised heads, each with
``U_fix``, error ``<= ε`` at a non-trigger position ``t`` forces ``Σ_h (1 - α^h_{t0}) <= ε/d_t``,
so every head has ``α^h_{t0} >= 1 - ε/d_t`` (``d_t`` as in Theorem 3).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import sympy

from ..modelclass import ModelClass
from ..task import TriggerTask
from . import theorem3
from .base import ANY_SIMPLEX_HEADS_FIXED, Target, Theorem
from .instance import InstantiatedBound

TITLE = "Every fixed-value head sinks (a corollary of Theorem 3, found by this project)"
STATEMENT = (
    "For any number H of normalised heads, each with fixed values U_fix and any "
    "score function: at a non-trigger position t of any X, if the error is <= ε at "
    "t, then every head has α^h_{t0} >= 1 - ε/d_t, d_t = dist(0, conv{c(x_j) : 1 <= "
    "j <= t}); indeed Σ_h (1 - α^h_{t0}) <= ε/d_t.")
PROOF = (
    "With U_fix the BOS value is 0, so f_t = Σ_h (1 - α^h_0) z_h with each z_h in "
    "the hull. With S = Σ_h (1 - α^h_0) > 0, f_t = S·z̄ where z̄ = Σ_h (1 - α^h_0) "
    "z_h / S is a convex combination of points of the hull, so ‖z̄‖ >= d_t; the "
    "target is 0, so S·d_t <= ‖f_t‖ <= ε, and 1 - α^h_0 <= S for every head. ∎ With "
    "learned values the heads' value maps differ and their outputs can cancel, so "
    "the argument does not carry over.")


def instantiate(task: TriggerTask, eps: sympy.Expr,
                positions: Iterable[Target] | None = None) -> InstantiatedBound:
    """Theorem 3's fixed-value bound, for every head of a model with any number of heads."""
    one_head = theorem3.instantiate(task, eps, values="fixed", positions=positions)
    return replace(one_head, theorem="theorem7", model_class=ANY_SIMPLEX_HEADS_FIXED)


def bound(task: TriggerTask, eps: sympy.Expr, model_class: ModelClass,
          positions: list[Target] | None) -> InstantiatedBound:
    """The calling convention: the bound at the given non-trigger positions."""
    return instantiate(task, eps, positions=positions)


THEOREM = Theorem(
    "theorem7", 7, TITLE, STATEMENT, PROOF, "bos_lower_bound", (ANY_SIMPLEX_HEADS_FIXED,),
    "the (non-trigger) position t of X", ("x_t is not the trigger", "d_t > 0"),
    ("theorem3_fixed",), instantiate, bound, token_set_bound=True)
