"""Where independent jobs run: in this process, in local worker processes, or on Dask.

One abstraction for every fan-out of the project (sweeps, search restarts, training
runs): :meth:`Executor.run` takes a picklable function and a list of arguments and
yields ``(index, JobResult)`` in completion order.  A job that raises is recorded with
its error message and never stops the others.  Worker processes limit their BLAS and
XLA threads to one each, so ``n`` workers on ``n`` cores do not oversubscribe them.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from .interrupts import ignore_in_worker
from .workers import start_context

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "BLIS_NUM_THREADS", "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
"""Environment variables that cap the thread pools of the numerical libraries."""


@dataclass(frozen=True)
class JobResult:
    """The outcome of one job: ``value`` when ``ok``, else ``error`` (one line) and
    ``details`` (the traceback); ``seconds`` of wall time inside the worker."""

    ok: bool
    value: Any = None
    error: str = ""
    details: str = ""
    seconds: float = 0.0


def limit_threads() -> None:
    """Cap BLAS/OpenMP pools at one thread and XLA at one CPU thread in this process (a
    worker's), and leave Ctrl-C to the parent, which stops the workers."""
    ignore_in_worker()
    for name in THREAD_VARIABLES:
        os.environ[name] = "1"
    flags = os.environ.get("XLA_FLAGS", "")
    if "intra_op_parallelism_threads" not in flags:
        os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1").strip()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        return
    threadpool_limits(1)


def call_job(fn: Callable[[Any], Any], arg: Any) -> JobResult:
    """Run ``fn(arg)`` and capture its value or its error (never raises, but for Ctrl-C)."""
    start = time.perf_counter()
    try:
        value = fn(arg)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - a failed job is data, not a crash
        message = str(exc).splitlines()[0] if str(exc) else ""
        return JobResult(False, error=f"{type(exc).__name__}: {message}".rstrip(": "),
                         details=traceback.format_exc(), seconds=time.perf_counter() - start)
    return JobResult(True, value=value, seconds=time.perf_counter() - start)


class Executor:
    """Runs jobs; subclasses decide where.  Use as a context manager."""

    workers: int = 1
    name: str = "serial"

    def run(self, fn: Callable[[Any], Any], args: Sequence[Any]) -> Iterator[tuple[int, JobResult]]:
        """Yield ``(i, result of fn(args[i]))`` for every ``i``, in completion order."""
        for i, arg in enumerate(args):
            yield i, call_job(fn, arg)

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


class ProcessExecutor(Executor):
    """Local worker processes (``concurrent.futures``), each limited to one BLAS thread."""

    name = "processes"

    def __init__(self, workers: int) -> None:
        self.workers = max(int(workers), 1)
        # never fork the caller itself: a process whose JAX runtime runs threads deadlocks
        self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=start_context(),
                                         initializer=limit_threads)

    def run(self, fn: Callable[[Any], Any], args: Sequence[Any]) -> Iterator[tuple[int, JobResult]]:
        futures: dict[Future[JobResult], int] = {
            self._pool.submit(call_job, fn, arg): i for i, arg in enumerate(args)}
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    yield futures[fut], fut.result()
        except GeneratorExit:  # the caller stopped early: drop the jobs not started
            for fut in pending:
                fut.cancel()
            raise

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def stop(self) -> None:
        # stop the workers now, not after their current job.  No future is cancelled
        # first: Python 3.11's pool thread would then fail (with a traceback on stderr)
        # marking the cancelled futures broken.
        workers = list((self._pool._processes or {}).values())  # before shutdown clears it
        for proc in workers:
            proc.terminate()
        self._pool.shutdown(wait=False)

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self._pool.shutdown(wait=True)
        else:  # Ctrl-C or a failure
            self.stop()


class DaskExecutor(Executor):
    """Dask distributed: an embedded ``LocalCluster`` (``workers`` processes, one thread
    each) or, with ``scheduler``, an existing cluster at that address."""

    name = "dask"

    def __init__(self, workers: int | None = None, scheduler: str | None = None,
                 processes: bool = True) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - distributed is a dependency
            raise ImportError("the Dask executor needs 'distributed': "
                              "pip install 'dask[distributed]'") from exc
        self._cluster = None
        if scheduler is not None:
            self._client = Client(scheduler, timeout="10s")
            self.workers = max(len(self._client.scheduler_info().get("workers", {})), 1)
        else:
            n = available_cores() if workers is None else max(int(workers), 1)
            self._cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=processes,
                                         dashboard_address=None, silence_logs=50)
            self._client = Client(self._cluster)
            self.workers = n
        self._client.run(limit_threads)

    def run(self, fn: Callable[[Any], Any], args: Sequence[Any]) -> Iterator[tuple[int, JobResult]]:
        from distributed import as_completed

        futures = self._client.map(call_job, [fn] * len(args), list(args), pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for fut in as_completed(futures):
                yield index[fut.key], fut.result()
        finally:
            self._client.cancel([f for f in futures if not f.done()])

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


EXECUTORS = ("dask", "processes", "serial")


def available_cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


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
