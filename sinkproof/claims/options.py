"""The ``[check]`` section of a claim (how hard a check looks) and the methods that only read
a claim's parts."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Self

from .._validate import as_int, as_real

STACK_OPTIONS = ("steps", "samples")
"""``[check]`` fields of the stack search (tasks without positional features) only."""
STACK_RESTARTS = 4
"""The stack search's default restarts (each runs ``steps`` Adam steps)."""
MAX_WORK = 300_000
"""Default limit on the prefixes a claim check enumerates (positions, family prefixes
evaluated in high precision, sink-map targets); ``sinkproof check --max-work N`` or
``[check] max_work`` raises it.  The theorem route by situations needs no enumeration."""


@dataclass(frozen=True)
class CheckOptions:
    """How hard to look: search restarts, seed, budget (seconds: no restart and no chunk of
    100 steps starts after it, so one compile or chunk may overrun it), a certificate to
    use, where to write a witness, ``max_work``: the most prefixes a route may enumerate
    before the check refuses to start it (:data:`MAX_WORK`); for the stack search of a
    task without positions, ``steps`` of gradient descent per restart and ``samples``
    (seeded sequences when content is continuous)."""

    restarts: int = 8
    seed: int = 0
    budget: float = 30.0
    certificate: str | None = None
    witness: str | None = None
    max_work: int = 0
    steps: int = 1500
    samples: int = 256

    def __post_init__(self) -> None:
        as_int("check.restarts", self.restarts, minimum=1)
        as_int("check.seed", self.seed, minimum=0)
        as_int("check.max_work", self.max_work, minimum=0)
        as_int("check.steps", self.steps, minimum=1)
        as_int("check.samples", self.samples, minimum=1)
        if self.max_work == 0:
            object.__setattr__(self, "max_work", MAX_WORK)
        as_real("check.budget", self.budget, minimum=0.0, strict=True)
        for name in ("certificate", "witness"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"check.{name} must be a file path")


class ClaimParts:
    """Methods of the claim dataclass that only read its fields ``task``, ``model_class``,
    ``hypothesis`` (with ``max_error``, exact), ``conclusion`` and ``options``."""

    @property
    def max_error(self) -> float:
        """ε as the nearest float, for the search and for display; decisions use
        ``hypothesis.max_error`` (exact)."""
        return float(self.hypothesis.max_error)  # type: ignore[attr-defined]

    def with_options(self, **changes: Any) -> Self:
        """A copy with some check options changed (budget, seed, restarts, ...)."""
        return replace(self, options=replace(self.options, **changes))  # type: ignore

    def statement(self) -> str:
        """The claim in one sentence."""
        return (f"every {self.model_class} model with "  # type: ignore[attr-defined]
                f"{self.hypothesis.describe()} has "  # type: ignore[attr-defined]
                f"{self.conclusion.describe()} ({self.task!r})")  # type: ignore[attr-defined]
