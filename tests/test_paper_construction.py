"""(P3): the length-normalised ReLU construction, in floats, exactly and symbolically, one
layer and inside a residual stack; and the exact and symbolic checks reject broken ones."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import sinkproof as sp
from sinkproof.constructions import paper_relu_solution, paper_relu_weights
from sinkproof.symbolic import GROUPS, verify_paper_relu_symbolic, verify_stack_exact
from sinkproof.tasks import PaperTask

FINITE = [PaperTask(n=5, L=5, content=[[0.5, -1.0], [1.0, 0.0], [0.1, 0.3]]),
          PaperTask(n=4, L=5, content="grid", grid=3)]
SHAPES = [(1, 1), (2, 2), pytest.param(1, 2, marks=pytest.mark.slow),
          pytest.param(3, 2, marks=pytest.mark.slow)]


@pytest.mark.parametrize(("layers", "heads"), SHAPES)
def test_float_construction_solves_the_task(layers, heads):
    for task in (FINITE[0], PaperTask(n=16, L=16)):
        model = paper_relu_solution(task, layers=layers, heads=heads)
        assert model.kind == "relu_length" and model.residual == (layers > 1)
        ev = sp.evaluate(model, samples=200, seed=1) if not task.finite else sp.evaluate(model)
        assert ev.max_error < 1e-14
        assert ev.bos_nontrigger.max.max() == 0 and ev.bos_trigger.max.max() == 0
        # row j weights every non-BOS key by 1/j, every other row is 0
        x = task.sample(1, seed=0, trigger_at=task.L - 2)[0]
        w = model.forward(x)[1][0, 0]
        j = task.L - 2
        np.testing.assert_allclose(w[j, 1 : j + 1], 1 / j, rtol=1e-15)
        assert not np.delete(w, j, axis=0).any() and w[j, 0] == 0


@pytest.mark.parametrize("task", FINITE, ids=repr)
@pytest.mark.parametrize(("layers", "heads"), SHAPES)
def test_construction_is_exact_on_finite_content(task, layers, heads):
    check = verify_stack_exact(paper_relu_solution(task, layers=layers, heads=heads))
    assert check.zero_error and check.zero_bos
    assert check.max_error_sq == Fraction(0) and check.n_sequences == task.n_sequences


@pytest.mark.parametrize(("layers", "heads"), SHAPES)
@pytest.mark.parametrize("n", [4, 16])
def test_construction_holds_symbolically_in_length_and_content(n, layers, heads):
    result = verify_paper_relu_symbolic(paper_relu_solution(PaperTask(n=n, L=8), layers, heads))
    assert result.holds, result.failures
    assert result.residual == (layers > 1)
    assert {i.group for i in result.identities} == set(GROUPS)


def _broken(task, how):
    W = paper_relu_weights(task, layers=2 if how == "late" else 1, heads=1)
    kind = "relu_length"
    if how == "no_bias":  # keys score only on the trigger coordinate: content is dropped
        W["W_K"][0, 0, 0, task.bias_index] = 0.0
    elif how == "raw_relu":  # weights 1 instead of 1/j
        kind = "relu"
    elif how == "content_score":  # a content coordinate leaks into the key
        W["W_K"][0, 0, 0, 2] = 1.0
    elif how == "bos_key":  # BOS key scores 1: weight on BOS
        W["W_K"][0, 0, 0, 0] = 1.0
    elif how == "late":  # a later layer repeats the first: the trigger row gets 2 means
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            W[name][1] = W[name][0]
    return sp.paper_model(task, kind, **W)


@pytest.mark.parametrize(("how", "group"), [
    ("no_bias", "trigger"), ("raw_relu", "trigger"), ("content_score", "weights_uniform"),
    ("bos_key", "bos_weights_zero"), ("late", "later_layers_inactive"),
])
def test_broken_constructions_are_rejected_exactly_and_symbolically(how, group):
    task = FINITE[0]
    model = _broken(task, how)
    exact = verify_stack_exact(model)
    assert not (exact.zero_error and exact.zero_bos)
    sym = verify_paper_relu_symbolic(model)
    assert not sym.holds and not sym.group(group)
    assert sym.failures


def test_non_residual_stack_of_two_layers_fails():
    task = FINITE[0]
    model = sp.paper_model(task, "relu_length", residual=False,
                           **paper_relu_weights(task, layers=2))
    assert not verify_stack_exact(model).zero_error
    assert not verify_paper_relu_symbolic(model).holds


def test_exact_checks_refuse_what_they_cannot_decide():
    task = FINITE[0]
    soft = sp.paper_model(task, "softmax", **paper_relu_weights(task))
    with pytest.raises(ValueError, match="relu, relu_length"):
        verify_stack_exact(soft)
    with pytest.raises(ValueError, match="finite content set"):
        verify_stack_exact(paper_relu_solution(PaperTask(n=5, L=5)))
    with pytest.raises(TypeError, match="PaperTask"):
        paper_relu_solution(sp.TriggerTask(2, 3))


def test_the_symbolic_check_is_sufficient_not_necessary():
    # a later layer with identity values but zero scores attends nowhere: the stack is
    # still exact, but the symbolic check's hypothesis (a zero output map) fails, so it
    # says "not established" rather than proving anything false
    task = FINITE[0]
    W = paper_relu_weights(task, layers=2)
    W["W_V"][1, 0] = np.eye(task.n)
    W["W_O"][1] = np.eye(task.n)
    model = sp.paper_model(task, "relu_length", **W)
    assert verify_stack_exact(model).zero_error
    sym = verify_paper_relu_symbolic(model)
    assert not sym.holds and [i.group for i in sym.failures] == ["later_layers_inactive"]


def test_the_symbolic_stack_check_refuses_by_capability():
    from sinkproof.errors import CapabilityError
    from sinkproof.stack import from_attention_model
    from sinkproof.symbolic import verify_stack_relu_symbolic

    model = from_attention_model(sp.constructions.relu_solution(sp.TriggerTask(p=1, T=3)))
    with pytest.raises(CapabilityError, match="positional features"):
        verify_stack_relu_symbolic(model)
