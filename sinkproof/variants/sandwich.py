"""The norm-price sandwich: a construction's (verified error, norm) beside the certified
least norm any head of the map needs for that error."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..errors import Interrupted
from ..task import TriggerTask
from .constructions import construction
from .floors import error_floor
from .normprice import NORM_PRICE_MAPS, norm_lower_bound
from .verify import checker_missing, verify_construction

__all__ = ["SandwichRow", "sandwich"]

LEVELS = (2, 4, 8, 16, 32)


@dataclass(frozen=True)
class SandwichRow:
    """At level ``L``: the construction's certified error bound and norm, and the certified
    lower bound on the norm of every head with that error (``None``: vacuous)."""

    kind: str
    level: Fraction
    error_hi: float
    construction_norm: float
    lower_bound: float | None

    @property
    def ratio(self) -> float | None:
        """Construction norm over the lower bound (the sandwich's gap)."""
        return None if not self.lower_bound else self.construction_norm / self.lower_bound


def sandwich_maps(task: TriggerTask) -> tuple[str, ...]:
    """The maps with a norm price whose constructions can be verified and approach zero
    error on ``task``: a price bound, a trusted-checker rule, no error floor."""
    return tuple(k for k in NORM_PRICE_MAPS
                 if checker_missing(k) is None and error_floor(task, k) is None)


def sandwich(task: TriggerTask, kinds: tuple[str, ...] | None = None,
             levels: tuple[int, ...] = LEVELS) -> list[SandwichRow]:
    """One row per map (default :func:`sandwich_maps`) and level.  Ctrl-C raises
    :class:`~sinkproof.errors.Interrupted` with the rows finished."""
    kinds = sandwich_maps(task) if kinds is None else kinds
    rows: list[SandwichRow] = []
    try:
        for kind in kinds:
            for L in levels:
                con = construction(task, kind, L)
                err = verify_construction(con).error_hi
                rows.append(SandwichRow(kind, con.level, err, con.norm,
                                        norm_lower_bound(task, kind, err)))
    except KeyboardInterrupt:
        raise Interrupted(rows, f"{len(rows)} of {len(kinds) * len(levels)} rows finished"
                          ) from None
    return rows


def render(rows: list[SandwichRow]) -> str:
    """The sandwich as a text table."""
    w = max([14, *(len(r.kind) + 1 for r in rows)])
    out = [f"{'map':<{w}}{'L':>4}  {'error <=':>10}  {'norm needed >=':>14}  "
           f"{'construction norm':>17}  {'ratio':>6}"]
    for r in rows:
        lb = "-" if r.lower_bound is None else f"{r.lower_bound:.4g}"
        ratio = "-" if r.ratio is None else f"{r.ratio:.3g}"
        out.append(f"{r.kind:<{w}}{str(r.level):>4}  {r.error_hi:>10.3e}  {lb:>14}  "
                   f"{r.construction_norm:>17.4g}  {ratio:>6}")
    return "\n".join(out)
