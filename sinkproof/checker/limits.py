"""Limits on what the checker reads and computes, each with the ``sinkproof verify`` flag that
raises it: every check estimates its work from sizes read before the work starts and refuses
beyond a limit at once.  The limits in force are set for the context by :func:`using` and
read by the rules with :func:`current`."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields

from ..errors import CertificateError, WorkLimitError


@dataclass(frozen=True)
class Limits:
    """Largest accepted sizes (all positive integers), each field's meaning in the table of
    ``docs/certificates.md`` ("Strict reading and limits")."""

    file_bytes: int = 64 * 2**20
    depth: int = 64
    digits: int = 2000
    content: int = 250_000
    prefixes: int = 2_000_000
    situations: int = 500_000
    ray_patterns: int = 200_000
    work: int = 5 * 10**7
    denominator_digits: int = 10_000

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"limit {f.name} must be a positive integer, got {value!r}")
        python_cap = sys.get_int_max_str_digits()  # applies to digits only: others are counts
        if python_cap and self.digits > python_cap:
            raise ValueError(f"limit digits: at most {python_cap} (Python's own limit on "
                             f"converting integers from text), got {self.digits}")

    @staticmethod
    def flags() -> dict[str, str]:
        """Limit name -> the ``sinkproof verify`` option that raises it."""
        return dict(FLAGS)

    def replace(self, **changes: int | None) -> Limits:
        """A copy with the limits given (not ``None``) changed."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update({k: v for k, v in changes.items() if v is not None})
        return Limits(**values)


DEFAULT = Limits()
"""The limits of ``sinkproof verify`` without flags (documented in docs/certificates.md)."""

FLAGS: dict[str, str] = {f.name: "--max-" + f.name.replace("_", "-") for f in fields(Limits)}
"""Limit name -> the ``sinkproof verify`` option that raises it."""

_ACTIVE: ContextVar[Limits] = ContextVar("sinkproof_checker_limits", default=DEFAULT)


class LimitExceeded(CertificateError, WorkLimitError):
    """Input beyond a documented limit, refused before the work starts (the CLI's
    "refused" status, 4).

    ``limit``: the :class:`Limits` field; ``flag``: the option that raises it.
    """

    def __init__(self, message: str, limit: str) -> None:
        super().__init__(message)
        self.limit = limit
        self.flag = FLAGS[limit]


def current() -> Limits:
    """The limits in force in this context."""
    return _ACTIVE.get()


@contextmanager
def using(limits: Limits | None) -> Iterator[Limits]:
    """Make ``limits`` (default: those already in force) current inside the block."""
    if limits is not None and not isinstance(limits, Limits):
        raise TypeError(f"limits must be a Limits, got {type(limits).__name__}")
    token = _ACTIVE.set(limits or current())
    try:
        yield current()
    finally:
        _ACTIVE.reset(token)


def require(name: str, amount: int, what: str, partial: bool = False) -> None:
    """Refuse (:class:`LimitExceeded`) when ``amount`` exceeds the limit ``name``.

    ``what`` names the quantity in the message, e.g. ``"instance: the family's prefixes"``;
    ``partial``: ``amount`` is a count stopped once past the limit (shown as "at least").
    """
    limit = getattr(current(), name)
    if amount > limit:
        shown = ("at least " if partial else "") + _count(amount)
        raise LimitExceeded(f"{what}: {shown} exceeds the limit {limit} "
                            f"(raise it with {FLAGS[name]})", name)


def _count(n: int) -> str:
    """A count for messages; astronomically large ones by their number of digits."""
    return str(n) if n < 10**30 else f"about 10^{int(n.bit_length() * 0.30103)}"


__all__ = ["DEFAULT", "FLAGS", "LimitExceeded", "Limits", "current", "require", "using"]
