"""What Ctrl-C-safe solving costs: a sink-map SOCP (its CVXPY form) solved by plain CLARABEL
and by the interruptible CLARABEL (a termination callback polled every iteration, a SIGINT handler
swapped around each solve), alternating, on the same compiled programs.

Prints ``RATIO interruptible_clarabel: <x>x (vs plain CLARABEL, same programs)``: the
median time of a solve with the callback over the median without it; and the longest
stretch Ctrl-C must wait: from the start of the solver call to its first iteration
(Clarabel's set-up), and between two iterations.

Usage: python benchmarks/bench_interrupt.py [--p 2] [--T 6] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import sinkproof as sp
from sinkproof.convex import interruptible
from sinkproof.convex.interruptible import CLARABEL
from sinkproof.sinkmap.blocks import build_block
from sinkproof.sinkmap.core import _Planner, known_values
from sinkproof.sinkmap.solve import CvxpyDual


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--p", type=int, default=2)
    parser.add_argument("--T", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    task = sp.TriggerTask(p=args.p, T=args.T)
    V = task.token_table @ known_values(task, "fixed").U.T
    planner = _Planner(task, V, 0.1, "full", 0, None, "CLARABEL")
    t = task.T
    rows = planner.full_prefixes(0, t, False)
    block = build_block(task, V, 0, t, rows, 0.1)
    solver = CvxpyDual(block, np.ones(block.n))  # the CVXPY route of a sink-map block
    solver.target.value = block.indicator(tuple(int(c) for c in block.prefixes[0]))
    solver.margin.value = 1e-7
    times: dict[str, list[float]] = {"plain": [], "interruptible": []}
    values: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, choice in (("plain", "CLARABEL"), ("interruptible", CLARABEL)):
            start = time.perf_counter()
            solver.problem.solve(solver=choice)
            times[name].append(time.perf_counter() - start)
            values[name] = float(solver.problem.value)
    assert np.isclose(values["plain"], values["interruptible"], rtol=1e-9), values
    polls: list[float] = []
    real_poll = interruptible._stop_requested

    def timed_poll(info: object) -> bool:
        polls.append(time.perf_counter())
        return real_poll(info)

    interruptible._stop_requested = timed_poll
    start = time.perf_counter()
    solver.problem.solve(solver=CLARABEL)
    interruptible._stop_requested = real_poll
    gaps = np.diff(polls)
    print(f"uninterruptible stretches: {polls[0] - start:.3f} s to the first iteration "
          f"(CVXPY's compiled data to Clarabel's set-up), at most "
          f"{gaps.max() if gaps.size else 0.0:.3f} s between iterations ({len(polls)})")
    plain, mine = (statistics.median(times[k]) for k in ("plain", "interruptible"))
    print(f"one block of p={args.p}, T={args.T}: {block.m} cone constraints, {block.n} "
          f"variables; median solve {plain * 1e3:.1f} ms plain, {mine * 1e3:.1f} ms "
          f"interruptible ({args.rounds} rounds each, alternating)")
    print(f"RATIO interruptible_clarabel: {mine / plain:.3f}x (vs plain CLARABEL, same programs)")


if __name__ == "__main__":
    main()
