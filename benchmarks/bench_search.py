"""Search throughput: restarts per second and best error under a fixed budget, 1 vs N processes.

Canonical instance (p=2, T=6, whole family S_T), single-head softmax with fixed
values, the search's feasibility objective with target error ``--eps`` and no BOS
constraint (so each restart drives the error down as far as it can).  Two parts,
both measured in this run:

1. fixed work: the same ``--restarts`` seeded restarts as ``search`` runs them, in
   this process (processes=1: JAX's intra-op threads may use every core) and in N
   worker processes (fresh processes, each with one compute thread,
   :func:`sinkproof.executor.shared_processes`), cold (the first call: the workers' start-up
   and JAX compilation) and warm (the same call again: pools persist in a process);
   the best error must be identical (same seed, same result) and the ratio of the
   wall-clock times is the parallel speed-up of ``search`` itself.  Next to each wall
   time: the CPU seconds per restart of the processes that computed (this process for
   1, JAX's threads included; the workers' from /proc otherwise).  Why that ratio is
   what it is (the machine's ceiling, threads, the straggler tail, the parent's work),
   1 one-thread worker against N: ``benchmarks/bench_restarts.py``;
2. fixed wall-clock budget (``--budget`` seconds each): restarts that finished
   within it, restarts per second, and the best error they reached.

Usage: python benchmarks/bench_search.py [--restarts 16] [--maxiter 60] [--budget 12]
       [--processes N]
"""

from __future__ import annotations

import argparse
import os
import time
from contextlib import closing

import sinkproof as sp
from sinkproof.executor import shared_processes
from sinkproof.search.engine import _outcomes, available_cores
from sinkproof.search.restart import SearchSettings

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_of(pids: list[int]) -> float:
    """User + system CPU seconds of processes (all their threads), from /proc (Linux);
    NaN where /proc is not there."""
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        total += (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
    return total


def _cpu(processes: int) -> float:
    """CPU seconds so far of whoever runs the restarts: this process for 1 (JAX's and
    BLAS's threads included), else the kept pool's workers."""
    if processes == 1:
        return time.process_time()
    return _cpu_of(shared_processes(processes).pids())


def run(settings: SearchSettings, restarts: int, processes: int) -> tuple[float, float, list]:
    """What ``search`` does: 1 = in this process (JAX uses every core it may), N = workers.
    Returns wall seconds, CPU seconds of the computing processes, and the outcomes."""
    start, cpu = time.perf_counter(), _cpu(processes)  # 0 before a pool's first start
    with closing(_outcomes(settings, restarts, processes)) as it:
        done = [o for o in it if o is not None and not o.cut]
    wall = time.perf_counter() - start
    return wall, _cpu(processes) - cpu, done


def instance_arguments(parser: argparse.ArgumentParser) -> None:
    """The canonical search instance's options (shared with ``bench_restarts.py``)."""
    parser.add_argument("--p", type=int, default=2)
    parser.add_argument("--T", type=int, default=6)
    parser.add_argument("--eps", type=float, default=1e-3)
    parser.add_argument("--restarts", type=int, default=16)
    parser.add_argument("--maxiter", type=int, default=60)
    parser.add_argument("--processes", type=int, default=max(2, available_cores()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    instance_arguments(parser)
    parser.add_argument("--budget", type=float, default=12.0)
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
        cold, _, done = run(settings(), args.restarts, procs)  # start-up and compilation
        warm, cpu, again = run(settings(), args.restarts, procs)  # the same work, warm
        assert [o.error for o in done] == [o.error for o in again]
        best = min(o.error for o in done)
        rows[procs] = (cold, warm, best, cpu / len(again))
        print(f"   {procs} process(es): {cold:6.1f} s cold (first call), {warm:6.1f} s warm, "
              f"{len(done) / warm:.3f} restarts/s warm, CPU {cpu / len(again):.3f} s per "
              f"restart, best error {best:.6g}; load {os.getloadavg()[0]:.1f}")
    (c1, w1, e1, u1), (cn, wn, en, un) = rows[1], rows[args.processes]
    print(f"   speed-up N/1 warm: {w1 / wn:.2f}x wall (cold, with start-up: {c1 / cn:.2f}x); "
          f"CPU per restart N/1: {un / u1:.2f}; same best error: {e1 == en}; load average now "
          f"{os.getloadavg()[0]:.1f}")
    print(f"RATIO search {args.processes} processes warm: {w1 / wn:.2f}x (vs the same seeded "
          f"restarts in 1 process, same run; CPU per restart {u1:.3f} s there, {un:.3f} s in "
          f"the workers; load {os.getloadavg()[0]:.1f})")

    print(f"\n2. fixed budget: {args.budget:g} s each")
    for procs in (1, args.processes):
        _, _, done = run(settings(time.time() + args.budget), 10_000, procs)
        best = min((o.error for o in done), default=float("nan"))
        print(f"   {procs} process(es): {len(done)} restarts finished, "
              f"{len(done) / args.budget:.3f} restarts/s, best error {best:.6g}")


if __name__ == "__main__":
    main()
