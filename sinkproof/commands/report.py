"""``sinkproof report``: the constructions and bounds on one instance."""

from __future__ import annotations

import argparse

from ..cli_common import add_task_options, task_from_args, write_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="evaluate the constructions and bounds on an instance",
                       description="Evaluate Theorem 4's ReLU head and Theorem 5's softmax head "
                                   "exhaustively and print them next to the theory's bounds.")
    add_task_options(p)
    p.add_argument("--json", metavar="FILE", help="also write the figures as JSON ('-' = stdout)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..report import build_report

    report = build_report(task_from_args(args))
    if args.json != "-":
        print(report.render())
    if args.json:
        write_json(report.to_dict(), args.json)
    return 0
