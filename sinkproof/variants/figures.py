"""Figures for docs/variants.md: each map's construction on one sequence, and the norm price.

``python -m sinkproof.variants.figures DIR`` writes ``variants_attention.png`` (weights
``α_tj`` of every map's construction on ``(BOS, e_1, -e_2, TRIG)``, rows ``t``, columns
``j``; the gated head's weights times its gate) and ``variants_norm_price.png`` (certified
norm lower bound and construction norm against the error, log scale).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ..attention import MAPS
from ..task import TRIG, TriggerTask
from .constructions import construction
from .normprice import norm_lower_bound
from .sandwich import sandwich_maps
from .verify import verify_construction

__all__ = ["plot_attention_maps", "plot_norm_price"]


def plot_attention_maps(task: TriggerTask, path: str | Path) -> Path:
    """One heat map per map: its construction's weights on ``(BOS, e_1, -e_2, TRIG)``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seq = [0, 3 if task.k > 3 else task.k - 1, TRIG]  # two content tokens, then TRIG
    labels = ["BOS", "c0", f"c{seq[1]}", "TRIG"]
    cols = 4
    rows = -(-len(MAPS) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3 * cols, 3 * rows), squeeze=False)
    for ax in axes.flat[len(MAPS):]:
        ax.axis("off")
    for ax, name in zip(axes.flat, MAPS):
        con = construction(task, name, 4 if name not in ("relu", "relu_length") else 1)
        W = con.model().forward(seq)[1][0]
        im = ax.imshow(W, vmin=0, vmax=1, cmap="viridis")
        ax.set_title(f"{name} (L={con.level})", fontsize=9)
        ax.set_xticks(range(W.shape[1]), labels, fontsize=7)
        ax.set_yticks(range(W.shape[0]), labels, fontsize=7)
    fig.colorbar(im, ax=axes, shrink=0.6, label="weight α_tj (gated: g_t α_tj)")
    out = Path(path)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def plot_norm_price(task: TriggerTask, path: str | Path) -> Path:
    """Certified norm lower bound (lines) and construction norms (dots) against the error,
    for the maps of the norm-price sandwich (:func:`sinkproof.variants.sandwich.sandwich_maps`)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    eps = np.logspace(-12, -1, 40)
    for i, name in enumerate(sandwich_maps(task)):
        color = f"C{i}"
        lows = [norm_lower_bound(task, name, float(e)) for e in eps]
        ax.plot(eps, [np.nan if b is None else b for b in lows], color=color,
                label=f"{name}: certified lower bound")
        pts = []
        for L in (2, 4, 8, 12, 16, 24):
            con = construction(task, name, L)
            pts.append((verify_construction(con).error_hi, con.norm))
        ax.plot(*zip(*pts), "o--", color=color, ms=4, label=f"{name}: construction")
    ax.set_xscale("log")
    ax.set_xlabel("error ε")
    ax.set_ylabel("weight norm")
    ax.legend(fontsize=6, ncol=2)
    ax.set_title(f"norm price, {task!r}"[:80], fontsize=8)
    out = Path(path)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0] if args else "docs/figures")
    folder.mkdir(parents=True, exist_ok=True)
    task = TriggerTask(p=2, T=3)
    for f in (plot_attention_maps(task, folder / "variants_attention.png"),
              plot_norm_price(task, folder / "variants_norm_price.png")):
        print(f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
