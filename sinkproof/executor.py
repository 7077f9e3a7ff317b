"""Where independent jobs run: in this process, in local worker processes, or on Dask.

One abstraction for every fan-out of the project (sweeps, search restarts, training
runs): :meth:`Executor.run` takes a picklable function and a list of arguments and
yields ``(index, JobResult)`` in completion order (:meth:`Executor.map`: in argument
order).  A job that raises is recorded with its error message and never stops the
others; so is a job whose worker process died.  A long job may poll :func:`cancelled`
and return early once the caller stopped consuming its run (or pressed Ctrl-C).

Worker processes limit their BLAS and XLA threads to one each, so ``n`` workers on
``n`` cores run ``n`` computations side by side instead of ``n`` times as many threads
time-slicing (``benchmarks/bench_restarts.py`` counts the threads that compute).  They
are not pinned to cores: on a machine shared with other work a pinned worker stays on
its core however busy it is (measured slower).  They are started by loky as fresh
interpreters, never forked from the caller (forking a process whose JAX runtime has
started threads can deadlock) and never importing the caller's main module (so a script
without a main guard works).  They ignore Ctrl-C; the parent stops them, and every pool
is shut down when this process exits (:func:`shutdown_all`).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import pickle
import shutil
import sys
import tempfile
import threading
import time
import traceback
import uuid
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .interrupts import blocked_while_spawning, ignore_in_worker

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "BLIS_NUM_THREADS", "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
"""Environment variables that cap the thread pools of the numerical libraries."""

SINGLE_THREAD_XLA = "--xla_cpu_multi_thread_eigen=false"
"""XLA flag: the Eigen kernels (matrix products) of a computation run on one thread."""

XLA_POOL_VARIABLE = "NPROC"
"""Environment variable by which XLA's CPU client sizes its intra-op thread pool when its
runtime starts (else: one thread per core).  Without it at 1, a worker's every
computation was split over one thread per core, whatever ``XLA_FLAGS`` said: 4-5 threads
computed in each "one-thread" worker."""

PRELOAD = ("sinkproof.search.engine", "sinkproof.experiment.runner")
"""Modules a worker process imports when it starts (after limiting its threads), so that
its first job does not wait for them: the default, for the searches and experiments,
which compute with JAX.  A pool whose jobs need less names its own
(:func:`shared_processes`'s ``preload``)."""

FLAG_POLL = 0.05
"""Seconds between two looks of a pool worker's job at its run's cancellation file."""

DASK_POLL = 0.5
"""Seconds between two looks of a Dask job at its run's cancellation event."""


@dataclass(frozen=True)
class JobResult:
    """The outcome of one job: ``value`` when ``ok``, else ``error`` (one line) and
    ``details`` (the traceback); ``seconds`` of wall time inside the worker.
    ``exception`` is the exception itself when it could travel back (else ``None``)."""

    ok: bool
    value: Any = None
    error: str = ""
    details: str = ""
    seconds: float = 0.0
    exception: BaseException | None = field(default=None, compare=False, repr=False)


def limit_threads() -> None:
    """Cap BLAS/OpenMP pools at one thread and XLA at one CPU thread in this process (a
    worker's), and leave Ctrl-C to the parent, which stops the workers.  XLA reads its
    settings when its runtime starts: call this before the first JAX computation.

    Where JAX is already imported (a pool worker: it imports :data:`PRELOAD` at start), its
    computations also run on the calling thread instead of a dispatch thread of their
    own, so exactly one thread computes (one hand-over fewer per evaluation)."""
    ignore_in_worker()
    for name in (*THREAD_VARIABLES, XLA_POOL_VARIABLE):
        os.environ[name] = "1"
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_cpu_multi_thread_eigen" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {SINGLE_THREAD_XLA}".strip()
    jax = sys.modules.get("jax")
    if jax is not None:
        jax.config.update("jax_cpu_enable_async_dispatch", False)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        return
    threadpool_limits(1)


# ------------------------------------------------------------------ cancellation
_JOB = threading.local()
"""The cancellation token of the job running in this thread (``call_job`` sets it)."""

class _PoolFlag:
    """A process-pool run was stopped: its flag file exists (looked at every
    :data:`FLAG_POLL` s).  A file, not shared memory: loky's workers are fresh
    interpreters that receive their arguments pickled, and a path travels anywhere."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._seen = False
        self._next = 0.0

    def cancelled(self) -> bool:
        now = time.monotonic()
        if not self._seen and now >= self._next:
            self._next = now + FLAG_POLL
            self._seen = os.path.exists(self.path)
        return self._seen

    def set(self) -> None:
        """Mark the run stopped."""
        with contextlib.suppress(OSError):  # the folder is gone: this process is exiting
            Path(self.path).touch()

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"])  # type: ignore[misc]


class _DaskFlag:
    """A Dask run was stopped: its named event is set (looked at every DASK_POLL s)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._seen = False
        self._next = 0.0

    def cancelled(self) -> bool:
        now = time.monotonic()
        if not self._seen and now >= self._next:
            self._next = now + DASK_POLL
            from distributed import Event

            self._seen = bool(Event(self.name).is_set())
        return self._seen

    def __getstate__(self) -> dict[str, Any]:
        return {"name": self.name}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["name"])  # type: ignore[misc]


def cancelled() -> bool:
    """Whether the run that submitted the job running in this thread has been stopped
    (its caller stopped early or pressed Ctrl-C).  Always false outside a job, and in
    the serial executor (where the caller waits for each job)."""
    token = getattr(_JOB, "token", None)
    return token is not None and token.cancelled()


def _travels(exc: BaseException) -> BaseException | None:
    try:
        pickle.dumps(exc)
    except Exception:  # noqa: BLE001 - any failure means: it cannot travel
        return None
    return exc


def call_job(fn: Callable[[Any], Any], arg: Any, token: Any = None) -> JobResult:
    """Run ``fn(arg)`` and capture its value or its error (never raises, but for Ctrl-C);
    ``token`` answers :func:`cancelled` meanwhile."""
    if token is not None and token.cancelled():
        return JobResult(False, error="cancelled before it started")
    start = time.perf_counter()
    _JOB.token = token
    try:
        value = fn(arg)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - a failed job is data, not a crash
        message = str(exc).splitlines()[0] if str(exc) else ""
        return JobResult(False, error=f"{type(exc).__name__}: {message}".rstrip(": "),
                         details=traceback.format_exc(), seconds=time.perf_counter() - start,
                         exception=_travels(exc))
    finally:
        _JOB.token = None
    return JobResult(True, value=value, seconds=time.perf_counter() - start)


def _lost(exc: BaseException, what: str) -> JobResult:
    """A job that produced no result: its worker died, or it was cancelled."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return JobResult(False, error=f"{what} ({type(exc).__name__}{': ' + text if text else ''})")


# --------------------------------------------------------------------- executors
class Executor:
    """Runs jobs; subclasses decide where.  Use as a context manager."""

    workers: int = 1
    name: str = "serial"

    def run(self, fn: Callable[[Any], Any], args: Sequence[Any]) -> Iterator[tuple[int, JobResult]]:
        """Yield ``(i, result of fn(args[i]))`` for every ``i``, in completion order."""
        for i, arg in enumerate(args):
            yield i, call_job(fn, arg)

    def map(self, fn: Callable[[Any], Any], args: Sequence[Any]) -> Iterator[JobResult]:
        """The results of :meth:`run` in argument order, each as soon as it and every
        job before it have finished.  Closing the iterator stops the run."""
        ready: dict[int, JobResult] = {}
        following = 0
        run = self.run(fn, args)
        try:
            for i, result in run:
                ready[i] = result
                while following in ready:
                    yield ready.pop(following)
                    following += 1
        finally:
            run.close()

    def describe(self) -> str:
        """One line: where the jobs run and on how many workers."""
        return "serial: every job in this process"

    def close(self) -> None:
        """Release workers."""

    def stop(self) -> None:
        """Release workers now, without waiting for the jobs they run (after Ctrl-C)."""
        self.close()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(workers={self.workers})"


class SerialExecutor(Executor):
    """Every job in this process, one after another."""


def _loky() -> Any:
    """The ``loky`` package (a core dependency; joblib's vendored copy where only joblib
    is installed), or ``None``."""
    try:
        import loky
    except ImportError:
        try:
            from joblib.externals import loky
        except ImportError:
            return None
    return loky


_FLAG_DIR: list[str] = []
"""The folder of this process's cancellation files (made on first use, removed at exit)."""


def _new_flag() -> _PoolFlag:
    """A fresh cancellation flag for one process-pool run."""
    if not _FLAG_DIR:
        _FLAG_DIR.append(tempfile.mkdtemp(prefix="sinkproof-runs-"))
    return _PoolFlag(os.path.join(_FLAG_DIR[0], uuid.uuid4().hex))


def available_cores() -> int:
    """Cores this process may run on."""
    return len(core_set())


def core_set() -> list[int]:
    """The cores this process may run on (all of ``os.cpu_count()`` off Linux)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return list(range(os.cpu_count() or 1))


def _start_worker(preload: Sequence[str] = PRELOAD) -> None:
    """Pool worker initialiser: leave Ctrl-C to the parent, limit every thread pool to
    one thread (before JAX starts), import ``preload``, and then let JAX, where it was
    imported, compute on the calling thread."""
    limit_threads()
    for name in preload:
        importlib.import_module(name)
    limit_threads()


@contextlib.contextmanager
def _spawning() -> Iterator[None]:
    """Ctrl-C held back while loky starts worker processes (they inherit it blocked, then
    ignore it).  The standard library's resource tracker, which loky's semaphores start on
    first use, unblocks SIGINT outright after starting its own process instead of
    restoring the mask: it is started first, outside the block."""
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    with blocked_while_spawning():
        yield


class ProcessExecutor(Executor):
    """Local worker processes (:mod:`loky`), each limited to one BLAS and XLA thread.

    loky starts each worker as a fresh interpreter that never imports the caller's main
    module, and sends functions with cloudpickle: a script without an
    ``if __name__ == "__main__":`` guard, code read from standard input, ``python -c``
    and an interactive session all work (the standard library's pools re-run the main
    script in every worker, which then dies).  Without loky the jobs run in this
    process, with one line on stderr saying why.

    A worker that dies (a crash, the out-of-memory killer) takes no other job with it:
    the pool is restarted, the jobs that may have been running are run again one at a
    time, and the one that kills its worker alone is recorded as failed."""

    name = "processes"

    def __init__(self, workers: int, preload: Sequence[str] = PRELOAD) -> None:
        self.workers = max(int(workers), 1)
        self.preload = tuple(preload)
        self._pool: Any = None
        self.persistent = False
        _LIVE.add(self)

    def _ensure_pool(self) -> Any:
        loky = _loky()
        if loky is None:
            return None
        kwargs = dict(max_workers=self.workers, initializer=_start_worker,
                      initargs=(self.preload,), timeout=IDLE_TIMEOUT)
        if self.persistent and self.preload == PRELOAD:
            # loky's one reusable pool is shared by every kept executor: asked again on
            # every run, it is resized to this executor's count (another kept executor
            # may have resized it since) or replaced where it was stopped or replaced.
            self._pool = loky.get_reusable_executor(**kwargs, reuse=True)
        elif self._pool is None:
            # a kept pool with imports of its own holds its own pool: sharing loky's
            # reusable one would restart it each time the other kind of run came
            self._pool = loky.ProcessPoolExecutor(**kwargs)
        return self._pool

    def pids(self) -> list[int]:
        """Process ids of the running workers (none before the first run)."""
        return [] if self._pool is None else list(self._pool._processes or {})

    def describe(self) -> str:
        if _loky() is None:
            return "serial: every job in this process (loky is not installed)"
        return f"local worker processes (loky): {self.workers} workers"

    def run(self, fn: Callable[[Any], Any], args: Sequence[Any]) -> Iterator[tuple[int, JobResult]]:
        with _spawning():
            started = self._ensure_pool()
        if started is None:
            _say_once("sinkproof: loky is not installed (pip install loky): "
                      f"running {len(args)} jobs in this process")
            yield from SerialExecutor().run(fn, args)
            return
        token = _new_flag()
        todo = dict.fromkeys(range(len(args)))  # jobs without a result, in order
        alone = 0  # after a worker died: how many of the next jobs run one at a time
        try:
            while todo:
                batch = [next(iter(todo))] if alone else list(todo)
                with _spawning():  # loky starts its workers in submit
                    pool = self._ensure_pool()
                    futures: dict[Future[JobResult], int] = {
                        pool.submit(call_job, fn, args[i], token): i for i in batch}
                pending = set(futures)
                died: BaseException | None = None
                while pending and died is None:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in sorted(done, key=futures.__getitem__):
                        try:
                            result = fut.result()
                        except BrokenProcessPool as exc:  # a worker died
                            died = exc
                            continue
                        except Exception as exc:  # noqa: BLE001 - e.g. a result that cannot travel
                            result = _lost(exc, "its result did not come back")
                        del todo[futures[fut]]
                        yield futures[fut], result
                if died is None:
                    alone = max(alone - 1, 0)
                    continue
                self.stop()
                if alone:  # it ran alone: it killed its worker
                    i = batch[0]
                    del todo[i]
                    alone -= 1
                    yield i, _lost(died, "its worker process died")
                else:  # one of the jobs in flight (the first workers + 1 left) did it
                    alone = min(self.workers + 1, len(todo))
        except KeyboardInterrupt:  # stop the workers now, not after their current job
            token.set()
            self.stop()
            raise
        finally:
            # done, or the caller stopped early: running jobs may stop and queued ones
            # never start.  No future is cancelled: a pool killed later (Ctrl-C) would
            # fail marking a cancelled future broken, with a traceback on stderr.
            token.set()

    def stop(self) -> None:
        """Stop every worker now, not after its current job (Ctrl-C); the next run
        starts a fresh pool."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, kill_workers=True)

    def close(self) -> None:
        if not self.persistent:
            self._shutdown()

    def _shutdown(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, kill_workers=True)

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if self.persistent:
            return
        if exc_type is None:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None
            return
        self.stop()  # Ctrl-C or a failure: stop the workers now

    def __repr__(self) -> str:
        return f"ProcessExecutor(workers={self.workers})"


IDLE_TIMEOUT = 300
"""Seconds a worker of a kept pool waits idle before it exits (loky's own default)."""

_LIVE: weakref.WeakSet[ProcessExecutor] = weakref.WeakSet()
"""Every process executor of this process, so that :func:`shutdown_all` finds them."""

_SAID: set[str] = set()


def _say_once(line: str) -> None:
    if line not in _SAID:
        _SAID.add(line)
        print(line, file=sys.stderr)


_SHARED: dict[tuple[int, tuple[str, ...]], ProcessExecutor] = {}


def shared_processes(workers: int, preload: Sequence[str] = PRELOAD) -> ProcessExecutor:
    """A process pool kept for the life of this process (closing it does nothing), so
    that later runs skip the workers' start-up and JAX compilation: loky's reusable
    executor, resized to ``workers``; with a ``preload`` of its own (the modules each
    worker imports at start), a pool of its own, kept the same way.  Stopped before
    interpreter teardown."""
    key = (max(int(workers), 1), tuple(preload))
    if key not in _SHARED:
        ex = ProcessExecutor(*key)
        ex.persistent = True
        _SHARED[key] = ex
    return _SHARED[key]


@atexit.register
def shutdown_all() -> None:
    """Stop every worker process this process started (kept pools included), now.  Runs
    at exit (before interpreter teardown, whose finalisers would print ignored exceptions
    on the user's terminal); the test suite also calls it when its session finishes."""
    for ex in list(_LIVE):
        ex.stop()
    _SHARED.clear()
    for folder in _FLAG_DIR:
        shutil.rmtree(folder, ignore_errors=True)
    _FLAG_DIR.clear()
    # the reusable pool, if something else started it (loky loaded: a run that never
    # imported it has no pool to stop, and importing it here cost every exit ~20 ms)
    loky = sys.modules.get("loky") or sys.modules.get("joblib.externals.loky")
    if loky is not None and hasattr(loky, "reusable_executor"):
        kept = getattr(loky.reusable_executor, "_executor", None)
        if kept is not None:
            kept.shutdown(wait=False, kill_workers=True)


_stop_shared = shutdown_all
"""The earlier name of :func:`shutdown_all`."""


@contextlib.contextmanager
def _main_not_rerun() -> Iterator[None]:
    """While worker processes start by ``spawn`` (Dask's nannies do), hide the caller's
    main script from them: ``multiprocessing`` would run it again in every worker, and a
    script without an ``if __name__ == "__main__":`` guard (or code read from stdin)
    would start a sweep there and kill the worker.  Jobs travel by cloudpickle, so the
    workers need nothing from it.  A main module run with ``-m`` is left as it is."""
    main = sys.modules.get("__main__")
    if main is None or getattr(getattr(main, "__spec__", None), "name", None) is not None:
        yield
        return
    missing = object()
    saved = {name: main.__dict__.get(name, missing) for name in ("__file__", "__spec__")}
    main.__dict__.pop("__file__", None)
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is missing:
                main.__dict__.pop(name, None)
            else:
                main.__dict__[name] = value


class DaskExecutor(Executor):
    """Dask distributed: an embedded ``LocalCluster`` (``workers`` processes, one thread
    each) or, with ``scheduler``, an existing cluster at that address.  A worker that
    dies is retried by Dask; a job that keeps killing workers is recorded as failed."""

    name = "dask"

    def __init__(self, workers: int | None = None, scheduler: str | None = None,
                 processes: bool = True) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - distributed is a dependency
            raise ImportError("the Dask executor needs 'distributed': "
                              "pip install 'dask[distributed]'") from exc
        self._cluster = None
        self._events: list[str] = []
        if scheduler is not None:
            self._client = Client(scheduler, timeout="10s")
            self.workers = max(len(self._client.scheduler_info().get("workers", {})), 1)
        else:
            n = available_cores() if workers is None else max(int(workers), 1)
            with _main_not_rerun():
                self._cluster = LocalCluster(n_workers=n, threads_per_worker=1,
                                             processes=processes, dashboard_address=None,
                                             silence_logs=50)
            self._client = Client(self._cluster)
            self.workers = n
        self._scheduler = scheduler
        if processes or scheduler is not None:
            self._client.run(limit_threads)

    def describe(self) -> str:
        if self._scheduler is not None:
            return f"Dask cluster at {self._scheduler}: {self.workers} workers"
        return f"Dask LocalCluster: {self.workers} workers"

    def run(self, fn: Callable[[Any], Any], args: Sequence[Any]) -> Iterator[tuple[int, JobResult]]:
        from distributed import Event, as_completed

        name = f"sinkproof-cancel-{uuid.uuid4().hex}"
        n = len(args)
        futures = self._client.map(call_job, [fn] * n, list(args), [_DaskFlag(name)] * n,
                                   pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for fut in as_completed(futures):
                try:
                    result = fut.result()
                except Exception as exc:  # noqa: BLE001 - a killed worker, a lost task
                    result = _lost(exc, "no result from the cluster")
                yield index[fut.key], result
        finally:
            left = [f for f in futures if not f.done()]
            if left:  # stopped early: running jobs may stop, queued ones never start
                Event(name, self._client).set()
                self._events.append(name)
                self._client.cancel(left)

    def close(self) -> None:
        from distributed import Event

        for name in self._events:  # the scheduler keeps set events until cleared
            Event(name, self._client).clear()
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


EXECUTORS = ("dask", "processes", "serial")


def make_executor(kind: str = "dask", workers: int | None = None,
                  scheduler: str | None = None) -> Executor:
    """An executor by name: ``"dask"`` (default; ``scheduler`` = an existing cluster's
    address), ``"processes"`` or ``"serial"``."""
    if scheduler is not None and kind != "dask":
        raise ValueError("a scheduler address needs the 'dask' executor")
    if kind == "serial":
        return SerialExecutor()
    if kind == "processes":
        return ProcessExecutor(available_cores() if workers is None else workers)
    if kind == "dask":
        return DaskExecutor(workers=workers, scheduler=scheduler)
    raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, got {kind!r}")
