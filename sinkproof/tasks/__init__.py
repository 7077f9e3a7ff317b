"""Tasks: the protocol every layer relies on, and the tasks that implement it.

* :class:`TriggerTask`: our canonical trigger-conditional averaging task.
* :class:`PaperTask`: the paper's own setting (fixed length, one trigger, whole-vector
  targets, continuous or finite content).
"""

from __future__ import annotations

from typing import Any

from .paper import ContinuousContentError, PaperTask
from .protocol import TOKEN_KINDS, PrefixBlock, Task
from .trigger import TRIG, TriggerTask

TASKS: dict[str, Any] = {"trigger": TriggerTask, "paper": PaperTask}
"""Every task class by its ``setting`` name."""


def task_from_description(d: dict[str, Any]) -> Task:
    """Rebuild any registered task from its description (``setting`` picks the class;
    a description without one is a trigger task)."""
    if not isinstance(d, dict):
        raise TypeError("a task description must be a mapping")
    setting = d.get("setting", "trigger")
    if setting not in TASKS:
        raise ValueError(f"unknown task setting {setting!r}; expected one of {', '.join(TASKS)}")
    return TASKS[setting].from_description(d)


__all__ = ["TASKS", "TOKEN_KINDS", "TRIG", "ContinuousContentError", "PaperTask",
           "PrefixBlock", "Task", "TriggerTask", "task_from_description"]
