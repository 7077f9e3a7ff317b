"""What a sweep job returns beside its outcome fields so that its verdict can be checked
again later: the certificate or witness document and the digest of the statement the
trusted checker verified (worker side; :mod:`sinkproof.sweep.evidence` checks it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..checker import verify

EVIDENCE = "_evidence"
"""The key under which a job returns its evidence beside its outcome fields."""


def _document(path: Any) -> dict[str, Any] | None:
    if not path:
        return None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _digest(document: dict[str, Any]) -> str | None:
    try:
        verdict = verify(document)
    except Exception:  # noqa: BLE001 - a document that does not verify has no digest
        return None
    return verdict.digest


def check_evidence(outcome: Any) -> dict[str, Any]:
    """Worker side: the evidence of a ``check`` job's outcome (a certificate for a
    Proved by certificate, a witness for a Refuted; nothing otherwise)."""
    name = type(outcome).__name__
    field, what = {"Proved": ("certificate", "certificate"),
                   "Refuted": ("witness", "witness")}.get(name, (None, None))
    document = _document(getattr(outcome, field, None)) if field else None
    if document is None or what is None:
        return {}
    return {what: document, "digest": _digest(document)}


def certificate_evidence(document: dict[str, Any]) -> dict[str, Any]:
    """Worker side: the evidence of a ``certify`` job (its family certificate)."""
    return {"certificate": document, "digest": _digest(document)}
