"""The pure-composition theorem as a certificate: the trusted ``paper-composition`` rule
recomputes the instance from the family's token vectors and checks it exactly; the claim
registry reads its disjunctive statement ("some layer sinks at position 1 of (BOS, a) or of
(BOS, b)") and proves a pure stack claim with it, as the theorem route does."""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof import checker
from sinkproof.checker.rules.composition import ray_gap_squared
from sinkproof.claims import claim_from_dict
from sinkproof.claims.certified import certificate_maker, prove_by_certificate
from sinkproof.claims.implications import NotImplied, implied_bound
from sinkproof.claims.outcome import Proved
from sinkproof.errors import CertificateError
from sinkproof.symbolic.bounds import ray_gap
from sinkproof.theorems.composition import composition_bound, composition_items

SIGNS = [[-1.0], [1.0]]
TASK = sp.PaperTask(n=4, L=5, content=SIGNS)


def _claim(**changes) -> object:
    data = {"task": {"setting": "paper", "n": 4, "L": 5, "content": SIGNS},
            "model": {"kind": "softmax", "heads": 1, "layers": 2, "residual": False},
            "hypothesis": {"max_error": 0.05},
            "conclusion": {"min_bos_mass": 0.6, "positions": "some", "heads": "some"}}
    for key, value in changes.items():
        data[key] = {**data[key], **value}
    return claim_from_dict(data)


@pytest.mark.parametrize("layers", [1, 2, 3])
def test_the_checker_verifies_every_layer_count_and_no_more(layers: int) -> None:
    item = composition_bound(TASK, "1/20", layers)
    cert = item.certificate(TASK)
    verdict = checker.verify(cert)
    assert verdict.ok, verdict.failure
    b = Fraction(verdict.statement["conclusion"]["min_bound"])
    assert b <= Fraction(item.value) and item.value - float(b) < 1e-11
    assert verdict.statement["conclusion"]["g_squared"] == "45/88"
    raised = copy.deepcopy(cert)
    raised["claim"]["min_bound"] = str(b + Fraction(1, 10**9))
    failed = checker.verify(raised)
    assert not failed.ok and "(1 - b)^(2N)" in failed.failure


def test_every_instance_is_recomputed_not_read() -> None:
    """The checker's ``g²`` is the producer's for every (a, b, τ, j) of a three-content set,
    and an instance the theorem does not apply to (``g <= 2ε``) fails."""
    task = sp.PaperTask(n=5, L=6, content=[[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5]])
    for item in composition_items(task, "1/100", 2):
        cert = item.certificate(task, min_bound="0")
        verdict = checker.verify(cert)
        assert verdict.ok and Fraction(verdict.details["g_squared"].split(" ")[0]) == \
            item.g_squared
    weak = composition_items(task, "1/2", 2)[-1]
    assert not weak.applies
    verdict = checker.verify(weak.certificate(task, min_bound="0"))
    assert not verdict.ok and "4 eps^2 < g^2" in verdict.failure


@settings(max_examples=200, deadline=None)
@given(st.lists(st.fractions(-5, 5, max_denominator=7), min_size=4, max_size=4))
def test_the_checkers_ray_gap_is_the_symbolic_layers(xs: list[Fraction]) -> None:
    """Two independent closed forms of ``g(c, c')²`` (the trusted rule's, the producer's)."""
    c, d = xs[:2], xs[2:]
    if not any(c) or not any(d):
        return
    assert ray_gap_squared(c, d) == ray_gap(c, d).g_squared


@pytest.mark.parametrize("field, value, message", [
    ("b", 0, "must differ"), ("j", 1, "data.j"), ("j", 5, "data.j"), ("trigger", 2, "trigger"),
    ("a", True, "data.a"),
])
def test_malformed_instances_are_refused(field: str, value: object, message: str) -> None:
    cert = composition_bound(TASK, "1/20", 2).certificate(TASK)
    cert["data"][field] = value
    with pytest.raises(CertificateError, match=message):
        checker.verify(cert)


def test_a_bound_above_one_and_residual_targets_are_refused() -> None:
    cert = composition_bound(TASK, "1/20", 2).certificate(TASK)
    over = copy.deepcopy(cert)
    over["claim"]["min_bound"] = "3/2"  # (1 - b)^4 g^2 would hold: b <= 1 is checked first
    verdict = checker.verify(over)
    assert not verdict.ok and "<= 1" in verdict.failure
    residual = copy.deepcopy(cert)
    residual["instance"]["task"]["residual"] = True
    with pytest.raises(CertificateError, match="residual"):
        checker.verify(residual)


def test_a_huge_layer_count_is_refused_before_the_power() -> None:
    cert = composition_bound(TASK, "1/20", 2).certificate(TASK)
    cert["instance"]["layers"] = 10**9
    with pytest.raises(checker.LimitExceeded):
        checker.verify(cert)


def test_the_claim_is_proved_by_the_certificate_as_by_the_theorem(tmp_path) -> None:
    claim = _claim()
    assert certificate_maker(claim) == "pure-composition theorem"
    by_theorem = sp.check(claim, search=False, bnb=False)
    out = tmp_path / "c.json"
    by_cert = sp.check(claim, theorems=False, search=False, bnb=False, certificate_out=out)
    assert isinstance(by_theorem, Proved) and isinstance(by_cert, Proved)
    assert by_cert.by == "certificate (pure-composition theorem)"
    assert abs(by_cert.bound - by_theorem.bound) < 1e-10
    bound, stated = prove_by_certificate(claim, out)
    assert "sha256:" in stated and bound >= Fraction(3, 5)


@pytest.mark.parametrize("change, reason", [
    (dict(model={"layers": 3}), "pure compositions of 2"),
    (dict(model={"heads": 2}), "pure compositions of 2"),
    (dict(model={"residual": True}), "pure compositions of 2"),
    (dict(task={"content": [[-1.0], [0.5]]}), "another task instance"),
    (dict(task={"L": 6}), "another task instance"),
    (dict(hypothesis={"max_error": 0.06}), "assumes error <= 1/20"),
    (dict(conclusion={"positions": "every"}), "positions = \"some\""),
    (dict(conclusion={"min_bos_mass": 0.63}), "0.626047 < b"),
])
def test_the_statement_implies_only_its_own_claims(change: dict, reason: str) -> None:
    statement = checker.verify(composition_bound(TASK, "1/20", 2).certificate(TASK)).statement
    assert implied_bound(_claim(), statement) >= Fraction(3, 5)
    with pytest.raises(NotImplied, match=reason):
        implied_bound(_claim(**change), statement)


def test_the_rows_the_statement_assumes_are_prefixes_of_the_family() -> None:
    """The statement assumes the error at position 0 and at four named rows; each is a
    prefix of the task's family (``PaperTask.prefix_codes`` refuses any other), so a
    claim's whole-family hypothesis gives them."""
    statement = checker.verify(composition_bound(TASK, "1/20", 2).certificate(TASK)).statement
    m = TASK.m
    for row in statement["hypothesis_prefixes"]:
        at = [SIGNS[c % m] for c in row]
        trigger = next((k + 1 for k, c in enumerate(row) if c >= m), None)
        assert TASK.prefix_codes(at, trigger) == tuple(row)
    assert statement["hypothesis_prefixes"][2:] == [[0, 0, 0, 2], [1, 1, 1, 2]]
