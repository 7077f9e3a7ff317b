"""How far the one-head (P1) proofs reach in the paper's setting (``sinkproof.reduced``).

Finite content (``prove_subfamily``): ``n = 16``, the content set ``{-e_1, +e_1}`` of
``[-1, 1]^13`` (with ``{-𝟙, +𝟙}`` the trees close but some leaves' exact certification
fails, a limit of the engine's rounding, not of the bound), every non-trigger (query,
multiset) class of the family as a target (every non-trigger position of every sequence, by the
multiset lemma), goal BOS weight ``>= 1/2``, error ``eps = 1/20``; for each ``L``: the
classes, the targets certified within the budget, the least certified bound at each
position and the seconds (trees, exact certification and the checker's verification
together).  ``--sequences``: at ``L = 16`` also the homogeneous sequences ``(c, ..., c)``
and ``(c, TRIG(c), c, ..., c)`` at every position, with no goal (each tree's best
bound in ``--nodes`` nodes).

Continuous content (``prove_uniform``): every content vector of ``[-1, 1]^13``, one
target per trigger pattern, for each ``--uniform-L``.

Run: ``python benchmarks/bench_p1_reach.py`` (about 40 s: L = 5 and 8, and the box at L = 5);
``--L 5 6 16 --budget 600`` for more.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import sinkproof as sp
from sinkproof.reduced import multiset_subfamily, nontrigger_classes, prove_subfamily, prove_uniform

EPS = "1/20"


def finite_task(L: int, n: int = 16) -> sp.PaperTask:
    """The paper task with the content set ``{-e_1, +e_1}`` of ``[-1, 1]^(n-3)``."""
    c = np.zeros((1, n - 3))
    c[0, 0] = 1.0
    return sp.PaperTask(n=n, L=L, content=np.concatenate([-c, c]))


def _positions(result) -> str:
    return ", ".join(f"{t}: {float(b):.4f}" for t, b in sorted(result.by_position().items()))


def finite_row(L: int, budget: float, nodes: int, save: str | None = None) -> None:
    task = finite_task(L)
    rows = multiset_subfamily(task)
    start = time.perf_counter()
    r = prove_subfamily(task, EPS, min_bos_mass="1/2", max_nodes=nodes, budget=budget)
    seconds = time.perf_counter() - start
    n_targets = len(nontrigger_classes(task, rows))
    print(f"| {L} | {task.n_sequences:,} | {len(rows)} | {len(r.certified)} of {n_targets} "
          f"| {r.status} | {_positions(r)} | {seconds:.1f} |", flush=True)
    missed = [o.target for o in r.outcomes if o.target not in r.certified]
    tried = len(r.outcomes)
    print(f"  (L={L}: {tried} targets tried, not certified: {missed}; "
          f"{n_targets - tried} not reached)", flush=True)
    if save and r.certificate is not None:
        r.save(f"{save}/p1_finite_L{L}.json")


def sequences_row(L: int, nodes: int) -> None:
    task = finite_task(L)
    m = task.m
    targets = [(0,) * t for t in range(1, L - 1)]
    targets += [(0, m, *(0,) * (t - 2)) for t in range(3, L)]
    start = time.perf_counter()
    r = prove_subfamily(task, EPS, targets=targets, max_nodes=nodes)
    seconds = time.perf_counter() - start
    for kind, pick in (("(c, ..., c)", lambda t: m not in t),
                       ("(c, TRIG(c), c, ..., c)", lambda t: m in t)):
        got = {len(t): b for t, b in r.certified.items() if pick(t)}
        print(f"| {L} | {kind} | {len(got)} | "
              + ", ".join(f"{t}: {float(b):.4f}" for t, b in sorted(got.items()))
              + f" | {r.status} |", flush=True)
    print(f"(both rows: {seconds:.1f} s, {sum(o.tree.nodes for o in r.outcomes)} nodes)")


def uniform_row(L: int, nodes: int, budget: float, goal: str | None = None) -> None:
    start = time.perf_counter()
    r = prove_uniform(16, L, EPS, max_nodes=nodes, budget=budget, min_bos_mass=goal)
    seconds = time.perf_counter() - start
    print(f"| {L} | {len(r.subfamily)} | {len(r.certified)} of {len(r.targets)} | {r.status} "
          f"| {_positions(r)} | {seconds:.1f} |", flush=True)
    missed = [o.target for o in r.outcomes if o.target not in r.certified]
    print(f"  (L={L}: not certified {missed}; {len(r.targets) - len(r.outcomes)} not reached)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--L", type=int, nargs="*", default=[5, 8])
    ap.add_argument("--budget", type=float, default=40.0, help="seconds per L (finite)")
    ap.add_argument("--nodes", type=int, default=60)
    ap.add_argument("--sequences", action="store_true", help="also the L=16 sequences")
    ap.add_argument("--uniform-L", type=int, nargs="*", default=[5])
    ap.add_argument("--uniform-budget", type=float, default=60.0)
    ap.add_argument("--uniform-goal", default="1/2", help="min_bos_mass ('none': best bound)")
    ap.add_argument("--save", default=None, help="folder for the certificates")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    print("finite content {-e_1, +e_1}, n = 16, eps = 1/20, goal BOS >= 1/2, "
          "every non-trigger class")
    print("| L | sequences | classes | targets certified | status | least bound at position t "
          "| s |\n|---|---|---|---|---|---|---|")
    for L in args.L:
        finite_row(L, args.budget, args.nodes, args.save)
    if args.sequences:
        print("\nL = 16, n = 16, no goal: the best bound of each tree")
        print("| L | sequence | positions | bound at position t | status |\n|---|---|---|---|---|")
        sequences_row(16, args.nodes)
    goal = None if args.uniform_goal == "none" else args.uniform_goal
    print(f"\ncontinuous content: every vector of [-1, 1]^13, n = 16, eps = 1/20, goal {goal}")
    print("| L | sub-family prefixes | patterns certified | status | least bound at position t "
          "| s |\n|---|---|---|---|---|---|")
    for L in args.uniform_L:
        uniform_row(L, args.nodes, args.uniform_budget, goal)


if __name__ == "__main__":
    main()
