"""The golden corpus: certificates the test suite hands to the checker, with the verdict
the checker gave each when it was recorded.

``tests/data/golden/corpus.jsonl.gz`` holds one record per line, ``{"id", "limits",
"cert"}`` (``limits``: the limits in force that differ from the defaults).
``tests/data/golden/verdicts.json`` maps each id to what the checker said:
``{"outcome": "verified" | "failed" | "refused" | "malformed", ...}`` with, for a
verdict, its kind, claim, failure, details, canonical statement and digest, and for a
refusal the limit named.  ``tests/test_golden_verdicts.py`` asserts that today's checker
says byte-for-byte the same.

Commands (run from the repository root with it first on ``PYTHONPATH``)::

    python -m tests.golden.corpus import DIR   # DIR from tests/golden/gather.py
    python -m tests.golden.corpus record       # rewrite verdicts.json from the corpus
    python -m tests.golden.corpus stats        # counts by kind and outcome
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from sinkproof.checker import CertificateError, LimitExceeded, Limits, verify

HERE = Path(__file__).resolve().parents[1] / "data" / "golden"
CORPUS = HERE / "corpus.jsonl.gz"
VERDICTS = HERE / "verdicts.json"
KINDS = ("hull", "hull-family", "paper-hull-family", "paper-witness", "witness", "sinkmap-socp",
         "sinkmap-gated", "bnb-learned-values", "bnb-heads", "paper-bnb-learned-values")
"""The certificate kinds whose files the corpus keeps (a test's fake kinds are left out)."""


def canonical(value: Any) -> str:
    """Canonical JSON (sorted keys, no spaces, ASCII): the text compared byte for byte."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def records() -> list[dict[str, Any]]:
    """The corpus records, in file order."""
    with gzip.open(CORPUS, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def outcome(record: dict[str, Any]) -> dict[str, Any]:
    """What the checker says about one record, as plain data."""
    limits = Limits().replace(**record["limits"])
    try:
        v = verify(record["cert"], limits)
    except LimitExceeded as exc:
        return {"outcome": "refused", "limit": exc.limit}
    except CertificateError:
        return {"outcome": "malformed"}
    return {"outcome": "verified" if v.ok else "failed", "kind": v.kind, "claim": v.claim,
            "failure": v.failure, "details": canonical(v.details),
            "statement": canonical(v.statement), "digest": v.digest}


ROOT = Path(__file__).resolve().parents[2]
FILES = ("tests/data", "examples")
"""Folders whose certificate files join the corpus as they are, besides the gathered ones."""


def import_dir(directory: Path) -> None:
    """Store the certificates gathered in ``directory`` and the certificate files under
    :data:`FILES` as the corpus (known kinds only, each once)."""
    found = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(directory.glob("*.json"))]
    for folder in FILES:
        for path in sorted((ROOT / folder).rglob("*.json")):
            if path.is_relative_to(HERE):
                continue
            cert = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(cert, dict) and cert.get("format") == "sinkproof-certificate":
                found.append({"limits": {}, "cert": cert})
    out, seen = [], set()
    for record in found:
        cert = record["cert"]
        if not isinstance(cert, dict) or cert.get("kind") not in KINDS:
            continue
        key = hashlib.sha256(canonical(record).encode("ascii")).hexdigest()[:24]
        if key not in seen:
            seen.add(key)
            out.append({"id": key, "limits": record["limits"], "cert": cert})
    HERE.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(CORPUS, "wb", mtime=0) as raw:
        raw.write("".join(canonical(r) + "\n" for r in out).encode("ascii"))
    print(f"{len(out)} certificates stored in {CORPUS}")


def record_verdicts() -> None:
    verdicts = {r["id"]: outcome(r) for r in records()}
    VERDICTS.write_text(json.dumps(verdicts, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(verdicts)} verdicts recorded in {VERDICTS}")


def stats() -> None:
    verdicts = json.loads(VERDICTS.read_text(encoding="utf-8"))
    kinds = {r["id"]: r["cert"].get("kind") for r in records()}
    counts = Counter((kinds[i], v["outcome"]) for i, v in verdicts.items())
    for (kind, result), n in sorted(counts.items()):
        print(f"{kind:26} {result:10} {n}")
    print(f"total {sum(counts.values())}")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "stats"
    if command == "import":
        import_dir(Path(sys.argv[2]))
    elif command == "record":
        record_verdicts()
    else:
        stats()
