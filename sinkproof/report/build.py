"""The ``sinkproof report``: tables that hold constructions against the theory.

A report is a list of :class:`Table` objects built by the section functions in
:data:`SECTIONS`, in order.  Each section receives the task (and ``max_work``, the most
(sequence, position) pairs an exhaustive evaluation may take) and returns tables.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import Interrupted
from ..tables import Tabular
from ..task import TriggerTask
from ..work import EVALUATE_MAX_WORK, refuse_beyond
from .constructions import constructions_section
from .family import theorem3_family_section
from .table import Table
from .tightness import theorem1_tightness_section, theorem5_sandwich_section


@dataclass
class Report(Tabular):
    """All tables of a report for one task instance.  As a table of records
    (:class:`~sinkproof.tables.Tabular`): one record per row of every table, its
    ``table`` (the title) first, then that table's columns."""

    task: TriggerTask
    tables: list[Table] = field(default_factory=list)

    def to_records(self) -> list[dict[str, Any]]:
        return [{"table": t.title, **record} for t in self.tables for record in t.to_records()]

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


SECTIONS: list[Callable[..., list[Table]]] = [
    constructions_section, theorem5_sandwich_section, theorem1_tightness_section,
    theorem3_family_section]


def build_report(task: TriggerTask, *, max_work: int | None = None) -> Report:
    """Run every section of :data:`SECTIONS` on ``task``.  Refused before any work where
    the task has more than ``max_work`` (sequence, position) pairs to evaluate (default
    :data:`~sinkproof.work.EVALUATE_MAX_WORK`, the CLI's ``--max-work``).  Ctrl-C raises
    :class:`~sinkproof.errors.Interrupted` with the report of the sections finished."""
    bound = refuse_beyond("(sequence, position) pairs to evaluate", task.n_positions,
                          max_work, EVALUATE_MAX_WORK)
    report = Report(task)
    for done, section in enumerate(SECTIONS):
        try:
            tables = section(task, max_work=bound)
        except KeyboardInterrupt:
            raise Interrupted(report, f"{done} of {len(SECTIONS)} sections finished") from None
        report.tables.extend(tables)
    return report
