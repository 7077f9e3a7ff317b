"""The L-BFGS-B optimiser of the search (``optimiser="lbfgsb"``): one layer of
``heads`` heads on a task with positions, trained on the prefix batch of the whole family.

The feasibility problem "error ``<= ε`` on the whole family and BOS mass ``<= b``
at the chosen positions" becomes the minimisation of a sum of squared hinges
(:mod:`sinkproof.search.objective`, ``loss="penalty"``), zero exactly on the
feasible set shrunk by a margin.  Each stage raises the weight of the BOS hinge
(a penalty continuation), warm-started from the previous stage.  The restart's
random start depends only on ``(seed, index)``, so a restart gives the same
result in any process.  The engine (:mod:`sinkproof.search.engine`) calls the functions
every optimiser module has: :func:`key`, :func:`prepare`, :func:`run`, :func:`positions`,
:func:`rank`, :func:`model`, :func:`trained_on`; this one also :func:`verify` (the trusted
check of a candidate in memory).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from ..attention import MAPS
from ..model import AttentionModel, fixed_values
from .objective import (
    PrefixBatch,
    bos_measure_kind,
    extra_parameters,
    prefix_batch,
    value_grad_params,
    witness_measure,
)
from .restart import RestartOutcome, SearchSettings, pareto
from .verify import WitnessReport, verify_witness

PENALTY_STAGES = ((1.0, 0.1), (10.0, 0.01), (100.0, 0.0))
"""``(BOS-hinge weight, ReLU leak)`` of the successive L-BFGS-B stages of the feasibility
search; the last stage is the exact objective (no leak)."""

SINK_STAGES = ((10.0, 0.3), (100.0, 0.1), (1000.0, 0.03))
"""``(error-hinge weight, temperature)`` of the stages that minimise BOS mass (softmax)."""


INIT_SCALE = 1.0
"""Scale ``s`` of the random start when the settings name none."""


def _scale(settings: SearchSettings) -> float:
    return INIT_SCALE if settings.init_scale is None else settings.init_scale


def initial_parameters(settings: SearchSettings, index: int
                       ) -> tuple[np.ndarray, np.ndarray | None]:
    """Random start of restart ``index``: ``A ~ N(0, s²/D)``; learned values start at
    ``U_fix`` plus noise on even restarts and fully random on odd ones."""
    task = settings.task
    rng = np.random.default_rng([settings.seed, index])
    D, H, p = task.D, settings.heads, task.p
    A = rng.standard_normal((H, D, D)) * _scale(settings) / np.sqrt(D)
    if settings.values == "fixed":
        return A, None
    noise = rng.standard_normal((H, p, p + 3))
    base = fixed_values(p)[None] if index % 2 == 0 else 0.0
    return A, base + (0.3 if index % 2 == 0 else 1.0) * noise


def initial_extra(settings: SearchSettings, index: int) -> dict[str, np.ndarray]:
    """Start of the head's other parameters: the map's defaults (``b = 0``), and a gate
    with ``N(0, s²/D)`` weights and bias 0 (its own seeded stream, so ``A`` and ``U``
    start as for a map without them)."""
    extra = extra_parameters(settings.task, settings.kind, settings.heads)
    if "gate_w" in extra:
        rng = np.random.default_rng([settings.seed, index, 1])
        D = settings.task.D
        extra["gate_w"] = rng.standard_normal(extra["gate_w"].shape) * _scale(settings) \
            / np.sqrt(D)
    return extra


def key(settings: SearchSettings) -> tuple[Any, ...]:
    """What :func:`prepare` depends on (a worker keeps the last prepared batch)."""
    return (settings.task, settings.where)


def prepare(settings: SearchSettings) -> PrefixBatch:
    """The prefix batch of the whole family, constrained at ``where`` (validated there)."""
    return prefix_batch(settings.task, where=settings.where)


def positions(settings: SearchSettings) -> int:
    """Positions one objective evaluation reads: every position of the family."""
    return int(settings.task.n_positions)


def trained_on(settings: SearchSettings, batch: PrefixBatch) -> tuple[str, int]:
    """``("exhaustive", sequences)``: the batch is every prefix of the finite family."""
    return "exhaustive", int(settings.task.n_sequences)


def rank(settings: SearchSettings, outcome: RestartOutcome) -> tuple[float, ...]:
    """Closest restart first: the smallest penalty."""
    return (outcome.penalty,)


def model(settings: SearchSettings, outcome: RestartOutcome) -> AttentionModel:
    """The one-layer model of a restart's parameters."""
    return AttentionModel(settings.task, settings.kind, A=outcome.A, U=outcome.U,
                          **outcome.extra)


def verify(settings: SearchSettings, candidate: AttentionModel, dps: int) -> WitnessReport:
    """The trusted checker's report on ``candidate`` over the whole family, at ``dps``
    digits (:func:`~sinkproof.search.verify.verify_witness`)."""
    return verify_witness(candidate, settings.max_error, settings.max_bos_mass,
                          settings.where, dps, measure=witness_measure(settings.kind))


def run(settings: SearchSettings, batch: PrefixBatch, index: int,
        stop: Callable[[], bool] | None = None) -> RestartOutcome:
    """Minimise the penalty objective from restart ``index``'s start; ``stop()`` true
    ends it early, as the deadline does (``cut``).

    BLAS is held to one thread meanwhile (L-BFGS-B's vectors are small: extra BLAS
    threads only spin, and on a busy machine they made a restart ~15x slower)."""
    with threadpool_limits(1):
        return _run_restart(settings, batch, index, stop)


def _run_restart(settings: SearchSettings, batch: PrefixBatch, index: int,
                 stop: Callable[[], bool] | None) -> RestartOutcome:
    start = time.perf_counter()
    task = settings.task
    A0, U0 = initial_parameters(settings, index)
    start_params = {"A": A0, **({} if U0 is None else {"U": U0}),
                    **initial_extra(settings, index)}
    wrt = tuple(start_params)  # A, learned U, map parameters, gate
    shapes = {k: v.shape for k, v in start_params.items()}
    cuts = np.cumsum([0] + [v.size for v in start_params.values()])
    points: list[tuple[float, float]] = []
    evaluations = 0
    last: dict[str, Any] = {}

    def unpack(x: np.ndarray) -> dict[str, np.ndarray]:
        return {k: x[a:b].reshape(shapes[k]) for k, a, b in zip(wrt, cuts, cuts[1:])}

    def fun(x: np.ndarray, options: dict[str, Any]) -> tuple[float, np.ndarray]:
        nonlocal evaluations
        value, grads, m = value_grad_params(task, settings.kind, unpack(x), batch, wrt=wrt,
                                            **options)
        evaluations += 1
        points.append((m.max_error, m.max_bos_mass))
        last.update(value=value)
        return value, np.concatenate([grads[k].ravel() for k in wrt])

    def stop_early(intermediate_result: Any) -> None:
        if settings.objective == "penalty" and last.get("value") == 0.0:
            raise StopIteration
        if settings.deadline is not None and time.time() > settings.deadline:
            raise StopIteration
        if stop is not None and stop():
            raise StopIteration

    x = np.concatenate([v.ravel() for v in start_params.values()])
    cut = False
    for options, exact in _stages(settings):
        res = minimize(fun, x, args=(options,), jac=True, method="L-BFGS-B", callback=stop_early,
                       options=dict(maxiter=settings.maxiter, maxfun=2 * settings.maxiter))
        x = res.x
        solved = settings.objective == "penalty" and exact and last.get("value") == 0.0
        cut = (settings.deadline is not None and time.time() > settings.deadline) or (
            stop is not None and stop())
        if solved or cut:
            break
    final = unpack(x)
    value, _, m = value_grad_params(
        task, settings.kind, final, batch, wrt=("A",), loss="penalty",
        max_error=settings.max_error, max_bos_mass=settings.max_bos_mass, margin=0.0)
    U = final.pop("U", None)
    A = final.pop("A")
    return RestartOutcome(index, A.copy(), None if U is None else U.copy(), m.max_error,
                          m.max_bos_mass, value, evaluations, time.perf_counter() - start,
                          pareto(points), cut, {k: v.copy() for k, v in final.items()})


def _stages(settings: SearchSettings) -> list[tuple[dict[str, Any], bool]]:
    """Objective options of each L-BFGS-B stage, and whether it is the exact objective."""
    common = dict(max_error=settings.max_error, margin=settings.margin)
    if settings.objective == "sink":
        if bos_measure_kind(settings.kind) != "log_odds":
            raise ValueError(f"objective='sink' minimises a BOS mass that is never 0; for "
                             f"{settings.kind} (exact zeros) search with max_bos_mass=0")
        return [(dict(loss="sink", error_weight=w, temperature=tau, **common), True)
                for w, tau in SINK_STAGES]
    leaky = MAPS[settings.kind].factorisation == "sum"  # c_t max(0, s): zero gradient below 0
    return [(dict(loss="penalty", max_bos_mass=settings.max_bos_mass, bos_weight=w,
                  leak=leak if leaky else 0.0, **common), not leaky or leak == 0.0)
            for w, leak in PENALTY_STAGES]
