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
from pathlib import Path
from typing import Any

from ..progress import Progress
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
    trade-offs seen, restarts spent and notes for the report."""

    refutation: Refutation | None = None
    frontier: tuple[tuple[float, float], ...] = ()
    restarts: int = 0
    notes: list[str] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)


def _where(claim: Claim) -> Any:
    at = claim.conclusion.at
    if at.name in ("nontrigger", "trigger", "all"):
        return at.name
    return {(seq[:t], t) for seq, t in at.pair_list(claim.task)}


def _run_search(claim: Claim, where: Any, threshold: float, budget: float, seed: int) -> Any:
    from .. import search as search_module

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
    from ..search.restart import pareto

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
            result = _run_search(claim, where, threshold, budget, seed)
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


def write_witness(record: SearchRecord, claim: Claim, path: Path) -> Path | None:
    """Save the refuting model as a ``witness`` file and have the trusted checker accept it.

    The file states error ``<= ε`` on the whole family and BOS mass ``<= m`` in every
    head at the violated positions, with ``m`` halfway between the largest violated
    mass and the claim's threshold.  Returns ``None`` when the checker does not
    confirm that statement (for example a ``heads="every"`` refutation where another
    head is above the threshold): then the refutation is not reported.
    """
    from ..checker import verify_file
    from ..search.verify import verify_witness

    ref = record.refutation
    assert ref is not None
    bound_at = theorem_bound(claim)
    pairs = {(v.sequence[:v.position], v.position) for v in ref.violations}
    highest = max(max(v.masses) for v in ref.violations)
    threshold = min(bound_at(seq) for seq, _ in pairs)
    report = verify_witness(ref.model, claim.hypothesis.eps_exact, (highest + threshold) / 2, pairs)
    if not report.verified:
        record.notes.append(f"witness: the trusted checker did not confirm it ({report!r})")
        return None
    report.save(path)
    if not verify_file(path).ok:  # the file as written, read back
        record.notes.append("witness: the saved file did not verify")
        return None
    return path
