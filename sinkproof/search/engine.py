"""``sinkproof.search``: the one search engine -- seeded restarts in parallel, then the
trusted check of the best candidate.

What it searches is options, not forks: the optimiser (``"lbfgsb"``, L-BFGS-B on the prefix
batch of a task with positions, :mod:`sinkproof.search.lbfgsb`; ``"adam"``, Adam over
full-width stacks on whole sequences of a fixed-length task, :mod:`sinkproof.search.adam`),
the model's shape (``layers``, ``heads``, ``residual``), the BOS ``measure`` and the
``objective``.  One restart loop runs either optimiser's restarts: they are independent
(:mod:`sinkproof.search.restart`), run on any :class:`~sinkproof.executor.Executor`, and
their results are consumed in index order.  The answer is the lowest-index restart whose
model is feasible in float64 *and* passes the trusted check on the whole family (where the
optimiser's model has one in memory), else the closest restart.  So the same seed gives
the same answer with any number of processes.  The budget is deterministic: ``restarts``
× ``maxiter`` steps.  Wall time (``budget`` seconds) is only a safety stop; a search it
cut short says so (``stopped_by == "wall_time"``, *Open for time*), since that answer
depends on the machine's speed and load.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import replace
from types import ModuleType
from typing import Any

from .._validate import as_int, as_real, choice
from ..attention import bos_measure as bos_measure  # the BOS measure of claims (numpy-only)
from ..errors import CertificateError, SinkproofError
from ..exact_numbers import bos_mass, error_level
from ..executor import Executor, SerialExecutor, cancelled, shared_processes
from ..executor import available_cores as available_cores
from ..model import KINDS
from ..progress import Progress
from ..tasks.protocol import Task, require
from ..work import SEARCH_MAX_WORK, product, refuse_beyond
from . import adam, lbfgsb
from .objective import bos_measure_kind, witness_measure
from .restart import OPTIMISERS, RestartOutcome, SearchSettings, pareto
from .result import SearchResult, StackSearchResult, TracePoint

VALUES = ("learned", "fixed")
OBJECTIVES = ("penalty", "sink")
MEASURES = ("weight", "share")
_MODULES: dict[str, ModuleType] = {"lbfgsb": lbfgsb, "adam": adam}
_OTHER = {"lbfgsb": "stacks, residual connections and starting weights: optimiser='adam', "
                    "on a task of one fixed length",
          "adam": "other positions, objectives and measures: optimiser='lbfgsb', one layer "
                  "on a task with positions"}
"""Where the options an optimiser refuses are taken (the refusal says it)."""

__all__ = ["SearchBudgetError", "SearchResult", "StackSearchResult", "available_cores",
           "bos_measure", "restart_executor", "restart_job", "run_restart", "search",
           "search_stack"]


class SearchBudgetError(SinkproofError):
    """The time budget ran out before any restart finished (nothing to report);
    ``result``: the empty result (``model is None``, ``stopped_by == "wall_time"``)."""

    def __init__(self, message: str, result: SearchResult | None = None) -> None:
        super().__init__(message)
        self.result = result


def optimiser_module(settings: SearchSettings) -> ModuleType:
    """The module of ``settings.optimiser`` (:data:`~sinkproof.search.restart.OPTIMISERS`)."""
    return _MODULES[settings.optimiser]


_PREPARED: list[tuple[Any, Any]] = []
"""The last search this process prepared (its batch or compiled steps), with its key (a
worker runs many restarts of one search in a row)."""


def prepared(settings: SearchSettings) -> Any:
    """What the restarts of ``settings`` share: the optimiser's :func:`prepare`, kept."""
    module = optimiser_module(settings)
    key = (settings.optimiser, module.key(settings))
    last = _PREPARED[0] if _PREPARED else None  # one read: threads of one worker may share it
    if last is not None and last[0] == key:
        return last[1]
    data = module.prepare(settings)
    _PREPARED[:] = [(key, data)]
    return data


def run_restart(settings: SearchSettings, data: Any, index: int,
                stop: Callable[[], bool] | None = None) -> RestartOutcome:
    """Restart ``index`` of ``settings`` on its optimiser, from the prepared ``data``."""
    return optimiser_module(settings).run(settings, data, index, stop)


def restart_job(job: tuple[SearchSettings, int]) -> RestartOutcome | None:
    """Restart ``index`` of ``settings``, wherever an executor runs it; ``None`` past the
    deadline or once the search that submitted it stopped (:func:`executor.cancelled`)."""
    settings, index = job
    if cancelled() or (settings.deadline is not None and time.time() > settings.deadline):
        return None
    return run_restart(settings, prepared(settings), index, stop=cancelled)


def restart_executor(processes: int) -> Executor:
    """Where ``processes`` runs restarts: this process for 1 (JAX may use every core it
    may run on), else a kept pool of that many one-thread workers
    (:func:`sinkproof.executor.shared_processes`: later searches skip the workers'
    start-up and compilation)."""
    return SerialExecutor() if processes == 1 else shared_processes(processes)


def _outcomes(settings: SearchSettings, restarts: int, processes: int,
              executor: Executor | None = None) -> Iterator[RestartOutcome | None]:
    """Restart outcomes in index order, computed on ``executor`` (default:
    :func:`restart_executor` of ``processes``).  Closing the iterator stops the
    restarts still running; a restart that raised raises here."""
    ex = restart_executor(processes) if executor is None else executor
    with closing(ex.map(restart_job, [(settings, i) for i in range(restarts)])) as results:
        for result in results:
            if not result.ok:
                if result.exception is None:
                    raise RuntimeError(f"a search restart failed: {result.error}")
                if result.exception.__traceback__ is None and result.details:
                    result.exception.add_note(f"in the worker:\n{result.details}")
                raise result.exception
            yield result.value


def _where_text(where: Any) -> str:
    if isinstance(where, str):
        return {"nontrigger": "non-trigger positions", "trigger": "trigger positions",
                "all": "all positions t >= 1"}[where]
    return f"{len(where)} named position(s)"


def _choose_optimiser(task: Task, optimiser: str | None, layers: int,
                      residual: bool) -> str:
    """The optimiser asked for, else by capability: L-BFGS-B for one layer without
    residual on a task with positions, Adam on a task of one fixed length."""
    if optimiser is not None:
        return choice("optimiser", optimiser, OPTIMISERS)
    if getattr(task, "has_positions", False) and layers == 1 and not residual:
        return "lbfgsb"
    return "adam" if getattr(task, "fixed_length", False) else "lbfgsb"


def _unsupported(optimiser: str, kind: str, layers: int, residual: bool, where: Any,
                 objective: str, measure: str, init: Any) -> list[str]:
    """The options ``optimiser`` does not take (empty: the combination is supported)."""
    if optimiser == "lbfgsb":
        return ([f"layers={layers}"] * (layers != 1) + ["residual=True"] * residual
                + ["init=... (starting weights)"] * (init is not None)
                + [f"measure={measure!r} for {kind} (it bounds the "
                   f"{witness_measure(kind)})"] * (measure != witness_measure(kind)))
    return ([f"where={where!r} (it bounds every non-trigger position)"]
            * (where != "nontrigger") + [f"objective={objective!r}"] * (objective != "penalty"))


def search(
    task: Task,
    kind: str = "softmax",
    heads: int = 1,
    values: str = "learned",
    max_error: float = 0.1,
    max_bos_mass: float = 0.5,
    where: Any = "nontrigger",
    restarts: int = 8,
    seed: int = 0,
    budget: float | None = None,
    processes: int | None = None,
    *,
    maxiter: int = 300,
    dps: int = 50,
    progress: bool | None = None,
    executor: Executor | None = None,
    max_work: int | None = None,
    optimiser: str | None = None,
    layers: int = 1,
    residual: bool | None = None,
    objective: str = "penalty",
    measure: str | None = None,
    samples: int = 256,
    lr: float = 1e-2,
    init_scale: float | None = None,
    init: dict[str, Any] | None = None,
) -> SearchResult:
    """Look for a model with error ``<= max_error`` on the whole family and BOS measure
    ``<= max_bos_mass`` in every head at ``where`` (the one search engine).

    The model: ``layers`` layers of ``heads`` heads of ``kind`` with ``values`` (``"learned"``
    or ``"fixed"``); ``residual`` connections ``x <- x + layer(x)`` (default: when
    ``layers > 1``).  ``optimiser``: ``"lbfgsb"`` (one layer, no residual, a task with
    positions: scores ``A`` and values ``U`` on the prefix batch, L-BFGS-B stages of a
    penalty continuation) or ``"adam"`` (full-width stacks on whole sequences of a
    fixed-length task: ``samples`` seeded sequences where the family has more than
    :data:`~sinkproof.search.adam.MAX_FAMILY`, learning rate ``lr``, restart 0 from
    ``init`` weights ``W_Q, W_K, W_V, W_O`` where given); default: ``"lbfgsb"`` where the
    task and shape allow it, else ``"adam"``.  ``objective``: ``"penalty"`` (find a
    feasible point) or ``"sink"`` (L-BFGS-B, maps whose BOS weight is never 0: minimise
    the BOS mass at accuracy ``max_error``).  ``measure``: ``"weight"`` (``α_0``) or
    ``"share"`` (``α_0 / Σ_j α_j``); default: the one the trusted checker states for the
    model (L-BFGS-B takes only that one).  An option the optimiser does not take is
    refused with one ValueError naming it.

    ``where``: ``"nontrigger"``, ``"trigger"``, ``"all"`` (positions ``t >= 1``) or a set
    of ``(sequence, position)`` pairs (Adam: ``"nontrigger"`` only).  ``restarts`` seeded
    restarts of ``maxiter`` steps run on ``processes`` cores (default: all available), or
    on ``executor`` (any :class:`~sinkproof.executor.Executor`, a Dask cluster included;
    ``processes`` is then ignored); the answer does not depend on where they run.
    ``budget`` caps the wall-clock seconds as a safety stop only (the result's
    ``stopped_by`` says whether it, the deterministic budget ``restarts`` × ``maxiter``, a
    witness or Ctrl-C ended the search).  ``found`` is true only after the trusted
    checker has confirmed both conditions on the whole family at ``dps`` digits (L-BFGS-B's
    one-layer models; a stack's witness is a file the caller writes and verifies).
    Ctrl-C returns the best so far.  ``max_work``: the most head evaluations (restarts x
    steps x positions x layers x heads) before it refuses to start (default
    :data:`~sinkproof.work.SEARCH_MAX_WORK`).
    """
    choice("attention kind", kind, KINDS)
    choice("values", values, VALUES)
    choice("objective", objective, OBJECTIVES)
    heads = as_int("heads", heads, minimum=1)
    layers = as_int("layers", layers, minimum=1)
    residual = layers > 1 if residual is None else bool(residual)
    optimiser = _choose_optimiser(task, optimiser, layers, residual)
    require(task, "has_positions" if optimiser == "lbfgsb" else "fixed_length",
            f"the {'prefix' if optimiser == 'lbfgsb' else 'stack'} search "
            f"(sp.search, optimiser={optimiser!r})")
    if measure is not None:
        choice("measure", measure, MEASURES)
    measure = measure or (witness_measure(kind) if optimiser == "lbfgsb" else bos_measure(kind))
    if not isinstance(where, str):
        where = frozenset((tuple(int(x) for x in seq), int(pos)) for seq, pos in where)
    bad = _unsupported(optimiser, kind, layers, residual, where, objective, measure, init)
    if bad:
        raise ValueError(f"optimiser={optimiser!r} does not take {', '.join(bad)} "
                         f"({_OTHER[optimiser]})")
    # the search works in floats; the range checks are exact and shared with claims and CLI
    max_error = float(error_level(max_error, "max_error", positive=True))
    max_bos_mass = float(bos_mass(max_bos_mass, "max_bos_mass"))
    if bos_measure_kind(kind) == "log_odds" and max_bos_mass == 0.0:
        raise ValueError(f"max_bos_mass must be > 0 for {kind}: its BOS weight is never 0")
    if objective == "sink" and bos_measure_kind(kind) != "log_odds":
        raise ValueError(f"objective='sink' minimises a BOS mass that is never 0; for "
                         f"{kind} (exact zeros) search with max_bos_mass=0")
    restarts = as_int("restarts", restarts, minimum=1)
    seed = as_int("seed", seed, minimum=0)
    maxiter = as_int("maxiter", maxiter, minimum=1)
    dps = as_int("dps", dps, minimum=15)
    samples = as_int("samples", samples, minimum=1)
    lr = as_real("lr", lr, minimum=0.0, strict=True)
    if init_scale is not None:
        init_scale = as_real("init_scale", init_scale, minimum=0.0, strict=True)
    if budget is not None:
        budget = as_real("budget", budget, minimum=0.0, strict=True)
    if getattr(task, "residual", residual) != residual:  # the targets follow the stack
        task = task.replace(residual=residual)
    settings = SearchSettings(task, kind, heads, values, max_error, max_bos_mass, where,
                              seed, maxiter=maxiter, objective=objective,
                              init_scale=init_scale, optimiser=optimiser, layers=layers,
                              residual=residual, measure=measure, samples=samples, lr=lr,
                              init=init)
    module = optimiser_module(settings)
    refuse_beyond("head evaluations of the search (restarts x steps x positions x layers x "
                  "heads)", product(restarts, maxiter, module.positions(settings), layers,
                                    heads), max_work, SEARCH_MAX_WORK)
    cores = available_cores() if processes is None else as_int("processes", processes, 1)
    processes = min(cores, restarts) if executor is None else executor.workers
    data = prepared(settings)  # validates where against the family
    if getattr(data, "n_constrained", 1) == 0 and max_bos_mass < 1.0:
        raise ValueError(f"where={where!r} selects no position of the family")
    source, n_sequences = module.trained_on(settings, data)
    start = time.perf_counter()
    deadline = None if budget is None else time.time() + budget
    settings = replace(settings, deadline=deadline)
    verify = getattr(module, "verify", None)  # the trusted check in memory, where there is one

    done: list[RestartOutcome] = []
    timed_out = False
    witness = None
    chosen: RestartOutcome | None = None
    candidates = rejected = 0
    interrupted = False
    with Progress(restarts, "search", progress, threshold=2) as bar:
        try:
            with closing(_outcomes(settings, restarts, processes, executor)) as outcomes:
                for outcome in outcomes:
                    bar.update(1)
                    if outcome is None:  # skipped: past the deadline, or cancelled
                        timed_out = timed_out or deadline is not None
                        continue
                    timed_out = timed_out or outcome.cut
                    done.append(outcome)
                    if not outcome.feasible(max_error, max_bos_mass):
                        continue
                    candidates += 1
                    if verify is None:
                        continue
                    try:
                        report = verify(settings, module.model(settings, outcome), dps)
                    except CertificateError:  # outside the checker's range (huge logits)
                        rejected += 1
                        continue
                    if report.verified:
                        witness, chosen = report, outcome
                        break
                    rejected += 1
        except KeyboardInterrupt:
            interrupted = True
    ranked = [(r, o.index, o) for o in done if (r := module.rank(settings, o)) is not None]
    if chosen is None and ranked:
        chosen = min(ranked, key=lambda t: t[:2])[2]
    stopped_by = ("found" if witness is not None else "interrupted" if interrupted
                  else "wall_time" if timed_out else "budget")
    result = SearchResult(
        found=witness is not None,
        model=None if chosen is None else module.model(settings, chosen),
        error=float("inf") if chosen is None else chosen.error,
        bos_mass=float("inf") if chosen is None else chosen.bos_mass,
        verified=witness is not None,
        witness=witness,
        trace=tuple(TracePoint(e, b) for e, b in pareto([p for o in done for p in o.points])),
        restarts=len(done),
        candidates=candidates,
        rejected=rejected,
        seconds=time.perf_counter() - start,
        interrupted=interrupted,
        stopped_by=stopped_by,
        settings=dict(kind=kind, heads=heads, values=values, max_error=max_error,
                      max_bos_mass=max_bos_mass, where=where, where_text=_where_text(where),
                      restarts=restarts, seed=seed, budget=budget, processes=processes,
                      maxiter=maxiter, dps=dps, optimiser=optimiser, layers=layers,
                      residual=residual, objective=objective, measure=measure,
                      samples=samples, lr=lr, init_scale=init_scale),
        params=None if chosen is None else _parameters(chosen),
        ends=tuple(sorted(TracePoint(o.error, o.bos_mass) for _, _, o in ranked)),
        source=source,
        n_sequences=n_sequences,
    )
    if not done and interrupted:
        raise KeyboardInterrupt("search interrupted before any restart finished")
    if not done:
        raise SearchBudgetError(f"no restart finished within the budget of {budget or 0:g} s "
                                "(the workers' start-up and compilation count against it)",
                                result)
    return result  # model None only where every restart diverged (Adam: no finite error)


def _parameters(outcome: RestartOutcome) -> dict[str, Any]:
    one_layer = {"A": outcome.A, "U": outcome.U} if outcome.A is not None else {}
    return {**{k: v for k, v in one_layer.items() if v is not None}, **outcome.extra}


def search_stack(task: Task, kind: str, layers: int, heads: int, *, max_error: float,
                 max_bos_mass: float, values: str = "learned", restarts: int = 4,
                 steps: int = 1500, seed: int = 0, budget: float = 30.0, samples: int = 256,
                 lr: float = 1e-2, init_std: float = 0.3,
                 max_work: int | None = None, residual: bool | None = None,
                 init: dict[str, Any] | None = None) -> StackSearchResult:
    """:func:`search` with ``optimiser="adam"`` (an alias kept for its callers): a stack of
    ``layers`` layers of ``heads`` full-width heads with error ``<= max_error`` and BOS
    measure ``<= max_bos_mass`` at every non-trigger position, ``restarts`` restarts of
    ``steps`` Adam steps in this process, at most ``budget`` seconds (a safety stop),
    initial weights N(0, ``init_std``²).  Where no restart finished within the budget it
    returns the empty result (``params is None``) instead of raising
    :class:`SearchBudgetError`."""
    try:
        return search(task, kind, heads, values, max_error, max_bos_mass, restarts=restarts,
                      seed=seed, budget=budget, processes=1, maxiter=steps, max_work=max_work,
                      optimiser="adam", layers=layers, residual=residual, samples=samples,
                      lr=lr, init_scale=init_std, init=init)
    except SearchBudgetError as exc:
        if exc.result is None:
            raise
        return exc.result
