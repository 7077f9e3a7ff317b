"""The trigger setting's Family, recomputed exactly from a certificate's description:
content (the signed basis rebuilt, other sets listed as exact rationals), values ``U_fix``
or an exact ``U``, input features, targets ``y_t``, prefixes and token sets."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations
from typing import Any

from ...errors import CertificateError
from ..exact import common_denominator, dot
from ..limits import current, require
from ..schema import (
    as_int,
    check_fields,
    child,
    format_rational,
    need,
    need_dict,
    need_eps,
    need_int,
    need_str,
    rational_matrix,
)

TRIGGER = -1
"""How certificates write the trigger token (as ``sinkproof.TRIG``)."""
BOS = -2
"""Token id of BOS inside the checker (content ``0..k-1``, trigger ``-1``)."""

Vector = list[Fraction]


def signed_basis(p: int) -> list[Vector]:
    """``+e_1..+e_p, -e_1..-e_p`` exactly (the order of ``TriggerTask``)."""
    plus = [[Fraction(int(i == j)) for j in range(p)] for i in range(p)]
    return plus + [[-x for x in row] for row in plus]


TASK_FIELDS = ("p", "T", "content", "positions", "triggers", "k", "seed")
"""Fields of ``instance.task`` (``TriggerTask.describe()``); ``k``, ``seed`` only for gaussian."""

POSITIONS = ("inverse", "onehot", "none")


@dataclass(frozen=True)
class Instance:
    """A task instance as the checker sees it: sizes, content and value vectors, exactly.

    ``values[code]`` for content codes ``0..k-1`` and :data:`TRIGGER`; ``bos`` is
    ``v_b``.  ``fixed``: the values are ``U_fix``.  ``scheme``: how the task names its
    content (``signed``, rebuilt here; ``gaussian`` or ``custom``, whose vectors the
    file lists).  ``U``: the value map when given explicitly.
    """

    p: int
    T: int
    triggers: str
    content: list[Vector]
    values: dict[int, Vector]
    bos: Vector
    fixed: bool
    description: dict[str, Any]
    U: list[Vector] | None = None

    @property
    def k(self) -> int:
        return len(self.content)

    @property
    def scheme(self) -> str:
        content = self.description["content"]
        return content if isinstance(content, str) else "custom"

    @property
    def positions(self) -> str:
        return self.description.get("positions", "inverse")

    @property
    def bos_is_zero(self) -> bool:
        """``v_b = 0``: then Theorem 3's factor is 1 (``1 - ε/d``), else 2."""
        return all(x == 0 for x in self.bos)

    def target(self, prefix: list[int] | tuple[int, ...]) -> Vector:
        """``y_t`` at the last position of ``prefix`` (tokens ``x_1..x_t``, :data:`TRIGGER`
        for the trigger): the mean content of positions ``1..t-1`` at a trigger with
        ``t >= 2`` (earlier triggers count as zero content), else 0.  The checker's one
        target code, written from the task's definition, not taken from the producer."""
        t = len(prefix)
        if t < 2 or prefix[-1] != TRIGGER:
            return [Fraction(0)] * self.p
        total = [Fraction(0)] * self.p
        for tok in prefix[:-1]:
            if tok != TRIGGER:
                total = [a + b for a, b in zip(total, self.content[tok])]
        return [a / (t - 1) for a in total]

    def describe(self) -> str:
        """Short text naming the instance, for claims."""
        vals = "U_fix" if self.fixed else "the certificate's U"
        return (f"p={self.p}, T={self.T}, {self.describe_content()}, "
                f"{self.triggers}-trigger family, values {vals}")

    def describe_content(self) -> str:
        """The content set in words; seeded content is named as the file declares it."""
        if self.scheme == "signed":
            return f"signed content ±e_i (k={self.k})"
        if self.scheme == "gaussian":
            d = self.description
            return (f"the k={self.k} content vectors listed in the file, declared gaussian "
                    f"(k={d['k']}, seed={d['seed']}; the declaration is compared by "
                    f"sinkproof verify, not by this checker)")
        return f"the k={self.k} content vectors listed in the certificate (custom)"

    def statement(self) -> dict[str, Any]:
        """The instance as canonical data: every number an exact rational string."""
        d = self.description
        content: dict[str, Any] = {"scheme": self.scheme,
                                   "vectors": [[format_rational(x) for x in c]
                                               for c in self.content]}
        if self.scheme == "gaussian":
            content.update(k=d["k"], seed=d["seed"])
        values: Any = "fixed" if self.fixed else {
            "U": [[format_rational(x) for x in row] for row in self.U or []]}
        return {"p": self.p, "T": self.T, "triggers": self.triggers, "content": content,
                "values": values}


def _content(task: dict[str, Any], instance: dict[str, Any], path: str, p: int) -> list[Vector]:
    content = need(task, "content", child(path, "task"))
    tpath = child(path, "task")
    for key in ("k", "seed"):
        if content != "gaussian" and key in task:
            raise CertificateError(f"{tpath}.{key}: only gaussian content has a {key}")
    if content == "signed":
        if "content_vectors" in instance:
            raise CertificateError(f"{path}.content_vectors: signed content is rebuilt by the "
                                   "checker; the file must not list it")
        require("content", 2 * p * p, f"{tpath}.p: entries 2p² of the signed content")
        return signed_basis(p)
    raw = need(instance, "content_vectors", path)
    if isinstance(raw, list):
        require("content", len(raw) * p, f"{path}.content_vectors: entries k·p")
    vectors = rational_matrix(raw, child(path, "content_vectors"), columns=p, min_rows=1)
    if isinstance(content, list):  # a custom set: the listed floats must be the vectors
        require("content", len(content) * p, f"{tpath}.content: entries k·p")
        floats = rational_matrix([[_exact_float(x, child(path, "task.content")) for x in row]
                                  if isinstance(row, list) else row for row in content],
                                 child(path, "task.content"), columns=p)
        if floats != vectors:
            raise CertificateError(f"{path}.content_vectors: differ from task.content")
    elif content == "gaussian":
        k = need_int(task, "k", tpath, minimum=1)
        need_int(task, "seed", tpath, minimum=0)
        if k != len(vectors):
            raise CertificateError(f"{path}.content_vectors: expected k={k} vectors, "
                                   f"got {len(vectors)}")
    else:
        raise CertificateError(f"{path}.task.content: unknown content {content!r}")
    return vectors


def _exact_float(x: Any, path: str) -> str:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise CertificateError(f"{path}: expected numbers, got {type(x).__name__}")
    if isinstance(x, float) and not math.isfinite(x):
        raise CertificateError(f"{path}: {x!r} is not a finite number")
    f = Fraction(x)
    return f"{f.numerator}/{f.denominator}"


def read_task(task: Any, path: str) -> tuple[int, int, str]:
    """``(p, T, triggers)`` of ``task`` after checking its fields (no unknown ones)."""
    check_fields(task, path, TASK_FIELDS)
    p = need_int(task, "p", path, minimum=1)
    T = need_int(task, "T", path, minimum=1)
    triggers = need_str(task, "triggers", path, ("single", "multi"), default="single")
    need_str(task, "positions", path, POSITIONS, default="inverse")
    return p, T, triggers


def read_instance(instance: dict[str, Any], path: str = "instance") -> Instance:
    """Parse ``instance.task``, ``instance.content_vectors`` and ``instance.values`` exactly.

    Only these fields of ``instance`` are read (the kinds check its other fields)."""
    task = need_dict(instance, "task", path)
    tpath = child(path, "task")
    p, T, triggers = read_task(task, tpath)
    content = _content(task, instance, path, p)
    common_denominator((x for c in content for x in c), f"{path}: content vectors")
    spec = need(instance, "values", path)
    zero = [Fraction(0)] * p
    if spec == "fixed":
        values = {i: list(c) for i, c in enumerate(content)}
        values[TRIGGER] = list(zero)
        return Instance(p, T, triggers, content, values, list(zero), True, task)
    if not isinstance(spec, dict):
        raise CertificateError(f"{path}.values: expected \"fixed\" or an object with U")
    check_fields(spec, child(path, "values"), ("U",))
    require("content", p * (p + 3), f"{path}.values.U: entries p·(p+3)")
    U = rational_matrix(need(spec, "U", child(path, "values")), f"{path}.values.U",
                        columns=p + 3)
    if len(U) != p:
        raise CertificateError(f"{path}.values.U: expected {p} rows, got {len(U)}")
    common_denominator((x for row in (*content, *U) for x in row), f"{path}: content and U")
    if fixed_matrix(p) == U:  # U_fix written out is U_fix
        return read_instance({**instance, "values": "fixed"}, path)
    values = {}
    for i, c in enumerate(content):
        feature = [*c, Fraction(1), Fraction(0), Fraction(0)]
        values[i] = [dot(row, feature) for row in U]
    values[TRIGGER] = [row[p + 1] for row in U]
    return Instance(p, T, triggers, content, values, [row[p + 2] for row in U], False, task, U)


def fixed_matrix(p: int) -> list[Vector]:
    """``U_fix = [I_p 0 0 0]`` exactly."""
    return [[Fraction(int(i == j)) for j in range(p + 3)] for i in range(p)]


def read_tokens(value: Any, inst: Instance, path: str) -> list[int]:
    """A sequence after BOS: content indices ``0..k-1`` and ``-1`` for the trigger."""
    if not isinstance(value, list) or not value:
        raise CertificateError(f"{path}: expected a non-empty array of tokens")
    if len(value) > inst.T:
        raise CertificateError(f"{path}: length {len(value)} exceeds T={inst.T}")
    for i, tok in enumerate(value):
        as_int(tok, child(path, i), -1, inst.k, f"a content index < {inst.k} or the trigger -1")
    if inst.triggers == "single" and value.count(TRIGGER) > 1:
        raise CertificateError(f"{path}: more than one trigger in a single-trigger family")
    return list(value)


def position_features(scheme: str, T: int, t: int) -> list[Fraction]:
    """``π(t)`` exactly: ``[1, 1/(t-1)]`` (inverse; ``[1, 0]`` at 0, ``[1, 1]`` at 1),
    ``[1]`` (none), or ``e_t`` of length ``T + 1`` (onehot)."""
    if scheme == "inverse":
        ratio = Fraction(0) if t == 0 else Fraction(1) if t == 1 else Fraction(1, t - 1)
        return [Fraction(1), ratio]
    if scheme == "none":
        return [Fraction(1)]
    return [Fraction(int(i == t)) for i in range(T + 1)]


def token_features(inst: Instance, token: int) -> list[Fraction]:
    """``e(x) = [c; 1, 0, 0]`` for content ``c``, ``[0; 0, 1, 0]`` for the trigger and
    ``[0; 0, 0, 1]`` for BOS (the value map ``U`` acts on it)."""
    zero = [Fraction(0)] * inst.p
    if token == BOS:
        return [*zero, Fraction(0), Fraction(0), Fraction(1)]
    if token == TRIGGER:
        return [*zero, Fraction(0), Fraction(1), Fraction(0)]
    return [*inst.content[token], Fraction(1), Fraction(0), Fraction(0)]


def count_prefixes(inst: Instance, cap: int | None = None) -> int:
    """Distinct prefixes (depth ``1..T``) of the family; the count stops once past ``cap``."""
    k, T = inst.k, inst.T
    total = 0
    for n in range(1, T + 1):
        total += (k + 1) ** n if inst.triggers == "multi" else k**n + n * k ** (n - 1)
        if cap is not None and total > cap:
            break
    return total


def prefixes(inst: Instance) -> Iterator[tuple[list[int], list[Fraction]]]:
    """Every prefix of the family (depth 1..T, depth first) with its target at the last
    position; the caller bounds the count first (:func:`count_prefixes`)."""
    alphabet = [*range(inst.k), TRIGGER]

    def grow(prefix: list[int], triggers: int) -> Iterator[tuple[list[int], list[Fraction]]]:
        if len(prefix) == inst.T:
            return
        for tok in alphabet:
            if tok == TRIGGER and inst.triggers == "single" and triggers:
                continue
            nxt = [*prefix, tok]
            yield nxt, inst.target(nxt)
            yield from grow(nxt, triggers + (tok == TRIGGER))

    yield from grow([], 0)


def situations(inst: Instance) -> list[tuple[int, ...]]:
    """Every token set ``{x_1..x_t}`` at a non-trigger position ``t >= 1`` of the family.

    ``x_t`` is content, so the set holds a content token; it has at most ``T``
    elements (the trigger counts once, even in the multi-trigger family).  Counted
    before any is built (refused past the ``situations`` limit).
    """
    universe = [*range(inst.k), TRIGGER]
    sizes = range(1, min(inst.T, len(universe)) + 1)
    limit = current().situations
    count = -1  # minus {TRIG}
    for size in sizes:  # stops as soon as the count passes the limit
        count += math.comb(len(universe), size)
        if count > limit:
            break
    require("situations", count, f"instance: situations of k={inst.k}, T={inst.T}",
            partial=True)
    return [tuple(sorted(combo)) for size in sizes for combo in combinations(universe, size)
            if any(c != TRIGGER for c in combo)]


class View:
    """A rule's view of the trigger Family: the instance read exactly (``base``), ``ε > 0``,
    prefixes of the family checked, and the one target code."""

    base: Instance

    def prefix(self, value: Any, path: str) -> tuple[int, ...]:
        """A prefix ``x_1..x_t`` of the family, checked: tokens, length, trigger count."""
        return tuple(read_tokens(value, self.base, path))

    def target_of(self, prefix: tuple[int, ...]) -> list[Fraction]:
        """``y_t`` at the last position of ``prefix``."""
        return self.base.target(prefix)


class SocpInstance(View):
    """The logit-sharing rule's view: the instance with its values (``U_fix`` or ``U``),
    ``eps > 0`` and the hypothesis family (``"S_T"`` or ``"listed"`` prefixes)."""

    FIELDS = ("task", "content_vectors", "values", "eps", "family")

    def __init__(self, inst: dict[str, Any]) -> None:
        self.base = read_instance(check_fields(inst, "instance", self.FIELDS))
        self.p, self.T, self.k = self.base.p, self.base.T, self.base.k
        self.triggers, self.content = self.base.triggers, self.base.content
        self.value, self.v_bos = self.base.values, self.base.bos
        self.family = need_str(inst, "family", "instance", ("S_T", "listed"))
        self.eps = need_eps(inst)


class TreeInstance(View):
    """The tree rules' view of the trigger Family (the interface
    :func:`sinkproof.checker.rules.tree.check_trees` uses): exact content, positions,
    ``eps``, value class, the classes of a prefix and the root box of values."""

    FIELDS = ("task", "content_vectors", "values", "eps", "family")

    def __init__(self, inst: dict[str, Any]) -> None:
        check_fields(inst, "instance", self.FIELDS)
        self.values = need_str(inst, "values", "instance", ("learned", "fixed"))
        # read_instance rebuilds the content exactly; its U_fix values serve the fixed class.
        self.base = read_instance({**inst, "values": "fixed"})
        self.p, self.T, self.k = self.base.p, self.base.T, self.base.k
        self.positions = self.base.description.get("positions", "inverse")
        self._pi: dict[int, tuple[Fraction, ...]] = {}
        self.family = need_str(inst, "family", "instance", ("S_T",))
        self.eps = need_eps(inst)
        self.tokens = [*range(self.k), TRIGGER]

    def pi(self, t: int) -> tuple[Fraction, ...]:
        """π(t) exactly, as the witness checker computes it (the positional scheme is
        validated by read_instance: inverse, onehot or none); built for the positions a
        certificate names, never a table of every ``t <= T``."""
        if t not in self._pi:
            self._pi[t] = tuple(position_features(self.positions, self.T, t))
        return self._pi[t]

    def classes(self, prefix: tuple[int, ...]) -> dict[tuple, int]:
        """Class -> multiplicity at the last position of ``prefix`` (keys ``j = 1..t``)."""
        t, q = len(prefix), prefix[-1]
        out: dict[tuple, int] = {}
        for j, tok in enumerate(prefix, start=1):
            key = (q, self.pi(t), tok, self.pi(j))
            out[key] = out.get(key, 0) + 1
        return out

    def root_box(self) -> dict[int, list[tuple[Fraction | None, Fraction | None]]]:
        """All of ``R^p`` per token (learned), or the fixed values as a point."""
        if self.values == "learned":
            return {x: [(None, None)] * self.p for x in self.tokens}
        return {x: [(c, c) for c in self.base.values[x]] for x in self.tokens}

    def class_name(self, cls: tuple) -> str:
        """A class as a failure message names it."""
        return f"u(query {cls[0]} at π={_fmt(cls[1])}, key {cls[2]} at π={_fmt(cls[3])})"


def _fmt(pi: tuple[Fraction, ...]) -> str:
    return "[" + ",".join(format_rational(x) for x in pi) + "]"


class HeadsInstance(TreeInstance):
    """The tree view plus the head count ``H`` (fixed values only)."""

    def __init__(self, inst: dict[str, Any]) -> None:
        check_fields(inst, "instance", (*TreeInstance.FIELDS, "heads"))
        self.heads = need_int(inst, "heads", "instance", minimum=1)
        super().__init__({k: v for k, v in inst.items() if k != "heads"})
        if self.values != "fixed":
            raise CertificateError("instance.values: a bnb-heads certificate covers the fixed "
                                   "values U_fix only (learned values in other heads leave "
                                   "their outputs unconstrained)")

    def value(self, token: int) -> list[Fraction]:
        """``v_x`` of ``U_fix`` (``c`` for content, 0 for the trigger)."""
        return list(self.base.values[token])
