"""Theorem 4 verified for every length at once: SymPy, symbolic in ``t`` and in the content.

With the ``inverse`` positional scheme a score depends on a position only through
``r_t``: ``r_0 = 0``, ``r_1 = 1`` and ``r_t = 1/(m+1)`` for ``t = m + 2`` with ``m >= 0``
an integer symbol.  Content vectors are free real symbols, so the check covers every
content vocabulary of dimension ``p``.  A sum of content values over any set ``J`` of
keys is linear in the content, ``Σ_J v(c_j) = U_c S + |J| u_1`` with ``S = Σ_J c_j``
and ``u_1`` the value map's ``is_content`` column; ``S`` (a free vector), ``|J|`` and the
number of trigger keys are symbols too.  Provided every weight is independent of the
key's content and position (checked), the output at every position of every
sequence of every length is one of the closed forms below, and each identity is
decided by SymPy.  Nothing here is sampled.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy

from .._validate import as_int
from ..constructions import feature_index
from ..task import TriggerTask, inverse_position_ratio
from .exact import ExactModel, as_fraction

GROUPS = {
    "weights_uniform": "every weight is independent of the key's content and position",
    "bos_weights_zero": "every BOS weight is zero",
    "position0": "f_0 = y_0 = 0",
    "nontrigger": "f_t = y_t = 0 at every non-trigger position",
    "trigger": "f_t = y_t (the running mean) at every trigger",
    "multi_trigger": "the same with earlier triggers (multi-trigger variant)",
}


@dataclass(frozen=True)
class Identity:
    """One checked identity ``lhs == rhs`` (or a weight that must vanish) in one case."""

    group: str
    case: str
    lhs: sympy.Expr
    rhs: sympy.Expr
    holds: bool

    def __repr__(self) -> str:
        mark = "ok" if self.holds else "FAILS"
        return f"[{mark}] {self.case}: {sympy.sstr(self.lhs)} == {sympy.sstr(self.rhs)}"


@dataclass(frozen=True)
class Theorem4Verification:
    """Result of the symbolic check: every identity with its case, grouped.

    Fields per group (``True`` when every identity of the group holds):
    ``weights_uniform``, ``bos_weights_zero``, ``position0``, ``nontrigger``,
    ``trigger``, ``multi_trigger``; ``holds`` when all do.
    """

    p: int
    identities: tuple[Identity, ...]

    def _group(self, name: str) -> bool:
        items = [i for i in self.identities if i.group == name]
        return bool(items) and all(i.holds for i in items)

    weights_uniform = property(lambda self: self._group("weights_uniform"))
    bos_weights_zero = property(lambda self: self._group("bos_weights_zero"))
    position0 = property(lambda self: self._group("position0"))
    nontrigger = property(lambda self: self._group("nontrigger"))
    trigger = property(lambda self: self._group("trigger"))
    multi_trigger = property(lambda self: self._group("multi_trigger"))

    @property
    def holds(self) -> bool:
        """Zero error and zero BOS weight at every position of every sequence of every length."""
        return all(self._group(g) for g in GROUPS)

    @property
    def failures(self) -> list[Identity]:
        return [i for i in self.identities if not i.holds]

    def __repr__(self) -> str:
        flags = ", ".join(f"{g}={self._group(g)}" for g in GROUPS)
        return (f"Theorem4Verification(p={self.p}, holds={self.holds}: {flags}; "
                f"{len(self.identities)} identities)")

    def _repr_markdown_(self) -> str:
        rows = ["| group | case | identity | holds |", "|---|---|---|---|"]
        for i in self.identities:
            rows.append(f"| {i.group} | {i.case} | `{sympy.sstr(i.lhs)} = {sympy.sstr(i.rhs)}` "
                        f"| {i.holds} |")
        return f"**Theorem 4, p={self.p}: holds = {self.holds}**\n\n" + "\n".join(rows)


def exact_relu_solution(task: TriggerTask) -> ExactModel:
    """Theorem 4's head with exact rational parameters: ``A = a b^T``,
    ``a·φ_t = r_t - is_content_t``, ``b·φ_j = is_content_j + is_trigger_j``, values ``U_fix``.

    Built from the theorem's statement, independently of the float construction
    (with ``onehot`` positions ``r_t = 1/(t-1)`` is kept exact, not rounded).
    """
    D = task.D
    a, b = [Fraction(0)] * D, [Fraction(0)] * D
    a[feature_index(task, "is_content")] = Fraction(-1)
    if task.positions == "inverse":
        a[feature_index(task, "ratio")] = Fraction(1)
    elif task.positions == "onehot":
        for t in range(task.T + 1):
            a[feature_index(task, "position", t)] = inverse_position_ratio(t)
    else:
        raise ValueError("Theorem 4 needs positional information: positions='inverse' or 'onehot'")
    b[feature_index(task, "is_content")] = Fraction(1)
    b[feature_index(task, "is_trigger")] = Fraction(1)
    return ExactModel(task, "relu", [[x * y for y in b] for x in a])


def _decide(lhs: Any, rhs: Any) -> bool:
    """``lhs - rhs`` simplifies to zero (entrywise for matrices)."""
    diff = sympy.simplify(lhs - rhs)
    entries = list(diff) if isinstance(diff, sympy.MatrixBase) else [diff]
    return all(e == 0 for e in entries)


class _Symbolic:
    """Features, scores and values of a one-head ReLU model on the inverse scheme, symbolically."""

    def __init__(self, p: int, A: Any, U: Any) -> None:
        self.p = p
        self.A = sympy.Matrix(A)
        self.U = sympy.Matrix(U)
        self.m = sympy.Symbol("m", integer=True, nonnegative=True)  # query t = m + 2
        self.i = sympy.Symbol("i", integer=True, nonnegative=True)  # key j = i + 2
        self.q = sympy.symbols(f"q1:{p + 1}", real=True)  # query content
        self.c = sympy.symbols(f"c1:{p + 1}", real=True)  # key content
        self.S = sympy.Matrix(sympy.symbols(f"S1:{p + 1}", real=True))  # sum of key contents
        self.n_content = sympy.Symbol("N_c", integer=True, nonnegative=True)
        self.n_trig = sympy.Symbol("N_trig", integer=True, nonnegative=True)
        z = sympy.Integer(0)
        self.token = {
            "content": lambda cs: [*cs, 1, 0, 0],
            "trigger": lambda cs: [z] * p + [0, 1, 0],
            "bos": lambda cs: [z] * p + [0, 0, 1],
        }

    def phi(self, token: str, r: sympy.Expr, content: tuple = ()) -> sympy.Matrix:
        return sympy.Matrix([*self.token[token](content), 1, r])

    def weight(self, query: sympy.Matrix, key: sympy.Matrix) -> sympy.Expr:
        score = sympy.factor(sympy.simplify((query.T * self.A * key)[0]))
        return sympy.simplify(sympy.Max(0, score))

    def value(self, token: str) -> sympy.Matrix:
        e = self.token[token](self.c if token == "content" else ())
        return self.U * sympy.Matrix(e)


def verify_relu_symbolic(A: Any, U: Any = None, p: int | None = None) -> Theorem4Verification:
    """Decide, symbolically in ``t`` and the content, that a one-head ReLU model on the
    ``inverse`` scheme has zero error and zero BOS weight at every position of every length.

    ``A``: ``(p+5, p+5)`` rational score matrix; ``U``: ``(p, p+3)`` (``None`` = ``U_fix``).
    """
    A = [[sympy.Rational(as_fraction(x)) for x in row] for row in A]
    D = len(A)
    p = D - 5 if p is None else p
    if p < 1 or any(len(row) != D for row in A) or p + 5 != D:
        raise ValueError(f"A must be (p+5) x (p+5) for the inverse scheme, got {D} rows")
    if U is None:
        U = [[int(i == j) for j in range(p + 3)] for i in range(p)]
    U = [[sympy.Rational(as_fraction(x)) for x in row] for row in U]
    if len(U) != p or any(len(row) != p + 3 for row in U):
        raise ValueError(f"U must be {p} x {p + 3}")
    sym = _Symbolic(p, A, U)
    ids: list[Identity] = []
    r_query = {"t=1": sympy.Integer(1), "t=m+2": 1 / (sym.m + 1)}
    r_key = {"j=1": sympy.Integer(1), "j=i+2": 1 / (sym.i + 1)}
    queries = {f"{tok} query at {tc}": sym.phi(tok, r, sym.q if tok == "content" else ())
               for tok in ("content", "trigger") for tc, r in r_query.items()}

    # weights per key class, with the check that they do not depend on the key
    weights: dict[str, dict[str, sympy.Expr]] = {}
    for qname, qphi in queries.items():
        w_bos = sym.weight(qphi, sym.phi("bos", sympy.Integer(0)))
        ids.append(Identity("bos_weights_zero", qname, w_bos, sympy.Integer(0), w_bos == 0))
        per = {"bos": w_bos}
        for tok in ("content", "trigger"):
            forms = [sym.weight(qphi, sym.phi(tok, r, sym.c if tok == "content" else ()))
                     for r in r_key.values()]
            free = set().union(*(f.free_symbols for f in forms)) & ({sym.i} | set(sym.c))
            uniform = not free and _decide(forms[0], forms[1])
            ids.append(Identity("weights_uniform", f"{qname}, {tok} keys at j=1 and j=i+2",
                                forms[0], forms[1], uniform))
            per[tok] = forms[1]
        weights[qname] = per

    w00 = sym.weight(sym.phi("bos", sympy.Integer(0)), sym.phi("bos", sympy.Integer(0)))
    f0 = w00 * sym.value("bos")
    ids.append(Identity("bos_weights_zero", "BOS query at t=0", w00, sympy.Integer(0), w00 == 0))
    ids.append(Identity("position0", "t=0", f0, sympy.zeros(p, 1), _decide(f0, sympy.zeros(p, 1))))

    u_c = sym.U[:, :p]
    u_1 = sym.U[:, p]

    def output(w: dict[str, sympy.Expr], n_content: Any, n_trig: Any) -> sympy.Matrix:
        content_sum = u_c * sym.S + n_content * u_1
        return (w["bos"] * sym.value("bos") + w["content"] * content_sum
                + w["trigger"] * n_trig * sym.value("trigger"))

    zero = sympy.zeros(p, 1)
    t_of = {"t=1": sympy.Integer(1), "t=m+2": sym.m + 2}
    for tc, t in t_of.items():
        # content query at t: keys 1..t are N_c content tokens (sum S, including itself)
        # and N_trig triggers, N_c + N_trig = t; the target is 0
        w = weights[f"content query at {tc}"]
        f = output(w, t - sym.n_trig, sym.n_trig)
        ids.append(Identity("nontrigger", f"content query at {tc}, N_trig earlier triggers",
                            f, zero, _decide(f, zero)))
        # trigger query at t: t-1-N_trig content keys before it, N_trig earlier triggers,
        # then the query's own trigger key; target S/(t-1) for t >= 2, 0 at t = 1
        w = weights[f"trigger query at {tc}"]
        target = zero if tc == "t=1" else sym.S / (t - 1)
        if tc == "t=1":
            f = w["bos"] * sym.value("bos") + w["trigger"] * sym.value("trigger")
            ids.append(Identity("trigger", "trigger at t=1 (target 0)", f, zero, _decide(f, zero)))
            continue
        single = output(w, t - 1, 1)
        ids.append(Identity("trigger", f"trigger at {tc}, every earlier key content",
                            single, target, _decide(single, target)))
        multi = output(w, t - 1 - sym.n_trig, sym.n_trig + 1)
        ids.append(Identity("multi_trigger", f"trigger at {tc}, N_trig earlier triggers",
                            multi, target, _decide(multi, target)))
    return Theorem4Verification(p, tuple(ids))


def verify_theorem4(p: int = 2) -> Theorem4Verification:
    """Theorem 4 for content dimension ``p``, every length and every content vocabulary."""
    p = as_int("p", p, minimum=1)
    model = exact_relu_solution(TriggerTask(p, 1, positions="inverse"))
    return verify_relu_symbolic(model.A[0].tolist(), model.U[0].tolist(), p)

