"""The ``sinkproof report``: tables that hold constructions against the theory.

A report is a list of :class:`Table` objects built by the section functions in
:data:`SECTIONS`, in order.  Each section receives the task and returns tables.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .constructions import relu_solution, softmax_solution
from .convex.report_section import theorem3_family_section
from .measures import evaluate
from .symbolic.tightness import theorem1_tightness_section, theorem5_sandwich_section
from .task import TriggerTask

DEFAULT_LS = (1.0, 2.0, 4.0, 8.0, 16.0)


@dataclass
class Table:
    """A titled table of rows (lists of cells) with a caption under it."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dict(title=self.title, columns=self.columns,
                    rows=[dict(zip(self.columns, r)) for r in self.rows], caption=self.caption)

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
    if isinstance(x, float):
        if x == 0 or math.isnan(x) or math.isinf(x):
            return f"{x:g}"
        return f"{x:.4g}" if 1e-3 <= abs(x) < 1e4 else f"{x:.3e}"
    return str(x)


@dataclass
class Report:
    """All tables of a report for one task instance."""

    task: TriggerTask
    tables: list[Table] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(task=self.task.describe(), tables=[t.to_dict() for t in self.tables])

    def __repr__(self) -> str:
        titles = "; ".join(t.title for t in self.tables)
        return f"Report({self.task!r}: {len(self.tables)} tables: {titles})"

    def _repr_markdown_(self) -> str:
        return (f"### sinkproof report for `{self.task!r}`\n\n"
                + "\n\n".join(t._repr_markdown_() for t in self.tables))

    def render(self) -> str:
        head = f"sinkproof report for {self.task!r}\n"
        return head + "\n\n".join(t.render() for t in self.tables) + "\n"


def constructions_section(task: TriggerTask, Ls: tuple[float, ...] = DEFAULT_LS) -> list[Table]:
    """Theorem 4's ReLU head and Theorem 5's softmax head, evaluated exhaustively."""
    rows = []
    models: list[tuple[str, Any]] = []
    if task.positions != "none":
        models.append(("relu (Thm 4)", relu_solution(task)))
    models += [(f"softmax L={L:g} (Thm 5)", softmax_solution(task, L)) for L in Ls]
    for name, model in models:
        ev = evaluate(model)
        rows.append([
            name, float(model.norm), ev.max_error,
            float(ev.bos_nontrigger.min[0]), float(ev.sink_score[0]),
            float(ev.bos_trigger.max[0]), float(np.exp(ev.log_nonbos_nontrigger.min[0])),
        ])
    caption = (f"exhaustive over S_T: {task.n_sequences} sequences, {task.n_positions} positions; "
               "BOS mass at non-trigger positions t >= 1 (min, mean = sink score), "
               "at triggers (max); "
               "min 1-α0 computed in the log domain")
    return [Table("Constructions", ["model", "||A||_2", "max error", "BOS min", "sink score",
                                    "BOS max@trig", "min 1-α0"], rows, caption)]


SECTIONS: list[Callable[[TriggerTask], list[Table]]] = [
    constructions_section, theorem5_sandwich_section, theorem1_tightness_section,
    theorem3_family_section]


def build_report(task: TriggerTask) -> Report:
    """Run every section of :data:`SECTIONS` on ``task``."""
    report = Report(task)
    for section in SECTIONS:
        report.tables.extend(section(task))
    return report
