"""The pure-composition sink theorem: a stack of ``N`` layers of **one** head each, with no
residual connections, must sink in some layer at position 1 (the paper's multi-layer
statement (P2), with exact constants).

Setting: the fixed-length task of :class:`~sinkproof.tasks.paper.PaperTask` with its
one-layer targets (``0`` off the trigger, the mean of ``x_1..x_j`` at the trigger row
``j``), a finite content set, and models ``h^ℓ_t = M_ℓ Σ_k α^ℓ_tk h^{ℓ-1}_k`` (``h^0 = x``),
where ``M_ℓ`` is any linear map (the head's ``W_O W_V``, any widths) and each row
``α^ℓ_t`` is any point of the simplex over ``k <= t`` (softmax, sparsemax, entmax: the
scores are never used).

**Theorem.** Let ``a, b`` be content vectors of the set, ``τ`` a trigger token (any
content), ``2 <= j <= L-1``, and ``m_u = ((j-1) x(u) + x(τ)) / j`` the target at the
trigger row of ``S_u = (BOS, u^{j-1}, τ, ...)`` (``x(u)`` the content token ``(0,0,u,1)``).
If the error is ``<= ε`` at position 0, at position 1 of ``S_a, S_b`` and at position
``j`` of ``S_a, S_b``, and the ray gap ``g = g(m_a, m_b) > 2ε``, then for ``u = a`` or
``u = b``, at position 1 of ``S_u``::

    Π_ℓ (1 - α^ℓ_10) <= 2ε / g,   so   max_ℓ α^ℓ_10 >= 1 - (2ε/g)^{1/N}.

*Proof.* Products of row-stochastic lower-triangular matrices are row-stochastic, so the
output is ``f_t = P Σ_i β_ti x_i`` with ``P = M_N ⋯ M_1`` and ``β_t`` on the simplex; at
position 1, ``1 - β_10 = Π_ℓ α^ℓ_11 =: γ``.  Row 0: ``‖P x_0‖ <= ε``.  With
``η_u = ‖P x(u)‖`` and ``η = max(η_a, η_b)``: the trigger row of ``S_u`` holds only the
tokens ``x_0, x(u), x(τ)``, so ``f_j = β_jj P x(τ) + r`` with ``‖r‖ <= max(ε, η)``, and
``d(m_u, R_+ P x(τ)) <= ε + max(ε, η)`` for both ``u``: ``g <= ε + max(ε, η)``.  As
``g > 2ε``, ``η >= g - ε``.  At position 1 of ``S_u`` (``η_u = η``), ``‖γ P x(u)‖ <=
‖f_1‖ + (1 - γ)‖P x_0‖ <= ε + (1 - γ) ε``, so ``γ (η + ε) <= 2ε`` and ``γ <= 2ε/g``.  ∎

With several heads per layer the statement is false (heads cancel:
:func:`sinkproof.constructions.pure_pair_solution`), and with residual connections the
product form is lost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations
from typing import Any

import numpy as np
import sympy

from .._validate import as_int
from ..certformat import format_rational, paper_instance
from ..convex.certfile import envelope
from ..symbolic.bounds import exact_number, ray_gap
from ..tasks.paper import PaperTask
from ..tasks.protocol import require
from .instance import float_down

KIND = "paper-composition"
"""The certificate kind of one instance of the theorem (:meth:`CompositionItem.certificate`)."""

STATEMENT = (
    "In a pure composition of N softmax (or any simplex-normalised) attention layers with "
    "one head each and any linear value/output maps, error <= ε at position 0, at position "
    "1 of S_a, S_b and at the trigger position j of S_a = (BOS, a^{j-1}, τ), S_b = "
    "(BOS, b^{j-1}, τ) implies, for u = a or u = b, at position 1 of S_u: "
    "Π_ℓ (1 - α^ℓ_10) <= 2ε/g and max_ℓ α^ℓ_10 >= 1 - (2ε/g)^{1/N}, "
    "g = g(m_a, m_b) > 2ε the ray gap of the two trigger-row targets.")


@dataclass(frozen=True)
class CompositionItem:
    """One instance of the theorem: contents ``a, b`` (indices into the set), the trigger's
    content ``tau`` (index), the trigger position ``j``, the exact ``g²`` and the bounds."""

    a: int
    b: int
    tau: int
    j: int
    g_squared: Fraction
    eps: sympy.Expr
    layers: int

    @property
    def gap(self) -> sympy.Expr:
        """``g`` exactly."""
        return sympy.sqrt(sympy.Rational(self.g_squared.numerator, self.g_squared.denominator))

    @property
    def applies(self) -> bool:
        """``g > 2ε`` (decided exactly: ``g² > 4ε²`` with ``ε >= 0``)."""
        return bool(sympy.Rational(self.g_squared.numerator, self.g_squared.denominator)
                    > 4 * self.eps**2)

    @property
    def product_bound(self) -> sympy.Expr:
        """``2ε/g``: the largest ``Π_ℓ (1 - α^ℓ_10)`` the theorem allows."""
        return 2 * self.eps / self.gap

    @property
    def bound(self) -> sympy.Expr:
        """``1 - (2ε/g)^{1/N}``: some layer's BOS weight at position 1 is at least this."""
        return 1 - self.product_bound ** sympy.Rational(1, self.layers)

    @property
    def value(self) -> float:
        """:attr:`bound` as a float rounded down (0 when the theorem does not apply)."""
        return float_down(self.bound) if self.applies else 0.0

    def sequences(self, task: PaperTask) -> tuple[list[int], list[int]]:
        """Content indices of ``S_a, S_b`` after BOS (length ``L-1``; the trigger at ``j``
        carries content ``tau``; the tokens after it repeat ``u``)."""
        out = []
        for u in (self.a, self.b):
            idx = [u] * (task.L - 1)
            idx[self.j - 1] = self.tau
            out.append(idx)
        return out[0], out[1]

    def certified_bound(self, digits: int = 12) -> Fraction:
        """A rational ``b <= 1 - (2ε/g)^{1/N}`` with ``4ε² <= (1 - b)^{2N} g²`` exactly (the
        inequality the trusted checker verifies): :attr:`bound` rounded down to ``digits``
        decimals, lowered by one unit of the last decimal until the inequality holds."""
        if not self.applies:
            raise ValueError("the theorem does not apply: g <= 2ε")
        eps = Fraction(str(self.eps))
        b = Fraction(math.floor(sympy.N(self.bound, digits + 10) * 10**digits), 10**digits)
        while 4 * eps * eps > (1 - b) ** (2 * self.layers) * self.g_squared:
            b -= Fraction(1, 10**digits)
        return b

    def certificate(self, task: PaperTask, min_bound: Any = None) -> dict[str, Any]:
        """This instance as a ``paper-composition`` certificate (the trusted checker
        recomputes ``g²`` from the task's token vectors and checks the inequality);
        ``min_bound``: the bound to certify (default :meth:`certified_bound`)."""
        b = self.certified_bound() if min_bound is None else Fraction(str(min_bound))
        instance = {**paper_instance(task), "eps": format_rational(Fraction(str(self.eps))),
                    "layers": self.layers}
        claim = {"statement": (f"pure-composition theorem, {task!r}, {self.layers} layers, "
                               f"eps={instance['eps']}: some layer has BOS weight >= "
                               f"{format_rational(b)} at position 1 of (BOS, c{self.a}) or "
                               f"(BOS, c{self.b})"),
                 "min_bound": format_rational(b)}
        data = {"a": self.a, "b": self.b, "trigger": self.tau, "j": self.j}
        return envelope(KIND, instance, claim, data)

    def __repr__(self) -> str:
        return (f"max_ℓ α^ℓ_10 >= {sympy.sstr(self.bound)} ≈ {self.value:.6g} at position 1 of "
                f"(BOS, c{self.a}) or (BOS, c{self.b}) [τ = c{self.tau}, j = {self.j}, "
                f"g² = {self.g_squared}]")


def _targets(task: PaperTask, u: int, tau: int, j: int) -> tuple[Fraction, ...]:
    """``m_u = ((j-1) x(u) + x(τ)) / j`` exactly (the trigger-row target of ``S_u``)."""
    m = task.m
    xu, xt = task.token_features_exact(u), task.token_features_exact(m + tau)
    return tuple(((j - 1) * p + q) / j for p, q in zip(xu, xt))


def composition_items(task: PaperTask, eps: Any, layers: int) -> list[CompositionItem]:
    """Every instance of the theorem on ``task`` (a finite content set, one-layer targets):
    one per pair ``a < b``, trigger content ``tau`` and position ``j``, strongest first."""
    if not isinstance(task, PaperTask):
        raise TypeError(f"task must be a PaperTask, got {type(task).__name__}")
    require(task, "finite", "the composition theorem (a finite content set)")
    require(task, "residual_targets", "the composition theorem (pure composition)", value=False)
    layers = as_int("layers", layers, minimum=1)
    eps = exact_number(eps)
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    items = []
    for a, b in combinations(range(task.m), 2):
        for tau in range(task.m):
            for j in task.trigger_positions:
                gap = ray_gap(_targets(task, a, tau, j), _targets(task, b, tau, j))
                items.append(CompositionItem(a, b, tau, j, gap.g_squared, eps, layers))
    items.sort(key=lambda it: (-it.g_squared, it.a, it.b, it.tau, it.j))
    return items


def composition_bound(task: PaperTask, eps: Any, layers: int) -> CompositionItem | None:
    """The strongest instance (largest ray gap), or ``None`` when ``g <= 2ε`` for every one."""
    best = composition_items(task, eps, layers)
    return best[0] if best and best[0].applies else None


@dataclass(frozen=True)
class CompositionCheck:
    """The theorem held against one pure stack of single heads: the error at the needed
    positions, ``γ_u = Π_ℓ (1 - α^ℓ_10)`` at position 1 of ``S_a, S_b``, and whether the
    conclusion holds (``min(γ_a, γ_b) <= 2ε/g`` for the measured ``ε``)."""

    eps: float
    gamma: tuple[float, float]
    allowed: float
    applies: bool

    @property
    def holds(self) -> bool:
        return not self.applies or min(self.gamma) <= self.allowed * (1 + 1e-9)


def check_composition(model: Any, item: CompositionItem) -> CompositionCheck:
    """Measure the theorem's hypothesis and conclusion on ``model`` (a
    :class:`~sinkproof.stack.StackModel` without residual connections, one head per layer),
    in floating point: ``ε`` is the model's largest error at the positions the theorem names."""
    if model.residual or model.H != 1:
        raise ValueError("the composition theorem is about pure stacks of single heads")
    task = model.task
    errs, gammas = [], []
    for idx in item.sequences(task):
        x = task.sequence(item.j, np.asarray(idx))
        out, w = model.forward_rows(x)
        y = task.targets(x)
        err = np.linalg.norm(out - y, axis=-1)
        errs.append(max(err[0], err[1], err[item.j]))
        gammas.append(float(np.prod(1.0 - w[:, 0, 1, 0])))
    eps = float(max(errs))
    g = float(np.sqrt(float(item.g_squared)))
    return CompositionCheck(eps, (gammas[0], gammas[1]), 2 * eps / g, g > 2 * eps)


__all__ = ["KIND", "STATEMENT", "CompositionCheck", "CompositionItem", "check_composition",
           "composition_bound", "composition_items"]
