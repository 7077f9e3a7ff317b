"""The several-head engine: rounds of lemmas, each a verified step, written as ``bnb-heads``.

Round 0 bounds every target with no lemma (the other heads' weight bounded only by
their sum).  While some target misses the goal, each further round first re-proves the
*helper* prefixes — the non-trigger prefixes that share a logit class with a missing
target — with the lemmas proved so far, then the missing targets with the new lemmas:
a sink proved in one prefix limits how much weight the other heads can put on its
classes elsewhere.  The certificate lists the steps that the targets depend on, in
order, and the trusted checker verifies each step from the earlier ones only.

With learned values the other heads' outputs are unconstrained vectors (their value
maps are free), so the relaxation has no finite bound: :func:`prove_heads` says so and
proves nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import checker
from ..convex.certfile import envelope
from ..exact_numbers import bos_mass, error_level
from ..tables import Tabular
from ..task import TRIG, TriggerTask
from .dual import _fmt
from .heads import HeadsProgram, Lemma, instance_dict
from .relaxation import family_prefixes, prefix_classes
from .result import CertifiedResult, verified

KIND = "bnb-heads"
LEARNED_NOTE = ("with learned values the other heads' value maps are free, so their outputs "
                "at each prefix are unconstrained vectors and the relaxation has no finite "
                "bound in any head")


@dataclass
class HeadsOutcome:
    """One target: its certified every-head BOS-mass bound (``None``: none) and step index."""

    target: tuple[int, ...]
    certified: Fraction | None = None
    step: int | None = None


@dataclass
class HeadsResult(CertifiedResult, Tabular):
    """Outcome of :func:`prove_heads`.

    ``status``: ``"proved"`` (every target, or one with ``some``, certified at ``>=
    min_bos_mass`` in every head, certificate verified), ``"bounded"`` (no goal) or
    ``"open"``; ``solves``: dual programs solved; ``note``: why nothing was proved, if so.
    """

    task: TriggerTask
    eps: Fraction
    heads: int
    values: str
    min_bos_mass: Fraction | None
    targets: list[HeadsOutcome]
    status: str
    certificate: dict[str, Any] | None
    seconds: float
    solves: int = 0
    rounds: int = 0
    interrupted: bool = False
    note: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list, repr=False)
    norm_bound_needed: bool = False
    verdict: checker.Verdict | None = None

    @property
    def bound(self) -> Fraction | None:
        got = [t.certified for t in self.targets]
        return None if not got or any(b is None for b in got) else min(got)

    @property
    def nodes(self) -> int:
        return self.solves

    def to_records(self) -> list[dict[str, Any]]:
        """One row per target prefix: its certified exact every-head bound (``None``: none)
        and the step of the chain that gave it."""
        return [dict(target=list(t.target), certified=t.certified, step=t.step)
                for t in self.targets]

    def __repr__(self) -> str:
        bound = "none" if self.bound is None else f"{float(self.bound):.6g}"
        goal = "" if self.min_bos_mass is None else f" >= {float(self.min_bos_mass):g}"
        return (f"HeadsResult({self.status}{goal}: {self.heads} heads, {len(self.targets)} "
                f"targets, certified least BOS mass in every head {bound}, {self.solves} "
                f"solves, {self.rounds} rounds, {self.seconds:.2f}s, values={self.values})")


def helpers(task: TriggerTask, targets: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """Non-trigger prefixes of ``S_T`` sharing a logit class with one of ``targets``."""
    wanted = set().union(*(prefix_classes(task, t) for t in targets)) if targets else set()
    return [pre for pre in family_prefixes(task)
            if pre[-1] != TRIG and wanted & set(prefix_classes(task, pre))]


def prove_heads(task: TriggerTask, eps: Any, heads: int,
                targets: list[tuple[int, ...]], *, values: str = "fixed",
                min_bos_mass: Any = None, some: bool = False, rounds: int = 2,
                time_limit: float = 120.0, parametrised: bool = True,
                save: str | Path | None = None) -> HeadsResult:
    """Bound the least BOS mass in **every** one of ``heads`` softmax heads at each target.

    ``rounds``: lemma rounds after round 0 (each re-proves the helper prefixes, then the
    targets that still miss ``min_bos_mass``); ``time_limit`` caps the whole run (checked
    between solves); Ctrl-C returns what was certified so far (``interrupted``); ``save``:
    as in :func:`sinkproof.bnb.prove` (the file written there is what the checker verifies).
    """
    start = time.perf_counter()
    eps = error_level(eps, "eps", positive=True)
    if isinstance(heads, bool) or not isinstance(heads, int) or heads < 1:
        raise ValueError(f"heads must be an integer >= 1, got {heads!r}")
    if min_bos_mass is not None:
        min_bos_mass = bos_mass(min_bos_mass, "min_bos_mass", positive=True)
    targets = [tuple(int(x) for x in t) for t in targets]
    for t in targets:
        task.encode(t)
    if not targets:
        raise ValueError("no target positions")
    outcomes = [HeadsOutcome(t) for t in targets]

    def finish(status_note: str = "", solves: int = 0, done_rounds: int = 0,
               interrupted: bool = False, steps: list | None = None) -> HeadsResult:
        return _finish(task, eps, heads, values, min_bos_mass, some, outcomes, steps or [],
                       time.perf_counter() - start, solves, done_rounds, interrupted,
                       status_note, save)

    if values not in ("learned", "fixed"):
        raise ValueError(f"values must be 'learned' or 'fixed', got {values!r}")
    if values == "learned":
        if heads == 1:
            raise ValueError("one head with learned values: use sinkproof.bnb.prove")
        return finish(LEARNED_NOTE)
    steps: list[dict[str, Any]] = []
    best: dict[tuple[int, ...], Lemma] = {}
    solves, done = 0, 0

    def met(o: HeadsOutcome) -> bool:
        return o.certified is not None and (min_bos_mass is None or o.certified >= min_bos_mass)

    def record(target: tuple[int, ...], prog: HeadsProgram) -> None:
        nonlocal solves
        solves += 1
        got = prog.step(target)
        if got is None:
            return
        entry, _ = got
        bound = Fraction(entry["bound"])
        if target in best and best[target].bound >= bound:
            return
        best[target] = Lemma(len(steps), target, bound)
        steps.append(entry)

    def out_of_time() -> bool:
        return time.perf_counter() - start > time_limit

    try:
        for rnd in range(rounds + 1):
            missing = [o for o in outcomes if not met(o)]
            if not missing or out_of_time() or (some and len(missing) < len(outcomes)):
                break
            lemmas = list(best.values())
            if rnd > 0:
                prog = HeadsProgram(task, eps, heads, lemmas, parametrised)
                for pre in helpers(task, [o.target for o in missing]):
                    if out_of_time():
                        break
                    record(pre, prog)
                lemmas = list(best.values())
            prog = HeadsProgram(task, eps, heads, lemmas, parametrised)
            for o in missing:
                if out_of_time():
                    break
                record(o.target, prog)
                if o.target in best:
                    o.certified, o.step = best[o.target].bound, best[o.target].index
                if some and met(o):
                    break
            done = rnd + 1
    except KeyboardInterrupt:
        return finish("interrupted", solves, done, True, steps)
    note = "" if all(met(o) for o in outcomes) else (
        f"no proof after {done} round(s) of lemmas and {solves} solves")
    return finish(note, solves, done, False, steps)


def _finish(task: TriggerTask, eps: Fraction, heads: int, values: str,
            goal: Fraction | None, some: bool, outcomes: list[HeadsOutcome],
            steps: list[dict[str, Any]], seconds: float, solves: int, rounds: int,
            interrupted: bool, note: str, save: str | Path | None = None) -> HeadsResult:
    good = [o for o in outcomes if o.certified is not None
            and (goal is None or o.certified >= goal)]
    chosen = good[:1] if some else good
    complete = bool(chosen) if some else len(good) == len(outcomes)
    status, cert, verdict = "open", None, None
    if complete and chosen and not interrupted:
        stated = goal if goal is not None else min(o.certified for o in chosen)
        kept, index = _needed(steps, [o.step for o in chosen])
        where = "some" if some else "every"
        statement = (f"{heads} softmax heads, fixed values, error <= {eps} on S_T: BOS mass "
                     f">= {stated} in every head at {where} target listed")
        cert = envelope(KIND, instance_dict(task, eps, heads),
                        {"min_bos_mass": _fmt(stated), "targets": len(chosen),
                         "statement": statement},
                        {"steps": kept, "targets": [index[o.step] for o in chosen]})
        verdict = verified(cert, save)
        if verdict.ok:
            status = "proved" if goal is not None else "bounded"
        else:
            cert, note = None, f"the trusted checker rejected the certificate: {verdict.failure}"
    return HeadsResult(task, Fraction(eps), heads, values, goal, outcomes, status, cert,
                       seconds, solves, rounds, interrupted, note, steps, verdict=verdict)


def _needed(steps: list[dict[str, Any]], roots: list[int]
            ) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """The steps ``roots`` depend on (through ``nu`` and ``kappa``), renumbered in order."""
    need, stack = set(), list(roots)
    while stack:
        k = stack.pop()
        if k in need:
            continue
        need.add(k)
        leaf = steps[k]["leaf"]
        stack.extend(e[1] for e in leaf["nu"])
        stack.extend(e[0] for e in leaf["kappa"])
    index = {old: new for new, old in enumerate(sorted(need))}
    kept = []
    for old in sorted(need):
        step = steps[old]
        leaf = dict(step["leaf"])
        leaf["nu"] = [[i, index[k], x] for i, k, x in leaf["nu"]]
        leaf["kappa"] = [[index[k], x] for k, x in leaf["kappa"]]
        kept.append({**step, "leaf": leaf})
    return kept, index
