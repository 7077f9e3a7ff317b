"""``sinkproof sweep``: a grid of jobs on Dask (embedded or a cluster), cached, resumable."""

from __future__ import annotations

import argparse

from ..cli_common import add_setting_option, require_setting_arg


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep", help="run a grid of checks, certificates, sink maps, searches or trainings",
        description="Expand SWEEP.toml (kind, [base], [grid] product axes, [zip] axes) into "
                    "jobs, run those the cache does not hold on Dask (an embedded "
                    "LocalCluster, one worker per core, or --scheduler ADDRESS) and write "
                    "OUT/results.parquet, OUT/results.csv, OUT/summary.md and a plot per "
                    "swept axis.  A failed job is recorded with its error; the sweep goes on. "
                    "The last line says how many jobs were computed and how many came from "
                    "the cache.")
    p.add_argument("sweep", metavar="SWEEP.toml", help="the sweep file")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="results, figures and the job cache go here")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="an existing Dask scheduler (e.g. tcp://10.0.0.5:8786) instead of "
                        "an embedded LocalCluster")
    p.add_argument("--workers", type=int, metavar="N",
                   help="LocalCluster worker processes (default: one per core)")
    p.add_argument("--executor", choices=("dask", "processes", "serial"), default="dask",
                   help="where jobs run (default: dask)")
    p.add_argument("--max-jobs", type=int, default=None, metavar="N",
                   help="refuse a sweep that expands to more jobs (default 100000)")
    p.add_argument("--no-figures", action="store_true", help="skip the plots")
    p.add_argument("--json", action="store_true", help="print the rows as JSON on stdout")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar (default: when stderr is a terminal)")
    add_setting_option(p, "sweep")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    require_setting_arg(args, "sweep")
    import json

    from ..errors import EXIT_INTERRUPTED, InputError
    from ..sweep import MAX_JOBS, load_sweep, run_sweep

    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be at least 1, got {args.workers}")
    if args.max_jobs is not None and args.max_jobs < 1:
        raise InputError(f"--max-jobs must be at least 1, got {args.max_jobs}")
    sweep = load_sweep(args.sweep, max_jobs=args.max_jobs or MAX_JOBS)
    result = run_sweep(sweep, args.out, executor=args.executor, workers=args.workers,
                       scheduler=args.scheduler, figures=not args.no_figures,
                       progress=args.progress)
    if args.json:
        print(json.dumps(result.rows, indent=1, default=str))
    else:
        for row in result.rows:
            if row["status"] == "failed":
                print(f"job {row['job']} failed: {row['failure']}")
        print(f"wrote {', '.join(result.files)}")
    print(result.summary_line())
    return EXIT_INTERRUPTED if result.interrupted else 0
