"""Stacks of ReLU-family heads verified with no floating point: exactly on any finite
task's family, and symbolically in the length and the content (SymPy) on a task whose
tokens are kind flags plus content (the paper's (P3)).

A stack of ReLU-family heads (``relu``: ``max(0, s)``; ``relu_length``:
``max(0, s)/max(t, 1)``) with rational parameters on rational tokens has rational
outputs, so zero error and zero BOS weight are decided exactly:

* :func:`verify_stack_exact` runs the stack in :class:`fractions.Fraction` arithmetic on
  every prefix of a finite task's family (``task.prefix_blocks``,
  ``task.token_features_exact``) and compares with its exact targets
  (``task.exact_prefix_target``).
* :func:`verify_stack_relu_symbolic` decides the same for **every** length ``L`` and
  **every** content: the tokens are BOS ``e_0``, a content token ``[0, 0, c, 1]`` and a
  trigger ``[0, 1, q, 0]`` with free real symbols ``c, q``.  If every first-layer score
  depends only on the kinds of query and key (checked), a head's output at a query is
  fixed by how many keys of each kind it sees and the sum of their vectors, so four
  cases with symbolic positions cover every position of every sequence: BOS (``t = 0``),
  a content query before the trigger (``t = a + 1``), the trigger (``j = b + 2``), a
  content query after it (``t = b + 3``), with key sums as free symbols.  Later layers
  must have zero score and output maps (checked), so in a residual stack they add
  nothing (without residuals the last of them outputs 0).  Nothing here is sampled.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from ..stack import StackModel
from ..tasks.protocol import require
from .theorem4 import Identity, _decide

EXACT_MAPS = ("relu", "relu_length")

GROUPS = {
    "weights_uniform": "every first-layer score depends only on the query and key kinds",
    "bos_weights_zero": "every first-layer BOS weight is zero",
    "later_layers_inactive": "every later layer has zero scores and a zero output map",
    "position0": "the output at BOS equals its target",
    "before_trigger": "the output equals the target at content positions before the trigger",
    "trigger": "the output equals the target (the mean, trigger included) at the trigger",
    "after_trigger": "the output equals the target at content positions after the trigger",
}


def _fractions(a: np.ndarray) -> list:
    """A float array as nested lists of exact Fractions."""
    return np.vectorize(lambda v: Fraction(float(v)), otypes=[object])(a).tolist()


def _check_exact_maps(model: StackModel) -> None:
    if not isinstance(model, StackModel):
        raise TypeError(f"model must be a StackModel, got {type(model).__name__}")
    for layer in model.layers:
        for head in layer.heads:
            if head.map.name not in EXACT_MAPS:
                raise ValueError(f"exact evaluation covers the maps {', '.join(EXACT_MAPS)}; "
                                 f"this stack has {head.map.name!r}")


class ExactStack:
    """A ReLU-family stack with every parameter converted exactly to a Fraction."""

    def __init__(self, model: StackModel) -> None:
        _check_exact_maps(model)
        self.model = model
        self.layers = []
        for layer in model.layers:
            heads = [(h.map.name, _fractions(h.score_matrix), _fractions(h.V))
                     for h in layer.heads]
            W_O = None if layer.W_O is None else _fractions(layer.W_O)
            self.layers.append((heads, W_O))

    def forward(self, x: list[list[Fraction]]) -> tuple[list[list[Fraction]], list]:
        """Outputs at every row of ``x`` and the weights ``[layer][head][t][j]``, exactly."""
        weights = []
        for heads, W_O in self.layers:
            outs, wl = [], []
            for name, A, V in heads:
                w = _relu_weights(x, A, name)
                vals = [_matvec(V, row) for row in x]
                outs.append([_comb(w[t], vals) for t in range(len(x))])
                wl.append(w)
            rows = []
            for t in range(len(x)):
                if W_O is None:
                    rows.append([sum(c, Fraction(0)) for c in zip(*(o[t] for o in outs))])
                else:
                    rows.append(_matvec(W_O, [v for o in outs for v in o[t]]))
            x = ([[a + b for a, b in zip(r, o)] for r, o in zip(x, rows)]
                 if self.model.residual else rows)
            weights.append(wl)
        return x, weights


def _matvec(M: list[list[Fraction]], v: list[Fraction]) -> list[Fraction]:
    return [sum((a * b for a, b in zip(row, v) if a and b), Fraction(0)) for row in M]


def _comb(w: list[Fraction], vals: list[list[Fraction]]) -> list[Fraction]:
    out = [Fraction(0)] * len(vals[0])
    for wj, v in zip(w, vals):
        if wj:
            out = [o + wj * vi for o, vi in zip(out, v)]
    return out


def _relu_weights(x: list[list[Fraction]], A: list[list[Fraction]], name: str) -> list:
    rows = []
    for t, q in enumerate(x):
        qa = [sum((q[d] * A[d][e] for d in range(len(q)) if q[d]), Fraction(0))
              for e in range(len(q))]
        div = max(t, 1) if name == "relu_length" else 1
        rows.append([max(Fraction(0), sum((a * b for a, b in zip(qa, k) if a and b),
                                          Fraction(0))) / div for k in x[: t + 1]]
                    + [Fraction(0)] * (len(x) - t - 1))
    return rows


@dataclass(frozen=True)
class ExactStackCheck:
    """An exhaustive exact check of a stack on a finite family.

    ``max_error_sq``: the largest ``||f_t - y_t||²`` over every prefix's last position
    (position 0 included); ``max_bos_weight``: the largest BOS weight over every layer,
    head and position ``t >= 1``; both exact rationals.  ``worst``: a prefix of codes
    where ``max_error_sq`` occurs.
    """

    max_error_sq: Fraction
    max_bos_weight: Fraction
    worst: tuple[int, ...]
    n_prefixes: int
    n_sequences: int

    @property
    def zero_error(self) -> bool:
        """``f_t = y_t`` exactly at every position of every sequence of the family."""
        return self.max_error_sq == 0

    @property
    def zero_bos(self) -> bool:
        """Every BOS weight at positions ``t >= 1`` is exactly 0."""
        return self.max_bos_weight == 0

    def __repr__(self) -> str:
        return (f"ExactStackCheck(zero_error={self.zero_error}, zero_bos={self.zero_bos}, "
                f"max_error²={self.max_error_sq}, max BOS weight={self.max_bos_weight}; "
                f"{self.n_prefixes} prefixes, {self.n_sequences} sequences)")


def verify_stack_exact(model: StackModel) -> ExactStackCheck:
    """Run a ReLU-family stack exactly on every prefix of its (finite) task's family."""
    _check_exact_maps(model)
    task = model.task
    if not task.finite:
        raise ValueError("exact evaluation needs a finite content set")
    exact = ExactStack(model)
    rows = {c: task.token_features_exact(c) for c in range(task.n_tokens)}
    worst_err, worst, bos_max, count = Fraction(-1), (), Fraction(0), 0

    def visit(codes: tuple[int, ...]) -> None:
        nonlocal worst_err, worst, bos_max, count
        x = [rows[task.bos_code]] + [rows[c] for c in codes]
        out, w = exact.forward(x)
        y = task.exact_prefix_target(codes)
        err = sum(((a - b) ** 2 for a, b in zip(out[-1], y)), Fraction(0))
        if err > worst_err:
            worst_err, worst = err, codes
        if codes:
            bos_max = max([bos_max] + [wh[-1][0] for wl in w for wh in wl])
        count += 1

    visit(())
    for t in range(1, task.max_depth + 1):
        for block in task.prefix_blocks(t):
            for row in block.codes:
                visit(tuple(int(c) for c in row))
    return ExactStackCheck(worst_err, bos_max, worst, count, task.n_sequences)


# ---------------------------------------------------------------------- symbolic

@dataclass(frozen=True)
class StackReluVerification:
    """The symbolic check of a ReLU-family stack on a single-trigger task without
    positions (the paper's): every identity with
    its case, by group (see ``GROUPS``); ``holds`` when every group holds, which means
    zero error and zero first-layer BOS weight at every position, for every length and
    every content.  The hypotheses (content-free first-layer scores, inactive later
    layers) are sufficient, not necessary: ``holds = False`` means "not established
    this way", and :func:`verify_stack_exact` decides a finite instance either way."""

    n: int
    residual: bool
    identities: tuple[Identity, ...]

    def group(self, name: str) -> bool:
        """Every identity of the group holds (and there is at least one)."""
        items = [i for i in self.identities if i.group == name]
        return bool(items) and all(i.holds for i in items)

    @property
    def holds(self) -> bool:
        """Every group holds."""
        return all(self.group(g) for g in GROUPS)

    @property
    def failures(self) -> list[Identity]:
        """The identities that do not hold."""
        return [i for i in self.identities if not i.holds]

    def __repr__(self) -> str:
        flags = ", ".join(f"{g}={self.group(g)}" for g in GROUPS)
        return (f"{type(self).__name__}(n={self.n}, residual={self.residual}, "
                f"holds={self.holds}: {flags}; {len(self.identities)} identities)")


def _rational_matrix(a: np.ndarray) -> sympy.Matrix:
    return sympy.Matrix([[sympy.Rational(Fraction(float(v))) for v in row] for row in a])


def verify_stack_relu_symbolic(model: StackModel) -> StackReluVerification:
    """Decide, symbolically in every position (hence every ``L``) and in the content,
    that a ReLU-family stack has zero error and zero BOS weight on its task: one trigger
    per sequence, no positional features, tokens BOS ``e_0``, content ``[0, 0, c, 1]`` and
    trigger ``[0, 1, q, 0]`` (the paper's layout; the four cases of the module docstring)."""
    _check_exact_maps(model)
    task = model.task
    require(task, "has_positions", "the symbolic stack check", value=False)
    require(task, "single_trigger", "the symbolic stack check")
    n, k = task.n, task.n - 3
    u = sympy.Matrix(sympy.symbols(f"u1:{k + 1}", real=True))  # a query's content
    v = sympy.Matrix(sympy.symbols(f"v1:{k + 1}", real=True))  # a key's content
    c = sympy.Matrix(sympy.symbols(f"c1:{k + 1}", real=True))  # a content query's content
    q = sympy.Matrix(sympy.symbols(f"q1:{k + 1}", real=True))  # the trigger's content
    R = sympy.Matrix(sympy.symbols(f"R1:{k + 1}", real=True))  # a sum of other contents
    a, b = sympy.symbols("a b", integer=True, nonnegative=True)
    content_symbols = set(u) | set(v)

    def token(kind: str, content: Any = None, count: Any = 1) -> sympy.Matrix:
        """The token of ``kind``, or the sum of ``count`` such tokens (``content`` summed)."""
        x = sympy.zeros(n, 1)
        if kind == "bos":
            x[0] = count
        else:
            x[1 if kind == "trigger" else n - 1] = count
            x[2 : n - 1, 0] = content
        return x

    ids: list[Identity] = []
    first, *later = model.layers
    for li, layer in enumerate(later, start=1):
        for hi, head in enumerate(layer.heads):
            A = _rational_matrix(head.score_matrix)
            ids.append(Identity("later_layers_inactive", f"layer {li} head {hi}: A = 0",
                                A, sympy.zeros(n, n), A.is_zero_matrix is True))
        out_map = (_rational_matrix(layer.W_O) if layer.W_O is not None
                   else sympy.Matrix.hstack(*(_rational_matrix(h.V).T for h in layer.heads)).T)
        ids.append(Identity("later_layers_inactive", f"layer {li}: output map = 0", out_map,
                            sympy.zeros(*out_map.shape), out_map.is_zero_matrix is True))
    if not later:
        ids.append(Identity("later_layers_inactive", "one layer: nothing to check",
                            sympy.Integer(0), sympy.Integer(0), True))

    # layer 0: per head the content-free score of every (query kind, key kind) and the
    # value-and-output map M_h = W_O^h V_h
    kinds = ("bos", "content", "trigger")
    heads = []
    for hi, head in enumerate(first.heads):
        A = _rational_matrix(head.score_matrix)
        score = {}
        for qk in kinds:
            for kk in kinds:
                s = sympy.expand((token(qk, u).T * A * token(kk, v))[0])
                ids.append(Identity("weights_uniform", f"head {hi}: {qk} query, {kk} key",
                                    s, s.subs({x: 0 for x in content_symbols}),
                                    not (s.free_symbols & content_symbols)))
                score[qk, kk] = s
        lo = hi * head.dv
        WO = (_rational_matrix(first.W_O[:, lo : lo + head.dv]) if first.W_O is not None
              else sympy.eye(head.dv))
        heads.append((hi, head.map.name, score, WO * _rational_matrix(head.V)))

    def output(qk: str, t: Any, keys: dict[str, sympy.Matrix]) -> sympy.Matrix:
        """The stack's output at a ``qk`` query at position ``t`` whose keys of each kind
        sum to ``keys[kind]``: the layer-0 heads' outputs (plus the query with residuals)."""
        total = sympy.zeros(n, 1)
        for hi, name, score, M in heads:
            div = sympy.Max(t, 1) if name == "relu_length" else 1
            for kk, vec in keys.items():
                w = sympy.simplify(sympy.Max(0, score[qk, kk]) / div)
                if kk == "bos":
                    ids.append(Identity("bos_weights_zero", f"head {hi}: {qk} query at t={t}",
                                        w, sympy.Integer(0), w == 0))
                total += w * (M * vec)
        return total

    res = model.residual
    zero = sympy.zeros(n, 1)
    bos = token("bos")

    def case(group: str, name: str, qk: str, query: sympy.Matrix, t: Any,
             keys: dict[str, sympy.Matrix], target: sympy.Matrix) -> None:
        f = output(qk, t, keys)
        if later and not res:
            f = zero  # an inactive last layer outputs 0 whatever it reads
        f = f + (query if res else zero)
        goal = target + (query if res else zero)
        ids.append(Identity(group, name, f, goal, _decide(f, goal)))

    case("position0", "t=0", "bos", bos, 0, {"bos": bos}, zero)
    t = a + 1  # before the trigger: a other content keys (sum R) and the query itself
    case("before_trigger", "content query at t=a+1", "content", token("content", c), t,
         {"bos": bos, "content": token("content", R + c, t)}, zero)
    j = b + 2  # the trigger: j-1 content keys (sum R), then itself
    seen = {"bos": bos, "content": token("content", R, j - 1), "trigger": token("trigger", q)}
    case("trigger", "trigger at j=b+2", "trigger", token("trigger", q), j, seen,
         (seen["content"] + seen["trigger"]) / j)
    t = b + 3  # after the trigger: t-1 content keys (the query among them), the trigger
    case("after_trigger", "content query at t=b+3", "content", token("content", c), t,
         {"bos": bos, "content": token("content", R + c, t - 1),
          "trigger": token("trigger", q)}, zero)
    return StackReluVerification(n, res, tuple(ids))


PaperReluVerification = StackReluVerification
"""The paper setting's name for :class:`StackReluVerification`."""
verify_paper_relu_symbolic = verify_stack_relu_symbolic
"""The paper setting's name for :func:`verify_stack_relu_symbolic`."""
