"""Proof of a claim by a certificate file that the trusted checker verifies.

The checker (:mod:`sinkproof.checker`) decides whether the file's numbers hold;
this module decides whether what the file proves *implies the claim*:

- the certificate's instance is the claim's task, and its ε is at least the claim's
  (a model with smaller error satisfies the certificate's hypothesis);
- the claim's model class lies inside the class the certificate covers (Theorem 3
  ``hull``/``hull-family`` and Theorem 6 ``sinkmap-socp`` certificates: one softmax
  head, token-only values ``U_fix``, any scores and positions);
- every claimed position gets a certified bound ``>= b`` (for a family certificate,
  recomputed by the checker's own code for the situation ``{x_1..x_t}``; for a sink
  map, the per-target bound the checker verified), and the hypothesis family holds
  the error conditions the bound uses.

:func:`certify_claim` writes such a certificate on the spot with the sink map
(Theorem 6) when the claim is about one ``U_fix`` head; it is then verified like
any given file.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import checker
from ..checker.instance import read_instance
from ..checker.schema import parse_rational
from ..modelclass import ModelClass
from ..task import TRIG, TriggerTask
from .positions import show_sequence
from .schema import Claim

THEOREM3_CLASS = ModelClass(kind="softmax", heads=1, values="fixed", positions="any")
"""The class a Theorem 3 certificate with ``values = "fixed"`` covers."""

BoundAt = Callable[[tuple[int, ...]], "Fraction | None"]


class NotImplied(ValueError):
    """A verified certificate that does not imply the claim (the message says why)."""


def _task_of(cert: dict[str, Any]) -> TriggerTask:
    desc = dict(cert["instance"]["task"])
    return TriggerTask.from_description(desc)


def _hull_bounds(cert: dict[str, Any]) -> BoundAt:
    """Bound at a prefix (user tokens) from a ``hull``/``hull-family`` certificate."""
    from ..checker.hull import check_situation

    inst = read_instance(cert["instance"])
    eps = parse_rational(cert["instance"]["eps"], "instance.eps")
    if cert["kind"] == "hull":
        seq = tuple(cert["instance"]["sequence"])
        t = cert["instance"]["t"]
        tokens = tuple(sorted(set(seq[:t])))
        bound = check_situation(cert["data"], tokens, inst, eps, "data")
        return lambda prefix: bound if tuple(prefix) == seq[:t] else None
    entries = {tuple(sorted(set(e["tokens"]))): e for e in cert["data"]["situations"]}
    cache: dict[tuple[int, ...], Fraction | None] = {}

    def at(prefix: tuple[int, ...]) -> Fraction | None:
        key = tuple(sorted(set(prefix)))
        if key not in cache:
            entry = entries.get(key)
            cache[key] = None if entry is None else check_situation(entry, key, inst, eps, "data")
        return cache[key]

    return at


def _socp_bounds(cert: dict[str, Any]) -> BoundAt:
    """Bound at a prefix from a ``sinkmap-socp`` certificate: the stated bound of each target
    (bound certificates and derived entries), each checked by the trusted checker."""
    bounds: dict[tuple[int, ...], Fraction] = {}
    data = cert["data"]
    for i, entry in enumerate((*data["certificates"], *data["derived"])):
        target = tuple(entry["target"])
        b = parse_rational(entry["bound"], f"data entry {i}.bound")
        bounds[target] = max(b, bounds.get(target, b))
    return lambda prefix: bounds.get(tuple(prefix))


def _hull_fixed(cert: dict[str, Any]) -> bool:
    return cert["instance"].get("values") == "fixed"


def _socp_fixed(cert: dict[str, Any]) -> bool:
    inst = cert["instance"]
    values = inst.get("values")
    if inst.get("family") != "S_T" or not (values == "fixed" or isinstance(values, list)):
        return False
    if values == "fixed":
        return True
    p = len(values)
    U = [[parse_rational(x, "instance.values") for x in row] for row in values]
    fixed = [[Fraction(int(i == j)) for j in range(p + 3)] for i in range(p)]
    return fixed == U


BOUNDS: dict[str, tuple[Callable[[dict[str, Any]], bool],
                        Callable[[dict[str, Any]], BoundAt], bool]] = {
    "hull": (_hull_fixed, _hull_bounds, False),
    "hull-family": (_hull_fixed, _hull_bounds, False),
    "sinkmap-socp": (_socp_fixed, _socp_bounds, True),
}
"""Certificate kind -> (its values are U_fix on the claim's terms, per-position bound reader,
needs the error hypothesis on all of S_T).  Every kind covers :data:`THEOREM3_CLASS`."""


def prove_by_certificate(claim: Claim, path: str | Path) -> tuple[Fraction, str]:
    """Verify ``path`` with the trusted checker and show it implies ``claim``.

    Returns ``(least certified bound over the claimed positions, the verdict's claim)``;
    raises :class:`NotImplied` (or :class:`~sinkproof.errors.CertificateError`) otherwise.
    """
    cert = checker.load(path)
    verdict = checker.verify(cert)
    if not verdict.ok:
        raise NotImplied(f"certificate {path} does not verify: {verdict.failure}")
    kind = cert["kind"]
    if kind not in BOUNDS:
        raise NotImplied(f"certificates of kind {kind!r} do not bound BOS mass at positions")
    fixed, reader, whole_family = BOUNDS[kind]
    if not fixed(cert):
        raise NotImplied("the certificate is about another value map or family, not U_fix on S_T")
    if not claim.model_class.is_subclass_of(THEOREM3_CLASS):
        raise NotImplied(f"the certificate covers {THEOREM3_CLASS}, not {claim.model_class}")
    if _task_of(cert) != claim.task.replace(positions=_task_of(cert).positions):
        raise NotImplied("the certificate is about another task instance")
    eps = parse_rational(cert["instance"]["eps"], "instance.eps")
    if claim.hypothesis.eps_exact > eps:
        raise NotImplied(f"the certificate assumes error <= {eps}, "
                         f"the claim allows {claim.hypothesis.eps_exact}")
    if whole_family and claim.hypothesis.family != "S_T":
        raise NotImplied("the certificate needs the error hypothesis on all of S_T")
    con = claim.conclusion
    if con.theorem is not None:
        raise NotImplied("a certificate proves a numeric bound; the conclusion names a theorem")
    bound_at = reader(cert)
    b = con.b_exact
    family = _family_prefixes(claim)
    least: Fraction | None = None
    for seq, t in con.at.pair_list(claim.task):
        prefix = seq[:t]
        if prefix[-1] == TRIG:
            if con.positions == "some":
                continue
            raise NotImplied(f"{show_sequence(prefix)} at t={t} is a trigger position; "
                             "the certificate bounds non-trigger positions only")
        if family is not None and prefix not in family:
            raise NotImplied(f"the hypothesis family holds no sequence through "
                             f"{show_sequence(prefix)} at t={t}")
        bound = bound_at(prefix)
        ok = bound is not None and bound >= b
        if con.positions == "some" and ok:
            return bound, verdict.claim
        if con.positions == "every":
            if not ok:
                have = "no bound" if bound is None else f"only {float(bound):.6g}"
                raise NotImplied(f"the certificate gives {have} at {show_sequence(prefix)}, "
                                 f"t={t} (claimed {float(b):g})")
            least = bound if least is None else min(least, bound)
    if least is None:
        raise NotImplied("the certificate bounds none of the claimed positions by b")
    return least, verdict.claim


def certify_claim(claim: Claim, path: Path) -> Path | None:
    """Write a Theorem 6 (sink map) certificate for the claimed positions, when the claim's
    class is one ``U_fix`` softmax head with the hypothesis on all of ``S_T``; ``None``
    when the sink map does not apply or certifies too little.  The caller verifies it."""
    con = claim.conclusion
    if (not claim.model_class.is_subclass_of(THEOREM3_CLASS) or con.theorem is not None
            or claim.hypothesis.family != "S_T"):
        return None
    from ..sinkmap import sink_map

    targets = [(seq, t) for seq, t in con.at.pair_list(claim.task) if seq[t - 1] != TRIG]
    if not targets or (con.positions == "every" and len(targets) < len(
            con.at.pair_list(claim.task))):
        return None
    eps = claim.hypothesis.eps_exact
    smap = sink_map(claim.task, eps, positions=targets)
    b = con.min_bos_mass
    if con.positions == "some":
        best = max(targets, key=lambda pair: smap.bound(*pair))
        if smap.bound(*best) < b:
            return None
        smap = sink_map(claim.task, eps, positions=[best])
    elif min(smap.bound(*pair) for pair in targets) < b:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    smap.save_certificate(path)
    return path


def _family_prefixes(claim: Claim) -> set[tuple[int, ...]] | None:
    """Prefixes (user tokens) of the hypothesis family's sequences; ``None`` for all of S_T."""
    seqs = claim.hypothesis.family_sequences(claim.task)
    if seqs is None:
        return None
    return {tuple(s[:t]) for s in seqs for t in range(1, len(s) + 1)}
