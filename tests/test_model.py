"""The attention models of docs/theory.md section 2."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sinkproof as sp
from tests._core_strategies import models_of, sequences_of, small_tasks


@st.composite
def model_and_sequence(draw, kind=None):
    task = draw(small_tasks())
    return draw(models_of(task, kind=kind)), draw(sequences_of(task))


@given(model_and_sequence(kind="softmax"))
def test_softmax_weights_on_the_simplex_and_causal(ms):
    model, seq = ms
    _, w = model.forward(seq)
    assert np.all(w >= 0)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, atol=1e-12)
    assert not np.any(np.triu(w, k=1))


@given(model_and_sequence(kind="relu"))
def test_relu_weights_nonnegative_and_causal(ms):
    model, seq = ms
    _, w = model.forward(seq)
    assert np.all(w >= 0)
    assert not np.any(np.triu(w, k=1))


@given(model_and_sequence(), st.data())
def test_output_at_t_ignores_what_follows(ms, data):
    model, seq = ms
    t = data.draw(st.integers(1, len(seq)))
    out_full, w_full = model.forward(seq)
    out_pre, w_pre = model.forward(seq[:t])
    np.testing.assert_allclose(out_full[: t + 1], out_pre, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w_full[:, : t + 1, : t + 1], w_pre, rtol=1e-12, atol=1e-12)


@given(model_and_sequence(kind="softmax"))
def test_log_nonbos_matches_one_minus_bos_where_resolvable(ms):
    model, seq = ms
    bos = model.bos_mass(seq)[:, 1:]
    lnb = model.log_nonbos(seq)[:, 1:]
    ok = bos < 0.5  # 1 - α0 is well resolved here
    np.testing.assert_allclose(np.exp(lnb[ok]), 1 - bos[ok], rtol=1e-10)
    assert np.all(lnb <= 1e-12)


def test_log_nonbos_stays_finite_and_positive_mass_with_huge_logits():
    task = sp.TriggerTask(p=2, T=5)
    for L in (50.0, 300.0, 800.0, 5000.0):
        model = sp.constructions.softmax_solution(task, L)
        seq = [0, 1, 2, 3, 0]
        bos = model.bos_mass(seq)
        lnb = model.log_nonbos(seq)[0, 1:]
        assert np.all(np.isfinite(lnb))
        t = np.arange(1, 6)
        np.testing.assert_allclose(lnb, np.log(t) - L - np.log1p(t * np.exp(-L)), rtol=1e-12)
        assert np.all(np.isfinite(bos))
        assert np.all(bos[0, 1:] == 1.0)  # float64 cannot see 1 - α0; the log domain can


def test_parameters_are_copied_and_read_only():
    task = sp.TriggerTask(p=1, T=2)
    A = np.zeros((task.D, task.D))
    model = sp.AttentionModel(task, "softmax", A=A)
    A[0, 0] = 5.0
    assert model.A[0, 0, 0] == 0.0 and model.A.shape == (1, task.D, task.D)
    assert model.U.shape == (1, 1, 4) and model.values == "fixed"
    with pytest.raises(ValueError):
        model.A[0, 0, 0] = 1.0


def test_model_dict_round_trip():
    task = sp.TriggerTask(p=2, T=3, positions="onehot")
    rng = np.random.default_rng(0)
    m = sp.AttentionModel(task, "relu", rng.standard_normal((2, task.D, task.D)),
                          rng.standard_normal((2, 2, 5)))
    m2 = sp.AttentionModel.from_dict(m.to_dict())
    np.testing.assert_array_equal(m.A, m2.A)
    np.testing.assert_array_equal(m.U, m2.U)
    assert m2.values == "learned" and m2.kind == "relu"


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(A=np.zeros((3, 3))), ValueError, r"shape \(H, 7, 7\)"),
        (dict(A=np.zeros((2, 7, 7)), U=np.zeros((1, 2, 5))), ValueError, "2 heads but U has 1"),
        (dict(A=np.full((7, 7), np.inf)), ValueError, "non-finite"),
        (dict(A=np.zeros((7, 7)), U=np.zeros((2, 4))), ValueError, "U must have shape"),
        (dict(A=np.zeros((7, 7)), kind="linear"), ValueError, "unknown attention kind"),
        (dict(A=None), TypeError, "A .* is required"),
        (dict(A=np.zeros((0, 7, 7))), ValueError, "at least one head"),
        (dict(A=np.zeros((7, 7), dtype=complex)), TypeError, "real numeric"),
    ],
)
def test_bad_model_arguments(kwargs, exc, match):
    task = sp.TriggerTask(p=2, T=3)
    kwargs.setdefault("kind", "softmax")
    with pytest.raises(exc, match=match):
        sp.AttentionModel(task, **kwargs)


def test_model_needs_a_task():
    with pytest.raises(TypeError, match="needs a task"):
        sp.AttentionModel("task", "softmax", A=np.zeros((7, 7)))
