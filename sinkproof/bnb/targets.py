"""Named sets of target prefixes (the last position of each prefix is the target)."""

from __future__ import annotations

from ..task import TRIG, TriggerTask
from .relaxation import family_prefixes

TARGET_SETS = ("homogeneous", "nontrigger", "before_trigger", "after_trigger", "trigger", "all")


def target_prefixes(task: TriggerTask, at: str) -> list[tuple[int, ...]]:
    """The prefixes whose last position is in the named set ``at`` (:data:`TARGET_SETS`)."""
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
