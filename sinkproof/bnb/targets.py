"""Named sets of target prefixes (the last position of each prefix is the target)."""

from __future__ import annotations

from typing import Any

from ..task import TRIG, TriggerTask
from ..tasks.protocol import require
from .relaxation import family_prefixes

TARGET_SETS = ("homogeneous", "nontrigger", "before_trigger", "after_trigger", "trigger", "all")


def is_trigger_token(task: Any, token: int) -> bool:
    """Whether ``token`` (a user token with positions, else a code) is the trigger."""
    return token == TRIG if task.has_positions else task.token_kind(token) == "trigger"


def nontrigger_targets(task: Any, prefixes: list[tuple[int, ...]] | None = None
                       ) -> list[tuple[int, ...]]:
    """The non-trigger positions ``t >= 1`` of the family (prefixes not ending at the
    trigger), from ``prefixes`` (default: :func:`family_prefixes`)."""
    rows = family_prefixes(task) if prefixes is None else prefixes
    return [p for p in rows if not is_trigger_token(task, p[-1])]


def target_prefixes(task: TriggerTask, at: str) -> list[tuple[int, ...]]:
    """The prefixes whose last position is in the named set ``at`` (:data:`TARGET_SETS`)."""
    if not task.has_positions and at == "nontrigger":
        return nontrigger_targets(task)
    require(task, "has_positions", f"the target set {at!r}")
    if at not in TARGET_SETS:
        raise ValueError(f"unknown target set {at!r}; expected one of {', '.join(TARGET_SETS)}")
    out = []
    for pre in family_prefixes(task):
        last, before = pre[-1], pre[:-1]
        keep = {
            "homogeneous": last != TRIG and all(x == last for x in pre),
            "nontrigger": last != TRIG,
            "before_trigger": TRIG not in pre,
            "after_trigger": last != TRIG and TRIG in before,
            "trigger": last == TRIG,
            "all": True,
        }[at]
        if keep:
            out.append(pre)
    return out
