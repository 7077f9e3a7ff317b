"""``sinkproof variants``: the four sink questions for every attention map, each cell checked."""

from __future__ import annotations

import argparse
from typing import Any

from ..attention import MAPS
from ..cli_common import (
    add_json_option,
    add_setting_option,
    count,
    emit_json,
    param_arg,
    require_setting_arg,
    reserve_stdio,
)
from ..errors import EXIT_INTERRUPTED, EXIT_OK, Interrupted, check_work
from ..variants.questions import QUESTIONS
from ..work import VARIANTS_MAX_WORK as MAX_TABLE_WORK
from . import COMMANDS

MAX_TRAINED_WORK = 200_000_000
"""Default limit on ``--trained``'s token-steps (every run's training steps x batch x
length plus its evaluation sequences x length); the default is about 86 million."""

_SHORT = {"bos_sink_necessary": "BOS sink?", "null_sink_necessary": "null sink?",
          "exact_solution_at_finite_norm": "exact at finite norm?",
          "norm_grows_as_error_shrinks": "norm -> inf as eps -> 0?"}


JSON_KEYS = {"task": "the instance the table is about",
             "maps": "[{map, questions: {QUESTION: {answer, how, detail, command}}}] in "
                     "the order of MAPS (empty with --sandwich)",
             "sandwich": "the --sandwich text (null without it)",
             "trained": "with --trained: per setting, map and head count the measured error "
                        "and sink, share and null scores (null without it)"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "variants", help=COMMANDS["variants"],
        description="For each attention map: must an accurate head put mass near 1 on BOS "
                    "(on a null: BOS, a zero-valued slot or key) at some non-trigger "
                    "position; can it reach zero error at finite weight norm; does the norm "
                    "needed for error eps grow without bound as eps -> 0.  Every yes/no is "
                    "backed by a check run now (a checker-verified certificate, an exactly or "
                    "interval-verified construction, or a theorem with exact constants); "
                    "otherwise the cell is open.  Instance: p=2, T=3 (--quick: p=1, T=2), "
                    "signed content, inverse positions, one head, fixed values; with "
                    "--setting paper the paper's task n=4, content {-1, 1}, L=5 (--quick: "
                    "L=4), one head with W_O W_V = I - e_0 e_0^T.")
    p.add_argument("--quick", action="store_true", help="the small instance p=1, T=2 (fast)")
    p.add_argument("--map", choices=tuple(MAPS), help="only this map (all four cells in full)")
    p.add_argument("--question", choices=QUESTIONS, help="only this question (with --map)")
    add_json_option(p, JSON_KEYS)
    p.add_argument("--sandwich", action="store_true",
                   help="print the norm price instead: for each map that cannot reach zero "
                        "error, constructions' verified (error, norm) beside the certified "
                        "least norm for that error")
    p.add_argument("--trained", action="store_true",
                   help="print what training does instead: for each map, 1 and 4 heads, 3 "
                        "seeds, in our setting and the paper's (--setting paper: the paper's "
                        "only), the held-out error and the "
                        "sink, BOS-share and null scores per head (measurements, not proofs; "
                        "minutes: --quick trains briefly)")
    p.add_argument("--processes", type=count(1), default=1, metavar="N",
                   help="worker processes for --trained (default 1)")
    p.add_argument("--max-work", type=param_arg("max_work"), default=None, metavar="N",
                   dest="max_work",
                   help=f"refuse to start beyond N position evaluations (the table; default "
                        f"{MAX_TABLE_WORK:,}) or N token-steps (--trained; default "
                        f"{MAX_TRAINED_WORK:,}); the estimate is made before any work")
    add_setting_option(p, "variants")
    p.set_defaults(func=run)


def _short(c: object) -> str:
    vacuous = ", vacuous" if c.detail.startswith("vacuously") else ""  # type: ignore
    return f"{c.answer} ({c.how}{vacuous})"  # type: ignore[attr-defined]


def _render(table: object, full: bool) -> str:
    rows = table.rows  # type: ignore[attr-defined]
    lines = [f"attention variants on {table.task!r}, one head, "  # type: ignore[attr-defined]
             f"{table.values}"]  # type: ignore[attr-defined]
    shown = list(next(iter(rows.values())))
    width = max([14, *(len(name) + 1 for name in rows)])
    head = f"{'map':<{width}}" + "".join(f"{_SHORT[q]:<26}" for q in shown)
    lines += [head, "-" * len(head)]
    for name, qs in rows.items():
        lines.append(f"{name:<{width}}" + "".join(f"{_short(c):<26}"
                                                  for c in qs.values()).rstrip())
    if full:
        for name, qs in rows.items():
            for q, c in qs.items():
                lines += ["", f"{name} / {q}: {c.answer} ({c.how})", f"  {c.detail}",
                          f"  $ {c.command}"]
    else:
        lines += ["", f"details: {table.command} --map NAME  (or --json -)"]  # type: ignore
    return "\n".join(lines)


def table_task(quick: bool, setting: str = "trigger") -> Any:
    """The table's instance for ``--setting`` (:data:`sinkproof.variants.table.TABLE_TASKS`,
    read by the task registry's description reader)."""
    from ..variants.table import default_task

    return default_task(quick, setting)


def table_work(quick: bool, maps: tuple[str, ...] | None = None,
               setting: str = "trigger") -> int:
    """Upper bound on the position evaluations of the table (or ``--sandwich``) over
    ``maps`` (default all) on the instance of ``setting``
    (:func:`sinkproof.variants.table.table_work`)."""
    from ..variants.table import table_work as work

    return work(table_task(quick, setting), maps)


def trained_work(quick: bool, maps: tuple[str, ...] | None = None) -> int:
    """Upper bound on the token-steps of ``--trained`` over ``maps`` (default all): per run,
    training steps x batch x length plus the evaluation sequences x length; runs are
    settings x maps x head counts x seeds."""
    from ..variants import trained as tr

    ours = tr.QUICK_OURS if quick else tr.OURS
    paper = tr.QUICK_PAPER if quick else tr.PAPER
    per_map = len(tr.HEADS) * len(tr.SEEDS) * (
        ours.steps * ours.batch_size * ours.T + (ours.n_heldout + ours.n_train) * ours.T
        + paper.max_steps * paper.batch * paper.L + paper.n_eval * paper.L)
    return per_map * len(maps or tuple(MAPS))


def run(args: argparse.Namespace) -> int:
    setting = require_setting_arg(args, "variants")
    from ..tasks.protocol import require
    from ..variants.table import build_table
    from ..variants.table import table_work as work

    quiet = reserve_stdio(args, outputs=("json",))
    maps = (args.map,) if args.map else None
    task = table_task(args.quick, setting)
    if args.trained:
        check_work("token-steps of training", trained_work(args.quick, maps),
                   MAX_TRAINED_WORK if args.max_work is None else args.max_work)
    else:
        check_work("position evaluations", work(task, maps),
                   MAX_TABLE_WORK if args.max_work is None else args.max_work)
    if args.sandwich:
        from ..variants.sandwich import render, sandwich

        require(task, "has_positions", "variants --sandwich (in the paper's setting each "
                "norm_grows_as_error_shrinks cell states its sandwich)")
        try:
            text = render(sandwich(task))
        except Interrupted as exc:
            print(f"variants --sandwich interrupted: {exc.progress}")
            print(render(exc.partial))  # type: ignore[arg-type]
            return EXIT_INTERRUPTED
        if not quiet:
            print(text)
        return emit_json(args, {"task": task.describe(), "maps": [], "sandwich": text,
                                "trained": None}, EXIT_OK)
    if args.trained:
        return _trained(args, quiet)
    if args.question and not args.map:
        raise ValueError("--question needs --map")
    try:
        table = build_table(task, quick=args.quick, maps=maps, max_work=args.max_work)
    except Interrupted as exc:
        print(f"variants interrupted: {exc.progress}"
              + (":" if exc.partial.rows else ""))  # type: ignore[attr-defined]
        if exc.partial.rows:  # type: ignore[attr-defined]
            print(_render(exc.partial, full=bool(args.map)))
        return EXIT_INTERRUPTED
    if args.question:
        table.rows[args.map] = {args.question: table.rows[args.map][args.question]}
    if not quiet:
        print(_render(table, full=bool(args.map)))
    return emit_json(args, {"task": table.task.describe(), "maps": table.to_json(),
                            "sandwich": None, "trained": None}, EXIT_OK)


def _trained(args: argparse.Namespace, quiet: bool) -> int:
    import sys

    from ..variants.trained import render_trained, train_variants

    if args.question or args.sandwich:
        raise ValueError("--trained takes neither --question nor --sandwich")

    def report(run: object) -> None:
        r = run  # a TrainedRun
        print(f"  trained {r.setting} {r.kind} H={r.heads} seed={r.seed}: error "  # type: ignore
              f"{r.error:.3g} ({r.seconds:.1f} s)", file=sys.stderr)  # type: ignore

    settings = ("paper",) if args.setting == "paper" else ("ours", "paper")
    rows = train_variants(kinds=(args.map,) if args.map else None, quick=args.quick,
                          on_run=report, processes=args.processes, settings=settings)
    if not quiet:
        print(render_trained(rows))
    from ..variants.table import default_task

    trained = [{"setting": r.setting, "map": r.kind, "heads": r.heads, "error_median": r.error,
                "sink": r.sink.tolist(), "share": r.share.tolist(), "null": r.null.tolist(),
                "runs": [run.to_dict() for run in r.runs]} for r in rows]
    return emit_json(args, {"task": default_task(args.quick).describe(), "maps": [],
                            "sandwich": None, "trained": trained}, EXIT_OK)
