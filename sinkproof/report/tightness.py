"""Tightness tables: each bound next to what the explicit constructions achieve.

* Theorem 5's sandwich: at the norm ``B = ‖A‖_2`` of the softmax construction, the
  certified lower bound ``ε_min(B)`` on the error of *every* single-head
  fixed-value softmax model, the construction's measured error, and the gap.
* Theorem 1 against the construction: with ``ε`` the construction's measured error,
  the largest non-BOS mass Theorem 1 allows on ``X^c_n`` (``ε/‖c‖``) next to the
  largest one the construction has (log domain).

These are section functions for :data:`sinkproof.report.SECTIONS`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..constructions import softmax_solution
from ..measures import evaluate
from ..numerics import stable_norm
from ..symbolic.normbound import eps_min_enclosure, log_eps_min, norm_needed
from ..task import TriggerTask
from .constructions import DEFAULT_LS
from .table import Table


def theorem5_sandwich_section(task: TriggerTask, Ls: tuple[float, ...] | None = None,
                              max_work: int | None = None) -> list[Table]:
    """Certified ``ε_min(B)`` vs the softmax construction's error at the same norm."""
    rows = []
    for L in DEFAULT_LS if Ls is None else Ls:
        model = softmax_solution(task, L)
        B = model.norm
        lower, _ = eps_min_enclosure(task, B)
        err = evaluate(model, progress=False, max_work=max_work).max_error
        needed = norm_needed(task, err).below if err > 0 else math.inf
        rows.append([L, B, lower, err, err / lower if lower > 0 else math.inf, needed,
                     B / needed if needed > 0 else math.inf])
    caption = ("ε_min(B): certified lower bound on the family error of every 1-head softmax "
               "model with fixed values and ‖A‖_2 <= B (interval arithmetic); construction "
               "error: Theorem 5's head, exhaustive float64; B needed: certified norm below "
               "which no such model reaches the construction's error")
    return [Table("Theorem 5 sandwich (norm vs error)",
                  ["L", "B = ‖A‖_2", "ε_min(B)", "construction error", "error / ε_min",
                   "B needed", "B / B needed"], rows, caption)]


def theorem1_tightness_section(task: TriggerTask, Ls: tuple[float, ...] | None = None,
                               max_work: int | None = None) -> list[Table]:
    """Theorem 1's allowed non-BOS mass ``ε/‖c‖`` vs the construction's, on ``X^c_n``."""
    norms = stable_norm(task.content)
    rows = []
    for L in DEFAULT_LS if Ls is None else Ls:
        model = softmax_solution(task, L)
        eps = evaluate(model, progress=False, max_work=max_work).max_error
        worst_ratio, worst_nonbos, allowed_at_worst = -math.inf, 0.0, 0.0
        for c in range(task.k):
            if norms[c] == 0:
                continue
            seq = (c,) * task.T
            log_nonbos = model.log_nonbos(seq)[0, 1:]  # positions n = 1..T of X^c_T
            log_allowed = math.log(eps) - math.log(norms[c])
            ratio = float(np.max(log_nonbos)) - log_allowed
            if ratio > worst_ratio:
                worst_ratio = ratio
                worst_nonbos = float(np.exp(np.max(log_nonbos)))
                allowed_at_worst = math.exp(log_allowed)
        rows.append([L, eps, 1 - allowed_at_worst, 1 - worst_nonbos, allowed_at_worst,
                     worst_nonbos, math.exp(worst_ratio)])
    caption = ("ε: the construction's measured family error; Theorem 1 (fixed values) then "
               "forces BOS mass >= 1 - ε/‖c‖ at every position of X^c_n; 'tightness' is the "
               "construction's largest 1-α_0 on X^c_n divided by the allowed ε/‖c‖ "
               "(<= 1 when the bound holds, 1 when it is attained); log domain")
    return [Table("Theorem 1 vs the softmax construction",
                  ["L", "ε (measured)", "Thm 1 BOS >=", "construction BOS min",
                   "allowed 1-α0", "construction 1-α0", "tightness"], rows, caption)]


def sandwich_curve(task: TriggerTask, Ls: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Both sides of Theorem 5's sandwich along the construction's family: for each ``L``,
    the norm ``B``, ``log10 ε_min(B)`` (the certified floor, float) and ``log10`` of the
    construction's measured error."""
    Ls = np.linspace(0.0, 16.0, 17) if Ls is None else np.asarray(Ls, dtype=float)
    B = np.array([softmax_solution(task, L).norm for L in Ls])
    floor = log_eps_min(task, B) / math.log(10)
    errors = np.array([evaluate(softmax_solution(task, L), progress=False).max_error for L in Ls])
    with np.errstate(divide="ignore"):
        return dict(L=Ls, B=B, log10_eps_min=floor, log10_error=np.log10(errors))


def plot_theorem5_sandwich(task: TriggerTask, Ls: np.ndarray | None = None, ax: Any = None
                           ) -> Any:
    """Theorem 5's sandwich as a figure (matplotlib): the certified floor ``ε_min(B)``
    against the construction's error at the same norm, on a log scale; returns the axes."""
    import matplotlib.pyplot as plt

    data = sandwich_curve(task, Ls)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    ax.plot(data["B"], data["log10_error"], "o-", label="softmax construction (measured)")
    ax.plot(data["B"], data["log10_eps_min"], "s-", label="ε_min(B): every model (certified)")
    ax.fill_between(data["B"], data["log10_eps_min"], data["log10_error"], alpha=0.15,
                    label="gap")
    ax.axvline(2.0, color="gray", ls=":", label="ReLU (Thm 4): error 0 at B = 2")
    ax.set_xlabel("B = ‖A‖_2")
    ax.set_ylabel("log10 error")
    ax.set_title(f"Theorem 5 sandwich, p={task.p}, T={task.T}")
    ax.legend(fontsize=8)
    return ax
