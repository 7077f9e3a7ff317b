"""The explicit constructions: Theorems 4 and 5 of docs/theory.md section 4 (our task) and
the paper's ReLU/length layer, a pair of softmax heads that cancel off the trigger (resting
on BOS or on the trigger at the trigger row), three paper-setting heads with no sink at any
row, and one fixed-value head per attention map in the paper's setting.

Feature layout of ``φ = [e(x); π(t)]``: content ``0..p-1``, ``is_content`` ``p``,
``is_trigger`` ``p+1``, ``is_bos`` ``p+2``, then the positional block from ``p+3``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ._validate import as_int, as_real, choice
from .attention import MAPS
from .model import AttentionModel, fixed_values
from .stack import StackModel, paper_model
from .task import TriggerTask, inverse_position_ratio
from .tasks.paper import BOS, TRIGGER, PaperTask


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


def trigger_sink_solution(task: TriggerTask, eps: float, bos: float = 0.01) -> AttentionModel:
    """One softmax head with fixed values that sinks on the trigger, not on BOS, once the
    trigger has been seen: Theorem 5's scores plus ``L + c`` from a content query on a
    trigger key.  The trigger's fixed value is zero, so after the trigger the head rests on
    it (BOS mass at most ``e^{-c}``); before it the head sinks on BOS as Theorem 5's does,
    and the trigger row is Theorem 5's.  ``L = ceil(log(4 (T + 2) / eps))`` (content norm
    scaled in) keeps the error ``<= eps / 4``, and ``c = ceil(log(1 / bos)) + 1`` the BOS
    mass after the trigger below ``bos``."""
    eps = float(as_real("eps", eps, minimum=0.0, strict=True))
    bos = float(as_real("bos", bos, minimum=0.0, strict=True))
    scale = max(1.0, float(np.max(np.linalg.norm(task.content, axis=1))))
    L = float(math.ceil(math.log(4.0 * (task.T + 2) * scale / eps)))
    c = float(math.ceil(math.log(1.0 / min(bos, 0.5))) + 1)
    A = softmax_score_matrix(task, L)
    A[feature_index(task, "is_content"), feature_index(task, "is_trigger")] = L + c
    return AttentionModel(task, kind="softmax", A=A, U=None)


def null_slot_scores(task: TriggerTask, L: Any, own_key_local: bool = False) -> list[list[Any]]:
    """The score matrix (``D × D``, entries ``0`` or ``±L`` of ``L``'s own type: a Fraction
    stays exact) of a head whose virtual null slot (logit 0, value 0) takes the mass a
    softmax head would put on BOS: a content query scores ``-L`` on BOS, content and trigger
    keys, so the null slot outweighs them all; a trigger query scores ``+L`` on content keys
    (and ``-L`` on trigger keys when a key's own score is local, ``own_key_local``), so it
    averages the content seen."""
    c, tr, bos = (feature_index(task, f) for f in ("is_content", "is_trigger", "is_bos"))
    A: list[list[Any]] = [[L * 0 for _ in range(task.D)] for _ in range(task.D)]
    A[c][bos] = A[c][c] = A[c][tr] = -L
    A[tr][c] = L
    if own_key_local:
        A[tr][tr] = -L
    return A


def null_slot_solution(task: TriggerTask, kind: str, L: float) -> AttentionModel:
    """One head of a map with a virtual null slot (``sink_logit``, ``softmax1``), fixed
    values, the scores of :func:`null_slot_scores`: no BOS sink anywhere, the slot takes
    the mass at content positions (error ``O(T e^{-L})``)."""
    props = MAPS[kind].properties
    if not props.virtual_null:
        raise ValueError(f"the {kind} map has no virtual null slot")
    A = np.array(null_slot_scores(task, float(L), props.own_key_local), dtype=float)
    return AttentionModel(task, kind=kind, A=A, U=None)


def cancelling_pair_scores(task: TriggerTask, L: float, rest: str = "bos") -> np.ndarray:
    """Score matrices ``(2, D, D)`` of two softmax heads that agree at every non-trigger
    query and differ only at a trigger query: both score ``-L`` on BOS from a content
    query.  At a trigger query head 0 averages the content seen and head 1 rests on a key
    whose value is 0: with ``rest="bos"`` head 0 scores ``-L`` on BOS and on trigger keys
    and head 1 ``+L`` on BOS (it sinks there); with ``rest="trigger"`` head 0 scores ``-2L``
    on BOS and ``-L`` on the trigger, head 1 ``-L`` on BOS and ``+L`` on the trigger itself
    (it rests on the current token: no head puts more than ``e^{-L}`` on BOS at any row
    ``t >= 1``)."""
    L = float(as_real("L", L, minimum=0.0))
    rest = choice("rest", rest, ("bos", "trigger"))
    i_c, i_t, i_b = (feature_index(task, f) for f in ("is_content", "is_trigger", "is_bos"))
    A = np.zeros((2, task.D, task.D))
    A[:, i_c, i_b] = -L
    if rest == "bos":
        A[:, i_t, i_t] = -L
        A[0, i_t, i_b] = -L
        A[1, i_t, i_b] = L
    else:
        A[0, i_t, i_b], A[0, i_t, i_t] = -2 * L, -L
        A[1, i_t, i_b], A[1, i_t, i_t] = -L, L
    return A


def cancelling_pair_solution(task: TriggerTask, eps: float, heads: int = 2,
                             rest: str = "bos") -> AttentionModel:
    """Two softmax heads with opposite learned values ``U_1 = U_fix``, ``U_2 = -U_fix`` and
    the scores of :func:`cancelling_pair_scores`: at a non-trigger position the heads attend
    alike, so their outputs cancel exactly (error 0) and neither needs BOS (its mass there
    is ``e^{-L}/(e^{-L} + t)``); at a trigger head 0 averages the content and head 1 rests
    on a zero-valued key: BOS (``rest="bos"``), or the trigger itself (``rest="trigger"``,
    single-trigger family: then no head puts more than ``e^{-L}`` on BOS at any row
    ``t >= 1``).  The error there is at most ``(T + 2) R e^{-L}`` (``R`` the largest content
    norm, at least 1) and ``L = ceil(log(4 (T + 2) R / eps))`` makes it ``<= eps / 4``.
    Further ``heads`` score like head 0 and have zero values."""
    eps = float(as_real("eps", eps, minimum=0.0, strict=True))
    heads = as_int("heads", heads, minimum=2)
    scale = max(1.0, float(np.max(np.linalg.norm(task.content, axis=1))))
    L = float(math.ceil(math.log(4.0 * (task.T + 2) * scale / eps)))
    U = np.zeros((heads, task.p, task.p + 3))
    U[0], U[1] = fixed_values(task.p), -fixed_values(task.p)
    pair = cancelling_pair_scores(task, L, rest)
    A = np.concatenate([pair, np.repeat(pair[:1], heads - 2, axis=0)])
    return AttentionModel(task, kind="softmax", A=A, U=U)


def paper_relu_weights(task: PaperTask, layers: int = 1, heads: int = 1
                       ) -> dict[str, np.ndarray]:
    """The paper's (P3) construction as ``W_Q, W_K, W_V`` ``(layers, heads, n, n)`` and
    ``W_O`` ``(layers, n, heads·n)``.

    Layer 0, head 0: ``W_Q`` maps the trigger coordinate to the unit vector ``u = e_0``,
    ``W_K`` maps the trigger and bias coordinates to ``u``, so ``q_i·k_k`` is 1 when
    ``x_i`` is the trigger and ``k >= 1`` (every non-BOS key has trigger + bias = 1), else
    0; ``W_O W_V = I``.  Every other head and every later layer is zero.
    """
    if not isinstance(task, PaperTask):
        raise TypeError(f"task must be a PaperTask, got {type(task).__name__}")
    layers = as_int("layers", layers, minimum=1)
    heads = as_int("heads", heads, minimum=1)
    n = task.n
    WQ, WK, WV = (np.zeros((layers, heads, n, n)) for _ in range(3))
    WO = np.zeros((layers, n, heads * n))
    WQ[0, 0, BOS, TRIGGER] = 1.0
    WK[0, 0, BOS, TRIGGER] = 1.0
    WK[0, 0, BOS, task.bias_index] = 1.0
    WV[0, 0] = np.eye(n)
    WO[0, :, :n] = np.eye(n)
    return dict(W_Q=WQ, W_K=WK, W_V=WV, W_O=WO)


def paper_relu_solution(task: PaperTask, layers: int = 1, heads: int = 1) -> StackModel:
    """(P3): length-normalised ReLU attention solves the paper's task with zero error and
    zero weight on BOS, in one layer, or as the first layer of a residual stack whose
    other layers have zero output maps (residual targets when ``layers > 1``)."""
    return paper_model(task, "relu_length", **paper_relu_weights(task, layers, heads))


def paper_pair_weights(task: PaperTask, lam: float, layers: int = 1, heads: int = 2
                       ) -> dict[str, np.ndarray]:
    """Two softmax heads that cancel at every non-trigger row, with no BOS sink there.

    Head 0 scores ``λ (x_i^trig + x_i^bias)(x_k^trig + x_k^bias - x_k^BOS)``: at every row
    ``i >= 1`` it weights each non-BOS key by ``1/(i + e^{-2λ})`` and BOS by almost nothing.
    Head 1 has the same scores plus ``3λ x_i^trig x_k^BOS``, so it equals head 0 at every
    non-trigger row and sinks (weight ``1/(1 + j e^{-λ})`` on BOS) only at the trigger row
    ``j``.  Values ``±(I - e_0 e_0^T)`` and ``W_O = [I, I]``: the layer outputs 0 exactly at
    every non-trigger row and ``(α^0 - α^1)·x ≈`` the mean of ``x_1..x_j`` at the trigger
    row (error ``O(L √n e^{-λ})``).  Further heads and layers score like head 0 (no sink)
    and write nothing, so a residual stack passes the first layer's output through.
    """
    if not isinstance(task, PaperTask):
        raise TypeError(f"task must be a PaperTask, got {type(task).__name__}")
    layers = as_int("layers", layers, minimum=1)
    heads = as_int("heads", heads, minimum=2)
    lam = float(as_real("lam", lam, minimum=0.0, strict=True))
    n, b = task.n, task.bias_index
    WQ, WK, WV = (np.zeros((layers, heads, n, n)) for _ in range(3))
    WO = np.zeros((layers, n, heads * n))
    WQ[:, :, 0, TRIGGER] = WQ[:, :, 0, b] = lam
    WK[:, :, 0, TRIGGER] = WK[:, :, 0, b] = 1.0
    WK[:, :, 0, BOS] = -1.0
    WQ[0, 1, 1, TRIGGER] = 3.0 * lam
    WK[0, 1, 1, BOS] = 1.0
    drop = np.eye(n)
    drop[BOS, BOS] = 0.0
    WV[0, 0], WV[0, 1] = drop, -drop
    WO[0, :, :n] = WO[0, :, n: 2 * n] = np.eye(n)
    return dict(W_Q=WQ, W_K=WK, W_V=WV, W_O=WO)


def paper_pair_solution(task: PaperTask, eps: float, layers: int = 1, heads: int = 2
                        ) -> StackModel:
    """:func:`paper_pair_weights` with ``λ`` chosen so the error is ``<= eps / 2``
    (``λ = log(4 L² n / eps)``, an integer; the error is at most ``2 L √n e^{-λ}``)."""
    eps = float(as_real("eps", eps, minimum=0.0, strict=True))
    lam = float(math.ceil(math.log(4.0 * task.L**2 * task.n / eps)))
    return paper_model(task, "softmax", **paper_pair_weights(task, lam, layers, heads))


def paper_split_weights(task: PaperTask, lam: float, rho: float = 0.5
                        ) -> dict[str, np.ndarray]:
    """Three softmax heads of one layer with no sink at any row ``t >= 1``, the trigger row
    included: ``W_Q, W_K, W_V`` ``(1, 3, n, n)``, ``W_O = [I, I, I]``.

    Every content query scores ``-λ`` on BOS and 0 on every other key, in every head, so the
    heads attend alike at every non-trigger row; their values ``κ_h (I - e_0 e_0^T)`` with
    ``κ = (1, ρ/(1-ρ), -1/(1-ρ))`` sum to 0, so the layer writes exactly 0 there.  The
    trigger query (its indicator is its only coordinate read) scores, head 0: ``-λ`` on BOS
    (it averages ``x_1..x_j``: the target); head 1: ``-λ`` on BOS and ``+λ`` on the trigger
    itself (it writes ``≈ κ_1 x_j``); head 2: ``λ + log((1-ρ)/ρ)`` on BOS and ``λ`` on the
    trigger (it splits ``1 - ρ`` on BOS and ``ρ`` on the trigger, writing ``≈ κ_2 ρ x_j``),
    and ``κ_1 + κ_2 ρ = 0``.  No head puts more than ``max(1 - ρ, e^{-λ})`` on BOS at any row
    ``t >= 1``, nor (BOS being the only key whose value is 0 for every content) on a null
    key; the values grow like ``1/(1-ρ)``: what the trigger row's displacement theorem
    (docs/theory.md) says must happen when no head sinks."""
    if not isinstance(task, PaperTask):
        raise TypeError(f"task must be a PaperTask, got {type(task).__name__}")
    lam = float(as_real("lam", lam, minimum=0.0, strict=True))
    rho = float(as_real("rho", rho, minimum=0.0, strict=True))
    if not rho < 1.0:
        raise ValueError(f"rho must lie in (0, 1), got {rho}")
    n, b = task.n, task.bias_index
    WQ, WK, WV = (np.zeros((1, 3, n, n)) for _ in range(3))
    WQ[0, :, 0, b] = 1.0
    WK[0, :, 0, BOS] = -lam
    WQ[0, :, 1, TRIGGER] = 1.0
    WK[0, 0, 1, BOS] = -lam
    WK[0, 1, 1, BOS], WK[0, 1, 1, TRIGGER] = -lam, lam
    WK[0, 2, 1, BOS], WK[0, 2, 1, TRIGGER] = lam + math.log((1.0 - rho) / rho), lam
    drop = np.eye(n)
    drop[BOS, BOS] = 0.0
    for h, kappa in enumerate((1.0, rho / (1.0 - rho), -1.0 / (1.0 - rho))):
        WV[0, h] = kappa * drop
    WO = np.concatenate([np.eye(n)] * 3, axis=1)[None]
    return dict(W_Q=WQ, W_K=WK, W_V=WV, W_O=WO)


def paper_split_solution(task: PaperTask, eps: float, rho: float = 0.5) -> StackModel:
    """:func:`paper_split_weights` with ``λ = ceil(log(4 L n / ((1 - ρ) eps)))``: the error,
    at most about ``(1 + ρ L) √n e^{-λ}`` at a trigger row and 0 elsewhere, is then below
    ``eps / 2`` (the trusted checker's ``paper-witness`` rule decides it exactly)."""
    eps = float(as_real("eps", eps, minimum=0.0, strict=True))
    rho = float(as_real("rho", rho, minimum=0.0, strict=True))
    if not rho < 1.0:
        raise ValueError(f"rho must lie in (0, 1), got {rho}")
    lam = float(math.ceil(math.log(4.0 * task.L * task.n / ((1.0 - rho) * eps))))
    return paper_model(task.replace(residual=False), "softmax",
                       **paper_split_weights(task, lam, rho))


PAPER_VARIANT_LEVEL = {"softmax": 8, "sink_logit": 8, "softmax1": 8, "sparsemax": 1,
                       "entmax15": 2, "relu_length": 1, "gated_softmax": 8}
"""The level ``L`` of each map's paper-setting head by default (exact maps: the least that
works); ``relu`` and ``sigmoid`` have no head (their weights see no position)."""


POSITION_FREE = tuple(name for name, m in MAPS.items() if m.properties.key_local)
"""Maps whose weight of a key is a function of the query and key tokens alone (in the
paper's setting, with no positional features, they cannot average prefixes): the maps
declaring ``key_local`` (ReLU, sigmoid)."""


def position_free_error_bound(task: PaperTask, values: str = "fixed") -> Fraction:
    """A lower bound on the error of every one-layer ``relu`` or ``sigmoid`` model on the
    paper's family: their weight of a key is a function of the query and key tokens only.

    ``values = "fixed"`` (one head, ``W_O W_V = I - e_0 e_0^T``): the trigger row's trigger
    coordinate is the trigger's weight on itself (no other key has a trigger coordinate),
    which the same trigger token needs within ``ε`` of ``1/2`` at ``j = 2`` and of
    ``1/(L-1)`` at ``j = L - 1``: ``(1/2 - 1/(L-1))/2``.  ``values = "learned"`` (any heads,
    any ``W_V, W_O``): with every content token equal to ``a`` the trigger row's output is
    affine in ``j`` while the target's trigger coordinate is ``1/j``, so the error is at
    least the best uniform affine approximation error of ``1/j`` on ``j = 2..L-1``: half the
    largest gap below the chord of ``1/j`` (exact, by alternation at ``2``, the gap's
    point and ``L-1``); 0 when ``L < 5``."""
    if not isinstance(task, PaperTask):
        raise TypeError(f"task must be a PaperTask, got {type(task).__name__}")
    if values not in ("fixed", "learned"):
        raise ValueError(f"values must be 'fixed' or 'learned', got {values!r}")
    J = task.L - 1
    if values == "fixed":
        return (Fraction(1, 2) - Fraction(1, J)) / 2 if J >= 3 else Fraction(0)
    if J < 4:
        return Fraction(0)
    slope = (Fraction(1, J) - Fraction(1, 2)) / (J - 2)
    return max(Fraction(1, 2) + slope * (k - 2) - Fraction(1, k) for k in range(2, J + 1)) / 2


def paper_variant_head(task: PaperTask, kind: str, L: Fraction | int | None = None
                       ) -> dict[str, Any]:
    """One fixed-value head of map ``kind`` on the paper's task, exactly: the score matrix
    ``A`` (``s_ik = x_i^T A x_k``, ``n×n`` Fractions), the map's parameters ``params``, and
    for a gated map ``gate_w``, ``gate_c`` (else ``None``, 0); ``level`` is ``L``.

    Built from the BOS, trigger and bias coordinates: softmax, sparsemax (``L = 1``) and
    entmax-1.5 (``L = 2``) score ``+L`` from a content query and ``-L`` from the trigger
    query on BOS; the sink logit and softmax1 (``b = 0``) score ``-L`` from a content query
    on every key and ``+L`` from the trigger query on every non-BOS key; ReLU/length is the
    (P3) head (``1`` from the trigger query on every non-BOS key); the gated head scores
    ``-L`` from the trigger query on BOS, gate ``σ(L (x^trig - x^bias))``."""
    if not isinstance(task, PaperTask):
        raise TypeError(f"task must be a PaperTask, got {type(task).__name__}")
    if kind not in PAPER_VARIANT_LEVEL:
        raise ValueError(f"no paper-setting head for {kind!r}; maps: "
                         f"{', '.join(PAPER_VARIANT_LEVEL)} (relu and sigmoid weights see no "
                         "position and cannot average prefixes of different lengths)")
    if isinstance(L, bool) or not isinstance(L, (int, Fraction, type(None))):
        raise TypeError(f"L must be an int or Fraction, got {type(L).__name__}")
    L = Fraction(PAPER_VARIANT_LEVEL[kind] if L is None else L)
    if L <= 0:
        raise ValueError(f"L must be > 0, got {L}")
    if kind == "relu_length" and L != 1:
        raise ValueError(f"the relu_length head has no level: L must be 1, got {L}")
    n, bias = task.n, task.bias_index
    A = [[Fraction(0)] * n for _ in range(n)]
    gate_w = None
    if kind in ("softmax", "sparsemax", "entmax15"):
        A[bias][BOS], A[TRIGGER][BOS] = L, -L
    elif kind in ("sink_logit", "softmax1"):
        A[bias][BOS] = A[bias][bias] = A[bias][TRIGGER] = -L
        A[TRIGGER][bias] = A[TRIGGER][TRIGGER] = L
    elif kind == "relu_length":
        A[TRIGGER][bias] = A[TRIGGER][TRIGGER] = Fraction(1)
    else:  # gated_softmax
        A[TRIGGER][BOS] = -L
        gate_w = [Fraction(0)] * n
        gate_w[TRIGGER], gate_w[bias] = L, -L
    return {"level": L, "A": A, "params": [Fraction(0)] * len(MAPS[kind].param_names),
            "gate_w": gate_w, "gate_c": Fraction(0)}


def paper_variant_solution(task: PaperTask, kind: str, L: Fraction | int | None = None
                           ) -> StackModel:
    """:func:`paper_variant_head` as a paper stack (``W_Q = A^T``, ``W_K = I``,
    ``W_V = I - e_0 e_0^T``, ``W_O = I``)."""
    head = paper_variant_head(task, kind, L)
    n = task.n
    drop = np.eye(n)
    drop[BOS, BOS] = 0.0
    A = np.array([[float(x) for x in row] for row in head["A"]])
    extra: dict[str, Any] = {}
    if head["params"]:
        extra["map_params"] = np.array([[[float(x) for x in head["params"]]]])
    if head["gate_w"] is not None:
        extra["gate_w"] = np.array([[[float(x) for x in head["gate_w"]]]])
        extra["gate_c"] = np.array([[float(head["gate_c"])]])
    return paper_model(task, kind, W_Q=A.T[None, None], W_K=np.eye(n)[None, None],
                       W_V=drop[None, None], W_O=np.eye(n)[None], **extra)


def paper_sink_weights(task: PaperTask, lam: float) -> dict[str, np.ndarray]:
    """One softmax head with fixed values that sinks at every non-trigger row: the softmax
    head of :func:`paper_variant_head` at level ``λ`` (its scores), written as a rank-one
    query/key pair.

    ``W_Q`` maps ``x`` to ``λ (x^bias - x^trig) e_0`` and ``W_K`` maps ``x`` to
    ``x^BOS e_0``, so ``q_i·k_k = λ (x_i^bias - x_i^trig) x_k^BOS``: a content query gives
    BOS the weight ``e^λ/(e^λ + i)`` and every other key ``1/(e^λ + i)``; the trigger
    query gives BOS ``e^{-λ}/(e^{-λ} + j)``.  ``W_V = I - e_0 e_0^T``, ``W_O = I`` (the fixed
    values: ``v_BOS = 0``).  The error is ``||Σ_k v_k||/(e^λ + i)`` at a non-trigger row
    and ``||mean|| e^{-λ}/(j + e^{-λ})`` at the trigger row.
    """
    if not isinstance(task, PaperTask):
        raise TypeError(f"task must be a PaperTask, got {type(task).__name__}")
    lam = float(as_real("lam", lam, minimum=0.0, strict=True))
    n = task.n
    # the scores are the softmax head's of paper_variant_head at level λ: only the BOS
    # column of A is non-zero, so q_0 = Σ_m A_{m,BOS} x^m against k_0 = x^BOS is that head
    A = paper_variant_head(task, "softmax", Fraction(lam))["A"]
    WQ, WK, WV = (np.zeros((1, 1, n, n)) for _ in range(3))
    WQ[0, 0, 0] = [float(row[BOS]) for row in A]
    WK[0, 0, 0, BOS] = 1.0
    WV[0, 0] = np.eye(n)
    WV[0, 0, BOS, BOS] = 0.0
    return dict(W_Q=WQ, W_K=WK, W_V=WV, W_O=np.eye(n)[None])


def paper_sink_solution(task: PaperTask, eps: float) -> StackModel:
    """:func:`paper_sink_weights` with ``λ = log((L-1) R / eps)``, ``R`` the largest
    token norm: the error is below ``(L-1) R/(e^λ + L-1) < eps`` at every row."""
    eps = float(as_real("eps", eps, minimum=0.0, strict=True))
    if task.finite:
        R = math.sqrt(1.0 + float(np.max(np.sum(np.square(task.content), axis=1))))
    else:
        R = math.sqrt(1.0 + task.n - 3)
    lam = math.log((task.L - 1) * R / eps)
    return paper_model(task, "softmax", **paper_sink_weights(task, max(lam, 1e-3)))


def composed_pair_weights(task: PaperTask, lam: float, layers: int = 2,
                          mu: float | None = None) -> dict[str, np.ndarray]:
    """A **pure composition** (no residual) of ``layers >= 2`` layers of two softmax heads
    each that solves the paper's one-layer targets with no BOS sink at any non-trigger row
    of any head of any layer: ``W_Q, W_K, W_V`` ``(layers, 2, n, n)``, ``W_O`` ``(layers, n, 2n)``
    (``[I, I]``: the two heads' outputs summed).

    Layer 1 is :func:`paper_pair_weights`' cancelling pair, head 0 writing besides the
    non-BOS indicator ``x^trig + x^bias`` into coordinate 0: its output ``h_t`` is exactly
    ``a_t e_0`` at every non-trigger row ``t >= 1`` (``a_t = 1 - α_t0 ≈ 1``), exactly 0 at
    row 0, and ``≈ mean + a_j e_0`` at the trigger row ``j`` (trigger coordinate ``≈ 1/j``).
    Every later layer reads that form: both heads score ``λ h_i^0 h_k^0`` (every non-BOS key
    ``≈ λ``, BOS 0: BOS weight ``≈ e^{-λ}/i``) plus ``±μ h_i^trig h_k^trig``, which is 0 at
    every non-trigger query (its trigger coordinate is exactly 0), so the heads attend alike
    there and their values ``±(I - e_0 e_0^T)`` cancel exactly; at the trigger row head 0
    puts ``≈ 1`` on the trigger key and head 1 ``≈ 0``, so the layer copies ``mean``.  A middle
    layer's head 0 keeps coordinate 0 (value ``I``) for the next layer; the last drops it.
    ``mu`` defaults to ``λ (L-1)²`` (so ``μ/j² >= λ``).  Head 1 of layer 1 sinks at the
    trigger row, the one row the question does not ask about."""
    if not isinstance(task, PaperTask):
        raise TypeError(f"task must be a PaperTask, got {type(task).__name__}")
    layers = as_int("layers", layers, minimum=2)
    lam = float(as_real("lam", lam, minimum=0.0, strict=True))
    mu = lam * (task.L - 1) ** 2 if mu is None else float(as_real("mu", mu, minimum=0.0))
    n, b = task.n, task.bias_index
    weights = paper_pair_weights(task, lam, layers=1, heads=2)
    WQ, WK, WV = (np.zeros((layers, 2, n, n)) for _ in range(3))
    WO = np.zeros((layers, n, 2 * n))
    WQ[0], WK[0], WV[0] = weights["W_Q"][0], weights["W_K"][0], weights["W_V"][0]
    WV[0, 0, BOS, TRIGGER] = WV[0, 0, BOS, b] = 1.0
    WO[:, :, :n] = WO[:, :, n:] = np.eye(n)
    drop = np.eye(n)
    drop[BOS, BOS] = 0.0
    for layer in range(1, layers):
        for h, sign in ((0, 1.0), (1, -1.0)):
            WQ[layer, h, 0, BOS], WK[layer, h, 0, BOS] = lam, 1.0
            WQ[layer, h, 1, TRIGGER], WK[layer, h, 1, TRIGGER] = sign * mu, 1.0
        WV[layer, 0] = drop if layer == layers - 1 else np.eye(n)
        WV[layer, 1] = -drop
    return dict(W_Q=WQ, W_K=WK, W_V=WV, W_O=WO)


def composed_pair_solution(task: PaperTask, eps: float, layers: int = 2) -> StackModel:
    """:func:`composed_pair_weights` as a pure stack with ``λ = ceil(log(8 N L² n / eps))``
    (``N`` the layers; the error, ``O(N L² n e^{-λ})``, is then below ``eps``: the
    trusted checker's ``paper-witness`` rule decides it exactly on a finite family)."""
    eps = float(as_real("eps", eps, minimum=0.0, strict=True))
    layers = as_int("layers", layers, minimum=2)
    lam = float(math.ceil(math.log(8.0 * layers * task.L**2 * task.n / eps)))
    return paper_model(task.replace(residual=False), "softmax", residual=False,
                       **composed_pair_weights(task, lam, layers))


def composed_sink_weights(task: PaperTask, lam: float) -> dict[str, np.ndarray]:
    """A pure 2-layer stack of one softmax head per layer that is accurate by sinking in
    layer 1: :func:`paper_sink_weights` with ``W_V = I`` (BOS's coordinate kept, so layer 1
    writes ``≈ e_0`` at every non-trigger row and ``≈ mean`` at the trigger row); layer 2
    scores ``λ h_i^0 h_k^0 + λ (L-1)² h_i^trig h_k^trig`` (non-trigger queries avoid the
    trigger row, the trigger query takes itself) with value ``I - e_0 e_0^T``.  A model in
    the class of the composition theorem (:mod:`sinkproof.theorems.composition`) that
    meets its hypothesis: its product ``Π_ℓ (1 - α^ℓ_10)`` is ``≈ e^{-λ}/2``."""
    if not isinstance(task, PaperTask):
        raise TypeError(f"task must be a PaperTask, got {type(task).__name__}")
    lam = float(as_real("lam", lam, minimum=0.0, strict=True))
    n = task.n
    first = paper_sink_weights(task, lam)
    WQ, WK, WV = (np.zeros((2, 1, n, n)) for _ in range(3))
    WQ[0], WK[0] = first["W_Q"][0], first["W_K"][0]
    WV[0, 0] = np.eye(n)
    WQ[1, 0, 0, BOS], WK[1, 0, 0, BOS] = lam, 1.0
    WQ[1, 0, 1, TRIGGER], WK[1, 0, 1, TRIGGER] = lam * (task.L - 1) ** 2, 1.0
    WV[1, 0] = np.eye(n)
    WV[1, 0, BOS, BOS] = 0.0
    return dict(W_Q=WQ, W_K=WK, W_V=WV, W_O=np.stack([np.eye(n), np.eye(n)]))


def _content_direction(task: PaperTask, direction: Any) -> tuple[np.ndarray, float, float]:
    """A unit direction ``u`` of the content space, the largest ``|u·c|`` (``R``) and, on a
    finite set, the least gap ``δ`` between distinct values of ``u·c`` (``inf`` for a single
    value; ``0`` when two contents tie, which the construction refuses)."""
    k = task.n - 3
    u = np.sqrt(np.arange(1, k + 1, dtype=float)) if direction is None else \
        np.asarray(direction, dtype=float).reshape(k)
    if not np.all(np.isfinite(u)) or not np.any(u):
        raise ValueError("direction must be a non-zero finite vector of the content space")
    u = u / np.linalg.norm(u)
    if not task.finite:
        return u, math.sqrt(k), 0.0
    proj = task.content @ u
    distinct = np.unique(proj)
    if distinct.size < task.m:
        raise ValueError("two content vectors have the same projection on the direction: "
                         "give direction= that separates them")
    gap = float(np.min(np.diff(distinct))) if distinct.size > 1 else math.inf
    return u, max(1.0, float(np.max(np.abs(proj)))), gap


def residual_cancel_weights(task: PaperTask, lam: float, direction: Any = None
                            ) -> dict[str, np.ndarray]:
    """A residual stack of two layers of **one** softmax head each that solves the paper's
    residual targets with no BOS sink at any non-trigger row: ``W_Q, W_K, W_V``
    ``(2, 1, n, n)``, ``W_O`` ``(2, n, n)`` (identity).

    With ``u`` a unit content direction (``direction``; on a finite set it must separate the
    contents) and ``Λ = 4 λ R`` (``R >= max |u·c|``):

    * layer 1 scores ``x_i^bias (λ u·c_k + Λ x_k^bias) + Λ x_i^trig (x_k^bias + x_k^trig)``:
      a content query attends to the content keys of largest ``u·c`` (weights ``∝ e^{λ u·c_k}``;
      BOS and the trigger get ``O(e^{-2λR})``), the trigger query to every non-BOS key alike;
      value ``I - e_0 e_0^T``.  So it writes ``x*_t``, the content token of largest ``u·c``
      seen so far, at a non-trigger row, and the mean of ``x_1..x_j`` at the trigger row;
    * layer 2 reads ``h = x + layer 1``: it scores ``h_i^bias (λ u·h_k^c + Λ h_k^bias - 4Λ h_k^trig)
      + 8Λ h_i^trig h_k^BOS``: a non-trigger query attends, like layer 1, to the keys whose
      content is largest (their ``h_k = x*_t + x*_t``), the trigger query sinks on BOS, whose
      ``h_0 = e_0``; value ``-(I - e_0 e_0^T)/2``.  So it writes ``-x*_t`` at a non-trigger
      row, cancelling layer 1, and 0 at the trigger row.

    The output is ``x_t`` off the trigger and ``x_j + mean`` at it, up to the softness of the
    two argmaxes: ``O(L e^{-λδ})`` on a finite set whose projections are ``δ`` apart, and on
    samples of continuous content it falls like ``1/λ``.  Every non-trigger BOS weight is
    ``O(e^{-2λR})``; the one sink is layer 2's at the trigger row, the row the question does
    not ask about."""
    if not isinstance(task, PaperTask):
        raise TypeError(f"task must be a PaperTask, got {type(task).__name__}")
    lam = float(as_real("lam", lam, minimum=0.0, strict=True))
    u, R, _ = _content_direction(task, direction)
    big = 4.0 * lam * R
    n, b, cs = task.n, task.bias_index, task.content_slice
    WQ, WK, WV = (np.zeros((2, 1, n, n)) for _ in range(3))
    drop = np.eye(n)
    drop[BOS, BOS] = 0.0
    WQ[:, 0, 0, b] = 1.0
    WQ[:, 0, 1, TRIGGER] = 1.0
    WK[:, 0, 0, cs] = lam * u
    WK[:, 0, 0, b] = big
    WK[0, 0, 1, b] = WK[0, 0, 1, TRIGGER] = big
    WK[1, 0, 0, TRIGGER] = -4.0 * big
    WK[1, 0, 1, BOS] = 8.0 * big
    WV[0, 0], WV[1, 0] = drop, -0.5 * drop
    return dict(W_Q=WQ, W_K=WK, W_V=WV, W_O=np.stack([np.eye(n), np.eye(n)]))


def residual_cancel_solution(task: PaperTask, eps: float, direction: Any = None,
                             max_level: float = 2.0**12) -> StackModel:
    """:func:`residual_cancel_weights` on a finite task with ``λ`` the least power of two
    from 4 whose float error over the whole family is ``<= eps / 2`` (the trusted checker's
    ``paper-witness`` rule decides the error exactly); refused beyond ``max_level``."""
    if not isinstance(task, PaperTask) or not task.finite:
        raise ValueError("residual_cancel_solution needs a PaperTask with a finite content set "
                         "(use residual_cancel_weights for continuous content)")
    eps = float(as_real("eps", eps, minimum=0.0, strict=True))
    task = task.replace(residual=True)
    x = task.prefix_features(np.concatenate([blk.codes for blk in task.prefix_blocks(task.L - 1)]))
    y = task.row_targets(x)
    lam = 4.0
    while lam <= max_level:
        model = paper_model(task, "softmax", residual=True,
                            **residual_cancel_weights(task, lam, direction))
        if float(np.max(np.linalg.norm(model.forward_batch(x).out - y, axis=-1))) <= eps / 2:
            return model
        lam *= 2.0
    raise ValueError(f"no level up to {max_level} reaches error eps/2 = {eps / 2}")
