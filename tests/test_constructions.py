"""Theorem 4's ReLU head and Theorem 5's softmax head (float checks; exact ones live in
the symbolic layer's tests)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.constructions import relu_solution, softmax_solution
from tests._core_strategies import sequences_of, small_tasks


@given(st.data())
def test_relu_construction_is_exact_on_random_sequences(data):
    task = data.draw(small_tasks(positions=("inverse", "onehot"), triggers=("single", "multi")))
    seq = data.draw(sequences_of(task))
    model = relu_solution(task)
    out, w = model.forward(seq)
    np.testing.assert_allclose(out, task.targets(seq), atol=1e-12)
    assert not w[:, :, 0].any()  # no BOS weight anywhere


def test_relu_construction_norm_is_two():
    assert relu_solution(sp.TriggerTask(p=3, T=7)).norm == pytest.approx(2.0)


def test_relu_construction_needs_positions():
    with pytest.raises(ValueError, match="positional information"):
        relu_solution(sp.TriggerTask(p=2, T=3, positions="none"))


def test_softmax_construction_error_falls_and_sink_grows():
    task = sp.TriggerTask(p=2, T=6)
    errs, sinks = [], []
    for L in (1.0, 2.0, 4.0, 8.0):
        ev = sp.evaluate(softmax_solution(task, L))
        errs.append(ev.max_error)
        sinks.append(ev.bos_nontrigger.min[0])
        # the content-query error is exactly t/(e^L + t) at a homogeneous sequence, t = T
        assert ev.max_error >= task.T / (np.exp(L) + task.T) - 1e-12
        assert ev.max_error <= task.T / (np.exp(L) + task.T) + 2 * np.exp(-L)
    assert errs == sorted(errs, reverse=True) and sinks == sorted(sinks)
    assert softmax_solution(task, 3.0).norm == pytest.approx(3.0 * (1 + 5**0.5) / 2)


def test_softmax_construction_works_in_every_positional_scheme():
    for positions in ("inverse", "onehot", "none"):
        task = sp.TriggerTask(p=1, T=3, positions=positions)
        assert sp.evaluate(softmax_solution(task, 20.0)).max_error < 1e-7


def test_bad_L():
    with pytest.raises(ValueError, match="L must be >= 0"):
        softmax_solution(sp.TriggerTask(p=1, T=2), -1.0)
    with pytest.raises(ValueError, match="finite"):
        softmax_solution(sp.TriggerTask(p=1, T=2), float("nan"))
