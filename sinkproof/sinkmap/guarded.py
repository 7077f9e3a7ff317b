"""The public :func:`sink_map`: :func:`sinkproof.sinkmap.core.sink_map` behind its work
estimate (:func:`sinkproof.sinkmap.work.estimate`), so that the Python API refuses
runaway work as ``sinkproof sinkmap --max-work`` does, before any program is built."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterable, Sequence
from typing import Any

from .._validate import as_int, choice
from ..errors import SINK_MAP_MAX_WORK
from ..task import TriggerTask
from ..tasks.protocol import Task, require
from ..work import refuse_beyond
from . import core
from .result import SinkMap
from .work import estimate, token_set_work


@functools.wraps(core.sink_map)
def sink_map(task: TriggerTask, eps: Any, values: Any = "fixed",
             positions: Iterable[tuple[Sequence[int], int]] | None = None,
             family: Iterable[Sequence[int]] | None = None, *,
             max_work: int | None = None, **options: Any) -> SinkMap:
    if isinstance(task, Task) and not task.has_positions:  # read by token sets
        refuse_beyond("work units of the sink map",
                      token_set_work(task, values if isinstance(values, str) else "fixed"),
                      max_work, SINK_MAP_MAX_WORK)
        return core.sink_map(task, eps, values, positions, family, **options)
    require(task, "has_positions", "a logit-sharing sink map")
    positions = None if positions is None else list(positions)
    refuse_beyond("work units of the sink map", estimate(
        task, values, choice("subfamily", options.get("subfamily", "auto"), core.SUBFAMILIES),
        as_int("radius", options.get("radius", 2), minimum=0),
        None if positions is None else [t for _, t in positions],
        kind=options.get("kind", "softmax"), eps=eps), max_work, SINK_MAP_MAX_WORK)
    return core.sink_map(task, eps, values, positions, family, **options)


_core_signature = inspect.signature(core.sink_map)
sink_map.__signature__ = _core_signature.replace(  # type: ignore[attr-defined]
    parameters=[*_core_signature.parameters.values(),
                inspect.Parameter("max_work", inspect.Parameter.KEYWORD_ONLY, default=None,
                                  annotation="int | None")])
"""``help(sp.sink_map)`` and ``inspect`` show core's parameters and ``max_work``."""
sink_map.__doc__ = (core.sink_map.__doc__ or "") + """
    ``max_work``: the most work units (:func:`sinkproof.sinkmap.work.estimate`, the count
    of ``sinkproof sinkmap --max-work``; default
    :data:`~sinkproof.errors.SINK_MAP_MAX_WORK`) before it refuses to start.
"""
