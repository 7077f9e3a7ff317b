"""Figures, table and results file of the paper's reproduction (``sinkproof paper``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .paper import SINK_LEVEL, Protocol, Run


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


def _find(runs: Sequence[Run], kind: str, layers: int, heads: int, seed: int) -> Run | None:
    return next((r for r in runs if (r.kind, r.layers, r.heads, r.seed) ==
                 (kind, layers, heads, seed)), None)


def figures(runs: Sequence[Run], out: Path, protocol: Protocol, seed: int) -> list[Path]:
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


def _held(r: Run) -> str:
    bc = r.bound_check
    if not bc:
        return "—"
    if bc.get("bound") is None:
        return "no bound proved"
    return f"{bc['violations']} violations in {bc['positions']} rows"


def table(runs: Sequence[Run], protocol: Protocol) -> str:
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


def seed_summary(runs: Sequence[Run]) -> str:
    """Markdown, one line per (kind, layers, heads) run with more than one seed: seeds,
    sinking heads per layer (mean and range over seeds), steps (median, range), the
    largest test error and how many runs stopped at the tolerance."""
    groups: dict[tuple[str, int, int], list[Run]] = {}
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


def write(runs: Sequence[Run], out: Path, protocol: Protocol, meta: dict[str, Any],
          figures_too: bool = True) -> dict[str, Path]:
    """``results.json`` (runs and the protocol), ``table.md``, ``maps.npz`` and (with
    ``figures_too``) the figures."""
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.json"
    results.write_text(json.dumps([r.summary() for r in runs], indent=1) + "\n",
                       encoding="utf-8")
    (out / "protocol.json").write_text(json.dumps({**protocol.__dict__, **meta}, indent=1,
                                                  default=list) + "\n", encoding="utf-8")
    (out / "table.md").write_text(table(runs, protocol), encoding="utf-8")
    np.savez_compressed(out / "maps.npz", **{
        f"{r.kind}_{r.layers}x{r.heads}_s{r.seed}_{name}": getattr(r, name)
        for r in runs for name in ("mean_maps", "std_maps", "one_maps")})
    seeds = sorted({r.seed for r in runs})
    figs = figures(runs, out, protocol, seeds[0]) if seeds and figures_too else []
    return {"results": results, "table": out / "table.md", **{p.stem: p for p in figs}}


__all__ = ["figures", "seed_summary", "table", "write"]
