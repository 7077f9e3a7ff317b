"""Float multipliers -> exact rational certificates in the ``sinkmap-socp`` format.

Rounding is in the safe direction: each ``z_i`` is rounded to a dyadic grid, each
``w_i`` rounded *up* until ``z_i·z_i <= w_i²`` holds exactly, and the stated bound
is the smaller of the float bound and the bound recomputed exactly from the
rounded data (:func:`proved_bound`, this module's own exact arithmetic), rounded down.
The certified bound is therefore never stronger than the float one, and the trusted
checker (``sinkmap-socp``) decides the file.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..certformat import FORMAT, VERSION, dot, format_rational
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


RAY_PATTERNS = 200_000
"""Most support patterns a ray is checked on here (the checker's default limit)."""


@dataclass(frozen=True)
class ExactInstance:
    """The exact numbers of a sink map's instance: values ``v_x`` (content codes and
    ``TRIG``), ``v_BOS``, ``ε`` and the task's exact targets ``y_t`` of user-token prefixes."""

    task: TriggerTask
    value: dict[int, list[Fraction]]
    v_bos: list[Fraction]
    eps: Fraction

    @classmethod
    def of(cls, table: ValueTable, eps: Fraction) -> ExactInstance:
        return cls(table.task, table.exact, table.bos_exact, Fraction(eps))

    def target_of(self, prefix: Any) -> list[Fraction]:
        return list(self.task.exact_prefix_target(self.task.encode(list(prefix))))


def _denominator(values: Any) -> int:
    d = 1
    for x in values:
        d = math.lcm(d, x.denominator)
    return d


def proved_bound(inst: ExactInstance, target: Any, constraints: list[Any],
                 z: list[list[Fraction]], w: list[Fraction]) -> Fraction | None:
    """``1/(1 + c0)`` from a bound certificate's multipliers, exactly, or ``None`` when they
    fail: cones ``z_i·z_i <= w_i²``, ``w_i >= 0``; summing ``w_i ε Z_i + z_i·r_i >= 0`` gives
    ``c0 + g·u >= 0``, and ``g + a* <= 0`` (``a*`` the target's variables) and
    ``1 + c0 > 0`` bound ``Z* - 1 <= c0``.  In integers over one common denominator."""
    if any(wi < 0 or dot(zi, zi) > wi * wi for zi, wi in zip(z, w)):
        return None
    targets = [inst.target_of(c) for c in constraints]
    dm = _denominator([*(x for zi in z for x in zi), *w])
    dv = _denominator([inst.eps, *inst.v_bos, *(x for v in inst.value.values() for x in v),
                       *(x for y in targets for x in y)])

    def ints(vec: Any, d: int) -> list[int]:
        return [x.numerator * (d // x.denominator) for x in vec]

    V = {tok: ints(v, dv) for tok, v in inst.value.items()}
    bos, (E,) = ints(inst.v_bos, dv), ints([inst.eps], dv)
    scale = dm * dv
    g: dict[tuple[int, int], int] = {}
    C0 = 0
    for prefix, zi, wi, yi in zip(constraints, z, w, targets):
        Z, (W,) = ints(zi, dm), ints([wi], dm)
        base = E * W - sum(a * b for a, b in zip(Z, ints(yi, dv)))
        C0 += base + sum(a * b for a, b in zip(Z, bos))
        zv = {tok: sum(a * b for a, b in zip(Z, V[tok])) for tok in set(prefix)}
        for j, tok in enumerate(prefix, start=1):
            g[tok, j] = g.get((tok, j), 0) + base + zv[tok]
    for j, tok in enumerate(target, start=1):
        g[tok, j] = g.get((tok, j), 0) + scale
    if any(v > 0 for v in g.values()) or scale + C0 <= 0:
        return None
    return Fraction(scale, scale + C0)


def ray_holds(inst: ExactInstance, target: Any, direction: dict[tuple[int, int], Fraction]
              ) -> bool:
    """Whether ``u = λd`` stays accurate for every ``λ >= 0``: ``||v_BOS|| <= ε``, ``d >= 0``
    on the target block's variables with ``a*·d > 0``, and ``||Σ d_j v(x_j)|| <= ε Σ d_j`` for
    every way a prefix of the block meets the support of ``d`` (one key per position, or
    none before the last), exactly."""
    t, q, eps = len(target), target[-1], inst.eps
    if dot(inst.v_bos, inst.v_bos) > eps * eps or any(
            dj < 0 or not 1 <= j <= t or (j == t and tok != q)
            for (tok, j), dj in direction.items()):
        return False
    if sum(direction.get((tok, j), Fraction(0)) for j, tok in enumerate(target, 1)) <= 0:
        return False
    at: dict[int, list[tuple[int, Fraction]]] = {}
    for (tok, j), dj in direction.items():
        at.setdefault(j, []).append((tok, dj))
    options = [[None, *at[j]] if j < t else at[j] for j in sorted(at)]
    if math.prod(len(o) for o in options) > RAY_PATTERNS:
        return False
    for pattern in itertools.product(*options):
        keys = [item for item in pattern if item is not None]
        vec = [sum((dj * inst.value[tok][c] for tok, dj in keys), Fraction(0))
               for c in range(len(inst.v_bos))]
        if dot(vec, vec) > (eps * sum((dj for _, dj in keys), Fraction(0))) ** 2:
            return False
    return True


def _on_grid(x: float, up: bool = False) -> Fraction:
    scale = 1 << GRID_BITS
    return Fraction(math.ceil(x * scale) if up else round(x * scale), scale)


def round_down_bound(x: Fraction) -> Fraction:
    """``x`` rounded down to the bound grid (kept exact if that would make it 0)."""
    scale = 1 << BOUND_BITS
    down = Fraction(math.floor(x * scale), scale)
    return down if down > 0 else x


def rationalise(task: TriggerTask, inst: ExactInstance, block: Block, target: tuple[int, ...],
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
    proved = proved_bound(inst, tgt, prefixes, zs, ws)
    if proved is None:
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


def ray_entry(task: TriggerTask, inst: ExactInstance, block: Block, target: tuple[int, ...],
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
    if not ray_holds(inst, tgt, direction):
        return None
    return {"target": list(tgt),
            "direction": [[b, j, format_rational(v)] for (b, j), v in direction.items()]}


def single_key_ray(task: TriggerTask, inst: ExactInstance, target: tuple[int, ...]) -> dict | None:
    """The simplest ray: one key of the target whose value is within eps of 0 (a null key)."""
    t = len(target)
    tgt = task.decode(target)
    if tgt[-1] == -1 and t >= 2:
        return None
    for j, b in enumerate(tgt, start=1):
        if not ray_holds(inst, tgt, {(b, j): Fraction(1)}):
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
