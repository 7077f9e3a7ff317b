"""Adversarial search for the worst content of a paper task with continuous content.

With content Uniform(-1, 1) the family is infinite, so a sampled maximum error only
bounds the worst case from below.  This search pushes the bound up: for a trigger
position ``j``, it maximises ``max_t ||f_t(x) - y_t(x)||`` over the content of every
non-BOS token in the box ``[-1, 1]^{(L-1)(n-3)}`` by projected L-BFGS-B from seeded
starts (central-difference gradients, every perturbation run in one batched forward).
The result is still a **lower estimate** of the supremum, found by local search, never
a certified value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validate import as_int
from .numerics import stable_norm
from .stack import StackModel
from .tasks.protocol import require


@dataclass(frozen=True)
class WorstCase:
    """The worst sequence the search found: ``x`` ``(L, n)``, the position ``t`` and its
    error ``max_error``; ``starts`` local searches of at most ``maxiter`` iterations."""

    max_error: float
    x: np.ndarray
    position: int
    trigger_at: int
    starts: int
    evaluations: int

    def __repr__(self) -> str:
        return (f"WorstCase(max_error={self.max_error:.6g} at t={self.position}, trigger at "
                f"{self.trigger_at}; {self.method})")

    @property
    def method(self) -> str:
        """What the figure is."""
        return (f"adversarial local search ({self.starts} seeded starts, {self.evaluations} "
                "sequences run): a lower estimate of the worst case, not certified")


def _errors(model: StackModel, x: np.ndarray) -> np.ndarray:
    """Per sequence and position ``||f_t - y_t||`` for token matrices ``x`` ``(N, L, n)``."""
    out = model.forward_batch(x).out
    return stable_norm(out - model.task.row_targets(x))


def worst_content(model: StackModel, *, starts: int = 4, seed: int = 0,
                  trigger_at: int | None = None, maxiter: int = 50,
                  step: float = 1e-6) -> WorstCase:
    """Search the content of a continuous paper task for the largest error of ``model``.

    Starts: ``starts`` seeded sequences (trigger uniform in ``2..L-1`` unless
    ``trigger_at`` fixes it); each is improved by L-BFGS-B on the error at its current
    worst position, with the content kept in ``[-1, 1]``.
    """
    if not isinstance(model, StackModel):
        raise TypeError(f"model must be a StackModel, got {type(model).__name__}")
    task = model.task
    require(task, "fixed_length", "the adversarial content search")
    starts = as_int("starts", starts, minimum=1)
    maxiter = as_int("maxiter", maxiter, minimum=1)
    found = [_search_from(model, x0, maxiter, step)
             for x0 in task.sample(starts, seed=seed, trigger_at=trigger_at)]
    err, x, t, _ = max(found, key=lambda f: f[0])
    j = int(np.flatnonzero(x[:, 1])[0])
    return WorstCase(err, x, t, j, starts, sum(f[3] for f in found))


def _search_from(model: StackModel, x0: np.ndarray, maxiter: int, step: float
                 ) -> tuple[float, np.ndarray, int, int]:
    """One local search from ``x0``: (best error, its sequence, its position, sequences run)."""
    task = model.task
    cs = task.content_slice
    shape = (task.L - 1, task.content_dim)
    best: list = [-1.0, x0, 0]
    runs = 0

    def build(z: np.ndarray) -> np.ndarray:
        x = np.repeat(x0[None], z.shape[0], axis=0)
        x[:, 1:, cs] = z.reshape(-1, *shape)
        return x

    def objective(z: np.ndarray) -> tuple[float, np.ndarray]:
        nonlocal runs
        z = np.clip(z, -1.0, 1.0)
        eye = np.eye(z.size) * step
        batch = np.concatenate([z[None], z + eye, z - eye])
        err = _errors(model, build(batch))
        runs += batch.shape[0]
        t = int(np.argmax(err[0]))
        if err[0, t] > best[0]:
            best[:] = [float(err[0, t]), build(z[None])[0], t]
        sq = err[:, t] ** 2
        grad = (sq[1 : 1 + z.size] - sq[1 + z.size :]) / (2 * step)
        return -float(sq[0]), -grad

    from scipy.optimize import minimize  # loaded by the one path that needs it (0.5-2 s)

    z0 = x0[1:, cs].ravel()
    minimize(objective, z0, jac=True, method="L-BFGS-B",
             bounds=[(-1.0, 1.0)] * z0.size, options=dict(maxiter=maxiter))
    return best[0], best[1], best[2], runs
