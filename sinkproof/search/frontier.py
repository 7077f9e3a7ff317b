"""The empirical (error, BOS mass) frontier of a model class, next to the certified bound.

For each target error ``ε`` the search minimises the largest BOS mass at ``where``
subject to error ``<= ε`` (``objective="sink"``; ReLU: a search for BOS mass 0).
Each point is an explicit model whose error and BOS mass are then bounded from
above *rigorously* by the trusted checker, so a point says "some model of the
class reaches error <= E with BOS mass <= B".  A certified lower bound (the strongest
class bound of :mod:`sinkproof.theorems`: Theorems 1 and 2) says no model goes below it;
the two must never cross, and :meth:`Frontier.crossings` lists any point that does.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_int, choice
from ..attention import MAPS
from ..exact_numbers import error_level
from ..executor import Executor
from ..model import KINDS, AttentionModel
from ..modelclass import ModelClass
from ..progress import Progress
from ..tables import Tabular
from ..task import TriggerTask
from ..tasks.protocol import require
from ..theorems import CertifiedBound, best_bound
from .engine import VALUES, _outcomes, available_cores
from .objective import bos_measure_kind, witness_measure
from .restart import RestartOutcome, SearchSettings
from .verify import rigorous_measures


def certified_bound(task: TriggerTask, kind: str = "softmax", heads: int = 1,
                    values: str = "fixed", where: Any = "nontrigger") -> CertifiedBound | None:
    """The strongest bound the theorem registry knows for the class, or ``None``
    (:func:`sinkproof.theorems.best_bound` for the class of ``kind``, ``heads``, ``values``)."""
    model_class = ModelClass(kind=kind, heads=heads, values=values, positions="any")
    return best_bound(task, model_class, where)


@dataclass(frozen=True)
class FrontierPoint:
    """One model on the frontier: target error, float64 and rigorous (upper) figures."""

    target: float
    error: float
    bos_mass: float
    error_upper: float
    bos_upper: float
    bound: float | None
    model: AttentionModel


@dataclass(frozen=True)
class Frontier(Tabular):
    """The empirical frontier of a class (``points``, sorted by error) and its bound."""

    task: TriggerTask
    kind: str
    heads: int
    values: str
    where: Any
    points: tuple[FrontierPoint, ...]
    bound: CertifiedBound | None
    restarts: int
    seconds: float

    def crossings(self) -> list[FrontierPoint]:
        """Points whose rigorous BOS bound lies below the certified bound at their
        rigorous error bound: each would refute a theorem (or reveal a bug)."""
        if self.bound is None:
            return []
        return [p for p in self.points if p.bos_upper < self.bound(p.error_upper)]

    def to_records(self) -> list[dict[str, Any]]:
        """One row per point: target error, float64 and rigorous figures, certified bound."""
        return [dict(target=p.target, error=p.error, bos_mass=p.bos_mass,
                     error_upper=p.error_upper, bos_upper=p.bos_upper, bound=p.bound)
                for p in self.points]

    def table(self) -> str:
        """Markdown table: target, reached error and BOS mass, certified bound."""
        rows = ["| target ε | error (≤, rigorous) | BOS mass (≤, rigorous) | certified bound |",
                "|---|---|---|---|"]
        for p in self.points:
            b = "—" if p.bound is None else f"{p.bound:.6g}"
            rows.append(f"| {p.target:g} | {p.error_upper:.6g} | {p.bos_upper:.6g} | {b} |")
        return "\n".join(rows)

    def _title(self) -> str:
        return (f"{self.heads}-head {self.kind}, {self.values} values, BOS mass at "
                f"{self.where if isinstance(self.where, str) else 'named positions'}")

    def __repr__(self) -> str:
        pts = ", ".join(f"({p.error_upper:.4g}, {p.bos_upper:.4g})" for p in self.points)
        bound = "no certified bound" if self.bound is None else self.bound.name
        return (f"Frontier({self._title()}: {len(self.points)} points [(error, BOS)]: {pts}; "
                f"{bound}; crossings={len(self.crossings())})")

    def _repr_markdown_(self) -> str:
        bound = ("no certified bound for this class" if self.bound is None
                 else f"certified: {self.bound.name}, {self.bound.statement}")
        return f"**Frontier** — {self._title()} ({bound})\n\n{self.table()}"

    def plot(self, ax: Any = None) -> Any:
        """Draw the frontier and the certified bound on one axes (needs matplotlib)."""
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("plotting needs matplotlib: pip install 'sinkproof[plot]'") from None
        if ax is None:
            _, ax = plt.subplots(figsize=(5, 3.5))
        errs = [p.error_upper for p in self.points]
        boss = [p.bos_upper for p in self.points]
        ax.plot(errs, boss, "o-", label="search frontier (rigorous upper bounds)")
        if self.bound is not None and errs:
            grid = np.linspace(0.0, max(errs) * 1.1, 200)
            ax.plot(grid, self.bound(grid), "k--", label=f"certified: {self.bound.name}")
            ax.fill_between(grid, 0, self.bound(grid), color="0.85", label="impossible")
        lows = boss + ([] if self.bound is None or not errs else [self.bound(max(errs) * 1.1)])
        if lows:
            ax.set_ylim(max(0.0, min(lows) - 0.05), 1.005)
        ax.set_xlabel("max error on the family")
        ax.set_ylabel("max BOS mass at " + (self.where if isinstance(self.where, str)
                                           else "named positions"))
        ax.set_title(self._title(), fontsize=9)
        ax.legend(fontsize=7)
        ax.figure.tight_layout()
        return ax


def _best(outcomes: Sequence[RestartOutcome], eps: float) -> RestartOutcome:
    accurate = [o for o in outcomes if o.error <= eps]
    if accurate:
        return min(accurate, key=lambda o: (o.bos_mass, o.index))
    return min(outcomes, key=lambda o: (o.error, o.index))


FREE_SHARE = 1e-3
"""The BOS share the frontier asks of maps off the simplex whose weights are never 0 (their
share can fall without limit: minimising it would drive the scores past any range)."""


def _target(kind: str) -> float:
    """BOS target of the frontier's search: 1 (minimise the mass, objective ``"sink"``) on
    the simplex with positive weights, 0 with exact zeros, else :data:`FREE_SHARE`."""
    if bos_measure_kind(kind) == "weight":
        return 0.0
    return 1.0 if MAPS[kind].properties.on_simplex else FREE_SHARE


def frontier(
    task: TriggerTask,
    kind: str = "softmax",
    heads: int = 1,
    values: str = "fixed",
    errors: Sequence[float] = (0.05, 0.1, 0.2, 0.3),
    where: Any = "nontrigger",
    restarts: int = 2,
    seed: int = 0,
    processes: int | None = None,
    *,
    maxiter: int = 150,
    dps: int = 50,
    progress: bool | None = None,
    executor: Executor | None = None,
) -> Frontier:
    """The empirical frontier of the class at the target errors ``errors``, each point
    bounded rigorously by the trusted checker, with the class's certified bound.
    Restarts run on ``processes`` cores, or on ``executor`` (as for ``search``)."""
    require(task, "has_positions", "the frontier search")
    choice("attention kind", kind, KINDS)
    choice("values", values, VALUES)
    heads = as_int("heads", heads, minimum=1)
    restarts = as_int("restarts", restarts, minimum=1)
    seed = as_int("seed", seed, minimum=0)
    targets = sorted(float(error_level(e, "errors", positive=True)) for e in errors)
    if not targets:
        raise ValueError("errors is empty: give at least one target error")
    cores = available_cores() if processes is None else as_int("processes", processes, 1)
    bound = certified_bound(task, kind, heads, values, where)
    start = time.perf_counter()
    points = []
    with Progress(len(targets), "frontier", progress, threshold=2) as bar:
        for eps in targets:
            settings = SearchSettings(task, kind, heads, values, eps, _target(kind), where,
                                      seed, maxiter=maxiter,
                                      objective="sink" if _target(kind) == 1.0 else "penalty")
            with closing(_outcomes(settings, restarts, min(cores, restarts), executor)) as it:
                outcomes = [o for o in it if o is not None]
            best = _best(outcomes, eps)
            model = AttentionModel(task, kind, A=best.A, U=best.U, **best.extra)
            err_up, bos_up = rigorous_measures(model, where, dps, witness_measure(kind))
            points.append(FrontierPoint(eps, best.error, best.bos_mass, err_up, bos_up,
                                        None if bound is None else bound(err_up), model))
            bar.update(1)
    return Frontier(task, kind, heads, values, where, tuple(points), bound, restarts,
                    time.perf_counter() - start)
