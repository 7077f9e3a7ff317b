"""The checker's answer: did a certificate's claim verify, and if not, what failed first."""

from __future__ import annotations

import hashlib
import json
import textwrap
from dataclasses import dataclass, field
from typing import Any


def canonical_json(statement: Any) -> str:
    """The one text of a statement that its digest hashes: sorted keys, no spaces, ASCII."""
    return json.dumps(statement, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)


def digest_of(statement: Any) -> str:
    """SHA-256 (hex) of :func:`canonical_json` of ``statement``."""
    return hashlib.sha256(canonical_json(statement).encode("ascii")).hexdigest()


@dataclass(frozen=True)
class Verdict:
    """Outcome of checking one certificate in exact arithmetic.

    ``ok``: every inequality holds.  ``kind``: the certificate kind.  ``claim``:
    the statement (rebuilt by the checker from the verified numbers when ``ok``).
    ``failure``: the first failing inequality (``None`` when ``ok``).
    ``details``: kind-specific figures (exact rationals as strings).
    ``statement``: what was verified as canonical data (kind, the exact instance, the
    hypothesis, the model class, the conclusion), built by the checker from the numbers
    it checked; empty when not ``ok``.  ``digest``: its SHA-256, which ``sinkproof
    verify`` prints and a proof by certificate reports.
    ``figures``: what the checker measured, exactly, also when not ``ok`` (a witness's
    rigorous upper bounds on its error² and BOS measure and where they occur); ``None``
    for the other kinds.  ``bool(verdict)`` is ``verdict.ok``.
    """

    ok: bool
    kind: str
    claim: str
    failure: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    statement: dict[str, Any] = field(default_factory=dict)
    figures: Any = None

    def __bool__(self) -> bool:
        return self.ok

    @property
    def digest(self) -> str | None:
        """SHA-256 of the canonical verified statement (``None`` without one)."""
        return digest_of(self.statement) if self.ok and self.statement else None

    def canonical_statement(self) -> str:
        """The verified statement as the one text its digest hashes (:func:`canonical_json`)."""
        return canonical_json(self.statement)

    def __repr__(self) -> str:
        if self.ok:
            head, body = f"Verdict(verified, kind={self.kind!r})", self.claim
        else:
            head = f"Verdict(FAILED, kind={self.kind!r})"
            body = f"first failing inequality: {self.failure}"
        lines = textwrap.wrap(body, width=96, initial_indent="  ", subsequent_indent="  ")
        if len(lines) > 8:
            lines = lines[:7] + ["  ... (the whole text is .claim / .failure)"]
        return "\n".join([head, *lines])

    def _repr_markdown_(self) -> str:
        lines = [f"**{'Verified' if self.ok else 'Not verified'}** certificate `{self.kind}`", ""]
        lines.append(f"- claim: {self.claim}")
        if not self.ok:
            lines.append(f"- first failing inequality: `{self.failure}`")
        for key, value in self.details.items():
            lines.append(f"- {key}: {value}")
        return "\n".join(lines)
