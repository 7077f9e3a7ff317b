"""``sink_map(task, eps, values="learned")``: certified learned-value bounds per position.

With learned values Theorem 6's constraints are bilinear (weights × values), so each
position's bound comes from the branch-and-bound engine (:func:`sinkproof.bnb.prove`):
the least BOS mass of any single softmax head whose values are any vector per token
kind, whose scores are any function of the input features, and whose error is
``<= eps`` on all of ``S_T``.  One ``bnb-learned-values`` certificate holds the trees of
every certified position; the rest are "uncertified" (the tree's budget ran out).  The
engine grows a tree per position, so the map is for small instances: more than
``max_targets`` positions is refused before any work.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

from .._validate import as_int
from ..bnb import prove
from ..bnb.api import restrict
from ..bnb.targets import target_prefixes
from ..convex.values import check_eps
from ..task import TriggerTask
from .result import Entry, SinkMap

MAX_TARGETS = 32
"""Most target positions a learned-value sink map grows trees for by default."""
MAX_NODES = 20
"""Nodes per target tree (the engine's ``max_nodes``)."""


class LearnedSinkMap(SinkMap):
    """A :class:`SinkMap` whose bounds hold for every value map (``U`` is ``None``), backed by
    a ``bnb-learned-values`` certificate; ``result`` is the engine's run."""

    def __init__(self, *args: Any, result: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.result = result

    def _header(self) -> str:
        return (f"SinkMap(eps={self.eps}, {self.task!r}, values=learned, branch and bound): "
                f"{self.count('certified')} certified, {self.count('uncertified')} uncertified")

    def why(self, sequence: Any, position: int, n: int = 5) -> list[tuple[tuple[int, ...], float]]:
        """The constraint prefixes of the entry's tree leaves, each with the largest ``s_i``
        it carries in a leaf (empty where there is no tree)."""
        key = [int(c) for c in list(sequence)[:position]]
        tree = next((t for t in self.certificate.get("data", {}).get("trees", [])
                     if t["target"] == key), None)
        if tree is None:
            return []
        best: dict[tuple[int, ...], float] = {}
        stack = [tree["root"]]
        while stack:
            node = stack.pop()
            if "leaf" in node:
                for prefix, s in zip(node["leaf"]["constraints"], node["leaf"]["s"]):
                    w = float(Fraction(s))
                    best[tuple(prefix)] = max(best.get(tuple(prefix), 0.0), w)
            else:
                stack.extend((node["below"], node["above"]))
        return sorted(best.items(), key=lambda r: -r[1])[:n]

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "values": "learned"}


def _targets(task: TriggerTask, positions: Any) -> list[tuple[int, ...]]:
    """The non-trigger target prefixes (user tokens), each once, in order."""
    if positions is None:
        return target_prefixes(task, "nontrigger")
    if isinstance(positions, (str, bytes)) or not isinstance(positions, Iterable):
        raise TypeError("positions must be a list of (sequence, position) pairs")
    out: dict[tuple[int, ...], None] = {}
    for item in positions:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(f"each position must be a (sequence, position) pair, got {item!r}")
        seq, pos = item
        task.encode(seq)  # validates the tokens
        t = as_int("position", pos, minimum=1)
        if t > len(seq):
            raise ValueError(f"position {t} is past the end of sequence {list(seq)}")
        out[tuple(int(x) for x in seq[:t])] = None
    return [pre for pre in out if pre[-1] != -1]


def learned_sink_map(task: TriggerTask, eps: Any,
                     positions: Iterable[tuple[Sequence[int], int]] | None = None,
                     family: Iterable[Sequence[int]] | None = None, *,
                     max_targets: int = MAX_TARGETS, max_nodes: int = MAX_NODES,
                     time_limit: float = 60.0, progress: bool | None = None) -> LearnedSinkMap:
    """Certified least BOS mass of any eps-accurate one-head softmax model with learned
    values, per non-trigger position of ``S_T`` (or each of ``positions``)."""
    eps_q = check_eps(eps)
    if eps_q <= 0:
        raise ValueError(f"eps must be > 0, got {eps_q}")
    if family is not None:
        raise ValueError("values='learned': the engine needs the error hypothesis on all of "
                         "S_T (family=None)")
    targets = _targets(task, positions)
    if not targets:
        raise ValueError("values='learned' bounds non-trigger positions only; none was given")
    if len(targets) > max_targets:
        raise ValueError(f"values='learned' grows a branch-and-bound tree per position: "
                         f"{len(targets)} positions exceed max_targets={max_targets}; pass "
                         f"positions=[(sequence, position), ...] (CLI: --at SEQ:POS) or call "
                         f"sinkproof.sinkmap.learned_sink_map(..., max_targets=N)")
    result = prove(task, eps=eps_q, targets=targets, values="learned", max_nodes=max_nodes,
                   time_limit=time_limit, progress=progress)
    certified = [o for o in result.targets if o.certified is not None]
    backed = restrict(result, certified) if certified else None
    entries: dict[tuple[int, ...], Entry] = {}
    for target in targets:
        outcome = next((o for o in result.targets if o.target == target), None)
        tree = outcome.tree if outcome is not None else None
        if outcome is not None and outcome.certified is not None and backed is not None:
            n_leaves = len(outcome.leaves)
            entries[target] = Entry("certified", float(outcome.certified), outcome.certified,
                                    tree.bos_bound, "", n_leaves, "bnb")
        else:
            why = ("budget spent before this position's tree" if tree is None else
                   f"tree stopped ({tree.status}) at {tree.nodes} nodes without a "
                   f"certified bound")
            entries[target] = Entry("uncertified", 0.0, None,
                                    0.0 if tree is None else tree.bos_bound, why, 0, "bnb")
    cert = backed.certificate if backed is not None else {}
    return LearnedSinkMap(task=task, eps=eps_q, U=None, entries=entries, certificate=cert,
                          subfamily="bnb", radius=0, family="S_T", result=result)
