"""``check``'s engine route: the branch-and-bound engine proves a claim only through the
trusted checker's verified statement of the certificate file it saved.

The certificate of the learned-value homogeneous claim is made once (a few seconds)
and then edited: another ε, another positional scheme, fewer targets, a changed
multiplier or bound.  None of these may support the claim.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

import pytest

import sinkproof as sp
from sinkproof.checker import verify, verify_file
from sinkproof.claims import Open, claim_from_dict, load_claim
from sinkproof.claims import check as check_with_theorems
from sinkproof.claims.certified import NotImplied, prove_by_certificate
from sinkproof.cli import main
from sinkproof.errors import EXIT_INTERRUPTED, CertificateError, WorkLimitError

ROOT = Path(__file__).resolve().parent.parent
CLAIMS = ROOT / "examples" / "claims"
HOMOGENEOUS = CLAIMS / "learned_values_homogeneous.toml"


def check(claim, **options):
    """``check`` without the theorem route: Theorem 8 proves the homogeneous claim at
    once, and this file is about the routes behind it (``theorems=False``)."""
    return check_with_theorems(claim, theorems=False, **options)


@pytest.fixture(scope="module")
def proved(tmp_path_factory):
    """``check`` on the learned-value homogeneous claim, proofs only."""
    out = tmp_path_factory.mktemp("engine") / "lvh.certificate.json"
    outcome = check(HOMOGENEOUS, search=False, certificate_out=out)
    return outcome, out


@pytest.fixture
def cert(proved):
    return json.loads(Path(proved[1]).read_text())


def _claim(**changes):
    """The homogeneous claim's data with some sections changed."""
    data = {"task": {"p": 2, "T": 3, "content": "signed", "positions": "inverse"},
            "model": {"kind": "softmax", "heads": 1, "values": "learned"},
            "hypothesis": {"max_error": 0.05, "family": "S_T"},
            "conclusion": {"min_bos_mass": 0.5, "at": "homogeneous", "positions": "every"},
            "check": {"budget": 30, "restarts": 1, "seed": 0}}
    for section, values in changes.items():
        data[section] = {**data[section], **values}
    return claim_from_dict(data)


def _save(cert, path):
    path.write_text(json.dumps(cert))
    return path


def _not_implied(claim, path):
    """The edited certificate fails verification or does not imply the claim."""
    with pytest.raises((NotImplied, CertificateError)):
        prove_by_certificate(claim, path)
    try:
        outcome = check(claim, certificate=path, search=False, bnb=False)
    except CertificateError:
        return  # rejected with a clear error (a malformed certificate)
    assert outcome.status == "open"


def test_engine_proves_the_homogeneous_claim_from_its_verified_file(proved):
    outcome, path = proved
    assert outcome.status == "proved" and outcome.by == "bnb"
    assert outcome.certificate == str(path)
    verdict = verify_file(path)
    assert verdict.ok and verdict.kind == "bnb-learned-values"
    assert f"sha256:{verdict.digest}" in outcome.detail
    bounds = dict((tuple(k), v) for k, v in verdict.statement["conclusion"]["bounds"])
    assert len(bounds) == 12 and outcome.bound == pytest.approx(
        min(float(Fraction(b)) for b in bounds.values()))
    assert outcome.bound >= 0.5


def test_the_saved_certificate_is_accepted_as_a_given_file(proved):
    _, path = proved
    outcome = check(HOMOGENEOUS, certificate=path, search=False, bnb=False)
    assert outcome.status == "proved" and outcome.by == "certificate"


def test_a_smaller_eps_claim_follows_a_larger_does_not(proved):
    _, path = proved
    assert prove_by_certificate(_claim(hypothesis={"max_error": 0.04}), path)[0] >= 0.5
    _not_implied(_claim(hypothesis={"max_error": 0.06}), path)


def test_a_stronger_conclusion_or_other_positions_are_not_implied(proved):
    _, path = proved
    _not_implied(_claim(conclusion={"min_bos_mass": 0.95}), path)
    _not_implied(_claim(conclusion={"at": "nontrigger"}), path)
    _not_implied(_claim(task={"positions": "onehot"}), path)
    _not_implied(_claim(task={"p": 3}), path)
    _not_implied(_claim(model={"heads": 2}), path)
    _not_implied(_claim(hypothesis={"family": "homogeneous"}), path)


def test_tampered_certificate_is_rejected(cert, tmp_path, capsys):
    leaf = cert["data"]["trees"][0]["root"]
    while "leaf" not in leaf:
        leaf = leaf["above"]
    leaf["leaf"]["s0"] = "0"
    path = _save(cert, tmp_path / "tampered.json")
    assert not verify_file(path).ok
    _not_implied(load_claim(HOMOGENEOUS), path)
    code = main(["check", str(HOMOGENEOUS), "--certificate", str(path), "--no-search",
                 "--no-bnb", "--no-theorems"])
    assert code == 3 and "does not verify" in capsys.readouterr().out


def test_raised_bound_is_rejected(cert, tmp_path):
    cert["data"]["trees"][0]["bound"] = "99/100"
    _not_implied(load_claim(HOMOGENEOUS), _save(cert, tmp_path / "raised.json"))


def test_certificate_for_another_eps_never_supports_the_claim(cert, tmp_path):
    cert["instance"]["eps"] = "1/25"  # a stronger hypothesis: still a valid certificate
    path = _save(cert, tmp_path / "eps.json")
    verdict = verify_file(path)
    if verdict.ok:
        assert verdict.statement["eps"] == "1/25"
    _not_implied(load_claim(HOMOGENEOUS), path)


def test_certificate_for_another_task_never_supports_the_claim(cert, tmp_path):
    onehot = copy.deepcopy(cert)
    onehot["instance"]["task"]["positions"] = "onehot"
    _not_implied(load_claim(HOMOGENEOUS), _save(onehot, tmp_path / "onehot.json"))
    fixed = copy.deepcopy(cert)
    fixed["instance"]["values"] = "fixed"
    _not_implied(load_claim(HOMOGENEOUS), _save(fixed, tmp_path / "fixed.json"))


def test_certificate_for_fewer_targets_never_supports_the_claim(cert, tmp_path):
    cert["data"]["trees"] = cert["data"]["trees"][:-1]
    cert["claim"]["targets"] -= 1
    path = _save(cert, tmp_path / "fewer.json")
    assert verify(json.loads(path.read_text())).ok  # a true statement about 11 targets
    _not_implied(load_claim(HOMOGENEOUS), path)


def test_fixed_value_certificate_never_supports_a_learned_claim(tmp_path):
    task = sp.TriggerTask(p=2, T=3)
    result = sp.bnb.prove(task, eps="1/20", at="homogeneous", min_bos_mass="1/2",
                          values="fixed", max_nodes=4)
    assert result.status == "proved"
    path = result.save(tmp_path / "fixed.json")
    assert prove_by_certificate(_claim(model={"values": "fixed"}), path)[0] >= 0.5
    _not_implied(_claim(), path)


@pytest.mark.parametrize("name", ["learned_values_homogeneous_onehot", "after_trigger"])
def test_engine_does_not_prove_the_refuted_one_head_claims(name, tmp_path):
    out = tmp_path / "c.json"
    outcome = check(CLAIMS / f"{name}.toml", search=False, certificate_out=out)
    assert outcome.status == "open" and not out.exists()
    assert any(r.startswith("engine (branch and bound): no proof") for r in outcome.reasons)
    # the engine ran (its tree took real time): the budget spent says so, search or not
    assert outcome.spent["seconds"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["learned_values_homogeneous_onehot", "after_trigger"])
def test_check_still_refutes_the_refuted_one_head_claims(name, tmp_path):
    outcome = check(CLAIMS / f"{name}.toml", witness=tmp_path / "w.json",
                    certificate_out=tmp_path / "c.json")
    assert outcome.status == "refuted" and verify_file(tmp_path / "w.json").ok
    assert not (tmp_path / "c.json").exists()


def test_no_bnb_skips_the_engine():
    outcome = check(_claim(), search=False, bnb=False)
    assert outcome.status == "open"
    assert not any(r.startswith("engine") for r in outcome.reasons)


def test_the_engine_is_stopped_by_its_node_budget_never_by_the_clock():
    """The claim's ``budget`` seconds bound only the search: the engine runs its 200 nodes
    per target whatever the time (issue 24.5), so its verdict is the same on any machine."""
    claim = load_claim(CLAIMS / "learned_values_homogeneous_onehot.toml")
    outcome = check(claim, search=False, budget=0.3)
    note = next(r for r in outcome.reasons if r.startswith("engine"))
    assert "within 200 nodes per target" in note and " s (" not in note
    nodes = int(note.split(" nodes,")[0].rsplit(" ", 1)[1])
    assert nodes == 201  # the node budget stopped it (the root plus 200 splits' worth)


def test_engine_respects_max_work():
    with pytest.raises(WorkLimitError):
        check(_claim(), search=False, max_work=3)


def test_ctrl_c_in_the_engine_returns_open_interrupted(monkeypatch):
    import sinkproof.bnb.primal as primal

    calls = {"n": 0}
    solve = primal.PrimalSolver.solve

    def interrupted(self, box):
        calls["n"] += 1
        if calls["n"] > 2:
            raise KeyboardInterrupt
        return solve(self, box)

    monkeypatch.setattr(primal.PrimalSolver, "solve", interrupted)
    outcome = check(_claim(), search=False)
    assert isinstance(outcome, Open) and outcome.interrupted and outcome.exit_code == 130


def test_engine_agrees_with_theorem2_on_a_some_position_claim(tmp_path):
    """Cross-check: Theorem 2 proves the 'some non-trigger position' claim; the engine,
    on its own, proves it too, from one tree, decided from the verified file."""
    from sinkproof.claims.engine import certify_by_engine

    claim = load_claim(CLAIMS / "one_head_learned_nontrigger.toml")
    assert check_with_theorems(claim, search=False).by == "theorem2"
    run = certify_by_engine(claim, tmp_path / "some.json")
    assert run.path is not None and len(run.result.targets) >= 1
    bound, stated = prove_by_certificate(claim, run.path)
    assert bound >= claim.conclusion.b_exact and "sha256:" in stated


def _interrupt_tree(monkeypatch, number: int) -> None:
    """Ctrl-C at the first solve of tree ``number`` (1-based) the engine grows."""
    import sinkproof.bnb.api as api

    real, calls = api.branch_and_bound, []

    def wrapped(solver, *args, **kwargs):
        calls.append(1)
        if len(calls) == number:
            def interrupted(box):
                raise KeyboardInterrupt
            solver.solve = interrupted
        return real(solver, *args, **kwargs)

    monkeypatch.setattr(api, "branch_and_bound", wrapped)


@pytest.mark.parametrize("number", [1, 3])
def test_check_interrupted_in_the_engine_prints_what_it_certified_and_exits_130(
        monkeypatch, tmp_path, capsys, number):
    """Ctrl-C inside the engine (here: in the root solve of a tree, outside the tree's own
    handler) answers Open, interrupted, with the bounds of the trees certified before."""
    claim = ROOT / "examples" / "claims" / "learned_values_homogeneous.toml"
    _interrupt_tree(monkeypatch, number)
    status = main(["check", str(claim), "--no-search", "--no-theorems", "--certificate-out",
                   str(tmp_path / "c.json"), "--json", str(tmp_path / "out.json")])
    out = capsys.readouterr().out
    assert status == EXIT_INTERRUPTED and "interrupted" in out
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["status"] == "open" and data["interrupted"] is True
    so_far = data["so_far"]
    assert so_far.startswith("engine interrupted") and so_far in out
    if number == 1:
        assert "no bound certified yet" in so_far
    else:  # the two trees grown before were certified, each with its three images
        # under the symmetries of the content set (sinkproof.bnb.symmetry)
        assert "certified exactly at 8 of" in so_far
    assert not (tmp_path / "c.json").exists()  # nothing certified is saved as a proof


def test_check_interrupted_in_the_heads_engine_prints_what_it_certified(monkeypatch, tmp_path,
                                                                        capsys):
    """The same for several heads (prove_heads): Ctrl-C at its third dual program."""
    import sinkproof.bnb.multihead as multihead

    real, calls = multihead.HeadsProgram.step, []

    def step(self, target):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, target)

    monkeypatch.setattr(multihead.HeadsProgram, "step", step)
    claim = ROOT / "examples" / "claims" / "two_heads_fixed_before_trigger.toml"
    status = main(["check", str(claim), "--no-search", "--certificate-out",
                   str(tmp_path / "c.json")])
    out = capsys.readouterr().out
    assert status == EXIT_INTERRUPTED and "so far (interrupted): engine interrupted" in out
    assert "in every head certified exactly at 2 of" in out
    assert not (tmp_path / "c.json").exists()
