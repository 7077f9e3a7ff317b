"""Compatibility name: the trigger task lives in :mod:`sinkproof.tasks.trigger`."""

from __future__ import annotations

from .tasks.protocol import PrefixBlock
from .tasks.trigger import (
    CONTENT_SCHEMES,
    POSITION_SCHEMES,
    TRIG,
    TRIGGER_FAMILIES,
    TriggerTask,
    inverse_position_ratio,
    show_sequence,
)

__all__ = [
    "CONTENT_SCHEMES", "POSITION_SCHEMES", "TRIG", "TRIGGER_FAMILIES", "PrefixBlock",
    "TriggerTask", "inverse_position_ratio", "show_sequence",
]
