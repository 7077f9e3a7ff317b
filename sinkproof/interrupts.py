"""Ctrl-C that always reaches the command, never lost and never printed as a traceback.

Python runs a SIGINT handler in the main thread at the next bytecode it evaluates.  Two
places turn the ``KeyboardInterrupt`` that the default handler raises into a line on
stderr and then carry on as if nothing happened: a garbage-collector callback (JAX
registers one) and a ``__del__`` finaliser ("Exception ignored in ...").  The handler of
:func:`handled` raises only where the exception can propagate: inside such a frame it
asks again 10 ms later, once the callback has returned.

Native code that holds the interpreter for long (an interior-point solve) sees no signal
at all until it returns.  :func:`deferred` covers such a call: a SIGINT inside it only
sets :func:`pending`, which the native code polls through a callback of its own (the
solver's termination callback), and the ``KeyboardInterrupt`` is raised when the call
returns.  What such code does before its first callback (a solver's set-up: factorising
a large program) cannot be stopped that way; :func:`abandonable` runs the whole call in a
helper thread instead, so that the main thread answers Ctrl-C at once while the call,
told to stop through :func:`pending`, ends on its own.
"""

from __future__ import annotations

import _thread
import contextlib
import contextvars
import gc
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TypeVar

T = TypeVar("T")

RETRY_S = 0.01
"""Delay before a SIGINT that arrived inside a garbage-collector callback is delivered again."""

POLL_S = 0.05
"""Longest wait of the main thread between two looks for a Ctrl-C while a helper thread of
:func:`abandonable` runs (a SIGINT the system delivers to the helper thread wakes nobody)."""

_state = {"pending": False}
_helper = threading.local()
"""In a helper thread of :func:`abandonable`: ``stop``, the event its caller sets on Ctrl-C."""
_abandoned: list[threading.Event] = []
"""The end events of helper threads whose caller was interrupted (they may still run)."""


def _in_swallowing_frame(frame: FrameType | None) -> bool:
    """Whether ``frame`` (or a caller of it) is a gc callback or a ``__del__`` finaliser,
    where an exception raised is printed and dropped instead of propagated."""
    callbacks = {getattr(cb, "__code__", None) for cb in gc.callbacks}
    while frame is not None:
        if frame.f_code in callbacks or frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def _raise_where_it_propagates(signum: int, frame: FrameType | None) -> None:
    if _in_swallowing_frame(frame):
        timer = threading.Timer(RETRY_S, _thread.interrupt_main)
        timer.daemon = True
        timer.start()
        return
    raise KeyboardInterrupt


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """Within: SIGINT raises ``KeyboardInterrupt`` where it can propagate (never inside a gc
    callback or a finaliser).  Only the main thread can install a handler; elsewhere this
    does nothing."""
    if not _in_main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, _raise_where_it_propagates)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def pending() -> bool:
    """Whether a SIGINT arrived inside the current :func:`deferred` block, or (in a helper
    thread of :func:`abandonable`) whether its caller was interrupted."""
    stop = getattr(_helper, "stop", None)
    return _state["pending"] or (stop is not None and stop.is_set())


def _note(signum: int, frame: FrameType | None) -> None:
    _state["pending"] = True


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Within: SIGINT only sets :func:`pending` (for native code to poll); on leaving, a
    SIGINT that arrived raises ``KeyboardInterrupt``.  Outside the main thread, or where
    SIGINT has no Python handler (ignored, or the system default), nothing changes."""
    if not _in_main_thread() or not callable(signal.getsignal(signal.SIGINT)):
        yield
        return
    previous = signal.signal(signal.SIGINT, _note)
    outer = _state["pending"]
    _state["pending"] = False
    try:
        yield
    finally:
        arrived = _state["pending"]
        _state["pending"] = outer
        signal.signal(signal.SIGINT, previous)
    if arrived:
        raise KeyboardInterrupt


def _wait_abandoned() -> None:
    """Wait (stoppably) for every abandoned helper thread to end, so that no two native
    calls of :func:`abandonable` ever run at once (they may share a program's data)."""
    while _abandoned:
        while not _abandoned[0].wait(POLL_S):
            pass
        _abandoned.pop(0)


def abandonable(fn: Callable[[], T]) -> T:
    """``fn()``, with Ctrl-C answered within :data:`POLL_S` even while ``fn`` sits in native
    code that releases the interpreter lock (a solver's set-up, before any callback).

    In the main thread, with a Python SIGINT handler, ``fn`` runs in a helper thread (with
    a copy of the caller's context variables) while this thread waits.  On Ctrl-C,
    :func:`pending` turns true inside ``fn`` (a solver's termination callback then stops
    it at its next iteration) and ``KeyboardInterrupt`` is raised here at once, without
    waiting for ``fn``, whose result is dropped.  Native code that installs a SIGINT
    handler of its own loses it to Python's again within :data:`POLL_S`.  A later call
    first waits for an abandoned ``fn`` to end.  An exception of ``fn`` is raised here.
    Elsewhere (another thread, a worker process that ignores SIGINT) ``fn()`` simply runs
    here.
    """
    if not _in_main_thread() or not callable(signal.getsignal(signal.SIGINT)):
        return fn()
    _wait_abandoned()
    stop, ended = threading.Event(), threading.Event()
    box: dict[str, object] = {}
    context = contextvars.copy_context()

    def body() -> None:
        _helper.stop = stop
        try:
            box["value"] = context.run(fn)
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            box["error"] = exc
        finally:
            ended.set()

    threading.Thread(target=body, name="sinkproof-abandonable", daemon=True).start()
    handler = signal.getsignal(signal.SIGINT)
    try:
        # an Event, not Thread.join: a join that Ctrl-C interrupts marks the thread as
        # ended while it still runs (Python 3.11)
        while not ended.wait(POLL_S):
            # native code that takes SIGINT for itself (SCS does, for the length of its
            # solve, and may drop it) gets it back: the signal stays Python's
            signal.signal(signal.SIGINT, handler)
    except BaseException:  # Ctrl-C (or another exception raised by a signal handler)
        stop.set()
        _abandoned.append(ended)
        raise
    if "error" in box:
        error = box.pop("error")
        raise error  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


@contextlib.contextmanager
def blocked_while_spawning() -> Iterator[None]:
    """Ctrl-C held back (blocked, not lost) in this thread while it starts worker processes.

    A process started meanwhile inherits the blocked signal through ``exec``, so a terminal's
    Ctrl-C, which reaches the whole process group, cannot interrupt a worker still importing
    its modules (it printed a ``KeyboardInterrupt`` traceback from loky's start-up on the
    user's terminal).  Threads started meanwhile (loky's manager, which restarts workers)
    inherit it too.  This process still sees the signal: the kernel hands it to a thread
    that does not block it, or delivers it here the moment the block ends."""
    if not (_in_main_thread() and hasattr(signal, "pthread_sigmask")):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def ignore_in_worker() -> None:
    """A worker process leaves Ctrl-C to its parent (which stops it): a terminal's Ctrl-C
    reaches the whole process group, and a worker waiting for its next job would otherwise
    print a traceback."""
    if _in_main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
