"""Checker for ``paper-bnb-learned-values``: the engine's trees in the paper's setting.

**The setting.**  Tokens ``x ∈ R^n``: coordinate 0 the BOS indicator, 1 the trigger
indicator, ``2..n-2`` content, ``n-1`` a bias channel (1 on content tokens, 0 on BOS and
the trigger).  With the content vectors ``c_0..c_{m-1}`` listed exactly in
``instance.content_vectors`` this checker builds every token itself: content token ``i``
(code ``i``) is ``(0, 0, c_i, 1)``, the trigger carrying ``c_i`` (code ``m + i``) is
``(0, 1, c_i, 0)``, BOS is ``e_0``.  A sequence has length ``L`` and exactly one trigger
at ``j ∈ 2..L-1``; its targets are ``y_t = [t = j] (1/j) Σ_{k=1..j} x_k`` (whole
vectors, the trigger included; one layer, no residual).  A *prefix* ``x_1..x_t``
(``1 <= t <= L-1``) is in the family when it holds at most one trigger, not at position
1, and, without one, ``t <= L-2`` (a trigger still fits).

**The model class.**  One softmax head with learned ``W_Q, W_K, W_V, W_O`` and no
positional encoding: its logit ``x_t^T W_Q^T W_K x_k`` is a function of the (query
token, key token) pair alone, and its value ``W_O W_V x`` a function of the token alone.
The statement is proved for the larger class where the logit is *any* function of the
pair and the value of each distinct token (BOS and the ``2m`` codes) is *any* vector of
``R^n``: every choice of ``W_O W_V`` gives one such value per token, so a bound for free
per-token values holds for every linear value map.

**The argument** is :mod:`sinkproof.checker.bnb`'s, with classes ``l = (query code,
key code)`` (no position features): ``u_l = exp(s(q, k) - s(q, BOS)) >= 0``, the BOS
mass at ``(X, t)`` is ``1/Z``, ``Z = 1 + Σ_{k=1..t} u_{(x_t, x_k)}``, and "error <= eps"
there is the cone ``|| v_BOS + Σ_k u_k v_{x_k} - Z y_t || <= eps Z``.  A leaf's
multipliers aggregate those cones into ``0 <= c0 + Σ_l h_l u_l`` on its box of values;
``h + a* <= 0`` gives BOS mass ``>= 1/(1 + c0)`` at the target prefix's last position,
and ``c0 < 0`` with ``h <= 0`` leaves no accurate model in the box.  Every target must
be a non-trigger position of the family.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..errors import CertificateError
from .bnb import Box, check_trees
from .exact import show
from .paperhull import read_one_layer_task
from .schema import (
    as_list,
    format_rational,
    need_dict,
    need_rational,
    need_str,
)
from .verdict import Verdict

KIND = "paper-bnb-learned-values"
INSTANCE_FIELDS = ("task", "content_vectors", "values", "eps", "family")


class PaperInstance:
    """The instance as this checker reads it, with the interface
    :func:`sinkproof.checker.bnb.check_trees` uses: ``p`` (the value dimension ``n``),
    ``tokens`` (the value-carrying codes ``0..2m-1``), ``prefix``, ``target_of``,
    ``classes``, ``root_box``, ``class_name``, and ``k``, ``T`` for the work estimate."""

    values = "learned"

    def __init__(self, inst: dict[str, Any]) -> None:
        task, self.content = read_one_layer_task(inst, INSTANCE_FIELDS)
        self.n, self.L = task["n"], task["L"]
        need_str(inst, "values", "instance", ("learned",))
        need_str(inst, "family", "instance", ("paper",))
        self.eps = need_rational(inst, "eps", "instance")
        if self.eps <= 0:
            raise CertificateError(f"instance.eps: must be > 0, got {show(self.eps)}")
        self.m = len(self.content)
        self.p, self.k, self.T = self.n, 2 * self.m, self.L - 1
        self.tokens = list(range(2 * self.m))

    def token(self, code: int) -> list[Fraction]:
        """The token vector of a code (content ``i``, or the trigger carrying ``c_i``)."""
        trig = code >= self.m
        c = self.content[code - self.m if trig else code]
        return [Fraction(0), Fraction(int(trig)), *c, Fraction(int(not trig))]

    def prefix(self, value: Any, path: str) -> tuple[int, ...]:
        """A prefix ``x_1..x_t`` of the family (codes, length, trigger place checked)."""
        items = as_list(value, path, min_length=1)
        if len(items) > self.L - 1:
            raise CertificateError(f"{path}: longer than L-1 = {self.L - 1}")
        for i, c in enumerate(items):
            if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < 2 * self.m:
                raise CertificateError(f"{path}[{i}]: {c!r} is not a token code < {2 * self.m}")
        where = [i for i, c in enumerate(items) if c >= self.m]
        if len(where) > 1:
            raise CertificateError(f"{path}: more than one trigger")
        if where and where[0] == 0:
            raise CertificateError(f"{path}: a trigger at position 1 is not in the family")
        if not where and len(items) > self.L - 2:
            raise CertificateError(f"{path}: a prefix of length {len(items)} without its "
                                   "trigger is not in the family")
        return tuple(items)

    def target_of(self, prefix: tuple[int, ...]) -> list[Fraction]:
        """``y_t`` at the last position: the mean of the whole tokens ``1..t`` at the
        trigger, 0 elsewhere."""
        t = len(prefix)
        if prefix[-1] < self.m:
            return [Fraction(0)] * self.n
        rows = [self.token(c) for c in prefix]
        return [sum((r[d] for r in rows), Fraction(0)) / t for d in range(self.n)]

    def classes(self, prefix: tuple[int, ...]) -> dict[tuple, int]:
        """Class ``(query, (), key, ())`` -> multiplicity among the keys ``1..t`` (the
        empty tuples: this setting has no position features)."""
        q = prefix[-1]
        out: dict[tuple, int] = {}
        for tok in prefix:
            key = (q, (), tok, ())
            out[key] = out.get(key, 0) + 1
        return out

    def root_box(self) -> Box:
        """All of ``R^n`` per token code (learned values)."""
        return {x: [(None, None)] * self.n for x in self.tokens}

    def code_name(self, code: int) -> str:
        return f"c{code}" if code < self.m else f"TRIG(c{code - self.m})"

    def class_name(self, cls: tuple) -> str:
        return f"u(query {self.code_name(cls[0])}, key {self.code_name(cls[2])})"


def verify(cert: dict[str, Any]) -> Verdict:
    """Check a ``paper-bnb-learned-values`` certificate; returns a :class:`Verdict`."""
    need_str(cert, "kind", "", choices=(KIND,))
    inst = PaperInstance(need_dict(cert, "instance", ""))
    proved, stated, n_leaves, n_empty = check_trees(inst, cert)
    for target in proved:
        if target[-1] >= inst.m:
            raise CertificateError(f"data.trees: target {list(target)} ends at the trigger; "
                                   "the bound is for non-trigger positions")
    vectors = [[format_rational(x) for x in c] for c in inst.content]
    text = (f"paper setting [n={inst.n}, L={inst.L}, the m={inst.m} content vectors listed]: "
            f"every one-layer single-head softmax model (learned W_Q, W_K, W_V, W_O, no "
            f"positional encoding; proved for logits any function of the (query, key) "
            f"tokens and any value vector per token) with error <= "
            f"{format_rational(inst.eps)} at every position of every sequence has BOS "
            f"weight >= {show(stated)} at the last position of each of {len(proved)} "
            f"non-trigger target prefixes ({n_leaves} leaves, {n_empty} of them empty "
            f"boxes); no norm bound assumed")
    statement = {
        "kind": KIND, "setting": "paper",
        "theorem": "logit sharing by token pair, branch and bound on per-token values",
        "instance": {"n": inst.n, "L": inst.L,
                     "content": {"scheme": "custom", "vectors": vectors}},
        "eps": format_rational(inst.eps),
        "model_class": {"attention": "softmax", "heads": 1, "layers": 1,
                        "values": "learned (any vector per token: every W_O W_V)",
                        "scores": "any function of (query token, key token)",
                        "norm_bound": None},
        "hypothesis": "error (Euclidean) <= eps at every position of every sequence",
        "conclusion": {"bounds": sorted([list(k), format_rational(v)]
                                        for k, v in proved.items())}}
    details = {"targets": len(proved), "leaves": n_leaves, "empty_leaves": n_empty,
               "min_bos_mass": format_rational(stated), "eps": format_rational(inst.eps)}
    return Verdict(ok=True, kind=KIND, claim=text, details=details, statement=statement)


__all__ = ["KIND", "PaperInstance", "verify"]
