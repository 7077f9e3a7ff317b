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
returns.
"""

from __future__ import annotations

import _thread
import contextlib
import gc
import signal
import threading
from collections.abc import Iterator
from types import FrameType

RETRY_S = 0.01
"""Delay before a SIGINT that arrived inside a garbage-collector callback is delivered again."""

_state = {"pending": False}


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
    """Whether a SIGINT arrived inside the current :func:`deferred` block."""
    return _state["pending"]


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


def ignore_in_worker() -> None:
    """A worker process leaves Ctrl-C to its parent (which stops it): a terminal's Ctrl-C
    reaches the whole process group, and a worker waiting for its next job would otherwise
    print a traceback."""
    if _in_main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
