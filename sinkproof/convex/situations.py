"""Theorem 3 for a batch of *situations*: token sets whose value hull bounds the BOS mass.

For each set ``S`` the result is either a certified bound — an integer direction
``w`` and a rational ``d <= dist(0, conv{v_x : x ∈ S})`` — or an exact convex
combination of the values that equals ``0`` (then Theorem 3 gives no bound), or
"undecided" when neither could be made exact (then nothing is claimed).
Cost: one batched QP per set size, and zero hulls are inherited by supersets
(``Z ⊆ S`` and ``0 ∈ conv Z`` imply ``0 ∈ conv S``), so only minimal ones are solved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.optimize import linprog

from ..certformat import TRIGGER, format_rational
from ..errors import Interrupted
from ..numerics import stable_norm
from ..progress import Progress
from .minnorm import min_norm_points
from .rational import certified_distance, floor_to, integer_direction, solve_exact
from .values import ValueTable

ZERO_TOLERANCE = 1e-7
"""Relative float distance below which a hull is first tried for an exact zero combination."""

Tokens = tuple[int, ...]


@dataclass(frozen=True)
class Situation:
    """Theorem 3 on the token set ``tokens``: ``bound`` (exact, or None), and why.

    ``distance``: the solver's float ``dist(0, hull)``; ``d``, ``w``: the certified
    rational distance and integer direction; ``zero_combination``: exact convex
    weights of the values summing to 0 (aligned with ``tokens``); ``reason``:
    text for "no bound".
    """

    tokens: Tokens
    distance: float
    bound: Fraction | None
    d: Fraction | None = None
    w: list[Fraction] | None = None
    zero_combination: list[Fraction] | None = None
    reason: str = ""

    def entry(self) -> dict[str, Any]:
        """The certificate entry for this situation (see docs/certificates.md)."""
        out: dict[str, Any] = {"tokens": list(self.tokens)}
        if self.bound is not None:
            out["w"] = [format_rational(x) for x in self.w]
            out["d"] = format_rational(self.d)
            out["bound"] = format_rational(self.bound)
        elif self.zero_combination is not None:
            out["zero_combination"] = [format_rational(x) for x in self.zero_combination]
        else:
            out["no_bound"] = self.reason
        return out


def token_label(code: int) -> str:
    return "TRIG" if code == TRIGGER else f"c{code}"


def _exact_zero(values: ValueTable, tokens: Tokens) -> list[Fraction] | None:
    """Exact convex weights with ``Σ λ_x v_x = 0``, from a vertex of the LP (HiGHS simplex)."""
    V = np.array([values.floats[c] for c in tokens])
    A = np.vstack([V.T, np.ones(len(tokens))])
    b = np.concatenate([np.zeros(V.shape[1]), [1.0]])
    res = linprog(np.zeros(len(tokens)), A_eq=A, b_eq=b, bounds=(0, None), method="highs-ds")
    if res.status != 0:
        return None
    support = [i for i, x in enumerate(res.x) if x > 1e-9]
    columns = [[*values.exact[tokens[i]], Fraction(1)] for i in support]
    rhs = [Fraction(0)] * V.shape[1] + [Fraction(1)]
    lam = solve_exact(columns, rhs)
    if lam is None or any(x < 0 for x in lam):
        return None
    full = [Fraction(0)] * len(tokens)
    for i, x in zip(support, lam):
        full[i] = x
    return full


def _bounded(values: ValueTable, tokens: Tokens, eps: Fraction, distance: float,
             directions: Sequence[np.ndarray]) -> Situation | None:
    """Certify with the best of the candidate directions (the dual, then the primal point)."""
    best: tuple[Fraction, list[Fraction]] | None = None
    for direction in directions:
        w = integer_direction(direction)
        d = None if w is None else certified_distance(w, [values.exact[c] for c in tokens])
        if d is not None and (best is None or d > best[0]):
            best = (d, w)
    if best is None:
        return None
    d, w = best
    return Situation(tokens, distance, floor_to(1 - values.factor * eps / d), d=d, w=w)


def _zero(values: ValueTable, tokens: Tokens, distance: float,
          lam: list[Fraction]) -> Situation:
    parts = [f"{format_rational(x)}·v({token_label(c)})" for c, x in zip(tokens, lam) if x]
    why = f"0 = {' + '.join(parts)} lies in the hull of the values"
    return Situation(tokens, distance, None, zero_combination=lam, reason=why)


def _inherit(tokens: Tokens, zero_sets: list[tuple[Tokens, list[Fraction]]],
             values: ValueTable) -> Situation | None:
    for sub, lam in zero_sets:
        if set(sub) <= set(tokens):
            weights = dict(zip(sub, lam))
            return _zero(values, tokens, 0.0, [weights.get(c, Fraction(0)) for c in tokens])
    for c in tokens:
        if all(x == 0 for x in values.exact[c]):
            return _zero(values, tokens, 0.0, [Fraction(int(x == c)) for x in tokens])
    return None


def solve_situations(values: ValueTable, situations: Sequence[Tokens],
                     eps: Fraction) -> dict[Tokens, Situation]:
    """Certify Theorem 3 on every token set in ``situations`` (sorted tuples of codes).
    Ctrl-C raises :class:`~sinkproof.errors.Interrupted` with the situations settled so far."""
    result: dict[Tokens, Situation] = {}
    zero_sets: list[tuple[Tokens, list[Fraction]]] = []
    by_size: dict[int, list[Tokens]] = {}
    for s in dict.fromkeys(situations):
        by_size.setdefault(len(s), []).append(s)
    try:
        with Progress(len(situations), "Theorem 3 situations", threshold=2000) as bar:
            for size in sorted(by_size):
                _solve_level(values, by_size[size], eps, result, zero_sets)
                bar.update(len(by_size[size]), note=f"size {size}")
    except KeyboardInterrupt:
        planned = sum(len(level) for level in by_size.values())
        raise Interrupted(dict(result), f"{len(result)} of {planned} situations settled"
                          ) from None
    return result


def _solve_level(values: ValueTable, level: list[Tokens], eps: Fraction,
                 result: dict[Tokens, Situation],
                 zero_sets: list[tuple[Tokens, list[Fraction]]]) -> None:
    """Situations of one size: inherit zero hulls, then one batched QP for the rest."""
    batch = []
    for tokens in level:
        inherited = _inherit(tokens, zero_sets, values)
        if inherited is not None:
            result[tokens] = inherited
        else:
            batch.append(tokens)
    if not batch:
        return
    sols = min_norm_points([np.array([values.floats[c] for c in s]) for s in batch])
    for tokens, sol in zip(batch, sols):
        scale = max(float(stable_norm(values.floats[c])) for c in tokens)
        result[tokens] = _decide(values, tokens, eps, sol.distance,
                                 [sol.direction, sol.point],
                                 sol.distance <= ZERO_TOLERANCE * scale, zero_sets)


def _decide(values: ValueTable, tokens: Tokens, eps: Fraction, distance: float,
            directions: Sequence[np.ndarray], near_zero: bool,
            zero_sets: list[tuple[Tokens, list[Fraction]]]) -> Situation:
    attempts = ("zero", "bound") if near_zero else ("bound", "zero")
    for attempt in attempts:
        if attempt == "bound":
            found = _bounded(values, tokens, eps, distance, directions)
            if found is not None:
                return found
        else:
            lam = _exact_zero(values, tokens)
            if lam is not None:
                zero_sets.append((tokens, lam))
                return _zero(values, tokens, distance, lam)
    return Situation(tokens, distance, None,
                     reason=f"undecided: float distance {distance:.3g}, neither a separating "
                            "direction nor an exact zero combination could be certified")
