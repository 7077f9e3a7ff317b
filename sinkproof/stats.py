"""Per-head minimum, mean and maximum of a measure over weighted (sequence, position) pairs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Stats:
    """Per-head minimum, mean and maximum over a set of positions (arrays of shape ``(H,)``).

    ``count`` is the number of (sequence, position) pairs; with none, every entry is nan.
    """

    min: np.ndarray
    mean: np.ndarray
    max: np.ndarray
    count: float

    def __repr__(self) -> str:
        def f(a: np.ndarray) -> str:
            return np.array2string(a, precision=6, separator=", ")

        return f"Stats(min={f(self.min)}, mean={f(self.mean)}, max={f(self.max)}, n={self.count:g})"

    def to_dict(self) -> dict[str, object]:
        """Plain Python values (for JSON)."""
        return dict(min=self.min.tolist(), mean=self.mean.tolist(), max=self.max.tolist(),
                    count=self.count)

    def _repr_markdown_(self) -> str:
        rows = ["| head | min | mean | max |", "|---|---|---|---|"]
        rows += [f"| {h} | {self.min[h]:.6g} | {self.mean[h]:.6g} | {self.max[h]:.6g} |"
                 for h in range(len(self.min))]
        return f"over {self.count:g} positions\n\n" + "\n".join(rows)


class Accumulator:
    """Running weighted min/mean/max per head."""

    def __init__(self, heads: int) -> None:
        self.lo = np.full(heads, np.inf)
        self.hi = np.full(heads, -np.inf)
        self.total = np.zeros(heads)
        self.count = 0.0

    def add(self, values: np.ndarray, weight: np.ndarray | float) -> None:
        """``values`` ``(H, N)``, ``weight`` ``(N,)`` or one weight for every column."""
        if values.shape[1] == 0:
            return
        if values.strides[1] == 0 and np.ndim(weight) == 0:  # one value per row, broadcast
            self._add_constant(values[:, 0], values.shape[1], float(weight))
            return
        lo, hi = values.min(axis=1), values.max(axis=1)
        self.lo = np.minimum(self.lo, lo)
        self.hi = np.maximum(self.hi, hi)
        if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
            values = np.where(np.isfinite(values), values, 0.0)
        if np.ndim(weight) == 0:
            self.total += float(weight) * values.sum(axis=1)
            self.count += float(weight) * values.shape[1]
        else:
            self.total += values @ weight
            self.count += float(weight.sum())

    def _add_constant(self, value: np.ndarray, n: int, weight: float) -> None:
        """``n`` columns all equal to ``value`` ``(H,)``, each of weight ``weight``."""
        self.lo = np.minimum(self.lo, value)
        self.hi = np.maximum(self.hi, value)
        self.total += weight * n * np.where(np.isfinite(value), value, 0.0)
        self.count += weight * n

    def stats(self) -> Stats:
        if self.count == 0:
            nan = np.full(self.lo.shape, np.nan)
            return Stats(nan, nan.copy(), nan.copy(), 0.0)
        return Stats(self.lo, self.total / self.count, self.hi, self.count)


class SinkSummary:
    """The sink figures of an evaluation whose ``bos_nontrigger`` field holds the BOS
    weight at non-trigger positions ``t >= 1``."""

    bos_nontrigger: Stats

    @property
    def sink_score(self) -> np.ndarray:
        """Mean BOS weight per head over non-trigger positions ``t >= 1``."""
        return self.bos_nontrigger.mean

    def has_sink(self, delta: float) -> np.ndarray:
        """Per head: BOS weight ``>= 1 - delta`` at every non-trigger position ``t >= 1``."""
        return self.bos_nontrigger.min >= 1.0 - delta
