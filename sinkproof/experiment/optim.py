"""The optimiser of the training runs: Adam (Kingma & Ba, 2015) from optax, with checked settings.

``θ ← θ - lr · m̂ / (√v̂ + eps)`` with bias-corrected first and second moments
``m̂ = m / (1 - β1^t)``, ``v̂ = v / (1 - β2^t)``.
"""

from __future__ import annotations

import optax

from .._validate import as_real


def adam(lr: float = 0.01, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8
         ) -> optax.GradientTransformation:
    """``optax.adam`` after checking ``lr, eps > 0`` and ``0 <= β1, β2 < 1``."""
    lr = as_real("lr", lr, minimum=0.0, strict=True)
    b1 = as_real("beta1", beta1, minimum=0.0)
    b2 = as_real("beta2", beta2, minimum=0.0)
    if b1 >= 1.0 or b2 >= 1.0:
        raise ValueError(f"Adam betas must lie in [0, 1), got {beta1}, {beta2}")
    eps = as_real("eps", eps, minimum=0.0, strict=True)
    return optax.adam(lr, b1=b1, b2=b2, eps=eps)
