"""The paper's own trigger task: fixed length, exactly one trigger, whole-vector targets.

Tokens are vectors ``x^(i) ∈ R^n`` at positions ``i = 0..L-1`` with BOS ``e_0`` at 0.
Coordinates: 0 the BOS indicator, 1 the trigger indicator, ``2..n-2`` content (on every
non-BOS token, the trigger included), ``n-1`` a bias channel equal to 1 on content
tokens and 0 on BOS and the trigger.  Every sequence holds exactly one trigger, at
``j ∈ {2, ..., L-1}``.  Targets are whole vectors: ``y_i = 0`` for ``i != j`` and
``y_j = (1/j) Σ_{k=1..j} x^(k)`` (the trigger included); with ``residual=True``
(a model with residual connections) ``y_i = x^(i) + [i = j] (1/j) Σ_{k=1..j} x^(k)``.

Content is either continuous, i.i.d. Uniform(-1, 1) per coordinate (``"uniform"``: the
family is a distribution, sampled with a seed), or a finite set of content vectors (a
user list, or ``"grid"``: every combination of ``grid`` equally spaced values in
``[-1, 1]``).  With a finite set, token *codes* are ``0..m-1`` a content token with
content vector ``c_code``, ``m..2m-1`` the trigger with content ``c_{code-m}``, ``2m`` BOS,
and the family is enumerated exhaustively (``(L-2) m^(L-1)`` sequences).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from .. import work
from .._validate import as_int, as_real_array, choice
from ..errors import SinkproofError
from .protocol import PrefixBlock, Task, capped_power

CONTENT_KINDS = ("uniform", "grid")
MAX_GRID_VECTORS = 1 << 20
MAX_PREFIX_CLASSES = 2_000_000
"""Default limit on the (query, multiset) classes :meth:`PaperTask.prefix_classes` lists."""

BOS, TRIGGER = 0, 1
"""Coordinates of the BOS and trigger indicators (content follows, the bias is last)."""


class ContinuousContentError(SinkproofError, ValueError):
    """An operation that needs a finite vocabulary was asked of continuous content."""


@dataclass(frozen=True, eq=False)
class PaperTask(Task):
    """The paper's trigger task with token dimension ``n`` and fixed length ``L``.

    Parameters
    ----------
    n: token dimension (>= 4: BOS, trigger, at least one content coordinate, bias).
    L: sequence length, BOS included (>= 3, so that a trigger fits at ``j >= 2``).
    content: ``"uniform"`` (continuous Uniform(-1, 1), sampled), ``"grid"`` (every
        combination of ``grid`` values ``linspace(-1, 1, grid)``) or an array
        ``(m, n-3)`` of content vectors (finite).
    residual: targets of a residual model (``y_i = x^(i) + ...``) instead of ``0 / mean``.
    grid: points per coordinate with ``content="grid"`` (>= 2).
    """

    setting: ClassVar[str] = "paper"
    DESCRIPTION_FIELDS: ClassVar[frozenset[str]] = frozenset(
        {"n", "L", "content", "residual", "grid"})
    """The fields of a description (:meth:`from_description`; ``setting`` besides)."""
    single_trigger: ClassVar[bool] = True
    fixed_length: ClassVar[bool] = True

    n: int = 16
    L: int = 16
    content: Any = "uniform"
    residual: bool = False
    grid: int | None = None
    content_scheme: str = field(init=False)

    def __post_init__(self) -> None:
        n = as_int("n", self.n, minimum=4)
        L = as_int("L", self.L, minimum=3)
        if not isinstance(self.residual, (bool, np.bool_)):
            raise TypeError(f"residual must be True or False, got {self.residual!r}")
        grid = None
        if isinstance(self.content, str):
            scheme = choice("content scheme", self.content, CONTENT_KINDS)
            if scheme == "uniform":
                if self.grid is not None:
                    raise ValueError("grid is only meaningful with content='grid'")
                content = None
            else:
                if self.grid is None:
                    raise ValueError("content='grid' needs grid=<points per coordinate>")
                grid = as_int("grid", self.grid, minimum=2)
                if work.power(grid, n - 3) > MAX_GRID_VECTORS:
                    raise ValueError(
                        f"a grid of {grid} points in {n - 3} content coordinates has "
                        f"{grid}^{n - 3} vectors (> {MAX_GRID_VECTORS}): lower n or grid")
                axis = np.linspace(-1.0, 1.0, grid) + 0.0
                content = np.array(list(itertools.product(axis, repeat=n - 3)), dtype=float)
        else:
            if self.grid is not None:
                raise ValueError("grid is only meaningful with content='grid'")
            scheme = "custom"
            content = as_real_array("content", self.content, ndim=2)
            if content.shape[0] == 0:
                raise ValueError("content set is empty: give at least one content vector")
            if content.shape[1] != n - 3:
                raise ValueError(f"content vectors must have length n-3={n - 3}, "
                                 f"got shape {content.shape}")
            content = content + 0.0  # no negative zeros
        if content is not None:
            content.setflags(write=False)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "L", L)
        object.__setattr__(self, "residual", bool(self.residual))
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "content", content if content is not None else "uniform")
        object.__setattr__(self, "content_scheme", scheme)

    # ------------------------------------------------------------ protocol
    @property
    def D(self) -> int:
        """Input dimension: the token vector itself (no positional features), ``n``."""
        return self.n

    @property
    def residual_targets(self) -> bool:
        """Targets of a residual model (``residual=True``)."""
        return self.residual

    def fixed_value_floor(self) -> Any:
        """``1/√2``: every non-BOS token has trigger + bias coordinates summing to 1, so
        every convex combination of their fixed values lies on that hyperplane, at
        distance ``1/√2`` from 0."""
        import sympy

        return 1 / sympy.sqrt(2)

    @property
    def out_dim(self) -> int:
        """Targets are whole token vectors: ``n``."""
        return self.n

    @property
    def token_columns(self) -> slice:
        """Every column is a token feature (there is no positional encoding)."""
        return slice(0, self.n)

    @property
    def max_depth(self) -> int:
        """The last position, ``L - 1``."""
        return self.L - 1

    @property
    def finite(self) -> bool:
        """Whether content comes from a finite set (exhaustive enumeration applies)."""
        return self.content_scheme != "uniform"

    @property
    def content_dim(self) -> int:
        """Number of content coordinates, ``n - 3``."""
        return self.n - 3

    @property
    def content_slice(self) -> slice:
        """Coordinates ``2..n-2`` of a token: its content."""
        return slice(2, self.n - 1)

    @property
    def bias_index(self) -> int:
        """Coordinate of the is-content bias channel, ``n - 1``."""
        return self.n - 1

    @property
    def trigger_positions(self) -> range:
        """Where the one trigger may sit: ``2..L-1``."""
        return range(2, self.L)

    # ------------------------------------------------------- finite content
    def _need_finite(self, what: str) -> np.ndarray:
        if not self.finite:
            raise ContinuousContentError(
                f"{what} needs a finite content set; this task has continuous content "
                "('uniform'): give content=<array> or content='grid', or sample()")
        return self.content

    @property
    def m(self) -> int:
        """Size of the finite content set."""
        return self._need_finite("the content-set size").shape[0]

    @property
    def n_tokens(self) -> int:
        """Number of token codes: ``m`` content tokens, ``m`` triggers (one per content), BOS."""
        return 2 * self.m + 1

    @property
    def bos_code(self) -> int:
        """Code of BOS, ``2m``."""
        return 2 * self.m

    def token_kind(self, code: int) -> str:
        """``"content"`` (codes ``< m``), ``"trigger"`` (``m..2m-1``) or ``"bos"`` (``2m``)."""
        code = as_int("token code", code, minimum=0)
        if code >= self.n_tokens:
            raise ValueError(f"token code {code} out of range [0, {self.n_tokens})")
        m = self.m
        return "content" if code < m else "trigger" if code < 2 * m else "bos"

    def is_trigger(self, codes: np.ndarray) -> np.ndarray:
        """Mask of trigger codes (``m <= code < 2m``)."""
        codes = np.asarray(codes)
        m = self.m
        return (codes >= m) & (codes < 2 * m)

    @cached_property
    def token_table(self) -> np.ndarray:
        """The token vector of every code, ``(2m+1, n)``: content..., triggers..., BOS."""
        c = self._need_finite("the token table")
        m = c.shape[0]
        table = np.zeros((2 * m + 1, self.n))
        table[: 2 * m, self.content_slice] = np.concatenate([c, c])
        table[:m, self.bias_index] = 1.0
        table[m : 2 * m, TRIGGER] = 1.0
        table[2 * m, BOS] = 1.0
        table.setflags(write=False)
        return table

    @cached_property
    def _exact_table(self) -> tuple[tuple[Fraction, ...], ...]:
        return tuple(tuple(Fraction(float(v)) for v in row) for row in self.token_table)

    def token_features_exact(self, code: int) -> list[Fraction]:
        """A token vector as exact rationals (the content floats' exact binary values)."""
        self.token_kind(code)
        return list(self._exact_table[code])

    def prefix_features(self, codes: np.ndarray) -> np.ndarray:
        """Token vectors ``x^(0..t)`` of prefixes ``codes`` ``(N, t)``: ``(N, t+1, n)``."""
        codes = np.asarray(codes, dtype=np.int64)
        keys = np.concatenate([np.full((codes.shape[0], 1), self.bos_code), codes], axis=1)
        return self.token_table[keys]

    def decode(self, codes: Sequence[int]) -> np.ndarray:
        """The token matrix ``(t+1, n)`` of one prefix of codes (BOS prepended)."""
        return self.prefix_features(np.asarray(codes, dtype=np.int64)[None])[0].copy()

    def encode(self, x: Any) -> np.ndarray:
        """Codes of the tokens after BOS of a sequence of this (finite) task."""
        x = self.check_sequence(x)
        table = self.token_table
        codes = np.empty(self.L - 1, dtype=np.int64)
        for i in range(1, self.L):
            hit = np.flatnonzero(np.all(table[:-1] == x[i], axis=1))
            if hit.size == 0:
                raise ValueError(f"token {i} is not a token of the content set")
            codes[i - 1] = hit[0]
        return codes

    # ------------------------------------------------------------- targets
    def row_targets(self, x: np.ndarray) -> np.ndarray:
        """Targets at every position of token matrices ``x`` ``(N, t+1, n)``: the task's
        one target formula, for floats or exact rationals (an object array of Fractions).
        A trigger row ``i`` gets the mean of rows ``1..i`` (plus ``x^(i)`` itself when
        residual); every other row ``0`` (or ``x^(i)``)."""
        x = np.asarray(x)
        if x.dtype != object:
            x = x.astype(float)
        y = x.copy() if self.residual else np.zeros_like(x)
        trig = np.asarray(x[..., TRIGGER] == 1, dtype=bool)
        trig[..., 0] = False
        if np.any(trig):
            csum = np.cumsum(x[..., 1:, :], axis=-2)  # sum of rows 1..i at index i-1
            i = np.arange(1, x.shape[-2]).astype(x.dtype)
            mean = csum / i[:, None]
            y[..., 1:, :] = y[..., 1:, :] + np.where(trig[..., 1:, None], mean, 0)
        return y

    def prefix_targets(self, codes: np.ndarray) -> np.ndarray:
        """``y_t`` at the last position of prefixes ``codes`` ``(N, t)``: ``(N, n)``."""
        return self.row_targets(self.prefix_features(codes))[:, -1]

    def exact_prefix_target(self, codes: Sequence[int]) -> tuple[Fraction, ...]:
        """``y_t`` at the last position of one prefix of codes, exactly (the same formula
        on the tokens' exact values)."""
        codes = [self.bos_code, *(int(c) for c in codes)]
        rows = np.array([self.token_features_exact(c) for c in codes], dtype=object)
        return tuple(Fraction(v) for v in self.row_targets(rows[None])[0, -1])

    # ------------------------------------------------------------ sequences
    def check_sequence(self, x: Any) -> np.ndarray:
        """``x`` as a float ``(L, n)`` token matrix of this task, or a clear error: BOS
        ``e_0`` at 0, one trigger at ``j ∈ {2..L-1}``, the bias channel on content tokens."""
        x = as_real_array("x (the token matrix)", x, ndim=2)
        if x.shape != (self.L, self.n):
            raise ValueError(f"x must have shape (L, n) = ({self.L}, {self.n}), got {x.shape}")
        bos = np.zeros(self.n)
        bos[BOS] = 1.0
        if not np.array_equal(x[0], bos):
            raise ValueError("x[0] must be BOS, the unit vector e_0")
        body = x[1:]
        if np.any(body[:, BOS] != 0):
            raise ValueError("only position 0 may carry the BOS coordinate")
        trig = body[:, TRIGGER]
        if not np.all((trig == 0) | (trig == 1)):
            raise ValueError("the trigger coordinate (1) must be 0 or 1")
        where = np.flatnonzero(trig) + 1
        if where.size != 1 or not 2 <= where[0] <= self.L - 1:
            raise ValueError(f"x must hold exactly one trigger at a position in 2..{self.L - 1}, "
                             f"found triggers at {where.tolist()}")
        if not np.array_equal(body[:, self.bias_index], 1.0 - trig):
            raise ValueError(f"the bias channel ({self.bias_index}) must be 1 on content tokens "
                             "and 0 on the trigger")
        content = body[:, self.content_slice]
        if self.finite:
            known = np.any(np.all(content[:, None, :] == self.content[None], axis=2), axis=1)
            if not np.all(known):
                raise ValueError(f"token {int(np.argmin(known)) + 1} has content outside "
                                 "the task's content set")
        elif np.any(np.abs(content) > 1.0):
            raise ValueError("uniform content must lie in [-1, 1]")
        return x

    def trigger_position(self, x: Any) -> int:
        """``j``, the position of the trigger of a sequence."""
        return int(np.flatnonzero(self.check_sequence(x)[:, TRIGGER])[0])

    def trigger_mask(self, x: Any) -> np.ndarray:
        """Per position ``0..L-1``: the token is the trigger."""
        return self.check_sequence(x)[:, TRIGGER] == 1.0

    def features(self, x: Any) -> np.ndarray:
        """The input rows of a sequence are its tokens: ``x`` itself, checked, ``(L, n)``."""
        return self.check_sequence(x).copy()

    def targets(self, x: Any) -> np.ndarray:
        """Targets ``y_0..y_{L-1}`` of a sequence, ``(L, n)``."""
        return self.row_targets(self.check_sequence(x)[None])[0]

    def sequence(self, trigger_at: int, content: Any) -> np.ndarray:
        """The token matrix ``(L, n)`` with the trigger at ``trigger_at`` and the content of
        positions ``1..L-1``: an array ``(L-1, n-3)``, or (finite) ``L-1`` indices into the set."""
        j = as_int("trigger_at", trigger_at, minimum=2)
        if j > self.L - 1:
            raise ValueError(f"trigger_at must lie in 2..{self.L - 1}, got {j}")
        if self.finite and np.asarray(content).ndim == 1:
            idx = np.asarray(content)
            if idx.shape != (self.L - 1,) or not np.issubdtype(idx.dtype, np.integer):
                raise ValueError(f"content indices must be {self.L - 1} integers")
            if np.any((idx < 0) | (idx >= self.m)):
                raise ValueError(f"content indices must lie in [0, {self.m})")
            rows = self.content[idx]
        else:
            rows = as_real_array("content", content, ndim=2)
            if rows.shape != (self.L - 1, self.n - 3):
                raise ValueError(f"content must have shape (L-1, n-3) = ({self.L - 1}, "
                                 f"{self.n - 3}), got {rows.shape}")
        x = _assemble(self, rows[None], np.array([j]))[0]
        return self.check_sequence(x)

    def sample(self, n_sequences: int, seed: int | None = 0,
               trigger_at: int | None = None) -> np.ndarray:
        """``(N, L, n)`` seeded sequences: the trigger position uniform in ``2..L-1`` (or
        fixed at ``trigger_at``), content Uniform(-1, 1) on every non-BOS token (or uniform
        over the finite set)."""
        N = as_int("n_sequences", n_sequences, minimum=0)
        rng = np.random.default_rng(seed)
        if trigger_at is None:
            j = rng.integers(2, self.L, size=N)
        else:
            t = as_int("trigger_at", trigger_at, minimum=2)
            if t > self.L - 1:
                raise ValueError(f"trigger_at must lie in 2..{self.L - 1}, got {t}")
            j = np.full(N, t)
        if self.finite:
            rows = self.content[rng.integers(0, self.m, size=(N, self.L - 1))]
        else:
            rows = rng.uniform(-1.0, 1.0, size=(N, self.L - 1, self.n - 3))
        return _assemble(self, rows, j)

    # -------------------------------------------------------------- family
    @property
    def n_sequences(self) -> int:
        """Size of the exhaustive family: ``(L-2) m^(L-1)``."""
        return (self.L - 2) * self.m ** (self.L - 1)

    def n_sequences_at_most(self, cap: int) -> int:
        """:attr:`n_sequences`, or ``cap + 1`` beyond ``cap`` (no power beyond it formed)."""
        return min((self.L - 2) * capped_power(self.m, self.L - 1, cap), cap + 1)

    def n_prefixes_at_most(self, cap: int) -> int:
        """The distinct non-empty prefixes of the family (without the trigger at depth
        ``t <= L-2``: ``m^t``; with it at one of ``2..t``: ``(t-1) m^t``), or ``cap + 1``
        beyond ``cap``: each depth adds at least one, so at most ``cap + 1`` are summed."""
        total, m, L = 0, self.m, self.L
        for t in range(1, L):
            power = capped_power(m, t, cap)
            total += (power if t <= L - 2 else 0) + (t - 1) * power
            if total > cap:
                return cap + 1
        return total

    def prefix_blocks(self, t: int, max_rows: int = 1 << 16) -> Iterator[PrefixBlock]:
        """Every prefix ``x_1..x_t`` of the family (``1 <= t <= L-1``), in chunks.

        Without a trigger yet (extended by the trigger at any of ``t+1..L-1``):
        multiplicity ``(L-1-t) m^(L-1-t)``; with the trigger at ``i ∈ 2..t``:
        ``m^(L-1-t)``.  No-trigger prefixes of the full length are not in the family.
        """
        t = as_int("t", t, minimum=1)
        if t > self.L - 1:
            raise ValueError(f"depth {t} exceeds L-1={self.L - 1}")
        m, rest = self.m, self.L - 1 - t
        max_rows = as_int("max_rows", max_rows, minimum=1)
        if rest > 0:
            yield from _digit_blocks(m, t, None, float(rest * m**rest), max_rows)
        for i in range(2, t + 1):
            yield from _digit_blocks(m, t, i - 1, float(m**rest), max_rows)

    # ------------------------------------------------ multiset classes
    def n_prefix_classes(self) -> int:
        """The number of (query, multiset of visible tokens) classes of the family's
        prefixes (:meth:`prefix_classes`), in closed form: at depth ``t`` there are
        ``m·C(t+m-2, m-1)`` without a trigger (``t <= L-2``), as many with the trigger as
        the query (``t >= 2``) and ``m²·C(t+m-3, m-1)`` with a content query after the
        trigger (``t >= 3``); summed over ``t`` (hockey stick),
        ``m·C(L+m-3, m) + m·(C(L+m-2, m) - 1) + m²·(C(L+m-3, m) - 1)``."""
        m, L = self.m, self.L
        return (m * math.comb(L + m - 3, m) + m * (math.comb(L + m - 2, m) - 1)
                + m * m * (math.comb(L + m - 3, m) - 1))

    def prefix_classes(self, depth: int | None = None,
                       max_work: int | None = None) -> list[PrefixClass]:
        """Every (query token, multiset of the tokens ``x_1..x_t``) class of the family's
        prefixes, at ``depth`` (default: every depth ``1..L-1``), shortest first.

        Without positional encoding a head's output at the last position of a prefix is
        a function of the query token and the multiset of visible tokens, and so is the
        prefix's target (0, or the mean of the visible tokens at the trigger): every
        prefix of one class carries the same constraint.  Each class is given by one
        representative prefix of the family (content keys in increasing code order, the
        trigger, when it is not the query, at position 2, the query last) and the number
        of family prefixes it stands for.  Refused beyond ``max_work`` classes
        (:data:`MAX_PREFIX_CLASSES` by default), counted first."""
        work.refuse_beyond("prefix classes", self.n_prefix_classes(), max_work,
                           MAX_PREFIX_CLASSES)
        depths = range(1, self.L) if depth is None else [as_int("depth", depth, minimum=1)]
        if depths[-1] > self.L - 1:
            raise ValueError(f"depth {depths[-1]} exceeds L-1={self.L - 1}")
        m, out = self.m, []
        for t in depths:
            for q in range(m):  # a content query
                for rest in itertools.combinations_with_replacement(range(m), t - 1):
                    if t <= self.L - 2:
                        out.append(_content_class((*rest, q), q))
                for trig in range(m, 2 * m) if t >= 3 else ():
                    for rest in itertools.combinations_with_replacement(range(m), t - 2):
                        out.append(_trigger_class(rest, trig, q))
            for trig in range(m, 2 * m) if t >= 2 else ():  # the trigger is the query
                for rest in itertools.combinations_with_replacement(range(m), t - 1):
                    out.append(PrefixClass((*rest, trig), _arrangements(rest)))
        return out

    def class_representative(self, prefix: Sequence[int]) -> tuple[int, ...]:
        """The representative :meth:`prefix_classes` gives the (query, multiset) class of
        ``prefix`` (a prefix of the family)."""
        row = self.subfamily([prefix])[0]
        q, m = row[-1], self.m
        if q >= m:
            return (*sorted(row[:-1]), q)
        trig = [c for c in row if c >= m]
        rest = sorted(c for c in row[:-1] if c < m)
        return (*rest[:1], *trig, *rest[1:], q) if trig else (*rest, q)

    def subfamily(self, prefixes: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
        """``prefixes`` as a sub-family of this task's family: each checked to be a prefix
        of the family (codes, length, one trigger not at position 1, room for the trigger
        when it has none), or a clear error."""
        out = []
        m = self.m
        for i, pre in enumerate(prefixes):
            row = tuple(int(c) for c in pre)
            where = [k for k, c in enumerate(row) if c >= m]
            if not 1 <= len(row) <= self.L - 1 or any(not 0 <= c < 2 * m for c in row) \
                    or len(where) > 1 or where == [0] or (not where and len(row) > self.L - 2):
                raise ValueError(f"prefix {i} {list(row)} is not a prefix of the family")
            out.append(row)
        return out

    def prefix_codes(self, at: Any, trigger: int | None = None) -> tuple[int, ...]:
        """The token codes of the prefix whose tokens carry the content vectors ``at`` (one
        row per token after BOS), token ``trigger`` (1-based) the trigger, on a finite
        task; a clear error unless it is a prefix of the family."""
        rows = as_real_array("at", at, ndim=2)
        if rows.shape[1] != self.content_dim:
            raise ValueError(f"at: each token's content has {self.content_dim} entries, "
                             f"got {rows.shape[1]}")
        codes = []
        for k, row in enumerate(rows, start=1):
            hit = np.flatnonzero(np.all(self.content == row, axis=1))
            if hit.size == 0:
                raise ValueError(f"at: token {k}'s content is not in the task's content set")
            codes.append(int(hit[0]) + (self.m if k == trigger else 0))
        return self.subfamily([codes])[0]

    # ---------------------------------------------------------- description
    def replace(self, **changes: Any) -> PaperTask:
        """A copy of this task with some constructor arguments changed."""
        args = dict(n=self.n, L=self.L, residual=self.residual, grid=self.grid,
                    content=self.content if self.content_scheme == "custom"
                    else self.content_scheme)
        args.update(changes)
        content = args.get("content")
        if not (isinstance(content, str) and content == "grid") and "grid" not in changes:
            args["grid"] = None
        return PaperTask(**args)

    def describe(self) -> dict[str, Any]:
        """A JSON-friendly description from which the task can be rebuilt."""
        d: dict[str, Any] = dict(setting="paper", n=self.n, L=self.L, residual=self.residual)
        if self.content_scheme == "custom":
            d["content"] = self.content.tolist()
        else:
            d["content"] = self.content_scheme
            if self.grid is not None:
                d["grid"] = self.grid
        return d

    @classmethod
    def from_description(cls, d: dict[str, Any]) -> PaperTask:
        """Inverse of :meth:`describe`."""
        if not isinstance(d, dict):
            raise TypeError("a task description must be a mapping")
        if d.get("setting", "paper") != "paper":
            raise ValueError(f"not a paper-task description: setting={d['setting']!r}")
        d = {k: v for k, v in d.items() if k != "setting"}
        unknown = set(d) - cls.DESCRIPTION_FIELDS
        if unknown:
            raise ValueError(f"unknown task fields: {', '.join(sorted(unknown))}")
        return cls(**d)

    def __repr__(self) -> str:
        content = (f"<{self.m} vectors>" if self.content_scheme == "custom"
                   else f"'grid', grid={self.grid}" if self.grid else "'uniform'")
        return (f"PaperTask(n={self.n}, L={self.L}, content={content}, "
                f"residual={self.residual})")

    def _key(self) -> tuple:
        c = self.content.tobytes() if self.finite else None
        return (self.n, self.L, self.residual, self.content_scheme, c)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PaperTask):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


@dataclass(frozen=True)
class PrefixClass:
    """One (query token, multiset of visible tokens) class of prefixes: a representative
    prefix of the family (token codes ``x_1..x_t``, the query last) and ``count``, how many
    prefixes of the family have that query and that multiset."""

    representative: tuple[int, ...]
    count: int

    @property
    def query(self) -> int:
        return self.representative[-1]


def _arrangements(keys: Sequence[int]) -> int:
    """Distinct orders of the multiset ``keys``: ``len! / Π count!``."""
    out = math.factorial(len(keys))
    for c in set(keys):
        out //= math.factorial(list(keys).count(c))
    return out


def _content_class(keys: Sequence[int], q: int) -> PrefixClass:
    """The class with content query ``q`` and content keys ``keys`` (``q`` among them)."""
    rest = sorted(keys)
    rest.remove(q)
    return PrefixClass((*rest, q), _arrangements(rest))


def _trigger_class(rest: Sequence[int], trig: int, q: int) -> PrefixClass:
    """The class with content query ``q`` after the trigger ``trig``, other keys ``q`` and
    ``rest``: the trigger takes one of positions ``2..t-1`` of the ``t - 1`` before ``q``."""
    keys = sorted((*rest, q))
    keys.remove(q)  # the query's own copy is last; the others fill 1..t-1 with the trigger
    rep = (*keys[:1], trig, *keys[1:], q)
    return PrefixClass(rep, (len(keys)) * _arrangements(keys) if keys else 0)


def _assemble(task: PaperTask, rows: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Token matrices ``(N, L, n)`` from content ``(N, L-1, n-3)`` and trigger positions."""
    N = rows.shape[0]
    x = np.zeros((N, task.L, task.n))
    x[:, 0, BOS] = 1.0
    x[:, 1:, task.content_slice] = rows
    is_trig = np.arange(1, task.L)[None, :] == np.asarray(j)[:, None]
    x[:, 1:, TRIGGER] = is_trig
    x[:, 1:, task.bias_index] = ~is_trig
    return x


def _digit_blocks(m: int, t: int, trigger_slot: int | None, multiplicity: float,
                  max_rows: int) -> Iterator[PrefixBlock]:
    """All ``m^t`` content strings of depth ``t``; the slot ``trigger_slot`` (if any) holds
    the trigger, whose code is its content index plus ``m``."""
    total = m**t
    powers = m ** np.arange(t - 1, -1, -1, dtype=np.int64)
    for start in range(0, total, max_rows):
        idx = np.arange(start, min(total, start + max_rows), dtype=np.int64)
        digits = (idx[:, None] // powers[None, :]) % m
        if trigger_slot is not None:
            digits[:, trigger_slot] += m
        yield PrefixBlock(codes=digits, multiplicity=multiplicity)
