"""Run every benchmark in benchmarks/ with a short default and print their ratios as one table.

Convention: a benchmark prints one line per ratio of the form
``RATIO <name>: <x>x[, more figures] (vs <the baseline's definition>)``.  This script runs each
``bench_*.py`` (its default arguments, or the short ones in ``QUICK``) in a fresh
interpreter, echoes its output, and ends with the table of every RATIO line.
Benchmarks that print no RATIO line are listed as such (their output is still shown).

Usage: python benchmarks/run.py [--only evaluate,sweep] [--timeout 600]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUICK: dict[str, list[str]] = {
    "bench_sinkmap": ["--quick"],
    "bench_bnb": ["--quick"],
    "bench_engine": ["--quick"],
    "bench_scaling": ["--T", "5,6,7,8"],
}
RATIO = re.compile(r"^RATIO (?P<name>[^:]+): (?P<ratio>.+?) \(vs (?P<base>.*)\)\s*$")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated names (bench_ prefix optional)")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    wanted = {("bench_" + n).replace("bench_bench_", "bench_") for n in args.only.split(",") if n}
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    rows: list[tuple[str, str, str]] = []
    silent: list[str] = []
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for path in sorted(HERE.glob("bench_*.py")):
        if wanted and path.stem not in wanted:
            continue
        cmd = [sys.executable, str(path), *QUICK.get(path.stem, [])]
        print(f"\n$ python benchmarks/{path.name} {' '.join(QUICK.get(path.stem, []))}", flush=True)
        start = time.perf_counter()
        # its own process group, so that a timeout stops the processes it started too (a
        # timed-out bench_scaling left its measuring child computing for 50 minutes)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env, cwd=HERE.parent, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=args.timeout)
            out = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            partial, _ = proc.communicate()
            print(partial or "", end="")
            print(f"  timed out after {args.timeout:g} s (raise it with --timeout)")
            silent.append(f"{path.stem} (timed out)")
            continue
        print(out.stdout, end="")
        if out.returncode:
            print(out.stderr[-2000:], end="")
        found = [m for m in map(RATIO.match, out.stdout.splitlines()) if m]
        rows += [(m["name"], m["ratio"], m["base"]) for m in found]
        if not found:
            silent.append(f"{path.stem} (exit {out.returncode})" if out.returncode else path.stem)
        print(f"  [{time.perf_counter() - start:.1f} s]")
    print("\n| benchmark | ratio | baseline |\n|---|---|---|")
    for name, ratio, base in rows:
        print(f"| {name} | {ratio} | {base} |")
    if silent:
        print(f"\nno RATIO line: {', '.join(silent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
