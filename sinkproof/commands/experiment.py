"""``sinkproof experiment``: train softmax and ReLU attention and measure their sinks."""

from __future__ import annotations

import argparse
import sys

from ..cli_common import (
    add_figures_option,
    add_json_option,
    add_seeds_option,
    add_setting_option,
    add_work_option,
    emit_json,
    figures_wanted,
    param_arg,
    positive_number,
    require_setting_arg,
    reserve_stdio,
)
from ..errors import EXIT_INTERRUPTED, Interrupted, check_work
from ..model import KINDS
from ..task import CONTENT_SCHEMES
from ..work import EXPERIMENT_MAX_WORK as MAX_TOKEN_STEPS

JSON_KEYS = {"config": "the experiment's settings", "seconds": "wall time of the training",
             "runs": "one object per trained model (what results.json holds)",
             "table": "mean, std, min and max over seeds per (content, kind, heads)",
             "violations": "positions where a model broke a proved bound (0 unless a bug)",
             "files": "the files written under --out"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "experiment", help="train softmax and ReLU layers from random init and measure sinks",
        description="Train one attention layer (learned values) with Adam from seeded random "
                    "initialisations on the trigger task, for softmax and ReLU, several head "
                    "counts and seeds; measure held-out and longer-length error, per-head BOS "
                    "mass and sink score, and hold each model against Theorems 1, 3 and 4. "
                    "Writes results.json, results.md, config.json, models.json and figures to "
                    "--out. Exits 1 if a trained model breaks a proved bound.")
    preset = p.add_mutually_exclusive_group()
    preset.add_argument("--quick", action="store_true",
                        help="reduced run: signed content, T=8, 2 seeds, 300 steps")
    preset.add_argument("--smoke", action="store_true", help="tiny run for tests (seconds)")
    p.add_argument("--out", default="experiment-out", metavar="DIR",
                   help="output folder (default experiment-out)")
    add_seeds_option(p, None, "the seeds")
    p.add_argument("--steps", type=param_arg("steps"), help="Adam steps per run")
    p.add_argument("--lr", type=positive_number("lr"), help="Adam learning rate (> 0)")
    p.add_argument("--content-dim", "--p", dest="p", metavar="P", type=param_arg("p"),
                   help="content dimension p")
    p.add_argument("--max-length", "--T", dest="T", metavar="T", type=param_arg("T"),
                   help="trained maximum length T")
    p.add_argument("--longer-length", "--longer-T", type=param_arg("longer_T"), dest="longer_T",
                   metavar="T",
                   help="longest length of the length-generalisation test")
    p.add_argument("--heads", type=param_arg("heads"), nargs="+",
                   help="head counts (default 1 4)")
    p.add_argument("--kinds", nargs="+", choices=KINDS, help="attention kinds")
    p.add_argument("--contents", nargs="+", choices=CONTENT_SCHEMES, help="content sets")
    p.add_argument("--jobs", type=param_arg("jobs"), default=1, metavar="N",
                   help="train N models at a time in worker processes (default 1)")
    add_figures_option(p, "PNG figures")
    add_json_option(p, JSON_KEYS)
    p.add_argument("--quiet", action="store_true", help="no progress bar, no table")
    add_work_option(p, MAX_TOKEN_STEPS, "token-steps (training and evaluation tokens)")
    add_setting_option(p, "experiment")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    require_setting_arg(args, "experiment")
    from ..experiment import ExperimentConfig
    from ..experiment import run as run_experiment
    from ..experiment.config import token_steps
    from ..tables import for_terminal

    if args.quick:
        config = ExperimentConfig.quick()
    elif args.smoke:
        config = ExperimentConfig.smoke()
    else:
        config = ExperimentConfig.default()
    changes = {name: getattr(args, name) for name in ("steps", "lr", "p", "T", "longer_T")
               if getattr(args, name) is not None}
    for name in ("heads", "kinds", "contents"):
        if getattr(args, name):
            changes[name] = tuple(getattr(args, name))
    if args.seeds is not None:
        changes["seeds"] = tuple(range(args.seeds))
    if "T" in changes and "longer_T" not in changes:
        changes["longer_T"] = 2 * changes["T"]
    config = config.replace(**changes)
    check_work("token-steps of training and evaluation", token_steps(config), args.max_work)
    quiet = reserve_stdio(args, outputs=("json",)) or args.quiet
    figures = figures_wanted(args)
    try:
        result = run_experiment(config, out=args.out, progress=False if args.quiet else None,
                                figures=figures, jobs=args.jobs, max_work=args.max_work)
    except Interrupted as exc:
        print(f"experiment interrupted: {exc.progress}")
        if exc.partial.runs:  # type: ignore[attr-defined]
            print(exc.partial.markdown())  # type: ignore[attr-defined]
        return EXIT_INTERRUPTED
    files = [f"{args.out}/{name}" for name in ("results.json", "results.md", "config.json",
                                               "models.json")]
    files += [f"{args.out}/{name}" for name in ("heatmaps.png", "bos_training.png") if figures]
    if not quiet:
        print(for_terminal(result.markdown()))
        print(f"wrote {', '.join(files)}")
    status = 0
    if result.violations:
        print(f"sinkproof: {result.violations} positions break a proved bound: this is a bug",
              file=sys.stderr, flush=True)
        status = 1
    data = {"config": config.to_dict(), "seconds": result.seconds,
            "runs": [r.to_dict() for r in result.runs], "table": result.table(),
            "violations": result.violations, "files": files}
    return emit_json(args, data, status)
