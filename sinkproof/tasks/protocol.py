"""What every layer of sinkproof needs from a task, stated once.

A *task* is a family of causal sequences ``X = (x_0, x_1, ..., x_n)`` with ``x_0 = BOS``,
an input row ``φ_t ∈ R^D`` for every position, and a target ``y_t ∈ R^{out_dim}`` at
every position ``t = 0..n``.  Each token has a *kind*: ``"bos"``, ``"trigger"`` or
``"content"``; a position ``t >= 1`` whose token is not the trigger is *non-trigger*
(the positions where the sink questions are asked).

Where the vocabulary is finite, tokens are *codes* ``0..n_tokens-1`` (``bos_code`` is
BOS) and one table lookup gives a token's features, and the family is enumerated
exhaustively by *prefix blocks*: every distinct prefix ``x_1..x_t`` of the family at
each depth ``t``, with its *multiplicity* (how many sequences of the family extend it,
i.e. how many (sequence, position) pairs share the output at its last position, since
a causal model's output at ``t`` depends only on ``x_0..x_t``).  Where content is
continuous the family is a distribution, and :meth:`Task.sample` draws seeded
sequences from it; nothing about such a family is exhaustive.

Targets are computed in exactly one place per task, :meth:`Task.prefix_targets`
(float) and :meth:`Task.exact_prefix_target` (rational); every other producer layer
asks the task.  (The trusted checker keeps its own independent target code.)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from ..errors import CapabilityError

TOKEN_KINDS = ("content", "trigger", "bos")
"""The kinds a token can have."""


@dataclass(frozen=True)
class PrefixBlock:
    """A chunk of prefixes of one depth ``t``: ``codes`` ``(N, t)`` (tokens ``x_1..x_t``,
    BOS implicit) and ``multiplicity``, the number of sequences of the family extending
    each of them (one number for the whole block)."""

    codes: np.ndarray
    multiplicity: float


class Task(ABC):
    """The interface of a sequence task (see the module docstring for the objects).

    An abstract base class: a task implements every member below (the conformance
    tests run on each registered task); members marked *finite* raise a clear error
    on continuous content.

    ``setting`` names the formalisation: ``"trigger"`` (our canonical task) or
    ``"paper"`` (the paper's own setting).
    """

    setting: ClassVar[str]

    @property
    @abstractmethod
    def D(self) -> int:
        """Dimension of the input row ``φ_t``."""

    @property
    @abstractmethod
    def out_dim(self) -> int:
        """Dimension of the targets ``y_t`` (and of a model's outputs)."""

    @property
    @abstractmethod
    def token_columns(self) -> slice:
        """Columns of ``φ_t`` that depend on the token only (token-only value maps read
        these); the others are positional features."""

    @property
    @abstractmethod
    def max_depth(self) -> int:
        """The largest position a sequence of the family reaches."""

    @property
    @abstractmethod
    def finite(self) -> bool:
        """Whether the vocabulary is finite (token codes and exhaustive enumeration apply)."""

    # ------------------------------------------------------ finite vocabulary
    @property
    @abstractmethod
    def n_tokens(self) -> int:
        """Number of token codes (finite vocabulary only)."""

    @property
    @abstractmethod
    def bos_code(self) -> int:
        """Code of BOS (finite vocabulary only)."""

    @abstractmethod
    def token_kind(self, code: int) -> str:
        """The kind of a token code: one of :data:`TOKEN_KINDS`."""

    @abstractmethod
    def is_trigger(self, codes: np.ndarray) -> np.ndarray:
        """Boolean mask, same shape as ``codes``: the token is the trigger."""

    @abstractmethod
    def prefix_features(self, codes: np.ndarray) -> np.ndarray:
        """Input rows ``φ_0..φ_t`` of prefixes ``codes`` ``(N, t)`` (BOS prepended),
        shape ``(N, t+1, D)``."""

    @abstractmethod
    def prefix_targets(self, codes: np.ndarray) -> np.ndarray:
        """Targets ``y_t`` at the last position of prefixes ``codes`` ``(N, t)`` (``t = 0``:
        the BOS position), shape ``(N, out_dim)``: the task's one float target code."""

    @abstractmethod
    def prefix_blocks(self, t: int, max_rows: int = 1 << 16) -> Iterator[PrefixBlock]:
        """Every prefix of depth ``t`` of the family, with multiplicities, in chunks."""

    @property
    @abstractmethod
    def n_sequences(self) -> int:
        """Number of sequences of the exhaustive family."""

    # ------------------------------------------------------------------ exact
    @abstractmethod
    def token_features_exact(self, code: int) -> list[Fraction]:
        """The token part of ``φ`` (columns ``token_columns``) as exact rationals."""

    @abstractmethod
    def exact_prefix_target(self, codes: Sequence[int]) -> tuple[Fraction, ...]:
        """``y_t`` at the last position of one prefix of codes, as exact rationals."""

    @abstractmethod
    def decode(self, codes: Sequence[int]) -> Any:
        """The user-facing form of one prefix of codes (finite vocabulary only)."""

    # ------------------------------------------------------------- sequences
    @abstractmethod
    def features(self, seq: Any) -> np.ndarray:
        """Input rows ``φ_0..φ_n`` of one user-facing sequence, shape ``(n+1, D)``."""

    @abstractmethod
    def trigger_mask(self, seq: Any) -> np.ndarray:
        """Per position ``0..n`` of one user-facing sequence: its token is the trigger."""

    @abstractmethod
    def targets(self, seq: Any) -> np.ndarray:
        """Targets ``y_0..y_n`` of one user-facing sequence, shape ``(n+1, out_dim)``."""

    @abstractmethod
    def sample(self, n_sequences: int, seed: int | None = 0) -> Any:
        """``n_sequences`` seeded draws from the family (user-facing sequences)."""

    # ------------------------------------------------------------ description
    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """A JSON-friendly description; ``from_description`` inverts it."""

    @classmethod
    @abstractmethod
    def from_description(cls, d: dict[str, Any]) -> Task:
        """The task a :meth:`describe` output names."""

    # ----------------------------------------------------------- capabilities
    # What a layer may ask of a task instead of its ``setting`` name (see
    # :data:`CAPABILITIES` and :func:`require`).  ``finite`` is declared above.
    has_positions: ClassVar[bool] = False
    """The input rows carry positional features (scores may depend on positions)."""
    single_trigger: ClassVar[bool] = False
    """Every sequence holds exactly one trigger (otherwise: at most one)."""
    fixed_length: ClassVar[bool] = False
    """Every sequence has the one length ``max_depth + 1``."""
    tree_factorised: ClassVar[bool] = False
    """The finite family at each depth is a union of products of token sets (the task
    has ``prefix_products(t)``): the tree-factorised kernel applies."""

    @property
    def residual_targets(self) -> bool:
        """The targets are those of a residual model (``y_t = x_t + ...``)."""
        return False

    def n_sequences_at_most(self, cap: int) -> int:
        """:attr:`n_sequences`, or ``cap + 1`` when the family is larger than ``cap``: an
        estimate whose cost does not grow with the sizes it bounds."""
        return min(self.n_sequences, cap + 1)

    def fixed_value_floor(self) -> Any:
        """An exact lower bound (a SymPy number) on ``dist(0, conv S)`` for every set ``S``
        of the fixed values (a token's row without its BOS coordinate) of non-BOS tokens
        that a sequence of the family holds, or ``None`` when the task states none.  With
        it, Theorem 3 holds at every non-trigger position of every sequence at once
        (continuous content included)."""
        return None


def capped_power(base: int, exponent: int, cap: int) -> int:
    """``base ** exponent``, or ``cap + 1`` when it exceeds ``cap`` (never computed then)."""
    if base <= 1 or exponent <= 0:
        return base**max(exponent, 0) if base >= 0 else cap + 1
    if exponent > cap.bit_length() + 1:  # base >= 2: already beyond 2^(bits of cap)
        return cap + 1
    return min(base**exponent, cap + 1)


CAPABILITIES: dict[str, str] = {
    "finite": "a finite vocabulary (token codes, exhaustive enumeration)",
    "has_positions": "positional features in the input rows",
    "single_trigger": "exactly one trigger in every sequence",
    "fixed_length": "sequences of one fixed length",
    "tree_factorised": "a product-form family (the tree-factorised kernel)",
    "residual_targets": "the targets of a residual model",
}
"""Every capability a layer may ask of a task, with the words of its refusal."""


def require(task: Any, capability: str, needed_by: str, value: bool = True) -> None:
    """Refuse, with one clear message (a :class:`~sinkproof.errors.CapabilityError`, a
    TypeError), a task that lacks (``value=True``) or has (``value=False``)
    ``capability``; ``needed_by`` names what asked."""
    if capability not in CAPABILITIES:
        raise KeyError(f"unknown task capability {capability!r}")
    if not isinstance(task, Task):
        raise TypeError(f"{needed_by} needs a task, got {type(task).__name__}")
    if bool(getattr(task, capability)) == value:
        return
    what = CAPABILITIES[capability]
    need = "needs" if value else "does not apply to"
    raise CapabilityError(f"{needed_by} {need} a task with {what}; "
                    f"{type(task).__name__} (setting {task.setting!r}) "
                    f"{'has none' if value else 'has it'}")


def require_setting(task: Any, setting: str, name: str = "task") -> None:
    """Raise a clear TypeError unless ``task`` is a task of the given ``setting``.

    Deprecated: ask a capability with :func:`require` instead (one refusal message for
    every layer); kept until its last caller is gone.
    """
    if isinstance(task, Task) and task.setting == setting:
        return
    want = {"trigger": "TriggerTask", "paper": "PaperTask"}.get(setting, setting)
    got = (f"{type(task).__name__} (setting {task.setting!r})" if isinstance(task, Task)
           else type(task).__name__)
    raise TypeError(f"{name} must be a {want} (setting {setting!r}), got {got}")
