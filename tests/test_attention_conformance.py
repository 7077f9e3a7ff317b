"""Conformance of every registered attention map (parametrised over ``MAPS``).

Adding a map to the registry runs it through all of these: weights causal,
nonnegative and on or under the simplex as declared; exact zeros only where
declared; stable at scores of ±1000 with the non-BOS mass accurate in the log
domain; float weights inside the trusted checker's exact or interval weights and
equal to the map's own mpmath form to 1e-12; numpy and JAX forwards equal to 1e-12;
JAX gradients equal to central finite differences of the numpy forward where the
map is differentiable.

A map whose row in the trusted checker's rule table has not landed yet
(:data:`CHECKER_PENDING`) runs every test but the checker comparisons, which are
expected to fail (``xfail``, with the checker's "unknown attention map" error); they
run, and must pass, as soon as the checker knows the map.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import jax
import mpmath
import numpy as np
import pytest
from conftest import checker_pending, examples, with_checker_row
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import sinkproof.attention as attention
from sinkproof.attention import MAPS
from sinkproof.checker import maps as exact

DOCUMENTED = ["softmax", "sink_logit", "softmax1", "sparsemax", "entmax15", "sigmoid", "relu",
              "relu_length", "gated_softmax", "stick_breaking"]
NAMES = list(MAPS)
CHECKER_PENDING = checker_pending()
"""Maps the trusted checker does not know yet (its rule-table row lands separately)."""


def test_registry_is_the_documented_list():
    assert NAMES == DOCUMENTED
    assert all(MAPS[n].name == n for n in NAMES)
    assert set(DOCUMENTED) <= set(exact.MAP_NAMES)  # the checker has a rule for each map
    table = [line.split()[0] for line in attention.__doc__.splitlines()
             if line and line.split()[0] in MAPS]
    assert table == DOCUMENTED  # the module's table lists each map once, in order
    for n in NAMES:
        if n not in CHECKER_PENDING:
            assert exact.MAP_PARAMETERS.get(n, ()) == MAPS[n].param_names


# --------------------------------------------------------------------- strategies

MODERATE = st.floats(-6, 6, allow_nan=False).map(lambda x: round(x, 3))
EXTREME = st.one_of(MODERATE, st.sampled_from([-1000.0, 1000.0, 999.5, -999.5]))


@st.composite
def score_blocks(draw, elements=MODERATE, shape=None):
    """Scores ``(H, N, K)`` of queries at positions ``t`` ``(N,)`` with keys ``> t`` masked."""
    H, N, K = shape or (draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 6)))
    s = np.array(draw(st.lists(elements, min_size=H * N * K, max_size=H * N * K)),
                 dtype=float).reshape(H, N, K)
    t = np.array(draw(st.lists(st.integers(0, K - 1), min_size=N, max_size=N)))
    s[:, np.arange(K)[None, :] > t[:, None]] = -np.inf
    return s, t


PARAMS = st.floats(-4, 4).map(lambda x: round(x, 3))


def params_for(name, H, draw, elements=PARAMS):
    P = len(MAPS[name].param_names)
    return np.array(draw(st.lists(elements, min_size=H * P, max_size=H * P)),
                    dtype=float).reshape(H, P)


def valid_mask(s):
    return np.isfinite(s)


# --------------------------------------------------------------------- mass as declared

@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_weights_are_causal_nonnegative_and_on_or_under_the_simplex(name, data):
    amap = MAPS[name]
    s, t = data.draw(score_blocks(EXTREME))
    params = params_for(name, s.shape[0], data.draw)
    w, log_nonbos = amap.weights(s, t, params)
    assert w.shape == s.shape and log_nonbos.shape == s.shape[:2]
    np.testing.assert_allclose(amap.weights_only(s, t, params), w, rtol=1e-15, atol=0)
    assert np.all(w >= 0) and np.all(np.isfinite(w))
    assert np.all(w[~valid_mask(s)] == 0)
    total = w.sum(axis=-1)
    props = amap.properties
    if props.on_simplex:
        np.testing.assert_allclose(total, 1.0, rtol=0, atol=1e-12)
    if props.virtual_null or props.gated:
        assert np.all(total <= 1.0 + 1e-12)  # the null slot takes 1 - Σ α >= 0
    assert not (props.on_simplex and props.virtual_null)
    # a query at t = 0 sees BOS only: no non-BOS mass
    assert np.all(log_nonbos[:, t == 0] == -np.inf)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_exact_zeros_only_where_declared(name, data):
    amap = MAPS[name]
    s, t = data.draw(score_blocks(st.floats(-20, 20).map(lambda x: round(x, 3))))
    params = params_for(name, s.shape[0], data.draw)
    w, _ = amap.weights(s, t, params)
    if not amap.properties.exact_zeros:
        assert np.all(w[valid_mask(s)] > 0)


@pytest.mark.parametrize("name", NAMES)
def test_declared_exact_zeros_occur(name):
    amap = MAPS[name]
    w, _ = amap.weights(np.array([[[5.0, -5.0]]]), 1)
    assert (w[0, 0, 1] == 0) == amap.properties.exact_zeros


@pytest.mark.parametrize("name", NAMES)
def test_virtual_slot_is_declared_by_the_mass_it_leaves(name):
    amap = MAPS[name]
    w, _ = amap.weights(np.array([[[0.0, 0.0, 0.0]]]), 2)
    if amap.properties.virtual_null:
        assert w.sum() < 1.0
    elif amap.properties.on_simplex or name == "gated_softmax":
        assert w.sum() == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_declared_locality_and_sigmoid_bound_hold(name, data):
    """``own_key_local``/``key_local``: a key's weight is unchanged when the other scores and
    the query position change; ``sigmoid_bounded``: ``α_j <= σ(s_j + b)``, equal at ``j = t``."""
    amap = MAPS[name]
    props = amap.properties
    K = data.draw(st.integers(2, 5))
    s = np.array([data.draw(st.lists(MODERATE, min_size=K, max_size=K))])[None]
    other = np.array([data.draw(st.lists(MODERATE, min_size=K + 1, max_size=K + 1))])[None]
    params = params_for(name, 1, data.draw)
    w, _ = amap.weights(s, K - 1, params)
    other[..., -1] = s[..., -1]  # the same own score, one more key, other scores
    w2, _ = amap.weights(other, K, params)
    if props.own_key_local or props.key_local:
        assert w2[0, 0, -1] == pytest.approx(w[0, 0, -1], rel=1e-14)
    if props.key_local:
        other[..., 1:] = s  # every key keeps its score, behind a new first key
        w3, _ = amap.weights(other, K, params)
        np.testing.assert_allclose(w3[0, 0, 1:], w[0, 0], rtol=1e-14)
    if props.sigmoid_bounded:
        b = params[0, 0] if amap.param_names else 0.0
        sig = 1 / (1 + np.exp(-(s[0, 0] + b)))
        assert np.all(w[0, 0] <= sig * (1 + 1e-14))
        assert w[0, 0, -1] == pytest.approx(sig[-1], rel=1e-14)
    if props.stick_process:
        np.testing.assert_allclose(w[0, 0], _stick_weights(s[0, 0]), rtol=1e-12, atol=1e-300)


def _stick_weights(s: np.ndarray) -> np.ndarray:
    """``σ(s_j) Π_{j<l<=t} (1 - σ(s_l))``, key by key (the definition, in a plain loop)."""
    sig = 1 / (1 + np.exp(-s))
    return np.array([sig[j] * np.prod(1 - sig[j + 1:]) for j in range(len(s))])


@pytest.mark.parametrize("name", NAMES)
def test_stick_process_is_declared_exactly(name):
    """A map declares ``stick_process`` exactly when its weights are the stick-breaking
    process on a probe (each key's share of what the later keys left)."""
    amap = MAPS[name]
    s = np.array([0.3, -1.2, 0.7, 2.0])
    w = amap.weights(s[None, None], len(s) - 1)[0][0, 0]  # the map's default parameters
    same = np.allclose(w, _stick_weights(s), rtol=1e-12, atol=0)
    assert same == amap.properties.stick_process


@pytest.mark.parametrize("name", NAMES)
def test_locality_is_declared_exactly(name):
    """A map not declaring locality shows it on a probe: its own key's weight moves when
    the other scores (or the query position) move; likewise for the σ bound."""
    amap = MAPS[name]
    props = amap.properties
    a = amap.weights(np.array([[[0.0, 1.0]]]), 1)[0][0, 0, -1]
    b = amap.weights(np.array([[[5.0, 1.0]]]), 1)[0][0, 0, -1]
    c = amap.weights(np.array([[[0.0, 0.0, 1.0]]]), 2)[0][0, 0, -1]
    assert (a == b == c) == props.own_key_local
    first = amap.weights(np.array([[[0.0, 1.0, -1.0]]]), 2)[0][0, 0, 1]
    moved = amap.weights(np.array([[[0.0, 1.0, -1.0, 3.0]]]), 3)[0][0, 0, 1]
    assert (first == moved) == props.key_local
    sig = 1 / (1 + np.exp(-1.0))
    assert (c == pytest.approx(sig, rel=1e-14)) == props.sigmoid_bounded


# --------------------------------------------------------------------- extremes

@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_stable_at_scores_of_plus_minus_1000(name, data):
    amap = MAPS[name]
    s, t = data.draw(score_blocks(EXTREME))
    params = params_for(name, s.shape[0], data.draw)
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", under="ignore"):
        warnings.simplefilter("error")
        w, log_nonbos = amap.weights(s, t, params)
    assert not np.any(np.isnan(w)) and not np.any(np.isnan(log_nonbos))
    assert np.all(log_nonbos < np.inf)


def _log_of_interval_sum(intervals):
    lo = sum((a for a, _ in intervals), Fraction(0))
    hi = sum((b for _, b in intervals), Fraction(0))
    if hi == 0:
        return -np.inf, -np.inf
    with mpmath.workdps(40):
        def log(q):
            return float(mpmath.log(mpmath.mpf(q.numerator) / q.denominator)) if q else -np.inf
        return log(lo), log(hi)


@pytest.mark.parametrize("name", with_checker_row(NAMES))
@pytest.mark.parametrize("gap", [0.5, 40.0, 700.0, 1000.0])
def test_non_bos_mass_is_accurate_in_the_log_domain_under_a_strong_sink(name, gap):
    """BOS ``gap`` above the rest: log Σ_{j>=1} α_j matches the checker's enclosure to 1e-12."""
    amap = MAPS[name]
    rest = [0.0, -0.25, 0.5]
    s = np.array([[[gap, *rest]]])
    b = [0.3] if amap.param_names else []
    w, log_nonbos = amap.weights(s, 3, np.array([b]))
    iv = exact.interval_weights(name, [Fraction(x) for x in s[0, 0]], 3,
                                [Fraction(x) for x in b])
    lo, hi = _log_of_interval_sum(iv[1:])
    got = float(log_nonbos[0, 0])
    if lo == -np.inf:
        assert got == -np.inf
    else:
        assert lo - 1e-12 * max(1.0, abs(lo)) <= got <= hi + 1e-12 * max(1.0, abs(hi))


# --------------------------------------------------------------------- float vs checker

def _check_against_checker(name, s, t, params):
    amap = MAPS[name]
    w, log_nonbos = amap.weights(s, t, params)
    for h in range(s.shape[0]):
        for n in range(s.shape[1]):
            keys = [Fraction(x) for x in s[h, n, : t[n] + 1]]  # floats are exact rationals
            p = [Fraction(x) for x in params[h]]
            iv = exact.interval_weights(name, keys, int(t[n]), p)
            row = w[h, n, : t[n] + 1]
            for j, (lo, hi) in enumerate(iv):
                tol = 1e-12 * max(1.0, abs(float(hi)))
                assert float(lo) - tol <= row[j] <= float(hi) + tol, (name, h, n, j)
                if lo == hi == 0:
                    assert row[j] == 0  # an exact zero stays exact
            if name in exact.RATIONAL_MAPS:
                ex = exact.exact_weights(name, keys, int(t[n]), p)
                assert [(q, q) for q in ex] == iv
            if amap.properties.virtual_null:
                lo, hi = exact.null_slot_interval(name, keys, int(t[n]), p)
                slot = 1.0 - row.sum()
                assert float(lo) - 1e-12 <= slot <= float(hi) + 1e-12
            lo, hi = _log_of_interval_sum(iv[1:])
            got = log_nonbos[h, n]
            if hi == -np.inf:
                assert got == -np.inf
            else:
                assert lo - 1e-11 * max(1, abs(lo)) <= got <= hi + 1e-11 * max(1, abs(hi))


@pytest.mark.parametrize("name", with_checker_row(NAMES))
@settings(max_examples=examples(25))
@given(data=st.data())
def test_float_weights_agree_with_the_checker(name, data):
    s, t = data.draw(score_blocks(EXTREME))
    _check_against_checker(name, s, t, params_for(name, s.shape[0], data.draw))


@pytest.mark.parametrize("name", with_checker_row(NAMES))
def test_float_weights_agree_with_the_checker_on_ties(name):
    """Equal scores: a degenerate case for the sort-based maps."""
    s = np.array([[[1.0, 1.0, 1.0, 1.0], [0.0, 2.0, 2.0, -1.0], [3.0, 3.0, 2.0, 2.0]]])
    params = np.full((1, len(MAPS[name].param_names)), 0.5)
    _check_against_checker(name, s, np.array([3, 3, 3]), params)


# --------------------------------------------------------------------- float vs mpmath

def _check_against_mpmath(name, s, t, params):
    """The float forward against the map's mpmath form at 50 digits (weights and the
    log of the non-BOS mass, each to 1e-12 relative)."""
    amap = MAPS[name]
    w, log_nonbos = amap.weights(s, t, params)
    with mpmath.workdps(50):
        for h in range(s.shape[0]):
            for n in range(s.shape[1]):
                keys = [mpmath.mpf(float(x)) for x in s[h, n, : t[n] + 1]]
                ref = amap.weights_mpmath(keys, int(t[n]), [mpmath.mpf(float(x))
                                                             for x in params[h]])
                assert len(ref) == t[n] + 1
                for j, r in enumerate(ref):
                    assert abs(w[h, n, j] - float(r)) <= 1e-12 * max(float(r), 1e-300), \
                        (name, h, n, j)
                rest = mpmath.fsum(ref[1:])
                if rest == 0:
                    assert log_nonbos[h, n] == -np.inf
                else:
                    want = float(mpmath.log(rest))
                    assert log_nonbos[h, n] == pytest.approx(want, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(25))
@given(data=st.data())
def test_float_weights_agree_with_the_mpmath_form(name, data):
    s, t = data.draw(score_blocks(EXTREME))
    _check_against_mpmath(name, s, t, params_for(name, s.shape[0], data.draw))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("gap", [0.5, 40.0, 700.0, 1000.0])
def test_mpmath_form_agrees_under_a_strong_sink(name, gap):
    params = np.full((1, len(MAPS[name].param_names)), 0.3)
    _check_against_mpmath(name, np.array([[[gap, 0.0, -0.25, 0.5]]]), np.array([3]), params)
    _check_against_mpmath(name, np.array([[[0.5, -gap, -gap, -gap]]]), np.array([3]), params)


def test_stick_breaking_is_the_stick_breaking_process():
    """Keys from the most recent down: each takes σ(s) of what is left; the rest is a null."""
    s = np.array([[[0.7, -1.2, 2.0, 0.1]]])
    w, _ = MAPS["stick_breaking"].weights(s, 3)
    sig = 1 / (1 + np.exp(-s[0, 0]))
    left, want = 1.0, np.zeros(4)
    for j in (3, 2, 1, 0):
        want[j], left = sig[j] * left, left * (1 - sig[j])
    np.testing.assert_allclose(w[0, 0], want, rtol=1e-14)
    assert 1 - w.sum() == pytest.approx(np.prod(1 - sig), rel=1e-12)  # the null remainder
    assert w[0, 0, 3] == pytest.approx(sig[3], rel=1e-15)  # the own key: its own score only


# --------------------------------------------------------------------- numpy vs JAX

JAX_SHAPE = (2, 3, 6)
_JITTED: dict = {}


def _jitted(name):
    """``weights_jax`` of a map under ``jax.jit`` (compiled once per shape and precision)."""
    if name not in _JITTED:
        _JITTED[name] = jax.jit(MAPS[name].weights_jax)
    return _JITTED[name]


def _jax_inputs(s, t, params, junk):
    valid = valid_mask(s)
    padded = np.where(valid, s, junk)  # whatever sits at invalid keys must not matter
    H, N, _ = s.shape
    return padded, valid, np.broadcast_to(t, (H, N)), params[:, None, :]


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(25))
@given(data=st.data())
def test_numpy_and_jax_forwards_agree(name, data):
    amap = MAPS[name]
    s, t = data.draw(score_blocks(EXTREME, shape=JAX_SHAPE))  # one shape: one compilation
    params = params_for(name, s.shape[0], data.draw)
    w, _ = amap.weights(s, t, params)
    junk = data.draw(st.sampled_from([0.0, 50.0, -3.0, 1e6]))
    with jax.enable_x64(True):
        wj = np.asarray(_jitted(name)(*_jax_inputs(s, t, params, junk)))
    assert wj.dtype == np.float64
    assert np.all(wj[~valid_mask(s)] == 0)
    np.testing.assert_allclose(wj, w, rtol=1e-12, atol=1e-12)


def test_jax_precision_is_scoped():
    """The 64-bit switch is a context: outside it JAX's default precision is untouched."""
    before = jax.numpy.ones(1).dtype
    with jax.enable_x64(True):
        assert jax.numpy.ones(1).dtype == np.float64
    assert jax.numpy.ones(1).dtype == before


# --------------------------------------------------------------------- gradients

def _kink_free(name, s, ds, params, h):
    """No score crosses a point where the map is not differentiable within the FD step."""
    amap = MAPS[name]
    if name in ("relu", "relu_length"):
        return bool(np.all(np.abs(s) > 10 * h * (np.abs(ds) + 1)))
    if name in ("sparsemax", "entmax15"):
        w0, _ = amap.weights(s, 0, params)
        w_lo, _ = amap.weights(s - 10 * h * ds, 0, params)
        w_hi, _ = amap.weights(s + 10 * h * ds, 0, params)
        return bool(np.array_equal(w0 > 0, w_lo > 0) and np.array_equal(w0 > 0, w_hi > 0))
    return True


GRAD_KEYS = 5
_GRADIENTS: dict = {}


def _gradient(name):
    """Jitted gradient of ``Σ_j c_j α_j`` with respect to the scores and the map parameters."""
    if name not in _GRADIENTS:
        amap = MAPS[name]

        def f(s, valid, t, params, c):
            return jax.numpy.dot(amap.weights_jax(s, valid, t, params), c)

        _GRADIENTS[name] = jax.jit(jax.grad(f, argnums=(0, 3)))
    return _GRADIENTS[name]


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(20))
@given(data=st.data())
def test_jax_gradient_matches_central_differences(name, data):
    amap = MAPS[name]
    K = GRAD_KEYS
    s = np.array(data.draw(st.lists(st.floats(-3, 3), min_size=K, max_size=K)))[None, None, :]
    params = params_for(name, 1, data.draw, st.floats(-2, 2))
    t = data.draw(st.integers(0, K - 1))  # keys after t are masked
    s[..., t + 1:] = -np.inf
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    c = rng.standard_normal(K)  # f = Σ_j c_j α_j
    ds, dp = rng.standard_normal(s.shape), rng.standard_normal(params.shape)
    ds[..., t + 1:] = 0.0
    h = 1e-6
    assume(_kink_free(name, s, ds, params, h))

    def f_numpy(eps):
        w, _ = amap.weights(s + eps * ds, t, params + eps * dp)
        return float(w[0, 0] @ c)

    fd = (f_numpy(h) - f_numpy(-h)) / (2 * h)
    with jax.enable_x64(True):
        valid = np.arange(K) <= t
        gs, gp = _gradient(name)(np.where(valid, s[0, 0], 0.0), valid, float(t), params[0], c)
        directional = float(np.dot(gs, ds[0, 0]) + np.dot(gp, dp[0]))
    assert np.isfinite(directional)
    assert directional == pytest.approx(fd, rel=1e-5, abs=1e-6)
