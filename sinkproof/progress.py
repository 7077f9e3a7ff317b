"""Progress bars for long loops, drawn by tqdm (``tqdm.auto``: a widget in a notebook,
a text bar on a terminal's stderr).

tqdm rather than rich or a bar of our own: one small pure-Python dependency with none of
its own, an exponentially smoothed rate (the first estimate is not the compile-time
outlier), and the notebook widget through ``tqdm.auto``.

``progress=None`` means: show it only when stderr is a terminal (or in a notebook) and the
work is large, unless :func:`set_default` chose (the CLI's ``--progress`` /
``--no-progress``); ``True`` forces it, ``False`` silences it.
"""

from __future__ import annotations

import sys
from types import TracebackType

_default: dict[str, bool | None] = {"enabled": None}


def set_default(enabled: bool | None) -> None:
    """What ``progress=None`` means from now on: ``True`` always a bar, ``False`` never,
    ``None`` the automatic choice (a terminal or a notebook, and large work)."""
    _default["enabled"] = enabled


def _interactive() -> bool:
    if sys.stderr.isatty():
        return True
    return "ipykernel" in sys.modules and type(sys.stderr).__module__.startswith("ipykernel")


class Progress:
    """Counts work units toward ``total``; the bar redraws at most 10 times a second."""

    def __init__(self, total: float, label: str, enabled: bool | None = None,
                 threshold: float = 2e5) -> None:
        self.total = max(float(total), 1.0)
        self.label = label
        if enabled is None:
            enabled = _default["enabled"]
        if enabled is None:
            enabled = total >= threshold and _interactive()
        self.enabled = bool(enabled)
        self.done = 0.0
        self._bar = None
        if self.enabled:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=self.total, desc=label, file=sys.stderr, mininterval=0.1,
                             leave=True, dynamic_ncols=True,
                             bar_format="{l_bar}{bar}| {n:.4g}/{total:.4g} "
                                        "[{elapsed}<{remaining}{postfix}]")

    def update(self, amount: float = 1.0, note: str = "") -> None:
        """Add ``amount`` finished units; ``note`` is shown after the bar."""
        self.done += amount
        if self._bar is not None:
            if note:
                self._bar.set_postfix_str(note, refresh=False)
            self._bar.update(amount)

    def close(self) -> None:
        """Finish the bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
