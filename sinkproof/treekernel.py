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

Two forms: :func:`tree_summaries`, the reference (slot by slot, every prefix's codes,
output and target), and :func:`tree_chunks`, what ``evaluate`` runs: the same sums with
the last slots broadcast against the first ones, each chunk's weights, outputs and errors
formed in one array pass each (``O(heads × p)`` per prefix, no per-level temporaries),
falling back to the reference's log domain for any query whose sums could leave
float64's normal range.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .kernel import PrefixForward
from .model import AttentionModel
from .numerics import stable_norm


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

    def error_norms(self) -> np.ndarray:
        """``||f_t - y_t||`` per prefix ``(N,)``."""
        return stable_norm(self.output - self.target)

    def worst(self) -> tuple[int, float]:
        """The prefix with the largest error norm, and that norm."""
        err = self.error_norms()
        i = int(np.argmax(err))
        return i, float(err[i])

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Codes, output and target of prefix ``i``."""
        return self.codes[i], self.output[i], self.target[i]


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

    ``null`` ``(H, n_tokens)`` marks tokens whose value counts as null.  The reference
    form of the tree kernel (every prefix's codes, output and target):
    :func:`tree_chunks` computes the same figures fused, and falls back to this one where
    a sum leaves float64's normal range.
    """
    if not supports_tree(model):
        raise ValueError(f"the {model.kind} map has no per-key factorisation")
    task, amap = model.task, model.attention_map
    vext = _extended_values(model, null)
    for t in range(1, task.T + 1):
        terms = amap.key_terms(model.score_table[:, :, t, :, : t + 1], t, model.map_params)
        for slots, mult in task.prefix_products(t):
            for summary in _product_summaries(model, t, slots, terms, vext, max_rows):
                yield t, summary, mult


def _extended_values(model: AttentionModel, null: np.ndarray) -> np.ndarray:
    """The value table with the null indicator as one more component: ``(H, n_tokens, p+1)``."""
    return np.concatenate([model.value_table, null[..., None].astype(float)], axis=2)


def _product_summaries(model: AttentionModel, t: int, slots: tuple[np.ndarray, ...],
                       terms: np.ndarray, vext: np.ndarray, max_rows: int
                       ) -> Iterator[PrefixSummary]:
    """The summaries of the product set ``slots`` in chunks of at most ``max_rows`` rows
    (leading slots fixed one code at a time until the rest fit)."""
    sizes = [len(a) for a in slots]
    lead = 0
    while lead < t - 1 and int(np.prod(sizes[lead:])) > max_rows:
        lead += 1
    for head in itertools.product(*slots[:lead]):
        chunk = tuple(np.array([c]) for c in head) + tuple(slots[lead:])
        yield _product_chunk(model, t, chunk, terms, vext)


# ----------------------------------------------------------------- the fused kernel
_TINY = 1e-290
"""Sums at or above this stay in float64's normal range with full relative precision."""
_SQUARES = (1e-280, 1e300)
"""Squared norms strictly inside this range are formed without overflow or lost digits."""
_EXP_RANGE = 600.0
"""Largest ``|ℓ - m|`` whose exponential the fused kernel forms (``e^600 < 1e261``)."""


@dataclass(frozen=True)
class TreeChunk:
    """``N`` prefixes of depth ``t`` sharing the query code ``query``, from the fused kernel.

    Per prefix: ``codes`` ``(N, t)``, ``outputs`` ``f_t`` ``(p, N)`` (component-major),
    ``target`` ``y_t`` ``(N, p)``, ``squares`` ``||f_t - y_t||²`` ``(N,)``; per head
    ``(H, N)`` (read-only, possibly broadcast): ``bos``, ``total``, ``null_keys``,
    ``log_nonbos`` as in :class:`PrefixSummary`.
    """

    codes: np.ndarray
    query: np.int64
    outputs: np.ndarray
    target: np.ndarray
    squares: np.ndarray
    bos: np.ndarray
    total: np.ndarray
    null_keys: np.ndarray
    log_nonbos: np.ndarray

    def error_norms(self) -> np.ndarray:
        """``||f_t - y_t||`` per prefix ``(N,)``."""
        top = self.squares.max()
        if _SQUARES[0] < top < _SQUARES[1]:  # the largest is exact: the rest are too small
            return np.sqrt(self.squares)       # to matter where they lose digits
        return stable_norm(self.outputs.T - self.target)

    def worst(self) -> tuple[int, float]:
        """The prefix with the largest error norm, and that norm."""
        i = int(np.argmax(self.squares))
        if _SQUARES[0] < self.squares[i] < _SQUARES[1]:
            return i, float(np.sqrt(self.squares[i]))
        if self.squares[i] == 0 and not self.outputs.any() and not self.target.any():
            return 0, 0.0  # every output and target 0 (a head whose weights all vanish)
        err = self.error_norms()
        i = int(np.argmax(err))
        return i, float(err[i])

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Codes, output and target of prefix ``i``."""
        return self.codes[i], self.outputs[:, i].copy(), self.target[i]


def _outer_sums(parts: list[np.ndarray], lead: tuple[int, ...]) -> np.ndarray:
    """``Σ_j parts[j][..., x_j]`` over every string ``(x_1, ...)`` of the product, in radix
    order (first slot most significant): ``parts[j]`` ``(*lead, a_j)`` -> ``(*lead, Π a_j)``."""
    acc = np.zeros((*lead, 1))
    for part in parts:
        acc = np.add(acc[..., :, None], part[..., None, :], order="C").reshape(*lead, -1)
    return acc


def _radix_codes(slots: tuple[np.ndarray, ...]) -> np.ndarray:
    """Every string of the product ``slots`` in radix order, ``(Π |A_j|, len(slots))``."""
    if not slots:
        return np.zeros((1, 0), dtype=np.int64)
    return np.stack(np.meshgrid(*slots, indexing="ij"), axis=-1).reshape(-1, len(slots))


def tree_chunks(model: AttentionModel, null: np.ndarray, max_rows: int = 1 << 15
                ) -> Iterator[tuple[int, TreeChunk | PrefixSummary, float]]:
    """``(t, chunk, multiplicity)`` for every prefix of the task's family, the figures of
    :func:`tree_summaries` computed fused, one query token at a time, in chunks of at most
    ``max(max_rows, n_tokens)`` prefixes.

    The running sums of the slots before the last few are formed once per query; the last
    slots' sums (with the query's own key and the BOS terms folded in) are added to them
    by broadcasting, and each chunk's weights, outputs and errors are formed from the two
    without a per-level pass.  Softmax-family sums run linear, shifted by the query's
    largest non-BOS term; a query whose sums could leave float64's normal range (checked
    beforehand from the smallest sums, which are exact bounds) runs
    :func:`tree_summaries`' log-domain chunks instead (of at most ``max(max_rows, 2^17)``
    rows).  ``null`` as there.
    """
    if not supports_tree(model):
        raise ValueError(f"the {model.kind} map has no per-key factorisation")
    task, amap = model.task, model.attention_map
    vext = _extended_values(model, null)
    null_token = null.any(axis=0)
    for t in range(1, task.T + 1):
        terms = amap.key_terms(model.score_table[:, :, t, :, : t + 1], t, model.map_params)
        for slots, mult in task.prefix_products(t):
            split = _split(slots[:-1], max_rows)
            child_codes = _radix_codes(slots[split:-1])
            # leading slots fixed one code at a time until the parents number at most
            # max_rows: memory stays bounded however deep the family
            lead, sizes = 0, [len(a) for a in slots[:split]]
            while lead < split and int(np.prod(sizes[lead:])) > max_rows:
                lead += 1
            for head in itertools.product(*slots[:lead]):
                keys = tuple(np.array([c]) for c in head) + tuple(slots[lead:-1])
                codes = (_radix_codes(keys[:split]), child_codes)
                for q in slots[-1]:
                    q = int(q)
                    fused = _query_chunks(model, t, keys, split, codes, q, terms[:, q], vext,
                                          null_token, max_rows)
                    if fused is None:  # near the edge of float64: the log-domain reference
                        query_slots = keys + (np.array([q]),)
                        for summary in _product_summaries(model, t, query_slots, terms, vext,
                                                          max(max_rows, 1 << 17)):
                            yield t, summary, mult
                    else:
                        for chunk in fused:
                            yield t, chunk, mult


def _split(keys: tuple[np.ndarray, ...], max_rows: int) -> int:
    """Index of the first of the trailing key slots whose product (at most ``max_rows``, at
    least one slot) is added to the leading slots' sums by broadcasting."""
    split, size = len(keys), 1
    while split > 0 and (size * len(keys[split - 1]) <= max_rows or split == len(keys)):
        size *= len(keys[split - 1])
        split -= 1
    return split


def _query_chunks(model: AttentionModel, t: int, keys: tuple[np.ndarray, ...], split: int,
                  codes: tuple[np.ndarray, np.ndarray], q: int, lt: np.ndarray,
                  vext: np.ndarray, null_token: np.ndarray, max_rows: int
                  ) -> Iterator[TreeChunk] | None:
    """The chunks of ``keys[0] × ... × keys[-1] × {q}`` at depth ``t`` (``lt`` ``(H, n_tokens,
    t+1)``: the query's key terms), or ``None`` where a linear sum could leave float64's
    normal range."""
    task, amap = model.task, model.attention_map
    mode, bos_code, p, H = amap.factorisation, task.bos_code, task.p, model.H
    used = np.concatenate([[bos_code, q], *keys]) if keys else np.array([bos_code, q])
    E = p + 1 if null_token[used].any() else p  # the null component only where it is not 0
    vals = vext[..., :E]
    l0 = lt[:, bos_code, 0]
    gate = model.gate_table
    g = None if gate is None else gate[:, q, t]
    if mode == "sum":
        kt, shift = lt[:, :, 1:], None
    else:
        shift = lt[:, :, 1:].max(axis=(1, 2))
        if np.any(shift < -_EXP_RANGE if mode == "log_sum" else np.abs(l0 - shift) > _EXP_RANGE):
            return None
        kt = np.exp(lt[:, :, 1:] - shift[:, None, None])  # <= 1: the shift is the largest

    def channels(a: np.ndarray, j: int) -> np.ndarray:
        """Weight and weighted values of the keys ``a`` at position ``j``: ``(1+E, H, |a|)``."""
        e = kt[:, a, j - 1]
        return np.concatenate([e[None], e[None] * np.moveaxis(vals[:, a], 2, 0)])

    parent = _outer_sums([channels(a, j) for j, a in enumerate(keys[:split], start=1)],
                         (1 + E, H))
    child = _outer_sums([channels(a, j) for j, a in enumerate(keys[split:], start=split + 1)],
                        (1 + E, H))
    child += channels(np.array([q]), t)  # the query's own key
    smallest = parent[0].min(axis=1) + child[0].min(axis=1)  # (H,): the least sum S
    bos0 = l0 if mode == "sum" else np.exp(l0) if mode == "log_sum" else np.exp(l0 - shift)
    c0 = const = scale = None
    if mode == "normalised":
        b = amap.null_logit(model.map_params)
        if b is not None and np.any(b - shift > _EXP_RANGE):
            return None
        c0 = bos0 + (0.0 if b is None else np.exp(b - shift))
        if np.any(smallest < _TINY) or np.any(smallest / (smallest + c0) < _TINY):
            return None
        child[1:] += bos0[None, :, None] * vals[:, bos_code].T[:, :, None]
    else:
        if mode == "log_sum" and (np.any(smallest < _TINY)
                                  or np.any(smallest * np.exp(shift) < _TINY)):
            return None
        # f = Σ_h s_h (Σ_j w_j v_j) + const: per-head scales only, so heads sum before the
        # broadcast (sum: w_j itself, BOS folded in; log_sum: α_j = e^m · shifted term)
        scale = np.ones(H) if g is None else g.copy()
        const = np.zeros((E, H))
        if mode == "sum":
            child[1:] += bos0[None, :, None] * vals[:, bos_code].T[:, :, None]
        else:
            scale *= np.exp(shift)
            const = (bos0 if g is None else bos0 * g)[None] * vals[:, bos_code].T
    return _chunks(model, t, codes, q, mode, parent, child, bos0, g, shift, scale, const, c0,
                   E, max_rows)


def _chunks(model: AttentionModel, t: int, codes: tuple[np.ndarray, np.ndarray], q: int,
            mode: str, parent: np.ndarray, child: np.ndarray, bos0: np.ndarray,
            g: np.ndarray | None, shift: np.ndarray | None, scale: np.ndarray | None,
            const: np.ndarray | None, c0: np.ndarray | None, E: int, max_rows: int
            ) -> Iterator[TreeChunk]:
    """The chunks of one query: ``parent`` ``(1+E, H, P)`` and ``child`` ``(1+E, H, C)`` sums
    (channel 0 the weight, then the weighted value components) broadcast against each other
    ``max(1, max_rows // C)`` parents at a time."""
    task, p, H = model.task, model.task.p, model.H
    P, C = parent.shape[2], child.shape[2]
    per = max(1, max_rows // C)
    log_g = None if g is None else np.log(g)[:, None]
    if scale is not None:  # heads summed before the broadcast
        p_out = np.einsum("h,ehn->en", scale, parent[1:])
        c_out = np.einsum("h,ehn->en", scale, child[1:]) + const.sum(axis=1)[:, None]
    for i0 in range(0, P, per):
        i1 = min(P, i0 + per)
        N = (i1 - i0) * C
        # order="C": the broadcast's natural order would be strided, and reductions along
        # strided rows run tens of times slower
        S = np.add(parent[0, :, i0:i1, None], child[0, :, None, :], order="C").reshape(H, N)
        if scale is None:  # normalised: weights S_j / Z per prefix
            inv = 1.0 / (S + c0[:, None])
            bos = inv * (bos0 if g is None else bos0 * g)[:, None]
            nonbos = S * inv
            lnb = np.log(nonbos)
            if g is not None:
                lnb += log_g
                nonbos *= g[:, None]
                inv *= g[:, None]
            total = bos + nonbos
            parts = np.add(parent[1:, :, i0:i1, None], child[1:, :, None, :],
                           order="C").reshape(E, H, N)
            parts *= inv[None]
            outputs = parts[:p].sum(axis=1)
            null_keys = parts[p] if p < E else np.broadcast_to(0.0, (H, N))
        else:
            with np.errstate(divide="ignore"):  # ReLU: log 0 = -inf where no key weighs
                lnb = np.log(S)
            if mode == "log_sum":
                lnb += shift[:, None]
                nonbos = S * np.exp(shift)[:, None]
                total = bos0[:, None] + nonbos
            else:
                total = S + bos0[:, None]
            bos = np.broadcast_to(bos0[:, None], (H, N))
            if g is not None:
                lnb += log_g
                total *= g[:, None]
                bos = np.broadcast_to((bos0 * g)[:, None], (H, N))
            outputs = np.add(p_out[:p, i0:i1, None], c_out[:p, None, :],
                             order="C").reshape(p, N)
            if p < E:
                null_keys = (np.add(parent[1 + p, :, i0:i1, None], child[1 + p, :, None, :],
                                    order="C").reshape(H, N) * scale[:, None]
                             + const[p][:, None])
            else:
                null_keys = np.broadcast_to(0.0, (H, N))
        # the codes column by column (each column a broadcast fill): (N, t), column-major
        block = np.empty((t, i1 - i0, C), dtype=np.int64)
        n_lead = codes[0].shape[1]
        block[:n_lead] = codes[0][i0:i1].T[:, :, None]
        block[n_lead:t - 1] = codes[1].T[:, None, :]
        block[t - 1] = q
        block = block.reshape(t, N).T
        target = task.prefix_targets(block)
        diff = outputs - target.T if target.any() else outputs
        yield TreeChunk(block, np.int64(q), outputs, target,
                        np.einsum("en,en->n", diff, diff), bos, total, null_keys, lnb)
