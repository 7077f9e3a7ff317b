"""A sweep's files: the tidy table (Parquet and CSV), a summary per axis, a plot per axis."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from .jobs import JOB_KINDS


def _column_type(values: list[Any]) -> str:
    kinds = {type(v) for v in values if v is not None}
    if any(type(v) is int and not -(2**63) <= v < 2**63 for v in values):
        return "str"  # an absurd size field (T = 10**30): exact as text, not a C long
    if kinds <= {bool}:
        return "bool"
    if kinds <= {int}:
        return "int"
    if kinds <= {int, float}:
        return "float"
    return "str"


def _typed_columns(result: Any) -> dict[str, list[Any]]:
    """Each column as one type (mixed columns become text, exactly as written)."""
    columns: dict[str, list[Any]] = {}
    for name in result.columns:
        values = [row.get(name) for row in result.rows]
        kind = _column_type(values)
        if kind == "str":
            values = [None if v is None else (v if isinstance(v, str) else json.dumps(v))
                      for v in values]
        elif kind == "float":
            values = [None if v is None else float(v) for v in values]
        columns[name] = values
    return columns


def write_table(result: Any, out: Path) -> list[Path]:
    """``results.csv`` always (:meth:`~sinkproof.tables.Tabular.to_csv`); ``results.parquet``
    through pyarrow."""
    csv_path = out / "results.csv"
    result.to_csv(csv_path)
    columns = _typed_columns(result)
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({n: pa.array(v) for n, v in columns.items()})
    pq_path = out / "results.parquet"
    pq.write_table(table, pq_path)
    return [pq_path, csv_path]


def axis_summary(result: Any) -> dict[str, list[dict[str, Any]]]:
    """Per swept axis and value: jobs, finished jobs and the mean, min and max of the job
    kind's metric over them."""
    metric = JOB_KINDS[result.sweep.kind].metric
    out: dict[str, list[dict[str, Any]]] = {}
    for axis in result.sweep.axes:
        groups: dict[str, list[dict[str, Any]]] = {}
        for row in result.rows:
            groups.setdefault(json.dumps(row.get(axis), default=str), []).append(row)
        lines = []
        for value, rows in groups.items():
            ok = [r for r in rows if r["status"] == "ok"]
            vals = [r[metric] for r in ok if isinstance(r.get(metric), (int, float))
                    and not isinstance(r.get(metric), bool) and r[metric] == r[metric]]
            lines.append({axis: json.loads(value), "jobs": len(rows), "ok": len(ok),
                          f"{metric} mean": statistics.fmean(vals) if vals else None,
                          f"{metric} min": min(vals) if vals else None,
                          f"{metric} max": max(vals) if vals else None})
        out[axis] = lines
    return out


def _markdown(result: Any) -> str:
    parts = [f"# Sweep {result.sweep.name} ({result.sweep.kind})", "", result.summary_line(), ""]
    for axis, lines in axis_summary(result).items():
        names = list(lines[0])
        parts += [f"## by {axis}", "", "| " + " | ".join(names) + " |",
                  "|" + "---|" * len(names)]
        for line in lines:
            cells = ["" if line[n] is None else (f"{line[n]:.6g}" if isinstance(line[n], float)
                                                 else str(line[n])) for n in names]
            parts.append("| " + " | ".join(cells) + " |")
        parts.append("")
    return "\n".join(parts)


def _plots(result: Any, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metric = JOB_KINDS[result.sweep.kind].metric
    paths = []
    for axis, lines in axis_summary(result).items():
        xs = [str(line[axis]) for line in lines]
        fig, ax = plt.subplots(figsize=(5, 3.2))
        lo = [line[f"{metric} min"] for line in lines]
        hi = [line[f"{metric} max"] for line in lines]
        mean = [line[f"{metric} mean"] for line in lines]
        pos = range(len(xs))
        ax.plot(pos, [m if m is not None else float("nan") for m in mean], "o-", label="mean")
        ax.fill_between(pos, [v if v is not None else float("nan") for v in lo],
                        [v if v is not None else float("nan") for v in hi], alpha=0.25,
                        label="min-max")
        ax.set_xticks(list(pos), xs)
        ax.set_xlabel(axis)
        ax.set_ylabel(metric)
        ax.set_title(f"{result.sweep.name}: {metric} by {axis}")
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out / "figures" / f"{axis}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def write_outputs(result: Any, out: Path, figures: bool = True) -> list[str]:
    """Write every file of the sweep under ``out``; returns their paths.  Without
    matplotlib, the plots are skipped with a one-line note in ``summary.md``."""
    out.mkdir(parents=True, exist_ok=True)
    files = write_table(result, out)
    text = _markdown(result)
    if figures:
        try:
            files += _plots(result, out)
        except ImportError:
            text += "\nPlots skipped: matplotlib is not installed (pip install matplotlib).\n"
    summary = out / "summary.md"
    summary.write_text(text, encoding="utf-8")
    files.append(summary)
    return [str(f) for f in files]
