"""Every size field of every certificate kind is estimated before anything is allocated or
looped over (issue 24, item 3): a small file that names a huge size (``T = 10^6``,
``L = 10^6``, ``p = 10^6``, ``n = 10^8``, ``heads = 10^6``, ``layers = 10^5``) is answered
within a second — refused for size (:class:`LimitExceeded`, exit 4) naming the quantity, or
decided when the number does not matter to the check — and never hangs.

The base certificates are verified ones of the golden corpus (``tests/golden/corpus.py``)."""

from __future__ import annotations

import copy
import json
import time

import pytest

from sinkproof import checker
from sinkproof.checker import CertificateError, LimitExceeded
from sinkproof.checker.family.paper import n_prefixes
from sinkproof.cli import main
from tests.golden.corpus import VERDICTS, records

RECORDED = json.loads(VERDICTS.read_text(encoding="utf-8"))


def _verified(kind: str, values: str | None = None) -> dict:
    for record in records():
        cert = record["cert"]
        if (cert["kind"] == kind and not record["limits"]
                and RECORDED[record["id"]]["outcome"] == "verified"
                and (values is None or cert["claim"]["model_class"]["values"] == values)):
            return copy.deepcopy(cert)
    raise AssertionError(f"no verified {kind} certificate in the golden corpus")


def _timed(cert: dict) -> tuple[float, object]:
    start = time.perf_counter()
    try:
        result: object = checker.verify(cert)
    except CertificateError as exc:
        result = exc
    return time.perf_counter() - start, result


HUGE = [  # (kind, where the field is, field, value, the limit that must refuse it or None)
    ("witness", "task", "T", 10**6, "prefixes"),
    ("witness", "task", "p", 10**6, "content"),
    ("witness", "model_class", "heads", 10**6, "work"),
    ("hull", "task", "p", 10**6, "content"),
    ("hull-family", "task", "p", 10**6, "content"),
    ("sinkmap-socp", "task", "p", 10**6, "content"),
    ("sinkmap-gated", "task", "p", 10**6, "content"),
    ("bnb-learned-values", "task", "p", 10**6, "content"),
    ("bnb-learned-values", "task", "T", 10**6, None),
    ("bnb-heads", "task", "p", 10**6, "content"),
    ("bnb-heads", "task", "T", 10**6, None),
    ("paper-witness", "task", "L", 10**6, "prefixes"),
    ("paper-witness", "task", "n", 10**8, "content"),
    ("paper-hull-family", "task", "n", 10**8, "content"),
    ("paper-bnb-learned-values", "task", "n", 10**8, "content"),
    ("paper-bnb-learned-values", "task", "L", 10**6, None),
]


@pytest.mark.parametrize(("kind", "where", "field", "value", "limit"), HUGE,
                         ids=[f"{k}-{f}" for k, _, f, _, _ in HUGE])
def test_a_huge_size_field_is_answered_within_a_second(kind, where, field, value, limit):
    cert = _verified(kind)
    target = cert["instance"]["task"] if where == "task" else cert["claim"]["model_class"]
    target[field] = value
    seconds, result = _timed(cert)
    assert seconds < 1.0, f"{kind} with {field}={value}: {seconds:.2f} s"
    if limit is not None:
        assert isinstance(result, LimitExceeded), result
        assert result.limit == limit


@pytest.mark.parametrize(("field", "value"), [("heads", 10**6), ("layers", 10**5)])
def test_a_paper_witness_with_huge_heads_or_layers_is_refused_before_reading_weights(
        field, value):
    cert = _verified("paper-witness", values="learned")
    cert["claim"]["model_class"][field] = value
    seconds, result = _timed(cert)
    assert seconds < 1.0
    assert isinstance(result, LimitExceeded) and result.limit == "content"
    assert "weight entries" in str(result)


def test_paper_prefix_count_is_closed_form_and_capped():
    """The count a paper witness is refused by: equal to the sum over depths, and for
    ``L = 10^6`` answered at once as "past the cap" instead of a 10^6-digit integer."""
    for m in range(1, 6):
        for L in range(3, 12):
            loop = sum((m**t if t <= L - 2 else 0) + (t - 1) * m**t for t in range(1, L))
            assert n_prefixes(m, L) == loop
            capped = n_prefixes(m, L, 1000)
            assert capped == loop if loop <= 1000 else capped in (loop, 1001)
    start = time.perf_counter()
    assert n_prefixes(10**6, 10**6, 2_000_000) == 2_000_001
    assert time.perf_counter() - start < 0.01


def test_a_one_kilobyte_file_with_L_a_million_exits_4(tmp_path, capsys):
    cert = _verified("paper-witness")
    cert["instance"]["task"]["L"] = 10**6
    path = tmp_path / "long.json"
    path.write_text(json.dumps(cert))
    assert path.stat().st_size < 4096
    assert main(["verify", str(path)]) == 4
    assert "prefixes" in capsys.readouterr().err


def _deep_relu_witness(layers: int) -> dict:
    for record in records():
        cert = record["cert"]
        mc = cert["claim"]["model_class"] if cert["kind"] == "paper-witness" else {}
        if (mc.get("kind") == "relu_length" and mc.get("layers") == 2
                and RECORDED[record["id"]]["outcome"] == "verified"):
            cert = copy.deepcopy(cert)
            break
    else:
        raise AssertionError("no two-layer relu_length paper witness in the golden corpus")
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        cert["data"][name] = [cert["data"][name][i % 2] for i in range(layers)]
    mc["layers"] = layers
    cert["claim"]["model_class"]["layers"] = layers
    return cert


def test_exact_rows_through_many_layers_are_refused_by_their_estimated_digits():
    """A rational map keeps a stack's rows exact, and each layer about triples their bits
    (issue 24 item 3): a 14-layer ReLU stack would compute with numbers of ~3^14 times the
    weights' length.  It is refused at once, naming the digits of the rows; its two-layer
    original is checked (the golden corpus verifies it)."""
    seconds, result = _timed(_deep_relu_witness(14))
    assert seconds < 1.0
    assert isinstance(result, LimitExceeded) and result.limit == "denominator_digits", result
    assert "exact rows entering layer" in str(result)
    deepest = int(str(result).split("entering layer ")[1].split(" ")[0]) - 1
    assert 3 <= deepest < 13  # the estimate triples per layer: refused well before layer 13
    seconds, result = _timed(_deep_relu_witness(deepest + 1))  # the deepest stack accepted
    assert isinstance(result, checker.Verdict), result
