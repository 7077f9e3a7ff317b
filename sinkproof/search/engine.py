"""``sinkproof.search``: seeded restarts in parallel, then the trusted check of the best candidate.

Restarts are independent (:mod:`sinkproof.search.restart`); their results are
consumed in index order, and the answer is the lowest-index restart whose model is
feasible in float64 *and* passes the high-precision check on the whole family.
So the same seed gives the same answer with any number of processes, on any
:class:`~sinkproof.executor.Executor` (unless a time ``budget`` cuts the run short,
which depends on the machine's speed).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import closing
from typing import Any

from .._validate import as_int, as_real, choice
from ..errors import CertificateError, SinkproofError
from ..exact_numbers import bos_mass, error_level
from ..executor import Executor, SerialExecutor, cancelled, shared_processes
from ..executor import available_cores as available_cores
from ..model import KINDS, AttentionModel
from ..progress import Progress
from ..task import TriggerTask
from ..tasks.protocol import require_setting
from ..work import SEARCH_MAX_WORK, product, refuse_beyond
from .objective import PrefixBatch, bos_measure_kind, prefix_batch, witness_measure
from .restart import RestartOutcome, SearchSettings, pareto, run_restart
from .result import SearchResult, TracePoint
from .verify import verify_witness

VALUES = ("learned", "fixed")



class SearchBudgetError(SinkproofError):
    """The time budget ran out before any restart finished (nothing to report)."""


_BATCH: list[tuple[Any, PrefixBatch]] = []
"""The last batch this process built, with its ``(task, where)`` (a worker runs many
restarts of one search in a row)."""


def _batch(task: TriggerTask, where: Any) -> PrefixBatch:
    key = (task, where)
    last = _BATCH[0] if _BATCH else None  # one read: threads of one worker may share it
    if last is not None and last[0] == key:
        return last[1]
    batch = prefix_batch(task, where=where)
    _BATCH[:] = [(key, batch)]
    return batch


def restart_job(job: tuple[SearchSettings, int]) -> RestartOutcome | None:
    """Restart ``index`` of ``settings``, wherever an executor runs it; ``None`` past the
    deadline or once the search that submitted it stopped (:func:`executor.cancelled`)."""
    settings, index = job
    if cancelled() or (settings.deadline is not None and time.time() > settings.deadline):
        return None
    return run_restart(settings, _batch(settings.task, settings.where), index, stop=cancelled)


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


def search(
    task: TriggerTask,
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
) -> SearchResult:
    """Look for ``A`` (and ``U`` when ``values="learned"``) with error ``<= max_error``
    on the whole family and BOS mass ``<= max_bos_mass`` in every head at ``where``.

    ``where``: ``"nontrigger"``, ``"trigger"``, ``"all"`` (positions ``t >= 1``) or a set
    of ``(sequence, position)`` pairs.  ``restarts`` seeded L-BFGS-B restarts run on
    ``processes`` cores (default: all available), or on ``executor`` (any
    :class:`~sinkproof.executor.Executor`, a Dask cluster included; ``processes`` is then
    ignored); the answer does not depend on where they run.  ``budget`` caps the
    wall-clock seconds.  ``found`` is true only after the trusted checker has confirmed both
    conditions on the whole family at ``dps`` digits.  Ctrl-C returns the best so far.
    ``max_work``: the most head evaluations (restarts x maxiter x positions x heads)
    before it refuses to start (default :data:`~sinkproof.work.SEARCH_MAX_WORK`).
    """
    require_setting(task, "trigger")
    choice("attention kind", kind, KINDS)
    choice("values", values, VALUES)
    heads = as_int("heads", heads, minimum=1)
    # the search works in floats; the range checks are exact and shared with claims and CLI
    max_error = float(error_level(max_error, "max_error", positive=True))
    max_bos_mass = float(bos_mass(max_bos_mass, "max_bos_mass"))
    if bos_measure_kind(kind) == "log_odds" and max_bos_mass == 0.0:
        raise ValueError(f"max_bos_mass must be > 0 for {kind}: its BOS weight is never 0")
    restarts = as_int("restarts", restarts, minimum=1)
    seed = as_int("seed", seed, minimum=0)
    maxiter = as_int("maxiter", maxiter, minimum=1)
    dps = as_int("dps", dps, minimum=15)
    if budget is not None:
        budget = as_real("budget", budget, minimum=0.0, strict=True)
    refuse_beyond("head evaluations of the search (restarts x steps x positions x heads)",
                  product(restarts, maxiter, task.n_positions, heads), max_work, SEARCH_MAX_WORK)
    cores = available_cores() if processes is None else as_int("processes", processes, 1)
    processes = min(cores, restarts) if executor is None else executor.workers
    if not isinstance(where, str):
        where = frozenset((tuple(int(x) for x in seq), int(pos)) for seq, pos in where)
    batch = _batch(task, where)  # validates where against the family
    if batch.n_constrained == 0 and max_bos_mass < 1.0:
        raise ValueError(f"where={where!r} selects no position of the family")
    start = time.perf_counter()
    deadline = None if budget is None else time.time() + budget
    settings = SearchSettings(task, kind, heads, values, max_error, max_bos_mass, where,
                              seed, maxiter=maxiter, deadline=deadline)

    done: list[RestartOutcome] = []
    witness = None
    chosen: RestartOutcome | None = None
    candidates = rejected = 0
    interrupted = False
    with Progress(restarts, "search", progress, threshold=2) as bar:
        try:
            with closing(_outcomes(settings, restarts, processes, executor)) as outcomes:
                for outcome in outcomes:
                    bar.update(1)
                    if outcome is None:
                        continue
                    done.append(outcome)
                    if not outcome.feasible(max_error, max_bos_mass):
                        continue
                    candidates += 1
                    try:
                        report = verify_witness(_model(settings, outcome), max_error,
                                                max_bos_mass, where, dps,
                                                measure=witness_measure(kind))
                    except CertificateError:  # outside the checker's range (huge logits)
                        rejected += 1
                        continue
                    if report.verified:
                        witness, chosen = report, outcome
                        break
                    rejected += 1
        except KeyboardInterrupt:
            interrupted = True
    if chosen is None and done:
        chosen = min(done, key=lambda o: (o.penalty, o.index))
    if chosen is None and not interrupted:
        raise SearchBudgetError(f"no restart finished within the budget of {budget:g} s "
                                "(the workers' start-up and compilation count against it)")
    if chosen is None:
        raise KeyboardInterrupt("search interrupted before any restart finished")
    points = pareto([p for o in done for p in o.points])
    return SearchResult(
        found=witness is not None,
        model=_model(settings, chosen),
        error=chosen.error,
        bos_mass=chosen.bos_mass,
        verified=witness is not None,
        witness=witness,
        trace=tuple(TracePoint(e, b) for e, b in points),
        restarts=len(done),
        candidates=candidates,
        rejected=rejected,
        seconds=time.perf_counter() - start,
        interrupted=interrupted,
        settings=dict(kind=kind, heads=heads, values=values, max_error=max_error,
                      max_bos_mass=max_bos_mass, where=where, where_text=_where_text(where),
                      restarts=restarts, seed=seed, budget=budget, processes=processes,
                      maxiter=maxiter, dps=dps),
    )


def _model(settings: SearchSettings, outcome: RestartOutcome) -> AttentionModel:
    return AttentionModel(settings.task, settings.kind, A=outcome.A, U=outcome.U,
                          **outcome.extra)
