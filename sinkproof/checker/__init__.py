"""The small trusted checker: re-verifies certificate files in exact rational arithmetic.

It imports only the standard library (``fractions``, ``json``) and its own
modules — never the code that produced a certificate (no CVXPY, no numpy in a
decision, no ``sinkproof.convex``/``search``/``sinkmap``).  Each certificate
*kind* has its own checker module exposing ``verify(cert) -> Verdict``; the
registry :data:`KIND_MODULES` maps kinds to modules, imported on first use.

>>> from sinkproof.checker import verify_file            # doctest: +SKIP
>>> verify_file("cert.json")                             # doctest: +SKIP
Verdict(verified, kind='hull-family')
  Theorem 3 family [...]

The file format is documented in ``docs/certificates.md``.
"""

from __future__ import annotations

import json
from importlib import import_module
from pathlib import Path
from typing import Any

from ..errors import CertificateError
from .exact import InequalityFailed
from .schema import FORMAT, VERSION, check_envelope
from .verdict import Verdict

KIND_MODULES: dict[str, str] = {
    "hull": "sinkproof.checker.hull",
    "hull-family": "sinkproof.checker.hull",
    "witness": "sinkproof.checker.witness",
    "sinkmap-socp": "sinkproof.checker.socp",
    "bnb-learned-values": "sinkproof.checker.bnb",
}
"""Certificate kind -> module (with ``verify(cert) -> Verdict``) that checks it."""


def register_kind(kind: str, module: str) -> None:
    """Register the checker module (dotted path) for a new certificate kind."""
    if not isinstance(kind, str) or not kind:
        raise TypeError("a certificate kind must be a non-empty string")
    if not isinstance(module, str) or not module:
        raise TypeError("a checker module must be given by its dotted import path")
    KIND_MODULES[kind] = module


def _checker(kind: str) -> Any:
    if kind not in KIND_MODULES:
        raise CertificateError(f"kind: unknown certificate kind {kind!r}; "
                               f"known kinds: {', '.join(sorted(KIND_MODULES))}")
    try:
        module = import_module(KIND_MODULES[kind])
    except ModuleNotFoundError as exc:
        raise CertificateError(f"kind: no checker available for {kind!r} ({exc})") from None
    if not callable(getattr(module, "verify", None)):
        raise CertificateError(f"kind: checker module for {kind!r} has no verify(cert)")
    return module


def _stated_claim(cert: dict[str, Any]) -> str:
    statement = cert["claim"].get("statement")
    return statement if isinstance(statement, str) else f"(a {cert['kind']} claim)"


def verify(cert: dict[str, Any]) -> Verdict:
    """Check a certificate given as a parsed JSON object; the input is not modified.

    Returns a :class:`Verdict` (``ok`` false with the first failing inequality
    when the numbers do not support the claim); raises
    :class:`~sinkproof.errors.CertificateError` when the certificate is malformed.
    """
    kind = check_envelope(cert)
    module = _checker(kind)
    try:
        verdict = module.verify(cert)
    except InequalityFailed as exc:
        return Verdict(ok=False, kind=kind, claim=_stated_claim(cert), failure=str(exc))
    except CertificateError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
        raise CertificateError(
            f"malformed {kind} certificate: {type(exc).__name__}: {exc}") from None
    if not isinstance(verdict, Verdict):
        raise CertificateError(f"checker for {kind!r} returned {type(verdict).__name__}, "
                               "not a Verdict")
    return verdict


def _reject_constant(name: str) -> Any:
    raise CertificateError(f"certificate contains the non-number {name}")


def load(path: str | Path) -> dict[str, Any]:
    """Read a certificate file as JSON (no NaN/Infinity); raises CertificateError on bad input."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CertificateError(f"cannot read certificate {str(path)!r}: {exc}") from None
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise CertificateError(f"{path}: not valid JSON: {exc}") from None
    return data


def verify_file(path: str | Path) -> Verdict:
    """Check the certificate stored in the JSON file at ``path``."""
    return verify(load(path))


__all__ = ["FORMAT", "KIND_MODULES", "VERSION", "CertificateError", "Verdict", "load",
           "register_kind", "verify", "verify_file"]
