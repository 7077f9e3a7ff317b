"""Proof of a claim by a certificate file that the trusted checker verifies.

The checker (:mod:`sinkproof.checker`) decides whether the file's numbers hold and
returns the *statement* it verified (canonical data, with a SHA-256 digest); this
module decides, from that statement alone, whether it *implies the claim*:

- the statement's instance is the claim's task exactly: ``p``, ``T``, the trigger
  family and every content vector as the exact rational of the float64 value the
  claim's task uses (seeded content is rebuilt from the claim, never read from the
  file), and the values are ``U_fix``;
- its ε is at least the claim's (a model with smaller error satisfies the hypothesis);
- the claim's model class lies inside the class the statement covers (Theorem 3
  ``hull``/``hull-family`` and Theorem 6 ``sinkmap-socp``: one normalised/softmax
  head, token-only values ``U_fix``, any scores and positions; the engine's
  ``bnb-learned-values``: one softmax head, the values the statement names — learned
  or ``U_fix`` — and scores any function of the features of the positional scheme the
  statement names, which must be the claim's task's; the engine's ``bnb-heads``: the
  stated number of softmax heads whose outputs add, ``U_fix`` values, the same scores,
  and a bound in every head, which implies the claim for "some" and for "every" head);
- every claimed position gets a verified bound ``>= b`` (a family certificate's bound
  for the situation ``{x_1..x_t}``, a sink map's bound for the prefix), and the
  hypothesis family holds the error conditions the bound uses (all of ``S_T`` for a
  sink map).

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
from ..convex.certfile import instance_difference, task_instance
from ..errors import SINK_MAP_MAX_WORK, check_work
from ..modelclass import ModelClass
from ..sinkmap import sink_map
from ..sinkmap.work import sink_map_work
from ..task import TRIG
from .positions import show_sequence
from .schema import Claim

THEOREM3_CLASS = ModelClass(kind="softmax", heads=1, values="fixed", positions="any")
"""The class a Theorem 3 or Theorem 6 statement with values ``U_fix`` covers."""

BoundAt = Callable[[tuple[int, ...]], "Fraction | None"]


class NotImplied(ValueError):
    """A verified certificate that does not imply the claim (the message says why)."""


def _hull_bounds(statement: dict[str, Any]) -> BoundAt:
    """Bound at a prefix from a verified ``hull`` or ``hull-family`` statement."""
    con = statement["conclusion"]
    if statement["kind"] == "hull":
        seq, bound = tuple(con["sequence"]), con["bound"]
        exact = None if bound is None else Fraction(bound)
        return lambda prefix: exact if tuple(prefix) == seq else None
    by_set = {tuple(tokens): Fraction(b) for tokens, b in con["bounds"]}
    return lambda prefix: by_set.get(tuple(sorted(set(prefix))))


def _socp_bounds(statement: dict[str, Any]) -> BoundAt:
    """Bound at a prefix from a verified ``sinkmap-socp`` statement."""
    bounds = {tuple(prefix): Fraction(b) for prefix, b in statement["conclusion"]["bounds"]}
    return lambda prefix: bounds.get(tuple(prefix))


BOUNDS: dict[str, tuple[Callable[[dict[str, Any]], BoundAt], bool]] = {
    "hull": (_hull_bounds, False),
    "hull-family": (_hull_bounds, False),
    "sinkmap-socp": (_socp_bounds, True),
    "bnb-learned-values": (_socp_bounds, True),  # the same per-prefix bounds layout
    "bnb-heads": (_socp_bounds, True),  # a bound in every head: implies "some" and "every"
}
"""Certificate kind -> (per-position bound reader of its verified statement, needs the
error hypothesis on all of S_T)."""


def implied_bounds(claim: Claim, statement: dict[str, Any]) -> BoundAt:
    """The per-prefix bound reader of a verified statement, after checking that the
    statement is about the claim's instance, class, ε and family; raises NotImplied."""
    kind = statement.get("kind")
    if kind not in BOUNDS:
        raise NotImplied(f"certificates of kind {kind!r} do not bound BOS mass at positions")
    reader, whole_family = BOUNDS[kind]
    instance, covered = _instance_and_class(claim, statement)
    differs = instance_difference(instance, task_instance(claim.task))
    if differs is not None:
        raise NotImplied(f"the certificate is about another task instance: {differs}")
    if not claim.model_class.is_subclass_of(covered):
        raise NotImplied(f"the certificate covers {covered}, not {claim.model_class}")
    eps = Fraction(statement["eps"])
    if claim.hypothesis.eps_exact > eps:
        raise NotImplied(f"the certificate assumes error <= {eps}, "
                         f"the claim allows {claim.hypothesis.eps_exact}")
    if whole_family and (statement.get("family") != "S_T" or claim.hypothesis.family != "S_T"):
        raise NotImplied("the certificate needs the error hypothesis on all of S_T")
    return reader(statement)


def _instance_and_class(claim: Claim, statement: dict[str, Any]
                        ) -> tuple[dict[str, Any], ModelClass]:
    """The statement's instance (with the values the comparison expects) and the model
    class it covers.  A ``bnb-learned-values`` or ``bnb-heads`` statement names its value
    class, its number of heads and its positional scheme; the scheme must be the claim's
    task's (the scores it covers are functions of that scheme's features), and the content
    is compared as for ``U_fix``."""
    if statement["kind"] not in ("bnb-learned-values", "bnb-heads"):
        attention = statement.get("model_class", {}).get("attention", "softmax")
        if statement["kind"] == "sinkmap-socp" and attention != "softmax":
            raise NotImplied(f"the certificate's bounds are on the {attention} null mass, "
                             f"not a softmax head's BOS mass")
        return statement["instance"], THEOREM3_CLASS
    instance, stated = dict(statement["instance"]), statement["model_class"]
    if instance.pop("positions") != claim.task.positions or \
            stated["positions"] != claim.task.positions:
        raise NotImplied(f"the certificate is about {stated['positions']!r} positions, the "
                         f"claim's task uses {claim.task.positions!r}")
    heads = stated["heads"]
    one_head = statement["kind"] == "bnb-learned-values"
    if stated["attention"] != "softmax" or (one_head and heads != 1) or \
            stated["value_features"] != "token" or stated["norm_bound"] is not None or \
            (not one_head and statement["conclusion"].get("heads") != "every"):
        raise NotImplied(f"the certificate's model class is not softmax heads with token "
                         f"values and no norm bound: {stated}")
    if instance["values"] != stated["values"]:
        raise NotImplied("the certificate's instance and model class name different values")
    instance["values"] = "fixed"  # the content is compared as the U_fix instance's
    return instance, ModelClass(kind="softmax", heads=heads, values=stated["values"],
                                positions=claim.task.positions, value_features="token")


def prove_by_certificate(claim: Claim, path: str | Path) -> tuple[Fraction, str]:
    """Verify ``path`` with the trusted checker and show it implies ``claim``.

    Returns ``(least certified bound over the claimed positions, the verdict's claim
    and the digest of the verified statement)``; raises :class:`NotImplied` (or
    :class:`~sinkproof.errors.CertificateError`) otherwise.
    """
    verdict = checker.verify_file(path)
    if not verdict.ok:
        raise NotImplied(f"certificate {path} does not verify: {verdict.failure}")
    bound_at = implied_bounds(claim, verdict.statement)
    con = claim.conclusion
    if con.theorem is not None:
        raise NotImplied("a certificate proves a numeric bound; the conclusion names a theorem")
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
            least = bound
            break
        if con.positions == "every":
            if not ok:
                have = "no bound" if bound is None else f"only {float(bound):.6g}"
                raise NotImplied(f"the certificate gives {have} at {show_sequence(prefix)}, "
                                 f"t={t} (claimed {float(b):g})")
            least = bound if least is None else min(least, bound)
    if least is None:
        raise NotImplied("the certificate bounds none of the claimed positions by b")
    return least, f"{verdict.claim} [verified statement sha256:{verdict.digest}]"


def certify_claim(claim: Claim, path: Path) -> Path | None:
    """Write a Theorem 6 (sink map) certificate for the claimed positions, when the claim's
    class is one ``U_fix`` softmax head with the hypothesis on all of ``S_T``; ``None``
    when the sink map does not apply or certifies too little.  The caller verifies it.
    Beyond :data:`sinkproof.errors.SINK_MAP_MAX_WORK` work units (or the claim's larger
    ``max_work``) it refuses (:class:`~sinkproof.errors.WorkLimitError`) before solving."""
    con = claim.conclusion
    if (not claim.model_class.is_subclass_of(THEOREM3_CLASS) or con.theorem is not None
            or claim.hypothesis.family != "S_T"):
        return None

    targets = [(seq, t) for seq, t in con.at.pair_list(claim.task) if seq[t - 1] != TRIG]
    if not targets or (con.positions == "every" and len(targets) < len(
            con.at.pair_list(claim.task))):
        return None
    work = sink_map_work(claim.task, 1, lengths=[t for _, t in targets])
    check_work("work units of the sink map (SOCP cone constraints, symmetry images)", work,
               max(SINK_MAP_MAX_WORK, claim.options.max_work))
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
