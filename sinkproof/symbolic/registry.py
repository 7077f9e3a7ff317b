"""The theorem registry: each statement of docs/theory.md section 4 with its hypotheses as data.

``THEOREMS["theorem1"]`` ... ``["theorem6"]``.  A theorem's :class:`ModelClass` is
the set of models its proof covers; ``applies_to(model_class)`` says whether every
model of a claim's class is covered (and why not, field by field);
``instantiate(task, eps, ...)`` gives the exact bound at named positions together
with the (sequence, position) pairs where the error hypothesis is needed.  Theorem 4
is a construction: it *applies* to a class that contains its witness.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cached_property
from itertools import combinations
from typing import Any

import sympy

from .._validate import as_int
from ..constructions import relu_solution
from ..errors import SinkproofError
from ..model import AttentionModel
from ..modelclass import ModelClass
from ..task import TRIG, TriggerTask
from ..tasks.protocol import require_setting
from . import bounds as B
from .exact import ExactFamilyCheck, ExactModel, exact_check
from .instances import BosBound, InstantiatedBound, Target, errors_at, float_down
from .normbound import NormNeeded, eps_min, eps_min_expr, norm_needed
from .statements import STATEMENTS
from .theorem4 import Theorem4Verification, exact_relu_solution, verify_relu_symbolic

ONE_SOFTMAX_HEAD = ModelClass(kind="softmax", heads=1, values="learned", positions="any",
                              value_features="token")
ONE_SOFTMAX_HEAD_FIXED = ModelClass(kind="softmax", heads=1, values="fixed", positions="any",
                                    value_features="token")
ANY_SOFTMAX_HEADS_FIXED = ModelClass(kind="softmax", heads=None, values="fixed",
                                     positions="any", value_features="token")
# Theorem 3's argument uses only Σ_j α_j = 1: it covers every map on the simplex.
ONE_SIMPLEX_HEAD = replace(ONE_SOFTMAX_HEAD, kind="simplex")
ONE_SIMPLEX_HEAD_FIXED = replace(ONE_SOFTMAX_HEAD_FIXED, kind="simplex")
ANY_SIMPLEX_HEADS_FIXED = replace(ANY_SOFTMAX_HEADS_FIXED, kind="simplex")


def _mismatches(sub: ModelClass, sup: ModelClass) -> list[str]:
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
class Theorem:
    """A theorem (docs/theory.md section 4) with its hypotheses as data.

    ``conclusion``: ``"bos_lower_bound"`` (instantiate -> :class:`InstantiatedBound`),
    ``"error_lower_bound"`` (Theorem 5) or ``"witness"`` (Theorem 4, a construction).
    ``model_classes``: for bounds, the one class every model of which the proof
    covers; for a witness, the classes the witness belongs to.  ``error_hypothesis``:
    the sequences and positions where the error must be ``<= ε``; ``conditions``:
    side conditions checked at instantiation.
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
            reasons = [f"witness class {wc}: " + "; ".join(_mismatches(wc, model_class))
                       for wc in self.model_classes]
            return False, reasons
        problems = _mismatches(model_class, self.model_class)
        if problems:
            return False, problems
        reasons = [f"{model_class} is within the theorem's class ({self.model_class})"]
        if model_class.values == "learned" and self.name in ("theorem1", "theorem3"):
            reasons.append("learned values: the bound depends on the value map; "
                           "instantiate with model=... to use it")
        return True, reasons

    def instantiate(self, task: TriggerTask, eps: Any = 0, **options: Any) -> Any:
        """The theorem on ``task`` at error level ``eps`` (exact; floats convert exactly)."""
        require_setting(task, "trigger")
        eps = B.exact_number(eps)
        if eps < 0:
            raise ValueError(f"eps must be >= 0, got {eps}")
        return self._instantiate(task, eps, **options)

    def __repr__(self) -> str:
        classes = " | ".join(str(c) for c in self.model_classes)
        return f"Theorem {self.number} ({self.title}): {classes}"

    def _repr_markdown_(self) -> str:
        return (f"**Theorem {self.number} ({self.title}).** {self.statement}\n\n"
                f"*Class:* {'; '.join(str(c) for c in self.model_classes)}. "
                f"*Error needed at:* {self.error_hypothesis}")


# ------------------------------------------------------------------ value maps
def _values(task: TriggerTask, values: str, model: AttentionModel | None,
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


def _homogeneous(c: int, n: int) -> tuple[int, ...]:
    return (c,) * n


def _lengths(task: TriggerTask, lengths: Iterable[int] | None, top: int) -> list[int]:
    if lengths is None:
        return list(range(1, top + 1))
    out = [as_int("length", n, minimum=1) for n in lengths]
    if any(n > top for n in out):
        raise ValueError(f"lengths must lie in [1, {top}] for this theorem on T={task.T}")
    return out


# ------------------------------------------------------------------ theorem 1
def _theorem1(task: TriggerTask, eps: sympy.Expr, values: str = "fixed",
              model: AttentionModel | None = None,
              lengths: Iterable[int] | None = None) -> InstantiatedBound:
    vals, cls, value_map = _values(task, values, model)
    fixed = cls.values == "fixed"
    items, none = [], []
    for c in range(task.k):
        norm = B.norm_exact(vals[c])
        for n in _lengths(task, lengths, task.T):
            X = _homogeneous(c, n)
            if norm == 0:
                none.append(((X, n), "the value v_c is zero"))
                continue
            bound = (B.THEOREM1_FIXED.exact(eps=eps, content_norm=norm) if fixed
                     else B.THEOREM1_LEARNED.exact(eps=eps, value_norm=norm))
            items.append(BosBound(((X, n),), bound, ((X, 0), (X, n)),
                                  f"‖{'c' if fixed else 'v_c'}‖ = {sympy.sstr(norm)}"))
    return InstantiatedBound("theorem1", task, eps, cls, tuple(items), tuple(none),
                             value_map=value_map)


# ------------------------------------------------------------------ theorem 2
def _theorem2(task: TriggerTask, eps: sympy.Expr,
              lengths: Iterable[int] | None = None) -> InstantiatedBound:
    if task.T < 2:
        raise ValueError("Theorem 2 needs T >= 2 (the sequence T^c_m has length m + 1)")
    content = [tuple(task.token_features_exact(c)[: task.p]) for c in range(task.k)]
    items, none = [], []
    for c, d in combinations(range(task.k), 2):
        gap = B.ray_gap(content[c], content[d])
        for m in _lengths(task, lengths, task.T - 1):
            Xc, Xd = _homogeneous(c, m), _homogeneous(d, m)
            targets = ((Xc, m), (Xd, m))
            if gap.exact <= 2 * eps:
                none.append((targets[0], f"g(c{c}, c{d}) = {sympy.sstr(gap.exact)} <= 2ε"))
                continue
            needs = ((Xc, 0), (Xc, m), (Xd, m), ((*Xc, TRIG), m + 1), ((*Xd, TRIG), m + 1))
            bound = B.THEOREM2_PAIR.exact(eps=eps, gap=gap.exact)
            items.append(BosBound(targets, bound, needs, f"g = {sympy.sstr(gap.exact)}"))
    return InstantiatedBound("theorem2", task, eps, ONE_SOFTMAX_HEAD, tuple(items), tuple(none))


# ------------------------------------------------------------------ theorem 3
def _default_positions(task: TriggerTask) -> list[Target]:
    """One representative per set of distinct tokens seen, with and without a trigger first."""
    if task.k > 8:
        raise ValueError(f"k={task.k} content vectors: name the positions (positions=...)")
    out = []
    for size in range(1, min(task.k, task.T) + 1):
        for subset in combinations(range(task.k), size):
            out.append((subset, size))
            if size < task.T:
                out.append(((TRIG, *subset), size + 1))
    return out


def _theorem3(task: TriggerTask, eps: sympy.Expr, values: str = "fixed",
              model: AttentionModel | None = None,
              positions: Iterable[Target] | None = None) -> InstantiatedBound:
    vals, cls, value_map = _values(task, values, model, (ONE_SIMPLEX_HEAD, ONE_SIMPLEX_HEAD_FIXED))
    fixed = cls.values == "fixed"
    formula = B.THEOREM3_FIXED if fixed else B.THEOREM3_LEARNED

    def at(seq: tuple[int, ...], t: int) -> BosBound | tuple[Target, str]:
        codes = [int(x) for x in task.encode(seq)]
        if not 1 <= t <= len(codes):
            raise ValueError(f"position {t} is outside the sequence {list(seq)}")
        if codes[t - 1] == task.trig_code:
            return ((seq, t), "a trigger position: Theorem 3 is about non-trigger positions")
        hull = B.hull_distance([vals[x] for x in codes[:t]])
        if hull.d_squared == 0:
            return ((seq, t), "0 lies in the hull of the values seen so far: no bound")
        bound = formula.exact(eps=eps, hull_distance=hull.exact)
        return BosBound(((seq, t),), bound, ((seq, 0), (seq, t)),
                        f"d_t = {sympy.sstr(hull.exact)}")

    items, none = [], []
    for seq, t in (_default_positions(task) if positions is None else positions):
        got = at(tuple(int(x) for x in seq), int(t))
        (items if isinstance(got, BosBound) else none).append(got)

    def extend(seq: tuple[int, ...], t: int) -> BosBound | None:
        got = at(seq, t)
        return got if isinstance(got, BosBound) else None

    return InstantiatedBound("theorem3", task, eps, cls, tuple(items), tuple(none),
                             extend=extend, value_map=value_map)


# ------------------------------------------------------------------ theorem 7
def _theorem7(task: TriggerTask, eps: sympy.Expr,
              positions: Iterable[Target] | None = None) -> InstantiatedBound:
    """Theorem 3's fixed-value bound, for every head of a model with any number of heads."""
    one_head = _theorem3(task, eps, values="fixed", positions=positions)
    return replace(one_head, theorem="theorem7", model_class=ANY_SIMPLEX_HEADS_FIXED)


# ------------------------------------------------------------------ theorem 4
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


def _theorem4(task: TriggerTask, eps: sympy.Expr) -> WitnessInstance:
    exact = exact_relu_solution(task)
    cls = ModelClass("relu", 1, "fixed", task.positions, "token")
    return WitnessInstance(task, relu_solution(task), exact, cls)


# ------------------------------------------------------------------ theorem 5
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


def _theorem5(task: TriggerTask, eps: sympy.Expr) -> NormBoundInstance:
    return NormBoundInstance(task, eps, ONE_SOFTMAX_HEAD_FIXED, eps_min_expr(task))


# ------------------------------------------------------------------ theorem 6
def _theorem6(task: TriggerTask, eps: sympy.Expr, **options: Any) -> Any:
    try:
        from ..sinkmap import sink_map
    except ImportError as exc:
        raise SinkproofError(f"Theorem 6 is instantiated by sinkproof.sink_map, "
                             f"which is not available: {exc}") from None
    return sink_map(task, Fraction(int(eps.p), int(eps.q)), values="fixed", **options)


def _theorem(name: str, number: int, conclusion: str, classes: tuple[ModelClass, ...],
             error: str, conditions: tuple[str, ...], formulas: tuple[str, ...],
             fn: Callable[..., Any]) -> Theorem:
    title, statement, proof = STATEMENTS[name]
    return Theorem(name, number, title, statement, proof, conclusion, classes, error,
                   conditions, formulas, fn)


THEOREMS: dict[str, Theorem] = {t.name: t for t in (
    _theorem("theorem1", 1, "bos_lower_bound", (ONE_SOFTMAX_HEAD,),
             "position 0 and position n of X^c_n", ("v_c != 0",),
             ("theorem1_learned", "theorem1_fixed"), _theorem1),
    _theorem("theorem2", 2, "bos_lower_bound", (ONE_SOFTMAX_HEAD,),
             "position 0, position m of X^c_m and X^c'_m, position m+1 of T^c_m and T^c'_m",
             ("g(c, c') > 2ε", "m + 1 <= T"), ("theorem2_pair", "theorem2_nonbos"), _theorem2),
    _theorem("theorem3", 3, "bos_lower_bound", (ONE_SIMPLEX_HEAD,),
             "position 0 and the (non-trigger) position t of X",
             ("x_t is not the trigger", "d_t > 0"), ("theorem3_learned", "theorem3_fixed"),
             _theorem3),
    _theorem("theorem4", 4, "witness",
             (ModelClass("relu", 1, "fixed", "inverse", "token"),
              ModelClass("relu", 1, "fixed", "onehot", "token")),
             "none: the witness has zero error everywhere", ("positions 'inverse' or 'onehot'",),
             (), _theorem4),
    _theorem("theorem5", 5, "error_lower_bound", (ONE_SOFTMAX_HEAD_FIXED,),
             "none: a lower bound on the error of every model with ‖A‖_2 <= B",
             ("‖A‖_2 <= B",), ("eps_min",), _theorem5),
    _theorem("theorem6", 6, "bos_lower_bound", (ONE_SOFTMAX_HEAD_FIXED,),
             "every (sequence, position) of the family in the program", (),
             (), _theorem6),
    _theorem("theorem7", 7, "bos_lower_bound", (ANY_SIMPLEX_HEADS_FIXED,),
             "the (non-trigger) position t of X",
             ("x_t is not the trigger", "d_t > 0"), ("theorem3_fixed",), _theorem7),
)}


def theorem(name: str | int) -> Theorem:
    """``THEOREMS`` by name (``"theorem3"``) or number (``3``)."""
    key = f"theorem{name}" if isinstance(name, int) else name
    if key not in THEOREMS:
        raise ValueError(f"unknown theorem {name!r}; expected one of {', '.join(THEOREMS)}")
    return THEOREMS[key]


__all__ = ["THEOREMS", "NormBoundInstance", "Theorem", "WitnessInstance", "theorem"]
