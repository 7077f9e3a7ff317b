"""Sets of (sequence, position) pairs a claim talks about, and the BOS mass there.

A causal model's weights at position ``t`` depend only on the prefix ``x_0..x_t``,
so a position set is a predicate on prefixes: named sets are evaluated over every
prefix of the family, explicit sets list their pairs.  The BOS mass reported for
ReLU heads is the BOS *share* ``α_{t0} / Σ_j α_{tj}`` (docs/theory.md section 3); for
softmax heads it is ``α_{t0} = 1 - exp(log non-BOS mass)``, computed in the log
domain.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import tokens
from .._validate import as_int
from ..kernel import forward_prefixes
from ..model import AttentionModel
from ..numerics import stable_norm
from ..task import TRIG, TriggerTask

NAMED_SETS: dict[str, str] = {
    "nontrigger": "every non-trigger position t >= 1",
    "trigger": "every trigger position",
    "all": "every position t >= 1",
    "before_trigger": "every position t >= 1 with no trigger at or before t",
    "after_trigger": "every non-trigger position after the trigger",
    "homogeneous": "position n of every homogeneous sequence X^c_n = (BOS, c, ..., c)",
}


def parse_token(value: Any) -> int:
    """A token of a claim file: a content index, or ``"T"`` / ``"TRIG"`` / ``-1`` for the
    trigger (the syntax of :mod:`sinkproof.tokens`)."""
    return tokens.parse_token(value)


def parse_sequence(value: Any) -> tuple[int, ...]:
    """A sequence after BOS: a list of tokens or their text ``"0,1,T,2"``."""
    return tokens.parse_sequence(value)


@dataclass(frozen=True)
class PositionSet:
    """A named set of positions (see :data:`NAMED_SETS`) or an explicit tuple of pairs."""

    name: str
    pairs: tuple[tuple[tuple[int, ...], int], ...] = ()

    def __post_init__(self) -> None:
        if self.name != "explicit" and self.name not in NAMED_SETS:
            raise ValueError(
                f"unknown position set {self.name!r}; expected one of "
                f"{', '.join(NAMED_SETS)} or a list of {{sequence, position}} pairs"
            )
        if self.name == "explicit" and not self.pairs:
            raise ValueError("an explicit position set needs at least one (sequence, position)")

    @classmethod
    def parse(cls, value: Any) -> PositionSet:
        """``"nontrigger"`` etc., or a list of ``{sequence = [...], position = t}`` tables."""
        if isinstance(value, PositionSet):
            return value
        if isinstance(value, str):
            return cls(value)
        if not isinstance(value, Sequence) or isinstance(value, bytes):
            raise TypeError("positions must be a name or a list of pairs, "
                            f"got {type(value).__name__}")
        pairs = []
        for item in value:
            if isinstance(item, dict):
                unknown = set(item) - {"sequence", "position"}
                if unknown or set(item) != {"sequence", "position"}:
                    raise ValueError("each explicit position needs 'sequence' and 'position'")
                seq, pos = item["sequence"], item["position"]
            elif isinstance(item, Sequence) and len(item) == 2 and not isinstance(item, str):
                seq, pos = item
            else:
                raise TypeError("each explicit position must be {sequence = [...], position = t}")
            seq = parse_sequence(seq)
            pos = as_int("position", pos, minimum=1)
            if pos > len(seq):
                raise ValueError(f"position {pos} lies beyond sequence {list(seq)}")
            pairs.append((seq, pos))
        return cls("explicit", tuple(pairs))

    def check_task(self, task: TriggerTask) -> None:
        """Raise if an explicit pair is not a sequence of ``task``'s family, or if the set
        is empty on ``task`` (a claim about no position says nothing)."""
        for seq, _ in self.pairs:
            task.encode(seq)
        if self.name == "after_trigger" and task.T < 2:
            raise ValueError(f"the position set 'after_trigger' is empty on T={task.T}: "
                             "no position follows a trigger (use T >= 2)")

    def size_estimate(self, task: TriggerTask, cap: int | None = None) -> int:
        """At most this many (prefix, position) pairs are in the set (without listing them);
        with ``cap``, ``cap + 1`` stands for anything larger (the count stops there)."""
        if self.name == "explicit":
            return len(self.pairs)
        if self.name == "homogeneous":
            return task.k * task.T
        return task.n_sequences if cap is None else task.n_sequences_at_most(cap)

    def to_json(self) -> Any:
        if self.name != "explicit":
            return self.name
        return [dict(sequence=["TRIG" if x == TRIG else x for x in s], position=t)
                for s, t in self.pairs]

    def describe(self) -> str:
        if self.name != "explicit":
            return NAMED_SETS[self.name]
        shown = ", ".join(f"{_show(s)}[t={t}]" for s, t in self.pairs[:3])
        more = f" and {len(self.pairs) - 3} more" if len(self.pairs) > 3 else ""
        return f"the positions {shown}{more}"

    # ------------------------------------------------------------ membership
    def prefix_blocks(self, task: TriggerTask) -> Iterator[tuple[int, np.ndarray]]:
        """``(t, codes)``: every prefix of depth ``t`` whose last position is in the set."""
        if self.name == "explicit":
            by_depth: dict[int, set[tuple[int, ...]]] = {}
            for seq, t in self.pairs:
                codes = tuple(int(c) for c in task.encode(seq)[:t])
                by_depth.setdefault(t, set()).add(codes)
            for t in sorted(by_depth):
                yield t, np.array(sorted(by_depth[t]), dtype=np.int64)
            return
        if self.name == "homogeneous":  # k prefixes per depth, listed directly
            for t in range(1, task.T + 1):
                yield t, np.repeat(np.arange(task.k, dtype=np.int64)[:, None], t, axis=1)
            return
        for t in range(1, task.T + 1):
            for block in task.prefix_blocks(t):
                keep = self._member(block.codes, task.trig_code)
                if np.any(keep):
                    yield t, block.codes[keep]

    def _member(self, codes: np.ndarray, trig: int) -> np.ndarray:
        last_is_trig = codes[:, -1] == trig
        earlier_trig = np.any(codes[:, :-1] == trig, axis=1)
        if self.name == "nontrigger":
            return ~last_is_trig
        if self.name == "trigger":
            return last_is_trig
        if self.name == "all":
            return np.ones(codes.shape[0], dtype=bool)
        if self.name == "before_trigger":
            return ~last_is_trig & ~earlier_trig
        if self.name == "after_trigger":
            return ~last_is_trig & earlier_trig
        # homogeneous
        return ~last_is_trig & np.all(codes == codes[:, :1], axis=1)

    def pair_list(self, task: TriggerTask) -> list[tuple[tuple[int, ...], int]]:
        """Every (prefix, position) of the set as user-facing pairs."""
        return [(task.decode(row), t) for t, codes in self.prefix_blocks(task) for row in codes]


@dataclass(frozen=True)
class ContentPrefix:
    """One position of a task without positional features, named by its prefix: the content
    vectors of the tokens after BOS (``[conclusion] at = [[-1.0], [1.0]]``), ``trigger``
    (1-based, optional) the one that is the trigger (it carries its content vector too);
    the position is the last token's, ``t = len(rows)``, a non-trigger position.

    On a finite task the rows name token codes (:meth:`codes`); on continuous content they
    only fix the prefix's *trigger pattern* (its depth and the trigger's place), as every
    content vector of the box is a possible content there."""

    rows: tuple[tuple[float, ...], ...]
    trigger: int | None = None
    name: str = "prefix"

    def __post_init__(self) -> None:
        rows = self.rows
        if not isinstance(rows, (list, tuple)) or not rows or not all(
                isinstance(r, (list, tuple)) and r for r in rows):
            raise TypeError("conclusion.at must be a position set name or a non-empty list "
                            "of content vectors (one list of numbers per token after BOS)")
        rows = tuple(tuple(float(x) for x in r) for r in rows)
        if len({len(r) for r in rows}) != 1:
            raise ValueError("conclusion.at: every token's content vector has the same length")
        object.__setattr__(self, "rows", rows)
        if self.trigger is not None:
            k = as_int("conclusion.trigger", self.trigger, minimum=2)
            if k >= len(rows):
                raise ValueError(f"conclusion.trigger = {k}: the position is the last token "
                                 f"({len(rows)}), a non-trigger position, so the trigger "
                                 "must come before it (and after token 1)")
            object.__setattr__(self, "trigger", k)

    @property
    def t(self) -> int:
        """The position: the last token's, ``len(rows)``."""
        return len(self.rows)

    def pattern(self) -> tuple[int, int | None]:
        """``(t, trigger)``: the prefix's trigger pattern."""
        return self.t, self.trigger

    def check_task(self, task: Any) -> None:
        """Raise unless the prefix is one of ``task``'s family (a finite task: its content
        vectors are the set's; continuous content: in ``[-1, 1]``)."""
        if len(self.rows[0]) != task.content_dim:
            raise ValueError(f"conclusion.at: each token's content has {task.content_dim} "
                             f"entries (n - 3), got {len(self.rows[0])}")
        if task.finite:
            task.prefix_codes(self.rows, self.trigger)
        elif any(abs(x) > 1 for r in self.rows for x in r):
            raise ValueError("conclusion.at: continuous content lies in [-1, 1]")
        elif self.t > task.L - (1 if self.trigger else 2):
            raise ValueError(f"conclusion.at: a prefix of {self.t} tokens "
                             f"{'with' if self.trigger else 'without'} the trigger is not a "
                             f"prefix of the family at L = {task.L}")

    def codes(self, task: Any) -> tuple[int, ...]:
        """The prefix's token codes on a finite task."""
        return task.prefix_codes(self.rows, self.trigger)

    def to_json(self) -> list[list[float]]:
        return [list(r) for r in self.rows]

    def describe(self) -> str:
        toks = ", ".join(("TRIG" if k == self.trigger else "") + "[" + ", ".join(
            f"{x:g}" for x in r) + "]" for k, r in enumerate(self.rows, start=1))
        return f"position {self.t} (the last) of the prefix (BOS, {toks})"


def _show(seq: Sequence[int]) -> str:
    return "(" + ", ".join(["BOS", *("TRIG" if x == TRIG else str(x) for x in seq)]) + ")"


def show_sequence(seq: Sequence[int]) -> str:
    """``(BOS, 0, 1, TRIG)``: a sequence as a reader writes it."""
    return _show(seq)


NULL_ETA = 1e-9
"""A key is *null* when its value has norm ``<= NULL_ETA`` (BOS under fixed values, the
trigger under fixed values, ...): the null mass of docs/theory.md section 3."""


def masses(model: AttentionModel, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BOS mass and null mass per head at the last position of each prefix: ``(H, N)`` each.

    Maps on the simplex: ``α_{t0} = -expm1(log non-BOS mass)`` (log domain).  Other maps
    (ReLU, ...): the BOS share (and the null share).  Null mass: weight on keys whose
    value is null, BOS included.
    """
    fw = forward_prefixes(model, codes)
    w = fw.weights
    null_keys = stable_norm(model.value_table) <= NULL_ETA  # (H, k+2)
    null = np.stack([(w[h] * null_keys[h][fw.keys]).sum(axis=-1) for h in range(model.H)])
    if model.attention_map.properties.on_simplex:
        return -np.expm1(fw.log_nonbos), null
    total = w.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        safe = np.where(total > 0, total, 1.0)
        return (np.where(total > 0, w[..., 0] / safe, 0.0),
                np.where(total > 0, null / safe, 0.0))


@dataclass(frozen=True)
class PositionMass:
    """BOS mass (and null mass) per head at one (sequence, position)."""

    sequence: tuple[int, ...]
    position: int
    masses: tuple[float, ...]
    null: tuple[float, ...] = ()

    def __str__(self) -> str:
        ms = ", ".join(f"{m:.6g}" for m in self.masses)
        text = f"{_show(self.sequence)} at t={self.position}: BOS mass per head [{ms}]"
        if self.null and any(n > m + 1e-3 for n, m in zip(self.null, self.masses)):
            text += f", null mass [{', '.join(f'{n:.4g}' for n in self.null)}]"
        return text


def scan(model: AttentionModel, positions: PositionSet) -> list[PositionMass]:
    """BOS and null mass of every head at every position of the set (float64, log domain)."""
    out = []
    task = model.task
    for t, codes in positions.prefix_blocks(task):
        bos, null = masses(model, codes)
        for i, row in enumerate(codes):
            out.append(PositionMass(task.decode(row), t, tuple(float(x) for x in bos[:, i]),
                                    tuple(float(x) for x in null[:, i])))
    return out

