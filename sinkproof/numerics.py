"""Small float64 helpers that stay accurate at the extremes."""

from __future__ import annotations

import numpy as np


def stable_norm(x: np.ndarray) -> np.ndarray:
    """Euclidean norms along the last axis without underflow or overflow.

    ``np.linalg.norm`` squares its entries, so vectors around 1e-160 have norm 0
    and vectors around 1e160 overflow; scaling by the largest entry avoids both.
    """
    x = np.asarray(x, dtype=float)
    scale = np.max(np.abs(x), axis=-1, keepdims=True)
    safe = np.where(scale > 0, scale, 1.0)
    return (safe * np.linalg.norm(x / safe, axis=-1, keepdims=True))[..., 0] * (scale[..., 0] > 0)


def logsumexp(a: np.ndarray, axis: int = -1) -> np.ndarray:
    """``log Σ exp(a)`` along ``axis`` in float64, finite at logits of ±1000.

    The largest term is taken out of the sum and added back through ``log1p`` (the same
    arithmetic as ``scipy.special.logsumexp``, so results agree to the last bit); where
    that is not finite (all ``-inf``, an ``inf`` or a NaN) the direct ``log(Σ exp(a))``
    gives the limit.
    """
    a = np.atleast_1d(np.asarray(a, dtype=float))
    if a.size == 0:
        return np.full(np.delete(a.shape, axis), -np.inf)[()]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        direct = np.log(np.sum(np.exp(a), axis=axis, keepdims=True))
        a_max = np.max(a, axis=axis, keepdims=True)
        is_max = a == a_max
        m = np.sum(is_max, axis=axis, keepdims=True, dtype=float)
        s = np.sum(np.exp(np.where(is_max, -np.inf, a) - a_max), axis=axis, keepdims=True)
        s = np.where(s == 0, s, s / m)
        out = np.log1p(s) + np.log(m) + a_max
    out = np.squeeze(np.where(np.isfinite(out), out, direct), axis=axis)
    return out[()] if out.ndim == 0 else out
