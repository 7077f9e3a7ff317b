"""Search throughput: restarts per second and best error under a fixed budget, 1 vs N processes.

Canonical instance (p=2, T=6, whole family S_T), single-head softmax with fixed
values, the search's feasibility objective with target error ``--eps`` and no BOS
constraint (so each restart drives the error down as far as it can).  Two parts,
both measured in this run:

1. fixed work: the same ``--restarts`` seeded restarts in one process and in N;
   the best error must be identical (same seed, same result) and the ratio of the
   wall-clock times is the parallel speed-up;
2. fixed wall-clock budget (``--budget`` seconds each): restarts that finished
   within it, restarts per second, and the best error they reached.

Usage: python benchmarks/bench_search.py [--restarts 4] [--budget 12] [--processes N]
"""

from __future__ import annotations

import argparse
import os
import time
from contextlib import closing

import sinkproof as sp
from sinkproof.search.engine import _outcomes, available_cores
from sinkproof.search.restart import SearchSettings


def run(settings: SearchSettings, restarts: int, processes: int) -> tuple[float, list]:
    start = time.perf_counter()
    with closing(_outcomes(settings, restarts, processes)) as it:
        done = [o for o in it if o is not None and not o.cut]
    return time.perf_counter() - start, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--p", type=int, default=2)
    parser.add_argument("--T", type=int, default=6)
    parser.add_argument("--eps", type=float, default=1e-3)
    parser.add_argument("--restarts", type=int, default=4)
    parser.add_argument("--maxiter", type=int, default=20)
    parser.add_argument("--budget", type=float, default=12.0)
    parser.add_argument("--processes", type=int, default=max(2, available_cores()))
    args = parser.parse_args()

    task = sp.TriggerTask(p=args.p, T=args.T)
    print(f"instance: {task!r}, {task.n_positions} positions; softmax, 1 head, fixed values; "
          f"{available_cores()} cores available, N={args.processes}, load average "
          f"{os.getloadavg()[0]:.1f} (a loaded machine leaves little for the extra processes)")

    def settings(deadline: float | None = None) -> SearchSettings:
        return SearchSettings(task, "softmax", 1, "fixed", args.eps, 1.0, "nontrigger", seed=0,
                              maxiter=args.maxiter, deadline=deadline)

    print(f"\n1. fixed work: {args.restarts} restarts, maxiter {args.maxiter} per stage")
    rows = {}
    for procs in (1, args.processes):
        seconds, done = run(settings(), args.restarts, procs)
        best = min(o.error for o in done)
        rows[procs] = (seconds, best)
        print(f"   {procs} process(es): {seconds:6.1f} s, {len(done) / seconds:.3f} restarts/s, "
              f"best error {best:.6g}")
    (t1, e1), (tn, en) = rows[1], rows[args.processes]
    print(f"   speed-up N/1: {t1 / tn:.2f}x; same best error: {e1 == en}")
    print(f"RATIO search {args.processes} processes: {t1 / tn:.2f}x (vs the same seeded "
          f"restarts in 1 process, same run)")

    print(f"\n2. fixed budget: {args.budget:g} s each")
    for procs in (1, args.processes):
        _, done = run(settings(time.time() + args.budget), 10_000, procs)
        best = min((o.error for o in done), default=float("nan"))
        print(f"   {procs} process(es): {len(done)} restarts finished, "
              f"{len(done) / args.budget:.3f} restarts/s, best error {best:.6g}")


if __name__ == "__main__":
    main()
