"""Sink maps of every attention map side by side: per map and position, the least certified bound.

:func:`kinds_table` runs :func:`sinkproof.sink_map` once per map (``kind=``) and keeps,
for each position ``t``, how many prefixes are certified and their least bound, and over
all positions the greatest and least bound and the "no bound" positions with their
evidence (a verified ray, an exact zero hull combination, a sink-free witness).
``sinkproof sinkmap --kind all`` prints it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..attention import MAPS
from ..tables import Tabular
from ..task import TriggerTask
from .core import sink_map
from .kinds import sink_measure
from .result import SinkMap

__all__ = ["KindsTable", "kinds_table"]

EVIDENCE = {"hull": "0 in hull", "gate split": "0 in hull", "witness": "witness"}
"""How a map's "no bound" positions are shown, by its route (logit sharing: a verified ray)."""


@dataclass(frozen=True)
class KindsTable(Tabular):
    """``maps``: map name -> its :class:`~sinkproof.sinkmap.result.SinkMap` on ``task``."""

    task: TriggerTask
    eps: Any
    maps: dict[str, SinkMap]

    def summary(self, name: str) -> dict[str, Any]:
        """One map's row: measure, route, per position ``t`` (certified, prefixes, least
        bound), greatest and least certified bound, "no bound" and uncertified counts."""
        smap = self.maps[name]
        m = sink_measure(name)
        certified = [e.bound for e in smap.entries.values() if e.status == "certified"]
        per_t = {r["position"]: (r["certified"], r["prefixes"],
                                 None if r["certified"] == 0 else r["min"])
                 for r in smap.by_position()}
        none = smap.count("no bound")
        evidence = EVIDENCE.get(smap.subfamily, "ray")
        return {"map": name, "measure": m.name, "route": m.route, "positions": per_t,
                "greatest": max(certified) if certified else None,
                "least": min(certified) if certified else None,
                "no_bound": none, "evidence": evidence if none else "",
                "uncertified": smap.count("uncertified")}

    def to_records(self) -> list[dict[str, Any]]:
        """One row per (map, position ``t``): measure, route, prefixes, certified, least bound."""
        rows = []
        for name in self.maps:
            s = self.summary(name)
            for t, (c, n, low) in s["positions"].items():
                rows.append({"map": name, "measure": s["measure"], "route": s["route"],
                             "position": t, "prefixes": n, "certified": c, "least_bound": low})
        return rows

    def to_json(self) -> list[dict[str, Any]]:
        """Per map: measure, route, greatest/least bound, counts and the per-position cells."""
        out = []
        for name in self.maps:
            s = self.summary(name)
            out.append({**{k: v for k, v in s.items() if k != "positions"},
                        "positions": [{"t": t, "certified": c, "prefixes": n, "least": low}
                                      for t, (c, n, low) in s["positions"].items()]})
        return out

    def __repr__(self) -> str:
        T = self.task.T
        w = max([14, *(len(name) + 1 for name in self.maps)])
        head = (f"{'map':{w}s}{'measure':11s}{'route':14s}"
                + "".join(f"{'t=' + str(t):>17s}" for t in range(1, T + 1))
                + f"{'greatest':>10s}{'least':>8s}  no bound")
        lines = [f"per-position sink maps on {self.task!r}, eps={self.eps}, one head, fixed "
                 f"values (cell: least certified bound, certified/prefixes)", head,
                 "-" * len(head)]
        for name in self.maps:
            s = self.summary(name)
            cells = []
            for t in range(1, T + 1):
                c, n, low = s["positions"].get(t, (0, 0, None))
                cells.append(f"{('-' if low is None else f'{low:.4f}') + f' {c}/{n}':>17s}")
            g = "-" if s["greatest"] is None else f"{s['greatest']:.4f}"
            lo = "-" if s["least"] is None else f"{s['least']:.4f}"
            parts = [f"{s['no_bound']} ({s['evidence']})"] if s["no_bound"] else []
            if s["uncertified"]:
                parts.append(f"{s['uncertified']} uncertified")
            none = ", ".join(parts) or "0"
            lines.append(f"{name:{w}s}{s['measure']:11s}{s['route']:14s}{''.join(cells)}"
                         f"{g:>10s}{lo:>8s}  {none}")
        return "\n".join(lines)


def kinds_table(task: TriggerTask, eps: Any, maps: Sequence[str] | None = None,
                positions: Any = None) -> KindsTable:
    """The sink map of each of ``maps`` (default: all of MAPS) on ``task`` at ``eps``, fixed
    values."""
    names = tuple(MAPS) if maps is None else tuple(maps)
    for n in names:
        sink_measure(n)
    out = {n: sink_map(task, eps, positions=positions, kind=n) for n in names}
    first = next(iter(out.values()))
    return KindsTable(task, first.eps, out)
