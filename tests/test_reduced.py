"""The two reductions of the paper family (multiset classes, sub-families), the producer
routes over them (:mod:`sinkproof.reduced`) and the checker rule ``paper-subfamily-bnb``."""

from __future__ import annotations

import copy
import itertools
import warnings
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof import checker
from sinkproof.bnb import paper_prefixes, prove_paper
from sinkproof.bnb.box import ValueBox
from sinkproof.bnb.primal import PrimalSolver
from sinkproof.bnb.relaxation import build_relaxation, value_tokens
from sinkproof.checker.family.paper import n_prefixes
from sinkproof.constructions import paper_sink_solution
from sinkproof.errors import CertificateError
from sinkproof.reduced import (
    multiset_subfamily,
    pattern_targets,
    prove_subfamily,
    prove_uniform,
)

EPS = Fraction(1, 20)


def _task(m: int = 2, L: int = 5, n: int = 4) -> sp.PaperTask:
    return sp.PaperTask(n=n, L=L, content=np.linspace(-1.0, 1.0, m)[:, None] * np.ones(n - 3))


# ------------------------------------------------------------- multiset lemma
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), t=st.integers(2, 7), scale=st.floats(0.1, 3.0))
def test_permuting_visible_tokens_leaves_a_heads_output_unchanged(seed, t, scale):
    """No positional encoding: the output at the last row depends on the query token and
    the multiset of visible tokens only (the multiset lemma's premise)."""
    rng = np.random.default_rng(seed)
    task = sp.PaperTask(n=6, L=8)
    w = {k: scale * rng.standard_normal((1, 1, 6, 6)) for k in ("W_Q", "W_K", "W_V")}
    model = sp.stack.paper_model(task, "softmax", W_O=rng.standard_normal((1, 6, 6)), **w)
    x = task.sample(1, seed=seed)[0]
    perm = np.concatenate([[0], 1 + rng.permutation(t - 1), [t], np.arange(t + 1, 8)])
    y, a = model.forward_rows(x)
    y2, a2 = model.forward_rows(x[perm])
    assert np.max(np.abs(y[t] - y2[t])) <= 1e-12 * max(1.0, np.max(np.abs(y[t])))
    assert abs(a[0, 0, t, 0] - a2[0, 0, t, 0]) <= 1e-12


@pytest.mark.parametrize("m,L", [(1, 5), (2, 5), (2, 7), (3, 6)])
def test_classes_partition_the_family(m, L):
    """Grouping every family prefix by (query, multiset) gives exactly the classes, with
    their counts; the counts add up to the checker's closed-form prefix count."""
    task = _task(m, L)
    brute = Counter((p[-1], tuple(sorted(p))) for p in paper_prefixes(task))
    classes = task.prefix_classes()
    got = {(c.query, tuple(sorted(c.representative))): c.count for c in classes}
    assert got == dict(brute)
    assert len(classes) == task.n_prefix_classes()
    assert sum(c.count for c in classes) == n_prefixes(m, L)
    assert task.subfamily([c.representative for c in classes])  # each is in the family


def test_a_non_family_prefix_is_refused():
    task = _task()
    for bad in ([2, 0], [0, 2, 3], [0, 0, 0, 0], [5]):
        with pytest.raises(ValueError, match="not a prefix of the family"):
            task.subfamily([bad])


def _root_bound(task, target, rows) -> float:
    """``1 / Z*`` of the root relaxation (all of ``R^n`` per value) over ``rows``."""
    relax = build_relaxation(task, EPS, target, rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = PrimalSolver(relax).solve(ValueBox.free(list(value_tokens(task)), task.out_dim))
    return 0.0 if not np.isfinite(sol.bound) else 1.0 / (1.0 + sol.bound)


def test_the_multiset_family_is_the_whole_familys_program():
    """Cross-check both ways: the program over one prefix per class and over every prefix
    have the same optimum (duplicate constraints change nothing)."""
    task = _task(2, 5)
    for target in [(0,), (0, 1), (1, 2, 1)]:
        full = _root_bound(task, target, paper_prefixes(task))
        reps = _root_bound(task, target, multiset_subfamily(task))
        assert reps == pytest.approx(full, abs=1e-6)


# ------------------------------------------------------------ sub-family lemma
@settings(max_examples=12, deadline=None)
@given(keep=st.lists(st.booleans(), min_size=50, max_size=50))
def test_a_subfamily_bound_never_exceeds_the_familys(keep):
    task = _task(2, 5)
    rows = multiset_subfamily(task)
    target = (0, 0)
    sub = [r for r, k in zip(rows, keep) if k] + [target]
    assert _root_bound(task, target, sub) <= _root_bound(task, target, rows) + 1e-6


# ------------------------------------------------------------------ the routes
@pytest.fixture(scope="module")
def finite():
    return prove_subfamily(_task(2, 4), EPS, min_bos_mass="1/2", max_nodes=60)


def test_finite_route_agrees_with_the_engine_on_the_whole_family(finite):
    assert finite.status == "complete" and finite.verdict.ok
    assert min(finite.certified.values()) >= Fraction(1, 2)
    engine = prove_paper(_task(2, 4), EPS, targets=[(0,)], max_nodes=20)
    ours = prove_subfamily(_task(2, 4), EPS, targets=[(0,)], max_nodes=20).certified[(0,)]
    assert abs(float(ours) - float(engine.bound)) < 1e-3  # one program, the same tree
    assert finite.verdict.statement["content_domain"] == "finite"
    assert "the m=2 content vectors listed" in finite.verdict.claim
    assert finite.verdict.statement["every_nontrigger_position"]  # all classes are targets
    assert "every non-trigger position of every sequence" in finite.verdict.claim


def test_checker_refuses_a_prefix_outside_the_family_or_the_subfamily(finite):
    cert = copy.deepcopy(finite.certificate)
    cert["data"]["subfamily"].append([2, 0])  # a trigger at position 1
    with pytest.raises(CertificateError, match="trigger at position 1"):
        checker.verify(cert)
    cert = copy.deepcopy(finite.certificate)
    used = _first_leaf(cert["data"]["trees"][0]["root"])["constraints"][0]
    cert["data"]["subfamily"].remove(used)
    with pytest.raises(CertificateError, match="not in data.subfamily"):
        checker.verify(cert)


def _first_leaf(node):
    while "leaf" not in node:
        node = node["below"]
    return node["leaf"]


@pytest.fixture(scope="module")
def uniform():
    return prove_uniform(4, 4, EPS, max_nodes=30)


def test_uniform_route_is_stated_for_the_box(uniform):
    assert uniform.status == "complete" and uniform.verdict.ok
    assert uniform.verdict.statement["content_domain"] == "box"
    assert "every content vector in [-1, 1]^1" in uniform.verdict.claim
    assert set(uniform.certified) == set(pattern_targets(4))
    assert uniform.verdict.statement["every_nontrigger_position"]


def test_uniform_bound_holds_for_an_accurate_model_at_random_contents(uniform):
    """Soundness: the sink construction is eps-accurate at every content of the box, so
    its BOS weight at any sequence with the target's pattern is at least the bound."""
    task = sp.PaperTask(n=4, L=4)
    model = paper_sink_solution(task, float(EPS))
    x = task.sample(400, seed=3)
    err = max(np.max(np.linalg.norm(model.forward_rows(s)[0] - task.targets(s), axis=1))
              for s in x[:50])
    assert err <= float(EPS)
    for target, bound in uniform.certified.items():
        t = len(target)
        trig = [i + 1 for i, c in enumerate(target) if c >= 3]
        for s in x:
            j = task.trigger_position(s)
            if (trig and j == trig[0]) or (not trig and j > t):
                assert model.forward_rows(s)[1][0, 0, t, 0] >= float(bound)


@pytest.mark.parametrize("tamper", ["content multiplier", "repeated symbol", "outside box"])
def test_checker_refuses_a_uniform_certificate_that_depends_on_content(uniform, tamper):
    cert = copy.deepcopy(uniform.certificate)
    if tamper == "content multiplier":
        _first_leaf(cert["data"]["trees"][0]["root"])["z"][0][2] = "1/1000"
        match = "content coordinate"
    elif tamper == "repeated symbol":
        tree = cert["data"]["trees"][-1]
        tree["target"] = [0, 3, 0]  # the trigger carries symbol 0, as the tokens around it
        if [0, 3, 0] not in cert["data"]["subfamily"]:
            cert["data"]["subfamily"].append([0, 3, 0])
        match = "repeats a content symbol"
    else:
        cert["instance"]["content_vectors"][0] = ["2"]
        match = "outside"
    with pytest.raises(CertificateError, match=match):
        checker.verify(cert)


def test_pattern_targets_cover_every_trigger_pattern_once():
    for L in (4, 5, 8):
        got = pattern_targets(L)
        pats = {(len(t), next((i + 1 for i, c in enumerate(t) if c >= L - 1), None))
                for t in got}
        want = {(t, None) for t in range(1, L - 1)} | {
            (t, i) for t in range(3, L) for i in range(2, t)}
        assert pats == want and len(got) == len(want)
        assert all(len({c % (L - 1) for c in t}) == len(t) for t in got)
        assert list(itertools.chain(got)) == got


def test_prove_position_names_a_prefix_by_its_content_vectors():
    from sinkproof.reduced import prove_position, target_codes

    task = _task(2, 4)
    assert target_codes(task, [[-1.0], [1.0], [1.0]], trigger=2) == (0, 3, 1)
    got = prove_position(task, EPS, [[-1.0]], min_bos_mass="1/2", max_nodes=30)
    assert list(got.certified) == [(0,)] and got.verdict.ok
    box = prove_position(sp.PaperTask(n=4, L=4), EPS, [[0.3], [-0.9], [0.1]], trigger=2,
                         min_bos_mass="1/2", max_nodes=30)
    assert list(box.certified) == [(0, 5, 1)]  # the one pattern: depth 3, trigger at 2
    assert box.verdict.statement["content_domain"] == "box"
    with pytest.raises(ValueError, match="trigger must come before"):
        prove_position(task, EPS, [[-1.0], [1.0]], trigger=2)
    with pytest.raises(ValueError, match="not in the task's content set"):
        target_codes(task, [[0.5]])
