"""Trees carried by the symmetries of a task (``sinkproof.bnb.symmetry``): which maps
are symmetries, that a mapped tree verifies with its source's bound, that a map which is
not a symmetry is caught (by the engine's exact check and by the trusted checker), and
that proofs with and without the maps settle the same claims."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.bnb import ValueBox, build_relaxation, prove
from sinkproof.bnb import api as bnb_api
from sinkproof.bnb.api import restrict
from sinkproof.bnb.dual import certificate_format
from sinkproof.bnb.result import certificate_dict, round_down
from sinkproof.bnb.symmetry import Symmetry, candidates, mapped, symmetries_of
from sinkproof.checker import verify
from sinkproof.task import TRIG

EPS = Fraction(1, 20)
TRIGGER = sp.TriggerTask(p=2, T=3)
SLOW = pytest.mark.slow  # the suite's marker: CI=true runs it, as SINKPROOF_SLOW=1 does
_TREES: dict = {}


def _tree(target: tuple[int, ...]):
    """A small certified tree of ``TRIGGER`` at ``target`` (grown once per test run)."""
    if target not in _TREES:
        result = prove(TRIGGER, eps=EPS, targets=[target], max_nodes=6, symmetry=False)
        assert result.targets[0].certified is not None
        _TREES[target] = result
    return _TREES[target]


def test_the_signed_content_set_has_the_seven_other_signed_permutations():
    """``±e1, ±e2``: every signed permutation of the plane maps it onto itself, and each
    passes the exact check on the family's prefixes and targets; ``g^{-1}`` undoes ``g``."""
    found = candidates(TRIGGER)
    assert len(found) == 7
    relax = build_relaxation(TRIGGER, EPS, (0, 0))
    root = ValueBox.root(TRIGGER, "learned")
    assert symmetries_of(relax, root) == found
    for g in found:
        back = g.inverse()
        assert back.prefix(g.prefix((0, 1, TRIG))) == (0, 1, TRIG)
        assert back.vector(g.vector(["1/3", "-2"])) == [Fraction(1, 3), Fraction(-2)]
        assert back.box(g.box(root)) == root


def test_gaussian_content_has_no_symmetry():
    """Generic content vectors: no signed permutation maps the set onto itself."""
    assert candidates(sp.TriggerTask(p=2, T=2, content="gaussian", k=3, seed=0)) == []


@settings(max_examples=7, deadline=None)
@given(st.integers(0, 6), st.sampled_from([(0,), (0, 0), (1, 1, 1)]))
def test_a_mapped_tree_verifies_with_its_source_bound(which, target):
    """Any symmetry carries a certified tree to the image target: the trusted checker
    verifies it, at the source's exact bound."""
    g = candidates(TRIGGER)[which]
    result = _tree(target)
    source = result.targets[0]
    image = mapped(source, g, g.prefix(target))
    assert image.target == g.prefix(target) and image.tree.nodes == source.tree.nodes
    carried = restrict(result, [image])
    assert carried.verdict is not None and carried.verdict.ok
    assert carried.targets[0].certified == source.certified


def test_a_map_that_is_not_a_symmetry_is_refused_and_rejected():
    """Swapping ``+e1`` and ``+e2`` without moving the coordinates is not a symmetry: the
    engine's exact check refuses it, and the tree it would carry fails the checker."""
    bad = Symmetry(((0, 1), (1, 0), (2, 2), (3, 3)), (0, 1), (1, 1))
    relax = build_relaxation(TRIGGER, EPS, (0, 0))
    assert bad not in symmetries_of(relax, ValueBox.root(TRIGGER, "learned"))
    image = mapped(_tree((0, 0)).targets[0], bad, (1, 1))
    inst, kind, _ = certificate_format(TRIGGER, EPS, "learned")
    cert = certificate_dict(inst, [image], image.certified, "carried", kind=kind)
    assert not verify(cert).ok


def test_the_homogeneous_claim_grows_one_tree_per_orbit(monkeypatch):
    """The 12 homogeneous targets at p = 2 form 3 orbits: with the maps 3 trees grow,
    without them 12; both proofs are proved and verified, at the same least bound to the
    9 digits a tree states (the grown trees' multipliers round differently in the last
    ones)."""
    real, calls = bnb_api.branch_and_bound, []

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(bnb_api, "branch_and_bound", counted)
    claim = "examples/claims/learned_values_homogeneous.toml"
    fast = prove(claim)
    grown = len(calls)
    slow = prove(claim, symmetry=False)
    assert (grown, len(calls) - grown) == (3, 12)
    assert fast.status == slow.status == "proved"
    assert verify(fast.certificate).ok and verify(slow.certificate).ok
    assert round_down(fast.bound) == round_down(slow.bound)


@SLOW
@pytest.mark.parametrize("name, kw", [
    ("one_head_learned_nontrigger", {}), ("fixed_values_homogeneous", {}),
    ("before_trigger", {}), ("learned_values_homogeneous_onehot", {"max_nodes": 30}),
    ("after_trigger", {"max_nodes": 5})])
def test_the_bench_claims_settle_the_same_with_and_without_the_maps(name, kw):
    """Every one-head claim of ``benchmarks/bench_bnb.py``: the same outcome and least
    bound with the maps as without, to the 9 digits a tree states (each certificate
    verified)."""
    claim = f"examples/claims/{name}.toml"
    fast, slow = prove(claim, **kw), prove(claim, symmetry=False, **kw)
    assert fast.status == slow.status
    assert (fast.bound is None) == (slow.bound is None)
    if fast.certificate is not None:
        assert verify(fast.certificate).ok and verify(slow.certificate).ok
        assert round_down(fast.bound) == round_down(slow.bound)


@SLOW
def test_mapped_trees_in_worker_processes_give_the_serial_certificate():
    """The homogeneous targets' trees grown in 2 processes and carried by the maps: the
    serial certificate, byte for byte."""
    one = prove(TRIGGER, eps=EPS, at="homogeneous", min_bos_mass="1/2")
    two = prove(TRIGGER, eps=EPS, at="homogeneous", min_bos_mass="1/2", workers=2)
    assert one.status == two.status == "proved"
    assert one.certificate["data"] == two.certificate["data"]
