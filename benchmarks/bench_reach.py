"""Reach: for each capability, the largest instance settled within a time budget here, and
how the cost grows toward it.

Each capability runs a growing series of instances, each in a fresh interpreter cut off at
``--budget`` seconds (default 60: "settled in one minute"); the series stops at the first
instance over the budget.  The table gives, per capability, the largest instance within the
budget, its seconds, the growth factor of the time over its last step, and the first
instance beyond (with its time, or "cut off" when it did not finish).  Capabilities:

- ``evaluate``: exhaustive evaluation of S_T, p=3, softmax, two heads, random A and U
  (``sp.evaluate``), growing T;
- ``certify``: the Theorem 3 family certificate of every non-trigger position, p=3,
  eps=1/100, made and verified exactly, growing T;
- ``sinkmap``: a Theorem 6 sink map, p=2, eps=0.1, growing T;
- ``bnb``: the learned-value engine at the homogeneous positions, p=2, eps=1/20, goal 1/2,
  at most 20 nodes per target, growing T;
- ``paper-L``: the paper's (P1), one learned softmax head, every non-trigger position,
  eps=1/20, goal 1/2 (``paper_p1_one_head_every.toml``'s statement), n=4, content
  {-1, 1}, growing L;
- ``paper-m``: the same at L=5 with growing content sets ({-1, 1}, {-1, 0, 1}, ...).

"Settled" means the run finished within the budget, whatever its outcome (printed: a
proof, or "open" when the engine found none within its node budget).

Usage: python benchmarks/bench_reach.py [--budget 60] [--only bnb,paper-L]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_scaling import CHILDREN as SCALING  # noqa: E402
from bench_scaling import PRELUDE  # noqa: E402

CHILDREN = {
    "evaluate": """
p, T = int(sys.argv[1]), int(sys.argv[2])
task = sp.TriggerTask(p=p, T=T)
rng = np.random.default_rng(0)
model = sp.AttentionModel(task, "softmax", rng.standard_normal((2, task.D, task.D)),
                          rng.standard_normal((2, task.p, task.p + 3)))
ev, sec = clocked(sp.evaluate, model, max_work=task.n_positions)
print(json.dumps(dict(sec=sec, what=f"{task.n_positions:,} positions, "
                      f"{ev.n_prefixes:,} prefixes", mb=peak_mb())))
""",
    "bnb": """
from sinkproof.bnb import prove
p, T = int(sys.argv[1]), int(sys.argv[2])
task = sp.TriggerTask(p=p, T=T)
r, sec = clocked(prove, task, eps="1/20", at="homogeneous", min_bos_mass="1/2",
                 max_nodes=20, time_limit=3600, max_work=10**15)
print(json.dumps(dict(sec=sec, what=f"{r.status}, {len(r.targets)} targets, {r.nodes} nodes",
                      mb=peak_mb())))
""",
    "paper": """
from fractions import Fraction
from sinkproof.bnb import prove_paper
from sinkproof.tasks import PaperTask
L, m = int(sys.argv[1]), int(sys.argv[2])
content = [[-1.0 + 2.0 * i / (m - 1)] for i in range(m)]
task = PaperTask(n=4, L=L, content=content)
r, sec = clocked(prove_paper, task, Fraction(1, 20), min_bos_mass=Fraction(1, 2),
                 certify_misses=False, max_nodes=200, time_limit=3600, max_work=10**15)
print(json.dumps(dict(sec=sec, what=f"{r.status}, {len(r.targets)} targets, {r.nodes} nodes",
                      mb=peak_mb())))
""",
}


def _child(part: str) -> tuple[str, list[list[str]], str]:
    """(program, instance arguments, how an instance is named) of a capability."""
    if part == "evaluate":
        return CHILDREN["evaluate"], [["3", str(T)] for T in range(5, 12)], "T"
    if part == "certify":
        return SCALING["certify"], [["3", str(T)] for T in range(4, 12)], "T"
    if part == "sinkmap":
        return SCALING["sinkmap"], [["2", str(T), "0"] for T in range(4, 11)], "T"
    if part == "bnb":
        return CHILDREN["bnb"], [["2", str(T)] for T in range(2, 7)], "T"
    if part == "paper-L":
        return CHILDREN["paper"], [[str(L), "2"] for L in range(4, 10)], "L"
    if part == "paper-m":
        return CHILDREN["paper"], [["5", str(m)] for m in range(2, 7)], "m"
    raise SystemExit(f"unknown capability {part!r}")


def _run(program: str, args: list[str], budget: float) -> dict | None:
    """One instance in a fresh interpreter, cut off at ``budget`` s (``None``)."""
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    try:
        out = subprocess.run([sys.executable, "-c", PRELUDE + program, *args],
                             capture_output=True, text=True, env=env, cwd=HERE.parent,
                             timeout=budget)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode:
        raise SystemExit(f"{args} failed:\n{out.stderr[-2000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if "what" not in r:  # a bench_scaling child
        r["what"] = f"{r['items']:,} positions, {r['extra']}"
    return r


def reach(part: str, budget: float) -> str:
    """The capability's table row (its instances printed as they finish)."""
    program, instances, name = _child(part)
    last: tuple[str, dict] | None = None
    previous: dict | None = None
    beyond = "none tried"
    for args in instances:
        label = f"{name}={args[0] if name == 'L' else args[1]}"
        r = _run(program, args, budget)
        if r is None:
            beyond = f"{label}: cut off at {budget:g} s"
            print(f"  {part} {label}: cut off at {budget:g} s", flush=True)
            break
        print(f"  {part} {label}: {r['sec']:.2f} s, {r['what']}, peak {r['mb']:.0f} MB "
              f"(load {os.getloadavg()[0]:.1f})", flush=True)
        if r["sec"] > budget:
            beyond = f"{label}: {r['sec']:.1f} s"
            break
        previous = last[1] if last else None
        last = (label, r)
    if last is None:
        return f"| {part} | none within {budget:g} s | – | – | {beyond} |"
    label, r = last
    growth = "–" if previous is None else f"×{r['sec'] / max(previous['sec'], 1e-3):.1f}"
    return f"| {part} | {label} ({r['what']}) | {r['sec']:.2f} | {growth} | {beyond} |"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--only", default="evaluate,certify,sinkmap,bnb,paper-L,paper-m")
    args = parser.parse_args(argv)
    print(f"reach within {args.budget:g} s per instance (load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    rows = [reach(part, args.budget) for part in args.only.split(",")]
    print(f"\n| capability | largest within {args.budget:g} s | seconds | "
          "growth over its last step | first beyond |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
