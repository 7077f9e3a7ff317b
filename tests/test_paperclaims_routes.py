"""The paper's statements as claim files: pure composition (``[model] residual = false``),
continuous content (``[task] content = "uniform"``) and one position named by its prefix
(``[conclusion] at = [[...]]``, ``trigger = K``), each settled through the one claim route
and printed with the statement proved (class, content domain, positions, ε)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from sinkproof import checker
from sinkproof.claims import Open, Proved, Refuted, check, claim_from_dict
from sinkproof.claims.implications import NotImplied, implied_bound
from sinkproof.tasks.paper import PaperTask
from sinkproof.theorems.composition import composition_bound
from tests._paper_claims import paper_claim_data

BOX = [[0.5] + [0.0] * 12, [-1.0] + [0.0] * 12, [0.25] + [0.0] * 12]


def data(**parts):
    return paper_claim_data("1/20", **parts)


def pure(layers=2, heads=1, b="1/2", conclusion=None):
    return claim_from_dict(data(model={"layers": layers, "heads": heads, "residual": False},
                                conclusion={"min_bos_mass": b, "positions": "some",
                                            **(conclusion or {})}))


# ------------------------------------------------------------ pure composition
def test_residual_false_is_a_pure_composition_with_one_layer_targets():
    claim = pure()
    assert not claim.model_class.residual and claim.model_class.pure
    assert not claim.task.residual  # the one-layer targets
    assert "pure composition" in claim.statement()
    again = claim_from_dict(claim.to_dict())
    assert again.statement() == claim.statement() and not again.task.residual
    residual = claim_from_dict(data(model={"layers": 2}))
    assert residual.model_class.residual and "residual" not in residual.model_class.to_dict()


@pytest.mark.parametrize("model, message", [
    ({"layers": 1, "residual": True}, "needs layers > 1"),
    ({"layers": 2, "residual": "no"}, "model.residual must be true or false"),
])
def test_bad_residual_fields_are_one_line_errors(model, message):
    with pytest.raises((ValueError, TypeError), match=message) as info:
        claim_from_dict(data(model=model))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("layers", [2, 3])
def test_pure_composition_is_proved_by_its_theorem_exactly_at_its_bound(layers):
    task = PaperTask(n=4, L=5, content=[[-1.0], [1.0]])
    item = composition_bound(task, Fraction(1, 20), layers)
    below = Fraction(int(item.value * 10**6), 10**6)
    out = check(pure(layers, b=str(below)), search=False, bnb=False)
    assert isinstance(out, Proved) and out.by.startswith("the pure-composition theorem")
    assert out.bound == item.value and item.value == pytest.approx(
        {2: 0.626047, 3: 0.481}[layers], abs=1e-3)
    text = out.render()
    assert "content domain: the finite set of 2 content vectors" in text
    assert "error <= 0.05 at positions 0, 1 and" in text and "in some layer at position 1" in text
    above = Fraction(int(item.value * 10**6) + 1, 10**6)
    out = check(pure(layers, b=str(above)), search=False, bnb=False)
    assert isinstance(out, Open)
    assert any("pure-composition theorem gives" in r for r in out.reasons)


@pytest.mark.parametrize("conclusion, why", [
    ({"positions": "every"}, "positions = \"some\""),
    ({"heads": "every"}, "heads = \"some\""),
])
def test_the_composition_theorem_proves_only_what_it_states(conclusion, why):
    out = check(pure(conclusion=conclusion), search=False, bnb=False)
    assert isinstance(out, Open) and any(why in r for r in out.reasons)


def test_the_residual_form_does_not_get_the_pure_theorem():
    out = check(claim_from_dict(data(model={"layers": 2}, conclusion={"positions": "some"})),
                search=False, bnb=False)
    assert isinstance(out, Open)
    assert not any("pure-composition" in r for r in out.reasons)


def test_two_heads_per_pure_layer_are_refuted_by_the_cancelling_construction(tmp_path):
    out = check(pure(heads=2), witness=tmp_path / "w.json")
    assert isinstance(out, Refuted) and "cancelling off the trigger" in out.detail
    verdict = checker.verify_file(tmp_path / "w.json")
    assert verdict.ok and verdict.statement["model_class"]["residual"] is False


# ------------------------------------------------------------ one position by its prefix
def test_one_position_named_by_its_prefix_is_proved_from_every_class(tmp_path):
    claim = claim_from_dict(data(conclusion={"at": [[-1.0]], "min_bos_mass": "9/10"}))
    assert claim.conclusion.at.name == "prefix" and claim.conclusion.at.t == 1
    out = check(claim, certificate_out=tmp_path / "c.json")
    assert isinstance(out, Proved) and out.by == "bnb" and out.bound >= 0.9
    verdict = checker.verify_file(tmp_path / "c.json")
    assert verdict.ok and verdict.kind == "paper-subfamily-bnb"
    assert verdict.statement["content_domain"] == "finite"
    assert "the m=2 content vectors listed" in out.detail
    assert claim_from_dict(claim.to_dict()).statement() == claim.statement()


@pytest.mark.parametrize("conclusion, message", [
    ({"trigger": 2}, "conclusion.trigger names the trigger"),
    ({"at": [[-1.0], [1.0]], "trigger": 2}, "the trigger must come before it"),
    ({"at": [[-1.0], [0.5]]}, "token 2's content is not in the task's content set"),
    ({"at": [[-1.0, 1.0]]}, "each token's content has 1 entries"),
    ({"at": [[-1.0]] * 4}, "not a prefix of the family"),
])
def test_bad_prefix_positions_are_one_line_errors(conclusion, message):
    with pytest.raises((ValueError, TypeError), match=message) as info:
        claim_from_dict(data(conclusion=conclusion))
    assert "\n" not in str(info.value)


# ------------------------------------------------------------ continuous content
def uniform(**conclusion):
    return claim_from_dict(data(task={"n": 16, "L": 4, "content": "uniform"},
                                conclusion=conclusion))


def test_continuous_content_is_proved_over_the_box_at_every_position(tmp_path):
    out = check(uniform(), certificate_out=tmp_path / "c.json")
    assert isinstance(out, Proved) and out.by == "bnb"
    text = out.render()
    assert "content domain: every content vector of [-1, 1]^13" in text
    assert "every content vector in [-1, 1]^13" in out.detail
    verdict = checker.verify_file(tmp_path / "c.json")
    assert verdict.statement["content_domain"] == "box"
    assert verdict.statement["every_nontrigger_position"]


def test_a_position_over_the_box_is_proved_for_its_trigger_pattern(tmp_path):
    claim = claim_from_dict(data(task={"n": 16, "L": 5, "content": "uniform"},
                                 conclusion={"at": BOX, "trigger": 2}))
    out = check(claim, certificate_out=tmp_path / "c.json")
    assert isinstance(out, Proved) and out.bound >= 0.5
    assert "fix only the position's trigger pattern" in out.render()


def test_a_finite_set_result_never_proves_the_continuous_claim(tmp_path):
    finite = claim_from_dict(data(conclusion={"at": [[-1.0]]}))
    assert isinstance(check(finite, certificate_out=tmp_path / "c.json"), Proved)
    statement = checker.verify_file(tmp_path / "c.json").statement
    cont = claim_from_dict(data(task={"content": "uniform"}, conclusion={"at": [[-1.0]]}))
    with pytest.raises(NotImplied, match="continuous"):
        implied_bound(cont, statement)
    out = check(cont, certificate=tmp_path / "c.json", search=False, bnb=False)
    assert not isinstance(out, Proved)


def test_a_box_result_proves_the_finite_claim_by_trigger_pattern(tmp_path):
    box = claim_from_dict(data(task={"content": "uniform"}, conclusion={"at": [[0.0]]}))
    assert isinstance(check(box, certificate_out=tmp_path / "c.json"), Proved)
    statement = checker.verify_file(tmp_path / "c.json").statement
    assert statement["instance"]["content"]["symbols"] == 4  # L - 1 symbols
    finite = claim_from_dict(data(conclusion={"at": [[1.0]]}))
    assert implied_bound(finite, statement) >= Fraction(1, 2)
    other = claim_from_dict(data(conclusion={"at": [[1.0], [1.0]]}))  # another pattern
    with pytest.raises(NotImplied, match="no bound"):
        implied_bound(other, statement)
    nameless = json.loads(json.dumps(statement))
    del nameless["instance"]["content"]["symbols"]
    with pytest.raises(NotImplied, match="symbols"):
        implied_bound(finite, nameless)


def test_a_position_claim_above_the_sink_construction_is_refuted_there(tmp_path):
    claim = claim_from_dict(data(conclusion={"at": [[-1.0]], "min_bos_mass": "995/1000"},
                                 check={"restarts": 1, "steps": 10}))
    out = check(claim, witness=tmp_path / "w.json", certificate_out=tmp_path / "c.json")
    assert isinstance(out, Refuted) and "sinking at every non-trigger row" in out.detail
    assert checker.verify_file(tmp_path / "w.json").ok
