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

import math
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


def _integer_targets(relax: Relaxation) -> tuple[list[list[int]], int]:
    """The exact targets ``y_i`` of every constraint prefix as integers over one common
    denominator ``d``: ``(numerators, d)`` (cached on ``relax``)."""
    cached = relax.__dict__.get("_integer_targets")
    if cached is None:
        ys = [relax.exact_target(i) for i in range(relax.m)]
        d = math.lcm(1, *(Fraction(x).denominator for y in ys for x in y))
        cached = ([[int(Fraction(x) * d) for x in y] for y in ys], d)
        object.__setattr__(relax, "_integer_targets", cached)
    return cached


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
    constraint prefixes in ``relax``; ``box``: a :class:`~sinkproof.bnb.box.ValueBox`.
    The multipliers are brought to one common denominator and checked by
    :func:`leaf_c0_integers`."""
    D = math.lcm(1, s0.denominator, *(x.denominator for x in s),
                 *(x.denominator for zi in z for x in zi))

    def over_D(x: Fraction) -> int:
        return x.numerator * (D // x.denominator)

    return leaf_c0_integers(relax, box, rows, [[over_D(x) for x in zi] for zi in z],
                            [over_D(x) for x in s], over_D(s0), D, learned)


def leaf_c0_integers(relax: Relaxation, box: Any, rows: list[int], Z: list[list[int]],
                     S: list[int], S0: int, D: int, learned: bool) -> Fraction | None:
    """:func:`leaf_c0` of the multipliers ``z = Z / D``, ``s = S / D``, ``s_0 = S0 / D``
    (integer numerators over one denominator ``D``).

    Exact throughout, in integers: with the targets over one denominator ``d_y`` every
    ``eps s_i - z_i·y_i`` is an integer over ``D d_y den(eps)``; only the box's support
    function meets other rationals."""
    p = relax.dim
    eps = Fraction(relax.eps)
    for zi, si in zip(Z, S):
        if si < 0 or sum(x * x for x in zi) > si * si:
            return None
    if S0 < 0:
        return None
    if learned:
        z0 = [sum(zi[c] for zi in Z) for c in range(p)]  # -z_0; its norm is z_0's
        if sum(x * x for x in z0) > S0 * S0:
            return None
    Y, dy = _integer_targets(relax)
    e_num, e_den = eps.numerator, eps.denominator
    scale = D * dy * e_den  # every coefficient below is an integer over it
    c0 = e_num * dy * S0
    G: dict[int, list[int]] = {}
    H: dict[int, int] = {}
    classes = _row_classes(relax)
    for i, zi, si in zip(rows, Z, S):
        coeff = e_num * dy * si - e_den * sum(a * b for a, b in zip(zi, Y[i]))
        c0 += coeff
        for l, m in classes[i]:
            g = G.get(l)
            G[l] = [m * b for b in zi] if g is None else [a + m * b for a, b in zip(g, zi)]
            H[l] = H.get(l, 0) + m * coeff
    table = dict(box.bounds)
    h: dict[int, Fraction] = {}
    for l, g in G.items():
        sigma = Fraction(0)
        for gc, (lo, hi) in zip(g, table[int(relax.key[l])]):
            if gc:
                end = hi if gc > 0 else lo
                if end is None:
                    return None
                sigma += gc * end
        h[l] = Fraction(H[l], scale) + sigma / D
    for l in np.flatnonzero(relax.a):
        h.setdefault(int(l), Fraction(0))
    c0_q = Fraction(c0, scale)
    if c0_q < 0 and all(v <= 0 for v in h.values()):
        return c0_q
    if any(v + int(relax.a[l]) > 0 for l, v in h.items()):
        return None
    return c0_q
