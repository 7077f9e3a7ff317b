"""The pytest helpers pass on passing cases and fail with messages that locate the failure."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof import strategies as sps
from sinkproof import theorems
from sinkproof.constructions import relu_solution, softmax_score_matrix, softmax_solution
from sinkproof.testing import (
    assert_certificate_verifies,
    assert_has_sink,
    assert_no_sink,
    assert_obeys,
    assert_solves,
    show_sequence,
)

TASK = sp.TriggerTask(p=2, T=4)
RELU = relu_solution(TASK)
SOFT = softmax_solution(TASK, 3.0)


def brute_force_worst(model, sequences):
    """The largest error and where it occurs, by a plain per-sequence loop."""
    best = (-1.0, None, None)
    for seq in sequences:
        out, _ = model.forward(seq)
        err = np.linalg.norm(out - model.task.targets(seq), axis=1)
        t = int(np.argmax(err))
        if err[t] > best[0]:
            best = (float(err[t]), tuple(seq[:t]), t)
    return best


def test_show_sequence_names_the_trigger():
    assert show_sequence((0, 3, sp.TRIG)) == "[0, 3, TRIG]"


def test_assert_solves_passes_on_the_relu_construction_and_returns_the_evaluation():
    ev = assert_solves(RELU, eps=1e-12)
    assert isinstance(ev, sp.Evaluation) and ev.max_error == 0.0


def test_assert_solves_failure_names_worst_sequence_position_target_and_output():
    err, prefix, t = brute_force_worst(SOFT, TASK.sequences())
    with pytest.raises(AssertionError) as info:
        assert_solves(SOFT, eps=1e-3)
    msg = str(info.value)
    assert f"error {err:.6g}" in msg
    # the same worst place as a plain loop in the same enumeration order
    assert f"at position t={t} of {show_sequence(prefix)}" in msg
    out, _ = SOFT.forward(prefix)
    assert np.array2string(out[t], precision=6, separator=", ") in msg
    assert "target y_t = [0., 0.]" in msg
    assert "every sequence of the family S_T (653 sequences)" in msg


def test_assert_solves_on_given_sequences_reports_the_trigger_target():
    seqs = [(0, 1, sp.TRIG), (2, 2)]
    err, prefix, t = brute_force_worst(SOFT, seqs)
    with pytest.raises(AssertionError, match=r"the given sequences") as info:
        assert_solves(SOFT, eps=err / 2, sequences=seqs)
    assert f"t={t} of {show_sequence(prefix)}" in str(info.value)
    assert_solves(SOFT, eps=err, sequences=seqs)


def test_assert_has_sink_works_below_float64_resolution_of_alpha0():
    model = softmax_solution(TASK, 80.0)
    # 1 - α_0 = t / (e^L + t) at a content position t; largest at t = T = 4
    worst = 4 / (math.exp(80.0) + 4)
    assert sp.evaluate(model).bos_nontrigger.min[0] == 1.0  # invisible in float64 α_0
    assert_has_sink(model, delta=1.01 * worst)
    with pytest.raises(AssertionError) as info:
        assert_has_sink(model, delta=0.99 * worst)
    msg = str(info.value)
    assert "no head has a sink at level" in msg
    assert f"1 - BOS mass = {worst:.6g} > delta" in msg
    assert "at t=4 of [" in msg


def test_assert_no_sink_names_the_heaviest_bos_position():
    assert_no_sink(RELU, max_bos_mass=0.0)
    with pytest.raises(AssertionError) as info:
        assert_no_sink(SOFT, max_bos_mass=0.5)
    msg = str(info.value)
    # BOS mass e^L / (e^L + t) is largest at t = 1
    assert f"BOS mass {math.exp(3) / (math.exp(3) + 1):.6g} at t=1 of [" in msg


def test_where_selects_trigger_positions():
    # at a trigger the construction puts e^{-L}/(e^{-L} + #content) on BOS
    assert_no_sink(SOFT, max_bos_mass=0.5, where="trigger")
    with pytest.raises(AssertionError, match="trigger position"):
        assert_has_sink(SOFT, delta=0.1, where="trigger")
    with pytest.raises(AssertionError, match=r"t=1 of \[TRIG\]"):
        assert_no_sink(SOFT, max_bos_mass=0.3, where="trigger")  # t=1: no content, α_0 = 1/2


def test_head_option_picks_one_head_of_several():
    A = np.stack([softmax_score_matrix(TASK, 40.0), np.zeros((TASK.D, TASK.D))])
    model = sp.AttentionModel(TASK, "softmax", A)
    assert_has_sink(model, delta=1e-12)  # some head (head 0) has it
    assert_has_sink(model, delta=1e-12, head=0)
    with pytest.raises(AssertionError, match="head 1 has no sink at level"):
        assert_has_sink(model, delta=1e-12, head=1)
    assert_no_sink(model, max_bos_mass=0.5, head=1)
    with pytest.raises(AssertionError, match="head 0: BOS mass"):
        assert_no_sink(model, max_bos_mass=0.5)


def test_relu_measure_is_the_bos_share():
    A = np.zeros((TASK.D, TASK.D))
    A[TASK.p, TASK.p + 2] = 5.0  # content query -> BOS key only
    model = sp.AttentionModel(TASK, "relu", A)
    assert_has_sink(model, delta=0.0)  # all weight of content queries on BOS
    with pytest.raises(AssertionError, match="BOS share 1 at t=1"):
        assert_no_sink(model, max_bos_mass=0.9)


def test_bad_input_raises_clear_errors():
    with pytest.raises(TypeError, match="model must be an AttentionModel"):
        assert_solves("model", 0.1)
    with pytest.raises(ValueError, match="eps must be >= 0"):
        assert_solves(RELU, -1.0)
    with pytest.raises(ValueError, match="head 3 does not exist"):
        assert_has_sink(RELU, 0.1, head=3)
    with pytest.raises(ValueError, match="unknown where"):
        assert_no_sink(RELU, where="everywhere")
    with pytest.raises(ValueError, match="sequences is empty"):
        assert_no_sink(RELU, sequences=[])
    with pytest.raises(TypeError, match="certificate must be a path"):
        assert_certificate_verifies(42)


def test_malformed_certificate_fails_the_assertion_with_the_checker_reason(tmp_path):
    with pytest.raises(AssertionError, match="certificate is malformed: format"):
        assert_certificate_verifies({"format": "something-else"})
    bad = tmp_path / "cert.json"
    bad.write_text("{not json")
    with pytest.raises(AssertionError, match="is malformed: .*not valid JSON"):
        assert_certificate_verifies(bad)


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_assertions_agree_with_evaluate_on_random_models(data):
    task = data.draw(sps.tasks(max_p=2, max_T=3))
    model = data.draw(sps.models(task, kind="softmax", heads=(1, 2)))
    ev = assert_solves(model, eps=sp.evaluate(model).max_error)
    if ev.max_error > 0:
        with pytest.raises(AssertionError):
            assert_solves(model, eps=ev.max_error * (1 - 1e-9))
    delta = 0.3
    sink_somewhere = bool(np.any(ev.has_sink(delta)))
    try:
        assert_has_sink(model, delta)
        passed = True
    except AssertionError:
        passed = False
    assert passed == sink_somewhere


def test_assert_certificate_verifies_passes_on_a_certificate_and_fails_on_a_tampered_one(
        tmp_path):
    from sinkproof import convex

    cert = convex.family_certificate(sp.TriggerTask(p=1, T=2), eps="1/100").to_dict()
    path = tmp_path / "cert.json"
    path.write_text(json.dumps(cert))
    assert assert_certificate_verifies(cert).ok
    assert assert_certificate_verifies(path).ok
    bounded = next(s for s in cert["data"]["situations"] if "d" in s)
    bounded["d"] = "2"  # claim the hull twice as far from 0 as it is
    with pytest.raises(AssertionError, match=r"does not verify \(hull-family\): first failing"):
        assert_certificate_verifies(cert)


def _false_bound(task):
    """A made-up 'theorem': BOS mass >= 1 - 1e-9 at the end of X^0_3 (false for L = 8)."""
    import sympy

    from sinkproof.theorems.instance import BosBound, InstantiatedBound

    seq = (0, 0, 0)
    item = BosBound(((seq, 3),), 1 - sympy.Rational(1, 10**9), ((seq, 0), (seq, 3)))
    real = theorems.theorem(1).instantiate(task, eps="1/100")
    return InstantiatedBound("made-up", task, sympy.Rational(1, 100), real.model_class,
                             (item,), ())


def test_assert_obeys_passes_on_a_proved_bound_and_names_a_violation():
    task = sp.TriggerTask(p=1, T=3)
    model = softmax_solution(task, 8.0)
    check = assert_obeys(model, theorems.theorem(1).instantiate(task, eps="1/100"))
    assert check.holds and len(check.applicable) == 6
    with pytest.raises(AssertionError) as info:
        assert_obeys(model, _false_bound(task))
    msg = str(info.value)
    assert "model violates made-up at 1 of 1 items" in msg
    # 1 - α_0 at t=3 of X^0_3 is 3 / (e^8 + 3)
    assert f"measured 1 - BOS mass {3 / (math.exp(8) + 3):.6g} > allowed 1e-09" in msg
    with pytest.raises(TypeError, match="instantiated theorem"):
        assert_obeys(model, 0.99)


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_accurate_softmax_heads_obey_theorem_1(data):
    task = data.draw(sps.tasks(max_p=2, max_T=3, content="signed"))
    model = data.draw(sps.near_solutions(task, kind="softmax", noise=0.05))
    assert_obeys(model, theorems.theorem(1).instantiate(task, eps="1/20"))


# ------------------------------------------------ exact thresholds, a model that is silent
def _dead_relu(task: sp.TriggerTask) -> sp.AttentionModel:
    """Every score ``-(Σ x_t)(Σ x_j) < 0``: the ReLU head attends nowhere, output 0."""
    return sp.AttentionModel(task, "relu", -np.ones((1, task.D, task.D)))


def test_a_model_that_outputs_nothing_is_not_passed_as_sink_free():
    dead = _dead_relu(TASK)
    assert sp.evaluate(dead).max_error == pytest.approx(1.0)  # the size of the targets
    with pytest.raises(AssertionError, match="model outputs nothing: f_t = 0 at every "
                                             "position.*allow_silent"):
        assert_no_sink(dead)
    assert_no_sink(dead, allow_silent=True)  # asked for: the BOS share is 0 everywhere
    assert_no_sink(RELU, max_bos_mass=0)  # the construction outputs 0 before the trigger only


@pytest.mark.parametrize("eps", [Fraction(1, 20), "1/20", Decimal("0.05"), "0.05", 0.05])
def test_thresholds_are_read_exactly_in_every_form(eps):
    model = softmax_solution(TASK, 3.0)
    err = sp.evaluate(model).max_error
    assert_solves(model, eps=eps) if err <= 0.05 else None
    assert_solves(RELU, eps=eps)
    assert_no_sink(RELU, max_bos_mass=eps)
    assert_has_sink(softmax_solution(TASK, 40.0), delta=eps)


def test_the_error_is_compared_with_the_exact_threshold():
    err = sp.evaluate(SOFT).max_error
    assert_solves(SOFT, eps=Fraction(err))  # exactly the measured float: passes
    just_below = Fraction(err) * (1 - Fraction(1, 10**30))  # below the float, above its rounding
    with pytest.raises(AssertionError, match="does not solve the task"):
        assert_solves(SOFT, eps=just_below)


@pytest.mark.parametrize("call, message", [
    (lambda: assert_no_sink(RELU, max_bos_mass="3/2"), r"max_bos_mass must be in \[0, 1\]"),
    (lambda: assert_no_sink(RELU, max_bos_mass=-0.1), r"max_bos_mass must be in \[0, 1\]"),
    (lambda: assert_has_sink(RELU, delta=2), r"delta must be in \[0, 1\]"),
    (lambda: assert_solves(RELU, eps="x"), "eps must be a number such as 0.05 or 1/20"),
    (lambda: assert_solves(RELU, eps=-1), "eps must be >= 0"),
    (lambda: assert_obeys(RELU, None, rtol=2), r"rtol must be in \[0, 1\]"),
])
def test_meaningless_thresholds_are_one_line_value_errors(call, message):
    with pytest.raises(ValueError, match=message) as info:
        call()
    assert "\n" not in str(info.value)


def test_every_assertion_helper_hides_its_own_frame_from_pytest():
    """A failing assertion points at the test's line, not at sinkproof.testing."""
    import sinkproof.testing as testing

    helpers = [getattr(testing, n) for n in dir(testing) if n.startswith("assert_")]
    assert len(helpers) >= 5
    for fn in helpers:
        assert "__tracebackhide__" in fn.__code__.co_varnames, fn.__name__
