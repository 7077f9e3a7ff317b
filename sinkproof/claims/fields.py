"""Reading the sections and fields of a claim file: one-line errors for a missing section,
a section that is not a table, or an unknown field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def section(data: Mapping[str, Any], name: str, required: bool = True) -> dict[str, Any]:
    """The table ``[name]`` of a claim (``{}`` when optional and absent)."""
    if name not in data:
        if required:
            raise ValueError(f"claim lacks the [{name}] section")
        return {}
    value = data[name]
    if not isinstance(value, Mapping):
        raise TypeError(f"[{name}] must be a table of fields, got {type(value).__name__}")
    return dict(value)


def no_unknown(name: str, d: Mapping[str, Any], allowed: set[str]) -> None:
    """Raise naming the first fields of ``[name]`` that are not in ``allowed``."""
    unknown = sorted(set(d) - allowed)
    if unknown:
        raise ValueError(f"unknown field{'s' if len(unknown) > 1 else ''} in [{name}]: "
                         f"{', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})")
