"""Exhaustive evaluation of S_T: the prefix evaluator against a naive per-sequence loop.

Both are measured in the same run and reported in (sequence, position) pairs per
second; the naive loop runs on a seeded random sample of the family for a fixed
time budget (running it on all of S_T would take minutes), so its rate is a rate,
not a total.  Usage: python benchmarks/bench_evaluate.py [--p 3] [--T 7] [--naive-seconds 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import sinkproof as sp


def naive_loop(model: sp.AttentionModel, sequences: list) -> tuple[float, int]:
    """Max error by running model.forward on each sequence; returns (max error, positions)."""
    worst, positions = 0.0, 0
    for seq in sequences:
        out, _ = model.forward(seq)
        y = model.task.targets(seq)
        worst = max(worst, float(np.linalg.norm(out - y, axis=1).max()))
        positions += len(seq) + 1
    return worst, positions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--p", type=int, default=3)
    parser.add_argument("--T", type=int, default=7)
    parser.add_argument("--naive-seconds", type=float, default=5.0)
    args = parser.parse_args()

    task = sp.TriggerTask(p=args.p, T=args.T)
    rng = np.random.default_rng(0)
    model = sp.AttentionModel(task, "softmax", rng.standard_normal((2, task.D, task.D)),
                              rng.standard_normal((2, task.p, task.p + 3)))
    print(f"instance: {task!r}; {task.n_sequences} sequences, {task.n_positions} positions, "
          f"H={model.H}")

    start = time.perf_counter()
    ev = sp.evaluate(model)
    fast_time = time.perf_counter() - start
    fast_rate = task.n_positions / fast_time
    print(f"prefix evaluator : {fast_time:8.2f} s for all {task.n_positions} positions "
          f"({ev.n_prefixes} distinct prefixes) -> {fast_rate:12.0f} positions/s")

    sample = task.sample(10**6, seed=1)
    done, positions, worst = 0, 0, 0.0
    start = time.perf_counter()
    while time.perf_counter() - start < args.naive_seconds and done < len(sample):
        w, n = naive_loop(model, sample[done: done + 200])
        worst, positions, done = max(worst, w), positions + n, done + 200
    naive_time = time.perf_counter() - start
    naive_rate = positions / naive_time
    print(f"naive loop       : {naive_time:8.2f} s for {positions} positions "
          f"({done} sampled sequences) -> {naive_rate:12.0f} positions/s")
    assert worst <= ev.max_error + 1e-12, "sampled error above the exhaustive maximum"
    print(f"ratio (prefix evaluator / naive loop): {fast_rate / naive_rate:.1f}x")


if __name__ == "__main__":
    main()
