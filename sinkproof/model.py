"""One causal attention layer with token-only values (THEORY.md section 2).

Scores ``s^h_{tj} = φ_t^T A_h φ_j``; weights are the softmax over ``j <= t`` or
the (non-normalised) ReLU ``max(0, s)``; values ``v^h_j = U_h e(x_j)``; the output
is ``f_t = Σ_h Σ_{j<=t} α^h_{tj} v^h_j``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._validate import as_real_array, choice
from .numerics import logsumexp
from .task import TriggerTask

KINDS = ("softmax", "relu")


def fixed_values(p: int) -> np.ndarray:
    """``U_fix = [I_p 0 0 0]``: the value of a token is its content vector."""
    U = np.zeros((p, p + 3))
    U[:, :p] = np.eye(p)
    return U


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


class AttentionModel:
    """A single-layer, ``H``-head causal attention model on a :class:`TriggerTask`.

    ``A``: ``(H, D, D)`` or ``(D, D)`` score matrices.  ``U``: ``(H, p, p+3)`` or
    ``(p, p+3)`` value maps; ``None`` means fixed values ``U_fix`` in every head.
    The arrays are copied and stored read-only.
    """

    def __init__(
        self, task: TriggerTask, kind: str = "softmax", A: Any = None, U: Any = None
    ) -> None:
        if not isinstance(task, TriggerTask):
            raise TypeError(f"task must be a TriggerTask, got {type(task).__name__}")
        self.task = task
        self.kind = choice("attention kind", kind, KINDS)
        if A is None:
            raise TypeError("A (the score matrices) is required")
        A = _heads("A", A, (task.D, task.D))
        if U is None:
            U = np.broadcast_to(fixed_values(task.p), (A.shape[0], task.p, task.p + 3)).copy()
        else:
            U = _heads("U", U, (task.p, task.p + 3))
        if U.shape[0] != A.shape[0]:
            raise ValueError(f"A has {A.shape[0]} heads but U has {U.shape[0]}")
        A.setflags(write=False)
        U.setflags(write=False)
        self.A = A
        self.U = U
        self._score_table: np.ndarray | None = None

    # ------------------------------------------------------------ properties
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

    # --------------------------------------------------------------- forward
    def scores(self, seq: Sequence[int]) -> np.ndarray:
        """Causal score matrices ``(H, n+1, n+1)``; entries above the diagonal are ``-inf``."""
        phi = self.task.features(seq)
        s = phi @ self.A @ phi.T
        mask = np.triu(np.ones(s.shape[1:], dtype=bool), k=1)
        s[:, mask] = -np.inf
        return s

    def weights_from_scores(self, s: np.ndarray) -> np.ndarray:
        """Attention weights for causal scores (``-inf`` marks masked entries)."""
        if self.kind == "relu":
            return np.where(np.isfinite(s), np.maximum(s, 0.0), 0.0)
        m = s.max(axis=-1, keepdims=True)
        e = np.exp(s - m)
        return e / e.sum(axis=-1, keepdims=True)

    def forward(self, seq: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Outputs ``f_0..f_n`` ``(n+1, p)`` and per-head weights ``(H, n+1, n+1)``."""
        codes = np.concatenate([[self.task.bos_code], self.task.encode(seq)])
        w = self.weights_from_scores(self.scores(seq))
        v = self.value_table[:, codes]  # (H, n+1, p)
        out = np.einsum("htj,hjp->tp", w, v)
        return out, w

    def log_nonbos(self, seq: Sequence[int]) -> np.ndarray:
        """``log(1 - α^h_{t0})`` per head and position ``(H, n+1)``, in the log domain.

        Softmax: ``logsumexp(s_{t,1:t}) - logsumexp(s_{t,0:t})``, finite even when
        ``1 - α_{t0}`` is far below float64 resolution of ``α_{t0}``.  ReLU: the log
        of the total non-BOS weight.  Position 0 has no non-BOS key: ``-inf``.
        """
        s = self.scores(seq)
        out = np.full(s.shape[:2], -np.inf)
        if self.kind == "softmax":
            out[:, 1:] = logsumexp(s[:, 1:, 1:], axis=-1) - logsumexp(s[:, 1:, :], axis=-1)
        else:
            with np.errstate(divide="ignore"):
                w = self.weights_from_scores(s)
                out[:, 1:] = np.log(w[:, 1:, 1:].sum(axis=-1))
        return out

    def bos_mass(self, seq: Sequence[int]) -> np.ndarray:
        """``α^h_{t0}`` per head and position ``(H, n+1)``."""
        return self.forward(seq)[1][:, :, 0]

    # ------------------------------------------------------------- utilities
    def replace(self, **changes: Any) -> AttentionModel:
        """A copy with some of ``task``, ``kind``, ``A``, ``U`` changed."""
        args = dict(task=self.task, kind=self.kind, A=self.A, U=self.U)
        args.update(changes)
        return AttentionModel(**args)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly parameters (floats written with full precision)."""
        return dict(
            task=self.task.describe(), kind=self.kind, A=self.A.tolist(), U=self.U.tolist()
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AttentionModel:
        """Inverse of :meth:`to_dict`."""
        if not isinstance(d, dict) or not {"task", "kind", "A"} <= set(d):
            raise ValueError("a model description needs 'task', 'kind' and 'A'")
        return cls(TriggerTask.from_description(d["task"]), d["kind"], d["A"], d.get("U"))

    def __repr__(self) -> str:
        return (
            f"AttentionModel({self.kind}, H={self.H}, values={self.values}, "
            f"||A||_2={np.array2string(self.spectral_norms, precision=4)}, task={self.task!r})"
        )
