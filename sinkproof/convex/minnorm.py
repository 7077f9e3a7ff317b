"""The min-norm point of a polytope ``conv{v_1..v_m}`` as a QP (CVXPY), many at once.

``d = dist(0, conv V) = min ||V^T λ||`` over the simplex.  Writing the point as
a variable ``z = V^T λ``, the dual variable of that equality is ``∓z*/||z*||``: the
*separating direction* ``w`` with ``w·v_j >= d·||w||`` for every ``j`` (strong
duality), which is what a certificate carries.  (The objective is the norm, a
second-order cone, not its square: a squared objective loses half the digits of
small distances.)  Independent polytopes are
stacked block-diagonally into one problem, so a batch costs one solve.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..numerics import stable_norm
from . import interruptible
from .interruptible import cvxpy as cp

SOLVER = "CLARABEL"


@dataclass(frozen=True)
class MinNorm:
    """Float solution for one polytope: ``distance``, point ``z``, weights ``λ``, dual ``w``."""

    distance: float
    point: np.ndarray
    weights: np.ndarray
    direction: np.ndarray


def _check_sets(point_sets: Sequence[np.ndarray]) -> list[np.ndarray]:
    sets = [np.asarray(v, dtype=float) for v in point_sets]
    if not sets:
        return sets
    p = sets[0].shape[1] if sets[0].ndim == 2 else -1
    for i, v in enumerate(sets):
        if v.ndim != 2 or v.shape[0] == 0 or v.shape[1] != p:
            raise ValueError(f"point set {i} must be a non-empty (m, {p}) array, got {v.shape}")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"point set {i} contains non-finite values")
    return sets


def min_norm_points(point_sets: Sequence[np.ndarray], solver: str = SOLVER) -> list[MinNorm]:
    """Min-norm points of several polytopes (rows of each array are its vertices), one CVXPY QP."""
    raw = _check_sets(point_sets)
    if not raw:
        return []
    # each polytope is scaled to unit size (distance scales, direction does not): the QP
    # stays well conditioned for tiny or huge values
    scales = [float(np.abs(v).max()) or 1.0 for v in raw]
    sets = [v / s for v, s in zip(raw, scales)]
    p = sets[0].shape[1]
    sizes = [v.shape[0] for v in sets]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    block = sp.block_diag([v.T for v in sets], format="csr")  # (p·n_sets, Σ m)
    sums = sp.block_diag([np.ones((1, m)) for m in sizes], format="csr")  # (n_sets, Σ m)
    lam = cp.Variable(int(offsets[-1]), nonneg=True)
    z = cp.Variable(p * len(sets))
    link = z == block @ lam
    # Σ_i ||z_i|| (not squared: a second-order cone keeps small distances accurate)
    norms = cp.norm(cp.reshape(z, (len(sets), p), order="C"), 2, axis=1)
    problem = cp.Problem(cp.Minimize(cp.sum(norms)), [link, sums @ lam == 1])
    interruptible.solve(problem, solver)
    if problem.status not in ("optimal", "optimal_inaccurate") or lam.value is None:
        raise RuntimeError(f"min-norm QP failed: solver status {problem.status}")
    zs = np.asarray(z.value).reshape(len(sets), p)
    duals = np.asarray(link.dual_value, dtype=float).reshape(len(sets), p)
    out = []
    for i in range(len(sets)):
        point = zs[i] * scales[i]
        w = duals[i] if float(duals[i] @ point) >= 0 else -duals[i]
        out.append(MinNorm(float(stable_norm(zs[i])) * scales[i], point,
                           np.clip(lam.value[offsets[i]:offsets[i + 1]], 0.0, None), w))
    return out


def min_norm_point(points: np.ndarray, solver: str = SOLVER) -> MinNorm:
    """Min-norm point of ``conv(rows of points)``: one QP."""
    return min_norm_points([points], solver=solver)[0]
