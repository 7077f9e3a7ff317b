"""Sink-free heads for the maps off the simplex, as witness files the trusted checker verifies.

No argument bounds the BOS measure of sigmoid, ReLU or ReLU/length attention from below:
one explicit head with fixed values ``U_fix``, exact rational scores
``s_{tj} = φ_t^T A φ_j`` (``inverse`` positions) and error ``<= eps`` on the whole family
shows it, at every non-trigger position at once:

- ``relu``: Theorem 4's head ``s_{tj} = (r_t - is_content_t)(is_content_j +
  is_trigger_j)``: zero error, BOS weight exactly 0;
- ``relu_length``: the same with query factor ``1 + r_t - 2 is_content_t`` (a trigger at
  ``t >= 2`` weighs each key ``(1 + r_t)/t = 1/(t-1)``): zero error, BOS weight 0;
- ``sigmoid`` (``b = 0``, ``T <= 3``): every key scores ``(2 r_t - 1) L`` from the query
  position; a content query adds ``-2L`` on every key and ``-3L`` on BOS, the trigger
  query ``-2L`` on BOS and trigger keys.  The trigger weighs content ``σ(L)`` at ``t = 2``
  and ``σ(0) = 1/2`` at ``t = 3``; a content query weighs every key at most ``σ(-L)`` and
  BOS ``e^{-L}`` times less, so the BOS share is ``<= e^{-L}``: error ``O(e^{-L})`` and
  share ``O(e^{-L})``, with ``L`` chosen from ``eps``.  A sigmoid weight is never 0, so
  the share reaches every level above 0, not 0 itself.

The witness claims error ``<= eps`` on ``S_T`` and BOS weight (ReLU maps) or BOS share
(sigmoid) ``<= level`` at every non-trigger position, ``level`` being 0 and ``10^-m``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..certformat import FORMAT, VERSION, format_rational
from ..constructions import feature_index
from ..task import TriggerTask
from .kinds import sink_measure

__all__ = ["MAX_LEVEL", "WitnessHead", "sink_free_head", "unavailable"]

MAX_LEVEL = 60
"""Largest sigmoid level ``L`` tried (error ``~3 e^{-L}``: eps below ``~1e-25`` is refused)."""


class WitnessHead:
    """One exact head (``A`` as Fractions, map parameters) and the BOS-measure level it
    claims at non-trigger positions."""

    def __init__(self, task: TriggerTask, kind: str, A: list[list[Fraction]],
                 params: tuple[Fraction, ...], level: Fraction, L: int | None) -> None:
        self.task, self.kind, self.A, self.params = task, kind, A, params
        self.level, self.L = level, L

    def document(self, eps: Fraction) -> dict[str, Any]:
        """The witness file: error ``<= eps`` on the family, BOS measure ``<= level`` at every
        non-trigger position."""
        measure = sink_measure(self.kind)
        instance: dict[str, Any] = {"task": self.task.describe(), "values": "fixed"}
        at = f" (L = {self.L})" if self.L is not None else ""
        claim: dict[str, Any] = {
            "statement": (f"a 1-head {self.kind} model{at} with fixed values has error <= "
                          f"{format_rational(eps)} on the family and {measure.name} <= "
                          f"{format_rational(self.level)} at nontrigger positions"),
            "model_class": {"kind": self.kind, "heads": 1, "values": "fixed"},
            "max_error": format_rational(eps),
            "max_bos_mass": format_rational(self.level),
            "where": "nontrigger",
        }
        if measure.witness_measure != "weight":
            claim["bos_measure"] = measure.witness_measure
        data: dict[str, Any] = {"A": [[[format_rational(x) for x in row] for row in self.A]],
                                "U": "fixed", "precision_digits": 50}
        if self.params:
            data["map_params"] = [[format_rational(x) for x in self.params]]
        return {"format": FORMAT, "version": VERSION, "kind": "witness",
                "instance": instance, "claim": claim, "data": data}


def unavailable(task: TriggerTask, kind: str) -> str | None:
    """Why no sink-free head is built for ``kind`` on ``task`` (``None``: one is)."""
    if task.positions != "inverse":
        return f"the sink-free heads use positions='inverse', the task has {task.positions!r}"
    if kind == "sigmoid" and task.T > 3:
        return ("the sigmoid head's trigger logit (2 r_t - 1) L is affine in r_t and meets "
                "1/(t-1) only at t = 2, 3: no witness for T > 3")
    return None


def _sigmoid_level(task: TriggerTask, eps: Fraction) -> int:
    """The least ``L >= 8`` whose head's error bound ``(T + 1) e^{-L}`` is ``<= eps / 2``."""
    need = math.log(2 * (task.T + 1) / float(eps))
    L = max(8, math.ceil(need))
    if L > MAX_LEVEL:
        raise ValueError(f"eps = {format_rational(eps)} is below what the sigmoid witness "
                         f"reaches at L <= {MAX_LEVEL}")
    return L


def sink_free_head(task: TriggerTask, kind: str, eps: Fraction) -> WitnessHead:
    """The head of the module docstring for map ``kind`` at error level ``eps``."""
    why = unavailable(task, kind)
    if why is not None:
        raise ValueError(why)
    D = task.D
    A = [[Fraction(0)] * D for _ in range(D)]
    f = {n: feature_index(task, n) for n in
         ("is_content", "is_trigger", "is_bos", "bias", "ratio")}
    c, tr, bos = f["is_content"], f["is_trigger"], f["is_bos"]
    if kind == "relu":
        for key in (c, tr):
            A[f["ratio"]][key], A[c][key] = Fraction(1), Fraction(-1)
        return WitnessHead(task, kind, A, (), Fraction(0), None)
    if kind == "relu_length":
        for key in (c, tr):
            A[f["bias"]][key] = A[f["ratio"]][key] = Fraction(1)
            A[c][key] = Fraction(-2)
        return WitnessHead(task, kind, A, (), Fraction(0), None)
    if kind != "sigmoid":
        raise ValueError(f"no sink-free witness head for the {kind} map")
    L = _sigmoid_level(task, eps)
    for key in (bos, c, tr):
        A[c][key] = Fraction(-2 * L)
        A[f["bias"]][key], A[f["ratio"]][key] = Fraction(-L), Fraction(2 * L)
    A[c][bos] = Fraction(-3 * L)
    A[tr][bos] = A[tr][tr] = Fraction(-2 * L)
    # share <= e^{-L}(1 + e^{-L}) < 2 e^{-L}: claim the next power of ten above it
    m = math.floor((L - math.log(2)) / math.log(10))
    return WitnessHead(task, kind, A, (Fraction(0),), Fraction(1, 10**m), L)
