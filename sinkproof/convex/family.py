"""Family certificates: Theorem 3 at every non-trigger position of ``S_T`` at once.

With token-only values the hull at ``(X, t)`` depends only on the set
``S = {x_1..x_t}``, so the family's (often > 10^8) positions collapse to the
situations ``S`` that occur: every set of at most ``T`` tokens (content and the
trigger) holding a content token.  The cost grows with the number of
situations, ``< 2^(k+1)``, not with the number of sequences.

The paper's setting (a task without positional features) is the same argument with its
own data: values are the tokens with their BOS coordinate dropped (``W_O W_V = I - e_0
e_0^T``, so ``v_BOS = 0``); at a non-trigger position the target is 0, so an error
``<= ε`` forces ``α_t0 >= 1 - ε/d(S)``.  Every non-BOS value has trigger + bias
coordinates summing to 1, so ``d(S) >= 1/√2`` always, after the trigger too.  For each
occurring ``S`` the exact min-norm point ``z`` of the hull is computed (a float QP finds
the active face, then the face's min-norm point is solved in rationals and its
optimality checked exactly), so ``d(S)² = z·z`` exactly and the certificate's ``d`` is
``sqrt(z·z)`` rounded down to 12 digits (kind ``paper-hull-family``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import Any

import numpy as np

from ..certformat import format_rational, paper_instance, paper_token_sets, trigger_token_sets
from ..checker import LimitExceeded, Limits
from ..exact_numbers import error_level
from ..tables import Tabular
from ..task import TriggerTask
from ..tasks.protocol import Task, require
from ..work import SITUATIONS_MAX_WORK, refuse_beyond
from .certfile import CertificateMixin, envelope
from .minnorm import min_norm_points
from .rational import (
    certified_distance,
    exact_min_norm,
    floor_to,
    integer_direction,
    sqrt_lower,
)
from .situations import Situation, solve_situations, token_label
from .values import ValueTable, check_eps, value_table

Vector = list[Fraction]
TokenSet = tuple[tuple[int, ...], int | None]
"""A paper token set: ``(sorted content indices, the trigger's content index or None)``."""


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


def situation_count(task: Any) -> int:
    """Token sets a family certificate solves, counted before it starts: with positions
    the sets of distinct content tokens (each with and without a trigger),
    ``2 sum_{s <= min(k, T)} C(k, s)``; by token sets ``m + 1`` units per content set
    ``s <= min(m, L-2)`` (one hull program with at most ``m + 1`` points)."""
    if isinstance(task, Task) and not task.has_positions:
        return sum(comb(task.m, s) for s in range(1, min(task.m, task.L - 2) + 1)) \
            * (task.m + 1)
    return 2 * sum(comb(task.k, s) for s in range(1, min(task.k, task.T) + 1))


def _checker_would_accept(count: int, what: str) -> None:
    """Refuse, before listing them, more token sets than the checker's default limit reads
    (the file would be refused by ``sinkproof verify``)."""
    limit = Limits().situations
    if count > limit:
        raise LimitExceeded(f"{what}: {count} exceeds the limit {limit} (raise it with "
                            f"{Limits.flags()['situations']})", "situations")


def family_certificate(task: Any, eps: Any, values: Any = "fixed", *,
                       max_work: int | None = None
                       ) -> FamilyCertificate | PaperFamilyCertificate:
    """Certify Theorem 3 at every non-trigger position of the family of ``task``.

    ``values``: ``"fixed"`` (every model with ``U_fix``: bound ``1 - ε/d``), or a
    given ``U``/one-head model (bound ``1 - 2ε/d``, or ``1 - ε/d`` when ``v_b = 0``).
    A task without positional features (the paper's setting) is read by token sets
    with its fixed values (:func:`token_set_certificate`, kind ``paper-hull-family``).
    ``eps`` in ``(0, 1)`` (the CLI's rule: from 1 on every bound is vacuous);
    ``max_work``: the most situations before it refuses to start (default
    :data:`~sinkproof.work.SITUATIONS_MAX_WORK`, the limit of ``sinkproof certify``).
    """
    if isinstance(task, Task):
        refuse_beyond("situations to certify", situation_count(task), max_work,
                      SITUATIONS_MAX_WORK)
    if isinstance(task, Task) and not task.has_positions:
        if not (isinstance(values, str) and values == "fixed"):
            raise ValueError("a task without positional features is certified with its "
                             "fixed values (values='fixed')")
        return token_set_certificate(task, eps)
    table = value_table(task, values)
    eps = check_eps(error_level(eps, "eps", positive=True))
    _checker_would_accept(sum(comb(task.k + 1, s) for s in range(1, min(task.T, task.k + 1) + 1))
                          - 1, f"instance: situations of k={task.k}, T={task.T}")
    needed = trigger_token_sets(task.k, task.T)
    solved = solve_situations(table, needed, eps)
    return FamilyCertificate(table, eps, tuple(solved[s] for s in needed))


def universal_direction(p: int) -> Vector:
    """``e_trigger + e_bias``: ``w·v = 1`` on every non-BOS value, ``||w|| = √2``."""
    return [Fraction(1)] + [Fraction(0)] * (p - 2) + [Fraction(1)]


@dataclass(frozen=True)
class PaperSituation:
    """One token set: ``d_sq`` the exact ``d(S)²`` (None if only a lower bound was
    certified), ``w`` the direction, ``d`` the certified rational distance, ``bound``."""

    key: TokenSet
    w: Vector
    d: Fraction
    bound: Fraction
    d_sq: Fraction | None


@dataclass(frozen=True)
class PaperFamilyCertificate(CertificateMixin):
    """Theorem 3 over the paper's finite family (fixed values), one entry per token set."""

    task: Any
    eps: Fraction
    situations: tuple[PaperSituation, ...]

    @property
    def min_bound(self) -> Fraction:
        return min(s.bound for s in self.situations)

    @property
    def min_bound_after_trigger(self) -> Fraction:
        return min(s.bound for s in self.situations if s.key[1] is not None)

    @property
    def min_distance(self) -> Fraction:
        return min(s.d for s in self.situations)

    def to_dict(self) -> dict[str, Any]:
        """The certificate file content (kind ``paper-hull-family``)."""
        instance = {**paper_instance(self.task), "values": "fixed",
                    "eps": format_rational(self.eps)}
        claim = {"statement": (f"Theorem 3 in the paper's setting, {self.task!r}, fixed values, "
                               f"eps={format_rational(self.eps)}: BOS mass >= "
                               f"{format_rational(self.min_bound)} at every non-trigger "
                               "position"),
                 "min_bound": format_rational(self.min_bound)}
        data = {"situations": [_paper_entry(s.key, s.w, s.d, s.bound) for s in self.situations]}
        return envelope(PAPER_KIND, instance, claim, data)

    def __repr__(self) -> str:
        return (f"PaperFamilyCertificate({self.task!r}, eps={format_rational(self.eps)}: "
                f"{len(self.situations)} situations, min d = {float(self.min_distance):.6g}, "
                f"BOS mass >= {float(self.min_bound):.6g} everywhere, "
                f">= {float(self.min_bound_after_trigger):.6g} after the trigger)")


PAPER_KIND = "paper-hull-family"


def _paper_entry(s: TokenSet, w: list[Fraction], d: Fraction, bound: Fraction
                 ) -> dict[str, Any]:
    """The ``paper-hull-family`` entry for one token set."""
    return {"content": list(s[0]), "trigger": s[1], "w": [format_rational(x) for x in w],
            "d": format_rational(d), "bound": format_rational(bound)}


def token_set_certificate(task: Any, eps: Any) -> PaperFamilyCertificate:
    """Certify ``α_t0 >= 1 - ε/d(S_t)`` at every non-trigger position of a task without
    positional features (the paper's setting: fixed values ``v_x = x`` less its BOS
    coordinate, one-layer targets, a finite content set), one entry per token set
    ``S_t`` (module docstring of the paper's case: exact min-norm points)."""
    require_token_sets(task, "a family certificate")
    eps = error_level(eps, "eps")
    m = len(task.content)
    tokens, triggers = ([task.token_features_exact(code)[1:] for code in range(start, start + m)]
                        for start in (0, m))
    _checker_would_accept(situation_count(task), f"instance: situations of m={m}, L={task.L}")
    needed = paper_token_sets(m, task.L)
    point_sets = [[tokens[i] for i in s[0]] + ([] if s[1] is None else [triggers[s[1]]])
                  for s in needed]
    floats = [np.array([[float(x) for x in v] for v in pts]) for pts in point_sets]
    solved = min_norm_points(floats)
    out = []
    for s, pts, sol in zip(needed, point_sets, solved):
        z = exact_min_norm(pts, sol.weights)
        if z is not None:
            d_sq: Fraction | None = sum((x * x for x in z), Fraction(0))
            w, d = z, sqrt_lower(d_sq)
        else:  # a certified lower bound: the float direction's, or trigger + bias (1/√2)
            d_sq = None
            w, d = universal_direction(len(pts[0])), Fraction(7071067811, 10**10)
            direction = integer_direction(sol.direction)
            better = certified_distance(direction, pts) if direction else None
            if better is not None and better > d:
                w, d = direction, better
        bound = floor_to(1 - eps / d)
        out.append(PaperSituation(s, w, d, bound, d_sq))
    return PaperFamilyCertificate(task, eps, tuple(out))




def paper_family_certificate(task: Any, eps: Any) -> PaperFamilyCertificate:
    """:func:`family_certificate` in the paper's setting (the name its callers use)."""
    return family_certificate(task, eps)


def require_token_sets(task: Any, what: str) -> None:
    """``task`` has no positional features, a finite family and one-layer targets (what
    the token-set reading needs), or one clear refusal naming ``what``."""
    require(task, "has_positions", f"{what} by token sets", value=False)
    require(task, "finite", what)
    require(task, "residual_targets", what, value=False)


require_one_layer_finite = require_token_sets
"""The paper setting's former name for :func:`require_token_sets`."""
