"""The proof engine's speed (``sinkproof.bnb``): before and after its direct programs, and its
trees in 1, 2 and 4 worker processes against the machine's ceiling, all in one run.

(a) Settling a claim, certificate included (every leaf's multipliers rounded and checked
    exactly, the certificate verified by the trusted checker), nodes per second:

    - ``plain CVXPY`` (the baseline: what a competent user writes with CVXPY): each
      leaf's relaxation and each of its dual programs stated and compiled by CVXPY from
      scratch (``backend="cvxpy", parametrised=False``);
    - ``CVXPY, compiled once`` (the engine before this change): the relaxation compiled
      once per target with the box as CVXPY parameters, the duals rebuilt per leaf;
    - ``direct, a dual program per leaf`` (before): both programs written straight into
      Clarabel's standard form, the relaxation by constraint generation over the
      prefixes, the leaf's dual over the few prefixes its own solve leaned on
      (``sinkproof/bnb/conic.py``; ``prove(..., reuse=False)``);
    - ``direct, own multipliers first, unshared`` (round two's start): the same trees;
      each leaf first rounds the multipliers its own relaxation solve returned (its dual
      point, or its certificate of infeasibility) and checks them exactly, solving a dual
      program only where they fail (``share=False``).  Both direct routes run the exact
      check in integers over one denominator;
    - ``direct, shared trees`` (round two's engine, ``symmetry=False``): a target whose
      program equals an earlier one's takes its tree, a box certified empty is certified
      once (``sinkproof.bnb.api.Shared``);
    - ``direct, shared trees and symmetries, iterative refinement on`` (round three
      before its last change): a target that a symmetry of the task maps an earlier
      grown target to (content tokens permuted with a signed permutation of the
      coordinates) takes that tree mapped exactly (``sinkproof/bnb/symmetry.py``; p=2,
      T=3: 3 trees grown for 12 targets);
    - ``direct, shared trees and symmetries`` (now, the default): the same with
      Clarabel's iterative refinement of each KKT solve off
      (``sinkproof.bnb.conic.REFINE``).

    Claims: the paper's (P1) at every non-trigger position
    (``examples/claims/paper_p1_one_head_every.toml``, n=4, L=5) and the homogeneous
    positions at p=2, T=3 (``examples/claims/learned_values_homogeneous.toml``).
(b) One tree, no certification, at p=2, T=3 (target [0, 0], no goal): nodes per second of
    the ways of solving the relaxation (CVXPY plain and compiled once, the direct
    programs with Clarabel's iterative refinement on and off).
(c) The paper claim's target trees in a pool of 1, 2 and 4 worker processes (warm:
    start-up is measured apart), against the machine's ceiling: the same number of
    pure-Python CPU jobs (an integer loop) sized like one tree, in the same pools.

(e) Where one proof's time goes (the paper claim by two direct routes, the p=2, T=3
    claim by three): Clarabel calls of the trees and of the certification, rounding and
    exact checks, the checker, the rest.

(d) ``--claims``: every claim of ``bench_bnb.py`` by the direct programs and by the CVXPY
    programs of before: outcome, nodes, seconds, bound (the same trees: the same outcome
    and bound are expected).

(f) ``--cli``: the whole command, ``sinkproof check paper_p1_one_head_every.toml --force``,
    each run a fresh process in a fresh folder, wall time, median of ``--rounds`` (3),
    the rounds of this checkout and of ``--root DIR`` (another checkout, e.g. the base
    commit's ``git worktree add --detach DIR BASE``) interleaved in the same run; with the
    engine's own seconds (the note's ``..., N nodes, S s``), Python's bytecode cache on
    (as for an installed package; ``--no-bytecode``: off) and the floor: a fresh
    interpreter importing the libraries the command needs (numpy, SciPy's sparse
    matrices, Clarabel, SymPy, mpmath), what any script using them pays before it starts.
    The printed verdicts must agree, timings aside.

Run: ``python benchmarks/bench_engine.py`` (``--quick``: skips the plain-CVXPY run of the
paper claim, the slowest; ``--repeat N``: (a) as the median of N interleaved rounds, for a
loaded machine; ``--workers 1,2,4``; ``--workers-only``: only part (c); ``--claims``:
only part (d); ``--cli [--root DIR]``: only part (f)).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import sinkproof as sp
from sinkproof.bnb import ValueBox, branch_and_bound, build_relaxation, prove
from sinkproof.bnb.api import TREE_WORKER_IMPORTS
from sinkproof.bnb.primal import PrimalSolver
from sinkproof.checker import verify
from sinkproof.executor import shared_processes

sys.path.insert(0, str(Path(__file__).resolve().parent))
PAPER = "examples/claims/paper_p1_one_head_every.toml"
TRIGGER = "examples/claims/learned_values_homogeneous.toml"
ROUTES = {"plain CVXPY (baseline)": dict(backend="cvxpy", parametrised=False),
          "CVXPY, compiled once": dict(backend="cvxpy", parametrised=True),
          "direct, a dual program per leaf (before)": dict(backend="clarabel", reuse=False,
                                                            share=False),
          "direct, own multipliers first, unshared (round-two start)":
              dict(backend="clarabel", share=False),
          "direct, shared trees (round-two engine)": dict(backend="clarabel", symmetry=False),
          "direct, shared trees and symmetries, iterative refinement on (before)":
              dict(backend="clarabel", refine=True),
          "direct, shared trees and symmetries (now)": dict(backend="clarabel")}
NOW = "direct, shared trees and symmetries (now)"
REFINED = "direct, shared trees and symmetries, iterative refinement on (before)"
TREE_ROUTES = [name for name in ROUTES
               if set(ROUTES[name]) <= {"backend", "parametrised", "refine"}]
"""(b) grows trees only: ``reuse``, ``share`` and ``symmetry`` touch the certification
and the choice of trees, so the direct routes differ only in the refinement."""
SPLIT_ROUTES = {PAPER: ("direct, a dual program per leaf (before)", REFINED, NOW),
                TRIGGER: ("direct, own multipliers first, unshared (round-two start)",
                          "direct, shared trees (round-two engine)", NOW)}
"""(e): the routes whose time is split, per claim."""


@contextlib.contextmanager
def route(name: str) -> Iterator[dict]:
    """``ROUTES[name]`` as the engine's keywords, with Clarabel's iterative refinement
    (``sinkproof.bnb.conic.REFINE``) set as the route says meanwhile (default: off)."""
    from sinkproof.bnb import conic

    kw = dict(ROUTES[name])
    saved, conic.REFINE = conic.REFINE, kw.pop("refine", False)
    try:
        yield kw
    finally:
        conic.REFINE = saved


def load() -> str:
    return f"load average {os.getloadavg()[0]:.1f}"


def claim_arguments(claim: str) -> tuple[object, dict]:
    """``prove``'s arguments for ``claim``: a paper claim as its route runs it (its task,
    eps and goal, at most 200 nodes per target, misses left uncertified), else the file."""
    from sinkproof.claims import load_claim

    if "paper" not in claim:
        return claim, {}
    c = load_claim(claim)
    return c.task, dict(eps=c.hypothesis.max_error, min_bos_mass=c.conclusion.min_bos_mass,
                        some=c.conclusion.positions == "some", certify_misses=False,
                        max_nodes=200)


def settle(claim: str, routes: list[str], repeat: int = 1) -> dict[str, float]:
    """Prove ``claim`` by each route (``repeat`` rounds, the routes interleaved in each:
    the median seconds); print a row each; return nodes/s per route."""
    rounds = f", median of {repeat} interleaved rounds" if repeat > 1 else ""
    print(f"\n{claim} ({load()}{rounds}):")
    subject, kw = claim_arguments(claim)
    print("| route | outcome | nodes | seconds | nodes/s | certified least BOS mass | check |")
    print("|---|---|---|---|---|---|---|")
    rates: dict[str, float] = {}
    times: dict[str, list[float]] = {name: [] for name in routes}
    results = {}
    for _ in range(repeat):
        for name in routes:
            with route(name) as engine:
                t0 = time.perf_counter()
                results[name] = prove(subject, **kw, **engine)
                times[name].append(time.perf_counter() - t0)
    for name in routes:
        result, seconds = results[name], statistics.median(times[name])
        ok = result.certificate is not None and verify(result.certificate).ok
        bound = "none" if result.bound is None else f"{float(result.bound):.6f}"
        rates[name] = result.nodes / seconds
        print(f"| {name} | {result.status} | {result.nodes} | {seconds:.2f} | "
              f"{rates[name]:.1f} | {bound} | {'verified' if ok else 'no certificate'} |")
    return rates


def one_tree(nodes: int) -> dict[str, float]:
    """(b): one tree at p=2, T=3, target [0, 0], no goal, ``nodes`` nodes."""
    task = sp.TriggerTask(p=2, T=3)
    relax = build_relaxation(task, Fraction(1, 20), (0, 0))
    print(f"\none tree, p=2 T=3, target [0, 0], no goal, {nodes} nodes ({load()}):")
    print("| relaxation | nodes | seconds | nodes/s | float BOS-mass bound |")
    print("|---|---|---|---|---|")
    rates, inside = {}, None
    for name in TREE_ROUTES:
        with route(name) as kw:
            watch = SolveWatch() if kw["backend"] == "clarabel" else None
            t0 = time.perf_counter()
            tree = branch_and_bound(PrimalSolver(relax, **kw),
                                    ValueBox.root(task, "learned"),
                                    None, max_nodes=nodes)
            seconds = time.perf_counter() - t0
        if watch is not None:
            inside = (watch.close(), seconds)
        rates[name] = tree.nodes / seconds
        print(f"| {name} | {tree.nodes} | {seconds:.2f} | {rates[name]:.1f} | "
              f"{tree.bos_bound:.6f} |")
    if inside is not None:
        w, seconds = inside
        print(f"direct route: {w.calls} Clarabel solves, {w.native:.2f} of {seconds:.2f} s "
              "inside the solve calls: A assembled, Clarabel's setup and solve "
              f"({w.native / max(w.calls, 1) * 1e3:.1f} ms "
              f"each, {w.iterations / max(w.calls, 1):.1f} iterations, "
              f"{w.rows / max(w.calls, 1):.0f} rows of A on average)")
    return rates


class SolveWatch:
    """Times every Clarabel setup and solve of the direct route (``conic.solve``)."""

    def __init__(self) -> None:
        from sinkproof.bnb import conic

        self.conic, self.inner = conic, conic.solve
        self.calls, self.native, self.iterations, self.rows = 0, 0.0, 0, 0

        def watched(q, rows, tol=None):
            t0 = time.perf_counter()
            sol = self.inner(q, rows, tol)
            self.native += time.perf_counter() - t0
            self.calls += 1
            self.iterations += sol.iterations
            self.rows += rows.count
            return sol

        conic.solve = watched

    def close(self) -> SolveWatch:
        self.conic.solve = self.inner
        return self


def time_spent(subject: object, kw: dict, name: str) -> dict[str, list]:
    """One proof by route ``name`` with its Clarabel calls (trees, certification), leaf
    rounding + exact checks and checker calls counted and timed: ``{part: [calls, s]}``,
    ``"total"`` the whole call."""
    from sinkproof import checker
    from sinkproof.bnb import api, conic, dual

    spent = {k: [0, 0.0] for k in ("tree", "certify", "exact", "checker", "total")}
    phase = ["tree"]
    saved = conic.solve, api.certify_tree, dual._rounded_leaf, checker.verify

    def timed(key, f):
        def run(*a, **k):
            part = phase[0] if key is None else key
            t0 = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                spent[part][0] += 1
                spent[part][1] += time.perf_counter() - t0
        return run

    def certify(*a, **k):
        phase[0] = "certify"
        try:
            return saved[1](*a, **k)
        finally:
            phase[0] = "tree"

    conic.solve, api.certify_tree = timed(None, saved[0]), certify
    dual._rounded_leaf, checker.verify = timed("exact", saved[2]), timed("checker", saved[3])
    try:
        with route(name) as engine:
            timed("total", prove)(subject, **kw, **engine)
    finally:
        conic.solve, api.certify_tree, dual._rounded_leaf, checker.verify = saved
    return spent


def breakdown(claim: str) -> None:
    """(e): where one proof's time goes, per direct route: the Clarabel calls of the
    trees and of the certification (assembling ``A``, Clarabel's setup and solve), the
    rounding and exact check of the leaves, the trusted checker's verification, the
    rest (Python: boxes, constraint generation, splits, certificate assembly)."""
    subject, kw = claim_arguments(claim)
    print(f"\nwhere the time goes, {claim} ({load()}):")
    print("| route | total s | tree solves (s) | certification solves (s) | "
          "rounding + exact check s | checker s | rest s |")
    print("|---|---|---|---|---|---|---|")
    for name in SPLIT_ROUTES[claim]:
        t = time_spent(subject, kw, name)
        total = t["total"][1]
        rest = total - sum(v[1] for k, v in t.items() if k != "total")
        print(f"| {name} | {total:.3f} | {t['tree'][0]} ({t['tree'][1]:.3f}) | "
              f"{t['certify'][0]} ({t['certify'][1]:.3f}) | {t['exact'][1]:.3f} | "
              f"{t['checker'][1]:.3f} | {rest:.3f} |")


def spin(n: int) -> int:
    """The ceiling job: ``n`` steps of an integer loop (pure Python, one thread)."""
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def workers_run(counts: list[int]) -> None:
    """(c): the paper claim's trees on 1, 2, 4 workers, and the ceiling in the same pools."""
    from sinkproof.claims import load_claim

    claim = load_claim(PAPER)
    task, eps, goal = claim.task, claim.hypothesis.max_error, claim.conclusion.min_bos_mass
    targets = len(sp.bnb.nontrigger_targets(task))
    t0 = time.perf_counter()
    spin(2_000_000)
    per_job = time.perf_counter() - t0
    steps = int(2_000_000 * 0.25 / max(per_job, 1e-3))  # a job of about 0.25 s, like a tree
    print(f"\ntrees in worker processes: {PAPER}, {targets} target trees ({load()}):")
    print("| workers | pool start-up s | trees s | nodes | outcome | ceiling: "
          f"{2 * max(counts)} integer-loop jobs s |")
    print("|---|---|---|---|---|---|")
    walls, ceilings = {}, {}
    jobs = [steps] * (2 * max(counts))

    def ceiling(pool: object) -> float:
        t0 = time.perf_counter()
        if pool is None:
            for j in jobs:
                spin(j)
        else:
            list(pool.map(spin, jobs))
        return time.perf_counter() - t0

    for n in counts:
        t0 = time.perf_counter()
        # the engine's own kept pool (its workers import the engine, not JAX)
        pool = shared_processes(n, TREE_WORKER_IMPORTS) if n > 1 else None
        if pool is not None:  # start every worker and let it settle
            for _ in range(2):
                list(pool.map(spin, [steps // 20] * (4 * n)))
        started = time.perf_counter() - t0
        before = ceiling(pool)  # the ceiling before and after the trees: a drifting load
        t0 = time.perf_counter()
        result = prove(task, eps=eps, min_bos_mass=goal, workers=n, certify_misses=False)
        walls[n] = time.perf_counter() - t0
        ceilings[n] = (before + ceiling(pool)) / 2
        print(f"| {n} | {started:.2f} | {walls[n]:.2f} | {result.nodes} | {result.status} | "
              f"{ceilings[n]:.2f} |")
    base = counts[0]
    for n in counts[1:]:
        print(f"RATIO bnb trees {n} workers vs {base}: {walls[base] / walls[n]:.2f}x "
              f"(machine ceiling in the same run: {ceilings[base] / ceilings[n]:.2f}x, "
              f"pure-Python jobs in the same pools)")


def every_claim() -> None:
    """(d): the claims of ``bench_bnb.py``, both routes, same run."""
    from bench_bnb import CLAIMS

    print(f"\nthe claims of bench_bnb.py, direct against CVXPY ({load()}):")
    print("| claim | route | outcome | nodes | seconds | certified least BOS mass |")
    print("|---|---|---|---|---|---|")
    for name, kw in CLAIMS:
        for way in (NOW, REFINED, "direct, a dual program per leaf (before)",
                    "CVXPY, compiled once"):
            with route(way) as engine:
                t0 = time.perf_counter()
                r = prove(f"examples/claims/{name}.toml", **kw, **engine)
                seconds = time.perf_counter() - t0
            bound = "none" if r.bound is None else f"{float(r.bound):.6f}"
            nodes = getattr(r, "nodes", getattr(r, "solves", 0))
            print(f"| {name} | {way} | {r.status} | {nodes} | {seconds:.2f} | {bound} |",
                  flush=True)


ROOT = Path(__file__).resolve().parent.parent
FLOOR_IMPORTS = "import numpy, scipy.sparse, clarabel, sympy, mpmath"
"""What the command needs from other libraries (part (f)'s floor)."""
_TIMING = re.compile(r"\d+\.\d+ s\b")


def _fresh(argv: list[str], root: Path, cwd: Path, pycache: Path | None = None
           ) -> tuple[float, str]:
    """Wall seconds and stdout of ``python argv`` in a fresh process importing ``root``'s
    sinkproof (with ``pycache``: its bytecode cached there, as an installed package's is,
    even where ``PYTHONDONTWRITEBYTECODE`` is set)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True,
                         text=True, check=False)
    wall = time.perf_counter() - start
    if out.returncode:
        raise SystemExit(f"{argv} with {root} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return wall, out.stdout


def cli_rows(roots: dict[str, Path], rounds: int, bytecode: bool) -> None:
    """Part (f): the command end to end for each checkout in ``roots``, interleaved (with
    ``bytecode``: Python's bytecode cache on, filled by one untimed run each)."""
    claim = ROOT / PAPER
    argv = ["-m", "sinkproof", "check", str(claim), "--force"]
    with tempfile.TemporaryDirectory(prefix="sinkproof-bench-cli-") as work:
        cache = Path(work) / "pycache" if bytecode else None
        for name, root in roots.items():
            _, where = _fresh(["-c", "import sinkproof; print(sinkproof.__file__)"], root,
                              Path(work))
            if not where.strip().startswith(str(root)):
                raise SystemExit(f"{name}: imported {where.strip()}, not {root}")
            if bytecode:
                _fresh(argv, root, Path(tempfile.mkdtemp(dir=work)), cache)
        walls: dict[str, list[float]] = {name: [] for name in roots}
        engine: dict[str, list[float]] = {name: [] for name in roots}
        printed: dict[str, str] = {}
        floor = []
        loads = [os.getloadavg()[0]]
        for _ in range(rounds):
            for name, root in roots.items():
                folder = Path(tempfile.mkdtemp(dir=work))
                wall, out = _fresh(argv, root, folder, cache)
                walls[name].append(wall)
                engine[name].append(float(re.findall(r"nodes, (\d+\.\d+) s", out)[-1]))
                printed[name] = _TIMING.sub("X s", out)
            floor.append(_fresh(["-c", FLOOR_IMPORTS], ROOT, Path(work), cache)[0])
            loads.append(os.getloadavg()[0])
    cached = "bytecode cached" if bytecode else "no bytecode cache (--no-bytecode)"
    print(f"\n`sinkproof check {PAPER} --force`, fresh process, wall, median of {rounds}, "
          f"{cached} (load average {min(loads):.1f}-{max(loads):.1f}, "
          f"{os.cpu_count()} cores):")
    print("| checkout | wall s | engine s (its note) | wall - engine s | stdout |")
    print("|---|---|---|---|---|")
    first = next(iter(roots))
    med = {name: statistics.median(walls[name]) for name in roots}
    for name in roots:
        eng = statistics.median(engine[name])
        same = "same verdict" if printed[name] == printed[first] else "DIFFERS"
        print(f"| {name} | {med[name]:.2f} | {eng:.2f} | {med[name] - eng:.2f} | {same} |")
    base = statistics.median(floor)
    print(f"| floor: `python -c '{FLOOR_IMPORTS}'` | {base:.2f} | | | |")
    for name in list(roots)[1:]:
        print(f"RATIO claim CLI wall: {med[name] / med[first]:.2f}x ({name} {med[name]:.2f} s "
              f"/ {first} {med[first]:.2f} s, same run)")
    print(f"RATIO claim CLI wall against the import floor: {med[first] / base:.2f}x "
          f"({first} {med[first]:.2f} s / {base:.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--nodes", type=int, default=80)
    parser.add_argument("--claims", action="store_true")
    parser.add_argument("--workers-only", action="store_true", help="only part (c)")
    parser.add_argument("--cli", action="store_true")
    parser.add_argument("--root", type=Path, default=None,
                        help="--cli: another checkout to time against this one")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1,
                        help="(a): rounds of every route, interleaved (median seconds)")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="--cli: every run compiles sinkproof from source")
    args = parser.parse_args()
    if args.cli:
        roots = {"this checkout": ROOT}
        if args.root is not None:
            roots[f"--root {args.root}"] = args.root.resolve()
        cli_rows(roots, args.rounds, not args.no_bytecode)
        return
    if args.claims:
        every_claim()
        return
    if args.workers_only:
        workers_run([int(x) for x in args.workers.split(",")])
        return
    names = list(ROUTES)
    print(f"the proof engine, before and after ({load()}, {os.cpu_count()} cores)")
    paper = settle(PAPER, names[1:] if args.quick else names, args.repeat)
    trig = settle(TRIGGER, names, args.repeat)
    tree = one_tree(args.nodes)
    direct = TREE_ROUTES[-1]
    for label, rates, now in (("paper P1 every position, certified", paper, NOW),
                              ("p=2 T=3 homogeneous claim, certified", trig, NOW),
                              ("p=2 T=3 one tree, no certification", tree, direct)):
        for base in names:
            if base in rates and base != now:
                print(f"RATIO bnb nodes/s {label}: {rates[now] / rates[base]:.2f}x "
                      f"(vs {base}, same run)")
    breakdown(PAPER)
    breakdown(TRIGGER)
    workers_run([int(x) for x in args.workers.split(",")])


if __name__ == "__main__":
    main()
