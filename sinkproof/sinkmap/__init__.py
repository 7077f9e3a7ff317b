"""Sink maps: Theorem 6's logit-sharing SOCP, certified per position (docs/theory.md section 4).

``sink_map(task, eps)`` gives, at every non-trigger position of ``S_T``, a lower
bound on the BOS mass of every eps-accurate single-head softmax model with known
values, whatever its score function, each backed by an exact rational certificate
that :mod:`sinkproof.checker.socp` verifies.  With ``values="learned"`` the bounds hold
for every value map and come from the branch-and-bound engine (:mod:`.learned`, small
instances).  See docs/sinkmap.md.
"""

from __future__ import annotations

from .core import SUBFAMILIES, parse_eps
from .guarded import sink_map
from .learned import LearnedSinkMap, learned_sink_map
from .result import Entry, SinkMap
from .work import sink_map_work

__all__ = ["SUBFAMILIES", "Entry", "LearnedSinkMap", "SinkMap", "learned_sink_map", "parse_eps",
           "sink_map", "sink_map_work"]
