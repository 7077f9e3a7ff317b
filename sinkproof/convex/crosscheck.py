"""The same numbers by a path that does not go through CVXPY: SciPy (SLSQP, and HiGHS).

Used by the tests to cross-check the CVXPY programs to solver tolerance.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import linprog, minimize

from .._validate import as_real_array


def hull_distance_scipy(points: Any) -> float:
    """``dist(0, conv(rows))`` by SLSQP on the simplex (no CVXPY), the least over starts at
    the centre and at each vertex (SLSQP's absolute tolerances let one start stall near
    a degenerate optimum: points 0, -1, -6e-5 once gave 3e-5 for distance 0)."""
    V = as_real_array("points", points, ndim=2)
    m = V.shape[0]
    scale = float(np.abs(V).max(initial=0.0)) or 1.0  # tolerances are absolute: solve at
    G = (V / scale) @ (V / scale).T  # unit scale (at |v| ~ 6e-5 the square sat below them)
    best = np.inf
    for start in (np.full(m, 1.0 / m), *np.eye(m)):
        res = minimize(lambda lam: lam @ G @ lam, start, jac=lambda lam: 2 * G @ lam,
                       bounds=[(0.0, None)] * m, method="SLSQP",
                       options={"ftol": 1e-15, "maxiter": 500},
                       constraints=[{"type": "eq", "fun": lambda lam: lam.sum() - 1.0,
                                     "jac": lambda lam: np.ones(m)}])
        best = min(best, max(float(res.fun), 0.0))
    return scale * float(np.sqrt(best))


def zero_in_hull_highs(points: Any) -> bool:
    """Whether ``0 ∈ conv(rows)``, by an LP feasibility problem solved with HiGHS."""
    V = as_real_array("points", points, ndim=2)
    A = np.vstack([V.T, np.ones(V.shape[0])])
    b = np.concatenate([np.zeros(V.shape[1]), [1.0]])
    res = linprog(np.zeros(V.shape[0]), A_eq=A, b_eq=b, bounds=(0, None), method="highs")
    return res.status == 0


def min_bos_mass_scipy(values: Any, target: Any, eps: float) -> float:
    """``min α_0`` on the simplex s.t. ``||Σ α_j v_j - y|| <= ε``, by SLSQP (nan: infeasible)."""
    V = as_real_array("values", values, ndim=2)
    y = as_real_array("target", target, ndim=1)
    m = V.shape[0]
    c = np.zeros(m)
    c[0] = 1.0
    cons = [{"type": "eq", "fun": lambda a: a.sum() - 1.0, "jac": lambda a: np.ones(m)},
            {"type": "ineq", "fun": lambda a: eps**2 - np.sum((V.T @ a - y) ** 2),
             "jac": lambda a: -2 * V @ (V.T @ a - y)}]
    best = np.nan
    for start in (np.full(m, 1.0 / m), np.eye(m)[0]):
        res = minimize(lambda a: a[0], start, jac=lambda a: c, bounds=[(0.0, 1.0)] * m,
                       constraints=cons, method="SLSQP", options={"ftol": 1e-12, "maxiter": 500})
        feasible = np.sum((V.T @ res.x - y) ** 2) <= eps**2 * (1 + 1e-6) + 1e-12
        if feasible and not res.x[0] >= best:
            best = float(res.x[0])
    return best
