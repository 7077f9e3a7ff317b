"""Per-position Theorem 3 certificates, singly or in batches.

At a non-trigger position ``t`` of ``X``, every normalised head with error
``<= ε`` at positions 0 and ``t`` has ``α_t0 >= 1 - f·ε/d_t``, ``d_t`` the distance
from 0 to the hull of the values of ``x_1..x_t`` (``f = 1`` for ``U_fix``).  A batch
is solved once per distinct token set, in one QP per set size.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .._validate import as_int
from ..certformat import format_rational
from ..task import TRIG, TriggerTask
from .certfile import CertificateMixin, envelope
from .situations import Situation, solve_situations
from .values import ValueTable, check_eps, value_table


@dataclass(frozen=True)
class PositionCertificate(CertificateMixin):
    """Theorem 3 at position ``t`` of ``sequence``: ``bound`` (exact) or why there is none."""

    values: ValueTable
    eps: Fraction
    sequence: tuple[int, ...]
    t: int
    situation: Situation

    @property
    def bound(self) -> Fraction | None:
        """Certified lower bound on ``α_t0`` (``None``: Theorem 3 gives none here)."""
        return self.situation.bound

    @property
    def distance(self) -> float:
        """The solver's float ``d_t``."""
        return self.situation.distance

    @property
    def d(self) -> Fraction | None:
        """Certified rational ``d <= d_t``."""
        return self.situation.d

    @property
    def w(self) -> list[Fraction] | None:
        """Separating direction: ``w·v_j >= d·||w||`` for every ``j <= t``."""
        return self.situation.w

    @property
    def reason(self) -> str:
        return self.situation.reason

    def to_dict(self) -> dict[str, Any]:
        """The certificate file content (kind ``hull``)."""
        instance = self.values.instance(self.eps)
        instance["sequence"] = list(self.sequence)
        instance["t"] = self.t
        b = self.bound
        claim = {"statement": f"BOS mass at t={self.t} of {self.sequence} >= "
                              f"{'n/a' if b is None else format_rational(b)}",
                 "bound": None if b is None else format_rational(b)}
        return envelope("hull", instance, claim, self.situation.entry())

    def __repr__(self) -> str:
        where = f"(BOS, {', '.join('TRIG' if x == TRIG else str(x) for x in self.sequence)})"
        if self.bound is None:
            return f"PositionCertificate({where}, t={self.t}: no bound — {self.reason})"
        return (f"PositionCertificate({where}, t={self.t}: BOS mass >= {float(self.bound):.6g} "
                f"[d >= {float(self.d):.6g}, ε = {format_rational(self.eps)}, "
                f"{'fixed' if self.values.fixed else 'given'} values])")


    def _repr_markdown_(self) -> str:
        return f"`{self!r}`"


def _position(task: TriggerTask, seq: Sequence[int], t: Any) -> tuple[tuple[int, ...], int,
                                                                      tuple[int, ...]]:
    codes = task.encode(seq)  # validates tokens, length and trigger count
    user = task.decode(codes)
    t = as_int("t", t, minimum=1)
    if t > len(user):
        raise ValueError(f"position t={t} is beyond the sequence of length {len(user)}")
    if user[t - 1] == TRIG:
        raise ValueError(f"position t={t} holds the trigger; Theorem 3 bounds non-trigger "
                         "positions only")
    return user, t, tuple(sorted(set(user[:t])))


def position_certificates(task: TriggerTask, positions: Iterable[tuple[Sequence[int], int]],
                          eps: Any, values: Any = "fixed") -> list[PositionCertificate]:
    """Theorem 3 certificates at many ``(sequence, t)`` pairs: one QP solve per distinct set."""
    table = value_table(task, values)
    eps = check_eps(eps)
    parsed = [_position(task, seq, t) for seq, t in positions]
    solved = solve_situations(table, [key for _, _, key in parsed], eps)
    return [PositionCertificate(table, eps, seq, t, solved[key]) for seq, t, key in parsed]


def position_certificate(task: TriggerTask, sequence: Sequence[int], t: int, eps: Any,
                         values: Any = "fixed") -> PositionCertificate:
    """Theorem 3 certificate at position ``t >= 1`` (``x_t`` not the trigger) of ``sequence``."""
    return position_certificates(task, [(sequence, t)], eps, values)[0]
