"""The golden corpus: every certificate the test suite hands to the checker (gathered by
``tests/golden/gather.py``, stored by ``tests/golden/corpus.py``) gets, byte for byte, the
verdict recorded for it — the verified statement, its digest, the claim, the failing
inequality, the details, or the same kind of rejection (refused for size, naming the same
limit; malformed).  The gate for every change inside ``sinkproof/checker/``: a rewrite that
changes any verified statement fails here."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.golden.corpus import KINDS, VERDICTS, outcome, records

RECORDS = records()
RECORDED = json.loads(VERDICTS.read_text(encoding="utf-8"))
SLOW = frozenset({"10376cf46e8864fce2b2179c"})
"""Records whose check takes seconds (a paper witness over a long family): the slow run."""


def test_corpus_covers_every_kind_and_outcome() -> None:
    kinds = Counter(r["cert"]["kind"] for r in RECORDS)
    assert set(kinds) == set(KINDS)
    outcomes = Counter(v["outcome"] for v in RECORDED.values())
    assert set(outcomes) == {"verified", "failed", "refused", "malformed"}
    assert set(RECORDED) == {r["id"] for r in RECORDS}


@pytest.mark.parametrize("kind", KINDS)
def test_verdicts_are_byte_identical(kind: str) -> None:
    for record in RECORDS:
        if record["cert"]["kind"] != kind or record["id"] in SLOW:
            continue
        assert outcome(record) == RECORDED[record["id"]], record["id"]


@pytest.mark.slow
@pytest.mark.parametrize("record_id", sorted(SLOW))
def test_slow_verdicts_are_byte_identical(record_id: str) -> None:
    (record,) = [r for r in RECORDS if r["id"] == record_id]
    assert outcome(record) == RECORDED[record_id]


def test_a_tampered_verified_certificate_is_not_verified_with_its_statement() -> None:
    """The comparison can fail: a verified certificate whose claimed bound is changed gets
    another verdict than the recorded one."""
    record = next(r for r in RECORDS if RECORDED[r["id"]]["outcome"] == "verified"
                  and r["cert"]["kind"] == "witness")
    cert = json.loads(json.dumps(record["cert"]))
    cert["claim"]["max_error"] = "0"
    assert outcome({**record, "cert": cert}) != RECORDED[record["id"]]
