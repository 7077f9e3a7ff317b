"""How much a sink map costs, counted before it starts (closed forms, nothing enumerated).

The cost of a sink map is its second-order-cone programs: one per target prefix up to the
value symmetries of the content set, each with one cone constraint per kept prefix of its
block.  The unit is one cone constraint of one program (a ``(p+1)``-dimensional cone);
every target also costs its symmetry images (one unit each) to find its orbit.

Maps bounded by the hull argument (:mod:`.routes`) cost one small program per token set
that occurs (at most ``Σ_{i<=T} C(k+1, i)``), counted as ``k + 1`` units each, plus one
unit per target; maps answered by a sink-free witness cost the checker's re-run of the
head on every prefix of the family, one unit per prefix and key; a gated head costs the
hull and one softmax sink map per gate level (at most the starting grid or
:data:`~sinkproof.sinkmap.gated.MAX_LEVELS`, whichever is larger).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb
from typing import Any

import numpy as np

from ..convex.family import require_token_sets
from ..errors import SINK_MAP_MAX_WORK as MAX_WORK
from ..task import TriggerTask
from ..work import BEYOND, power
from . import learned
from .core import AUTO_FULL_PREFIXES, known_values, parse_eps
from .gated import MAX_LEVELS, gate_grid
from .kinds import sink_measure
from .symmetry import token_symmetries

GATED_EPS = "1/1000000"
"""The eps a gated head's estimate assumes when none is given (more levels than most)."""

__all__ = ["GATED_EPS", "MAX_WORK", "block_prefixes", "estimate", "kept_prefixes", "route_work",
           "sink_map_work"]



def block_prefixes(task: TriggerTask, t: int, with_trigger: bool = True) -> int:
    """Key prefixes ``x_1..x_{t-1}`` of one block of position ``t`` (with or without those
    holding a trigger)."""
    k, n = task.k, t - 1
    if not with_trigger:
        return k**n
    if task.triggers == "multi":
        return (k + 1) ** n
    return k**n + n * k ** max(n - 1, 0)


def kept_prefixes(task: TriggerTask, t: int, subfamily: str, radius: int,
                  with_trigger: bool = True) -> int:
    """Upper bound on the cone constraints of one program at position ``t``."""
    full = block_prefixes(task, t, with_trigger)
    if subfamily == "full" or (subfamily == "auto" and full <= AUTO_FULL_PREFIXES):
        return full
    if subfamily == "hamming":
        n = t - 1
        return min(full, sum(comb(n, h) * task.k**h for h in range(min(radius, n) + 1)))
    return min(full, (task.k + 1) * 2 ** (t - 1))


def sink_map_work(task: TriggerTask, symmetries: int, subfamily: str = "auto",
                  radius: int = 2, lengths: Sequence[int] | None = None,
                  trigger_matters: bool = True) -> int:
    """Work units of a sink map (module docstring), an upper bound: over every target length
    ``t`` (all non-trigger positions of ``S_T``, or the lengths of ``lengths``, one per
    target), the programs (over ``S_T``: targets / ``symmetries``, at least one; listed
    targets one each) times their constraints, plus one unit per symmetry image of every
    target.  ``trigger_matters=False`` (the trigger's value is zero): a target without a
    trigger keeps no prefix holding one."""
    symmetries = max(int(symmetries), 1)
    # (t, target holds a trigger) -> number of targets
    counts: dict[tuple[int, bool], int] = {}
    if lengths is None:
        for t in range(1, task.T + 1):
            plain = task.k**t
            counts[(t, False)] = plain
            counts[(t, True)] = task.k * block_prefixes(task, t) - plain
    else:
        for t in lengths:  # a listed target may hold a trigger: count the larger block
            counts[(t, True)] = counts.get((t, True), 0) + 1
    work = 0
    for (t, holds_trigger), targets in counts.items():
        if targets == 0:
            continue
        programs = targets if lengths is not None else max(-(-targets // symmetries), 1)
        kept = kept_prefixes(task, t, subfamily, radius, holds_trigger or trigger_matters)
        work += programs * kept + targets * symmetries
    return work


def _targets(task: TriggerTask, lengths: Sequence[int] | None) -> int:
    if lengths is not None:
        return len(lengths)
    return sum(task.k * block_prefixes(task, t) for t in range(1, task.T + 1))


def route_work(task: TriggerTask, route: str, lengths: Sequence[int] | None = None) -> int:
    """Work units of the ``"hull"`` or ``"witness"`` route (module docstring)."""
    if route == "hull":
        sets = sum(comb(task.k + 1, i) for i in range(1, min(task.T, task.k + 1) + 1))
        return sets * (task.k + 1) + _targets(task, lengths)
    prefixes = sum(task.k * block_prefixes(task, t) for t in range(1, task.T + 1))
    return prefixes * (task.T + 1)


def estimate(task: TriggerTask, values: object = "fixed", subfamily: str = "auto",
             radius: int = 2, lengths: Sequence[int] | None = None,
             kind: str = "softmax", eps: object = None) -> int:
    """:func:`sink_map_work` of ``sink_map(task, eps, values, ...)``: the value symmetries
    and whether the trigger's value is zero are read off the values (no program built).
    With ``values="learned"`` (the branch-and-bound route): tree nodes times the family's
    prefixes (each node's programs range over them), for at most
    :data:`~sinkproof.sinkmap.learned.MAX_TARGETS` targets.  ``kind``: the attention map
    (:func:`route_work` for the maps not bounded by logit sharing; a gated head: the hull
    and a softmax map per gate level at ``eps``, default :data:`GATED_EPS`).  A task
    without positional features: :func:`token_set_work`."""
    if not task.has_positions:  # read by token sets (the sink map's own dispatch)
        return token_set_work(task, values)  # type: ignore[arg-type]
    if beyond_every_limit(task.k, task.T):
        return BEYOND
    route = sink_measure(kind).route
    if route == "gate split":
        levels = max(len(gate_grid(parse_eps(GATED_EPS if eps is None else eps))), MAX_LEVELS)
        return route_work(task, "hull", lengths) + levels * estimate(
            task, values, subfamily, radius, lengths)
    if route != "logit sharing":
        return route_work(task, route, lengths)
    if isinstance(values, str) and values == "learned":
        targets = len(lengths) if lengths is not None else learned.MAX_TARGETS
        return min(targets, learned.MAX_TARGETS) * learned.MAX_NODES * task.n_sequences
    V = task.token_table @ known_values(task, values).U.T
    return sink_map_work(task, len(token_symmetries(task, V)), subfamily, radius, lengths,
                         trigger_matters=bool(np.any(V[task.trig_code] != 0)))


def beyond_every_limit(tokens: int, length: int) -> bool:
    """Whether a family of sequences of up to ``length`` tokens from ``tokens`` content
    tokens has :data:`~sinkproof.work.BEYOND` targets or more (a sink map has at least one
    target per length and ``tokens ** length`` at the longest), decided without the loop
    over lengths or the huge powers the exact counts would build."""
    return length >= BEYOND or length > 10**6 or power(tokens, length) >= BEYOND


def paper_target_count(task: Any) -> int:
    """Non-trigger positions of the family, counted (no enumeration): at length ``t``,
    ``m^t`` trigger-free prefixes (only when ``t <= L-2``, the trigger still to come) and
    ``(t-2) m^t`` with the trigger at ``2..t-1``."""
    m, L = task.m, task.L
    return sum(m**t * (int(t <= L - 2) + max(t - 2, 0)) for t in range(1, L))


def paper_prefix_count(task: Any) -> int:
    """Every prefix ``x_1..x_t`` (``1 <= t <= L-1``) of the family, counted: ``m^t``
    trigger-free (``t <= L-2``) plus ``(t-1) m^t`` with the trigger at ``2..t``."""
    m, L = task.m, task.L
    return sum(m**t * (int(t <= L - 2) + max(t - 1, 0)) for t in range(1, L))


def token_set_work(task: Any, values: str = "fixed") -> int:
    """Work units of :func:`~sinkproof.sinkmap.routes.token_set_sink_map`, counted before
    it starts: with fixed values
    the token sets the family certificate solves (``m + 1`` units each: one hull program
    with at most ``m + 1`` points) plus one unit per target; with learned values tree
    nodes times the family's prefixes (each node's programs range over them) per target."""
    require_token_sets(task, "a sink map")
    if beyond_every_limit(task.m, task.L - 1):
        return BEYOND
    if values == "learned":
        return paper_target_count(task) * learned.MAX_NODES * paper_prefix_count(task)
    sets = sum(comb(task.m, s) for s in range(1, min(task.m, task.L - 2) + 1))
    return sets * (task.m + 1) ** 2 + paper_target_count(task)


paper_sink_map_work = token_set_work
"""The paper setting's name for :func:`token_set_work`."""
