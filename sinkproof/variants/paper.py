"""The attention variants in the paper's setting: one head with fixed values, exact
constructions checked by the trusted ``paper-witness`` checker, and exact bounds.

Tokens ``x ∈ R^n``: coordinate 0 BOS, 1 the trigger, ``2..n-2`` content, ``n-1`` the
is-content bias channel; BOS is ``e_0``; the trigger carries content too.  Fixed values:
``W_O W_V = I - e_0 e_0^T`` (``v_BOS = 0``; every other value has trigger + bias = 1, so
BOS is the only zero-valued key and the null mass is the BOS mass plus a map's null slot).
A head scores ``s_ik = x_i^T A x_k`` (``W_Q = A^T``, ``W_K = I``); there are no positions.

Constructions (``A`` built from the BOS, trigger and bias coordinates, level ``L``):

- ``softmax``, ``sparsemax`` (``L = 1``), ``entmax15`` (``L = 2``): content queries score
  ``+L`` on BOS, the trigger query ``-L`` (sparsemax and entmax-1.5: exact zero error);
- ``sink_logit``, ``softmax1`` (``b = 0``): content queries ``-L`` on every key (the slot
  takes the mass), the trigger query ``+L`` on every non-BOS key;
- ``relu_length``: the paper's (P3) head, the trigger query ``1`` on every non-BOS key;
- ``gated_softmax``: the trigger query ``-L`` on BOS, gate ``σ(L (trigger - bias))``.

``relu`` and ``sigmoid`` have none: their weight of a key depends on the query and key
tokens only, and the trigger's weight on itself must be ``1/j`` at ``j = 2`` and at
``j = L - 1`` (:func:`position_free_error_bound`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mpmath import iv

from ..attention import MAPS
from ..certformat import format_rational
from ..checker import paperwitness
from ..constructions import (
    PAPER_VARIANT_LEVEL,
    POSITION_FREE,
    paper_variant_head,
    paper_variant_solution,
    position_free_error_bound,
)
from ..convex.certfile import envelope
from ..tasks.paper import BOS, PaperTask
from .constructions import Construction
from .verify import ErrorBound

__all__ = ["DEFAULT_PAPER_LEVEL", "POSITION_FREE", "PRICE_MAPS", "PaperCheck", "PaperConstruction",
           "default_paper_task", "paper_construction", "paper_norm_lower_bound",
           "paper_norm_price_formula",
           "position_free_error_bound", "verify_paper_construction"]

DEFAULT_PAPER_LEVEL = PAPER_VARIANT_LEVEL


def default_paper_task(quick: bool = False) -> PaperTask:
    """``n = 4`` (one content coordinate), content ``{-1, 1}``, ``L = 5`` (``--quick``:
    ``L = 4``): every trigger position ``2..L-1`` and rows after the trigger."""
    return PaperTask(n=4, L=4 if quick else 5, content=[[-1.0], [1.0]])


@dataclass(frozen=True)
class PaperConstruction(Construction):
    """One fixed-value head of map ``kind`` on the paper's task (``task`` a
    :class:`~sinkproof.tasks.PaperTask`): exact ``A`` ``(n, n)``, map parameters, and for
    a gated map the gate ``(w, c)``; ``level`` is its ``L``; ``norm`` as in our setting."""

    def model(self) -> Any:
        """The head as a paper stack (``W_Q = A^T``, ``W_K = I``, fixed values)."""
        return paper_variant_solution(self.task, self.kind, self.level)

    def weights(self) -> dict[str, Any]:
        """``W_Q, W_K, W_V, W_O`` (one layer, one head) as exact nested lists."""
        n = self.task.n
        eye = [[Fraction(int(i == k)) for k in range(n)] for i in range(n)]
        drop = [[Fraction(int(i == k and i != BOS)) for k in range(n)] for i in range(n)]
        AT = [[self.A[k][i] for k in range(n)] for i in range(n)]
        return {"W_Q": [[AT]], "W_K": [[eye]], "W_V": [[drop]], "W_O": [eye]}

    def witness(self, max_error: Fraction, max_bos: Fraction, measure: str) -> dict[str, Any]:
        """The head as a ``paper-witness`` document: error ``<= max_error`` on the family
        and BOS ``measure`` ``<= max_bos`` in the head at every non-trigger position."""
        task = self.task
        vectors = [[format_rational(Fraction(float(v))) for v in c] for c in task.content]
        instance = {"task": task.describe(), "content_vectors": vectors}
        what = "BOS share" if measure == "share" else "BOS weight"
        claim = {"statement": f"one fixed-value {self.kind} head (L={self.level}) with error "
                              f"<= {format_rational(max_error)} and {what} <= "
                              f"{format_rational(max_bos)} at every non-trigger position",
                 "model_class": {"kind": self.kind, "heads": 1, "layers": 1,
                                 "residual": False, "values": "fixed"},
                 "max_error": format_rational(max_error),
                 "max_bos_mass": format_rational(max_bos), "where": "nontrigger",
                 "bos_measure": measure}
        q = format_rational
        data: dict[str, Any] = {k: [[[[q(x) for x in row] for row in M] for M in layer]
                                    for layer in v] if k != "W_O" else
                                [[[q(x) for x in row] for row in M] for M in v]
                                for k, v in self.weights().items()}
        if self.params:
            data["map_params"] = [[[q(x) for x in self.params]]]
        if self.gate_w is not None:
            data["gate_w"] = [[[q(x) for x in self.gate_w]]]
            data["gate_c"] = [[q(self.gate_c)]]
        return envelope(paperwitness.KIND, instance, claim, data)


def paper_construction(task: PaperTask, kind: str, L: Any = None) -> PaperConstruction:
    """The paper-setting head of map ``kind`` at level ``L`` (module docstring;
    :func:`sinkproof.constructions.paper_variant_head`)."""
    if kind not in MAPS:
        raise ValueError(f"unknown attention map {kind!r}; expected one of {', '.join(MAPS)}")
    if kind in POSITION_FREE:
        raise ValueError(f"no {kind} head is accurate in the paper's setting (its weights do "
                         "not see the position): see position_free_error_bound")
    h = paper_variant_head(task, kind, L)
    return PaperConstruction(task, kind, h["level"], tuple(tuple(r) for r in h["A"]),
                             tuple(h["params"]),
                             None if h["gate_w"] is None else tuple(h["gate_w"]), h["gate_c"])


@dataclass(frozen=True)
class PaperCheck(ErrorBound):
    """What the trusted checker measured on a construction over the whole family:
    upper bounds on the error², the BOS weight and the BOS share at non-trigger
    positions; ``exact``: the error² is the exact value (rational outputs)."""

    kind: str
    level: Fraction
    prefixes: int
    exact: bool
    error_sq_hi: Fraction
    bos_hi: Fraction
    share_hi: Fraction


def verify_paper_construction(con: PaperConstruction) -> PaperCheck:
    """Run the trusted checker's measurement on ``con`` (BOS weight, then BOS share)."""
    figs = [paperwitness.measure(paperwitness.read_witness(
        con.witness(Fraction(0), Fraction(0), m))) for m in ("weight", "share")]
    return PaperCheck(con.kind, con.level, figs[0].n_prefixes, figs[0].exact,
                      figs[0].error_sq, figs[0].bos, figs[1].bos)


PRICE_MAPS = ("softmax", "sink_logit", "softmax1", "gated_softmax")
_FORMULA = {
    "softmax": "||A|| >= (l(e') + m(e)) / (|a-T| |a-e0|)",
    "sink_logit": "||A|| >= (l(e') - log 2 + m(e)) / (|a-T| |a-e0|)",
    "softmax1": "||A|| >= (l(e') - log 2 + m(e)) / (|a-T| |a-e0|)",
    "gated_softmax": "max(||A||,||w||) >= (l(sqrt e') + m(e)) / (|a-T| |a-e0|)",
}


def paper_norm_price_formula(kind: str) -> str:
    """The bound of :func:`paper_norm_lower_bound` in words."""
    return _FORMULA[kind]


def _ivq(x: Fraction) -> Any:
    return iv.mpf(x.numerator) / iv.mpf(x.denominator)


def paper_norm_lower_bound(task: PaperTask, kind: str, eps: Any) -> float | None:
    """A certified lower bound on the norm of every fixed-value ``kind`` head with error
    ``<= eps`` at position 1 of ``(BOS, a)`` and position 2 of ``(BOS, a, T)``, ``a`` a
    content token and ``T`` the trigger carrying its content, maximised over ``a``.

    Write ``e' = ε/||a||``, ``l(x) = log((1-x)/x)``, ``m(ε) = log((1-2ε)/(4ε))``.  At
    ``(BOS, a)`` the weight of ``a`` is ``<= e'``; at ``(BOS, a, T)`` (target ``(a+T)/2``)
    the bias and trigger coordinates put ``α_1, α_2`` within ``ε`` of ``1/2``, so BOS (and
    a slot) weigh ``<= 4ε/(1-2ε)`` of ``a``.  For softmax the two log-odds add to
    ``(a - T)^T A (e_0 - a) <= ||A|| ||a - T|| ||a - e_0||``; a slot ``b`` (sink logit,
    softmax1) costs ``log 2`` (BOS or the slot outweighs ``a`` by half the odds; the slot
    case is bounded by ``||a|| < ||a - e_0||``); a gate (``g(a) α_1 <= e'``: the gate or the
    weight is ``<= sqrt e'``, and ``g(T) >= 1 - 2ε``) gives the ``sqrt e'`` form with the
    gate's ``||w|| ||a - T||`` (``||a - e_0|| > 1``).  Interval arithmetic, rounded down;
    ``None`` when vacuous.
    """
    if kind not in PRICE_MAPS:
        raise ValueError(f"no paper norm price bound for {kind!r}; maps: {', '.join(PRICE_MAPS)}")
    e = Fraction(eps)
    if not 0 < e < Fraction(1, 6):
        return None
    best: float | None = None
    saved, iv.prec = iv.prec, 120
    try:
        for c in task.content:
            csq = sum((Fraction(float(v)) ** 2 for v in c), Fraction(0))
            a_norm = iv.sqrt(_ivq(csq + 1))
            a_e0 = iv.sqrt(_ivq(csq + 2))
            a_T = iv.sqrt(iv.mpf(2))
            ep = _ivq(e) / a_norm
            if kind == "gated_softmax":
                ep = iv.sqrt(ep)
            if ep.b >= 0.5:
                continue
            num = iv.log((1 - ep) / ep) + iv.log((1 - 2 * _ivq(e)) / (4 * _ivq(e)))
            if kind in ("sink_logit", "softmax1"):
                num = num - iv.log(2)
            bound = num / (a_T * a_e0)
            low = float(bound.a)
            if low > 0 and (best is None or low > best):
                best = math.nextafter(low, -math.inf)
    finally:
        iv.prec = saved
    return best
