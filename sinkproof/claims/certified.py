"""Proof of a claim by a certificate file that the trusted checker verifies.

The checker (:mod:`sinkproof.checker`) decides whether the file's numbers hold;
this module decides whether what the file proves *implies the claim*:

- the certificate's instance is the claim's task, and its ε is at least the claim's
  (a model with smaller error satisfies the certificate's hypothesis);
- the claim's model class lies inside the class the certificate covers
  (Theorem 3 certificates: one normalised head, token-only values ``U_fix``, any
  scores and positions);
- every claimed position gets a certified bound ``>= b``, recomputed position by
  position by the checker's own code (for a family certificate: the bound of the
  situation ``{x_1..x_t}``), and the hypothesis family holds the error conditions
  the bound uses (positions 0 and t of a sequence containing the position).
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


BOUNDS: dict[str, tuple[ModelClass, Callable[[dict[str, Any]], BoundAt]]] = {
    "hull": (THEOREM3_CLASS, _hull_bounds),
    "hull-family": (THEOREM3_CLASS, _hull_bounds),
}
"""Certificate kind -> (class it covers with fixed values, per-position bound reader)."""


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
    covered, reader = BOUNDS[kind]
    if cert["instance"].get("values") != "fixed":
        raise NotImplied("the certificate is about one given value map, not a model class")
    if not claim.model_class.is_subclass_of(covered):
        raise NotImplied(f"the certificate covers {covered}, not {claim.model_class}")
    if _task_of(cert) != claim.task.replace(positions=_task_of(cert).positions):
        raise NotImplied("the certificate is about another task instance")
    eps = parse_rational(cert["instance"]["eps"], "instance.eps")
    if Fraction(claim.max_error) > eps:
        raise NotImplied(f"the certificate assumes error <= {float(eps):g}, "
                         f"the claim only {claim.max_error:g}")
    con = claim.conclusion
    if con.theorem is not None:
        raise NotImplied("a certificate proves a numeric bound; the conclusion names a theorem")
    bound_at = reader(cert)
    b = Fraction(con.min_bos_mass)
    family = _family_prefixes(claim)
    least: Fraction | None = None
    for seq, t in con.at.pair_list(claim.task):
        prefix = seq[:t]
        if prefix[-1] == TRIG:
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


def _family_prefixes(claim: Claim) -> set[tuple[int, ...]] | None:
    """Prefixes (user tokens) of the hypothesis family's sequences; ``None`` for all of S_T."""
    seqs = claim.hypothesis.family_sequences(claim.task)
    if seqs is None:
        return None
    return {tuple(s[:t]) for s in seqs for t in range(1, len(s) + 1)}
