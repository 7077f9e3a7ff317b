"""Theorem 3 (the hull bound): at a non-trigger position ``t`` of any sequence, error ``<= ε``
at positions 0 and ``t`` forces ``α_{t0} >= 1 - 2ε/d_t`` (``1 - ε/d_t`` with ``U_fix``),
``d_t = dist(0, conv{v_{x_j} : 1 <= j <= t})``.

The proof uses only that the weights lie on the simplex, so it covers every normalised
attention.  ``d_t`` is computed exactly here (:func:`sinkproof.symbolic.bounds.hull_distance`);
the convex layer computes it for a whole family with a separating-direction certificate.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

import numpy as np
import sympy

from ..model import AttentionModel
from ..modelclass import ModelClass
from ..symbolic.bounds import EPS, HULL, Formula, hull_distance
from ..task import TRIG, TriggerTask
from ..tasks.protocol import Task, require
from .base import ONE_SIMPLEX_HEAD, ONE_SIMPLEX_HEAD_FIXED, Target, Theorem, values_of
from .instance import BosBound, InstantiatedBound

TITLE = "Any sequence: the hull bound"
STATEMENT = (
    "At a non-trigger position t of any X, if the error is <= ε at position 0 and "
    "at t, then α_{t0} >= 1 - 2ε/d_t with d_t = dist(0, conv{v_{x_j} : 1 <= j <= "
    "t}) (1 - ε/d_t with fixed values).")
PROOF = (
    "f_t = α_0 v_b + (1-α_0) z with z in the hull, ‖z‖ >= d_t; the target is 0, so "
    "(1-α_0) d_t <= ‖f_t‖ + α_0‖v_b‖ <= 2ε (ε with v_b = 0). ∎ The argument uses "
    "only that the weights lie on the simplex.")

THEOREM3_LEARNED = Formula("theorem3_learned", 1 - 2 * EPS / HULL, (EPS, HULL),
                           "α_{t0} >= 1 - 2ε/d_t (learned values)", ("eps", "hull_distance"))
THEOREM3_FIXED = Formula("theorem3_fixed", 1 - EPS / HULL, (EPS, HULL),
                         "α_{t0} >= 1 - ε/d_t (fixed values)", ("eps", "hull_distance"))


def sink_bound(eps: float | np.ndarray, distance: float | np.ndarray) -> np.ndarray:
    """``1 - 2ε/d`` in floating point: the least BOS mass of a learned-value head (Theorems
    1 and 3; ``d`` is ``‖v_c‖`` or ``d_t``); ``-inf`` (no bound) where ``d = 0``."""
    eps, d = np.asarray(eps, dtype=float), np.asarray(distance, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = THEOREM3_LEARNED(eps=eps, hull_distance=d)
    return np.where(d > 0, value, -np.inf)


def allowed_nonbos(eps: np.ndarray, distance: np.ndarray) -> np.ndarray:
    """The largest non-BOS mass ``2ε/d`` the bound allows (``inf`` where ``d = 0``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(distance > 0, 2.0 * eps / np.where(distance > 0, distance, 1.0),
                        np.inf)


def default_positions(task: TriggerTask) -> list[Target]:
    """One representative per set of distinct tokens seen, with and without a trigger first."""
    if task.k > 8:
        raise ValueError(f"k={task.k} content vectors: name the positions (positions=...)")
    out = []
    for size in range(1, min(task.k, task.T) + 1):
        for subset in combinations(range(task.k), size):
            out.append((subset, size))
            if size < task.T:
                out.append(((TRIG, *subset), size + 1))
    return out


def instantiate(task: Task, eps: sympy.Expr, values: str = "fixed",
                model: AttentionModel | None = None,
                positions: Iterable[Target] | None = None) -> InstantiatedBound:
    """The bound at each ``(sequence, t)`` of ``positions`` (default: one per token set),
    for ``U_fix`` or the value map of ``model``; ``extend`` bounds any other position.

    On a task that states a floor ``d`` under every hull of fixed values
    (:meth:`~sinkproof.tasks.protocol.Task.fixed_value_floor`), with fixed values, the
    bound ``1 - ε/d`` holds at every non-trigger position at once (``everywhere``): on the
    paper's task ``d = 1/√2``, so ``α_t0 >= 1 - √2 ε``."""
    floor = task.fixed_value_floor() if isinstance(task, Task) else None
    if floor is not None and model is None and values == "fixed":
        return _everywhere(task, eps, floor)
    require(task, "finite", "Theorem 3 by token sets (a task without a fixed-value floor)")
    require(task, "fixed_length", "Theorem 3 by token sets (sequences X of every length)",
            value=False)
    vals, cls, value_map = values_of(task, values, model,
                                     (ONE_SIMPLEX_HEAD, ONE_SIMPLEX_HEAD_FIXED))
    fixed = cls.values == "fixed"
    formula = THEOREM3_FIXED if fixed else THEOREM3_LEARNED

    def at(seq: tuple[int, ...], t: int) -> BosBound | tuple[Target, str]:
        codes = [int(x) for x in task.encode(seq)]
        if not 1 <= t <= len(codes):
            raise ValueError(f"position {t} is outside the sequence {list(seq)}")
        if codes[t - 1] == task.trig_code:
            return ((seq, t), "a trigger position: Theorem 3 is about non-trigger positions")
        hull = hull_distance([vals[x] for x in codes[:t]])
        if hull.d_squared == 0:
            return ((seq, t), "0 lies in the hull of the values seen so far: no bound")
        bound = formula.exact(eps=eps, hull_distance=hull.exact)
        return BosBound(((seq, t),), bound, ((seq, 0), (seq, t)),
                        f"d_t = {sympy.sstr(hull.exact)}")

    items, none = [], []
    for seq, t in (default_positions(task) if positions is None else positions):
        got = at(tuple(int(x) for x in seq), int(t))
        (items if isinstance(got, BosBound) else none).append(got)

    def extend(seq: tuple[int, ...], t: int) -> BosBound | None:
        got = at(seq, t)
        return got if isinstance(got, BosBound) else None

    return InstantiatedBound("theorem3", task, eps, cls, tuple(items), tuple(none),
                             extend=extend, value_map=value_map)


def _everywhere(task: Task, eps: sympy.Expr, floor: sympy.Expr) -> InstantiatedBound:
    """``α_t0 >= 1 - ε/d`` at every non-trigger position of every sequence, ``d`` the task's
    fixed-value floor: the hull of any token set's values is at distance ``>= d``."""
    require(task, "residual_targets", "Theorem 3 (the target at a non-trigger position is 0)",
            value=False)
    item = BosBound((), THEOREM3_FIXED.exact(eps=eps, hull_distance=floor), (),
                    f"d >= {_root_text(floor)}")
    return InstantiatedBound("theorem3", task, eps, ONE_SIMPLEX_HEAD_FIXED, (),
                             everywhere=item)


def _root_text(x: sympy.Expr) -> str:
    """``1/√2`` for ``sqrt(2)/2``: a reciprocal square root as a reader writes it."""
    inverse_square = sympy.nsimplify(1 / x**2)
    if inverse_square.is_Rational and inverse_square > 0:
        return f"1/√{sympy.sstr(inverse_square)}"
    return sympy.sstr(x)


def bound(task: TriggerTask, eps: sympy.Expr, model_class: ModelClass,
          positions: list[Target] | None) -> InstantiatedBound:
    """The calling convention: the bound at the given non-trigger positions."""
    return instantiate(task, eps, values=model_class.values, positions=positions)


THEOREM = Theorem(
    "theorem3", 3, TITLE, STATEMENT, PROOF, "bos_lower_bound", (ONE_SIMPLEX_HEAD,),
    "position 0 and the (non-trigger) position t of X",
    ("x_t is not the trigger", "d_t > 0"), ("theorem3_learned", "theorem3_fixed"),
    instantiate, bound, value_map_dependent=True, token_set_bound=True, task_needs=())
