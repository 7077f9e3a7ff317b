"""The certificate file format as producers write it: the envelope's constants, exact
rationals as text, token codes, and the family counts the checker's limits
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
from itertools import combinations
from typing import Any

FORMAT = "sinkproof-certificate"
"""Value of the ``format`` field of every certificate file."""

VERSION = 1
"""Envelope version the producers write."""

TRIGGER = -1
"""How certificates write the trigger token (as ``sinkproof.TRIG``)."""

KINDS = ("bnb-heads", "bnb-learned-values", "hull", "hull-family", "paper-bnb-learned-values",
         "paper-composition", "paper-hull-family", "paper-subfamily-bnb", "paper-witness",
         "sinkmap-gated", "sinkmap-socp", "witness")
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


def exact_values(content: Sequence[Sequence[Fraction]], U: Sequence[Sequence[Fraction]] | None
                 ) -> tuple[dict[int, list[Fraction]], list[Fraction]]:
    """The value vectors ``v_x`` (content codes ``0..k-1`` and :data:`TRIGGER`) and ``v_BOS``
    of the value map ``U`` on the token features ``e(c) = [c; 1, 0, 0]``,
    ``e(TRIG) = [0; 0, 1, 0]``, ``e(BOS) = [0; 0, 0, 1]``, exactly; ``U = None`` is ``U_fix``
    (``v_c = c``, ``v_TRIG = v_BOS = 0``)."""
    p = len(content[0])
    if U is None:
        zero = [Fraction(0)] * p
        return {**{i: list(c) for i, c in enumerate(content)}, TRIGGER: zero}, list(zero)
    values = {i: [dot(row, [*c, Fraction(1), Fraction(0), Fraction(0)]) for row in U]
              for i, c in enumerate(content)}
    values[TRIGGER] = [row[p + 1] for row in U]
    return values, [row[p + 2] for row in U]


def instance_statement(description: dict[str, Any], content: Sequence[Sequence[Fraction]],
                       U: Sequence[Sequence[Fraction]] | None = None) -> dict[str, Any]:
    """A trigger-setting instance as a verified statement writes it (``p, T, triggers``, the
    content scheme and its exact vectors, ``"fixed"`` or the exact ``U``), from the task's
    description, its exact content vectors and ``U`` (``None`` or ``U_fix``: fixed)."""
    scheme = description["content"] if isinstance(description["content"], str) else "custom"
    vectors: dict[str, Any] = {"scheme": scheme,
                               "vectors": [[format_rational(x) for x in c] for c in content]}
    if scheme == "gaussian":
        vectors.update(k=description["k"], seed=description["seed"])
    p = description["p"]
    fixed = U is None or all(U[i][j] == int(i == j) for i in range(p) for j in range(p + 3))
    return {"p": p, "T": description["T"], "triggers": description.get("triggers", "single"),
            "content": vectors,
            "values": "fixed" if fixed else {"U": [[format_rational(x) for x in row]
                                                   for row in U or []]}}


def paper_instance(task: Any) -> dict[str, Any]:
    """The paper-setting part of a certificate's ``instance``: the task's description and
    every content vector as the exact rational of the float the task holds (what the
    checker's paper Family reader reads back)."""
    return {"task": task.describe(),
            "content_vectors": [[format_rational(Fraction(float(v))) for v in c]
                                for c in task.content]}


def trigger_token_sets(k: int, T: int) -> list[tuple[int, ...]]:
    """The token sets ``{x_1..x_t}`` of the non-trigger positions ``t >= 1`` of ``S_T`` with
    ``k`` content tokens (sorted tuples, :data:`TRIGGER` first; at least one content
    token, at most ``T`` tokens), in the order the certificate lists them."""
    universe = [*range(k), TRIGGER]
    return [tuple(sorted(combo)) for size in range(1, min(T, k + 1) + 1)
            for combo in combinations(universe, size) if combo != (TRIGGER,)]


def paper_token_sets(m: int, L: int) -> list[tuple[tuple[int, ...], int | None]]:
    """The token sets of the non-trigger positions of the paper's family: a content set
    ``C`` (``1 <= |C| <= L-2``), without or with one trigger (its content index)."""
    return [(combo, trig) for size in range(1, min(m, L - 2) + 1)
            for combo in combinations(range(m), size) for trig in (None, *range(m))]


__all__ = ["FORMAT", "TRIGGER", "VERSION", "dot", "exact_values", "format_rational",
           "instance_statement", "norm_sq", "paper_instance", "paper_prefixes",
           "paper_token_sets", "trigger_token_sets"]
