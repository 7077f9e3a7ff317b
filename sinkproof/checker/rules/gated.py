"""Checker for ``sinkmap-gated`` certificates: null-mass bounds for one gated softmax head.

A gated head outputs ``g_t Σ_j α_tj v_j`` with softmax weights ``α`` and a gate
``g_t ∈ (0, 1)`` that depends only on the query row (token and position); its null mass
at ``t`` is ``(1 - g_t) + g_t α_t0`` and the rest is ``M = g_t (1 - α_t0)``.  With BOS
carrying value 0, at a content query every target is ``y = 0``, so "error ``<= eps``" at
a prefix of the block of query ``(q, t)`` reads ``||Σ_j u_j v(x_j)|| <= (eps / g) Z`` with
the softmax ratios ``u`` and ``Z = 1 + Σ_j u_j``: the softmax logit-sharing program at
level ``eps / g``, where ``g = g(q, t)`` is one number for the whole block.  Hence for
every gate ``g >= g_k`` the ratios are feasible at ``eps_k = eps / g_k``, a
``sinkmap-socp`` certificate at ``eps_k`` gives ``α_t0 >= B_k`` and ``M <= g (1 - B_k)``.
Over a grid ``0 < g_1 < ... < g_K <= 1`` (``g_{K+1} = 1``):

    M <= max(g_1, max_k g_{k+1} (1 - B_k)),     B_k = 0 where level k bounds nothing.

Theorem 3 also holds (the effective weights ``g α_j`` and the slot ``1 - g`` lie on the
simplex and both BOS and the slot carry value 0): a ``hull-family`` certificate gives
``null mass >= 1 - eps/d(S)``.  Each target's proved bound is the larger of the two.

Layout (inside the common envelope)::

    instance: as sinkmap-socp's (task, content_vectors?, values, eps, family = "S_T");
              v(BOS) must be 0
    claim:    {statement, bounds: N}
    data:     {hull: <hull-family certificate, same instance without family>,
               levels: [{gate: q, certificate: <sinkmap-socp certificate at eps/gate>}],
               targets: [{target: [tokens], bound: q}]}

The nested certificates are checked by their own modules; the instance of each must be
the outer one exactly (a level's ``eps`` being ``eps / gate``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ...errors import CertificateError
from ..exact import check_leq, check_lt, show
from ..family.trigger import TRIGGER
from ..limits import require
from ..schema import (
    check_envelope,
    check_fields,
    child,
    format_rational,
    need,
    need_dict,
    need_int,
    need_list,
    need_rational,
)
from ..verdict import Verdict
from . import dual, hull

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


def _targets(inst: dual.Instance, data: dict[str, Any]) -> list[tuple[tuple[int, ...], Fraction]]:
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


def _levels(inst: dual.Instance, outer: dict[str, Any], data: dict[str, Any]
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
        verdict = dual.verify(cert)  # raises InequalityFailed when a number fails
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


def verify(cert: dict[str, Any]) -> Verdict:
    """Check a ``sinkmap-gated`` certificate; returns a :class:`Verdict`."""
    outer = need_dict(cert, "instance", "")
    inst = dual.Instance(outer)
    if inst.family != "S_T":
        raise CertificateError("instance.family: the gated sink map holds on S_T only")
    if not inst.base.bos_is_zero:
        raise CertificateError("instance.values: v(BOS) must be 0 (BOS is part of the null)")
    claim = check_fields(need_dict(cert, "claim", ""), "claim", ("statement", "bounds"))
    data = check_fields(need_dict(cert, "data", ""), "data", DATA_FIELDS)
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
    lowest = min(proved.values()) if proved else None
    statement = {
        "kind": "sinkmap-gated", "theorem": "logit sharing split over the gate, and Theorem 3",
        "instance": inst.base.statement(), "eps": format_rational(inst.eps), "family": "S_T",
        "model_class": {"attention": "gated_softmax", "heads": 1,
                        "values": inst.base.statement()["values"], "positions": "any",
                        "gate": "any function of the query token and position, in (0, 1]"},
        "hypothesis": "error <= eps at every position of every sequence of the family",
        "conclusion": {"null_mass_bounds": sorted([list(k), format_rational(v)]
                                                  for k, v in proved.items()),
                       "gates": [format_rational(g) for g in gates]}}
    text = (f"[{inst.base.describe()}] every single-head gated softmax model with the stated "
            f"values, any score function, any query gate and error <= {show(inst.eps)} on "
            f"S_T has null mass (1 - g_t) + g_t α_t0 >= the stated bound at the last "
            f"position of each of {len(proved)} prefixes"
            + (f" (lowest {show(lowest)})" if lowest is not None else "")
            + f"; {len(gates)} gate levels")
    details = {"bounds": len(proved), "levels": len(gates), "eps": format_rational(inst.eps)}
    if lowest is not None:
        details["lowest_bound"] = format_rational(lowest)
    return Verdict(ok=True, kind="sinkmap-gated", claim=text, details=details,
                   statement=statement)


__all__ = ["gate_split_bound", "verify"]
