"""Model classes: the hypotheses a theorem or a claim states about the model, as data.

A :class:`ModelClass` names the attention map (one map, or every map with a
property, e.g. every map whose weights lie on the simplex), the number of heads,
whether the values are fixed to ``U_fix`` or learned, the positional scheme of the
scores and whether values are token-only.  Theorems declare the class they hold
for; claims name the class they are about; the checker compares the two.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from ._validate import as_int, choice
from .attention import MAPS, AttentionMap, MapProperties
from .model import AttentionModel

MAP_CLASSES: dict[str, Callable[[MapProperties], bool]] = {
    "simplex": lambda props: props.on_simplex,
}
"""Kinds that stand for every map with a property: ``"simplex"``, the maps whose weights
sum to 1 (softmax, sparsemax, entmax-1.5)."""
KINDS = (*MAPS, *MAP_CLASSES)
VALUES = ("fixed", "learned")
POSITIONS = ("inverse", "onehot", "none", "any")
VALUE_FEATURES = ("token", "position")


@dataclass(frozen=True)
class ModelClass:
    """A set of attention models, named by kind, heads, values, positions, value features.

    ``kind``: a map name (:data:`sinkproof.attention.MAPS`) or a property class
    (:data:`MAP_CLASSES`: ``"simplex"`` is every map on the simplex).
    ``values="fixed"`` means every head uses ``U_fix``; ``"learned"`` means any ``U``
    (so the fixed-value class is a subset).  ``positions="any"`` means the statement
    allows any score function of (query token, position, key token, position).
    ``heads=None`` means any number of heads (a statement about every ``H``).
    ``value_features="token"``: values ``U e(x_j)`` (the spec's models);
    ``"position"``: values may depend on position too (an explorable variant).
    """

    kind: str = "softmax"
    heads: int | None = 1
    values: str = "learned"
    positions: str = "any"
    value_features: str = "token"

    def __post_init__(self) -> None:
        choice("attention kind", self.kind, KINDS)
        if self.heads is not None:
            as_int("heads", self.heads, minimum=1)
        choice("values", self.values, VALUES)
        choice("positions", self.positions, POSITIONS)
        choice("value_features", self.value_features, VALUE_FEATURES)

    @property
    def maps(self) -> tuple[str, ...]:
        """The names of the attention maps in the class, in registry order."""
        if self.kind in MAP_CLASSES:
            has = MAP_CLASSES[self.kind]
            return tuple(name for name, m in MAPS.items() if has(m.properties))
        return (self.kind,)

    @property
    def attention_map(self) -> AttentionMap | None:
        """The map of a one-map class; ``None`` for a property class."""
        return MAPS.get(self.kind)

    @classmethod
    def of(cls, model: AttentionModel) -> ModelClass:
        """The smallest class containing ``model``."""
        return cls(kind=model.kind, heads=model.H, values=model.values,
                   positions=model.task.positions, value_features="token")

    def is_subclass_of(self, other: ModelClass) -> bool:
        """Every model of ``self`` is a model of ``other``."""
        return (
            set(self.maps) <= set(other.maps)
            and (other.heads is None or self.heads == other.heads)
            and (other.values == "learned" or self.values == "fixed")
            and (other.positions == "any" or self.positions == other.positions)
            and (other.value_features == "position" or self.value_features == "token")
        )

    def contains(self, model: AttentionModel) -> bool:
        """``model`` belongs to this class."""
        return ModelClass.of(model).is_subclass_of(self)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModelClass:
        if not isinstance(d, dict):
            raise TypeError("a model class must be a mapping")
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown model-class fields: {', '.join(sorted(unknown))}")
        return cls(**d)

    def __str__(self) -> str:
        heads = "any-head" if self.heads is None else f"{self.heads}-head"
        kind = "on-simplex (any map)" if self.kind == "simplex" else self.kind
        return (f"{heads} {kind}, {self.values} values, "
                f"{self.positions} positions, {self.value_features}-only values")
