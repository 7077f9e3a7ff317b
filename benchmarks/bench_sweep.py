"""Sweep scaling: the same grid of sink-map jobs on a Dask LocalCluster of 1 and of 2
worker processes, measured in one run; prints both wall times and their ratio.

Baseline: the same sweep on one worker (what a user gets without a cluster), run
first, in the same process and on the same machine; both runs use a fresh cache, so
every job is computed.  Results must be identical (checked).  The jobs are Theorem 6
sink maps at p=2, T=4 over ``--jobs`` error levels: CPU-bound, about a second each.

Usage: python benchmarks/bench_sweep.py [--jobs 8] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from fractions import Fraction

from sinkproof.executor import DaskExecutor
from sinkproof.sweep import run_sweep


def spec(jobs: int) -> dict:
    eps = [str(Fraction(1, 100) * (i + 1)) for i in range(jobs)]
    return {"kind": "sinkmap", "name": "bench", "base": {"p": 2, "T": 4}, "grid": {"eps": eps}}


def timed(jobs: int, workers: int) -> tuple[float, list]:
    with DaskExecutor(workers=workers) as ex, tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        result = run_sweep(spec(jobs), out, executor=ex, figures=False, progress=False)
        seconds = time.perf_counter() - start
    assert result.failed == 0, [r["failure"] for r in result.rows if r["status"] != "ok"]
    return seconds, [{k: v for k, v in r.items() if k not in ("seconds", "cached")}
                     for r in result.rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    t1, rows1 = timed(args.jobs, 1)
    tn, rowsn = timed(args.jobs, args.workers)
    assert rows1 == rowsn, "results differ between worker counts"
    print(f"sweep of {args.jobs} sink-map jobs (p=2, T=4), Dask LocalCluster")
    print("baseline: the same sweep on 1 worker process, same run")
    print(f"1 worker:  {t1:7.2f} s")
    print(f"{args.workers} workers: {tn:7.2f} s")
    print(f"ratio {args.workers} vs 1 workers: {t1 / tn:.2f}x  (identical results; "
          f"1-minute load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, "
          f"on {os.cpu_count()} cores)")
    print(f"RATIO sweep {args.workers} workers: {t1 / tn:.2f}x (vs the same sweep on 1 Dask "
          f"worker process, same run)")


if __name__ == "__main__":
    main()
