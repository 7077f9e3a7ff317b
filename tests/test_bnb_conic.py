"""The engine's direct programs (``sinkproof.bnb.conic``) against the CVXPY statement of the
same programs, the producer's exact leaf check against the trusted checker's, and the
parallel trees against the serial ones."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.bnb import ValueBox, build_relaxation, prove, prove_paper
from sinkproof.bnb import dual as bnb_dual
from sinkproof.bnb.conic import solve_dual
from sinkproof.bnb.exact import leaf_c0
from sinkproof.bnb.primal import PrimalSolver
from sinkproof.bnb.relaxation import value_tokens
from sinkproof.checker import verify
from sinkproof.checker.exact import InequalityFailed
from sinkproof.checker.rules import tree as trusted
from sinkproof.errors import CertificateError
from sinkproof.tasks import PaperTask

EPS = Fraction(1, 20)
TRIGGER = sp.TriggerTask(p=2, T=3)
PAPER = PaperTask(n=4, L=4, content=[[-1.0], [1.0]])


def _boxes(task, root, draws):
    """Boxes from ``draws`` splits of ``root`` (token index, coordinate, point in [-2, 2])."""
    box = root
    tokens = [tok for tok, _ in root.bounds]
    for ti, c, x, side in draws:
        tok = tokens[ti % len(tokens)]
        c = c % len(root.bounds[0][1])
        lo, hi = box.interval(tok, c)
        at = Fraction(round(x * 8), 8)
        if (lo is not None and at <= lo) or (hi is not None and at >= hi):
            continue
        box = box.split(tok, c, at)[side]
    return box


def _setting(which: str):
    if which == "trigger":
        return TRIGGER, build_relaxation(TRIGGER, EPS, (0, 1)), ValueBox.root(TRIGGER, "learned")
    rows = sp.bnb.family_prefixes(PAPER)
    target = sp.bnb.nontrigger_targets(PAPER, rows)[1]
    return (PAPER, build_relaxation(PAPER, EPS, target, rows),
            ValueBox.free(list(value_tokens(PAPER)), PAPER.out_dim))


DRAWS = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.floats(-2, 2),
                           st.integers(0, 1)), max_size=5)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@settings(max_examples=60, deadline=None)
@given(which=st.sampled_from(["trigger", "paper"]), draws=DRAWS)
@example(which="paper", draws=[(0, 0, -2.0, 0), (1, 0, 0.0, 0)])  # infeasible: CI found it
@example(which="paper", draws=[(0, 1, -1.0, 0)])  # near the cap: CI found it
def test_direct_relaxation_bound_matches_cvxpy(which, draws):
    """The relaxation's maximum by constraint generation in Clarabel's standard form equals
    CVXPY's over every prefix at once wherever CVXPY finds a finite maximum below half the
    score cap.  Where CVXPY finds the box empty the working set may not (its bound is then
    merely looser), and near the cap the programs are ill-conditioned and the solvers
    disagree (boxes CI found, kept as examples): only the exact check of a leaf's
    certificate settles those."""
    task, relax, root = _setting(which)
    box = _boxes(task, root, draws)
    sol = PrimalSolver(relax).solve(box)
    direct = sol.bound
    if sol.rows is not None and sol.s is not None:  # its multipliers are of its prefixes
        assert len(sol.rows) == len(sol.s) == len(sol.z)
    cvx = PrimalSolver(relax, backend="cvxpy").solve(box).bound
    big = 0.5 * PrimalSolver(relax).cap
    if max(direct, cvx) >= big:  # scores near the cap (e^{cap}): ill-conditioned, and the two
        return  # solvers disagree there (one infeasible, one at the cap; CI found both): no
        # float answer is trusted, a leaf is kept only if its certificate checks exactly
    if math.isinf(cvx):  # CVXPY over every prefix finds the box empty; a working set may
        return  # miss that (a looser bound: more branching, never a false proof)
    assert abs(direct - cvx) <= 1e-4 * (1 + abs(cvx))


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@settings(max_examples=8, deadline=None)
@given(which=st.sampled_from(["trigger", "paper"]), draws=DRAWS)
def test_direct_dual_matches_cvxpy_and_weak_duality(which, draws):
    """The weak-duality program's least ``c0`` agrees between the two statements, and is at
    least the relaxation's maximum (weak duality)."""
    task, relax, root = _setting(which)
    box = _boxes(task, root, draws)
    lo, hi = box.arrays(relax.key)
    rows = np.arange(relax.m)
    mine = solve_dual(relax, lo, hi, rows, 0.0, True)
    theirs = bnb_dual._solve_dual(relax, box, rows, 0.0, True)
    assert (mine is None) == (theirs is None) or min(
        x[2] for x in (mine, theirs) if x is not None) > 1e3
    if mine is not None and theirs is not None:
        assert abs(mine[2] - theirs[2]) <= 1e-4 * (1 + abs(theirs[2]))
        primal = PrimalSolver(relax).solve(box).bound
        assert primal <= mine[2] + 1e-5 * (1 + abs(mine[2]))


def _leaf_and_instance(which: str):
    """A certified non-empty leaf of a small tree, its box, and the checker's instance."""
    task, relax, root = _setting(which)
    target = (0, 0) if which == "trigger" else relax.target
    result = prove(task, eps=EPS, targets=[target], max_nodes=20)
    relax = build_relaxation(task, EPS, target, relax.prefixes)
    outcome = result.targets[0]
    node = next(n for n in outcome.tree.root.leaves()
                if id(n) in outcome.leaves and outcome.leaves[id(n)][1] >= 0)
    fields, kind, _ = bnb_dual.certificate_format(task, EPS, "learned")
    inst = (trusted.PaperInstance(fields) if kind == trusted.PAPER_KIND
            else trusted.Instance(fields))
    return relax, node.box, outcome.leaves[id(node)], inst


def _trusted_c0(inst, relax, leaf):
    try:
        return trusted.check_leaf(inst, relax.target, trusted._read_box(inst, leaf["box"], "b"),
                                  leaf, "leaf", {})
    except (InequalityFailed, CertificateError):
        return None


@pytest.mark.parametrize("which", ["trigger", "paper"])
def test_producer_exact_check_agrees_with_the_trusted_checker(which):
    """Cross-check of two independent exact paths: on the engine's leaf and on perturbed
    copies of it, the producer's check accepts exactly when the trusted checker does,
    with the same ``c0``."""
    relax, box, (leaf, c0), inst = _leaf_and_instance(which)
    assert _trusted_c0(inst, relax, leaf) == c0
    index = {tuple(r): i for i, r in enumerate(relax.prefixes)}
    rows = [index[tuple(r)] for r in leaf["constraints"]]
    rng = np.random.default_rng(0)
    verdicts = set()
    for trial in range(12):
        z = [[Fraction(x) for x in row] for row in leaf["z"]]
        s = [Fraction(x) for x in leaf["s"]]
        i, c = rng.integers(len(z)), rng.integers(len(z[0]))
        s0 = Fraction(leaf["s0"])
        if trial % 4 == 1:  # a larger multiplier on the objective: valid, with a larger c0
            s0 *= 1 + Fraction(int(rng.integers(1, 10)), 10)
        else:
            z[i][c] += Fraction(int(rng.integers(-3, 4)), 10 ** int(rng.integers(2, 12)))
        if trial % 3 == 0:
            s[i] = s[i] * Fraction(9, 10)
        fmt = bnb_dual._fmt
        tampered = {**leaf, "z": [[fmt(x) for x in row] for row in z],
                    "s": [fmt(x) for x in s], "s0": fmt(s0)}
        mine = leaf_c0(relax, box, rows, z, s, s0, learned=True)
        theirs = _trusted_c0(inst, relax, tampered)
        assert mine == theirs
        verdicts.add(mine is None)
    assert verdicts == {True, False}  # both outcomes were exercised


def test_both_backends_prove_the_same_claim():
    """The direct programs and the CVXPY programs prove the same homogeneous claim; each
    certificate verifies."""
    claim = "examples/claims/learned_values_homogeneous.toml"
    fast, slow = prove(claim), prove(claim, backend="cvxpy")
    assert fast.status == slow.status == "proved"
    assert verify(fast.certificate).ok and verify(slow.certificate).ok


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend"):
        prove(TRIGGER, eps=EPS, at="homogeneous", backend="gurobi")


@pytest.mark.slow
def test_trees_in_worker_processes_give_the_serial_certificate():
    """The targets' trees grown in 2 processes: the same trees, leaves and certificate."""
    kw = dict(min_bos_mass="1/2", max_nodes=20)
    one = prove_paper(PAPER, EPS, **kw)
    two = prove_paper(PAPER, EPS, workers=2, **kw)
    assert one.status == two.status == "proved"
    assert one.certificate["data"] == two.certificate["data"]
    assert verify(two.certificate).ok


def _heavy_modules(_: object) -> list[str]:
    import sys

    return sorted(m for m in ("jax", "optax", "sympy", "cvxpy", "distributed")
                  if m in sys.modules)


@pytest.mark.slow
def test_tree_workers_import_the_engine_not_jax():
    """A tree's worker imports the engine and Clarabel only (JAX, which the searches'
    workers preload, made a pool start in seconds): none of the heavy libraries is in a
    worker after it grew trees, even where a worker's leaf has no certificate from its
    own solve (at 20 nodes some have: the parent, not the worker, tries the fallback
    solves, CVXPY's the last)."""
    from sinkproof.bnb.api import TREE_WORKER_IMPORTS
    from sinkproof.executor import shared_processes, shutdown_all

    shutdown_all()  # fresh workers: what an earlier test ran in the kept pool is gone
    prove_paper(PAPER, EPS, workers=2, min_bos_mass="1/2", max_nodes=20)
    pool = shared_processes(2, TREE_WORKER_IMPORTS)
    assert [r.value for r in pool.map(_heavy_modules, [0, 1])] == [[], []]


def test_producer_step_check_agrees_with_the_trusted_checker():
    """The several-head step: the producer's exact check (``HeadsProgram.check``) and the
    trusted checker's accept the same steps, with the same ``c0``, on the engine's step
    with a lemma and on perturbed copies of it."""
    from sinkproof.bnb.heads import HeadsProgram, Lemma, instance_dict
    from sinkproof.checker.rules import tree as treeheads

    task = sp.TriggerTask(p=2, T=3)
    first = HeadsProgram(task, EPS, 2).step((0, 0))
    assert first is not None
    lemma = Lemma(0, (0, 0), Fraction(first[0]["bound"]))
    prog = HeadsProgram(task, EPS, 2, [lemma])
    entry, c0 = prog.step((1, 0))  # it uses the lemma (nu and kappa entries)
    inst = treeheads.HeadsInstance(instance_dict(task, EPS, 2))
    table = [(inst.classes(lemma.target), lemma.c)]

    def theirs(leaf):
        try:
            return treeheads.check_step(inst, (1, 0), leaf, table, "step")
        except (InequalityFailed, CertificateError):
            return None

    assert prog.check((1, 0), entry["leaf"]) == theirs(entry["leaf"]) == c0
    rng = np.random.default_rng(1)
    outcomes = set()
    for trial in range(10):
        leaf = {**entry["leaf"], "z": [list(r) for r in entry["leaf"]["z"]],
                "mu": list(entry["leaf"]["mu"])}
        i = int(rng.integers(len(leaf["z"])))
        if trial % 2:
            c = int(rng.integers(len(leaf["z"][i])))
            x = Fraction(leaf["z"][i][c]) + Fraction(int(rng.integers(-3, 4)),
                                                     10 ** int(rng.integers(1, 10)))
            leaf["z"][i][c] = bnb_dual._fmt(x)
        else:
            leaf["mu"][i] = bnb_dual._fmt(Fraction(leaf["mu"][i]) * Fraction(1, 2))
        mine = prog.check((1, 0), leaf)
        assert mine == theirs(leaf)
        outcomes.add(mine is None)
    assert True in outcomes
