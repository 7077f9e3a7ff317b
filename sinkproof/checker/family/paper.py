"""The paper setting's Family, rebuilt exactly from a certificate's description.

Tokens in ``R^n``: BOS ``e_0``; content ``i`` (code ``i``) ``(0, 0, c_i, 1)``; the trigger
carrying ``c_i`` (code ``m + i``) ``(0, 1, c_i, 0)``.  Targets ``y_t = [t = j] (1/j) Σ_{k<=j}
x_k`` (``j`` the trigger's place in ``2..L-1``), plus ``x_t`` when residual.  The family's
prefixes and layout: ``docs/paper.md``, ``docs/certificates.md``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations
from math import comb
from typing import Any

from ...errors import CertificateError
from ..limits import current, require
from ..schema import (
    as_int,
    as_list,
    check_fields,
    child,
    format_rational,
    need,
    need_eps,
    need_int,
    need_list,
    need_str,
    rational_matrix,
    section,
)

TASK_FIELDS = ("setting", "n", "L", "content", "residual", "grid")
"""Fields of ``instance.task`` (``PaperTask.describe()``)."""

Vector = list[Fraction]
Prefix = tuple[int, ...]
"""Token codes ``x_1..x_t``: content ``i`` is ``i``, the trigger carrying ``c_i`` is ``m + i``."""
Situation = tuple[tuple[int, ...], int | None]
"""A token set: ``(sorted content indices, trigger's content index or None)``."""


@dataclass(frozen=True)
class PaperFamily:
    """The paper's task instance: ``n``, ``L``, the exact content vectors, residual targets."""

    n: int
    L: int
    content: list[Vector]
    residual: bool = False

    @property
    def m(self) -> int:
        return len(self.content)

    def token(self, code: int | None) -> Vector:
        """The token vector of a code (``None``: BOS)."""
        if code is None:
            return [Fraction(int(i == 0)) for i in range(self.n)]
        trig = code >= self.m
        c = self.content[code - self.m if trig else code]
        return [Fraction(0), Fraction(int(trig)), *c, Fraction(int(not trig))]

    def fixed_values(self) -> tuple[list[Vector], list[Vector]]:
        """Fixed values (``x`` without its BOS coordinate) of content tokens and triggers."""
        return ([self.token(i)[1:] for i in range(self.m)],
                [self.token(self.m + i)[1:] for i in range(self.m)])

    def target(self, prefix: Prefix) -> Vector:
        """``y_t`` at the last position of ``prefix``: the mean of the tokens ``1..t`` at
        the trigger, else 0; plus ``x_t`` (BOS at ``t = 0``) when residual."""
        t = len(prefix)
        y = self.token(prefix[-1] if prefix else None) if self.residual else [Fraction(0)] * self.n
        if t >= 1 and prefix[-1] >= self.m:
            rows = [self.token(c) for c in prefix]
            for d in range(self.n):
                y[d] += sum((r[d] for r in rows), Fraction(0)) / t
        return y

    def count_prefixes(self) -> int:
        """The family's prefix count, refused past the ``prefixes`` limit (closed form)."""
        cap = current().prefixes
        count = n_prefixes(self.m, self.L, cap)
        require("prefixes", count, f"instance: prefixes of m={self.m}, L={self.L}",
                partial=count > cap)
        return count

    def children(self, prefix: Prefix) -> Iterator[Prefix]:
        """The one-token extensions of ``prefix`` that stay in the family."""
        t, m = len(prefix), self.m
        if t == self.L - 1:
            return
        has_trigger = any(c >= m for c in prefix)
        for c in range(m):
            if has_trigger or t + 1 <= self.L - 2:
                yield (*prefix, c)
        if not has_trigger and t + 1 >= 2:
            for c in range(m):
                yield (*prefix, m + c)

    def situations(self) -> list[Situation]:
        """Every token set of a non-trigger position: ``C`` (``1 <= |C| <= L-2``), ± one
        trigger; counted before any is built."""
        m = self.m
        sizes = range(1, min(m, self.L - 2) + 1)
        count = 0
        for size in sizes:
            count += comb(m, size) * (m + 1)
            if count > current().situations:
                break
        require("situations", count, f"instance: situations of m={m}, L={self.L}",
                partial=True)
        return [(combo, trig) for size in sizes for combo in combinations(range(m), size)
                for trig in (None, *range(m))]

    def read_prefix(self, value: Any, path: str) -> Prefix:
        """A prefix ``x_1..x_t`` of the family: ``t <= L-1``, at most one trigger, not at
        position 1, and ``t <= L-2`` without one."""
        items = as_list(value, path, min_length=1)
        m = self.m
        if len(items) > self.L - 1:
            raise CertificateError(f"{path}: longer than L-1 = {self.L - 1}")
        for i, c in enumerate(items):
            as_int(c, child(path, i), 0, 2 * m, f"a token code < {2 * m}")
        where = [i for i, c in enumerate(items) if c >= m]
        if len(where) > 1:
            raise CertificateError(f"{path}: more than one trigger")
        if where and where[0] == 0:
            raise CertificateError(f"{path}: a trigger at position 1 is not in the family")
        if not where and len(items) > self.L - 2:
            raise CertificateError(f"{path}: a prefix of length {len(items)} without its "
                                   "trigger is not in the family")
        return tuple(items)

    def read_content(self, entry: Any, path: str) -> list[int]:
        """``entry.content``: one or more content indices ``< m``."""
        return [as_int(c, f"{path}.content[{i}]", 0, self.m, f"a content index < {self.m}")
                for i, c in enumerate(need_list(entry, "content", path, min_length=1))]

    def read_situation(self, entry: Any, path: str) -> Situation:
        """The token set an entry names: ``content`` indices (each once) and ``trigger``
        (``null`` or the trigger's content index)."""
        content = self.read_content(entry, path)
        key = tuple(sorted(set(content)))
        if len(key) != len(content):
            raise CertificateError(f"{path}.content: repeated index")
        trig = need(entry, "trigger", path)
        if trig is not None:
            as_int(trig, f"{path}.trigger", 0, self.m, f"null or an index < {self.m}")
        return key, trig

    @staticmethod
    def situation_name(s: Situation) -> str:
        content = ", ".join(f"c{i}" for i in s[0])
        return "{" + content + ("" if s[1] is None else f", TRIG(c{s[1]})") + "}"

    def code_name(self, code: int) -> str:
        return f"c{code}" if code < self.m else f"TRIG(c{code - self.m})"

    def vectors(self) -> list[list[str]]:
        """The content vectors as exact rational strings (for statements)."""
        return [[format_rational(x) for x in c] for c in self.content]


class PaperInstance:
    """The tree rule's view of the paper Family (the interface
    :func:`sinkproof.checker.rules.tree.check_trees` uses): ``p`` (the value dimension ``n``),
    ``tokens`` (the value-carrying codes ``0..2m-1``), ``prefix``, ``target_of``,
    ``classes``, ``root_box``, ``class_name``, and ``k``, ``T`` for the work estimate."""

    values = "learned"

    def __init__(self, inst: dict[str, Any]) -> None:
        _, self.family = read_paper(inst, ("task", "content_vectors", "values", "eps", "family"))
        self.content, self.n, self.L = self.family.content, self.family.n, self.family.L
        need_str(inst, "values", "instance", ("learned",))
        need_str(inst, "family", "instance", ("paper",))
        self.eps = need_eps(inst)
        self.m = len(self.content)
        self.p, self.k, self.T = self.n, 2 * self.m, self.L - 1
        self.tokens = list(range(2 * self.m))
        self.token, self.prefix = self.family.token, self.family.read_prefix
        self.target_of, self.code_name = self.family.target, self.family.code_name

    def classes(self, prefix: tuple[int, ...]) -> dict[tuple, int]:
        """Class ``(query, (), key, ())`` -> multiplicity among the keys ``1..t`` (the
        empty tuples: this setting has no position features)."""
        q = prefix[-1]
        out: dict[tuple, int] = {}
        for tok in prefix:
            key = (q, (), tok, ())
            out[key] = out.get(key, 0) + 1
        return out

    def root_box(self) -> dict[int, list[tuple[None, None]]]:
        """All of ``R^n`` per token code (learned values)."""
        return {x: [(None, None)] * self.n for x in self.tokens}

    def class_name(self, cls: tuple) -> str:
        return f"u(query {self.code_name(cls[0])}, key {self.code_name(cls[2])})"


def n_prefixes(m: int, L: int, cap: int | None = None) -> int:
    """Distinct non-empty prefixes of the family: without the trigger at depth ``t <= L-2``
    (``m^t``), with the trigger at one of ``2..t`` (``(t-1) m^t``), for ``1 <= t <= L-1``.

    In closed form, never a loop over ``L``; with ``cap``, a count past it is returned as
    ``cap + 1`` as soon as ``m^(L-2)`` alone passes it (no integer of ``L·log m`` bits is
    built for a file that says ``L = 10^6``)."""
    if L < 3:
        return 0
    if cap is not None and m >= 2 and (L - 2) * (m.bit_length() - 1) > cap.bit_length():
        return cap + 1
    if m == 1:
        return (L - 2) + (L - 2) * (L - 1) // 2
    geometric = (m ** (L - 1) - m) // (m - 1)  # Σ_{t=1}^{L-2} m^t
    weighted = ((L - 2) * m ** (L + 1) - (L - 1) * m**L + m**2) // (m - 1) ** 2
    return geometric + weighted  # Σ_{t=1}^{L-1} (t-1) m^t


def read_paper(instance: dict[str, Any], fields: tuple[str, ...], one_layer: bool = True
               ) -> tuple[dict[str, Any], PaperFamily]:
    """``instance.task`` (the paper's setting, a finite content set) and its Family;
    ``fields``: the instance's allowed fields; ``one_layer``: the targets must be the
    one-layer ones (``residual`` false)."""
    check_fields(instance, "instance", fields)
    task = section(instance, "task", TASK_FIELDS, "instance")
    if need_str(task, "setting", "instance.task") != "paper":
        raise CertificateError("instance.task.setting: must be 'paper'")
    n = need_int(task, "n", "instance.task", minimum=4)
    L = need_int(task, "L", "instance.task", minimum=3)
    if one_layer and task.get("residual", False) is not False:
        raise CertificateError("instance.task.residual: the bound is for the one-layer "
                               "targets (residual must be false)")
    if need(task, "content", "instance.task") == "uniform":
        raise CertificateError("instance.task.content: continuous content has no finite "
                               "certificate; give a finite content set")
    raw = need(instance, "content_vectors", "instance")
    if isinstance(raw, list):
        require("content", len(raw) * (n - 3), "instance.content_vectors: entries m·(n-3)")
    content = rational_matrix(raw, "instance.content_vectors", columns=n - 3, min_rows=1)
    if len({tuple(c) for c in content}) != len(content):
        raise CertificateError("instance.content_vectors: repeated content vector")
    return task, PaperFamily(n, L, content, task.get("residual", False) is True)


__all__ = ["PaperFamily", "PaperInstance", "Prefix", "Situation", "n_prefixes", "read_paper"]
