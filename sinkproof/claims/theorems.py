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

Comparisons are exact (SymPy numbers against the exact binary value of ``b``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..errors import SinkproofError
from ..model import AttentionModel
from ..symbolic.bounds import exact_number
from ..theorems import THEOREMS, Theorem
from .outcome import Proved
from .schema import Claim

BoundAt = Callable[[tuple[int, ...]], float]
Target = tuple[tuple[int, ...], int]


def registry() -> dict[str, Theorem]:
    """The theorem registry, :data:`sinkproof.theorems.THEOREMS`."""
    return dict(THEOREMS)


def _instantiate(thm: Theorem, claim: Claim) -> Any:
    """The theorem's exact bounds for the claim's class and ε, at the claimed non-trigger
    positions (the calling convention every bound theorem shares)."""
    task = claim.task
    positions = [(s, t) for s, t in claim.conclusion.at.pair_list(task)
                 if s[t - 1] >= 0]  # non-trigger positions only
    return thm.bound(task, claim.hypothesis.eps_exact, claim.model_class, positions)


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
    return [(s[:t], t) for s, t in claim.conclusion.at.pair_list(claim.task)]


def _exact(b: float) -> Any:
    return exact_number(b)


def _proves(claim: Claim, name: str, inst: Any) -> tuple[float | None, str]:
    """The least bound ``inst`` certifies over the claimed positions, or why it does not."""
    con = claim.conclusion
    family = _family_prefixes(claim)
    claimed = _claimed(claim)
    if con.positions == "some":
        wanted = set(claimed)
        good = [item for item in inst.items
                if set(item.targets) <= wanted and _covered(item.needs, family)
                and (con.theorem is not None or item.bound >= _exact(con.b_exact))]
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
        if con.theorem is None and not item.bound >= _exact(con.b_exact):
            return None, (f"{name}: bound {item.value:.6g} at {where} is below the claimed "
                          f"{con.min_bos_mass:g}")
        least = item.value if least is None else min(least, item.value)
    if least is None:
        if con.theorem is not None:
            return float("-inf"), ""  # vacuous everywhere: true, and says nothing
        return None, f"{name}: no claimed position"
    return least, ""


def _show(seq: tuple[int, ...]) -> str:
    from .positions import show_sequence

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
                    and (con.theorem is not None or item.bound >= _exact(con.b_exact))):
                out.add((seq, t))
    return out


def prove_by_theorem(claim: Claim, reasons: list[str]) -> Proved | None:
    """A :class:`Proved` by the first registered theorem that proves ``claim``; otherwise
    ``None``, with one line per theorem in ``reasons`` saying why it does not."""
    for name, inst in _bound_instances(claim, reasons):
        least, why = _proves(claim, name, inst)
        if least is None:
            reasons.append(why)
            continue
        return Proved(claim, by=name, bound=least, detail=repr(inst))
    return None


def theorem_bound(claim: Claim) -> BoundAt:
    """The BOS threshold the conclusion asks for at each prefix (user tokens).

    A named theorem's bound where it has a single-target item, ``-inf`` elsewhere
    (no violation is possible where the theorem claims nothing).
    """
    con = claim.conclusion
    if con.theorem is None:
        b = float(con.min_bos_mass)
        return lambda prefix: b
    theorems = registry()
    if con.theorem not in theorems:
        raise ValueError(f"unknown theorem {con.theorem!r} in the conclusion")
    inst = _instantiate(theorems[con.theorem], claim)
    cache: dict[tuple[int, ...], float] = {}

    def at(prefix: tuple[int, ...]) -> float:
        if prefix not in cache:
            item = inst.bound_at(prefix, len(prefix))
            cache[prefix] = float("-inf") if item is None else item.value
        return cache[prefix]

    return at


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
