"""Theorem 8 (tied positions: learned values cannot escape the homogeneous sink): where
``π(1) = π(2)``, a learned-value softmax head has ``α_{t0}(X^c_t) >= 1 - 2ε/‖c‖`` at every
``t >= 1``, and ``α_{10}(X^c_1) >= 1 - ε/(‖c‖ - ε)``, whenever ``‖c‖ > 2ε``.

Proof: the trigger at positions 1 and 2 has one input row, so ``(BOS, TRIG)`` and
``(BOS, c, TRIG)`` share the logits of BOS and the trigger, and the second's output is
``(1 - w) f' + w v_c`` with ``f'`` the first's (``‖f'‖ <= ε``, target 0) and its target
``c``: ``‖v_c‖ >= (‖c‖ - 2ε)/w + ε > ‖c‖ - ε``.  Theorem 1's argument then gives
``δ (‖v_c‖ + ε) <= 2ε`` for the non-BOS mass ``δ`` of ``X^c_t``; and ``X^c_1``, ``X^c_2``
share their one logit gap ``u``, so ``δ_1 = δ_2 / (2 - δ_2)``.
"""

from __future__ import annotations

import sympy

from ..modelclass import ModelClass
from ..symbolic.bounds import CONTENT_NORM, EPS, Formula, norm_exact
from ..task import TRIG, TriggerTask
from .base import ONE_SOFTMAX_HEAD, Target, Theorem, homogeneous
from .instance import BosBound, InstantiatedBound

TITLE = "Tied positions: learned values cannot escape the homogeneous sink"
STATEMENT = (
    "Let π(1) = π(2) (the inverse and the bias-only schemes), T >= 2 and c ∈ C with "
    "‖c‖ > 2ε. If one softmax head with learned token-only values has error <= ε at "
    "position 0, at position 1 of (BOS, TRIG), at position 2 of (BOS, c, TRIG) and at "
    "position t of X^c_t (t >= 1), then α_{t0}(X^c_t) >= 1 - 2ε/‖c‖; if moreover the error "
    "is <= ε at position 2 of X^c_2, then α_{10}(X^c_1) >= 1 - ε/(‖c‖ - ε).")
PROOF = (
    "The trigger has the same input row [e(TRIG); π(1)] at positions 1 and 2, as a query "
    "and as a key, so (BOS, TRIG) and (BOS, c, TRIG) give BOS and the trigger the same "
    "logits at their last position, and the output of the second is f = (1 - w) f' + w v_c, "
    "with f' the output of the first and w in (0, 1) the weight on c. Its target is c and "
    "that of f' is 0, so w‖v_c‖ >= ‖f‖ - (1 - w)‖f'‖ >= ‖c‖ - ε - (1 - w)ε, i.e. ‖v_c‖ >= "
    "(‖c‖ - 2ε)/w + ε > ‖c‖ - ε. On X^c_t every content key carries v_c, so "
    "f_t = α_0 v_b + δ v_c with δ = 1 - α_0, ‖f_t‖ <= ε and ‖v_b‖ = ‖f_0‖ <= ε: "
    "δ‖v_c‖ <= ε + (1 - δ)ε, so δ <= 2ε/(‖v_c‖ + ε) < 2ε/‖c‖. At t = 1: the query c and the "
    "content keys have the same rows at positions 1 and 2, so X^c_1 and X^c_2 share the "
    "logit gap s_c - s_b = log u, and their non-BOS masses are δ_1 = u/(1 + u) and "
    "δ_2 = 2u/(1 + 2u), i.e. δ_1 = δ_2/(2 - δ_2) < (2ε/‖c‖)/(2 - 2ε/‖c‖) = ε/(‖c‖ - ε). ∎")

THEOREM8_TIED = Formula("theorem8_tied", 1 - 2 * EPS / CONTENT_NORM, (EPS, CONTENT_NORM),
                        "α_{t0}(X^c_t) >= 1 - 2ε/‖c‖ (π(1) = π(2), learned values)",
                        ("eps", "content_norm"))
THEOREM8_FIRST = Formula("theorem8_first", 1 - EPS / (CONTENT_NORM - EPS),
                         (EPS, CONTENT_NORM),
                         "α_{10}(X^c_1) >= 1 - ε/(‖c‖ - ε) (π(1) = π(2), learned values)",
                         ("eps", "content_norm"))


def tied(task: TriggerTask) -> bool:
    """``π(1) = π(2)``, compared exactly (the inverse and the bias-only schemes)."""
    return task.T >= 2 and task.position_features_exact(1) == task.position_features_exact(2)


def instantiate(task: TriggerTask, eps: sympy.Expr) -> InstantiatedBound:
    """The bound at position ``t`` of every ``X^c_t``, ``t = 1..T`` (none where
    ``π(1) != π(2)``, ``T < 2`` or ``‖c‖ <= 2ε``)."""
    items, none = [], []
    for c in range(task.k):
        norm = norm_exact(task.token_features_exact(c)[: task.p])
        tie = ((TRIG,), 1), ((c, TRIG), 2)
        for t in range(1, task.T + 1):
            X = homogeneous(c, t)
            if not tied(task):
                none.append(((X, t), "π(1) != π(2)" if task.T >= 2 else "T < 2"))
                continue
            if norm <= 2 * eps:
                none.append(((X, t), f"‖c‖ = {sympy.sstr(norm)} <= 2ε"))
                continue
            needs: tuple[Target, ...] = ((X, 0), *tie, (X, t))
            bound = THEOREM8_TIED.exact(eps=eps, content_norm=norm)
            if t == 1:
                needs += ((homogeneous(c, 2), 2),)
                bound = THEOREM8_FIRST.exact(eps=eps, content_norm=norm)
            items.append(BosBound(((X, t),), bound, needs, f"‖c‖ = {sympy.sstr(norm)}"))
    return InstantiatedBound("theorem8", task, eps, ONE_SOFTMAX_HEAD, tuple(items),
                             tuple(none))


def bound(task: TriggerTask, eps: sympy.Expr, model_class: ModelClass,
          positions: list[Target] | None) -> InstantiatedBound:
    """The calling convention: Theorem 8 names its own sequences and holds for any values."""
    return instantiate(task, eps)


THEOREM = Theorem(
    "theorem8", 8, TITLE, STATEMENT, PROOF, "bos_lower_bound", (ONE_SOFTMAX_HEAD,),
    "position 0, position 1 of (BOS, TRIG), position 2 of (BOS, c, TRIG), position t of "
    "X^c_t (and position 2 of X^c_2 for t = 1)", ("π(1) = π(2)", "T >= 2", "‖c‖ > 2ε"),
    ("theorem8_tied", "theorem8_first"), instantiate, bound,
    task_needs=(("finite", True), ("fixed_length", False), ("has_positions", True)))
