"""Claims about every accurate model of a class, and the checker that settles them.

``sinkproof.check(claim)`` answers :class:`Proved` (a registered theorem whose
hypotheses hold, or an exactly verified certificate), :class:`Refuted` (a witness
found by search and re-verified in high precision, saved to a file) or
:class:`Open` (the best trade-offs found and the budget spent).  Claims are
written as TOML or JSON files (see :mod:`sinkproof.claims.schema`).  One :class:`Claim`
type and one route chain serve every task: the ``[task]`` section's setting picks the task,
and its capabilities decide which parts the claim holds (:class:`StackClass` for a task
without positional features) and what each route does; what a verified statement implies is
decided by one registry (:mod:`sinkproof.claims.implications`).
"""

from __future__ import annotations

from .check import as_claim, check
from .outcome import Open, Outcome, Proved, Refuted, outcome_table
from .positions import NAMED_SETS, PositionSet
from .schema import (
    FAMILIES,
    CheckOptions,
    Claim,
    Conclusion,
    Hypothesis,
    StackClass,
    claim_from_dict,
    load_claim,
)

__all__ = [
    "FAMILIES",
    "NAMED_SETS",
    "CheckOptions",
    "Claim",
    "Conclusion",
    "Hypothesis",
    "Open",
    "Outcome",
    "PositionSet",
    "Proved",
    "Refuted",
    "StackClass",
    "as_claim",
    "check",
    "claim_from_dict",
    "load_claim",
    "outcome_table",
]
