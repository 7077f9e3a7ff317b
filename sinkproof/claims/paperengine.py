"""The proof-engine route of a paper claim: branch and bound for one learned softmax head.

For a claim about one layer of one softmax head (learned ``W_Q, W_K, W_V, W_O``, or the
fixed values, a subset) on a finite content set, :func:`prove_by_engine` runs
:func:`sinkproof.bnb.prove_paper` at the claim's ε and ``b`` on the non-trigger
positions of the family (stopping at the first one proved when the claim says "some"),
saves the ``paper-bnb-learned-values`` certificate, verifies the saved file again with
the trusted checker, and decides the claim from the verified statement alone: its
instance (``n``, ``L``, every content vector exactly) and ε must be the claim's, and the
positions it bounds at ``>= b`` must be one non-trigger position ("some") or every one
("every").  The engine's own numbers are never read.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import checker
from ..bnb import paper_targets, prove_paper
from ..errors import CertificateError, Interrupted, SinkproofError, check_work
from .engine import best_so_far
from .outcome import Proved
from .paperclaim import PaperClaim

KIND = "paper-bnb-learned-values"
MAX_NODES = 200
"""Nodes per target tree the route grows."""


def applies(claim: PaperClaim) -> str | None:
    """Why the engine does not apply to ``claim`` (``None`` when it does)."""
    mc = claim.model_class
    if (mc.kind, mc.heads, mc.layers) != ("softmax", 1, 1):
        return f"it covers one layer of one softmax head, not {mc}"
    if not claim.task.finite:
        return "continuous content has no finite family"
    return None


def prove_by_engine(claim: PaperClaim, out: Path, reasons: list[str],
                    progress: bool | None = None) -> Proved | None:
    """Run the engine within the claim's budget (its trees and their exact certification
    together; a tree the budget leaves uncertified proves nothing); ``Proved`` only by the
    verified file."""
    why = applies(claim)
    if why is not None:
        reasons.append(f"engine (branch and bound): not applicable: {why}")
        return None
    task, budget = claim.task, claim.options.budget
    check_work("prefixes to enumerate (the family, for the engine's programs)",
               task.n_prefixes_at_most(claim.options.max_work),
                   claim.options.max_work)
    some = claim.conclusion.positions == "some"
    try:
        result = prove_paper(task, claim.hypothesis.max_error,
                             min_bos_mass=claim.conclusion.min_bos_mass, some=some,
                             max_nodes=MAX_NODES, time_limit=budget, budget=budget,
                             progress=progress, certify_misses=False)
    except (SinkproofError, ValueError) as exc:
        reasons.append(f"engine: failed ({str(exc).splitlines()[0]})")
        return None
    if result.interrupted:  # what it certified before Ctrl-C, for the interrupted answer
        raise Interrupted(result, best_so_far(result, len(paper_targets(task))))
    note = (f"{len(result.targets)} target tree(s), {result.nodes} nodes, "
            f"{result.seconds:.2f} s, learned values (free per token), no norm bound assumed")
    if result.status != "proved" or result.certificate is None:
        spent = "".join(f"; {why}" for why in result.skipped)
        reasons.append(f"engine (branch and bound): no proof within {MAX_NODES} nodes per "
                       f"target and {budget:g} s ({note}{spent})")
        return None
    out.parent.mkdir(parents=True, exist_ok=True)
    return proved_by_file(claim, result.save(out), implied_bound, "bnb",
                          "engine (branch and bound)", lambda v: f"{v.claim}; {note}", reasons)


def proved_by_file(claim: PaperClaim, path: Path,
                   implied: Callable[[PaperClaim, Any], Fraction | str], by: str, route: str,
                   detail: Callable[[Any], str], reasons: list[str]) -> Proved | None:
    """Verify the file at ``path`` with the trusted checker and prove ``claim`` by the
    verified statement when ``implied(claim, verdict)`` gives its bound; else note why
    not under ``route`` in ``reasons``."""
    try:
        verdict = checker.verify_file(path)
    except CertificateError as exc:
        reasons.append(f"{route}: {path} does not verify ({exc})")
        return None
    bound = implied(claim, verdict)
    if isinstance(bound, str):
        reasons.append(f"{route}: {bound}")
        return None
    return Proved(claim, by=by, bound=float(bound),
                  detail=f"{detail(verdict)}; statement sha256:{verdict.digest}",
                  certificate=str(path))


def _covers(stated: Any, claim: PaperClaim) -> str | None:
    """Why the verified statement's model class (one layer of one softmax head, learned
    values, no norm bound) does not contain the claim's class, or ``None`` when it does
    (checked here as well as by :func:`applies`: the route reads the statement alone)."""
    mc = claim.model_class
    if not isinstance(stated, dict) or (stated.get("attention"), stated.get("heads"),
                                        stated.get("layers")) != ("softmax", 1, 1) \
            or stated.get("norm_bound") is not None:
        return f"its model class {stated} is not one layer of one softmax head"
    if (mc.kind, mc.heads, mc.layers) != ("softmax", 1, 1):
        return f"it covers one layer of one softmax head, not {mc}"
    return None


def implied_bound(claim: PaperClaim, verdict: Any) -> Fraction | str:
    """The least verified bound over the claimed positions when the verified statement
    implies ``claim``, else why not."""
    if not verdict.ok:
        return f"the file does not verify: {verdict.failure}"
    if verdict.kind != KIND:
        return f"a {verdict.kind} certificate is not the engine's"
    st, task = verdict.statement, claim.task
    covered = _covers(st.get("model_class", {}), claim)
    if covered is not None:
        return covered
    if not claim.same_instance(st["instance"]):
        return "its instance (n, L, content vectors) is not the claim's"
    if Fraction(st["eps"]) != claim.hypothesis.max_error:
        return f"it is stated at eps = {st['eps']}, not the claim's ε"
    b = claim.conclusion.min_bos_mass
    bounds = {tuple(p): Fraction(v) for p, v in st["conclusion"]["bounds"]}
    if claim.conclusion.positions == "some":
        good = [v for v in bounds.values() if v >= b]
        return max(good) if good else f"no bounded position reaches b = {float(b):.6g}"
    needed = paper_targets(task)
    missing = [p for p in needed if bounds.get(p, Fraction(0)) < b]
    if missing:
        return (f"{len(missing)} of {len(needed)} non-trigger positions lack a bound >= b "
                f"(first: {list(missing[0])})")
    return min(bounds[p] for p in needed)


__all__ = ["applies", "implied_bound", "prove_by_engine", "proved_by_file"]
