"""Claims in the paper's setting: schema, the theorem and certificate routes, witnesses
verified by the trusted checker, and the sampled (never certified) continuous case."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import sinkproof as sp
from sinkproof import checker
from sinkproof.claims import Open, Proved, Refuted, check, claim_from_dict
from sinkproof.claims.schema import Claim, StackClass
from sinkproof.claims.witness import refuting
from sinkproof.claims.witness import stack_witness_document as witness_document
from sinkproof.claims.witness import write_stack_witness as write_witness
from sinkproof.constructions import paper_pair_solution, paper_relu_solution
from sinkproof.search.engine import search_stack as paper_search
from tests._paper_claims import paper_claim_data

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "claims"


def data(**parts):
    return paper_claim_data("1/100", **parts)


def test_paper_claim_loads_and_sets_residual_from_layers():
    claim = claim_from_dict(data(model={"layers": 2, "heads": 1}))
    assert isinstance(claim, Claim) and isinstance(claim.model_class, StackClass)
    assert claim.task.residual and claim.model_class.residual and claim.exhaustive
    assert "2 layers x 1 head, residual" in claim.statement()
    assert claim_from_dict(claim.to_dict()).statement() == claim.statement()


@pytest.mark.parametrize("change, message", [
    ({"model": {"kind": "linear"}}, "model.kind"),
    ({"model": {"values": "fixed", "heads": 2}}, "fixed"),
    ({"model": {"mlp": True}}, "unknown field"),
    ({"conclusion": {"at": "trigger"}}, "conclusion.at"),
    ({"task": {"content": [[1.0, 2.0]]}}, "n-3"),
    ({"hypothesis": {"max_error": 2}}, "max_error"),
])
def test_bad_paper_claims_are_one_line_errors(change, message):
    with pytest.raises((ValueError, TypeError), match=message) as info:
        claim_from_dict(data(**change))
    assert "\n" not in str(info.value)


def test_fixed_values_theorem_decides_exactly_at_the_boundary():
    # 1 - √2/10 = 0.85857864...: b just below is proved, just above is not (by the theorem)
    eps = {"max_error": "1/10"}
    fixed = {"kind": "softmax", "values": "fixed"}
    below = claim_from_dict(data(model=fixed, hypothesis=eps,
                                 conclusion={"min_bos_mass": "0.8585786437"}))
    out = check(below, search=False)
    assert isinstance(out, Proved) and out.by.startswith("Theorem 3")
    above = claim_from_dict(data(model=fixed, hypothesis=eps,
                                 conclusion={"min_bos_mass": "0.8585786438"},
                                 task={"content": "uniform", "n": 16, "L": 16}))
    out = check(above, search=False)
    assert isinstance(out, Open) and "theorem3 gives α_t0 >= 1 - ε/d (d >= 1/√2)" in out.render()


def test_certificate_route_beats_the_universal_bound(tmp_path):
    # content 1/2 and 1 only: every hull stays at content >= 1/2, so d >= √3/2 > 1/√2
    claim = claim_from_dict(data(task={"content": [[0.5], [1.0]]}, model={"values": "fixed"},
                                 hypothesis={"max_error": "1/10"},
                                 conclusion={"min_bos_mass": "0.87"}))
    out = check(claim, search=False, certificate_out=tmp_path / "c.json")
    assert isinstance(out, Proved) and out.by.startswith("certificate"), out.render()
    assert out.bound >= 0.87
    assert checker.verify_file(tmp_path / "c.json").ok
    # the same certificate does not prove a claim at a larger ε
    wider = claim.with_options(certificate=str(tmp_path / "c.json"))
    wider = claim_from_dict({**wider.to_dict(), "hypothesis": {"max_error": "1/5"}})
    out = check(wider, search=False, certificate=tmp_path / "c.json")
    assert isinstance(out, Open) and "assumes error <= 1/10, the claim allows 1/5" in out.render()


def test_two_cancelling_heads_refute_p1_with_learned_values(tmp_path):
    claim = claim_from_dict(data(model={"heads": 2}, conclusion={"positions": "some"}))
    out = check(claim, witness=tmp_path / "w.json")
    assert isinstance(out, Refuted), out.render()
    verdict = checker.verify_file(tmp_path / "w.json")
    assert verdict.ok and verdict.statement["where"] == "nontrigger"
    assert Fraction(verdict.statement["max_bos_mass"]) < Fraction(1, 2)
    # the same model as a float evaluation agrees: error below ε, no sink
    ev = sp.evaluate(out.model)
    assert ev.source == "exhaustive" and ev.max_error < 0.01
    assert float(np.max(ev.bos_nontrigger.max)) < 1e-6


def test_p3_relu_refutes_a_relu_sink_claim_in_two_residual_layers(tmp_path):
    claim = claim_from_dict(data(model={"kind": "relu_length", "layers": 2, "heads": 2},
                                 conclusion={"positions": "some", "min_bos_mass": "1/1000"}))
    out = check(claim, witness=tmp_path / "w.json")
    assert isinstance(out, Refuted), out.render()
    assert checker.verify_file(tmp_path / "w.json").statement["model_class"]["residual"]


def test_tampered_witness_fails_and_does_not_refute(tmp_path):
    claim = claim_from_dict(data(model={"heads": 2}, conclusion={"positions": "some"}))
    model = paper_pair_solution(claim.task, 0.01)
    doc, _, _ = witness_document(claim, model)
    doc["data"]["W_V"][0][1][2][2] = "0"  # head 1 no longer cancels head 0's content
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    verdict = checker.verify_file(path)
    assert not verdict.ok and "error" in verdict.failure
    assert refuting(claim, verdict) is None


def test_witness_with_a_low_bos_bound_fails(tmp_path):
    claim = claim_from_dict(data(model={"heads": 2}, conclusion={"positions": "some"}))
    doc, _, bos = witness_document(claim, paper_pair_solution(claim.task, 0.01))
    assert 0 < bos < 1e-9
    doc["claim"]["max_bos_mass"] = "1/1000000000000000000000"  # below the true BOS weight
    path = tmp_path / "w.json"
    path.write_text(json.dumps(doc))
    verdict = checker.verify_file(path)
    assert not verdict.ok and "BOS weight" in verdict.failure


@pytest.mark.parametrize("change, message", [
    (lambda d: d["claim"]["model_class"].update(residual=True), "residual"),
    (lambda d: d["instance"]["task"].update(content="uniform"), "finite"),
    (lambda d: d["claim"].update(where=[{"content": [0, 0], "trigger_at": 2,
                                         "heads": "every"}]), "trigger_at"),
    (lambda d: d["data"]["W_O"].append(d["data"]["W_O"][0]), "W_O"),
])
def test_malformed_paper_witnesses_are_rejected(change, message):
    claim = claim_from_dict(data(model={"kind": "relu_length"}))
    doc, _, _ = witness_document(claim, paper_relu_solution(claim.task))
    change(doc)
    with pytest.raises(checker.CertificateError, match=message):
        checker.verify(doc)


def test_checker_error_matches_the_float_evaluation_of_a_random_model():
    rng = np.random.default_rng(3)
    task = sp.PaperTask(n=4, L=4, content=[[-1.0], [0.5]], residual=True)
    W = dict(W_Q=rng.normal(size=(2, 1, 4, 4)), W_K=rng.normal(size=(2, 1, 4, 4)),
             W_V=0.3 * rng.normal(size=(2, 1, 4, 4)), W_O=0.3 * rng.normal(size=(2, 4, 4)))
    model = sp.paper_model(task, "softmax", **W)
    claim = claim_from_dict(data(task={"L": 4, "content": [[-1.0], [0.5]]},
                                 model={"layers": 2}, hypothesis={"max_error": "0.999"},
                                 conclusion={"min_bos_mass": "0.9999999",
                                             "positions": "some"}))
    doc, err, bos = witness_document(claim, model)
    ev = sp.evaluate(model)
    assert err == pytest.approx(ev.max_error, rel=1e-9)
    assert bos == pytest.approx(float(np.max(ev.bos_nontrigger.max)), rel=1e-9)
    if err <= 0.999 and bos < 0.9999:
        verdict = checker.verify(doc)
        assert verdict.ok
        assert float(Fraction(verdict.details["error_sq_upper"])) == pytest.approx(err**2,
                                                                                   rel=1e-9)


def test_every_position_claim_is_refuted_by_one_listed_position(tmp_path):
    # a relu layer with no sink anywhere: the witness lists every non-trigger position
    claim = claim_from_dict(data(model={"kind": "relu_length"},
                                 conclusion={"positions": "every", "heads": "every"}))
    found = write_witness(claim, paper_relu_solution(claim.task), tmp_path / "w.json")
    assert found is not None and "every non-trigger position" in found.where


@pytest.mark.slow  # 2.5 s of CPU in the default run; CI runs it
def test_continuous_content_is_open_and_says_sampled():
    claim = claim_from_dict(data(task={"content": "uniform"}, model={"heads": 2},
                                 conclusion={"positions": "some"},
                                 check={"restarts": 1, "steps": 100, "samples": 32,
                                        "budget": 20}))
    out = check(claim)
    assert isinstance(out, Open) and out.exit_code == 3
    text = out.render()
    assert "sampled + adversarial" in text and "lower estimate" in text


@pytest.mark.slow  # 2 s of CPU in the default run; CI runs it
def test_search_reports_a_frontier_and_never_claims_more():
    task = sp.PaperTask(n=4, L=4, content=[[-1.0], [1.0]])
    res = paper_search(task, "softmax", 1, 1, max_error=0.05, max_bos_mass=0.5, restarts=2,
                       steps=100, budget=30)
    assert res.source == "exhaustive" and res.n_sequences == task.n_sequences
    assert res.restarts == 2 and len(res.frontier) == 2
    assert res.error == min(e for e, _ in res.frontier) or res.error <= 0.05


# ---------------------------------------------------------------- the CLI's --setting
def test_setting_paper_is_a_one_line_error_where_it_does_not_apply(capsys):
    from sinkproof.cli import main

    for command in (["report"],
                    ["experiment", "--smoke"], ["sweep", "nothing.toml", "--out", "x"]):
        assert main([*command, "--setting", "paper"]) == 2, command
        err = capsys.readouterr().err.strip()
        assert "--setting paper does not apply" in err and "\n" not in err


def test_check_setting_must_match_the_claim(capsys):
    from sinkproof.cli import main

    assert main(["check", "--setting", "trigger", str(EXAMPLES / "paper_p3_relu.toml")]) == 2
    assert "'paper' setting" in capsys.readouterr().err
    assert main(["check", "--setting", "paper", "--no-search",
                 str(EXAMPLES / "paper_p1_fixed_values.toml")]) == 0


def test_certify_setting_paper_writes_a_verified_certificate(tmp_path, capsys):
    from sinkproof.cli import main

    out = tmp_path / "c.json"
    assert main(["certify", "--setting", "paper", "--n", "4", "--L", "5", "--grid", "2",
                 "--eps", "0.05", "--out", str(out)]) == 0
    verdict = checker.verify_file(out)
    assert verdict.ok and verdict.kind == "paper-hull-family"
    assert main(["certify", "--setting", "paper", "--values", "m.json", "--eps", "0.05",
                 "--out", str(out)]) == 2


# ---------------------------------------------------------------- trained models vs bounds
def test_the_per_position_bound_holds_for_random_one_head_models():
    from sinkproof.autodiff import stack_forward as paper_forward
    from sinkproof.autodiff import x64
    from sinkproof.experiment.theory import stack_bound_check as bound_check

    rng = np.random.default_rng(0)
    task = sp.PaperTask(n=5, L=6)
    x = task.sample(8, seed=1, trigger_at=4)
    y = task.row_targets(x)
    for scale in (0.3, 3.0):
        params = {k: scale * rng.normal(size=(1, 1, 5, 5)) for k in ("wq", "wk", "wv")}
        params["wo"] = rng.normal(size=(1, 5, 5))
        with x64():  # the package's forwards run in float64; so does the check
            out, w = (np.asarray(a) for a in paper_forward(params, x, "softmax", False))
        held = bound_check("softmax", 1, 1, params, x, out, w, y, 4)
        assert held["positions"] == 8 * 4 and held["violations"] == 0
        assert held["least_margin"] >= -1e-12
    assert bound_check("softmax", 2, 1, params, x, out, w, y, 4)["bound"] is None


@pytest.mark.slow
def test_stored_p2_witness_refutes_two_layer_sinks_on_five_content_values():
    # the witness docs/findings.md cites: 2 residual layers x 1 softmax head, no sink
    claim = claim_from_dict(data(task={"content": [[-1.0], [-0.5], [0.0], [0.5], [1.0]]},
                                 model={"layers": 2}, hypothesis={"max_error": "0.05"},
                                 conclusion={"positions": "some"}))
    verdict = checker.verify_file(EXAMPLES / "paper_p2_two_layers_five.witness.json")
    assert verdict.ok and verdict.details["prefixes"] == 2306
    assert refuting(claim, verdict) is not None
    assert refuting(claim_from_dict({**claim.to_dict(), "hypothesis": {"max_error": "0.04"}}),
                    verdict) is None


def test_the_fixed_value_theorem_is_theorem3_of_the_registry(monkeypatch):
    """The paper's ``1 - √2 ε`` is Theorem 3 on the PaperTask, found by the registry: without
    Theorem 3 in the registry the theorem route proves nothing."""
    import sinkproof.claims.theorems as routes

    claim = claim_from_dict(data(model={"kind": "softmax", "values": "fixed"},
                                 hypothesis={"max_error": "1/10"},
                                 conclusion={"min_bos_mass": "0.85"}))
    proved = routes.prove_by_theorem(claim, [])
    assert proved is not None and proved.by.startswith("Theorem 3 on PaperTask")
    without = {k: v for k, v in routes.THEOREMS.items() if k != "theorem3"}
    monkeypatch.setattr(routes, "registry", lambda: without)
    reasons: list[str] = []
    assert routes.prove_by_theorem(claim, reasons) is None and reasons
