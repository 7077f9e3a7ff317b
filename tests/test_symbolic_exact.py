"""Exact rational evaluation and the symbolic proof of Theorem 4."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof import strategies as sps
from sinkproof.constructions import feature_index, relu_solution, softmax_solution
from sinkproof.symbolic import (
    ExactModel,
    exact_check,
    exact_relu_solution,
    verify_relu_symbolic,
    verify_theorem4,
)

FAST = settings(max_examples=20, deadline=None)


# ------------------------------------------------------------------ Theorem 4, symbolically
@pytest.mark.parametrize("p", [1, 2, 3])
def test_theorem4_holds_for_every_length_symbolically(p):
    v = verify_theorem4(p)
    assert v.holds
    assert v.bos_weights_zero and v.nontrigger and v.trigger and v.multi_trigger
    assert v.position0 and v.weights_uniform
    assert not v.failures
    # the trigger identity is the running mean 1/(m+1) * S with t = m + 2
    trig = [i for i in v.identities if i.group == "trigger" and "m+2" in i.case]
    m = sympy.Symbol("m", integer=True, nonnegative=True)
    assert trig and all(sympy.simplify(i.lhs[0] * (m + 1)) == sympy.Symbol("S1", real=True)
                        for i in trig)


def _construction_A(p):
    return exact_relu_solution(sp.TriggerTask(p, 1)).A[0]


def test_symbolic_check_detects_a_bos_weight():
    A = _construction_A(2).copy()
    task = sp.TriggerTask(2, 1)
    A[feature_index(task, "ratio"), feature_index(task, "is_bos")] = Fraction(1)
    v = verify_relu_symbolic(A.tolist())
    assert not v.holds and not v.bos_weights_zero
    assert any(i.group == "bos_weights_zero" for i in v.failures)


def test_symbolic_check_detects_a_wrong_scale():
    A = _construction_A(2) * 2
    v = verify_relu_symbolic(A.tolist())
    assert not v.trigger and not v.holds
    assert v.bos_weights_zero and v.nontrigger  # the scale only breaks the average


def test_symbolic_check_detects_key_position_dependence():
    A = _construction_A(2).copy()
    task = sp.TriggerTask(2, 1)
    A[feature_index(task, "ratio"), feature_index(task, "ratio")] = Fraction(1, 2)
    v = verify_relu_symbolic(A.tolist())
    assert not v.weights_uniform and not v.holds


def test_symbolic_check_detects_learned_value_errors():
    U = [[1, 0, 0, 0, 0], [0, 1, 0, 1, 0]]  # the trigger carries value e_2
    v = verify_relu_symbolic(_construction_A(2).tolist(), U)
    assert not v.trigger and v.nontrigger


def test_symbolic_check_rejects_bad_shapes():
    with pytest.raises(ValueError, match="p\\+5"):
        verify_relu_symbolic([[0, 0], [0, 0]])
    with pytest.raises(ValueError, match="U must be"):
        verify_relu_symbolic(_construction_A(2).tolist(), [[1, 0]])


def test_verification_prints_compactly():
    v = verify_theorem4(1)
    assert repr(v).startswith("Theorem4Verification(p=1, holds=True")
    assert "| group |" in v._repr_markdown_()


# ------------------------------------------------------------------ exact construction
@pytest.mark.parametrize("positions", ["inverse", "onehot"])
def test_exact_construction_matches_the_float_one(positions):
    task = sp.TriggerTask(2, 5, positions=positions)
    exact = np.array(exact_relu_solution(task).A[0], dtype=float)
    assert np.allclose(exact, relu_solution(task).A[0], rtol=0, atol=1e-15)


@pytest.mark.parametrize("task", [
    sp.TriggerTask(2, 4),
    sp.TriggerTask(1, 6),
    sp.TriggerTask(2, 4, positions="onehot"),
    sp.TriggerTask(1, 4, triggers="multi"),
    sp.TriggerTask(2, 3, content="gaussian", k=3, seed=1),
])
def test_relu_construction_is_exact_on_all_of_S_T(task):
    check = exact_check(exact_relu_solution(task))
    assert check.exact and check.holds
    assert check.max_error_sq == 0 and check.max_bos_weight == 0
    # every distinct prefix once: as many prefixes of depth t as sequences of length t
    assert check.n_prefixes == 1 + task.n_sequences


def test_float_onehot_construction_is_not_exact():
    # 1/3 is no float: the float onehot table rounds r_4, so exact arithmetic sees an error
    task = sp.TriggerTask(1, 4, positions="onehot")
    check = exact_check(relu_solution(task))
    assert check.no_bos_weight and not check.zero_error
    assert 0 < check.max_error_sq < Fraction(1, 10**30)


def test_exact_check_finds_the_error_of_a_perturbed_head():
    task = sp.TriggerTask(2, 3)
    A = exact_relu_solution(task).A[0].copy()
    A[feature_index(task, "is_trigger"), feature_index(task, "is_bos")] = Fraction(1, 7)
    check = exact_check(ExactModel(task, "relu", A))
    assert not check.holds and check.max_bos_weight == Fraction(1, 7)
    assert check.max_error_sq == 0  # BOS has value 0: weight on it costs no error


# ------------------------------------------------------------------ cross-checks with float
@FAST
@given(sps.task_model_sequence(max_p=2, max_T=4, kind="relu", heads=(1, 2)))
def test_exact_relu_forward_matches_float(tms):
    task, model, seq = tms
    exact = ExactModel.from_model(model)
    out, w = model.forward(seq)
    for t, pos in enumerate(exact.forward(seq)):
        f = np.array([float(x) for x in pos.relu_output()])
        assert np.allclose(f, out[t], rtol=1e-9, atol=1e-9)
        bos = [float(row[0]) for row in pos.relu_weights()]
        assert np.allclose(bos, w[:, t, 0], rtol=1e-12, atol=1e-12)
        assert np.allclose([float(y) for y in pos.target], task.targets(seq)[t], atol=1e-15)


@FAST
@given(sps.task_model_sequence(max_p=2, max_T=4, kind="softmax", heads=(1, 2),
                               scale=(3.0, 200.0)))
def test_softmax_enclosures_contain_the_float_values(tms):
    task, model, seq = tms
    exact = ExactModel.from_model(model)
    out, w = model.forward(seq)
    lnb = model.log_nonbos(seq)
    for t, pos in enumerate(exact.forward(seq)):
        enc = pos.enclosure(prec=120)
        for i, iv in enumerate(enc.output):
            assert float(iv.a) - 1e-9 * (1 + abs(out[t, i])) <= out[t, i] \
                <= float(iv.b) + 1e-9 * (1 + abs(out[t, i]))
        for h in range(model.H):
            lo, hi = float(enc.bos_mass[h].a), float(enc.bos_mass[h].b)
            assert lo - 1e-12 <= w[h, t, 0] <= hi + 1e-12
            if t >= 1:
                mid = float(enc.log_nonbos[h].mid)
                assert abs(mid - lnb[h, t]) <= 1e-8 * (1 + abs(mid))


def test_softmax_weights_are_exact_expressions_summing_to_one():
    task = sp.TriggerTask(1, 3)
    pos = ExactModel.from_model(softmax_solution(task, 2.0)).forward((0, 1, sp.TRIG))[3]
    (w,) = pos.softmax_weights()
    assert sympy.simplify(sympy.Add(*w) - 1) == 0
    assert all(isinstance(x, sympy.Expr) for x in w)
    with pytest.raises(ValueError, match="softmax model"):
        pos.relu_output()


def test_softmax_family_check_is_rigorous_not_exact():
    task = sp.TriggerTask(1, 3)
    model = softmax_solution(task, 4.0)
    check = exact_check(model)
    assert not check.exact and not check.holds
    assert check.max_error_upper >= sp.evaluate(model).max_error


@given(st.sampled_from(["1/3", 0.25, Fraction(2, 7), sympy.Rational(5, 3), 3]))
def test_parameters_accept_rational_forms(x):
    task = sp.TriggerTask(1, 2)
    m = ExactModel(task, "relu", np.full((task.D, task.D), x, dtype=object).tolist())
    assert all(isinstance(v, Fraction) for v in m.A.ravel())


def test_bad_parameters_are_rejected_clearly():
    task = sp.TriggerTask(1, 2)
    with pytest.raises(ValueError, match="shape"):
        ExactModel(task, "relu", [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="finite"):
        ExactModel(task, "relu", np.full((task.D, task.D), np.nan))
    with pytest.raises(TypeError, match="a parameter must be a number"):
        ExactModel(task, "relu", np.full((task.D, task.D), 1j, dtype=object))
    with pytest.raises(ValueError, match="a parameter must be a number such as 0.05 or 1/20"):
        ExactModel(task, "relu", np.full((task.D, task.D), "pi", dtype=object))
    with pytest.raises(ValueError, match="attention kind"):
        ExactModel(task, "sigmoid", np.zeros((task.D, task.D)))
    with pytest.raises(TypeError, match="needs a task"):
        ExactModel("task", "relu", np.zeros((6, 6)))
    with pytest.raises(TypeError, match="ExactModel or AttentionModel"):
        exact_check("model")
