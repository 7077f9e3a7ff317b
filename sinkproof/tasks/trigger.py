"""The trigger-conditional task: our canonical formalisation (implements the task protocol).

A sequence is given by its tokens after BOS: a list of content indices into
``task.content`` with :data:`TRIG` marking the trigger.  BOS (position 0) is
implicit.  Internally tokens are *codes*: ``0..k-1`` content, ``k`` the trigger,
``k+1`` BOS, so that one table lookup gives features, values and targets.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from .. import work
from .._validate import as_int, as_real_array, choice
from ..errors import WorkLimitError
from ..tokens import TRIG
from .protocol import PrefixBlock, Task, capped_power

CONTENT_SCHEMES = ("signed", "gaussian")
MAX_CONTENT_ENTRIES = 10**7
"""The largest content table ``k x p`` a task builds (80 MB of floats); beyond it the
task is refused before anything is allocated."""
POSITION_SCHEMES = ("inverse", "onehot", "none")
TRIGGER_FAMILIES = ("single", "multi")


def inverse_position_ratio(t: int) -> Fraction:
    """``r_t`` of the inverse scheme: 0 at t=0, 1 at t=1, 1/(t-1) for t>=2."""
    if t == 0:
        return Fraction(0)
    if t == 1:
        return Fraction(1)
    return Fraction(1, t - 1)


def family_count(k: int, T: int, multi: bool, n: int | None = None,
                 positions: bool = False) -> int:
    """Sequences of length ``n`` (every length ``1..T`` if ``None``; with ``positions``:
    (sequence, position) pairs, position 0 included) over ``k`` content tokens, in closed
    form where a loop over ``T`` would be long, saturated at :data:`sinkproof.work.BEYOND`."""
    def one(m: int) -> int:
        if multi:
            return work.power(k + 1, m)
        return work.total((work.power(k, m), work.product(m, work.power(k, m - 1))))

    if n is not None:
        return one(n)
    if k == 1 and not multi:  # 1 + m sequences of length m: sums of m + 1 and (m + 1)^2
        exact = ((T + 1) * (T + 2) * (2 * T + 3) // 6 - 1 if positions
                 else T + T * (T + 1) // 2)
        return min(exact, work.BEYOND)
    # k >= 2 (or multi): the terms grow at least as 2^m, so the sum saturates within ~100
    return work.total(work.product(one(m), m + 1) if positions else one(m)
                      for m in range(1, T + 1))


def _signed_basis(p: int) -> np.ndarray:
    work.require_entries("signed content table (2p x p)", 2 * p, p)
    eye = np.eye(p)
    return np.concatenate([eye, -eye + 0.0], axis=0)  # + 0.0: no negative zeros


def show_sequence(seq: Sequence[int]) -> str:
    """A user-facing sequence as ``[0, 3, TRIG]`` (BOS implicit)."""
    return "[" + ", ".join("TRIG" if int(x) == TRIG else str(int(x)) for x in seq) + "]"


def _gaussian_content(p: int, k: int, seed: int) -> np.ndarray:
    work.require_entries("gaussian content table (k x p)", k, p)
    rng = np.random.default_rng(seed)
    return rng.standard_normal((k, p)) / np.sqrt(p)


MAX_SYMMETRY_DIM = 4
"""The largest ``p`` whose ``2^p p!`` signed permutations
:meth:`TriggerTask.content_symmetries` tries (384)."""


@dataclass(frozen=True, eq=False)
class TriggerTask(Task):
    """The trigger-conditional averaging task with content dimension ``p`` and length ``T``.

    Parameters
    ----------
    p: content dimension (>= 1).
    T: maximum sequence length after BOS (>= 1).
    content: ``"signed"`` (``+e_1..+e_p, -e_1..-e_p``), ``"gaussian"`` (``k`` seeded
        N(0, I/p) vectors) or a ``(k, p)`` array of content vectors.
    positions: positional scheme ``"inverse"`` (``[1; r_t]``), ``"onehot"`` (``e_t``)
        or ``"none"`` (``[1]``).
    triggers: ``"single"`` (canonical family S_T, at most one trigger) or ``"multi"``.
    k, seed: size and seed of the gaussian content set.
    """

    setting: ClassVar[str] = "trigger"
    DESCRIPTION_FIELDS: ClassVar[frozenset[str]] = frozenset(
        {"p", "T", "content", "positions", "triggers", "k", "seed"})
    """The fields of a description (:meth:`from_description`; ``setting`` besides)."""
    has_positions: ClassVar[bool] = True
    tree_factorised: ClassVar[bool] = True

    p: int
    T: int
    content: Any = "signed"
    positions: str = "inverse"
    triggers: str = "single"
    k: int | None = None
    seed: int = 0
    content_scheme: str = field(init=False)

    def __post_init__(self) -> None:
        p = as_int("p", self.p, minimum=1)
        T = as_int("T", self.T, minimum=1)
        choice("positional scheme", self.positions, POSITION_SCHEMES)
        choice("trigger family", self.triggers, TRIGGER_FAMILIES)
        seed = as_int("seed", self.seed, minimum=0)
        if isinstance(self.content, str):
            scheme = choice("content scheme", self.content, CONTENT_SCHEMES)
            k = 2 * p if scheme == "signed" or self.k is None else as_int("k", self.k, minimum=1)
            if k * p > MAX_CONTENT_ENTRIES:
                raise WorkLimitError(f"not started: a content table of k x p = {k:,} x "
                                     f"{p:,} entries, beyond the limit of {MAX_CONTENT_ENTRIES:,}: "
                                     "lower p (or k)")
            if scheme == "signed":
                if self.k is not None:
                    raise ValueError("k is only meaningful with content='gaussian'")
                content = _signed_basis(p)
            else:
                k = 2 * p if self.k is None else as_int("k", self.k, minimum=1)
                content = _gaussian_content(p, k, seed)
        else:
            scheme = "custom"
            content = as_real_array("content", self.content, ndim=2)
            if content.shape[0] == 0:
                raise ValueError("content set is empty: give at least one content vector")
            if content.shape[1] != p:
                raise ValueError(
                    f"content vectors must have length p={p}, got shape {content.shape}"
                )
        content.setflags(write=False)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "T", T)
        object.__setattr__(self, "seed", seed)
        object.__setattr__(self, "content", content)
        object.__setattr__(self, "k", content.shape[0])
        object.__setattr__(self, "content_scheme", scheme)

    # ------------------------------------------------------------------ codes
    @property
    def trig_code(self) -> int:
        """Internal code of the trigger token (``k``)."""
        return self.k

    @property
    def bos_code(self) -> int:
        """Internal code of BOS (``k + 1``)."""
        return self.k + 1

    @property
    def n_tokens(self) -> int:
        """Number of token types: ``k`` content vectors, the trigger and BOS."""
        return self.k + 2

    @property
    def out_dim(self) -> int:
        """Dimension of the targets: ``p``."""
        return self.p

    @property
    def token_columns(self) -> slice:
        """Columns of ``φ`` holding ``e(x)``: ``0..p+2``."""
        return slice(0, self.p + 3)

    @property
    def max_depth(self) -> int:
        """The longest sequence reaches position ``T``."""
        return self.T

    @property
    def finite(self) -> bool:
        """The content vocabulary is always a finite set."""
        return True

    def token_kind(self, code: int) -> str:
        """``"content"``, ``"trigger"`` or ``"bos"`` for an internal code."""
        code = as_int("token code", code, minimum=0)
        if code >= self.n_tokens:
            raise ValueError(f"token code {code} out of range [0, {self.n_tokens})")
        if code == self.trig_code:
            return "trigger"
        return "bos" if code == self.bos_code else "content"

    def is_trigger(self, codes: np.ndarray) -> np.ndarray:
        """Mask of trigger codes."""
        return np.asarray(codes) == self.trig_code

    def encode(self, seq: Sequence[int]) -> np.ndarray:
        """Codes of the tokens after BOS; checks indices, length and trigger count."""
        if isinstance(seq, (str, bytes)) or not hasattr(seq, "__len__"):
            raise TypeError(f"a sequence must be a list of token indices, got {type(seq).__name__}")
        arr = np.asarray(seq)
        if arr.ndim != 1:
            raise ValueError(f"a sequence must be one-dimensional, got shape {arr.shape}")
        if arr.size == 0:
            raise ValueError("a sequence needs at least one token after BOS (n >= 1)")
        if arr.size > self.T:
            raise ValueError(f"sequence length {arr.size} exceeds T={self.T}")
        if not np.issubdtype(arr.dtype, np.integer):
            if arr.dtype == object or not np.all(np.equal(np.mod(arr, 1), 0)):
                raise TypeError("sequence tokens must be integers (content indices or sp.TRIG)")
            arr = arr.astype(np.int64)
        bad = (arr != TRIG) & ((arr < 0) | (arr >= self.k))
        if np.any(bad):
            raise ValueError(
                f"token {int(arr[bad][0])} is neither a content index in [0, {self.k}) nor sp.TRIG"
            )
        codes = np.where(arr == TRIG, self.trig_code, arr).astype(np.int64)
        if self.triggers == "single" and np.count_nonzero(codes == self.trig_code) > 1:
            raise ValueError(
                "more than one trigger in a single-trigger task (use triggers='multi')"
            )
        return codes

    def trigger_mask(self, seq: Sequence[int]) -> np.ndarray:
        """Per position ``0..n``: the token is the trigger (BOS never is)."""
        return np.concatenate([[False], self.encode(seq) == self.trig_code])

    def decode(self, codes: Sequence[int]) -> tuple[int, ...]:
        """User-facing tokens (content indices, :data:`TRIG`) from internal codes."""
        trig = self.trig_code
        return tuple([TRIG if c == trig else c for c in map(int, codes)])

    # --------------------------------------------------------------- features
    @property
    def position_dim(self) -> int:
        """Dimension of ``π(t)``."""
        return {"inverse": 2, "onehot": self.T + 1, "none": 1}[self.positions]

    @property
    def D(self) -> int:
        """Dimension of the input row ``φ_t = [e(x_t); π(t)]``."""
        return self.p + 3 + self.position_dim

    @property
    def token_table(self) -> np.ndarray:
        """``e(x)`` for every code, shape ``(k+2, p+3)``: rows content..., TRIG, BOS."""
        table = np.zeros((self.n_tokens, self.p + 3))
        table[: self.k, : self.p] = self.content
        table[: self.k, self.p] = 1.0
        table[self.trig_code, self.p + 1] = 1.0
        table[self.bos_code, self.p + 2] = 1.0
        return table

    @property
    def content_table(self) -> np.ndarray:
        """``c(x)`` for every code (zero for TRIG and BOS), shape ``(k+2, p)``."""
        table = np.zeros((self.n_tokens, self.p))
        table[: self.k] = self.content
        return table

    def position_features(self, t: int) -> np.ndarray:
        """``π(t)`` as floats."""
        return np.array([float(v) for v in self.position_features_exact(t)])

    def content_symmetries(self) -> list[tuple[tuple[int, ...], np.ndarray]]:
        """Every signed permutation matrix ``P`` but the identity that maps the content
        set onto itself, with the content permutation ``codes`` (``P c_a = c_{codes[a]}``,
        in floats): permutations, then signs ``+`` before ``-``.  Searched for
        ``p <= 4`` only (``2^p p!`` candidates) and for distinct content vectors; else
        none."""
        import itertools

        p, content = self.p, self.content
        lookup = {tuple(c): a for a, c in enumerate(content)}
        if p > MAX_SYMMETRY_DIM or len(lookup) < self.k:
            return []
        found = []
        for perm in itertools.permutations(range(p)):
            for signs in itertools.product((1.0, -1.0), repeat=p):
                P = np.zeros((p, p))
                P[np.arange(p), perm] = signs
                if np.array_equal(P, np.eye(p)):
                    continue
                codes = [lookup.get(tuple(row)) for row in content @ P.T]
                if all(c is not None for c in codes):
                    found.append((tuple(int(c) for c in codes), P))  # type: ignore[arg-type]
        return found

    def position_features_exact(self, t: int) -> list[Fraction]:
        """``π(t)`` as exact rationals."""
        t = as_int("position t", t, minimum=0)
        if self.positions == "inverse":
            return [Fraction(1), inverse_position_ratio(t)]
        if self.positions == "none":
            return [Fraction(1)]
        if t > self.T:
            raise ValueError(f"position {t} exceeds T={self.T} of the onehot table")
        return [Fraction(int(i == t)) for i in range(self.T + 1)]

    @property
    def position_table(self) -> np.ndarray:
        """``π(t)`` for ``t = 0..T``, shape ``(T+1, position_dim)``."""
        work.require_entries("position table ((T+1) x position_dim)", self.T + 1,
                             self.position_dim)
        return np.stack([self.position_features(t) for t in range(self.T + 1)])

    def token_features_exact(self, code: int) -> list[Fraction]:
        """``e(x)`` as exact rationals (content floats are converted exactly)."""
        return [Fraction(float(v)) for v in self.token_table[code]]

    def features(self, seq: Sequence[int]) -> np.ndarray:
        """Input rows ``φ_0..φ_n`` of a sequence (BOS first), shape ``(n+1, D)``."""
        codes = np.concatenate([[self.bos_code], self.encode(seq)])
        pos = self.position_table if self.positions != "inverse" else None
        rows = []
        for t, code in enumerate(codes):
            pi = pos[t] if pos is not None else self.position_features(t)
            rows.append(np.concatenate([self.token_table[code], pi]))
        return np.stack(rows)

    def prefix_features(self, codes: np.ndarray) -> np.ndarray:
        """``φ_0..φ_t`` of prefixes ``codes`` ``(N, t)`` (BOS prepended): ``(N, t+1, D)``."""
        codes = np.asarray(codes, dtype=np.int64)
        n, t = codes.shape
        keys = np.concatenate([np.full((n, 1), self.bos_code, dtype=np.int64), codes], axis=1)
        pos = np.broadcast_to(self.position_table[: t + 1], (n, t + 1, self.position_dim))
        return np.concatenate([self.token_table[keys], pos], axis=2)

    # ---------------------------------------------------------------- targets
    @staticmethod
    def _targets(codes: np.ndarray, content: np.ndarray, trig_code: int,
                 positions: slice) -> np.ndarray:
        """The task's one target formula, for a float or an exact (object, Fraction)
        ``content`` table, at ``positions`` of prefixes ``codes`` ``(N, t)``: ``y_s`` is
        the mean content of positions ``1..s-1`` at a trigger with ``s >= 2``, else 0
        (earlier triggers count as zero content: the multi-trigger variant).
        Returns ``(N, len(positions), p)`` over positions ``0..t`` sliced."""
        n, t = codes.shape
        s = np.arange(t + 1)[positions]
        y = np.zeros((n, s.size, content.shape[1]), dtype=content.dtype)
        at = s >= 2
        trig = np.zeros((n, s.size), dtype=bool)
        trig[:, at] = codes[:, s[at] - 1] == trig_code
        if np.any(trig) and s.size == 1:  # one position: its running sum alone, left to
            rows = np.flatnonzero(trig[:, 0])  # right as np.cumsum adds (the same bits)
            sel = codes if rows.size == n else codes[rows]
            csum = np.take(content, sel[:, 0], axis=0)  # take: 5x a fancy index's speed
            for j in range(1, s[0] - 1):
                csum += np.take(content, sel[:, j], axis=0)
            y[rows, 0] = csum / (s[0] - 1)
        elif np.any(trig):
            rows, cols = np.nonzero(trig)
            csum = np.cumsum(content[codes[rows]], axis=1)  # sums of positions 1..r
            y[rows, cols] = csum[np.arange(rows.size), s[cols] - 2] / (s[cols] - 1)[:, None]
        return y

    def prefix_targets(self, codes: np.ndarray) -> np.ndarray:
        """``y_t`` at the last position of each prefix ``(N, t)`` of codes, ``(N, p)``."""
        codes = np.asarray(codes, dtype=np.int64)
        return self._targets(codes, self.content_table, self.trig_code, slice(-1, None))[:, 0]

    def exact_prefix_target(self, codes: Sequence[int]) -> tuple[Fraction, ...]:
        """``y_t`` at the last position of one prefix of codes, exactly (the same formula
        on the content's exact binary values)."""
        codes = np.array([int(c) for c in codes], dtype=np.int64).reshape(1, -1)
        y = self._targets(codes, self._exact_content, self.trig_code, slice(-1, None))
        return tuple(Fraction(v) for v in y[0, 0])

    @cached_property
    def _exact_content(self) -> np.ndarray:
        """``c(x)`` per code as exact Fractions (object array ``(k+2, p)``)."""
        return np.array([[Fraction(float(v)) for v in row] for row in self.content_table],
                        dtype=object)

    def targets(self, seq: Sequence[int]) -> np.ndarray:
        """Targets ``y_0..y_n``, shape ``(n+1, p)``: the running content mean at a trigger."""
        codes = self.encode(seq)[None]
        return self._targets(codes, self.content_table, self.trig_code, slice(None))[0]

    # --------------------------------------------------------------- families
    def count_sequences(self, n: int | None = None) -> int:
        """Number of sequences of length ``n`` in the family (all lengths if ``None``)."""
        return family_count(self.k, self.T, self.triggers == "multi", n)

    @property
    def n_sequences(self) -> int:
        """Size of the exhaustive family (``S_T`` or its multi-trigger variant), saturated
        at :data:`sinkproof.work.BEYOND` (a count no enumeration reaches)."""
        return self.count_sequences()

    def n_sequences_at_most(self, cap: int) -> int:
        """:attr:`n_sequences`, or ``cap + 1`` beyond ``cap``: at most ``cap + 1`` lengths
        are summed (each adds at least one sequence) and no power beyond ``cap`` is formed."""
        total, k = 0, self.k
        for n in range(1, self.T + 1):
            if self.triggers == "multi":
                total += capped_power(k + 1, n, cap)
            else:
                total += capped_power(k, n, cap) + n * capped_power(k, n - 1, cap)
            if total > cap:
                return cap + 1
        return total

    @property
    def n_positions(self) -> int:
        """Number of (sequence, position) pairs in the family, position 0 included
        (saturated like :attr:`n_sequences`)."""
        return family_count(self.k, self.T, self.triggers == "multi", positions=True)

    def sequences(self, n: int | None = None) -> Iterator[tuple[int, ...]]:
        """Every sequence of the family (of length ``n``, or of every length 1..T)."""
        lengths = range(1, self.T + 1) if n is None else [as_int("n", n, minimum=1)]
        for m in lengths:
            for block in self.prefix_blocks(m):
                for row in block.codes:
                    yield self.decode(row)

    def prefix_blocks(self, t: int, max_rows: int = 1 << 16) -> Iterator[PrefixBlock]:
        """All prefixes of depth ``t`` of the family, in chunks of at most ``max_rows``.

        Each block carries the codes (``(N, t)``) and the multiplicity of every
        prefix: how many sequences of the family contain it, i.e. how many
        (sequence, position) pairs share the output at its last position.
        """
        t = as_int("t", t, minimum=1)
        if t > self.T:
            raise ValueError(f"depth {t} exceeds T={self.T}")
        k = self.k
        if self.triggers == "multi":
            yield from _radix_blocks(k + 1, t, None, self._multiplicity(t, False), max_rows)
            return
        yield from _radix_blocks(k, t, None, self._multiplicity(t, False), max_rows)
        for i in range(t):  # trigger at position i+1
            yield from _radix_blocks(k, t, i, self._multiplicity(t, True), max_rows)

    def prefix_products(self, t: int) -> Iterator[tuple[tuple[np.ndarray, ...], float]]:
        """The prefixes of depth ``t`` as product sets ``A_1 × ... × A_t`` of token codes,
        with their multiplicity, in the order of :meth:`prefix_blocks` (each product
        enumerated in radix order, slot 1 most significant)."""
        t = as_int("t", t, minimum=1)
        if t > self.T:
            raise ValueError(f"depth {t} exceeds T={self.T}")
        k = self.k
        if self.triggers == "multi":
            yield (np.arange(k + 1),) * t, self._multiplicity(t, False)
            return
        content, trig = np.arange(k), np.array([k])
        yield (content,) * t, self._multiplicity(t, False)
        for i in range(t):
            yield (content,) * i + (trig,) + (content,) * (t - 1 - i), \
                self._multiplicity(t, True)

    def _multiplicity(self, t: int, has_trigger: bool) -> float:
        k, T = self.k, self.T
        if self.triggers == "multi":
            return float(sum((k + 1) ** (n - t) for n in range(t, T + 1)))
        if has_trigger:
            return float(sum(k ** (n - t) for n in range(t, T + 1)))
        return float(sum(k ** (n - t) + (n - t) * k ** (n - t - 1) for n in range(t, T + 1)))

    def sample(
        self,
        n_sequences: int,
        seed: int | None = 0,
        lengths: int | tuple[int, int] | None = None,
        trigger_prob: float = 0.5,
    ) -> list[tuple[int, ...]]:
        """Seeded random sequences of the family.

        ``lengths``: a fixed length or an inclusive range (default ``(1, T)``).
        Single-trigger family: with probability ``trigger_prob`` one trigger at a
        uniform position.  Multi-trigger: each token is a trigger with that probability.
        """
        n_sequences = as_int("n_sequences", n_sequences, minimum=0)
        if lengths is None:
            lo, hi = 1, self.T
        elif isinstance(lengths, tuple):
            lo, hi = (as_int("lengths", v, minimum=1) for v in lengths)
        else:
            lo = hi = as_int("lengths", lengths, minimum=1)
        if not 1 <= lo <= hi <= self.T:
            raise ValueError(f"lengths must lie in [1, T={self.T}], got ({lo}, {hi})")
        if not 0.0 <= float(trigger_prob) <= 1.0:
            raise ValueError(f"trigger_prob must lie in [0, 1], got {trigger_prob}")
        rng = np.random.default_rng(seed)
        out: list[tuple[int, ...]] = []
        for _ in range(n_sequences):
            n = int(rng.integers(lo, hi + 1))
            toks = rng.integers(0, self.k, size=n)
            if self.triggers == "multi":
                toks = np.where(rng.random(n) < trigger_prob, TRIG, toks)
            elif rng.random() < trigger_prob:
                toks[int(rng.integers(0, n))] = TRIG
            out.append(tuple(int(v) for v in toks))
        return out

    # ------------------------------------------------------------- utilities
    def replace(self, **changes: Any) -> TriggerTask:
        """A copy of this task with some constructor arguments changed."""
        args = dict(
            p=self.p,
            T=self.T,
            content=self.content if self.content_scheme == "custom" else self.content_scheme,
            positions=self.positions,
            triggers=self.triggers,
            k=self.k if self.content_scheme == "gaussian" else None,
            seed=self.seed,
        )
        args.update(changes)
        return TriggerTask(**args)

    def describe(self) -> dict[str, Any]:
        """A JSON-friendly description from which the task can be rebuilt."""
        d: dict[str, Any] = dict(
            p=self.p, T=self.T, positions=self.positions, triggers=self.triggers
        )
        if self.content_scheme == "custom":
            d["content"] = self.content.tolist()
        else:
            d["content"] = self.content_scheme
            if self.content_scheme == "gaussian":
                d.update(k=self.k, seed=self.seed)
        return d

    @classmethod
    def from_description(cls, d: dict[str, Any]) -> TriggerTask:
        """Inverse of :meth:`describe`."""
        if not isinstance(d, dict):
            raise TypeError("a task description must be a mapping")
        allowed = cls.DESCRIPTION_FIELDS
        if d.get("setting", "trigger") != "trigger":
            raise ValueError(f"not a trigger-task description: setting={d['setting']!r}")
        d = {key: v for key, v in d.items() if key != "setting"}
        unknown = set(d) - allowed
        if unknown:
            raise ValueError(f"unknown task fields: {', '.join(sorted(unknown))}")
        if "p" not in d or "T" not in d:
            raise ValueError("a task description needs 'p' and 'T'")
        return cls(**d)

    def __repr__(self) -> str:
        extra = f", k={self.k}, seed={self.seed}" if self.content_scheme == "gaussian" else ""
        return (
            f"TriggerTask(p={self.p}, T={self.T}, content={self.content_scheme!r}{extra}, "
            f"positions={self.positions!r}, triggers={self.triggers!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TriggerTask):
            return NotImplemented
        return (
            self.p == other.p
            and self.T == other.T
            and self.positions == other.positions
            and self.triggers == other.triggers
            and np.array_equal(self.content, other.content)
        )

    def __hash__(self) -> int:
        return hash((self.p, self.T, self.positions, self.triggers, self.content.tobytes()))


def _radix_blocks(
    base: int, t: int, trigger_at: int | None, multiplicity: float, max_rows: int
) -> Iterator[PrefixBlock]:
    """Mixed-radix enumeration of content strings of depth t, optionally with a trigger slot.

    With ``trigger_at = i`` the slot ``i`` holds the trigger code ``base`` and the
    other ``t - 1`` slots range over ``0..base-1``; otherwise all ``t`` slots do.
    """
    free = t if trigger_at is None else t - 1
    total = base**free
    powers = base ** np.arange(free - 1, -1, -1, dtype=np.int64)
    for start in range(0, total, max_rows):
        idx = np.arange(start, min(total, start + max_rows), dtype=np.int64)
        digits = (idx[:, None] // powers[None, :]) % base
        if trigger_at is not None:
            digits = np.insert(digits, trigger_at, base, axis=1)
        yield PrefixBlock(codes=digits, multiplicity=multiplicity)
