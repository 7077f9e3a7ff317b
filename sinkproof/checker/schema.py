"""Schema checks for certificate files: exact rationals and typed fields.  Every helper takes
the path of the value in the file (``"data.situations[3].w[1]"``) and raises
:class:`~sinkproof.errors.CertificateError` naming it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from ..errors import CertificateError
from . import limits as _limits

FORMAT = "sinkproof-certificate"
"""Value of the ``format`` field of every certificate file."""

VERSION = 1
"""Envelope version this checker reads."""

ENVELOPE = ("format", "version", "kind", "instance", "claim", "data")
"""The top-level fields of every certificate (no others)."""

_RATIONAL = re.compile(r"[+-]?[0-9]+(?:/[0-9]+)?", re.ASCII)


def child(path: str, key: str | int) -> str:
    """Path of a field (``str`` key) or list item (``int`` index) below ``path``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def parse_rational(value: Any, path: str) -> Fraction:
    """An exact rational from a JSON value: a string ``"p/q"`` or ``"p"``, or a JSON integer.

    JSON floats are refused (a certificate states its numbers exactly), and so
    are booleans, zero denominators, spaces, digits other than ASCII ``0-9`` and
    numbers longer than the ``digits`` limit (:mod:`sinkproof.checker.limits`).
    """
    if isinstance(value, bool):
        raise CertificateError(f"{path}: expected a rational, got a boolean")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        raise CertificateError(f"{path}: rationals must be written as strings like \"3/7\", "
                               f"got the JSON float {value!r}")
    if not isinstance(value, str):
        raise CertificateError(f"{path}: expected a rational string, got {type(value).__name__}")
    _limits.require("digits", len(value), f"{path}: length of a rational in characters")
    if not _RATIONAL.fullmatch(value):
        if any(ch.isdigit() and not ch.isascii() for ch in value):
            raise CertificateError(f"{path}: {value!r} has a non-ASCII digit (write 0-9 only)")
        raise CertificateError(f"{path}: {value!r} is not a rational of the form \"p/q\"")
    text = value
    num, _, den = text.partition("/")
    if den and int(den) == 0:
        raise CertificateError(f"{path}: zero denominator in {value!r}")
    return Fraction(int(num), int(den) if den else 1)


def format_rational(x: Fraction | int) -> str:
    """The file form of an exact rational: ``"p/q"`` (or ``"p"`` for integers)."""
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def bound_rows(bounds: dict[tuple[int, ...], Fraction]) -> list[list[Any]]:
    """``[[prefix], "p/q"]`` per bound, sorted: a statement's list of proved bounds."""
    return sorted([list(k), format_rational(v)] for k, v in bounds.items())


def check_fields(obj: Any, path: str, allowed: Sequence[str]) -> dict[str, Any]:
    """``obj`` is an object whose every field is in ``allowed``; an unknown field is an
    error naming it (a checker must not ignore what a file says)."""
    if not isinstance(obj, dict):
        raise CertificateError(f"{path or 'certificate'}: expected an object, "
                               f"got {type(obj).__name__}")
    for key in obj:
        if key not in allowed:
            raise CertificateError(f"{child(path, key)}: unknown field (allowed here: "
                                   f"{', '.join(allowed)})")
    return obj


def section(obj: Any, key: str, allowed: Sequence[str], path: str = "") -> dict[str, Any]:
    """The object field ``key`` of ``obj`` (at ``path``), every field of it in ``allowed``."""
    return check_fields(need_dict(obj, key, path), child(path, key), allowed)


def need(obj: Any, key: str, path: str) -> Any:
    """The field ``key`` of the mapping ``obj`` (at ``path``); missing fields are an error."""
    if not isinstance(obj, dict):
        raise CertificateError(f"{path or 'certificate'}: expected an object, "
                               f"got {type(obj).__name__}")
    if key not in obj:
        raise CertificateError(f"{child(path, key)}: required field is missing")
    return obj[key]


def need_dict(obj: Any, key: str, path: str) -> dict[str, Any]:
    """A field that must be a JSON object."""
    value = need(obj, key, path)
    if not isinstance(value, dict):
        raise CertificateError(f"{child(path, key)}: expected an object, "
                               f"got {type(value).__name__}")
    return value


def need_list(obj: Any, key: str, path: str, length: int | None = None,
              min_length: int = 0) -> list[Any]:
    """A field that must be a JSON array (of exactly ``length`` items when given)."""
    return as_list(need(obj, key, path), child(path, key), length, min_length)


def as_list(value: Any, path: str, length: int | None = None, min_length: int = 0) -> list[Any]:
    """``value`` checked to be a JSON array of the right length."""
    if not isinstance(value, list):
        raise CertificateError(f"{path}: expected an array, got {type(value).__name__}")
    if length is not None and len(value) != length:
        raise CertificateError(f"{path}: expected {length} entries, got {len(value)}")
    if len(value) < min_length:
        raise CertificateError(f"{path}: expected at least {min_length} entries, got {len(value)}")
    return value


def need_str(obj: Any, key: str, path: str, choices: Sequence[str] | None = None,
             default: str | None = None) -> str:
    """A string field, optionally one of ``choices``; ``default`` where it may be missing."""
    if default is not None and isinstance(obj, dict) and key not in obj:
        return default
    value = need(obj, key, path)
    if not isinstance(value, str):
        raise CertificateError(f"{child(path, key)}: expected a string, got {type(value).__name__}")
    if choices is not None and value not in choices:
        raise CertificateError(f"{child(path, key)}: {value!r} is not one of {', '.join(choices)}")
    return value


def need_int(obj: Any, key: str, path: str, minimum: int | None = None) -> int:
    """An integer field (a JSON integer, not a float or boolean)."""
    value = need(obj, key, path)
    if isinstance(value, bool) or not isinstance(value, int):
        raise CertificateError(f"{child(path, key)}: expected an integer, "
                               f"got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise CertificateError(f"{child(path, key)}: must be >= {minimum}, got {value}")
    return value


def as_int(value: Any, path: str, lo: int | None = None, hi: int | None = None,
           what: str = "an integer in range") -> int:
    """``value``: a JSON integer (not a boolean) with ``lo <= value < hi`` where given."""
    if (isinstance(value, bool) or not isinstance(value, int) or (lo is not None and value < lo)
            or (hi is not None and value >= hi)):
        raise CertificateError(f"{path}: {value!r} is not {what}")
    return value


def need_bool(obj: Any, key: str, path: str) -> bool:
    """A boolean field."""
    value = need(obj, key, path)
    if not isinstance(value, bool):
        raise CertificateError(f"{child(path, key)}: expected true or false, "
                               f"got {type(value).__name__}")
    return value


def need_rational(obj: Any, key: str, path: str) -> Fraction:
    """A rational field (string ``"p/q"`` or integer)."""
    return parse_rational(need(obj, key, path), child(path, key))


def need_eps(obj: Any, path: str = "instance", strict: bool = True) -> Fraction:
    """``obj.eps``: an exact rational ``> 0`` (``>= 0`` when not ``strict``)."""
    eps = need_rational(obj, "eps", path)
    if eps < 0 or (strict and eps == 0):
        raise CertificateError(f"{path}.eps: must be {'>' if strict else '>='} 0, "
                               f"got {format_rational(eps)}")
    return eps


def rational_vector(value: Any, path: str, length: int | None = None) -> list[Fraction]:
    """A JSON array of rationals (of exactly ``length`` entries when given)."""
    items = as_list(value, path, length)
    return [parse_rational(v, child(path, i)) for i, v in enumerate(items)]


def need_vector(obj: Any, key: str, path: str, length: int | None = None) -> list[Fraction]:
    """A field holding a vector of rationals."""
    return rational_vector(need(obj, key, path), child(path, key), length)


def rational_matrix(value: Any, path: str, columns: int | None = None,
                    min_rows: int = 0) -> list[list[Fraction]]:
    """A JSON array of equally long rational vectors (``columns`` long when given)."""
    rows = as_list(value, path, min_length=min_rows)
    out: list[list[Fraction]] = []
    for i, row in enumerate(rows):
        vec = rational_vector(row, child(path, i), columns)
        if columns is None:
            columns = len(vec)
        out.append(vec)
    return out


def check_envelope(cert: Any) -> str:
    """Check the fields every certificate has; return its ``kind``.

    ``{"format": "sinkproof-certificate", "version": 1, "kind": str,
    "instance": {...}, "claim": {...}, "data": {...}}``.
    """
    if not isinstance(cert, dict):
        raise CertificateError(f"certificate: expected a JSON object, got {type(cert).__name__}")
    fmt = need(cert, "format", "")
    if fmt != FORMAT:
        raise CertificateError(f"format: expected {FORMAT!r}, got {fmt!r}")
    version = need_int(cert, "version", "")
    if version != VERSION:
        raise CertificateError(f"version: this checker reads version {VERSION}, got {version}")
    check_fields(cert, "", ENVELOPE)
    kind = need_str(cert, "kind", "")
    for key in ("instance", "claim", "data"):
        need_dict(cert, key, "")
    return kind
