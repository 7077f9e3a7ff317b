"""Benchmark: the first ``sp.evaluate``, ``sp.search`` and ``sp.check`` of a fresh interpreter
against the second call of the same in the same run (the cold-start tax).

Each case runs in a fresh interpreter ``--repeat`` times; inside it, the inputs are built
first (``import sinkproof``, a task, a model or a claim: numpy is loaded), then the call is
timed twice.  The difference first - second is what the first call pays for imports and
set-up the second does not (the goal: at most 0.2 s).  The table shows the median over
the repeats.

Run: python benchmarks/bench_coldstart.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SETUP = """
import time, numpy as np, sinkproof as sp
task = sp.TriggerTask(p=1, T=4)
A = np.zeros((task.D, task.D))
model = sp.AttentionModel(task, "softmax", A)
"""

CASES = {
    "sp.evaluate(model)": "sp.evaluate(model)",
    "sp.search(task, restarts=1)": ("sp.search(task, 'relu', heads=1, restarts=1, maxiter=5, "
                                    "processes=1, progress=False)"),
    "sp.check(claim)": "sp.check('examples/claims/fixed_values_homogeneous.toml', progress=False)",
}


def probe(call: str) -> str:
    return (SETUP + "\nts = []\nfor _ in range(2):\n    s = time.perf_counter()\n"
            f"    {call}\n    ts.append(time.perf_counter() - s)\nprint(ts[0], ts[1])\n")


def run(call: str, repeat: int) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    firsts, seconds = [], []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", probe(call)], env=env, cwd=ROOT,
                             capture_output=True, text=True, check=True)
        first, second = map(float, out.stdout.split()[-2:])
        firsts.append(first)
        seconds.append(second)
    return statistics.median(firsts), statistics.median(seconds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"first and second call in one fresh interpreter, median of {args.repeat} "
          f"(load average {os.getloadavg()[0]:.1f})")
    print(f"{'call':32s} {'first':>9s} {'second':>9s} {'first-second':>13s}")
    rows = {}
    for name, call in CASES.items():
        first, second = run(call, args.repeat)
        rows[name] = round(first - second, 4)
        print(f"{name:32s} {first * 1e3:7.0f}ms {second * 1e3:7.0f}ms "
              f"{(first - second) * 1e3:11.0f}ms")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
