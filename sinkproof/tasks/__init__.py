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


TASK_OPTIONS: dict[str, tuple[str, ...]] = {
    "trigger": ("p", "T", "content", "positions", "triggers", "k", "seed"),
    "paper": ("n", "L", "grid", "residual"),
}
"""The constructor options of each setting's task that a command line may name (the paper's
content is then the grid ``grid`` names)."""


def task_from_options(setting: str, /, **options: Any) -> Task:
    """The task of ``setting`` built from those of ``options`` its class takes (the others,
    and ``None`` values, are ignored): the one place a setting name becomes a task."""
    if setting not in TASKS:
        raise ValueError(f"unknown task setting {setting!r}; expected one of {', '.join(TASKS)}")
    given = {k: options[k] for k in TASK_OPTIONS[setting] if options.get(k) is not None}
    if setting == "paper" and "grid" in given:
        given["content"] = "grid"
    return TASKS[setting](**given)


__all__ = ["TASKS", "TASK_OPTIONS", "TOKEN_KINDS", "TRIG", "ContinuousContentError", "PaperTask",
           "PrefixBlock", "Task", "TriggerTask", "task_from_description",
           "task_from_options"]
