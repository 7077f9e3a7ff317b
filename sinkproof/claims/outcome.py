"""The three answers of the checker: :class:`Proved`, :class:`Refuted`, :class:`Open`.

Each carries the claim, the evidence, and the CLI exit status
(0 proved, 1 refuted, 3 open; 2 is reserved for bad input).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .schema import Claim, iter_sections


def _claim_lines(claim: Claim) -> list[str]:
    return [f"  {label}: {text}" for label, text in iter_sections(claim)]


def _markdown(title: str, claim: Claim, facts: list[tuple[str, str]]) -> str:
    lines = [f"**{title}**" + (f" — {claim.title}" if claim.title else ""), ""]
    lines += [f"- {label}: {text}" for label, text in iter_sections(claim)]
    lines += [f"- {label}: {text}" for label, text in facts]
    return "\n".join(lines)


@dataclass(frozen=True)
class Proved:
    """The claim holds: by a registered theorem whose hypotheses all hold for the claim's
    model class, or by a certificate that the trusted checker verified exactly.

    ``by``: the theorem's name or ``"certificate"``; ``bound``: the least bound the
    proof gives over the claimed positions (``>= min_bos_mass``); ``certificate``: the
    verified file, if any; ``detail``: how the bound was obtained.
    """

    claim: Claim
    by: str
    bound: float
    detail: str = ""
    certificate: str | None = None
    notes: tuple[str, ...] = ()

    exit_code = 0
    status = "proved"

    def facts(self) -> list[tuple[str, str]]:
        out = [("proved by", self.by), ("bound", f"BOS mass >= {self.bound:.6g}")]
        if self.certificate:
            out.append(("certificate", f"{self.certificate} (verified exactly)"))
        if self.detail:
            out.append(("detail", self.detail))
        return out

    def render(self) -> str:
        return "\n".join([f"PROVED: {self.claim.title or self.claim.statement()}",
                          *_claim_lines(self.claim),
                          *(f"  {k}: {v}" for k, v in self.facts())])

    def __repr__(self) -> str:
        return f"Proved(by {self.by}: BOS mass >= {self.bound:.6g}; {self.claim.statement()})"

    def _repr_markdown_(self) -> str:
        return _markdown("Proved", self.claim, self.facts())

    def to_dict(self) -> dict[str, Any]:
        return dict(status=self.status, claim=self.claim.to_dict(), by=self.by,
                    bound=self.bound, detail=self.detail, certificate=self.certificate)


@dataclass(frozen=True)
class Refuted:
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
        out = [("witness", f"{self.model!r}"),
               ("witness error", f"{self.error:.6g} <= {self.claim.max_error:g} "
                                 "(verified in high precision)"),
               ("violated at", shown + more)]
        if self.witness:
            out.append(("witness file", f"{self.witness} (check it with `sinkproof verify`)"))
        if self.detail:
            out.append(("detail", self.detail))
        return out

    def render(self) -> str:
        return "\n".join([f"REFUTED: {self.claim.title or self.claim.statement()}",
                          *_claim_lines(self.claim),
                          *(f"  {k}: {v}" for k, v in self.facts())])

    def __repr__(self) -> str:
        first = self.violations[0] if self.violations else "?"
        return (f"Refuted(witness with error {self.error:.3g} <= {self.claim.max_error:g}; "
                f"{first}; file={self.witness!r})")

    def _repr_markdown_(self) -> str:
        return _markdown("Refuted", self.claim, self.facts())

    def to_dict(self) -> dict[str, Any]:
        return dict(status=self.status, claim=self.claim.to_dict(), error=self.error,
                    witness=self.witness, violations=[str(v) for v in self.violations],
                    detail=self.detail)


@dataclass(frozen=True)
class Open:
    """Neither proved nor refuted within the budget.

    ``frontier``: the best (error, BOS mass) trade-offs the search reached, as pairs;
    ``spent``: what was spent (seconds, restarts); ``reasons``: why each proof route
    did not apply.
    """

    claim: Claim
    frontier: tuple[tuple[float, float], ...] = ()
    spent: dict[str, float] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()

    exit_code = 3
    status = "open"

    def facts(self) -> list[tuple[str, str]]:
        out = [("search", r.split(": ", 1)[1]) if r.startswith("search: ") else ("no proof", r)
               for r in self.reasons]
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

    def render(self) -> str:
        return "\n".join([f"OPEN: {self.claim.title or self.claim.statement()}",
                          *_claim_lines(self.claim),
                          *(f"  {k}: {v}" for k, v in self.facts())])

    def __repr__(self) -> str:
        if "restarts" not in self.spent:
            best = "search not run"
        elif self.frontier:
            best = f"best (error, BOS) = ({self.frontier[0][0]:.3g}, {self.frontier[0][1]:.4g})"
        else:
            best = "no accurate model found"
        spent = ", ".join(f"{k} {v:g}" for k, v in self.spent.items())
        return f"Open({best}; spent {spent}; {self.claim.statement()})"

    def _repr_markdown_(self) -> str:
        return _markdown("Open", self.claim, self.facts())

    def to_dict(self) -> dict[str, Any]:
        return dict(status=self.status, claim=self.claim.to_dict(),
                    frontier=[list(p) for p in self.frontier], spent=dict(self.spent),
                    reasons=list(self.reasons))


Outcome = Proved | Refuted | Open
