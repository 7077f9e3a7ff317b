"""The one written syntax of a token sequence, shared by the CLI and claim files.

A sequence after BOS is written as its tokens separated by commas: a content index
``0, 1, ...`` or ``T`` for the trigger (``TRIG``, ``TRIGGER`` and ``-1`` are read as
the trigger too, in any case), e.g. ``0,1,T,2``.  A claim file may give the same tokens
as a list (``[0, 1, "T", 2]``) or as that text.  Internally the trigger is
:data:`TRIG` ``= -1`` (``sp.TRIG``).  This module imports only the standard library.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

TRIG: int = -1
"""Marker of the trigger token in a user-facing sequence."""

TRIGGER_NAMES = ("T", "TRIG", "TRIGGER")
"""How the trigger may be written (any case)."""

SYNTAX = "content indices and T for the trigger, comma-separated (e.g. 0,1,T,2)"
"""The syntax in words, for help texts and error messages."""


def parse_token(value: Any, name: str = "token") -> int:
    """One token: a content index ``>= 0`` or the trigger (``T``/``TRIG``/``-1``) as
    :data:`TRIG`; text or an integer.  A ValueError/TypeError names ``name`` and the token."""
    if isinstance(value, str):
        text = value.strip()
        if text.upper() in TRIGGER_NAMES:
            return TRIG
        if text.lstrip("+-").isdigit() and text.isascii():
            value = int(text)
        else:
            raise ValueError(f"{name}: {value!r} is neither a content index nor T (the "
                             "trigger)")
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: {value!r} is neither a content index nor T (the trigger)")
    token = int(value)
    if token < TRIG:
        raise ValueError(f"{name}: {token} is neither a content index (>= 0) nor T (the "
                         "trigger)")
    return token


def parse_sequence(value: Any, name: str = "sequence") -> tuple[int, ...]:
    """A sequence after BOS, from its text (``"0,1,T,2"``) or a list of tokens."""
    if isinstance(value, str):
        parts = value.split(",")
        if not value.strip():
            raise ValueError(f"{name}: empty sequence; give {SYNTAX}")
        if any(not part.strip() for part in parts):
            raise ValueError(f"{name}: empty token in {value!r}; give {SYNTAX}")
        return tuple(parse_token(part, name) for part in parts)
    if isinstance(value, bytes) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a list of tokens or their text ({SYNTAX}), got "
                        f"{type(value).__name__}")
    return tuple(parse_token(v, name) for v in value)


def show_token(token: int) -> str:
    """``T`` for the trigger, else the content index: what :func:`parse_token` reads back."""
    return "T" if token == TRIG else str(token)


def show_tokens(seq: Sequence[int]) -> str:
    """``0,1,T,2``: a sequence in the syntax :func:`parse_sequence` reads."""
    return ",".join(show_token(int(x)) for x in seq)


__all__ = ["SYNTAX", "TRIG", "TRIGGER_NAMES", "parse_sequence", "parse_token", "show_token",
           "show_tokens"]
