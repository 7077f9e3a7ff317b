"""One seeded restart of the search: what it is given and what it returns, whichever
optimiser runs it.

A restart is a pure function of ``(settings, index)``: its random start depends only on
``(seed, index)``, so it gives the same result in any process.  The optimisers
(``settings.optimiser``) are :mod:`sinkproof.search.lbfgsb` (one layer on a task with
positions, the prefix batch of the whole family) and :mod:`sinkproof.search.adam`
(full-width stacks on whole sequences); the engine (:mod:`sinkproof.search.engine`) runs
either one's restarts in one loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..tasks.protocol import Task

OPTIMISERS = ("lbfgsb", "adam")
"""The search's optimisers: L-BFGS-B (scipy, on a JAX gradient) and Adam (optax)."""


@dataclass(frozen=True)
class SearchSettings:
    """Everything a restart needs besides its index (picklable, sent to workers).

    ``objective``: ``"penalty"`` (find a feasible point) or ``"sink"`` (softmax: minimise
    the largest BOS mass at ``where`` subject to error ``<= max_error``).  ``maxiter``: the
    optimiser's steps (L-BFGS-B iterations per stage; Adam steps).  ``layers``,
    ``residual``: the model's shape (a stack of ``layers`` layers of ``heads`` heads;
    residual connections ``x <- x + layer(x)``).  ``measure``: the BOS measure bounded
    (``"weight"`` ``α_0`` or ``"share"`` ``α_0 / Σ_j α_j``; ``None``: the optimiser's).
    ``init_scale``: the scale of the random start (``None``: the optimiser's).  Adam only:
    ``samples`` (sequences drawn where the family is too large to train on whole), ``lr``
    and ``init`` (starting weights ``W_Q, W_K, W_V, W_O`` of restart 0).
    """

    task: Task
    kind: str
    heads: int
    values: str
    max_error: float
    max_bos_mass: float
    where: Any
    seed: int
    maxiter: int = 300
    objective: str = "penalty"
    margin: float = 0.05
    init_scale: float | None = None
    deadline: float | None = None
    optimiser: str = "lbfgsb"
    layers: int = 1
    residual: bool = False
    measure: str | None = None
    samples: int = 256
    lr: float = 1e-2
    init: dict[str, Any] | None = field(default=None, hash=False, compare=False)


@dataclass
class RestartOutcome:
    """Where one restart ended, in float64: parameters, measures, penalty, trade-offs seen;
    ``cut``: the search's deadline stopped it before it converged.

    ``A``, ``U``: a one-layer model's scores and values (``None`` for a stack, whose
    weights are all in ``extra``); ``penalty``: the objective's value at the end (NaN where
    the optimiser does not evaluate it); ``evaluations``: gradient evaluations."""

    index: int
    A: np.ndarray | None
    U: np.ndarray | None
    error: float
    bos_mass: float
    penalty: float
    evaluations: int
    seconds: float
    points: list[tuple[float, float]] = field(default_factory=list)
    cut: bool = False
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    """The model's other learned parameters: for one layer ``map_params`` (e.g. the sink
    logit ``b``) and the gate ``gate_w``, ``gate_c``, where the map has them; for a stack
    every weight (``wq, wk, wv, wo``; ``mp``, ``gw``, ``gc``)."""

    def feasible(self, max_error: float, max_bos_mass: float) -> bool:
        """Both conditions hold in float64 (a candidate, not yet a witness)."""
        bos_ok = np.isnan(self.bos_mass) or self.bos_mass <= max_bos_mass
        return bool(self.error <= max_error and bos_ok)


def pareto(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points not dominated in (error, BOS mass), sorted by error."""
    front: list[tuple[float, float]] = []
    for e, b in sorted(points):
        if not front or b < front[-1][1]:
            front.append((e, b))
    return front
