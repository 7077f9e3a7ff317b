"""Certificate files on the producer side: the envelope the trusted checker reads
(docs/certificates.md), and the exact instance a certificate about a task must state.

The checker cannot rebuild seeded content (it imports no numpy); this module can.
:func:`task_instance` is the canonical instance (the form of the checker's verified
statement) of a :class:`~sinkproof.task.TriggerTask`, every content vector the exact
rational of the float64 value the task uses; :func:`confirm_declared_content`
rebuilds the content a verified statement *declares* (``gaussian``, ``k``, ``seed``)
and requires it to be the listed vectors exactly.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import checker
from ..certformat import FORMAT, VERSION, instance_statement
from ..errors import CertificateError
from ..files import write_file, write_file_if
from ..task import TriggerTask
from ..tasks.protocol import require


def envelope(kind: str, instance: dict[str, Any], claim: dict[str, Any],
             data: dict[str, Any]) -> dict[str, Any]:
    """``{"format", "version", "kind", "instance", "claim", "data"}``."""
    return {"format": FORMAT, "version": VERSION, "kind": kind, "instance": instance,
            "claim": claim, "data": data}


def certificate_text(cert: dict[str, Any]) -> str:
    """A certificate as the text of its file: indented JSON, one final newline."""
    return json.dumps(cert, indent=1) + "\n"


def save_json(cert: dict[str, Any], path: str | Path) -> Path:
    """Write a certificate as indented JSON; returns the path."""
    return write_file(path, certificate_text(cert), what="certificate")


def save_verified(cert: dict[str, Any], path: str | Path) -> checker.Verdict:
    """Write ``cert`` as :func:`save_json` does and return the trusted checker's verdict on
    *the file*: :func:`sinkproof.checker.verify_file` reads the written bytes under their
    temporary name, and ``path`` gets them (renamed, atomically) only when the verdict is
    ``ok``; a rejected or malformed certificate leaves nothing at ``path``.  One
    verification, of exactly the bytes that ``path`` then holds."""
    verdicts: list[checker.Verdict] = []

    def verified(written: Path) -> bool:
        verdicts.append(checker.verify_file(written))
        return verdicts[-1].ok

    write_file_if(path, certificate_text(cert), verified, what="certificate")
    return verdicts[-1]


def task_instance(task: TriggerTask) -> dict[str, Any]:
    """The canonical instance of ``task`` (``p, T, triggers, content, values``), as the
    checker's statement writes it, with fixed values; built from the task itself."""
    require(task, "has_positions", "a hull instance")
    content = [[Fraction(float(x)) for x in row] for row in task.content]
    return instance_statement(task.describe(), content)


def instance_difference(stated: dict[str, Any], expected: dict[str, Any]) -> str | None:
    """The first way two canonical instances differ, in words (``None`` when they agree
    on sizes, family, every content vector and the values)."""
    for key, name in (("p", "p"), ("T", "T"), ("triggers", "trigger family")):
        if stated.get(key) != expected.get(key):
            return f"{name} differs: certificate {stated.get(key)!r}, claim {expected.get(key)!r}"
    mine, theirs = stated["content"]["vectors"], expected["content"]["vectors"]
    if len(mine) != len(theirs):
        return f"content differs: certificate k={len(mine)}, claim k={len(theirs)}"
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if a != b:
            return f"content vector {i} differs: certificate {a}, claim {b} (exact rationals)"
    if stated.get("values") != expected.get("values"):
        return "values differ from the claim's"
    return None


def confirm_declared_content(instance: dict[str, Any]) -> str:
    """Rebuild the content a verified instance declares and require equality.

    Gaussian content is regenerated from ``k`` and ``seed`` here (the checker cannot);
    signed content was rebuilt and custom content compared by the checker.  Returns a
    short line saying what was confirmed; raises CertificateError on a mismatch."""
    content = instance["content"]
    if content["scheme"] != "gaussian":
        return f"{content['scheme']} content confirmed by the checker"
    task = TriggerTask(p=instance["p"], T=instance["T"], content="gaussian", k=content["k"],
                       seed=content["seed"], triggers=instance["triggers"])
    expected = task_instance(task)["content"]["vectors"]
    for i, (listed, real) in enumerate(zip(content["vectors"], expected)):
        if listed != real:
            raise CertificateError(
                f"instance.content_vectors[{i}]: not the gaussian content it declares "
                f"(k={content['k']}, seed={content['seed']}): listed {listed}, rebuilt {real}")
    return f"gaussian content rebuilt from k={content['k']}, seed={content['seed']}: equal"


class CertificateMixin:
    """``to_dict()`` supplied by the class; adds ``save(path)`` and ``verify()`` (exact)."""

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def save(self, path: str | Path) -> Path:
        """Write the certificate file (checked later by ``sinkproof verify``)."""
        return save_json(self.to_dict(), path)

    def verify(self) -> Any:
        """Re-check this certificate with the trusted checker; returns its Verdict."""
        return checker.verify(self.to_dict())
