"""Sink-free and sink constructions, one per attention map, as exact rational parameters.

Every construction is one head with fixed values ``U_fix`` (BOS and TRIG carry value
0, a content token its content vector) and a score matrix ``A`` with entries in ``{0, ±L,
±2L}``, built from named features of ``φ = [e(x); π(t)]`` (inverse positions):

- ``softmax``, ``sparsemax`` (``L = 1``), ``entmax15`` (``L = 2``): content queries score
  ``+L`` on BOS, the trigger query ``-L`` on BOS and on trigger keys (Theorem 5's head);
- the maps with a zero-valued null slot, ``sink_logit``, ``softmax1`` (``b = 0``) and
  ``stick_breaking``: content queries ``-L`` on every key (the slot takes the mass), the
  trigger query ``+L`` on content keys, and ``-L`` on trigger keys where the map weighs the
  query's own key by its own score alone (stick-breaking: the trigger key would otherwise
  take ``σ(0) = 1/2`` of the stick first);
- ``sigmoid`` (``b = 0``, ``T <= 3``): every key scores ``(2 r_t - 1) L`` from the query
  position, plus ``-2L`` from a content query on every key and from the trigger query on
  BOS and trigger keys (trigger weight on content ``σ(L)`` at ``t = 2``, ``σ(0) = 1/2`` at
  ``t = 3``; content queries weigh every key alike, ``<= σ(-L)``);
- ``relu``: Theorem 4's rank-one head; ``relu_length``: ``(1 + r_t - 2 is_content_t) ·
  (is_content_j + is_trigger_j)`` (weight ``(1 + r_t)/t = 1/(t-1)`` at a trigger);
- ``gated_softmax``: uniform attention at content queries, the trigger query ``-L`` on
  BOS and trigger keys; the gate ``σ(L (is_trigger_t - is_content_t))`` switches the
  head off at content positions (the gate, not a key, takes the sink's role).

On a task without positional features (tokens ``x ∈ R^n``: BOS ``e_0``, the trigger, content,
an is-content bias channel) the head is one fixed-value stack head (``W_O W_V = I - e_0
e_0^T``, ``W_Q = A^T``, ``W_K = I``) built from the BOS, trigger and bias coordinates
(:func:`sinkproof.constructions.paper_variant_head`): a :class:`StackConstruction`.  Maps
whose weights see no position (``relu``, ``sigmoid``) have none there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ..attention import MAPS
from ..certformat import format_rational, paper_instance
from ..constructions import (
    POSITION_FREE,
    feature_index,
    null_slot_scores,
    paper_variant_head,
    paper_variant_solution,
)
from ..convex.certfile import envelope
from ..model import AttentionModel
from ..numerics import stable_norm
from ..search.verify import witness_document
from ..task import TriggerTask

__all__ = ["Construction", "StackConstruction", "construction", "DEFAULT_LEVEL",
           "default_level"]

DEFAULT_LEVEL = {"softmax": 8, "sink_logit": 8, "softmax1": 8, "sparsemax": 1, "entmax15": 2,
                 "sigmoid": 8, "relu": 1, "relu_length": 1, "gated_softmax": 8}
"""The level ``L`` a map's construction uses by default (exact maps: the least that works);
a map not listed uses :func:`default_level`'s rule."""


def default_level(kind: str) -> int:
    """:data:`DEFAULT_LEVEL`, else 1 for a map with exact zeros and 8 otherwise."""
    if kind in DEFAULT_LEVEL:
        return DEFAULT_LEVEL[kind]
    return 1 if MAPS[kind].properties.exact_zeros else 8


@dataclass(frozen=True)
class Construction:
    """One head of map ``kind``: exact score matrix ``A`` (``D×D`` Fractions), map
    parameters, and for a gated map the gate ``(w, c)``; ``level`` is the ``L`` it was built at."""

    task: TriggerTask
    kind: str
    level: Fraction
    A: tuple[tuple[Fraction, ...], ...]
    params: tuple[Fraction, ...] = ()
    gate_w: tuple[Fraction, ...] | None = None
    gate_c: Fraction = Fraction(0)
    note: str = field(default="", compare=False)

    def matrix(self) -> np.ndarray:
        """``A`` in floating point."""
        return np.array([[float(x) for x in row] for row in self.A])

    @property
    def norm(self) -> float:
        """The weight norm: ``||A||_2``, and ``max(||A||_2, ||w||_2)`` for a gated head
        (map parameters and the gate bias are not counted)."""
        a = float(np.linalg.norm(self.matrix(), 2))
        if self.gate_w is not None:
            a = max(a, float(stable_norm([float(x) for x in self.gate_w])))
        return a

    def model(self) -> AttentionModel:
        """The same head as a float :class:`sinkproof.model.AttentionModel`."""
        kw: dict[str, Any] = {}
        if self.params:
            kw["map_params"] = np.array([[float(x) for x in self.params]])
        if self.gate_w is not None:
            kw["gate_w"] = np.array([[float(x) for x in self.gate_w]])
            kw["gate_c"] = np.array([float(self.gate_c)])
        return AttentionModel(self.task, self.kind, self.matrix(), None, **kw)

    def witness(self, max_error: Fraction, max_bos: Fraction, measure: str) -> dict[str, Any]:
        """The head as a witness document: error ``<= max_error`` on the family and BOS
        ``measure`` (``"weight"`` or ``"share"``) ``<= max_bos`` at every non-trigger
        position, for the trusted checker."""
        return witness_document(self.model(), max_error, max_bos, "nontrigger",
                                measure=measure)


@dataclass(frozen=True)
class StackConstruction(Construction):
    """One fixed-value head of map ``kind`` on a task without positional features: exact
    ``A`` ``(n, n)`` (``s_ik = x_i^T A x_k``), map parameters, and for a gated map the gate
    ``(w, c)``."""

    def model(self) -> Any:
        """The head as a stack (``W_Q = A^T``, ``W_K = I``, fixed values)."""
        return paper_variant_solution(self.task, self.kind, self.level)

    def weights(self) -> dict[str, Any]:
        """``W_Q, W_K, W_V, W_O`` (one layer, one head) as exact nested lists."""
        n = self.task.n
        row = list(self.task.token_features_exact(self.task.bos_code))
        bos = next(i for i, x in enumerate(row) if x)  # BOS's coordinate
        eye = [[Fraction(int(i == k)) for k in range(n)] for i in range(n)]
        drop = [[Fraction(int(i == k and i != bos)) for k in range(n)] for i in range(n)]
        AT = [[self.A[k][i] for k in range(n)] for i in range(n)]
        return {"W_Q": [[AT]], "W_K": [[eye]], "W_V": [[drop]], "W_O": [eye]}

    def witness(self, max_error: Fraction, max_bos: Fraction, measure: str) -> dict[str, Any]:
        """The head as a stack-witness document: error ``<= max_error`` on the family and
        BOS ``measure`` ``<= max_bos`` in the head at every non-trigger position."""
        task = self.task
        instance = paper_instance(task)
        what = "BOS share" if measure == "share" else "BOS weight"
        claim = {"statement": f"one fixed-value {self.kind} head (L={self.level}) with error "
                              f"<= {format_rational(max_error)} and {what} <= "
                              f"{format_rational(max_bos)} at every non-trigger position",
                 "model_class": {"kind": self.kind, "heads": 1, "layers": 1,
                                 "residual": False, "values": "fixed"},
                 "max_error": format_rational(max_error),
                 "max_bos_mass": format_rational(max_bos), "where": "nontrigger",
                 "bos_measure": measure}
        q = format_rational
        data: dict[str, Any] = {k: [[[[q(x) for x in row] for row in M] for M in layer]
                                    for layer in v] if k != "W_O" else
                                [[[q(x) for x in row] for row in M] for M in v]
                                for k, v in self.weights().items()}
        if self.params:
            data["map_params"] = [[[q(x) for x in self.params]]]
        if self.gate_w is not None:
            data["gate_w"] = [[[q(x) for x in self.gate_w]]]
            data["gate_c"] = [[q(self.gate_c)]]
        return envelope("paper-witness", instance, claim, data)


def _stack_construction(task: Any, kind: str, L: Any) -> StackConstruction:
    """The head of map ``kind`` at level ``L`` on a task without positional features."""
    if kind in POSITION_FREE:
        raise ValueError(f"no accurate {kind} head on a task without positional features "
                         "(its weights do not see the position): see "
                         "position_free_error_bound")
    h = paper_variant_head(task, kind, L)
    return StackConstruction(task, kind, h["level"], tuple(tuple(r) for r in h["A"]),
                             tuple(h["params"]),
                             None if h["gate_w"] is None else tuple(h["gate_w"]), h["gate_c"])


def _level(L: Any) -> Fraction:
    if isinstance(L, bool) or not isinstance(L, (int, Fraction)):
        raise TypeError(f"L must be an int or Fraction, got {type(L).__name__}")
    L = Fraction(L)
    if L <= 0:
        raise ValueError(f"L must be > 0, got {L}")
    return L


def construction(task: TriggerTask, kind: str, L: Any = None) -> Construction:
    """The construction of map ``kind`` at level ``L`` (default :data:`DEFAULT_LEVEL`; on a
    task without positional features its :class:`StackConstruction`)."""
    if kind not in MAPS:
        raise ValueError(f"unknown attention map {kind!r}; expected one of {', '.join(MAPS)}")
    if not task.has_positions:
        return _stack_construction(task, kind, L)
    if task.positions != "inverse":
        raise ValueError(f"the variant constructions use positions='inverse', got "
                         f"{task.positions!r}")
    L = _level(default_level(kind) if L is None else L)
    if kind in ("relu", "relu_length") and L != 1:
        raise ValueError(f"the {kind} construction has no level: L must be 1, got {L}")
    D = task.D
    A = [[Fraction(0)] * D for _ in range(D)]
    f = {n: feature_index(task, n) for n in
         ("is_content", "is_trigger", "is_bos", "bias", "ratio")}
    c, tr, bos = f["is_content"], f["is_trigger"], f["is_bos"]
    params: tuple[Fraction, ...] = tuple(Fraction(0) for _ in MAPS[kind].param_names)
    props = MAPS[kind].properties
    gate_w = None
    if props.on_simplex:
        A[c][bos], A[tr][bos], A[tr][tr] = L, -L, -L
    elif props.virtual_null:
        A = null_slot_scores(task, L, props.own_key_local)
    elif kind == "sigmoid":
        if task.T > 3:
            raise ValueError("the sigmoid construction needs T <= 3 (its trigger logit "
                             "(2 r_t - 1) L is affine in r_t; exact at t = 3 only)")
        for key in (bos, c, tr):
            A[c][key] = -2 * L
            A[f["bias"]][key], A[f["ratio"]][key] = -L, 2 * L
        A[tr][bos] = A[tr][tr] = -2 * L
    elif kind == "relu":
        A[f["ratio"]][c] = A[f["ratio"]][tr] = Fraction(1)
        A[c][c] = A[c][tr] = Fraction(-1)
    elif kind == "relu_length":
        for key in (c, tr):
            A[f["bias"]][key] = A[f["ratio"]][key] = Fraction(1)
            A[c][key] = Fraction(-2)
    elif props.gated:
        A[tr][bos] = A[tr][tr] = -L
        gate_w = [Fraction(0)] * D
        gate_w[tr], gate_w[c] = L, -L
        gate_w = tuple(gate_w)
    else:
        raise ValueError(f"no construction for the {kind} map")
    return Construction(task, kind, L, tuple(tuple(r) for r in A), params, gate_w)
