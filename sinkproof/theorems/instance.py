"""Instantiated theorems: exact lower bounds on BOS mass at named positions, checkable on models.

An :class:`InstantiatedBound` is a list of :class:`BosBound` items.  Each item says:
*for every model of the theorem's class whose error is ``<= ε`` at the positions
``needs``, the largest BOS mass over ``targets`` is ``>= bound``* (one target: the
BOS mass there).  Bounds are exact SymPy numbers; ``value`` is a float rounded down.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import sympy

from ..model import AttentionModel
from ..modelclass import ModelClass
from ..numerics import stable_norm
from ..symbolic.bounds import exact_number
from ..task import TriggerTask

Target = tuple[tuple[int, ...], int]
"""A ``(sequence, position)`` pair; the sequence lists tokens after BOS (``TRIG`` = trigger)."""


def float_down(x: sympy.Expr) -> float:
    """A float ``<=`` the exact number ``x`` (so a float comparison never overstates a bound)."""
    return math.nextafter(float(sympy.N(x, 30)), -math.inf)


def float_up(x: sympy.Expr) -> float:
    """A float ``>=`` the exact number ``x``."""
    return math.nextafter(float(sympy.N(x, 30)), math.inf)


@dataclass(frozen=True)
class BosBound:
    """``max_{(X,t) in targets} α_{t0}(X) >= bound`` whenever the error is ``<= ε`` at ``needs``."""

    targets: tuple[Target, ...]
    bound: sympy.Expr
    needs: tuple[Target, ...]
    note: str = ""

    @cached_property
    def value(self) -> float:
        """The bound as a float, rounded down."""
        return float_down(self.bound)

    @cached_property
    def slack(self) -> float:
        """``1 - bound`` (the most non-BOS mass allowed), computed exactly then rounded up."""
        return float_up(1 - self.bound)

    @cached_property
    def vacuous(self) -> bool:
        """The bound says nothing (it is ``<= 0``; decided at 30 significant digits)."""
        return float(sympy.N(self.bound, 30)) <= 0

    def __repr__(self) -> str:
        where = " or ".join(f"{list(s)}[t={t}]" for s, t in self.targets)
        return f"BOS mass at {where} >= {sympy.sstr(self.bound)} ≈ {self.value:.6g}"


@dataclass(frozen=True)
class ItemCheck:
    """One item held against one model: the error at ``needs``, the measured non-BOS mass."""

    item: BosBound
    error: float
    hypothesis: bool
    log_nonbos: float
    holds: bool

    @property
    def nonbos(self) -> float:
        """``min over targets of 1 - α_{t0}`` (from the log domain)."""
        return math.exp(self.log_nonbos)


@dataclass(frozen=True)
class BoundCheck:
    """An instantiated bound held against a model: ``holds`` unless some item whose error
    hypothesis holds has measured BOS mass below its bound (beyond ``rtol`` on ``1 - α``)."""

    theorem: str
    items: tuple[ItemCheck, ...]

    @property
    def applicable(self) -> list[ItemCheck]:
        """Items whose error hypothesis the model satisfies."""
        return [i for i in self.items if i.hypothesis]

    @property
    def violations(self) -> list[ItemCheck]:
        return [i for i in self.items if i.hypothesis and not i.holds]

    @property
    def holds(self) -> bool:
        return not self.violations

    def __repr__(self) -> str:
        return (f"BoundCheck({self.theorem}: holds={self.holds}, "
                f"{len(self.applicable)}/{len(self.items)} items with the error hypothesis met, "
                f"{len(self.violations)} violations)")

    def _repr_markdown_(self) -> str:
        rows = ["| item | error at needs | hypothesis met | measured 1-α0 | allowed 1-α0 | holds |",
                "|---|---|---|---|---|---|"]
        rows += [f"| {i.item!r} | {i.error:.6g} | {i.hypothesis} | {i.nonbos:.6g} | "
                 f"{i.item.slack:.6g} | {i.holds} |" for i in self.items]
        return f"**{self.theorem}**: holds = **{self.holds}**\n\n" + "\n".join(rows)


def errors_at(model: AttentionModel, targets: Iterable[Target], cache: dict | None = None,
              upper: bool = True) -> float:
    """``max ‖f_t(X) - y_t(X)‖`` over the given (sequence, position) pairs (float, no underflow
    in the norm), plus an allowance for underflow in the output itself.

    A weight times a value below float64's range (``1e-237 · 7e-209``) rounds to 0, so the
    float output can miss an error that is really positive; each of the ``H(n+1)`` terms of a
    coordinate loses at most ``2^-1074 · max(1, |v|)`` that way, and that much per coordinate
    is added (it vanishes next to any error in the normal range).  So an ``ε`` taken from this
    value is not below the model's error merely because the error underflowed.  ``upper=False``:
    the float error alone (for a lower estimate; ``cache`` must then be another dict).
    """
    cache = {} if cache is None else cache
    worst = 0.0
    for seq, t in targets:
        if seq not in cache:
            out, _ = model.forward(seq)
            values = model.value_table
            terms = values.shape[0] * out.shape[0] * math.sqrt(out.shape[1])
            lost = math.ldexp(terms * max(1.0, float(np.abs(values).max(initial=0.0))),
                              -1074) if upper else 0.0
            cache[seq] = stable_norm(out - model.task.targets(seq)) + lost
        worst = max(worst, float(cache[seq][t]))
    return worst


@dataclass(frozen=True)
class InstantiatedBound:
    """A theorem instantiated on a task at error level ``eps``: exact bounds at named positions.

    ``model_class``: the class every hypothesis on the model is about; ``items``: the
    bounds; ``no_bound``: named positions where the theorem gives nothing, with why;
    ``hypothesis``: every (sequence, position) where some item needs error ``<= eps``;
    ``value_map``: the ``U`` the bound was computed for (learned values, ``model=...``),
    else ``None``.  Such a bound is about models with exactly that ``U``: ``model_class``
    alone (``learned``) does not say so, and ``general`` is ``False``.  ``everywhere``: an
    item (no targets, no needs listed) that holds at every non-trigger position of every
    sequence whose error is ``<= eps`` at every position, when the theorem gives one.
    """

    theorem: str
    task: TriggerTask
    eps: sympy.Expr
    model_class: ModelClass
    items: tuple[BosBound, ...]
    no_bound: tuple[tuple[Target, str], ...] = ()
    extend: Callable[[tuple[int, ...], int], BosBound | None] | None = field(
        default=None, repr=False, compare=False)
    value_map: np.ndarray | None = field(default=None, repr=False, compare=False)
    everywhere: BosBound | None = None

    @property
    def general(self) -> bool:
        """The bound holds for every model of ``model_class`` (not one value map only)."""
        return self.value_map is None

    @property
    def hypothesis(self) -> tuple[Target, ...]:
        return tuple(sorted({n for item in self.items for n in item.needs},
                            key=lambda x: (len(x[0]), x)))

    def bound_at(self, sequence: Iterable[int], position: int) -> BosBound | None:
        """The item bounding the BOS mass at exactly this position (``None`` if none)."""
        key = (tuple(int(x) for x in sequence), int(position))
        best = None
        for item in self.items:
            if item.targets == (key,) and (best is None or item.bound > best.bound):
                best = item
        if best is None and self.extend is not None:
            best = self.extend(*key)
        return best

    def implies(self, level: Any, sequence: Iterable[int], position: int) -> bool:
        """The BOS mass at ``(sequence, position)`` is provably ``>= level`` (exact comparison)."""
        item = self.bound_at(sequence, position)
        return item is not None and bool(item.bound >= exact_number(level))

    def check(self, model: AttentionModel, rtol: float = 1e-9) -> BoundCheck:
        """Hold the bound against a model of the class (floating point, log domain).

        An item's error hypothesis counts as met when the float error is ``<= ε(1 + rtol)``
        (float errors carry rounding); it holds when
        ``min_target (1 - α_{t0}) <= (1 - bound)(1 + rtol)``.
        """
        if not isinstance(model, AttentionModel):
            raise TypeError(f"model must be an AttentionModel, got {type(model).__name__}")
        if model.task != self.task:
            raise ValueError("the model's task differs from the instantiated task")
        if not self.model_class.contains(model):
            raise ValueError(f"the model ({ModelClass.of(model)}) is not in the theorem's class "
                             f"({self.model_class})")
        if self.value_map is not None and not np.array_equal(model.U, self.value_map):
            raise ValueError("this bound was instantiated for another value map U")
        cache: dict = {}
        lnb_cache: dict = {}
        eps = float(self.eps)
        rows = []
        for item in self.items:
            err = errors_at(model, item.needs, cache)
            lnb = []
            for seq, t in item.targets:
                if seq not in lnb_cache:
                    lnb_cache[seq] = model.log_nonbos(seq)
                lnb.append(lnb_cache[seq][:, t])
            measured = float(np.min(lnb, axis=0).max())  # the least-sunk head
            holds = item.vacuous or measured <= math.log(item.slack) + math.log1p(rtol)
            rows.append(ItemCheck(item, err, err <= eps * (1 + rtol), measured, holds))
        return BoundCheck(self.theorem, tuple(rows))

    def __repr__(self) -> str:
        live = [i for i in self.items if not i.vacuous]
        best = max(live, key=lambda i: i.value, default=None)
        top = f", strongest {best!r}" if best is not None else ""
        if best is None and self.items:
            top = ", every item vacuous" + (" (eps >= 1: error 1 is the size of the targets)"
                                            if self.eps >= 1 else "")
        return (f"InstantiatedBound({self.theorem}, eps={sympy.sstr(self.eps)}, "
                f"{len(self.items)} items{top})")

    def _repr_markdown_(self) -> str:
        rows = ["| BOS mass at | lower bound | ≈ | error ≤ ε needed at |", "|---|---|---|---|"]
        for i in self.items:
            where = " or ".join(f"`{list(s)}`, t={t}" for s, t in i.targets)
            needs = "; ".join(f"`{list(s)}`, t={t}" for s, t in i.needs)
            rows.append(f"| {where} | `{sympy.sstr(i.bound)}` | {i.value:.6g} | {needs} |")
        return (f"**{self.theorem}** on {self.task!r}, ε = {sympy.sstr(self.eps)}, "
                f"class: {self.model_class}\n\n" + "\n".join(rows))
