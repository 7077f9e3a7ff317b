"""bnb-learned-values certificates: the target claim verifies exactly, tampered trees fail."""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest

from sinkproof.bnb import prove
from sinkproof.checker import verify
from sinkproof.errors import CertificateError

CLAIM = "examples/claims/learned_values_homogeneous.toml"


@pytest.fixture(scope="module")
def result():
    return prove(CLAIM)


@pytest.fixture()
def cert(result):
    return copy.deepcopy(result.certificate)


def rejected(cert: dict) -> bool:
    try:
        return not verify(cert).ok
    except CertificateError:
        return True


def _leaves(node: dict, out: list) -> list:
    if "leaf" in node:
        out.append(node["leaf"])
    else:
        _leaves(node["below"], out)
        _leaves(node["above"], out)
    return out


def _first_split(cert: dict) -> dict:
    return cert["data"]["trees"][0]["root"]


def _empty_leaf(tree: dict) -> dict:
    """The leaf proving that no accurate model has ``v_c`` small in the target's direction."""
    return next(leaf for leaf in _leaves(tree["root"], []) if [-1] in leaf["constraints"])


def _parent_of_empty(node: dict) -> dict:
    below = node["below"]
    if "leaf" in below and [-1] in below["leaf"]["constraints"]:
        return node
    return _parent_of_empty(below)


def test_the_learned_value_homogeneous_claim_is_proved(result):
    assert result.status == "proved"
    assert result.bound is not None and result.bound >= Fraction(1, 2)
    verdict = verify(copy.deepcopy(result.certificate))
    assert verdict.ok and verdict.details["targets"] == 12
    assert not result.norm_bound_needed


def test_each_tree_covers_its_target_with_an_empty_leaf_from_trigger_sharing(cert):
    # The proof's shape: the leaf where v_c is small is empty, shown from the trigger at
    # t = 1 (target 0) and the trigger after c at t = 2 (target c), which share a logit.
    for tree in cert["data"]["trees"]:
        leaf = _empty_leaf(tree)
        c = tree["target"][0]
        assert sorted(map(tuple, leaf["constraints"])) == sorted([(-1,), (c, -1)])


def test_stated_tree_bound_is_checked(cert):
    tree = cert["data"]["trees"][4]
    tree["bound"] = "99/100"
    assert rejected(cert)


@pytest.mark.parametrize("tamper", [
    "missing_leaf", "drop_child", "shift_leaf_box", "shift_split", "shift_split_and_boxes",
    "scale_multiplier", "drop_constraint", "raise_eps", "other_positions", "other_target",
    "raise_claim", "float_number", "foreign_prefix", "claim_count", "duplicate_target",
])
def test_tampering_is_rejected(cert, tamper):
    tree = cert["data"]["trees"][0]
    root = tree["root"]
    if tamper == "missing_leaf":
        tree["root"] = root["below"]          # a subtree standing in for the whole root box
    elif tamper == "drop_child":
        del root["above"]
    elif tamper == "shift_leaf_box":
        leaf = _leaves(root, [])[0]
        leaf["box"][0][1][0] = [None, "3/5"]
    elif tamper == "shift_split":
        root["split"]["at"] = "3/2"
    elif tamper == "shift_split_and_boxes":
        # Move the split that bounds the empty leaf past the point where emptiness holds
        # (v_c <= 0.99 admits accurate models) and restate every box consistently.
        node = _parent_of_empty(root)
        old = node["split"]["at"]
        node["split"]["at"] = "99/100"
        for leaf in _leaves(node, []):
            for row in leaf["box"]:
                row[1] = [["99/100" if x == old else x for x in iv] for iv in row[1]]
    elif tamper == "scale_multiplier":
        leaf = _empty_leaf(tree)
        leaf["z"][1][0] = str(Fraction(leaf["z"][1][0]) / 2)
    elif tamper == "drop_constraint":
        leaf = _empty_leaf(tree)
        for key in ("constraints", "z", "s"):
            leaf[key] = leaf[key][:1]
    elif tamper == "raise_eps":
        cert["instance"]["eps"] = "1/10"
    elif tamper == "other_positions":
        cert["instance"]["task"]["positions"] = "onehot"
    elif tamper == "other_target":
        tree["target"] = [tree["target"][0]] * 2
    elif tamper == "raise_claim":
        cert["claim"]["min_bos_mass"] = "19/20"
    elif tamper == "float_number":
        _leaves(root, [])[0]["s0"] = 0.5
    elif tamper == "foreign_prefix":
        _empty_leaf(tree)["constraints"][0] = [-1, -1]
    elif tamper == "claim_count":
        cert["claim"]["targets"] = 3
    elif tamper == "duplicate_target":
        cert["data"]["trees"][1]["target"] = tree["target"]
    assert rejected(cert)


def test_a_moved_split_that_keeps_the_statement_true_still_verifies(cert):
    # Emptiness of v_c <= 1/2 holds, by the same multipliers, up to v_c <= 9/10: the checker
    # recomputes the boxes and the inequalities, so a consistent edit that stays true passes.
    node = _parent_of_empty(cert["data"]["trees"][0]["root"])
    old = node["split"]["at"]
    node["split"]["at"] = "9/10"
    for leaf in _leaves(node, []):
        for row in leaf["box"]:
            row[1] = [["9/10" if x == old else x for x in iv] for iv in row[1]]
    assert verify(cert).ok


def test_a_smaller_eps_still_verifies(cert):
    # A stronger hypothesis keeps the proof valid (the checker recomputes everything).
    cert["instance"]["eps"] = "1/40"
    assert verify(cert).ok


def test_verify_does_not_mutate(cert):
    before = copy.deepcopy(cert)
    verify(cert)
    assert cert == before
