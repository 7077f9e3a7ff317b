"""Theorem 5 (softmax pays in weight norm): a softmax head with ``U_fix`` and ``‖A‖_2 <= B`` has
family error ``>= ε_min(B) = max_{c,n} ‖c‖ Q/(1+Q)``, ``Q = Σ_{j=1}^n exp(-B‖φ_n‖‖φ_j - φ_0‖)``.

``ε_min`` exactly, in floating point and as a certified enclosure, and the norm a target
error needs, are computed by :mod:`sinkproof.symbolic.normbound`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import sympy

from ..model import AttentionModel
from ..modelclass import ModelClass
from ..symbolic.normbound import NormNeeded, eps_min, eps_min_expr, norm_needed
from ..task import TriggerTask
from .base import ONE_SOFTMAX_HEAD_FIXED, Theorem
from .instance import errors_at, float_down

TITLE = "Softmax pays in weight norm"
STATEMENT = (
    "With fixed values and ‖A‖_2 <= B, every logit gap obeys s_{tj} - s_{t0} >= "
    "-B‖φ_t‖‖φ_j - φ_0‖, so on X^c_n 1 - α_0 >= Q/(1+Q), Q = Σ_{j=1}^n "
    "exp(-B‖φ_n‖‖φ_j - φ_0‖), and E >= ε_min(B) := max_{c,n} ‖c‖Q/(1+Q). Reaching "
    "error ε needs B = Ω(log(1/ε)), whereas Theorem 4 reaches ε = 0 at B = 2.")
PROOF = (
    "s_{tj} - s_{t0} = φ_t^T A (φ_j - φ_0) >= -‖A‖_2 ‖φ_t‖ ‖φ_j - φ_0‖ "
    "(Cauchy-Schwarz); 1 - α_0 = Σ_j e^{s_j - s_0} / (1 + Σ_j e^{s_j - s_0}) is "
    "increasing in each gap; with fixed values f_n = (1 - α_0) c on X^c_n, whose "
    "target is 0. ∎")


@dataclass(frozen=True)
class NormBoundInstance:
    """Theorem 5 on a task: ``ε_min(B)`` exactly, and the norm error ``<= eps`` needs."""

    task: TriggerTask
    eps: sympy.Expr
    model_class: ModelClass
    expr: sympy.Expr

    @cached_property
    def needed(self) -> NormNeeded:
        """The norm error ``<= eps`` needs (bisection, certified from below)."""
        if self.eps == 0:
            return NormNeeded(0.0, math.inf, math.inf, (0.0, 0.0), math.inf)
        return norm_needed(self.task, float_down(self.eps))

    def eps_min(self, norm: Any) -> Any:
        """``ε_min(B)`` in floating point."""
        return eps_min(self.task, norm)

    def check(self, model: AttentionModel, rtol: float = 1e-9) -> bool:
        """The model's largest error on the sequences ``X^c_n`` (where the theorem's
        argument lives) is ``>= ε_min(‖A‖_2)`` (floating point, no underflow)."""
        if not self.model_class.contains(model) or model.task != self.task:
            raise ValueError(f"the model is not a {self.model_class} model on this task")
        task = self.task
        error = errors_at(model, [((c,) * task.T, n) for c in range(task.k)
                                  for n in range(1, task.T + 1)], upper=False)
        return error >= eps_min(task, model.norm) * (1 - rtol)

    def __repr__(self) -> str:
        return (f"NormBoundInstance(theorem5, eps={sympy.sstr(self.eps)}, "
                f"ε_min(B) = {sympy.sstr(self.expr)})")

    def _repr_markdown_(self) -> str:
        return (f"**Theorem 5** on `{self.task!r}`: ε_min(B) = `{sympy.sstr(self.expr)}`; "
                f"error ≤ {sympy.sstr(self.eps)} needs ‖A‖_2 > {self.needed.below:.6g} "
                f"(certified)")


def instantiate(task: TriggerTask, eps: sympy.Expr) -> NormBoundInstance:
    """``ε_min(B)`` on ``task`` and the norm that error ``<= eps`` needs."""
    return NormBoundInstance(task, eps, ONE_SOFTMAX_HEAD_FIXED, eps_min_expr(task))


THEOREM = Theorem(
    "theorem5", 5, TITLE, STATEMENT, PROOF, "error_lower_bound", (ONE_SOFTMAX_HEAD_FIXED,),
    "none: a lower bound on the error of every model with ‖A‖_2 <= B",
    ("‖A‖_2 <= B",), ("eps_min",), instantiate)
