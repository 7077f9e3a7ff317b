"""The witness checker: rigorous re-evaluation of a model on the whole family; tampering."""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.checker import verify
from sinkproof.checker.rules.witness import measure, read_witness
from sinkproof.cli import main
from sinkproof.errors import CertificateError
from sinkproof.search import (
    batch_measures,
    prefix_batch,
    rigorous_measures,
    verify_witness,
    witness_document,
)
from tests._core_strategies import models_of, small_tasks


@pytest.fixture(scope="module")
def relu_doc():
    task = sp.TriggerTask(p=2, T=3)
    return witness_document(sp.constructions.relu_solution(task), 1e-3, 0.0, "all")


def test_relu_construction_is_an_exact_witness(relu_doc):
    verdict = verify(relu_doc)
    assert verdict.ok and "exact rationals" in verdict.claim
    fig = measure(read_witness(relu_doc))
    assert fig.error_sq == 0 and fig.bos == 0
    # the family of p=2, T=3 has 4 + 16 + 64 content strings plus trigger strings
    assert fig.n_prefixes == 1 + sum(4**n + n * 4 ** (n - 1) for n in range(1, 4))


def test_softmax_witness_is_decided_by_intervals_at_the_float_value():
    task = sp.TriggerTask(p=2, T=3)
    model = sp.constructions.softmax_solution(task, L=6.0)
    ev = sp.evaluate(model)
    bos = float(ev.bos_nontrigger.max.max())
    ok = verify_witness(model, ev.max_error * (1 + 1e-9), bos * (1 + 1e-12))
    assert ok.verified
    assert ok.error == pytest.approx(ev.max_error, rel=1e-12)
    assert ok.bos_mass == pytest.approx(bos, rel=1e-12)
    assert not verify_witness(model, ev.max_error * (1 - 1e-9), 1.0).verified
    assert not verify_witness(model, 1.0, bos * (1 - 1e-12)).verified


def test_a_witness_that_holds_only_in_float64_is_rejected():
    """ReLU errors are exact rationals: with ε set to the float64 error, the checker must
    accept exactly when the true error is <= ε.  Some seeds round the float error down."""
    task = sp.TriggerTask(p=2, T=2)
    batch = prefix_batch(task)
    float_only = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        A = rng.standard_normal((task.D, task.D)) / 3
        U = rng.standard_normal((task.p, task.p + 3))
        model = sp.AttentionModel(task, "relu", A, U)
        eps = batch_measures(task, "relu", A, U, batch).max_error
        doc = witness_document(model, eps, 10.0**6, "all")
        exact_err_sq = measure(read_witness(doc)).error_sq
        truly = exact_err_sq <= Fraction(eps) ** 2
        assert verify_witness(model, eps, 10.0**6, "all").verified == truly
        float_only += not truly
    assert float_only > 0  # the case the test is about did occur


def test_cli_verify_accepts_a_saved_witness_and_rejects_tampering(tmp_path, relu_doc, capsys):
    good = tmp_path / "w.json"
    good.write_text(json.dumps(relu_doc))
    assert main(["verify", str(good)]) == 0
    assert "verified (witness)" in capsys.readouterr().out

    def tampered(change, name):
        doc = copy.deepcopy(relu_doc)
        change(doc)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc))
        return main(["verify", str(path)])

    def raise_a(doc):  # a score entry changed: errors appear
        doc["data"]["A"][0][2][2] = "5"

    assert tampered(raise_a, "a") == 1
    assert "error at" in capsys.readouterr().out

    def tighten(doc):
        doc["claim"]["max_error"] = "0"
        doc["data"]["A"][0][0][0] = "1/1000"

    assert tampered(tighten, "tight") == 1
    assert tampered(lambda d: d["data"].pop("A"), "missing") == 2
    assert tampered(lambda d: d["claim"].__setitem__("max_error", 0.5), "float") == 2
    assert tampered(lambda d: d["claim"]["model_class"].__setitem__("heads", 2), "heads") == 2
    assert tampered(lambda d: d["claim"].__setitem__("where", "sometimes"), "where") == 2
    assert "claim.where" in capsys.readouterr().err


def test_fixed_value_claim_needs_u_fix():
    task = sp.TriggerTask(p=1, T=2)
    model = sp.AttentionModel(task, "relu", np.zeros((task.D, task.D)),
                              2 * sp.fixed_values(1))
    doc = witness_document(model, 1.0, 1.0)
    assert doc["instance"]["values"] == "learned"
    doc["instance"]["values"] = doc["claim"]["model_class"]["values"] = "fixed"
    with pytest.raises(CertificateError, match="U_fix"):
        verify(doc)


def test_bos_mass_is_checked_in_every_head_at_the_named_positions():
    task = sp.TriggerTask(p=1, T=2)
    A = np.zeros((2, task.D, task.D))
    A[1] = sp.constructions.softmax_score_matrix(task, 3.0)
    model = sp.AttentionModel(task, "softmax", A, np.zeros((2, 1, 4)))
    where = {((0, 0), 2)}
    rep = verify_witness(model, 1.0, 0.5, where)
    # head 1 puts e^3 / (e^3 + 2) on BOS at a content position
    assert not rep.verified
    assert rep.bos_mass == pytest.approx(np.exp(3) / (np.exp(3) + 2), rel=1e-12)
    assert verify_witness(model, 1.0, 0.92, where).verified
    with pytest.raises(ValueError, match="position"):
        verify_witness(model, 1.0, 0.92, {((0, 0), 3)})


def test_gaussian_content_round_trips_exactly():
    task = sp.TriggerTask(p=2, T=2, content="gaussian", k=3, seed=4, positions="onehot")
    model = sp.constructions.relu_solution(task)
    rep = verify_witness(model, 1e-12, 0.0, "all")
    assert rep.verified and rep.error == 0.0


def test_astronomical_logits_are_refused_not_attempted():
    task = sp.TriggerTask(p=1, T=1)
    A = np.zeros((task.D, task.D))
    A[1, 1] = 1e300  # content query, content key
    doc = witness_document(sp.AttentionModel(task, "softmax", A), 1.0, 1.0)
    with pytest.raises(CertificateError, match="BOS score"):
        verify(doc)
    A[1, 1] = -1e300  # the other way round is harmless: exp underflows to [0, 2^-P]
    assert verify(witness_document(sp.AttentionModel(task, "softmax", A), 1.0, 1.0)).ok


@st.composite
def small_models(draw):
    task = draw(small_tasks(triggers=("single", "multi")).filter(lambda t: t.T <= 3))
    return draw(models_of(task)), draw(st.sampled_from(["nontrigger", "trigger", "all"]))


@settings(max_examples=25)
@given(small_models())
def test_checker_agrees_with_the_float_evaluator(case):
    """Two independent paths (numpy prefix kernel; stdlib + mpmath checker) on one model."""
    model, where = case
    ev = sp.evaluate(model)
    err_up, bos_up = rigorous_measures(model, where, dps=30)
    assert err_up == pytest.approx(ev.max_error, rel=1e-9, abs=1e-300)
    stats = {"nontrigger": [ev.bos_nontrigger], "trigger": [ev.bos_trigger],
             "all": [ev.bos_nontrigger, ev.bos_trigger]}[where]
    highs = [float(np.nanmax(s.max)) for s in stats if s.count]
    if highs:
        assert bos_up == pytest.approx(max(highs), rel=1e-9, abs=1e-300)
    else:
        assert np.isnan(bos_up)
