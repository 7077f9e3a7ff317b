"""Benchmark: the first ``sp.evaluate``, ``sp.search`` and ``sp.check`` of a fresh interpreter
against the second call of the same in the same run (the cold-start tax).

Each case runs in a fresh interpreter ``--repeat`` times; inside it, the inputs are built
first (``import sinkproof``, a task, a model: numpy is loaded), then the same call is timed
twice.  first - second is what the first call pays for imports and set-up that the second
does not (the goal: at most 0.2 s).  The table shows the median over the repeats, the
route that settled a claim, and the libraries the first call loaded.

Baseline (the ``floor`` column and the RATIO lines): the time a fresh interpreter (numpy
already loaded) takes to import the same third-party libraries the call loaded -- what a
user pays for them without this package; ``tax - floor`` is what sinkproof itself adds.

``sp.search`` is also broken down in one fresh interpreter per repeat: importing JAX,
importing the search layer, the first call with JAX's persistent compilation cache off
and with a warm one (``SINKPROOF_JAX_CACHE``, in a temporary folder this run fills and
deletes): the difference is XLA compilation; what the warm first call still spends over
the second is tracing and lowering.

Run: python benchmarks/bench_coldstart.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL = 0.2
WATCH = ("sympy", "mpmath", "scipy.sparse", "scipy.optimize", "jax", "optax", "cvxpy", "dask",
         "distributed", "loky")
"""Libraries whose loading the table reports (and whose import is the floor)."""
CLAIMS = ROOT / "examples" / "claims"

PROBE = """
import json, sys, time
import numpy as np
import sinkproof as sp
{setup}
before = set(sys.modules)
ts = []
for _ in range(2):
    s = time.perf_counter()
    out = {call}
    ts.append(time.perf_counter() - s)
route = getattr(out, "by", None) or type(out).__name__
print(json.dumps({{"first": ts[0], "second": ts[1], "route": str(route)[:34],
                  "loaded": [m for m in {watch!r} if m in sys.modules and m not in before]}}))
"""

FLOOR = """
import time, numpy
s = time.perf_counter()
{imports}
print(time.perf_counter() - s)
"""

BREAKDOWN = """
import json, time
import numpy as np
t0 = time.perf_counter()
import jax
t1 = time.perf_counter()
import sinkproof as sp, sinkproof.search
t2 = time.perf_counter()
task = sp.TriggerTask(p=1, T=4)
ts = []
for _ in range(2):
    s = time.perf_counter()
    sp.search(task, "relu", heads=1, restarts=1, maxiter=5, processes=1, progress=False)
    ts.append(time.perf_counter() - s)
print(json.dumps({"jax": t1 - t0, "layer": t2 - t1, "first": ts[0], "second": ts[1]}))
"""

TASK = "task = sp.TriggerTask(p=1, T=4)\n"
SEARCH = ("sp.search(task, 'relu', heads=1, restarts=1, maxiter=5, processes=1, "
          "progress=False)")


def cases(certificate: Path) -> dict[str, tuple[str, str]]:
    """name -> (set-up code, the call timed twice)."""
    claim = repr(str(CLAIMS / "paper_p1_fixed_values_certificate.toml"))
    return {
        "sp.evaluate(softmax, p=1 T=4)": (
            TASK + "model = sp.AttentionModel(task, 'softmax', np.zeros((task.D, task.D)))",
            "sp.evaluate(model)"),
        "sp.evaluate(relu_solution, p=2 T=4)": (
            "model = sp.constructions.relu_solution(sp.TriggerTask(p=2, T=4))",
            "sp.evaluate(model)"),
        "sp.search(relu, 1 restart x 5 steps)": (TASK, SEARCH),
        "sp.check(theorem claim)": (
            "", f"sp.check({str(CLAIMS / 'fixed_values_homogeneous.toml')!r}, progress=False)"),
        "sp.check(stored certificate)": (
            "", f"sp.check({claim}, certificate={str(certificate)!r}, progress=False)"),
        "sp.check(certificate made now)": (
            "", f"sp.check({claim}, certificate_out={str(certificate.parent / 'made.json')!r}, "
                "force=True, progress=False)"),
        "sp.check(claim refuted by search)": (
            "", f"sp.check({str(CLAIMS / 'after_trigger.toml')!r}, progress=False)"),
    }


def fresh(code: str, env: dict[str, str]) -> str:
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                         text=True, check=False)
    if out.returncode:
        raise SystemExit(f"a probe failed:\n{out.stderr[-3000:]}")
    return out.stdout.strip().splitlines()[-1]


def floor(loaded: list[str], env: dict[str, str], repeat: int) -> float:
    """Median time to import ``loaded`` in a fresh interpreter that has numpy."""
    if not loaded:
        return 0.0
    code = FLOOR.format(imports="\n".join(f"import {m}" for m in loaded))
    return statistics.median(float(fresh(code, env)) for _ in range(repeat))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SINKPROOF_JAX_CACHE", None)
    work = Path(tempfile.mkdtemp(prefix="sinkproof-coldstart-"))
    try:
        certificate = work / "p1.certificate.json"
        fresh("import sinkproof as sp\n"
              f"sp.check({str(CLAIMS / 'paper_p1_fixed_values_certificate.toml')!r}, "
              f"certificate_out={str(certificate)!r}, progress=False)\nprint('made')", env)
        print(f"first and second call in one fresh interpreter, median of {args.repeat} "
              f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores); goal: "
              f"first - second <= {GOAL} s")
        head = (f"{'call':37s} {'first':>8s} {'second':>8s} {'tax':>8s} {'floor':>8s} "
                f"{'tax-floor':>9s}  {'route':34s} loaded by the first call")
        print(head)
        summary = {}
        for name, (setup, call) in cases(certificate).items():
            runs = [json.loads(fresh(PROBE.format(setup=setup, call=call, watch=WATCH), env))
                    for _ in range(args.repeat)]
            first = statistics.median(r["first"] for r in runs)
            second = statistics.median(r["second"] for r in runs)
            loaded = runs[-1]["loaded"]
            base = floor([m for m in loaded if m != "loky"], env, args.repeat)
            tax = first - second
            summary[name] = {"first": round(first, 4), "second": round(second, 4),
                             "tax": round(tax, 4), "floor": round(base, 4),
                             "goal_met": tax <= GOAL}
            print(f"{name:37s} {first:7.3f}s {second:7.3f}s {tax:7.3f}s {base:7.3f}s "
                  f"{tax - base:8.3f}s  {runs[-1]['route']:34s} {', '.join(loaded) or '-'}")
        print("\nsp.search's first call, in parts (median of fresh interpreters):")
        cache_env = {**env, "SINKPROOF_JAX_CACHE": str(work / "jax-cache")}
        fresh(BREAKDOWN, cache_env)  # fills the cache
        cold = [json.loads(fresh(BREAKDOWN, env)) for _ in range(args.repeat)]
        warm = [json.loads(fresh(BREAKDOWN, cache_env)) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in cold) for k in cold[0]}
        warm_first = statistics.median(r["first"] for r in warm)
        warm_second = statistics.median(r["second"] for r in warm)
        print(f"  import jax                                  {med['jax']:7.3f} s")
        print(f"  import the search layer (after jax)         {med['layer']:7.3f} s")
        print(f"  first call, no compilation cache            {med['first']:7.3f} s")
        print(f"  first call, warm SINKPROOF_JAX_CACHE        {warm_first:7.3f} s")
        print(f"    -> XLA compilation (the difference)       {med['first'] - warm_first:7.3f} s")
        print(f"    -> tracing and lowering (warm - second)   {warm_first - warm_second:7.3f} s")
        print(f"  second call                                 {med['second']:7.3f} s")
        summary["search parts"] = {"import_jax": round(med["jax"], 4),
                                   "import_layer": round(med["layer"], 4),
                                   "first_no_cache": round(med["first"], 4),
                                   "first_warm_cache": round(warm_first, 4),
                                   "second": round(med["second"], 4)}
        for name, row in summary.items():
            if "floor" in row and row["floor"] > 0:
                print(f"RATIO coldstart {name}: {row['tax'] / row['floor']:.2f}x, tax "
                      f"{row['tax']:.3f} s (vs importing the libraries the first call loads "
                      f"in a fresh interpreter, {row['floor']:.3f} s)")
        print(json.dumps(summary))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
