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
