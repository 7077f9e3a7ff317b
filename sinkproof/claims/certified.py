"""Proof of a claim by a certificate file that the trusted checker verifies.

The checker (:mod:`sinkproof.checker`) decides whether the file's numbers hold and
returns the *statement* it verified (canonical data, with a SHA-256 digest); whether
that statement *implies the claim* is decided from the statement alone by the one
registry of :mod:`sinkproof.claims.implications` (keyed by the statement's shape: its
instance must be the claim's task exactly, its ε at least the claim's, its class must
contain the claim's, and every claimed position must get a verified bound ``>= b``).

:func:`certify_claim` writes such a certificate on the spot when the claim's task and
class allow one: Theorem 6's sink map for one ``U_fix`` softmax head on a task with
positions (its positions listed), Theorem 3's hull-family certificate for one
fixed-value head on the simplex on a finite task without positions (its token sets
listed), the pure-composition theorem's instance for a pure stack of one-head layers
(its two contents, trigger and position); it is then verified like any given file.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from .. import checker

# The certificate makers (the sink map, the convex layer) are imported by the function that
# runs them: verifying a given certificate loads only the checker and the registry.
from ..attention import MAPS
from ..errors import SINK_MAP_MAX_WORK, check_work
from ..modelclass import ModelClass
from ..task import TRIG
from .implications import NotImplied, implied_bound
from .schema import Claim

THEOREM3_CLASS = ModelClass(kind="softmax", heads=1, values="fixed", positions="any")
"""The class the sink map (Theorem 6) certifies: one ``U_fix`` softmax head."""


def prove_by_certificate(claim: Claim, path: str | Path) -> tuple[Fraction, str]:
    """Verify ``path`` with the trusted checker and show it implies ``claim``.

    Returns ``(the bound the verified statement gives over the claimed positions, the
    verdict's claim and the digest of the verified statement)``; raises
    :class:`NotImplied` (or :class:`~sinkproof.errors.CertificateError`) otherwise.
    """
    return implied_by_verdict(claim, checker.verify_file(path), path)


def implied_by_verdict(claim: Claim, verdict: checker.Verdict, path: str | Path
                       ) -> tuple[Fraction, str]:
    """:func:`prove_by_certificate` given the trusted checker's ``verdict`` on the file at
    ``path`` (its exact bytes: the engine verifies the file it saves,
    :func:`sinkproof.convex.certfile.save_verified`), so the file is verified once."""
    if not verdict.ok:
        raise NotImplied(f"certificate {path} does not verify: {verdict.failure}")
    bound = implied_bound(claim, verdict.statement)
    return bound, f"{verdict.claim} [verified statement sha256:{verdict.digest}]"


def certificate_maker(claim: Claim) -> str | None:
    """The certificate :func:`certify_claim` would make for ``claim`` (its route's name),
    or ``None`` when none applies."""
    mc = claim.model_class
    if getattr(mc, "pure", False):
        from .theorems import composition_inapplicable

        return "pure-composition theorem" if composition_inapplicable(claim) is None else None
    if claim.task.has_positions:
        ok = (mc.is_subclass_of(THEOREM3_CLASS) and claim.conclusion.theorem is None
              and claim.hypothesis.family == "S_T")
        return "Theorem 6 sink map" if ok else None
    ok = (MAPS[mc.kind].properties.on_simplex and (mc.heads, mc.layers, mc.values) ==
          (1, 1, "fixed") and claim.task.finite)
    return "Theorem 3 hull family" if ok else None


def why_no_certificate(claim: Claim) -> str:
    """Why :func:`certify_claim` makes no certificate for ``claim``, in words."""
    if getattr(claim.model_class, "pure", False):
        from .theorems import composition_inapplicable

        why = composition_inapplicable(claim)
        return (f"the pure-composition certificate does not apply: {why}" if why else
                "the pure-composition theorem gives no bound >= b on this task at this ε")
    if claim.task.has_positions:
        return "the sink map (Theorem 6) does not certify the claim (it covers one U_fix " \
               "head on all of S_T)"
    if not claim.task.finite:
        return "the hull-family certificate needs a finite family (content is continuous)"
    return (f"the hull-family certificate covers one fixed-value head on the simplex, not "
            f"{claim.model_class}")


def certify_claim(claim: Claim, path: Path) -> Path | None:
    """Write a certificate for the claim at ``path`` (see the module docstring), or
    ``None`` when none applies or it certifies too little; the caller verifies it.  The
    work is estimated first and refused beyond the claim's ``max_work``
    (:class:`~sinkproof.errors.WorkLimitError`)."""
    maker = certificate_maker(claim)
    if maker is None:
        return None
    if maker == "pure-composition theorem":
        return _composition_certificate(claim, path)
    if claim.task.has_positions:
        return _sink_map_certificate(claim, path)
    check_work("prefixes to enumerate (the token sets of the family)",
               claim.task.n_prefixes_at_most(claim.options.max_work), claim.options.max_work)
    from ..convex.family import paper_family_certificate  # the makers load when they run

    path.parent.mkdir(parents=True, exist_ok=True)
    paper_family_certificate(claim.task, claim.hypothesis.max_error).save(path)
    return path


def _composition_certificate(claim: Claim, path: Path) -> Path | None:
    """The strongest instance of the pure-composition theorem as a ``paper-composition``
    certificate of the claim's ``b`` (or of the instance's rational bound when it is
    larger); ``None`` when the theorem is silent or its bound is below ``b``."""
    from ..convex.certfile import save_json
    from ..theorems.composition import composition_bound

    item = composition_bound(claim.task, claim.hypothesis.max_error, claim.model_class.layers)
    b = claim.conclusion.min_bos_mass
    if item is None or item.bound < b:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    save_json(item.certificate(claim.task, max(b, item.certified_bound())), path)
    return path


def _sink_map_certificate(claim: Claim, path: Path) -> Path | None:
    """A Theorem 6 (sink map) certificate for the claimed positions; ``None`` when it
    certifies too little.  Beyond :data:`sinkproof.errors.SINK_MAP_MAX_WORK` work units
    (or the claim's larger ``max_work``) it refuses before solving."""
    from ..sinkmap import sink_map
    from ..sinkmap.work import sink_map_work

    con = claim.conclusion
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
