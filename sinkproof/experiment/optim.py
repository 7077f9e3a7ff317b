"""Adam (Kingma & Ba, 2015) on a tuple of numpy arrays."""

from __future__ import annotations

import numpy as np

from .._validate import as_real


class Adam:
    """``θ ← θ - lr · m̂ / (√v̂ + eps)`` with bias-corrected first and second moments.

    ``step`` returns new arrays; the caller's arrays are never modified.
    """

    def __init__(self, shapes: list[tuple[int, ...]], lr: float = 0.01, beta1: float = 0.9,
                 beta2: float = 0.999, eps: float = 1e-8) -> None:
        self.lr = as_real("lr", lr, minimum=0.0, strict=True)
        self.beta1 = as_real("beta1", beta1, minimum=0.0)
        self.beta2 = as_real("beta2", beta2, minimum=0.0)
        if self.beta1 >= 1.0 or self.beta2 >= 1.0:
            raise ValueError(f"Adam betas must lie in [0, 1), got {beta1}, {beta2}")
        self.eps = as_real("eps", eps, minimum=0.0, strict=True)
        self.m = [np.zeros(s) for s in shapes]
        self.v = [np.zeros(s) for s in shapes]
        self.t = 0

    def step(self, params: list[np.ndarray], grads: list[np.ndarray]) -> list[np.ndarray]:
        """One update; ``params`` and ``grads`` in the order of the constructor's shapes."""
        if len(params) != len(self.m) or len(grads) != len(self.m):
            raise ValueError(f"Adam expects {len(self.m)} parameter and gradient arrays")
        self.t += 1
        c1 = 1.0 - self.beta1**self.t
        c2 = 1.0 - self.beta2**self.t
        out = []
        for i, (theta, g) in enumerate(zip(params, grads)):
            self.m[i] = self.beta1 * self.m[i] + (1.0 - self.beta1) * g
            self.v[i] = self.beta2 * self.v[i] + (1.0 - self.beta2) * g * g
            out.append(theta - self.lr * (self.m[i] / c1) / (np.sqrt(self.v[i] / c2) + self.eps))
        return out
