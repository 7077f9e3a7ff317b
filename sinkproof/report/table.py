"""A titled table of cells: the unit every report section returns."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..exact_numbers import show
from ..tables import Tabular


@dataclass
class Table(Tabular):
    """A titled table of rows (lists of cells) with a caption under it."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""

    def to_records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, r)) for r in self.rows]

    def table_columns(self) -> list[str]:
        return list(self.columns)

    def to_dict(self) -> dict[str, Any]:
        return dict(title=self.title, columns=self.columns, rows=self.to_records(),
                    caption=self.caption)

    def __repr__(self) -> str:
        return f"Table({self.title!r}: {len(self.rows)} rows x {len(self.columns)} columns)"

    def _repr_markdown_(self) -> str:
        def cell(c: Any) -> str:
            return _fmt(c).replace("|", "\\|")

        head = "| " + " | ".join(cell(c) for c in self.columns) + " |"
        rows = ["| " + " | ".join(cell(c) for c in r) + " |" for r in self.rows]
        caption = f"\n\n{self.caption}" if self.caption else ""
        return (f"**{self.title}**\n\n{head}\n|" + "---|" * len(self.columns) + "\n"
                + "\n".join(rows) + caption)

    def render(self) -> str:
        cells = [[_fmt(c) for c in row] for row in self.rows]
        widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h)
                  for i, h in enumerate(self.columns)]
        line = "  ".join(h.ljust(w) for h, w in zip(self.columns, widths))
        out = [self.title, "=" * len(self.title), line, "-" * len(line)]
        out += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
        if self.caption:
            out.append(self.caption)
        return "\n".join(out)


def _fmt(x: Any) -> str:
    if isinstance(x, Fraction):
        return show(x)
    if isinstance(x, float):
        if x == 0 or math.isnan(x) or math.isinf(x):
            return f"{x:g}"
        return f"{x:.4g}" if 1e-3 <= abs(x) < 1e4 else f"{x:.3e}"
    return str(x)
