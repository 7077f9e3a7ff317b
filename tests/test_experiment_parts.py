"""Unit and property tests of the experiment's parts: optimiser, config, theory checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.constructions import softmax_solution
from sinkproof.experiment import (
    ExperimentConfig,
    History,
    adam,
    hull_distance_lower,
    sink_bound,
    theorem1_check,
    theorem3_check,
)
from sinkproof.experiment.measure import longer_model, longer_sequences
from sinkproof.experiment.theory import _violations, min_norm_point

# ------------------------------------------------------------------ Adam


def _adam_steps(opt, x, grad, n):
    import jax.numpy as jnp
    import optax

    from sinkproof.autodiff import x64

    with x64():
        x = jnp.asarray(x)
        state = opt.init(x)
        for _ in range(n):
            updates, state = opt.update(grad(x), state, x)
            x = optax.apply_updates(x, updates)
        return np.asarray(x)


def test_adam_first_step_is_lr_times_sign():
    # with zero moments, the bias-corrected first step is lr * g / (|g| + eps)
    theta = np.array([1.0, -2.0, 0.5])
    g = np.array([4.0, -0.01, 0.0])
    new = _adam_steps(adam(lr=0.1), theta, lambda x: g, 1)
    np.testing.assert_allclose(new, theta - 0.1 * np.array([1.0, -1.0, 0.0]), atol=1e-6)
    np.testing.assert_array_equal(theta, [1.0, -2.0, 0.5])  # caller's array untouched


def test_adam_minimises_a_quadratic():
    target = np.array([[1.0, -3.0], [0.5, 2.0]])
    x = _adam_steps(adam(lr=0.05), np.zeros((2, 2)), lambda x: 2 * (x - target), 2000)
    np.testing.assert_allclose(x, target, atol=1e-3)


@pytest.mark.parametrize("kwargs", [dict(lr=0.0), dict(beta1=1.0), dict(beta2=-0.1),
                                    dict(eps=0.0)])
def test_adam_rejects_bad_settings(kwargs):
    with pytest.raises(ValueError):
        adam(**kwargs)


# ---------------------------------------------------------------- config


def test_config_presets_and_round_trip():
    default = ExperimentConfig.default()
    assert default.p >= 4 and default.T >= 16 and len(default.seeds) >= 5
    assert set(default.contents) == {"signed", "gaussian"}
    assert set(default.heads) == {1, 4} and set(default.kinds) == {"softmax", "relu"}
    assert default.n_runs == 2 * 2 * 2 * 5
    for cfg in (default, ExperimentConfig.quick(), ExperimentConfig.smoke()):
        assert ExperimentConfig.from_dict(cfg.to_dict()) == cfg


@pytest.mark.parametrize("changes, error", [
    (dict(p=0), ValueError), (dict(T=1.5), TypeError), (dict(longer_T=16), ValueError),
    (dict(contents=("bogus",)), ValueError), (dict(kinds="softmax"), TypeError),
    (dict(heads=()), TypeError), (dict(seeds=(-1,)), ValueError), (dict(lr=-1.0), ValueError),
    (dict(batch_size=4096), ValueError),
])
def test_config_rejects_bad_settings(changes, error):
    with pytest.raises(error):
        ExperimentConfig.default().replace(**changes)


def test_config_from_dict_rejects_unknown_fields():
    with pytest.raises(ValueError, match="unknown experiment settings"):
        ExperimentConfig.from_dict(dict(bogus=1))


# ------------------------------------------------------------ hull distance


def test_hull_distance_known_cases():
    assert hull_distance_lower(np.array([[1.0, 0.0], [0.0, 1.0]])) == pytest.approx(2**-0.5)
    assert hull_distance_lower(np.array([[1.0, 0.0], [-1.0, 0.0]])) == 0.0
    assert hull_distance_lower(np.array([[0.0, 3.0]])) == pytest.approx(3.0)


@given(st.integers(1, 6), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_hull_distance_is_a_lower_bound(n, dim, seed):
    rng = np.random.default_rng(seed)
    pts = rng.normal(size=(n, dim)) + rng.normal(size=dim)
    d = hull_distance_lower(pts)
    assert d >= 0.0
    lam = rng.dirichlet(np.ones(n), size=200)  # random points of the hull
    assert d <= np.linalg.norm(lam @ pts, axis=1).min() + 1e-12
    assert d <= np.linalg.norm(pts, axis=1).min() + 1e-12


def test_sink_bound_formula():
    np.testing.assert_allclose(sink_bound(0.1, 1.0), 0.8)
    assert sink_bound(0.1, 0.0) == -np.inf


def test_violation_test_detects_a_broken_bound():
    # 1 - α_0 = 0.3 but ε = 0.1, d = 1 allows only 0.2: a violation; 0.15 is fine
    flags = _violations(np.log(np.array([0.3, 0.15])), np.array([0.1, 0.1]), np.ones(2))
    assert flags.tolist() == [True, False]
    assert not _violations(np.log(np.array([0.9])), np.array([0.1]), np.zeros(1)).any()


# ------------------------------------------------------------ theory checks

TASK = sp.TriggerTask(p=2, T=5)


def _random_model(seed: int, kind: str = "softmax", heads: int = 1,
                  scale: float = 2.0) -> sp.AttentionModel:
    rng = np.random.default_rng(seed)
    A = rng.normal(0, scale, (heads, TASK.D, TASK.D))
    U = rng.normal(0, 1.0, (heads, TASK.p, TASK.p + 3))
    return sp.AttentionModel(TASK, kind, A, U)


@settings(max_examples=15)
@given(st.integers(0, 2**31 - 1))
def test_random_softmax_heads_never_break_theorems_1_and_3(seed):
    model = _random_model(seed)
    t1 = theorem1_check(model)
    assert t1["applies"] and t1["violations"] == 0 and t1["checked"] == TASK.k * TASK.T
    assert t1["bos_min"] >= t1["bound"] - 1e-12
    seqs = TASK.sample(30, seed=seed % 1000)
    eps = sp.evaluate(model, seqs).max_error
    t3 = theorem3_check(model, seqs, eps)
    assert t3["violations"] == 0
    assert t3["bos_mean"] >= t3["bound_mean"] - 1e-12


def test_theorem1_on_the_softmax_construction_is_tight_enough_to_bite():
    model = softmax_solution(TASK, 12.0).replace(U=sp.fixed_values(TASK.p))
    t1 = theorem1_check(model)
    assert t1["violations"] == 0
    assert 0.9 < t1["bound"] <= t1["bos_min"] < 1.0
    t3 = theorem3_check(model, list(TASK.sequences()), sp.evaluate(model).max_error)
    # positions after the trigger have the zero value v_τ in the hull: no bound there
    assert t3["violations"] == 0 and t3["bound_mean"] > 0.3


def test_theory_checks_decline_models_outside_their_hypotheses():
    for model in (_random_model(0, heads=2), _random_model(0, kind="relu")):
        assert theorem1_check(model)["applies"] is False
        assert theorem3_check(model, [(0,)], 1.0)["applies"] is False


# ---------------------------------------------------------- longer lengths


def test_longer_model_keeps_parameters_and_dimension():
    model = _random_model(3)
    long = longer_model(model, 9)
    assert long.task.T == 9 and long.task.D == model.task.D
    np.testing.assert_array_equal(long.A, model.A)
    seqs = longer_sequences(model.task, 9, 20, seed=1)
    assert all(6 <= len(s) <= 9 for s in seqs)
    # on a sequence both tasks accept, the two models agree
    seq = (0, 1, sp.TRIG)
    np.testing.assert_allclose(long.forward(seq)[0], model.forward(seq)[0])


def test_longer_model_needs_inverse_positions():
    task = sp.TriggerTask(p=2, T=4, positions="onehot")
    model = sp.AttentionModel(task, "relu", np.zeros((task.D, task.D)))
    with pytest.raises(ValueError, match="inverse"):
        longer_model(model, 8)


# ------------------------------------------------------------------ history


def test_sink_step_is_when_the_sink_forms_for_good():
    share = np.array([[0.6, 0.0], [0.1, 0.2], [0.1, 0.6], [0.2, 0.7], [0.3, 0.8]])
    h = History(np.arange(5) * 10, np.zeros(5), share, share)
    assert h.sink_step(0.5) == 20  # head 0 touches 0.6 at step 0 but does not stay
    assert h.sink_step(0.9) is None
    assert h.to_dict()["bos_share"][0] == [0.6, 0.0]


@given(st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_hull_distance_agrees_with_the_exact_symbolic_distance(n, seed):
    from sinkproof.symbolic import hull_distance

    pts = np.random.default_rng(seed).normal(size=(n, 2)).round(3)
    exact = float(hull_distance(pts.tolist()).exact)
    lower = hull_distance_lower(pts)
    assert lower <= exact + 1e-12
    assert lower >= exact - 1e-6  # the float path is a near-tight lower bound


@pytest.mark.parametrize("n, seed", [(3, 220), (3, 410), (4, 480), (5, 140)])
def test_hull_distance_is_tight_where_scipy_1_15_nnls_was_not(n, seed):
    """Instances where the NNLS-based bound of SciPy 1.12-1.15 fell short (0.0 for 0.1275)."""
    from sinkproof.symbolic import hull_distance

    pts = np.random.default_rng(seed).normal(size=(n, 2)).round(3)
    exact = float(hull_distance(pts.tolist()).exact)
    assert exact - 1e-9 <= hull_distance_lower(pts) <= exact + 1e-12


@given(st.integers(1, 8), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_min_norm_point_meets_the_optimality_condition(n, dim, seed):
    """``z`` lies in the hull and ``v_j·z >= ‖z‖²`` for every ``j``: ``z`` is the min-norm point."""
    rng = np.random.default_rng(seed)
    pts = rng.normal(size=(n, dim)) + rng.normal(size=dim)
    before = pts.copy()
    z = min_norm_point(pts)
    np.testing.assert_array_equal(pts, before)  # the input is not mutated
    scale = float(np.abs(pts).max()) ** 2
    assert (pts @ z).min() >= z @ z - 1e-9 * scale
    assert np.linalg.norm(z) <= np.linalg.norm(pts, axis=1).min() + 1e-12


def test_min_norm_point_known_cases():
    np.testing.assert_allclose(min_norm_point(np.array([[1.0, 0.0], [0.0, 1.0]])), [0.5, 0.5])
    np.testing.assert_allclose(min_norm_point(np.array([[2.0, 1.0], [2.0, -1.0], [3.0, 0.0]])),
                               [2.0, 0.0], atol=1e-15)
    assert np.linalg.norm(min_norm_point(np.array([[1.0, 1.0], [-1.0, 1.0], [0.0, -1.0]]))) < 1e-12


def test_theorem1_registry_cross_check_sees_every_hypothesis():
    t1 = theorem1_check(_random_model(7))
    reg = t1["registry"]
    assert reg["holds"] and reg["violations"] == 0
    assert reg["items"] == reg["hypothesis_met"] <= TASK.k * TASK.T


def test_head_outputs_tell_a_sink_from_cancellation():
    from sinkproof.experiment.measure import head_outputs

    seqs = TASK.sample(20, seed=0)
    one = _random_model(5)
    d1 = head_outputs(one, seqs)
    assert d1["sum_head_norms"] == pytest.approx(d1["output_norm"])  # one head: no cancelling
    # two heads with opposite values: each head outputs a lot, the sum is exactly zero
    A = np.stack([one.A[0], one.A[0]])
    U = np.stack([one.U[0], -one.U[0]])
    d2 = head_outputs(sp.AttentionModel(TASK, "softmax", A, U), seqs)
    assert d2["output_norm"] < 1e-12 < d2["sum_head_norms"]
    assert d2["sum_head_norms"] == pytest.approx(2 * d1["sum_head_norms"])
