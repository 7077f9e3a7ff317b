"""(P1) bounds from a sub-family of the paper's finite family: one tree per target prefix,
the constraints of the named prefixes only, a ``paper-subfamily-bnb`` certificate.

A bound proved from the constraints of a set ``P`` of family prefixes holds for every
model accurate on ``P``, hence for every model accurate on the family (the sub-family
lemma); with ``P`` one representative per (query, multiset) class (the default) the
program is the whole family's (the multiset lemma), at a fraction of its size.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .._validate import as_int
from ..bnb.api import certify_tree
from ..bnb.box import ValueBox
from ..bnb.dual import certificate_format
from ..bnb.primal import PrimalSolver
from ..bnb.relaxation import build_relaxation, value_tokens
from ..bnb.result import CertifiedResult, TargetOutcome, round_down, verified
from ..bnb.tree import branch_and_bound
from ..certformat import FORMAT, VERSION
from ..exact_numbers import bos_mass, error_level
from ..tables import Tabular
from ..tasks.protocol import require
from ..work import BNB_MAX_WORK, product, refuse_beyond

KIND = "paper-subfamily-bnb"
PAPER_KIND = "paper-bnb-learned-values"


def _fmt(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def multiset_subfamily(task: Any, max_work: int | None = None) -> list[tuple[int, ...]]:
    """One representative prefix per (query, multiset of visible tokens) class of the
    family: every constraint of the family, each once."""
    return [c.representative for c in task.prefix_classes(max_work=max_work)]


def nontrigger_classes(task: Any, rows: Sequence[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """The prefixes of ``rows`` whose last token is not the trigger (the targets)."""
    return [r for r in rows if r[-1] < task.m]


@dataclass
class ReducedResult(CertifiedResult, Tabular):
    """The trees of :func:`prove_subfamily` / :func:`prove_uniform`.

    ``domain``: ``"finite"`` (the task's content set) or ``"box"`` (every content vector
    of ``[-1, 1]^(n-3)``); ``outcomes``: one per target tried (in order; the budget may
    stop before the last); ``certificate``: over the certified targets, kept only when the
    trusted checker verified it (``verdict``); ``status``: ``"complete"`` (every target
    asked certified), ``"partial"`` or ``"open"`` (none)."""

    task: Any
    eps: Fraction
    domain: str
    subfamily: list[tuple[int, ...]]
    targets: list[tuple[int, ...]]
    outcomes: list[TargetOutcome]
    certificate: dict[str, Any] | None
    seconds: float
    verdict: Any = None
    status: str = "open"
    notes: list[str] = field(default_factory=list)

    @property
    def certified(self) -> dict[tuple[int, ...], Fraction]:
        """Target -> certified BOS-mass bound (exact)."""
        return {o.target: o.certified for o in self.outcomes if o.certified is not None}

    def by_position(self) -> dict[int, Fraction]:
        """Position ``t`` -> the least certified bound over the certified targets there."""
        out: dict[int, Fraction] = {}
        for target, b in self.certified.items():
            out[len(target)] = min(b, out.get(len(target), b))
        return out

    def to_records(self) -> list[dict[str, Any]]:
        """One row per target tried: position, prefix, certified bound, nodes."""
        return [dict(position=len(o.target), target=list(o.target), certified=o.certified,
                     nodes=o.tree.nodes) for o in self.outcomes]

    def __repr__(self) -> str:
        done = len(self.certified)
        least = min(self.certified.values(), default=None)
        shown = "none" if least is None else f"{float(least):.6g}"
        return (f"ReducedResult({self.status}, content {self.domain}: {done} of "
                f"{len(self.targets)} targets certified, least BOS mass {shown}, "
                f"{len(self.subfamily)} prefixes, {self.seconds:.1f}s)")


def _tree_json(outcome: TargetOutcome, keep: list[int] | None, n: int) -> dict[str, Any]:
    """The checker's tree of ``outcome``; with ``keep`` (the projected coordinates) every
    split, box and multiplier is written back in the ``n`` coordinates (zeros elsewhere)."""
    node = outcome.node_json()
    if keep is None:
        return node
    stack = [node]
    while stack:
        cur = stack.pop()
        if "leaf" in cur:
            leaf = cur["leaf"]
            leaf["z"] = [[row[keep.index(c)] if c in keep else "0" for c in range(n)]
                         for row in leaf["z"]]
            leaf["box"] = [[tok, [ivs[keep.index(c)] if c in keep else [None, None]
                                  for c in range(n)]] for tok, ivs in leaf["box"]]
        else:
            cur["split"]["coord"] = keep[cur["split"]["coord"]]
            stack.extend((cur["below"], cur["above"]))
    return node


def _negate(x: str | None) -> str | None:
    return None if x is None else (x[1:] if x.startswith("-") else ("0" if x == "0" else "-" + x))


def mirror_swap(task: Any) -> dict[int, int] | None:
    """The code map of the reflection ``c -> -c`` of the content coordinates when the
    content set is closed under it (content ``i`` to the index of ``-c_i``, triggers
    alike), else ``None``."""
    c, m = task.content, task.m
    partner = []
    for i in range(m):
        hit = np.flatnonzero(np.all(c == -c[i], axis=1))
        if hit.size == 0:
            return None
        partner.append(int(hit[0]))
    return {**{i: partner[i] for i in range(m)}, **{m + i: m + partner[i] for i in range(m)}}


def mirrored_tree(task: Any, node: dict[str, Any], swap: dict[int, int]) -> dict[str, Any]:
    """The checker's tree for the mirror image of a target: tokens swapped, every content
    coordinate of multipliers, boxes and splits negated, each constraint replaced by its
    (query, multiset) class representative (the same constraint, by the multiset lemma).
    The reflection maps accurate models to accurate models, so the bound is the same."""
    content = range(2, task.n - 1)
    if "leaf" in node:
        leaf = node["leaf"]
        return {"leaf": {
            "box": [[swap[tok], [[_negate(b), _negate(a)] if c in content else [a, b]
                                 for c, (a, b) in enumerate(ivs)]] for tok, ivs in leaf["box"]],
            "constraints": [list(task.class_representative([swap[x] for x in r]))
                            for r in leaf["constraints"]],
            "z": [[_negate(x) if c in content else x for c, x in enumerate(row)]
                  for row in leaf["z"]],
            "s": list(leaf["s"]), "s0": leaf["s0"]}}
    split = node["split"]
    below, above = (mirrored_tree(task, node[k], swap) for k in ("below", "above"))
    if split["coord"] in content:
        return {"split": {"token": swap[split["token"]], "coord": split["coord"],
                          "at": _negate(split["at"])}, "below": above, "above": below}
    return {"split": {**split, "token": swap[split["token"]]}, "below": below, "above": above}


def run_trees(task: Any, eps: Any, rows: list[tuple[int, ...]], targets: list[tuple[int, ...]],
              *, domain: str = "finite", keep: list[int] | None = None,
              instance: dict[str, Any] | None = None, min_bos_mass: Any = None,
              max_nodes: int = 60, time_limit: float = 60.0, budget: float | None = None,
              progress: bool | None = None, max_work: int | None = None,
              adaptive: bool = True, mirror: bool = True,
              save: str | Path | None = None) -> ReducedResult:
    """Grow and certify one tree per target over the constraints of ``rows`` (on the value
    coordinates ``keep`` when given), then write and verify the certificate.

    ``adaptive`` (with ``min_bos_mass``): try each target first over a *working set* —
    the constraints that the certified leaves so far used, and the target's own — and over
    all of ``rows`` only when that does not prove ``min_bos_mass`` there.  Both are sub-families
    of ``rows``, so either proof is one of the whole family's (the sub-family lemma).
    ``mirror`` (finite content closed under ``c -> -c``): a target whose mirror image was
    certified gets the mirrored tree (:func:`mirrored_tree`) instead of its own."""
    eps_q = error_level(eps, "eps", positive=True)
    goal_q = None if min_bos_mass is None else bos_mass(min_bos_mass, "min_bos_mass",
                                                         positive=True)
    nodes = as_int("max_nodes", max_nodes, minimum=1)
    refuse_beyond("tree nodes x targets x sub-family prefixes",
                  product(nodes, len(targets), len(rows)), max_work, BNB_MAX_WORK)
    inst, _, _ = certificate_format(task, eps_q, "learned")
    dim = task.out_dim if keep is None else len(keep)
    root = ValueBox.free(list(value_tokens(task)), dim)
    goal = None if goal_q is None else float(1 / goal_q - 1)
    start = time.perf_counter()
    deadline = None if budget is None else start + budget
    outcomes: list[TargetOutcome] = []
    working: dict[tuple[int, ...], None] = {}

    def grow(target: tuple[int, ...], rows_t: list[tuple[int, ...]], left: float) -> TargetOutcome:
        relax = build_relaxation(task, eps_q, target, rows_t)
        if keep is not None:
            relax = _project(relax, keep)
        with warnings.catch_warnings():  # float solves only search; the checker decides
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            tree = branch_and_bound(PrimalSolver(relax), root, goal, nodes, left, progress)
            outcome = TargetOutcome(target, tree)
            if tree.status != "interrupted":
                certify_tree(relax, outcome, "learned", None, deadline)
        return outcome

    swap = mirror_swap(task) if mirror and keep is None else None
    mirrored: dict[tuple[int, ...], dict[str, Any]] = {}
    done: dict[tuple[int, ...], TargetOutcome] = {}

    def met(o: TargetOutcome) -> bool:
        return o.certified is not None and (goal_q is None or o.certified >= goal_q)

    for target in targets:
        image = None if swap is None else task.class_representative([swap[c] for c in target])
        if image in done and image != target:
            twin = done[image]
            mirrored[target] = mirrored_tree(task, _tree_json(twin, None, task.n), swap)
            outcomes.append(TargetOutcome(target, twin.tree, {}, twin.certified))
            continue
        tries = [rows]
        if adaptive and goal_q is not None and working:  # first what earlier proofs used
            tries.insert(0, list(dict.fromkeys([*working, target])))
        outcome = None
        for rows_t in tries:
            left = time_limit if deadline is None else min(time_limit,
                                                            deadline - time.perf_counter())
            if left <= 0:
                break
            outcome = grow(target, rows_t, left)
            if outcome.tree.status == "interrupted" or met(outcome):
                break
        if outcome is None:  # the budget is spent
            break
        outcomes.append(outcome)
        if outcome.tree.status == "interrupted":
            break
        if met(outcome):
            done[target] = outcome
        for leaf, _ in outcome.leaves.values():
            working.update((tuple(c), None) for c in leaf["constraints"])
    good = [o for o in outcomes if met(o)]
    result = ReducedResult(task, eps_q, domain, rows, list(targets), outcomes, None,
                           time.perf_counter() - start)
    if good:
        stated = goal_q if goal_q is not None else min(round_down(o.certified) for o in good)
        trees = [{"target": list(o.target), "bound": _fmt(round_down(o.certified)),
                  "root": mirrored.get(o.target) or _tree_json(o, keep, task.n)} for o in good]
        cert = {"format": FORMAT, "version": VERSION, "kind": KIND,
                "instance": inst if instance is None else instance,
                "claim": {"min_bos_mass": _fmt(stated), "targets": len(trees),
                          "statement": f"paper (P1), one softmax head, content {domain}, "
                                       f"error <= {eps_q}: BOS mass >= {stated} at every "
                                       "target listed"},
                "data": {"subfamily": [list(r) for r in rows], "trees": trees}}
        complete = len(good) == len(targets)
        # with save (a complete certificate only): the written file's bytes, verified once
        verdict = verified(cert, save if complete else None)
        if verdict.ok:
            result.certificate, result.verdict = cert, verdict
            result.status = "complete" if complete else "partial"
    return result


def _project(relax: Any, keep: list[int]) -> Any:
    return relax.projected(keep)


def prove_subfamily(task: Any, eps: Any, *, targets: Sequence[Sequence[int]] | None = None,
                    subfamily: Sequence[Sequence[int]] | None = None,
                    min_bos_mass: Any = None, max_nodes: int = 60, time_limit: float = 60.0,
                    budget: float | None = None, progress: bool | None = None,
                    max_work: int | None = None, save: str | Path | None = None
                    ) -> ReducedResult:
    """Certified least BOS mass of every ε-accurate one-head softmax model (learned values)
    at each target prefix of a finite paper task, from the constraints of ``subfamily``
    (default: one representative per (query, multiset) class, i.e. the whole family).

    ``targets``: token-code prefixes (default: every non-trigger class representative,
    i.e. every non-trigger position of every sequence up to the order of its tokens);
    each target joins the sub-family.  ``budget`` caps the seconds of all trees; the
    certificate covers the targets certified within it (``status`` says whether all).
    ``save``: write the certificate there when every target is certified, kept only when
    the trusted checker verifies the written bytes (one verification, not one in memory
    and one of the file)."""
    require(task, "finite", "prove_subfamily")
    require(task, "residual_targets", "prove_subfamily (one-layer targets)", value=False)
    rows = (multiset_subfamily(task, max_work) if subfamily is None
            else task.subfamily(subfamily))
    wanted = nontrigger_classes(task, rows) if targets is None else task.subfamily(targets)
    if not wanted:
        raise ValueError("no target prefixes")
    if any(t[-1] >= task.m for t in wanted):
        raise ValueError("a target ends at the trigger; the bounds are for non-trigger "
                         "positions")
    wanted = list(dict.fromkeys(wanted))
    rows = list(dict.fromkeys([*rows, *wanted]))
    return run_trees(task, eps, rows, wanted, min_bos_mass=min_bos_mass, max_nodes=max_nodes,
                     time_limit=time_limit, budget=budget, progress=progress,
                     max_work=max_work, save=save)
