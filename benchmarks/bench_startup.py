"""Benchmark: start-up time of ``import sinkproof`` and the CLI, against the bare interpreter.

Each command runs in a fresh interpreter ``--repeat`` times; the table shows the best
(least-disturbed) wall time, the median, and the best minus the best of the baseline
``python -c pass`` (what sinkproof itself adds).  ``verify`` checks a real certificate
(Theorem 3's family certificate on p=1, T=3, written once before timing).  The last
column lists the numerical libraries the command loaded (none is the goal for all but
the full import of the numerical layer).

Run: python benchmarks/bench_startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "scipy", "sympy", "cvxpy", "jax")
PROBE = f"import sys; print(','.join(m for m in {HEAVY!r} if m in sys.modules) or '-')"


def timed(code: str, repeat: int) -> tuple[float, float, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    times = []
    loaded = ""
    for _ in range(repeat):
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", f"{code}\n{PROBE}"], env=env, cwd=ROOT,
                             capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - start)
        loaded = out.stdout.strip().splitlines()[-1]
    return min(times), statistics.median(times), loaded


def cli(argv: list[str]) -> str:
    return (f"from sinkproof.cli import main\ntry:\n    main({argv!r})\n"
            "except SystemExit:\n    pass")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    import sinkproof as sp
    from sinkproof.convex import family_certificate

    cert = Path(tempfile.mkdtemp()) / "family.json"
    family_certificate(sp.TriggerTask(p=1, T=3), "1/100", "fixed").save(cert)
    cases = [
        ("python -c pass (baseline)", "pass"),
        ("import sinkproof", "import sinkproof"),
        ("sinkproof --help", cli(["--help"])),
        ("sinkproof verify --help", cli(["verify", "--help"])),
        ("sinkproof verify FILE", cli(["verify", "--quiet", str(cert)])),
        ("import sinkproof; sp.TriggerTask", "import sinkproof as sp; sp.TriggerTask"),
    ]
    rows = [(name, *timed(code, args.repeat)) for name, code in cases]
    base = rows[0][1]
    print(f"start-up, best and median of {args.repeat} fresh interpreters "
          f"(baseline: python -c pass, best {base * 1e3:.0f} ms)")
    print(f"{'command':34s} {'best':>8s} {'median':>8s} {'best-base':>10s}  loaded")
    for name, best, median, loaded in rows:
        print(f"{name:34s} {best * 1e3:6.0f}ms {median * 1e3:6.0f}ms "
              f"{(best - base) * 1e3:8.0f}ms  {loaded}")
    print(json.dumps({name: round(best - base, 4) for name, best, _, _ in rows[1:]}))


if __name__ == "__main__":
    main()
