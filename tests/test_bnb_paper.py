"""The proof engine in the paper's setting: the adapter, the certificate kind
``paper-bnb-learned-values``, the claim route, and soundness against an exact accurate model."""

from __future__ import annotations

import copy
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import sinkproof as sp
from sinkproof import checker
from sinkproof.bnb import (
    api,
    paper_prefixes,
    paper_relaxation,
    paper_targets,
    prove_paper,
)
from sinkproof.checker.family.paper import PaperInstance, n_prefixes
from sinkproof.claims import claim_from_dict, load_claim
from sinkproof.claims.engine import certify_by_engine, engine_targets
from sinkproof.claims.implications import NotImplied
from sinkproof.claims.implications import implied_bound as implied
from sinkproof.claims.witness import write_stack_witness as write_witness
from sinkproof.constructions import paper_sink_solution
from sinkproof.errors import CertificateError

ROOT = Path(__file__).resolve().parent.parent
CLAIM = ROOT / "examples" / "claims" / "paper_p1_one_head.toml"
EPS = Fraction(1, 20)


@pytest.fixture(scope="module")
def task() -> sp.PaperTask:
    return sp.PaperTask(n=4, L=5, content=np.array([[-1.0], [1.0]]))


@pytest.fixture(scope="module")
def proved(task):
    return prove_paper(task, EPS, min_bos_mass="1/2", some=True)


def _claim(b: str, positions: str = "some", eps: str = "0.05") -> dict:
    return {"title": "t", "task": {"setting": "paper", "n": 4, "L": 5,
                                   "content": [[-1.0], [1.0]]},
            "model": {"kind": "softmax", "heads": 1},
            "hypothesis": {"max_error": eps},
            "conclusion": {"min_bos_mass": b, "positions": positions},
            "check": {"restarts": 1, "steps": 50, "budget": 20}}


# ------------------------------------------------------------------ the adapter
def test_family_matches_the_checkers_count_and_membership(task):
    prefixes = paper_prefixes(task)
    assert len(prefixes) == len(set(prefixes)) == n_prefixes(task.m, task.L) == 82
    inst = PaperInstance({"task": task.describe(), "content_vectors": [["-1"], ["1"]],
                          "values": "learned", "eps": "1/20", "family": "paper"})
    for p in prefixes:
        assert inst.prefix(list(p), "p") == p
        assert inst.target_of(p) == list(task.exact_prefix_target(p))
    targets = paper_targets(task)
    assert targets and all(t[-1] < task.m for t in targets)
    assert len(targets) == sum(p[-1] < task.m for p in prefixes)
    for bad in ([2], [0, 0, 0, 0], [0, 2, 3], [4]):
        with pytest.raises(CertificateError):
            inst.prefix(bad, "p")


def test_relaxation_is_exact_at_a_real_models_own_point(task):
    """Any model's logits and values give a point of the relaxation whose residuals are the
    model's own errors (computed independently by the stack's forward pass)."""
    rng = np.random.default_rng(0)
    n = task.n
    W = {k: rng.normal(size=(1, 1, n, n)) for k in ("W_Q", "W_K", "W_V")}
    W["W_O"] = rng.normal(size=(1, n, n))
    model = sp.paper_model(task, "softmax", **W)
    A = W["W_Q"][0, 0].T @ W["W_K"][0, 0]
    table = task.token_table  # codes 0..2m-1, then BOS
    bos = table[task.bos_code]
    V = table @ (W["W_O"][0] @ W["W_V"][0, 0]).T
    relax = paper_relaxation(task, EPS, (0,))
    u = np.array([math.exp(table[q] @ A @ table[k] - table[q] @ A @ bos)
                  for q, _, k, _ in relax.classes])
    vk = V[relax.key]
    for i, prefix in enumerate(relax.prefixes):
        Z = 1 + relax.M[i] @ u
        mine = (V[task.bos_code] + relax.M[i] @ (u[:, None] * vk)) / Z
        out, w = model.forward(task.decode(prefix))
        np.testing.assert_allclose(mine, out[-1], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(1 / Z, w[0, 0, -1, 0], rtol=1e-9)
        np.testing.assert_allclose(relax.Y[i], task.prefix_targets(np.array([prefix]))[0])


# ------------------------------------------------------------ proof and checker
def test_the_claim_is_proved_with_a_verified_certificate(proved, task):
    assert proved.status == "proved" and proved.bound >= Fraction(1, 2)
    verdict = checker.verify(proved.certificate)
    assert verdict.ok and verdict.kind == "paper-bnb-learned-values"
    (prefix, bound), = verdict.statement["conclusion"]["bounds"]
    assert prefix[-1] < task.m and Fraction(bound) >= Fraction(1, 2)


def _tampered(cert: dict, edit) -> dict:
    doc = copy.deepcopy(cert)
    edit(doc)
    return doc


def _first_leaf(doc: dict) -> dict:
    node = doc["data"]["trees"][0]["root"]
    while "leaf" not in node:
        node = node["below"]
    return node["leaf"]


def _nonempty_leaf(doc: dict) -> dict:
    stack = [doc["data"]["trees"][0]["root"]]
    while stack:
        node = stack.pop()
        if "leaf" in node:
            if any(Fraction(x) != 0 for row in node["leaf"]["z"] for x in row):
                return node["leaf"]
        else:
            stack += [node["below"], node["above"]]
    raise AssertionError("no leaf with multipliers")


FAILS = {
    "tree bound": lambda d: d["data"]["trees"][0].__setitem__("bound", "99/100"),
    "claimed bound": lambda d: d["claim"].__setitem__("min_bos_mass", "99/100"),
    "cone": lambda d: _nonempty_leaf(d)["s"].__setitem__(0, "0"),
}
REFUSED = {
    "trigger target": lambda d: d["data"]["trees"][0].__setitem__("target", [0, 2]),
    "trigger at 1": lambda d: d["data"]["trees"][0].__setitem__("target", [2, 0]),
    "no trigger, full length": lambda d: d["data"]["trees"][0].__setitem__(
        "target", [0, 0, 0, 0]),
    "residual": lambda d: d["instance"]["task"].__setitem__("residual", True),
    "continuous": lambda d: d["instance"]["task"].__setitem__("content", "uniform"),
    "fixed values": lambda d: d["instance"].__setitem__("values", "fixed"),
    "our kind": lambda d: d.__setitem__("kind", "bnb-learned-values"),
    "box": lambda d: _first_leaf(d)["box"][0][1][0].__setitem__(0, "-7"),
    "repeated content": lambda d: d["instance"].__setitem__("content_vectors",
                                                            [["1"], ["1"]]),
}


@pytest.mark.parametrize("name", sorted(FAILS))
def test_a_tampered_certificate_fails(proved, name):
    verdict = checker.verify(_tampered(proved.certificate, FAILS[name]))
    assert not verdict.ok and "\n" not in verdict.failure


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_malformed_certificate_is_refused(proved, name):
    doc = _tampered(proved.certificate, REFUSED[name])
    try:
        verdict = checker.verify(doc)
    except CertificateError as exc:
        assert "\n" not in str(exc)
        return
    assert not verdict.ok, name


# ------------------------------------------------------------------- the budget
@pytest.fixture
def clock(monkeypatch):
    """The engine's budget clock, driven by hand (``now[0]``: its reading in seconds)."""
    now = [0.0]
    monkeypatch.setattr(api, "_clock", lambda: now[0])
    return now


def _advancing(monkeypatch, clock, name, seconds):
    """Make ``api.name`` advance the budget clock by ``seconds`` after each call."""
    real = getattr(api, name)

    def run(*args, **kwargs):
        got = real(*args, **kwargs)
        clock[0] += seconds
        return got
    monkeypatch.setattr(api, name, run)


def implied_bound(claim, verdict):
    """The bound the verified statement proves for ``claim``, or why it does not."""
    try:
        return implied(claim, verdict.statement)
    except NotImplied as exc:
        return str(exc)


def applies(claim) -> str | None:
    """Why the engine does not apply to ``claim`` (``None`` when it does)."""
    return engine_targets(claim)[1]


def test_a_budget_spent_by_the_tree_leaves_it_uncertified_and_unproved(task, clock,
                                                                         monkeypatch, tmp_path):
    """The tree closes (it would prove the claim) but spends the budget: its exact
    certification is not started, the result is open and says why.  The claim route runs
    the engine without a clock, so there it proves the claim all the same."""
    _advancing(monkeypatch, clock, "branch_and_bound", 2000.0)
    res = prove_paper(task, EPS, min_bos_mass="1/2", some=True, budget=1000.0)
    (outcome,) = res.targets
    assert outcome.tree.status == "proved" and outcome.certified is None
    assert outcome.skipped == api.OUT_OF_BUDGET and res.skipped
    assert res.status == "open" and res.certificate is None
    # a claim's engine route has no clock: the same tree is certified and proves it
    data = _claim("0.5")
    data["check"]["budget"] = 1000
    run = certify_by_engine(claim_from_dict(data), tmp_path / "c.json")
    assert run.path is not None and (tmp_path / "c.json").exists()


def test_a_budget_spent_during_certification_stops_at_the_next_leaf(task, clock, monkeypatch):
    _advancing(monkeypatch, clock, "leaf_certificate", 2000.0)
    res = prove_paper(task, EPS, min_bos_mass="1/2", some=True, budget=1000.0)
    (outcome,) = res.targets
    assert len(list(outcome.tree.root.leaves())) >= 2  # else no leaf is left to refuse
    assert outcome.certified is None and "during" in outcome.skipped
    assert res.status == "open" and res.certificate is None


def test_an_ample_budget_on_the_same_clock_proves(task, clock, monkeypatch):
    """The cross-check: the same run with budget to spare is proved."""
    _advancing(monkeypatch, clock, "leaf_certificate", 1.0)
    res = prove_paper(task, EPS, min_bos_mass="1/2", some=True, budget=1000.0)
    assert res.status == "proved" and not res.skipped and checker.verify(res.certificate).ok


def test_the_route_reads_only_a_statement_about_the_claims_instance(proved, tmp_path):
    path = tmp_path / "c.json"
    proved.save(path)
    verdict = checker.verify_file(path)
    assert implied_bound(claim_from_dict(_claim("0.5")), verdict) >= Fraction(1, 2)
    assert "reaches b" in implied_bound(claim_from_dict(_claim("0.99")), verdict)
    # a smaller ε is implied (fewer models are accurate); a larger one is not
    assert implied_bound(claim_from_dict(_claim("0.5", eps="0.04")), verdict) >= Fraction(1, 2)
    assert "assumes error <= 1/20" in implied_bound(claim_from_dict(_claim("0.5", eps="0.06")),
                                                    verdict)
    other = _claim("0.5")
    other["task"]["content"] = [[-1.0], [0.5]]
    assert "instance" in implied_bound(claim_from_dict(other), verdict)
    assert "gives no bound" in implied_bound(claim_from_dict(_claim("0.5", "every")), verdict)


@pytest.mark.parametrize("model", [{"kind": "softmax", "heads": 2},
                                   {"kind": "softmax", "layers": 2},
                                   {"kind": "relu_length", "heads": 1},
                                   {"kind": "sparsemax", "heads": 1},
                                   {"kind": "gated_softmax", "heads": 1}])
def test_the_routes_statement_reader_refuses_another_class(proved, tmp_path, model):
    """The statement alone (without :func:`applies` in front of it) proves nothing about
    several heads, several layers or another map: the certificate covers one softmax head."""
    path = tmp_path / "c.json"
    proved.save(path)
    verdict = checker.verify_file(path)
    data = _claim("0.5")
    data["model"] = model
    got = implied_bound(claim_from_dict(data), verdict)
    assert isinstance(got, str) and "the certificate covers" in got
    tampered = copy.deepcopy(verdict)
    tampered.statement["model_class"]["heads"] = 2
    assert isinstance(implied_bound(claim_from_dict(_claim("0.5")), tampered), str)


def test_check_says_proved_by_bnb(tmp_path):
    out = sp.check(CLAIM, certificate_out=tmp_path / "c.json", search=False)
    assert out.status == "proved" and out.by == "bnb", out
    assert out.bound >= 0.5 and checker.verify_file(tmp_path / "c.json").ok
    skipped = sp.check(CLAIM, search=False, bnb=False)
    assert skipped.status == "open"


# ------------------------------------------------------------------- soundness
@pytest.fixture(scope="module")
def accurate(task, tmp_path_factory):
    """An exact accurate model (the fixed-value sink construction), verified by the
    trusted ``paper-witness`` checker: error <= 1/20 and its BOS weight at position 1."""
    claim = claim_from_dict(_claim("0.999"))
    model = paper_sink_solution(task, float(EPS))
    found = write_witness(claim, model, tmp_path_factory.mktemp("w") / "w.json")
    assert found is not None  # it refutes "BOS >= 0.999 somewhere": a verified witness
    _, w = model.forward(task.decode((0,)))
    return float(w[0, 0, 1, 0]), Fraction(checker.verify_file(found.path).statement[
        "max_bos_mass"])


def test_a_conclusion_above_an_accurate_models_bos_weight_is_not_proved(task, accurate):
    at_one, everywhere = accurate
    assert 0.99 < at_one <= float(everywhere) < 0.995
    res = prove_paper(task, EPS, min_bos_mass=everywhere, targets=[(0,)], some=True,
                      max_nodes=8)
    assert res.status != "proved" and res.certificate is None
    for outcome in res.targets:
        assert outcome.certified is None or float(outcome.certified) <= at_one


@pytest.mark.slow
def test_the_false_claim_is_refuted_not_proved(tmp_path):
    out = sp.check(claim_from_dict(_claim("0.995")), witness=tmp_path / "w.json", budget=5)
    assert out.status == "refuted", out
    assert checker.verify_file(tmp_path / "w.json").ok


@pytest.mark.slow
def test_the_certified_bound_stays_below_the_accurate_model(task, accurate):
    at_one, _ = accurate
    res = prove_paper(task, EPS, targets=[(0,)], max_nodes=200)
    assert res.status == "bounded" and checker.verify(res.certificate).ok
    assert 0.9 < float(res.bound) <= at_one


@pytest.mark.slow
def test_the_example_claim_file_is_proved_by_the_cli(tmp_path):
    claim = load_claim(CLAIM)
    assert claim.task.setting == "paper" and not claim.task.has_positions
    from sinkproof.cli import main
    assert main(["check", str(CLAIM), "--certificate-out", str(tmp_path / "c.json")]) == 0


@pytest.mark.slow
def test_every_non_trigger_position_is_proved_and_stays_below_the_accurate_model(accurate,
                                                                                 tmp_path):
    """The (P1) form itself: BOS >= 1/2 at every non-trigger position, before and after the
    trigger; each certified bound at most the sink construction's weight there."""
    out = sp.check(ROOT / "examples" / "claims" / "paper_p1_one_head_every.toml",
                   certificate_out=tmp_path / "c.json", search=False)
    assert out.status == "proved" and out.by == "bnb", out
    verdict = checker.verify_file(tmp_path / "c.json")
    bounds = verdict.statement["conclusion"]["bounds"]
    assert len(bounds) == 54
    _, everywhere = accurate
    lam = math.log(float(everywhere) / (1 - float(everywhere)))  # e^λ/(e^λ + 1) at t = 1
    for prefix, bound in bounds:
        assert 0.5 <= float(Fraction(bound)) <= math.exp(lam) / (math.exp(lam) + len(prefix))


@pytest.mark.parametrize("name", ["paper_p1_two_heads", "paper_p2_two_layers"])
def test_the_engine_proves_nothing_where_counterexamples_exist(name):
    """Two heads cancel and two residual layers need no sink (verified witnesses): the
    engine does not apply there, and the route says so rather than proving anything."""
    claim = load_claim(ROOT / "examples" / "claims" / f"{name}.toml")
    assert applies(claim) is not None
    out = sp.check(claim, search=False)
    assert out.status == "open"
    assert any("engine (branch and bound): not applicable" in r for r in out.reasons)


@pytest.mark.slow  # the routes and a 0.2 s engine budget: CI runs it
def test_an_open_answer_without_search_reports_the_time_its_routes_spent(tmp_path):
    """With search off, ``spent`` is the routes' time (the engine's here), not a 0."""
    from sinkproof.claims import check

    outcome = check(ROOT / "examples" / "claims" / "paper_p1_one_head_too_strong.toml",
                    search=False, budget=0.2, certificate_out=tmp_path / "c.json")
    assert outcome.status == "open" and not (tmp_path / "c.json").exists()
    assert outcome.spent["seconds"] >= 0.1  # the engine ran to its 0.2 s budget


# ------------------------------------------------------- one engine, by capability
def test_the_family_is_read_off_the_tasks_prefix_blocks_shortest_first(task):
    """The engine's rows are the task's own prefix blocks, depth by depth, each depth in
    lexicographic code order (the order a certificate's trees were written in)."""
    prefixes = paper_prefixes(task)
    depths = [len(p) for p in prefixes]
    assert depths == sorted(depths)
    for t in range(1, task.max_depth + 1):
        mine = [p for p in prefixes if len(p) == t]
        blocks = {tuple(int(c) for c in r) for b in task.prefix_blocks(t) for r in b.codes}
        assert mine == sorted(blocks)


def test_prove_on_a_paper_task_is_prove_paper(task, proved):
    again = api.prove(task, eps=EPS, min_bos_mass="1/2", some=True)
    assert again.status == proved.status == "proved"
    assert again.certificate["kind"] == "paper-bnb-learned-values"
    drop = ("seconds",)
    assert {k: v for k, v in again.certificate.items() if k not in drop} == \
           {k: v for k, v in proved.certificate.items() if k not in drop}


def test_refusals_name_the_capability_not_the_setting():
    from sinkproof.errors import CapabilityError

    with pytest.raises(CapabilityError, match="finite vocabulary"):
        api.prove(sp.PaperTask(n=4, L=5), eps=EPS)
    with pytest.raises(CapabilityError, match="residual model"):
        api.prove(sp.PaperTask(n=4, L=5, content=[[1.0]], residual=True), eps=EPS)
    with pytest.raises(CapabilityError, match="positional features"):
        prove_paper(sp.TriggerTask(p=1, T=3), EPS)
    with pytest.raises(ValueError, match="learned values"):
        api.prove(sp.PaperTask(n=4, L=4, content=[[1.0]]), eps=EPS, values="fixed")
