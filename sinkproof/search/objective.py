"""Smooth objectives over a batch of prefixes, with analytic gradients in ``A`` and ``U``.

A causal model's output at position ``t`` depends only on the prefix ``x_0..x_t``
(docs/theory.md section 2), so an objective over (sequence, position) pairs is an
objective over distinct prefixes weighted by their multiplicities.  Every score is
an entry of the table ``s_h(a, t, b, j) = φ(a,t)^T A_h φ(b,j)``; with ``Φ`` the
matrix of all rows ``φ(a, t)`` the table is ``Φ A_h Φ^T``, so the gradient in
``A_h`` is ``Φ^T G_h Φ`` where ``G_h`` collects the gradients of the used entries.

Losses (``loss=``):

- ``"mse"``: multiplicity-weighted mean over positions of ``||f_t - y_t||²``.
- ``"smoothmax"``: ``τ log Σ_n exp(e_n / τ)`` over distinct prefixes ``n`` (position 0
  included), ``e_n = ||f - y||² / ε²`` (``ε = max_error``, default 1); an upper bound on
  ``max_n e_n`` that exceeds it by at most ``τ log N``.
- ``"penalty"``: the feasibility objective of the search,
  ``Σ_n hinge(e_n - (1 - margin))² + bos_weight Σ_{n,h} hinge(m_nh - m* + margin)²``;
  zero exactly when every error is ``<= ε·sqrt(1 - margin)`` and every constrained
  BOS measure is ``margin`` below its threshold.
- ``"sink"``: minimise BOS mass at accuracy ``ε``: ``τ log Σ_{n,h} exp(m_nh / τ)
  + error_weight Σ_n hinge(e_n - (1 - margin))²`` (meant for softmax; with ReLU the
  BOS score can fall without limit, so search for BOS mass 0 with ``"penalty"``).

The BOS measure ``m`` is taken at the batch's constrained prefixes (``where``).  For
softmax it is the log-odds ``log α_0 - log(1 - α_0) = s_0 - logsumexp(s_{1:t})``
(monotone in ``α_0``, computed in the log domain, with gradient of order one even
when ``1 - α_0`` is far below float64 resolution); its threshold is
``logit(max_bos_mass)``.  For ReLU it is the BOS score ``s_0`` itself
(``α_0 = max(0, s_0) <= b`` iff ``s_0 <= b`` for ``b >= 0``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import expit

from .._validate import as_real, choice
from ..measures import explicit_prefix_blocks
from ..model import KINDS, fixed_values
from ..task import TriggerTask
from ..tasks.protocol import require_setting

LOSSES = ("mse", "smoothmax", "penalty", "sink")
WHERE = ("nontrigger", "trigger", "all")


# --------------------------------------------------------------------- batches
@dataclass(frozen=True)
class PrefixGroup:
    """Prefixes of one depth ``t`` (``t = 0`` is position 0 alone).

    ``keys``: codes of positions ``0..t``, BOS first, ``(N, t+1)``; ``weight``: how
    many (sequence, position) pairs share each prefix; ``target``: ``y_t`` ``(N, p)``;
    ``constrained``: the BOS condition applies at the last position; ``flat``: where
    each score sits in the flattened table ``(H, (k+2)(T+1)·(k+2)(T+1))``.
    """

    depth: int
    keys: np.ndarray
    weight: np.ndarray
    target: np.ndarray
    constrained: np.ndarray
    flat: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0), np.int64))

    @property
    def query(self) -> np.ndarray:
        """Code of the token at the last position."""
        return self.keys[:, -1]


@dataclass(frozen=True)
class PrefixBatch:
    """Distinct prefixes of a family of sequences, grouped by depth (depth 0 included)."""

    task: TriggerTask
    groups: tuple[PrefixGroup, ...]
    where: Any = "nontrigger"

    @property
    def n_prefixes(self) -> int:
        """Number of distinct prefixes (position 0 counts once)."""
        return sum(g.keys.shape[0] for g in self.groups)

    @property
    def n_positions(self) -> float:
        """Number of (sequence, position) pairs the batch stands for."""
        return float(sum(g.weight.sum() for g in self.groups))

    @property
    def n_constrained(self) -> int:
        """Number of distinct prefixes where the BOS condition applies."""
        return int(sum(g.constrained.sum() for g in self.groups))

    def constrain(self, where: Any) -> PrefixBatch:
        """The same prefixes with the BOS condition at ``where``: ``"nontrigger"``,
        ``"trigger"``, ``"all"`` (positions ``t >= 1``) or a set of ``(sequence, position)``."""
        masks = _where_masks(self.task, self.groups, where)
        groups = tuple(replace(g, constrained=m) for g, m in zip(self.groups, masks))
        return PrefixBatch(self.task, groups, where)

    def __repr__(self) -> str:
        return (f"PrefixBatch({self.n_prefixes} prefixes, {self.n_positions:g} positions, "
                f"{self.n_constrained} constrained at {self.where!r}, task={self.task!r})")


def prefix_batch(
    task: TriggerTask,
    sequences: Iterable[Sequence[int]] | None = None,
    where: Any = "nontrigger",
) -> PrefixBatch:
    """The prefixes of the whole family ``S_T`` (``sequences=None``; weights are
    multiplicities) or the distinct prefixes of ``sequences`` with their counts.

    Position 0 is one group of its own, weighted by the number of sequences.
    """
    require_setting(task, "trigger")
    if sequences is None:
        n_seq = float(task.n_sequences)
        blocks = []
        for t in range(1, task.T + 1):
            parts = list(task.prefix_blocks(t))
            codes = np.concatenate([b.codes for b in parts])
            mult = np.concatenate([np.full(b.codes.shape[0], b.multiplicity) for b in parts])
            blocks.append((t, codes, mult))
    else:
        explicit, count = explicit_prefix_blocks(task, sequences)
        n_seq = float(count)
        blocks = explicit
    bos = np.array([[task.bos_code]], dtype=np.int64)
    groups = [PrefixGroup(0, bos, np.array([n_seq]), np.zeros((1, task.p)),
                          np.zeros(1, dtype=bool), _flat_indices(task, bos))]
    for t, codes, mult in blocks:
        keys = np.empty((codes.shape[0], t + 1), dtype=np.int64)
        keys[:, 0] = task.bos_code
        keys[:, 1:] = codes
        groups.append(PrefixGroup(t, keys, np.asarray(mult, dtype=float),
                                  task.prefix_targets(codes),
                                  np.zeros(codes.shape[0], dtype=bool), _flat_indices(task, keys)))
    return PrefixBatch(task, tuple(groups)).constrain(where)


def _flat_indices(task: TriggerTask, keys: np.ndarray) -> np.ndarray:
    """Index of ``s(query, t, key_j, j)`` in the flattened score table, ``(N, t+1)``."""
    t = keys.shape[1] - 1
    R = task.n_tokens * (task.T + 1)
    rows = keys * (task.T + 1) + np.arange(t + 1)[None, :]
    return rows[:, -1:] * R + rows


def _where_masks(task: TriggerTask, groups: Sequence[PrefixGroup], where: Any) -> list[np.ndarray]:
    if isinstance(where, str):
        choice("where", where, WHERE)
        masks = []
        for g in groups:
            if g.depth == 0:
                masks.append(np.zeros(g.keys.shape[0], dtype=bool))
            elif where == "all":
                masks.append(np.ones(g.keys.shape[0], dtype=bool))
            else:
                is_trig = g.query == task.trig_code
                masks.append(is_trig if where == "trigger" else ~is_trig)
        return masks
    wanted = set()
    try:
        items = list(where)
    except TypeError:
        raise TypeError("where must be 'nontrigger', 'trigger', 'all' or a set of "
                        "(sequence, position) pairs") from None
    for item in items:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise TypeError(f"where: expected (sequence, position) pairs, got {item!r}")
        seq, pos = item
        codes = task.encode(seq)
        if isinstance(pos, bool) or not isinstance(pos, (int, np.integer)):
            raise TypeError(f"where: position must be an integer, got {pos!r}")
        if not 1 <= pos <= codes.size:
            raise ValueError(f"where: position {pos} outside 1..{codes.size} of {list(seq)}")
        wanted.add(tuple(int(c) for c in codes[:pos]))
    masks = []
    for g in groups:
        rows = [tuple(int(c) for c in row[1:]) in wanted for row in g.keys]
        masks.append(np.array(rows, dtype=bool))
    found = sum(int(m.sum()) for m in masks)
    if found < len(wanted):
        raise ValueError("where: some (sequence, position) pairs are not in the batch's family")
    return masks


# ----------------------------------------------------------------- parameters
def feature_rows(task: TriggerTask) -> np.ndarray:
    """``Φ``: the rows ``φ(a, t)`` for every code ``a`` and position ``t``, ordered
    ``(a, t)`` as in :attr:`AttentionModel.score_table`, shape ``(k+2)(T+1) × D``."""
    return _tables(task)[0]


@lru_cache(maxsize=16)
def _tables(task: TriggerTask) -> tuple[np.ndarray, np.ndarray]:
    """``Φ`` and the token table ``e(x)`` (read-only), computed once per task."""
    tok, pos = task.token_table, task.position_table
    phi = np.concatenate(
        [np.repeat(tok, task.T + 1, axis=0), np.tile(pos, (task.n_tokens, 1))], axis=1
    )
    phi.setflags(write=False)
    tok.setflags(write=False)
    return phi, tok


def _as_heads(A: Any, U: Any, task: TriggerTask) -> tuple[np.ndarray, np.ndarray]:
    A = np.asarray(A, dtype=float)
    if A.ndim == 2:
        A = A[None]
    if A.ndim != 3 or A.shape[1:] != (task.D, task.D):
        raise ValueError(f"A must have shape (H, {task.D}, {task.D}), got {A.shape}")
    if U is None:
        U = np.broadcast_to(fixed_values(task.p), (A.shape[0], task.p, task.p + 3))
    U = np.asarray(U, dtype=float)
    if U.ndim == 2:
        U = U[None]
    if U.shape != (A.shape[0], task.p, task.p + 3):
        raise ValueError(f"U must have shape ({A.shape[0]}, {task.p}, {task.p + 3}), got {U.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(U))):
        raise ValueError("A and U must be finite")
    return A, U


def _lse(s: np.ndarray) -> np.ndarray:
    """``logsumexp`` over the last axis (finite inputs, at least one entry)."""
    m = s.max(axis=-1)
    return m + np.log(np.exp(s - m[..., None]).sum(axis=-1))


# ------------------------------------------------------------- forward pass
@dataclass
class _GroupState:
    group: PrefixGroup
    s: np.ndarray  # (H, N, t+1) scores
    alpha: np.ndarray  # (H, N, t+1) weights
    values: np.ndarray  # (H, N, t+1, p) value vectors of the keys
    f: np.ndarray  # (N, p)
    e2: np.ndarray  # (N,) squared error
    m: np.ndarray | None  # (H, Nc) BOS measure at constrained prefixes
    rest: np.ndarray | None  # (H, Nc, t) softmax of s_{1:t} at constrained prefixes


def _log_odds(s: np.ndarray, e: np.ndarray, mx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BOS log-odds ``s_0 - logsumexp(s_{1:t})`` and the softmax of ``s_{1:t}``, from the
    shifted exponentials ``e = exp(s - mx)``; rows whose non-BOS sum underflows (a BOS
    logit hundreds above the rest) are redone with their own shift."""
    tail = e[..., 1:]
    rest = tail.sum(axis=-1)
    tiny = rest < 1e-290
    if np.any(tiny):
        rest = np.where(tiny, 1.0, rest)
        m = s[..., 0] - mx - np.log(rest)
        st = s[tiny][..., 1:]
        m[tiny] = s[tiny][..., 0] - _lse(st)
        soft = tail / rest[..., None]
        soft[tiny] = np.exp(st - _lse(st)[..., None])
        return m, soft
    return s[..., 0] - mx - np.log(rest), tail / rest[..., None]


def _forward(kind: str, S: np.ndarray, V: np.ndarray, batch: PrefixBatch, leak: float = 0.0
             ) -> list[_GroupState]:
    H = S.shape[0]
    flat_S = S.reshape(H, -1)
    states = []
    for g in batch.groups:
        s = flat_S[:, g.flat]
        m = rest = None
        if kind == "softmax":
            mx = s.max(axis=-1)
            e = np.exp(s - mx[..., None])
            alpha = e / e.sum(axis=-1, keepdims=True)
            if g.depth >= 1 and g.constrained.any():
                c = g.constrained
                m, rest = _log_odds(s[:, c], e[:, c], mx[:, c])
        else:
            alpha = np.maximum(s, 0.0) if leak == 0.0 else np.where(s > 0, s, leak * s)
            if g.depth >= 1 and g.constrained.any():
                m = s[:, g.constrained, 0]
        values = V[:, g.keys]
        f = np.einsum("hnj,hnjp->np", alpha, values)
        e2 = ((f - g.target) ** 2).sum(axis=1)
        states.append(_GroupState(g, s, alpha, values, f, e2, m, rest))
    return states


def bos_threshold(kind: str, max_bos_mass: float) -> float:
    """Threshold on the BOS measure ``m`` equivalent to ``α_0 <= max_bos_mass``."""
    b = as_real("max_bos_mass", max_bos_mass, minimum=0.0)
    if kind == "relu":
        return b
    if b <= 0.0:
        raise ValueError("max_bos_mass must be > 0 for softmax: its BOS weight is never 0")
    if b >= 1.0:
        return np.inf
    return float(np.log(b) - np.log1p(-b))


# ------------------------------------------------------------------ losses
def _smoothmax_weights(x: np.ndarray, tau: float) -> tuple[float, np.ndarray]:
    """``τ log Σ exp(x/τ)`` and its gradient (the softmax of ``x/τ``)."""
    z = x / tau
    lse = float(_lse(z))
    return tau * lse, np.exp(z - lse)


def _hinge2(x: np.ndarray) -> tuple[float, np.ndarray]:
    """``Σ max(0, x)²`` and its gradient."""
    h = np.maximum(x, 0.0)
    return float((h * h).sum()), 2.0 * h


def _loss_terms(
    kind: str, loss: str, states: list[_GroupState], opts: dict[str, Any]
) -> tuple[float, list[np.ndarray], list[np.ndarray | None]]:
    """The loss and its gradients in each group's ``e2`` and ``m``."""
    e2_all = np.concatenate([st.e2 for st in states])
    sizes = [st.e2.size for st in states]
    splits = np.cumsum(sizes)[:-1]
    m_parts = [st.m for st in states if st.m is not None]
    eps2 = opts["max_error"] ** 2
    e = e2_all / eps2
    grad_m_all: np.ndarray | None = None
    if loss == "mse":
        w = np.concatenate([st.group.weight for st in states])
        total = w.sum()
        value = float((w * e2_all).sum() / total)
        grad_e2 = w / total
    elif loss == "smoothmax":
        value, sw = _smoothmax_weights(e, opts["temperature"])
        grad_e2 = sw / eps2
    else:
        value, gh = _hinge2(e - (1.0 - opts["margin"]))
        grad_e2 = gh / eps2
        if loss == "sink":
            value *= opts["error_weight"]
            grad_e2 = grad_e2 * opts["error_weight"]
        if m_parts:
            m_all = np.concatenate([m.ravel() for m in m_parts])
            if loss == "sink":
                vb, grad_m_all = _smoothmax_weights(m_all, opts["temperature"])
                value += vb
            elif np.isfinite(opts["threshold"]):
                vb, gb = _hinge2(m_all - opts["threshold"] + opts["margin"])
                value += opts["bos_weight"] * vb
                grad_m_all = opts["bos_weight"] * gb
    grad_e2_parts = np.split(grad_e2, splits)
    grad_m: list[np.ndarray | None] = []
    offset = 0
    for st in states:
        if st.m is None or grad_m_all is None:
            grad_m.append(None)
            continue
        grad_m.append(grad_m_all[offset: offset + st.m.size].reshape(st.m.shape))
        offset += st.m.size
    return value, grad_e2_parts, grad_m


def _options(kind: str, loss: str, options: dict[str, Any]) -> dict[str, Any]:
    allowed = {"max_error", "max_bos_mass", "temperature", "margin", "bos_weight",
               "error_weight", "leak"}
    unknown = set(options) - allowed
    if unknown:
        raise TypeError(f"unknown objective options: {', '.join(sorted(unknown))}")
    max_error = options.get("max_error")
    opts = dict(
        max_error=1.0 if max_error is None else as_real("max_error", max_error, 0.0, strict=True),
        temperature=as_real("temperature", options.get("temperature", 0.05), 0.0, strict=True),
        margin=as_real("margin", options.get("margin", 0.0)),
        bos_weight=as_real("bos_weight", options.get("bos_weight", 1.0), minimum=0.0),
        error_weight=as_real("error_weight", options.get("error_weight", 100.0), minimum=0.0),
        leak=as_real("leak", options.get("leak", 0.0), minimum=0.0),
    )
    if opts["leak"] and kind != "relu":
        raise ValueError("leak (the negative slope of a leaky ReLU) applies to kind='relu' only")
    if loss == "penalty":
        if options.get("max_bos_mass") is None or max_error is None:
            raise ValueError("loss='penalty' needs max_error and max_bos_mass")
        opts["threshold"] = bos_threshold(kind, options["max_bos_mass"])
    if loss == "sink" and max_error is None:
        raise ValueError("loss='sink' needs max_error")
    return opts


@dataclass(frozen=True)
class BatchMeasures:
    """Float64 measures of a model on a batch: the largest error ``max ||f - y||``,
    the largest BOS mass over heads at the constrained prefixes (nan if none), and the
    largest BOS measure (log-odds for softmax, score for ReLU)."""

    max_error: float
    max_bos_mass: float
    max_bos_measure: float


# --------------------------------------------------------------- public API
def value_and_grad(
    task: TriggerTask,
    kind: str,
    A: Any,
    U: Any,
    batch: PrefixBatch,
    *,
    loss: str = "mse",
    **options: Any,
) -> tuple[float, np.ndarray, np.ndarray]:
    """The objective ``loss`` of the model ``(kind, A, U)`` on ``batch`` and its gradients.

    ``A``: ``(H, D, D)`` (or ``(D, D)``); ``U``: ``(H, p, p+3)``, ``(p, p+3)`` or
    ``None`` (fixed values ``U_fix``).  Returns ``(value, dA (H,D,D), dU (H,p,p+3))``;
    ``dU`` is the gradient in ``U`` even when the values are fixed (ignore it then).
    Options: ``max_error`` (``ε``), ``max_bos_mass``, ``temperature`` (``τ``, default
    0.05), ``margin`` (default 0), ``bos_weight`` (1), ``error_weight`` (100); see the
    module docstring for each loss.  ``leak`` (ReLU only, default 0) replaces the weights
    by a leaky ReLU ``max(s, leak·s)``: a surrogate with gradient where every score is
    negative, used by the search's first stages; the BOS measure stays ``s_0``.
    """
    value, dA, dU, _ = value_grad_measures(task, kind, A, U, batch, loss=loss, **options)
    return value, dA, dU


def value_grad_measures(
    task: TriggerTask, kind: str, A: Any, U: Any, batch: PrefixBatch, *, loss: str = "mse",
    grad_U: bool = True, **options: Any,
) -> tuple[float, np.ndarray, np.ndarray, BatchMeasures]:
    """:func:`value_and_grad` plus the :class:`BatchMeasures` of the same forward pass;
    ``grad_U=False`` skips the gradient in ``U`` (returned as zeros)."""
    choice("attention kind", kind, KINDS)
    choice("loss", loss, LOSSES)
    if not isinstance(batch, PrefixBatch):
        raise TypeError(f"batch must be a PrefixBatch, got {type(batch).__name__}")
    if batch.task != task:
        raise ValueError("batch was built for a different task")
    opts = _options(kind, loss, options)
    A, U = _as_heads(A, U, task)
    Phi, E = _tables(task)
    S = Phi @ A @ Phi.T
    V = np.einsum("hpe,ke->hkp", U, E)
    states = _forward(kind, S, V, batch, opts["leak"])
    value, grad_e2, grad_m = _loss_terms(kind, loss, states, opts)

    H, R, p = S.shape[0], S.shape[1], task.p
    G = np.zeros((H, R * R))
    dV = np.zeros(V.shape[0] * V.shape[1] * p)
    for st, ge, gm in zip(states, grad_e2, grad_m):
        g = st.group
        df = 2.0 * ge[:, None] * (st.f - g.target)  # (N, p)
        dalpha = np.einsum("np,hnjp->hnj", df, st.values)
        if grad_U:  # dV[h, b] += Σ_{n,j: key b} α_{hnj} df_n
            contrib = st.alpha[..., None] * df[None, :, None, :]  # (H, N, t+1, p)
            slots = (np.arange(H)[:, None, None, None] * V.shape[1] + g.keys[None, ..., None]) * p
            slots = slots + np.arange(p)
            dV += np.bincount(slots.ravel(), weights=contrib.ravel(), minlength=dV.size)
        if kind == "softmax":
            ds = st.alpha * (dalpha - (st.alpha * dalpha).sum(axis=-1, keepdims=True))
        else:
            ds = dalpha * np.where(st.s > 0, 1.0, opts["leak"])
        if gm is not None:
            c = g.constrained
            dm = np.zeros(gm.shape + (g.depth + 1,))
            dm[..., 0] = gm
            if kind == "softmax":
                dm[..., 1:] = -gm[..., None] * st.rest
            ds[:, c] += dm
        hflat = (np.arange(H)[:, None, None] * (R * R) + g.flat[None]).ravel()
        G += np.bincount(hflat, weights=ds.ravel(), minlength=H * R * R).reshape(H, R * R)
    G = G.reshape(H, R, R)
    dA = Phi.T @ G @ Phi
    dU = np.einsum("hkp,ke->hpe", dV.reshape(V.shape), E)
    return value, dA, dU, _measures(kind, states)


def batch_measures(task: TriggerTask, kind: str, A: Any, U: Any, batch: PrefixBatch
                   ) -> BatchMeasures:
    """The error and BOS figures of ``(kind, A, U)`` on ``batch`` (no gradients)."""
    choice("attention kind", kind, KINDS)
    A, U = _as_heads(A, U, task)
    Phi, E = _tables(task)
    S = Phi @ A @ Phi.T
    V = np.einsum("hpe,ke->hkp", U, E)
    return _measures(kind, _forward(kind, S, V, batch))


def _measures(kind: str, states: list[_GroupState]) -> BatchMeasures:
    err = float(np.sqrt(max(float(st.e2.max()) for st in states)))
    ms = [st.m for st in states if st.m is not None]
    if not ms:
        return BatchMeasures(err, float("nan"), float("nan"))
    m = float(max(float(x.max()) for x in ms))
    mass = expit(m) if kind == "softmax" else max(m, 0.0)
    return BatchMeasures(err, float(mass), m)
