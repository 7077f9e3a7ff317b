"""The theorem registry: every theorem in order, looked up by name or number, and the
strongest bound known for a model class.

Adding a theorem: one module of this package with a ``THEOREM``, and one line in
``_MODULES``; every consumer (claims, the frontier, the report, the theory page) loops
over :data:`THEOREMS` and reads the theorem's declared hypotheses, never its name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..modelclass import ModelClass
from ..task import TriggerTask
from . import theorem1, theorem2, theorem3, theorem4, theorem5, theorem6, theorem7, theorem8
from .base import CertifiedBound, Theorem

_MODULES = (theorem1, theorem2, theorem3, theorem4, theorem5, theorem6, theorem7, theorem8)

THEOREMS: dict[str, Theorem] = {m.THEOREM.name: m.THEOREM for m in _MODULES}
"""name (``"theorem1"`` ...) -> :class:`Theorem`, in the order of the statements."""

FORMULAS = {f.name: f for f in (
    theorem1.THEOREM1_LEARNED, theorem1.THEOREM1_FIXED, theorem2.THEOREM2_NONBOS,
    theorem2.THEOREM2_PAIR, theorem3.THEOREM3_LEARNED, theorem3.THEOREM3_FIXED,
    theorem8.THEOREM8_TIED, theorem8.THEOREM8_FIRST)}
"""The closed-form bounds of Theorems 1-3 and 8 by name (``"theorem3_fixed"`` ...)."""


def theorem(name: str | int) -> Theorem:
    """``THEOREMS`` by name (``"theorem3"``) or number (``3``)."""
    key = f"theorem{name}" if isinstance(name, int) else name
    if key not in THEOREMS:
        raise ValueError(f"unknown theorem {name!r}; expected one of {', '.join(THEOREMS)}")
    return THEOREMS[key]


def covering(model_class: ModelClass, conclusion: str | None = None
             ) -> list[tuple[Theorem, bool, list[str]]]:
    """Every theorem (with ``conclusion``, if given) as ``(theorem, applies, reasons)`` for
    ``model_class``, in registry order."""
    out = []
    for thm in THEOREMS.values():
        if conclusion is not None and thm.conclusion != conclusion:
            continue
        ok, why = thm.applies_to(model_class)
        out.append((thm, ok, why))
    return out


def best_bound(task: TriggerTask, model_class: ModelClass,
               where: Any = "nontrigger") -> CertifiedBound | None:
    """The strongest class bound of the registry for ``model_class``: the pointwise maximum
    of every covering theorem's :meth:`Theorem.class_bound`, or ``None`` when no theorem
    gives one.  ``where``: the positions whose largest BOS mass is bounded (class bounds are
    about non-trigger positions, so ``"nontrigger"`` or ``"all"``)."""
    if where not in ("nontrigger", "all"):
        return None
    found = [b for thm in THEOREMS.values()
             if (b := thm.class_bound(task, model_class)) is not None]
    if not found:
        return None
    if len(found) == 1:
        return found[0]
    parts = tuple(found)
    return CertifiedBound("max(" + ", ".join(b.name for b in parts) + ")",
                          "; ".join(b.statement for b in parts),
                          lambda e: np.max([b(e) for b in parts], axis=0))
