"""Attention models as layer stacks: layers × heads, composed with or without residuals.

A **head** on input rows ``x_0..x_T`` (``x_t ∈ R^D``) computes causal scores
``s_{tj} = x_t^T A x_j`` (bilinear) or ``s_{tj} = (W_Q x_t)·(W_K x_j)`` (factored, no
``1/√d`` scaling: ``A = W_Q^T W_K``), weights ``α_t = map(s_{t,0..t})`` by an
attention map of :data:`sinkproof.attention.MAPS` (times the head's gate
``g_t = σ(w·x_t + c)`` for gated maps), values ``v_j = V x_j`` and the output
``o_t = Σ_{j<=t} α_{tj} v_j``.  Token-only values ``U e(x_j)`` are the value map
``V`` that reads the token columns of ``x_j`` only.

A **layer** combines its heads by an output map, ``W_O [o^1; …; o^H]`` with
``W_O ∈ R^{d×H·dv}``, or (``W_O = None``) by their sum ``Σ_h o^h``.  A **stack** applies
its layers in turn: ``x ← x + layer(x)`` with residual connections, ``x ← layer(x)``
without; the model's output is the last ``x``.  Every layer is causal, so the output
at ``t`` depends on ``x_0..x_t`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import as_real_array
from .attention import MAPS, AttentionMap
from .errors import SinkproofError
from .numerics import stable_norm
from .tasks.protocol import Task, require


class StackShapeError(SinkproofError, ValueError):
    """Parameters of a layer stack do not fit together or do not fit the task."""


def _matrix(name: str, value: Any, shape: tuple[int | None, ...]) -> np.ndarray:
    arr = as_real_array(name, value, ndim=len(shape))
    for want, got in zip(shape, arr.shape):
        if want is not None and want != got:
            pretty = ", ".join("*" if s is None else str(s) for s in shape)
            raise StackShapeError(f"{name} must have shape ({pretty}), got {arr.shape}")
    arr.setflags(write=False)
    return arr


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -z))


@dataclass(frozen=True, eq=False)
class Head:
    """One head: scores (``A`` or ``W_Q, W_K``), a map, a value map ``V`` and a gate.

    ``A`` ``(D, D)``; or ``W_Q, W_K`` ``(d_k, D)``.  ``V`` ``(d_v, D)``.  ``map_params``
    ``(P,)`` (the map's defaults when omitted); ``gate_w`` ``(D,)`` and ``gate_c`` for
    gated maps only (default 0, a gate of 1/2).  Build with :meth:`make`.
    """

    map: AttentionMap
    V: np.ndarray
    A: np.ndarray | None = None
    W_Q: np.ndarray | None = None
    W_K: np.ndarray | None = None
    map_params: np.ndarray | None = None
    gate_w: np.ndarray | None = None
    gate_c: float = 0.0

    @classmethod
    def make(cls, kind: str | AttentionMap, D: int, V: Any, *, A: Any = None, W_Q: Any = None,
             W_K: Any = None, map_params: Any = None, gate_w: Any = None,
             gate_c: Any = None) -> Head:
        """A checked head on ``D``-dimensional input rows (arrays are copied, read-only)."""
        amap = kind if isinstance(kind, AttentionMap) else _get_map(kind)
        V = _matrix("V", V, (None, D))
        if (A is None) == (W_Q is None and W_K is None):
            raise StackShapeError("a head needs either A or both W_Q and W_K")
        if A is not None:
            A = _matrix("A", A, (D, D))
        else:
            if W_Q is None or W_K is None:
                raise StackShapeError("a factored head needs both W_Q and W_K")
            W_Q = _matrix("W_Q", W_Q, (None, D))
            W_K = _matrix("W_K", W_K, (W_Q.shape[0], D))
        params = amap.check_params(map_params, 1)[0].copy()
        params.setflags(write=False)
        if amap.properties.gated:
            gw = np.zeros(D) if gate_w is None else _matrix("gate_w", gate_w, (D,))
            gc = 0.0 if gate_c is None else float(_matrix("gate_c", gate_c, ()))
        elif gate_w is not None or gate_c is not None:
            raise StackShapeError(f"gate_w/gate_c given, but the {amap.name} map has no gate")
        else:
            gw, gc = None, 0.0
        return cls(amap, V, A, W_Q, W_K, params, gw, gc)

    @property
    def D(self) -> int:
        """Input dimension."""
        return self.V.shape[1]

    @property
    def dv(self) -> int:
        """Value dimension."""
        return self.V.shape[0]

    @property
    def score_matrix(self) -> np.ndarray:
        """``A`` (bilinear) or ``W_Q^T W_K`` (factored)."""
        return self.A if self.A is not None else self.W_Q.T @ self.W_K

    def scores(self, x: np.ndarray) -> np.ndarray:
        """Scores ``s_{tj}`` for every pair, ``(N, T, T)`` (not yet masked)."""
        if self.A is not None:
            return (x @ self.A) @ np.swapaxes(x, -1, -2)
        return (x @ self.W_Q.T) @ np.swapaxes(x @ self.W_K.T, -1, -2)

    def gate(self, x: np.ndarray) -> np.ndarray | None:
        """``g_t = σ(w·x_t + c)`` per row ``(N, T)``, or ``None`` for an ungated map."""
        return None if self.gate_w is None else _sigmoid(x @ self.gate_w + self.gate_c)


@dataclass(frozen=True, eq=False)
class Layer:
    """Heads and an output map ``W_O`` ``(d_out, H·d_v)`` (``None``: the heads' outputs summed)."""

    heads: tuple[Head, ...]
    W_O: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not self.heads:
            raise StackShapeError("a layer needs at least one head")
        D = self.heads[0].D
        if any(h.D != D for h in self.heads):
            raise StackShapeError("every head of a layer must read rows of the same dimension")
        dvs = {h.dv for h in self.heads}
        if self.W_O is None:
            if len(dvs) != 1:
                raise StackShapeError("heads summed without W_O must share one value dimension")
        else:
            W_O = _matrix("W_O", self.W_O, (None, sum(h.dv for h in self.heads)))
            object.__setattr__(self, "W_O", W_O)

    @property
    def D(self) -> int:
        """Input dimension."""
        return self.heads[0].D

    @property
    def out_dim(self) -> int:
        """Output dimension."""
        return self.heads[0].dv if self.W_O is None else self.W_O.shape[0]

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Output ``(N, T, d_out)``, effective weights ``(H, N, T, T)`` (gated maps: ``g_t α_t``,
        0 above the diagonal) and ``log Σ_{j>=1} α_tj`` ``(H, N, T)`` (log domain)."""
        N, T, _ = x.shape
        H = len(self.heads)
        causal = np.tril(np.ones((T, T), dtype=bool))
        w = np.empty((H, N, T, T))
        lnb = np.empty((H, N, T))
        t = np.tile(np.arange(T), N)
        for name in dict.fromkeys(h.map.name for h in self.heads):
            idx = [i for i, h in enumerate(self.heads) if h.map.name == name]
            s = np.stack([self.heads[i].scores(x) for i in idx])  # (h, N, T, T)
            s = np.where(causal, s, -np.inf).reshape(len(idx), N * T, T)
            params = np.stack([self.heads[i].map_params for i in idx])
            wi, li = self.heads[idx[0]].map.weights(s, t, params)
            w[idx] = wi.reshape(len(idx), N, T, T)
            lnb[idx] = li.reshape(len(idx), N, T)
        outs = []
        for i, head in enumerate(self.heads):
            g = head.gate(x)
            if g is not None:
                w[i] *= g[..., None]
                lnb[i] += np.log(g)
            outs.append(w[i] @ (x @ head.V.T))  # (N, T, dv)
        if self.W_O is None:
            out = np.sum(outs, axis=0)
        else:
            out = np.concatenate(outs, axis=-1) @ self.W_O.T
        return out, w, lnb


def _small_norm(v: np.ndarray, eta: float) -> np.ndarray:
    """``stable_norm(v) <= eta`` along the last axis, the norm taken only where the largest
    entry is ``<= eta`` (elsewhere the norm exceeds ``eta``: it is at least that entry)."""
    small = np.abs(v).max(axis=-1, initial=0.0) <= eta
    if small.any():
        small[small] = stable_norm(v[small]) <= eta
    return small


def _get_map(kind: Any) -> AttentionMap:
    if not isinstance(kind, str) or kind not in MAPS:
        raise ValueError(f"unknown attention kind {kind!r}; expected one of {', '.join(MAPS)}")
    return MAPS[kind]


@dataclass(frozen=True)
class StackForward:
    """A batched forward: ``out`` ``(N, T, out_dim)``; per layer and head the effective
    weights ``w`` ``(layers, H, N, T, T)`` and ``log_nonbos`` ``(layers, H, N, T)``."""

    out: np.ndarray
    w: np.ndarray
    log_nonbos: np.ndarray
    null_keys: np.ndarray | None = None
    """On request (``null_eta``), per layer, head and key ``(layers, H, N, T)``: the value
    ``v_j = V_h x_j`` (``x`` the layer's input) has norm ``<= null_eta`` (the null keys
    of the null mass)."""


class StackModel:
    """A causal attention model of ``len(layers)`` layers on a task: the one model type.

    :class:`~sinkproof.model.AttentionModel` is its one-layer constructor (token-only
    values, heads summed) with the same results and its own one-layer API.

    ``residual``: ``x ← x + layer(x)`` (each layer's output dimension equals its input's)
    or ``x ← layer(x)``.  The last output has the task's ``out_dim``.
    """

    def __init__(self, task: Task, layers: Sequence[Layer], residual: bool = False) -> None:
        if not isinstance(task, Task):
            raise TypeError(f"task must implement the task protocol, got {type(task).__name__}")
        layers = tuple(layers)
        if not layers or not all(isinstance(layer, Layer) for layer in layers):
            raise StackShapeError("a stack needs at least one Layer")
        dim = task.D
        for i, layer in enumerate(layers):
            if dim != layer.D:
                raise StackShapeError(f"layer {i} reads rows of dimension {layer.D}, "
                                      f"but its input has dimension {dim}")
            if residual and layer.out_dim != dim:
                raise StackShapeError(f"layer {i}: a residual layer must keep the dimension "
                                      f"{dim}, its output has {layer.out_dim}")
            dim = dim if residual else layer.out_dim
        if dim != task.out_dim:
            raise StackShapeError(f"the stack outputs dimension {dim}, "
                                  f"the task's targets have {task.out_dim}")
        self.task = task
        self.layers = layers
        self.residual = bool(residual)

    # ------------------------------------------------------------ properties
    @property
    def n_layers(self) -> int:
        """Number of layers."""
        return len(self.layers)

    @property
    def H(self) -> int:
        """Heads per layer (the largest, if layers differ)."""
        return max(len(layer.heads) for layer in self.layers)

    @property
    def kind(self) -> str:
        """The attention map's name when every head uses the same map, else ``"mixed"``."""
        names = {h.map.name for layer in self.layers for h in layer.heads}
        return names.pop() if len(names) == 1 else "mixed"

    @property
    def attention_map(self) -> AttentionMap:
        """The one map of every head (an error for mixed stacks)."""
        if self.kind == "mixed":
            raise ValueError("the heads of this stack use different attention maps")
        return MAPS[self.kind]

    # --------------------------------------------------------------- forward
    def forward_batch(self, x: Any, *, null_eta: float | None = None) -> StackForward:
        """Run the stack on ``N`` sequences of input rows ``x`` ``(N, T, D)``;
        ``null_eta``: also mark the keys whose value has norm ``<= null_eta``."""
        x = as_real_array("x", x, ndim=3)
        if x.shape[2] != self.task.D:
            raise StackShapeError(f"x must have {self.task.D} columns, got shape {x.shape}")
        if x.shape[1] == 0:
            raise StackShapeError("x must hold at least one position (BOS)")
        N, T, _ = x.shape
        w = np.zeros((self.n_layers, self.H, N, T, T))
        lnb = np.full((self.n_layers, self.H, N, T), -np.inf)
        null = None if null_eta is None else np.ones((self.n_layers, self.H, N, T), dtype=bool)
        for i, layer in enumerate(self.layers):
            if null is not None:
                for h, head in enumerate(layer.heads):
                    null[i, h] = _small_norm(x @ head.V.T, null_eta)
            out, wi, li = layer.forward(x)
            w[i, : wi.shape[0]] = wi
            lnb[i, : li.shape[0]] = li
            x = x + out if self.residual else out
        return StackForward(x, w, lnb, null)

    def forward_rows(self, x: Any) -> tuple[np.ndarray, np.ndarray]:
        """One sequence of input rows ``x`` ``(T, D)`` (the paper's setting: the token
        matrix ``(L, n)``): output ``(T, out_dim)`` and weights ``(layers, H, T, T)``."""
        x = as_real_array("x", x, ndim=2)
        fw = self.forward_batch(x[None])
        return fw.out[0], fw.w[:, :, 0]

    def forward(self, x: Any) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`forward_rows` (a one-layer :class:`~sinkproof.model.AttentionModel` keeps
        its own ``forward(seq)``: outputs ``(n+1, p)`` and weights ``(H, n+1, n+1)``)."""
        return self.forward_rows(x)

    def run(self, seq: Any) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`forward_rows` on a user-facing sequence of the task (its input rows)."""
        return self.forward_rows(self.task.features(seq))

    @property
    def tabulated(self) -> bool:
        """Every score and value is a lookup in a table of (token, position) pairs: one
        layer, token-only values, bilinear scores on the task's rows (the one-layer
        :class:`~sinkproof.model.AttentionModel`).  The prefix kernels
        (:mod:`sinkproof.kernel`, :mod:`sinkproof.treekernel`) ask this capability."""
        return False

    def __repr__(self) -> str:
        return (f"StackModel({self.kind}, layers={self.n_layers}, H={self.H}, "
                f"residual={self.residual}, task={self.task!r})")


def from_attention_model(model: Any) -> StackModel:
    """The one-layer stack of an :class:`~sinkproof.model.AttentionModel` as a plain
    :class:`StackModel` (an ``AttentionModel`` already is one: this drops its one-layer API).
    Bilinear scores ``A_h``, token-only values ``U_h``, heads summed."""
    return StackModel(model.task, model.layers, residual=False)


def one_layer(task: Task, kind: str | AttentionMap, A: np.ndarray, U: np.ndarray,
              map_params: np.ndarray | None, gate_w: np.ndarray | None,
              gate_c: np.ndarray | None) -> tuple[Layer, ...]:
    """The layer of ``H`` heads with scores ``A_h`` ``(D, D)`` and token-only values ``U_h``
    ``(p, p+3)`` (a value map reading the token columns of the task's rows), heads summed."""
    amap = kind if isinstance(kind, AttentionMap) else _get_map(kind)
    cols = task.token_columns
    heads = []
    for h in range(A.shape[0]):
        V = np.zeros((U.shape[1], task.D))
        V[:, cols] = U[h]
        heads.append(Head.make(
            amap, task.D, V, A=A[h],
            map_params=None if map_params is None else map_params[h],
            gate_w=None if gate_w is None else gate_w[h],
            gate_c=None if gate_c is None else gate_c[h]))
    return (Layer(tuple(heads)),)


PAPER_KINDS = ("softmax", "relu_length")
"""The maps of the paper's models (any map of ``MAPS`` is accepted, with its parameters)."""


def _paper_weights(name: str, value: Any, shape: tuple[int, ...]) -> np.ndarray:
    if value is None:
        raise TypeError(f"{name} is required")
    arr = as_real_array(name, value, ndim=len(shape))
    if arr.shape != shape:
        raise StackShapeError(f"{name} must have shape {shape} (layers, heads, n, n) / "
                              f"(layers, n, heads·n), got {arr.shape}")
    return arr


def paper_model(task: Task, kind: str = "softmax", *, W_Q: Any = None, W_K: Any = None,
                W_V: Any = None, W_O: Any = None, residual: bool | None = None,
                map_params: Any = None, gate_w: Any = None, gate_c: Any = None
                ) -> StackModel:
    """The paper's model on a paper task: every head full width, no biases, no scaling.

    ``W_Q, W_K, W_V``: ``(layers, heads, n, n)``; ``W_O``: ``(layers, n, heads·n)``.  Head
    ``h`` of layer ``l`` scores ``q_i·k_k`` with ``q = W_Q x``, ``k = W_K x``, weights them by
    ``kind`` (``"softmax"``, or ``"relu_length"``: ``max(0, s)/max(i, 1)``) and values
    ``W_V x``; the layer writes ``W_O [o^1; …; o^H]``.  ``residual`` (default: when there
    is more than one layer, as in the paper) composes ``x ← x + layer(x)``; the model's
    task then has the residual targets (``model.task.residual`` says which).  Any other
    map of ``MAPS`` may be named: its parameters ``map_params`` ``(layers, heads, P)``
    (default the map's defaults) and, for a gated map, the gate ``gate_w``
    ``(layers, heads, n)`` and ``gate_c`` ``(layers, heads)`` (default 0).
    """
    require(task, "fixed_length", "paper_model (whole token matrices, full-width heads)")
    amap = _get_map(kind)
    wq = as_real_array("W_Q", W_Q, ndim=4) if W_Q is not None else None
    if wq is None:
        raise TypeError("W_Q is required")
    layers, heads, n = wq.shape[0], wq.shape[1], task.n
    wq = _paper_weights("W_Q", wq, (layers, heads, n, n))
    wk = _paper_weights("W_K", W_K, (layers, heads, n, n))
    wv = _paper_weights("W_V", W_V, (layers, heads, n, n))
    wo = _paper_weights("W_O", W_O, (layers, n, heads * n))
    if layers == 0 or heads == 0:
        raise StackShapeError("a paper model needs at least one layer and one head")
    residual = layers > 1 if residual is None else bool(residual)
    if task.residual != residual:
        task = task.replace(residual=residual)
    P = len(amap.param_names)
    mp = None if map_params is None else _paper_weights("map_params", map_params,
                                                        (layers, heads, P))
    gated = amap.properties.gated
    if not gated and (gate_w is not None or gate_c is not None):
        raise StackShapeError(f"gate_w/gate_c given, but the {amap.name} map has no gate")
    gw = None if gate_w is None else _paper_weights("gate_w", gate_w, (layers, heads, n))
    gc = None if gate_c is None else _paper_weights("gate_c", gate_c, (layers, heads))

    def head(l: int, h: int) -> Head:
        return Head.make(amap, n, wv[l, h], W_Q=wq[l, h], W_K=wk[l, h],
                         map_params=None if mp is None else mp[l, h],
                         gate_w=None if gw is None else gw[l, h],
                         gate_c=None if gc is None else gc[l, h])

    stack = [Layer(tuple(head(l, h) for h in range(heads)), wo[l]) for l in range(layers)]
    return StackModel(task, stack, residual=residual)
