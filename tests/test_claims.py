"""Claims: schema and parsing, position sets, the refutation check, outcomes, CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof import strategies as sps
from sinkproof.claims import Claim, Open, PositionSet, Proved, Refuted, claim_from_dict, load_claim
from sinkproof.claims.positions import NAMED_SETS, scan
from sinkproof.claims.precise import PreciseModel, max_error
from sinkproof.claims.refute import refutes
from sinkproof.cli import main
from sinkproof.constructions import relu_solution, softmax_solution


class Whole(dict):
    """A section given whole (replacing the default one) rather than merged into it."""


def claim_data(**over: dict) -> dict:
    data = dict(
        title="test claim",
        task=dict(p=2, T=3),
        model=dict(kind="softmax", heads=1, values="fixed"),
        hypothesis=dict(max_error=0.1),
        conclusion=dict(min_bos_mass=0.9, at="homogeneous"),
    )
    for section, fields in over.items():
        if fields is None:
            data.pop(section)
        elif (isinstance(fields, dict) and not isinstance(fields, Whole)
              and isinstance(data.get(section), dict)):
            data[section] = {**data[section], **fields}
        else:
            data[section] = fields
    return data


def constant(b: float):
    return lambda prefix: b


# ------------------------------------------------------------------ schema
def test_round_trip_through_data_and_toml(tmp_path):
    claim = claim_from_dict(claim_data(conclusion=dict(at=[dict(sequence=[0, "TRIG", 1],
                                                                position=3)])))
    again = claim_from_dict(claim.to_dict())
    assert again.statement() == claim.statement()
    assert again.conclusion.at.pairs == ((((0, sp.TRIG, 1)), 3),)
    path = tmp_path / "c.json"
    path.write_text(json.dumps(claim.to_dict()))
    assert load_claim(path).statement() == claim.statement()


def test_model_positions_default_to_the_task():
    claim = claim_from_dict(claim_data(task=dict(positions="onehot")))
    assert claim.model_class.positions == "onehot"
    with pytest.raises(ValueError, match="differ from the task"):
        claim_from_dict(claim_data(task=dict(positions="onehot"), model=dict(positions="inverse")))


@pytest.mark.parametrize(("over", "error", "match"), [
    (dict(hypothesis=dict(max_eror=0.1)), ValueError, "unknown field in .hypothesis.: max_eror"),
    (dict(conclusion=None), ValueError, "lacks the \\[conclusion\\] section"),
    (dict(extra=dict(a=1)), ValueError, "unknown section or field 'extra'"),
    (dict(hypothesis=dict(max_error="small")), ValueError, "max_error must be a number such as"),
    (dict(hypothesis=dict(max_error=[0.1])), TypeError, "max_error must be a number"),
    (dict(hypothesis=dict(max_error=-1.0)), ValueError, "max_error must be in \\[0, 1\\)"),
    (dict(hypothesis=dict(max_error=1)), ValueError, "every sink bound is vacuous"),
    (dict(hypothesis=Whole(family="S_T")), ValueError, "needs max_error"),
    (dict(conclusion=dict(min_bos_mass=1.5)), ValueError, "must be in \\(0, 1\\]"),
    (dict(conclusion=dict(min_bos_mass=0)), ValueError, "must be in \\(0, 1\\]"),
    (dict(conclusion=dict(theorem="theorem1")), ValueError, "exactly one of"),
    (dict(conclusion=dict(at="everywhere")), ValueError, "unknown position set 'everywhere'"),
    (dict(conclusion=dict(at=[dict(sequence=[0], position=2)])), ValueError, "beyond sequence"),
    (dict(conclusion=dict(at=[dict(sequence=["TRIG", "TRIG"], position=1)])), ValueError,
     "more than one trigger"),
    (dict(conclusion=dict(at=[dict(sequence=[7], position=1)])), ValueError, "token 7"),
    (dict(conclusion=dict(positions="all")), ValueError, "positions quantifier"),
    (dict(conclusion=dict(heads=2)), ValueError, "heads quantifier"),
    (dict(model=dict(heads=0)), ValueError, "heads must be >= 1"),
    (dict(model=dict(kind="linear")), ValueError, "attention kind"),
    (dict(model=dict(width=3)), ValueError, "unknown model-class fields: width"),
    (dict(task=dict(p=0)), ValueError, "p must be >= 1"),
    (dict(task="p=2"), TypeError, "\\[task\\] must be a table"),
    (dict(hypothesis=dict(family="odd")), ValueError, "unknown family 'odd'"),
    (dict(hypothesis=dict(family=[])), TypeError, "non-empty list"),
    (dict(check=dict(budget=0)), ValueError, "budget must be > 0"),
    (dict(check=dict(restarts=2.5)), TypeError, "restarts must be an integer"),
    (dict(check=dict(speed=1)), ValueError, "unknown field in \\[check\\]: speed"),
    (dict(title=3), TypeError, "title must be a string"),
])
def test_bad_claims_raise_one_line_errors(over, error, match):
    with pytest.raises(error, match=match) as info:
        claim_from_dict(claim_data(**over))
    assert "\n" not in str(info.value)


def test_input_is_not_mutated():
    data = claim_data()
    frozen = json.dumps(data, sort_keys=True)
    claim_from_dict(data)
    assert json.dumps(data, sort_keys=True) == frozen


# ------------------------------------------------------------ position sets
def _brute(task: sp.TriggerTask, name: str) -> set[tuple[int, ...]]:
    """Prefixes of the named set by a plain loop over every sequence and position."""
    out = set()
    for seq in task.sequences():
        for t in range(1, len(seq) + 1):
            pre = seq[:t]
            last, earlier = pre[-1], pre[:-1]
            member = {
                "nontrigger": last != sp.TRIG,
                "trigger": last == sp.TRIG,
                "all": True,
                "before_trigger": sp.TRIG not in pre,
                "after_trigger": last != sp.TRIG and sp.TRIG in earlier,
                "homogeneous": last != sp.TRIG and len(set(pre)) == 1,
            }[name]
            if member:
                out.add(pre)
    return out


@pytest.mark.parametrize("name", list(NAMED_SETS))
@pytest.mark.parametrize("triggers", ["single", "multi"])
def test_named_sets_match_a_plain_loop(name, triggers):
    task = sp.TriggerTask(p=1, T=4, triggers=triggers)
    got = {seq[:t] for seq, t in PositionSet(name).pair_list(task)}
    assert got == _brute(task, name)


# ------------------------------------------------------------- refutations
def test_relu_construction_refutes_a_relu_sink_claim():
    claim = claim_from_dict(claim_data(model=dict(kind="relu"),
                                       conclusion=dict(min_bos_mass=0.5, at="nontrigger")))
    ref = refutes(relu_solution(claim.task), claim, constant(0.5))
    assert ref is not None and ref.error == 0.0
    assert all(v.masses == (0.0,) for v in ref.violations)


def test_softmax_construction_refutes_only_claims_above_theorem1():
    claim = claim_from_dict(claim_data(conclusion=dict(min_bos_mass=0.99)))
    model = softmax_solution(claim.task, 5.0)
    err = sp.evaluate(model).max_error
    assert err < 0.1
    ref = refutes(model, claim, constant(0.99))
    assert ref is not None and abs(ref.error - err) < 1e-12
    # Theorem 1 (fixed values, signed content): BOS >= 1 - ε at homogeneous positions
    assert refutes(model, claim, constant(1 - 0.1)) is None
    # a model outside the class (learned values) never refutes a fixed-value claim
    other = model.replace(U=2 * np.asarray(model.U))
    assert refutes(other, claim, constant(0.99)) is None


def test_error_above_epsilon_is_not_a_refutation():
    claim = claim_from_dict(claim_data(hypothesis=dict(max_error=0.01),
                                       conclusion=dict(min_bos_mass=0.99)))
    assert refutes(softmax_solution(claim.task, 3.0), claim, constant(0.99)) is None


@settings(max_examples=25)
@given(data=st.data())
def test_theorem1_is_never_refuted(data):
    """Cross-check: any single-head fixed-value softmax model, held to its own error."""
    task = data.draw(sps.tasks(max_p=2, max_T=3, content="signed", triggers="single"))
    model = data.draw(st.one_of(sps.near_solutions(task, kind="softmax", noise=0.05),
                                sps.models(task, kind="softmax", values="fixed")))
    eps = sp.evaluate(model).max_error * (1 + 1e-9) + 1e-12
    if eps >= 1:
        return
    claim = claim_from_dict(claim_data(task=task.describe(), hypothesis=dict(max_error=eps),
                                       conclusion=dict(min_bos_mass=1 - eps)))
    assert refutes(model, claim, constant(1 - eps)) is None


def test_head_quantifiers():
    task = sp.TriggerTask(p=1, T=2)
    sink = softmax_solution(task, 30.0).A[0]
    model = sp.AttentionModel(task, "softmax", A=np.stack([sink, np.zeros_like(sink)]),
                              U=np.stack([sp.fixed_values(1), np.zeros((1, 4))]))
    base = claim_data(task=task.describe(), model=dict(heads=2, values="learned"),
                      hypothesis=dict(max_error=0.01), conclusion=dict(at="nontrigger"))
    some = claim_from_dict(claim_data(**{**base, "conclusion": dict(
        min_bos_mass=0.5, at="nontrigger", heads="some")}))
    every = claim_from_dict(claim_data(**{**base, "conclusion": dict(
        min_bos_mass=0.5, at="nontrigger", heads="every")}))
    assert refutes(model, some, constant(0.5)) is None
    ref = refutes(model, every, constant(0.5))
    assert ref is not None and all(v.masses[0] > 0.5 > v.masses[1] for v in ref.violations)


def test_position_quantifier_some_needs_every_position_violated():
    task = sp.TriggerTask(p=1, T=3)
    model = softmax_solution(task, 3.0)  # BOS mass e^L/(e^L + t) falls with t
    masses = {(m.sequence, m.position): m.masses[0]
              for m in scan(model, PositionSet("homogeneous"))}
    b = sorted(set(masses.values()))[1]  # above the least mass, below the others
    data = claim_data(task=task.describe(), hypothesis=dict(max_error=0.5),
                      conclusion=dict(min_bos_mass=b, at="homogeneous"))
    every = claim_from_dict(data)
    some = claim_from_dict(claim_data(**{**data, "conclusion": dict(
        min_bos_mass=b, at="homogeneous", positions="some")}))
    assert refutes(model, every, constant(b)) is not None
    assert refutes(model, some, constant(b)) is None


@settings(max_examples=15)
@given(data=st.data())
def test_high_precision_error_agrees_with_float(data):
    task = data.draw(sps.tasks(max_p=2, max_T=3))
    model = data.draw(sps.models(task, heads=(1, 2), scale=2.0))
    err, _ = max_error(PreciseModel(model), None)
    assert math.isclose(float(err), sp.evaluate(model).max_error, rel_tol=1e-9, abs_tol=1e-12)


# ---------------------------------------------------------------- outcomes
def test_outcomes_print_compactly():
    claim = claim_from_dict(claim_data())
    proved = Proved(claim, by="theorem1", bound=0.9)
    opened = Open(claim, frontier=((0.05, 0.97),), spent={"seconds": 1.0, "restarts": 4})
    model = softmax_solution(claim.task, 5.0)
    ref = refutes(model, claim_from_dict(claim_data(conclusion=dict(min_bos_mass=0.99))),
                  constant(0.99))
    refuted = Refuted(claim, model=model, error=ref.error, violations=ref.violations,
                      witness="w.json")
    for outcome, code in ((proved, 0), (refuted, 1), (opened, 3)):
        assert outcome.exit_code == code
        assert "\n" not in repr(outcome) and len(repr(outcome)) < 600
        assert outcome._repr_markdown_().startswith("**")
        json.dumps(outcome.to_dict())
    assert "theorem1" in repr(proved) and "w.json" in repr(refuted) and "0.97" in repr(opened)


def test_check_without_search_is_never_refuted():
    claim = claim_from_dict(claim_data(model=dict(kind="relu"), conclusion=dict(
        min_bos_mass=0.5, at="nontrigger")))
    out = sp.check(claim, search=False)
    assert isinstance(out, (Open, Proved)) and not isinstance(out, Refuted)
    assert isinstance(sp.Claim, type) and isinstance(claim, sp.Claim)


@pytest.mark.slow  # 2-7 s of subprocesses/compiles: CI runs it
def test_check_accepts_data_and_paths(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[task]\np = 1\nT = 2\n[model]\nkind = "softmax"\n[hypothesis]\n'
                    'max_error = 0.1\n[conclusion]\nmin_bos_mass = 0.5\nat = "nontrigger"\n')
    for form in (path, str(path), claim_data()):
        assert sp.check(form, search=False).status in ("open", "proved")
    with pytest.raises(TypeError, match="needs a Claim"):
        sp.check(3)
    assert isinstance(load_claim(path), Claim)


# --------------------------------------------------------------------- CLI
def test_cli_bad_input_exits_2_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[task]\np = 2\nT = 3\n[model]\n[hypothesis]\nmax_error = 0.1\n"
                   "[conclusion]\nmin_bos_mass = 0.9\nat = \"homogeneous\"\ncolour = 1\n")
    assert main(["check", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "colour" in err and "bad.toml" in err
    broken = tmp_path / "broken.toml"
    broken.write_text("[task\n")
    assert main(["check", str(broken)]) == 2
    assert main(["check", str(tmp_path / "missing.toml")]) == 2


def test_cli_open_exits_3_and_writes_json(tmp_path, capsys):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(claim_data()))
    out = tmp_path / "out.json"
    assert main(["check", str(path), "--no-search", "--json", str(out)]) in (0, 3)
    assert json.loads(out.read_text())["status"] in ("open", "proved")
    assert "test claim" in capsys.readouterr().out


# ------------------------------------------------------------ certificates
@pytest.fixture(scope="module")
def hull_certificate(tmp_path_factory):
    """A Theorem 3 family certificate for p=2, T=3, fixed values, ε = 1/20."""
    path = tmp_path_factory.mktemp("cert") / "hull.json"
    assert main(["certify", "--p", "2", "--T", "3", "--values", "fixed", "--eps", "1/20",
                 "--out", str(path)]) == 0
    return path


def test_hull_certificate_proves_what_it_covers(hull_certificate):
    from sinkproof.claims.certified import prove_by_certificate

    claim = claim_from_dict(claim_data(hypothesis=dict(max_error=0.05)))
    bound, stated = prove_by_certificate(claim, hull_certificate)
    assert float(bound) == pytest.approx(0.95) and "Theorem 3" in stated
    out = sp.check(claim, certificate=hull_certificate, search=False)
    assert isinstance(out, Proved)  # Theorem 1 or the certificate: either proves it


@pytest.mark.parametrize(("over", "match"), [
    (dict(hypothesis=dict(max_error=0.06)), "assumes error <= 1/20"),
    (dict(model=dict(values="learned")), "covers 1-head on-simplex"),
    (dict(model=dict(heads=2)), "covers 1-head on-simplex"),
    (dict(task=dict(T=4)), "another task instance"),
    (dict(conclusion=dict(min_bos_mass=0.96)), "only 0.95"),
    (dict(conclusion=dict(at="nontrigger", min_bos_mass=0.5)), "no bound at"),
    (dict(conclusion=dict(at="trigger", min_bos_mass=0.5)), "trigger position"),
    (dict(hypothesis=dict(max_error=0.05, family=[[1, 1]])), "holds no sequence through"),
])
def test_hull_certificate_does_not_prove_more(hull_certificate, over, match):
    from sinkproof.claims.certified import NotImplied, prove_by_certificate

    claim = claim_from_dict(claim_data(**{"hypothesis": dict(max_error=0.05), **over}))
    with pytest.raises(NotImplied, match=match):
        prove_by_certificate(claim, hull_certificate)


def test_tampered_certificate_is_not_a_proof(hull_certificate, tmp_path):
    data = json.loads(hull_certificate.read_text())
    data["instance"]["eps"] = "1/40"  # a smaller ε makes every stated bound too strong
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    claim = claim_from_dict(claim_data(hypothesis=dict(max_error=0.025)))
    out = sp.check(claim.with_options(), certificate=bad, search=False)
    assert not (isinstance(out, Proved) and out.by == "certificate")


def test_sink_map_certifies_mixed_positions(tmp_path):
    """(BOS, +e1, -e1): 0 is in the hull (Theorem 3 is silent); logit sharing still bounds it."""
    data = claim_data(task=dict(p=1, T=2), hypothesis=dict(max_error=0.05),
                      conclusion=dict(at=[dict(sequence=[0, 1], position=2)], min_bos_mass=0.5))
    claim = claim_from_dict(data)
    reasons: list[str] = []
    from sinkproof.claims.theorems import prove_by_theorem

    assert prove_by_theorem(claim, reasons) is None
    cert = tmp_path / "c.json"
    out = sp.check(claim, certificate_out=cert, search=False)
    assert isinstance(out, Proved) and out.by.startswith("certificate"), out
    assert out.bound >= 0.5 and sp.checker.verify_file(cert).ok
    again = sp.check(claim, certificate=cert, search=False)
    assert isinstance(again, Proved) and again.bound == out.bound
    learned = claim_from_dict(claim_data(**{**data, "model": dict(values="learned")}))
    assert isinstance(sp.check(learned, certificate=cert, search=False, bnb=False), Open)
    # the fixed-value file cannot prove it; the engine's own verified certificate does
    by_engine = sp.check(learned, certificate=cert, search=False,
                         certificate_out=tmp_path / "b.json")
    assert isinstance(by_engine, Proved) and by_engine.by == "bnb", by_engine
    assert sp.checker.verify_file(tmp_path / "b.json").kind == "bnb-learned-values"


# ------------------------------------------------------------------ search
def test_relu_claim_is_refuted_by_the_registered_construction(tmp_path):
    claim = claim_from_dict(claim_data(model=dict(kind="relu"), conclusion=dict(
        min_bos_mass=0.5, at="nontrigger")))
    out = sp.check(claim, witness=tmp_path / "w.json")
    assert isinstance(out, Refuted) and "theorem4" in out.detail
    assert out.error == 0.0 and sp.checker.verify_file(tmp_path / "w.json").ok


@pytest.mark.slow  # 2-7 s of subprocesses/compiles: CI runs it
def test_search_refutes_on_a_tiny_instance(tmp_path):
    """End to end through the search layer: after the trigger a U_fix head needs no BOS sink."""
    claim = claim_from_dict(dict(
        task=dict(p=1, T=2), model=dict(kind="softmax", values="fixed"),
        hypothesis=dict(max_error=0.05),
        conclusion=dict(min_bos_mass=0.1, at="after_trigger", positions="some"),
        check=dict(budget=120, restarts=2)))  # restarts bound the work
    out = sp.check(claim, witness=tmp_path / "w.json", certificate_out=tmp_path / "c.json")
    assert isinstance(out, Refuted), out
    assert out.error <= 0.05 and len(out.violations) == 2  # both after-trigger prefixes
    assert all(v.masses[0] < 0.1 for v in out.violations)
    assert sp.checker.verify_file(out.witness).ok
    assert refutes(out.model, claim, constant(0.1)) is not None


def test_named_theorem_conclusions():
    def named(theorem, at="homogeneous", **model):
        return claim_from_dict(claim_data(model=model, hypothesis=dict(max_error=0.05),
                                          conclusion=Whole(theorem=theorem, at=at)))

    out = sp.check(named("theorem1"), search=False)
    assert isinstance(out, Proved) and out.by == "theorem1" and out.bound == pytest.approx(0.95)
    three = sp.check(named("theorem3", at="nontrigger"), search=False)  # vacuous where 0 ∈ hull
    assert isinstance(three, Proved) and three.by == "theorem3"
    assert isinstance(sp.check(named("theorem1", heads=2), search=False), Open)
    for bad, match in (("theorem9", "unknown theorem"), ("theorem4", "does not bound BOS")):
        with pytest.raises(ValueError, match=match):
            sp.check(named(bad), search=False)


def test_theorems_need_their_error_hypothesis_inside_the_family():
    fixed = claim_from_dict(claim_data(hypothesis=dict(max_error=0.05, family="homogeneous")))
    assert isinstance(sp.check(fixed, search=False), Proved)  # Theorem 1 needs X^c_n only
    some = dict(model=dict(values="learned"), conclusion=dict(min_bos_mass=0.5, positions="some"))
    reasons: list[str] = []
    from sinkproof.claims.theorems import prove_by_theorem

    homogeneous = claim_from_dict(claim_data(hypothesis=dict(max_error=0.05,
                                                             family="homogeneous"), **some))
    assert prove_by_theorem(homogeneous, reasons) is None  # Theorem 2 also needs T^c_m
    pairs = claim_from_dict(claim_data(hypothesis=dict(max_error=0.05, family="pairs"), **some))
    proved = prove_by_theorem(pairs, reasons)
    assert proved is not None and proved.by == "theorem2"
