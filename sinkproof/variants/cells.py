"""What every variants table is made of, in either setting: the :class:`Cell` (one answer
and its evidence), the :class:`VariantsTable`, the constants the cells are checked at,
the norm-price cell and which sink questions Theorem 3's hull certificate answers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..attention import MAPS
from ..tables import Tabular

__all__ = ["AWAY", "CERT_EPS", "PRICE_EPS", "SINK", "Cell", "VariantsTable", "covered", "fmt",
           "price_cell"]

CERT_EPS = Fraction(1, 100)
PRICE_EPS = (Fraction(1, 10**2), Fraction(1, 10**4), Fraction(1, 10**8))
AWAY = Fraction(3, 4)
"""A refuting construction keeps the mass (and share) at non-trigger positions <= this."""


@dataclass(frozen=True)
class Cell:
    """One answer: ``answer`` in yes/no/open, ``how`` in
    theorem/certificate/construction/witness/none, ``detail``, ``command``; ``evidence``
    holds the checked objects (not serialised)."""

    answer: str
    how: str
    detail: str
    command: str
    evidence: tuple[Any, ...] = ()

    def to_dict(self) -> dict[str, str]:
        return {"answer": self.answer, "how": self.how, "detail": self.detail,
                "command": self.command}


@dataclass(frozen=True)
class VariantsTable(Tabular):
    """Per attention map (``rows``: map -> question -> :class:`Cell`), the answers on ``task``
    (one head, ``values``)."""

    task: Any
    rows: dict[str, dict[str, Cell]]
    values: str = "fixed values"
    """The value maps of the table's heads, in words."""
    command: str = "sinkproof variants"
    """The command (with its setting) that rebuilds a cell."""

    def to_records(self) -> list[dict[str, Any]]:
        """One row per (map, question): answer, how it was settled, detail, command."""
        return [{"map": m, "question": q, **c.to_dict()}
                for m, qs in self.rows.items() for q, c in qs.items()]

    def to_json(self) -> list[dict[str, Any]]:
        """``[{"map": NAME, "questions": {QUESTION: {answer, how, detail, command}}}]``."""
        return [{"map": m, "questions": {q: c.to_dict() for q, c in qs.items()}}
                for m, qs in self.rows.items()]


def fmt(x: Any) -> str:
    """A bound for the cells' text: four significant digits."""
    return f"{float(x):.4g}"


def price_cell(cmd: str, exact: Cell, checks: list[Any], norm_of: Callable[[Fraction], float],
               bound: Callable[[Any], float | None] | None, formula: str) -> Cell | None:
    """The ``norm_grows_as_error_shrinks`` cell of either setting: ``no`` by an exact
    construction (its norm ``norm_of(level)``), ``yes`` by a certified bound ``bound(eps)``
    growing over :data:`PRICE_EPS` (stated as ``formula``) beside the last construction's
    (error, norm); ``None`` when neither applies."""
    if exact.answer == "yes":
        c = exact.evidence[0]
        return Cell("no", "construction", f"zero error at fixed norm {norm_of(c.level):.4g} "
                    f"(L={c.level}): every eps is reached at that norm", cmd, (c,))
    if bound is None:
        return None
    bounds = [bound(e) for e in PRICE_EPS]
    if any(b is None for b in bounds) or not all(a < b for a, b in zip(bounds, bounds[1:])):
        return None
    lows = ", ".join(f"eps=1e{-len(str(e.denominator)) + 1}: >= {b:.4g}"
                     for e, b in zip(PRICE_EPS, bounds))
    if not checks:
        return Cell("yes", "theorem", f"{formula}; {lows}; no verified construction to set "
                    "beside it", cmd, (tuple(zip(PRICE_EPS, bounds)),))
    con = checks[-1]
    lb = bound(con.error_hi)
    there = "vacuous" if lb is None else f"{lb:.4g}"
    return Cell("yes", "theorem", f"{formula}; {lows}; sandwich: the L={con.level} "
                f"construction has error <= {fmt(con.error_hi)} at norm "
                f"{norm_of(con.level):.4g} (bound there {there})", cmd,
                (tuple(zip(PRICE_EPS, bounds)), con))


def covered(name: str, which: str) -> bool:
    """The hull certificate answers this sink question for this map: weights on the simplex,
    or (``which = "null"``) a null slot merged into BOS."""
    props = MAPS[name].properties
    return props.on_simplex or (which == "null" and props.null_slot)


SINK = {"bos_sink_necessary": "bos", "null_sink_necessary": "null"}
