"""Attacks on instance identity: a certificate or witness is about exactly one instance.

Each test crafts a file from a real certificate so that the trusted checker's
arithmetic still holds, but the file is about *another* instance than the claim
(other content, seed, positions, model class, ε, family, BOS measure).  None of
them may support the claim, and ``sinkproof verify`` may not present them as
statements about the declared seeded instance.
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

import sinkproof as sp
from sinkproof import checker
from sinkproof.claims import Proved, Refuted, claim_from_dict
from sinkproof.claims.certified import NotImplied, prove_by_certificate
from sinkproof.cli import main
from sinkproof.convex import family_certificate, position_certificate
from sinkproof.errors import CertificateError
from sinkproof.search.verify import witness_document

GAUSS = dict(p=2, T=3, content="gaussian", k=3, seed=1)
# three vectors in one half-plane: Theorem 3 bounds every trigger-free situation
HALF_PLANE = [[1.0, 0.0], [0.9, 0.1], [0.9, -0.1]]


def claim_for(task: dict, **conclusion) -> sp.claims.Claim:
    return claim_from_dict(dict(
        task=task, model=dict(kind="softmax", heads=1, values="fixed"),
        hypothesis=dict(max_error=0.05),
        conclusion={"min_bos_mass": 0.5, "at": "before_trigger", **conclusion}))


def save(tmp_path, name: str, data: dict):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def forged_gaussian(tmp_path, declared: dict = GAUSS):
    """A valid certificate for the half-plane vectors that declares gaussian content."""
    data = family_certificate(sp.TriggerTask(p=2, T=3, content=HALF_PLANE), "1/20").to_dict()
    data["instance"]["task"] = sp.TriggerTask(**declared).describe()
    assert checker.verify(data).ok  # the arithmetic holds: the attack is on identity
    return save(tmp_path, "forged.json", data)


def test_other_content_under_a_gaussian_name_proves_nothing(tmp_path):
    path = forged_gaussian(tmp_path)
    with pytest.raises(NotImplied, match="content"):
        prove_by_certificate(claim_for(GAUSS), path)


def test_another_seed_proves_nothing(tmp_path):
    real = sp.TriggerTask(**GAUSS)
    data = family_certificate(real, "1/20").to_dict()
    data["instance"]["task"]["seed"] = 2  # the vectors stay those of seed 1
    path = save(tmp_path, "seed.json", data)
    with pytest.raises(NotImplied, match="content"):
        prove_by_certificate(claim_for({**GAUSS, "seed": 2}), path)


def test_the_real_gaussian_certificate_still_proves(tmp_path):
    data = family_certificate(sp.TriggerTask(**GAUSS), "1/20").to_dict()
    path = save(tmp_path, "real.json", data)
    claim = claim_for(GAUSS, min_bos_mass=0.01, at=[dict(sequence=[0], position=1)])
    bound, _ = prove_by_certificate(claim, path)
    assert bound >= Fraction(1, 100)


def test_verify_rebuilds_seeded_content(tmp_path, capsys):
    path = forged_gaussian(tmp_path)
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err
    assert "gaussian" in err and "content" in err and "\n" not in err.strip()


def test_verify_rebuilds_seeded_content_of_a_witness(tmp_path, capsys):
    task = sp.TriggerTask(p=2, T=2, content="gaussian", k=3, seed=4, positions="onehot")
    doc = witness_document(sp.constructions.relu_solution(task), 1e-12, 0.0, "all")
    other = sp.TriggerTask(p=2, T=2, content=HALF_PLANE, positions="onehot")
    forged = witness_document(sp.constructions.relu_solution(other), 1e-12, 0.0, "all")
    forged["instance"]["task"] = doc["instance"]["task"]
    assert checker.verify(forged).ok
    assert main(["verify", str(save(tmp_path, "w.json", doc))]) == 0
    capsys.readouterr()
    assert main(["verify", str(save(tmp_path, "fw.json", forged))]) == 2
    assert "content" in capsys.readouterr().err


def test_verify_prints_the_digest_that_check_reports(tmp_path, capsys):
    data = family_certificate(sp.TriggerTask(p=2, T=3), "1/20").to_dict()
    path = save(tmp_path, "c.json", data)
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    digest = checker.verify(data).digest
    assert len(digest) == 64 and f"sha256:{digest}" in out
    claim = claim_for(dict(p=2, T=3), at=[dict(sequence=[0], position=1)])
    # a claim no theorem settles first is not needed: the certificate route reports it
    bound, stated = prove_by_certificate(claim, path)
    assert digest in stated
    assert main(["verify", "--statement", "-", str(path)]) == 0
    statement = json.loads(capsys.readouterr().out)  # stdout carries the statement only
    assert statement == checker.verify(data).statement


@pytest.mark.parametrize(("cert_task", "match"), [
    (dict(p=2, T=3, triggers="multi"), "trigger family differs"),
    (dict(p=2, T=4), "T differs"),
    (dict(p=2, T=3, content="gaussian", k=4, seed=0), "content vector 0 differs"),
])
def test_another_family_length_or_content_proves_nothing(tmp_path, cert_task, match):
    data = family_certificate(sp.TriggerTask(**cert_task), "1/20").to_dict()
    path = save(tmp_path, "f.json", data)
    with pytest.raises(NotImplied, match=match):
        prove_by_certificate(claim_for(dict(p=2, T=3), at=[dict(sequence=[0], position=1)]),
                             path)


def test_a_sink_map_for_another_family_or_epsilon_proves_nothing(tmp_path):
    from sinkproof.sinkmap import sink_map

    task = sp.TriggerTask(p=1, T=2)
    claim = claim_from_dict(dict(
        task=dict(p=1, T=2), model=dict(kind="softmax", values="fixed"),
        hypothesis=dict(max_error=0.05),
        conclusion=dict(at=[dict(sequence=[0, 1], position=2)], min_bos_mass=0.5)))
    listed = sink_map(task, "1/20", positions=[((0, 1), 2)], family=[(0, 1), (1, 0)],
                      progress=False)
    assert listed.verify().ok
    with pytest.raises(NotImplied, match="all of S_T"):
        prove_by_certificate(claim, save(tmp_path, "listed.json", listed.certificate))
    smaller = sink_map(task, "1/40", positions=[((0, 1), 2)], progress=False)
    with pytest.raises(NotImplied, match="assumes error <= 1/40"):
        prove_by_certificate(claim, save(tmp_path, "eps.json", smaller.certificate))
    relu = claim_from_dict({**claim.to_dict(), "model": dict(kind="relu", values="fixed")})
    ok = sink_map(task, "1/20", positions=[((0, 1), 2)], progress=False)
    with pytest.raises(NotImplied, match="covers 1-head softmax"):
        prove_by_certificate(relu, save(tmp_path, "ok.json", ok.certificate))
    assert prove_by_certificate(claim, save(tmp_path, "ok.json", ok.certificate))[0] >= 0.5


def test_other_positions_prove_nothing(tmp_path):
    data = position_certificate(sp.TriggerTask(p=2, T=3), (0, 1, 0), 3, "1/20").to_dict()
    path = save(tmp_path, "pos.json", data)
    claim = claim_for(dict(p=2, T=3), at=[dict(sequence=[0, 1, 1], position=3)])
    with pytest.raises(NotImplied, match="no bound"):
        prove_by_certificate(claim, path)
    claim = claim_for(dict(p=2, T=3), at=[dict(sequence=[0, 1, 0], position=3)])
    assert prove_by_certificate(claim, path)[0] > Fraction(9, 10)


def test_duplicate_keys_are_refused(tmp_path):
    data = family_certificate(sp.TriggerTask(p=2, T=3), "1/20").to_dict()
    text = json.dumps(data).replace('"eps": "1/20"', '"eps": "1/2", "eps": "1/20"')
    path = tmp_path / "dup.json"
    path.write_text(text)
    with pytest.raises(CertificateError, match="duplicate key 'eps'"):
        checker.verify_file(path)


def test_unknown_fields_are_refused():
    data = family_certificate(sp.TriggerTask(p=2, T=3), "1/20").to_dict()
    data["instance"]["values_note"] = "U_fix, honestly"
    with pytest.raises(CertificateError, match="instance.values_note: unknown field"):
        checker.verify(data)


def relu_share_witness(max_bos: str) -> dict:
    """One ReLU head whose only positive score is a tiny BOS score: α_0 = 1/1000, share 1."""
    task = sp.TriggerTask(p=1, T=1)
    A = np.zeros((task.D, task.D))
    A[:, task.p + 2] = 1e-3  # every query scores 1/1000 on BOS (is_bos feature)
    doc = witness_document(sp.AttentionModel(task, "relu", A), 1.0, 1.0, "all")
    doc["claim"]["max_bos_mass"] = max_bos
    return doc


def test_relu_witness_bounds_the_share_when_it_says_share():
    doc = relu_share_witness("1/100")
    weight = checker.verify(doc)
    assert weight.ok and "BOS weight" in weight.claim  # α_0 = 1/1000 <= 1/100
    doc["claim"]["bos_measure"] = "share"
    verdict = checker.verify(doc)
    assert not verdict.ok and "share" in verdict.failure  # α_0 / Σα = 1
    doc["claim"]["max_bos_mass"] = "1"
    assert "BOS share" in checker.verify(doc).claim


def test_refuting_witness_carries_the_exact_epsilon_and_the_share(tmp_path):
    claim = claim_from_dict(dict(
        task=dict(p=2, T=3), model=dict(kind="relu", heads=1, values="fixed"),
        hypothesis=dict(max_error=0.1), conclusion=dict(min_bos_mass=0.5, at="nontrigger")))
    out = sp.check(claim, witness=tmp_path / "w.json")
    assert isinstance(out, Refuted)
    doc = json.loads((tmp_path / "w.json").read_text())
    assert Fraction(doc["claim"]["max_error"]) <= Fraction(1, 10)
    assert doc["claim"]["bos_measure"] == "share"
    assert checker.verify(doc).digest in out.detail


def test_a_proof_by_certificate_names_its_digest(tmp_path):
    cert = tmp_path / "c.json"
    claim = claim_from_dict(dict(
        task=dict(p=1, T=2), model=dict(kind="softmax", values="fixed"),
        hypothesis=dict(max_error=0.05),
        conclusion=dict(at=[dict(sequence=[0, 1], position=2)], min_bos_mass=0.5)))
    out = sp.check(claim, certificate_out=cert, search=False)
    assert isinstance(out, Proved) and checker.verify_file(cert).digest in out.detail


def test_a_witness_statement_refutes_only_its_own_claim(tmp_path):
    from sinkproof.claims.witness import refuting_statement

    claim = claim_from_dict(dict(
        task=dict(p=2, T=3), model=dict(kind="relu", heads=1, values="fixed"),
        hypothesis=dict(max_error=0.1), conclusion=dict(min_bos_mass=0.5, at="nontrigger")))
    out = sp.check(claim, witness=tmp_path / "w.json")
    statement = checker.verify_file(tmp_path / "w.json").statement
    assert refuting_statement(statement, claim) is None

    def edited(path, value):
        st = json.loads(json.dumps(statement))
        node = st
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return refuting_statement(st, claim)

    assert "content vector 0" in edited(("instance", "content", "vectors", 0), ["1", "1"])
    assert "positions" in edited(("instance", "positions"), "onehot")
    assert "class" in edited(("model", "heads"), 2)
    assert "exceeds" in edited(("max_error",), "1/9")
    assert "BOS share" in edited(("bos_measure",), "weight")
    assert "not below" in edited(("max_bos",), "1/2")
    assert "not claimed" in edited(("bos_at",), [[-1]])
    assert isinstance(out, Refuted)
