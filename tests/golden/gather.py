"""Pytest plugin that gathers the golden certificate corpus: every certificate the test
suite hands to the checker.

Run ``GOLDEN_DUMP=/tmp/corpus python -m pytest -p tests.golden.gather -n 2`` (the default
suite); each certificate that reaches the checker's kind dispatch is written once to
``$GOLDEN_DUMP/<hash>.json`` together with the limits in force (those that differ from the
defaults).  ``python -m tests.golden.corpus import /tmp/corpus`` then selects and stores the
corpus under ``tests/data/golden/`` and records the verdicts (see that module).

It wraps the dispatch (``sinkproof.checker._checker``), not ``verify``: producers bind
``verify`` at import time, and the dispatch sees every certificate after its envelope has
been read, whichever name was used to call the checker.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import types

import sinkproof.checker as _checker_face
from sinkproof.checker import limits as _limits

_DIR = os.environ.get("GOLDEN_DUMP")
_MAX_CHARS = 1_000_000


def _non_default_limits() -> dict[str, int]:
    cur = _limits.current()
    return {f.name: getattr(cur, f.name) for f in dataclasses.fields(cur)
            if getattr(cur, f.name) != getattr(_limits.DEFAULT, f.name)}


def _dump(cert: object) -> None:
    try:
        text = json.dumps(cert, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):  # not a JSON certificate (a Python object in a test)
        return
    if len(text) > _MAX_CHARS:
        return
    record = {"limits": _non_default_limits(), "cert": cert}
    body = json.dumps(record, sort_keys=True)
    key = hashlib.sha256(body.encode()).hexdigest()[:24]
    path = os.path.join(_DIR, key + ".json")
    if os.path.exists(path):
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(body)
    os.replace(tmp, path)


def pytest_configure(config: object) -> None:
    if not _DIR:
        return
    os.makedirs(_DIR, exist_ok=True)
    original = _checker_face._checker

    def dispatch(kind: str) -> object:
        module = original(kind)

        def verify(cert: object) -> object:
            _dump(cert)
            return module.verify(cert)

        return types.SimpleNamespace(verify=verify)

    _checker_face._checker = dispatch
