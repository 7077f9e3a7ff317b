"""A minimal progress bar on stderr for long loops (no dependency).

``progress=None`` means: show it only when stderr is a terminal and the work is
large; ``True`` forces it, ``False`` silences it.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType


class Progress:
    """Counts work units toward ``total`` and redraws a one-line bar at most 10 times a second."""

    def __init__(self, total: float, label: str, enabled: bool | None = None,
                 threshold: float = 2e5) -> None:
        self.total = max(float(total), 1.0)
        self.label = label
        if enabled is None:
            enabled = total >= threshold and sys.stderr.isatty()
        self.enabled = bool(enabled)
        self.done = 0.0
        self._start = time.perf_counter()
        self._last = 0.0

    def update(self, amount: float = 1.0, note: str = "") -> None:
        """Add ``amount`` finished units; ``note`` is shown after the bar."""
        self.done += amount
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last < 0.1 and self.done < self.total:
            return
        self._last = now
        frac = min(self.done / self.total, 1.0)
        width = 30
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        elapsed = now - self._start
        eta = elapsed * (1 - frac) / frac if frac > 0 else float("nan")
        sys.stderr.write(
            f"\r{self.label} [{bar}] {100 * frac:5.1f}% {elapsed:6.1f}s eta {eta:5.1f}s {note}"
        )
        sys.stderr.flush()

    def close(self) -> None:
        """Finish the line."""
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
