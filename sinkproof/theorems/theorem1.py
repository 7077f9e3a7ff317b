"""Theorem 1 (homogeneous sink): on ``X^c_n``, error ``<= ε`` at positions 0 and ``n`` forces
``α_{n0} >= 1 - 2ε/‖v_c‖`` (``1 - ε/‖c‖`` with the fixed values ``U_fix``).

Proof: ``f_0 = v_b``, so ``‖v_b‖ <= ε``; every content key of ``X^c_n`` carries ``v_c``, so
``f_n = α_0 v_b + (1-α_0) v_c`` and ``(1-α_0)‖v_c‖ <= ‖f_n‖ + α_0‖v_b‖ <= 2ε``.
"""

from __future__ import annotations

from collections.abc import Iterable

import sympy

from ..model import AttentionModel
from ..modelclass import ModelClass
from ..numerics import stable_norm
from ..symbolic.bounds import CONTENT_NORM, EPS, VALUE_NORM, Formula, norm_exact
from ..task import TriggerTask
from .base import (
    ONE_SOFTMAX_HEAD,
    CertifiedBound,
    Target,
    Theorem,
    homogeneous,
    lengths_of,
    values_of,
)
from .instance import BosBound, InstantiatedBound

TITLE = "Homogeneous sink"
STATEMENT = (
    "If the error is <= ε at position 0 and at position n of X^c_n, then "
    "α_{n0}(X^c_n) >= 1 - 2ε/‖v_c‖; with fixed values (v_b = 0, v_c = c), α_{n0} >= "
    "1 - ε/‖c‖.")
PROOF = (
    "f_0 = v_b, so ‖v_b‖ <= ε. All content keys of X^c_n carry the same value, so "
    "f_n = α_0 v_b + (1-α_0) v_c and (1-α_0)‖v_c‖ <= ‖f_n‖ + α_0‖v_b‖ <= 2ε. ∎")

THEOREM1_LEARNED = Formula("theorem1_learned", 1 - 2 * EPS / VALUE_NORM, (EPS, VALUE_NORM),
                           "α_{n0}(X^c_n) >= 1 - 2ε/‖v_c‖ (learned values)",
                           ("eps", "value_norm"))
THEOREM1_FIXED = Formula("theorem1_fixed", 1 - EPS / CONTENT_NORM, (EPS, CONTENT_NORM),
                         "α_{n0}(X^c_n) >= 1 - ε/‖c‖ (fixed values)", ("eps", "content_norm"))


def instantiate(task: TriggerTask, eps: sympy.Expr, values: str = "fixed",
                model: AttentionModel | None = None,
                lengths: Iterable[int] | None = None) -> InstantiatedBound:
    """The bound at position ``n`` of every ``X^c_n`` (``lengths``: the ``n``, default
    ``1..T``), for ``U_fix`` or for the value map of ``model``."""
    vals, cls, value_map = values_of(task, values, model)
    fixed = cls.values == "fixed"
    items, none = [], []
    for c in range(task.k):
        norm = norm_exact(vals[c])
        for n in lengths_of(task, lengths, task.T):
            X = homogeneous(c, n)
            if norm == 0:
                none.append(((X, n), "the value v_c is zero"))
                continue
            bound = (THEOREM1_FIXED.exact(eps=eps, content_norm=norm) if fixed
                     else THEOREM1_LEARNED.exact(eps=eps, value_norm=norm))
            items.append(BosBound(((X, n),), bound, ((X, 0), (X, n)),
                                  f"‖{'c' if fixed else 'v_c'}‖ = {sympy.sstr(norm)}"))
    return InstantiatedBound("theorem1", task, eps, cls, tuple(items), tuple(none),
                             value_map=value_map)


def bound(task: TriggerTask, eps: sympy.Expr, model_class: ModelClass,
          positions: list[Target] | None) -> InstantiatedBound:
    """The calling convention: Theorem 1 names its own sequences ``X^c_n``."""
    return instantiate(task, eps, values=model_class.values)


def class_bound(task: TriggerTask, model_class: ModelClass) -> CertifiedBound | None:
    """Fixed values: ``max α_0 >= 1 - ε / max_c ‖c‖`` over the family (at ``X^c_n`` with the
    largest ``‖c‖``); learned values: none without the value map."""
    if model_class.values != "fixed":
        return None
    norm = float(stable_norm(task.content).max())
    return CertifiedBound(
        "Theorem 1 (fixed values)", f"max BOS mass >= 1 - ε/{norm:.6g}",
        lambda e: THEOREM1_FIXED(eps=e, content_norm=norm))


THEOREM = Theorem(
    "theorem1", 1, TITLE, STATEMENT, PROOF, "bos_lower_bound", (ONE_SOFTMAX_HEAD,),
    "position 0 and position n of X^c_n", ("v_c != 0",),
    ("theorem1_learned", "theorem1_fixed"), instantiate, bound, class_bound,
    value_map_dependent=True)
