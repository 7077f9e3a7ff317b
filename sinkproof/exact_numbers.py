"""Numbers read exactly as written: every threshold a user gives becomes a :class:`Fraction`.

A threshold (an error level ε, a BOS-mass bound ``b``, ...) is read as the rational
number its text denotes, never through a binary float:

- ``int``, :class:`~fractions.Fraction`, :class:`~decimal.Decimal` and any
  ``numbers.Rational`` (SymPy's ``Rational``) are taken exactly;
- a string is a decimal (``"0.05"``, ``"1e-400"``) or a ratio (``"1/20"``), ASCII only;
- a binary float (Python's, NumPy's) is read by the shortest decimal that prints as it
  (``0.05`` means ``1/20``), because that is what the person who typed it wrote.

File readers parse TOML and JSON with floats as :class:`~decimal.Decimal`
(:func:`load_toml`, :func:`load_json`), so ``max_error = 1e-400`` in a claim file is
``10**-400``, not ``0.0``.  This module imports only the standard library.
"""

from __future__ import annotations

import decimal
import json
import numbers
import re
import tomllib
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

Exact = int | Fraction | decimal.Decimal | str | float
"""What the API accepts wherever a threshold is: exact numbers, their text, or a float."""

MAX_DIGITS = 1000
"""Longest number text read (digits and exponent together)."""
MAX_EXPONENT = 4_000
"""Largest decimal exponent magnitude read: ``1e-400`` is fine, ``1e-99999999`` is refused
(it would need a hundred-million-digit denominator); below Python's 4300-digit limit on
printing an integer, so that every number read can be shown in a message."""

_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_RATIO = re.compile(r"[+-]?\d+\s*/\s*\d+")


def _from_decimal(name: str, d: decimal.Decimal) -> Fraction:
    if not d.is_finite():
        raise ValueError(f"{name} must be finite, got {d}")
    exponent = d.as_tuple().exponent
    if isinstance(exponent, int) and abs(exponent) > MAX_EXPONENT:
        raise ValueError(f"{name}: exponent {exponent} is beyond +-{MAX_EXPONENT}")
    return Fraction(d)


def _from_text(name: str, text: str) -> Fraction:
    s = text.strip()
    if not s.isascii():
        raise ValueError(f"{name} must be written with ASCII digits, got {text!r}")
    if len(s) > MAX_DIGITS:
        raise ValueError(f"{name}: a number of {len(s)} characters is beyond {MAX_DIGITS}")
    if _RATIO.fullmatch(s):
        num, den = (int(part) for part in s.split("/"))
        if den == 0:
            raise ValueError(f"{name}: zero denominator in {text!r}")
        return Fraction(num, den)
    if _DECIMAL.fullmatch(s):
        return _from_decimal(name, decimal.Decimal(s))
    raise ValueError(f"{name} must be a number such as 0.05 or 1/20, got {text!r}")


def exact(value: Any, name: str = "value") -> Fraction:
    """``value`` as the exact rational it denotes (see the module docstring).

    Raises ``TypeError`` for non-numbers (``bool`` included) and ``ValueError`` for
    text that is not a number, infinities and NaN; both messages name ``name``.
    """
    if isinstance(value, bool) or value is None:
        raise TypeError(f"{name} must be a number, got {value!r}")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, numbers.Integral):
        return Fraction(int(value))
    if isinstance(value, numbers.Rational):  # SymPy Rational and friends
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, decimal.Decimal):
        return _from_decimal(name, value)
    if isinstance(value, str):
        return _from_text(name, value)
    if isinstance(value, numbers.Real):
        # a binary float: the shortest decimal that round-trips (NumPy's str gives it for
        # its own precision, float32 included; Python's repr for float)
        text = repr(value) if type(value) is float else str(value)
        try:
            return _from_text(name, text)
        except ValueError:
            f = float(value)
            raise ValueError(f"{name} must be finite, got {f}") from None
    raise TypeError(f"{name} must be a number (int, Fraction, Decimal, float or a string "
                    f"such as '1/20'), got {type(value).__name__}")


def bounded(value: Any, name: str, low: Any = None, high: Any = None, *,
            low_open: bool = False, high_open: bool = False, why: str = "") -> Fraction:
    """:func:`exact`, then check ``low <= value <= high`` (``<`` where open); ``why`` is added
    to the message when the value is out of range."""
    q = exact(value, name)
    lo = None if low is None else exact(low)
    hi = None if high is None else exact(high)
    bad = ((lo is not None and (q <= lo if low_open else q < lo))
           or (hi is not None and (q >= hi if high_open else q > hi)))
    if bad:
        left = "" if lo is None else f"{'(' if low_open else '['}{show(lo)}, "
        right = "" if hi is None else f"{show(hi)}{')' if high_open else ']'}"
        if lo is None:
            where = f"{'<' if high_open else '<='} {show(hi)}"
        elif hi is None:
            where = f"{'>' if low_open else '>='} {show(lo)}"
        else:
            where = f"in {left}{right}"
        raise ValueError(f"{name} must be {where}, got {show(q)}" + (f": {why}" if why else ""))
    return q


EPS_VACUOUS = "from error 1 on (the size of unit-norm targets) every sink bound is vacuous"


def error_level(value: Any, name: str = "eps", positive: bool = False) -> Fraction:
    """An error level ε in ``[0, 1)`` (``(0, 1)`` with ``positive``), exactly."""
    return bounded(value, name, 0, 1, low_open=positive, high_open=True, why=EPS_VACUOUS)


def bos_mass(value: Any, name: str, positive: bool = False) -> Fraction:
    """A BOS mass threshold in ``[0, 1]`` (``(0, 1]`` with ``positive``), exactly."""
    return bounded(value, name, 0, 1, low_open=positive,
                   why="a BOS mass is a share of attention, between 0 and 1")


def show(q: Fraction) -> str:
    """``q`` as a reader writes it: a short decimal when it has one (``0.05``, ``1E-400``),
    else ``p/q``."""
    den = q.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1 or max(twos, fives) > MAX_EXPONENT:
        return f"{q.numerator}/{q.denominator}"
    digits = max(twos, fives)
    with decimal.localcontext() as ctx:
        ctx.prec = len(str(abs(q.numerator))) + digits + 2
        d = decimal.Decimal(q.numerator) / decimal.Decimal(q.denominator)
        text = str(d.normalize())
    if "E" in text and len(text) > 12 and -30 < d.adjusted() < 30:
        text = format(d.normalize(), "f")
    return text


def to_float(q: Fraction) -> float:
    """The float nearest to ``q`` (for display and for search, never for a decision)."""
    return float(q)


# ------------------------------------------------------------------ file readers
def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number here (write a finite decimal)")


MAX_NESTING = 64
"""Deepest nesting of arrays/tables a JSON or TOML input may have (a claim needs a handful);
checked on the text before parsing, so a deep input is one error, never a RecursionError."""

_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_TOML_TOKENS = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"'
                          r"|'[^'\n]*'|#[^\n]*|[\[\]{}]")


def _check_nesting(text: str, tokens: re.Pattern[str]) -> None:
    """Refuse ``text`` whose brackets (outside strings and comments) nest deeper than
    :data:`MAX_NESTING`; one pass, no recursion."""
    level = 0
    for match in tokens.finditer(text):
        tok = match.group()
        if tok in "[{":
            level += 1
            if level > MAX_NESTING:
                raise ValueError(f"nested more than {MAX_NESTING} levels deep "
                                 f"(at character {match.start()})")
        elif tok in "]}":
            level -= 1


def load_json(text: str) -> Any:
    """JSON with floats as :class:`~decimal.Decimal`, duplicate keys and NaN/Infinity refused,
    nesting at most :data:`MAX_NESTING` deep."""
    _check_nesting(text, _JSON_TOKENS)
    return json.loads(text, parse_float=decimal.Decimal, object_pairs_hook=_no_duplicates,
                      parse_constant=_no_constant)


def load_toml(text: str) -> dict[str, Any]:
    """TOML with floats as :class:`~decimal.Decimal` (``1e-400`` stays ``10**-400``)."""
    _check_nesting(text, _TOML_TOKENS)
    return tomllib.loads(text, parse_float=decimal.Decimal)


def plain(data: Any) -> Any:
    """``data`` with every Decimal and Fraction replaced by its exact text, for JSON output."""
    if isinstance(data, (decimal.Decimal, Fraction)):
        return show(exact(data))
    if isinstance(data, Mapping):
        return {k: plain(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [plain(v) for v in data]
    return data
