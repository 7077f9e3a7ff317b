"""The learned-value engine (``sinkproof.bnb``): time to settle each claim in scope, nodes
per second, and the bound-vs-time curve, with its baseline measured in the same run.

Baseline: the same best-first tree with each leaf's relaxation built and compiled from
scratch by CVXPY (``backend="cvxpy", parametrised=False``), against the engine's direct
program (the default: Clarabel's standard form, constraint generation over the prefixes;
``benchmarks/bench_engine.py`` has the full before/after).  Both trees split identically when the
solver returns the same points; the table shows nodes, nodes/s and the final bound of each.

Several heads (``prove_heads``, kind ``bnb-heads``): solves per second and the bound at each
target, with the same baseline (the stage-1 dual rebuilt per target instead of one
compiled problem per lemma round whose target enters through a parameter).

The paper's (P1) with learned values: the proofs of ``paper_p1_one_head.toml`` (some
position) and ``paper_p1_one_head_every.toml`` (every position), and the bound at the first
target with no goal.

Run: ``python benchmarks/bench_bnb.py`` (``--quick``: the curve, one claim, the heads case).
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import sinkproof as sp
from sinkproof.bnb import (
    ValueBox,
    branch_and_bound,
    build_relaxation,
    prove,
    prove_heads,
    prove_paper,
)
from sinkproof.bnb.primal import PrimalSolver
from sinkproof.checker import verify
from sinkproof.claims import load_claim

CLAIMS = [
    ("learned_values_homogeneous", {}),
    ("one_head_learned_nontrigger", {}),
    ("fixed_values_homogeneous", {}),
    ("before_trigger", {}),
    ("learned_values_homogeneous_onehot", {"max_nodes": 30}),
    ("after_trigger", {"max_nodes": 5}),
    ("two_heads_fixed", {}),
    ("two_heads_learned_nontrigger", {}),
]
HEAD_TARGETS = [(0, 2), (2, 0), (1, 3), (0, 2, 1), (0, 0, 2)]
"""Mixed prefixes where Theorem 7 is silent (0 in the hull): they need lemmas."""


def settle(name: str, kw: dict) -> None:
    t0 = time.perf_counter()
    result = prove(f"examples/claims/{name}.toml", **kw)
    seconds = time.perf_counter() - t0
    check = "-"
    if result.certificate is not None:
        t1 = time.perf_counter()
        ok = verify(result.certificate).ok
        check = f"{'verified' if ok else 'REJECTED'} in {time.perf_counter() - t1:.2f}s"
    bound = "none" if result.bound is None else f"{float(result.bound):.6f}"
    print(f"| {name} | {result.status} | {len(result.targets)} | {result.nodes} | "
          f"{seconds:.2f} | {bound} | {check} |")


def curve_and_baseline(target: tuple[int, ...], nodes: int) -> None:
    task = sp.TriggerTask(p=2, T=3)
    relax = build_relaxation(task, Fraction(1, 20), target)
    print(f"\ntarget {list(target)} (p=2, T=3, eps=1/20, learned values), no goal, "
          f"{nodes} nodes:")
    print("| relaxation | nodes | seconds | nodes/s | float BOS-mass bound |")
    print("|---|---|---|---|---|")
    trees, rates = {}, []
    for label, kw in (("direct (Clarabel standard form)", dict(backend="clarabel")),
                      ("rebuilt per leaf (baseline)", dict(backend="cvxpy",
                                                           parametrised=False))):
        t0 = time.perf_counter()
        solver = PrimalSolver(relax, **kw)
        tree = branch_and_bound(solver, ValueBox.root(task, "learned"), None, max_nodes=nodes)
        seconds = time.perf_counter() - t0
        trees[label] = tree
        rates.append(tree.nodes / seconds)
        print(f"| {label} | {tree.nodes} | {seconds:.2f} | {tree.nodes / seconds:.1f} | "
              f"{tree.bos_bound:.6f} |")
    print(f"RATIO bnb nodes/s p=2 T=3: {rates[0] / rates[1]:.1f}x (vs the same tree with each "
          f"leaf's CVXPY relaxation rebuilt and compiled, same run)")
    tree = trees["direct (Clarabel standard form)"]
    print("\nbound vs time (direct run): seconds, nodes, BOS-mass bound 1/(1 + bound)")
    for seconds, n, bound in tree.history:
        bos = 0.0 if bound == float("inf") else 1 / (1 + max(bound, 0.0))
        print(f"  {seconds:7.3f}s  {n:4d} nodes  {bos:.6f}")


def heads_and_baseline() -> None:
    task = sp.TriggerTask(p=2, T=3)
    print(f"\ntwo U_fix heads (p=2, T=3, eps=1/20), every-head bounds at {HEAD_TARGETS}, "
          f"2 lemma rounds:")
    print("| dual programs | solves | seconds | solves/s | steps in certificate | least bound |")
    print("|---|---|---|---|---|---|")
    rates = []
    for label, parametrised in (("one compiled problem per round", True),
                                ("rebuilt per target (baseline)", False)):
        t0 = time.perf_counter()
        result = prove_heads(task, Fraction(1, 20), 2, HEAD_TARGETS, parametrised=parametrised)
        seconds = time.perf_counter() - t0
        rates.append(result.solves / seconds)
        steps = len(result.certificate["data"]["steps"]) if result.certificate else 0
        bound = "none" if result.bound is None else f"{float(result.bound):.6f}"
        print(f"| {label} | {result.solves} | {seconds:.2f} | {rates[-1]:.1f} | {steps} | "
              f"{bound} |")
    print(f"RATIO bnb-heads solves/s p=2 T=3 H=2: {rates[0] / rates[1]:.2f}x (vs the stage-1 "
          f"dual rebuilt per target, same run)")
    for outcome in result.targets:
        b = "none" if outcome.certified is None else f"{float(outcome.certified):.6f}"
        print(f"  {outcome.target}: every head >= {b}")


def paper_one_head(nodes: int) -> None:
    """The paper's (P1) with learned values (``paper_p1_one_head.toml``): the proofs with its
    goal at some and at every non-trigger position, then the bound at the first target with
    no goal and ``nodes`` nodes."""
    claim = load_claim("examples/claims/paper_p1_one_head.toml")
    task, eps = claim.task, claim.hypothesis.max_error
    print(f"\npaper setting (n={task.n}, L={task.L}, content {{-1, 1}}, eps={eps}), one "
          "learned-value softmax head:")
    print("| run | outcome | nodes | seconds | certified least BOS mass | check |")
    print("|---|---|---|---|---|---|")
    goal = claim.conclusion.b_exact
    for label, kw in (("goal 1/2, some position", dict(min_bos_mass=goal, some=True)),
                      ("goal 1/2, every position", dict(min_bos_mass=goal, some=False)),
                      (f"no goal, target [0], {nodes} nodes", dict(targets=[(0,)],
                                                                   max_nodes=nodes))):
        t0 = time.perf_counter()
        result = prove_paper(task, eps, **kw)
        seconds = time.perf_counter() - t0
        t1 = time.perf_counter()
        ok = result.certificate is not None and verify(result.certificate).ok
        check = f"{'verified' if ok else 'REJECTED'} in {time.perf_counter() - t1:.2f}s"
        bound = "none" if result.bound is None else f"{float(result.bound):.6f}"
        print(f"| {label} | {result.status} | {result.nodes} | {seconds:.2f} | {bound} | "
              f"{check} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print("| claim | outcome | targets | nodes | seconds | certified least BOS mass | check |")
    print("|---|---|---|---|---|---|---|")
    for name, kw in CLAIMS[:1] if args.quick else CLAIMS:
        settle(name, kw)
    curve_and_baseline((0, 0), 40 if args.quick else 80)
    heads_and_baseline()
    paper_one_head(40 if args.quick else 200)


if __name__ == "__main__":
    main()
