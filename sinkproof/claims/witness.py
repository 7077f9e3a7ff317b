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

On a task without positional features the model is a stack (:mod:`sinkproof.stack`): the
stack search (:func:`sinkproof.search.search` with ``optimiser="adam"``, by
:func:`~sinkproof.search.engine.search_stack`) looks for one accurate on the
whole family with BOS measure below the threshold at every non-trigger position, and a
found stack (or a construction) is written as a ``paper-witness`` file that states its
weights exactly, the claim's ε and a BOS bound just above the largest BOS measure taken in
floats at the positions it names (:func:`stack_witness_document`).  With continuous
content a stack is evaluated on seeded samples plus an adversarial content search: a
lower estimate of its worst error, so no witness is written and the answer stays Open.

Either way a claim is refuted only by what the checker verified, read by the one registry
of :mod:`sinkproof.claims.implications`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .. import search as search_module
from ..attention import bos_measure
from ..certformat import format_rational, paper_instance
from ..checker import Verdict, verify_file
from ..convex.certfile import envelope, save_json
from ..errors import CertificateError
from ..progress import Progress
from ..search.engine import SearchBudgetError, search_stack
from ..search.restart import pareto
from ..search.verify import witness_document
from ..stack import StackModel, paper_model
from ..stackeval import evaluate_stack
from .implications import refutation_problem, refutation_text
from .positions import PositionMass, scan
from .refute import Refutation, family_bos, refutes
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
    """Why a verified witness statement does not refute ``claim`` (``None``: it does):
    :func:`sinkproof.claims.implications.refutation_problem`."""
    return refutation_problem(statement, claim, theorem_bound(claim))


# ------------------------------------------------ stacks (tasks without positions)
STACK_WITNESS = "paper-witness"
"""The certificate kind of a stack witness (the checker's stack-witness rule)."""
SLACK = Fraction(1, 10**6)
"""Relative slack of the stated BOS bound over the float measurement."""
ADVERSARIAL_STARTS = 4
"""Starts of the adversarial content search when content is continuous."""


@dataclass(frozen=True)
class StackWitness:
    """A checked stack witness: the file, the checker's verdict, the refuting facts."""

    path: Path
    verdict: Verdict
    error: float
    bos: float
    where: str

    @property
    def digest(self) -> str | None:
        return self.verdict.digest


def stack_weights(model: StackModel) -> dict[str, np.ndarray]:
    """``W_Q, W_K, W_V`` ``(layers, heads, n, n)`` and ``W_O`` ``(layers, n, heads·n)`` of a
    stack (its heads' factored score and value matrices); ``map_params``
    ``(layers, heads, P)`` for a map with parameters, ``gate_w`` ``(layers, heads, n)`` and
    ``gate_c`` ``(layers, heads)`` for a gated map."""
    layers = model.layers
    WQ = np.array([[h.W_Q for h in layer.heads] for layer in layers])
    WK = np.array([[h.W_K for h in layer.heads] for layer in layers])
    WV = np.array([[h.V for h in layer.heads] for layer in layers])
    WO = np.array([layer.W_O for layer in layers])
    out = dict(W_Q=WQ, W_K=WK, W_V=WV, W_O=WO)
    amap = layers[0].heads[0].map
    if amap.param_names:
        out["map_params"] = np.array([[h.map_params for h in layer.heads] for layer in layers])
    if amap.properties.gated:
        out["gate_w"] = np.array([[h.gate_w for h in layer.heads] for layer in layers])
        out["gate_c"] = np.array([[h.gate_c for h in layer.heads] for layer in layers])
    return out


def model_from_params(task: Any, kind: str, params: dict[str, np.ndarray],
                      residual: bool | None = None) -> StackModel:
    """The stack of search parameters (``wq, wk, wv, wo``; ``mp``, ``gw``, ``gc``);
    ``residual`` as :func:`~sinkproof.stack.paper_model` takes it."""
    return paper_model(task, kind, W_Q=params["wq"], W_K=params["wk"], W_V=params["wv"],
                       W_O=params["wo"], residual=residual, map_params=params.get("mp"),
                       gate_w=params.get("gw"), gate_c=params.get("gc"))


def _rationals(a: np.ndarray) -> Any:
    if a.ndim == 0:
        return format_rational(Fraction(float(a)))
    return [_rationals(x) for x in a]


def _where_item(task: Any, prefix: tuple[int, ...], heads: Any) -> dict[str, Any]:
    m = task.m
    j = next((k + 1 for k, c in enumerate(prefix) if c >= m), None)
    return {"content": [c - m if c >= m else c for c in prefix], "trigger_at": j,
            "heads": heads}


def _choose(claim: Claim, per: list[tuple[tuple[int, ...], np.ndarray]]) -> tuple[Any, float]:
    """What the witness states: ``"nontrigger"`` (every position, every head) when the
    claim's quantifiers need it or the model allows it, else the best single position."""
    b = float(claim.conclusion.min_bos_mass)
    overall = max(float(v.max()) for _, v in per)
    con = claim.conclusion
    if con.positions == "some" or overall < b:
        return "nontrigger", overall
    if con.at.name == "prefix":  # the one claimed position
        want = con.at.codes(claim.task)
        per = [pv for pv in per if tuple(pv[0]) == want] or per
    if con.heads == "some":  # one position with every head below b
        prefix, v = min(per, key=lambda pv: float(pv[1].max()))
        return [_where_item(claim.task, prefix, "every")], float(v.max())
    prefix, v = min(per, key=lambda pv: float(pv[1].min()))
    layer, head = np.unravel_index(int(np.argmin(v)), v.shape)
    return [_where_item(claim.task, prefix, [[int(layer), int(head)]])], float(v.min())


def stack_witness_document(claim: Claim, model: StackModel
                           ) -> tuple[dict[str, Any], float, float]:
    """The ``paper-witness`` file for ``model`` and the claim (its ε, and a BOS bound just
    above the float measurement), with the measured error and BOS weight."""
    task = claim.task
    error, per = family_bos(model)
    where, bos = _choose(claim, per)
    m_w = Fraction(float(bos)) * (1 + SLACK) + Fraction(1, 10**15)
    mc = claim.model_class
    W = stack_weights(model)
    instance = paper_instance(task)
    at = "every non-trigger position" if isinstance(where, str) else "one listed position"
    what = "BOS share" if bos_measure(mc.kind) == "share" else "BOS weight"
    statement = (f"a {mc} model with error <= {format_rational(claim.hypothesis.max_error)} "
                 f"and {what} <= {float(m_w):.6g} at {at}")
    claim_part = {"statement": statement,
                  "model_class": {"kind": mc.kind, "heads": mc.heads, "layers": mc.layers,
                                  "residual": mc.residual, "values": _values_of(W)},
                  "max_error": format_rational(claim.hypothesis.max_error),
                  "max_bos_mass": format_rational(_round_up(m_w)), "where": where,
                  "bos_measure": bos_measure(mc.kind)}
    data = {name: _rationals(W[name]) for name in W}
    return envelope(STACK_WITNESS, instance, claim_part, data), error, bos


def _values_of(W: dict[str, np.ndarray]) -> str:
    if W["W_Q"].shape[:2] != (1, 1):
        return "learned"
    n = W["W_V"].shape[-1]
    drop = np.eye(n)
    drop[0, 0] = 0.0
    return "fixed" if np.array_equal(W["W_O"][0] @ W["W_V"][0, 0], drop) else "learned"


def _round_up(q: Fraction) -> Fraction:
    """A short rational ``>= q`` (12 significant digits)."""
    scale = 10**12
    return Fraction(-((-q.numerator * scale) // q.denominator), scale)


def refuting(claim: Claim, verdict: Verdict) -> str | None:
    """What a verified stack-witness statement refutes, in words (``None`` when it does
    not refute the claim)."""
    if not verdict.ok or refutation_problem(verdict.statement, claim,
                                            theorem_bound(claim)) is not None:
        return None
    return refutation_text(verdict.statement, claim)


def write_stack_witness(claim: Claim, model: StackModel, path: Path) -> StackWitness | None:
    """Write ``model``'s witness file, verify it with the trusted checker; the witness when
    its verified statement refutes the claim, else ``None`` (the file is removed)."""
    doc, error, bos = stack_witness_document(claim, model)
    if Path(path).exists():  # it removes what it wrote, so it writes nothing over a file
        raise FileExistsError(f"{path} exists: a witness is made at a fresh path")
    path.parent.mkdir(parents=True, exist_ok=True)
    save_json(doc, path)
    verdict = verify_file(path)
    why = refuting(claim, verdict)
    if why is None:
        path.unlink(missing_ok=True)
        return None
    return StackWitness(path, verdict, error, bos, why)


def search_stack_witness(claim: Claim, witness: Path, reasons: list[str]
                         ) -> tuple[StackWitness | None, Any, StackModel | None]:
    """Run the stack search for a model refuting ``claim``; ``(the verified witness or
    None, the search result, its best stack or None)``.  On continuous content no
    witness is written: the best stack's sampled evaluation goes into ``reasons``."""
    task, mc, opts = claim.task, claim.model_class, claim.options
    res = search_stack(task, mc.kind, mc.layers, mc.heads, max_error=claim.max_error,
                       max_bos_mass=float(claim.conclusion.min_bos_mass), values=mc.values,
                       restarts=opts.restarts, steps=opts.steps, seed=opts.seed,
                       budget=opts.budget, samples=opts.samples, residual=mc.residual)
    how = (f"search: {res.restarts} restarts x {opts.steps} Adam steps on "
           f"{'the whole family' if res.source == 'exhaustive' else 'seeded samples'} "
           f"({res.n_sequences} sequences), budget {opts.budget:g} s")
    if res.params is None:
        reasons.append(f"{how}; no restart finished")
        return None, res, None
    model = res.model  # the stack of res.params (model_from_params)
    if not task.finite:
        reasons.append(f"{how}; best model: {sampled(claim, model)}")
        return None, res, model
    found = write_stack_witness(claim, model, witness)
    if found is None:
        reasons.append(f"{how}; best (error {res.error:.3g}, BOS {res.bos:.4g}) is no "
                       "verified witness")
    return found, res, model


def sampled(claim: Claim, model: StackModel) -> str:
    """A continuous-content evaluation, stated as the lower estimate it is."""
    ev = evaluate_stack(model, samples=claim.options.samples, seed=claim.options.seed,
                        search=ADVERSARIAL_STARTS)
    bos = float(np.max(ev.bos_nontrigger.max))
    return (f"sampled + adversarial (not exhaustive): worst error found {ev.worst_error:.3g} "
            f"over {ev.n_sequences} seeded sequences and {ADVERSARIAL_STARTS} adversarial "
            f"content searches (a lower estimate of the supremum), largest BOS weight at a "
            f"non-trigger position {bos:.3g}; continuous content admits no verified witness")
