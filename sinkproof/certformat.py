"""The certificate file format as producers write it: the envelope's constants, exact
rationals as text, token codes and map names, and the family counts the checker's limits
are estimated from.

The producers' own copy: the trusted checker (``sinkproof.checker``) reads the same format
with its own code and imports nothing from here, and producers import nothing of the
checker but its face (``verify``, ``verify_file``, ``load``, ``Verdict``, ``Limits``,
``LimitExceeded``, ``CertificateError``).  ``tests/test_architecture.py`` holds both sides
to the same values.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

FORMAT = "sinkproof-certificate"
"""Value of the ``format`` field of every certificate file."""

VERSION = 1
"""Envelope version the producers write."""

TRIGGER = -1
"""How certificates write the trigger token (as ``sinkproof.TRIG``)."""

MAP_NAMES = ("softmax", "sink_logit", "softmax1", "sparsemax", "entmax15", "sigmoid", "relu",
             "relu_length", "gated_softmax", "stick_breaking")
"""The attention maps a certificate may name (the keys of ``sinkproof.attention.MAPS``),
light enough for the commands' ``--help``."""

KINDS = ("bnb-heads", "bnb-learned-values", "hull", "hull-family", "paper-bnb-learned-values",
         "paper-hull-family", "paper-witness", "sinkmap-gated", "sinkmap-socp", "witness")
"""The certificate kinds the trusted checker reads (its kind table's names, sorted)."""


def format_rational(x: Fraction | int) -> str:
    """The file form of an exact rational: ``"p/q"`` (or ``"p"`` for integers)."""
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def dot(u: Sequence[Fraction], v: Sequence[Fraction]) -> Fraction:
    """Exact inner product of two rational vectors of one length."""
    if len(u) != len(v):
        raise ValueError(f"vectors of lengths {len(u)} and {len(v)} cannot be multiplied")
    return sum((a * b for a, b in zip(u, v)), Fraction(0))


def norm_sq(u: Sequence[Fraction]) -> Fraction:
    """Exact squared Euclidean norm ``u·u``."""
    return dot(u, u)


def paper_prefixes(m: int, L: int) -> int:
    """Distinct non-empty prefixes of the paper's family: without the trigger at depth
    ``t <= L-2`` (``m^t``), with the trigger at one of ``2..t`` (``(t-1) m^t``), for
    ``1 <= t <= L-1``; in closed form (no loop over ``L``)."""
    if L < 2:
        return 0
    if m == 1:
        return (L - 2) + (L - 2) * (L - 1) // 2
    # Σ_{t=1}^{L-2} m^t  +  Σ_{t=1}^{L-1} (t-1) m^t
    geometric = (m ** (L - 1) - m) // (m - 1)
    weighted = ((L - 2) * m ** (L + 1) - (L - 1) * m**L + m**2) // (m - 1) ** 2
    return geometric + weighted


__all__ = ["FORMAT", "MAP_NAMES", "TRIGGER", "VERSION", "dot", "format_rational", "norm_sq",
           "paper_prefixes"]
