"""One causal attention layer with token-only values (docs/theory.md section 2).

Scores ``s^h_{tj} = φ_t^T A_h φ_j``; weights ``α^h_t`` are an attention map of the
scores over ``j <= t`` (softmax, ReLU ``max(0, s)``, ...: :mod:`sinkproof.attention`);
values ``v^h_j = U_h e(x_j)``; the output is ``f_t = Σ_h g^h_t Σ_{j<=t} α^h_{tj} v^h_j``,
where the gate ``g^h_t = σ(w_h·φ_t + c_h)`` is present for gated maps only (else 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._validate import as_real_array
from .attention import MAPS, AttentionMap, get_map
from .stack import Layer, StackModel, one_layer
from .task import TriggerTask
from .tasks.protocol import require

KINDS = tuple(MAPS)
"""The kinds that search and training support: every map of ``MAPS``."""


def fixed_values(p: int) -> np.ndarray:
    """``U_fix = [I_p 0 0 0]``: the value of a token is its content vector."""
    U = np.zeros((p, p + 3))
    U[:, :p] = np.eye(p)
    return U


def _gate(amap: AttentionMap, H: int, D: int, gate_w: Any, gate_c: Any
          ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Checked gate parameters ``(H, D)``, ``(H,)`` for a gated map; ``None`` otherwise."""
    if not amap.properties.gated:
        if gate_w is not None or gate_c is not None:
            raise ValueError(f"gate_w/gate_c given, but the {amap.name} map has no gate")
        return None, None
    w = np.zeros((H, D)) if gate_w is None else as_real_array("gate_w", gate_w, ndim=(1, 2))
    if w.ndim == 1:
        w = np.broadcast_to(w, (H, w.shape[0])).copy()
    if w.shape != (H, D):
        raise ValueError(f"gate_w must have shape ({H}, {D}), got {w.shape}")
    c = np.zeros(H) if gate_c is None else as_real_array("gate_c", gate_c, ndim=(0, 1))
    c = np.broadcast_to(c, (H,)).copy() if c.ndim == 0 or c.shape == (1,) else c
    if c.shape != (H,):
        raise ValueError(f"gate_c must have shape ({H},), got {c.shape}")
    return w, c


def _heads(name: str, value: Any, shape: tuple[int, int]) -> np.ndarray:
    arr = as_real_array(name, value, ndim=(2, 3))
    if arr.ndim == 2:
        arr = arr[None]
    if arr.shape[1:] != shape:
        raise ValueError(
            f"{name} must have shape (H, {shape[0]}, {shape[1]}) or {shape}, got {arr.shape}"
        )
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one head")
    return arr


class AttentionModel(StackModel):
    """A single-layer, ``H``-head causal attention model on a :class:`TriggerTask`.

    The one-layer constructor of :class:`~sinkproof.stack.StackModel` (one layer, token-only
    values, heads summed: ``layers``, ``forward_batch``, ``run`` work as on any stack), with
    the one-layer API below: ``forward(seq)``, the score and value tables that the prefix
    kernels read (``tabulated``), ``A``/``U`` per head.

    ``kind``: the attention map, any name in :data:`sinkproof.attention.MAPS`.
    ``A``: ``(H, D, D)`` or ``(D, D)`` score matrices.  ``U``: ``(H, p, p+3)`` or
    ``(p, p+3)`` value maps; ``None`` means fixed values ``U_fix`` in every head.
    ``map_params``: ``(H, P)`` parameters of the map (e.g. the sink logit ``b``;
    default: the map's defaults).  For gated maps, ``gate_w`` ``(H, D)`` and
    ``gate_c`` ``(H,)`` give the gate ``g_t = σ(w·φ_t + c)`` (default 0: ``g = 1/2``).
    The arrays are copied and stored read-only.
    """

    def __init__(
        self, task: TriggerTask, kind: str = "softmax", A: Any = None, U: Any = None, *,
        map_params: Any = None, gate_w: Any = None, gate_c: Any = None,
    ) -> None:
        require(task, "has_positions", "AttentionModel (positional scores, token-only values)")
        self.task = task
        self.residual = False
        amap = get_map(kind)
        self._kind = amap.name
        if A is None:
            raise TypeError("A (the score matrices) is required")
        A = _heads("A", A, (task.D, task.D))
        if U is None:
            U = np.broadcast_to(fixed_values(task.p), (A.shape[0], task.p, task.p + 3)).copy()
        else:
            U = _heads("U", U, (task.p, task.p + 3))
        if U.shape[0] != A.shape[0]:
            raise ValueError(f"A has {A.shape[0]} heads but U has {U.shape[0]}")
        params = amap.check_params(map_params, A.shape[0]).copy()
        self.gate_w, self.gate_c = _gate(amap, A.shape[0], task.D, gate_w, gate_c)
        for arr in (A, U, params, self.gate_w, self.gate_c):
            if arr is not None:
                arr.setflags(write=False)
        self.A = A
        self.U = U
        self.map_params = params
        self._score_table: np.ndarray | None = None
        self._gate_table: np.ndarray | None = None
        self._layers: tuple[Layer, ...] | None = None

    # ------------------------------------------------------------ properties
    @property
    def kind(self) -> str:
        """The attention map's name (every head's)."""
        return self._kind

    @property
    def layers(self) -> tuple[Layer, ...]:
        """The stack's one layer: heads with scores ``A_h`` and values ``U_h`` on the
        token columns, summed (built on first use)."""
        if self._layers is None:
            self._layers = one_layer(self.task, self.attention_map, self.A, self.U,
                                     self.map_params, self.gate_w, self.gate_c)
        return self._layers

    @property
    def tabulated(self) -> bool:
        """Scores and values are lookups in the score and value tables (always, here)."""
        return True

    @property
    def attention_map(self) -> AttentionMap:
        """The map turning scores into weights (its ``properties`` state the mathematics)."""
        return MAPS[self.kind]

    @property
    def H(self) -> int:
        """Number of heads."""
        return self.A.shape[0]

    @property
    def values(self) -> str:
        """``"fixed"`` when every head uses ``U_fix``, else ``"learned"``."""
        return "fixed" if np.array_equal(self.U, np.broadcast_to(
            fixed_values(self.task.p), self.U.shape)) else "learned"

    @property
    def spectral_norms(self) -> np.ndarray:
        """``||A_h||_2`` per head."""
        return np.array([np.linalg.norm(a, 2) for a in self.A])

    @property
    def norm(self) -> float:
        """Largest spectral norm over heads (the ``B`` of Theorem 5)."""
        return float(self.spectral_norms.max())

    @property
    def value_table(self) -> np.ndarray:
        """``v^h(x) = U_h e(x)`` for every token code, shape ``(H, k+2, p)``."""
        return np.einsum("hpe,ke->hkp", self.U, self.task.token_table)

    @property
    def score_table(self) -> np.ndarray:
        """``s^h(a, t, b, j)`` for token codes a, b and positions t, j: ``(H, k+2, T+1, k+2, T+1)``.

        A logit depends only on (query token, its position, key token, its position),
        so this table holds every score the model can produce on the task.
        """
        if self._score_table is None:
            task = self.task
            tok, pos = task.token_table, task.position_table
            phi = np.concatenate(
                [np.repeat(tok, task.T + 1, axis=0), np.tile(pos, (task.n_tokens, 1))], axis=1
            )  # rows ordered (code, position)
            s = phi @ self.A @ phi.T  # (H, rows, rows)
            shape = (self.H, task.n_tokens, task.T + 1, task.n_tokens, task.T + 1)
            table = s.reshape(shape)
            table.setflags(write=False)
            self._score_table = table
        return self._score_table

    @property
    def gate_table(self) -> np.ndarray | None:
        """``g^h(a, t) = σ(w_h·φ)`` for query token code a at position t: ``(H, k+2, T+1)``.

        ``None`` for maps without a gate.
        """
        if self.gate_w is None:
            return None
        if self._gate_table is None:
            task = self.task
            d = task.token_table.shape[1]
            z = (np.einsum("hd,kd->hk", self.gate_w[:, :d], task.token_table)[:, :, None]
                 + np.einsum("hd,td->ht", self.gate_w[:, d:], task.position_table)[:, None, :]
                 + self.gate_c[:, None, None])
            table = np.exp(-np.logaddexp(0.0, -z))
            table.setflags(write=False)
            self._gate_table = table
        return self._gate_table

    # --------------------------------------------------------------- forward
    def scores(self, seq: Sequence[int]) -> np.ndarray:
        """Causal score matrices ``(H, n+1, n+1)``; entries above the diagonal are ``-inf``."""
        phi = self.task.features(seq)
        s = phi @ self.A @ phi.T
        mask = np.triu(np.ones(s.shape[1:], dtype=bool), k=1)
        s[:, mask] = -np.inf
        return s

    def _gated(self, w: np.ndarray, log_nonbos: np.ndarray, gate: np.ndarray | None
               ) -> tuple[np.ndarray, np.ndarray]:
        """Effective weights ``g_t·α_t`` and ``log(g_t Σ_{j>=1} α_tj)``; ``gate`` ``(H, N)``."""
        if gate is None:
            return w, log_nonbos
        return w * gate[..., None], log_nonbos + np.log(gate)

    def _causal_gate(self, seq: Sequence[int]) -> np.ndarray | None:
        """``g^h_t`` at every position of ``seq`` ``(H, n+1)``; ``None`` without a gate."""
        gate = self.gate_table
        if gate is None:
            return None
        codes = np.concatenate([[self.task.bos_code], self.task.encode(seq)])
        return gate[:, codes, np.arange(codes.size)]

    def _causal_weights(self, seq: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        s = self.scores(seq)
        w, lnb = self.attention_map.weights(s, np.arange(s.shape[1]), self.map_params)
        return self._gated(w, lnb, self._causal_gate(seq))

    def weights_from_scores(self, s: np.ndarray) -> np.ndarray:
        """Attention weights (before any gate) for causal scores ``(H, n+1, n+1)``
        (``-inf`` marks masked entries; row ``t`` is the query at position ``t``)."""
        return self.attention_map.weights_only(s, np.arange(s.shape[1]), self.map_params)

    def forward(self, seq: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Outputs ``f_0..f_n`` ``(n+1, p)`` and per-head effective weights ``(H, n+1, n+1)``
        (gated maps: ``g_t·α_t``)."""
        codes = np.concatenate([[self.task.bos_code], self.task.encode(seq)])
        w = self.weights_from_scores(self.scores(seq))
        gate = self._causal_gate(seq)
        if gate is not None:
            w = w * gate[..., None]
        v = self.value_table[:, codes]  # (H, n+1, p)
        out = np.einsum("htj,hjp->tp", w, v)
        return out, w

    def log_nonbos(self, seq: Sequence[int]) -> np.ndarray:
        """``log Σ_{j>=1} α^h_{tj}`` per head and position ``(H, n+1)``, in the log domain.

        On the simplex this is ``log(1 - α_{t0})`` (softmax:
        ``logsumexp(s_{t,1:t}) - logsumexp(s_{t,0:t})``), finite even when
        ``1 - α_{t0}`` is far below float64 resolution of ``α_{t0}``.  Position 0
        has no non-BOS key: ``-inf``.
        """
        out = self._causal_weights(seq)[1].copy()
        out[:, 0] = -np.inf
        return out

    def bos_mass(self, seq: Sequence[int]) -> np.ndarray:
        """``α^h_{t0}`` per head and position ``(H, n+1)``."""
        return self.forward(seq)[1][:, :, 0]

    # ------------------------------------------------------------- utilities
    def replace(self, **changes: Any) -> AttentionModel:
        """A copy with some of ``task``, ``kind``, ``A``, ``U``, ``map_params``, ``gate_w``,
        ``gate_c`` changed.  A new ``kind`` starts from its own default parameters."""
        args: dict[str, Any] = dict(task=self.task, kind=self.kind, A=self.A, U=self.U)
        if changes.get("kind", self.kind) == self.kind:
            args.update(map_params=self.map_params, gate_w=self.gate_w, gate_c=self.gate_c)
        args.update(changes)
        return AttentionModel(**args)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly parameters (floats written with full precision)."""
        d: dict[str, Any] = dict(
            task=self.task.describe(), kind=self.kind, A=self.A.tolist(), U=self.U.tolist()
        )
        if self.map_params.shape[1]:
            d["map_params"] = self.map_params.tolist()
        if self.gate_w is not None:
            d["gate_w"] = self.gate_w.tolist()
            d["gate_c"] = self.gate_c.tolist()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AttentionModel:
        """Inverse of :meth:`to_dict`."""
        if not isinstance(d, dict) or not {"task", "kind", "A"} <= set(d):
            raise ValueError("a model description needs 'task', 'kind' and 'A'")
        return cls(TriggerTask.from_description(d["task"]), d["kind"], d["A"], d.get("U"),
                   map_params=d.get("map_params"), gate_w=d.get("gate_w"),
                   gate_c=d.get("gate_c"))

    def __repr__(self) -> str:
        extra = "".join(
            f", {name}={np.array2string(self.map_params[:, i], precision=4)}"
            for i, name in enumerate(self.attention_map.param_names))
        if self.gate_w is not None:
            extra += f", gate_c={np.array2string(self.gate_c, precision=4)}"
        return (
            f"AttentionModel({self.kind}, H={self.H}, values={self.values}, "
            f"||A||_2={np.array2string(self.spectral_norms, precision=4)}{extra}, "
            f"task={self.task!r})"
        )
