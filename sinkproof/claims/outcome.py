"""The three answers of the checker: :class:`Proved`, :class:`Refuted`, :class:`Open`.

Each carries the claim, the evidence, and the CLI exit status
(0 proved, 1 refuted, 3 open; an interrupted check is Open with status 130; the other
statuses are in :data:`sinkproof.errors.EXIT_CODES`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import EXIT_INTERRUPTED, EXIT_OPEN
from ..tables import RecordTable, Tabular
from .schema import Claim, iter_sections


def _given(*pairs: tuple[str, str | None]) -> list[tuple[str, str]]:
    """The (label, text) pairs whose text is not empty."""
    return [(k, v) for k, v in pairs if v]


class _Text(Tabular):
    """Rendering shared by the outcomes: the claim's lines, then the outcome's facts; as a
    table, one row (:meth:`record`)."""

    claim: Claim
    status: str
    exit_code: int

    def facts(self) -> list[tuple[str, str]]:
        raise NotImplementedError

    def record(self) -> dict[str, Any]:
        """The outcome as one table row: claim title and statement, status, exit code, then
        every fact (label -> text)."""
        return {"claim": self.claim.title or "", "statement": self.claim.statement(),
                "status": self.status, "exit_code": self.exit_code, **dict(self.facts())}

    def to_records(self) -> list[dict[str, Any]]:
        return [self.record()]

    def render(self) -> str:
        """The outcome as plain text (what ``sinkproof check`` prints)."""
        head = f"{self.status.upper()}: {self.claim.title or self.claim.statement()}"
        return "\n".join([head, *(f"  {k}: {v}" for k, v in iter_sections(self.claim)),
                          *(f"  {k}: {v}" for k, v in self.facts())])

    def _repr_markdown_(self) -> str:
        title = self.status.capitalize()
        lines = [f"**{title}**" + (f" — {self.claim.title}" if self.claim.title else ""), ""]
        lines += [f"- {k}: {v}" for k, v in (*iter_sections(self.claim), *self.facts())]
        return "\n".join(lines)


@dataclass(frozen=True)
class Proved(_Text):
    """The claim holds: by a registered theorem whose hypotheses all hold for the claim's
    model class, or by a certificate that the trusted checker verified exactly.

    ``by``: the theorem's name or ``"certificate"``; ``bound``: the least bound the
    proof gives over the claimed positions (``>= min_bos_mass``), ``None`` when a named
    theorem's conclusion is vacuous at every claimed position (true, and says nothing);
    ``certificate``: the verified file, if any; ``detail``: how the bound was obtained.
    """

    claim: Claim
    by: str
    bound: float | None
    detail: str = ""
    certificate: str | None = None

    exit_code = 0
    status = "proved"

    def facts(self) -> list[tuple[str, str]]:
        cert = self.certificate and f"{self.certificate} (verified exactly)"
        return [("proved by", self.by), ("bound", self._bound_text()),
                *_given(("certificate", cert), ("detail", self.detail))]

    def _bound_text(self) -> str:
        if self.bound is None:
            return "vacuous (no positive bound at any claimed position)"
        return f"BOS mass >= {self.bound:.6g}"

    def __repr__(self) -> str:
        return f"Proved(by {self.by}: {self._bound_text()}; {self.claim.statement()})"

    def to_dict(self) -> dict[str, Any]:
        return dict(status=self.status, claim=self.claim.to_dict(), by=self.by,
                    bound=self.bound, detail=self.detail, certificate=self.certificate)


@dataclass(frozen=True)
class Refuted(_Text):
    """A model of the class satisfies the hypothesis and violates the conclusion.

    ``witness``: the file holding it (``sinkproof verify`` accepts it); ``model``: the
    :class:`~sinkproof.AttentionModel`; ``error``: its error on the hypothesis family
    (high precision); ``violations``: positions where the conclusion fails, with the
    BOS mass of every head there (high precision).
    """

    claim: Claim
    model: Any
    error: float
    violations: tuple[Any, ...]
    witness: str | None = None
    detail: str = ""

    exit_code = 1
    status = "refuted"

    def facts(self) -> list[tuple[str, str]]:
        shown = "; ".join(str(v) for v in self.violations[:3])
        more = f" (+{len(self.violations) - 3} more)" if len(self.violations) > 3 else ""
        path = self.witness and f"{self.witness} (check it with `sinkproof verify`)"
        return [("witness", f"{self.model!r}"),
                ("witness error", f"{self.error:.6g} <= {self.claim.max_error:g} "
                                  "(verified in high precision)"),
                ("violated at", shown + more),
                *_given(("witness file", path), ("detail", self.detail))]

    def __repr__(self) -> str:
        first = self.violations[0] if self.violations else "?"
        return (f"Refuted(witness with error {self.error:.3g} <= {self.claim.max_error:g}; "
                f"{first}; file={self.witness!r})")

    def to_dict(self) -> dict[str, Any]:
        return dict(status=self.status, claim=self.claim.to_dict(), error=self.error,
                    witness=self.witness, violations=[str(v) for v in self.violations],
                    detail=self.detail)


@dataclass(frozen=True)
class Open(_Text):
    """Neither proved nor refuted within the budget.

    ``frontier``: the best (error, BOS mass) trade-offs the search reached, as pairs;
    ``spent``: what was spent (seconds, restarts); ``reasons``: why each proof route
    did not apply; ``interrupted``: the check was stopped (Ctrl-C) before it finished,
    and this is what it had found (exit status 130); ``so_far``: what the route that was
    running had settled (the engine's exactly certified bounds), empty if nothing;
    ``for_time``: a wall-time safety stop (the claim's ``budget`` seconds) cut a route short
    before its deterministic budget (restarts x steps, tree nodes) was spent — *Open for
    time*: on a faster or idler machine the same check may settle.
    """

    claim: Claim
    frontier: tuple[tuple[float, float], ...] = ()
    spent: dict[str, float] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()
    interrupted: bool = False
    so_far: str = ""
    for_time: bool = False

    @property
    def exit_code(self) -> int:  # type: ignore[override]
        return EXIT_INTERRUPTED if self.interrupted else EXIT_OPEN

    @property
    def status(self) -> str:  # type: ignore[override]
        return ("open (interrupted)" if self.interrupted else
                "open (for time)" if self.for_time else "open")

    def facts(self) -> list[tuple[str, str]]:
        out = [("search", r.split(": ", 1)[1]) if r.startswith("search: ") else ("no proof", r)
               for r in self.reasons]
        if self.interrupted:
            out.append(("interrupted", "stopped by Ctrl-C before the check finished; "
                                       "this is the partial result"))
            if self.so_far:
                out.append(("so far (interrupted)", self.so_far))
        if self.for_time:
            out.append(("open for time", "the wall-time safety stop (the claim's budget "
                        "seconds) cut the search before its restarts x steps were spent; "
                        "raise [check] budget, or run on an idler machine"))
        if "restarts" not in self.spent:
            out.append(("search", "not run"))
        elif self.frontier:
            pts = ", ".join(f"(error {e:.3g}, BOS {b:.4g})" for e, b in self.frontier[:6])
            out.append(("best trade-offs found by search", pts))
        else:
            out.append(("search", "found no model within the error bound"))
        if self.spent:
            out.append(("budget spent", ", ".join(f"{k} {v:g}" for k, v in self.spent.items())))
        return out

    def __repr__(self) -> str:
        if "restarts" not in self.spent:
            best = "search not run"
        elif self.frontier:
            best = f"best (error, BOS) = ({self.frontier[0][0]:.3g}, {self.frontier[0][1]:.4g})"
        else:
            best = "no accurate model found"
        spent = ", ".join(f"{k} {v:g}" for k, v in self.spent.items())
        mark = ("interrupted; " if self.interrupted else "") + (
            "for time; " if self.for_time else "")
        return f"Open({mark}{best}; spent {spent}; {self.claim.statement()})"

    def to_dict(self) -> dict[str, Any]:
        return dict(status="open", claim=self.claim.to_dict(),
                    frontier=[list(p) for p in self.frontier], spent=dict(self.spent),
                    reasons=list(self.reasons), interrupted=self.interrupted,
                    so_far=self.so_far, for_time=self.for_time)


Outcome = Proved | Refuted | Open


def outcome_table(outcomes: Iterable[Outcome]) -> RecordTable:
    """Several outcomes as one table (one row each, :meth:`Proved.record` and friends)."""
    rows = []
    for i, outcome in enumerate(outcomes):
        if not isinstance(outcome, _Text):
            raise TypeError(f"outcome {i}: expected Proved, Refuted or Open, "
                            f"got {type(outcome).__name__}")
        rows.append(outcome.record())
    return RecordTable(rows)
