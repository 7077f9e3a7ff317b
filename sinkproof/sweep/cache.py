"""Job results cached on disk, keyed by a hash of everything that determines them.

The key of a job is the SHA-256 of its kind, its full settings (defaults filled in,
numbers as exact text, every input file replaced by the SHA-256 of its bytes:
:func:`sinkproof.sweep.inputs.job_inputs`) and the package version, in canonical JSON;
a result file ``DIR/cache/<key>.json`` holds the keyed settings, which are compared on
reading (a hash collision or a hand-edited file is not trusted), and the evidence of a
verdict, which the runner verifies again before reporting it
(:mod:`sinkproof.sweep.evidence`).  Only successful jobs are cached: a failed job runs
again on the next sweep.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from .._version import __version__


def job_key(kind: str, settings: dict[str, Any]) -> str:
    """Hex SHA-256 of (kind, settings, package version) in canonical JSON."""
    text = json.dumps({"kind": kind, "settings": settings, "version": __version__},
                      sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Cache:
    """Finished job results under ``root`` (``None``: nothing is kept)."""

    def __init__(self, root: str | Path | None) -> None:
        self.root = None if root is None else Path(root)
        if self.root is not None:
            self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        assert self.root is not None
        return self.root / f"{key}.json"

    def get(self, key: str, kind: str, settings: dict[str, Any]
            ) -> tuple[dict[str, Any], float, dict[str, Any]] | None:
        """The cached outcome of this job, the seconds it took and its evidence, or
        ``None``."""
        if self.root is None:
            return None
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        expected = json.loads(json.dumps(settings, default=str))
        if (not isinstance(data, dict) or data.get("kind") != kind
                or data.get("settings") != expected or data.get("version") != __version__
                or not isinstance(data.get("outcome"), dict)):
            return None
        seconds = data.get("seconds", 0.0)
        evidence = data.get("evidence")
        return (data["outcome"], float(seconds) if isinstance(seconds, (int, float)) else 0.0,
                evidence if isinstance(evidence, dict) else {})

    def put(self, key: str, kind: str, settings: dict[str, Any], outcome: dict[str, Any],
            seconds: float, evidence: dict[str, Any] | None = None) -> None:
        """Store a finished job atomically (a crash never leaves half a file)."""
        if self.root is None:
            return
        data = {"kind": kind, "settings": settings, "version": __version__,
                "outcome": outcome, "seconds": seconds, "evidence": evidence or {}}
        tmp = self._path(key).with_name(f"{key}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, sort_keys=True, default=str), encoding="utf-8")
        os.replace(tmp, self._path(key))
