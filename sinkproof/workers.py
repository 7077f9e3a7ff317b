"""Worker processes that do not fight over cores.

Each worker is a fresh process (forked from a clean fork server, never from the
caller: forking a process whose JAX runtime has started threads can deadlock) that
computes on one thread: XLA's CPU backend is told to run each computation on the
calling thread (``XLA_FLAGS``, read when its runtime starts at the first computation,
after this) and BLAS/OpenMP are held to one thread with threadpoolctl, so ``n``
workers on ``n`` cores run ``n`` computations side by side instead of ``n`` times as
many threads time-slicing.

Workers are not pinned to cores: on a machine shared with other jobs a pinned worker
stays on its core however busy that core is (2 pinned workers scaled worse over 1 than
unpinned ones under the same load, at the same CPU time per restart; the thread limits
above, not the pinning, are what keeps the workers from fighting).
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


def _start(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    """Limit this worker to one compute thread, leave Ctrl-C to the parent, then run
    ``initializer``."""
    ignore_in_worker()
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


def shared_counter() -> Any:
    """An integer shared with the workers of :func:`pool` (pass it in ``initargs``)."""
    return start_context().Value("i", 0)


def pool(processes: int, initializer: Callable[..., None] | None = None,
         initargs: tuple[Any, ...] = ()) -> Pool:
    """A ``multiprocessing`` pool of ``processes`` single-threaded workers."""
    return start_context().Pool(processes, initializer=_start,
                                initargs=(initializer, initargs))
