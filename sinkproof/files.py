"""Writing a file: it appears whole or not at all, and a file this process did not create is
never replaced unless the caller says so.

:func:`write_file` writes to a temporary name in the destination's folder and renames it over
the destination once every byte is down, so a reader (or an interrupted run) never sees half a
file.  An existing destination is refused (:class:`OutputExistsError`, bad input: exit
status 2) unless ``force=True`` — or, in the command line, ``--force`` — or this run wrote it
itself (a result saved twice in one Python session replaces its own file; each command-line
run starts afresh).  :func:`write_file_if` lets a check read the written bytes under the
temporary name before the rename (a certificate is verified from exactly the bytes its file
then holds).  Nothing here ever unlinks a path but its own temporary name.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from .errors import InputError

_created: set[Path] = set()
_overwrite = False


class OutputExistsError(InputError):
    """A destination exists and this run did not create it (bad input: exit status 2)."""


def allow_overwrite(flag: bool) -> None:
    """Let every later :func:`write_file` replace existing files (the CLI's ``--force``)."""
    global _overwrite
    _overwrite = bool(flag)


def new_run(force: bool = False) -> None:
    """Start one command-line run: forget the files earlier runs of this process wrote (a
    run may replace only its own) and set ``--force``."""
    _created.clear()
    allow_overwrite(force)


def created_here(path: str | Path) -> bool:
    """Whether this process wrote ``path`` with :func:`write_file`."""
    return Path(path).resolve() in _created


def refuse_existing(dest: str | Path, what: str = "file", force: bool | None = None,
                    hint: str = "") -> None:
    """Raise :class:`OutputExistsError` when ``dest`` exists (a link too), this process did
    not create it, and neither ``force`` nor :func:`allow_overwrite` allows replacing it."""
    dest = Path(dest)
    if force is None:
        force = _overwrite
    if force or not (dest.exists() or dest.is_symlink()) or created_here(dest):
        return
    raise OutputExistsError(
        f"{dest} exists and this run did not create it: the {what} was not written there "
        f"(pass --force, or force=True, to overwrite it, or name another path){hint}")


def write_file(dest: str | Path, data: str | bytes, *, force: bool | None = None,
               what: str = "file") -> Path:
    """Write ``data`` (text as UTF-8) to ``dest`` atomically; returns ``dest``.  Refuses an
    existing file this process did not create unless ``force`` (default: the CLI's
    ``--force``, off) and a folder always."""
    _write(Path(dest), data, force, what, None)
    return Path(dest)


def write_file_if(dest: str | Path, data: str | bytes, keep: Callable[[Path], bool], *,
                  force: bool | None = None, what: str = "file") -> bool:
    """:func:`write_file`, but ``dest`` gets the file only when ``keep`` answers true for
    it: ``keep`` is asked about the temporary file once every byte is down (so what it
    reads is exactly what ``dest`` then holds); when it answers false (or raises) the
    temporary file is removed and ``dest`` is left as it was.  Returns whether ``dest``
    was written."""
    return _write(Path(dest), data, force, what, keep)


def _write(dest: Path, data: str | bytes, force: bool | None, what: str,
           keep: Callable[[Path], bool] | None) -> bool:
    refuse_existing(dest, what, force)
    if dest.is_dir():
        raise InputError(f"{dest} is a folder: name a file for the {what}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    renamed = False
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        if keep is not None and not keep(Path(tmp)):
            return False
        os.replace(tmp, dest)
        renamed = True
    finally:
        if not renamed:
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # the temporary name this call created, never dest
    _created.add(dest.resolve())
    return True


__all__ = ["OutputExistsError", "allow_overwrite", "created_here", "new_run",
           "refuse_existing", "write_file", "write_file_if"]
