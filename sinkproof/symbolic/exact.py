"""Exact rational evaluation of an attention model, with no floating point at all.

A model with rational parameters (``A``, ``U`` as :class:`fractions.Fraction`) on a
task with rational features has rational scores.  What is exact:

* **ReLU**: scores, weights ``max(0, s)``, outputs, targets and squared errors are
  exact rationals; an error or a BOS weight is decided with no rounding.
* **softmax**: scores are exact rationals and the weights are the exact SymPy
  expressions ``exp(s_j - s_0) / Σ_i exp(s_i - s_0)``; outputs, BOS masses,
  ``log(1 - α_0)`` and errors are returned as rigorous enclosures (mpmath interval
  arithmetic at a chosen precision), so a decision such as "error ``<= ε``" is
  certified when the whole interval lies on one side.

Float parameters convert exactly (``Fraction(float)`` is the float's exact value),
so :meth:`ExactModel.from_model` evaluates a float model without rounding.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np

from .._validate import choice
from ..exact_numbers import exact
from ..model import AttentionModel
from ..task import TriggerTask
from ..tasks.protocol import require

if TYPE_CHECKING:
    import sympy

Vector = tuple[Fraction, ...]

EXACT_KINDS = ("softmax", "relu")
"""The maps this exact evaluator implements."""


def as_fraction(x: Any) -> Fraction:
    """An exact rational: a float (Python's or NumPy's) by its exact binary value (a
    parameter or a measured error is that value); anything else as
    :func:`sinkproof.exact_numbers.exact` reads it (int, Fraction, Decimal, SymPy
    Rational, ``"1/20"``, ``"0.05"``)."""
    if isinstance(x, (np.floating, np.integer)):
        x = x.item()
    if isinstance(x, float):
        if not np.isfinite(x):
            raise ValueError(f"parameters must be finite, got {x}")
        return Fraction(x)
    return exact(x, "a parameter")


def _matrix(name: str, value: Any, shape: tuple[int, ...]) -> tuple:
    arr = np.array(value, dtype=object)
    if arr.ndim == len(shape) - 1:
        arr = arr[None]
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape[1:]} or {shape}, got {arr.shape}")
    flat = [as_fraction(v) for v in arr.ravel()]
    return np.array(flat, dtype=object).reshape(shape)


def interval_context(prec: int) -> Any:
    """A private mpmath interval context with ``prec`` bits (the global one is left alone)."""
    ctx = mpmath.ctx_iv.MPIntervalContext()
    ctx.prec = int(prec)
    return ctx


class ExactModel:
    """An attention model with rational parameters: ``A`` ``(H, D, D)``, ``U`` ``(H, p, p+3)``.

    ``U=None`` means fixed values ``U_fix``.  Entries may be ints, Fractions, SymPy
    Rationals, ``"p/q"`` strings or floats (converted exactly).
    """

    def __init__(self, task: TriggerTask, kind: str, A: Any, U: Any = None) -> None:
        require(task, "has_positions", "an exact one-layer model (U of shape (H, p, p+3))")
        self.task = task
        self.kind = choice("attention kind", kind, EXACT_KINDS)
        a = np.array(A, dtype=object)
        H = a.shape[0] if a.ndim == 3 else 1
        self.A = _matrix("A", A, (H, task.D, task.D))
        if U is None:
            fix = [[Fraction(int(i == j)) for j in range(task.p + 3)] for i in range(task.p)]
            U = [fix] * H
        self.U = _matrix("U", U, (H, task.p, task.p + 3))
        self._query_rows: dict[tuple[int, int, int], Vector] = {}
        self._scores: dict[tuple[int, ...], Fraction] = {}
        tokens = [task.token_features_exact(c) for c in range(task.n_tokens)]
        self._content = [tuple(e[: task.p]) for e in tokens]
        self._values = [[tuple(_dot(row, e) for row in self.U[h]) for e in tokens]
                        for h in range(H)]
        self._tokens = tokens

    @classmethod
    def from_model(cls, model: AttentionModel) -> ExactModel:
        """The exact rational twin of a float model (every float converted exactly)."""
        if not isinstance(model, AttentionModel):
            raise TypeError(f"model must be an AttentionModel, got {type(model).__name__}")
        return cls(model.task, model.kind, model.A, model.U)

    @property
    def H(self) -> int:
        """Number of heads."""
        return self.A.shape[0]

    def features(self, code: int, t: int) -> Vector:
        """``φ = [e(x); π(t)]`` as exact rationals."""
        return tuple(self._tokens[code]) + tuple(self.task.position_features_exact(t))

    def value(self, h: int, code: int) -> Vector:
        """``v^h(x) = U_h e(x)`` exactly."""
        return self._values[h][code]

    def content(self, code: int) -> Vector:
        """``c(x)`` exactly (zero for the trigger and BOS)."""
        return self._content[code]

    def score(self, h: int, query: int, t: int, key: int, j: int) -> Fraction:
        """``s^h = φ(query, t)^T A_h φ(key, j)`` exactly."""
        key5 = (h, query, t, key, j)
        if key5 in self._scores:
            return self._scores[key5]
        row = self._query_rows.get((h, query, t))
        if row is None:
            phi = self.features(query, t)
            row = tuple(sum((phi[d] * self.A[h, d, e] for d in range(len(phi)) if phi[d]),
                            Fraction(0)) for e in range(len(phi)))
            self._query_rows[(h, query, t)] = row
        self._scores[key5] = _dot(row, self.features(key, j))
        return self._scores[key5]

    def forward_last(self, codes: Sequence[int]) -> ExactPosition:
        """The model at the last position ``t = len(codes)`` of the prefix ``BOS, codes``."""
        keys = (self.task.bos_code, *(int(c) for c in codes))
        t = len(keys) - 1
        scores = tuple(tuple(self.score(h, keys[-1], t, keys[j], j) for j in range(t + 1))
                       for h in range(self.H))
        return ExactPosition(self, keys, scores, exact_target(self, keys))

    def forward(self, seq: Sequence[int]) -> list[ExactPosition]:
        """Every position ``0..n`` of a user-facing sequence."""
        codes = [int(c) for c in self.task.encode(seq)]
        return [self.forward_last(codes[:t]) for t in range(len(codes) + 1)]

    def __repr__(self) -> str:
        return f"ExactModel({self.kind}, H={self.H}, task={self.task!r})"


def _dot(a: Sequence[Fraction], b: Sequence[Fraction]) -> Fraction:
    return sum((x * y for x, y in zip(a, b) if x and y), Fraction(0))


def exact_target(model: ExactModel, keys: Sequence[int]) -> Vector:
    """``y_t`` at the last position of ``keys`` (BOS first), exactly (the task's own)."""
    return model.task.exact_prefix_target(keys[1:])


@dataclass(frozen=True)
class ExactPosition:
    """The model at one position ``t`` (the last of ``keys``): exact scores per head and target."""

    model: ExactModel
    keys: tuple[int, ...]
    scores: tuple[tuple[Fraction, ...], ...]
    target: Vector

    @property
    def t(self) -> int:
        return len(self.keys) - 1

    # ------------------------------------------------------------------ ReLU
    def relu_weights(self) -> tuple[tuple[Fraction, ...], ...]:
        """``max(0, s)`` per head and key, exactly."""
        self._need("relu")
        return tuple(tuple(max(Fraction(0), s) for s in row) for row in self.scores)

    def relu_output(self) -> Vector:
        """``f_t`` exactly (ReLU)."""
        out = [Fraction(0)] * self.model.task.p
        for h, row in enumerate(self.relu_weights()):
            for w, key in zip(row, self.keys):
                if w:
                    v = self.model.value(h, key)
                    out = [o + w * vi for o, vi in zip(out, v)]
        return tuple(out)

    def relu_error_sq(self) -> Fraction:
        """``||f_t - y_t||²`` exactly (ReLU)."""
        return sum(((f - y) ** 2 for f, y in zip(self.relu_output(), self.target)), Fraction(0))

    # --------------------------------------------------------------- softmax
    def softmax_weights(self) -> list[list[sympy.Expr]]:
        """``α_{tj} = exp(s_j - s_0) / Σ_i exp(s_i - s_0)`` per head, exact SymPy expressions."""
        import sympy  # only this exact form needs it; the module loads without SymPy

        self._need("softmax")
        out = []
        for row in self.scores:
            terms = [sympy.exp(sympy.Rational(s - row[0])) for s in row]
            z = sympy.Add(*terms)
            out.append([term / z for term in terms])
        return out

    def enclosure(self, prec: int = 128) -> IntervalPosition:
        """Rigorous interval enclosures of weights, output, error and ``log(1-α_0)``."""
        ctx = interval_context(prec)
        p = self.model.task.p
        out = [ctx.mpf(0)] * p
        bos, log_nonbos = [], []
        for h, row in enumerate(self.scores):
            if self.model.kind == "relu":
                w = [_iv(ctx, max(Fraction(0), s)) for s in row]
                total_rest = sum(w[1:], ctx.mpf(0))
                bos.append(w[0])
                log_nonbos.append(ctx.log(total_rest) if self.t >= 1 and _positive(total_rest)
                                  else ctx.mpf("-inf"))
            else:
                top = max(row)
                e = [ctx.exp(_iv(ctx, s - top)) for s in row]
                z = sum(e, ctx.mpf(0))
                w = [x / z for x in e]
                bos.append(w[0])
                if self.t >= 1:
                    log_nonbos.append(ctx.log(sum(e[1:], ctx.mpf(0))) - ctx.log(z))
                else:
                    log_nonbos.append(ctx.mpf("-inf"))
            for wj, key in zip(w, self.keys):
                v = self.model.value(h, key)
                out = [o + wj * _iv(ctx, vi) for o, vi in zip(out, v)]
        err_sq = sum(((o - _iv(ctx, y)) ** 2 for o, y in zip(out, self.target)), ctx.mpf(0))
        return IntervalPosition(tuple(out), ctx.sqrt(err_sq), tuple(bos), tuple(log_nonbos))

    def _need(self, kind: str) -> None:
        if self.model.kind != kind:
            raise ValueError(f"this is a {self.model.kind} model; {kind} quantities do not apply")


def _iv(ctx: Any, x: Fraction) -> Any:
    return ctx.mpf(x.numerator) / ctx.mpf(x.denominator)


def _float_up(x: Any) -> float:
    """A float ``>=`` the upper end of interval ``x`` (rounding cannot make it smaller)."""
    return math.nextafter(float(x.b), math.inf)


def _positive(x: Any) -> bool:
    return x.b > 0


@dataclass(frozen=True)
class IntervalPosition:
    """Rigorous enclosures at one position: output, error, BOS mass and ``log(1-α_0)`` per head."""

    output: tuple
    error: Any
    bos_mass: tuple
    log_nonbos: tuple


@dataclass(frozen=True)
class ExactFamilyCheck:
    """Exact verification of a model over a family of positions.

    ``max_error_sq`` (ReLU: an exact rational) / ``max_error_upper`` (softmax: a
    rigorous upper bound); ``max_bos_weight``: the largest BOS weight over positions
    ``t >= 1`` (ReLU: exact; softmax: a rigorous upper bound); ``worst``: where the
    error is largest; ``n_prefixes``: distinct prefixes evaluated.
    """

    kind: str
    exact: bool
    max_error_sq: Fraction | None
    max_error_upper: float
    max_bos_weight: Fraction | float
    worst: tuple[tuple[int, ...], int]
    n_prefixes: int

    @property
    def zero_error(self) -> bool:
        """Every output equals its target exactly (decidable for ReLU only)."""
        return self.exact and self.max_error_sq == 0

    @property
    def no_bos_weight(self) -> bool:
        """Every BOS weight at ``t >= 1`` is exactly zero (decidable for ReLU only)."""
        return self.exact and self.max_bos_weight == 0

    @property
    def holds(self) -> bool:
        """Zero error and zero BOS weight everywhere, exactly (Theorem 4's claim)."""
        return self.zero_error and self.no_bos_weight

    def __repr__(self) -> str:
        err = f"max_error²={self.max_error_sq}" if self.exact else (
            f"max_error<={self.max_error_upper:.6g}")
        return (f"ExactFamilyCheck({self.kind}, {err}, max_bos_weight={self.max_bos_weight}, "
                f"worst={list(self.worst[0])}[t={self.worst[1]}], {self.n_prefixes} prefixes, "
                f"holds={self.holds})")

    def _repr_markdown_(self) -> str:
        return (f"| exact | zero error | no BOS weight | prefixes |\n|---|---|---|---|\n"
                f"| {self.exact} | {self.zero_error} | {self.no_bos_weight} | {self.n_prefixes} |")


def distinct_prefixes(task: TriggerTask, sequences: Iterable[Sequence[int]] | None = None
                      ) -> Iterator[tuple[int, ...]]:
    """Every distinct non-empty prefix (as codes) of ``sequences``, or of the whole family."""
    if sequences is None:
        for t in range(1, task.T + 1):
            for block in task.prefix_blocks(t):
                yield from (tuple(int(c) for c in row) for row in block.codes)
        return
    seen: set[tuple] = set()
    for seq in sequences:
        codes = tuple(int(c) for c in task.encode(seq))
        for t in range(1, len(codes) + 1):
            if codes[:t] not in seen:
                seen.add(codes[:t])
                yield codes[:t]


def exact_check(
    model: ExactModel | AttentionModel,
    sequences: Iterable[Sequence[int]] | None = None,
    prec: int = 128,
) -> ExactFamilyCheck:
    """Evaluate ``model`` exactly at every position of ``sequences`` (default: the whole family).

    ReLU models are decided exactly; softmax models get rigorous interval bounds.
    """
    if isinstance(model, AttentionModel):
        model = ExactModel.from_model(model)
    if not isinstance(model, ExactModel):
        raise TypeError(
            f"model must be an ExactModel or AttentionModel, got {type(model).__name__}")
    task = model.task
    exact = model.kind == "relu"
    first = model.forward_last(())
    worst_key: tuple = ((), 0)
    if exact:
        worst_sq = first.relu_error_sq()
        max_bos: Any = Fraction(0)
    else:
        worst_up = _float_up(first.enclosure(prec).error)
        max_bos = 0.0
    n = 1
    for codes in distinct_prefixes(task, sequences):
        pos = model.forward_last(codes)
        n += 1
        if exact:
            err = pos.relu_error_sq()
            bos = max(row[0] for row in pos.relu_weights())
            if err > worst_sq:
                worst_sq, worst_key = err, (codes, len(codes))
        else:
            enc = pos.enclosure(prec)
            up = _float_up(enc.error)
            bos = max(_float_up(b) for b in enc.bos_mass)
            if up > worst_up:
                worst_up, worst_key = up, (codes, len(codes))
        max_bos = max(max_bos, bos)
    worst = (task.decode(worst_key[0]) if worst_key[0] else (), worst_key[1])
    if exact:
        ctx = interval_context(prec)
        upper = _float_up(ctx.sqrt(_iv(ctx, worst_sq)))
        return ExactFamilyCheck("relu", True, worst_sq, upper, max_bos, worst, n)
    return ExactFamilyCheck("softmax", False, None, worst_up, max_bos, worst, n)
