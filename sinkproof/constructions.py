"""The explicit constructions of docs/theory.md section 4 (Theorems 4 and 5).

Feature layout of ``φ = [e(x); π(t)]``: content ``0..p-1``, ``is_content`` ``p``,
``is_trigger`` ``p+1``, ``is_bos`` ``p+2``, then the positional block from ``p+3``.
"""

from __future__ import annotations

import numpy as np

from ._validate import as_real
from .model import AttentionModel
from .task import TriggerTask, inverse_position_ratio


def feature_index(task: TriggerTask, name: str, t: int | None = None) -> int:
    """Column of a named feature in ``φ``: ``content``, ``is_content``, ``is_trigger``,
    ``is_bos``, ``bias`` / ``ratio`` (inverse scheme), ``bias`` (none), ``position`` (onehot, t)."""
    p = task.p
    fixed = {"content": 0, "is_content": p, "is_trigger": p + 1, "is_bos": p + 2}
    if name in fixed:
        return fixed[name]
    if task.positions == "inverse" and name in ("bias", "ratio"):
        return p + 3 + (name == "ratio")
    if task.positions == "none" and name == "bias":
        return p + 3
    if task.positions == "onehot" and name == "position" and t is not None and 0 <= t <= task.T:
        return p + 3 + t
    raise ValueError(f"feature {name!r} does not exist with positions={task.positions!r}")


def relu_query_key(task: TriggerTask) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 4's rank-one factors ``a, b`` with ``A = a b^T``:
    ``s_{tj} = (r_t - is_content_t) · (is_content_j + is_trigger_j)``."""
    D = task.D
    a, b = np.zeros(D), np.zeros(D)
    a[feature_index(task, "is_content")] = -1.0
    if task.positions == "inverse":
        a[feature_index(task, "ratio")] = 1.0
    elif task.positions == "onehot":
        for t in range(task.T + 1):
            a[feature_index(task, "position", t)] = float(inverse_position_ratio(t))
    else:
        raise ValueError(
            "the ReLU construction (Theorem 4) needs positional information: "
            "use positions='inverse' or 'onehot'"
        )
    b[feature_index(task, "is_content")] = 1.0
    b[feature_index(task, "is_trigger")] = 1.0
    return a, b


def relu_solution(task: TriggerTask) -> AttentionModel:
    """Theorem 4: one ReLU head, fixed values, zero error and zero BOS weight everywhere.

    ``||A||_2 = 2`` with the inverse scheme.
    """
    a, b = relu_query_key(task)
    return AttentionModel(task, kind="relu", A=np.outer(a, b), U=None)


def softmax_score_matrix(task: TriggerTask, L: float) -> np.ndarray:
    """Theorem 5's score matrix: content queries score ``+L`` on BOS; the trigger query
    scores ``-L`` on BOS and on trigger keys (0 on content keys)."""
    L = as_real("L", L, minimum=0.0)
    i_c = feature_index(task, "is_content")
    i_t = feature_index(task, "is_trigger")
    i_b = feature_index(task, "is_bos")
    A = np.zeros((task.D, task.D))
    A[i_c, i_b] = L
    A[i_t, i_b] = -L
    A[i_t, i_t] = -L
    return A


def softmax_solution(task: TriggerTask, L: float) -> AttentionModel:
    """Theorem 5's softmax head with fixed values: error ``O(T e^{-L})``, ``||A||_2 = φ·L``
    (``φ`` the golden ratio), BOS mass ``e^L / (e^L + t)`` at a content position ``t``."""
    return AttentionModel(task, kind="softmax", A=softmax_score_matrix(task, L), U=None)
