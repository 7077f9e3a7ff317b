"""What every theorem shares: the :class:`Theorem` record, the model classes it names, the
class bound it may give, and the value vectors a bound is computed from.

A theorem states its hypotheses as data: ``model_classes`` (the models its proof covers;
for a construction, the classes its witness belongs to) and ``error_hypothesis`` (where the
error must be ``<= ε``).  Whether a theorem covers a class is decided from the class's
properties (:meth:`ModelClass.is_subclass_of`), never from a theorem's or a map's name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from .._validate import as_int
from ..model import AttentionModel
from ..modelclass import ModelClass
from ..symbolic.bounds import exact_number
from ..task import TriggerTask
from ..tasks.protocol import Task, require
from .instance import Target

ONE_SOFTMAX_HEAD = ModelClass(kind="softmax", heads=1, values="learned", positions="any",
                              value_features="token")
"""One softmax head, learned token-only values, any score function."""
ONE_SOFTMAX_HEAD_FIXED = ModelClass(kind="softmax", heads=1, values="fixed", positions="any",
                                    value_features="token")
"""One softmax head with the fixed values ``U_fix``, any score function."""
ANY_SOFTMAX_HEADS_FIXED = ModelClass(kind="softmax", heads=None, values="fixed",
                                     positions="any", value_features="token")
"""Any number of softmax heads, each with ``U_fix``, any score functions."""
# An argument that uses only Σ_j α_j = 1 covers every map on the simplex.
ONE_SIMPLEX_HEAD = replace(ONE_SOFTMAX_HEAD, kind="simplex")
"""One head of any map on the simplex, learned token-only values, any score function."""
ONE_SIMPLEX_HEAD_FIXED = replace(ONE_SOFTMAX_HEAD_FIXED, kind="simplex")
"""One head of any map on the simplex with ``U_fix``, any score function."""
ANY_SIMPLEX_HEADS_FIXED = replace(ANY_SOFTMAX_HEADS_FIXED, kind="simplex")
"""Any number of heads of maps on the simplex, each with ``U_fix``, any score functions."""

def mismatches(sub: ModelClass, sup: ModelClass) -> list[str]:
    """Why ``sub`` is not a subclass of ``sup``, field by field (empty when it is)."""
    out = []
    if not set(sub.maps) <= set(sup.maps):
        out.append(f"kind: needs {sup.kind} attention, the class has {sub.kind}")
    if sup.heads is not None and sub.heads != sup.heads:
        out.append(f"heads: proved for {sup.heads} head(s), the class has {sub.heads}")
    if sup.values == "fixed" and sub.values != "fixed":
        out.append("values: proved for fixed values U_fix, the class has learned values")
    if sup.positions != "any" and sub.positions != sup.positions:
        out.append(f"positions: needs {sup.positions}, the class has {sub.positions}")
    if sup.value_features == "token" and sub.value_features != "token":
        out.append("value_features: proved for token-only values, the class has "
                   "position-dependent values")
    return out


@dataclass(frozen=True)
class CertifiedBound:
    """A proved lower bound on the largest BOS mass at non-trigger positions of any model
    of the class with error ``<= ε`` on the family: ``bound(ε)`` (0 where vacuous)."""

    name: str
    statement: str
    function: Callable[[np.ndarray], np.ndarray]

    def __call__(self, eps: Any) -> Any:
        out = np.clip(self.function(np.asarray(eps, dtype=float)), 0.0, 1.0)
        return float(out) if np.ndim(out) == 0 else out

    def __repr__(self) -> str:
        return f"CertifiedBound({self.name}: {self.statement})"


@dataclass(frozen=True)
class Theorem:
    """A statement with its hypotheses as data, and the functions that instantiate it.

    ``conclusion``: ``"bos_lower_bound"`` (instantiate -> an instantiated bound),
    ``"error_lower_bound"`` (Theorem 5) or ``"witness"`` (Theorem 4, a construction).
    ``model_classes``: for bounds, the one class every model of which the proof
    covers; for a witness, the classes the witness belongs to.  ``error_hypothesis``:
    the sequences and positions where the error must be ``<= ε``; ``conditions``:
    side conditions checked at instantiation.  ``value_map_dependent``: with learned
    values the bound is a function of the value map (instantiate with ``model=``).
    ``token_set_bound``: the bound at ``(X, t)`` depends on ``X`` only through the set
    ``{x_1..x_t}`` (so one position per set represents a whole family).

    The calling convention: ``instantiate(task, eps, **options)`` (the theorem's own
    options); ``bound(task, eps, model_class, positions)`` (the same for every bound
    theorem: the exact bounds for models of ``model_class`` at ``positions``, which a
    theorem that names its own sequences may ignore); ``class_bound(task, model_class)``
    (the worst case over the family as a float function of ``ε``, or ``None``).
    """

    name: str
    number: int
    title: str
    statement: str
    proof: str
    conclusion: str
    model_classes: tuple[ModelClass, ...]
    error_hypothesis: str
    conditions: tuple[str, ...]
    formulas: tuple[str, ...]
    _instantiate: Callable[..., Any]
    _bound: Callable[..., Any] | None = None
    _class_bound: Callable[..., CertifiedBound | None] | None = None
    value_map_dependent: bool = False
    token_set_bound: bool = False
    task_needs: tuple[tuple[str, bool], ...] = (("finite", True), ("fixed_length", False))
    """The task capabilities the instantiation reads (``(capability, value)`` pairs): by
    default a finite family with sequences of every length (the homogeneous ``X^c_n``)."""

    @property
    def model_class(self) -> ModelClass:
        """The (first) class of the statement."""
        return self.model_classes[0]

    def applies_to(self, model_class: ModelClass) -> tuple[bool, list[str]]:
        """Whether the theorem covers ``model_class``, with the reasons.

        Bounds: every model of ``model_class`` is in the theorem's class.  Witness:
        ``model_class`` contains the theorem's witness.
        """
        if not isinstance(model_class, ModelClass):
            raise TypeError(f"model_class must be a ModelClass, got {type(model_class).__name__}")
        if self.conclusion == "witness":
            for wc in self.model_classes:
                if wc.is_subclass_of(model_class):
                    return True, [f"the witness ({wc}) belongs to {model_class}"]
            reasons = [f"witness class {wc}: " + "; ".join(mismatches(wc, model_class))
                       for wc in self.model_classes]
            return False, reasons
        problems = mismatches(model_class, self.model_class)
        if problems:
            return False, problems
        reasons = [f"{model_class} is within the theorem's class ({self.model_class})"]
        if model_class.values == "learned" and self.value_map_dependent:
            reasons.append("learned values: the bound depends on the value map; "
                           "instantiate with model=... to use it")
        return True, reasons

    def instantiate(self, task: TriggerTask, eps: Any = 0, **options: Any) -> Any:
        """The theorem on ``task`` at error level ``eps`` (exact; floats convert exactly)."""
        return self._instantiate(task, self._check_eps(task, eps), **options)

    def bound(self, task: TriggerTask, eps: Any, model_class: ModelClass,
              positions: Iterable[Target] | None = None) -> Any:
        """The exact BOS bounds for models of ``model_class`` at ``positions`` (non-trigger
        ``(sequence, t)`` pairs; theorems about their own sequences ignore them)."""
        if self._bound is None:
            raise ValueError("its instance has no per-position bounds the checker reads "
                             "(use its certificate instead)")
        return self._bound(task, self._check_eps(task, eps), model_class,
                           None if positions is None else list(positions))

    def _check_eps(self, task: Task, eps: Any) -> Any:
        """``eps`` exactly, after refusing a task without the capabilities the theorem
        reads (:attr:`task_needs`)."""
        for capability, value in self.task_needs:
            require(task, capability, f"Theorem {self.number}", value)
        return _check_eps(task, eps)

    def class_bound(self, task: TriggerTask, model_class: ModelClass) -> CertifiedBound | None:
        """The largest-BOS-mass bound over the family's non-trigger positions, as a float
        function of ``ε``, for every model of ``model_class`` (``None``: none known)."""
        if self._class_bound is None or not self.applies_to(model_class)[0]:
            return None
        return self._class_bound(task, model_class)

    def __repr__(self) -> str:
        classes = " | ".join(str(c) for c in self.model_classes)
        return f"Theorem {self.number} ({self.title}): {classes}"

    def _repr_markdown_(self) -> str:
        return (f"**Theorem {self.number} ({self.title}).** {self.statement}\n\n"
                f"*Class:* {'; '.join(str(c) for c in self.model_classes)}. "
                f"*Error needed at:* {self.error_hypothesis}")


def _check_eps(task: Task, eps: Any) -> Any:
    if not isinstance(task, Task):
        raise TypeError(f"a theorem is instantiated on a task, got {type(task).__name__}")
    eps = exact_number(eps)
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    return eps


# ------------------------------------------------------------------ value maps
def values_of(task: TriggerTask, values: str, model: AttentionModel | None,
              classes: tuple[ModelClass, ModelClass] = (ONE_SOFTMAX_HEAD, ONE_SOFTMAX_HEAD_FIXED)):
    """Exact value vectors per token code, the class (``classes``: learned, fixed) and the
    value map they come from."""
    if model is not None:
        if not isinstance(model, AttentionModel):
            raise TypeError(f"model must be an AttentionModel, got {type(model).__name__}")
        if model.task != task:
            raise ValueError("model.task differs from task")
        if model.H != 1:
            raise ValueError(f"the theorem is about one head; the model has {model.H}")
        # v(x) = U e(x) exactly (floats convert exactly); the map does not enter the values
        U = [[Fraction(float(u)) for u in row] for row in model.U[0]]
        vals = [tuple(sum((u * e for u, e in zip(row, task.token_features_exact(c))),
                          Fraction(0)) for row in U) for c in range(task.n_tokens)]
        cls = classes[1] if model.values == "fixed" else classes[0]
        return vals, cls, (None if model.values == "fixed" else model.U)
    if values == "fixed":
        vals = [tuple(task.token_features_exact(c)[: task.p]) for c in range(task.n_tokens)]
        return vals, classes[1], None
    if values == "learned":
        raise ValueError("with learned values this bound depends on the value map: pass model=...")
    raise ValueError(f"unknown values {values!r}; expected 'fixed' or 'learned'")


def homogeneous(c: int, n: int) -> tuple[int, ...]:
    """``X^c_n`` after BOS: ``n`` copies of content token ``c``."""
    return (c,) * n


def lengths_of(task: TriggerTask, lengths: Iterable[int] | None, top: int) -> list[int]:
    """The lengths ``n`` a theorem about ``X^c_n`` is instantiated at (``1..top`` by default)."""
    if lengths is None:
        return list(range(1, top + 1))
    out = [as_int("length", n, minimum=1) for n in lengths]
    if any(n > top for n in out):
        raise ValueError(f"lengths must lie in [1, {top}] for this theorem on T={task.T}")
    return out
