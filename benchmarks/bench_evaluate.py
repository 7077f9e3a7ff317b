"""Exhaustive evaluation of the family S_T against the loop a user would write, same run.

Baseline ("naive loop"): for each sequence, ``model.forward(seq)`` and
``task.targets(seq)`` (the task's own forward and targets) and the largest error
norm; sequences drawn uniformly over the family's (sequence, position) pairs, so a
length-``n`` sequence is drawn with probability proportional to ``(n+1)·|S_n|`` and
long sequences weigh as they do in the family.  It runs for ``--naive-seconds`` (all
of S_T would take minutes), so its figure is a rate.  Against it: ``evaluate`` with
the tree-factorised path (the default where the map factorises) and with the
row-by-row path (``tree=False``).  Rates are (sequence, position) pairs per second.

Usage: python benchmarks/bench_evaluate.py [--p 3] [--T 8] [--kinds softmax,relu] [--rows]
Prints ``RATIO`` lines (collected by ``benchmarks/run.py``).
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np

import sinkproof as sp

BASELINE = ("naive loop: model.forward(seq) + task.targets(seq) per sequence, "
            "sampled uniformly by position count")


def sample_by_positions(task: sp.TriggerTask, n: int, seed: int) -> list[tuple[int, ...]]:
    """``n`` sequences, each a uniform draw from S_T weighted by its number of positions."""
    rng = np.random.default_rng(seed)
    lengths = np.arange(1, task.T + 1)
    weight = np.array([task.count_sequences(m) * (m + 1) for m in lengths], dtype=float)
    out = []
    k = task.k
    for m in rng.choice(lengths, size=n, p=weight / weight.sum()):
        if task.triggers == "multi":
            toks = rng.integers(-1, k, size=m)
        else:
            toks = rng.integers(0, k, size=m)
            if rng.random() < m / (k + m):  # m·k^(m-1) of the k^m + m·k^(m-1) sequences
                toks[int(rng.integers(0, m))] = sp.TRIG
        out.append(tuple(int(v) for v in toks))
    return out


def naive_loop(model: sp.AttentionModel, sequences: list) -> tuple[float, int]:
    """Max error by running model.forward on each sequence; returns (max error, positions)."""
    worst, positions = 0.0, 0
    for seq in sequences:
        out, _ = model.forward(seq)
        y = model.task.targets(seq)
        worst = max(worst, float(np.linalg.norm(out - y, axis=1).max()))
        positions += len(seq) + 1
    return worst, positions


def naive_rate(model: sp.AttentionModel, seconds: float) -> tuple[float, int, float]:
    """(positions per second, positions done, max error seen) of the naive loop."""
    sample = sample_by_positions(model.task, 200_000, seed=1)
    done, positions, worst = 0, 0, 0.0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds and done < len(sample):
        w, n = naive_loop(model, sample[done: done + 100])
        worst, positions, done = max(worst, w), positions + n, done + 100
    return positions / (time.perf_counter() - start), positions, worst


def timed(model: sp.AttentionModel, tree: bool, repeat: int = 2) -> tuple[float, sp.Evaluation]:
    """Best wall time of ``repeat`` exhaustive evaluations (the first pays page faults)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        ev = sp.evaluate(model, tree=tree)
        best = min(best, time.perf_counter() - start)
    return best, ev


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--p", type=int, default=3)
    parser.add_argument("--T", type=int, default=8)
    parser.add_argument("--kinds", default="softmax,relu")
    parser.add_argument("--naive-seconds", type=float, default=4.0)
    parser.add_argument("--rows", action="store_true",
                        help="also time the row-by-row path (tree=False; slow at T=8)")
    args = parser.parse_args(argv)

    task = sp.TriggerTask(p=args.p, T=args.T)
    print(f"instance: {task!r}; {task.n_sequences} sequences, {task.n_positions} positions; "
          f"H=2, random A and U; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    print(f"baseline: {BASELINE}")
    for kind in args.kinds.split(","):
        rng = np.random.default_rng(0)
        model = sp.AttentionModel(task, kind, rng.standard_normal((2, task.D, task.D)),
                                  rng.standard_normal((2, task.p, task.p + 3)))
        rate0, positions, worst = naive_rate(model, args.naive_seconds)
        print(f"{kind:8s} naive loop : {positions / rate0:7.2f} s for {positions} positions "
              f"-> {rate0:12.0f} positions/s")
        t_tree, ev = timed(model, True)
        rate_tree = task.n_positions / t_tree
        print(f"{kind:8s} tree path  : {t_tree:7.2f} s (best of 2) for all "
              f"{task.n_positions} positions ({ev.n_prefixes} prefixes) -> "
              f"{rate_tree:12.0f} positions/s; peak RSS "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
        assert worst <= ev.max_error + 1e-12, "sampled error above the exhaustive maximum"
        print(f"RATIO evaluate {kind} p={args.p} T={args.T} tree: {rate_tree / rate0:.1f}x "
              f"(vs {BASELINE})")
        if args.rows:
            t_rows, ev_rows = timed(model, False, repeat=1)
            assert abs(ev_rows.max_error - ev.max_error) <= 1e-12 * (1 + ev.max_error)
            rate_rows = task.n_positions / t_rows
            print(f"{kind:8s} row path   : {t_rows:7.2f} s -> {rate_rows:12.0f} positions/s")
            print(f"RATIO evaluate {kind} p={args.p} T={args.T} rows: "
                  f"{rate_rows / rate0:.1f}x (vs {BASELINE})")


if __name__ == "__main__":
    main()
