"""The producer's own exact check of a leaf's multipliers (before the trusted checker's).

The engine prunes candidate certificates with this check, written from the leaf
inequality itself, not taken from :mod:`sinkproof.checker` (which must not be imported
for its inside): for multipliers ``(z_i, s_i)`` on prefixes ``X_i`` and ``s_0`` on
position 0, every accurate model with values in the box ``B`` satisfies
``0 <= c0 + Σ_l h_l u_l`` with ``c0 = eps s_0 + Σ_i (eps s_i - z_i·y_i)`` and
``h_l = Σ_i m_il (eps s_i - z_i·y_i) + σ_B(G_l)``, ``G_l = Σ_i m_il z_i`` (``σ_B`` the
box's support function), once ``||z_i|| <= s_i`` and ``||Σ z_i|| <= s_0`` (learned
values).  So ``Z* - 1 <= c0`` when ``h_l + a_l <= 0`` on every class, and no model has
values in ``B`` when ``c0 < 0`` and every ``h_l <= 0``.  Exact rationals throughout; the
targets ``y_i`` are the task's exact ones.  The certificate the engine writes is verified
again, as a whole, by :func:`sinkproof.checker.verify`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .relaxation import Relaxation

Interval = tuple[Fraction | None, Fraction | None]


def _row_classes(relax: Relaxation) -> list[list[tuple[int, int]]]:
    """Per constraint prefix, its ``(class, multiplicity)`` pairs (cached on ``relax``)."""
    cached = relax.__dict__.get("_row_classes")
    if cached is None:
        cached = [[(int(l), int(relax.M[i, l])) for l in np.flatnonzero(relax.M[i])]
                  for i in range(relax.m)]
        object.__setattr__(relax, "_row_classes", cached)
    return cached


def _dot(a: list[Fraction], b: tuple[Fraction, ...] | list[Fraction]) -> Fraction:
    return sum((x * y for x, y in zip(a, b)), Fraction(0))


def support(g: list[Fraction], box: tuple[Interval, ...]) -> Fraction | None:
    """``max_{v ∈ box} g·v`` exactly (each coordinate at the end its sign of ``g`` picks),
    ``None`` when that end is infinite."""
    total = Fraction(0)
    for gi, ends in zip(g, box):
        if gi:
            end = ends[1] if gi > 0 else ends[0]
            if end is None:
                return None
            total += gi * end
    return total


def leaf_c0(relax: Relaxation, box: Any, rows: list[int], z: list[list[Fraction]],
            s: list[Fraction], s0: Fraction, learned: bool) -> Fraction | None:
    """``c0`` of the leaf (``Z* <= 1 + c0`` on ``box``; no model there when ``< 0``) when
    the multipliers pass every exact test above, else ``None``.  ``rows``: indices of the
    constraint prefixes in ``relax``; ``box``: a :class:`~sinkproof.bnb.box.ValueBox`."""
    eps, p = relax.eps, relax.dim
    for zi, si in zip(z, s):
        if si < 0 or _dot(zi, zi) > si * si:
            return None
    if s0 < 0:
        return None
    if learned:
        z0 = [-sum((zi[c] for zi in z), Fraction(0)) for c in range(p)]
        if _dot(z0, z0) > s0 * s0:
            return None
    c0 = eps * s0
    G: dict[int, list[Fraction]] = {}
    H: dict[int, Fraction] = {}
    for i, zi, si in zip(rows, z, s):
        coeff = eps * si - _dot(zi, relax.exact_target(i))
        c0 += coeff
        for l, m in _row_classes(relax)[i]:
            g = G.get(l)
            G[l] = [m * b for b in zi] if g is None else [a + m * b for a, b in zip(g, zi)]
            H[l] = H.get(l, 0) + m * coeff
    table = dict(box.bounds)
    h: dict[int, Fraction] = {}
    for l, g in G.items():
        sigma = support(g, table[int(relax.key[l])])
        if sigma is None:
            return None
        h[l] = H[l] + sigma
    for l in np.flatnonzero(relax.a):
        h.setdefault(int(l), Fraction(0))
    if c0 < 0 and all(v <= 0 for v in h.values()):
        return c0
    if any(v + int(relax.a[l]) > 0 for l, v in h.items()):
        return None
    return c0
