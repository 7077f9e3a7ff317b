"""Tree-factorised forward: every prefix extends its parent by one key.

For a fixed query (token ``q`` at position ``t``) key ``j`` contributes a term that
depends on ``(x_j, j)`` only: a log-weight ``ℓ_j`` (softmax family, sigmoid) or a
weight ``w_j`` (ReLU, ReLU/length).  Over a product set ``A_1 × ... × A_{t-1}`` of
key strings the running sums ``L = log Σ_{j>=1} exp(ℓ_j)`` and ``V = Σ_j exp(ℓ_j - L)
v_j`` (or ``W = Σ w_j``, ``V = Σ w_j v_j``) are built slot by slot, each child from
its parent in ``O(heads × p)``, instead of recomputing the row of ``t+1`` keys of
every prefix.  Each query token gets its own pass; the log domain keeps ``log(1 - α_0)``
exact however strong the sink.  Maps whose weights need the whole row (sparsemax,
entmax: a sort) have no factorisation and use :func:`sinkproof.kernel.forward_prefixes`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .kernel import PrefixForward
from .model import AttentionModel


@dataclass(frozen=True)
class PrefixSummary:
    """Per prefix of depth ``t`` (``N`` of them), the sums over its keys that the measures need.

    ``codes`` ``(N, t)``; ``query`` ``(N,)``; ``output``, ``target`` ``(N, p)``; per head
    ``(H, N)``: ``bos`` ``α_{t0}``, ``total`` ``Σ_j α_{tj}``, ``null_keys`` ``Σ_j α_{tj}
    [||v_j|| <= eta]``, ``log_nonbos`` ``log Σ_{j>=1} α_{tj}`` (effective, gated weights).
    """

    codes: np.ndarray
    query: np.ndarray
    output: np.ndarray
    target: np.ndarray
    bos: np.ndarray
    total: np.ndarray
    null_keys: np.ndarray
    log_nonbos: np.ndarray


def summarise(fw: PrefixForward, null: np.ndarray) -> PrefixSummary:
    """The summary of a row-by-row forward; ``null`` ``(H, n_tokens)`` marks null values."""
    w = fw.weights
    return PrefixSummary(fw.keys[:, 1:], fw.query, fw.output, fw.target, w[..., 0],
                         w.sum(axis=-1), (w * null[:, fw.keys]).sum(axis=-1), fw.log_nonbos)


def supports_tree(model: AttentionModel) -> bool:
    """The map factorises over keys and the task enumerates its prefixes as product sets."""
    return (model.attention_map.factorisation is not None
            and model.task.tree_factorised)


def _step(mode: str, state: tuple[np.ndarray, np.ndarray] | None, term: np.ndarray,
          vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Extend every string of ``state`` (``(H, M)``, ``(H, M, E)``) by each key of one slot
    (``term`` ``(H, a)``, ``vals`` ``(H, a, E)``): ``(H, M·a)``, ``(H, M·a, E)``."""
    H, a = term.shape
    if state is None:
        if mode == "sum":
            return term, term[..., None] * vals
        return term, np.broadcast_to(vals, vals.shape).copy()
    acc, V = state
    M = acc.shape[1]
    if mode == "sum":
        new = acc[:, :, None] + term[:, None, :]
        V = V[:, :, None, :] + (term[..., None] * vals)[:, None]
    else:
        new = np.logaddexp(acc[:, :, None], term[:, None, :])
        V = (np.exp(acc[:, :, None] - new)[..., None] * V[:, :, None, :]
             + np.exp(term[:, None, :] - new)[..., None] * vals[:, None])
    return new.reshape(H, M * a), V.reshape(H, M * a, -1)


def _sums(slots: tuple[np.ndarray, ...], q: int, t: int, lt: np.ndarray, vext: np.ndarray,
          mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Running sums over keys ``1..t`` of every string of ``slots[:-1]`` followed by ``q``,
    for the query ``(q, t)``: terms ``lt`` ``(H, n_tokens, t+1)``."""
    state = None
    for j, a in enumerate(slots[:-1], start=1):
        state = _step(mode, state, lt[:, a, j], vext[:, a])
    return _step(mode, state, lt[:, [q], t], vext[:, [q]])


def _product_chunk(model: AttentionModel, t: int, slots: tuple[np.ndarray, ...],
                   terms: np.ndarray, vext: np.ndarray) -> PrefixSummary:
    """The summary of the product set ``slots`` (``t`` code arrays) at depth ``t``."""
    task, amap = model.task, model.attention_map
    mode = amap.factorisation
    bos_code, p = task.bos_code, task.p
    b = amap.null_logit(model.map_params)
    gate = model.gate_table
    parts = []
    for q in slots[-1]:
        lt = terms[:, q]  # (H, n_tokens, t+1)
        l0 = lt[:, bos_code, 0][:, None]
        if mode == "sum":
            acc, V = _sums(slots, q, t, lt, vext, "sum")
            bos = np.broadcast_to(l0, acc.shape)
            nonbos = 1.0
            with np.errstate(divide="ignore"):
                lnb = np.log(acc)
            total = bos + acc
        else:
            # Σ_j exp(ℓ_j - m) with m the largest non-BOS term of this query: linear sums;
            # rows where that sum leaves float64's normal range redo it in the log domain.
            m = lt[:, :, 1:].max(axis=(1, 2))[:, None]
            shifted = np.zeros_like(lt)  # the BOS column (j = 0) is not a summed key
            shifted[..., 1:] = np.exp(lt[..., 1:] - m[..., None])
            acc, V = _sums(slots, q, t, shifted, vext, "sum")
            if np.any(acc < 1e-290):
                acc, V = _sums(slots, q, t, lt, vext, "log")
            else:
                acc = m + np.log(acc)
                V = V * np.exp(m - acc)[..., None]
            norm = np.zeros_like(acc)
            if mode == "normalised":
                norm = np.logaddexp(l0, acc)
                if b is not None:
                    norm = np.logaddexp(norm, b[:, None])
            lnb = acc - norm
            bos = np.exp(l0 - norm)
            nonbos = np.exp(lnb)[..., None]
            total = bos + nonbos[..., 0]
        out = bos[..., None] * vext[:, bos_code, None, :] + nonbos * V  # (H, M, E)
        if gate is not None:
            g = gate[:, q, t][:, None]
            bos, total, lnb = bos * g, total * g, lnb + np.log(g)
            out = out * g[..., None]
        parts.append((out[..., :p].sum(axis=0), bos, total, out[..., p], lnb))
    H = model.H
    stack = [np.stack([part[i] for part in parts], axis=-1) for i in range(5)]
    output = np.moveaxis(stack[0], -1, 1).reshape(-1, p)
    bos, total, null_keys, lnb = (a.reshape(H, -1) for a in stack[1:])
    codes = np.stack(np.meshgrid(*slots, indexing="ij"), axis=-1).reshape(-1, t)
    return PrefixSummary(codes, codes[:, -1], output, task.prefix_targets(codes), bos,
                         total, null_keys, lnb)


def tree_summaries(model: AttentionModel, null: np.ndarray, max_rows: int = 1 << 16
                   ) -> Iterator[tuple[int, PrefixSummary, float]]:
    """``(t, summary, multiplicity)`` for every prefix of the task's family, in the order of
    the task's ``prefix_blocks``, in chunks of at most ``max(max_rows, n_tokens)`` rows.

    ``null`` ``(H, n_tokens)`` marks tokens whose value counts as null.
    """
    if not supports_tree(model):
        raise ValueError(f"the {model.kind} map has no per-key factorisation")
    task, amap = model.task, model.attention_map
    vext = np.concatenate([model.value_table, null[..., None].astype(float)], axis=2)
    for t in range(1, task.T + 1):
        scores = model.score_table[:, :, t, :, : t + 1]  # (H, q, x, j)
        terms = amap.key_terms(scores, t, model.map_params)
        for slots, mult in task.prefix_products(t):
            sizes = [len(a) for a in slots]
            lead = 0
            while lead < t - 1 and int(np.prod(sizes[lead:])) > max_rows:
                lead += 1
            for head in itertools.product(*slots[:lead]):
                chunk = tuple(np.array([c]) for c in head) + tuple(slots[lead:])
                yield t, _product_chunk(model, t, chunk, terms, vext), mult
