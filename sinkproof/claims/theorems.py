"""Proof of a claim by a registered theorem, and the BOS bound a conclusion names.

The registry (:data:`sinkproof.theorems.THEOREMS`) states each theorem's class and
error hypothesis as data.  A theorem proves a claim only when

- ``applies_to(claim's model class)`` holds (every model of the class is covered)
  and the instantiated bound is for a class containing the claim's class;
- every bound item used has its error hypothesis (``needs``: the (sequence,
  position) pairs where error ``<= ε`` is needed) inside the claim's hypothesis
  family;
- the exact bound is ``>= b`` at every claimed position (``positions="every"``:
  one item per position), or some item's targets all lie in the claimed set with
  bound ``>= b`` (``positions="some"``: the BOS mass at one of them is ``>= b``).

Comparisons are exact: the SymPy bound against the rational ``b`` as written
(:func:`sinkproof.claims.compare.at_least`, which decides what SymPy leaves open).

On a task without positional features the claimed set is every non-trigger position of
the whole family, and a theorem proves the claim by its bound *everywhere* (Theorem 3
with the task's fixed-value floor ``d``, :meth:`~sinkproof.tasks.Task.fixed_value_floor`:
``α_t0 >= 1 - ε/d`` at every non-trigger position of every sequence, continuous content
included).  Before it, an error floor: a one-layer class whose weights see no position
(``relu``, ``sigmoid``: :data:`sinkproof.constructions.POSITION_FREE`) has error at least
:func:`~sinkproof.constructions.position_free_error_bound`, and below it the claim holds
vacuously.

The constructions (:func:`constructions`) are the candidate counterexamples of the class,
checked like any search result: the registry's witnesses and the cancelling two-head pair
on a task with positions; on a task without them, the length-normalised ReLU layer, two
softmax heads cancelling off the trigger, a head whose null slot takes the mass, one
softmax head sinking at every non-trigger row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

import sympy

from ..attention import MAPS
from ..constructions import (
    POSITION_FREE,
    cancelling_pair_solution,
    composed_pair_solution,
    null_slot_solution,
    paper_pair_solution,
    paper_relu_weights,
    paper_sink_solution,
    paper_variant_solution,
    position_free_error_bound,
    trigger_sink_solution,
)
from ..errors import SinkproofError, WorkLimitError, check_work
from ..exact_numbers import show
from ..measures import evaluate
from ..model import AttentionModel
from ..stack import paper_model
from ..task import TRIG
from ..theorems import THEOREMS, Theorem
from ..theorems.composition import composition_bound
from .compare import at_least, rational_below
from .outcome import Proved
from .positions import show_sequence
from .refute import family_bos
from .schema import Claim

BoundAt = Callable[[tuple[int, ...]], float]
VACUOUS = "vacuous"
"""What :func:`_proves` answers for a named theorem that bounds no claimed position."""
Target = tuple[tuple[int, ...], int]


def registry() -> dict[str, Theorem]:
    """The theorem registry, :data:`sinkproof.theorems.THEOREMS`."""
    return dict(THEOREMS)


SITUATION_SETS = ("nontrigger", "before_trigger", "after_trigger", "homogeneous")
"""Named position sets whose members :func:`situations` represents."""
MAX_SITUATION_TOKENS = 16
"""Above this many content vectors the 2^k situations are not listed (the claimed
positions are enumerated instead, within the work limit)."""


def situations(claim: Claim) -> list[Target] | None:
    """One claimed position per *situation* (the set of distinct tokens up to it), for a
    named set of non-trigger positions; ``None`` when the set is not one of those.

    Theorem 3's bound at ``(X, t)`` depends on ``X`` only through the distinct tokens
    ``{x_1..x_t}`` (the hull of their values), so its least bound over a named set is
    its least bound over these representatives: about ``2^(k+1)`` positions however
    long the sequences are, instead of every prefix of the family.
    """
    from itertools import combinations

    name, task = claim.conclusion.at.name, claim.task
    if name not in SITUATION_SETS or task.k > MAX_SITUATION_TOKENS:
        return None
    if name == "homogeneous":
        return [((c,), 1) for c in range(task.k)]
    out: list[Target] = []
    for size in range(1, min(task.k, task.T) + 1):
        for subset in combinations(range(task.k), size):
            if name != "after_trigger":
                out.append((subset, size))
            if name != "before_trigger" and size < task.T:
                out.append(((TRIG, *subset), size + 1))
    return out


def _claimed_for(name: str, claim: Claim) -> list[Target]:
    """The claimed positions a theorem's bound must cover: every pair of the set, or (for
    a theorem whose bound depends on the sequence only through its token set, with the
    hypothesis on all of ``S_T``) one per situation."""
    if THEOREMS[name].token_set_bound and claim.hypothesis.family == "S_T":
        reps = situations(claim)
        if reps is not None:
            return reps
    return _claimed(claim)


def _instantiate(thm: Theorem, claim: Claim) -> Any:
    """The theorem's exact bounds for the claim's class and ε, at the claimed non-trigger
    positions (the calling convention every bound theorem shares)."""
    positions = [(s, t) for s, t in _claimed_for(thm.name, claim)
                 if s[t - 1] >= 0]  # non-trigger positions only
    return thm.bound(claim.task, claim.hypothesis.eps_exact, claim.model_class, positions)


def _bound_instances(claim: Claim, reasons: list[str]) -> Iterator[tuple[str, Any]]:
    """``(name, instantiated bound)`` for every theorem that covers the claim's class."""
    con = claim.conclusion
    theorems = registry()
    if con.theorem is not None and con.theorem not in theorems:
        raise ValueError(f"unknown theorem {con.theorem!r} in the conclusion "
                         f"(known: {', '.join(theorems)})")
    for name, thm in theorems.items():
        if con.theorem is not None and name != con.theorem:
            continue
        if thm.conclusion != "bos_lower_bound":
            if con.theorem is not None:
                raise ValueError(f"{name} does not bound BOS mass ({thm.conclusion})")
            continue
        ok, why = thm.applies_to(claim.model_class)
        if not ok:
            reasons.append(f"{name}: " + "; ".join(why))
            continue
        try:
            inst = _instantiate(thm, claim)
        except (ValueError, SinkproofError) as exc:
            reasons.append(f"{name}: {str(exc).splitlines()[0]}")
            continue
        if not claim.model_class.is_subclass_of(inst.model_class):
            reasons.append(f"{name}: instantiated for {inst.model_class}, "
                           f"not {claim.model_class}")
            continue
        yield name, inst


def _family_prefixes(claim: Claim) -> set[tuple[int, ...]] | None:
    seqs = claim.hypothesis.family_sequences(claim.task)
    if seqs is None:
        return None
    return {tuple(s[:t]) for s in seqs for t in range(0, len(s) + 1)}


def _covered(needs: tuple[Target, ...], family: set[tuple[int, ...]] | None) -> bool:
    """The error hypothesis at every needed (sequence, position) is part of the claim's."""
    return family is None or all(tuple(s[:t]) in family for s, t in needs)


def _claimed(claim: Claim) -> list[Target]:
    task = claim.task
    check_work("claimed positions to enumerate",
               claim.conclusion.at.size_estimate(task, claim.options.max_work),
               claim.options.max_work)
    return [(s[:t], t) for s, t in claim.conclusion.at.pair_list(task)]


def _proves(claim: Claim, name: str, inst: Any) -> tuple[float | None, str]:
    """The least bound ``inst`` certifies over the claimed positions, or why it does not."""
    con = claim.conclusion
    family = _family_prefixes(claim)
    claimed = _claimed_for(name, claim)
    if con.positions == "some":
        wanted = set(claimed)
        good = [item for item in inst.items
                if set(item.targets) <= wanted and _covered(item.needs, family)
                and (con.theorem is not None or at_least(item.bound, con.b_exact))]
        if good:
            return max(item.value for item in good), ""
        return None, f"{name}: no bound item lies within the claimed positions and reaches b"
    least: float | None = None
    for seq, t in claimed:
        item = inst.bound_at(seq, t)
        where = f"{_show(seq)} at t={t}"
        if item is None:
            if con.theorem is not None:
                continue  # the named theorem's own bound is vacuous here
            return None, f"{name}: gives no bound at {where}"
        if not _covered(item.needs, family):
            return None, f"{name}: needs error <= ε where the hypothesis family says nothing " \
                         f"({where})"
        if con.theorem is None and not at_least(item.bound, con.b_exact):
            return None, (f"{name}: bound {item.value:.6g} at {where} is below the claimed "
                          f"{float(con.b_exact):.6g}")
        least = item.value if least is None else min(least, item.value)
    if least is None:
        if con.theorem is not None:
            return None, VACUOUS  # vacuous everywhere: true, and says nothing
        return None, f"{name}: no claimed position"
    return least, ""


def _show(seq: tuple[int, ...]) -> str:
    return show_sequence(seq)


def proved_positions(claim: Claim) -> set[Target]:
    """Claimed positions (prefix, t) where a registered theorem alone proves the conclusion's
    bound in one head: no counterexample can violate the claim there."""
    out: set[Target] = set()
    family = _family_prefixes(claim)
    con = claim.conclusion
    for _, inst in _bound_instances(claim, []):
        for seq, t in _claimed(claim):
            item = inst.bound_at(seq, t)
            if (item is not None and _covered(item.needs, family)
                    and (con.theorem is not None or at_least(item.bound, con.b_exact))):
                out.add((seq, t))
    return out


def prove_by_theorem(claim: Claim, reasons: list[str]) -> Proved | None:
    """A :class:`Proved` by the first registered theorem that proves ``claim``; otherwise
    ``None``, with one line per theorem in ``reasons`` saying why it does not."""
    if not claim.task.has_positions:
        if claim.model_class.pure:
            return _by_composition(claim, reasons)
        return _by_floor(claim, reasons) or _everywhere(claim, reasons)
    for name, inst in _bound_instances(claim, reasons):
        try:
            least, why = _proves(claim, name, inst)
        except WorkLimitError as exc:  # this theorem would list every position: next one
            reasons.append(f"{name}: {exc}")
            continue
        if least is None and why == VACUOUS:
            return Proved(claim, by=name, bound=None, detail=f"{name} gives no positive bound "
                          "at any claimed position: the conclusion holds and says nothing")
        if least is None:
            reasons.append(why)
            continue
        return Proved(claim, by=name, bound=least, detail=repr(inst))
    return None


class Threshold:
    """The BOS threshold the conclusion asks for at each prefix (user tokens).

    ``threshold(prefix)`` is a float ``<=`` the exact threshold (for the search and for
    display); :meth:`exact` is a rational ``<=`` it (the claim's ``b`` itself, or a
    theorem's closed-form bound rounded down within ``1e-50``), which is what a
    refutation must beat.  Where a named theorem has no single-target item the
    threshold is ``-inf`` / ``None``: no violation is possible where it claims nothing.
    """

    def __init__(self, claim: Claim) -> None:
        con = claim.conclusion
        self._b = con.b_exact
        self._inst = None
        if con.theorem is not None:
            theorems = registry()
            if con.theorem not in theorems:
                raise ValueError(f"unknown theorem {con.theorem!r} in the conclusion")
            self._inst = _instantiate(theorems[con.theorem], claim)
        self._exact: dict[tuple[int, ...], Fraction | None] = {}
        self._float: dict[tuple[int, ...], float] = {}

    def exact(self, prefix: tuple[int, ...]) -> Fraction | None:
        """A rational ``<=`` the threshold at ``prefix`` (``None``: nothing is claimed)."""
        if self._b is not None:
            return self._b
        prefix = tuple(prefix)
        if prefix not in self._exact:
            item = self._inst.bound_at(prefix, len(prefix))
            self._exact[prefix] = None if item is None else rational_below(item.bound)
        return self._exact[prefix]

    def __call__(self, prefix: tuple[int, ...]) -> float:
        prefix = tuple(prefix)
        if prefix not in self._float:
            q = self.exact(prefix)
            if q is None:
                self._float[prefix] = -math.inf
            else:
                f = float(q)
                self._float[prefix] = f if Fraction(f) <= q else math.nextafter(f, -math.inf)
        return self._float[prefix]



def theorem_bound(claim: Claim) -> Threshold:
    """The conclusion's BOS threshold at each prefix: see :class:`Threshold`."""
    return Threshold(claim)


def theorem_witnesses(claim: Claim) -> Iterator[tuple[str, AttentionModel]]:
    """Constructions of the registry (Theorem 4) that belong to the claim's class: candidate
    counterexamples, checked like any search result."""
    for name, thm in registry().items():
        if thm.conclusion != "witness":
            continue
        ok, _ = thm.applies_to(claim.model_class)
        if not ok:
            continue
        try:
            inst = thm.instantiate(claim.task, 0)
        except (ValueError, SinkproofError):
            continue
        yield name, inst.model


def constructions(claim: Claim) -> Iterator[tuple[str, Any]]:
    """Explicit models of the claim's class that may refute it: on a task with positions the
    registry's witnesses (Theorem 4), a softmax head that rests on the zero-valued trigger
    once it has been seen (:func:`sinkproof.constructions.trigger_sink_solution`), then two
    softmax heads with opposite learned values that cancel at every non-trigger position
    (:func:`sinkproof.constructions.cancelling_pair_solution`, the second head resting on
    BOS at the trigger row, then on the trigger itself); on a task without them
    :func:`stack_constructions`."""
    if not claim.task.has_positions:
        yield from stack_constructions(claim)
        return
    yield from theorem_witnesses(claim)
    mc = claim.model_class
    bos = claim.conclusion.min_bos_mass
    if "softmax" in mc.maps and bos is not None and claim.max_error > 0:
        # after the trigger its zero fixed value can take the mass BOS would
        try:
            model = trigger_sink_solution(claim.task, float(claim.max_error), float(bos) / 2)
        except (ValueError, SinkproofError):
            model = None
        if model is not None and mc.contains(model):
            yield "one softmax head resting on the zero-valued trigger after it", model
    for kind in (k for k in mc.maps if MAPS[k].properties.virtual_null):
        for level in SLOT_LEVELS:  # the slot takes the mass BOS would
            model = null_slot_solution(claim.task, kind, level)
            if not mc.contains(model):
                break
            if evaluate(model).max_error <= float(claim.max_error) / 2:
                yield f"one {kind} head whose null slot takes the mass (L={level})", model
                break
    if (mc.heads or 0) >= 2 and mc.values == "learned" and "softmax" in mc.maps \
            and claim.max_error > 0:
        for rest, name in (("bos", "two softmax heads cancelling off the trigger"),
                           ("trigger", "two softmax heads cancelling off the trigger, the "
                                       "second resting on the trigger at the trigger row")):
            try:
                model = cancelling_pair_solution(claim.task, float(claim.max_error),
                                                 mc.heads, rest)
            except (ValueError, SinkproofError):
                return
            if mc.contains(model):
                yield name, model


# ------------------------------------------------ tasks without positional features
def _by_floor(claim: Claim, reasons: list[str]) -> Proved | None:
    """Vacuity: no one-layer model of a position-free map is accurate below its floor."""
    mc, eps = claim.model_class, claim.hypothesis.max_error
    if mc.kind not in POSITION_FREE or mc.layers != 1:
        return None
    floor = position_free_error_bound(claim.task, mc.values)
    if eps >= floor:
        reasons.append(f"theorem: the position-free error floor {floor} <= ε: not vacuous")
        return None
    L = claim.task.L
    why = ("the trigger's weight on itself (the trigger row's trigger coordinate) must be "
           f"within ε of 1/2 at j = 2 and of 1/{L - 1} at j = {L - 1}"
           if mc.values == "fixed" else
           "with every content token equal the trigger row's output is affine in j while "
           "the target's trigger coordinate is 1/j, and no affine function is within "
           f"{floor} of 1/j on j = 2..{L - 1}")
    return Proved(claim, by="no accurate model (position-free weights): vacuous", bound=1.0,
                  detail=f"every one-layer {mc.kind} model of this class has error >= {floor} "
                         f"on this family: its weight of a key depends on the query and key "
                         f"tokens only, and {why}; ε = {float(eps):.6g} < {floor}, so no model "
                         "meets the hypothesis and the claim holds vacuously")


def composition_inapplicable(claim: Claim) -> str | None:
    """Why the pure-composition theorem cannot prove ``claim`` (a pure stack claim), in
    words; ``None`` when its hypotheses hold (one head per layer, weights on the simplex, a
    finite content set, a sink in some layer at some non-trigger position)."""
    mc, task, con = claim.model_class, claim.task, claim.conclusion
    if mc.heads != 1:
        return (f"it covers one head per layer, not {mc.heads} (heads can cancel: "
                "sinkproof.constructions.composed_pair_solution)")
    if not MAPS[mc.kind].properties.on_simplex:
        return f"it needs weights on the simplex ({mc.kind}'s are not)"
    if not task.finite:
        return "it is stated on a finite content set (content is continuous)"
    if not con.some_sink_off_trigger:
        return ("it proves a sink in some layer at some non-trigger position (position 1 of "
                "one of two sequences): positions = \"some\", heads = \"some\", at = "
                "\"nontrigger\"")
    return None


def _by_composition(claim: Claim, reasons: list[str]) -> Proved | None:
    """The pure-composition theorem (:mod:`sinkproof.theorems.composition`): a pure stack of
    ``N`` layers of one head on the simplex, accurate on a finite content set, has
    ``max_l α^l_10 >= 1 - (2ε/g)^{1/N}`` at position 1 of ``(BOS, a)`` or of ``(BOS, b)``
    (the strongest instance: the largest ray gap ``g``); it proves a claim that some head
    sinks at some non-trigger position with ``b`` at most that bound (compared exactly)."""
    mc, task, con = claim.model_class, claim.task, claim.conclusion
    why = composition_inapplicable(claim)
    if why is not None:
        reasons.append(f"theorem: the pure-composition theorem does not apply: {why}")
        return None
    eps, b = claim.hypothesis.max_error, con.min_bos_mass
    item = composition_bound(task, eps, mc.layers)
    if item is None:
        reasons.append(f"theorem: the pure-composition theorem is silent: every ray gap g of "
                       f"the trigger-row targets is <= 2ε = {show(2 * eps)}")
        return None
    if not at_least(item.bound, b):
        reasons.append(f"theorem: the pure-composition theorem gives max_l α^l_10 >= "
                       f"{sympy.sstr(item.bound)} = {item.value:.6g} < b = {float(b):.6g}")
        return None
    a_vec, b_vec, tau = (_vector(task.content[i]) for i in (item.a, item.b, item.tau))
    return Proved(claim, by=f"the pure-composition theorem ({mc.layers} layers)",
                  bound=item.value,
                  detail=f"every pure composition of {mc.layers} {mc.kind} layers of one head "
                         f"(any W_Q, W_K, any linear value and output maps; the weights need "
                         f"only lie on the simplex) with error <= {show(eps)} at positions 0, "
                         f"1 and {item.j} of S_a and S_b (S_u = (BOS, u^{item.j - 1}, TRIG, "
                         f"...), the trigger carrying content {tau}) "
                         f"has BOS weight >= {sympy.sstr(item.bound)} ≈ {item.value:.6g} in "
                         f"some layer at position 1 of (BOS, a) or of (BOS, b), a = {a_vec}, "
                         f"b = {b_vec} (ray gap g² = {item.g_squared}); content domain: the "
                         f"finite set of the {task.m} listed content vectors; compared exactly "
                         f"with b")


def _vector(c: Any) -> str:
    return "(" + ", ".join(f"{float(x):g}" for x in c) + ")"


def _everywhere(claim: Claim, reasons: list[str]) -> Proved | None:
    """A bound theorem of the registry instantiated on the claim's task at its ε whose bound
    at every non-trigger position is ``>= b`` (exactly): Theorem 3 with the task's
    fixed-value floor ``d`` gives ``α_t0 >= 1 - ε/d``."""
    cls = claim.model_class.as_model_class()
    eps, b = claim.hypothesis.max_error, claim.conclusion.min_bos_mass
    for thm in registry().values():
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
        return Proved(claim, by=f"Theorem {thm.number} on {type(claim.task).__name__} "
                                f"({item.note})", bound=item.value,
                      detail=f"{thm.name} instantiated on {claim.task!r} at ε = "
                             f"{show(eps)}: α_t0 >= {sympy.sstr(item.bound)} at every "
                             "non-trigger position, before and after the trigger, for every "
                             "content (continuous included); compared exactly with b")
    return None


SLOT_LEVELS = (8, 16, 32, 64)
"""Levels tried for a virtual-slot or gated head: the first whose error is ``<= ε/2``."""


def stack_constructions(claim: Claim) -> list[tuple[str, Any]]:
    """The explicit stacks of the claim's class (a task without positions) that may refute
    it."""
    mc, task = claim.model_class, claim.task
    if mc.kind == "relu_length":
        W = paper_relu_weights(task, mc.layers, mc.heads)
        if mc.values == "fixed":  # BOS gets weight 0: dropping its value changes nothing
            W["W_V"][0, 0, 0, 0] = 0.0
        return [("(P3) length-normalised ReLU layer", paper_model(task, "relu_length", **W))]
    if mc.pure:  # no residual: the pure stacks' own constructions
        if (mc.kind, mc.heads) == ("softmax", 2):
            return [("a pure composition of two-head layers cancelling off the trigger",
                     composed_pair_solution(task, claim.max_error, mc.layers))]
        return []
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
