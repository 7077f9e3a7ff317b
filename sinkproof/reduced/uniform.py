"""(P1) over continuous content: bounds for every content vector of ``[-1, 1]^(n-3)``.

The hypothesis of (P1) holds at every sequence with contents in the box; in particular
at every sequence whose contents are drawn from any ``m`` vectors of the box.  The
program is the paper task's over ``m`` *symbols* (distinct content vectors standing for
arbitrary ones), on the value coordinates BOS, trigger and bias only: the targets'
entries there are content-free (0, ``1/t``, ``(t-1)/t``), so multipliers that vanish on
the content coordinates prove an inequality in which no content value appears.  Any
assignment ``σ`` of box vectors to the symbols (repeats allowed) then carries a model
accurate on the continuous family to a feasible point of the program, and a target whose
tokens carry pairwise distinct symbols stands for every sequence with its trigger
pattern (depth ``t``, trigger place ``i`` or none), whatever the contents.

This is the theorem "content-uniform bound" of ``docs/theory.md``; the trusted checker
verifies the three facts it needs (multipliers zero on content, distinct target symbols,
symbols in the box) besides the trees.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from .._validate import as_int
from ..bnb.dual import certificate_format
from ..exact_numbers import error_level
from ..tasks.paper import PaperTask
from ..work import refuse_beyond
from .subfamily import ReducedResult, multiset_subfamily, run_trees

UNIFORM_MAX_CLASSES = 20_000
"""Default limit on the sub-family's prefixes (its SOCP has one cone per prefix)."""


def symbol_task(n: int, L: int, m: int) -> PaperTask:
    """The paper task over ``m`` distinct symbols of the box: ``c_i = s_i·(1, ..., 1)`` with
    ``s_i`` the ``m`` points of ``linspace(-1, 1, m)`` (any distinct vectors would do)."""
    m = as_int("m", m, minimum=1)
    axis = np.linspace(-1.0, 1.0, m) if m > 1 else np.zeros(1)
    return PaperTask(n=n, L=L, content=axis[:, None] * np.ones((1, n - 3)))


def pattern_targets(L: int, depths: Any = None) -> list[tuple[int, ...]]:
    """One target per trigger pattern of a non-trigger position: depth ``t`` and the
    trigger at ``i ∈ 2..t-1`` or none (``t <= L-2``), its tokens with distinct symbols
    (content ``0, 1, ...`` in order, the trigger carrying the next): codes of
    :func:`symbol_task` with ``m = L - 1`` symbols."""
    m = L - 1
    out = []
    for t in range(1, L) if depths is None else depths:
        if t <= L - 2:
            out.append(tuple(range(t)))
        for i in range(2, t):
            row = list(range(t - 1))
            out.append((*row[:i - 1], m + t - 1, *row[i - 1:]))
    return out


def prove_uniform(n: int = 16, L: int = 5, eps: Any = "1/20", *,
                  depths: Any = None, targets: Any = None, min_bos_mass: Any = None,
                  max_nodes: int = 60, time_limit: float = 60.0, budget: float | None = None,
                  progress: bool | None = None, max_work: int | None = None,
                  save: str | Path | None = None) -> ReducedResult:
    """Certified least BOS mass, at every non-trigger position of depth in ``depths``
    (default: all ``1..L-1``) of every sequence with contents anywhere in
    ``[-1, 1]^(n-3)``, of every one-head softmax model (learned values) with error
    ``<= eps`` on the continuous family (``targets``: some of :func:`pattern_targets`
    instead).  The sub-family is every (query, multiset) class
    over ``L - 1`` symbols (refused beyond ``max_work`` prefixes, default
    :data:`UNIFORM_MAX_CLASSES`); ``save``: as in :func:`prove_subfamily`."""
    task = symbol_task(n, L, L - 1)
    refuse_beyond("sub-family prefixes over L-1 symbols", task.n_prefix_classes(), max_work,
                  UNIFORM_MAX_CLASSES)
    rows = multiset_subfamily(task, max_work=UNIFORM_MAX_CLASSES if max_work is None
                              else max_work)
    targets = (pattern_targets(L, depths) if targets is None
               else [tuple(int(c) for c in t) for t in targets])
    rows = list(dict.fromkeys([*rows, *targets]))
    keep = [0, 1, n - 1]  # BOS, trigger, bias: the content-free coordinates
    describe = {**PaperTask(n=n, L=L).describe(), "content": "uniform"}
    inst, _, _ = certificate_format(task, error_level(eps, "eps", positive=True), "learned")
    inst = {**inst, "task": describe}
    return run_trees(task, eps, rows, targets, domain="box", keep=keep, instance=inst,
                     min_bos_mass=min_bos_mass, max_nodes=max_nodes, time_limit=time_limit,
                     budget=budget, progress=progress, max_work=None, save=save)


def n_targets(L: int) -> int:
    """How many trigger patterns :func:`pattern_targets` lists: ``L-2`` without a trigger
    and ``Σ_{t=3}^{L-1} (t-2)`` with one."""
    return (L - 2) + math.comb(L - 2, 2)
