"""``sinkproof report``: the constructions and bounds on one instance."""

from __future__ import annotations

import argparse

from ..cli_common import (
    add_json_option,
    add_setting_option,
    add_task_options,
    add_work_option,
    emit_json,
    require_setting_arg,
    reserve_stdio,
    task_from_args,
)
from ..errors import EXIT_INTERRUPTED, Interrupted, check_work
from ..work import EVALUATE_MAX_WORK

MAX_POSITIONS = EVALUATE_MAX_WORK
"""Default limit on the (sequence, position) pairs the report evaluates exhaustively."""

JSON_KEYS = {"task": "the task instance",
             "tables": "each table: title, columns, rows (column -> value), caption"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="evaluate the constructions and bounds on an instance",
                       description="Evaluate Theorem 4's ReLU head and Theorem 5's softmax head "
                                   "exhaustively and print them next to the theory's bounds.")
    add_task_options(p)
    add_json_option(p, JSON_KEYS)
    add_work_option(p, MAX_POSITIONS, "(sequence, position) pairs evaluated")
    add_setting_option(p, "report")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    require_setting_arg(args, "report")
    from ..report import build_report

    quiet = reserve_stdio(args, outputs=("json",))
    task = task_from_args(args)
    check_work("(sequence, position) pairs to evaluate", task.n_positions, args.max_work)
    try:
        report = build_report(task, max_work=args.max_work)
    except Interrupted as exc:
        print(f"report interrupted: {exc.progress}; the finished ones:")
        print(exc.partial.render())  # type: ignore[attr-defined]
        return EXIT_INTERRUPTED
    if not quiet:
        print(report.render())
    return emit_json(args, report.to_dict(), 0)
