"""The several-head engine: never proves a false claim (each counterexample evaluated in
rigorous interval arithmetic), agrees with Theorem 7 and with the one-head engine, and is
sound on accurate two-head models."""

from __future__ import annotations

import dataclasses
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.bnb import HeadsResult, prove, prove_heads
from sinkproof.bnb.multihead import helpers
from sinkproof.bnb.targets import target_prefixes
from sinkproof.checker import verify, verify_file
from sinkproof.checker.rules import witness as trusted_witness
from sinkproof.claims.certified import prove_by_certificate
from sinkproof.claims.check import as_claim
from sinkproof.claims.engine import certify_by_engine
from sinkproof.constructions import feature_index, softmax_score_matrix
from sinkproof.model import AttentionModel

DATA = Path(__file__).parent / "data"
CLAIMS = Path(__file__).parent.parent / "examples" / "claims"
EPS = Fraction(1, 20)
TASK = sp.TriggerTask(p=2, T=3)


# ----------------------------------------------------- witnesses, evaluated rigorously
def load(name: str) -> trusted_witness.Witness:
    """A counterexample found by ``sinkproof check`` (seed 0), accepted by the checker."""
    path = DATA / f"bnb_{name}_witness.json"
    assert verify_file(path).ok
    return trusted_witness.read_witness(json.loads(path.read_text()))


def error_sq_upper(w: trusted_witness.Witness) -> Fraction:
    """A rigorous upper bound on ``max ||f_t - y_t||²`` over the family (50 digits)."""
    return trusted_witness.measure(w).error_sq


def bos_lower(w: trusted_witness.Witness, prefixes: list[tuple[int, ...]]
              ) -> dict[tuple[int, ...], list[Fraction]]:
    """Rigorous lower bounds on each head's BOS mass at the last position of each prefix:
    ``1/upper(Z)`` with ``Z`` summed from the checker's interval exponentials."""
    model = trusted_witness._Model(w)
    out = {}
    for prefix in prefixes:
        t, q, seq = len(prefix), prefix[-1], [trusted_witness.BOS, *prefix]
        out[prefix] = [Fraction(model.iv.one, sum(terms[q, t, seq[j], j][0][1]
                                                  for j in range(t + 1)))  # fixed point
                       for terms in model.terms]
    return out


def with_sink_head(w: trusted_witness.Witness, L: int = 60) -> trusted_witness.Witness:
    """``w`` with one more ``U_fix`` head that sends every query to BOS at logit gap ``L``
    (its non-BOS weight is below ``T e^{-L}``)."""
    D = len(w.A[0])
    sink = [[Fraction(0)] * D for _ in range(D)]
    p = w.inst.p
    sink[p][p + 2] = sink[p + 1][p + 2] = Fraction(L)  # content and trigger queries -> BOS
    return dataclasses.replace(w, A=[*w.A, sink])


def with_zero_head(w: trusted_witness.Witness) -> trusted_witness.Witness:
    """``w`` with one more learned-value head whose values are all zero (same outputs)."""
    D, p = len(w.A[0]), w.inst.p
    zero_U = [[Fraction(0)] * (p + 3) for _ in range(p)]
    return dataclasses.replace(w, A=[*w.A, [[Fraction(0)] * D for _ in range(D)]],
                               U=[*w.U, zero_U])


def test_the_interval_masses_bracket_the_float_model():
    w = load("after_trigger")
    model = AttentionModel(TASK, "softmax",
                           A=np.array([[[float(x) for x in r] for r in a] for a in w.A]))
    prefixes = [(-1, 0), (0, -1, 3), (1,)]
    lower_bounds = bos_lower(w, prefixes)
    for prefix in prefixes:
        lower = float(lower_bounds[prefix][0])
        real = float(model.bos_mass(list(prefix))[0, len(prefix)])
        assert lower <= real <= lower * (1 + 1e-12)


# ----------------------------------------------- item: it never proves a false claim
def test_two_learned_heads_cancelling_are_not_proved_and_no_bound_exceeds_the_witness():
    w = load("two_heads_learned")
    assert w.heads == 2 and w.U is not None and error_sq_upper(w) <= EPS ** 2
    claim = CLAIMS / "two_heads_learned_nontrigger.toml"
    targets = target_prefixes(TASK, "nontrigger")
    masses = bos_lower(w, targets)
    assert max(max(m) for m in masses.values()) < Fraction(1, 10)  # no head sinks anywhere
    result = prove(str(claim))
    assert isinstance(result, HeadsResult) and result.heads == 2
    assert result.status == "open" and result.certificate is None
    for outcome in result.targets:
        assert (outcome.certified or 0) <= min(masses[outcome.target])
    out = sp.check(str(claim), search=False)
    assert out.status == "open"
    assert any("other heads' value maps are free" in r for r in out.reasons)


def test_the_onehot_null_with_a_second_head_is_not_proved():
    w = with_zero_head(load("onehot"))
    assert w.heads == 2 and error_sq_upper(w) <= EPS ** 2
    mass = bos_lower(w, [(0,)])[(0,)]
    assert mass[0] < Fraction(1, 2)
    task = sp.TriggerTask(p=2, T=3, positions="onehot")
    result = prove(task, eps=EPS, at="homogeneous", min_bos_mass="1/2", heads=2)
    assert result.status == "open" and result.certificate is None
    assert (result.targets[0].certified or 0) <= min(mass)


def _after_trigger_case(targets):
    w = with_sink_head(load("after_trigger"))
    assert w.heads == 2 and w.U is None and error_sq_upper(w) <= EPS ** 2
    masses = bos_lower(w, targets)
    assert all(m[0] < Fraction(1, 10) for m in masses.values())  # head 1 never sinks
    assert all(m[1] > Fraction(99, 100) for m in masses.values())  # head 2 always does
    return masses


def test_zero_valued_trigger_two_heads_bounds_stay_below_the_witness():
    targets = [(-1, 0), (0, -1, 3), (-1, 2, 1)]
    masses = _after_trigger_case(targets)
    result = prove_heads(TASK, EPS, 2, targets, min_bos_mass=Fraction(1, 10), some=True,
                         rounds=1)
    assert result.status == "open" and result.certificate is None and result.solves > 3
    for outcome in result.targets:
        assert (outcome.certified or 0) <= min(masses[outcome.target])


@pytest.mark.slow
def test_zero_valued_trigger_two_heads_is_not_proved_anywhere_after_the_trigger():
    targets = target_prefixes(TASK, "after_trigger")
    masses = _after_trigger_case(targets)
    result = prove_heads(TASK, EPS, 2, targets, min_bos_mass=Fraction(1, 10), some=True)
    assert result.status == "open" and result.certificate is None
    for outcome in result.targets:
        assert (outcome.certified or 0) <= min(masses[outcome.target])


# ----------------------------------------------------- cross-checks between routes
def test_two_fixed_heads_are_proved_by_theorem_7_and_by_the_engine_alike(tmp_path):
    path = CLAIMS / "two_heads_fixed.toml"
    by_theorem = sp.check(str(path), search=False, bnb=False)
    assert by_theorem.status == "proved" and "7" in by_theorem.by
    run = certify_by_engine(as_claim(str(path)), tmp_path / "heads.json")
    assert run.path is not None
    bound, _ = prove_by_certificate(as_claim(str(path)), run.path)
    assert bound >= Fraction(1, 2)
    statement = verify_file(run.path).statement
    assert statement["kind"] == "bnb-heads" and statement["conclusion"]["heads"] == "every"
    for prefix, b in statement["conclusion"]["bounds"]:
        # Theorem 7 at a homogeneous prefix: every head >= 1 - eps/||c|| (= 0.95)
        assert Fraction(b) >= 1 - EPS - Fraction(1, 10**7), prefix  # up to rounding
    # and no bound exceeds an accurate two-head model's BOS mass (Theorem 5's head + a sink)
    model = two_head_model(TASK, 4.1, 60.0, 0.0, 0)
    assert model_error(model) <= float(EPS)
    for prefix, b in statement["conclusion"]["bounds"]:
        assert float(Fraction(b)) <= model.bos_mass(prefix)[:, len(prefix)].min()


def test_one_head_program_agrees_with_the_one_head_engine():
    targets = [(0, 2), (0, 2, 1), (1, 1)]
    heads = prove_heads(TASK, EPS, 1, targets, rounds=0)
    single = prove(TASK, eps=EPS, targets=targets, values="fixed", max_nodes=1)
    for a, b in zip(heads.targets, single.targets):
        assert a.certified is not None and b.certified is not None
        assert abs(float(a.certified) - float(b.certified)) < 1e-6


def test_three_heads_keep_theorem_7s_homogeneous_bound():
    result = prove_heads(TASK, EPS, 3, [(0, 0), (3, 3, 3)], rounds=0)
    assert result.verify().ok
    for outcome in result.targets:
        assert abs(outcome.certified - (1 - EPS)) < Fraction(1, 10**7)


def test_lemmas_prove_every_head_sinks_where_zero_is_in_the_hull():
    """At ``(BOS, +e1, -e1)`` Theorem 7 is silent; the homogeneous lemma ``(BOS, -e1, -e1)``
    caps the other head's weight on ``-e1`` and the engine certifies a sink in each head."""
    plain = prove_heads(TASK, EPS, 2, [(0, 2)], rounds=0)
    assert plain.targets[0].certified is None
    result = prove_heads(TASK, EPS, 2, [(0, 2)], min_bos_mass=Fraction(1, 2))
    assert result.status == "proved" and result.verify().ok
    steps = result.certificate["data"]["steps"]
    assert len(steps) >= 2 and any(s["leaf"]["nu"] or s["leaf"]["kappa"] for s in steps)
    assert (2, 2) in helpers(TASK, [(0, 2)])
    assert result.targets[0].certified > Fraction(87, 100)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="heads"):
        prove(TASK, eps=EPS, at="homogeneous", heads=0)
    with pytest.raises(ValueError, match="values"):
        prove_heads(TASK, EPS, 2, [(0,)], values="position")


# ---------------------------------------------- soundness on accurate two-head models
def two_head_model(task: sp.TriggerTask, L1: float, L2: float, noise: float,
                   seed: int) -> AttentionModel:
    """Theorem 5's head plus a sink head, both ``U_fix``, with perturbed scores."""
    rng = np.random.default_rng(seed)
    sink = np.zeros((task.D, task.D))
    for name in ("is_content", "is_trigger"):
        sink[feature_index(task, name), feature_index(task, "is_bos")] = L2
    A = np.stack([softmax_score_matrix(task, L1), sink])
    return AttentionModel(task, "softmax", A=A + noise * rng.normal(size=A.shape))


def model_error(model: AttentionModel) -> float:
    worst = 0.0
    for seq in model.task.sequences():
        out, _ = model.forward(list(seq))
        worst = max(worst, float(np.linalg.norm(out - model.task.targets(seq), axis=1).max()))
    return worst


def _check_model(L1, L2, noise, seed, targets):
    model = two_head_model(TASK, L1, L2, noise, seed)
    eps = Fraction(math.ceil(model_error(model) * 1e6) + 1, 10**6)
    result = prove_heads(TASK, eps, 2, targets, rounds=1)
    for outcome in result.targets:
        mass = model.bos_mass(list(outcome.target))[:, len(outcome.target)]
        assert outcome.certified is None or float(outcome.certified) <= mass.min() + 1e-12
    return result


def test_an_accurate_two_head_model_respects_every_certified_bound():
    result = _check_model(5.0, 5.0, 0.1, 1, [(0,), (0, 2), (1, 3, 1)])
    assert all(o.certified is not None for o in result.targets)  # the test has teeth


@pytest.mark.slow
@settings(max_examples=6, deadline=None)
@given(L1=st.floats(3.0, 7.0), L2=st.floats(2.0, 7.0), noise=st.floats(0.0, 0.3),
       seed=st.integers(0, 10**6))
def test_accurate_two_head_models_respect_every_certified_bound(L1, L2, noise, seed):
    _check_model(L1, L2, noise, seed, [(0,), (0, 0), (0, 2), (2, 0), (1, 3, 1), (0, -1, 2)])


def test_the_certificate_is_what_the_checker_reads():
    result = prove_heads(TASK, EPS, 2, [(0, 2)], min_bos_mass=Fraction(1, 2))
    verdict = verify(result.certificate)
    assert verdict.ok and verdict.statement["model_class"]["heads"] == 2
    assert "EVERY head" in verdict.claim


@pytest.mark.slow
def test_check_proves_every_fixed_head_sinks_before_the_trigger(tmp_path):
    """Theorem 7 covers only the positions whose values' hull avoids 0; the engine's lemma
    chain covers all 84 positions before the trigger, and check decides from its file."""
    path = CLAIMS / "two_heads_fixed_before_trigger.toml"
    assert sp.check(str(path), search=False, bnb=False).status == "open"
    out = sp.check(str(path), search=False, certificate_out=tmp_path / "c.json")
    assert out.status == "proved" and out.by == "bnb" and out.bound >= 0.8
    verdict = verify_file(tmp_path / "c.json")
    assert verdict.ok and verdict.details["targets"] == 84 and verdict.details["heads"] == 2
