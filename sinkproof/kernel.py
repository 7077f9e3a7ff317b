"""Vectorised forward pass at the last position of many prefixes of one depth.

A causal model's output at position ``t`` depends only on the prefix
``x_0..x_t``, so evaluating every position of a prefix-closed family reduces to
evaluating the last position of each distinct prefix once.  Scores come from
the model's score table (one gather), not from feature products.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import AttentionModel


@dataclass(frozen=True)
class PrefixForward:
    """The model at the last position ``t`` of ``N`` prefixes of depth ``t``.

    ``keys``: codes of positions ``0..t`` (BOS first), ``(N, t+1)``;
    ``scores``, ``weights``: ``(H, N, t+1)``; ``log_nonbos``: ``log Σ_{j>=1} α_{tj}``
    per head ``(H, N)`` (log domain); ``output``, ``target``: ``(N, p)``.
    """

    keys: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    log_nonbos: np.ndarray
    output: np.ndarray
    target: np.ndarray

    @property
    def query(self) -> np.ndarray:
        """Code of the token at position t."""
        return self.keys[:, -1]


def _log_sum_exp(s: np.ndarray) -> np.ndarray:
    m = s.max(axis=-1)
    safe_m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return safe_m + np.log(np.exp(s - safe_m[..., None]).sum(axis=-1))


def softmax_with_log_nonbos(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Softmax over the last axis and ``log Σ_{j>=1} α_j`` in the log domain.

    One pass of ``exp`` serves both; rows where the non-BOS sum falls below
    float64's normal range (a BOS logit hundreds above the rest) are redone with
    their own shift, so ``log(1 - α_0)`` stays accurate however strong the sink.
    """
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    z = e.sum(axis=-1)
    rest = e[..., 1:].sum(axis=-1)
    w = e / z[..., None]
    with np.errstate(divide="ignore"):
        log_nonbos = np.log(rest) - np.log(z)
    tiny = rest < 1e-290
    if np.any(tiny):
        log_nonbos[tiny] = _log_sum_exp(s[tiny][..., 1:]) - _log_sum_exp(s[tiny])
    return w, log_nonbos


def forward_prefixes(model: AttentionModel, codes: np.ndarray) -> PrefixForward:
    """Run ``model`` at the last position of each prefix in ``codes`` ``(N, t)``, ``t >= 1``."""
    task = model.task
    n, t = codes.shape
    keys = np.empty((n, t + 1), dtype=np.int64)
    keys[:, 0] = task.bos_code
    keys[:, 1:] = codes
    table = model.score_table[:, :, t, :, : t + 1]  # (H, a, b, j)
    s = table[:, keys[:, -1:], keys, np.arange(t + 1)[None, :]]  # (H, N, t+1)
    if model.kind == "softmax":
        w, log_nonbos = softmax_with_log_nonbos(s)
    else:
        w = np.maximum(s, 0.0)
        with np.errstate(divide="ignore"):
            log_nonbos = np.log(w[..., 1:].sum(axis=-1))
    v = model.value_table  # (H, k+2, p)
    out = np.zeros((n, task.p))
    for h in range(model.H):
        out += np.einsum("nj,njp->np", w[h], v[h][keys])
    return PrefixForward(keys, s, w, log_nonbos, out, task.prefix_targets(codes))
