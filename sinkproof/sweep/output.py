"""A sweep's files: the tidy table (Parquet and CSV), a summary per axis, a plot per axis.

Every file is written under the folder the command line names (``--out``), to a
temporary name first and then renamed, so a crash never leaves half a file.  The folder
keeps a list of the files sweeps wrote there (:data:`MANIFEST`): a file of the same name
that a sweep did not write is never overwritten (the sweep refuses, exit status 2).
No name comes from a path written in the sweep file: a plot is named after its axis
with every character but letters, digits, ``_``, ``-`` and ``.`` replaced.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..exact_numbers import exact
from .grid import SweepError
from .jobs import JOB_KINDS

MANIFEST = ".sinkproof-sweep.json"
"""The list, in the output folder, of the files sweeps wrote there."""

LOG_AXES = ("eps", "max_error", "max_bos_mass", "lr")
"""Axes (the last part of a dotted name) plotted on a log scale when all are positive."""


class OutputFolder:
    """The folder a sweep writes to: files written atomically, never over a file that
    no sweep wrote."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._manifest = root / MANIFEST
        try:
            owned = json.loads(self._manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            owned = []
        self.owned = {str(x) for x in owned} if isinstance(owned, list) else set()

    def check(self, names: list[str]) -> None:
        """Refuse before anything is written if a file of these names exists that no
        sweep wrote."""
        for name in names:
            if (self.root / name).exists() and name not in self.owned:
                raise SweepError(f"{self.root / name} exists and was not written by a sweep: "
                                 "it is not overwritten (choose another --out)")

    def write(self, name: str, writer: Callable[[Path], Any]) -> Path:
        """Write ``root/name`` through ``writer(temporary path)``, then rename it."""
        self.check([name])
        target = self.root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.stem}.{os.getpid()}.tmp{target.suffix}")
        try:
            writer(tmp)
            os.replace(tmp, target)
        finally:
            if tmp.exists():  # the writer failed: remove only the file this call made
                tmp.unlink()
        if name not in self.owned:
            self.owned.add(name)
            text = json.dumps(sorted(self.owned), indent=1)
            tmp = self._manifest.with_name(f"{MANIFEST}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, self._manifest)
        return target


def figure_name(axis: str) -> str:
    """``figures/AXIS.png`` with a safe file name (no folder, nothing hidden)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", axis).lstrip(".") or "axis"
    return f"figures/{safe}.png"


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


def write_table(result: Any, out: Path | OutputFolder, parquet: bool = True) -> list[Path]:
    """``results.csv`` always (:meth:`~sinkproof.tables.Tabular.to_csv`); ``results.parquet``
    too where pyarrow is installed (the ``parquet`` extra: 170 MB, for Parquet only) and
    ``parquet`` is true."""
    folder = out if isinstance(out, OutputFolder) else OutputFolder(out)
    columns = _typed_columns(result)
    csv_path = folder.write("results.csv", result.to_csv)
    if not parquet:
        return [csv_path]
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return [csv_path]
    table = pa.table({n: pa.array(v) for n, v in columns.items()})
    pq_path = folder.write("results.parquet", lambda path: pq.write_table(table, path))
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


def numeric_axis(values: list[Any]) -> list[float] | None:
    """The values of an axis as numbers (exact text such as ``"1/20"`` included), in
    the same order, or ``None`` when one of them is not a finite number."""
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            return None
        try:
            x = float(exact(v))
        except (TypeError, ValueError, ArithmeticError):
            return None
        if not math.isfinite(x):
            return None
        out.append(x)
    return out


def log_scale(axis: str, xs: list[float]) -> bool:
    """Whether an axis is plotted on a log scale: an error level (or learning rate)
    whose values are all positive."""
    return axis.rsplit(".", 1)[-1] in LOG_AXES and all(x > 0 for x in xs)


def _plots(result: Any, folder: OutputFolder) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metric = JOB_KINDS[result.sweep.kind].metric
    paths = []
    for axis, lines in axis_summary(result).items():
        numbers = numeric_axis([line[axis] for line in lines])
        if numbers is not None:  # a numeric axis: plotted at its values, in order
            order = sorted(range(len(lines)), key=numbers.__getitem__)
            lines = [lines[i] for i in order]
            pos: Any = [numbers[i] for i in order]
        else:
            pos = list(range(len(lines)))
        fig, ax = plt.subplots(figsize=(5, 3.2))
        lo = [line[f"{metric} min"] for line in lines]
        hi = [line[f"{metric} max"] for line in lines]
        mean = [line[f"{metric} mean"] for line in lines]
        ax.plot(pos, [m if m is not None else float("nan") for m in mean], "o-", label="mean")
        ax.fill_between(pos, [v if v is not None else float("nan") for v in lo],
                        [v if v is not None else float("nan") for v in hi], alpha=0.25,
                        label="min-max")
        if numbers is None:
            ax.set_xticks(pos, [str(line[axis]) for line in lines])
        elif log_scale(axis, pos):
            ax.set_xscale("log")
        ax.set_xlabel(axis)
        ax.set_ylabel(metric)
        ax.set_title(f"{result.sweep.name}: {metric} by {axis}")
        ax.legend(fontsize=8)
        fig.tight_layout()
        paths.append(folder.write(figure_name(axis), lambda path, f=fig: f.savefig(path, dpi=110)))
        plt.close(fig)
    return paths


def write_outputs(result: Any, out: Path, figures: bool = True, parquet: bool = True
                  ) -> list[str]:
    """Write every file of the sweep under ``out``; returns their paths.  Without
    matplotlib, the plots are skipped with a one-line note in ``summary.md``; without
    ``parquet`` (an interrupted sweep: importing pyarrow alone takes a second or more),
    only the CSV table."""
    out.mkdir(parents=True, exist_ok=True)
    folder = OutputFolder(out)
    folder.check(output_names(result.sweep, figures))  # refuse before writing anything
    files = write_table(result, folder, parquet=parquet)
    text = _markdown(result)
    if figures:
        try:
            files += _plots(result, folder)
        except ImportError:
            text += "\nPlots skipped: matplotlib is not installed (pip install matplotlib).\n"
    files.append(folder.write("summary.md",
                              lambda path: path.write_text(text, encoding="utf-8")))
    return [str(f) for f in files]


def output_names(sweep: Any, figures: bool = True) -> list[str]:
    """The files a sweep writes under its folder (relative names)."""
    names = ["results.parquet", "results.csv", "summary.md"]
    return names + ([figure_name(a) for a in sweep.axes] if figures else [])
