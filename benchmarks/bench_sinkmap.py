"""Sink-map cost against the previous implementation, and bound quality against the subfamily.

First, the current ``sink_map`` against the previous implementation measured in the same
run (``benchmarks/sinkmap_before.py``: orbits canonicalised one target at a time in Python,
every block's program compiled by CVXPY, per-target re-formatting), both over all of S_T
with ``subfamily="auto"``: wall and process (CPU) time of each, their ratio, and the
largest difference between the two paths' bounds (statuses must agree).

Then the subfamily study.  Baseline: every non-trigger position solved over the *full*
family of its block (the exact relaxation).  Against it, in the same run: the "splice" subfamily
(overwrite any set of the target's key positions with one token), Hamming balls of
radius r, and the full family with the never-binding trigger prefixes kept.  For each:
wall time and its ratio to the baseline, mean cone constraints per certificate, the
lowest bound, and the bound lost against the full family (mean and worst over the
certified prefixes).  Then the scale rows: "auto" on larger instances, with the
exact re-verification time.

Run: ``python benchmarks/bench_sinkmap.py`` (``--quick``: p=2, T=6 and p=3, T=5 against
the previous implementation, the subfamily study at p=2, T=4 only; ``--verify``: also
re-check each new certificate exactly).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

import sinkproof as sp
from sinkproof.sinkmap import sink_map

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sinkmap_before import sink_map_before  # noqa: E402

BEFORE = [(2, 8), (3, 6)]
BEFORE_QUICK = [(2, 6), (3, 5)]

COMPARE = [(2, 4), (2, 5), (3, 4)]
SCALE = [(2, 6), (2, 7), (3, 5)]


def _timed(task: sp.TriggerTask, eps: float, **kw):
    t0 = time.perf_counter()
    m = sink_map(task, eps, **kw)
    return m, time.perf_counter() - t0


def compare(p: int, T: int, eps: float) -> None:
    task = sp.TriggerTask(p=p, T=T)
    full, t_full = _timed(task, eps, subfamily="full")
    cert = {k: e for k, e in full.entries.items() if e.status == "certified"}
    print(f"\np={p} T={T} eps={eps}: {len(full.entries)} non-trigger prefixes, {len(cert)} "
          f"certified, {full.count('no bound')} no bound")
    print(f"  {'subfamily':18s} {'time s':>7s} {'ratio':>6s} {'constr.':>8s} {'min bound':>9s} "
          f"{'mean loss':>10s} {'max loss':>10s}")
    runs = [("full (baseline)", full, t_full),
            ("full + triggers", *_timed(task, eps, subfamily="full", all_triggers=True)),
            ("splice", *_timed(task, eps, subfamily="splice"))]
    runs += [(f"hamming<={r}", *_timed(task, eps, subfamily="hamming", radius=r))
             for r in (1, 2, 3)]
    for name, m, dt in runs:
        loss = np.array([e.bound - m.entries[k].bound for k, e in cert.items()])
        size = np.mean([m.entries[k].constraints for k in cert])
        print(f"  {name:18s} {dt:7.2f} {dt / t_full:6.2f} {size:8.1f} "
              f"{min(m.entries[k].bound for k in cert):9.6f} {loss.mean():10.2e} "
              f"{loss.max():10.2e}")
        if name == "splice":
            print(f"RATIO sinkmap splice p={p} T={T}: {t_full / dt:.2f}x (vs every non-trigger "
                  f"position solved over the full family of its block, same run)")


def _clocked(fn, *args):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - w0, time.process_time() - c0


def before_after(p: int, T: int, eps: float, verify: bool) -> None:
    """The current sink map against the previous implementation, same instance, same run."""
    import cvxpy  # noqa: F401  (loaded before either clock starts: the old path needs it)

    task = sp.TriggerTask(p=p, T=T)
    old, w_old, c_old = _clocked(sink_map_before, task, eps)
    new, w_new, c_new = _clocked(sink_map, task, eps)
    assert old.entries.keys() == new.entries.keys()
    differ = sum(old.entries[k].status != e.status for k, e in new.entries.items())
    worst = max(abs(old.entries[k].bound - e.bound) for k, e in new.entries.items())
    weaker = max(old.entries[k].bound - e.bound for k, e in new.entries.items())
    check = ""
    if verify:
        t0 = time.perf_counter()
        check = f", exact verify {'ok' if new.verify().ok else 'FAILED'} " \
                f"({time.perf_counter() - t0:.1f} s)"
    print(f"  p={p} T={T}: {len(new.entries)} positions ({new.count('certified')} certified, "
          f"{new.count('no bound')} no bound, {new.count('uncertified')} uncertified); "
          f"before {w_old:.2f} s wall / {c_old:.2f} s CPU, now {w_new:.2f} s / {c_new:.2f} s; "
          f"statuses differing {differ}, max |bound change| {worst:.1e} "
          f"(now weaker by at most {max(weaker, 0.0):.1e}){check}; load {os.getloadavg()[0]:.1f}")
    print(f"RATIO sinkmap p={p} T={T}: {w_old / w_new:.2f}x wall, {c_old / c_new:.2f}x CPU "
          f"(vs the previous implementation, benchmarks/sinkmap_before.py, same run)")


def scale(p: int, T: int, eps: float) -> None:
    task = sp.TriggerTask(p=p, T=T)
    m, dt = _timed(task, eps)
    t0 = time.perf_counter()
    ok = m.verify().ok
    tv = time.perf_counter() - t0
    low = m.lowest(1)[0][1].bound
    print(f"  p={p} T={T}: {len(m.entries):6d} prefixes, {m.count('certified'):5d} certified, "
          f"{m.count('no bound'):5d} no bound, lowest {low:.6f}; sink map {dt:6.1f}s, "
          f"exact verify {tv:5.2f}s ({'ok' if ok else 'FAILED'})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small instances only")
    ap.add_argument("--verify", action="store_true", help="re-check new certificates exactly")
    ap.add_argument("--eps", type=float, default=0.1)
    args = ap.parse_args()
    print(f"against the previous implementation (subfamily auto), eps={args.eps}:")
    for p, T in BEFORE_QUICK if args.quick else BEFORE:
        before_after(p, T, args.eps, args.verify)
    for p, T in COMPARE[:1] if args.quick else COMPARE:
        compare(p, T, args.eps)
    if not args.quick:
        print("\nscale (subfamily auto):")
        for p, T in SCALE:
            scale(p, T, args.eps)


if __name__ == "__main__":
    main()
