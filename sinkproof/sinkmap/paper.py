"""Sink maps in the paper's setting: certified least BOS weight per non-trigger position.

The paper's task (one trigger at ``j ∈ 2..L-1``, whole-vector targets, a finite content
set ``c_0..c_{m-1}``) is indexed here by token codes: content ``i`` is ``i``, the
trigger carrying ``c_i`` is ``m + i``.  At a non-trigger position ``t`` the target is 0.

- **Fixed values** (``v_x`` is ``x`` without its BOS coordinate, so ``v_BOS = 0``).  The
  output of one head whose weights lie on the simplex (softmax, sparsemax, entmax-1.5) is
  ``(1 - α_t0) z`` with ``z`` in the hull of the values of the distinct tokens
  ``S_t = {x_1..x_t}``, so error ``<= ε`` forces ``α_t0 >= 1 - ε/d(S_t)``, ``d(S_t)`` the
  distance from 0 to that hull.  The bound of a position is its token set's entry in
  the ``paper-hull-family`` certificate (exact hull distances), which the trusted
  checker re-verifies; nothing is re-derived here.
- **Learned values** (softmax, any ``W_Q, W_K, W_V, W_O``).  Each position's bound is the
  branch-and-bound engine's (:func:`sinkproof.bnb.prove_paper`); the certified
  positions are backed by one ``paper-bnb-learned-values`` certificate, the others are
  "uncertified" (the tree closed no bound within its nodes).  One tree per position:
  small instances only.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb, sqrt
from typing import Any

from ..attention import MAPS
from ..bnb import paper_targets, prove_paper, restrict_paper
from ..checker import verify
from ..convex.family import paper_family_certificate, require_one_layer_finite
from ..errors import InputError, WorkLimitError
from ..exact_numbers import error_level
from ..tasks.paper import PaperTask
from .learned import MAX_NODES, MAX_TARGETS
from .result import Entry, SinkMap

__all__ = ["PaperSinkMap", "paper_prefix_count", "paper_sink_map", "paper_sink_map_work",
           "paper_target_count", "situation_of"]

Situation = tuple[tuple[int, ...], int | None]


def situation_of(task: PaperTask, prefix: tuple[int, ...]) -> Situation:
    """The token set ``S_t`` of a prefix (token codes): ``(sorted content indices, the
    trigger's content index or None)``, the key of a ``paper-hull-family`` entry."""
    m = task.m
    content = tuple(sorted({c for c in prefix if c < m}))
    trigger = next((c - m for c in prefix if c >= m), None)
    return content, trigger


def paper_target_count(task: PaperTask) -> int:
    """Non-trigger positions of the family, counted (no enumeration): at length ``t``,
    ``m^t`` trigger-free prefixes (only when ``t <= L-2``, the trigger still to come) and
    ``(t-2) m^t`` with the trigger at ``2..t-1``."""
    m, L = task.m, task.L
    return sum(m**t * (int(t <= L - 2) + max(t - 2, 0)) for t in range(1, L))


def paper_prefix_count(task: PaperTask) -> int:
    """Every prefix ``x_1..x_t`` (``1 <= t <= L-1``) of the family, counted: ``m^t``
    trigger-free (``t <= L-2``) plus ``(t-1) m^t`` with the trigger at ``2..t``."""
    m, L = task.m, task.L
    return sum(m**t * (int(t <= L - 2) + max(t - 1, 0)) for t in range(1, L))


def paper_sink_map_work(task: PaperTask, values: str = "fixed") -> int:
    """Work units of :func:`paper_sink_map`, counted before it starts: with fixed values
    the token sets the family certificate solves (``m + 1`` units each: one hull program
    with at most ``m + 1`` points) plus one unit per target; with learned values tree
    nodes times the family's prefixes (each node's programs range over them) per target."""
    require_one_layer_finite(task, "a paper-setting sink map")
    if values == "learned":
        return paper_target_count(task) * MAX_NODES * paper_prefix_count(task)
    sets = sum(comb(task.m, s) for s in range(1, min(task.m, task.L - 2) + 1))
    return sets * (task.m + 1) ** 2 + paper_target_count(task)


class PaperSinkMap(SinkMap):
    """A :class:`SinkMap` of the paper's task: keys are prefixes of token codes (content
    ``i``; ``m + i`` the trigger carrying ``c_i``), ``U`` is ``None`` and ``values`` says
    which values the bounds hold for (``"fixed"``: ``W_O W_V = I - e_0 e_0^T``;
    ``"learned"``: every ``W_V, W_O``)."""

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
                    ) -> PaperSinkMap:
        return cls(task=PaperTask.from_description(d["task"]), eps=Fraction(d["eps"]), U=None,
                   entries=entries, certificate=d["certificate"], subfamily=d["subfamily"],
                   radius=d["radius"], family=d["family"], kind=d.get("map", "softmax"),
                   values=d["values"])


def _entries_fixed(task: PaperTask, eps: Fraction) -> tuple[dict[tuple[int, ...], Entry],
                                                           dict[str, Any]]:
    """Every target's bound, read off the verified ``paper-hull-family`` certificate."""
    cert = paper_family_certificate(task, eps)
    data = cert.to_dict()
    verdict = verify(data)
    if not verdict.ok:  # pragma: no cover - the producer and the checker disagree
        raise RuntimeError(f"the paper-hull-family certificate failed its check: "
                           f"{verdict.message}")
    by_key = {s.key: s for s in cert.situations}
    entries: dict[tuple[int, ...], Entry] = {}
    for prefix in paper_targets(task):
        s = by_key[situation_of(task, prefix)]
        points = len(s.key[0]) + (s.key[1] is not None)
        exact_d = sqrt(float(s.d_sq)) if s.d_sq is not None else float(s.d)
        if s.bound > 0:
            entries[prefix] = Entry("certified", float(s.bound), s.bound,
                                    1 - float(eps) / exact_d, "", points, "hull")
        else:
            entries[prefix] = Entry("no bound", 0.0, None, 1 - float(eps) / exact_d,
                                    f"vacuous: eps >= d(S_t) = {float(s.d):.6g}", points,
                                    "hull")
    return entries, data


def _entries_learned(task: PaperTask, eps: Fraction, max_targets: int, max_nodes: int,
                     time_limit: float, progress: bool | None
                     ) -> tuple[dict[tuple[int, ...], Entry], dict[str, Any], Any]:
    """Every target's engine bound; the certified ones backed by one certificate."""
    targets = paper_targets(task)
    if len(targets) > max_targets:
        raise WorkLimitError(f"not started: values='learned' grows a branch-and-bound tree "
                             f"per position: {len(targets)} positions exceed "
                             f"max_targets={max_targets} (a smaller --L or --grid)")
    result = prove_paper(task, eps, targets=targets, max_nodes=max_nodes,
                         time_limit=time_limit, progress=progress)
    certified = [o for o in result.targets if o.certified is not None]
    backed = restrict_paper(result, certified) if certified else None
    cert = backed.certificate if backed is not None and backed.certificate else {}
    entries: dict[tuple[int, ...], Entry] = {}
    for o in result.targets:
        if o.certified is not None and cert:
            entries[o.target] = Entry("certified", float(o.certified), o.certified,
                                      o.tree.bos_bound, "", len(o.leaves), "bnb")
        else:
            why = o.skipped or (f"tree stopped ({o.tree.status}) at {o.tree.nodes} nodes "
                                "without a certified bound")
            entries[o.target] = Entry("uncertified", 0.0, None, o.tree.bos_bound, why, 0,
                                      "bnb")
    return entries, cert, result


def paper_sink_map(task: PaperTask, eps: Any, values: str = "fixed", kind: str = "softmax",
                   *, max_targets: int = MAX_TARGETS, max_nodes: int = MAX_NODES,
                   time_limit: float = 60.0, progress: bool | None = None) -> PaperSinkMap:
    """Per non-trigger position of ``task`` (a one-layer :class:`PaperTask` with a finite
    content set): the certified least BOS weight of every one-head model of map ``kind``
    with error ``<= eps`` there (``values="fixed"``: any map on the simplex, from the
    hull distances; ``values="learned"``: softmax, from the engine, at most
    ``max_targets`` positions)."""
    require_one_layer_finite(task, "a paper-setting sink map")
    eps_q = error_level(eps, "eps", positive=True)
    if values not in ("fixed", "learned"):
        raise InputError(f"values: the paper setting's sink map takes 'fixed' or 'learned', "
                         f"got {values!r}")
    if kind not in MAPS:
        raise InputError(f"kind: unknown attention map {kind!r}")
    if values == "learned" and kind != "softmax":
        raise InputError(f"kind {kind!r}: learned values are bounded for softmax only")
    if not MAPS[kind].properties.on_simplex:
        raise InputError(f"kind {kind!r}: the paper setting's hull bound holds for maps whose "
                         "weights lie on the simplex (softmax, sparsemax, entmax15)")
    result = None
    if values == "fixed":
        entries, cert = _entries_fixed(task, eps_q)
        how = "hull"
    else:
        entries, cert, result = _entries_learned(task, eps_q, max_targets, max_nodes,
                                                 time_limit, progress)
        how = "bnb"
    return PaperSinkMap(task=task, eps=eps_q, U=None, entries=entries, certificate=cert,
                        subfamily=how, radius=0, family="paper", kind=kind, values=values,
                        result=result)
