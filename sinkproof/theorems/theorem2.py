"""Theorem 2 (values must carry content): of any two content tokens ``c, c'`` one sinks,
``min(δ, δ') <= 2ε/(g(c,c') - 2ε)`` for the non-BOS masses ``δ, δ'`` at position ``m`` of
``X^c_m, X^{c'}_m``, whenever the ray gap ``g(c,c')`` exceeds ``2ε``.

The ray gap ``g(c,c') = min_{‖u‖=1} max(d(c, R_+u), d(c', R_+u))`` is computed exactly by
:func:`sinkproof.symbolic.bounds.ray_gap`.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

import numpy as np
import sympy

from ..modelclass import ModelClass
from ..symbolic.bounds import EPS, GAP, Formula, ray_gap
from ..task import TRIG, TriggerTask
from .base import ONE_SOFTMAX_HEAD, CertifiedBound, Target, Theorem, homogeneous, lengths_of
from .instance import BosBound, InstantiatedBound

TITLE = "Values must carry content: one of any two tokens sinks"
STATEMENT = (
    "Let c, c' ∈ C, m >= 1, and let δ, δ' be the non-BOS masses at position m of "
    "X^c_m, X^{c'}_m. If the error is <= ε at position 0, at position m of X^c_m, "
    "X^{c'}_m and at position m+1 of T^c_m, T^{c'}_m, then min(δ, δ') <= "
    "2ε/(g(c,c') - 2ε) whenever g(c,c') > 2ε, where the ray gap g(c,c') = "
    "min_{‖u‖=1} max(d(c, R_+u), d(c', R_+u)).")
PROOF = (
    "At position m of X^c_m the output is f = α_0 v_b + δ v_c with ‖f‖ <= ε and "
    "‖v_b‖ = ‖f_0‖ <= ε, so δ‖v_c‖ <= 2ε, i.e. ‖v_c‖ <= 2ε/δ. At the trigger of "
    "T^c_m (target c), f = α'_0 v_b + α'_c v_c + α'_τ v_τ (α'_c the mass on the "
    "content keys) is within ε of c, so d(c, R_+ v_τ) <= ‖α'_τ v_τ - c‖ <= 2ε + "
    "2ε/δ; the same for c'. Both points lie within 2ε + 2ε/min(δ,δ') of one ray, so "
    "g <= 2ε + 2ε/min(δ,δ'). ∎")

THEOREM2_NONBOS = Formula("theorem2_nonbos", 2 * EPS / (GAP - 2 * EPS), (EPS, GAP),
                          "min(δ, δ') <= 2ε/(g - 2ε) when g > 2ε", ("eps", "gap"))
THEOREM2_PAIR = Formula("theorem2_pair", 1 - 2 * EPS / (GAP - 2 * EPS), (EPS, GAP),
                        "max(α_{m0}(X^c_m), α_{m0}(X^c'_m)) >= 1 - 2ε/(g - 2ε) when g > 2ε",
                        ("eps", "gap"))


def instantiate(task: TriggerTask, eps: sympy.Expr,
                lengths: Iterable[int] | None = None) -> InstantiatedBound:
    """One item per pair ``c < c'`` and length ``m`` (default ``1..T-1``): the larger BOS
    mass of ``X^c_m, X^{c'}_m`` at position ``m``."""
    if task.T < 2:
        raise ValueError("Theorem 2 needs T >= 2 (the sequence T^c_m has length m + 1)")
    content = [tuple(task.token_features_exact(c)[: task.p]) for c in range(task.k)]
    items, none = [], []
    for c, d in combinations(range(task.k), 2):
        gap = ray_gap(content[c], content[d])
        for m in lengths_of(task, lengths, task.T - 1):
            Xc, Xd = homogeneous(c, m), homogeneous(d, m)
            targets = ((Xc, m), (Xd, m))
            if gap.exact <= 2 * eps:
                none.append((targets[0], f"g(c{c}, c{d}) = {sympy.sstr(gap.exact)} <= 2ε"))
                continue
            needs = ((Xc, 0), (Xc, m), (Xd, m), ((*Xc, TRIG), m + 1), ((*Xd, TRIG), m + 1))
            bound = THEOREM2_PAIR.exact(eps=eps, gap=gap.exact)
            items.append(BosBound(targets, bound, needs, f"g = {sympy.sstr(gap.exact)}"))
    return InstantiatedBound("theorem2", task, eps, ONE_SOFTMAX_HEAD, tuple(items), tuple(none))


def bound(task: TriggerTask, eps: sympy.Expr, model_class: ModelClass,
          positions: list[Target] | None) -> InstantiatedBound:
    """The calling convention: Theorem 2 names its own sequences and holds for any values."""
    return instantiate(task, eps)


def class_bound(task: TriggerTask, model_class: ModelClass) -> CertifiedBound | None:
    """``max α_0 >= 1 - 2ε/(g - 2ε)`` with ``g`` the largest ray gap of two content vectors
    (``T >= 2``, ``k >= 2``), for any values; vacuous from ``ε = g/2`` on."""
    if task.T < 2 or task.k < 2:
        return None
    gap = max(ray_gap(c, d).value for c, d in combinations(task.content, 2))

    def pair(e: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(gap > 2 * e, THEOREM2_PAIR(eps=e, gap=gap), 0.0)

    return CertifiedBound("Theorem 2 (any values)",
                          f"max BOS mass >= 1 - 2ε/({gap:.6g} - 2ε) for ε < {gap / 2:.6g}", pair)


THEOREM = Theorem(
    "theorem2", 2, TITLE, STATEMENT, PROOF, "bos_lower_bound", (ONE_SOFTMAX_HEAD,),
    "position 0, position m of X^c_m and X^c'_m, position m+1 of T^c_m and T^c'_m",
    ("g(c, c') > 2ε", "m + 1 <= T"), ("theorem2_pair", "theorem2_nonbos"),
    instantiate, bound, class_bound)
