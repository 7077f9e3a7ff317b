"""``sp.load_witness``: a witness file read back as the model it describes, and refused
when it was tampered with or is not a witness."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from conftest import checker_pending
from hypothesis import given, settings

import sinkproof as sp
from sinkproof import strategies as sps
from sinkproof.attention import MAPS
from sinkproof.cli import main
from sinkproof.errors import CertificateError
from sinkproof.search import witness_document

RELU_CLAIM = """
title = "a ReLU head needs a sink (false: Theorem 4's head has none)"
[task]
p = 1
T = 2
[model]
kind = "relu"
heads = 1
values = "fixed"
[hypothesis]
max_error = "1/20"
[conclusion]
min_bos_mass = 0.5
at = "nontrigger"
"""


def _save(doc: dict, path) -> str:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def test_the_file_of_check_witness_loads_back_as_the_refuting_model(tmp_path, capsys):
    claim = tmp_path / "claim.toml"
    claim.write_text(RELU_CLAIM, encoding="utf-8")
    out = tmp_path / "w.json"
    assert main(["check", str(claim), "--witness", str(out)]) == 1  # refuted
    capsys.readouterr()
    model, info = sp.load_witness(out)
    assert isinstance(model, sp.AttentionModel) and model.kind == "relu" and model.H == 1
    assert info.verified is True and info.exact and info.digest
    assert info.max_error <= Fraction(1, 20) and info.max_bos_mass < Fraction(1, 2)
    assert info.bos_measure == "share"
    # the loaded model is the refutation: accurate, and below the claimed BOS mass
    sp.testing.assert_solves(model, eps="1/20")
    sp.testing.assert_no_sink(model, max_bos_mass="1/2")


@settings(max_examples=12, deadline=None)
@given(sps.models(sps.tasks(max_p=2, max_T=2),  # a witness needs the checker's map row
                  kind=["softmax", "relu", *sorted(set(MAPS) - set(checker_pending()))],
                  values=["fixed", "learned"]))
def test_round_trip_keeps_every_parameter_and_the_task(tmp_path_factory, model):
    path = tmp_path_factory.mktemp("w") / "w.json"
    _save(witness_document(model, 1e6, 1e6, "all"), path)  # ReLU weights exceed 1
    loaded, info = sp.load_witness(path)
    assert np.array_equal(loaded.A, model.A) and np.array_equal(loaded.U, model.U)
    assert np.array_equal(loaded.map_params, model.map_params)
    assert (loaded.gate_w is None) == (model.gate_w is None)
    if model.gate_w is not None:
        assert np.array_equal(loaded.gate_w, model.gate_w)
        assert np.array_equal(loaded.gate_c, model.gate_c)
    assert loaded.kind == model.kind and loaded.values == model.values
    assert loaded.task.describe() == model.task.describe()
    assert np.array_equal(loaded.task.content, model.task.content)
    assert info.exact and info.verified and info.where == "all"


@pytest.fixture
def relu_doc():
    return witness_document(sp.constructions.relu_solution(sp.TriggerTask(1, 2)), 1e-3, 0.0,
                            "all")


def test_a_tampered_parameter_is_refused_with_the_failing_inequality(tmp_path, relu_doc):
    relu_doc["data"]["A"][0][0][0] = "5"
    path = _save(relu_doc, tmp_path / "w.json")
    with pytest.raises(CertificateError, match="does not verify: .*fails"):
        sp.load_witness(path)
    model, info = sp.load_witness(path, verify=False)  # asked not to check: loads as written
    assert model.A[0, 0, 0] == 5.0 and info.verified is None and info.digest is None


def test_a_tampered_content_vector_is_refused(tmp_path):
    task = sp.TriggerTask(1, 2, content="gaussian", k=2, seed=3)
    doc = witness_document(sp.constructions.softmax_solution(task, 5.0), 10.0, 1.0, "all")
    doc["instance"]["content_vectors"][0][0] = "1/3"
    with pytest.raises(CertificateError, match="content vectors disagree"):
        sp.load_witness(_save(doc, tmp_path / "w.json"))


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(kind="hull-family"), "not a witness"),
    (lambda d: d["data"].pop("A"), "data.A"),
    (lambda d: d["claim"].update(max_error="x"), "max_error"),
    (lambda d: d.update(format="other"), "format"),
])
def test_malformed_files_get_a_one_line_reason(tmp_path, relu_doc, change, message):
    change(relu_doc)
    with pytest.raises(CertificateError, match=message) as info:
        sp.load_witness(_save(relu_doc, tmp_path / "w.json"), verify=False)
    assert "\n" not in str(info.value)


def test_a_file_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "w.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(CertificateError):
        sp.load_witness(path)
