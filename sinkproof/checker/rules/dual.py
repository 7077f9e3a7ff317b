"""Logit sharing in exact rationals: ``sinkmap-socp`` (Theorem 6: bound, ray and derived
entries for one head with known values and any scores) and the ``sinkmap-gated`` split of a
gated head over its gate.  Why it is sound: ``docs/soundness.md``."""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

from ...errors import CertificateError
from ..exact import InequalityFailed, check_leq, check_lt, common_denominator, dot, show
from ..family.trigger import TRIGGER, SocpInstance
from ..limits import current, require
from ..schema import (
    as_int,
    as_list,
    bound_rows,
    check_envelope,
    check_fields,
    child,
    format_rational,
    need,
    need_dict,
    need_int,
    need_list,
    need_rational,
    need_str,
    need_vector,
    rational_matrix,
    rational_vector,
    section,
)
from ..verdict import Verdict
from . import hull

BOUND_FIELDS = ("target", "constraints", "z", "w", "bound")
DERIVED_FIELDS = ("from", "target", "positions", "tokens", "matrix", "bound")
RAY_FIELDS = ("target", "direction")
CLAIM_FIELDS = ("statement", "bounds", "no_bound", "map")
SLOT_MAPS = {"sink_logit": "a zero-valued virtual slot of any logit b",
             "softmax1": "a zero-valued virtual slot of logit 0"}
"""The maps whose null mass (slot plus BOS) the program bounds, and their slot in words."""

Instance = SocpInstance


def _variables(prefix: tuple[int, ...]) -> list[tuple[int, int]]:
    """The block variables ``(key token, key position)`` a prefix uses (query's own key last)."""
    return [(tok, j) for j, tok in enumerate(prefix, start=1)]


def _scaled(x: Fraction, d: int) -> int:
    """``x·d`` for a multiple ``d`` of the denominator of ``x`` (integer arithmetic only)."""
    return x.numerator * (d // x.denominator)


def check_bound(inst: Instance, target: tuple[int, ...], constraints: list[tuple[int, ...]],
                z: list[list[Fraction]], w: list[Fraction], bound: Fraction,
                where: str) -> Fraction:
    """Verify one bound certificate exactly; return the proved bound ``1/(1 + c0)``.

    All sums are taken in integers after scaling by a common denominator ``S`` (exact,
    and much faster than summing fractions): ``G = S·g``, ``C0 = S·c0``.
    """
    t, q = len(target), target[-1]
    for i, prefix in enumerate(constraints):
        if len(prefix) != t or prefix[-1] != q:
            raise CertificateError(f"{where}.constraints[{i}]: prefix {list(prefix)} is not in "
                                   f"the block of query {q} at position {t}")
    targets = [inst.target_of(prefix) for prefix in constraints]
    d_mult = common_denominator([*(x for zi in z for x in zi), *w], f"{where}: z and w")
    tokens = sorted(inst.value)
    d_val = common_denominator([*(x for b in tokens for x in inst.value[b]), *inst.v_bos,
                                *(x for y in targets for x in y)], f"{where}: values and targets")
    en, ed = inst.eps.numerator, inst.eps.denominator
    scale = d_mult * d_val * ed
    val = {b: [_scaled(x, d_val) for x in inst.value[b]] for b in tokens}
    vbos = [_scaled(x, d_val) for x in inst.v_bos]
    G: dict[tuple[int, int], int] = {}
    C0 = 0
    for i, (prefix, zi, wi, yi) in enumerate(zip(constraints, z, w, targets)):
        Z = [_scaled(x, d_mult) for x in zi]
        W = _scaled(wi, d_mult)
        if W < 0:
            check_leq(Fraction(0), wi, f"{where}.w[{i}] >= 0")
        if sum(a * a for a in Z) > W * W:
            check_leq(dot(zi, zi), wi * wi, f"{where}: cone membership z·z <= w² of "
                                            f"constraint {i}")
        Y = [_scaled(x, d_val) for x in yi]
        zy = sum(a * b for a, b in zip(Z, Y))
        base = en * d_val * W - ed * zy
        C0 += base + ed * sum(a * b for a, b in zip(Z, vbos))
        zv = {b: ed * sum(a * c for a, c in zip(Z, val[b])) for b in set(prefix)}
        for var in _variables(prefix):
            G[var] = G.get(var, 0) + base + zv[var[0]]
    objective = set(_variables(target))
    for var in sorted(objective | set(G)):
        coeff = G.get(var, 0) + (scale if var in objective else 0)
        if coeff > 0:
            check_leq(Fraction(coeff, scale), Fraction(0),
                      f"{where}: dual feasibility g + a* <= 0 at u(key {var[0]} at position "
                      f"{var[1]})")
    check_lt(Fraction(0), Fraction(scale + C0, scale), f"{where}: 1 + c0 > 0")
    check_lt(Fraction(0), bound, f"{where}: stated bound > 0")
    proved = Fraction(scale, scale + C0)
    check_leq(bound, proved, f"{where}: stated bound <= 1/(1 + c0)")
    return proved


def check_ray(inst: Instance, target: tuple[int, ...], direction: dict[tuple[int, int], Fraction],
              where: str) -> None:
    """Verify a ray ``d`` of the block of a content query: ``u = λd`` is accurate for all ``λ``."""
    t, q = len(target), target[-1]
    if q == TRIGGER and t >= 2:
        raise CertificateError(f"{where}: ray certificates need target y = 0 in the whole block "
                               "(a content query, or the trigger at position 1)")
    check_leq(dot(inst.v_bos, inst.v_bos), inst.eps * inst.eps,
              f"{where}: u = 0 feasible, ||v(BOS)||² <= eps²")
    for (tok, j), dj in direction.items():
        check_leq(Fraction(0), dj, f"{where}: d >= 0 at key {tok} position {j}")
        if not 1 <= j <= t or (j == t and tok != q):
            raise CertificateError(f"{where}: direction variable (key {tok}, position {j}) is "
                                   f"not in the block of query {q} at position {t}")
    reach = sum((direction.get(var, Fraction(0)) for var in _variables(target)), Fraction(0))
    check_lt(Fraction(0), reach, f"{where}: the ray raises Z at the target, a*·d > 0")
    by_position: dict[int, list[tuple[int, Fraction]]] = {}
    for (tok, j), dj in direction.items():
        by_position.setdefault(j, []).append((tok, dj))
    positions = sorted(by_position)
    # Every prefix meets the support in one key (or none) per position: check all patterns
    # (a superset of those the family realises, which only makes the check stricter).
    options = [[None, *by_position[j]] if j < t else by_position[j] for j in positions]
    patterns, limit = 1, current().ray_patterns
    for o in options:  # stops once past the limit
        patterns *= len(o)
        if patterns > limit:
            break
    require("ray_patterns", patterns, f"{where}: support patterns of the ray", partial=True)
    require("work", patterns * (len(direction) + 1) * inst.p,
            f"{where}: exact operations to check the ray's patterns")
    for pattern in itertools.product(*options):
        picked = [item for item in pattern if item is not None]
        total = sum((dj for _, dj in picked), Fraction(0))
        vec = [sum((dj * inst.value[tok][c] for tok, dj in picked), Fraction(0))
               for c in range(inst.p)]
        check_leq(dot(vec, vec), (inst.eps * total) ** 2,
                  f"{where}: ray stays accurate, pattern {picked}")


def _check_symmetry(inst: Instance, pi: list[int], P: list[list[Fraction]], where: str) -> None:
    """``P`` orthogonal, ``content[π a] = P content[a]``, ``v(π a) = P v(a)``, ``P`` fixes the
    trigger's and BOS's values (why that carries bounds: ``docs/soundness.md``)."""
    p = inst.p
    for i in range(p):
        for j in range(p):
            entry = sum((P[r][i] * P[r][j] for r in range(p)), Fraction(0))
            if entry != (1 if i == j else 0):
                raise InequalityFailed(f"{where}.matrix: not orthogonal, (PᵀP)[{i}][{j}] = "
                                       f"{show(entry)}")

    def apply(vec: list[Fraction]) -> list[Fraction]:
        return [dot(row, vec) for row in P]

    for a in range(inst.k):
        if apply(inst.content[a]) != inst.content[pi[a]]:
            raise InequalityFailed(f"{where}: P·content[{a}] != content[{pi[a]}]")
        if apply(inst.value[a]) != inst.value[pi[a]]:
            raise InequalityFailed(f"{where}: P·v({a}) != v({pi[a]})")
    if apply(inst.value[TRIGGER]) != inst.value[TRIGGER] or apply(inst.v_bos) != inst.v_bos:
        raise InequalityFailed(f"{where}: P does not fix the values of TRIG and BOS")


def _check_derived(inst: Instance, base: dict[str, Any], entry: dict[str, Any],
                   checked: set, where: str) -> tuple[tuple[int, ...], Fraction]:
    """A bound carried along a symmetry; returns (target, stated bound)."""
    check_fields(entry, where, DERIVED_FIELDS)
    t = len(base["target"])
    target = inst.prefix(need(entry, "target", where), child(where, "target"))
    if len(target) != t:
        raise CertificateError(f"{where}.target: length differs from its certificate")
    sigma = need_list(entry, "positions", where, length=t - 1)
    if sorted(sigma) != list(range(1, t)):
        raise CertificateError(f"{where}.positions: not a permutation of 1..{t - 1}")
    pi = need_list(entry, "tokens", where, length=inst.k)
    if sorted(pi) != list(range(inst.k)):
        raise CertificateError(f"{where}.tokens: not a permutation of 0..{inst.k - 1}")
    P = rational_matrix(need(entry, "matrix", where), child(where, "matrix"), columns=inst.p)
    if len(P) != inst.p:
        raise CertificateError(f"{where}.matrix: expected {inst.p} rows, got {len(P)}")
    common_denominator((x for row in P for x in row), f"{where}.matrix")
    key = (tuple(pi), tuple(tuple(row) for row in P))
    if key not in checked:
        _check_symmetry(inst, pi, P, where)
        checked.add(key)

    def tok(x: int) -> int:
        return TRIGGER if x == TRIGGER else pi[x]

    image = [0] * t
    for j in range(1, t):
        image[sigma[j - 1] - 1] = tok(base["target"][j - 1])
    image[t - 1] = tok(base["target"][t - 1])
    if tuple(image) != target:
        raise InequalityFailed(f"{where}: the symmetry maps the certified prefix to {image}, "
                               f"not to the stated target {list(target)}")
    bound = need_rational(entry, "bound", where)
    check_lt(Fraction(0), bound, f"{where}: stated bound > 0")
    check_leq(bound, base["proved"], f"{where}: stated bound <= proved bound of its certificate")
    return target, bound


def _parse_bound(inst: Instance, entry: dict[str, Any], where: str) -> dict[str, Any]:
    check_fields(entry, where, BOUND_FIELDS)
    target = inst.prefix(need(entry, "target", where), child(where, "target"))
    raw = need_list(entry, "constraints", where, min_length=1)
    constraints = [inst.prefix(c, child(child(where, "constraints"), i)) for i, c in enumerate(raw)]
    z = rational_matrix(need(entry, "z", where), child(where, "z"), columns=inst.p)
    w = need_vector(entry, "w", where, length=len(constraints))
    if len(z) != len(constraints):
        raise CertificateError(f"{where}.z: expected {len(constraints)} rows, got {len(z)}")
    return dict(target=target, constraints=constraints, z=z, w=w,
                bound=need_rational(entry, "bound", where))


def verify(cert: dict[str, Any]) -> Verdict:
    """Check a ``sinkmap-socp`` certificate (or, by its kind, a ``sinkmap-gated`` one)."""
    if cert.get("kind") == "sinkmap-gated":
        return verify_gated(cert)
    inst = Instance(need_dict(cert, "instance", ""))
    claim = section(cert, "claim", CLAIM_FIELDS)
    amap = _read_map(inst, claim)
    data = section(cert, "data", ("certificates", "derived", "rays"))
    _estimate_symmetry_work(inst, data)
    proved: dict[tuple[int, ...], Fraction] = {}
    stated: dict[tuple[int, ...], Fraction] = {}
    listed: set[tuple[int, ...]] = set()
    bases = []
    for i, entry in enumerate(need_list(data, "certificates", "data")):
        where = f"data.certificates[{i}]"
        cert_i = _parse_bound(inst, entry, where)
        cert_i["proved"] = check_bound(inst, cert_i["target"], cert_i["constraints"],
                                       cert_i["z"], cert_i["w"], cert_i["bound"], where)
        bases.append(cert_i)
        _keep_best(stated, cert_i["target"], cert_i["bound"])
        listed.update(cert_i["constraints"])
    checked: set = set()
    derived = need_list(data, "derived", "data")
    if derived and inst.family != "S_T":
        raise CertificateError("data.derived: symmetries carry bounds only within S_T, "
                               "not within a listed family")
    for i, entry in enumerate(derived):
        where = f"data.derived[{i}]"
        src = need_int(entry, "from", where, minimum=0)
        if src >= len(bases):
            raise CertificateError(f"{where}.from: no certificate number {src}")
        target, bound = _check_derived(inst, bases[src], entry, checked, where)
        _keep_best(stated, target, bound)
    unbounded = []
    for i, entry in enumerate(need_list(data, "rays", "data")):
        where = f"data.rays[{i}]"
        check_fields(entry, where, RAY_FIELDS)
        target = inst.prefix(need(entry, "target", where), child(where, "target"))
        direction: dict[tuple[int, int], Fraction] = {}
        for r, item in enumerate(need_list(entry, "direction", where, min_length=1)):
            at = child(child(where, "direction"), r)
            trip = as_list(item, at, length=3)
            tok = inst.prefix([trip[0]], at)[0]
            j = as_int(trip[1], f"{at}[1]", what="a key position")
            direction[(tok, j)] = rational_vector([trip[2]], at)[0]
        common_denominator(direction.values(), f"{where}.direction")
        check_ray(inst, target, direction, where)
        unbounded.append(target)
    proved.update(stated)
    return _verdict(inst, claim, proved, unbounded, listed, amap)


def _read_map(inst: Instance, claim: dict[str, Any]) -> str:
    """The map whose sink measure the bounds are read on (``claim.map``, default
    ``softmax``); a slot map needs ``v(BOS) = 0`` exactly."""
    if "map" not in claim:
        return "softmax"
    name = need_str(claim, "map", "claim", ("softmax", *SLOT_MAPS))
    if name != "softmax" and not inst.base.bos_is_zero:
        raise CertificateError(f"claim.map: the bounds are on the {name} null mass only when "
                               f"BOS carries value 0, and this file's values give BOS the "
                               f"value {[show(x) for x in inst.v_bos]}")
    return name


def _keep_best(stated: dict[tuple[int, ...], Fraction], target: tuple[int, ...],
               bound: Fraction) -> None:
    """Every stated bound is verified; a target listed twice keeps the larger."""
    stated[target] = max(bound, stated.get(target, bound))


def _estimate_symmetry_work(inst: Instance, data: dict[str, Any]) -> None:
    """Refuse before checking when the distinct symmetries of ``derived`` cost too much:
    each is ``O(p³ + k·p²)`` exact operations."""
    derived = data.get("derived")
    if not isinstance(derived, list):
        return
    distinct = {repr((e.get("tokens"), e.get("matrix"))) for e in derived if isinstance(e, dict)}
    require("work", len(distinct) * (inst.p**3 + 2 * inst.k * inst.p**2),
            "data.derived: exact operations to check the symmetries")


def _statement(inst: Instance, proved: dict[tuple[int, ...], Fraction],
               unbounded: list[tuple[int, ...]], listed: set[tuple[int, ...]],
               amap: str = "softmax") -> dict[str, Any]:
    """What a sink-map certificate proves, as canonical data (for a slot map also its
    ``measure``; a softmax statement is unchanged by the optional ``claim.map``)."""
    values = inst.base.statement()["values"]
    family: Any = ("S_T" if inst.family == "S_T" else
                   {"listed_prefixes": sorted(list(x) for x in listed)})
    measure = {} if amap == "softmax" else {"measure": "null mass (slot plus BOS)"}
    return {"kind": "sinkmap-socp", "theorem": "Theorem 6 (logit sharing)",
            "instance": inst.base.statement(), "eps": format_rational(inst.eps),
            "family": family,
            "model_class": {"attention": amap, "heads": 1, "values": values,
                            "positions": "any", "value_features": "token"},
            **measure,
            "hypothesis": ("error <= eps at every position of every sequence of the family"
                           if inst.family == "S_T" else
                           "error <= eps at the last position of every listed prefix"),
            "conclusion": {"bounds": bound_rows(proved),
                           "no_bound": sorted(list(x) for x in unbounded)}}


def _verdict(inst: Instance, claim: dict[str, Any], proved: dict[tuple[int, ...], Fraction],
             unbounded: list[tuple[int, ...]], listed: set[tuple[int, ...]],
             amap: str = "softmax") -> Verdict:
    n_bounds = need_int(claim, "bounds", "claim", minimum=0)
    n_rays = need_int(claim, "no_bound", "claim", minimum=0)
    if n_bounds != len(proved):
        raise CertificateError(f"claim.bounds: states {n_bounds} certified prefixes, "
                               f"the data certify {len(proved)}")
    if n_rays != len(unbounded):
        raise CertificateError(f"claim.no_bound: states {n_rays} unbounded prefixes, "
                               f"the data show {len(unbounded)}")
    hypothesis = (f"error <= {format_rational(inst.eps)} on S_T (p={inst.p}, T={inst.T}, "
                  f"{inst.triggers} trigger)" if inst.family == "S_T"
                  else f"error <= {format_rational(inst.eps)} at each listed prefix")
    lowest, details = _lowest(proved, inst, no_bound=len(unbounded))
    if amap == "softmax":
        model, mass = "softmax model", "BOS mass"
    else:
        model = f"{amap} model ({SLOT_MAPS[amap]})"
        mass = "null mass (the slot's weight plus BOS's)"
    statement = (f"[{inst.base.describe()}] "
                 f"every single-head {model} with the stated values, any score function "
                 f"s(x_t,t,x_j,j), and {hypothesis} has {mass} >= the stated bound at the last "
                 f"position of each of {len(proved)} prefixes"
                 + lowest
                 + (f"; at {len(unbounded)} prefixes logit sharing forces no sink (verified rays)"
                    if unbounded else ""))
    return Verdict(ok=True, kind="sinkmap-socp", claim=statement, details=details,
                   statement=_statement(inst, proved, unbounded, listed, amap))


def _lowest(proved: dict[tuple[int, ...], Fraction], inst: Instance, **counts: int
            ) -> tuple[str, dict[str, Any]]:
    """The claim's note on the least proved bound, and the verdict's details."""
    details: dict[str, Any] = {"bounds": len(proved), **counts, "eps": format_rational(inst.eps)}
    if not proved:
        return "", details
    details["lowest_bound"] = format_rational(min(proved.values()))
    return f" (lowest {show(min(proved.values()))})", details


# ------------------------------------------------------------------ the gated sink map
DATA_FIELDS = ("hull", "levels", "targets")


def _nested(entry: Any, kind: str, where: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise CertificateError(f"{where}: expected a {kind} certificate object")
    got = check_envelope(entry)
    if got != kind:
        raise CertificateError(f"{where}.kind: expected {kind!r}, got {got!r}")
    return entry


def _same_instance(outer: dict[str, Any], inner: dict[str, Any], drop: tuple[str, ...],
                   where: str) -> None:
    a = {k: v for k, v in outer.items() if k not in drop}
    b = {k: v for k, v in inner.items() if k not in drop}
    if a != b:
        raise CertificateError(f"{where}.instance: differs from the outer instance")


def _targets(inst: Instance, data: dict[str, Any]) -> list[tuple[tuple[int, ...], Fraction]]:
    items = need_list(data, "targets", "data")
    require("prefixes", len(items), "data.targets")
    out = []
    seen = set()
    for i, item in enumerate(items):
        where = child("data.targets", i)
        check_fields(item, where, ("target", "bound"))
        target = inst.prefix(need(item, "target", where), child(where, "target"))
        if target[-1] == TRIGGER:
            raise CertificateError(f"{where}.target: ends in the trigger (a trigger position)")
        if target in seen:
            raise CertificateError(f"{where}.target: listed twice")
        seen.add(target)
        out.append((target, need_rational(item, "bound", where)))
    return out


def _levels(inst: Instance, outer: dict[str, Any], data: dict[str, Any]
            ) -> tuple[list[Fraction], list[dict[tuple[int, ...], Fraction]]]:
    levels = need_list(data, "levels", "data")
    gates: list[Fraction] = []
    bounds: list[dict[tuple[int, ...], Fraction]] = []
    for i, entry in enumerate(levels):
        where = child("data.levels", i)
        check_fields(entry, where, ("gate", "certificate"))
        g = need_rational(entry, "gate", where)
        if not (0 < g <= 1) or (gates and g <= gates[-1]):
            raise CertificateError(f"{where}.gate: gates must increase strictly within (0, 1], "
                                   f"got {show(g)}")
        cert = _nested(need(entry, "certificate", where), "sinkmap-socp",
                       child(where, "certificate"))
        inner = need_dict(cert, "instance", child(where, "certificate"))
        _same_instance(outer, inner, ("eps",), child(where, "certificate"))
        level_eps = need_rational(inner, "eps", child(where, "certificate.instance"))
        if level_eps != inst.eps / g:
            raise CertificateError(f"{where}: the level's eps is {show(level_eps)}, not "
                                   f"eps/gate = {show(inst.eps / g)}")
        verdict = verify(cert)  # raises InequalityFailed when a number fails
        proved = {tuple(p): Fraction(b) for p, b in verdict.statement["conclusion"]["bounds"]}
        gates.append(g)
        bounds.append(proved)
    return gates, bounds


def _hull_bounds(outer: dict[str, Any], data: dict[str, Any]) -> dict[tuple[int, ...], Fraction]:
    cert = _nested(need(data, "hull", "data"), "hull-family", "data.hull")
    _same_instance(outer, need_dict(cert, "instance", "data.hull"), ("family",), "data.hull")
    verdict = hull.verify_family(cert)
    return {tuple(s): Fraction(b) for s, b in verdict.statement["conclusion"]["bounds"]}


def gate_split_bound(gates: list[Fraction], level_bounds: list[Fraction]) -> Fraction:
    """``1 - max(g_1, max_k g_{k+1}(1 - B_k))`` with ``g_{K+1} = 1`` (0 gates: 0)."""
    if not gates:
        return Fraction(0)
    worst = gates[0]
    for k, b in enumerate(level_bounds):
        upper = gates[k + 1] if k + 1 < len(gates) else Fraction(1)
        worst = max(worst, upper * (1 - b))
    return 1 - worst


def verify_gated(cert: dict[str, Any]) -> Verdict:
    """Check a ``sinkmap-gated`` certificate; returns a :class:`Verdict`."""
    outer = need_dict(cert, "instance", "")
    inst = Instance(outer)
    if inst.family != "S_T":
        raise CertificateError("instance.family: the gated sink map holds on S_T only")
    if not inst.base.bos_is_zero:
        raise CertificateError("instance.values: v(BOS) must be 0 (BOS is part of the null)")
    claim = section(cert, "claim", ("statement", "bounds"))
    data = section(cert, "data", DATA_FIELDS)
    targets = _targets(inst, data)
    by_set = _hull_bounds(outer, data)
    gates, levels = _levels(inst, outer, data)
    proved: dict[tuple[int, ...], Fraction] = {}
    for i, (target, stated) in enumerate(targets):
        where = child("data.targets", i)
        split = gate_split_bound(gates, [lv.get(target, Fraction(0)) for lv in levels])
        best = max(split, by_set.get(tuple(sorted(set(target))), Fraction(0)))
        check_lt(Fraction(0), stated, f"{where}: stated bound > 0")
        check_leq(stated, best, f"{where}: stated bound <= proved null-mass bound "
                                f"(gate split {show(split)}, hull)")
        proved[target] = stated
    n = need_int(claim, "bounds", "claim", minimum=0)
    if n != len(proved):
        raise CertificateError(f"claim.bounds: states {n} prefixes, the data certify "
                               f"{len(proved)}")
    lowest, details = _lowest(proved, inst, levels=len(gates))
    statement = {
        "kind": "sinkmap-gated", "theorem": "logit sharing split over the gate, and Theorem 3",
        "instance": inst.base.statement(), "eps": format_rational(inst.eps), "family": "S_T",
        "model_class": {"attention": "gated_softmax", "heads": 1,
                        "values": inst.base.statement()["values"], "positions": "any",
                        "gate": "any function of the query token and position, in (0, 1]"},
        "hypothesis": "error <= eps at every position of every sequence of the family",
        "conclusion": {"null_mass_bounds": bound_rows(proved),
                       "gates": [format_rational(g) for g in gates]}}
    text = (f"[{inst.base.describe()}] every single-head gated softmax model with the stated "
            f"values, any score function, any query gate and error <= {show(inst.eps)} on "
            f"S_T has null mass (1 - g_t) + g_t α_t0 >= the stated bound at the last "
            f"position of each of {len(proved)} prefixes"
            + lowest + f"; {len(gates)} gate levels")
    return Verdict(ok=True, kind="sinkmap-gated", claim=text, details=details,
                   statement=statement)
