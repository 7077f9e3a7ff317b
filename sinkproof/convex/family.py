"""Family certificates: Theorem 3 at every non-trigger position of ``S_T`` at once.

With token-only values the hull at ``(X, t)`` depends only on the set
``S = {x_1..x_t}``, so the family's (often > 10^8) positions collapse to the
situations ``S`` that occur: every set of at most ``T`` tokens (content and the
trigger) holding a content token.  The cost grows with the number of
situations, ``< 2^(k+1)``, not with the number of sequences.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..certformat import format_rational
from ..checker.hull import occurring_situations
from ..checker.instance import read_instance
from ..tables import Tabular
from ..task import TriggerTask
from .certfile import CertificateMixin, envelope
from .situations import Situation, solve_situations, token_label
from .values import ValueTable, check_eps, value_table


@dataclass(frozen=True)
class FamilyCertificate(CertificateMixin, Tabular):
    """Theorem 3 over the whole family: one :class:`Situation` per occurring token set.

    ``min_bound``: the least certified bound over bounded situations (``None`` if none).
    ``bounded``, ``zero_in_hull``, ``undecided``: the situations by outcome.
    ``n_positions``: non-trigger positions ``t >= 1`` of the family it covers.
    """

    values: ValueTable
    eps: Fraction
    situations: tuple[Situation, ...]

    @property
    def task(self) -> TriggerTask:
        return self.values.task

    @property
    def bounded(self) -> list[Situation]:
        return [s for s in self.situations if s.bound is not None]

    @property
    def zero_in_hull(self) -> list[Situation]:
        return [s for s in self.situations if s.zero_combination is not None]

    @property
    def undecided(self) -> list[Situation]:
        return [s for s in self.situations if s.bound is None and s.zero_combination is None]

    @property
    def min_bound(self) -> Fraction | None:
        bounds = [s.bound for s in self.bounded]
        return min(bounds) if bounds else None

    @property
    def n_positions(self) -> int:
        """Number of (sequence, t) pairs with ``t >= 1`` and ``x_t`` content in the family."""
        task = self.task
        return sum(task.count_sequences(n) * n for n in range(1, task.T + 1)) - _trigger_positions(
            task)

    def bound_at(self, seq: tuple[int, ...], t: int) -> Fraction | None:
        """The certified bound at position ``t`` of ``seq`` (``None``: no bound there)."""
        key = tuple(sorted(set(int(x) for x in seq[:t])))
        return {s.tokens: s for s in self.situations}[key].bound

    def to_dict(self) -> dict[str, Any]:
        """The certificate file content (kind ``hull-family``)."""
        mb = self.min_bound
        claim = {
            "statement": (f"Theorem 3 on every non-trigger position of {self.task!r} with "
                          f"values {'U_fix' if self.values.fixed else 'U'} and "
                          f"eps={format_rational(self.eps)}: BOS mass >= "
                          f"{'n/a' if mb is None else format_rational(mb)} wherever bounded"),
            "bounded": len(self.bounded),
            "min_bound": None if mb is None else format_rational(mb),
        }
        data = {"situations": [s.entry() for s in self.situations]}
        return envelope("hull-family", self.values.instance(self.eps), claim, data)

    def to_records(self) -> list[dict[str, Any]]:
        """One row per token set: the certified distance ``d`` and BOS-mass bound (exact;
        ``None`` where there is no bound), the solver's distance and the reason."""
        return [dict(situation="{" + ", ".join(token_label(c) for c in s.tokens) + "}",
                     d=s.d, bound=s.bound, distance=s.distance, reason=s.reason)
                for s in self.situations]

    def table(self) -> list[tuple[str, str, str]]:
        """Rows ``(situation, d, bound or reason)``."""
        rows = []
        for s in self.situations:
            name = "{" + ", ".join(token_label(c) for c in s.tokens) + "}"
            if s.bound is not None:
                rows.append((name, f"{float(s.d):.6g}", f">= {float(s.bound):.6g}"))
            else:
                rows.append((name, "0" if s.zero_combination else "?", "no bound: " + s.reason))
        return rows

    def __repr__(self) -> str:
        mb = self.min_bound
        low = "none" if mb is None else f"{float(mb):.6g}"
        vacuous = sum(1 for s in self.bounded if s.bound <= 0)
        note = f", {vacuous} of them vacuous (<= 0)" if vacuous else ""
        return (f"FamilyCertificate({self.task!r}, eps={format_rational(self.eps)}, "
                f"values={'fixed' if self.values.fixed else 'U'}: {len(self.situations)} "
                f"situations cover {self.n_positions:,} positions; bounded "
                f"{len(self.bounded)} (min BOS mass >= {low}{note}), 0 in hull "
                f"{len(self.zero_in_hull)}, undecided {len(self.undecided)})")

    def _repr_markdown_(self) -> str:
        lines = [f"**Theorem 3 family certificate** — {self.task!r}, ε = "
                 f"{format_rational(self.eps)}", "", "| situation S | d(S) | BOS mass |",
                 "|---|---|---|"]
        lines += [f"| {a} | {b} | {c} |" for a, b, c in self.table()]
        return "\n".join(lines)


def _trigger_positions(task: TriggerTask) -> int:
    """Number of (sequence, t) pairs of the family with ``x_t = TRIG``."""
    k = task.k
    if task.triggers == "multi":  # each of the n slots is a trigger in (k+1)^(n-1) sequences
        return sum(n * (k + 1) ** (n - 1) for n in range(1, task.T + 1))
    return sum(n * k ** (n - 1) for n in range(1, task.T + 1))


def family_certificate(task: TriggerTask, eps: Any, values: Any = "fixed") -> FamilyCertificate:
    """Certify Theorem 3 at every non-trigger position of the family of ``task``.

    ``values``: ``"fixed"`` (every model with ``U_fix``: bound ``1 - ε/d``), or a
    given ``U``/one-head model (bound ``1 - 2ε/d``, or ``1 - ε/d`` when ``v_b = 0``).
    """
    table = value_table(task, values)
    eps = check_eps(eps)
    inst = read_instance(table.instance(eps))  # the checker's own list of situations
    needed = occurring_situations(inst)
    solved = solve_situations(table, needed, eps)
    return FamilyCertificate(table, eps, tuple(solved[s] for s in needed))
