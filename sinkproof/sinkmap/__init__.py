"""Sink maps: Theorem 6's logit-sharing SOCP, certified per position (docs/theory.md section 4).

``sink_map(task, eps)`` gives, at every non-trigger position of ``S_T``, a lower
bound on the BOS mass of every eps-accurate single-head softmax model with known
values, whatever its score function, each backed by an exact rational certificate
that :mod:`sinkproof.checker.rules.dual` verifies.  With ``values="learned"`` the bounds hold
for every value map and come from the branch-and-bound engine (:mod:`.learned`, small
instances).  A task without positional features (the paper's setting) is read by token
sets (:class:`TokenSetSinkMap`).  See docs/sinkmap.md.
"""

from __future__ import annotations

from .core import SUBFAMILIES, parse_eps
from .guarded import sink_map
from .learned import LearnedSinkMap, learned_sink_map
from .result import Entry, PaperSinkMap, SinkMap, TokenSetSinkMap
from .routes import situation_of, token_set_sink_map
from .work import (
    paper_prefix_count,
    paper_sink_map_work,
    paper_target_count,
    sink_map_work,
    token_set_work,
)

paper_sink_map = token_set_sink_map
"""The paper setting's name for :func:`token_set_sink_map` (``sink_map`` on a paper task
does the same)."""

__all__ = ["SUBFAMILIES", "Entry", "LearnedSinkMap", "PaperSinkMap", "SinkMap",
           "TokenSetSinkMap", "learned_sink_map", "paper_prefix_count", "paper_sink_map",
           "paper_sink_map_work", "paper_target_count", "parse_eps", "sink_map",
           "sink_map_work", "situation_of", "token_set_sink_map", "token_set_work"]
