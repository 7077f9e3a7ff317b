"""The small trusted checker: re-verifies certificate files in exact rational arithmetic.

It imports only the standard library, mpmath and its own modules, never the code that
produced a certificate.  :data:`KIND_MODULES` maps each kind to the rule module whose
``verify(cert) -> Verdict`` checks it; :class:`Limits` bound every check before it starts;
:func:`weigh` gives a head's rigorous weights from the map-rule table.  The file format:
``docs/certificates.md``.

>>> from sinkproof.checker import verify_file            # doctest: +SKIP
>>> verify_file("cert.json")                             # doctest: +SKIP
Verdict(verified, kind='hull-family')
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import CertificateError
from . import jsonfile
from . import limits as _limits
from .exact import InequalityFailed
from .jsonfile import depth
from .limits import LimitExceeded, Limits, using
from .maps import MAP_NAMES, weigh
from .schema import FORMAT, VERSION, check_envelope
from .verdict import Verdict

KIND_MODULES: Mapping[str, str] = MappingProxyType({
    "hull": "sinkproof.checker.rules.hull",
    "hull-family": "sinkproof.checker.rules.hull",
    "paper-hull-family": "sinkproof.checker.rules.hull",
    "witness": "sinkproof.checker.rules.witness",
    "paper-witness": "sinkproof.checker.rules.witness",
    "sinkmap-socp": "sinkproof.checker.rules.dual",
    "sinkmap-gated": "sinkproof.checker.rules.dual",
    "bnb-learned-values": "sinkproof.checker.rules.tree",
    "bnb-heads": "sinkproof.checker.rules.tree",
    "paper-bnb-learned-values": "sinkproof.checker.rules.tree",
    "paper-subfamily-bnb": "sinkproof.checker.rules.subfamily",
    "paper-composition": "sinkproof.checker.rules.composition",
})
"""Certificate kind -> module (with ``verify(cert) -> Verdict``) that checks it.  Read-only:
the trusted code is what this package holds, and no imported module adds to it at run time
(a test that needs a fake kind replaces the mapping with ``monkeypatch``)."""


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


def verify(cert: dict[str, Any], limits: Limits | None = None) -> Verdict:
    """Check a certificate given as a parsed JSON object; the input is not modified.

    Returns a :class:`Verdict` (``ok`` false with the first failing inequality
    when the numbers do not support the claim); raises
    :class:`~sinkproof.errors.CertificateError` when the certificate is malformed, and
    its subclass :class:`LimitExceeded` (before the work starts) when it is larger than
    ``limits`` (default: :data:`sinkproof.checker.limits.DEFAULT`) allow.
    """
    with using(limits):
        kind = check_envelope(cert)
        module = _checker(kind)
        _limits.require("depth", depth(cert), "certificate: nesting depth")
        try:
            verdict = module.verify(cert)
        except InequalityFailed as exc:
            return Verdict(ok=False, kind=kind, claim=_stated_claim(cert), failure=str(exc),
                           figures=exc.figures)
        except CertificateError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError, AttributeError,
                OverflowError, RecursionError) as exc:
            raise CertificateError(
                f"malformed {kind} certificate: {type(exc).__name__}: {exc}") from None
    if not isinstance(verdict, Verdict):
        raise CertificateError(f"checker for {kind!r} returned {type(verdict).__name__}, "
                               "not a Verdict")
    return verdict


def load(path: str | Path, limits: Limits | None = None) -> dict[str, Any]:
    """Read a certificate file as strict JSON (:mod:`sinkproof.checker.jsonfile`: no
    duplicate keys, no NaN/Infinity, bounded size, depth and number length)."""
    with using(limits):
        data = jsonfile.load(path)
    if not isinstance(data, dict):
        raise CertificateError(f"{path}: a certificate is a JSON object, "
                               f"got {type(data).__name__}")
    return data


def verify_file(path: str | Path, limits: Limits | None = None) -> Verdict:
    """Check the certificate stored in the JSON file at ``path``."""
    return verify(load(path, limits), limits)


__all__ = ["FORMAT", "KIND_MODULES", "MAP_NAMES", "VERSION", "CertificateError", "LimitExceeded",
           "Limits", "Verdict", "load", "verify", "verify_file", "weigh"]
