"""Theorem 8 (tied positions): its exact constants, where it gives nothing, models held
against it (perturbed sink heads, a property), and its tightness: the constrained optimiser's
models, verified by the trusted checker, sit within 1e-6 of the bound."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.constructions import softmax_score_matrix
from sinkproof.model import AttentionModel, fixed_values
from sinkproof.theorems import THEOREMS
from sinkproof.theorems.instance import errors_at
from sinkproof.theorems.theorem8 import tied

THEOREM = THEOREMS["theorem8"]
TASK = sp.TriggerTask(p=2, T=3)
TRIG_SEQ = (sp.TRIG,)


def _closed_form(eps: Fraction, norm: Fraction, t: int) -> Fraction:
    """The two bounds, by hand: ``1 - 2ε/r`` at ``t >= 2``; at ``t = 1`` the non-BOS mass
    ``δ_1 = δ_2/(2 - δ_2)`` with ``δ_2 = 2ε/r``."""
    d2 = 2 * eps / norm
    return 1 - (d2 / (2 - d2) if t == 1 else d2)


@pytest.mark.parametrize("eps", ["1/20", "1/10", "1/1000"])
def test_the_exact_constants(eps):
    inst = THEOREM.instantiate(TASK, eps)
    assert len(inst.items) == TASK.k * TASK.T and not inst.no_bound
    for c in range(TASK.k):
        for t in range(1, TASK.T + 1):
            item = inst.bound_at((c,) * t, t)
            assert item.bound == sympy.Rational(_closed_form(Fraction(eps), Fraction(1), t))
            assert ((TRIG_SEQ, 1) in item.needs) and (((c, sp.TRIG), 2) in item.needs)
            assert (((c, c), 2) in item.needs) == (t <= 2)  # the tie of X^c_1 and X^c_2


def test_the_headline_numbers():
    """ε = 1/20, unit content: 18/19 at t = 1 and 9/10 from t = 2 on."""
    inst = THEOREM.instantiate(TASK, "1/20")
    assert inst.bound_at((0,), 1).bound == sympy.Rational(18, 19)
    assert inst.bound_at((0, 0, 0), 3).bound == sympy.Rational(9, 10)


def test_nothing_without_the_tie_or_with_a_small_content():
    assert tied(TASK) and tied(sp.TriggerTask(p=2, T=3, positions="none"))
    onehot = sp.TriggerTask(p=2, T=3, positions="onehot")
    assert not tied(onehot) and not THEOREM.instantiate(onehot, "1/20").items
    assert not THEOREM.instantiate(TASK, "1/2").items  # ‖c‖ = 1 <= 2ε
    assert not THEOREM.instantiate(sp.TriggerTask(p=2, T=1), "1/20").items  # no T >= 2


def _perturbed_sink(seed: int, scale: float) -> AttentionModel:
    """Theorem 5's sink head with fixed values, its scores and values perturbed."""
    rng = np.random.default_rng(seed)
    A = softmax_score_matrix(TASK, float(np.log(8 / 0.05)))
    A = A + scale * rng.standard_normal(A.shape) * np.abs(A).max() / 3
    U = fixed_values(TASK.p)
    U = U + scale * rng.standard_normal(U.shape)
    return AttentionModel(TASK, kind="softmax", A=A[None], U=U[None])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([0.01, 0.1, 0.5, 1.0]))
def test_models_held_against_the_bound(seed, scale):
    """Every perturbed sink head, at the error it has where the theorem needs it (a
    rational just above), has BOS mass at least the bound at every item."""
    model = _perturbed_sink(seed, scale)
    needs = THEOREM.instantiate(TASK, "1/20").hypothesis
    eps = Fraction(errors_at(model, needs)).limit_denominator(10**12) + Fraction(1, 10**12)
    check = THEOREM.instantiate(TASK, eps).check(model)
    assert check.holds, check.violations


@pytest.mark.parametrize("target", [(0,), (0, 0)])
def test_the_bound_is_tight(target):
    """``least_sink`` (SLSQP from the sink head) reaches the bound within 1e-6: the model
    is verified by the trusted checker (error <= 1/20 on the family, BOS weight at the
    target), so the least BOS mass is known to that precision."""
    from sinkproof.search.leastsink import least_sink, sink_starts
    from sinkproof.search.verify import verify_witness

    task = sp.TriggerTask(p=1, T=2)
    found = least_sink(task, 0.05, target, starts=sink_starts(task, 0.05, (1.0,)),
                       maxiter=200)
    bound = THEOREM.instantiate(task, "1/20").bound_at(target, len(target))
    report = verify_witness(found.model(task), "1/20", found.bos * (1 + 1e-9),
                            where=[(target, len(target))])
    assert report.verified
    assert float(bound.bound) <= found.bos < float(bound.bound) + 1e-6


def test_the_homogeneous_claim_is_proved_by_it():
    outcome = sp.check("examples/claims/learned_values_homogeneous.toml", search=False)
    assert outcome.status == "proved" and outcome.by == "theorem8"
    assert outcome.bound == pytest.approx(0.9)
    onehot = sp.check("examples/claims/learned_values_homogeneous_onehot.toml",
                      search=False, bnb=False)
    assert onehot.status == "open"  # no tie: the theorem says nothing there
