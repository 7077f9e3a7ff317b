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


# ------------------------------------------------- the checker's algebra, against the model
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import sinkproof as sp  # noqa: E402
from sinkproof.checker.exact import common_denominator  # noqa: E402
from sinkproof.checker.rules import tree as trusted  # noqa: E402

SMALL = st.fractions(min_value=-3, max_value=3, max_denominator=7)


@settings(max_examples=25, deadline=None)
@given(data=st.data(), positions=st.sampled_from(["inverse", "onehot", "none"]))
def test_leaf_terms_bound_the_lagrangian_of_every_model_in_the_box(data, positions):
    """``Σ_i (eps s_i Z_i + z_i·r_i) + eps s_0 + z_0·v_BOS <= c0 + Σ_l h_l u_l`` for every
    ``u >= 0`` and values in the box, with ``r_i`` computed here from the definitions."""
    task = sp.TriggerTask(p=2, T=3, positions=positions)
    eps = Fraction(1, 20)
    inst = trusted.Instance({"task": task.describe(), "values": "learned", "family": "S_T",
                             "eps": "1/20"})
    from sinkproof.bnb.relaxation import family_prefixes

    rows = data.draw(st.lists(st.sampled_from(family_prefixes(task)), min_size=1, max_size=5))
    z = [[data.draw(SMALL), data.draw(SMALL)] for _ in rows]
    s = [abs(a) + abs(b) + data.draw(st.fractions(0, 1, max_denominator=5)) for a, b in z]
    s0 = data.draw(st.fractions(0, 2, max_denominator=5))
    box, v = {}, {}
    for tok in inst.tokens:
        ivs, vec = [], []
        for _ in range(2):
            # finite ends (infinite ones only make h unbounded: test_support_function)
            lo = data.draw(SMALL)
            hi = lo + data.draw(st.fractions(0, 3, max_denominator=5))
            ivs.append((lo, hi))
            base = lo if lo is not None else (hi - 1 if hi is not None else Fraction(0))
            width = (hi - base) if hi is not None else Fraction(5)
            vec.append(base + width * data.draw(st.fractions(0, 1, max_denominator=4)))
        box[tok], v[tok] = ivs, vec
    vb = [data.draw(SMALL), data.draw(SMALL)]
    d = common_denominator([x for zi in z for x in zi], "z")  # the rule's integer sums
    c0, h = trusted.leaf_terms(inst, box, [tuple(r) for r in rows], z, s, s0, d, {})
    u = {cls: data.draw(st.fractions(0, 4, max_denominator=3)) for cls in h}
    pi = [tuple(task.position_features_exact(t)) for t in range(task.T + 1)]
    total = eps * s0 - sum((a * b for a, b in zip([sum(c) for c in zip(*z)], vb)), Fraction(0))
    for prefix, zi, si in zip(rows, z, s):
        t = len(prefix)
        y = [Fraction(float(x)) for x in task.targets(list(prefix))[-1]]
        weights = [u[(prefix[-1], pi[t], tok, pi[j])] for j, tok in enumerate(prefix, start=1)]
        Z = 1 + sum(weights, Fraction(0))
        r = [vb[c] + sum((w * v[tok][c] for w, tok in zip(weights, prefix)), Fraction(0))
             - Z * y[c] for c in range(2)]
        total += eps * si * Z + zi[0] * r[0] + zi[1] * r[1]
    assert all(x is not None for x in h.values())
    assert total <= c0 + sum((h[c] * u[c] for c in h), Fraction(0))


def test_support_function_is_unbounded_exactly_when_an_open_end_is_needed():
    F = Fraction
    box = [(None, F(2)), (F(-1), None)]
    assert trusted.support([F(3), F(-2)], box) == F(3) * 2 + F(-2) * -1
    assert trusted.support([F(-1), F(0)], box) is None
    assert trusted.support([F(0), F(1)], box) is None
    assert trusted.support([F(0), F(0)], [(None, None), (None, None)]) == 0
