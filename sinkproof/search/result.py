"""The answer of a search: the best model, whether it is a verified witness, the trade-offs seen."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import CertificateError
from ..stack import StackModel
from ..tables import Tabular
from .verify import WitnessReport

STOPS = ("found", "budget", "wall_time", "interrupted")
"""Why a search ended (:attr:`SearchResult.stopped_by`)."""


class TracePoint(NamedTuple):
    """One (error, BOS mass) trade-off reached by some evaluation of the search (float64)."""

    error: float
    bos_mass: float


@dataclass(frozen=True)
class SearchResult(Tabular):
    """Outcome of :func:`sinkproof.search` (whichever optimiser ran it;
    :data:`StackSearchResult` is this type).

    ``found``: a model meets both conditions and the trusted checker confirmed it on
    the whole family (exact rationals for ReLU, interval arithmetic for softmax);
    ``verified`` says the same of ``model`` (``witness`` holds the checker's report).
    ``model``: the witness, or else the restart that came closest (L-BFGS-B: the smallest
    penalty; Adam: the smallest BOS measure among accurate restarts, else the smallest
    error), an :class:`~sinkproof.model.AttentionModel` for one layer, a
    :class:`~sinkproof.stack.StackModel` for a stack (``None`` only where no restart
    ended with a finite error); ``params``: its parameters (``A``, ``U``, ... for one
    layer; ``wq, wk, wv, wo``, ... for a stack, fixed values included).
    ``error``, ``bos_mass``: float64 measures of ``model`` (the largest error on the
    training family; the largest BOS measure over heads at ``where``).  ``trace``: the Pareto
    front of (error, BOS mass) over every evaluation of every restart; ``ends``: where each
    restart ended, sorted (``frontier``, an alias).  ``source``: ``"exhaustive"`` (the whole
    finite family) or ``"sampled"`` (``n_sequences`` seeded sequences).
    ``restarts``: restarts completed; ``candidates``: restarts feasible in float64;
    ``rejected``: float64 candidates the high-precision check refused.
    ``stopped_by``: why the search ended, in :data:`STOPS` — ``"found"`` (a verified
    witness), ``"budget"`` (the deterministic budget, ``restarts`` × ``maxiter`` steps, was
    spent: the same seed gives the same answer on any machine), ``"wall_time"`` (the
    wall-clock safety stop ``budget`` cut it short: *Open for time*, an answer that a faster
    or idler machine may change) or ``"interrupted"`` (Ctrl-C).
    """

    found: bool
    model: StackModel | None
    error: float
    bos_mass: float
    verified: bool
    witness: WitnessReport | None
    trace: tuple[TracePoint, ...]
    restarts: int
    candidates: int
    rejected: int
    seconds: float
    interrupted: bool
    settings: dict[str, Any] = field(default_factory=dict)
    stopped_by: str = "budget"
    params: dict[str, Any] | None = None
    ends: tuple[TracePoint, ...] = ()
    source: str = "exhaustive"
    n_sequences: int = 0

    @property
    def bos(self) -> float:
        """:attr:`bos_mass` (the name the stack search's callers use)."""
        return self.bos_mass

    @property
    def frontier(self) -> tuple[tuple[float, float], ...]:
        """:attr:`ends` as plain ``(error, BOS)`` pairs (the stack search's name)."""
        return tuple((e, b) for e, b in self.ends)

    @property
    def open_for_time(self) -> bool:
        """No witness, and the wall-clock safety stop (not the step budget) ended the search."""
        return self.stopped_by == "wall_time"

    def save(self, path: str | Path) -> Path:
        """Write the verified witness file (``sinkproof verify FILE`` re-checks it)."""
        if self.witness is None or not self.verified:
            raise CertificateError("no verified witness to save: the search found none")
        return self.witness.save(path)

    def to_records(self) -> list[dict[str, Any]]:
        """The trade-offs seen (the Pareto front ``trace``): one row per (error, BOS mass)."""
        return [dict(error=p.error, bos_mass=p.bos_mass) for p in self.trace]

    def _headline(self) -> str:
        s = self.settings
        shape = f"{s['layers']}-layer{' residual' * bool(s.get('residual'))} " if s.get(
            "layers", 1) > 1 or s.get("residual") else ""
        cls = f"{shape}{s.get('heads')}-head {s.get('kind')}, {s.get('values')} values"
        goal = (f"error <= {s.get('max_error'):g}, BOS mass <= {s.get('max_bos_mass'):g} "
                f"at {s.get('where_text')}")
        state = ("FOUND (verified witness)" if self.found else
                 "not found" + {"interrupted": " (interrupted)",
                                "wall_time": " (open for time: the wall-clock stop cut it)"
                                }.get(self.stopped_by, ""))
        return f"{cls}; {goal}: {state}"

    def __repr__(self) -> str:
        return (f"SearchResult({self._headline()}; best error={self.error:.6g}, "
                f"BOS mass={self.bos_mass:.6g}; {self.restarts} restarts, "
                f"{self.candidates} float64 candidates, {self.rejected} rejected, "
                f"{self.seconds:.1f}s)")

    def _repr_markdown_(self) -> str:
        lines = [f"**search** — {self._headline()}", "",
                 "| quantity | value |", "|---|---|",
                 f"| best error (float64) | {self.error:.6g} |",
                 f"| BOS mass (float64) | {self.bos_mass:.6g} |",
                 f"| restarts / candidates / rejected | {self.restarts} / {self.candidates}"
                 f" / {self.rejected} |",
                 f"| time | {self.seconds:.1f} s |"]
        if self.witness is not None:
            lines.append(f"| rigorous error bound | {self.witness.error:.6g} |")
            lines.append(f"| rigorous BOS bound | {self.witness.bos_mass:.6g} |")
        if self.trace:
            lines += ["", "Trade-offs seen (Pareto front):", "", "| error | BOS mass |",
                      "|---|---|"]
            lines += [f"| {p.error:.6g} | {p.bos_mass:.6g} |" for p in self.trace[:12]]
        return "\n".join(lines)


StackSearchResult = SearchResult
"""The stack search's result: the one :class:`SearchResult` (an alias kept for callers)."""
