"""The bounds as formulas: ray gap, hull distance, Theorem 5's ε_min, against brute force."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

import sinkproof as sp
from sinkproof.symbolic import (
    eps_min,
    eps_min_enclosure,
    eps_min_expr,
    hull_distance,
    log_eps_min,
    norm_needed,
    norm_needed_closed_form,
    ray_gap,
    theorem5_terms,
)
from sinkproof.symbolic.bounds import EPS, ray_distance
from sinkproof.symbolic.normbound import B_SYMBOL
from sinkproof.theorems import FORMULAS, THEOREM1_FIXED, THEOREM2_PAIR

FAST = settings(max_examples=30, deadline=None)
small_ints = st.integers(-4, 4)


def vectors(p):
    return st.lists(small_ints, min_size=p, max_size=p)


# ------------------------------------------------------------------ formulas
@pytest.mark.parametrize("name", sorted(FORMULAS))
def test_formula_numeric_equals_exact(name):
    f = FORMULAS[name]
    kwargs = dict(zip(f.keywords, [Fraction(1, 50), Fraction(3, 2)]))
    assert math.isclose(float(f(**kwargs)), float(f.exact(**kwargs)), rel_tol=1e-14)


def test_formulas_read_as_the_spec_states_them():
    assert THEOREM1_FIXED.exact(eps="1/100", content_norm=1) == sympy.Rational(99, 100)
    assert sympy.simplify(THEOREM2_PAIR.expr - (1 - 2 * EPS / (sympy.Symbol("g", positive=True)
                                                              - 2 * EPS))) == 0
    assert np.allclose(THEOREM1_FIXED(eps=0.1, content_norm=[1.0, 2.0]), [0.9, 0.95])
    with pytest.raises(TypeError, match="missing content_norm"):
        THEOREM1_FIXED(eps=0.1)
    with pytest.raises(TypeError, match="unknown"):
        THEOREM1_FIXED(eps=0.1, content_norm=1.0, gap=2.0)


# ------------------------------------------------------------------ ray gap
def test_ray_gap_documented_values():
    assert ray_gap([1, 0], [-1, 0]).exact == 1
    assert ray_gap([3, 4], [-3, -4]).exact == 5
    assert ray_gap([1, 0], [0, 1]).exact == sympy.sqrt(2) / 2
    assert ray_gap([1, 0], [2, 0]).exact == 0
    assert ray_gap([1, 0], [-2, 0]).exact == 1  # the shorter one
    assert ray_gap([0, 0], [1, 1]).exact == 0


def _brute_gap(c, d, samples=20001):
    c, d = np.asarray(c, float), np.asarray(d, float)
    basis = np.linalg.qr(np.stack([c, d], axis=1) + 1e-300)[0] if c.size > 1 else None
    angles = np.linspace(-np.pi, np.pi, samples)
    if basis is None:
        u = np.array([[1.0], [-1.0]])
    else:
        u = np.cos(angles)[:, None] * basis[:, 0] + np.sin(angles)[:, None] * basis[:, 1]
    return np.maximum(ray_distance(c, u), ray_distance(d, u))


@FAST
@given(st.integers(1, 3).flatmap(lambda p: st.tuples(vectors(p), vectors(p))))
def test_ray_gap_matches_brute_force(cd):
    c, d = cd
    g = ray_gap(c, d).value
    p = len(c)
    # the exact value is a lower bound on max(d(c,u), d(c',u)) over random unit u ...
    u = np.random.default_rng(0).standard_normal((2000, p))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    both = np.maximum(ray_distance(np.array(c, float), u), ray_distance(np.array(d, float), u))
    assert np.all(both >= g - 1e-12)
    # ... and is attained (up to the grid) in the plane of c and c'
    if p >= 2 and np.linalg.matrix_rank(np.array([c, d], float)) == 2:
        assert _brute_gap(c, d).min() <= g + 1e-3 * (1 + g)


def test_ray_gap_rejects_bad_input():
    with pytest.raises(ValueError, match="same length"):
        ray_gap([1, 0], [1])
    with pytest.raises(ValueError, match="non-empty"):
        ray_gap([], [])


# ------------------------------------------------------------------ hull distance
def _numeric_hull_distance_sq(points):
    """``dist(0, conv P)²`` by SLSQP (its objective: compared as a square, since the root of
    a residual ``1e-10`` near 0 is ``1e-5``)."""
    P = np.asarray(points, float)
    k = len(P)
    res = minimize(lambda w: float(np.sum((w @ P) ** 2)), np.full(k, 1 / k), method="SLSQP",
                   bounds=[(0, 1)] * k, constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1}],
                   options={"ftol": 1e-14, "maxiter": 500})
    return max(res.fun, 0.0)


@FAST
@given(st.integers(1, 3).flatmap(lambda p: st.lists(vectors(p), min_size=1, max_size=5)))
def test_hull_distance_is_exact_and_certified(points):
    h = hull_distance(points)
    pts = [tuple(Fraction(x) for x in v) for v in points]
    xx = sum(x * x for x in h.point)
    assert xx == h.d_squared
    assert all(sum(a * b for a, b in zip(h.point, v)) >= xx for v in pts)  # the certificate
    assert sum(h.weights) == 1 and min(h.weights) >= 0
    assert math.isclose(float(h.d_squared), _numeric_hull_distance_sq(points), rel_tol=1e-6,
                        abs_tol=1e-9)


def test_hull_distance_signed_basis():
    assert hull_distance([[1, 0], [0, 1]]).exact == sympy.sqrt(2) / 2
    assert hull_distance([[1, 0], [0, 1], [0, -1]]).d_squared == 0
    with pytest.raises(ValueError, match="non-empty"):
        hull_distance([])


# ------------------------------------------------------------------ Theorem 5
TASKS = [sp.TriggerTask(2, 6), sp.TriggerTask(1, 3, positions="onehot"),
         sp.TriggerTask(2, 4, positions="none"), sp.TriggerTask(2, 3, content=[[1, 2], [0.5, 0]])]


@pytest.mark.parametrize("task", TASKS)
def test_eps_min_expression_numeric_and_enclosure_agree(task):
    expr = eps_min_expr(task)
    for B in (0.0, 0.5, 3.0, 12.0):
        exact = float(expr.subs(B_SYMBOL, sympy.nsimplify(B)).evalf(40))
        lo, hi = eps_min_enclosure(task, B)
        assert lo <= exact <= hi and hi - lo <= 1e-12 * max(exact, 1e-300)
        assert math.isclose(eps_min(task, B), exact, rel_tol=1e-12)
    values = eps_min(task, np.linspace(0, 20, 50))
    assert np.all(np.diff(values) <= 0)  # decreasing in the budget


def test_eps_min_default_instance_constants():
    (term,) = theorem5_terms(sp.TriggerTask(2, 6))
    # ‖φ_T‖² = ‖c‖² + 1 + 1 + r_6² = 3 + 1/25; ‖φ_1 - φ_0‖² = 1 + 2 + r_1² = 4
    assert term.query_norm_sq == Fraction(76, 25)
    assert term.key_gap_sq[0] == 4 and term.key_gap_sq[-1] == Fraction(76, 25)
    assert eps_min(sp.TriggerTask(2, 6), 0.0) == pytest.approx(6 / 7)  # Q = T at B = 0


def test_log_eps_min_does_not_underflow():
    task = sp.TriggerTask(2, 6)
    assert eps_min(task, 1000.0) == 0.0
    assert -3100 < log_eps_min(task, 1000.0) < -3000


@pytest.mark.parametrize("eps", [0.3, 1e-2, 1e-6])
def test_norm_needed_is_certified_and_bracketed(eps):
    task = sp.TriggerTask(2, 6)
    need = norm_needed(task, eps)
    assert need.enclosure_below[0] > eps  # certified: at B = below the error exceeds eps
    assert eps_min(task, need.above) <= eps
    assert need.closed_form <= need.above * (1 + 1e-9)  # the closed form is weaker
    closed = norm_needed_closed_form(task).subs(EPS, sympy.nsimplify(eps))
    assert math.isclose(float(closed), need.closed_form, rel_tol=1e-9)


def test_norm_needed_edge_cases():
    task = sp.TriggerTask(2, 6)
    assert norm_needed(task, 0.9).below == 0.0  # even B = 0 reaches error 6/7 < 0.9
    with pytest.raises(ValueError, match="eps"):
        norm_needed(task, 0.0)
    with pytest.raises(ValueError, match="B must be"):
        eps_min(task, -1.0)


@given(st.integers(1, 10**40), st.integers(1, 10**40), st.integers(-700, 700))
def test_sqrt_float_is_the_rounded_root_at_every_scale(n, d, e):
    """``sqrt_float`` agrees with a 60-digit Decimal root to one ulp, also where the square is
    subnormal or beyond the float range as a float (``float(q)`` would lose or overflow it)."""
    from decimal import Decimal, localcontext

    from sinkproof.symbolic.bounds import sqrt_float
    q = Fraction(n, d) * Fraction(10) ** e
    with localcontext() as ctx:
        ctx.prec = 60
        ref = float((Decimal(q.numerator) / Decimal(q.denominator)).sqrt())
    got = sqrt_float(q)
    assert got == ref if math.isinf(ref) else abs(got - ref) <= math.ulp(ref)
