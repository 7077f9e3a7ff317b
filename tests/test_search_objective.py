"""The search objectives: JAX gradients against finite differences, values against the core
evaluator and against reference figures of the former hand-derived gradients."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.search.objective import batch_measures, prefix_batch, value_and_grad
from tests._core_strategies import small_tasks

LOSSES = [
    ("mse", {}),
    ("smoothmax", dict(max_error=0.5, temperature=0.1)),
    ("penalty", dict(max_error=0.4, max_bos_mass=0.3, margin=0.05, bos_weight=2.0)),
    ("sink", dict(max_error=0.4, temperature=0.2, error_weight=3.0)),
]


@st.composite
def objective_cases(draw):
    task = draw(small_tasks().filter(lambda t: t.T <= 3))
    kind = draw(st.sampled_from(["softmax", "relu"]))
    H = draw(st.integers(1, 2))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    A = draw(st.sampled_from([0.3, 1.0, 3.0])) * rng.standard_normal((H, task.D, task.D))
    U = rng.standard_normal((H, task.p, task.p + 3)) if draw(st.booleans()) else None
    where = draw(st.sampled_from(["nontrigger", "trigger", "all"]))
    loss, opts = draw(st.sampled_from(LOSSES))
    if kind == "relu" and draw(st.booleans()):
        opts = {**opts, "leak": 0.1}  # the leaky surrogate of the search's first stages
    return task, kind, A, U, where, loss, opts, rng


@pytest.mark.slow  # 2 s of CPU; test_autodiff checks gradients on every map in the default run
@settings(max_examples=examples(10), deadline=None)
@given(objective_cases())
def test_gradient_matches_central_differences(case):
    task, kind, A, U, where, loss, opts, rng = case
    batch = prefix_batch(task, where=where)
    value, dA, dU = value_and_grad(task, kind, A, U, batch, loss=loss, **opts)
    assert np.isfinite(value) and dA.shape == (A.shape[0], task.D, task.D)
    assert dU.shape == (A.shape[0], task.p, task.p + 3)
    Ufull = U if U is not None else np.broadcast_to(sp.fixed_values(task.p),
                                                    (A.shape[0], task.p, task.p + 3)).copy()
    dirA = rng.standard_normal(A.shape)
    dirU = rng.standard_normal(Ufull.shape)
    h = 1e-6

    def f(x):
        return value_and_grad(task, kind, A + x * dirA, Ufull + x * dirU, batch,
                              loss=loss, **opts)[0]

    numeric = (f(h) - f(-h)) / (2 * h)
    analytic = float((dA * dirA).sum() + (dU * dirU).sum())
    scale = max(1.0, abs(analytic), abs(value))
    assert abs(numeric - analytic) <= 2e-5 * scale, (numeric, analytic)


@settings(max_examples=examples(10), deadline=None)
@given(objective_cases())
def test_measures_agree_with_core_evaluator(case):
    task, kind, A, U, _, _, _, _ = case
    model = sp.AttentionModel(task, kind, A, U)
    ev = sp.evaluate(model)
    batch = prefix_batch(task, where="nontrigger")
    assert batch.n_positions == task.n_positions  # multiplicities cover every pair once
    m = batch_measures(task, kind, A, U, batch)
    assert m.max_error == pytest.approx(ev.max_error, rel=1e-9, abs=1e-12)
    if kind == "softmax":
        assert m.max_bos_mass == pytest.approx(float(ev.bos_nontrigger.max.max()), abs=1e-12)
    else:
        assert m.max_bos_mass == pytest.approx(float(ev.bos_nontrigger.max.max()), rel=1e-9)


def test_mse_is_the_mean_over_sequence_positions():
    task = sp.TriggerTask(p=2, T=3)
    rng = np.random.default_rng(1)
    model = sp.AttentionModel(task, "softmax", rng.standard_normal((2, task.D, task.D)),
                              rng.standard_normal((2, 2, 5)))
    errs = []
    for seq in task.sequences():
        out, _ = model.forward(seq)
        errs.extend(((out - task.targets(seq)) ** 2).sum(axis=1))
    value, _, _ = value_and_grad(task, "softmax", model.A, model.U, prefix_batch(task))
    assert value == pytest.approx(np.mean(errs), rel=1e-12)
    seqs = [(0, 1, sp.TRIG), (0, 2), (0, 1)]
    errs = []
    for seq in seqs:
        out, _ = model.forward(seq)
        errs.extend(((out - task.targets(seq)) ** 2).sum(axis=1))
    batch = prefix_batch(task, seqs)
    assert batch.n_positions == len(errs)
    value, _, _ = value_and_grad(task, "softmax", model.A, model.U, batch)
    assert value == pytest.approx(np.mean(errs), rel=1e-12)


@pytest.mark.slow  # 4-5 s of CPU (a JIT per loss); log-domain sums at logits of +-1000 are
def test_large_logits_do_not_overflow():  # also tested in test_numerics, every run
    task = sp.TriggerTask(p=2, T=4)
    model = sp.constructions.softmax_solution(task, L=800.0)
    batch = prefix_batch(task)
    for loss, opts in LOSSES:
        value, dA, dU = value_and_grad(task, "softmax", model.A * 3, None, batch, loss=loss, **opts)
        assert np.isfinite(value) and np.all(np.isfinite(dA)) and np.all(np.isfinite(dU))
    m = batch_measures(task, "softmax", model.A, None, batch)
    # log-odds of BOS is L - log t, exact far beyond float64 resolution of the mass itself
    assert m.max_bos_measure == pytest.approx(800.0, abs=1e-9)


def test_penalty_is_zero_exactly_when_both_conditions_hold_with_margin():
    task = sp.TriggerTask(p=2, T=4)
    model = sp.constructions.relu_solution(task)
    batch = prefix_batch(task)
    value, dA, _ = value_and_grad(task, "relu", model.A, None, batch, loss="penalty",
                                  max_error=0.1, max_bos_mass=0.0)
    assert value == 0.0 and not dA.any()
    value, _, _ = value_and_grad(task, "relu", model.A + 0.5, None, batch, loss="penalty",
                                 max_error=0.1, max_bos_mass=0.0)
    assert value > 0


def test_explicit_where_marks_exactly_the_named_prefixes():
    task = sp.TriggerTask(p=2, T=3)
    batch = prefix_batch(task, where={((0, 1, sp.TRIG), 3), ((2, 2), 1)})
    assert batch.n_constrained == 2
    with pytest.raises(ValueError, match="position"):
        prefix_batch(task, where={((0, 1), 3)})
    with pytest.raises(ValueError, match="where"):
        prefix_batch(task, where="sometimes")
    with pytest.raises(TypeError, match="pairs"):
        prefix_batch(task, where=[(0, 1, 2)])


def test_bad_options_raise_clear_errors():
    task = sp.TriggerTask(p=1, T=2)
    batch = prefix_batch(task)
    A = np.zeros((task.D, task.D))
    with pytest.raises(ValueError, match="max_bos_mass must be > 0"):
        value_and_grad(task, "softmax", A, None, batch, loss="penalty", max_error=0.1,
                       max_bos_mass=0.0)
    with pytest.raises(ValueError, match="needs max_error"):
        value_and_grad(task, "softmax", A, None, batch, loss="penalty")
    with pytest.raises(TypeError, match="unknown objective options"):
        value_and_grad(task, "softmax", A, None, batch, temprature=1.0)
    with pytest.raises(ValueError, match="loss"):
        value_and_grad(task, "softmax", A, None, batch, loss="l1")
    with pytest.raises(ValueError, match="shape"):
        value_and_grad(task, "softmax", A[:2], None, batch)


# (kind, loss, options, heads, learned values, where, value, derivative along the drawn
# direction), produced by the hand-derived numpy gradients this module used before JAX
# (sinkproof 0.1.0, commit 2a0bb84) on p=2, T=3, A = 0.5·N(0, 1), seeds 100 + row; each
# derivative was also confirmed there by a central difference of the value (h = 1e-6,
# agreement to 1e-9 relative), which is independent of any gradient code.
REFERENCE = [
    ("softmax", "mse", {}, 2, True, "nontrigger", 1.988822192429224, 2.249900762001435),
    ("softmax", "smoothmax", dict(max_error=0.5, temperature=0.1), 1, False, "nontrigger",
     4.038446111597807, -0.6583434178890082),
    ("softmax", "penalty", dict(max_error=0.4, max_bos_mass=0.3, margin=0.05, bos_weight=2.0),
     2, True, "nontrigger", 23277.324588498752, -21920.802373427032),
    ("softmax", "sink", dict(max_error=0.4, temperature=0.2, error_weight=3.0), 1, True, "all",
     131178.58565374653, 82810.54556240057),
    ("relu", "mse", {}, 2, True, "nontrigger", 30.358813063825245, -8.270798750473851),
    ("relu", "penalty", dict(max_error=0.4, max_bos_mass=0.0, margin=0.05, bos_weight=2.0,
                             leak=0.1), 1, False, "nontrigger", 40891.552127388066,
     -374356.0330206531),
    ("relu", "penalty", dict(max_error=0.4, max_bos_mass=0.2, margin=0.05, bos_weight=2.0),
     2, True, "trigger", 901101.8444814582, 7151973.900714602),
]


@pytest.mark.parametrize("row", [pytest.param(r, marks=() if r == 0 else pytest.mark.slow)
                                 for r in range(len(REFERENCE))])  # row 0 locally, all in CI
def test_value_and_gradient_match_the_former_implementation(row):
    kind, loss, opts, H, learned, where, value, derivative = REFERENCE[row]
    task = sp.TriggerTask(p=2, T=3)
    rng = np.random.default_rng(100 + row)
    A = 0.5 * rng.standard_normal((H, task.D, task.D))
    U = rng.standard_normal((H, task.p, task.p + 3)) if learned else None
    dirA, dirU = rng.standard_normal(A.shape), rng.standard_normal((H, task.p, task.p + 3))
    v, dA, dU = value_and_grad(task, kind, A, U, prefix_batch(task, where=where), loss=loss,
                               **opts)
    d = float((dA * dirA).sum() + ((dU * dirU).sum() if learned else 0.0))
    assert v == pytest.approx(value, rel=1e-12)
    assert d == pytest.approx(derivative, rel=1e-11)
