"""Reading certificate files as strict JSON within the limits in force: refused with one
:class:`~sinkproof.errors.CertificateError` are oversized files (before reading), non-UTF-8
text, duplicate keys, ``NaN``/``Infinity``, over-long numbers, floats that overflow or
round a non-zero literal to zero, and nesting beyond ``limits.depth``."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from ..errors import CertificateError
from . import limits as _limits

_NONZERO_DIGIT = re.compile(r"[1-9]", re.ASCII)


def _no_constant(name: str) -> Any:
    raise CertificateError(f"the non-number {name} is not allowed (numbers must be finite)")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise CertificateError(f"duplicate key {key!r} in an object (each field once)")
        out[key] = value
    return out


def _digits_ok(text: str) -> None:
    _limits.require("digits", len(text), "a number's length in characters")


def _int(text: str) -> int:
    _digits_ok(text)
    return int(text)


def _float(text: str) -> float:
    _digits_ok(text)
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise CertificateError(f"the number {text} is beyond the range of a double")
    mantissa = re.split(r"[eE]", text, maxsplit=1)[0]
    if value == 0 and _NONZERO_DIGIT.search(mantissa):
        raise CertificateError(f"the number {text} is not zero but rounds to 0 as a double")
    return value


def depth(value: Any) -> int:
    """Nesting depth of arrays and objects (a scalar has depth 0); iterative."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(
            item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children
                     if isinstance(child, (dict, list)))
    return deepest


def loads(text: str, source: str = "certificate") -> Any:
    """Parse JSON text strictly (see the module docstring)."""
    try:
        data = json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant,
                          parse_int=_int, parse_float=_float)
    except _limits.LimitExceeded as exc:
        raise _limits.LimitExceeded(f"{source}: {exc}", exc.limit) from None
    except CertificateError as exc:
        raise CertificateError(f"{source}: {exc}") from None
    except RecursionError:
        cap = sys.getrecursionlimit()
        if _limits.current().depth < cap:
            raise _limits.LimitExceeded(
                f"{source}: nesting depth: more than {cap} levels exceeds the limit "
                f"{_limits.current().depth} (raise it with {_limits.FLAGS['depth']})",
                "depth") from None
        raise CertificateError(f"{source}: nesting deeper than the JSON reader can follow "
                               f"(about {cap} levels)") from None
    except ValueError as exc:  # JSONDecodeError
        raise CertificateError(f"{source}: not valid JSON: {exc}") from None
    _limits.require("depth", depth(data), f"{source}: nesting depth")
    return data


def load(path: str | Path) -> Any:
    """Read the JSON file at ``path`` strictly, refusing an oversized file before reading."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise CertificateError(f"cannot read certificate {str(path)!r}: {exc.strerror}") from None
    _limits.require("file_bytes", size, f"{path}: file size in bytes")
    try:
        with path.open("rb") as handle:
            raw = handle.read(_limits.current().file_bytes + 1)
        text = raw.decode("utf-8")
    except OSError as exc:
        raise CertificateError(f"cannot read certificate {str(path)!r}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise CertificateError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})"
                               ) from None
    _limits.require("file_bytes", len(raw), f"{path}: file size in bytes")
    return loads(text, str(path))
