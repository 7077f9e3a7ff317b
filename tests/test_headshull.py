"""Several heads with learned values: the heads' hull bound on the total non-BOS mass,
with the cancelling pair (hull through 0, no sink) beside it."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

import sinkproof as sp
from sinkproof.constructions import (
    cancelling_pair_solution,
    paper_pair_solution,
    softmax_score_matrix,
)
from sinkproof.model import fixed_values
from sinkproof.theorems.headshull import head_values, heads_hull_bound

TASK = sp.TriggerTask(p=2, T=3)


def _eps(model: sp.AttentionModel, seq: tuple, t: int) -> Fraction:
    out, _ = model.forward(seq)
    y = TASK.targets(seq)
    err = max(np.linalg.norm(out[0] - y[0]), np.linalg.norm(out[t] - y[t]))
    return Fraction(float(err)) * (1 + Fraction(1, 10**9)) + Fraction(1, 10**300)


def _hull_numeric(points: np.ndarray) -> float:
    """``dist(0, conv points)`` by SLSQP over the simplex (independent of the exact path)."""
    k = points.shape[0]
    res = minimize(lambda lam: float(np.sum((lam @ points) ** 2)), np.full(k, 1.0 / k),
                   jac=lambda lam: 2 * points @ (lam @ points), method="SLSQP",
                   bounds=[(0, 1)] * k,
                   constraints=[{"type": "eq", "fun": lambda lam: lam.sum() - 1}],
                   options={"ftol": 1e-15, "maxiter": 500})
    return float(np.sqrt(res.fun))


def _sinking_pair(L: float, scale: float) -> sp.AttentionModel:
    """Two heads that both sink (Theorem 5's scores), values ``U_fix`` and ``scale·U_fix``."""
    A = np.stack([softmax_score_matrix(TASK, L)] * 2)
    U = np.stack([fixed_values(TASK.p), scale * fixed_values(TASK.p)])
    return sp.AttentionModel(TASK, kind="softmax", A=A, U=U)


def test_the_cancelling_pair_has_the_origin_in_its_hull_and_no_sink() -> None:
    model = cancelling_pair_solution(TASK, 0.05)
    seq = (0, 0, 0)
    got = heads_hull_bound(model, TASK.features(seq), 3, _eps(model, seq, 3))
    assert got.d_squared == 0 and got.allowed_total is None and got.holds
    assert got.measured_total > 1.99  # neither head puts weight on BOS


@pytest.mark.parametrize("scale", [0.5, 1.0, 2.0])
def test_two_sinking_heads_obey_and_nearly_meet_the_bound(scale: float) -> None:
    model = _sinking_pair(8.0, scale)
    for seq, t in [((0,), 1), ((0, 1), 2), ((1, 1, 1), 3)]:
        eps = _eps(model, seq, t)
        got = heads_hull_bound(model, TASK.features(seq), t, eps)
        assert got.d_squared > 0 and got.holds
        assert got.per_head is not None and got.per_head > 0.99
        # the two heads attend alike: the total is within a factor 2·max(1, scale)/min(1, scale)
        assert got.measured_total >= float(got.allowed_total) / (4 * max(scale, 1 / scale))


def test_exact_hull_against_a_numerical_minimum() -> None:
    model = _sinking_pair(3.0, 0.7)
    rows = TASK.features((0, 1, 0))
    vals = head_values(model, rows)
    diffs = np.array([[float(a - b) for a, b in zip(vals[h][k], vals[h][0])]
                      for h in range(2) for k in range(1, 4)])
    got = heads_hull_bound(model, rows, 3, Fraction(1, 10))
    assert float(got.d_squared) ** 0.5 == pytest.approx(_hull_numeric(diffs), abs=1e-6)


def test_the_paper_setting_pair_has_the_origin_in_its_hull() -> None:
    task = sp.PaperTask(n=4, L=5, content=[[-1.0], [1.0]])
    model = paper_pair_solution(task, 0.05)
    x = task.sequence(4, np.array([0, 1, 1, 0]))
    got = heads_hull_bound(model, x, 2, Fraction(1, 20))
    assert got.d_squared == 0 and got.measured_total > 1.99


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), heads=st.integers(1, 3), level=st.floats(0.0, 9.0),
       noise=st.floats(0.0, 0.5))
def test_the_bound_holds_for_any_model(seed: int, heads: int, level: float, noise: float) -> None:
    """Sinking scores plus noise, values ``U_fix`` plus noise per head: the measured total
    never exceeds ``2ε/D_t`` at the model's own error."""
    rng = np.random.default_rng(seed)
    A = np.stack([softmax_score_matrix(TASK, level) + rng.normal(size=(TASK.D, TASK.D))
                  for _ in range(heads)])
    U = np.stack([fixed_values(TASK.p) + noise * rng.normal(size=(TASK.p, TASK.p + 3))
                  for _ in range(heads)])
    model = sp.AttentionModel(TASK, kind="softmax", A=A, U=U)
    k = int(rng.integers(1, 4))
    seq = tuple(int(c) for c in rng.integers(0, TASK.k, size=k))
    got = heads_hull_bound(model, TASK.features(seq), k, _eps(model, seq, k))
    assert got.holds
