"""Tables of an experiment: mean ± standard deviation over seeds, per setting, in Markdown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .config import Protocol
from .measure import SINK_LEVEL, RunResult, StackRun

SOLVED_ERROR = 0.1
"""A run *solves* the task when its held-out sup error is below this (content norms are ~1)."""


def exemplar(runs: Sequence[RunResult]) -> int | None:
    """Index of the run that stands for its setting in figures: the first (in the order
    given, so seeds are not chosen by their outcome) whose held-out error is below
    :data:`SOLVED_ERROR`; ``None`` when no run solved the task (a dead ReLU run, error 1,
    attends nowhere and must not pass for a model that solves the task with no sink)."""
    return next((i for i, run in enumerate(runs) if run.error < SOLVED_ERROR), None)


def group_key(run: RunResult) -> tuple[str, str, int]:
    """Runs that differ only in seed share ``(content, kind, heads)``."""
    return run.content, run.kind, run.heads


def _sink_head(run: RunResult) -> int:
    return int(np.argmax(run.bos_share))


def run_summary(run: RunResult) -> dict[str, float]:
    """Scalar figures of one run; per-head quantities are read at its sink head
    (the head with the largest BOS share) or averaged over heads."""
    h = _sink_head(run)
    steps = float("nan") if run.sink_step is None else float(run.sink_step)
    return {
        "error": run.error,
        "error_longer": run.error_longer,
        "sink_score": run.sink_score[h],
        "bos_share": run.bos_share[h],
        "bos_share_mean_heads": float(np.mean(run.bos_share)),
        "bos_trigger": run.bos_trigger[h],
        "null_mass": run.null_mass[h],
        "sink_score_longer": run.sink_score_longer[h],
        "sink_step": steps,
        "cancellation": run.head_outputs["sum_head_norms"],
        "output_norm": run.head_outputs["output_norm"],
        "solved": float(run.error < SOLVED_ERROR),
        "silent": float(all(run.silent_at_triggers)),
    }


COLUMNS = (
    ("solved", f"share of runs with error < {SOLVED_ERROR}"),
    ("silent", "share of runs silent at every trigger"),
    ("error", "held-out error"),
    ("error_longer", "error at T+1..2T"),
    ("bos_share", "BOS share, non-trigger (sink head)"),
    ("bos_share_mean_heads", "BOS share, mean of heads"),
    ("bos_trigger", "BOS weight at trigger (sink head)"),
    ("null_mass", "null mass (sink head)"),
    ("cancellation", "mean Σ_h ‖f^h_t‖, non-trigger"),
    ("output_norm", "mean ‖f_t‖, non-trigger"),
    ("sink_step", "step BOS share ≥ 0.5"),
)


def aggregate(runs: Sequence[RunResult]) -> list[dict[str, Any]]:
    """One row per ``(content, kind, heads)``: mean, standard deviation, min and max over seeds."""
    groups: dict[tuple[str, str, int], list[RunResult]] = {}
    for run in runs:
        groups.setdefault(group_key(run), []).append(run)
    rows = []
    for (content, kind, heads), members in groups.items():
        summaries = [run_summary(r) for r in members]
        row: dict[str, Any] = dict(content=content, kind=kind, heads=heads,
                                   seeds=[r.seed for r in members])
        for key, _ in COLUMNS:
            vals = np.array([s[key] for s in summaries], dtype=float)
            finite = vals[np.isfinite(vals)]
            row[key] = dict(
                mean=float(finite.mean()) if finite.size else None,
                std=float(finite.std()) if finite.size else None,
                min=float(finite.min()) if finite.size else None,
                max=float(finite.max()) if finite.size else None,
                missing=int(vals.size - finite.size),
            )
        rows.append(row)
    return rows


def _cell(stat: dict[str, Any]) -> str:
    if stat["mean"] is None:
        return "never"
    text = f"{_num(stat['mean'])} ± {_num(stat['std'])}"
    if stat["missing"]:
        text += f" ({stat['missing']} never)"
    return text


def _num(x: float) -> str:
    if x == 0:
        return "0"
    return f"{x:.3g}" if abs(x) >= 1e-3 else f"{x:.1e}"


def summary_markdown(runs: Sequence[RunResult]) -> str:
    """The mean ± std table over seeds."""
    header = ["content", "attention", "H", "seeds"] + [title for _, title in COLUMNS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in aggregate(runs):
        cells = [row["content"], row["kind"], str(row["heads"]), str(len(row["seeds"]))]
        cells += [_cell(row[key]) for key, _ in COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def theory_markdown(runs: Sequence[RunResult]) -> str:
    """Each single-head softmax model next to Theorems 1 and 3 at its own error;
    each ReLU model's BOS share next to Theorem 4's zero."""
    lines = [
        "| content | seed | ε on X^c_n | min α_{n0} on X^c_n | Thm 1 bound | ε held-out | "
        "mean α_{t0} | mean Thm 3 bound | violations |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        if run.kind != "softmax" or run.heads != 1:
            continue
        t1, t3 = run.theory
        lines.append(
            f"| {run.content} | {run.seed} | {_num(t1['eps'])} | {_num(t1['bos_min'])} | "
            f"{_num(t1['bound'])} | {_num(t3['eps'])} | {_num(t3['bos_mean'])} | "
            f"{_num(t3['bound_mean'])} | {violations([run])} |")
    relu = [r for r in runs if r.kind == "relu"]
    if relu:
        lines += ["", "| content | H | seed | held-out error | BOS share per head (Thm 4: 0) |",
                  "|---|---|---|---|---|"]
        for run in relu:
            shares = ", ".join(_num(s) for s in run.bos_share)
            lines.append(f"| {run.content} | {run.heads} | {run.seed} | {_num(run.error)} | "
                         f"{shares} |")
    return "\n".join(lines)


def violations(runs: Sequence[RunResult]) -> int:
    """Total number of positions where a trained model breaks a proved bound (must be 0)."""
    return sum(int(t.get("violations", 0)) + int(t.get("registry", {}).get("violations", 0))
               for r in runs for t in r.theory)


# ------------------------------------------------ stacks trained with a protocol
def _held(r: StackRun) -> str:
    bc = r.bound_check
    if not bc:
        return "—"
    if bc.get("bound") is None:
        return "no bound proved"
    return f"{bc['violations']} violations in {bc['positions']} rows"


def protocol_table(runs: Sequence[StackRun], protocol: Protocol) -> str:
    """Markdown: per run, heads sinking (mean non-trigger BOS weight >= 0.97) per layer,
    the least and largest head BOS weight, error and steps at stop, and the run held
    against the proved per-position bound (one softmax head); then, when a configuration
    ran with several seeds, one line per configuration over its seeds."""
    lines = [f"| kind | layers×heads | seed | sinking heads per layer (>= {SINK_LEVEL}) | "
             "BOS weight min..max | max abs error (test) | steps | stopped | "
             "held against the bound |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        bos = np.asarray(r.bos_nontrigger)
        sinks = ", ".join(f"{s}/{r.heads}" for s in r.sinks_per_layer)
        lines.append(f"| {r.kind} | {r.layers}×{r.heads} | {r.seed} | {sinks} | "
                     f"{bos.min():.3f}..{bos.max():.3f} | {r.max_abs_error:.4g} | {r.steps} | "
                     f"{'yes' if r.stopped else f'no (max {protocol.max_steps})'} | "
                     f"{_held(r)} |")
    summary = seed_summary(runs)
    if summary:
        lines += ["", summary]
    return "\n".join(lines) + "\n"


def seed_summary(runs: Sequence[StackRun]) -> str:
    """Markdown, one line per (kind, layers, heads) run with more than one seed: seeds,
    sinking heads per layer (mean and range over seeds), steps (median, range), the
    largest test error and how many runs stopped at the tolerance."""
    groups: dict[tuple[str, int, int], list[StackRun]] = {}
    for r in runs:
        groups.setdefault((r.kind, r.layers, r.heads), []).append(r)
    lines = ["| kind | layers×heads | seeds | sinking heads per layer: mean (min..max) | "
             "steps: median (min..max) | largest max abs error | stopped |",
             "|---|---|---|---|---|---|---|"]
    for (kind, layers, heads), rs in groups.items():
        if len(rs) < 2:
            continue
        sinks = np.array([r.sinks_per_layer for r in rs])
        per = ", ".join(f"{sinks[:, i].mean():.1f} ({sinks[:, i].min()}..{sinks[:, i].max()})"
                        for i in range(layers))
        steps = np.array([r.steps for r in rs])
        lines.append(f"| {kind} | {layers}×{heads} | {len(rs)} | {per} | "
                     f"{int(np.median(steps))} ({steps.min()}..{steps.max()}) | "
                     f"{max(r.max_abs_error for r in rs):.4g} | "
                     f"{sum(r.stopped for r in rs)}/{len(rs)} |")
    return "\n".join(lines) if len(lines) > 2 else ""
