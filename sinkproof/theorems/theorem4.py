"""Theorem 4 (ReLU needs no sink): one ReLU head with a rank-one score matrix (``‖A‖_2 = 2``)
and ``U_fix`` has zero error on every sequence of every length, with ``α_{t0} = 0`` everywhere.

A construction: the theorem *applies* to a class that contains its witness.  The witness
is verified exactly, for all lengths at once (SymPy, :mod:`sinkproof.symbolic.theorem4`) or
on a whole family in rational arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..constructions import relu_solution
from ..model import AttentionModel
from ..modelclass import ModelClass
from ..symbolic.exact import ExactFamilyCheck, ExactModel, exact_check
from ..symbolic.theorem4 import Theorem4Verification, exact_relu_solution, verify_relu_symbolic
from ..task import TriggerTask
from .base import Theorem

TITLE = "ReLU needs no sink: explicit construction"
STATEMENT = (
    "With the inverse positional scheme, one ReLU head with scores s_{tj} = (r_t - "
    "is_content_t)·(is_content_j + is_trigger_j) (a rank-one A, ‖A‖_2 = 2) and "
    "fixed values U_fix has zero error on every sequence of every length (and on "
    "the multi-trigger variant), and α_{t0} = 0 at every position.")
PROOF = (
    "BOS keys score 0. A content query scores r_t - 1 <= 0 on every non-BOS key, so "
    "all weights vanish and f_t = 0. A trigger query at t >= 2 scores r_t = 1/(t-1) "
    "on every content and trigger key; trigger values are 0, so f_t = Σ_{j<t} "
    "c(x_j)/(t-1) = y_t. At t = 1 the only non-BOS key is the trigger itself, of "
    "value 0. ∎")


@dataclass(frozen=True)
class WitnessInstance:
    """Theorem 4 on a task: the construction (float and exact) and its exact verification."""

    task: TriggerTask
    model: AttentionModel
    exact_model: ExactModel
    model_class: ModelClass

    def symbolic(self) -> Theorem4Verification:
        """All lengths at once, symbolically (``inverse`` positions only)."""
        if self.task.positions != "inverse":
            raise ValueError("the symbolic check is for positions='inverse'; use family_check()")
        return verify_relu_symbolic(self.exact_model.A[0].tolist(), None, self.task.p)

    def family_check(self) -> ExactFamilyCheck:
        """Every position of the task's family, in exact rational arithmetic."""
        return exact_check(self.exact_model)

    def __repr__(self) -> str:
        return f"WitnessInstance(theorem4, {self.model_class}, ‖A‖_2={self.model.norm:.6g})"

    def _repr_markdown_(self) -> str:
        return (f"**Theorem 4 witness** on `{self.task!r}`: {self.model_class}, "
                f"‖A‖_2 = {self.model.norm:.6g}; verify with `.symbolic()` (every length) "
                f"or `.family_check()` (exact, all of S_T)")


def instantiate(task: TriggerTask, eps: sympy.Expr) -> WitnessInstance:
    """The witness on ``task`` (``eps`` is irrelevant: its error is zero)."""
    exact = exact_relu_solution(task)
    cls = ModelClass("relu", 1, "fixed", task.positions, "token")
    return WitnessInstance(task, relu_solution(task), exact, cls)


THEOREM = Theorem(
    "theorem4", 4, TITLE, STATEMENT, PROOF, "witness",
    (ModelClass("relu", 1, "fixed", "inverse", "token"),
     ModelClass("relu", 1, "fixed", "onehot", "token")),
    "none: the witness has zero error everywhere", ("positions 'inverse' or 'onehot'",),
    (), instantiate)
