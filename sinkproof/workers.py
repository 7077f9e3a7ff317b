"""Worker processes that do not fight over cores.

Each worker is a fresh process (forked from a clean fork server, never from the
caller: forking a process whose JAX runtime has started threads can deadlock)
pinned to one core of the parent's affinity set, in turn.  JAX sizes its CPU
thread pool from the affinity set when its runtime starts (at the first
computation, after the pinning), and BLAS is limited to one thread with
threadpoolctl, so ``n`` workers on ``n`` cores run ``n`` computations
side by side instead of ``n`` times as many threads time-slicing.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable
from multiprocessing.pool import Pool
from typing import Any

from .interrupts import ignore_in_worker

SINGLE_THREAD_XLA = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def available_cores() -> list[int]:
    """The cores this process may run on (all of ``os.cpu_count()`` off Linux)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return list(range(os.cpu_count() or 1))


def _start(counter: Any, cores: list[int], initializer: Callable[..., None] | None,
           initargs: tuple[Any, ...]) -> None:
    """Pin this worker to the next core, limit its threads, leave Ctrl-C to the parent,
    then run ``initializer``."""
    ignore_in_worker()
    with counter.get_lock():
        index = counter.value
        counter.value += 1
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cores[index % len(cores)]})
    flags = os.environ.get("XLA_FLAGS", "")
    if "intra_op_parallelism_threads" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {SINGLE_THREAD_XLA}".strip()
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    if initializer is not None:
        initializer(*initargs)


PRELOAD = ["sinkproof.search.engine", "sinkproof.experiment.runner"]
"""Modules the fork server imports once, so that each worker starts without importing them."""


def start_context() -> Any:
    """``forkserver`` where available (a clean server process that has imported
    :data:`PRELOAD` but started no JAX runtime forks each worker), else ``spawn``."""
    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        return ctx
    return mp.get_context("spawn")


def _start_args(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]
                ) -> tuple[Any, ...]:
    ctx = start_context()
    return (ctx.Value("i", 0), available_cores(), initializer, initargs)


def shared_counter() -> Any:
    """An integer shared with the workers of :func:`pool` (pass it in ``initargs``)."""
    return start_context().Value("i", 0)


def pool(processes: int, initializer: Callable[..., None] | None = None,
         initargs: tuple[Any, ...] = ()) -> Pool:
    """A ``multiprocessing`` pool of ``processes`` pinned, single-threaded workers."""
    return start_context().Pool(processes, initializer=_start,
                           initargs=_start_args(initializer, initargs))
