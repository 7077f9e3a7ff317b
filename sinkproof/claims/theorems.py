"""Proof of a claim by a registered theorem, and the BOS bound a conclusion names.

A theorem proves a claim only when the registry says it applies to the claim's
model class (every hypothesis holds), the claim's hypothesis family contains the
sequences the theorem's error conditions name, and the bound it gives at the
claim's ε is ``>= b`` at the claimed positions.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any

from .outcome import Proved
from .schema import Claim

BoundAt = Callable[[tuple[int, ...]], float]


def registry() -> dict[str, Any]:
    """The theorem registry of the symbolic layer, by name (empty when it is not installed)."""
    try:
        mod = import_module("sinkproof.symbolic")
    except ImportError:
        return {}
    theorems = getattr(mod, "THEOREMS", None)
    if theorems is None:
        return {}
    if isinstance(theorems, dict):
        return dict(theorems)
    return {getattr(t, "name", str(t)): t for t in theorems}


def theorem_bound(claim: Claim) -> BoundAt:
    """The BOS threshold the conclusion asks for at each prefix (user tokens)."""
    con = claim.conclusion
    if con.theorem is None:
        b = float(con.min_bos_mass)
        return lambda prefix: b
    theorems = registry()
    if con.theorem not in theorems:
        known = ", ".join(sorted(theorems)) or "none registered"
        raise ValueError(f"unknown theorem {con.theorem!r} in the conclusion (known: {known})")
    inst = theorems[con.theorem].instantiate(claim.task, claim.max_error)
    return lambda prefix: _bound_value(inst, prefix)


def _bound_value(instance: Any, prefix: tuple[int, ...]) -> float:
    value = instance.bound_at(prefix)
    return float("-inf") if value is None else float(value)


def prove_by_theorem(claim: Claim, reasons: list[str]) -> Proved | None:
    """A :class:`Proved` by the first registered theorem that proves ``claim``; else ``None``,
    with one line per theorem in ``reasons`` saying why it does not apply."""
    theorems = registry()
    if not theorems:
        reasons.append("theorem: no theorem registry available (sinkproof.symbolic.THEOREMS)")
        return None
    con = claim.conclusion
    names = [con.theorem] if con.theorem is not None else sorted(theorems)
    for name in names:
        thm = theorems[name]
        if not thm.applies_to(claim.model_class):
            reasons.append(f"{name}: its hypotheses do not all hold for {claim.model_class}")
            continue
        inst = thm.instantiate(claim.task, claim.max_error)
        least, why = _least_bound(claim, inst, name)
        if least is None:
            reasons.append(why)
            continue
        return Proved(claim, by=name, bound=least, detail=str(inst))
    return None


def _least_bound(claim: Claim, inst: Any, name: str) -> tuple[float | None, str]:
    con = claim.conclusion
    b_at = theorem_bound(claim)
    least: float | None = None
    for seq, t in con.at.pair_list(claim.task):
        prefix = seq[:t]
        if not inst.hypothesis_holds(claim.hypothesis.family_sequences(claim.task), prefix):
            if con.positions == "every":
                return None, (f"{name}: the hypothesis family lacks the sequences its error "
                              f"conditions at {prefix} name")
            continue
        bound = _bound_value(inst, prefix)
        ok = bound >= b_at(prefix)
        if con.positions == "some" and ok:
            return bound, ""
        if con.positions == "every":
            if not ok:
                return None, (f"{name}: bound {bound:.6g} at {prefix} is below the claimed "
                              f"{b_at(prefix):.6g}")
            least = bound if least is None else min(least, bound)
    if least is None:
        return None, f"{name}: bounds none of the claimed positions"
    return least, ""
