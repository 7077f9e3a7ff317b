"""Figures of an experiment (matplotlib, the optional ``plot`` extra; Agg canvas, no pyplot)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..model import AttentionModel
from ..task import TRIG, TriggerTask
from .config import Protocol
from .measure import RunResult, StackRun


def _figure(width: float, height: float) -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("figures need matplotlib: pip install 'sinkproof[plot]'") from None
    fig = Figure(figsize=(width, height), dpi=100)
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


def attention_heatmaps(rows: Sequence[Sequence[tuple[str, AttentionModel]]],
                       path: str | Path) -> Path:
    """Weights ``α^h_{tj}`` on one input: one figure row per list of labelled models,
    one panel per head of each model in turn.

    Softmax panels show probabilities (scale 0..1); ReLU panels show the raw
    (non-normalised) weights on a scale shared by the row.
    """
    rows = [list(r) for r in rows if r]
    if not rows:
        raise ValueError("no models to draw")
    cols = max(sum(m.H for _, m in r) for r in rows)
    seq = heatmap_sequence(rows[0][0][1].task)
    labels = _labels(rows[0][0][1].task, seq)
    fig = _figure(1.9 * cols + 0.6, 2.0 * len(rows) + 0.3)
    for r, row in enumerate(rows):
        weights = [(label, model, model.forward(seq)[1]) for label, model in row]
        vmax = max(1.0 if m.attention_map.properties.on_simplex else float(w.max())
                   for _, m, w in weights)
        col = 0
        for label, model, w in weights:
            for h in range(model.H):
                col += 1
                ax = fig.add_subplot(len(rows), cols, r * cols + col)
                im = ax.imshow(w[h], cmap="viridis", vmin=0.0, vmax=max(vmax, 1e-12))
                ax.set_title(f"{label}, head {h}", fontsize=6)
                ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=4)
                ax.set_yticks(range(len(labels)), labels, fontsize=4)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04).ax.tick_params(labelsize=5)
    fig.suptitle(f"attention weights on {list(seq)} (-1 = trigger); rows: query t, "
                 "columns: key j", fontsize=7)
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
    fig.savefig(path, dpi=100)
    return path


# ------------------------------------------------ stacks trained with a protocol
def _grid(maps: np.ndarray, title: str, path: Path,
          names: Sequence[Sequence[str]] | None = None) -> Path:
    """Heat maps ``maps`` ``(rows, cols, L, L)`` in one figure; ``names`` the panel titles
    (default ``layer r, head c``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, cols = maps.shape[:2]
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3.0 * rows), squeeze=False)
    for r in range(rows):
        for c in range(cols):
            ax = axes[r][c]
            im = ax.imshow(maps[r, c], vmin=0.0, vmax=max(1.0, float(maps[r, c].max())),
                           cmap="viridis")
            ax.set_title(names[r][c] if names else f"layer {r}, head {c}", fontsize=8)
            ax.set_xlabel("key", fontsize=7)
            ax.set_ylabel("query", fontsize=7)
            ax.tick_params(labelsize=6)
            fig.colorbar(im, ax=ax, fraction=0.046)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def _find(runs: Sequence[StackRun], kind: str, layers: int, heads: int, seed: int
          ) -> StackRun | None:
    return next((r for r in runs if (r.kind, r.layers, r.heads, r.seed) ==
                 (kind, layers, heads, seed)), None)


def protocol_figures(runs: Sequence[StackRun], out: Path, protocol: Protocol,
                     seed: int) -> list[Path]:
    """Fig. 3 (1×1 mean and std maps, softmax and ReLU), Figs. 4–5 (2×2) and 6–7 (4×4),
    per-head maps on the first test sequence, for the runs of ``seed`` that exist."""
    made = []
    one = [r for r in (_find(runs, k, 1, 1, seed) for k in ("softmax", "relu_length")) if r]
    if one:
        maps = np.stack([np.stack([r.mean_maps[0, 0], r.std_maps[0, 0]]) for r in one])
        made.append(_grid(maps, f"Fig. 3: 1 layer, 1 head ({', '.join(r.kind for r in one)}; "
                          f"rows); mean | std over {protocol.n_eval} sequences, trigger at "
                          f"index {protocol.eval_trigger}", out / "fig3_1x1_mean_std.png",
                          names=[[f"{r.kind}: mean", f"{r.kind}: std"] for r in one]))
    number = {(2, 2, "softmax"): 4, (2, 2, "relu_length"): 5, (4, 4, "softmax"): 6,
              (4, 4, "relu_length"): 7}
    for (layers, heads, kind), fig in number.items():
        r = _find(runs, kind, layers, heads, seed)
        if r is not None:
            made.append(_grid(r.one_maps, f"Fig. {fig}: {layers}×{heads} {kind}, one test "
                              f"sequence (trigger at index {protocol.eval_trigger})",
                              out / f"fig{fig}_{layers}x{heads}_{kind}.png"))
    return made
