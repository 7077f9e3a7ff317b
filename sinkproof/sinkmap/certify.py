"""Float multipliers -> exact rational certificates in the ``sinkmap-socp`` format.

Rounding is in the safe direction: each ``z_i`` is rounded to a dyadic grid, each
``w_i`` rounded *up* until ``z_i·z_i <= w_i²`` holds exactly, and the stated bound
is the smaller of the float bound and the bound the checker recomputes from the
rounded data, rounded down.  The certified bound is therefore never stronger than
the float one, and the trusted checker (:mod:`sinkproof.checker.socp`) decides.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ..certformat import FORMAT, VERSION, format_rational
from ..checker.exact import InequalityFailed
from ..checker.socp import Instance, check_bound, check_ray
from ..convex.values import ValueTable
from ..task import TRIG, TriggerTask
from .blocks import Block, variable_index
from .solve import DualSolution
from .symmetry import TokenSymmetry

GRID_BITS = 40
"""Multipliers are rounded to multiples of ``2^-GRID_BITS``."""

BOUND_BITS = 48
"""Stated bounds are rounded down to multiples of ``2^-BOUND_BITS``."""

DROP_RELATIVE = 1e-9
"""Multipliers with ``w_i`` below this fraction of the largest are dropped (set to 0)."""


def exact(x: float) -> Fraction:
    """A float as an exact rational."""
    return Fraction(float(x))


def instance_dict(table: ValueTable, eps: Fraction, family: str) -> dict[str, Any]:
    """The ``instance`` section: the convex layer's (task, content, values, eps) and the family."""
    return {**table.instance(eps), "family": family}


def _on_grid(x: float, up: bool = False) -> Fraction:
    scale = 1 << GRID_BITS
    return Fraction(math.ceil(x * scale) if up else round(x * scale), scale)


def round_down_bound(x: Fraction) -> Fraction:
    """``x`` rounded down to the bound grid (kept exact if that would make it 0)."""
    scale = 1 << BOUND_BITS
    down = Fraction(math.floor(x * scale), scale)
    return down if down > 0 else x


def rationalise(task: TriggerTask, inst: Instance, block: Block, target: tuple[int, ...],
                sol: DualSolution) -> dict[str, Any] | None:
    """A verified rational bound certificate (file form, with ``proved``), or ``None``.

    Constraints touching a null column (value 0 in every constraint, not in the target)
    must carry zero multipliers in any valid certificate; they are dropped outright.

    ``target`` is a prefix of codes.  Returns ``None`` when the rounded data fail the
    exact check (the caller retries with a larger margin).
    """
    assert sol.w is not None and sol.z is not None
    w_float = np.maximum(sol.w, 0.0)
    a0 = block.indicator(target)
    null = (np.asarray(abs(block.R).sum(axis=0)).ravel() == 0) & (a0 == 0)
    touches_null = np.asarray(block.A[:, null].sum(axis=1)).ravel() > 0
    keep = np.flatnonzero((w_float > DROP_RELATIVE * max(1.0, float(w_float.max())))
                          & ~touches_null)
    prefixes, zs, ws = [], [], []
    for i in keep:
        z = [_on_grid(v) for v in sol.z[i]]
        zz = sum((a * a for a in z), Fraction(0))
        w = _on_grid(max(float(w_float[i]), math.sqrt(float(zz))), up=True)
        while w * w < zz:
            w += Fraction(1, 1 << GRID_BITS)
        prefixes.append(task.decode(block.prefixes[i]))
        zs.append(z)
        ws.append(w)
    tgt = task.decode(target)
    tiny = Fraction(1, 1 << 200)
    try:
        proved = check_bound(inst, tgt, prefixes, zs, ws, tiny, "producer")
    except InequalityFailed:
        return None
    stated = round_down_bound(min(proved, exact(sol.bound)))
    return dict(target=list(tgt), bound=format_rational(stated), proved=proved, stated=stated,
                constraints=[list(c) for c in prefixes],
                z=[[format_rational(v) for v in z] for z in zs],
                w=[format_rational(v) for v in ws])


def symmetry_text(sym: TokenSymmetry) -> tuple[list[int], list[list[str]]]:
    """A symmetry's ``tokens`` and ``matrix`` fields of a derived certificate entry: the
    content-token map and the exact signed permutation matrix (one pair of lists per
    symmetry, shared by every entry that uses it)."""
    return list(sym.perm), [[format_rational(exact(v)) for v in row] for row in sym.matrix]


def ray_entry(task: TriggerTask, inst: Instance, block: Block, target: tuple[int, ...],
              d: np.ndarray) -> dict[str, Any] | None:
    """Rationalise a ray and verify it exactly; ``None`` if it fails."""
    k, t = task.k, block.t
    scale = float(np.max(d)) if d.size else 0.0
    if scale <= 0 or (block.q == task.trig_code and t >= 2):
        return None  # rays are certified only in blocks whose targets are all y = 0
    items = []
    for col in np.flatnonzero(d > 1e-7 * scale):
        if col == block.n - 1:
            b, j = block.q, t
        else:
            j, b = int(col) // (k + 1) + 1, int(col) % (k + 1)
        assert variable_index(k, b, j, t) == col
        items.append((task.decode([b])[0], j, _on_grid(d[col] / scale)))
    direction = {(b, j): v for b, j, v in items if v > 0}
    tgt = task.decode(target)
    try:
        check_ray(inst, tgt, direction, "producer")
    except InequalityFailed:
        return None
    return {"target": list(tgt),
            "direction": [[b, j, format_rational(v)] for (b, j), v in direction.items()]}


def single_key_ray(task: TriggerTask, inst: Instance, target: tuple[int, ...]) -> dict | None:
    """The simplest ray: one key of the target whose value is within eps of 0 (a null key)."""
    t = len(target)
    tgt = task.decode(target)
    if tgt[-1] == -1 and t >= 2:
        return None
    for j, b in enumerate(tgt, start=1):
        try:
            check_ray(inst, tgt, {(b, j): Fraction(1)}, "producer")
        except InequalityFailed:
            continue
        return {"target": list(tgt), "direction": [[b, j, "1"]],
                "why": f"key {'TRIG' if b == -1 else b} at position {j} of {t} has a value of "
                       f"norm <= eps: its logit can grow without limit and absorb the mass"}
    return None


def token_images(task: TriggerTask, sym: TokenSymmetry) -> dict[int, int]:
    """``sym`` on user tokens (content indices and ``TRIG``)."""
    trig = task.trig_code
    return {TRIG if c == trig else c: TRIG if sym.code(c) == trig else sym.code(c)
            for c in range(task.k + 1)}


def transport_ray(ray: dict[str, Any], positions: list[int], images: dict[int, int],
                  user_target: tuple[int, ...]) -> dict[str, Any]:
    """A representative's ray carried to ``user_target`` (user tokens) along its orbit:
    the representative's key position ``j`` goes to ``positions[j-1]`` (the query stays
    last), its tokens by ``images`` (:func:`token_images`)."""
    t = len(user_target)
    return {"target": list(user_target),
            "direction": [[images[b], j if j == t else positions[j - 1], v]
                          for b, j, v in ray["direction"]]}


def envelope(instance: dict[str, Any], certificates: list[dict], derived: list[dict],
             rays: list[dict], statement: str, map_kind: str = "softmax") -> dict[str, Any]:
    """The full certificate file (the checker rebuilds the statement it verifies);
    ``map_kind`` other than softmax (a slot map) is written as ``claim.map``, so the
    checker reads the bounds on that map's null mass."""
    strip = ("proved", "stated")
    claim: dict[str, Any] = {
        "statement": statement,
        "bounds": len({tuple(c["target"]) for c in (*certificates, *derived)}),
        "no_bound": len(rays)}
    if map_kind != "softmax":
        claim["map"] = map_kind
    return {
        "format": FORMAT,
        "version": VERSION,
        "kind": "sinkmap-socp",
        "instance": instance,
        "claim": claim,
        "data": {"certificates": [{k: v for k, v in c.items() if k not in strip}
                                  for c in certificates],
                 "derived": derived,
                 "rays": rays},
    }
