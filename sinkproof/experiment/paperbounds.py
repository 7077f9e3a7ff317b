"""Trained paper models held against what is proved about them.

One softmax head, one layer, learned values ``v = W_O W_V x``: at a non-trigger row
``t >= 1`` the target is 0, and the output is ``f_t = α v_0 + (1 - α) z`` with
``α = α_t0`` and ``z`` in the hull of the values ``v_1..v_t``, so ``||z|| >= d_t``
(the hull's distance from 0).  Then ``(1 - α) d_t <= ||f_t|| + α ||v_0||``, i.e.

    α_t0 >= (d_t - e_t) / (d_t + ||v_0||),      e_t = ||f_t - y_t||,

a per-position inequality that every model satisfies (with fixed values, ``v_0 = 0``,
it is Theorem 3's ``1 - e_t/d_t``).  :func:`bound_check` evaluates both sides on test
sequences (floats; ``d_t`` from the min-norm QP) and counts violations beyond float
tolerance -- a consistency check of the theory against training, not a certificate.

For other models no sink bound is proved, and none can be: two softmax heads (one
layer) and two residual layers of one head each have verified sink-free witnesses on
a finite content set (``examples/claims/paper_p1_two_heads.toml``,
``paper_p2_two_layers.toml``), and length-normalised ReLU needs no sink at all ((P3)).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..convex.minnorm import min_norm_points

MAX_SEQUENCES = 50
"""Test sequences the check uses (one min-norm QP per non-trigger row)."""
TOL = 1e-4
"""Slack for float32 outputs and the QP's distance before a row counts as a violation."""


def bound_check(kind: str, layers: int, heads: int, params: dict[str, np.ndarray],
                x: np.ndarray, out: np.ndarray, w: np.ndarray, y: np.ndarray,
                trigger: int) -> dict[str, Any]:
    """The inequality of the module docstring on the first :data:`MAX_SEQUENCES` test
    sequences ``x`` ``(N, L, n)`` (outputs ``out``, weights ``w`` ``(N, layers, heads, L,
    L)``, targets ``y``, the trigger at index ``trigger``), or why no bound applies."""
    if (kind, layers, heads) != ("softmax", 1, 1):
        if kind == "relu_length":
            why = "length-normalised ReLU needs no sink ((P3), exact)"
        elif kind != "softmax":
            why = f"no per-position bound is implemented for {kind} in the paper's setting"
        else:
            why = ("no sink bound holds: a sink-free accurate model is verified for two "
                   "heads (one layer) and for two residual layers of one head")
        return {"bound": None, "why": why}
    N = min(MAX_SEQUENCES, x.shape[0])
    U = params["wo"][0] @ params["wv"][0, 0]
    rows = [t for t in range(1, x.shape[1]) if t != trigger]
    sets, meta = [], []
    for s in range(N):
        vals = x[s] @ U.T
        for t in rows:
            sets.append(vals[1: t + 1])
            meta.append((s, t, float(np.linalg.norm(vals[0]))))
    dist = [m.distance for m in min_norm_points(sets)]
    margins, bounds = [], []
    for (s, t, v0), d in zip(meta, dist):
        e = float(np.linalg.norm(out[s, t] - y[s, t]))
        bound = (d - e) / (d + v0) if d + v0 > 0 else -np.inf
        bounds.append(bound)
        margins.append(float(w[s, 0, 0, t, 0]) - bound)
    margins_a = np.array(margins)
    return {"bound": "alpha_t0 >= (d_t - e_t) / (d_t + ||v_0||) at every non-trigger row",
            "sequences": N, "positions": len(margins), "violations": int(np.sum(margins_a < -TOL)),
            "least_margin": float(margins_a.min()), "largest_bound": float(np.max(bounds))}


__all__ = ["MAX_SEQUENCES", "bound_check"]
