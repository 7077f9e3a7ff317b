"""Checker for ``paper-subfamily-bnb``: the tree argument over a named sub-family.

Sub-family lemma: accuracy on a family implies accuracy on any set ``P`` of its prefixes,
so a bound proved from ``P``'s constraints holds for every model accurate on the family.
The file names ``P`` in ``data.subfamily``; checked: (i) each named prefix belongs to
the declared family, exactly; (ii) the trees of :mod:`.tree`, every leaf constraint and
target drawn from ``P``.  Content-uniform form (``instance.task.content = "uniform"``,
every vector of ``[-1, 1]^(n-3)``): the listed content vectors are *symbols*, and also
(iii) each symbol is in the box, (iv) every multiplier ``z_i`` is zero on the content
coordinates ``2..n-2``, (v) each target's tokens carry distinct symbols.  By (iv) no
number checked depends on the symbols' vectors, so any assignment of box vectors to
symbols carries an accurate model to a point every leaf bounds, and by (v) every
sequence with a target's trigger pattern is such an image of it (docs/theory.md,
"Reductions of the paper family", Theorem C).
"""

from __future__ import annotations

from math import comb
from typing import Any

from ...errors import CertificateError
from ..exact import show
from ..family.paper import PaperInstance
from ..limits import require
from ..schema import (
    as_list,
    child,
    format_rational,
    need,
    need_dict,
    need_list,
    section,
)
from ..schema import parse_rational as rational
from ..verdict import Verdict
from .tree import check_trees, tree_verdict

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


def _content_free(trees: list[Any], n: int) -> None:
    """(iv): every leaf's ``z`` rows are zero on coordinates ``2..n-2``."""
    stack = [t.get("root") if isinstance(t, dict) else None for t in trees]
    while stack:
        node = stack.pop()
        if isinstance(node, dict) and isinstance(node.get("leaf"), dict):
            for i, row in enumerate(as_list(node["leaf"].get("z"), "leaf z")):
                if any(rational(x, "z") != 0 for x in as_list(row, "z")[2:n - 1]):
                    raise CertificateError(f"leaf z[{i}]: nonzero on a content coordinate")
        elif isinstance(node, dict):
            stack.extend(node.get(k) for k in ("below", "above"))


def verify(cert: dict[str, Any]) -> Verdict:
    """Check a ``paper-subfamily-bnb`` certificate; returns a :class:`Verdict`."""
    raw = need_dict(cert, "instance", "")
    task = need_dict(raw, "task", "instance")
    uniform = task.get("content") == "uniform"
    if uniform:  # the symbols stand in for the content: the family reader needs a set
        raw = {**raw, "task": {**task, "content": need(raw, "content_vectors", "instance")}}
    inst = PaperInstance(raw)
    m, L, n = inst.m, inst.L, inst.n
    if uniform and any(abs(x) > 1 for c in inst.content for x in c):  # (iii)
        raise CertificateError("instance.content_vectors: a symbol outside [-1, 1]^(n-3)")
    data = section(cert, "data", ("subfamily", "trees"))
    rows = need_list(data, "subfamily", "data", min_length=1)
    require("prefixes", len(rows), "data.subfamily: prefixes named")
    members = {inst.prefix(r, child("data.subfamily", i)) for i, r in enumerate(rows)}  # (i)
    if len(members) != len(rows):
        raise CertificateError("data.subfamily: a prefix named twice")
    trees = need_list(data, "trees", "data")
    for i, tree in enumerate(trees):
        target = inst.prefix(need(tree, "target", f"data.trees[{i}]"), f"data.trees[{i}]")
        if target[-1] >= m:
            raise CertificateError(f"data.trees[{i}]: the target ends at the trigger")
        if uniform and len({c % m for c in target}) != len(target):  # (v)
            raise CertificateError(f"data.trees[{i}].target: {list(target)} repeats a "
                                   "content symbol; a content-uniform target has distinct ones")
    if uniform:
        _content_free(trees, n)
    proved, stated, n_leaves, n_empty = check_trees(
        _Within(inst, members), {**cert, "data": {"trees": trees}})  # (ii)
    if uniform:  # every trigger pattern (depth, trigger place or none) a target?
        seen = {(len(t), next((i for i, c in enumerate(t) if c >= m), None)) for t in proved}
        every = len(seen) == (L - 2) + comb(L - 2, 2)
        domain, kind = f"every content vector in [-1, 1]^{n - 3}", "trigger pattern"
    else:  # every non-trigger (query, multiset) class of the family a target?
        seen = {(t[-1], tuple(sorted(t))) for t in proved}
        every = len(seen) == sum((m * comb(t + m - 2, m - 1) if t <= L - 2 else 0)
                                 + (m * m * comb(t + m - 3, m - 1) if t >= 3 else 0)
                                 for t in range(1, L))
        domain, kind = f"the m={m} content vectors listed", "non-trigger (query, multiset) class"
    where = (f"at every non-trigger position of every sequence of the family (the "
             f"{len(seen)} targets cover every {kind})" if every else
             f"at the last position of each of {len(proved)} non-trigger targets" +
             (" and of every sequence with its trigger pattern, whatever its contents"
              if uniform else ""))
    classes = {(r[-1], tuple(sorted(r))) for r in members}
    used = (f"the {len(members)} listed prefixes ({len(classes)} (query, multiset) classes)"
            + (" under every assignment of box vectors to their symbols" if uniform else ""))
    eps = format_rational(inst.eps)
    text = (f"paper setting [n={n}, L={L}, {domain}]: every one-layer single-head softmax "
            f"model (learned W_Q, W_K, W_V, W_O, no positional encoding; proved for logits "
            f"any function of the (query, key) tokens and any value per token) with error "
            f"<= {eps} at position 0 and at the last position of {used} (a fortiori with "
            f"error <= {eps} on the whole family) has BOS weight >= {show(stated)} {where} "
            f"({n_leaves} leaves, {n_empty} empty); no norm bound assumed")
    content = ({"scheme": "uniform", "box": f"[-1, 1]^{n - 3}", "symbols": m} if uniform
               else {"scheme": "custom", "vectors": inst.family.vectors()})
    return tree_verdict(KIND, inst, text, proved, stated, {
        "setting": "paper", "content_domain": "box" if uniform else "finite",
        "every_nontrigger_position": every,
        "instance": {"n": n, "L": L, "content": content},
        "subfamily": {"prefixes": len(members), "classes": len(classes)},
        "model_class": {"attention": "softmax", "heads": 1, "layers": 1, "norm_bound": None,
                        "values": "any vector per token", "scores": "any f(query, key)"},
        "hypothesis": "error (Euclidean) <= eps at position 0 and at every listed prefix"},
        leaves=n_leaves, empty_leaves=n_empty, subfamily=len(members))
