"""Cost against T for each engine: time, positions/s, peak memory, and the baseline ratio.

Parts (``--parts``, each instance in a fresh interpreter so its peak RSS is its own):

- ``evaluate``: exhaustive evaluation (tree path), p=3, H=2, random A and U, softmax and
  ReLU; baseline: the plain numpy per-sequence loop of ``bench_evaluate.py`` (what a user
  writes without the package, sampled by position count) run for 1 s in the same
  interpreter;
- ``certify``: the Theorem 3 family certificate of every non-trigger position, p=3,
  eps=1/100, made and then verified exactly; baseline: one CVXPY problem per position
  (``bench_certify.py``'s naive loop, same exact rounding) for 1 s;
- ``sinkmap``: Theorem 6 sink maps (``subfamily="auto"``, eps=0.1) at p=2 and p=3;
  baseline: the previous implementation (``benchmarks/sinkmap_before.py``) on the same
  instance, run only while it fits in the budget;
- ``bnb``: the learned-value engine at the homogeneous positions, p=2, eps=1/20, at most
  20 nodes per target; baseline: plain CVXPY, every leaf's relaxation and duals stated
  and compiled by CVXPY (``backend="cvxpy", parametrised=False``).

Each part stops at the first instance over ``--budget`` seconds; its last line names the
largest instance done within the budget.  Usage: python benchmarks/bench_scaling.py
[--parts evaluate,certify,sinkmap,bnb] [--budget 60] [--T 4,5,6,7,8,9] (evaluation's T)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

PRELUDE = f"""
import json, resource, sys, time
sys.path.insert(0, {str(HERE)!r})
import numpy as np
import sinkproof as sp
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
def clocked(fn, *a, **k):
    t0 = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t0
"""

CHILDREN = {
    "evaluate": """
from bench_evaluate import plain_rate
p, T, kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
task = sp.TriggerTask(p=p, T=T)
rng = np.random.default_rng(0)
model = sp.AttentionModel(task, kind, rng.standard_normal((2, task.D, task.D)),
                          rng.standard_normal((2, task.p, task.p + 3)))
ev, sec = clocked(sp.evaluate, model, max_work=task.n_positions)
mb = peak_mb()
base, _, _ = plain_rate(model, 1.0)
print(json.dumps(dict(sec=sec, items=task.n_positions, extra=f"{ev.n_prefixes} prefixes",
                      rate=task.n_positions / sec, base=base, mb=mb)))
""",
    "certify": """
from bench_certify import naive_bounds
from sinkproof.checker import verify
from sinkproof.convex import family_certificate
p, T = int(sys.argv[1]), int(sys.argv[2])
task = sp.TriggerTask(p=p, T=T)
cert, made = clocked(family_certificate, task, "1/100")
verdict, checked = clocked(verify, cert.to_dict())
assert verdict.ok
mb = peak_mb()
positions = cert.n_positions  # the non-trigger positions of S_T it covers
sec = made + checked
sample, t0, done = [], time.perf_counter(), 0
for seq in task.sample(400, seed=1, trigger_prob=0.0):
    sample.append((seq, int(len(seq))))
while time.perf_counter() - t0 < 1.0 and done < len(sample):
    naive_bounds(task, sample[done:done + 20], "1/100")
    done += 20
base = done / (time.perf_counter() - t0)
print(json.dumps(dict(sec=sec, items=positions, extra=f"made {made:.2f} s + verified "
                      f"{checked:.2f} s", rate=positions / sec, base=base, mb=mb)))
""",
    "sinkmap": """
from sinkmap_before import sink_map_before
from sinkproof.sinkmap import sink_map
p, T, budget = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
task = sp.TriggerTask(p=p, T=T)
import cvxpy  # the baseline needs it; loaded before either clock starts
m, sec = clocked(sink_map, task, 0.1, max_work=10**15)  # reach is by time, not the limit
mb = peak_mb()
n = len(m.entries)
base = None
if sec * 5 < budget:  # the previous implementation took 3-5x as long
    _, before = clocked(sink_map_before, task, 0.1)
    base = n / before
programs = len(m.certificate["data"]["certificates"])
print(json.dumps(dict(sec=sec, items=n, extra=f"{m.count('certified')} certified, "
                      f"{m.count('no bound')} no bound, {programs} certified programs",
                      rate=n / sec, base=base, mb=mb)))
""",
    "bnb": """
from sinkproof.bnb import prove
p, T = int(sys.argv[1]), int(sys.argv[2])
task = sp.TriggerTask(p=p, T=T)
kw = dict(eps="1/20", at="homogeneous", values="learned", max_nodes=20, time_limit=600)
r, sec = clocked(prove, task, **kw)
mb = peak_mb()
r0, before = clocked(prove, task, backend="cvxpy", parametrised=False, **kw)
print(json.dumps(dict(sec=sec, items=len(r.targets), extra=f"{r.nodes} nodes, least bound "
                      f"{'none' if r.bound is None else f'{float(r.bound):.4f}'}",
                      rate=r.nodes / sec, base=r0.nodes / before, mb=mb)))
""",
}
UNITS = {"evaluate": "positions", "certify": "positions", "sinkmap": "positions",
         "bnb": "targets"}
RATE = {"evaluate": "positions/s", "certify": "positions/s", "sinkmap": "positions/s",
        "bnb": "nodes/s"}
BASELINE = {
    "evaluate": "the plain numpy per-sequence loop, 1 s, same interpreter",
    "certify": "one CVXPY problem per position, same exact rounding, 1 s",
    "sinkmap": "the previous implementation, benchmarks/sinkmap_before.py",
    "bnb": "plain CVXPY: every leaf's programs stated and compiled by CVXPY",
}


def _run(part: str, args: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    out = subprocess.run([sys.executable, "-c", PRELUDE + CHILDREN[part], *args],
                         capture_output=True, text=True, env=env, cwd=HERE.parent)
    if out.returncode:
        raise SystemExit(f"{part} {args} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def series(part: str, label: str, instances: list[list[str]], budget: float) -> None:
    print(f"\n{part} ({label}); baseline: {BASELINE[part]}")
    print(f"| T | {UNITS[part]} | seconds | {RATE[part]} | baseline ratio | peak MB | "
          f"load | notes |\n|---|---|---|---|---|---|---|---|")
    largest, ratios = None, []
    for args in instances:
        r = _run(part, args)
        T = args[1]
        ratio = "-" if r["base"] is None else f"{r['rate'] / r['base']:.1f}x"
        if r["base"] is not None:
            ratios.append((T, r["rate"] / r["base"]))
        print(f"| {T} | {r['items']:,} | {r['sec']:.2f} | {r['rate']:,.0f} | {ratio} | "
              f"{r['mb']:.0f} | {os.getloadavg()[0]:.1f} | {r['extra']} |", flush=True)
        if r["sec"] > budget:
            break
        largest = T
    print(f"largest {part} instance within {budget:g} s ({label}): T={largest}")
    if ratios:
        T, x = ratios[-1]
        print(f"RATIO scaling {part} {label} T={T}: {x:.1f}x (vs {BASELINE[part]})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="evaluate,certify,sinkmap,bnb")
    parser.add_argument("--T", default="4,5,6,7,8,9", help="evaluation's T values")
    parser.add_argument("--budget", type=float, default=60.0)
    args = parser.parse_args(argv)
    parts = args.parts.split(",")
    b = args.budget
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if "evaluate" in parts:
        for kind in ("softmax", "relu"):
            series("evaluate", f"p=3, {kind}, H=2",
                   [["3", T, kind] for T in args.T.split(",")], b)
    if "certify" in parts:
        series("certify", "p=3, family certificate", [["3", str(T)] for T in range(4, 11)], b)
    if "sinkmap" in parts:
        series("sinkmap", "p=2", [["2", str(T), str(b)] for T in range(4, 10)], b)
        series("sinkmap", "p=3", [["3", str(T), str(b)] for T in range(3, 8)], b)
    if "bnb" in parts:
        series("bnb", "p=2, homogeneous targets", [["2", str(T)] for T in range(2, 7)], b)


if __name__ == "__main__":
    main()
