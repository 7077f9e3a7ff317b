"""Figures of an experiment (matplotlib, the optional ``plot`` extra; Agg canvas, no pyplot)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..model import AttentionModel
from ..task import TRIG, TriggerTask
from .measure import RunResult


def _figure(width: float, height: float) -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("figures need matplotlib: pip install 'sinkproof[plot]'") from None
    fig = Figure(figsize=(width, height), dpi=80)
    FigureCanvasAgg(fig)
    return fig


def heatmap_sequence(task: TriggerTask, length: int = 12) -> tuple[int, ...]:
    """A fixed input for heat maps: cycling content tokens with a trigger 3 from the end."""
    n = min(task.T, length)
    seq = [i % task.k for i in range(n)]
    seq[max(1, n - 3)] = TRIG
    return tuple(seq)


def _labels(task: TriggerTask, seq: Sequence[int]) -> list[str]:
    return ["BOS"] + ["TRIG" if s == TRIG else f"c{s}" for s in seq]


def attention_heatmaps(models: Sequence[tuple[str, AttentionModel]], path: str | Path) -> Path:
    """One row per labelled model, one column per head: the weights ``α^h_{tj}`` on one input.

    Softmax rows show probabilities; ReLU rows show the raw (non-normalised) weights.
    """
    if not models:
        raise ValueError("no models to draw")
    cols = max(m.H for _, m in models)
    task = models[0][1].task
    seq = heatmap_sequence(task)
    labels = _labels(task, seq)
    fig = _figure(2.3 * cols + 0.6, 2.3 * len(models))
    for r, (label, model) in enumerate(models):
        _, w = model.forward(seq)
        vmax = 1.0 if model.kind == "softmax" else max(float(w.max()), 1e-12)
        for h in range(model.H):
            ax = fig.add_subplot(len(models), cols, r * cols + h + 1)
            im = ax.imshow(w[h], cmap="viridis", vmin=0.0, vmax=vmax)
            ax.set_title(f"{label} head {h}", fontsize=7)
            ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=5)
            ax.set_yticks(range(len(labels)), labels, fontsize=5)
            if h == model.H - 1:
                fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04).ax.tick_params(labelsize=5)
    fig.suptitle("attention weights (rows: query t, columns: key j)", fontsize=8)
    fig.tight_layout()
    return _save(fig, path)


def bos_over_training(runs: Sequence[RunResult], path: str | Path) -> Path:
    """BOS share at non-trigger positions (probe sequences) against the training step.

    One panel per (content, heads); one line per run at its sink head (largest
    final BOS share), softmax and ReLU in different colours.
    """
    if not runs:
        raise ValueError("no runs to draw")
    panels = sorted({(r.content, r.heads) for r in runs})
    fig = _figure(3.0 * len(panels), 2.6)
    colours = {"softmax": "tab:red", "relu": "tab:blue"}
    for i, (content, heads) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), i + 1)
        seen: set[str] = set()
        for run in runs:
            if (run.content, run.heads) != (content, heads):
                continue
            share = np.asarray(run.history["bos_share"])
            h = int(np.argmax(share[-1]))
            ax.plot(run.history["step"], share[:, h], color=colours[run.kind], alpha=0.7,
                    lw=1.0, label=None if run.kind in seen else run.kind)
            seen.add(run.kind)
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(f"{content} content, H={heads}", fontsize=8)
        ax.set_xlabel("training step", fontsize=7)
        if i == 0:
            ax.set_ylabel("BOS share, non-trigger\n(sink head)", fontsize=7)
        ax.tick_params(labelsize=6)
        ax.legend(fontsize=6, loc="center right")
    fig.tight_layout()
    return _save(fig, path)


def _save(fig: Any, path: str | Path) -> Path:
    path = Path(path)
    fig.savefig(path, dpi=80)
    return path
