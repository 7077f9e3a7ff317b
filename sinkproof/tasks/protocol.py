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

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol, runtime_checkable

import numpy as np

TOKEN_KINDS = ("content", "trigger", "bos")
"""The kinds a token can have."""


@dataclass(frozen=True)
class PrefixBlock:
    """A chunk of prefixes of one depth ``t``: ``codes`` ``(N, t)`` (tokens ``x_1..x_t``,
    BOS implicit) and ``multiplicity``, the number of sequences of the family extending
    each of them (one number for the whole block)."""

    codes: np.ndarray
    multiplicity: float


@runtime_checkable
class Task(Protocol):
    """The interface of a sequence task (see the module docstring for the objects).

    Attributes
    ----------
    setting: the name of the formalisation (``"trigger"`` for our canonical task,
        ``"paper"`` for the paper's own setting).
    D: dimension of the input row ``φ_t``.
    out_dim: dimension of the targets (and of a model's outputs).
    token_columns: the columns of ``φ_t`` that depend on the token only (token-only
        value maps act on these); the rest are positional features.
    max_depth: the largest position a sequence of the family reaches.
    finite: whether the vocabulary is finite (exhaustive enumeration applies).
    """

    setting: str

    @property
    def D(self) -> int: ...

    @property
    def out_dim(self) -> int: ...

    @property
    def token_columns(self) -> slice: ...

    @property
    def max_depth(self) -> int: ...

    @property
    def finite(self) -> bool: ...

    # ------------------------------------------------------ finite vocabulary
    @property
    def n_tokens(self) -> int:
        """Number of token codes (finite vocabulary only)."""
        ...

    @property
    def bos_code(self) -> int:
        """Code of BOS (finite vocabulary only)."""
        ...

    def token_kind(self, code: int) -> str:
        """The kind of a token code: one of :data:`TOKEN_KINDS`."""
        ...

    def is_trigger(self, codes: np.ndarray) -> np.ndarray:
        """Boolean mask, same shape as ``codes``: the token is the trigger."""
        ...

    def prefix_features(self, codes: np.ndarray) -> np.ndarray:
        """Input rows ``φ_0..φ_t`` of prefixes ``codes`` ``(N, t)`` (BOS prepended),
        shape ``(N, t+1, D)``."""
        ...

    def prefix_targets(self, codes: np.ndarray) -> np.ndarray:
        """Targets ``y_t`` at the last position of prefixes ``codes`` ``(N, t)`` (``t = 0``:
        the BOS position), shape ``(N, out_dim)``: the task's one float target code."""
        ...

    def prefix_blocks(self, t: int, max_rows: int = 1 << 16) -> Iterator[PrefixBlock]:
        """Every prefix of depth ``t`` of the family, with multiplicities, in chunks."""
        ...

    @property
    def n_sequences(self) -> int:
        """Number of sequences of the exhaustive family."""
        ...

    # ------------------------------------------------------------------ exact
    def token_features_exact(self, code: int) -> list[Fraction]:
        """The token part of ``φ`` (columns ``token_columns``) as exact rationals."""
        ...

    def exact_prefix_target(self, codes: Sequence[int]) -> tuple[Fraction, ...]:
        """``y_t`` at the last position of one prefix of codes, as exact rationals."""
        ...

    # ------------------------------------------------------------- sequences
    def features(self, seq: Any) -> np.ndarray:
        """Input rows ``φ_0..φ_n`` of one user-facing sequence, shape ``(n+1, D)``."""
        ...

    def targets(self, seq: Any) -> np.ndarray:
        """Targets ``y_0..y_n`` of one user-facing sequence, shape ``(n+1, out_dim)``."""
        ...

    def sample(self, n_sequences: int, seed: int | None = 0) -> Any:
        """``n_sequences`` seeded draws from the family (user-facing sequences)."""
        ...

    # ------------------------------------------------------------ description
    def describe(self) -> dict[str, Any]:
        """A JSON-friendly description; ``from_description`` inverts it."""
        ...

    @classmethod
    def from_description(cls, d: dict[str, Any]) -> Task:
        """The task a :meth:`describe` output names."""
        ...

