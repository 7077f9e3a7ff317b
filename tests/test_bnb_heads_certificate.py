"""bnb-heads certificates: a lemma chain verifies exactly, tampered chains fail, and the
checker's weighted sum is an identity in the logits and the other heads' weights."""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.bnb import prove_heads
from sinkproof.bnb.relaxation import family_prefixes
from sinkproof.checker import verify
from sinkproof.checker.rules import tree as trusted
from sinkproof.errors import CertificateError

TASK = sp.TriggerTask(p=2, T=3)
EPS = Fraction(1, 20)


@pytest.fixture(scope="module")
def result():
    # (BOS, +e1, -e1) needs a lemma; (BOS, +e1, +e1) does not
    return prove_heads(TASK, EPS, 2, [(0, 2), (0, 0)], min_bos_mass=Fraction(1, 2))


@pytest.fixture()
def cert(result):
    return copy.deepcopy(result.certificate)


def rejected(cert: dict) -> bool:
    try:
        return not verify(cert).ok
    except CertificateError:
        return True


def _user(cert: dict) -> int:
    """The index of a step that bounds the other head's weight by earlier steps."""
    return next(i for i, s in enumerate(cert["data"]["steps"]) if s["leaf"]["nu"])


def test_the_chain_verifies_and_uses_a_lemma(result, cert):
    assert result.status == "proved"
    verdict = verify(cert)
    assert verdict.ok and verdict.details["heads"] == 2 and verdict.details["steps"] >= 3
    assert verdict.statement["conclusion"]["heads"] == "every"
    _user(cert)


def test_verify_does_not_mutate(cert):
    before = copy.deepcopy(cert)
    verify(cert)
    assert cert == before


@pytest.mark.parametrize("tamper", [
    "raise_step_bound", "raise_lemma_bound", "raise_claim", "raise_eps", "more_heads",
    "learned_values", "other_positions", "drop_lemma", "reverse_steps", "self_reference",
    "drop_nu", "flip_z", "shrink_s", "drop_constraint", "negative_nu", "target_out_of_range",
    "duplicate_target", "claim_count", "other_target", "float_number", "unknown_field",
])
def test_tampering_is_rejected(cert, tamper):
    steps = cert["data"]["steps"]
    user = _user(cert)
    leaf = steps[user]["leaf"]
    if tamper == "raise_step_bound":
        steps[cert["data"]["targets"][0]]["bound"] = "99/100"
    elif tamper == "raise_lemma_bound":
        steps[leaf["nu"][0][1]]["bound"] = "999/1000"
    elif tamper == "raise_claim":
        cert["claim"]["min_bos_mass"] = "99/100"
    elif tamper == "raise_eps":
        cert["instance"]["eps"] = "1/10"
    elif tamper == "more_heads":
        cert["instance"]["heads"] = 5
    elif tamper == "learned_values":
        cert["instance"]["values"] = "learned"
    elif tamper == "other_positions":
        cert["instance"]["task"]["positions"] = "onehot"
    elif tamper == "drop_lemma":
        del steps[0]
        cert["data"]["targets"] = [i - 1 for i in cert["data"]["targets"]]
    elif tamper == "reverse_steps":
        steps.reverse()
        n = len(steps)
        cert["data"]["targets"] = [n - 1 - i for i in cert["data"]["targets"]]
    elif tamper == "self_reference":
        leaf["nu"][0][1] = user
    elif tamper == "drop_nu":
        leaf["nu"] = []
    elif tamper == "flip_z":
        leaf["z"] = [[str(-Fraction(x)) for x in row] for row in leaf["z"]]
    elif tamper == "shrink_s":
        leaf["s"][0] = str(Fraction(leaf["s"][0]) / 2)
    elif tamper == "drop_constraint":
        for key in ("constraints", "z", "s", "mu"):
            leaf[key] = leaf[key][1:]
        leaf["nu"] = [[i - 1, k, x] for i, k, x in leaf["nu"] if i > 0]
    elif tamper == "negative_nu":
        leaf["nu"][0][2] = "-1"
    elif tamper == "target_out_of_range":
        cert["data"]["targets"][0] = len(steps)
    elif tamper == "duplicate_target":
        cert["data"]["targets"][1] = cert["data"]["targets"][0]
    elif tamper == "claim_count":
        cert["claim"]["targets"] = 3
    elif tamper == "other_target":
        steps[cert["data"]["targets"][0]]["target"] = [1, 3]
    elif tamper == "float_number":
        leaf["s"][0] = 0.5
    elif tamper == "unknown_field":
        leaf["lambda"] = []
    assert rejected(cert)


def test_a_smaller_eps_still_verifies(cert):
    cert["instance"]["eps"] = "1/40"  # a stronger hypothesis: the same multipliers serve
    assert verify(cert).ok


def test_fewer_heads_still_verify(cert):
    cert["instance"]["heads"] = 1  # the other heads' terms only vanish
    assert verify(cert).ok


# ------------------------------------------------------------ the checker's algebra
SMALL = st.fractions(min_value=-3, max_value=3, max_denominator=5)
POS = st.fractions(min_value=0, max_value=2, max_denominator=5)


@settings(max_examples=25, deadline=None)
@given(data=st.data(), heads=st.integers(1, 3),
       positions=st.sampled_from(["inverse", "onehot", "none"]))
def test_the_weighted_sum_is_an_identity_in_u_and_lambda(data, heads, positions):
    """``Σ_i [eps s_i Z_i + z_i·r_i + μ_i((H-1)Z_i - Σλ_i) + Σ_k ν_ik((H-1)c_k Z_i -
    Σ_l (a_kl/m_il + c_k) λ_il)] + Σ_k κ_k (c_k - a_k·u) = c0 + h·u + q·λ``, all computed
    here from the definitions, for random multipliers, logits and other-head weights."""
    task = sp.TriggerTask(p=2, T=3, positions=positions)
    inst = trusted.HeadsInstance({"task": task.describe(), "values": "fixed", "family": "S_T",
                             "eps": "1/20", "heads": heads})
    every = family_prefixes(task)
    rows = data.draw(st.lists(st.sampled_from(every), min_size=1, max_size=4))
    lemma_targets = data.draw(st.lists(st.sampled_from(every), min_size=0, max_size=3))
    lemmas = [(inst.classes(t), data.draw(POS)) for t in lemma_targets]
    z = [[data.draw(SMALL), data.draw(SMALL)] for _ in rows]
    s = [data.draw(POS) for _ in rows]
    mu = [data.draw(POS) for _ in rows]
    nu = [[(k, data.draw(POS)) for k in range(len(lemmas)) if data.draw(st.booleans())]
          for _ in rows]
    kappa = [(k, data.draw(POS)) for k in range(len(lemmas)) if data.draw(st.booleans())]
    c0, h, q = trusted.step_terms(inst, rows, z, s, mu, nu, kappa, lemmas)
    classes = set(h) | {c for a, _ in lemmas for c in a}
    u = {c: data.draw(POS) for c in classes}
    lam = {key: data.draw(POS) for key in q}
    eps, H = Fraction(1, 20), heads
    lhs = sum((x * (c - sum((a[cl] * u[cl] for cl in a), Fraction(0)))
               for (k, x), (a, c) in ((kk, lemmas[kk[0]]) for kk in kappa)), Fraction(0))
    for i, prefix in enumerate(rows):
        cls = inst.classes(prefix)
        Z = 1 + sum((m * u[c] for c, m in cls.items()), Fraction(0))
        y = inst.target_of(prefix)
        r = [sum((m * u[c] * inst.value(c[2])[d] + lam[i, c] * inst.value(c[2])[d]
                  for c, m in cls.items()), Fraction(0)) - Z * y[d] for d in range(2)]
        total_lam = sum((lam[i, c] for c in cls), Fraction(0))
        lhs += eps * s[i] * Z + sum((a * b for a, b in zip(z[i], r)), Fraction(0))
        lhs += mu[i] * ((H - 1) * Z - total_lam)
        for k, x in nu[i]:
            a, c = lemmas[k]
            lhs += x * ((H - 1) * c * Z - sum(((Fraction(a.get(cl, 0), m) + c) * lam[i, cl]
                                                for cl, m in cls.items()), Fraction(0)))
    rhs = c0 + sum((h[c] * u[c] for c in h), Fraction(0)) + sum(
        (q[key] * lam[key] for key in q), Fraction(0))
    assert lhs == rhs
