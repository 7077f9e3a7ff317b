"""Why search restarts do or do not scale with processes: the machine's ceiling and the
restart pipeline's breakdown, 1 worker against N, measured side by side in one run.

Canonical instance (p=2, T=6, whole family S_T), single-head softmax with fixed values,
the search's feasibility objective at ``--eps`` with no BOS constraint.  Every number
below comes from this run:

(a) the machine's ceiling: a pure-Python CPU-bound job (an integer loop: no BLAS, no
    JAX, no memory traffic) sized like one restart, the same number of jobs on the same
    executor (:class:`sinkproof.executor.ProcessExecutor`, 1 worker vs N).  Its ratio is
    what this machine gives N processes over 1 right now: shared cores (other users,
    a background job) or virtual cores that are siblings on the host show up here, and
    no restart pipeline can beat it.  Measured in rounds interleaved with (b), in the
    order 1, N then N, 1 (so a drifting load weighs on both alike).  The same jobs again
    with each worker moved into a session of its own (``setsid``): Linux's autogroup
    scheduler shares the cores out equally between sessions, not processes, so on a
    machine where other sessions are busy the N workers of one search (all in the
    caller's session) get about what 1 would; the two ceilings side by side show it.
    ``--own-sessions`` runs the restarts that way too (a diagnosis, not what ``search``
    does: taking more of a shared machine than one session's share is not its call).
(b) the restart pipeline: the same seeded restarts in a pool of 1 one-thread worker and
    of N (both warm: start-up and JAX compilation are measured apart), each restart timed
    in its worker (start, end, CPU of its thread and of its whole process, threads whose
    CPU grew during it, JAX compilation during it) and in the parent (when each result
    arrived, the parent's CPU).  The wall ratio splits exactly into
    ``N x (CPU per restart, 1 / N) x (CPU share of a core inside a restart, N / 1)
    x (workers' busy fraction, N / 1)``: the first factor is threads or caches fighting,
    the second the machine (compare with (a)), the third scheduling, the straggler tail
    and the parent.  Also: the same restarts in this process (``processes=1`` of
    ``search``), each worker's start-up and compilation, the thread pools the workers
    run with, and the parent's verification of one candidate (the serial work ``search``
    does between restarts).

Results must be identical (same seed, same restarts) in every configuration (checked).

Usage: python benchmarks/bench_restarts.py [--restarts 16] [--maxiter 60] [--processes N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sinkproof as sp
from sinkproof.executor import ProcessExecutor, SerialExecutor
from sinkproof.search.engine import available_cores, restart_job
from sinkproof.search.objective import witness_measure
from sinkproof.search.restart import SearchSettings
from sinkproof.search.verify import verify_witness

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_search import instance_arguments  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------ in the worker
def _thread_cpu() -> dict[int, int]:
    """CPU ticks so far of each thread of this process (Linux /proc)."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(tid)] = int(fields[11]) + int(fields[12])
    return out


_COMPILE: list[float] = []


def _listen_compiles() -> None:
    """Sum JAX's backend compilation time in this process (once per process)."""
    if _COMPILE:
        return
    import jax

    _COMPILE.append(0.0)

    def listener(event: str, seconds: float, **_: Any) -> None:
        if event.endswith("backend_compile_duration"):
            _COMPILE[0] += seconds

    jax.monitoring.register_event_duration_secs_listener(listener)


def spin(n: int) -> int:
    """The ceiling job: ``n`` steps of an integer loop (pure Python, one thread)."""
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


@dataclass(frozen=True)
class Timed:
    """One job as its worker saw it."""

    value: Any
    pid: int
    start: float
    end: float
    thread_cpu: float
    process_cpu: float
    busy_threads: int
    threads: int
    compile_seconds: float
    group: str


def autogroup() -> str:
    """The scheduler group of this process (Linux autogroup: one per session), or ''."""
    try:
        with open("/proc/self/autogroup") as f:
            return f.read().split()[0]
    except OSError:
        return ""


def timed(job: tuple[str, Any, bool]) -> Timed:
    """Run a restart (``("restart", (settings, index), own)``) or a ceiling job
    (``("spin", n, own)``) and time it from inside the worker; ``own``: first move this
    worker into a session of its own (so the kernel's autogroup scheduler counts it as
    a group of its own, as it counts every other session on the machine)."""
    what, arg, own = job
    if own and os.getsid(0) != os.getpid():
        os.setsid()
    if what == "restart":
        _listen_compiles()
    before = _thread_cpu()
    compiled = _COMPILE[0] if _COMPILE else 0.0
    c0, p0, t0 = time.thread_time(), time.process_time(), time.perf_counter()
    value = restart_job(arg) if what == "restart" else spin(arg)
    t1, c1, p1 = time.perf_counter(), time.thread_time(), time.process_time()
    after = _thread_cpu()
    busy = sum(1 for tid, ticks in after.items() if ticks - before.get(tid, 0) >= 2)
    return Timed(value, os.getpid(), t0, t1, c1 - c0, p1 - p0, busy, len(after),
                 (_COMPILE[0] if _COMPILE else 0.0) - compiled, autogroup())


def pool_info(_: Any) -> dict[str, Any]:
    """The thread pools a worker runs with: threadpoolctl's view, XLA's flags, threads."""
    from threadpoolctl import threadpool_info

    return {"pools": sorted({(i["internal_api"], i["num_threads"]) for i in threadpool_info()}),
            "xla_flags": os.environ.get("XLA_FLAGS", ""), "threads": len(_thread_cpu())}


# ------------------------------------------------------------------ in the parent
@dataclass
class Run:
    """A batch of timed jobs on one executor: wall time, what each worker did."""

    wall: float
    parent_cpu: float
    jobs: list[Timed]
    arrived: list[float]
    t0: float

    @property
    def workers(self) -> dict[int, list[Timed]]:
        out: dict[int, list[Timed]] = {}
        for j in self.jobs:
            out.setdefault(j.pid, []).append(j)
        return out

    @property
    def job_wall(self) -> float:
        return sum(j.end - j.start for j in self.jobs)

    @property
    def cpu(self) -> float:
        return sum(j.process_cpu for j in self.jobs)

    def share(self) -> float:
        """CPU of the computing processes per second of job wall time (1 = a whole core)."""
        return self.cpu / self.job_wall

    def busy(self, n: int) -> float:
        """Fraction of ``n`` workers x wall that was spent inside jobs."""
        return self.job_wall / (n * self.wall)

    def tail(self) -> float:
        """Seconds from the first worker's last job end to the end of the run (one core
        idle meanwhile, if the run has more than one worker)."""
        ends = [max(j.end for j in js) for js in self.workers.values()]
        return self.t0 + self.wall - min(ends)

    def head(self) -> float:
        """Seconds from submission to the last worker's first job start."""
        return max(min(j.start for j in js) for js in self.workers.values()) - self.t0

    def gaps(self) -> float:
        """Seconds of worker idle time between consecutive jobs of a worker (dispatch,
        result transfer), summed over workers."""
        total = 0.0
        for js in self.workers.values():
            js = sorted(js, key=lambda j: j.start)
            total += sum(b.start - a.end for a, b in zip(js, js[1:]))
        return total


def run_batch(ex: Any, jobs: list[tuple[str, Any]]) -> Run:
    arrived = []
    c0, t0 = time.process_time(), time.perf_counter()
    out = []
    for result in ex.map(timed, jobs):
        assert result.ok, result.details
        arrived.append(time.perf_counter())
        out.append(result.value)
    return Run(time.perf_counter() - t0, time.process_time() - c0, out, arrived, t0)


def merged(runs: list[Run]) -> Run:
    """Several runs of one configuration as one (walls and job lists added up)."""
    return Run(sum(r.wall for r in runs), sum(r.parent_cpu for r in runs),
               [j for r in runs for j in r.jobs], [a for r in runs for a in r.arrived], 0.0)


def describe(label: str, runs: list[Run], n: int) -> None:
    run = merged(runs)
    per: dict[int, float] = {}
    for j in run.jobs:
        per[j.pid] = per.get(j.pid, 0.0) + j.end - j.start
    n_jobs = len(run.jobs)
    print(f"   {label}: {run.wall:6.2f} s wall, CPU {run.cpu / n_jobs:.3f} s per job (its "
          f"thread {statistics.mean(j.thread_cpu for j in run.jobs):.3f} s), CPU share "
          f"inside a job {run.share():.2f} of a core, workers busy {100 * run.busy(n):.0f}%")
    print(f"      busy s per worker {sorted(round(b, 2) for b in per.values())}; idle: "
          f"{sum(r.head() for r in runs):.3f} s to the last worker's first job, "
          f"{sum(r.gaps() for r in runs):.3f} s between jobs (all workers), tail "
          f"{sum(r.tail() for r in runs):.3f} s; threads that computed in a job "
          f"{sorted({j.busy_threads for j in run.jobs})} of "
          f"{sorted({j.threads for j in run.jobs})}; parent CPU {run.parent_cpu:.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    instance_arguments(parser)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--own-sessions", action="store_true",
                        help="every worker in a session of its own, for the restarts too "
                             "(a diagnosis: search's workers share the caller's session)")
    args = parser.parse_args()
    N, own = args.processes, args.own_sessions
    task = sp.TriggerTask(p=args.p, T=args.T)
    settings = SearchSettings(task, "softmax", 1, "fixed", args.eps, 1.0, "nontrigger", seed=0,
                              maxiter=args.maxiter)
    restarts = [("restart", (settings, i), own) for i in range(args.restarts)]
    print(f"instance: {task!r}, {task.n_positions} positions; softmax, 1 head, fixed values; "
          f"{args.restarts} restarts, maxiter {args.maxiter} per stage; {available_cores()} "
          f"cores available, N={N}; this process's scheduler group {autogroup() or '?'}; "
          f"load average {os.getloadavg()[0]:.1f}")

    print("\nstart-up and compilation (fresh pools; both are paid once per pool: a pool "
          "outlives the search that started it; the first pool also starts the fork server):")
    pools = {1: ProcessExecutor(1), N: ProcessExecutor(N)}
    apart = {1: ProcessExecutor(1), N: ProcessExecutor(N)}  # workers in sessions of their own
    for n, ex in pools.items():
        t0 = time.perf_counter()
        run_batch(ex, [("spin", 1, own)] * n)
        t1 = time.perf_counter()
        first = run_batch(ex, restarts[:n])
        print(f"   pool of {n}: {t1 - t0:.2f} s to start {n} worker(s); first restart "
              f"{first.wall:.2f} s, of which JAX compilation "
              f"{[round(j.compile_seconds, 2) for j in first.jobs]} s per worker")
    if not own:
        for n, ex in apart.items():
            run_batch(ex, [("spin", 1, True)] * (2 * n))  # start them, outside the rounds
    info = [r.value for r in pools[N].map(pool_info, [None] * N)]
    print(f"   worker thread pools (threadpoolctl: api, threads): {info[0]['pools']}; XLA_FLAGS "
          f"{info[0]['xla_flags']!r}; threads per worker process {[i['threads'] for i in info]}")
    serial_ex = SerialExecutor()
    run_batch(serial_ex, restarts[:1])  # compile in this process too

    # the ceiling job costs what a warm restart costs, in CPU
    t0 = time.process_time()
    spin(2_000_000)
    rate = 2_000_000 / (time.process_time() - t0)
    probe = run_batch(pools[1], restarts[:4])
    n_spin = int(rate * probe.cpu / 4)
    ceiling_jobs = [("spin", n_spin, own)] * args.restarts

    configs: dict[str, tuple[Any, list, int]] = {
        "c1": (pools[1], ceiling_jobs, 1),
        "r1": (pools[1], restarts, 1),
        "s1": (serial_ex, restarts, 1),
        "cN": (pools[N], ceiling_jobs, N),
        "rN": (pools[N], restarts, N)}
    if not own:
        configs["o1"] = (apart[1], [("spin", n_spin, True)] * args.restarts, 1)
        configs["oN"] = (apart[N], [("spin", n_spin, True)] * args.restarts, N)
    order = list(configs)
    runs: dict[str, list[Run]] = {k: [] for k in configs}
    print(f"\n{args.rounds} round(s), order {' '.join(order)} then reversed (ABBA: a drifting "
          "load weighs on 1 and N alike); c = ceiling jobs, r = restarts, both in pools of "
          "one-thread workers, s = restarts in this process" + (
              "; o = ceiling jobs with each worker in a session of its own" if not own else
              "; every worker in a session of its own") + ":")
    for rnd in range(args.rounds):
        for key in order if rnd % 2 == 0 else order[::-1]:
            ex, jobs, _ = configs[key]
            runs[key].append(run_batch(ex, jobs))
        print(f"   round {rnd + 1}: " + ", ".join(f"{k} {runs[k][-1].wall:.2f} s"
                                                  for k in order)
              + f"; load average {os.getloadavg()[0]:.1f}")
    labels = {"c1": "(a) ceiling, 1 worker", "cN": f"(a) ceiling, {N} workers",
              "o1": "(a) ceiling, 1 worker in a session of its own",
              "oN": f"(a) ceiling, {N} workers, each in a session of its own",
              "r1": "(b) restarts, 1 worker", "rN": f"(b) restarts, {N} workers",
              "s1": "(b) restarts in this process (search's processes=1)"}
    for key in labels:
        if key in configs:
            describe(labels[key], runs[key], configs[key][2])
    groups = {k: sorted({j.group for r in runs[k] for j in r.jobs}) for k in configs}
    print(f"   scheduler groups of the workers: {groups}")
    errors = [[j.value.error for j in r.jobs] for k in ("r1", "rN", "s1") for r in runs[k]]
    assert all(e == errors[0] for e in errors), "restart results differ between configurations"
    walls = sorted(j.end - j.start for r in runs["r1"] for j in r.jobs)
    print(f"   restart wall in 1 worker: min {walls[0]:.2f} / median "
          f"{statistics.median(walls):.2f} / max {walls[-1]:.2f} s; the same errors in every "
          "configuration and round (checked)")

    # the parent's serial work in `search`: checking a candidate in high precision
    best = min(runs["s1"][0].jobs, key=lambda j: j.value.error).value
    model = sp.AttentionModel(task, "softmax", A=best.A)
    t0 = time.perf_counter()
    report = verify_witness(model, best.error * 1.01, 1.0, "nontrigger", 50,
                            measure=witness_measure("softmax"))
    print(f"   parent: verification of one candidate at dps 50: "
          f"{time.perf_counter() - t0:.2f} s (verified {report.verified}); search runs it "
          "on each float64-feasible restart in index order until one passes, while the "
          "workers go on with the next restarts")

    m = {k: merged(v) for k, v in runs.items()}
    c1, cn, r1, rn, s1 = (m[k] for k in ("c1", "cN", "r1", "rN", "s1"))
    ratio, ceiling = r1.wall / rn.wall, c1.wall / cn.wall
    print(f"\n   breakdown of the restarts' ratio: {ratio:.2f}x = {N} x {r1.cpu / rn.cpu:.2f} "
          f"(CPU per restart, 1/N) x {rn.share() / r1.share():.2f} (CPU share of a core "
          f"inside a restart, N/1) x {rn.busy(N) / r1.busy(1):.2f} (busy fraction, N/1)")
    print(f"   the same for the ceiling jobs:   {ceiling:.2f}x = {N} x {c1.cpu / cn.cpu:.2f} x "
          f"{cn.share() / c1.share():.2f} x {cn.busy(N) / c1.busy(1):.2f}")
    if "oN" in m:
        print(f"   ceiling with each worker in a session of its own: "
              f"{m['o1'].wall / m['oN'].wall:.2f}x (CPU share {m['o1'].share():.2f} -> "
              f"{m['oN'].share():.2f} of a core per worker; in the caller's session "
              f"{c1.share():.2f} -> {cn.share():.2f}): where the kernel shares the cores "
              "out per session (autogroup), a session's N processes get what 1 would")
    print(f"   restarts / ceiling: {ratio / ceiling:.2f}; load average now "
          f"{os.getloadavg()[0]:.1f}")
    where = "each worker in a session of its own" if own else "the workers in this session"
    print(f"RATIO restarts {N} workers vs 1: {ratio:.2f}x (vs the same seeded restarts in a "
          f"warm pool of 1 one-thread worker, same run, {where}; machine ceiling "
          f"{ceiling:.2f}x in the same run)")
    print(f"RATIO machine ceiling {N} vs 1: {ceiling:.2f}x (vs the same pure-Python CPU-bound "
          f"jobs in a pool of 1 worker, interleaved with the restarts in the same run, {where})")
    print(f"RATIO restarts {N} workers vs this process: {s1.wall / rn.wall:.2f}x (vs the same "
          f"restarts in the calling process, as search(processes=1) runs them, same run)")
    for ex in (*pools.values(), *apart.values()):
        ex.close()


if __name__ == "__main__":
    main()
