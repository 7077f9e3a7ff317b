"""What the installed package ships besides code: the theory page and the example claims.

``sinkproof/data/theory.md`` is docs/theory.md and ``sinkproof/data/claims`` is
examples/claims (links in the repository, copies in a wheel), so ``sinkproof theory`` and
``sinkproof check --example NAME`` work from any installation.
"""

from __future__ import annotations

import difflib
import re
from importlib import resources
from pathlib import Path

from .errors import InputError

_SECTION = re.compile(r"^## (\d+)\. ", re.M)


def data_path(*parts: str) -> Path:
    """The path of a file shipped under ``sinkproof/data``."""
    return Path(str(resources.files("sinkproof").joinpath("data", *parts)))


def theory_text() -> str:
    """The theory page (docs/theory.md): the task, the models, the theorems and proofs."""
    return data_path("theory.md").read_text(encoding="utf-8")


def theory_sections() -> dict[int, str]:
    """Section number -> its title line (``## 4. The theorems and their proofs``)."""
    text = theory_text()
    return {int(m.group(1)): text[m.start():text.index("\n", m.start())]
            for m in _SECTION.finditer(text)}


def theory_section(number: int) -> str:
    """Section ``number`` of the theory page, from its heading to the next section's."""
    text = theory_text()
    starts = {int(m.group(1)): m.start() for m in _SECTION.finditer(text)}
    if number not in starts:
        raise InputError(f"the theory page has no section {number}; its sections are "
                         f"{', '.join(map(str, sorted(starts)))}")
    later = [s for s in starts.values() if s > starts[number]]
    return text[starts[number]:min(later) if later else len(text)].rstrip() + "\n"


def example_names() -> list[str]:
    """The shipped example claims, by name (the file name without ``.toml``)."""
    return sorted(p.stem for p in data_path("claims").glob("*.toml"))


def example_path(name: str) -> Path:
    """The file of the shipped example claim ``name`` (with or without ``.toml``)."""
    stem = name.removesuffix(".toml")
    path = data_path("claims", f"{stem}.toml")
    if not path.is_file():
        close = difflib.get_close_matches(stem, example_names(), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise InputError(f"no example claim {name!r}{hint}; `sinkproof check --example` "
                         "lists them")
    return path
