"""The least BOS weight of an accurate one-head model at one position, from above: a
constrained optimiser over the paper's one-layer head (the upper side of a certified bound).

The model: one softmax head on a finite paper task, scores ``s_ik = x_i^T A x_k``
(``A = W_Q^T W_K``, any ``n×n``) and values ``M x_k`` (``M = W_O W_V``, any ``n×n``).  The
problem, for a target prefix ``P`` (its last position ``t``)::

    maximise  log((1 - α_t0(P)) / α_t0(P))   subject to   ||f_i(X) - y_i(X)||² <= ε²
                                                         at every position of every X

(the log-odds of the non-BOS mass, so that the BOS weight is minimised), by SLSQP with
exact JAX gradients, from several starting points: the fixed-value sink construction
(:func:`sinkproof.constructions.paper_sink_weights`) at several logit scales, each with its
values scaled, and any starting ``(A, M)`` given (e.g. realised from the engine's relaxed
optimum).  What it returns is only a candidate: :func:`sinkproof.stackwitness.stack_witness`
(``at=``) has the trusted checker decide its error and BOS weight exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from .._validate import as_real
from ..autodiff import x64
from ..constructions import paper_sink_weights
from ..stack import StackModel, paper_model
from ..tasks.paper import PaperTask
from ..tasks.protocol import require
from ..work import product, refuse_beyond

MAX_POSITIONS = 200_000
"""Most (sequence, position) error constraints the optimiser takes."""
MARGIN = 1e-6
"""The optimiser aims at error ``ε (1 - MARGIN)``, so that its answer is within ``ε``."""


@dataclass(frozen=True)
class LeastSink:
    """The best feasible candidate: its ``A`` and ``M``, the float BOS weight at the target
    and the model's largest float error over the family; ``starts`` tried, ``feasible``
    of them ended within ``ε`` (in floats)."""

    A: np.ndarray
    M: np.ndarray
    bos: float
    error: float
    starts: int
    feasible: int

    def model(self, task: PaperTask) -> StackModel:
        """The candidate as a paper stack (``W_Q = A^T``, ``W_K = I``, ``W_V = M``, ``W_O = I``)."""
        n = task.n
        return paper_model(task.replace(residual=False), "softmax", residual=False,
                           W_Q=self.A.T[None, None], W_K=np.eye(n)[None, None],
                           W_V=self.M[None, None], W_O=np.eye(n)[None])


def _family(task: PaperTask) -> tuple[np.ndarray, np.ndarray]:
    """Every full sequence of the finite family ``(N, L, n)`` and its targets."""
    codes = np.concatenate([b.codes for b in task.prefix_blocks(task.L - 1)])
    x = task.prefix_features(codes)
    return x, task.row_targets(x)


def sink_starts(task: PaperTask, eps: float, scales: Iterable[float] = (0.7, 0.85, 1.0, 1.2)
                ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Starting ``(A, M)`` pairs: the fixed-value sink head at logit level ``λ·s`` for each
    scale ``s`` (``λ = log((L-1)√2/ε)``, the level that makes it ``ε``-accurate)."""
    lam = float(np.log((task.L - 1) * np.sqrt(2.0) / eps))
    out = []
    for s in scales:
        w = paper_sink_weights(task, lam * float(s))
        out.append((w["W_Q"][0, 0].T @ w["W_K"][0, 0], w["W_V"][0, 0].copy()))
    return out


def least_sink(task: PaperTask, eps: float, target: Sequence[int], *,
               starts: list[tuple[np.ndarray, np.ndarray]] | None = None,
               maxiter: int = 400, max_work: int | None = None) -> LeastSink:
    """Minimise the BOS weight at the last position of prefix ``target`` (content codes of
    the finite task; no trigger) over one-head models with error ``<= eps`` on the whole
    family (see the module docstring).  ``starts``: ``(A, M)`` pairs (default
    :func:`sink_starts`)."""
    from scipy.optimize import minimize  # the optimiser, loaded by the path that uses it

    require(task, "finite", "least_sink (the error on the whole finite family)")
    eps = float(as_real("eps", eps, minimum=0.0, strict=True))
    target = tuple(int(c) for c in target)
    if not target or len(target) > task.L - 2 or any(not 0 <= c < task.m for c in target):
        raise ValueError(f"target must be 1..{task.L - 2} content codes in [0, {task.m})")
    task = task.replace(residual=False)
    n, L = task.n, task.L
    refuse_beyond("error constraints (sequences x positions)",
                  product(task.n_sequences_at_most(MAX_POSITIONS), L), max_work, MAX_POSITIONS)
    x_np, y_np = _family(task)
    t = len(target)
    probe = task.prefix_features(np.array([target]))[0]  # (t+1, n)
    starts = sink_starts(task, eps) if starts is None else starts
    aim = eps * (1.0 - MARGIN)  # SLSQP ends on its active constraints, up to ~1e-12
    with x64():
        x, y, q = jnp.asarray(x_np), jnp.asarray(y_np), jnp.asarray(probe)
        causal = jnp.tril(jnp.ones((L, L), dtype=bool))

        def unpack(theta: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
            return theta[: n * n].reshape(n, n), theta[n * n:].reshape(n, n)

        def errors(theta: jnp.ndarray) -> jnp.ndarray:
            A, M = unpack(theta)
            s = jnp.einsum("bia,ac,bkc->bik", x, A, x)
            w = jax.nn.softmax(jnp.where(causal, s, -jnp.inf), axis=-1)
            out = w @ (x @ M.T)
            return (aim**2 - jnp.sum((out - y) ** 2, axis=-1)).ravel() / aim**2

        def logodds(theta: jnp.ndarray) -> jnp.ndarray:
            A, _ = unpack(theta)
            s = q[t] @ A @ q.T  # scores of the target row, (t+1,)
            return jax.nn.logsumexp(s[1:]) - s[0]

        cons_f, cons_j = jax.jit(errors), jax.jit(jax.jacobian(errors))
        obj_f, obj_g = jax.jit(lambda th: -logodds(th)), jax.jit(jax.grad(lambda th: -logodds(th)))
        best, feasible = None, 0
        for A0, M0 in starts:
            theta0 = np.concatenate([np.asarray(A0, float).ravel(),
                                     np.asarray(M0, float).ravel()])
            res = minimize(lambda th: float(obj_f(th)), theta0,
                           jac=lambda th: np.asarray(obj_g(th)), method="SLSQP",
                           constraints=[{"type": "ineq", "fun": lambda th: np.asarray(cons_f(th)),
                                         "jac": lambda th: np.asarray(cons_j(th))}],
                           options={"maxiter": maxiter, "ftol": 1e-12})
            for theta in (res.x, theta0):
                slack = np.asarray(cons_f(theta))
                err = aim * float(np.sqrt(max(0.0, 1.0 - slack.min())))
                if not np.all(np.isfinite(slack)) or err > eps:
                    continue
                feasible += theta is res.x
                lo = float(logodds(theta))
                bos = float(1.0 / (1.0 + np.exp(lo)))
                if best is None or bos < best[0]:
                    A, M = (np.asarray(a) for a in unpack(jnp.asarray(theta)))
                    best = (bos, err, A, M)
                break
    if best is None:
        raise ValueError("no start ended feasible: give starts= that are eps-accurate")
    bos, err, A, M = best
    return LeastSink(A, M, bos, err, len(starts), feasible)


__all__ = ["LeastSink", "least_sink", "sink_starts"]
