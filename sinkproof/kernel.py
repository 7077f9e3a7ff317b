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
    ``scores``, ``weights``: ``(H, N, t+1)`` (effective weights: a gated head's are
    ``g_t·α_t``); ``log_nonbos``: ``log Σ_{j>=1} α_{tj}`` per head ``(H, N)``
    (log domain); ``output``, ``target``: ``(N, p)``.
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


def forward_prefixes(model: AttentionModel, codes: np.ndarray) -> PrefixForward:
    """Run ``model`` at the last position of each prefix in ``codes`` ``(N, t)``, ``t >= 1``."""
    task = model.task
    n, t = codes.shape
    keys = np.empty((n, t + 1), dtype=np.int64)
    keys[:, 0] = task.bos_code
    keys[:, 1:] = codes
    table = model.score_table[:, :, t, :, : t + 1]  # (H, a, b, j)
    s = table[:, keys[:, -1:], keys, np.arange(t + 1)[None, :]]  # (H, N, t+1)
    w, log_nonbos = model.attention_map.weights(s, t, model.map_params)
    gate = model.gate_table
    if gate is not None:  # the head's output, hence its effective weights, scaled by g_t
        g = gate[:, keys[:, -1], t]  # (H, N)
        w, log_nonbos = w * g[..., None], log_nonbos + np.log(g)
    v = model.value_table  # (H, k+2, p)
    out = np.zeros((n, task.p))
    for h in range(model.H):
        out += np.einsum("nj,njp->np", w[h], v[h][keys])
    return PrefixForward(keys, s, w, log_nonbos, out, task.prefix_targets(codes))
