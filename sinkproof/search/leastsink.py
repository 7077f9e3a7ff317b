"""The least BOS weight of an accurate one-head model at one position, from above: a
constrained optimiser over one softmax head with learned values (the upper side of a
certified bound).

The model: one softmax head on a finite task, scores ``s_ik = φ_i^T A φ_k`` (``A`` any
``D×D``; in the paper's setting ``A = W_Q^T W_K`` on the token vectors) and token-only values
``M e(x_k)`` (``M`` any ``out_dim × |e|``: ``W_O W_V`` in the paper's setting, ``U`` in ours).
Every prefix of the family is read through the task protocol (``prefix_blocks``,
``prefix_features``, ``prefix_targets``).  The problem, for a target prefix ``P`` (its last
position ``t``)::

    maximise  log((1 - α_t0(P)) / α_t0(P))   subject to   ||f_i(X) - y_i(X)||² <= ε²
                                                         at every position of every X

(the log-odds of the non-BOS mass, so that the BOS weight is minimised), by SLSQP with
exact JAX gradients, from several starting points: the fixed-value sink construction at
several logit scales (:func:`sinkproof.constructions.paper_sink_weights` in the paper's
setting, Theorem 5's head in ours) and any starting ``(A, M)`` given.  What it returns is
only a candidate: the trusted checker decides its error and BOS weight exactly
(:func:`sinkproof.stackwitness.stack_witness` with ``at=`` in the paper's setting,
:func:`sinkproof.search.verify.verify_witness` with ``where=[(sequence, t)]`` in ours).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from .._validate import as_real
from ..autodiff import x64
from ..constructions import paper_sink_weights, softmax_score_matrix
from ..model import AttentionModel, fixed_values
from ..stack import StackModel, paper_model
from ..tasks.protocol import Task, require
from ..work import product, refuse_beyond

MAX_POSITIONS = 200_000
"""Most error constraints (prefixes of the family) the optimiser takes."""
MARGIN = 1e-6
"""The optimiser aims at error ``ε (1 - MARGIN)``, so that its answer is within ``ε``."""


@dataclass(frozen=True)
class LeastSink:
    """The best feasible candidate: its ``A`` and ``M``, the float BOS weight at the target
    and the model's largest float error over the family; ``starts`` tried, ``feasible``
    of them ended within ``ε`` (in floats).  ``relaxed``: ``A`` is a free logit per
    (query, key) token pair and ``M`` a free value per token (the engine's class, on the
    one-hot token codes), not a model of the task."""

    A: np.ndarray
    M: np.ndarray
    bos: float
    error: float
    starts: int
    feasible: int
    relaxed: bool = False

    def model(self, task: Task) -> StackModel:
        """The candidate: a paper stack (``W_Q = A^T``, ``W_K = I``, ``W_V = M``, ``W_O = I``)
        on a task without positions, else the one-head :class:`AttentionModel` ``(A, U = M)``."""
        if self.relaxed:
            raise ValueError("a relaxed point (a logit per token pair, a value per token) is "
                             "no model of the task: project_start() maps it to one")
        if task.has_positions:
            return AttentionModel(task, kind="softmax", A=self.A[None], U=self.M[None])
        n = task.n
        return paper_model(task.replace(residual=False), "softmax", residual=False,
                           W_Q=self.A.T[None, None], W_K=np.eye(n)[None, None],
                           W_V=self.M[None, None], W_O=np.eye(n)[None])


def _onehot(task: Task, codes: np.ndarray) -> np.ndarray:
    """The prefixes ``codes`` ``(N, t)`` in the engine's relaxed coordinates, BOS first: one-hot
    token codes ``(N, t+1, K)`` (``K`` token kinds) on a task without positions; with them,
    one-hot (token, position features) pairs (the scores' classes) followed by one-hot token
    codes (the values'), ``(N, t+1, K P + K)``, ``P`` distinct position features."""
    keys = np.concatenate([np.full((codes.shape[0], 1), task.bos_code), codes], axis=1)
    tokens = np.eye(task.n_tokens)[keys]
    if not task.has_positions:
        return tokens
    rows, which = _position_classes(task)
    pairs = keys * len(rows) + which[: keys.shape[1]][None, :]
    return np.concatenate([np.eye(task.n_tokens * len(rows))[pairs], tokens], axis=2)


def _position_classes(task: Task) -> tuple[np.ndarray, np.ndarray]:
    """The distinct position features ``π(t)`` of ``t = 0..max_depth`` and each position's
    index among them: positions with the same features share every logit (``inverse``
    has ``π(1) = π(2)``), as the engine's classes do."""
    table = np.array([task.position_features(t) for t in range(task.max_depth + 1)])
    rows, which = np.unique(table, axis=0, return_inverse=True)
    return rows, np.asarray(which).reshape(-1)


def _value_columns(task: Task, relaxed: bool) -> slice:
    if not relaxed:
        return task.token_columns
    return slice(-task.n_tokens, None) if task.has_positions else slice(None)


def _groups(task: Task, relaxed: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every prefix of the finite family by depth ``t = 0..max_depth``: input rows
    ``(N, t+1, D)`` (``relaxed``: one-hot token codes) and the targets at the last
    position ``(N, out_dim)``."""
    feats = (lambda c: _onehot(task, c)) if relaxed else task.prefix_features
    empty = np.zeros((1, 0), dtype=np.int64)
    out = [(feats(empty), task.prefix_targets(empty))]
    for t in range(1, task.max_depth + 1):
        codes = np.concatenate([b.codes for b in task.prefix_blocks(t)])
        out.append((feats(codes), task.prefix_targets(codes)))
    return out


def relaxed_start(task: Task, A: np.ndarray, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A head ``(A, M)`` in the engine's relaxed class: the logit of every (query, key)
    class ``φ_q^T A φ_k`` (token pairs; with positions, (token, position) pairs) and the
    value of every token ``M e(x)`` (``X`` the task's token table)."""
    X = task.token_table
    if not task.has_positions:
        return X @ np.asarray(A) @ X.T, np.asarray(M) @ X.T
    pos, _ = _position_classes(task)
    phi = np.concatenate([np.repeat(X, len(pos), axis=0), np.tile(pos, (X.shape[0], 1))],
                         axis=1)
    size = phi.shape[0] + X.shape[0]
    A1 = np.zeros((size, size))
    A1[: phi.shape[0], : phi.shape[0]] = phi @ np.asarray(A) @ phi.T
    return A1, np.asarray(M) @ X.T


def project_start(task: Task, A1: np.ndarray, M1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The least-squares paper head ``(A, M)`` whose pair logits and token values are
    nearest a relaxed point ``(A1, M1)`` (a start for :func:`least_sink`; the token
    vectors are linearly dependent, so it is in general not the same point); a task
    without positions."""
    require(task, "has_positions", "project_start", value=False)
    P = np.linalg.pinv(task.token_table)
    return P @ np.asarray(A1) @ P.T, np.asarray(M1) @ P.T


def sink_starts(task: Task, eps: float, scales: Iterable[float] = (0.7, 0.85, 1.0, 1.2)
                ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Starting ``(A, M)`` pairs: the fixed-value sink head at logit level ``λ·s`` for each
    scale ``s``, ``λ`` the level that makes it ``ε``-accurate (the paper's setting:
    ``log((L-1)√2/ε)``; ours: Theorem 5's head, ``log(2(T+1)/ε)``)."""
    out = []
    if not task.has_positions:
        lam = float(np.log((task.L - 1) * np.sqrt(2.0) / eps))
        for s in scales:
            w = paper_sink_weights(task, lam * float(s))
            out.append((w["W_Q"][0, 0].T @ w["W_K"][0, 0], w["W_V"][0, 0].copy()))
        return out
    lam = float(np.log(2.0 * (task.max_depth + 1) / eps))
    for s in scales:
        out.append((softmax_score_matrix(task, lam * float(s)), fixed_values(task.p)))
    return out


def least_sink(task: Task, eps: float, target: Sequence[int], *,
               starts: list[tuple[np.ndarray, np.ndarray]] | None = None,
               maxiter: int = 400, max_work: int | None = None,
               relaxed: bool = False) -> LeastSink:
    """Minimise the BOS weight at the last position of prefix ``target`` (token codes of the
    finite task) over one-head models with error ``<= eps`` at every position of the family
    (see the module docstring).  ``starts``: ``(A, M)`` pairs (default :func:`sink_starts`).

    ``relaxed``: over the branch-and-bound engine's class instead — a free logit per
    (query, key) class (token pairs; with positions, (token, position) pairs) and a free
    value per token (the same program on one-hot codes; starts are mapped by
    :func:`relaxed_start`).  Its
    optimum is a point of that class, so no certificate of the class proves more than its
    BOS weight (up to the optimiser's reach): it splits a gap between the engine's bound
    and :func:`least_sink`'s model into the engine's part and its class's part."""
    from scipy.optimize import minimize  # the optimiser, loaded by the path that uses it

    require(task, "finite", "least_sink (the error on the whole finite family)")
    eps = float(as_real("eps", eps, minimum=0.0, strict=True))
    target = tuple(int(c) for c in target)
    if not task.has_positions:
        task = task.replace(residual=False)
    refuse_beyond("error constraints (positions of the family's sequences, an upper bound "
                  "on its prefixes)", product(task.n_sequences_at_most(MAX_POSITIONS),
                                               task.max_depth + 1), max_work, MAX_POSITIONS)
    if not target or len(target) > task.max_depth or any(
            not 0 <= c < task.bos_code for c in target) or np.any(task.is_trigger(
                np.array(target))):
        raise ValueError(f"target must be 1..{task.max_depth} non-trigger token codes")
    groups = _groups(task, relaxed)
    probe = (_onehot(task, np.array([target])) if relaxed
             else task.prefix_features(np.array([target])))[0]  # (t+1, D)
    tok = _value_columns(task, relaxed)
    D, out_dim = probe.shape[1], groups[0][1].shape[1]
    width = probe[:, tok].shape[1]
    starts = sink_starts(task, eps) if starts is None else starts
    if relaxed:
        starts = [s if np.shape(s[0]) == (D, D) else relaxed_start(task, *s) for s in starts]
    aim = eps * (1.0 - MARGIN)  # SLSQP ends on its active constraints, up to ~1e-12
    with x64():
        data = [(jnp.asarray(x), jnp.asarray(y)) for x, y in groups]
        q = jnp.asarray(probe)

        def unpack(theta: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
            return theta[: D * D].reshape(D, D), theta[D * D:].reshape(out_dim, width)

        def errors(theta: jnp.ndarray) -> jnp.ndarray:
            A, M = unpack(theta)
            parts = []
            for x, y in data:  # the last row of every prefix of this depth
                s = jnp.einsum("na,ac,nkc->nk", x[:, -1], A, x)
                w = jax.nn.softmax(s, axis=-1)
                out = jnp.einsum("nk,nke->ne", w, x[:, :, tok]) @ M.T
                parts.append(aim**2 - jnp.sum((out - y) ** 2, axis=-1))
            return jnp.concatenate(parts) / aim**2

        def logodds(theta: jnp.ndarray) -> jnp.ndarray:
            A, _ = unpack(theta)
            s = q[-1] @ A @ q.T  # scores of the target row, (t+1,)
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
    return LeastSink(A, M, bos, err, len(starts), feasible, relaxed)


__all__ = ["LeastSink", "least_sink", "project_start", "relaxed_start", "sink_starts"]
