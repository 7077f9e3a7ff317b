"""The tree against its floating-point solves: a child's bound above its parent's is solved
again; a leaf whose certificate cannot be found is certified from a fresh solve, else its
split is undone; small but real class weights still steer the split; strong branching
keeps the split whose worse child is best.  Every certificate still goes to the checker."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

import sinkproof as sp
from sinkproof.bnb import api
from sinkproof.bnb.box import ValueBox
from sinkproof.bnb.primal import LeafSolution, PrimalSolver
from sinkproof.bnb.result import TargetOutcome
from sinkproof.bnb.tree import branch_and_bound, choose_split, solve_child, split_candidates
from sinkproof.checker import verify

PAPER = sp.PaperTask(n=4, L=5, content=[[-1.0], [1.0]])


def _paper_relaxation(eps=Fraction(1, 50)):
    return api.RelaxationOf(PAPER, eps, api.family_prefixes(PAPER))((0,))


class Scripted:
    """A solver whose solve returns ``first`` and whose re-solve returns ``again``."""

    def __init__(self, first, again):
        self.first, self.again, self.resolved = first, again, 0

    def solve(self, box):
        return LeafSolution(self.first, None, None, "optimal")

    def resolve(self, box, above):
        self.resolved += 1
        return LeafSolution(self.again, None, None, "optimal")


def test_a_child_bound_above_its_parents_is_solved_again_and_the_lower_one_kept():
    box = ValueBox.free([0], 1)
    parent = LeafSolution(0.1, None, None, "optimal")
    doubtful = Scripted(0.5, 0.05)  # a subset box cannot have the larger maximum
    assert solve_child(doubtful, box, parent).bound == 0.05 and doubtful.resolved == 1
    worse = Scripted(0.5, 0.7)  # the re-solve is no better: the first stays (capped later)
    assert solve_child(worse, box, parent).bound == 0.5 and worse.resolved == 1
    plain = Scripted(0.1 + 1e-8, 0.0)  # within the solvers' accuracy: not solved again
    assert solve_child(plain, box, parent).bound == 0.1 + 1e-8 and plain.resolved == 0
    root = Scripted(0.5, 0.0)  # no parent, or an unbounded one: nothing to compare with
    assert solve_child(root, box, None).bound == 0.5
    assert solve_child(root, box, LeafSolution(math.inf, None, None, "optimal")).bound == 0.5
    assert root.resolved == 0


def test_small_real_class_weights_steer_the_split():
    """The target class at weight 0.0128 beside classes at 450 (a leaf of the paper's
    ε = 1/50 tree): its value is trusted, so the split cuts its disagreement (a threshold
    relative to the largest weight had called it dead and bisected elsewhere, and the tree
    stalled at 0.98737)."""
    box = ValueBox.free([0, 1], 2)
    key = np.array([0, 0, 1])
    u = np.array([0.0128, 450.0, 400.0])
    W = np.array([[0.0, 0.5 * 0.0128], [0.0, 0.96 * 450.0], [0.0, 1.0 * 400.0]])
    sol = LeafSolution(0.0128, u, W, "optimal")
    a = np.array([1.0, 0.0, 0.0])
    tok, coord, at = choose_split(box, sol, key, [0, 1], a)
    assert (tok, coord) == (0, 1) and 0.5 < float(at) < 0.96


def test_split_candidates_rank_target_splits_first_then_any_other_one_per_coordinate():
    box = ValueBox.free([0, 1], 2)
    key = np.array([0, 0, 1, 1])
    u = np.array([1.0, 1.0, 1.0, 1.0])
    W = np.array([[0.0, 0.2], [0.5, 0.9], [3.0, 0.0], [-3.0, 0.1]])
    sol = LeafSolution(1.0, u, W, "optimal")
    a = np.array([1.0, 0.0, 0.0, 0.0])
    ranked = split_candidates(box, sol, key, [0, 1], a, most=10)
    assert [r[:2] for r in ranked] == [(0, 1), (0, 0), (1, 0), (1, 1)]
    assert split_candidates(box, sol, key, [0, 1], a, most=2) == ranked[:2]
    assert choose_split(box, sol, key, [0, 1], a) == ranked[0]


def test_strong_branching_keeps_the_split_whose_worse_child_is_best_and_counts_everysolve_child():
    relax = _paper_relaxation()
    root = ValueBox.free(list(relax.tokens), PAPER.out_dim)
    solves = []

    bound_of: dict = {}  # box -> the least bound any solve gave it (a re-solve may be lower)

    class Counting(PrimalSolver):
        def solve(self, box, whole=False):
            got = super().solve(box, whole)
            solves.append(box)
            bound_of[box] = min(got.bound, bound_of.get(box, math.inf))
            return got

        def resolve(self, box, above):
            got = super().resolve(box, above)
            bound_of[box] = min(got.bound, bound_of[box])
            return got

    tree = branch_and_bound(Counting(relax), root, None, max_nodes=30, strong=3)
    assert tree.nodes == len(solves)  # every candidate's children count as nodes
    expanded = 0

    def walk(node):
        nonlocal expanded
        if node.children is None:
            return
        expanded += 1
        tried = split_candidates(node.box, node.solution, relax.key, relax.tokens, relax.a, 3)
        assert node.split in tried
        worse = [max(min(bound_of[b], node.bound) for b in node.box.split(*split))
                 for split in tried]  # every candidate was solved
        assert max(kid.bound for kid in node.children) == min(worse)
        for kid in node.children:
            walk(kid)

    walk(tree.root)
    assert expanded >= 2


def test_a_leaf_that_cannot_be_certified_undoes_its_split_and_the_tree_still_verifies(
        monkeypatch):
    """The leaf's certificate fails (forced here, as an inaccurate near-infeasible solve did
    at ε = 1/50): the split above it is undone, its parent certified as one leaf, and the
    trusted checker verifies the smaller tree, whose bound is the parent's at worst."""
    eps = Fraction(1, 50)
    full = api.prove_paper(PAPER, eps, targets=[(0,)], max_nodes=12, progress=False)
    assert full.certificate is not None and verify(full.certificate).ok
    grown = full.targets[0].tree
    victim = next(leaf for leaf in grown.root.leaves() if leaf.depth >= 2)
    real = api._leaf

    def inside(box):  # the victim's box or a part of it (splitting it further fails too)
        lo, hi = box.arrays(np.array(relax.tokens))
        vlo, vhi = victim.box.arrays(np.array(relax.tokens))
        return bool(np.all(lo >= vlo) and np.all(hi <= vhi))

    relax = _paper_relaxation(eps)

    def failing(relax, leaf, *args):
        return None if inside(leaf.box) else real(relax, leaf, *args)

    monkeypatch.setattr(api, "_leaf", failing)
    outcome = TargetOutcome((0,), grown)
    api.certify_tree(relax, outcome, "learned")
    assert outcome.certified is not None
    boxes = [leaf.box for leaf in grown.root.leaves()]
    assert victim.box not in boxes  # its parent is a leaf now
    assert set(id(leaf) for leaf in grown.root.leaves()) == set(outcome.leaves)
    assert outcome.certified <= full.targets[0].certified
    inst, kind, head = api.certificate_format(PAPER, eps, "learned")
    result = api.finish(PAPER, eps, "learned", None, [outcome], 1, False, 0.0, inst, kind,
                        head)
    assert result.certificate is not None and verify(result.certificate).ok


def test_the_engine_certifies_the_paper_headline_below_the_former_plateau():
    """ε = 1/50 at position 1 of (BOS, -1): the tree had stalled at 0.9873717 (the
    default programs at 0.9729730); the best verified model there has 0.990091."""
    proof = api.prove_paper(PAPER, Fraction(1, 50), targets=[(0,)], max_nodes=200,
                            progress=False)
    assert proof.certificate is not None and verify(proof.certificate).ok
    assert 0.9895 < float(proof.targets[0].certified) <= 0.990091


def test_a_leaf_without_a_certificate_is_split_further_before_any_split_is_undone(
        monkeypatch):
    """A near-infeasible box that no program certifies whole can split into boxes that are
    each certified (the paper's ε = 1/10000 tree): the leaf gets children, their solves
    count as nodes, and the checker verifies the larger tree."""
    eps = Fraction(1, 50)
    grown = api.prove_paper(PAPER, eps, targets=[(0,)], max_nodes=12,
                            progress=False).targets[0].tree
    victim = max(grown.root.leaves(), key=lambda leaf: leaf.bound)
    nodes = grown.nodes
    real = api._leaf
    monkeypatch.setattr(api, "_leaf", lambda relax, leaf, *args: None
                        if leaf.box == victim.box else real(relax, leaf, *args))
    outcome = TargetOutcome((0,), grown)
    api.certify_tree(_paper_relaxation(eps), outcome, "learned")
    assert outcome.certified is not None
    assert victim.children is not None and grown.nodes >= nodes + 2
    assert set(id(leaf) for leaf in grown.root.leaves()) == set(outcome.leaves)
    inst, kind, head = api.certificate_format(PAPER, eps, "learned")
    result = api.finish(PAPER, eps, "learned", None, [outcome], 1, False, 0.0, inst, kind,
                        head)
    assert result.certificate is not None and verify(result.certificate).ok


def test_the_deepest_tree_writes_a_certificate_the_checker_reads_by_default():
    """The tree stops splitting at MAX_DEPTH (and certification at EXTRA_DEPTH below it) so
    that its certificate stays within the checker's default nesting limit: the overhead
    of the certificate over the tree's depth, measured on a real one, leaves room."""
    from sinkproof.bnb.tree import MAX_DEPTH
    from sinkproof.checker.jsonfile import depth
    from sinkproof.checker.limits import DEFAULT

    proof = api.prove_paper(PAPER, Fraction(1, 50), targets=[(0,)], max_nodes=60,
                            progress=False)
    tree_depth = max(leaf.depth for leaf in proof.targets[0].tree.root.leaves())
    overhead = depth(proof.certificate) - tree_depth
    assert 0 < overhead <= 12
    assert MAX_DEPTH + api.EXTRA_DEPTH + overhead <= DEFAULT.depth
