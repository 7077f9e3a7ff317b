"""The files a sweep job reads: where they are, and what their bytes are.

A path in a sweep file is relative to that file (a sweep in Python: to the current
folder).  A ``check`` job reads its claim file and the certificate the claim names
(``[check] certificate``, relative to the claim file as ``sinkproof check`` finds it);
the cache keys a job by the SHA-256 of those bytes, never by their paths, so editing
any of them makes the job run again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..exact_numbers import load_json, load_toml

PATH_SETTINGS = ("claim", "check.certificate")
"""Settings of a sweep job that name an input file."""

MISSING = "missing"
"""The digest recorded for a file that cannot be read (the job then fails and is not cached)."""


def file_digest(path: str | Path) -> str:
    """Hex SHA-256 of the file's bytes, or :data:`MISSING`."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return MISSING


def resolve_paths(settings: Mapping[str, Any], root: Path | None) -> dict[str, Any]:
    """``settings`` with every input path made absolute against ``root`` (the sweep
    file's folder; ``None``: the current folder)."""
    base = Path.cwd() if root is None else root
    out = dict(settings)
    for name in PATH_SETTINGS:
        value = out.get(name)
        if isinstance(value, str) and value:
            path = Path(value).expanduser()
            out[name] = str(path if path.is_absolute() else (base / path).resolve())
    return out


def claim_certificate(claim_path: str, settings: Mapping[str, Any]) -> str | None:
    """The certificate file a ``check`` job's claim names (absolute), if any: the sweep's
    ``check.certificate`` or the claim file's ``[check] certificate``, a relative path
    taken against the claim file's folder (where ``sinkproof check`` also looks)."""
    name = settings.get("check.certificate")
    if not name:
        data = read_claim_data(claim_path)
        check = data.get("check") if isinstance(data, dict) else None
        name = check.get("certificate") if isinstance(check, dict) else None
    if not isinstance(name, str) or not name:
        return None
    path = Path(name).expanduser()
    if not path.is_absolute():
        path = (Path(claim_path).parent / path).resolve()
    return str(path)


def read_claim_data(path: str | Path) -> dict[str, Any]:
    """A claim file's parsed tables (empty when it cannot be read or parsed: the job
    reports that itself when it runs)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        data = load_json(text) if str(path).lower().endswith(".json") else load_toml(text)
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def job_inputs(kind: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` as the cache keys them: each input file replaced by the digest of
    its bytes, plus the files the job's claim names (a ``check`` job)."""
    keyed = dict(settings)
    if kind != "check" or not settings.get("claim"):
        return keyed
    claim = str(settings["claim"])
    keyed["claim"] = {"sha256": file_digest(claim)}
    certificate = claim_certificate(claim, settings)
    if certificate is not None:
        keyed["check.certificate"] = {"sha256": file_digest(certificate)}
    return keyed


def pin_certificate(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A ``check`` job's settings with the certificate its claim names given as the
    absolute path whose bytes were hashed (so the job reads exactly that file)."""
    out = dict(settings)
    if out.get("claim"):
        certificate = claim_certificate(str(out["claim"]), out)
        if certificate is not None:
            out["check.certificate"] = certificate
    return out
