"""Branch and bound over value boxes for one target (bound, then split the worst leaf).

In the style of the neural-network verifiers (bound every open leaf by a convex
relaxation, split the leaf with the worst bound, prune the leaves that already meet the
goal): the relaxation is :class:`~sinkproof.bnb.primal.PrimalSolver`'s, and a leaf is
split on the (token, coordinate) whose products disagree most across classes
(``w_l / u_l`` at the maximiser), at the midpoint of the disagreement, so the child
boxes cut the relaxed point off.  The tree's bound is the largest bound of its leaves; a
child's bound is capped by its parent's (its box is a subset), so the bound never rises
as the tree grows.  ``KeyboardInterrupt`` stops the search and returns the tree so far.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..progress import Progress
from .box import ValueBox
from .primal import LeafSolution, PrimalSolver

U_TOL = 1e-4
"""Classes with ``u`` below this (relative to the largest) carry no trustworthy ``w/u`` for
branching."""
MAX_DEPTH = 48
"""Deepest node the tree splits: its certificate nests about ten levels more than the tree
(a 21-deep tree wrote 31), and the trusted checker refuses, by default, a document nested
deeper than 64 (a 400-node tree at the paper's ε = 1/10000 went past it).  A node this
deep stays a leaf."""
TARGET_U_TOL = 1e-7
"""The same for the target's own classes (``a > 0``), whose ``u`` is the bound: at the
paper's ε = 1/50 the target class weighed 0.0128 beside classes at 450, and with the
threshold above the tree never split on it and stalled at 0.98737 (0.98998 with it)."""


@dataclass
class Node:
    """A tree node: its box, float bound on ``Z* - 1`` and, once split, the split and children."""

    box: ValueBox
    bound: float
    depth: int
    solution: LeafSolution | None = None
    split: tuple[int, int, Fraction] | None = None
    children: tuple[Node, Node] | None = None

    def leaves(self) -> list[Node]:
        """The leaves below this node, left to right."""
        if self.children is None:
            return [self]
        return [leaf for child in self.children for leaf in child.leaves()]


@dataclass
class TreeResult:
    """Outcome of one branch-and-bound run.

    ``bound``: float upper bound on ``Z* - 1`` over the whole root box (``inf``: none);
    ``status``: ``"proved"`` (every leaf meets ``goal``), ``"budget"``, ``"time"``,
    ``"interrupted"``, ``"exhausted"`` (no leaf can be split further) or ``"done"``
    (no goal: budget spent); ``history``: ``(seconds, nodes, bound)`` at each improvement.
    """

    root: Node
    bound: float
    status: str
    nodes: int
    seconds: float
    goal: float | None
    history: list[tuple[float, int, float]] = field(default_factory=list)

    @property
    def bos_bound(self) -> float:
        """The float lower bound ``1/(1 + bound)`` on BOS mass (0 when unbounded)."""
        return 0.0 if not math.isfinite(self.bound) else 1.0 / (1.0 + max(self.bound, 0.0))


def _nice_split(x: float, lo: Fraction | None, hi: Fraction | None) -> Fraction | None:
    """A short rational near ``x`` strictly inside ``(lo, hi)``."""
    for den in (4, 16, 64, 256, 4096, 1 << 20):
        r = Fraction(round(x * den), den)
        if (lo is None or r > lo) and (hi is None or r < hi):
            return r
    return None


def choose_split(box: ValueBox, sol: LeafSolution, key: np.ndarray, tokens: list[int],
                 a: np.ndarray | None = None) -> tuple[int, int, Fraction] | None:
    """The (token, coordinate, point) to split, or ``None`` when nothing can be split.

    First choice: the largest disagreement between the value a target class implies
    (``w/u``, ``a > 0``) and the value another class of the same token implies, split half
    way; then the largest disagreement between any two classes of one token.
    """
    ranked = split_candidates(box, sol, key, tokens, a, 1)
    return ranked[0] if ranked else None


def split_candidates(box: ValueBox, sol: LeafSolution, key: np.ndarray, tokens: list[int],
                     a: np.ndarray | None = None, most: int = 1
                     ) -> list[tuple[int, int, Fraction]]:
    """Up to ``most`` (token, coordinate, point) splits, best first by
    :func:`choose_split`'s rule, one per (token, coordinate): the target classes'
    disagreements first, then any two classes' (for strong branching, where the target's
    splits alone may all leave the worse child's bound where it was); empty when nothing
    can be split."""
    u, W = sol.u, sol.W
    ranked: list[tuple[int, int, Fraction]] = []
    if u is not None:
        scale = max(1.0, float(u.max()))
        live = u > U_TOL * scale
        if a is not None and math.isfinite(sol.bound):  # the target's own classes steer
            # a finite bound itself (an unbounded leaf's point sits at the cap: the rule above)
            live |= (a > 0) & (u > TARGET_U_TOL * scale)
        for focus in ((a is not None) and (a > 0), None):
            if focus is None or focus is False:
                focus = None
            found: list[tuple[float, int, int, Fraction]] = []
            for tok in tokens:
                rows = np.flatnonzero((key == tok) & live)
                if rows.size < 2:
                    continue
                v = W[rows] / u[rows, None]
                mine = focus[rows] if focus is not None else None
                if mine is not None and (not mine.any() or mine.all()):
                    continue
                for c in range(v.shape[1]):
                    lo, hi = box.interval(tok, c)
                    if mine is not None:
                        ref = float(np.average(v[mine, c], weights=u[rows][mine]))
                        gaps = np.abs(v[~mine, c] - ref)
                        far = float(v[~mine, c][int(np.argmax(gaps))])
                        spread, mid = float(gaps.max()), 0.5 * (ref + far)
                    else:
                        spread = float(v[:, c].max() - v[:, c].min())
                        mid = 0.5 * float(v[:, c].max() + v[:, c].min())
                    at = _nice_split(mid, lo, hi)
                    if at is not None and spread > 1e-6:
                        found.append((spread, tok, c, at))
            found.sort(key=lambda f: -f[0])  # stable: ties keep (token, coordinate) order
            for _, tok, c, at in found:
                if len(ranked) < most and all((tok, c) != r[:2] for r in ranked):
                    ranked.append((tok, c, at))
        if ranked:
            return ranked
    # No disagreement to cut: open infinite ends at 0, then bisect the widest finite interval.
    widest: tuple[float, int, int, Fraction] | None = None
    for tok in tokens:
        for c in range(len(box.interval(tok, 0)) and len(dict(box.bounds)[tok])):
            lo, hi = box.interval(tok, c)
            if lo is None or hi is None:
                point = 0.0 if lo is None and hi is None else (
                    float(hi) - 1.0 if lo is None else float(lo) + 1.0)
                at = _nice_split(point, lo, hi)
                if at is not None:
                    return [(tok, c, at)]
            elif hi > lo and (widest is None or float(hi - lo) > widest[0]):
                widest = (float(hi - lo), tok, c, (lo + hi) / 2)
    if widest is not None:
        return [(widest[1], widest[2], widest[3])]
    return []


def solve_child(solver: PrimalSolver, box: ValueBox, parent: LeafSolution | None
                ) -> LeafSolution:
    """``solver.solve(box)``, started from the parent's working set of prefixes when the
    solver takes one (:meth:`PrimalSolver.warm`; any object with ``solve(box)`` serves).
    A bound above the parent's beyond the solvers' accuracy (the box is a subset, so its
    exact maximum is at most the parent's) is solved again (``solver.resolve``, where the
    solver has it) and the lower of the two kept."""
    warm = getattr(solver, "warm", None)
    if warm is not None:
        warm(None if parent is None else parent.rows)
    got = solver.solve(box)
    resolve = getattr(solver, "resolve", None)
    if parent is None or resolve is None or not math.isfinite(parent.bound):
        return got
    ceiling = parent.bound + 1e-6 * (1 + abs(parent.bound))
    if got.bound > ceiling:
        again = resolve(box, ceiling)
        if again.bound < got.bound:
            return again
    return got


def branch_and_bound(solver: PrimalSolver, root_box: ValueBox, goal: float | None = None,
                     max_nodes: int = 200, time_limit: float = 60.0,
                     progress: bool | None = None, margin: float = 1e-6,
                     strong: int = 1) -> TreeResult:
    """Best-first branch and bound on ``Z* - 1`` (to prove ``<= goal`` when given).

    A leaf is closed when its float bound is ``<= goal - margin·(1 + goal)`` (or its
    relaxation is infeasible); the margin leaves room for the rounded certificate.
    ``strong > 1``: strong branching — the leaf's ``strong`` best-ranked splits
    (:func:`split_candidates`) are each solved, and the split whose worse child bound is
    least is kept; every solve counts as a node of ``max_nodes``.
    """
    start = time.perf_counter()
    tokens = solver.relax.tokens
    key = solver.relax.key
    sol = solver.solve(root_box)
    root = Node(root_box, sol.bound, 0, sol)
    nodes = 1
    history = [(time.perf_counter() - start, nodes, sol.bound)]
    target = None if goal is None else goal - margin * (1 + abs(goal))
    heap: list[tuple[float, int, Node]] = []
    closed_bound = -np.inf
    counter = 0

    def push(node: Node) -> None:
        nonlocal counter, closed_bound
        if target is not None and node.bound <= target:
            closed_bound = max(closed_bound, node.bound)
            return
        counter += 1
        heapq.heappush(heap, (-node.bound, counter, node))

    def current() -> float:
        return max(closed_bound, -heap[0][0]) if heap else closed_bound

    push(root)
    status = "proved" if goal is not None else "done"
    stuck: list[Node] = []
    bar = Progress(max_nodes, f"bnb {list(solver.relax.target)}", enabled=progress, threshold=0)
    try:
        while heap:
            if nodes >= max_nodes:
                status = "budget" if goal is not None else "done"
                break
            if time.perf_counter() - start > time_limit:
                status = "time"
                break
            _, _, node = heapq.heappop(heap)
            if node.depth >= MAX_DEPTH:
                stuck.append(node)
                continue
            splits = split_candidates(node.box, node.solution, key, tokens, solver.relax.a,
                                      strong)
            if not splits:
                stuck.append(node)
                continue
            solved_before = nodes
            best: tuple[float, tuple[int, int, Fraction], list[Node]] | None = None
            for split in splits:  # strong branching: keep the split whose worse child is best
                kids = []
                for box in node.box.split(*split):
                    s = solve_child(solver, box, node.solution)
                    kids.append(Node(box, min(s.bound, node.bound), node.depth + 1, s))
                    nodes += 1
                worse = max(kid.bound for kid in kids)
                if best is None or worse < best[0]:
                    best = (worse, split, kids)
            assert best is not None
            node.split, kids = best[1], best[2]
            node.children = (kids[0], kids[1])
            before = history[-1][2]
            for kid in kids:
                push(kid)
            now = max(current(), *(n.bound for n in stuck)) if stuck else current()
            if now < before and (math.isinf(before) or now < before - 1e-9 * (1 + abs(before))):
                history.append((time.perf_counter() - start, nodes, now))
            bar.update(nodes - solved_before, f"nodes {nodes} bound {now:.4g}")
    except KeyboardInterrupt:
        status = "interrupted"
    finally:
        bar.close()
    if stuck and status in ("proved", "done"):
        status = "exhausted" if goal is not None else status
    leaves_open = [n for _, _, n in heap] + stuck
    bound = max([closed_bound, *(n.bound for n in leaves_open)])
    if status == "proved" and leaves_open:
        status = "budget"
    return TreeResult(root, float(bound), status, nodes, time.perf_counter() - start, goal,
                      history)
