"""A sweep file: one job kind, fixed settings, and the axes that vary.

```toml
kind = "certify"          # check | certify | sinkmap | search | train | variant

[base]                    # settings shared by every job
p = 2
eps = "1/20"

[grid]                    # cartesian product: every combination of these values
T = [3, 4, 5]

[zip]                     # axes that vary together (equal lengths), crossed with [grid]
content = ["signed", "gaussian"]
seed = [0, 1]
```

The jobs are ``[base]`` overridden by each combination: ``len(T) x len(zip)`` here.
Numbers are read exactly (``0.05`` is ``1/20``), and settings a job kind does not
know are refused before anything runs.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import params
from ..errors import InputError, check_work
from ..exact_numbers import load_toml, plain
from ..work import limit
from .jobs import JOB_KINDS

MAX_JOBS = 100_000
"""The most jobs a sweep file may expand to (raise with ``max_jobs``)."""

_TOP_LEVEL = {"kind", "name", "base", "grid", "zip"}


class SweepError(InputError):
    """A malformed sweep file or sweep specification."""


@dataclass(frozen=True)
class Sweep:
    """A job kind, its shared settings, the product axes and the zipped axes."""

    kind: str
    base: Mapping[str, Any]
    grid: Mapping[str, tuple[Any, ...]]
    zipped: Mapping[str, tuple[Any, ...]]
    name: str = "sweep"
    root: Path | None = None
    """The folder input paths are relative to: the sweep file's (``None``: the current
    folder, for a sweep written in Python)."""

    @property
    def axes(self) -> tuple[str, ...]:
        """Names of the swept settings, product axes first."""
        return (*self.grid, *self.zipped)

    @property
    def n_jobs(self) -> int:
        """How many jobs the sweep expands to (without building them)."""
        n = 1
        for values in self.grid.values():
            n *= len(values)
        if self.zipped:
            n *= len(next(iter(self.zipped.values())))
        return n

    def jobs(self) -> list[dict[str, Any]]:
        """Every job's full settings, in a fixed order (product axes vary slowest)."""
        names = list(self.grid)
        rows = list(zip(*self.zipped.values())) if self.zipped else [()]
        out = []
        for combo in itertools.product(*(self.grid[n] for n in names)):
            for row in rows:
                settings = dict(self.base)
                settings.update(zip(names, combo))
                settings.update(zip(self.zipped, row))
                out.append(settings)
        return out


def _axis(section: str, name: str, values: Any) -> tuple[Any, ...]:
    if not isinstance(values, list) or not values:
        raise SweepError(f"[{section}] {name} must be a non-empty list of values")
    return tuple(plain(v) for v in values)


def sweep_from_dict(data: Mapping[str, Any], max_jobs: int | None = None,
                    root: str | Path | None = None) -> Sweep:
    """A :class:`Sweep` from the parsed file (or a dict written in Python); ``root``: the
    folder its input paths are relative to (the file's; default: the current folder)."""
    if not isinstance(data, Mapping):
        raise SweepError("a sweep must be a table with 'kind' and [base]/[grid]/[zip]")
    unknown = set(data) - _TOP_LEVEL
    if unknown:
        raise SweepError(f"unknown sweep fields: {', '.join(sorted(unknown))} "
                         f"(known: {', '.join(sorted(_TOP_LEVEL))})")
    kind = data.get("kind")
    if kind not in JOB_KINDS:
        raise SweepError(f"kind must be one of {', '.join(JOB_KINDS)}, got {kind!r}")
    sections = {}
    for section in ("base", "grid", "zip"):
        value = data.get(section, {})
        if not isinstance(value, Mapping):
            raise SweepError(f"[{section}] must be a table")
        sections[section] = value
    grid = {n: _axis("grid", n, v) for n, v in sections["grid"].items()}
    zipped = {n: _axis("zip", n, v) for n, v in sections["zip"].items()}
    twice = set(grid) & set(zipped)
    if twice:
        raise SweepError(f"an axis is in both [grid] and [zip]: {', '.join(sorted(twice))}")
    if len({len(v) for v in zipped.values()}) > 1:
        lengths = ", ".join(f"{n}: {len(v)}" for n, v in zipped.items())
        raise SweepError(f"[zip] axes must have equal lengths ({lengths})")
    base = {n: plain(v) for n, v in sections["base"].items()}
    sweep = Sweep(kind, base, grid, zipped, name=str(data.get("name", kind)),
                  root=None if root is None else Path(root).resolve())
    refuse_too_many(sweep, max_jobs)
    job = JOB_KINDS[kind]
    for settings in sweep.jobs()[:1]:
        job.validate(settings)
    for name in sweep.axes:
        job.validate({**base, name: None}, only=name)
    for section, values in (("base", {n: (v,) for n, v in base.items()}), ("grid", grid),
                            ("zip", zipped)):
        for name, axis in values.items():
            for value in axis:
                try:  # the rule of the CLI option of the same name
                    params.check(name, value)
                except (ValueError, TypeError) as exc:
                    raise SweepError(f"[{section}] {name}: {exc}") from None
    return sweep


def refuse_too_many(sweep: Sweep, max_jobs: int | None = None) -> None:
    """Refuse (exit status 4) a sweep of more than ``max_jobs`` jobs (default
    :data:`MAX_JOBS`), counted without building them."""
    check_work("jobs of the sweep", sweep.n_jobs, limit(max_jobs, MAX_JOBS, "max_jobs"),
               flag="--max-jobs N; in Python, max_jobs=N")


def load_sweep(path: str | Path, max_jobs: int | None = None, root: str | Path | None = None
               ) -> Sweep:
    """Read a sweep TOML file (numbers exactly as written); its input paths are relative
    to ``root`` (default: the file's folder)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SweepError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = load_toml(text)
    except ValueError as exc:
        raise SweepError(f"{path}: not valid TOML ({exc})") from None
    return sweep_from_dict(data, max_jobs=max_jobs, root=path.parent if root is None else root)
