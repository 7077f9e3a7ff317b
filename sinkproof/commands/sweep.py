"""``sinkproof sweep``: a grid of jobs on Dask (embedded or a cluster), cached, resumable."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..cli_common import (
    add_figures_option,
    add_json_option,
    add_setting_option,
    emit_json,
    figures_wanted,
    input_path,
    param_arg,
    require_setting_arg,
    reserve_stdio,
)

JSON_KEYS = {"rows": "one object per job: its settings, outcome fields and status",
             "computed": "jobs computed now", "cached": "jobs taken from the cache",
             "failed": "jobs that failed (recorded with their error)",
             "interrupted": "true when stopped by Ctrl-C (finished jobs kept)",
             "files": "the files written under --out",
             "rechecks": "cached results that did not verify again (computed again)"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep", help="run a grid of checks, certificates, sink maps, searches or trainings",
        description="Expand SWEEP.toml (kind, [base], [grid] product axes, [zip] axes) into "
                    "jobs, run those the cache does not hold on Dask (an embedded "
                    "LocalCluster, one worker per core, or --scheduler ADDRESS) and write "
                    "OUT/results.parquet, OUT/results.csv, OUT/summary.md and a plot per "
                    "swept axis.  A failed job is recorded with its error; the sweep goes on. "
                    "The last line says how many jobs were computed and how many came from "
                    "the cache. Paths in SWEEP.toml are relative to it (stdin: to the current "
                    "folder); files are written only under --out, never over a file no sweep "
                    "wrote there. Exit status 0: every job finished; 1: some job failed "
                    "(as pytest with a failed test); 2: a bad sweep file; 130: interrupted.")
    p.add_argument("sweep", metavar="SWEEP.toml", help="the sweep file ('-' = stdin)")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="results, figures and the job cache go here")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="an existing Dask scheduler (e.g. tcp://10.0.0.5:8786) instead of "
                        "an embedded LocalCluster")
    p.add_argument("--workers", type=param_arg("workers"), metavar="N",
                   help="LocalCluster worker processes (default: one per core)")
    p.add_argument("--executor", choices=("dask", "processes", "serial"), default="dask",
                   help="where jobs run (default: dask)")
    p.add_argument("--max-jobs", type=param_arg("max_jobs"), default=None, metavar="N",
                   help="refuse a sweep that expands to more jobs (default 100000)")
    add_figures_option(p, "plots")
    add_json_option(p, JSON_KEYS)
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar (default: when stderr is a terminal)")
    add_setting_option(p, "sweep")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    require_setting_arg(args, "sweep")
    from ..errors import EXIT_FAILS, EXIT_INTERRUPTED, EXIT_OK
    from ..sweep import load_sweep, run_sweep

    quiet = reserve_stdio(args, outputs=("json",), inputs=("sweep",))
    with input_path(args.sweep, ".toml") as path:
        root = Path.cwd() if args.sweep == "-" else None  # paths: relative to the file
        sweep = load_sweep(path, max_jobs=args.max_jobs, root=root)
    result = run_sweep(sweep, args.out, executor=args.executor, workers=args.workers,
                       scheduler=args.scheduler, figures=figures_wanted(args),
                       max_jobs=args.max_jobs,
                       progress=args.progress,
                       announce=None if quiet else lambda line: print(line, file=sys.stderr))
    if not quiet:
        for line in result.rechecks:
            print(line)
        for row in result.rows:
            if row["status"] == "failed":
                print(f"job {row['job']} failed: {row['failure']}")
        print(f"wrote {', '.join(result.files)}")
        print(result.summary_line())
    data = {"rows": result.rows, "computed": result.computed, "cached": result.cached,
            "failed": result.failed, "interrupted": result.interrupted,
            "files": list(result.files), "rechecks": list(result.rechecks)}
    status = (EXIT_INTERRUPTED if result.interrupted else EXIT_FAILS if result.failed
              else EXIT_OK)
    return emit_json(args, data, status)
