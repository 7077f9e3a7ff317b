"""Verify a construction on every position of its family: exact rationals, else outward intervals.

On a task with positional features every position of every sequence is evaluated (its row
``φ = [e(x); π(t)]``); on one without them a head's output at ``t`` depends only on the
prefix, so every distinct prefix of the family (and BOS) is evaluated once.  A token's fixed
value is its token row's first ``out_dim`` coordinates without those of BOS (``U_fix``: the
content; on the paper's tokens ``W_O W_V = I - e_0 e_0^T``).

Scores ``s_{tj} = φ_t^T A φ_j`` are exact rationals (exact features, exact ``A``); the
weights come from the trusted checker's rule table, a service of its face
(:func:`sinkproof.checker.weigh`: exact for relu, relu/length, sparsemax and entmax-1.5 where
rational; mpmath intervals otherwise), so every figure below is a rigorous bound, not a float
estimate:

- ``error_sq_hi``: an upper bound on ``max_{X,t} ||f_t - y_t||^2`` (0 means zero error,
  exactly, when ``exact`` is true);
- at non-trigger positions ``t >= 1``: upper bounds on the BOS mass ``α_0``, the null mass
  (BOS, zero-valued keys and the null slot: the virtual slot, or ``1 - g_t`` of a gate),
  and the BOS and null shares (``mass / Σ_j α_j``, 0 when every weight is 0).  A gated
  head's weights are its effective weights ``g_t α_tj``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..checker import MAP_NAMES, weigh
from .constructions import Construction

__all__ = ["ConstructionCheck", "ErrorBound", "checker_missing", "verify_construction"]

class ErrorBound:
    """``error_sq_hi`` (an upper bound on the largest squared error) and ``exact`` (it was
    decided in rationals), read as an error bound."""

    error_sq_hi: Fraction
    exact: bool

    @property
    def error_hi(self) -> float:
        """An upper bound on the error, rounded up to a float."""
        return math.nextafter(math.sqrt(float(self.error_sq_hi)), math.inf) \
            if self.error_sq_hi else 0.0

    @property
    def zero_error(self) -> bool:
        """Zero error at every position, decided exactly."""
        return self.exact and self.error_sq_hi == 0


@dataclass(frozen=True)
class ConstructionCheck(ErrorBound):
    """Rigorous bounds on one construction over its whole family (see the module doc)."""

    kind: str
    level: Fraction
    positions: int
    """Positions evaluated: (sequence, position) pairs, or distinct prefixes with BOS."""
    exact: bool
    error_sq_hi: Fraction
    bos_hi: Fraction
    null_hi: Fraction
    bos_share_hi: Fraction
    null_share_hi: Fraction
    bos_lo: Fraction


def _share_hi(part_hi: Fraction, rest_lo: Fraction) -> Fraction:
    if part_hi == 0:
        return Fraction(0)
    return part_hi / (part_hi + max(rest_lo, Fraction(0)))


def checker_missing(kind: str) -> str | None:
    """Why the trusted checker cannot weigh map ``kind`` (no row in its rule table), or
    ``None``: such a map's constructions and witnesses verify once its row exists."""
    if kind in MAP_NAMES:
        return None
    return f"the trusted checker has no rule-table row for {kind} weights yet"


def _features(task: Any, code: int, t: int) -> list[Fraction]:
    """The exact row of token ``code`` at position ``t`` (positional features only where
    the task has them)."""
    row = list(task.token_features_exact(code))
    return row + list(task.position_features_exact(t)) if task.has_positions else row


def fixed_values(task: Any) -> list[list[Fraction]]:
    """Each token's fixed value: its first ``out_dim`` token features, with the coordinates
    where BOS's row is nonzero set to 0 (so ``v_BOS = 0``)."""
    out = task.out_dim
    bos = list(task.token_features_exact(task.bos_code))[:out]
    return [[Fraction(0) if bos[i] else x
             for i, x in enumerate(list(task.token_features_exact(c))[:out])]
            for c in range(task.n_tokens)]


def _evaluated(task: Any) -> Iterator[tuple[list[int], int]]:
    """``(codes with BOS, t)``: the positions whose weights the check evaluates."""
    bos = task.bos_code
    if task.has_positions:
        for seq in task.sequences():
            codes = [bos, *(int(c) for c in task.encode(seq))]
            for t in range(len(codes)):
                yield codes, t
        return
    yield [bos], 0
    for t in range(1, task.max_depth + 1):
        for block in task.prefix_blocks(t):
            for row in block.codes:
                yield [bos, *(int(c) for c in row)], t


def verify_construction(con: Construction) -> ConstructionCheck:
    """Bounds on ``con`` at every position of every sequence of its task's family
    (ValueError where :func:`checker_missing` says the checker cannot weigh the map)."""
    missing = checker_missing(con.kind)
    if missing:
        raise ValueError(missing)
    task = con.task
    A = con.A
    feats: dict[tuple[int, int], list[Fraction]] = {}

    def phi(code: int, t: int) -> list[Fraction]:
        key = (code, t)
        if key not in feats:
            feats[key] = _features(task, code, t)
        return feats[key]

    values = fixed_values(task)
    out = task.out_dim
    err = bos_hi = null_hi = bos_sh = null_sh = Fraction(0)
    bos_lo = Fraction(1)
    exact, count = True, 0
    for codes, t in _evaluated(task):
        q = phi(codes[t], t)
        Aq = [sum((q[i] * A[i][k] for i in range(len(q)) if q[i]), Fraction(0))
              for k in range(len(q))]
        s = [sum((a * x for a, x in zip(Aq, phi(codes[j], j)) if a and x), Fraction(0))
             for j in range(t + 1)]
        # a gated head: effective weights g·α_j, the gate's 1 - g a slot
        z = None if con.gate_w is None else sum((a * x for a, x in zip(con.gate_w, q)),
                                                 con.gate_c)
        w, slot = weigh(con.kind, s, t, list(con.params), z)
        exact = exact and z is None and all(lo == hi for lo, hi in w)
        y = task.exact_prefix_target(codes[1 : t + 1])
        e2 = Fraction(0)
        for i in range(out):
            lo = hi = Fraction(0)
            for j in range(t + 1):
                v = values[codes[j]][i]
                lo, hi = (lo + v * w[j][0], hi + v * w[j][1]) if v >= 0 else \
                    (lo + v * w[j][1], hi + v * w[j][0])
            e2 += max(abs(lo - y[i]), abs(hi - y[i])) ** 2
        err = max(err, e2)
        count += 1
        if t == 0 or task.token_kind(codes[t]) == "trigger":
            continue
        null = [j for j in range(t + 1) if not any(values[codes[j]])]
        n_hi = sum((w[j][1] for j in null), Fraction(0))
        r_lo = sum((w[j][0] for j in range(t + 1) if j not in null), Fraction(0))
        bos_hi, bos_lo = max(bos_hi, w[0][1]), min(bos_lo, w[0][0])
        null_hi = max(null_hi, n_hi + slot[1])
        bos_sh = max(bos_sh, _share_hi(w[0][1], sum((w[j][0] for j in range(1, t + 1)),
                                                     Fraction(0))))
        null_sh = max(null_sh, _share_hi(n_hi, r_lo))
    return ConstructionCheck(con.kind, con.level, count, exact, err, bos_hi, null_hi, bos_sh,
                             null_sh, bos_lo)
