"""Model classes: the hypotheses a theorem or a claim states about the model, as data.

A :class:`ModelClass` names the attention kind, the number of heads, whether the
values are fixed to ``U_fix`` or learned, the positional scheme of the scores and
whether values are token-only.  Theorems declare the class they hold for; claims
name the class they are about; the checker compares the two.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ._validate import as_int, choice
from .model import AttentionModel

KINDS = ("softmax", "relu")
VALUES = ("fixed", "learned")
POSITIONS = ("inverse", "onehot", "none", "any")
VALUE_FEATURES = ("token", "position")


@dataclass(frozen=True)
class ModelClass:
    """A set of attention models, named by kind, heads, values, positions, value features.

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

    @classmethod
    def of(cls, model: AttentionModel) -> ModelClass:
        """The smallest class containing ``model``."""
        return cls(kind=model.kind, heads=model.H, values=model.values,
                   positions=model.task.positions, value_features="token")

    def is_subclass_of(self, other: ModelClass) -> bool:
        """Every model of ``self`` is a model of ``other``."""
        return (
            self.kind == other.kind
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
        unknown = set(d) - {"kind", "heads", "values", "positions", "value_features"}
        if unknown:
            raise ValueError(f"unknown model-class fields: {', '.join(sorted(unknown))}")
        return cls(**d)

    def __str__(self) -> str:
        heads = "any-head" if self.heads is None else f"{self.heads}-head"
        return (f"{heads} {self.kind}, {self.values} values, "
                f"{self.positions} positions, {self.value_features}-only values")
