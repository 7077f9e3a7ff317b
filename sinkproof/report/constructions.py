"""Report section: Theorem 4's ReLU head and Theorem 5's softmax head, evaluated exhaustively."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..constructions import relu_solution, softmax_solution
from ..measures import evaluate
from ..task import TriggerTask
from .table import Table

DEFAULT_LS = (1.0, 2.0, 4.0, 8.0, 16.0)
"""The softmax construction's scales ``L`` the report sections tabulate."""


def constructions_section(task: TriggerTask, Ls: tuple[float, ...] = DEFAULT_LS,
                          max_work: int | None = None) -> list[Table]:
    """Theorem 4's ReLU head and Theorem 5's softmax head, evaluated exhaustively
    (refused beyond ``max_work`` positions)."""
    rows = []
    models: list[tuple[str, Any]] = []
    if task.positions != "none":
        models.append(("relu (Thm 4)", relu_solution(task)))
    models += [(f"softmax L={L:g} (Thm 5)", softmax_solution(task, L)) for L in Ls]
    for name, model in models:
        ev = evaluate(model, max_work=max_work)
        rows.append([
            name, float(model.norm), ev.max_error,
            float(ev.bos_nontrigger.min[0]), float(ev.sink_score[0]),
            float(ev.bos_trigger.max[0]), float(np.exp(ev.log_nonbos_nontrigger.min[0])),
        ])
    caption = (f"exhaustive over S_T: {task.n_sequences} sequences, {task.n_positions} positions; "
               "BOS mass at non-trigger positions t >= 1 (min, mean = sink score), "
               "at triggers (max); "
               "min 1-α0 computed in the log domain")
    return [Table("Constructions", ["model", "||A||_2", "max error", "BOS min", "sink score",
                                    "BOS max@trig", "min 1-α0"], rows, caption)]
