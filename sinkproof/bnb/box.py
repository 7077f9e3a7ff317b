"""Boxes of value vectors: one closed interval per (token, coordinate), ends exact or infinite."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..task import TRIG, TriggerTask

Interval = tuple[Fraction | None, Fraction | None]


@dataclass(frozen=True)
class ValueBox:
    """``bounds[token][coord] = (lo, hi)``; ``None`` is an infinite end."""

    bounds: tuple[tuple[int, tuple[Interval, ...]], ...]

    @classmethod
    def root(cls, task: TriggerTask, values: str) -> ValueBox:
        """``R^p`` per token (``"learned"``), or the point ``v_c = c``, ``v_TRIG = 0``
        (``"fixed"``)."""
        rows = []
        for tok in [*range(task.k), TRIG]:
            if values == "learned":
                ivs = tuple((None, None) for _ in range(task.p))
            else:
                vec = [Fraction(float(x)) for x in task.content[tok]] if tok != TRIG else \
                    [Fraction(0)] * task.p
                ivs = tuple((x, x) for x in vec)
            rows.append((tok, ivs))
        return cls(tuple(rows))

    @classmethod
    def free(cls, tokens: list[int], dim: int) -> ValueBox:
        """All of ``R^dim`` for each of ``tokens`` (learned values of any token set)."""
        return cls(tuple((int(tok), tuple((None, None) for _ in range(dim))) for tok in tokens))

    def interval(self, token: int, coord: int) -> Interval:
        return dict(self.bounds)[token][coord]

    def split(self, token: int, coord: int, at: Fraction) -> tuple[ValueBox, ValueBox]:
        """``(v <= at, v >= at)`` on ``token``'s coordinate ``coord``."""
        lo, hi = self.interval(token, coord)
        if (lo is not None and at <= lo) or (hi is not None and at >= hi):
            raise ValueError(f"split point {at} is not inside ({lo}, {hi})")

        def with_interval(iv: Interval) -> ValueBox:
            rows = []
            for tok, ivs in self.bounds:
                if tok == token:
                    ivs = tuple(iv if c == coord else x for c, x in enumerate(ivs))
                rows.append((tok, ivs))
            return ValueBox(tuple(rows))

        return with_interval((lo, at)), with_interval((at, hi))

    def arrays(self, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Float ``(lo, hi)`` per class (rows of ``key``), ``-inf``/``inf`` for open ends."""
        table = dict(self.bounds)
        lo = np.array([[-np.inf if a is None else float(a) for a, _ in table[int(t)]]
                       for t in key]).reshape(len(key), -1)
        hi = np.array([[np.inf if b is None else float(b) for _, b in table[int(t)]]
                       for t in key]).reshape(len(key), -1)
        return lo, hi

    def to_json(self) -> list:
        """``[[token, [[lo|null, hi|null], ...]], ...]`` with rationals as strings."""
        def fmt(x: Fraction | None) -> str | None:
            if x is None:
                return None
            return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"

        return [[tok, [[fmt(a), fmt(b)] for a, b in ivs]] for tok, ivs in self.bounds]
