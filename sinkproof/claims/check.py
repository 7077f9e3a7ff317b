"""``sinkproof.check(claim)``: prove a claim, refute it, or say honestly that it is open.

One route chain for a claim on any task; each route asks the task's capabilities, never
its setting's name.  Routes, in order:

1. **Theorem**: a theorem of the registry (:data:`sinkproof.theorems.THEOREMS`)
   whose every hypothesis holds for the claim's model class, and whose bound,
   instantiated on the claim's task at the claim's ε, is ``>= b`` at the claimed
   positions (on a task without positions: an error floor under which the claim is
   vacuous, then Theorem 3's bound at every non-trigger position;
   :mod:`sinkproof.claims.theorems`).
2. **Certificate**: a certificate file named by the claim (or the call), or one made
   now (the sink map; a hull-family certificate), that the trusted checker verifies
   exactly and that implies the claim (:mod:`sinkproof.claims.certified`, deciding by
   the registry of :mod:`sinkproof.claims.implications`).
3. **Engine**: the branch-and-bound proof engine (:mod:`sinkproof.bnb`) for a claim
   about softmax heads, learned or fixed values, on the whole family
   (:mod:`sinkproof.claims.engine`); its certificate is saved, verified by the trusted
   checker from the file (the bytes written, once), and the claim decided from the
   verified statement exactly as for route 2.
4. **Construction**: the explicit models of the class that may refute it
   (:func:`sinkproof.claims.theorems.constructions`), each checked as a search result.
5. **Search**: a model of the class with error ``<= ε`` that violates the
   conclusion, found by :func:`sinkproof.search` (a stack: the stack search) and
   verified (in high precision, then by the trusted checker from its witness file;
   :mod:`sinkproof.claims.witness`).  On continuous content a model is evaluated on
   seeded samples plus an adversarial search: a lower estimate, so the answer stays
   Open and says so.

Search alone never proves anything: when no proof and no witness is found the
answer is :class:`Open`, with the best trade-offs seen and the budget spent.

A refutation is decided exactly: the witness file the trusted checker verified states
error ``<= ε_w`` and BOS mass ``<= m_w`` at the violated positions, and the claim is
refuted only when ``ε_w <= ε`` and ``m_w <`` the claimed threshold, as rationals
(:func:`sinkproof.claims.witness.refuting_statement`).

Before a route that enumerates the family (certificates, search) the work is estimated
and refused beyond ``max_work`` (:class:`~sinkproof.errors.WorkLimitError`).  Budgets
are deterministic (theorems, certificates, the engine's nodes per target, constructions,
the search's restarts × steps); the claim's ``budget`` seconds are only a safety stop of
the search, and an Open outcome that stop decided says so (``for_time``).  Ctrl-C
during a check returns :class:`Open` marked ``interrupted`` with what was found so far
(``so_far``: the engine's bounds certified before the signal, or the sink map's progress).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import InputError, Interrupted, SinkproofError, check_work
from .byclass import reads_by_class
from .outcome import Open, Outcome, Proved, Refuted
from .outputs import private_folder, publish_outcome
from .refute import refutes
from .schema import Claim, claim_from_dict, load_claim, refuse_oversized_model
from .theorems import constructions, prove_by_theorem, proved_positions, theorem_bound

# The later routes' modules (certificates: the sink map and the convex layer; the engine;
# the search: JAX) are imported by the route that runs them, so a claim a theorem proves
# loads none of them (``benchmarks/bench_coldstart.py``).


def as_claim(claim: Claim | Mapping[str, Any] | str | Path) -> Claim:
    """A claim from a claim, its data, or the path of a claim file."""
    if isinstance(claim, Claim):
        return claim
    if isinstance(claim, (str, Path)):
        return load_claim(claim)
    if isinstance(claim, Mapping):
        return claim_from_dict(claim)
    raise TypeError(f"check() needs a Claim, a mapping or a claim file path, "
                    f"got {type(claim).__name__}")


def check(
    claim: Claim | Mapping[str, Any] | str | Path,
    *,
    budget: float | None = None,
    restarts: int | None = None,
    seed: int | None = None,
    certificate: str | Path | None = None,
    witness: str | Path | None = None,
    certificate_out: str | Path | None = None,
    search: bool = True,
    progress: bool | None = None,
    max_work: int | None = None,
    bnb: bool = True,
    write_witness: bool = False,
    force: bool = False,
    theorems: bool = True,
) -> Outcome:
    """Check ``claim``: :class:`Proved`, :class:`Refuted` or :class:`Open`.

    ``budget`` (seconds), ``restarts`` and ``seed`` override the claim's ``[check]``
    options; ``certificate`` names a certificate file to try; without one, a claim about
    one ``U_fix`` head is certified on the spot by the sink map and the file saved at
    ``certificate_out``; ``witness`` is where a refuting model is saved (both default to
    a fresh temporary folder; a claim's own ``[check] witness`` path is used only with
    ``write_witness=True``).  Every file is made in a private folder of the run and copied
    to its destination (a temporary name there, then renamed) only once it holds the
    verified proof or refutation; an existing destination is refused
    (:class:`~sinkproof.claims.outputs.OutputExistsError`) unless ``force=True``.
    When neither proves the claim, the branch-and-bound engine tries (``bnb=False`` skips
    it; it runs for at most ``budget`` seconds) and saves its certificate at
    ``certificate_out`` too.  ``search=False`` skips the counterexample search (the
    answer is then Proved or Open; the engine still runs).  ``theorems=False`` skips the
    registered theorems, so that a certificate or the engine proves the claim (an
    independent path, e.g. to cross-check a theorem, or to have a certificate file).
    ``max_work`` overrides ``[check] max_work``: the most prefixes a route may enumerate.
    Every task goes through the same routes (the module docstring); an answer on
    continuous content says that its family was sampled.
    """
    claim = as_claim(claim)
    changes: dict[str, Any] = {}
    for name, value in (("budget", budget), ("restarts", restarts), ("seed", seed),
                        ("max_work", max_work)):
        if value is not None:
            changes[name] = value
    if certificate is not None:
        changes["certificate"] = str(certificate)
    if changes:
        claim = claim.with_options(**changes)
    folder = private_folder()
    stem = Path(claim.source).stem if claim.source else "claim"
    made_witness, made_cert = (folder / f"{stem}.witness.json",
                               folder / f"{stem}.certificate.json")
    if witness is None and write_witness:
        if claim.options.witness is None:
            raise InputError("write_witness: the claim names no [check] witness path")
        witness = claim.options.witness
    outcome = _check(claim, made_witness, made_cert, search, bnb, progress, theorems)
    return publish_outcome(outcome, folder, None if witness is None else Path(witness),
                           None if certificate_out is None else Path(certificate_out), force)


def _check(claim: Claim, witness: Path, certificate_out: Path, search: bool, bnb: bool,
           progress: bool | None, theorems: bool = True) -> Outcome:
    """The routes in order (see the module docstring); files are made at ``witness`` and
    ``certificate_out``, in the run's private folder."""
    reasons: list[str] = []
    start = time.perf_counter()
    try:
        proved = _prove(claim, certificate_out, reasons, theorems)
        if proved is None and bnb:
            proved = _by_engine(claim, certificate_out, reasons, progress)
        if proved is not None:
            return proved
        if not search:
            return Open(claim, reasons=tuple(reasons),
                        spent={"seconds": round(time.perf_counter() - start, 2)})
        refuse_oversized_model(claim)  # a Claim built in Python skips the loader's check
        if not claim.task.has_positions:
            return _refute_stack(claim, witness, reasons)
        bound_at = theorem_bound(claim)
        refuted = _refute_by_constructions(claim, bound_at, witness, reasons)
        if refuted is not None:
            return refuted
        return _refute_by_search(claim, bound_at, witness, reasons, progress)
    except KeyboardInterrupt as exc:  # an Interrupted route says how far it got
        so_far = exc.progress if isinstance(exc, Interrupted) else ""
        return Open(claim, reasons=tuple(reasons), interrupted=True, so_far=so_far,
                    spent={"seconds": round(time.perf_counter() - start, 2)})


def estimate_work(claim: Claim) -> int:
    """Prefixes the enumerating routes touch: the claimed positions and the hypothesis
    family's prefixes (each evaluated in high precision to confirm a refutation); on a
    task without positions the family's prefixes (none listed on continuous content), or,
    where every route reads the family by (query, multiset) class
    (:func:`reads_by_class`), its classes (in closed form,
    :meth:`~sinkproof.PaperTask.n_prefix_classes`)."""
    cap, task = claim.options.max_work, claim.task
    if not task.has_positions:
        if not task.finite:
            return 0
        if reads_by_class(claim):
            return min(task.n_prefix_classes(), cap + 1)
        return task.n_prefixes_at_most(cap)
    return min(max(claim.conclusion.at.size_estimate(task, cap),
                   claim.hypothesis.family_size(task, cap)), cap + 1)


def _prove(claim: Claim, certificate_out: str | Path | None, reasons: list[str],
           theorems: bool = True) -> Proved | None:
    """A registered theorem (unless ``theorems`` is false), the named certificate, or a
    sink-map certificate made now."""
    if theorems:
        proved = prove_by_theorem(claim, reasons)
        if proved is not None:
            return proved
    else:
        reasons.append("theorem: not tried (theorems=False)")
    check_work("prefixes to enumerate (no registered theorem proves the claim without "
               "listing its positions)", estimate_work(claim), claim.options.max_work)
    cert_path = _certificate_path(claim)
    if cert_path is None:
        return _by_sink_map(claim, certificate_out, reasons)
    from .certified import NotImplied, prove_by_certificate

    try:
        bound, stated = prove_by_certificate(claim, cert_path)
    except NotImplied as exc:
        reasons.append(f"certificate: {exc}")
        return None
    return Proved(claim, by="certificate", bound=float(bound), detail=stated,
                  certificate=str(cert_path))


def _refute_stack(claim: Claim, witness: Path, reasons: list[str]) -> Refuted | Open:
    """The construction and search routes for a stack claim: a witness file verified by
    the trusted checker on a finite family; sampled evaluations (Open) on continuous
    content."""
    from .witness import sampled, search_stack_witness, write_stack_witness

    task, cap = claim.task, claim.options.max_work
    if reads_by_class(claim):  # the proof routes read classes; a witness, every prefix
        reasons.append(f"search: not run: a witness is verified at every prefix of the "
                       f"family, more than max_work = {cap} (the proof routes read it by "
                       f"(query, multiset) class; raise [check] max_work to search)")
        return Open(claim, reasons=tuple(reasons))
    if task.finite:
        check_work("prefixes to enumerate (the family, to verify a witness)",
                   task.n_prefixes_at_most(cap), cap)
    for name, model in constructions(claim):
        if not task.finite:
            reasons.append(f"construction ({name}): {sampled(claim, model)}")
            continue
        found = write_stack_witness(claim, model, witness)
        if found is not None:
            return Refuted(claim, model=model, error=found.error, violations=(found.where,),
                           witness=str(found.path),
                           detail=f"the construction: {name}; verified by the trusted "
                                  f"checker over all "
                                  f"{task.n_prefixes_at_most(claim.options.max_work)} "
                                  f"prefixes (sha256:{found.digest})")
        reasons.append(f"construction ({name}): does not refute the claim")
    found, res, model = search_stack_witness(claim, witness, reasons)
    spent = {"seconds": round(res.seconds, 2), "restarts": res.restarts}
    if found is None:
        return Open(claim, frontier=res.frontier, spent=spent, reasons=tuple(reasons))
    return Refuted(claim, model=model, error=found.error,
                   violations=(found.where,), witness=str(found.path),
                   detail=f"found by search in {round(res.seconds, 2):g} s; verified by the "
                          f"trusted checker (sha256:{found.digest})")


def _refute_by_constructions(claim: Claim, bound_at: Any, witness: Path,
                             reasons: list[str]) -> Refuted | None:
    """Explicit constructions (the registry's witnesses, the cancelling pair) as candidate
    counterexamples, each verified exactly like a search result."""
    from .witness import SearchRecord, write_witness

    for name, model in constructions(claim):
        ref = refutes(model, claim, bound_at)
        if ref is None:
            reasons.append(f"{name}: its construction does not refute the claim")
            continue
        path = write_witness(SearchRecord(refutation=ref), claim, witness)
        if path is not None:  # its verified statement refutes the claim exactly
            return Refuted(claim, model=model, error=ref.error, violations=ref.violations,
                           witness=str(path), detail=f"the construction of {name}, "
                           f"re-verified at {ref.digits} digits; witness statement "
                           f"sha256:{path.digest}")
    return None


def _refute_by_search(claim: Claim, bound_at: Any, witness: Path,
                      reasons: list[str], progress: bool | None) -> Refuted | Open:
    """Search for a counterexample; Open with the best trade-offs when none is verified."""
    from .witness import search_witness, write_witness

    whole_set, proved = True, set()
    if claim.conclusion.positions == "every":
        some = replace(claim, conclusion=replace(claim.conclusion, positions="some"))
        pre = prove_by_theorem(some, [])
        if pre is not None and pre.bound is not None:
            whole_set = False
            reasons.append(f"search: {pre.by} proves that some claimed position has BOS mass "
                           f">= {pre.bound:.4g}, so only single positions are searched")
        proved = proved_positions(claim)
    start = time.perf_counter()
    record = search_witness(claim, bound_at, progress=progress, whole_set=whole_set,
                            proved=proved)
    spent = {"seconds": round(time.perf_counter() - start, 2), "restarts": record.restarts}
    path = None
    if record.refutation is not None:
        path = write_witness(record, claim, witness)  # exact, or None
    interrupted = any(getattr(r, "interrupted", False) for r in record.results)
    for_time = record.timed_out or any(getattr(r, "stopped_by", "") == "wall_time"
                                       for r in record.results)
    if path is None:
        return Open(claim, frontier=record.frontier, spent=spent, interrupted=interrupted,
                    reasons=tuple(reasons + list(record.notes)), for_time=for_time)
    ref = record.refutation
    return Refuted(claim, model=ref.model, error=ref.error, violations=ref.violations,
                   witness=str(path), detail=f"found by search in {spent['seconds']:g} s; "
                   f"re-verified at {ref.digits} digits; witness statement sha256:{path.digest}")


def _by_sink_map(claim: Claim, out: Path, reasons: list[str]) -> Proved | None:
    """Certify the claim now (:func:`~sinkproof.claims.certified.certify_claim`: the sink
    map, or a hull-family certificate) and verify the file it writes."""
    from .certified import (
        NotImplied,
        certificate_maker,
        certify_claim,
        prove_by_certificate,
        why_no_certificate,
    )

    maker = certificate_maker(claim)
    try:
        written = certify_claim(claim, out)
    except (SinkproofError, ValueError) as exc:
        reasons.append(f"certificate: the {maker} failed ({str(exc).splitlines()[0]})")
        return None
    if written is None:
        reasons.append(f"certificate: none given, and {why_no_certificate(claim)}")
        return None
    try:
        bound, stated = prove_by_certificate(claim, written)
    except NotImplied as exc:
        reasons.append(f"certificate ({maker}): {exc}")
        return None
    return Proved(claim, by=f"certificate ({maker})", bound=float(bound),
                  detail=stated, certificate=str(written))


def _by_engine(claim: Claim, out: Path, reasons: list[str],
               progress: bool | None) -> Proved | None:
    """Run the proof engine; the claim is proved only by the verified statement of the
    certificate file it saved (the trusted checker's verdict on that file's bytes, taken
    when the engine wrote it; a file saved without one is verified here)."""
    from .certified import NotImplied, implied_by_verdict, prove_by_certificate
    from .engine import certify_by_engine

    path = out
    try:
        run = certify_by_engine(claim, path, progress)
    except (SinkproofError, ValueError) as exc:
        reasons.append(f"engine: failed ({str(exc).splitlines()[0]})")
        return None
    if run.path is None:
        reasons.append(f"engine (branch and bound): {run.note}")
        return None
    try:
        bound, stated = (prove_by_certificate(claim, run.path) if run.verdict is None
                         else implied_by_verdict(claim, run.verdict, run.path))
    except NotImplied as exc:
        reasons.append(f"engine (branch and bound): {exc}")
        return None
    return Proved(claim, by="bnb", bound=float(bound), detail=f"{stated}; {run.note}",
                  certificate=str(run.path))


def _certificate_path(claim: Claim) -> Path | None:
    name = claim.options.certificate
    if name is None:
        return None
    path = Path(name)
    if not path.is_absolute() and claim.source is not None and not path.exists():
        path = Path(claim.source).parent / path
    return path

