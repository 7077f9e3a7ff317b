"""``check`` for a claim in the paper's setting: prove it, refute it, or say it is open.

Routes, in order:

0. **Vacuity** (one layer of ``relu`` or ``sigmoid`` heads): their weights see no
   position, so every such model has error at least
   :func:`sinkproof.constructions.position_free_error_bound` (``(1/2 - 1/(L-1))/2`` for one
   fixed-value head; ``1/48`` at ``L = 5`` with learned values and any heads); below it
   the claim holds vacuously.
1. **Theorem** (fixed values, one head of a map on the simplex: softmax, sparsemax,
   entmax-1.5; the argument needs only ``Σ_k α_tk = 1``): every non-BOS value has trigger + bias
   coordinates summing to 1, so the values of any token set lie at distance
   ``>= 1/√2`` from 0 and an error ``<= ε`` at a non-trigger position (target 0) forces
   ``α_t0 >= 1 - √2 ε``, for every content, continuous included.  Decided exactly:
   ``b <= 1 - √2 ε`` iff ``1 - b >= 0`` and ``(1 - b)² >= 2 ε²``.
2. **Certificate** (same class, finite content): a ``paper-hull-family`` certificate,
   the one named by the claim or one made now (the exact hull distances of every
   occurring token set), verified by the trusted checker; the claim is proved when the
   verified bound is ``>= b`` at ``ε_cert >= ε``.
3. **Engine** (one softmax head, learned or fixed values, finite content): the
   branch-and-bound engine through the paper adapter (:mod:`sinkproof.claims.paperengine`:
   logits shared by (query, key) token pair, a free value vector per token, the paper's
   whole-vector targets as the cones); proved only by the verified
   ``paper-bnb-learned-values`` file.  ``bnb=False`` skips it.
4. **Refutation** (finite content only): the constructions (length-normalised ReLU; two
   softmax heads that cancel at every non-trigger row; one softmax head that sinks at
   every non-trigger row, which refutes a claimed BOS weight above its own; one
   sink-logit, softmax1 or gated head whose null slot takes the mass), then a
   gradient search (:func:`sinkproof.search.engine.search_stack`); a found model is written as a
   ``paper-witness`` file, verified by the trusted checker, and refutes the claim only by
   its verified statement.  With continuous content a model is evaluated on seeded
   samples plus an adversarial content search: a lower estimate of its worst error, so
   the answer stays Open and says so.
"""

from __future__ import annotations

import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import sympy

from ..attention import MAPS
from ..constructions import (
    POSITION_FREE,
    paper_pair_solution,
    paper_relu_weights,
    paper_sink_solution,
    paper_variant_solution,
    position_free_error_bound,
)
from ..convex.family import paper_family_certificate
from ..errors import Interrupted, check_work
from ..exact_numbers import show
from ..search.engine import search_stack
from ..stack import StackModel, paper_model
from ..stackeval import evaluate_stack
from ..tasks.paper import PaperTask
from ..theorems.registry import THEOREMS
from .options import check_model_size
from .outcome import Open, Outcome, Proved, Refuted
from .paperclaim import PaperClaim
from .paperengine import prove_by_engine, proved_by_file
from .paperwitness import family_bos, model_from_params, write_witness

SLOT_LEVELS = (8, 16, 32, 64)
"""Levels tried for a virtual-slot or gated head: the first whose error is ``<= ε/2``."""
ADVERSARIAL_STARTS = 4
"""Starts of the adversarial content search when content is continuous."""


def check_paper(claim: PaperClaim, *, certificate: str | Path | None = None,
                witness: str | Path | None = None, certificate_out: str | Path | None = None,
                search: bool = True, bnb: bool = True,
                progress: bool | None = None) -> Outcome:
    """Settle a paper claim (options already applied); see the module docstring."""
    reasons: list[str] = []
    start = time.perf_counter()
    try:
        proved = _by_theorem(claim, reasons)
        if proved is None:
            proved = _by_certificate(claim, certificate, certificate_out, reasons)
        if proved is None and bnb:
            out = Path(certificate_out) if certificate_out is not None else \
                _fresh(claim, "certificate")
            proved = prove_by_engine(claim, out, reasons, progress)
        if proved is not None:
            return proved
        if not search:
            return Open(claim, reasons=tuple(reasons),
                        spent={"seconds": round(time.perf_counter() - start, 2)})
        return _refute(claim, _witness_path(claim, witness), reasons)
    except KeyboardInterrupt as exc:  # the engine says what it had certified
        so_far = exc.progress if isinstance(exc, Interrupted) else ""
        return Open(claim, reasons=tuple(reasons), interrupted=True, so_far=so_far,
                    spent={"seconds": round(time.perf_counter() - start, 2)})


# ---------------------------------------------------------------- proofs
def _fixed_softmax(claim: PaperClaim) -> bool:
    """One fixed-value head of a map on the simplex (softmax, sparsemax, entmax-1.5): the
    hull argument needs only ``Σ_k α_tk = 1``."""
    mc = claim.model_class
    return (MAPS[mc.kind].properties.on_simplex
            and (mc.heads, mc.layers, mc.values) == (1, 1, "fixed"))


def theorem_bound(eps: Fraction) -> float:
    """``1 - √2 ε``: the fixed-value BOS bound at every non-trigger position (Theorem 3 on
    the paper's task, rounded down)."""
    return THEOREMS["theorem3"].instantiate(PaperTask(n=4, L=3), eps).everywhere.value


def _by_theorem(claim: PaperClaim, reasons: list[str]) -> Proved | None:
    mc, eps = claim.model_class, claim.hypothesis.max_error
    if mc.kind in POSITION_FREE and mc.layers == 1:
        floor = position_free_error_bound(claim.task, mc.values)
        if eps < floor:
            why = ("the trigger's weight on itself (the trigger row's trigger coordinate) "
                   f"must be within ε of 1/2 at j = 2 and of 1/{claim.task.L - 1} at j = "
                   f"{claim.task.L - 1}" if mc.values == "fixed" else
                   "with every content token equal the trigger row's output is affine in "
                   "j while the target's trigger coordinate is 1/j, and no affine function "
                   f"is within {floor} of 1/j on j = 2..{claim.task.L - 1}")
            return Proved(claim, by="no accurate model (position-free weights): vacuous",
                          bound=1.0,
                          detail=f"every one-layer {mc.kind} model of this class has error "
                                 f">= {floor} on this family: its weight of a key depends on "
                                 f"the query and key tokens only, and {why}; ε = "
                                 f"{float(eps):.6g} < {floor}, so no model meets the "
                                 "hypothesis and the claim holds vacuously")
        reasons.append(f"theorem: the position-free error floor {floor} <= ε: not vacuous")
    return _by_registry(claim, reasons)


def _by_registry(claim: PaperClaim, reasons: list[str]) -> Proved | None:
    """A bound theorem of the registry, instantiated on the claim's task at its ε, whose
    bound at every non-trigger position is ``>= b`` (exactly): Theorem 3 with the paper
    task's fixed-value floor ``1/√2`` gives ``α_t0 >= 1 - √2 ε``."""
    cls = claim.model_class.as_model_class()
    eps, b = claim.hypothesis.max_error, claim.conclusion.min_bos_mass
    for thm in THEOREMS.values():
        if thm.conclusion != "bos_lower_bound":
            continue
        ok, why = (False, ["several layers"]) if cls is None else thm.applies_to(cls)
        if not ok:
            reasons.append(f"theorem: {thm.name} does not cover {claim.model_class} "
                           f"({'; '.join(why)})")
            continue
        try:
            inst = thm.instantiate(claim.task, eps, values=claim.model_class.values)
        except (TypeError, ValueError) as exc:
            reasons.append(f"theorem: {thm.name} does not instantiate here ({exc})")
            continue
        item = inst.everywhere
        if item is None:
            reasons.append(f"theorem: {thm.name} gives no bound at every non-trigger position")
            continue
        if not bool(item.bound >= sympy.Rational(b.numerator, b.denominator)):
            reasons.append(f"theorem: {thm.name} gives α_t0 >= 1 - ε/d ({item.note}) = "
                           f"{sympy.sstr(item.bound)} = {item.value:.6g} < b = {float(b):.6g}")
            continue
        return Proved(claim, by=f"Theorem {thm.number} in the paper's setting ({item.note})",
                      bound=item.value,
                      detail=f"{thm.name} instantiated on {claim.task!r} at ε = "
                             f"{show(eps)}: α_t0 >= {sympy.sstr(item.bound)} at every "
                             "non-trigger position, before and after the trigger, for every "
                             "content (continuous included); compared exactly with b")
    return None


def _by_certificate(claim: PaperClaim, given: str | Path | None, out: str | Path | None,
                    reasons: list[str]) -> Proved | None:
    name = given if given is not None else claim.options.certificate
    if name is None and not (_fixed_softmax(claim) and claim.task.finite):
        why = ("continuous content has no finite family" if _fixed_softmax(claim)
               else f"it covers one fixed-value head on the simplex, not {claim.model_class}")
        reasons.append(f"certificate: none given, and the paper-hull certificate does not "
                       f"apply ({why})")
        return None
    task = claim.task
    if name is None:
        check_work("prefixes to enumerate (the token sets of the family)",
                   task.n_prefixes_at_most(claim.options.max_work),
                   claim.options.max_work)
        path = Path(out) if out is not None else _fresh(claim, "certificate")
        path.parent.mkdir(parents=True, exist_ok=True)
        paper_family_certificate(task, claim.hypothesis.max_error).save(path)
    else:
        path = Path(name)
        if not path.is_absolute() and claim.source and not path.exists():
            path = Path(claim.source).parent / path
    return proved_by_file(claim, path, _implied, "certificate (paper-hull family)",
                          "certificate", lambda v: f"{v.details.get('situations')} token "
                          "sets, verified exactly", reasons)


def _implied(claim: PaperClaim, verdict: Any) -> Fraction | str:
    """The verified bound when it implies the claim, else why not."""
    if not verdict.ok:
        return f"the file does not verify: {verdict.failure}"
    if verdict.kind != "paper-hull-family":
        return f"a {verdict.kind} certificate proves nothing about a paper claim"
    st = verdict.statement
    if not _class_covered(claim.model_class, st.get("model_class")):
        return (f"it covers one normalised-attention head with fixed values "
                f"(W_O W_V = I - e_0 e_0^T), not {claim.model_class}")
    if not claim.same_instance(st["instance"]):
        return "its instance (n, L, content vectors) is not the claim's"
    if Fraction(st["eps"]) < claim.hypothesis.max_error:
        return f"it is stated at eps = {st['eps']} < the claim's ε"
    bound = Fraction(st["conclusion"]["min_bound"])
    if bound < claim.conclusion.min_bos_mass:
        return f"its bound {float(bound):.6g} < b = {float(claim.conclusion.min_bos_mass):.6g}"
    return bound


def _class_covered(mc: Any, stated: Any) -> bool:
    """Whether every model of the claim's class ``mc`` is in the class a verified
    ``paper-hull-family`` statement names: one layer of one normalised-attention head
    (weights on the simplex: not ``relu_length``, a sink logit or a gate, whose weights
    need not sum to 1) whose values are the tokens without their BOS coordinate."""
    return (isinstance(stated, dict) and stated.get("attention") == "normalised"
            and MAPS[mc.kind].properties.on_simplex and (mc.heads, mc.layers) == (1, 1)
            and (stated.get("heads"), stated.get("layers")) == (1, 1)
            and mc.values == "fixed" and "I - e_0 e_0^T" in str(stated.get("values")))


# ---------------------------------------------------------------- refutations
def constructions(claim: PaperClaim) -> list[tuple[str, StackModel]]:
    """The explicit models of the claim's class that may refute it."""
    mc, task = claim.model_class, claim.task
    if mc.kind == "relu_length":
        W = paper_relu_weights(task, mc.layers, mc.heads)
        if mc.values == "fixed":  # BOS gets weight 0: dropping its value changes nothing
            W["W_V"][0, 0, 0, 0] = 0.0
        return [("(P3) length-normalised ReLU layer", paper_model(task, "relu_length", **W))]
    if mc.heads >= 2:
        return [("two softmax heads cancelling off the trigger",
                 paper_pair_solution(task, claim.max_error, mc.layers, mc.heads))]
    if (mc.layers, mc.heads) == (1, 1) and MAPS[mc.kind].properties.null_slot:
        for level in SLOT_LEVELS:  # the slot (or the gate) takes the sink's mass
            model = paper_variant_solution(task, mc.kind, level)
            if not task.finite or family_bos(model)[0] <= float(claim.max_error) / 2:
                return [(f"one {mc.kind} head whose null slot takes the mass (L={level})",
                         model)]
    if mc.layers == 1 and mc.kind == "softmax":  # fixed values: in both value classes
        return [("one softmax head sinking at every non-trigger row",
                 paper_sink_solution(task, claim.max_error))]
    return []


def _refute(claim: PaperClaim, witness: Path, reasons: list[str]) -> Refuted | Open:
    task, mc = claim.task, claim.model_class
    check_model_size(mc.heads, mc.layers, task.n)
    if task.finite:
        check_work("prefixes to enumerate (the family, to verify a witness)",
                   task.n_prefixes_at_most(claim.options.max_work),
                   claim.options.max_work)
    for name, model in constructions(claim):
        if task.finite:
            found = write_witness(claim, model, witness)
            if found is not None:
                return Refuted(claim, model=model, error=found.error, violations=(found.where,),
                               witness=str(found.path),
                               detail=f"the construction: {name}; verified by the trusted "
                                      f"checker over all "
                                      f"{task.n_prefixes_at_most(claim.options.max_work)} "
                                      f"prefixes "
                                      f"(sha256:{found.digest})")
            reasons.append(f"construction ({name}): does not refute the claim")
        else:
            reasons.append(f"construction ({name}): {_sampled(claim, model)}")
    opts, mc = claim.options, claim.model_class
    res = search_stack(task, mc.kind, mc.layers, mc.heads, max_error=claim.max_error,
                       max_bos_mass=float(claim.conclusion.min_bos_mass), values=mc.values,
                       restarts=opts.restarts, steps=opts.steps, seed=opts.seed,
                       budget=opts.budget, samples=opts.samples)
    spent = {"seconds": res.seconds, "restarts": res.restarts}
    how = (f"search: {res.restarts} restarts x {opts.steps} Adam steps on "
           f"{'the whole family' if res.source == 'exhaustive' else 'seeded samples'} "
           f"({res.n_sequences} sequences), budget {opts.budget:g} s")
    if res.params is not None and task.finite:
        model = model_from_params(task, mc.kind, res.params)
        found = write_witness(claim, model, witness)
        if found is not None:
            return Refuted(claim, model=model, error=found.error, violations=(found.where,),
                           witness=str(found.path),
                           detail=f"found by search in {res.seconds:g} s; verified by the "
                                  f"trusted checker (sha256:{found.digest})")
        reasons.append(f"{how}; best (error {res.error:.3g}, BOS {res.bos:.4g}) is no "
                       "verified witness")
    elif res.params is not None:
        model = model_from_params(task, mc.kind, res.params)
        reasons.append(f"{how}; best model: {_sampled(claim, model)}")
    else:
        reasons.append(f"{how}; no restart finished")
    return Open(claim, frontier=res.frontier, spent=spent, reasons=tuple(reasons))


def _sampled(claim: PaperClaim, model: StackModel) -> str:
    """A continuous-content evaluation, stated as the lower estimate it is."""
    ev = evaluate_stack(model, samples=claim.options.samples, seed=claim.options.seed,
                        search=ADVERSARIAL_STARTS)
    bos = float(np.max(ev.bos_nontrigger.max))
    return (f"sampled + adversarial (not exhaustive): worst error found {ev.worst_error:.3g} "
            f"over {ev.n_sequences} seeded sequences and {ADVERSARIAL_STARTS} adversarial "
            f"content searches (a lower estimate of the supremum), largest BOS weight at a "
            f"non-trigger position {bos:.3g}; continuous content admits no verified witness")


def _fresh(claim: PaperClaim, what: str) -> Path:
    stem = Path(claim.source).stem if claim.source else "claim"
    return Path(tempfile.mkdtemp(prefix="sinkproof-")) / f"{stem}.{what}.json"


def _witness_path(claim: PaperClaim, witness: str | Path | None) -> Path:
    """Where a witness is made: the caller's path (``check`` passes one in its private
    folder), else a fresh temporary folder; the claim's ``[check] witness`` is a
    destination :func:`sinkproof.check` publishes to only on request."""
    return Path(witness) if witness is not None else _fresh(claim, "witness")


__all__ = ["check_paper", "constructions", "theorem_bound"]
