"""Counterexample search for a claim, and the witness file of a refutation.

The search layer looks for a model with error ``<= ε`` on the task's whole family
and BOS mass below the threshold at chosen positions.  The claim's negation needs
that at *one* claimed position (``positions="every"``) or at all of them
(``positions="some"``), so the search first constrains the whole set, then (for
``"every"``) the few positions where the best model so far came closest.  Every
candidate is re-verified against the claim's exact semantics in high precision.

The search constrains the error on all of ``S_T``; when the claim's hypothesis
family is smaller, a witness found this way satisfies it a fortiori (the search
does not exploit the weaker hypothesis, so it may miss witnesses that need it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import search as search_module
from ..attention import MAPS
from ..certformat import format_rational
from ..checker import verify_file
from ..convex.certfile import instance_difference, save_json, task_instance
from ..errors import CertificateError
from ..modelclass import ModelClass
from ..progress import Progress
from ..search.engine import SearchBudgetError
from ..search.restart import pareto
from ..search.verify import witness_document
from .positions import PositionMass, scan
from .refute import Refutation, refutes
from .schema import Claim
from .theorems import theorem_bound

SINGLE_POSITION_TRIES = 3
ATTEMPT_SEEDS = 100
"""Attempt ``i`` of a claim with seed ``s`` searches with seed ``100 s + i``: claims with
different seeds never share an attempt's restarts."""
"""For a ``positions="every"`` claim: how many single positions to try after the whole set."""


@dataclass
class SearchRecord:
    """What the claim's search did: the refutation (if any), the best (error, BOS mass)
    trade-offs seen, restarts spent and notes for the report; ``timed_out``: the wall-time
    stop cut an attempt before any restart finished."""

    refutation: Refutation | None = None
    frontier: tuple[tuple[float, float], ...] = ()
    restarts: int = 0
    notes: list[str] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    timed_out: bool = False


def _where(claim: Claim) -> Any:
    at = claim.conclusion.at
    if at.name in ("nontrigger", "trigger", "all"):
        return at.name
    return {(seq[:t], t) for seq, t in at.pair_list(claim.task)}


def _run_search(claim: Claim, where: Any, threshold: float, budget: float, seed: int) -> Any:
    mc = claim.model_class
    return search_module.search(
        claim.task, kind=mc.kind, heads=mc.heads, values=mc.values,
        max_error=claim.max_error, max_bos_mass=threshold, where=where,
        restarts=claim.options.restarts, seed=seed, budget=budget, progress=False)


def _trace_points(result: Any) -> list[tuple[float, float]]:
    return [(float(point.error), float(point.bos_mass)) for point in result.trace]


def search_witness(claim: Claim, bound_at: Any, progress: bool | None = None,
                   whole_set: bool = True,
                   proved: set[tuple[tuple[int, ...], int]] = frozenset()) -> SearchRecord:
    """Search for a model refuting ``claim`` (BOS threshold ``bound_at(prefix)``).

    Attempts: the whole position set (skipped when ``whole_set`` is false, e.g. when a
    theorem already proves that some position of the set sinks), then for a
    ``positions="every"`` claim up to :data:`SINGLE_POSITION_TRIES` single positions:
    those where the first attempt's model came closest, else the shortest prefixes,
    never one in ``proved`` (where a theorem already proves the bound).  The budget is
    split evenly between the attempts.
    """
    record = SearchRecord()
    positions = [(seq[:t], t) for seq, t in scan_positions(claim)]
    open_positions = [pair for pair in positions if pair not in proved]
    tries = min(SINGLE_POSITION_TRIES, len(open_positions)) if (
        claim.conclusion.positions == "every" and len(positions) > 1) else 0
    attempts: list[Any] = []
    if whole_set:
        attempts.append(_where(claim))
    else:
        attempts += [{pair} for pair in sorted(open_positions, key=lambda p: (p[1], p[0]))[:tries]]
    if not attempts:
        record.notes.append("search: theorems prove the bound at every claimed position")
        return record
    budget = claim.options.budget / ((1 if whole_set else 0) + tries)
    points: list[tuple[float, float]] = []
    total = len(attempts) + (tries if whole_set else 0)
    with Progress(total, "check", progress, threshold=1) as bar:
        for i, where in enumerate(attempts):  # single-position attempts may be appended
            pairs = positions if isinstance(where, str) else list(where)
            threshold = min(bound_at(seq) for seq, _ in pairs)
            if threshold <= 0:
                record.notes.append("search: nothing to violate where the bound is <= 0")
                bar.update(1)
                continue
            seed = ATTEMPT_SEEDS * claim.options.seed + i
            try:
                result = _run_search(claim, where, threshold, budget, seed)
            except SearchBudgetError as exc:  # the wall-time stop cut every restart
                record.timed_out = True
                record.notes.append(f"search attempt {i + 1}: {exc}; raise [check] budget")
                bar.update(1)
                continue
            bar.update(1)
            record.results.append(result)
            record.restarts += int(result.restarts)
            points += _trace_points(result)
            ref = None if result.interrupted else refutes(result.model, claim, bound_at)
            if ref is not None or result.interrupted:  # Ctrl-C: stop, keep what was found
                record.refutation = ref
                break
            if i == 0 and whole_set and tries:
                near = [m for m in scan(result.model, claim.conclusion.at)
                        if (m.sequence[:m.position], m.position) not in proved]
                attempts += [{(m.sequence[:m.position], m.position)} for m in closest(near, tries)]
    record.frontier = tuple(pareto(points))
    if record.refutation is None:
        record.notes.append(f"search: no model with error <= {claim.max_error:g} violating the "
                            f"conclusion was found in {len(attempts)} attempt(s)")
    return record


def scan_positions(claim: Claim) -> list[tuple[tuple[int, ...], int]]:
    return claim.conclusion.at.pair_list(claim.task)


def closest(masses: list[PositionMass], n: int) -> list[PositionMass]:
    """The ``n`` positions whose largest head BOS mass is smallest."""
    return sorted(masses, key=lambda m: max(m.masses))[:n]


@dataclass(frozen=True)
class SavedWitness:
    """A witness file the trusted checker verified and whose statement refutes the claim;
    ``digest``: SHA-256 of the verified statement (``sinkproof verify`` prints it)."""

    path: Path
    digest: str

    def __str__(self) -> str:
        return str(self.path)


def write_witness(record: SearchRecord, claim: Claim, path: Path) -> SavedWitness | None:
    """Save the refuting model as a ``witness`` file and have the trusted checker accept it.

    The file states error ``<= ε`` (the claim's exact ε) on the whole family and BOS mass
    (off the simplex the BOS *share*, as the claim measures it) ``<= m`` in every head at the
    violated positions, with ``m`` halfway between the largest violated mass and the
    claim's threshold.  The file as written is read back, verified, and its statement
    must refute the claim (:func:`refuting_statement`).  Returns ``None`` (and removes
    the file) when any of this fails (for example a ``heads="every"`` refutation where
    another head is above the threshold): then the refutation is not reported.
    """
    ref = record.refutation
    assert ref is not None
    bound_at = theorem_bound(claim)
    pairs = {(v.sequence[:v.position], v.position) for v in ref.violations}
    highest = max(max(v.masses) for v in ref.violations)
    threshold = min(bound_at(seq) for seq, _ in pairs)
    doc = witness_document(ref.model, claim.max_error, (highest + threshold) / 2, where=pairs)
    doc["claim"]["max_error"] = format_rational(claim.hypothesis.eps_exact)
    if not ref.model.attention_map.properties.on_simplex:
        doc["claim"]["bos_measure"] = "share"
    if Path(path).exists():  # it removes what it wrote, so it writes nothing over a file
        raise FileExistsError(f"{path} exists: a witness is made at a fresh path")
    save_json(doc, path)
    try:
        verdict = verify_file(path)  # the file as written, read back
    except CertificateError as exc:  # e.g. an attention kind the checker has no code for
        problem: str | None = f"the trusted checker cannot read it: {exc}"
    else:
        problem = (refuting_statement(verdict.statement, claim) if verdict.ok else
                   f"the trusted checker did not confirm it: {verdict.failure}")
    if problem is not None:
        Path(path).unlink(missing_ok=True)  # no file is left that does not refute the claim
        record.notes.append(f"witness: not a refutation ({problem})")
        return None
    return SavedWitness(Path(path), verdict.digest)


def refuting_statement(statement: dict[str, Any], claim: Claim) -> str | None:
    """Why a verified witness statement does not refute ``claim`` (``None``: it does).

    It must be about the claim's task exactly (content as exact rationals, positional
    scheme, trigger family), a model of the claim's class, error ``<= ε`` (exact) on the
    task's whole family (which holds every hypothesis family), the claim's BOS measure
    in every head strictly below the claim's threshold at the named positions, and
    those positions must be one claimed position (``positions="every"``) or all of them
    (``"some"``).
    """
    if statement.get("kind") != "witness":
        return f"a {statement.get('kind')!r} statement is no witness"
    expected = task_instance(claim.task)
    stated = statement["instance"]
    differs = instance_difference({**stated, "values": "fixed"}, expected)
    if differs is not None:
        return f"another instance: {differs}"
    if stated["positions"] != claim.task.positions:
        return f"positions {stated['positions']!r}, the claim's task has {claim.task.positions!r}"
    model = statement["model"]
    cls = ModelClass(kind=model["kind"], heads=model["heads"], values=model["values"],
                     positions=claim.task.positions)
    if not cls.is_subclass_of(claim.model_class):
        return f"a model of class {cls}, not of {claim.model_class}"
    if Fraction(statement["max_error"]) > claim.hypothesis.eps_exact:
        return f"error <= {statement['max_error']} exceeds ε = {claim.hypothesis.eps_exact}"
    if model["kind"] not in MAPS:
        return f"an unknown attention map {model['kind']!r}"
    if not MAPS[model["kind"]].properties.on_simplex and statement["bos_measure"] != "share":
        return (f"it bounds the raw {model['kind']} BOS weight; the claim speaks of the BOS "
                "share")
    where = statement["bos_at"]
    claimed = {tuple(seq[:t]) for seq, t in claim.conclusion.at.pair_list(claim.task)}
    named = claimed if isinstance(where, str) else {tuple(x) for x in where}
    if isinstance(where, str) or not named or not named <= claimed:
        return "its positions are not claimed positions"
    if claim.conclusion.positions == "some" and named != claimed:
        return "a 'some position' claim needs the bound at every claimed position"
    threshold = theorem_bound(claim)
    m = Fraction(statement["max_bos"])
    for prefix in named:
        exact = threshold.exact(prefix)  # the claim's b, or a rational below the theorem's
        if exact is None:
            return f"the claim has no threshold at {list(prefix)}"
        if not m < exact:
            return f"BOS <= {statement['max_bos']} is not below the claimed {exact}"
    return None
