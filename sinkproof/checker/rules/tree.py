"""Branch-and-bound certificates in exact rationals: ``bnb-learned-values`` (and
``paper-bnb-learned-values`` on the paper Family), trees of value boxes whose leaves bound
BOS mass ``>= 1/(1 + c0)`` by weak duality, and ``bnb-heads``, steps that use earlier steps
as lemmas.  Why it is sound: ``docs/soundness.md``."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ...errors import CertificateError
from ..exact import InequalityFailed, check_leq, check_lt, common_denominator, dot, show
from ..family.paper import PaperInstance
from ..family.trigger import HeadsInstance, TreeInstance
from ..limits import require
from ..schema import (
    as_int,
    as_list,
    bound_rows,
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
    section,
)
from ..verdict import Verdict

KIND = "bnb-learned-values"
PAPER_KIND = "paper-bnb-learned-values"
HEADS_KIND = "bnb-heads"
TREE_FIELDS = ("target", "bound", "root")
LEAF_FIELDS = ("box", "constraints", "z", "s", "s0")
SPLIT_FIELDS = ("token", "coord", "at")
STEP_FIELDS = ("target", "bound", "leaf")
STEP_LEAF_FIELDS = ("constraints", "z", "s", "mu", "nu", "kappa")

Interval = tuple[Fraction | None, Fraction | None]
Box = dict[int, list[Interval]]
Lemma = tuple[dict[tuple, int], Fraction]  # (class counts a_k, c_k = 1/b_k - 1)
Instance = TreeInstance


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


def _cones(inst: Any, leaf: dict[str, Any], where: str
           ) -> tuple[list[tuple[int, ...]], list[list[Fraction]], list[Fraction]]:
    """A leaf's constraint prefixes ``X_i`` and cone multipliers ``(z_i, s_i)``, read and
    checked: ``s_i >= 0`` and ``z_i·z_i <= s_i²``."""
    raw = need_list(leaf, "constraints", where)
    prefixes = [inst.prefix(c, child(child(where, "constraints"), i)) for i, c in enumerate(raw)]
    z = rational_matrix(need(leaf, "z", where), child(where, "z"), columns=inst.p)
    if len(z) != len(prefixes):
        raise CertificateError(f"{where}.z: expected {len(prefixes)} rows, got {len(z)}")
    s = rational_vector(need(leaf, "s", where), child(where, "s"), length=len(prefixes))
    return prefixes, z, s


def _cone_checks(z: list[list[Fraction]], s: list[Fraction], where: str, i: int) -> None:
    check_leq(Fraction(0), s[i], f"{where}.s[{i}] >= 0")
    check_leq(dot(z[i], z[i]), s[i] * s[i], f"{where}: cone membership z·z <= s² of "
              f"constraint {i}")


def _dual_feasible(inst: Any, target: tuple[int, ...], h: dict[tuple, Fraction],
                   where: str, order: Any = None) -> None:
    """``h_l + a*_l <= 0`` for every class (``a*`` the class counts of ``target``)."""
    objective = inst.classes(target)
    for cls in objective:
        h.setdefault(cls, Fraction(0))
    for cls in (h if order is None else order(h)):
        check_leq(h[cls] + objective.get(cls, 0), Fraction(0),
                  f"{where}: dual feasibility h + a* <= 0 at {inst.class_name(cls)}")


def leaf_terms(inst: Instance, box: Box, prefixes: list[tuple[int, ...]],
               z: list[list[Fraction]], s: list[Fraction], s0: Fraction,
               d: int, memo: dict) -> tuple[Fraction, dict[tuple, Fraction | None]]:
    """``c0`` and ``h_l`` per class of the aggregated inequality ``0 <= c0 + Σ_l h_l u_l``
    (``h_l`` is ``None`` where the box leaves ``G_l·v`` unbounded above).

    For every model with values in ``box`` and ``u >= 0`` the sum
    ``Σ_i (eps s_i Z_i + z_i·r_i) + eps s_0 + z_0·v_BOS`` (``z_0 = -Σ z_i``) is at most
    ``c0 + Σ_l h_l u_l``, with equality but for the step ``G_l·v <= σ_B(G_l)``.  ``G_l``
    is summed in integers, ``d·G_l`` with ``d`` the ``z``'s common denominator (the same
    rationals, no fraction reduced per addition); ``memo``: each prefix's target, classes.
    """
    eps = inst.eps
    c0 = eps * s0
    G: dict[tuple, list[int]] = {}
    H: dict[tuple, Fraction] = {}
    for prefix, zi, si in zip(prefixes, z, s):
        got = memo.get(prefix)
        if got is None:
            y = inst.target_of(prefix)
            got = memo[prefix] = (y if any(y) else None, inst.classes(prefix))
        target, classes = got
        coeff = eps * si if target is None else eps * si - dot(zi, target)
        c0 += coeff
        scaled = [x.numerator * (d // x.denominator) for x in zi]
        for cls, m in classes.items():
            g = G.setdefault(cls, [0] * len(scaled))
            for c, x in enumerate(scaled):
                g[c] += m * x
            H[cls] = H.get(cls, Fraction(0)) + m * coeff
    h: dict[tuple, Fraction | None] = {}
    for cls in sorted(G, key=repr):
        sigma = support([Fraction(x, d) for x in G[cls]], box[cls[2]])
        h[cls] = None if sigma is None else H[cls] + sigma
    return c0, h


def check_leaf(inst: Instance, target: tuple[int, ...], box: Box, leaf: dict[str, Any],
               where: str, memo: dict) -> Fraction:
    """Verify one leaf exactly; return ``c0`` (``Z* <= 1 + c0`` on its box; empty if ``< 0``)."""
    check_fields(leaf, where, LEAF_FIELDS)
    prefixes, z, s = _cones(inst, leaf, where)
    d = common_denominator((x for zi in z for x in zi), "the leaf's multipliers z")
    s0 = need_rational(leaf, "s0", where)
    for i in range(len(prefixes)):
        _cone_checks(z, s, where, i)
    check_leq(Fraction(0), s0, f"{where}.s0 >= 0")
    if inst.values == "learned":  # fixed values have v_BOS = 0: the z0 term vanishes
        z0 = [-sum((zi[c] for zi in z), Fraction(0)) for c in range(inst.p)]
        check_leq(dot(z0, z0), s0 * s0, f"{where}: position 0, z0·z0 <= s0² with z0 = -Σ z_i")
    c0, h = leaf_terms(inst, box, prefixes, z, s, s0, d, memo)
    for cls in inst.classes(target):
        h.setdefault(cls, Fraction(0))
    for cls, value in h.items():
        if value is None:
            raise InequalityFailed(f"{where}: the box leaves G·v unbounded above for "
                                   f"{inst.class_name(cls)}")
    if c0 < 0 and all(v <= 0 for v in h.values()):
        return c0  # 0 <= c0 + h·u < 0 for every u >= 0: no model has values in this box
    _dual_feasible(inst, target, h, where)
    return c0


def _estimate_work(inst: Any, nodes: list[Any], node_cost: int,
                   costs: tuple[tuple[str, int], ...], children: tuple[str, ...],
                   where: str) -> None:
    """Refuse before any arithmetic when the leaves cost too much: ``node_cost`` per node
    (a box: ``O(k·p)``), and per row of each field of a leaf its cost (a constraint:
    ``O(T·p)``)."""
    work, stack = 0, list(nodes)
    while stack:
        node = stack.pop()
        work += node_cost
        leaf = node.get("leaf") if isinstance(node, dict) else None
        if isinstance(leaf, dict):
            for key, cost in costs:
                rows = leaf.get(key)
                work += (len(rows) if isinstance(rows, list) else 0) * cost
        elif isinstance(node, dict):
            stack.extend(node[key] for key in children if key in node)
        require("work", work, f"{where}: exact operations to check it")


def _walk(inst: Instance, target: tuple[int, ...], root: Any, where: str,
          memo: dict) -> tuple[Fraction, int, int]:
    """Check every leaf below ``root``; return (least BOS bound, leaves, empty leaves);
    ``memo``: :func:`leaf_terms`' prefix data, kept over the trees of a certificate."""
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
                raise InequalityFailed(f"{at}.leaf.box: differs from the box its splits define")
            c0 = check_leaf(inst, target, box, leaf, child(at, "leaf"), memo)
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
    claim = section(cert, "claim", ("statement", "min_bos_mass", "targets"))
    data = section(cert, "data", ("trees",))
    trees = need_list(data, "trees", "data", min_length=1)
    for i, tree in enumerate(trees):
        check_fields(tree, f"data.trees[{i}]", TREE_FIELDS)
        _estimate_work(inst, [tree.get("root")], inst.k * inst.p + 1,
                       (("constraints", (inst.T + 2) * inst.p),), ("below", "above"),
                       f"data.trees[{i}]")
    lowest: Fraction | None = None
    n_leaves = n_empty = 0
    proved: dict[tuple[int, ...], Fraction] = {}
    memo: dict = {}
    for i, tree in enumerate(trees):
        where = f"data.trees[{i}]"
        target = inst.prefix(need(tree, "target", where), child(where, "target"))
        if target in proved:
            raise CertificateError(f"{where}.target: {list(target)} has two trees")
        bound = need_rational(tree, "bound", where)
        check_lt(Fraction(0), bound, f"{where}: stated bound > 0")
        least, leaves, empty = _walk(inst, target, need(tree, "root", where),
                                     child(where, "root"), memo)
        check_leq(bound, least, f"{where}: stated bound <= every leaf's 1/(1 + c0)")
        proved[target] = bound
        n_leaves, n_empty = n_leaves + leaves, n_empty + empty
        lowest = bound if lowest is None else min(lowest, bound)
    stated = need_rational(claim, "min_bos_mass", "claim")
    check_leq(stated, lowest, "claim.min_bos_mass <= every tree's bound")
    if need_int(claim, "targets", "claim", minimum=1) != len(trees):
        raise CertificateError(f"claim.targets: the data hold {len(trees)} trees")
    return proved, stated, n_leaves, n_empty


def verify_paper(cert: dict[str, Any]) -> Verdict:
    """Check a ``paper-bnb-learned-values`` certificate; returns a :class:`Verdict`."""
    inst = PaperInstance(need_dict(cert, "instance", ""))
    proved, stated, n_leaves, n_empty = check_trees(inst, cert)
    for target in proved:
        if target[-1] >= inst.m:
            raise CertificateError(f"data.trees: target {list(target)} ends at the trigger; "
                                   "the bound is for non-trigger positions")
    text = (f"paper setting [n={inst.n}, L={inst.L}, the m={inst.m} content vectors listed]: "
            f"every one-layer single-head softmax model (learned W_Q, W_K, W_V, W_O, no "
            f"positional encoding; proved for logits any function of the (query, key) "
            f"tokens and any value vector per token) with error <= "
            f"{format_rational(inst.eps)} at every position of every sequence has BOS "
            f"weight >= {show(stated)} at the last position of each of {len(proved)} "
            f"non-trigger target prefixes ({n_leaves} leaves, {n_empty} of them empty "
            f"boxes); no norm bound assumed")
    return tree_verdict(PAPER_KIND, inst, text, proved, stated, {
        "setting": "paper",
        "theorem": "logit sharing by token pair, branch and bound on per-token values",
        "instance": {"n": inst.n, "L": inst.L,
                     "content": {"scheme": "custom", "vectors": inst.family.vectors()}},
        "model_class": {"attention": "softmax", "heads": 1, "layers": 1,
                        "values": "learned (any vector per token: every W_O W_V)",
                        "scores": "any function of (query token, key token)",
                        "norm_bound": None},
        "hypothesis": "error (Euclidean) <= eps at every position of every sequence"},
        leaves=n_leaves, empty_leaves=n_empty)


def tree_verdict(kind: str, inst: Any, text: str, proved: dict[tuple[int, ...], Fraction],
                 stated: Fraction, statement: dict[str, Any], conclusion: Any = (),
                 **details: Any) -> Verdict:
    """A verified tree kind's verdict: ``statement`` and ``details`` completed with the
    instance's ``eps``, the proved bounds and the stated least bound."""
    eps = format_rational(inst.eps)
    return Verdict(ok=True, kind=kind, claim=text, details={
        "targets": len(proved), **details, "min_bos_mass": format_rational(stated), "eps": eps},
        statement={"kind": kind, **statement, "eps": eps,
                   "conclusion": {**dict(conclusion), "bounds": bound_rows(proved)}})


def verify(cert: dict[str, Any]) -> Verdict:
    """Check a ``bnb-learned-values`` certificate (or ``paper-bnb-learned-values``: the same
    argument with classes ``l = (query code, key code)`` on the paper Family, where the
    logits depend on the token pair only and each token has its own value vector)."""
    kind = need_str(cert, "kind", "", choices=(KIND, PAPER_KIND, HEADS_KIND))
    if kind != KIND:
        return verify_paper(cert) if kind == PAPER_KIND else verify_heads(cert)
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
    return tree_verdict(KIND, inst, text, proved, stated, {
        "theorem": "logit sharing by input features, branch and bound on values",
        "instance": {**inst.base.statement(), "values": inst.values,
                     "positions": inst.positions},
        "family": "S_T",
        "model_class": {"attention": "softmax", "heads": 1, "values": inst.values,
                        "positions": inst.positions, "value_features": "token",
                        "scores": "any function of (query features, key features)",
                        "norm_bound": None},
        "hypothesis": "error <= eps at every position of every sequence of the family"},
        leaves=n_leaves, empty_leaves=n_empty)


def _entries(value: Any, where: str, width: int) -> list[list[Any]]:
    return [as_list(e, child(where, i), length=width) for i, e in enumerate(as_list(value, where))]


def _step_index(value: Any, where: str, before: int) -> int:
    return as_int(value, where, 0, before, f"the index of an earlier step (0..{before - 1})")


def check_step(inst: HeadsInstance, target: tuple[int, ...], leaf: dict[str, Any],
               lemmas: list[Lemma], where: str) -> Fraction:
    """Verify one step's multipliers exactly; return ``c0`` (``Z* <= 1 + c0`` in every head)."""
    check_fields(leaf, where, STEP_LEAF_FIELDS)
    prefixes, z, s = _cones(inst, leaf, where)
    m = len(prefixes)
    mu = rational_vector(need(leaf, "mu", where), child(where, "mu"), length=m)
    nu: list[list[tuple[int, Fraction]]] = [[] for _ in range(m)]
    for e, (i, k, x) in enumerate(_entries(need(leaf, "nu", where), child(where, "nu"), 3)):
        at = child(child(where, "nu"), e)
        as_int(i, f"{at}[0]", 0, m, f"a constraint index (0..{m - 1})")
        nu[i].append((_step_index(k, child(at, 1), len(lemmas)), parse_rational(x, child(at, 2))))
    kappa = [(_step_index(k, child(child(child(where, "kappa"), e), 0), len(lemmas)),
              parse_rational(x, child(child(child(where, "kappa"), e), 1)))
             for e, (k, x) in enumerate(_entries(need(leaf, "kappa", where),
                                                 child(where, "kappa"), 2))]
    for i in range(m):
        _cone_checks(z, s, where, i)
        check_leq(Fraction(0), mu[i], f"{where}.mu[{i}] >= 0")
        for k, x in nu[i]:
            check_leq(Fraction(0), x, f"{where}: nu >= 0 (constraint {i}, step {k})")
    for k, x in kappa:
        check_leq(Fraction(0), x, f"{where}: kappa >= 0 (step {k})")
    c0, h, q = step_terms(inst, prefixes, z, s, mu, nu, kappa, lemmas)
    for (i, cls), value in q.items():
        check_leq(value, Fraction(0), f"{where}: the other heads' weight on "
                  f"{inst.class_name(cls)} in constraint {i} has coefficient q <= 0")
    _dual_feasible(inst, target, h, where, lambda h: sorted(h, key=repr))
    return c0


def step_terms(inst: HeadsInstance, prefixes: list[tuple[int, ...]], z: list[list[Fraction]],
               s: list[Fraction], mu: list[Fraction], nu: list[list[tuple[int, Fraction]]],
               kappa: list[tuple[int, Fraction]], lemmas: list[Lemma]
               ) -> tuple[Fraction, dict[tuple, Fraction], dict[tuple[int, tuple], Fraction]]:
    """``c0``, ``h_l`` per class and ``q_il`` per (constraint, class) of the weighted sum
    ``0 <= c0 + Σ_l h_l u_l + Σ_il q_il λ_il`` (an identity in ``u`` and ``λ``)."""
    others = inst.heads - 1
    eps = inst.eps
    c0 = sum((x * lemmas[k][1] for k, x in kappa), Fraction(0))
    h: dict[tuple, Fraction] = {}
    q: dict[tuple[int, tuple], Fraction] = {}
    for i, (prefix, zi) in enumerate(zip(prefixes, z)):
        rho = (eps * s[i] - dot(zi, inst.target_of(prefix))
               + others * (mu[i] + sum((x * lemmas[k][1] for k, x in nu[i]), Fraction(0))))
        c0 += rho
        for cls, mult in inst.classes(prefix).items():
            zv = dot(zi, inst.value(cls[2]))
            q[i, cls] = zv - mu[i] - sum(
                (x * (Fraction(lemmas[k][0].get(cls, 0), mult) + lemmas[k][1])
                 for k, x in nu[i]), Fraction(0))
            h[cls] = h.get(cls, Fraction(0)) + mult * (rho + zv)
    for k, x in kappa:
        for cls, a in lemmas[k][0].items():
            h[cls] = h.get(cls, Fraction(0)) - x * a
    return c0, h, q


def verify_heads(cert: dict[str, Any]) -> Verdict:
    """Check a ``bnb-heads`` certificate; returns a :class:`Verdict`."""
    inst = HeadsInstance(need_dict(cert, "instance", ""))
    claim = section(cert, "claim", ("statement", "min_bos_mass", "targets"))
    data = section(cert, "data", ("steps", "targets"))
    steps = need_list(data, "steps", "data", min_length=1)
    _estimate_work(inst, steps, 1, (("constraints", (inst.T + 2) * inst.p), ("nu", inst.T + 2),
                                    ("kappa", inst.T + 2)), (), "data.steps")
    lemmas: list[Lemma] = []
    bounds: list[tuple[tuple[int, ...], Fraction]] = []
    for n, step in enumerate(steps):
        where = child("data.steps", n)
        check_fields(step, where, STEP_FIELDS)
        target = inst.prefix(need(step, "target", where), child(where, "target"))
        bound = need_rational(step, "bound", where)
        if not Fraction(0) < bound <= 1:
            raise CertificateError(f"{where}.bound: must lie in (0, 1], got {show(bound)}")
        c0 = check_step(inst, target, need_dict(step, "leaf", where), lemmas,
                        child(where, "leaf"))
        if c0 >= 0:
            check_leq(bound, 1 / (1 + c0), f"{where}: stated bound <= 1/(1 + c0)")
        lemmas.append((inst.classes(target), 1 / bound - 1))
        bounds.append((target, bound))
    chosen = as_list(need(data, "targets", "data"), "data.targets", min_length=1)
    proved: dict[tuple[int, ...], Fraction] = {}
    for e, k in enumerate(chosen):
        idx = _step_index(k, child("data.targets", e), len(steps))
        target, bound = bounds[idx]
        if target in proved:
            raise CertificateError(f"data.targets[{e}]: {list(target)} is listed twice")
        proved[target] = bound
    stated = need_rational(claim, "min_bos_mass", "claim")
    check_leq(stated, min(proved.values()), "claim.min_bos_mass <= every target's bound")
    if need_int(claim, "targets", "claim", minimum=1) != len(proved):
        raise CertificateError(f"claim.targets: data.targets lists {len(proved)} steps")
    text = (f"every model of {inst.heads} softmax head(s) with fixed values U_fix whose outputs "
            f"add, scores any function of the (query, key) input features ({inst.positions} "
            f"positions), and error <= {format_rational(inst.eps)} on S_T (p={inst.p}, "
            f"T={inst.T}, {inst.base.triggers} trigger) has BOS mass >= {show(stated)} in "
            f"EVERY head at the last position of each of {len(proved)} target prefixes "
            f"({len(steps)} steps, {len(steps) - len(proved)} of them lemmas); "
            f"no norm bound assumed")
    return tree_verdict(HEADS_KIND, inst, text, proved, stated, {
        "theorem": "logit sharing in every head, the other heads' weight bounded by earlier "
                   "steps",
        "instance": {**inst.base.statement(), "values": "fixed", "positions": inst.positions},
        "family": "S_T",
        "model_class": {"attention": "softmax", "heads": inst.heads, "values": "fixed",
                        "positions": inst.positions, "value_features": "token",
                        "scores": "any function of (query features, key features)",
                        "combine": "sum of the heads' outputs", "norm_bound": None},
        "hypothesis": "error <= eps at every position of every sequence of the family"},
        {"heads": "every"}, steps=len(steps), heads=inst.heads)
