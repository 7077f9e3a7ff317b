"""Checker for ``bnb-learned-values`` certificates: branch-and-bound trees, exact rationals only.

**The statement.**  One softmax head whose scores are *any* function of the
query's and the key's input features ``φ = [e(x); π(t)]``, and whose values are
one vector ``v_x`` per token kind (``"learned"``: any vectors; ``"fixed"``:
``v_c = c``, ``v_TRIG = 0``).  Put ``u = exp(s(φ_t, φ_j) - s(φ_t, φ_0)) >= 0``:
the same variable ``u_l`` serves every pair of positions whose (query token,
``π(t)``, key token, ``π(j)``) agree — the *class* ``l`` of the pair — whatever
else the sequence holds.  With ``Z = 1 + Σ_j u_j`` the BOS mass at ``(X, t)`` is
``1/Z`` and "error <= eps there" reads ``|| r || <= eps Z`` with
``r = v_BOS + Σ_j u_j v_{x_j} - Z y``.

**A leaf** is a box ``B`` of value vectors (one interval per token and
coordinate, ends possibly infinite) with multipliers ``(z_i, s_i)``,
``z_i·z_i <= s_i²``, for some prefixes ``X_i`` of the family, and ``s_0 >= ||z_0||``
for position 0 (``|| v_BOS || <= eps``), ``z_0 = -Σ z_i``.  For every accurate model
with values in ``B``, ``Σ_i (eps s_i Z_i + z_i·r_i) + eps s_0 + z_0·v_BOS >= 0``; the
``v_BOS`` terms cancel (with fixed values ``v_BOS = 0`` and ``s_0`` needs no check),
and ``Σ_l u_l G_l·v_l <= Σ_l u_l σ_B(G_l)`` with
``G_l = Σ_i m_il z_i`` (``m_il`` how often class ``l`` occurs in ``X_i``) and
``σ_B(g) = max_{v ∈ B} g·v`` the box's support function, so
``0 <= c0 + Σ_l h_l u_l`` with ``c0 = eps s_0 + Σ_i (eps s_i - z_i·y_i)`` and
``h_l = Σ_i m_il (eps s_i - z_i·y_i) + σ_B(G_l)``.  When ``h_l + a*_l <= 0`` for every
class (``a*`` the class counts of the target prefix), ``Z* - 1 = a*·u <= c0``: BOS
mass ``>= 1/(1 + c0)`` at the target; when ``c0 < 0`` and either that holds or
every ``h_l <= 0``, no accurate model at all has values in ``B`` (an *empty* leaf).
The checker derives every class, multiplicity and target ``y`` from the instance
itself; the file only names the prefixes and the multipliers.

**The tree** splits a token's coordinate at a rational ``r`` into ``v <= r`` and
``v >= r``; the root is all of ``R^p`` per token (learned values) or the point of
the fixed values.  The checker rebuilds each leaf's box from the splits (so the
leaves cover the root exactly), requires the box a leaf states to be that box,
and accepts the tree's stated bound only when it is ``<=`` every leaf's.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..errors import CertificateError
from .exact import InequalityFailed, check_leq, check_lt, dot, show
from .instance import TRIGGER, read_instance, read_tokens
from .limits import require
from .schema import (
    as_list,
    check_fields,
    child,
    format_rational,
    need,
    need_dict,
    need_int,
    need_list,
    need_rational,
    need_str,
    parse_rational,
    rational_matrix,
    rational_vector,
)
from .verdict import Verdict
from .witness import _position_features

KIND = "bnb-learned-values"
VALUE_CLASSES = ("learned", "fixed")
INSTANCE_FIELDS = ("task", "content_vectors", "values", "eps", "family")
TREE_FIELDS = ("target", "bound", "root")
LEAF_FIELDS = ("box", "constraints", "z", "s", "s0")
SPLIT_FIELDS = ("token", "coord", "at")

Interval = tuple[Fraction | None, Fraction | None]
Box = dict[int, list[Interval]]


class Instance:
    """The instance as this checker reads it: exact content, positions, ``eps``, value class."""

    def __init__(self, inst: dict[str, Any]) -> None:
        check_fields(inst, "instance", INSTANCE_FIELDS)
        self.values = need_str(inst, "values", "instance", VALUE_CLASSES)
        # read_instance rebuilds the content exactly; its U_fix values serve the fixed class.
        self.base = read_instance({**inst, "values": "fixed"})
        self.p, self.T, self.k = self.base.p, self.base.T, self.base.k
        self.positions = self.base.description.get("positions", "inverse")
        self._pi: dict[int, tuple[Fraction, ...]] = {}
        self.family = need_str(inst, "family", "instance", ("S_T",))
        self.eps = need_rational(inst, "eps", "instance")
        if self.eps <= 0:
            raise CertificateError(f"instance.eps: must be > 0, got {show(self.eps)}")
        self.tokens = [*range(self.k), TRIGGER]

    def pi(self, t: int) -> tuple[Fraction, ...]:
        """π(t) exactly, as the witness checker computes it (the positional scheme is
        validated by read_instance: inverse, onehot or none); built for the positions a
        certificate names, never a table of every ``t <= T``."""
        if t not in self._pi:
            self._pi[t] = tuple(_position_features(self.positions, self.T, t))
        return self._pi[t]

    def prefix(self, value: Any, path: str) -> tuple[int, ...]:
        """A prefix ``x_1..x_t`` of ``S_T`` (tokens, length, trigger count checked)."""
        return tuple(read_tokens(value, self.base, path))

    def target_of(self, prefix: tuple[int, ...]) -> list[Fraction]:
        """``y_t`` at the last position of ``prefix`` (the checker's one target code)."""
        return self.base.target(prefix)

    def classes(self, prefix: tuple[int, ...]) -> dict[tuple, int]:
        """Class -> multiplicity at the last position of ``prefix`` (keys ``j = 1..t``)."""
        t, q = len(prefix), prefix[-1]
        out: dict[tuple, int] = {}
        for j, tok in enumerate(prefix, start=1):
            key = (q, self.pi(t), tok, self.pi(j))
            out[key] = out.get(key, 0) + 1
        return out

    def root_box(self) -> Box:
        """All of ``R^p`` per token (learned), or the fixed values as a point."""
        if self.values == "learned":
            return {x: [(None, None)] * self.p for x in self.tokens}
        return {x: [(c, c) for c in self.base.values[x]] for x in self.tokens}

    def class_name(self, cls: tuple) -> str:
        """A class as a failure message names it."""
        return f"u(query {cls[0]} at π={_fmt(cls[1])}, key {cls[2]} at π={_fmt(cls[3])})"


def _fmt(pi: tuple[Fraction, ...]) -> str:
    return "[" + ",".join(format_rational(x) for x in pi) + "]"


def support(g: list[Fraction], box: list[Interval]) -> Fraction | None:
    """``max_{v ∈ box} g·v`` exactly, or ``None`` when it is unbounded."""
    total = Fraction(0)
    for gi, (lo, hi) in zip(g, box):
        if gi > 0:
            if hi is None:
                return None
            total += gi * hi
        elif gi < 0:
            if lo is None:
                return None
            total += gi * lo
    return total


def _read_box(inst: Instance, value: Any, where: str) -> Box:
    rows = as_list(value, where, length=len(inst.tokens))
    box: Box = {}
    for r, row in enumerate(rows):
        at = child(where, r)
        entry = as_list(row, at, length=2)
        tok = entry[0]
        if tok not in inst.tokens or isinstance(tok, bool) or tok in box:
            raise CertificateError(f"{at}[0]: expected each token of {inst.tokens} once")
        ivs = as_list(entry[1], child(at, 1), length=inst.p)
        box[tok] = [tuple(None if e is None else parse_rational(e, child(child(at, 1), c))
                          for e in as_list(iv, child(child(at, 1), c), length=2))
                    for c, iv in enumerate(ivs)]
    return box


def leaf_terms(inst: Instance, box: Box, prefixes: list[tuple[int, ...]],
               z: list[list[Fraction]], s: list[Fraction],
               s0: Fraction) -> tuple[Fraction, dict[tuple, Fraction | None]]:
    """``c0`` and ``h_l`` per class of the aggregated inequality ``0 <= c0 + Σ_l h_l u_l``
    (``h_l`` is ``None`` where the box leaves ``G_l·v`` unbounded above).

    For every model with values in ``box`` and ``u >= 0`` the sum
    ``Σ_i (eps s_i Z_i + z_i·r_i) + eps s_0 + z_0·v_BOS`` (``z_0 = -Σ z_i``) is at most
    ``c0 + Σ_l h_l u_l``, with equality but for the step ``G_l·v <= σ_B(G_l)``.
    """
    eps = inst.eps
    c0 = eps * s0
    G: dict[tuple, list[Fraction]] = {}
    H: dict[tuple, Fraction] = {}
    for prefix, zi, si in zip(prefixes, z, s):
        coeff = eps * si - dot(zi, inst.target_of(prefix))
        c0 += coeff
        for cls, m in inst.classes(prefix).items():
            g = G.setdefault(cls, [Fraction(0)] * inst.p)
            G[cls] = [a + m * b for a, b in zip(g, zi)]
            H[cls] = H.get(cls, Fraction(0)) + m * coeff
    h: dict[tuple, Fraction | None] = {}
    for cls in sorted(G, key=repr):
        sigma = support(G[cls], box[cls[2]])
        h[cls] = None if sigma is None else H[cls] + sigma
    return c0, h


def check_leaf(inst: Instance, target: tuple[int, ...], box: Box, leaf: dict[str, Any],
               where: str) -> Fraction:
    """Verify one leaf exactly; return ``c0`` (``Z* <= 1 + c0`` on its box; empty if ``< 0``)."""
    check_fields(leaf, where, LEAF_FIELDS)
    raw = need_list(leaf, "constraints", where)
    prefixes = [inst.prefix(c, child(child(where, "constraints"), i)) for i, c in enumerate(raw)]
    z = rational_matrix(need(leaf, "z", where), child(where, "z"), columns=inst.p)
    if len(z) != len(prefixes):
        raise CertificateError(f"{where}.z: expected {len(prefixes)} rows, got {len(z)}")
    s = rational_vector(need(leaf, "s", where), child(where, "s"), length=len(prefixes))
    s0 = need_rational(leaf, "s0", where)
    for i, (zi, si) in enumerate(zip(z, s)):
        check_leq(Fraction(0), si, f"{where}.s[{i}] >= 0")
        check_leq(dot(zi, zi), si * si, f"{where}: cone membership z·z <= s² of constraint {i}")
    check_leq(Fraction(0), s0, f"{where}.s0 >= 0")
    if inst.values == "learned":  # fixed values have v_BOS = 0: the z0 term vanishes
        z0 = [-sum((zi[c] for zi in z), Fraction(0)) for c in range(inst.p)]
        check_leq(dot(z0, z0), s0 * s0, f"{where}: position 0, z0·z0 <= s0² with z0 = -Σ z_i")
    c0, h = leaf_terms(inst, box, prefixes, z, s, s0)
    objective = inst.classes(target)
    for cls in objective:
        h.setdefault(cls, Fraction(0))
    for cls, value in h.items():
        if value is None:
            raise _failed(f"{where}: the box leaves G·v unbounded above for {inst.class_name(cls)}")
    if c0 < 0 and all(v <= 0 for v in h.values()):
        return c0  # 0 <= c0 + h·u < 0 for every u >= 0: no model has values in this box
    for cls, coeff in h.items():
        check_leq(coeff + objective.get(cls, 0), Fraction(0),
                  f"{where}: dual feasibility h + a* <= 0 at {inst.class_name(cls)}")
    return c0




def _failed(message: str) -> InequalityFailed:
    return InequalityFailed(message)


def _estimate_work(inst: Instance, root: Any, where: str) -> None:
    """Refuse before any arithmetic when the tree's leaves cost too much: each constraint of
    a leaf is ``O(T·p)`` exact operations, each box ``O(k·p)``."""
    work, stack = 0, [root]
    while stack:
        node = stack.pop()
        work += inst.k * inst.p + 1
        if isinstance(node, dict) and isinstance(node.get("leaf"), dict):
            rows = node["leaf"].get("constraints")
            work += (len(rows) if isinstance(rows, list) else 0) * (inst.T + 2) * inst.p
        elif isinstance(node, dict):
            stack.extend(node[key] for key in ("below", "above") if key in node)
        require("work", work, f"{where}: exact operations to check the tree")


def _walk(inst: Instance, target: tuple[int, ...], root: Any,
          where: str) -> tuple[Fraction, int, int]:
    """Check every leaf below ``root``; return (least BOS bound, leaves, empty leaves)."""
    least = Fraction(1)
    leaves = empty = 0
    stack = [(root, inst.root_box(), where)]
    while stack:
        node, box, at = stack.pop()
        if not isinstance(node, dict):
            raise CertificateError(f"{at}: expected a tree node object")
        if "leaf" in node:
            check_fields(node, at, ("leaf",))
            leaf = need_dict(node, "leaf", at)
            stated = _read_box(inst, need(leaf, "box", child(at, "leaf")),
                               child(child(at, "leaf"), "box"))
            if stated != box:
                raise _failed(f"{at}.leaf.box: differs from the box its splits define")
            c0 = check_leaf(inst, target, box, leaf, child(at, "leaf"))
            leaves += 1
            if c0 < 0:
                empty += 1
            else:
                least = min(least, 1 / (1 + c0))
            continue
        check_fields(node, at, ("split", "below", "above"))
        split = check_fields(need_dict(node, "split", at), child(at, "split"), SPLIT_FIELDS)
        sat = child(at, "split")
        tok = need(split, "token", sat)
        if tok not in inst.tokens or isinstance(tok, bool):
            raise CertificateError(f"{sat}.token: {tok!r} is not one of the value tokens "
                                   f"{inst.tokens}")
        coord = need_int(split, "coord", sat, minimum=0)
        if coord >= inst.p:
            raise CertificateError(f"{sat}.coord: {coord} >= p = {inst.p}")
        r = need_rational(split, "at", sat)
        lo, hi = box[tok][coord]
        if (lo is not None and r <= lo) or (hi is not None and r >= hi):
            raise CertificateError(f"{sat}.at: {show(r)} is not inside the interval it splits")
        below = {x: list(v) for x, v in box.items()}
        above = {x: list(v) for x, v in box.items()}
        below[tok][coord] = (lo, r)
        above[tok][coord] = (r, hi)
        stack.append((need(node, "above", at), above, child(at, "above")))
        stack.append((need(node, "below", at), below, child(at, "below")))
    return least, leaves, empty


def check_trees(inst: Any, cert: dict[str, Any]
                ) -> tuple[dict[tuple[int, ...], Fraction], Fraction, int, int]:
    """Verify every tree of ``cert`` against ``inst`` (any instance with this module's
    ``Instance`` interface: ``eps``, ``p``, ``values``, ``tokens``, ``prefix``,
    ``target_of``, ``classes``, ``root_box``, ``class_name``, ``k``, ``T``); return the
    bound per target, the claim's stated ``min_bos_mass`` (checked ``<=`` every bound),
    and the leaf and empty-leaf counts."""
    claim = check_fields(need_dict(cert, "claim", ""), "claim",
                         ("statement", "min_bos_mass", "targets"))
    data = check_fields(need_dict(cert, "data", ""), "data", ("trees",))
    trees = need_list(data, "trees", "data", min_length=1)
    for i, tree in enumerate(trees):
        check_fields(tree, f"data.trees[{i}]", TREE_FIELDS)
        _estimate_work(inst, tree.get("root"), f"data.trees[{i}]")
    lowest: Fraction | None = None
    n_leaves = n_empty = 0
    proved: dict[tuple[int, ...], Fraction] = {}
    for i, tree in enumerate(trees):
        where = f"data.trees[{i}]"
        target = inst.prefix(need(tree, "target", where), child(where, "target"))
        if target in proved:
            raise CertificateError(f"{where}.target: {list(target)} has two trees")
        bound = need_rational(tree, "bound", where)
        check_lt(Fraction(0), bound, f"{where}: stated bound > 0")
        least, leaves, empty = _walk(inst, target, need(tree, "root", where),
                                     child(where, "root"))
        check_leq(bound, least, f"{where}: stated bound <= every leaf's 1/(1 + c0)")
        proved[target] = bound
        n_leaves, n_empty = n_leaves + leaves, n_empty + empty
        lowest = bound if lowest is None else min(lowest, bound)
    stated = need_rational(claim, "min_bos_mass", "claim")
    check_leq(stated, lowest, "claim.min_bos_mass <= every tree's bound")
    if need_int(claim, "targets", "claim", minimum=1) != len(trees):
        raise CertificateError(f"claim.targets: the data hold {len(trees)} trees")
    return proved, stated, n_leaves, n_empty


def verify(cert: dict[str, Any]) -> Verdict:
    """Check a ``bnb-learned-values`` certificate; returns a :class:`Verdict`."""
    inst = Instance(need_dict(cert, "instance", ""))
    proved, stated, n_leaves, n_empty = check_trees(inst, cert)
    trees = cert["data"]["trees"]
    values = ("learned values (any vector per token kind)" if inst.values == "learned"
              else "fixed values U_fix")
    text = (f"every single-head softmax model with {values}, scores any function of the "
            f"(query, key) input features ({inst.positions} positions), and error <= "
            f"{format_rational(inst.eps)} on S_T (p={inst.p}, T={inst.T}, "
            f"{inst.base.triggers} trigger) has BOS mass >= {show(stated)} at the last "
            f"position of each of {len(trees)} target prefixes "
            f"({n_leaves} leaves, {n_empty} of them empty boxes); no norm bound assumed")
    details = {"targets": len(trees), "leaves": n_leaves, "empty_leaves": n_empty,
               "min_bos_mass": format_rational(stated), "eps": format_rational(inst.eps)}
    statement = {
        "kind": KIND, "theorem": "logit sharing by input features, branch and bound on values",
        "instance": {**inst.base.statement(), "values": inst.values,
                     "positions": inst.positions},
        "eps": format_rational(inst.eps), "family": "S_T",
        "model_class": {"attention": "softmax", "heads": 1, "values": inst.values,
                        "positions": inst.positions, "value_features": "token",
                        "scores": "any function of (query features, key features)",
                        "norm_bound": None},
        "hypothesis": "error <= eps at every position of every sequence of the family",
        "conclusion": {"bounds": sorted([list(k), format_rational(v)]
                                        for k, v in proved.items())}}
    return Verdict(ok=True, kind=KIND, claim=text, details=details, statement=statement)
