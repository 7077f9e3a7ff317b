"""Where a check's files go: made in a private folder of the run, then published only to a
path the caller named, never over a file the run did not create.

Every route writes its certificate or witness inside :func:`private_folder` (a fresh
temporary folder; a failed witness is removed there, and only there).  When the outcome
names such a file and the caller asked for it at a destination, :func:`publish` copies it
to a temporary name in the destination's folder and renames it over the destination, so
a reader never sees half a file; an existing destination is refused unless ``force``.
A path written inside a claim file (``[check] witness``) is a destination only when the
caller opts in (``write_witness=True``, ``--write-witness``).
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..files import OutputExistsError, refuse_existing, write_file


def private_folder() -> Path:
    """A fresh folder that only this run writes to."""
    return Path(tempfile.mkdtemp(prefix="sinkproof-"))


def publish(made: Path, dest: Path, *, force: bool = False, what: str = "file") -> Path:
    """Copy ``made`` (a file of this run's private folder) to ``dest`` atomically: written
    to a temporary name next to ``dest``, then renamed over it.  An existing ``dest`` is
    refused (:class:`OutputExistsError`) unless ``force``; ``made`` is left where it is."""
    refuse_existing(dest, what, force, hint=f"; it is kept at {made}")
    return write_file(dest, Path(made).read_bytes(), force=True, what=what)


def publish_outcome(outcome: Any, folder: Path, witness: Path | None,
                    certificate: Path | None, force: bool = False) -> Any:
    """``outcome`` with its witness or certificate file (when made in ``folder``) published
    at the named destination and the outcome pointing there; unchanged otherwise."""
    for key, dest, what in (("witness", witness, "witness"),
                            ("certificate", certificate, "certificate")):
        made = getattr(outcome, key, None)
        if dest is None or not isinstance(made, str) or not _inside(Path(made), folder):
            continue
        outcome = replace(outcome, **{key: str(publish(Path(made), dest, force=force,
                                                       what=what))})
    return outcome


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


__all__ = ["OutputExistsError", "private_folder", "publish", "publish_outcome"]
