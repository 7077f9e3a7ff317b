"""Attention variants: the four sink questions answered for every map, each answer checked.

- :func:`build_table` / :class:`VariantsTable`: the table (``sinkproof variants``);
  :func:`cell`: one of its cells (one map, one question), computing only what it needs;
- :func:`construction` / :func:`verify_construction`: one head per map, verified exactly or
  with outward intervals on the whole family (any task: the setting is the task's data);
- :func:`norm_lower_bound`: the certified norm price of the maps that cannot reach zero error.

The package is callable as :func:`build_table`: ``sp.variants(task)``.  Names load on
first use, so ``sinkproof variants --help`` reads :data:`QUESTIONS` without
the numerical layers.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .._callable import make_callable
from .questions import QUESTIONS

_LAZY: dict[str, str] = {
    "Construction": "constructions", "construction": "constructions",
    "NORM_PRICE_MAPS": "normprice", "norm_lower_bound": "normprice",
    "Cell": "table", "VariantsTable": "table", "build_table": "table",
    "default_task": "table", "cell": "table",
    "ConstructionCheck": "verify", "verify_construction": "verify",
    "SandwichRow": "sandwich", "sandwich": "sandwich",
    "StackConstruction": "constructions", "TABLE_TASKS": "table",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = ["QUESTIONS", *_LAZY]

make_callable(__name__, "build_table")
