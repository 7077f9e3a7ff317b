"""Checker for ``paper-subfamily-bnb``: the tree argument over a named sub-family.

**Sub-family lemma.**  Accuracy on a family implies accuracy on any set ``P`` of its
prefixes, so a bound proved from ``P``'s constraints alone holds for every model
accurate on the whole family.  The file names ``P`` in ``data.subfamily``; the checker
verifies (i) that each named prefix belongs to the declared family, exactly (codes,
length, one trigger not at position 1, room for it), and (ii) the branch-and-bound
trees of :mod:`.tree` with every leaf constraint and every target drawn from ``P``.

**Content-uniform form** (``instance.task.content = "uniform"``: every content vector
of ``[-1, 1]^(n-3)``).  The listed content vectors are then *symbols*; the checker also
requires (iii) each symbol in the box, (iv) every multiplier ``z_i`` zero on the content
coordinates ``2..n-2``, and (v) the content indices of each target's tokens (the
trigger's included) pairwise distinct.  By (iv) no number the check computes depends on
the symbols' vectors, so for any assignment ``σ`` of box vectors to symbols (repeats
allowed) the model's logits ``u(σq, σk)`` and values ``v(σx)`` satisfy every leaf's
constraints, and by (v) every sequence with the target's trigger pattern, whatever
its contents, is ``σ`` of the target.
"""

from __future__ import annotations

from math import comb
from typing import Any

from ...errors import CertificateError
from ..exact import show
from ..family.paper import PaperInstance, n_prefixes
from ..limits import require
from ..schema import (
    as_list,
    check_fields,
    child,
    format_rational,
    need,
    need_dict,
    need_list,
    parse_rational,
)
from ..verdict import Verdict
from .tree import check_trees

KIND = "paper-subfamily-bnb"


class _Within:
    """``inst`` whose prefixes must also lie in the named sub-family ``members``."""

    def __init__(self, inst: PaperInstance, members: set[tuple[int, ...]]) -> None:
        self.base, self.members = inst, members

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    def prefix(self, value: Any, path: str) -> tuple[int, ...]:
        row = self.base.prefix(value, path)
        if row not in self.members:
            raise CertificateError(f"{path}: {list(row)} is not in data.subfamily")
        return row


def _instance(raw: dict[str, Any]) -> tuple[PaperInstance, bool]:
    """The declared family, and whether its content is the whole box (symbols listed)."""
    task = need_dict(raw, "task", "instance")
    uniform = task.get("content") == "uniform"
    if uniform:  # the symbols stand in for the content; the family reader needs a set
        raw = {**raw, "task": {**task, "content": need(raw, "content_vectors", "instance")}}
    inst = PaperInstance(raw)
    if uniform and any(abs(x) > 1 for c in inst.content for x in c):
        raise CertificateError("instance.content_vectors: a symbol outside [-1, 1]^(n-3)")
    return inst, uniform


def _content_free(cert: dict[str, Any], n: int) -> None:
    """(iv): every leaf's ``z`` rows are zero on coordinates ``2..n-2``."""
    stack = [t.get("root") for t in cert["data"]["trees"]]
    while stack:
        node = stack.pop()
        if isinstance(node, dict) and isinstance(node.get("leaf"), dict):
            for i, row in enumerate(as_list(node["leaf"].get("z"), "leaf z")):
                if any(parse_rational(x, f"leaf z[{i}]") != 0
                       for x in as_list(row, f"leaf z[{i}]")[2:n - 1]):
                    raise CertificateError(f"leaf z[{i}]: nonzero on a content coordinate")
        elif isinstance(node, dict):
            stack.extend(node.get(k) for k in ("below", "above"))


def verify(cert: dict[str, Any]) -> Verdict:
    """Check a ``paper-subfamily-bnb`` certificate; returns a :class:`Verdict`."""
    inst, uniform = _instance(need_dict(cert, "instance", ""))
    data = check_fields(need_dict(cert, "data", ""), "data", ("subfamily", "trees"))
    rows = need_list(data, "subfamily", "data", min_length=1)
    require("prefixes", len(rows), "data.subfamily: prefixes named")
    members = {inst.prefix(r, child("data.subfamily", i)) for i, r in enumerate(rows)}  # (i)
    if len(members) != len(rows):
        raise CertificateError("data.subfamily: a prefix named twice")
    for i, tree in enumerate(need_list(data, "trees", "data")):  # (v), before any tree
        target = inst.prefix(need(tree, "target", f"data.trees[{i}]"), f"data.trees[{i}]")
        if uniform and len({c % inst.m for c in target}) != len(target):
            raise CertificateError(f"data.trees[{i}].target: {list(target)} repeats a "
                                   "content symbol; a content-uniform target has distinct ones")
    if uniform:
        _content_free(cert, inst.n)  # (iv)
    proved, stated, n_leaves, n_empty = check_trees(
        _Within(inst, members), {**cert, "data": {"trees": need(data, "trees", "data")}})  # (ii)
    m = inst.m
    for target in proved:
        if target[-1] >= m:
            raise CertificateError(f"data.trees: target {list(target)} ends at the trigger")
    classes = {(r[-1], tuple(sorted(r))) for r in members}
    eps, b, L = format_rational(inst.eps), show(stated), inst.L
    if uniform:  # one target per trigger pattern (depth, trigger place or none)?
        seen = {(len(t), next((i for i, c in enumerate(t) if c >= m), None)) for t in proved}
        every = len(seen) == (L - 2) + comb(L - 2, 2)
        domain = f"every content vector in [-1, 1]^{inst.n - 3}"
        where = ("at position t of every sequence whose trigger pattern (depth, trigger "
                 "place or none) is one of the targets', whatever its contents")
    else:  # one target per non-trigger (query, multiset) class of the family?
        seen = {(t[-1], tuple(sorted(t))) for t in proved}
        every = len(seen) == sum((m * comb(t + m - 2, m - 1) if t <= L - 2 else 0)
                                 + (m * m * comb(t + m - 3, m - 1) if t >= 3 else 0)
                                 for t in range(1, L))
        domain = f"the m={m} content vectors listed"
        where = f"at the last position of each of {len(proved)} non-trigger target prefixes"
    if every:
        where = (f"at every non-trigger position of every sequence of the family (the "
                 f"{len(seen)} targets cover every " + ("trigger pattern" if uniform else
                                                        "non-trigger (query, multiset) class")
                 + ")")
    used = (f"the {len(members)} listed prefixes ({len(classes)} (query, multiset) classes)"
            + (" under every assignment of box vectors to their symbols" if uniform else ""))
    text = (f"paper setting [n={inst.n}, L={inst.L}, {domain}]: every one-layer single-head "
            f"softmax model (learned W_Q, W_K, W_V, W_O, no positional encoding; proved for "
            f"logits any function of the (query, key) tokens and any value per token) with "
            f"error <= {eps} at position 0 and at the last position of {used} (a fortiori "
            f"with error <= {eps} on the whole family) has BOS weight >= {b} {where} "
            f"({n_leaves} leaves, {n_empty} empty); no norm bound assumed")
    trig = [[(i + 1) for i, c in enumerate(t) if c >= m] or None for t in sorted(proved)]
    statement = {
        "kind": KIND, "setting": "paper", "content_domain": "box" if uniform else "finite",
        "every_nontrigger_position": every,
        "instance": {"n": inst.n, "L": inst.L,
                     "content": {"scheme": "uniform", "box": f"[-1, 1]^{inst.n - 3}"}
                     if uniform else {"scheme": "custom", "vectors": inst.family.vectors()}},
        "eps": eps, "subfamily": {"prefixes": len(members), "classes": len(classes),
                                  "family_prefixes": None if uniform else
                                  n_prefixes(m, inst.L, 10**18)},
        "model_class": {"attention": "softmax", "heads": 1, "layers": 1, "norm_bound": None,
                        "values": "any vector per token", "scores": "any f(query, key)"},
        "hypothesis": "error (Euclidean) <= eps at position 0 and at every listed prefix",
        "conclusion": {"bounds": sorted([list(k), format_rational(v)] for k, v in proved.items()),
                       "positions": [[len(t), p] for t, p in zip(sorted(proved), trig)]}}
    details = {"targets": len(proved), "leaves": n_leaves, "empty_leaves": n_empty,
               "subfamily": len(members), "classes": len(classes),
               "min_bos_mass": format_rational(stated), "eps": eps}
    return Verdict(ok=True, kind=KIND, claim=text, details=details, statement=statement)
