"""Checker for ``bnb-heads`` certificates: sinks in every one of ``H`` softmax heads, exactly.

**The statement.**  ``H >= 1`` softmax heads whose outputs add,
``f_t = Σ_h Σ_{j<=t} α^h_{tj} v_{x_j}``, every head with the fixed values ``U_fix``
(``v_c = c``, ``v_TRIG = v_BOS = 0``) and scores *any* function of the query's and the
key's input features.  For each head ``h`` put ``u^h_l = exp(s^h(φ_t, φ_j) - s^h(φ_t, φ_0))``:
one variable per *class* ``l`` (query token, ``π(t)``, key token, ``π(j)``), shared by
every pair of positions of that class.  At ``(X, t)`` head ``h`` has BOS mass ``1/Z^h`` with
``Z^h = 1 + Σ_l m_l u^h_l`` (``m_l`` the keys of class ``l``), and ``ω^h_l = m_l u^h_l / Z^h``
on the keys of class ``l``.

**One head against the others.**  Fix any head ("head 1") and multiply the error
condition at ``X_i`` by its ``Z = Z^1``: ``|| r_i || <= eps Z`` with
``r_i = Σ_l m_il u_l v_l + Σ_l λ_il v_l - Z y_i`` and ``λ_il = Z Σ_{h != 1} ω^h_l >= 0``
(the other heads' weight, in head 1's units).  Two facts bound ``λ``: ``Σ_l λ_il <=
(H - 1) Z`` (each head's weights sum to at most 1), and every earlier *step* ``k`` of the
certificate — "every head has ``a_k·u^h <= c_k``", ``a_k`` the class counts of step
``k``'s prefix and ``c_k = 1/b_k - 1`` — holds in each other head, which reads, on
``X_i``'s classes, ``Σ_l (a_kl / m_il + c_k) λ_il <= (H - 1) c_k Z`` (from
``u_l = ω_l / (m_l β)`` and ``β = 1 - Σ_l ω_l``).  In head 1 itself it reads
``a_k·u <= c_k``.

**A step** is a target prefix ``X*``, a bound ``b`` and multipliers: ``(z_i, s_i)`` with
``z_i·z_i <= s_i²`` and ``μ_i >= 0`` per constraint prefix ``X_i``, ``ν_ik >= 0`` for the
earlier steps used on ``X_i``, ``κ_k >= 0`` for the earlier steps used in head 1.  The
weighted sum of all these conditions is ``0 <= c0 + Σ_l h_l u_l + Σ_il q_il λ_il`` with

- ``q_il = z_i·v_l - μ_i - Σ_k ν_ik (a_kl / m_il + c_k)`` (required ``<= 0``, so the
  ``λ`` terms can be dropped),
- ``ρ_i = eps s_i - z_i·y_i + (H - 1) (μ_i + Σ_k ν_ik c_k)``,
  ``c0 = Σ_i ρ_i + Σ_k κ_k c_k``, ``h_l = Σ_i m_il (ρ_i + z_i·v_l) - Σ_k κ_k a_kl``.

When ``h_l + a*_l <= 0`` for every class (``a*`` the class counts of ``X*``), head 1 has
``Z - 1 = a*·u <= c0`` at ``X*``: BOS mass ``>= 1/(1 + c0)`` (``c0 < 0``: no accurate
model at all).  Nothing in the argument singles out head 1, so the bound holds in
**every** head, and the step may serve later steps.  The checker derives every class,
multiplicity, value and target from the instance; a step may use only earlier steps.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ...errors import CertificateError
from ..exact import check_leq, dot, show
from ..limits import require
from ..schema import (
    as_list,
    check_fields,
    child,
    format_rational,
    need,
    need_dict,
    need_int,
    need_list,
    need_rational,
    parse_rational,
    rational_matrix,
    rational_vector,
)
from ..verdict import Verdict
from .tree import Instance as _OneHead

KIND = "bnb-heads"
INSTANCE_FIELDS = ("task", "content_vectors", "values", "eps", "family", "heads")
STEP_FIELDS = ("target", "bound", "leaf")
LEAF_FIELDS = ("constraints", "z", "s", "mu", "nu", "kappa")


class Instance(_OneHead):
    """The one-head instance (content, positions, ``eps``, classes) plus the head count."""

    def __init__(self, inst: dict[str, Any]) -> None:
        check_fields(inst, "instance", INSTANCE_FIELDS)
        self.heads = need_int(inst, "heads", "instance", minimum=1)
        super().__init__({k: v for k, v in inst.items() if k != "heads"})
        if self.values != "fixed":
            raise CertificateError("instance.values: a bnb-heads certificate covers the fixed "
                                   "values U_fix only (learned values in other heads leave "
                                   "their outputs unconstrained)")

    def value(self, token: int) -> list[Fraction]:
        """``v_x`` of ``U_fix`` (``c`` for content, 0 for the trigger)."""
        return list(self.base.values[token])


Lemma = tuple[dict[tuple, int], Fraction]  # (class counts a_k, c_k = 1/b_k - 1)


def _entries(value: Any, where: str, width: int) -> list[list[Any]]:
    return [as_list(e, child(where, i), length=width) for i, e in enumerate(as_list(value, where))]


def _step_index(value: Any, where: str, before: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < before:
        raise CertificateError(f"{where}: expected the index of an earlier step (0..{before - 1})")
    return value


def check_step(inst: Instance, target: tuple[int, ...], leaf: dict[str, Any],
               lemmas: list[Lemma], where: str) -> Fraction:
    """Verify one step's multipliers exactly; return ``c0`` (``Z* <= 1 + c0`` in every head)."""
    check_fields(leaf, where, LEAF_FIELDS)
    raw = need_list(leaf, "constraints", where)
    prefixes = [inst.prefix(c, child(child(where, "constraints"), i)) for i, c in enumerate(raw)]
    m = len(prefixes)
    z = rational_matrix(need(leaf, "z", where), child(where, "z"), columns=inst.p)
    if len(z) != m:
        raise CertificateError(f"{where}.z: expected {m} rows, got {len(z)}")
    s = rational_vector(need(leaf, "s", where), child(where, "s"), length=m)
    mu = rational_vector(need(leaf, "mu", where), child(where, "mu"), length=m)
    nu: list[list[tuple[int, Fraction]]] = [[] for _ in range(m)]
    for e, (i, k, x) in enumerate(_entries(need(leaf, "nu", where), child(where, "nu"), 3)):
        at = child(child(where, "nu"), e)
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < m:
            raise CertificateError(f"{at}[0]: expected a constraint index (0..{m - 1})")
        nu[i].append((_step_index(k, child(at, 1), len(lemmas)), parse_rational(x, child(at, 2))))
    kappa = [(_step_index(k, child(child(child(where, "kappa"), e), 0), len(lemmas)),
              parse_rational(x, child(child(child(where, "kappa"), e), 1)))
             for e, (k, x) in enumerate(_entries(need(leaf, "kappa", where),
                                                 child(where, "kappa"), 2))]
    for i in range(m):
        check_leq(Fraction(0), s[i], f"{where}.s[{i}] >= 0")
        check_leq(dot(z[i], z[i]), s[i] * s[i], f"{where}: cone membership z·z <= s² of "
                  f"constraint {i}")
        check_leq(Fraction(0), mu[i], f"{where}.mu[{i}] >= 0")
        for k, x in nu[i]:
            check_leq(Fraction(0), x, f"{where}: nu >= 0 (constraint {i}, step {k})")
    for k, x in kappa:
        check_leq(Fraction(0), x, f"{where}: kappa >= 0 (step {k})")
    c0, h, q = step_terms(inst, prefixes, z, s, mu, nu, kappa, lemmas)
    for (i, cls), value in q.items():
        check_leq(value, Fraction(0), f"{where}: the other heads' weight on "
                  f"{inst.class_name(cls)} in constraint {i} has coefficient q <= 0")
    objective = inst.classes(target)
    for cls in objective:
        h.setdefault(cls, Fraction(0))
    for cls in sorted(h, key=repr):
        check_leq(h[cls] + objective.get(cls, 0), Fraction(0),
                  f"{where}: dual feasibility h + a* <= 0 at {inst.class_name(cls)}")
    return c0


def step_terms(inst: Instance, prefixes: list[tuple[int, ...]], z: list[list[Fraction]],
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


def _estimate_work(inst: Instance, steps: list[Any]) -> None:
    """Refuse before any arithmetic when the steps cost too much: each constraint is
    ``O(T·p)`` exact operations, each ``nu`` entry ``O(T)``."""
    work = 0
    for step in steps:
        leaf = step.get("leaf") if isinstance(step, dict) else None
        if isinstance(leaf, dict):
            for key, cost in (("constraints", (inst.T + 2) * inst.p), ("nu", inst.T + 2),
                              ("kappa", inst.T + 2)):
                rows = leaf.get(key)
                work += (len(rows) if isinstance(rows, list) else 0) * cost
        work += 1
        require("work", work, "data.steps: exact operations to check the steps")


def verify(cert: dict[str, Any]) -> Verdict:
    """Check a ``bnb-heads`` certificate; returns a :class:`Verdict`."""
    inst = Instance(need_dict(cert, "instance", ""))
    claim = check_fields(need_dict(cert, "claim", ""), "claim",
                         ("statement", "min_bos_mass", "targets"))
    data = check_fields(need_dict(cert, "data", ""), "data", ("steps", "targets"))
    steps = need_list(data, "steps", "data", min_length=1)
    _estimate_work(inst, steps)
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
    details = {"targets": len(proved), "steps": len(steps), "heads": inst.heads,
               "min_bos_mass": format_rational(stated), "eps": format_rational(inst.eps)}
    statement = {
        "kind": KIND, "theorem": "logit sharing in every head, the other heads' weight "
                                 "bounded by earlier steps",
        "instance": {**inst.base.statement(), "values": "fixed", "positions": inst.positions},
        "eps": format_rational(inst.eps), "family": "S_T",
        "model_class": {"attention": "softmax", "heads": inst.heads, "values": "fixed",
                        "positions": inst.positions, "value_features": "token",
                        "scores": "any function of (query features, key features)",
                        "combine": "sum of the heads' outputs", "norm_bound": None},
        "hypothesis": "error <= eps at every position of every sequence of the family",
        "conclusion": {"heads": "every",
                       "bounds": sorted([list(k), format_rational(v)]
                                        for k, v in proved.items())}}
    return Verdict(ok=True, kind=KIND, claim=text, details=details, statement=statement)
