"""Writing certificate files in the envelope the trusted checker reads (docs/certificates.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..checker.schema import FORMAT, VERSION


def envelope(kind: str, instance: dict[str, Any], claim: dict[str, Any],
             data: dict[str, Any]) -> dict[str, Any]:
    """``{"format", "version", "kind", "instance", "claim", "data"}``."""
    return {"format": FORMAT, "version": VERSION, "kind": kind, "instance": instance,
            "claim": claim, "data": data}


def save_json(cert: dict[str, Any], path: str | Path) -> Path:
    """Write a certificate as indented JSON; returns the path."""
    path = Path(path)
    path.write_text(json.dumps(cert, indent=1) + "\n", encoding="utf-8")
    return path


class CertificateMixin:
    """``to_dict()`` supplied by the class; adds ``save(path)`` and ``verify()`` (exact)."""

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def save(self, path: str | Path) -> Path:
        """Write the certificate file (checked later by ``sinkproof verify``)."""
        return save_json(self.to_dict(), path)

    def verify(self) -> Any:
        """Re-check this certificate with the trusted checker; returns its ``Verdict``."""
        from .. import checker

        return checker.verify(self.to_dict())
