"""One position's (P1) bound, named as the claim interface names it: the content vectors of
the tokens after BOS (``[conclusion] at = [[-1.0], ...]``), ``trigger = K`` (1-based,
optional) the one that is the trigger; the bound is at the last of them."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import as_int, as_real_array
from ..tasks.paper import PaperTask
from .subfamily import ReducedResult, prove_subfamily
from .uniform import pattern_targets, prove_uniform


def target_codes(task: PaperTask, at: Any, trigger: int | None = None) -> tuple[int, ...]:
    """The token codes of the prefix whose tokens carry the content vectors ``at``
    (:meth:`sinkproof.PaperTask.prefix_codes`)."""
    return task.prefix_codes(at, trigger)


def prove_position(task: PaperTask, eps: Any, at: Any, trigger: int | None = None,
                   **options: Any) -> ReducedResult:
    """The certified least BOS weight at the last token of ``at`` (the content vectors of
    the tokens after BOS; ``trigger``: the 1-based index of the trigger among them, which
    must come before the last).  Finite content: that prefix's bound over the whole
    family (:func:`~sinkproof.reduced.prove_subfamily`); ``content = "uniform"``: the
    bound for every sequence with that trigger pattern, whatever its contents in the box
    (:func:`~sinkproof.reduced.prove_uniform`; the vectors of ``at`` then only fix the
    length, and must lie in ``[-1, 1]``)."""
    rows = as_real_array("at", at, ndim=2)
    t = rows.shape[0]
    if trigger is not None:
        trigger = as_int("trigger", trigger, minimum=2)
        if trigger >= t:
            raise ValueError(f"trigger = {trigger}: the bound is at the last token ({t}), "
                             "a non-trigger position, so the trigger must come before it")
    if task.finite:
        return prove_subfamily(task, eps, targets=[target_codes(task, rows, trigger)],
                               **options)
    if rows.shape[1] != task.content_dim or np.any(np.abs(rows) > 1):
        raise ValueError(f"at: contents must be {task.content_dim} numbers in [-1, 1] each")
    if t > task.L - (1 if trigger else 2):
        raise ValueError(f"at: {t} tokens do not fit the family at L = {task.L}")
    m = task.L - 1  # the symbols of prove_uniform's patterns
    want = [p for p in pattern_targets(task.L, [t])
            if (trigger is None) == all(c < m for c in p)
            and (trigger is None or p[trigger - 1] >= m)]
    return prove_uniform(task.n, task.L, eps, targets=want, **options)
