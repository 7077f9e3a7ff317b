"""Exhaustive evaluation against T: wall time, positions/s and peak memory, p=3, softmax/relu.

Each instance runs in a fresh interpreter (so peak RSS is its own), tree path (the default).
Stops at the first instance over ``--budget`` seconds; the last line names the largest
instance evaluated within the budget.  Usage: python benchmarks/bench_scaling.py
[--p 3] [--T 4,5,6,7,8,9] [--kinds softmax,relu] [--budget 60]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = """
import json, resource, sys, time
import numpy as np
import sinkproof as sp
p, T, kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
task = sp.TriggerTask(p=p, T=T)
rng = np.random.default_rng(0)
model = sp.AttentionModel(task, kind, rng.standard_normal((2, task.D, task.D)),
                          rng.standard_normal((2, task.p, task.p + 3)))
start = time.perf_counter()
ev = sp.evaluate(model)
sec = time.perf_counter() - start
print(json.dumps(dict(sec=sec, positions=task.n_positions, prefixes=ev.n_prefixes,
                      rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--p", type=int, default=3)
    parser.add_argument("--T", default="4,5,6,7,8,9")
    parser.add_argument("--kinds", default="softmax,relu")
    parser.add_argument("--budget", type=float, default=60.0)
    args = parser.parse_args(argv)
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; H=2, p={args.p}")
    print(f"{'kind':8s} {'T':>2s} {'positions':>12s} {'prefixes':>10s} {'seconds':>8s} "
          f"{'positions/s':>12s} {'peak MB':>8s}")
    for kind in args.kinds.split(","):
        largest = None
        for T in (int(v) for v in args.T.split(",")):
            out = subprocess.run([sys.executable, "-c", CHILD, str(args.p), str(T), kind],
                                 capture_output=True, text=True, env=env, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{kind:8s} {T:2d} {r['positions']:12d} {r['prefixes']:10d} {r['sec']:8.2f} "
                  f"{r['positions'] / r['sec']:12.0f} {r['rss_mb']:8.0f}")
            if r["sec"] > args.budget:
                break
            largest = T
        print(f"largest {kind} instance within {args.budget:g} s: p={args.p}, T={largest}")


if __name__ == "__main__":
    main()
