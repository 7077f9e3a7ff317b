"""What a verified statement implies about a claim: one registry, keyed by the statement's shape.

The trusted checker decides whether a file's numbers hold and returns the *statement* it
verified; this module decides, from that statement alone, whether it proves or refutes a
claim, for a claim on any task.  Every certificate kind and both settings go through the
same steps; what differs is read off the statement's own layout:

- **bounds** (:data:`BOUND_SHAPES`): the layout of its ``conclusion`` says how to read the
  bound at a claimed position: ``sequence``/``t``/``bound`` (one prefix), ``bounds`` by
  *token set* (Theorem 3's hull lemma: the bound depends on the prefix through its set of
  distinct tokens), ``bounds`` by *prefix*, or one ``min_bound`` at every non-trigger
  position.  A per-prefix bound rests on the error hypothesis on the whole family; the
  others are pointwise (error ``<= ε`` at the bounded position);
- **the class covered** (:func:`covered_class`): the statement's ``model_class`` (map or
  "normalised" for every map on the simplex, heads, values, positional scheme, layers,
  norm bound) as a :class:`~sinkproof.modelclass.ModelClass`, which must contain the
  claim's class (a stack claim's class in the registry's terms);
- **the instance** (:func:`instance_difference_for`): the statement's instance must be
  the claim's task exactly (sizes, trigger family and every content vector as the exact
  rational of the float the task holds; positions and values as named);
- its ε at least the claim's (a model with smaller error satisfies the hypothesis), and
  every claimed position bounded ``>= b`` ("every") or one ("some");
- **refutations** (:data:`REFUTATION_SHAPES`): a witness statement (error ``<= ε_w`` and BOS
  measure ``<= m_w`` at named positions) refutes the claim when its instance and class
  are the claim's, ``ε_w <= ε``, ``m_w <`` the claimed threshold as rationals, and its
  positions are the ones the claim's quantifiers need.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..attention import MAPS, bos_measure
from ..certformat import format_rational
from ..convex.certfile import instance_difference, task_instance
from ..modelclass import KINDS, ModelClass
from ..task import TRIG
from .positions import show_sequence

BoundAt = Callable[[tuple[int, ...]], "Fraction | None"]


class NotImplied(ValueError):
    """A verified statement that does not imply the claim (the message says why)."""


# ------------------------------------------------------------------ bound shapes
@dataclass(frozen=True)
class BoundShape:
    """One layout of a verified bound statement: ``matches(conclusion)`` recognises it,
    ``reader(conclusion)`` gives the bound at a claimed prefix (``None``: no bound there),
    ``whole_family``: the bound rests on the error hypothesis on the whole family."""

    name: str
    matches: Callable[[dict[str, Any]], bool]
    reader: Callable[[dict[str, Any]], BoundAt]
    whole_family: bool


def _one_prefix(con: dict[str, Any]) -> BoundAt:
    seq, bound = tuple(con["sequence"]), con["bound"]
    exact = None if bound is None else Fraction(bound)
    return lambda prefix: exact if tuple(prefix) == seq else None


def _by_token_set(con: dict[str, Any]) -> BoundAt:
    by_set = {tuple(tokens): Fraction(b) for tokens, b in con["bounds"]}
    return lambda prefix: by_set.get(tuple(sorted(set(prefix))))


def _by_prefix(con: dict[str, Any]) -> BoundAt:
    bounds = {tuple(prefix): Fraction(b) for prefix, b in con["bounds"]}
    return lambda prefix: bounds.get(tuple(prefix))


def _everywhere(con: dict[str, Any]) -> BoundAt:
    bound = Fraction(con["min_bound"])
    return lambda prefix: bound


BOUND_SHAPES: tuple[BoundShape, ...] = (
    BoundShape("a bound at one prefix", lambda c: {"sequence", "t", "bound"} <= set(c),
               _one_prefix, False),
    BoundShape("bounds by token set", lambda c: "bounds" in c and "token set" in str(
        c.get("positions", "")), _by_token_set, False),
    BoundShape("bounds by prefix", lambda c: "bounds" in c, _by_prefix, True),
    BoundShape("one bound at every non-trigger position", lambda c: "min_bound" in c,
               _everywhere, False),
)
"""Every layout of a verified BOS-bound statement, tried in order (the first match reads
it).  A new certificate rule whose statement has one of these layouts needs no code here."""


def bound_shape(statement: dict[str, Any]) -> BoundShape:
    """The shape of a verified statement's conclusion; NotImplied when it bounds no BOS
    mass at positions (a gated null-mass map, a witness)."""
    con = statement.get("conclusion")
    if isinstance(con, dict):
        for shape in BOUND_SHAPES:
            if shape.matches(con):
                return shape
    raise NotImplied(f"certificates of kind {statement.get('kind')!r} do not bound BOS mass "
                     "at positions")


# ------------------------------------------------------------------ class and instance
def _values(stated: Any) -> str:
    """``"fixed"`` or ``"learned"`` from a statement's values (``"fixed"``, the paper's
    ``"x without its BOS coordinate (...)"``, ``"learned (...)"``)."""
    if stated == "fixed" or (isinstance(stated, str) and "I - e_0 e_0^T" in stated):
        return "fixed"
    if isinstance(stated, str) and (stated.startswith("learned")
                                    or stated == "any vector per token"):
        return "learned"
    raise NotImplied(f"the certificate is about one value matrix ({stated!r}), not a "
                     "value class")


def covered_class(statement: dict[str, Any]) -> ModelClass:
    """The model class a verified bound statement covers (its ``model_class``): a map, or
    ``"normalised"`` (weights on the simplex: the hull lemma needs only ``Σ α = 1``) for
    every map on the simplex; one layer, no norm bound, token-only values; several heads
    only with a bound in every head (which implies the claim for "some" and "every")."""
    mc = statement.get("model_class")
    if not isinstance(mc, dict):
        raise NotImplied("the statement names no model class")
    attention = mc.get("attention", "softmax")
    kind = "simplex" if attention == "normalised" else attention
    if kind not in KINDS or "measure" in statement:  # a map's null mass, not BOS mass
        raise NotImplied(f"the certificate's bounds are on the {attention} null mass, "
                         "not a head's BOS mass")
    heads = mc.get("heads", 1)
    if mc.get("layers", 1) != 1 or mc.get("norm_bound") is not None or \
            mc.get("value_features", "token") != "token" or (
                heads != 1 and statement["conclusion"].get("heads") != "every"):
        raise NotImplied(f"the certificate's model class is not one layer of heads with "
                         f"token values, no norm bound and a bound in every head: {mc}")
    return ModelClass(kind=kind, heads=heads, values=_values(mc.get("values")),
                      positions=mc.get("positions", "any"), value_features="token")


def claim_class(claim: Any) -> ModelClass:
    """The claim's class in the registry's terms (a stack of one layer; several layers are
    in no class a bound statement covers)."""
    mc = claim.model_class
    if isinstance(mc, ModelClass):
        return mc
    one = mc.as_model_class()
    if one is None:
        raise NotImplied(f"the certificate covers one layer, not {mc}")
    return one


def instance_difference_for(task: Any, stated: dict[str, Any],
                            values: str | None = None) -> str | None:
    """The first way a verified statement's instance differs from ``task`` (``None``: it
    is the task's), in words.  ``positions`` and ``values`` it names (an engine's
    statement) must be the task's and the covered class's; the content is compared as
    exact rationals."""
    inst = dict(stated)
    named = inst.pop("positions", None)
    if named is not None and named != getattr(task, "positions", None):
        return (f"the certificate is about {named!r} positions, the claim's task uses "
                f"{getattr(task, 'positions', None)!r}")
    if values is not None and isinstance(inst.get("values"), str):
        if _values(inst["values"]) != values:
            return "the certificate's instance and model class name different values"
        inst["values"] = "fixed"
    if task.has_positions:
        return instance_difference(inst, task_instance(task))
    content = inst.get("content", {})
    if (inst.get("n"), inst.get("L")) != (task.n, task.L):
        return "(n, L) differ from the claim's"
    if isinstance(content, dict) and content.get("scheme") == "uniform":
        if task.finite and not all(abs(x) <= 1 for c in task.content for x in c):
            return "the claim's content set leaves the certificate's box [-1, 1]"
        return None  # every content vector of the box: the claim's content (or set) is in it
    if not task.finite:
        return "the claim's content is continuous; the certificate's is a finite set"
    vectors = [[format_rational(Fraction(float(v))) for v in c] for c in task.content]
    if content.get("vectors") != vectors:
        return "(n, L, content vectors) differ from the claim's"
    return None


# ------------------------------------------------------------------ claimed positions
def claimed_prefixes(claim: Any) -> list[tuple[tuple[int, ...], bool]]:
    """``(prefix, is_trigger)`` for every claimed position, in order: the conclusion's
    position set on a task with positions (user tokens), the non-trigger prefixes of the
    family (codes) otherwise."""
    task = claim.task
    if task.has_positions:
        return [(tuple(seq[:t]), seq[t - 1] == TRIG)
                for seq, t in claim.conclusion.at.pair_list(task)]
    if claim.conclusion.at.name == "prefix":
        if not task.finite:  # its trigger pattern, as a prefix of distinct symbols
            return [(_pattern_prefix(claim.conclusion.at.pattern(), task.L - 1), False)]
        return [(claim.conclusion.at.codes(task), False)]
    if not task.finite:
        return [(p, False) for p in _all_patterns(task.L)]
    from ..bnb.targets import nontrigger_targets  # the engine's package: loaded here only

    return [(tuple(p), False) for p in nontrigger_targets(task)]


def _pattern_prefix(pattern: tuple[int, int | None], m: int) -> tuple[int, ...]:
    """The prefix of distinct symbols ``0, 1, ...`` with ``pattern`` ``(t, trigger)``: the
    trigger (1-based place) carries symbol ``t - 1`` (code ``m + t - 1``), ``m`` symbols."""
    t, trig = pattern
    row = list(range(t - 1))
    if trig is None:
        return (*row, t - 1)
    return (*row[:trig - 1], m + t - 1, *row[trig - 1:])


def _all_patterns(L: int) -> list[tuple[int, ...]]:
    """Every trigger pattern of a non-trigger position at length ``L``, as
    :func:`_pattern_prefix` writes it (``m = L - 1`` symbols)."""
    pats = [(t, None) for t in range(1, L - 1)]
    pats += [(t, i) for t in range(3, L) for i in range(2, t)]
    return [_pattern_prefix(p, L - 1) for p in pats]


def pattern_of(prefix: tuple[int, ...], m: int) -> tuple[int, int | None]:
    """``(t, trigger place or None)`` of a prefix of codes over ``m`` content symbols."""
    return len(prefix), next((k + 1 for k, c in enumerate(prefix) if c >= m), None)


def _by_pattern(statement: dict[str, Any]) -> Callable[[tuple[int, ...], int], Fraction | None]:
    """A content-box statement's bound at a claimed prefix (over ``m`` symbols): the least
    of its targets' bounds with the prefix's trigger pattern (a target of distinct symbols
    bounds every sequence with its pattern, whatever the contents: the checker verified
    it).  The statement names its own number of symbols."""
    symbols = statement["instance"]["content"].get("symbols")
    if not isinstance(symbols, int):
        raise NotImplied("the content-box statement does not name its symbols")
    by: dict[tuple[int, int | None], Fraction] = {}
    for prefix, b in statement["conclusion"]["bounds"]:
        key = pattern_of(tuple(prefix), symbols)
        by[key] = max(Fraction(b), by.get(key, Fraction(0)))
    return lambda prefix, m: by.get(pattern_of(prefix, m))


def _by_class(statement: dict[str, Any]) -> Callable[[tuple[int, ...], int], Fraction | None]:
    """A finite sub-family statement's bound at a prefix: its targets' of the prefix's
    (query, multiset) class (the multiset lemma: the BOS weight and the constraint are the
    class's), the largest when several."""
    by: dict[tuple[int, tuple[int, ...]], Fraction] = {}
    for prefix, b in statement["conclusion"]["bounds"]:
        key = (prefix[-1], tuple(sorted(prefix)))
        by[key] = max(Fraction(b), by.get(key, Fraction(0)))
    return lambda prefix, m: by.get((prefix[-1], tuple(sorted(prefix))))


def _family_prefixes(claim: Any) -> set[tuple[int, ...]] | None:
    """Prefixes of the hypothesis family's sequences; ``None`` for the whole family."""
    if claim.hypothesis.family == "S_T":
        return None
    seqs = claim.hypothesis.family_sequences(claim.task)
    return {tuple(s[:t]) for s in seqs for t in range(1, len(s) + 1)}


def implied_bound(claim: Any, statement: dict[str, Any]) -> Fraction:
    """The bound a verified statement proves for ``claim``: the least over the claimed
    positions ("every"), or the largest reaching ``b`` ("some"); raises
    :class:`NotImplied` saying why it does not imply the claim."""
    if "either" in statement.get("conclusion", {}):
        return _implied_by_either(claim, statement)
    shape = bound_shape(statement)
    covered = covered_class(statement)
    mine = claim_class(claim)
    if not mine.is_subclass_of(covered):
        raise NotImplied(f"the certificate covers {covered}, not {claim.model_class}")
    differs = instance_difference_for(claim.task, statement["instance"], covered.values)
    if differs is not None:
        raise NotImplied(f"the certificate is about another task instance: {differs}")
    eps = Fraction(statement["eps"])
    if claim.hypothesis.max_error > eps:
        raise NotImplied(f"the certificate assumes error <= {eps}, the claim allows "
                         f"{claim.hypothesis.max_error}")
    if shape.whole_family and (statement.get("family", "S_T") != "S_T"
                               or claim.hypothesis.family != "S_T"):
        raise NotImplied("the certificate needs the error hypothesis on all of S_T")
    con = claim.conclusion
    if con.theorem is not None:
        raise NotImplied("a certificate proves a numeric bound; the conclusion names a theorem")
    reader = shape.reader(statement["conclusion"])
    domain = statement.get("content_domain")
    if domain in ("box", "finite") and statement.get("kind") == "paper-subfamily-bnb":
        by = _by_pattern(statement) if domain == "box" else _by_class(statement)
        m = claim.task.m if claim.task.finite else claim.task.L - 1
        reader = lambda prefix: by(tuple(prefix), m)  # noqa: E731
        if domain == "finite" and con.at.name != "prefix":
            return _least(claim, reader, con.min_bos_mass, _class_prefixes(claim.task))
    return _least(claim, reader, con.min_bos_mass)


def _implied_by_either(claim: Any, statement: dict[str, Any]) -> Fraction:
    """A bound at one of several prefixes in some layer of a pure stack (the
    pure-composition theorem's statement): it proves a pure stack claim of its layers and
    one head on the simplex that some head sinks at some non-trigger position, when its
    instance is the claim's, its ε at least the claim's, the claim's hypothesis is the
    whole family (which holds the rows it assumes the error at: the checker read them as
    the family's), the claim asks a sink at some non-trigger position, and its bound is
    ``>= b``."""
    mc, mine, con = statement["model_class"], claim.model_class, claim.conclusion
    if not getattr(mine, "pure", False) or (mine.heads, mine.layers) != (1, mc["layers"]) or \
            not MAPS[mine.kind].properties.on_simplex:
        raise NotImplied(f"the certificate covers pure compositions of {mc['layers']} one-head "
                         f"layers on the simplex, not {mine}")
    differs = instance_difference_for(claim.task, statement["instance"])
    if differs is not None:
        raise NotImplied(f"the certificate is about another task instance: {differs}")
    if claim.hypothesis.max_error > Fraction(statement["eps"]):
        raise NotImplied(f"the certificate assumes error <= {statement['eps']}, the claim "
                         f"allows {claim.hypothesis.max_error}")
    if _family_prefixes(claim) is not None:  # its rows are prefixes of the whole family
        raise NotImplied("the certificate assumes the error on the whole family's rows")
    if not con.some_sink_off_trigger:
        raise NotImplied("the certificate proves a sink in some layer at one of two "
                         "non-trigger positions: the claim must ask positions = \"some\", "
                         "heads = \"some\" at the non-trigger positions")
    bound = Fraction(statement["conclusion"]["min_bound"])
    if bound < con.min_bos_mass:
        raise NotImplied(f"the certificate gives {float(bound):.6g} < b = "
                         f"{float(con.min_bos_mass):.6g}")
    return bound


def _class_prefixes(task: Any) -> list[tuple[tuple[int, ...], bool]]:
    """One representative per non-trigger (query, multiset) class of a finite family
    without positions, as :func:`claimed_prefixes` gives positions: for a bound read by
    class (:func:`_by_class`) the least over them is the least over every non-trigger
    prefix, without listing the prefixes (the classes are counted first)."""
    return [(c.representative, False) for c in task.prefix_classes()
            if c.representative[-1] < task.m]


def _least(claim: Any, bound_at: BoundAt, b: Fraction,
           claimed: list[tuple[tuple[int, ...], bool]] | None = None) -> Fraction:
    """The least bound over ``claimed`` (default: :func:`claimed_prefixes`) ("every"), or
    the largest reaching ``b`` ("some")."""
    family = _family_prefixes(claim)
    some = claim.conclusion.positions == "some"
    found: list[Fraction] = []
    for prefix, trigger in claimed_prefixes(claim) if claimed is None else claimed:
        where = _show(claim, prefix)
        if trigger:
            if some:
                continue
            raise NotImplied(f"{where} is a trigger position; the certificate bounds "
                             "non-trigger positions only")
        if family is not None and prefix not in family:
            raise NotImplied(f"the hypothesis family holds no sequence through {where}")
        bound = bound_at(prefix)
        ok = bound is not None and bound >= b
        if ok:
            found.append(bound)
        elif not some:
            have = "no bound" if bound is None else f"only {float(bound):.6g}"
            raise NotImplied(f"the certificate gives {have} at {where} (claimed {float(b):g})")
    if not found:
        raise NotImplied(f"no claimed position's bound reaches b = {float(b):.6g}")
    return max(found) if some else min(found)


def _show(claim: Any, prefix: tuple[int, ...]) -> str:
    if claim.task.has_positions:
        return f"{show_sequence(prefix)}, t={len(prefix)}"
    if not claim.task.finite:
        t, trig = pattern_of(prefix, claim.task.L - 1)
        return (f"position {t} of every sequence with " +
                ("no trigger before it" if trig is None else f"the trigger at {trig}"))
    return f"the prefix of codes {list(prefix)}"


# ------------------------------------------------------------------ refutations
def _refutes_listed(statement: dict[str, Any], claim: Any, threshold: Any) -> str | None:
    """A ``bos_at``/``max_bos`` witness (listed prefixes of a task with positions): why it
    does not refute ``claim`` (``None``: it does); ``threshold.exact(prefix)``: the claimed
    BOS threshold there, a rational."""
    if not claim.task.has_positions:
        return "a witness of listed prefixes with positions is about another task"
    stated = statement["instance"]
    differs = instance_difference({**stated, "values": "fixed"}, task_instance(claim.task))
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
    m = Fraction(statement["max_bos"])
    for prefix in named:
        exact = threshold.exact(prefix)  # the claim's b, or a rational below the theorem's
        if exact is None:
            return f"the claim has no threshold at {list(prefix)}"
        if not m < exact:
            return f"BOS <= {statement['max_bos']} is not below the claimed {exact}"
    return None


def _refutes_stack(statement: dict[str, Any], claim: Any, threshold: Any) -> str | None:
    """A ``where``/``max_bos_mass`` witness (a stack at every non-trigger position or one
    listed position): why it does not refute ``claim`` (``None``: it does)."""
    if claim.task.has_positions:
        return "a stack witness is about a task without positions"
    differs = instance_difference_for(claim.task, statement["instance"])
    if differs is not None:
        return f"another instance: {differs}"
    mc, mine = statement["model_class"], claim.model_class
    if mc["residual"] != mine.residual or not mine.contains(
            mc["kind"], mc["heads"], mc["layers"], mc["values"]):
        return f"a model of class {mc}, not of {mine}"
    if statement.get("bos_measure", "weight") != bos_measure(mine.kind) and \
            not MAPS[mine.kind].properties.on_simplex:
        return "it bounds the raw BOS weight; the claim speaks of the BOS share"
    eps_w, m_w = Fraction(statement["max_error"]), Fraction(statement["max_bos_mass"])
    if eps_w > claim.hypothesis.max_error:
        return f"error <= {statement['max_error']} exceeds ε"
    if not m_w < claim.conclusion.min_bos_mass:
        return f"BOS <= {statement['max_bos_mass']} is not below the claimed b"
    where, con = statement["where"], claim.conclusion
    if where in ("nontrigger", "all"):  # "all": every position t >= 1, a superset
        return None
    if con.at.name == "prefix":  # one claimed prefix: the witness must name it
        codes, m = con.at.codes(claim.task), claim.task.m
        j = next((k + 1 for k, c in enumerate(codes) if c >= m), None)
        if (where[0].get("content"), where[0].get("trigger_at")) != (
                [c % m for c in codes], j):
            return "its position is not the claimed prefix"
    elif con.positions == "some":
        return "a 'some position' claim needs the bound at every non-trigger position"
    if con.heads == "some" and where[0]["heads"] != "every":
        return "a 'some head' claim needs every head below b at the position"
    return None


def _why_stack(statement: dict[str, Any], claim: Any) -> str:
    """The refutation a stack witness states, in words."""
    what = "BOS share" if statement.get("bos_measure") == "share" else "BOS weight"
    where = statement["where"]
    b = format_rational(claim.conclusion.min_bos_mass)
    head = f"error <= {statement['max_error']} and {what} <= {statement['max_bos_mass']} < {b}"
    if where == "nontrigger":
        return f"{head} in every head at every non-trigger position"
    if where == "all":
        return f"{head} in every head at every position t >= 1, the trigger row included"
    item = where[0]
    heads = "every head" if item["heads"] == "every" else \
        f"head [layer, head] = {item['heads'][0]}"
    return f"{head} in {heads} at the last position of prefix {item.get('content')}"


@dataclass(frozen=True)
class RefutationShape:
    """One layout of a verified witness statement: ``matches(statement)`` recognises it,
    ``why_not(statement, claim, threshold)`` says why it does not refute the claim
    (``None``: it does), ``says(statement, claim)`` states the refutation."""

    name: str
    matches: Callable[[dict[str, Any]], bool]
    why_not: Callable[[dict[str, Any], Any, Any], str | None]
    says: Callable[[dict[str, Any], Any], str]


REFUTATION_SHAPES: tuple[RefutationShape, ...] = (
    RefutationShape("a model bounded at listed prefixes (bos_at, max_bos)",
                    lambda st: {"bos_at", "max_bos", "model"} <= set(st), _refutes_listed,
                    lambda st, claim: f"error <= {st['max_error']} and BOS <= {st['max_bos']}"
                                      " at the listed prefixes"),
    RefutationShape("a stack bounded at every non-trigger position or one position (where, "
                    "max_bos_mass)", lambda st: {"where", "max_bos_mass", "model_class"}
                    <= set(st), _refutes_stack, _why_stack),
)
"""Every layout of a verified witness statement, tried in order."""


def refutation_problem(statement: dict[str, Any], claim: Any, threshold: Any) -> str | None:
    """Why a verified witness statement does not refute ``claim`` (``None``: it does);
    ``threshold``: the conclusion's BOS threshold by prefix
    (:func:`sinkproof.claims.theorems.theorem_bound`; its ``exact(prefix)`` is a rational
    at or below it)."""
    for shape in REFUTATION_SHAPES:
        if shape.matches(statement):
            return shape.why_not(statement, claim, threshold)
    return f"a {statement.get('kind')!r} statement is no witness"


def refutation_text(statement: dict[str, Any], claim: Any) -> str:
    """What a refuting witness statement says, in words."""
    for shape in REFUTATION_SHAPES:
        if shape.matches(statement):
            return shape.says(statement, claim)
    return ""


__all__ = ["BOUND_SHAPES", "REFUTATION_SHAPES", "BoundShape", "NotImplied", "RefutationShape",
           "bound_shape", "claim_class", "claimed_prefixes", "covered_class", "implied_bound",
           "instance_difference_for", "refutation_problem", "refutation_text"]
