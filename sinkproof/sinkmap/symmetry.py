"""Symmetries of Theorem 6's relaxation, used to solve one program per orbit of targets.

Two kinds of relabelling map the family ``S_T`` and its cone constraints onto
themselves: permuting the key positions ``1..t-1`` of a block (the variables are
indexed by position, and the family is closed under permuting tokens), and a
signed permutation ``P`` of coordinates that maps the content set onto itself and
commutes with the values (``v(π a) = P v(a)``, ``P v(TRIG) = v(TRIG)``,
``P v(BOS) = v(BOS)``).  The bound is the same on a whole orbit; the checker
re-verifies every transported certificate from scratch, so nothing here is trusted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..task import TriggerTask


@dataclass(frozen=True)
class TokenSymmetry:
    """Content code ``a`` goes to ``perm[a]``; value vectors transform by ``matrix``."""

    perm: tuple[int, ...]
    matrix: np.ndarray

    def code(self, c: int) -> int:
        """Image of a token code (trigger and BOS are fixed)."""
        return self.perm[c] if c < len(self.perm) else c

    def inverse(self) -> TokenSymmetry:
        inv = [0] * len(self.perm)
        for a, b in enumerate(self.perm):
            inv[b] = a
        return TokenSymmetry(tuple(inv), self.matrix.T.copy())


def identity_symmetry(task: TriggerTask) -> TokenSymmetry:
    """The relabelling that changes nothing."""
    return TokenSymmetry(tuple(range(task.k)), np.eye(task.p))


def token_symmetries(task: TriggerTask, values: np.ndarray) -> list[TokenSymmetry]:
    """Signed coordinate permutations preserving content and values (identity first).

    Only searched for ``p <= 4`` (``2^p p!`` candidates); otherwise only the identity.
    """
    found = [identity_symmetry(task)]
    for codes, P in task.content_symmetries():
        mapped = np.array([*codes, task.trig_code, task.bos_code])
        if np.array_equal(values @ P.T, values[mapped]):  # v(π a) = P v(a) for every code
            found.append(TokenSymmetry(codes, P))
    return found


@dataclass(frozen=True)
class Orbit:
    """How a target reaches its representative: ``rep = order-sorted sym(target)``.

    ``positions[i]`` is the target position (1-based) of representative position ``i+1``;
    ``to_target`` maps representative tokens to target tokens.
    """

    rep: tuple[int, ...]
    positions: tuple[int, ...]
    to_target: TokenSymmetry


def canonical(prefix: tuple[int, ...], syms: list[TokenSymmetry]) -> Orbit:
    """The orbit representative of a target prefix (codes ``x_1..x_t``)."""
    return canonical_all([tuple(prefix)], syms).orbit(0)


@dataclass(frozen=True)
class Orbits:
    """:func:`canonical` of many targets.  ``reps``: the distinct representatives, in order
    of first appearance; target ``i`` has representative ``reps[rep_id[i]]`` (``is_rep[i]``
    when it is that representative itself), ``positions[i]`` (as in :class:`Orbit`) and
    reaches it by ``syms[sym[i]]``, whose inverse is ``to_target[sym[i]]``."""

    reps: list[tuple[int, ...]]
    rep_id: list[int]
    is_rep: list[bool]
    positions: list[list[int]]
    sym: list[int]
    to_target: list[TokenSymmetry]

    def orbit(self, i: int) -> Orbit:
        """Target ``i``'s :class:`Orbit`."""
        return Orbit(self.reps[self.rep_id[i]], tuple(self.positions[i]),
                     self.to_target[self.sym[i]])


CHUNK = 1 << 14
"""Targets canonicalised per numpy pass (bounds the ``(chunk, symmetries, t)`` arrays)."""


def _code_tables(syms: list[TokenSymmetry]) -> np.ndarray:
    """``(S, n_codes)``: row ``s`` maps every code (content, trigger, BOS) by ``syms[s]``."""
    n = len(syms[0].perm) + 2
    return np.array([[sym.code(c) for c in range(n)] for sym in syms], dtype=np.int16)


def _canonical_block(codes: np.ndarray, tables: np.ndarray) -> tuple[np.ndarray, ...]:
    """Representatives of targets ``codes`` ``(N, t)`` of one length, all at once.

    For every symmetry ``s`` the image's keys are sorted stably; the representative is the
    lexicographically least ``(query, sorted keys)`` over ``s``, the first ``s`` on ties.
    Sorted key lists of one length compare as their token counts do, read as
    ``(-count(0), -count(1), ...)``, so the symmetry is chosen on ``(N, S, k+2)`` counts and
    only the chosen image is sorted.
    Returns ``rep`` ``(N, t)``, ``positions`` ``(N, t-1)`` (1-based) and ``sym`` ``(N,)``.
    """
    n, t = codes.shape
    n_codes = tables.shape[1]
    counts = np.zeros((n, n_codes), dtype=np.int16)
    for j in range(t - 1):
        counts[np.arange(n), codes[:, j]] += 1
    inverse = np.argsort(tables, axis=1)  # inverse[s, tables[s, c]] = c
    cand = np.concatenate([tables[:, codes[:, -1]].T[:, :, None],
                           -counts[:, inverse]], axis=2)  # (N, S, 1 + n_codes)
    alive = np.ones(cand.shape[:2], dtype=bool)
    big = np.iinfo(cand.dtype).max
    for c in range(cand.shape[2]):
        col = cand[:, :, c]
        low = np.where(alive, col, big).min(axis=1)
        alive &= col == low[:, None]
    best = np.argmax(alive, axis=1)  # first symmetry attaining the minimum
    mapped = tables[best[:, None], codes]  # (N, t)
    order = np.argsort(mapped[:, :-1], axis=1, kind="stable")
    rep = np.concatenate([np.take_along_axis(mapped[:, :-1], order, axis=1), mapped[:, -1:]],
                         axis=1)
    return rep, order + 1, best


def canonical_all(targets: list[tuple[int, ...]], syms: list[TokenSymmetry]) -> Orbits:
    """:func:`canonical` of every target, vectorised over targets of equal length."""
    tables = _code_tables(syms)
    n = len(targets)
    positions: list = [None] * n
    best: list = [0] * n
    rep_local = np.zeros(n, dtype=np.int64)
    is_rep = np.zeros(n, dtype=bool)
    firsts: list[np.ndarray] = []
    rows: list[np.ndarray] = []
    by_length: dict[int, list[int]] = {}
    for i, tgt in enumerate(targets):
        by_length.setdefault(len(tgt), []).append(i)
    for t, where in by_length.items():
        for lo in range(0, len(where), CHUNK):
            idx = np.array(where[lo:lo + CHUNK])
            codes = np.array([targets[i] for i in idx], dtype=np.int16).reshape(idx.size, t)
            rep, pos, sym = _canonical_block(codes, tables)
            is_rep[idx] = np.all(rep == codes, axis=1)
            uniq, first, inverse = np.unique(rep, axis=0, return_index=True,
                                             return_inverse=True)
            rep_local[idx] = inverse.ravel() + sum(r.shape[0] for r in rows)
            firsts.append(idx[first])
            rows.append(uniq)
            if idx[-1] - idx[0] + 1 == idx.size:  # contiguous (the usual case)
                positions[idx[0]:idx[-1] + 1] = pos.tolist()
                best[idx[0]:idx[-1] + 1] = sym.tolist()
            else:
                for i, q, s in zip(idx.tolist(), pos.tolist(), sym.tolist()):
                    positions[i], best[i] = q, s
    # one representative may come from several chunks: number them by first appearance
    flat = [tuple(r) for chunk in rows for r in chunk.tolist()]
    number: dict[tuple[int, ...], int] = {}
    if flat:
        for j in np.argsort(np.concatenate(firsts), kind="stable").tolist():
            number.setdefault(flat[j], len(number))
    reps = list(number)
    rep_id = np.array([number[r] for r in flat], dtype=np.int64)[rep_local] if n else rep_local
    return Orbits(reps, rep_id.tolist(), is_rep.tolist(), positions, best,
                  [sym.inverse() for sym in syms])


def transport(prefix: tuple[int, ...], orbit: Orbit) -> tuple[int, ...]:
    """Image of a representative-block prefix in the target's block."""
    t = len(prefix)
    out = [0] * t
    for i in range(t - 1):
        out[orbit.positions[i] - 1] = orbit.to_target.code(prefix[i])
    out[t - 1] = orbit.to_target.code(prefix[t - 1])
    return tuple(out)
