"""The engine in the paper's setting: one softmax head, learned ``W_Q, W_K, W_V, W_O``.

The adapter from the paper's task (finite content set, fixed length ``L``, exactly one
trigger at ``j ∈ 2..L-1``, whole-vector targets with the trigger included, no positional
encoding) to the engine's relaxation:

- **Logits.**  ``x_t^T W_Q^T W_K x_k`` depends only on the (query token, key token) pair,
  so one variable ``u_(q,k) = exp(s(q, k) - s(q, BOS)) >= 0`` serves every position pair
  with those tokens, in every sequence: Theorem 6's logit sharing with classes of token
  pairs (the position features are empty).  Letting ``u`` be *any* non-negative
  function of the pair drops only the rank and bilinear structure of ``W_Q^T W_K``:
  every model gives a feasible ``u``, so the relaxation is sound.
- **Values.**  On a finite content set there are ``2m + 1`` distinct tokens (BOS, ``m``
  content tokens, ``m`` triggers each carrying a content vector), and any linear value
  map ``W_O W_V`` gives one vector ``v_x = W_O W_V x ∈ R^n`` per token.  Treating each
  token's vector as free is a sound over-approximation: a bound proved for free
  per-token values holds for every ``W_O W_V`` (it forgets only the linear relations
  among the tokens' values).
- **Targets.**  Each prefix ``x_1..x_t`` of the family gives the cone
  ``|| v_BOS + Σ_k u_(x_t,x_k) v_{x_k} - Z y_t || <= eps Z`` with the paper's whole-vector
  target ``y_t`` (the mean of tokens ``1..t`` at the trigger, trigger and bias channel
  included; 0 elsewhere), and position 0 gives ``|| v_BOS || <= eps``.
- **A priori value bounds.**  As in our setting, they come from the family itself and
  need no hypothesis: every non-trigger prefix has target 0, so its cone bounds the
  weighted values ``|| Σ_k u_k v_{x_k} || <= eps (Z + 1)`` of the tokens it attends to;
  these cones are part of every leaf's program, and the dual multipliers of a leaf use
  them to bound the values its box leaves open.  No norm bound on any parameter is
  assumed.

The tree, the leaf certificates and their rounding are the engine's
(:mod:`sinkproof.bnb.tree`, :mod:`sinkproof.bnb.dual`); the certificate kind is
``paper-bnb-learned-values``, re-checked by :mod:`sinkproof.checker.paperbnb`.
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Any

import numpy as np

from ..certformat import format_rational
from ..checker.paperbnb import KIND, PaperInstance
from ..convex.paperfamily import require_one_layer_finite
from ..errors import Interrupted
from ..exact_numbers import bos_mass, error_level
from ..tasks.paper import PaperTask
from .api import finish, grow_trees
from .box import ValueBox
from .relaxation import Relaxation, assemble
from .result import BnbResult, TargetOutcome


def paper_prefixes(task: PaperTask) -> list[tuple[int, ...]]:
    """Every prefix ``x_1..x_t`` (``1 <= t <= L-1``) of the family, as token codes
    (content ``i``, the trigger carrying ``c_i`` is ``m + i``), shortest first."""
    m, L = task.m, task.L
    level: list[tuple[int, ...]] = [()]
    out: list[tuple[int, ...]] = []
    for t in range(1, L):
        nxt = []
        for pre in level:
            has = any(c >= m for c in pre)
            if has or t <= L - 2:
                nxt.extend((*pre, c) for c in range(m))
            if not has and t >= 2:
                nxt.extend((*pre, m + c) for c in range(m))
        out.extend(nxt)
        level = nxt
    return out


def paper_targets(task: PaperTask, prefixes: list[tuple[int, ...]] | None = None
                  ) -> list[tuple[int, ...]]:
    """The non-trigger positions ``t >= 1`` of the family (prefixes ending in content),
    from ``prefixes`` (default: :func:`paper_prefixes`)."""
    rows = paper_prefixes(task) if prefixes is None else prefixes
    return [p for p in rows if p[-1] < task.m]


def paper_classes(prefix: tuple[int, ...]) -> dict[tuple, int]:
    """Class ``(query, (), key, ())`` -> multiplicity among the keys ``1..t``."""
    out: dict[tuple, int] = {}
    for tok in prefix:
        key = (prefix[-1], (), tok, ())
        out[key] = out.get(key, 0) + 1
    return out


def paper_relaxation(task: PaperTask, eps: Fraction, target: tuple[int, ...],
                     prefixes: list[tuple[int, ...]] | None = None) -> Relaxation:
    """The program of ``target`` over ``prefixes`` (default: the whole family)."""
    require_one_layer_finite(task, "the paper engine")
    rows = paper_prefixes(task) if prefixes is None else prefixes

    def target_of(prefix: tuple[int, ...]) -> np.ndarray:
        return np.array([float(x) for x in task.exact_prefix_target(prefix)])

    return assemble(task, eps, target, rows, paper_classes, target_of, task.n,
                    tuple(range(2 * task.m)))


def paper_instance(task: PaperTask, eps: Fraction) -> dict[str, Any]:
    """``instance`` of a ``paper-bnb-learned-values`` certificate (content as the exact
    rationals of the task's floats)."""
    vectors = [[format_rational(Fraction(float(v))) for v in c] for c in task.content]
    return {"task": task.describe(), "content_vectors": vectors, "values": "learned",
            "eps": format_rational(Fraction(eps)), "family": "paper"}


def _head(eps: Fraction) -> str:
    return f"paper setting, one softmax head, learned values, error <= {eps}"


def restrict_paper(result: BnbResult, outcomes: list[TargetOutcome]) -> BnbResult:
    """``result`` (of :func:`prove_paper`) cut down to ``outcomes``, certified targets of
    it: a ``"bounded"`` result whose certificate holds their trees only, verified by the
    trusted checker."""
    if not outcomes or any(o.certified is None for o in outcomes):
        raise ValueError("restrict_paper needs certified target outcomes")
    return finish(result.task, result.eps, "learned", None, outcomes, len(outcomes), False,
                  result.seconds, paper_instance(result.task, result.eps), KIND,
                  _head(result.eps))


def prove_paper(task: PaperTask, eps: Any, *, min_bos_mass: Any = None,
                targets: list[tuple[int, ...]] | None = None, some: bool = False,
                max_nodes: int = 200, time_limit: float = 120.0,
                budget: float | None = None, progress: bool | None = None,
                certify_misses: bool = True) -> BnbResult:
    """Bound the least BOS mass of every ``eps``-accurate one-head softmax model of the
    paper's setting (learned ``W_Q, W_K, W_V, W_O``) at each target prefix (default:
    every non-trigger position, shortest first).

    ``some=True``: stop at the first target certified at ``>= min_bos_mass`` (a proof of
    "at some non-trigger position").  The result is ``"proved"`` only with a
    ``paper-bnb-learned-values`` certificate that the trusted checker verified;
    ``max_nodes``, ``time_limit`` bound each tree and ``budget`` all of them with their
    exact certification (a tree the budget leaves uncertified proves nothing; its
    ``skipped`` says so); ``certify_misses=False`` leaves a tree that
    missed ``min_bos_mass`` uncertified (the claim route: it could not prove the claim).
    """
    require_one_layer_finite(task, "the paper engine")
    eps_q = error_level(eps, "eps", positive=True)
    goal_q = None if min_bos_mass is None else bos_mass(min_bos_mass, "min_bos_mass",
                                                         positive=True)
    if budget is not None and not budget > 0:
        raise ValueError(f"budget must be > 0 seconds, got {budget!r}")
    inst = paper_instance(task, eps_q)
    start = time.perf_counter()
    rows = paper_prefixes(task)  # the family once: the programs' rows and the targets
    wanted = paper_targets(task, rows) if targets is None else [tuple(int(c) for c in t)
                                                                  for t in targets]
    trusted = PaperInstance(inst)
    for t in wanted:  # the checker's own family test, before any work
        trusted.prefix(list(t), "target")
        if t[-1] >= task.m:
            raise ValueError(f"target {list(t)} ends at the trigger; the engine bounds "
                             "non-trigger positions")
    if not wanted:
        raise ValueError("no target positions")
    head = _head(eps_q)
    try:
        outcomes = grow_trees(wanted, lambda t: paper_relaxation(task, eps_q, t, rows),
                              ValueBox.free(list(range(2 * task.m)), task.n), "learned",
                              goal_q, some, max_nodes, time_limit, budget, progress,
                              instance=trusted, certify_misses=certify_misses)
    except Interrupted as exc:  # Ctrl-C outside a tree: what was certified, at once
        return finish(task, eps_q, "learned", goal_q, exc.partial, len(wanted),  # type: ignore
                      some, time.perf_counter() - start, inst, KIND, head, stopped=True)
    return finish(task, eps_q, "learned", goal_q, outcomes, len(wanted), some,
                  time.perf_counter() - start, inst, KIND, head)


__all__ = ["paper_classes", "paper_instance", "paper_prefixes", "paper_relaxation",
           "paper_targets", "prove_paper", "restrict_paper"]
