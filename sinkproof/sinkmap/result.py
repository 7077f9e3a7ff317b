"""The result of :func:`sinkproof.sink_map`: a table of certified BOS-mass lower bounds."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ..checker import verify
from ..errors import InputError
from ..files import write_file
from ..tables import Tabular
from ..task import TRIG, TriggerTask
from ..tasks import task_from_description
from .kinds import sink_measure

STATUSES = ("certified", "no bound", "uncertified", "failed")


@dataclass
class Entry:
    """One target prefix: ``status``, the certified ``bound`` (float of ``exact``), the solver's
    ``float_bound``, a ``reason`` for "no bound", the number of cone ``constraints`` in its
    certificate and the ``subfamily`` used.  ``realised``: BOS mass of the best accurate
    model the bridge built there (``None`` if none)."""

    status: str
    bound: float
    exact: Fraction | None
    float_bound: float
    reason: str
    constraints: int
    subfamily: str
    u: np.ndarray | None = field(default=None, repr=False)
    block: Any = field(default=None, repr=False)
    realised: float | None = None

    def __repr__(self) -> str:
        exact = "" if self.exact is None else f" (exact {self.exact})"
        real = "" if self.realised is None else f", realised {self.realised:.6f}"
        why = f": {self.reason}" if self.reason else ""
        return (f"Entry({self.status}, bound={self.bound:.6f}{exact}, {self.constraints} "
                f"constraints, {self.subfamily or '-'}{real}{why})")

    def detached(self) -> Entry:
        """A copy without the solver data (``u``, ``block``), for a position whose bound is
        carried from another one (a fresh object: the bridge to search fills
        ``realised`` per position)."""
        out = object.__new__(Entry)
        out.__dict__.update(self.__dict__)
        out.u = out.block = None
        return out

    @property
    def gap(self) -> float | None:
        """``realised - bound``: how far the certificate may be from the truth."""
        return None if self.realised is None else self.realised - self.bound

    def to_dict(self) -> dict[str, Any]:
        return dict(status=self.status, bound=self.bound,
                    exact=None if self.exact is None else str(self.exact),
                    float_bound=self.float_bound, reason=self.reason,
                    constraints=self.constraints, subfamily=self.subfamily,
                    realised=self.realised)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Entry:
        exact = d.get("exact")
        return cls(d["status"], float(d["bound"]), None if exact is None else Fraction(exact),
                   float(d["float_bound"]), d["reason"], int(d["constraints"]), d["subfamily"],
                   realised=d.get("realised"))


def _show(seq: tuple[int, ...]) -> str:
    return "(" + ", ".join("TRIG" if c == TRIG else str(c) for c in seq) + ")"


@dataclass
class SinkMap(Tabular):
    """Per target prefix ``X`` (user tokens, ``sp.TRIG`` for the trigger): the least sink
    measure (:attr:`measure`: the BOS mass for softmax) any eps-accurate single-head model of
    map :attr:`kind` can have at position ``len(X)`` of every sequence starting with ``X``, as
    certified by :attr:`certificate`."""

    task: TriggerTask
    eps: Fraction
    U: np.ndarray
    entries: dict[tuple[int, ...], Entry]
    certificate: dict[str, Any]
    subfamily: str
    radius: int
    family: str
    kind: str = "softmax"
    """The attention map whose sink measure is bounded (:mod:`sinkproof.sinkmap.kinds`)."""

    @property
    def measure(self) -> str:
        """The quantity bounded: ``"BOS mass"``, ``"null mass"``, ``"BOS weight"``,
        ``"BOS share"``."""
        return sink_measure(self.kind).name

    # ------------------------------------------------------------- lookups
    def bound(self, sequence: Any, position: int) -> float:
        """Certified lower bound at ``position`` of ``sequence`` (0.0 where there is none)."""
        return self.entry(sequence, position).bound

    def entry(self, sequence: Any, position: int) -> Entry:
        """The :class:`Entry` of the prefix ``sequence[:position]``."""
        key = tuple(int(c) for c in list(sequence)[:position])
        if key not in self.entries or len(key) != position:
            raise KeyError(f"no sink-map entry for position {position} of {list(sequence)}")
        return self.entries[key]

    def why(self, sequence: Any, position: int, n: int = 5) -> list[tuple[tuple[int, ...], float]]:
        """The prefixes whose accuracy forces the bound here: the ``n`` cone constraints of
        its certificate with the largest multipliers ``w_i``, as ``(prefix, w_i)`` (empty
        where there is no bound; the entry's ``reason`` says why)."""
        entry = self.entry(sequence, position)
        if entry.status != "certified" or self.certificate.get("kind") != "sinkmap-socp":
            return []
        key = [int(c) for c in list(sequence)[:position]]
        data = self.certificate["data"]
        certs = data["certificates"]
        found = next((c for c in certs if c["target"] == key), None)
        relabel = None
        if found is None:
            d = next(d for d in data["derived"] if d["target"] == key)
            found, relabel = certs[d["from"]], d
        rows = []
        for prefix, w in zip(found["constraints"], found["w"]):
            if relabel is not None:
                moved = list(prefix)
                tok = [c if c == TRIG else relabel["tokens"][c] for c in prefix]
                for i, pos in enumerate(relabel["positions"]):
                    moved[pos - 1] = tok[i]
                moved[-1] = tok[-1]
                prefix = moved
            rows.append((tuple(prefix), float(Fraction(w))))
        return sorted(rows, key=lambda r: -r[1])[:n]

    def show_prefix(self, key: tuple[int, ...]) -> str:
        """A prefix as the table prints it (``TRIG`` for the trigger)."""
        return _show(key)

    def count(self, status: str) -> int:
        """Number of prefixes with the given status."""
        return sum(e.status == status for e in self.entries.values())

    def by_position(self) -> list[dict[str, Any]]:
        """Per position ``t``: number of prefixes, min/mean/max certified bound, no-bound count."""
        rows = []
        for t in sorted({len(k) for k in self.entries}):
            es = [e for k, e in self.entries.items() if len(k) == t]
            cert = [e.bound for e in es if e.status == "certified"]
            rows.append(dict(position=t, prefixes=len(es), certified=len(cert),
                             no_bound=sum(e.status == "no bound" for e in es),
                             min=min(cert) if cert else math.nan,
                             mean=float(np.mean(cert)) if cert else math.nan,
                             max=max(cert) if cert else math.nan))
        return rows

    def to_records(self) -> list[dict[str, Any]]:
        """One row per target prefix: the prefix (``"TRIG"`` for the trigger), its position,
        status, certified bound (exact and float), the solver's float bound, the realised
        BOS mass and gap (after :meth:`realise`), constraints, subfamily and reason."""
        return [dict(prefix=self.show_prefix(key), position=len(key), status=e.status,
                     bound=e.bound, exact=e.exact, float_bound=e.float_bound, realised=e.realised,
                     gap=e.gap, constraints=e.constraints, subfamily=e.subfamily,
                     reason=e.reason)
                for key, e in self.entries.items()]

    def lowest(self, n: int = 5) -> list[tuple[tuple[int, ...], Entry]]:
        """The ``n`` certified prefixes with the smallest bound."""
        cert = [(k, e) for k, e in self.entries.items() if e.status == "certified"]
        return sorted(cert, key=lambda item: (item[1].bound, len(item[0]), item[0]))[:n]

    # ------------------------------------------------------------ display
    def _header(self) -> str:
        what = "" if self.kind == "softmax" else f"kind={self.kind} ({self.measure}), "
        return (f"SinkMap({what}eps={self.eps}, {self.task!r}, subfamily={self.subfamily}"
                f"{f'<={self.radius}' if self.subfamily == 'hamming' else ''}): "
                f"{self.count('certified')} certified, {self.count('no bound')} no bound, "
                f"{self.count('uncertified')} uncertified")

    def __repr__(self) -> str:
        lines = [self._header(), "  t  prefixes  certified  no bound   min bound  mean bound"]
        for r in self.by_position():
            lines.append(f"{r['position']:3d}  {r['prefixes']:8d}  {r['certified']:9d}  "
                         f"{r['no_bound']:8d}  {r['min']:10.6f}  {r['mean']:10.6f}")
        return "\n".join(lines)

    def table(self, limit: int | None = 20) -> str:
        """One line per prefix (at most ``limit``): certified bound, BOS mass of the best realised
        accurate model (after :meth:`realise`), the gap between them, status and reason."""
        lines = [f"{'prefix':24s} {'bound':>9s}  {'realised':>9s}  {'gap':>8s}  status / reason"]
        items = list(self.entries.items())[: limit if limit is not None else None]
        for key, e in items:
            real = "" if e.realised is None else f"{e.realised:.6f}"
            gap = "" if e.gap is None else f"{e.gap:.4f}"
            lines.append(f"{self.show_prefix(key):24s} {e.bound:9.6f}  {real:>9s}  {gap:>8s}  "
                         f"{e.status}"
                         f"{': ' + e.reason if e.reason else ''}")
        if limit is not None and len(self.entries) > limit:
            lines.append(f"... {len(self.entries) - limit} more")
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        out = [f"**Sink map** ({self.kind}, {self.measure}), eps = {self.eps}, {self.task!r}: "
               f"{self.count('certified')} certified, {self.count('no bound')} no bound, "
               f"{self.count('uncertified')} uncertified", "",
               "| t | prefixes | certified | no bound | min bound | mean bound |",
               "|---|---|---|---|---|---|"]
        for r in self.by_position():
            out.append(f"| {r['position']} | {r['prefixes']} | {r['certified']} | "
                       f"{r['no_bound']} | {r['min']:.6g} | {r['mean']:.6g} |")
        return "\n".join(out)

    def heatmap(self, ax: Any = None, max_rows: int = 400) -> Any:
        """Draw bounds as a sequence × position image (matplotlib); returns the Axes.

        Rows are the longest prefixes (up to ``max_rows``); blank cells are trigger
        positions or positions not asked for; 0 means "no bound".
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - optional extra
            raise ImportError("heatmap needs matplotlib (pip install sinkproof[plot])") from exc
        keys = set(self.entries)
        rows = [k for k in self.entries if not any(len(o) > len(k) and o[:len(k)] == k
                                                   for o in keys)][:max_rows]
        grid = np.full((len(rows), self.task.T), np.nan)
        for r, k in enumerate(rows):
            for t in range(1, len(k) + 1):
                e = self.entries.get(k[:t])
                if e is not None:
                    grid[r, t - 1] = e.bound
        if ax is None:
            _, ax = plt.subplots(figsize=(1.2 + 0.6 * self.task.T, 1.5 + 0.02 * len(rows)))
        im = ax.imshow(grid, aspect="auto", vmin=0.0, vmax=1.0, cmap="viridis",
                       interpolation="nearest", extent=(0.5, self.task.T + 0.5, len(rows), 0))
        ax.set_xlabel("position t")
        ax.set_ylabel("sequence")
        ax.set_title(f"{self.kind}: certified {self.measure} lower bound, eps={self.eps}")
        if len(rows) <= 40:
            ax.set_yticks(np.arange(len(rows)) + 0.5)
            ax.set_yticklabels([self.show_prefix(k) for k in rows], fontsize=7)
        ax.figure.colorbar(im, ax=ax)
        return ax

    # --------------------------------------------------------- persistence
    def verify(self) -> Any:
        """Re-check :attr:`certificate` with the trusted exact checker; returns its Verdict."""
        return verify(self.certificate)

    def save_certificate(self, path: str | Path) -> None:
        """Write the certificate file that ``sinkproof verify`` checks."""
        write_file(path, json.dumps(self.certificate, indent=1) + "\n", what="certificate")

    def to_dict(self) -> dict[str, Any]:
        return dict(kind="sinkmap", map=self.kind, task=self.task.describe(), eps=str(self.eps),
                    values=None if self.U is None else self.U.tolist(),  # None: no known U
                    subfamily=self.subfamily, radius=self.radius,
                    family=self.family,
                    entries=[dict(prefix=list(k), **e.to_dict()) for k, e in self.entries.items()],
                    certificate=self.certificate)

    def save(self, path: str | Path) -> None:
        """Save as JSON (entries and the certificate); :meth:`load` reads it back."""
        write_file(path, json.dumps(self.to_dict(), allow_nan=True) + "\n", what="sink map")

    @classmethod
    def load(cls, path: str | Path) -> SinkMap:
        """Read a file written by :meth:`save`."""
        try:
            d = json.loads(Path(path).read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not a sink-map JSON file: {exc}") from None
        if not isinstance(d, dict) or d.get("kind") != "sinkmap":
            raise ValueError(f"{path}: not a sink-map file (kind != 'sinkmap')")
        if cls is SinkMap and isinstance(d.get("task"), dict):
            task = task_from_description(d["task"])  # the map's class follows its task
            if not task.has_positions:
                cls = TokenSetSinkMap
        entries = {tuple(e["prefix"]): Entry.from_dict(e) for e in d["entries"]}
        return cls._from_parts(d, entries)

    @classmethod
    def _from_parts(cls, d: dict[str, Any], entries: dict[tuple[int, ...], Entry]) -> SinkMap:
        """The map of a :meth:`save` file's object ``d`` with its ``entries`` read."""
        return cls(task=TriggerTask.from_description(d["task"]), eps=Fraction(d["eps"]),
                   U=(None if d["values"] in (None, "learned")
                      else np.array(d["values"], dtype=float)),
                   entries=entries,
                   certificate=d["certificate"], subfamily=d["subfamily"], radius=d["radius"],
                   family=d["family"], kind=d.get("map", "softmax"))


class TokenSetSinkMap(SinkMap):
    """A :class:`SinkMap` of a task without positional features (the paper's task): keys
    are prefixes of token codes (content ``i``; ``m + i`` the trigger carrying ``c_i``),
    ``U`` is ``None`` and ``values`` says which values the bounds hold for (``"fixed"``:
    ``W_O W_V = I - e_0 e_0^T``; ``"learned"``: every ``W_V, W_O``)."""

    def __init__(self, *args: Any, values: str = "fixed", result: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.values = values
        self.result = result

    def show_prefix(self, key: tuple[int, ...]) -> str:
        m = self.task.m
        return "(" + ", ".join(f"c{c}" if c < m else f"TRIG(c{c - m})" for c in key) + ")"

    def _header(self) -> str:
        what = "" if self.kind == "softmax" else f"kind={self.kind} ({self.measure}), "
        how = "exact hull distances" if self.values == "fixed" else "branch and bound"
        return (f"SinkMap(paper setting, {what}eps={self.eps}, {self.task!r}, "
                f"values={self.values}, {how}): {self.count('certified')} certified, "
                f"{self.count('no bound')} no bound, {self.count('uncertified')} uncertified")

    def __repr__(self) -> str:
        lines = [self._header(),
                 "  t  prefixes  certified   min bound  mean bound   max bound"]
        for r in self.by_position():
            lines.append(f"{r['position']:3d}  {r['prefixes']:8d}  {r['certified']:9d}  "
                         f"{r['min']:10.6f}  {r['mean']:10.6f}  {r['max']:10.6f}")
        return "\n".join(lines)

    def heatmap(self, ax: Any = None, max_rows: int = 400) -> Any:
        raise InputError("a paper-setting sink map has no heat map (its rows are token sets, "
                         "not positions of one sequence): use the table")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "values": self.values}

    @classmethod
    def _from_parts(cls, d: dict[str, Any], entries: dict[tuple[int, ...], Entry]
                    ) -> TokenSetSinkMap:
        return cls(task=task_from_description(d["task"]), eps=Fraction(d["eps"]), U=None,
                   entries=entries, certificate=d["certificate"], subfamily=d["subfamily"],
                   radius=d["radius"], family=d["family"], kind=d.get("map", "softmax"),
                   values=d["values"])


PaperSinkMap = TokenSetSinkMap
"""The paper setting's name for :class:`TokenSetSinkMap`."""
