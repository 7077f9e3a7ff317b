"""``sinkproof.search``: seeded restarts in parallel, then the trusted check of the best candidate.

Restarts are independent (:mod:`sinkproof.search.restart`); their results are
consumed in index order, and the answer is the lowest-index restart whose model is
feasible in float64 *and* passes the high-precision check on the whole family.
So the same seed gives the same answer with any number of processes (unless a
time ``budget`` cuts the run short, which depends on the machine's speed).
"""

from __future__ import annotations

import atexit
import signal
import time
from collections.abc import Iterator
from contextlib import closing
from multiprocessing.pool import Pool
from typing import Any

from .._validate import as_int, as_real, choice
from ..errors import CertificateError, SinkproofError
from ..exact_numbers import bos_mass, error_level
from ..model import KINDS, AttentionModel
from ..progress import Progress
from ..task import TriggerTask
from ..tasks.protocol import require_setting
from ..workers import available_cores as _cores
from ..workers import pool as _pool
from ..workers import shared_counter as _context_value
from .objective import bos_measure_kind, prefix_batch, witness_measure
from .restart import RestartOutcome, SearchSettings, pareto, run_restart
from .result import SearchResult, TracePoint
from .verify import verify_witness

VALUES = ("learned", "fixed")


class SearchBudgetError(SinkproofError):
    """The time budget ran out before any restart finished (nothing to report)."""

_WORKER: dict[str, Any] = {}


def _init_worker(epoch: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    _WORKER["epoch"] = epoch


def _cancelled(epoch: int) -> bool:
    """The parent stopped the search that submitted this job (:func:`_outcomes`)."""
    return _WORKER["epoch"].value != epoch


def _work(job: tuple[SearchSettings, int, int]) -> RestartOutcome | None:
    """Restart ``index`` of ``settings`` (the worker keeps the last batch it built);
    ``None`` past the deadline or once the search was stopped."""
    settings, index, epoch = job
    if _cancelled(epoch) or (settings.deadline is not None and time.time() > settings.deadline):
        return None
    key = (settings.task, settings.where)
    if _WORKER.get("key") != key:
        _WORKER.update(key=key, batch=prefix_batch(settings.task, where=settings.where))
    return run_restart(settings, _WORKER["batch"], index, stop=lambda: _cancelled(epoch))


_POOLS: dict[int, tuple[Pool, Any]] = {}
"""Worker pools (with their search counter) kept between searches of this process, so
later searches skip the workers' start-up and compilation."""


def _shared_pool(processes: int) -> tuple[Pool, Any]:
    if processes not in _POOLS:
        epoch = _context_value()
        _POOLS[processes] = (_pool(processes, initializer=_init_worker, initargs=(epoch,)),
                             epoch)
    return _POOLS[processes]


def _drop_pool(processes: int) -> None:
    pool, _ = _POOLS.pop(processes, (None, None))
    if pool is not None:
        pool.terminate()
        pool.join()


@atexit.register
def _drop_pools() -> None:
    """Stop the kept pools before interpreter teardown (whose ``Pool.__del__`` would print
    an ignored exception on the user's terminal)."""
    for processes in list(_POOLS):
        _drop_pool(processes)


def available_cores() -> int:
    """Number of CPU cores this process may run on."""
    return len(_cores())


def _outcomes(settings: SearchSettings, restarts: int, processes: int
              ) -> Iterator[RestartOutcome | None]:
    """Restart outcomes in index order, computed in ``processes`` worker processes
    (each with one compute thread: :mod:`sinkproof.workers`).  The
    pool outlives the call when every restart was consumed, so later searches of this
    process skip the workers' start-up and compilation."""
    if processes == 1:
        batch = prefix_batch(settings.task, where=settings.where)
        for i in range(restarts):
            if settings.deadline is not None and time.time() > settings.deadline:
                yield None
                continue
            yield run_restart(settings, batch, i)
        return
    pool, epoch = _shared_pool(processes)
    current = epoch.value
    try:
        yield from pool.imap(_work, [(settings, i, current) for i in range(restarts)])
    except (KeyboardInterrupt, Exception):  # Ctrl-C or an error while waiting on workers
        _drop_pool(processes)
        raise
    finally:  # stopped early (a witness): the workers skip or cut what is left
        with epoch.get_lock():
            epoch.value = current + 1


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
) -> SearchResult:
    """Look for ``A`` (and ``U`` when ``values="learned"``) with error ``<= max_error``
    on the whole family and BOS mass ``<= max_bos_mass`` in every head at ``where``.

    ``where``: ``"nontrigger"``, ``"trigger"``, ``"all"`` (positions ``t >= 1``) or a set
    of ``(sequence, position)`` pairs.  ``restarts`` seeded L-BFGS-B restarts run on
    ``processes`` cores (default: all available); ``budget`` caps the wall-clock
    seconds.  ``found`` is true only after the trusted checker has confirmed both
    conditions on the whole family at ``dps`` digits.  Ctrl-C returns the best so far.
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
    cores = available_cores() if processes is None else as_int("processes", processes, 1)
    processes = min(cores, restarts)
    if not isinstance(where, str):
        where = frozenset((tuple(int(x) for x in seq), int(pos)) for seq, pos in where)
    batch = prefix_batch(task, where=where)  # validates where against the family
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
            with closing(_outcomes(settings, restarts, processes)) as outcomes:
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
