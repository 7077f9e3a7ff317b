"""Smooth objectives over a batch of prefixes, with their gradients from JAX.

A causal model's output at position ``t`` depends only on the prefix ``x_0..x_t``,
so an objective over (sequence, position) pairs is an objective over distinct
prefixes weighted by their multiplicities.  The forward pass and every gradient
come from :mod:`sinkproof.autodiff` (reverse mode through the pure forward, float64
in a scoped setting); this module builds the batches and states the losses.

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

The BOS measure ``m`` is taken at the batch's constrained prefixes (``where``), chosen
by the map's properties (:func:`bos_measure_kind`), never by its name:

- maps whose weights are never 0 (softmax, sink logit, softmax1, sigmoid, gated softmax):
  the log-odds of the BOS *share* ``q = α_0 / Σ_j α_j`` (the BOS mass on the simplex),
  ``log α_0 - log Σ_{j>=1} α_j = ℓ_0 - logsumexp(ℓ_{1:t})`` with ``ℓ_j`` the log-weights
  (``s_j`` for the softmax family, whose normaliser, virtual slot and gate cancel in
  the share; ``log σ(s_j + b)`` for sigmoid).  Monotone in ``q``, computed in the log
  domain (gradient of order one even when ``1 - q`` is far below float64 resolution);
  threshold ``logit(max_bos_mass)``;
- maps with exact zeros: the BOS *weight*: ``α_0`` itself on the simplex (sparsemax,
  entmax-1.5, where it is the mass), and for ReLU and ReLU/length the BOS term before
  the ``max(0, ·)`` (``s_0``, ``s_0 / max(t, 1)``: ``α_0 <= b`` iff it is ``<= b``, for
  ``b >= 0``); threshold ``max_bos_mass``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache, partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import expit

from .._validate import as_real, choice
from ..attention import MAPS
from ..autodiff import (
    Forward,
    PaddedPrefixes,
    bos_log_odds,
    forward,
    masked_logsumexp,
    padded_size,
    x64,
)
from ..measures import explicit_prefix_blocks
from ..model import KINDS, fixed_values
from ..task import TriggerTask
from ..tasks.protocol import require

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

    def padded(self, rows: int | None = None) -> PaddedPrefixes:
        """The prefixes as one padded batch for :mod:`sinkproof.autodiff`: ``T + 1`` keys,
        ``rows`` rows (default :func:`~sinkproof.autodiff.padded_size` of the count)."""
        return _padded(self.task, self.groups, rows)

    @cached_property
    def device_data(self) -> dict[str, jax.Array]:
        """:meth:`padded` as float64 JAX arrays (made once per batch)."""
        with x64():
            return self.padded().device()

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
    require(task, "has_positions", "the prefix batch of the search")
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


def bos_measure_kind(kind: str) -> str:
    """``"log_odds"`` (of the BOS share) for maps whose weights are never 0, ``"weight"``
    for maps with exact zeros (see the module docstring)."""
    return "weight" if MAPS[kind].properties.exact_zeros else "log_odds"


def witness_measure(kind: str) -> str:
    """The BOS measure the search bounds, as the trusted checker names it: ``"weight"``
    (``α_0``; the mass on the simplex) or ``"share"`` (``α_0 / Σ_j α_j``)."""
    on_simplex = MAPS[kind].properties.on_simplex
    return "share" if bos_measure_kind(kind) == "log_odds" and not on_simplex else "weight"


def bos_threshold(kind: str, max_bos_mass: float) -> float:
    """Threshold on the BOS measure ``m`` equivalent to ``BOS measure <= max_bos_mass``."""
    b = as_real("max_bos_mass", max_bos_mass, minimum=0.0)
    if bos_measure_kind(kind) == "weight":
        return b
    if b <= 0.0:
        raise ValueError(f"max_bos_mass must be > 0 for {kind}: its BOS weight is never 0")
    if b >= 1.0:
        return np.inf
    return float(np.log(b) - np.log1p(-b))


EXTRA_PARAMETERS = ("map_params", "gate_w", "gate_c")
"""Head parameters besides ``A`` and ``U``: the map's own (e.g. a sink logit ``b``) and a gate."""


def extra_parameters(task: TriggerTask, kind: str, heads: int,
                     given: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
    """The parameters of ``heads`` heads of map ``kind`` besides ``A`` and ``U``, checked:
    ``map_params`` ``(H, P)`` when the map has parameters (default: its defaults),
    ``gate_w`` ``(H, D)`` and ``gate_c`` ``(H,)`` for a gated map (default 0)."""
    amap = MAPS[kind]
    given = {} if given is None else {k: v for k, v in given.items() if v is not None}
    unknown = set(given) - set(EXTRA_PARAMETERS)
    if unknown:
        raise TypeError(f"unknown head parameters: {', '.join(sorted(unknown))}")
    out: dict[str, np.ndarray] = {}
    if amap.param_names:
        out["map_params"] = amap.check_params(given.get("map_params"), heads).copy()
    elif "map_params" in given and np.size(given["map_params"]):
        raise ValueError(f"the {kind} map has no parameters, got map_params")
    if amap.properties.gated:
        w = np.zeros((heads, task.D)) if "gate_w" not in given else \
            np.array(given["gate_w"], dtype=float).reshape(heads, task.D)
        c = np.zeros(heads) if "gate_c" not in given else \
            np.array(given["gate_c"], dtype=float).reshape(heads)
        out.update(gate_w=w, gate_c=c)
    elif "gate_w" in given or "gate_c" in given:
        raise ValueError(f"gate_w/gate_c given, but the {kind} map has no gate")
    return out


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
    if opts["leak"] and MAPS[kind].factorisation != "sum":
        raise ValueError("leak (the negative slope of a leaky ReLU) applies to the maps "
                         "c_t max(0, s) only (relu, relu_length)")
    if loss == "penalty":
        if options.get("max_bos_mass") is None or max_error is None:
            raise ValueError("loss='penalty' needs max_error and max_bos_mass")
        opts["threshold"] = bos_threshold(kind, options["max_bos_mass"])
    if loss == "sink" and max_error is None:
        raise ValueError("loss='sink' needs max_error")
    return opts



# ---------------------------------------------------------- the JAX objective
TRACED_OPTIONS = ("max_error", "temperature", "margin", "bos_weight", "error_weight", "leak",
                  "threshold")
"""Loss options passed to the compiled objective as values (changing them does not recompile)."""


def _padded(task: TriggerTask, groups: Sequence[PrefixGroup], rows: int | None = None
            ) -> PaddedPrefixes:
    """The groups as one padded batch (rows in group order, then padding rows)."""
    K = task.T + 1
    n = sum(g.keys.shape[0] for g in groups)
    N = padded_size(n) if rows is None else rows
    if n > N:
        raise ValueError(f"rows={rows} is fewer than the batch's {n} prefixes")
    R = task.n_tokens * (task.T + 1)
    bos_row = task.bos_code * (task.T + 1)
    flat = np.zeros((N, K), dtype=np.int64)
    flat[:, 0] = bos_row * R + bos_row  # padding rows: BOS alone at position 0
    keys = np.full((N, K), task.bos_code, dtype=np.int64)
    valid = np.zeros((N, K), dtype=bool)
    valid[:, 0] = True
    depth = np.zeros(N, dtype=np.int64)
    weight, target = np.zeros(N), np.zeros((N, task.p))
    constrained, real = np.zeros(N, dtype=bool), np.zeros(N, dtype=bool)
    row = 0
    for g in groups:
        rows = slice(row, row + g.keys.shape[0])
        t = g.depth
        flat[rows, : t + 1] = g.flat
        keys[rows, : t + 1] = g.keys
        valid[rows, : t + 1] = True
        depth[rows] = t
        weight[rows], target[rows], constrained[rows] = g.weight, g.target, g.constrained
        real[rows] = True
        row = rows.stop
    return PaddedPrefixes(flat, keys, valid, depth, flat[:, 0] // R, weight, target,
                          constrained, real)


@lru_cache(maxsize=16)
def device_tables(task: TriggerTask) -> tuple[jax.Array, jax.Array]:
    """``Φ`` and ``e(x)`` as float64 JAX arrays."""
    phi, tok = _tables(task)
    with x64():
        return jnp.asarray(phi), jnp.asarray(tok)


def _bos_measure(kind: str, params: dict[str, jax.Array], fw: Forward,
                 data: dict[str, jax.Array]) -> jax.Array:
    """The BOS measure ``m`` ``(H, N)`` of :func:`bos_measure_kind`, by the map's properties."""
    amap = MAPS[kind]
    valid = data["valid"]
    if bos_measure_kind(kind) == "log_odds":
        s = fw.scores
        if amap.factorisation == "log_sum":  # sigmoid: log σ(s + b), in the log domain
            mp = params.get("map_params")
            b = 0.0 if mp is None else mp[:, 0][:, None, None]
            s = jax.nn.log_sigmoid(s + b)
        elif amap.factorisation is None:  # the map's own log-weights (stick-breaking)
            mp = params.get("map_params")
            s = amap.log_weights_jax(s, valid[None], data["depth"],
                                     None if mp is None else mp[:, None, :])
        return bos_log_odds(s, valid[None])
    if amap.factorisation == "sum":  # c_t max(s_0, 0) - c_t max(-s_0, 0) = c_t s_0
        def bos_term(s: jax.Array) -> jax.Array:
            return (amap.weights_jax(s, valid, data["depth"])
                    - amap.weights_jax(-s, valid, data["depth"]))[..., 0]
        return jax.vmap(bos_term)(fw.scores)
    return fw.weights[..., 0]


def _hinge2(x: jax.Array, mask: jax.Array) -> jax.Array:
    """``Σ_{mask} max(0, x)²`` (entries outside ``mask`` may be infinite)."""
    h = jnp.maximum(jnp.where(mask, x, 0.0), 0.0)
    return jnp.where(mask, h * h, 0.0).sum()


def objective_terms(params: dict[str, jax.Array], data: dict[str, jax.Array], phi: jax.Array,
               tokens: jax.Array, opts: dict[str, Any], kind: str, loss: str, bos_term: bool
               ) -> tuple[jax.Array, tuple[jax.Array, jax.Array]]:
    """The loss ``loss`` of the layer ``params`` on the padded batch ``data`` and
    ``(largest error², largest BOS measure)`` at its real rows: a pure JAX function
    of ``params`` (``opts``: every name of ``TRACED_OPTIONS``)."""
    fw = forward(params, data, phi, tokens, kind, opts["leak"])
    real = data["real"]
    e2 = ((fw.output - data["target"]) ** 2).sum(axis=-1)
    m = _bos_measure(kind, params, fw, data)
    c = jnp.broadcast_to(data["constrained"][None], m.shape)
    e = e2 / opts["max_error"] ** 2
    tau = opts["temperature"]
    if loss == "mse":
        w = data["weight"]
        value = (w * e2).sum() / w.sum()
    elif loss == "smoothmax":
        value = tau * masked_logsumexp(e / tau, real)
    else:
        value = _hinge2(e - (1.0 - opts["margin"]), real)
        if loss == "sink":
            smooth = tau * masked_logsumexp(jnp.where(c, m, 0.0).ravel() / tau, c.ravel())
            value = opts["error_weight"] * value + jnp.where(c.any(), smooth, 0.0)
        elif bos_term:
            value = value + opts["bos_weight"] * _hinge2(m - opts["threshold"] + opts["margin"], c)
    max_e2 = jnp.where(real, e2, -jnp.inf).max()
    max_m = jnp.where(c, m, -jnp.inf).max()
    return value, (max_e2, max_m)


@partial(jax.jit, static_argnames=("kind", "loss", "bos_term", "wrt"))
def _value_grad(diff: dict[str, jax.Array], fixed: dict[str, jax.Array],
                data: dict[str, jax.Array], phi: jax.Array, tokens: jax.Array,
                opts: dict[str, Any], *, kind: str, loss: str, bos_term: bool,
                wrt: tuple[str, ...]) -> Any:
    def f(d: dict[str, jax.Array]) -> Any:
        return objective_terms({**fixed, **d}, data, phi, tokens, opts, kind, loss, bos_term)
    return jax.value_and_grad(f, has_aux=True)(diff)


@partial(jax.jit, static_argnames=("kind",))
def _measures_only(params: dict[str, jax.Array], data: dict[str, jax.Array], phi: jax.Array,
                   tokens: jax.Array, opts: dict[str, Any], *, kind: str) -> Any:
    return objective_terms(params, data, phi, tokens, opts, kind, "mse", False)[1]


@dataclass(frozen=True)
class BatchMeasures:
    """Float64 measures of a model on a batch: the largest error ``max ||f - y||``,
    the largest BOS measure over heads at the constrained prefixes as a mass or share
    in ``[0, 1]`` (nan if none), and the largest raw BOS measure ``m`` (log-odds, or the
    BOS weight's term: :func:`bos_measure_kind`)."""

    max_error: float
    max_bos_mass: float
    max_bos_measure: float


def _batch_measures(kind: str, max_e2: Any, max_m: Any) -> BatchMeasures:
    err = float(np.sqrt(float(max_e2)))
    m = float(max_m)
    if m == -np.inf:
        return BatchMeasures(err, float("nan"), float("nan"))
    mass = expit(m) if bos_measure_kind(kind) == "log_odds" else max(m, 0.0)
    return BatchMeasures(err, float(mass), m)


def _checked(task: TriggerTask, kind: str, batch: Any) -> None:
    choice("attention kind", kind, KINDS)
    if not isinstance(batch, PrefixBatch):
        raise TypeError(f"batch must be a PrefixBatch, got {type(batch).__name__}")
    if batch.task != task:
        raise ValueError("batch was built for a different task")


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
    module docstring for each loss.  ``leak`` (ReLU and ReLU/length, default 0) replaces
    the weights by a leaky ReLU ``max(s, leak·s)`` (times ``c_t``): a surrogate with
    gradient where every score is negative, used by the search's first stages; the BOS
    measure stays ``c_t s_0``.  The map's own parameters and a gate keep their defaults
    (:func:`value_grad_params` takes and differentiates them).
    Gradients are JAX's reverse mode through :func:`sinkproof.autodiff.forward`.
    """
    value, dA, dU, _ = value_grad_measures(task, kind, A, U, batch, loss=loss, **options)
    return value, dA, dU


def value_grad_measures(
    task: TriggerTask, kind: str, A: Any, U: Any, batch: PrefixBatch, *, loss: str = "mse",
    grad_U: bool = True, **options: Any,
) -> tuple[float, np.ndarray, np.ndarray, BatchMeasures]:
    """:func:`value_and_grad` plus the :class:`BatchMeasures` of the same forward pass;
    ``grad_U=False`` skips the gradient in ``U`` (returned as zeros)."""
    A, U = _as_heads(A, U, task)
    wrt = ("A", "U") if grad_U else ("A",)
    value, grads, m = value_grad_params(task, kind, {"A": A, "U": U}, batch, loss=loss,
                                        wrt=wrt, **options)
    return value, grads["A"], grads.get("U", np.zeros_like(U)), m


def _all_parameters(task: TriggerTask, kind: str, params: dict[str, Any]
                    ) -> dict[str, np.ndarray]:
    if not isinstance(params, dict) or "A" not in params:
        raise TypeError("params must be a dict with 'A' (and optionally 'U', 'map_params', "
                        "'gate_w', 'gate_c')")
    A, U = _as_heads(params["A"], params.get("U"), task)
    extra = {k: v for k, v in params.items() if k not in ("A", "U")}
    return {"A": A, "U": U, **extra_parameters(task, kind, A.shape[0], extra)}


def value_grad_params(
    task: TriggerTask, kind: str, params: dict[str, Any], batch: PrefixBatch, *,
    loss: str = "mse", wrt: tuple[str, ...] | None = None, **options: Any,
) -> tuple[float, dict[str, np.ndarray], BatchMeasures]:
    """The objective ``loss`` of the head parameters ``params`` (``A``; optional ``U``,
    ``map_params``, ``gate_w``, ``gate_c``: :func:`extra_parameters`) on ``batch``, its
    gradient in each parameter named by ``wrt`` (default: every one the map has) and the
    :class:`BatchMeasures` of the same forward pass."""
    _checked(task, kind, batch)
    choice("loss", loss, LOSSES)
    opts = _options(kind, loss, options)
    full = _all_parameters(task, kind, params)
    wrt = tuple(full) if wrt is None else tuple(wrt)
    for name in wrt:
        if name not in full:
            raise ValueError(f"wrt: the {kind} head has no parameter {name!r} "
                             f"(it has {', '.join(full)})")
    bos_term = loss == "penalty" and bool(np.isfinite(opts["threshold"]))
    opts = {k: opts.get(k, np.inf) for k in TRACED_OPTIONS}
    phi, tokens = device_tables(task)
    with x64():
        fixed = {k: jnp.asarray(v) for k, v in full.items()}
        diff = {k: fixed.pop(k) for k in wrt}
        (value, (max_e2, max_m)), grads = _value_grad(
            diff, fixed, batch.device_data, phi, tokens, opts, kind=kind, loss=loss,
            bos_term=bos_term, wrt=wrt)
        grads = {k: np.asarray(v) for k, v in grads.items()}
        return float(value), grads, _batch_measures(kind, max_e2, max_m)


def batch_measures(task: TriggerTask, kind: str, A: Any, U: Any, batch: PrefixBatch,
                   **extra: Any) -> BatchMeasures:
    """The error and BOS figures of ``(kind, A, U)`` (and the head's ``map_params``,
    ``gate_w``, ``gate_c``, default the map's defaults) on ``batch`` (no gradients)."""
    _checked(task, kind, batch)
    full = _all_parameters(task, kind, {"A": A, "U": U, **extra})
    phi, tokens = device_tables(task)
    opts = {k: 0.0 for k in TRACED_OPTIONS} | {"max_error": 1.0, "temperature": 1.0}
    with x64():
        params = {k: jnp.asarray(v) for k, v in full.items()}
        max_e2, max_m = _measures_only(params, batch.device_data, phi, tokens, opts, kind=kind)
        return _batch_measures(kind, max_e2, max_m)
