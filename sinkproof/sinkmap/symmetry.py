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

import itertools
from dataclasses import dataclass

import numpy as np

from ..task import TriggerTask

MAX_SIGNED_PERMUTATION_DIM = 4


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
    p, k = task.p, task.k
    identity = identity_symmetry(task)
    if p > MAX_SIGNED_PERMUTATION_DIM:
        return [identity]
    content = task.content
    lookup = {tuple(c): a for a, c in enumerate(content)}
    if len(lookup) < k:  # repeated content vectors: keep it simple
        return [identity]
    found = [identity]
    for perm in itertools.permutations(range(p)):
        for signs in itertools.product((1.0, -1.0), repeat=p):
            P = np.zeros((p, p))
            P[np.arange(p), perm] = signs
            if np.array_equal(P, np.eye(p)):
                continue
            image = content @ P.T
            codes = [lookup.get(tuple(row)) for row in image]
            if any(c is None for c in codes):
                continue
            mapped = np.array([*codes, task.trig_code, task.bos_code])
            if np.array_equal(values @ P.T, values[mapped]):  # v(π a) = P v(a) for every code
                found.append(TokenSymmetry(tuple(int(c) for c in codes), P))
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
    best: tuple | None = None
    for sym in syms:
        keys = [sym.code(c) for c in prefix[:-1]]
        order = sorted(range(len(keys)), key=lambda i: keys[i])
        rep = (*[keys[i] for i in order], sym.code(prefix[-1]))
        cand = (rep[-1], rep[:-1])
        if best is None or cand < best[0]:
            best = (cand, rep, tuple(i + 1 for i in order), sym)
    assert best is not None
    _, rep, positions, sym = best
    return Orbit(rep=rep, positions=positions, to_target=sym.inverse())


def transport(prefix: tuple[int, ...], orbit: Orbit) -> tuple[int, ...]:
    """Image of a representative-block prefix in the target's block."""
    t = len(prefix)
    out = [0] * t
    for i in range(t - 1):
        out[orbit.positions[i] - 1] = orbit.to_target.code(prefix[i])
    out[t - 1] = orbit.to_target.code(prefix[t - 1])
    return tuple(out)
