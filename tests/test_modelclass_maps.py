"""Model classes carry the attention map; theorem hypotheses match maps by property."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.attention import MAPS
from sinkproof.constructions import softmax_score_matrix
from sinkproof.modelclass import ModelClass
from sinkproof.theorems import THEOREMS

ON_SIMPLEX = [n for n, m in MAPS.items() if m.properties.on_simplex]


def test_the_simplex_class_is_every_map_on_the_simplex():
    assert ON_SIMPLEX == ["softmax", "sparsemax", "entmax15"]
    simplex = ModelClass("simplex", values="fixed")
    assert simplex.maps == tuple(ON_SIMPLEX) and simplex.attention_map is None
    assert ModelClass("sparsemax").attention_map is MAPS["sparsemax"]
    for name in MAPS:
        inside = ModelClass(name, values="fixed").is_subclass_of(simplex)
        assert inside == MAPS[name].properties.on_simplex, name
    assert not simplex.is_subclass_of(ModelClass("softmax"))
    assert ModelClass.from_dict(simplex.to_dict()) == simplex
    assert "on-simplex" in str(simplex)


@pytest.mark.parametrize("name", list(MAPS))
def test_theorems_3_and_7_apply_by_property(name):
    on = MAPS[name].properties.on_simplex
    assert THEOREMS["theorem3"].applies_to(ModelClass(name, values="fixed"))[0] == on
    assert THEOREMS["theorem7"].applies_to(ModelClass(name, heads=3, values="fixed"))[0] == on
    ok, why = THEOREMS["theorem1"].applies_to(ModelClass(name))
    assert ok == (name == "softmax")  # its constants are stated for softmax only
    if not on:
        assert any("kind" in r for r in THEOREMS["theorem3"].applies_to(ModelClass(name))[1])


@settings(max_examples=15)
@given(kind=st.sampled_from(ON_SIMPLEX), L=st.floats(0.5, 8.0), seed=st.integers(0, 2**31))
def test_theorem3_holds_on_near_solutions_of_every_simplex_map(kind, L, seed):
    """An accurate-ish head of each simplex map (Theorem 5's scores, perturbed) meets the
    Theorem 3 bound at its own error level."""
    task = sp.TriggerTask(p=2, T=3)
    rng = np.random.default_rng(seed)
    A = softmax_score_matrix(task, L) + 0.05 * rng.standard_normal((task.D, task.D))
    model = sp.AttentionModel(task, kind, A)
    eps = sp.evaluate(model).max_error
    bound = THEOREMS["theorem3"].instantiate(task, eps)
    assert bound.model_class.contains(model)
    check = bound.check(model)
    assert check.applicable  # the hypothesis is met: the bound is put to the test
    assert check.holds, check


def test_a_model_off_the_simplex_is_refused_by_the_bound():
    task = sp.TriggerTask(p=1, T=2)
    model = sp.AttentionModel(task, "softmax1", softmax_score_matrix(task, 2.0))
    with pytest.raises(ValueError, match="not in the theorem's class"):
        THEOREMS["theorem3"].instantiate(task, 0.1).check(model)


def test_sparsemax_reaches_zero_error_exactly_with_a_sink_at_finite_norm():
    """Theorem 5's scores at L = 1 under sparsemax, decided in exact rationals with the
    checker's weights: zero error at every position of S_T and BOS weight exactly 1 at
    every non-trigger position t >= 1 (a sink at ||A||_2 = golden ratio)."""
    from fractions import Fraction

    from sinkproof.checker.maps import exact_weights

    task = sp.TriggerTask(p=2, T=4)
    A = [[Fraction(int(x)) for x in row] for row in softmax_score_matrix(task, 1.0)]
    values = [task.token_features_exact(c)[: task.p] for c in range(task.n_tokens)]

    def phi(code, t):
        return list(task.token_features_exact(code)) + list(task.position_features_exact(t))

    for seq in task.sequences():
        codes = [task.bos_code, *(int(c) for c in task.encode(seq))]
        for t in range(len(codes)):
            q = phi(codes[t], t)
            Aq = [sum((a * x for a, x in zip(col, q)), Fraction(0)) for col in zip(*A)]
            s = [sum((a * x for a, x in zip(Aq, phi(codes[j], j))), Fraction(0))
                 for j in range(t + 1)]
            w = exact_weights("sparsemax", s, t)
            out = [sum((w[j] * values[codes[j]][i] for j in range(t + 1)), Fraction(0))
                   for i in range(task.p)]
            assert tuple(out) == task.exact_prefix_target(codes[1 : t + 1]), (seq, t)
            if t >= 1 and codes[t] != task.trig_code:
                assert w[0] == 1


@pytest.mark.parametrize("kind", ON_SIMPLEX)
def test_theorem3_with_learned_values_takes_a_model_of_any_simplex_map(kind):
    task = sp.TriggerTask(p=2, T=3)
    rng = np.random.default_rng(7)
    U = np.zeros((task.p, task.p + 3))
    U[:, : task.p] = np.eye(task.p) + 0.01 * rng.standard_normal((task.p, task.p))
    model = sp.AttentionModel(task, kind, softmax_score_matrix(task, 6.0), U)
    eps = sp.evaluate(model).max_error
    check = THEOREMS["theorem3"].instantiate(task, eps, values="learned", model=model).check(model)
    assert check.applicable and check.holds
