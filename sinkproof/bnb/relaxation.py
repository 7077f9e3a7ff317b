"""The logit-sharing constraints of one softmax head with learned values, for one target.

A *class* is a (query token, ``π(t)``, key token, ``π(j)``) tuple: every pair of
positions with the same class shares the variable
``u = exp(s(φ_t, φ_j) - s(φ_t, φ_BOS)) >= 0`` whatever the score function (it can
only see the features).  Each prefix ``X = x_1..x_t`` of the family gives the cone
constraint ``|| v_BOS + Σ_l m_l u_l v_{key(l)} - Z y || <= eps Z`` with
``Z = 1 + Σ_l m_l u_l`` (``m_l`` how often class ``l`` occurs among the keys of
``X``'s last position), and position 0 gives ``|| v_BOS || <= eps``.  The products
``w_l = u_l v_{key(l)}`` make the family bilinear; :mod:`sinkproof.bnb.primal`
relaxes them over boxes of values.

What the task supplies: its prefixes (every prefix of the finite family), each prefix's
classes and its target.  A task with positional features (``task.has_positions``) is
read in its user tokens (TRIG = -1) with ``π`` its exact position features; a task
without them in its token codes, ``π`` empty, so a class is a (query token, key token)
pair (Theorem 6's logit sharing with token-pair classes), the targets are the task's
exact ``y_t`` (:meth:`~sinkproof.tasks.protocol.Task.exact_prefix_target`) and every
non-BOS token's value is a variable.  Letting ``u`` be *any* non-negative function of
the class drops only the rank and bilinear structure of ``W_Q^T W_K``; treating each
token's value as free forgets only the linear relations among the tokens' values: both
are sound over-approximations.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from ..task import TRIG, TriggerTask
from ..tasks.protocol import require

ClassKey = tuple[int, tuple[Fraction, ...], int, tuple[Fraction, ...]]


_TARGETS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Task -> {prefix: exact target}: every target's relaxation reads the same prefixes."""


def exact_target(task: Any, prefix: tuple[int, ...]) -> tuple[Fraction, ...]:
    """``y_t`` at the last position of ``prefix`` exactly (a task without positional
    features: its :meth:`~sinkproof.tasks.protocol.Task.exact_prefix_target`; with them
    the content mean at a trigger, content vectors as the exact rationals of their
    floats, earlier triggers counted as zero), computed once per task and prefix."""
    try:
        table = _TARGETS.setdefault(task, {})
    except TypeError:  # a task that cannot be weakly referenced: no cache
        table = {}
    got = table.get(prefix)
    if got is None:
        got = table[prefix] = _exact_target(task, prefix)
    return got


def _exact_target(task: Any, prefix: tuple[int, ...]) -> tuple[Fraction, ...]:
    if not task.has_positions:
        return tuple(Fraction(x) for x in task.exact_prefix_target(prefix))
    zero = tuple(Fraction(0) for _ in range(task.p))
    t = len(prefix)
    if t < 2 or prefix[-1] != TRIG:
        return zero
    total = [Fraction(0)] * task.p
    for tok in prefix[:-1]:
        if tok != TRIG:
            total = [a + Fraction(float(b)) for a, b in zip(total, task.content[tok])]
    return tuple(a / (t - 1) for a in total)


def family_prefixes(task: Any) -> list[tuple[int, ...]]:
    """Every prefix ``x_1..x_t`` (``1 <= t <= max_depth``) of the family, shortest first:
    user tokens (TRIG = -1) with positions, else token codes in lexicographic order."""
    if not task.has_positions:
        require(task, "finite", "the branch-and-bound engine")
        return [row for t in range(1, task.max_depth + 1)
                for row in sorted(tuple(int(c) for c in r)
                                  for b in task.prefix_blocks(t) for r in b.codes)]
    tokens = [*range(task.k), TRIG]
    out = []
    for t in range(1, task.T + 1):
        for row in itertools.product(tokens, repeat=t):
            if task.triggers == "single" and row.count(TRIG) > 1:
                continue
            out.append(row)
    return out


def prefix_target(task: TriggerTask, prefix: Sequence[int]) -> np.ndarray:
    """``y_t`` at the last position of ``prefix`` (the content mean at a trigger, t >= 2)."""
    t = len(prefix)
    if prefix[-1] != TRIG or t < 2:
        return np.zeros(task.p)
    rows = [task.content[x] for x in prefix[:-1] if x != TRIG]
    return np.sum(rows, axis=0) / (t - 1) if rows else np.zeros(task.p)


def token_pair_classes(prefix: Sequence[int]) -> dict[tuple, int]:
    """Class ``(query, (), key, ())`` -> multiplicity among the keys ``1..t`` (no positions)."""
    out: dict[tuple, int] = {}
    for tok in prefix:
        key = (prefix[-1], (), tok, ())
        out[key] = out.get(key, 0) + 1
    return out


def value_tokens(task: Any) -> tuple[int, ...]:
    """The tokens whose values are variables: ``()`` (content and TRIG) with positions,
    else every non-BOS token code."""
    if task.has_positions:
        return ()
    return tuple(c for c in range(task.n_tokens) if c != task.bos_code)


def prefix_classes(task: TriggerTask, prefix: Sequence[int]) -> dict[ClassKey, int]:
    """Class -> multiplicity among the keys ``j = 1..t`` of the last position of ``prefix``."""
    if not task.has_positions:
        return token_pair_classes(prefix)
    t, q = len(prefix), int(prefix[-1])
    pt = tuple(task.position_features_exact(t))
    out: dict[ClassKey, int] = {}
    for j, tok in enumerate(prefix, start=1):
        key = (q, pt, int(tok), tuple(task.position_features_exact(j)))
        out[key] = out.get(key, 0) + 1
    return out


@dataclass(frozen=True)
class Relaxation:
    """The data of one target's program.

    ``prefixes``: the constraint prefixes (``m`` of them); ``classes``: the ``n``
    classes they (and the target) use; ``M``: ``(m, n)`` multiplicities; ``Y``:
    ``(m, d)`` targets (``d`` the value dimension); ``key``: ``(n,)`` key token of each
    class; ``a``: ``(n,)`` class counts of the target (``Z* = 1 + a·u``);
    ``value_tokens``: the tokens whose values are variables (empty: content ``0..k-1``
    and TRIG of our task; the paper's adapter names its own codes).
    """

    task: Any
    eps: Fraction
    target: tuple[int, ...]
    prefixes: tuple[tuple[int, ...], ...]
    classes: tuple[ClassKey, ...]
    M: np.ndarray
    Y: np.ndarray
    key: np.ndarray
    a: np.ndarray
    value_tokens: tuple[int, ...] = ()
    coordinates: tuple[int, ...] | None = None
    """The value coordinates ``Y`` keeps of the task's targets (``None``: all), for a
    program projected onto some coordinates (:meth:`projected`)."""

    def projected(self, keep: Sequence[int]) -> Relaxation:
        """The same program on the value coordinates ``keep`` only (a bound on them is a
        bound: dropping coordinates of the error only loosens the constraints)."""
        keep = tuple(int(c) for c in keep)
        return replace(self, Y=self.Y[:, list(keep)], coordinates=keep)

    def exact_target(self, i: int) -> tuple[Fraction, ...]:
        """Constraint ``i``'s target exactly, on this program's coordinates."""
        y = exact_target(self.task, self.prefixes[i])
        return y if self.coordinates is None else tuple(y[c] for c in self.coordinates)

    @property
    def dim(self) -> int:
        """The dimension of every value vector (and of every target)."""
        return int(self.Y.shape[1])

    @property
    def m(self) -> int:
        return len(self.prefixes)

    @property
    def n(self) -> int:
        return len(self.classes)

    @property
    def tokens(self) -> list[int]:
        """Tokens whose values are variables (content ``0..k-1`` and TRIG by default)."""
        return list(self.value_tokens) if self.value_tokens else [*range(self.task.k), TRIG]


def build_relaxation(task: Any, eps: Fraction, target: Sequence[int],
                     prefixes: Iterable[Sequence[int]] | None = None) -> Relaxation:
    """Assemble :class:`Relaxation` for ``target`` over ``prefixes`` (default: the whole
    family)."""
    rows = family_prefixes(task) if prefixes is None else prefixes
    if not task.has_positions:
        def target_of(prefix: tuple[int, ...]) -> np.ndarray:
            return np.array([float(x) for x in exact_target(task, prefix)])

        return assemble(task, eps, target, rows, token_pair_classes, target_of,
                        task.out_dim, value_tokens(task))
    return assemble(task, eps, target, rows, lambda r: prefix_classes(task, r),
                    lambda r: prefix_target(task, r), task.p)


def target_classes(task: Any, target: Sequence[int]) -> dict[Any, int]:
    """The classes of ``target``'s last position with their multiplicities (as
    :func:`build_relaxation` reads them)."""
    row = tuple(int(x) for x in target)
    return token_pair_classes(row) if not task.has_positions else prefix_classes(task, row)


def retarget(base: Relaxation, target: Sequence[int]) -> Relaxation | None:
    """``build_relaxation(task, eps, target, base.prefixes)`` from ``base``, a relaxation
    of the same task, ``eps`` and prefixes for another target: the prefixes' classes,
    multiplicities and targets are the same, only ``a`` (the target's class counts)
    changes; ``None`` when the target has a class no prefix has (its class list would
    differ: build it).  The exact-target tables cached on ``base`` are shared."""
    index = base.__dict__.get("_class_index")
    if index is None:
        index = {c: i for i, c in enumerate(base.classes)}
        object.__setattr__(base, "_class_index", index)
    goal = target_classes(base.task, target)
    if any(c not in index for c in goal):
        return None
    a = np.zeros(base.n)
    for c, mult in goal.items():
        a[index[c]] = mult
    out = replace(base, target=tuple(int(x) for x in target), a=a)
    for name in ("_class_index", "_row_classes", "_integer_targets"):
        if name in base.__dict__:
            object.__setattr__(out, name, base.__dict__[name])
    return out


def assemble(task: Any, eps: Fraction, target: Sequence[int], prefixes: Iterable[Sequence[int]],
             classes_of: Callable[[tuple[int, ...]], dict[Any, int]],
             target_of: Callable[[tuple[int, ...]], np.ndarray], dim: int,
             value_tokens: tuple[int, ...] = ()) -> Relaxation:
    """:class:`Relaxation` from any setting's pieces: ``classes_of(prefix)`` (class ->
    multiplicity among the keys of the prefix's last position; a class's third entry is
    its key token) and ``target_of(prefix)`` (``y`` there, a ``dim``-vector)."""
    target = tuple(int(x) for x in target)
    rows = [tuple(int(x) for x in r) for r in prefixes]
    index: dict[Any, int] = {}
    per_row = []
    for row in rows:
        cls = classes_of(row)
        for key in cls:
            index.setdefault(key, len(index))
        per_row.append(cls)
    goal = classes_of(target)
    for key in goal:
        index.setdefault(key, len(index))
    n = len(index)
    M = np.zeros((len(rows), n))
    for i, cls in enumerate(per_row):
        for key, mult in cls.items():
            M[i, index[key]] = mult
    a = np.zeros(n)
    for key, mult in goal.items():
        a[index[key]] = mult
    classes = tuple(sorted(index, key=index.get))
    Y = np.array([target_of(r) for r in rows], dtype=float).reshape(len(rows), dim)
    key = np.array([c[2] for c in classes], dtype=np.int64)
    return Relaxation(task, Fraction(eps), target, tuple(rows), classes, M, Y, key, a,
                      tuple(value_tokens))
