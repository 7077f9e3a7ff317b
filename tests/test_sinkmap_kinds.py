"""Per-position sink maps for every attention map (``sink_map(..., kind=NAME)``).

Cross-checks: the null maps' logit-sharing bounds against softmax's, the hull bounds
against ``1 - eps/d_t`` computed by hand, every bound against accurate heads' actual mass,
the witnesses against the trusted checker (and their tampered copies), and each map's
sink map against the variants table's family-level cell.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from conftest import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof import checker
from sinkproof.attention import MAPS
from sinkproof.checker.limits import DEFAULT, using
from sinkproof.cli import main
from sinkproof.errors import CertificateError
from sinkproof.search.realise import realise
from sinkproof.sinkmap import SinkMap
from sinkproof.sinkmap.gated import MAX_LEVELS, gate_grid
from sinkproof.sinkmap.kinds import sink_measure
from sinkproof.sinkmap.overview import kinds_table
from sinkproof.sinkmap.work import estimate
from sinkproof.variants import cell, construction, default_task

SMALL = sp.TriggerTask(p=1, T=2)
TASK = sp.TriggerTask(p=2, T=3)

EXPECTED = {  # map -> (measure, route): what the mathematics allows, stated once here
    "softmax": ("BOS mass", "logit sharing"), "sink_logit": ("null mass", "logit sharing"),
    "softmax1": ("null mass", "logit sharing"), "sparsemax": ("BOS mass", "hull"),
    "entmax15": ("BOS mass", "hull"), "gated_softmax": ("null mass", "gate split"),
    "sigmoid": ("BOS share", "witness"), "relu": ("BOS weight", "witness"),
    "relu_length": ("BOS weight", "witness"), "stick_breaking": ("null mass", "hull"),
}


@pytest.fixture(scope="module")
def maps() -> dict[str, SinkMap]:
    """Every map at p=2, T=3 but the gated head (24 softmax maps: see ``gated``)."""
    return kinds_table(TASK, "1/10", [m for m in MAPS if m != "gated_softmax"]).maps


@pytest.fixture(scope="module")
def gated() -> dict[str, SinkMap]:
    """The gated head beside the softmax and sparsemax maps at p=1, T=2."""
    return kinds_table(SMALL, "1/10", ["gated_softmax", "softmax", "sparsemax"]).maps


def test_every_map_has_its_measure_and_route():
    assert set(EXPECTED) == set(MAPS)
    for name, (measure, route) in EXPECTED.items():
        m = sink_measure(name)
        assert (m.name, m.route) == (measure, route), name
        assert m.null == (measure == "null mass")


def test_every_map_verifies_and_says_its_kind(maps, gated):
    for name, smap in [*maps.items(), ("gated_softmax", gated["gated_softmax"])]:
        assert smap.kind == name and smap.measure == EXPECTED[name][0]
        assert smap.verify().ok, name
        assert smap.count("uncertified") == 0
        assert len(smap.entries) == (8 if name == "gated_softmax" else 120)
        assert name == "softmax" or f"kind={name}" in repr(smap)


def test_slot_maps_share_softmax_program_entry_by_entry(maps):
    soft = maps["softmax"]
    for name in ("sink_logit", "softmax1"):
        for key, e in maps[name].entries.items():
            assert (e.status, e.exact) == (soft.entries[key].status, soft.entries[key].exact)
        assert "null mass" in maps[name].certificate["claim"]["statement"]


def _relabelled(cert: dict, name: str | None) -> dict:
    doc = copy.deepcopy(cert)
    if name is None:
        doc["claim"].pop("map", None)
    else:
        doc["claim"]["map"] = name
    return doc


def test_the_checker_states_the_null_mass_of_the_map_the_file_names(maps):
    soft = checker.verify(maps["softmax"].certificate)
    assert "map" not in maps["softmax"].certificate["claim"]
    assert "softmax model" in soft.claim and "has BOS mass" in soft.claim
    assert soft.statement["model_class"]["attention"] == "softmax"
    assert "measure" not in soft.statement
    for name in ("sink_logit", "softmax1"):
        assert maps[name].certificate["claim"]["map"] == name
        got = checker.verify(maps[name].certificate)
        assert got.ok and f"single-head {name} model" in got.claim
        assert "null mass" in got.claim and "BOS mass" not in got.claim
        assert got.statement["model_class"]["attention"] == name
        assert got.statement["measure"].startswith("null mass")
        # the same program: the bounds and the rest of the statement are softmax's
        assert got.statement["conclusion"] == soft.statement["conclusion"]


def test_a_relabelled_file_is_re_read_or_refused(maps):
    soft = maps["softmax"].certificate
    plain = checker.verify(soft)
    # naming softmax explicitly changes nothing (existing files keep their digest)
    assert checker.verify(_relabelled(soft, "softmax")).digest == plain.digest
    # a softmax file relabelled as a slot map is read as that map's null mass (true: the
    # same program bounds it when BOS carries value 0), never as more
    again = checker.verify(_relabelled(soft, "sink_logit"))
    assert again.ok and "null mass" in again.claim and again.digest != plain.digest
    assert checker.verify(_relabelled(maps["sink_logit"].certificate, None)).digest == \
        plain.digest
    for name in ("sparsemax", "gated_softmax", "relu", "null mass", 1):
        with pytest.raises(CertificateError, match="claim.map"):
            checker.verify(_relabelled(soft, name))


def test_a_slot_map_file_does_not_prove_a_softmax_claim(maps, tmp_path):
    """The claim route reads the verified statement: a file stating a null mass is not
    taken for a softmax head's BOS mass (the softmax file is, at the same claim)."""
    from sinkproof.claims import claim_from_dict
    from sinkproof.claims.certified import NotImplied, prove_by_certificate
    claim = claim_from_dict({
        "task": {"p": 2, "T": 3}, "model": {"kind": "softmax", "heads": 1, "values": "fixed"},
        "hypothesis": {"max_error": 0.1, "family": "S_T"},
        "conclusion": {"min_bos_mass": 0.01, "at": "nontrigger", "positions": "some"}})
    for name in ("softmax", "sink_logit"):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(maps[name].certificate))
        if name == "softmax":
            assert prove_by_certificate(claim, path)[0] >= 0.01
        else:
            with pytest.raises(NotImplied, match="null mass"):
                prove_by_certificate(claim, path)


def test_a_slot_map_label_needs_bos_to_carry_value_zero():
    U = np.zeros((1, 4))
    U[0, 0], U[0, 3] = 1.0, 0.5  # BOS carries a value
    smap = sp.sink_map(SMALL, "1/10", values=U)
    assert smap.verify().ok
    with pytest.raises(CertificateError, match="BOS carries value 0"):
        checker.verify(_relabelled(smap.certificate, "softmax1"))


def _hull_distance(task: sp.TriggerTask, prefix: tuple[int, ...]) -> float:
    vecs = {tuple(task.content[c]) for c in prefix if c != sp.TRIG}
    if sp.TRIG in prefix or any(tuple(-x for x in v) in vecs for v in vecs):
        return 0.0
    return 1 / math.sqrt(len(vecs))


@pytest.mark.parametrize("name", ["sparsemax", "entmax15"])
def test_hull_maps_are_theorem3_position_by_position(maps, name):
    soft = maps["softmax"]
    for key, e in maps[name].entries.items():
        d = _hull_distance(TASK, key)
        if d == 0:
            assert e.status == "no bound" and "hull" in e.reason
            continue
        assert e.status == "certified"
        assert 1 - 0.1 / d - 1e-9 <= e.bound <= 1 - 0.1 / d
        # logit sharing is at least as strong as the hull wherever both apply
        assert soft.entries[key].bound >= e.bound - 1e-6


def test_gated_map_keeps_the_hull_and_adds_the_gate_split_where_the_hull_is_silent(gated):
    smap, soft, hull = gated["gated_softmax"], gated["softmax"], gated["sparsemax"]
    split = 0
    for key, e in smap.entries.items():
        assert e.bound <= soft.entries[key].bound + 1e-6  # a gate near 1 is a softmax head
        assert e.bound >= hull.entries[key].bound - 1e-12
        if _hull_distance(SMALL, key) == 0 and sp.TRIG not in key:
            assert e.status == "certified" and e.subfamily == "gate split"
            split += 1
        elif sp.TRIG in key:
            assert e.status == "no bound"
    assert split == 2
    # (BOS, e1, -e1): the softmax bound 0.7364 at a gate near 1, a little less over all gates
    assert 0.72 < smap.bound([0, 1], 2) < soft.bound([0, 1], 2)
    cert = smap.certificate
    assert cert["kind"] == "sinkmap-gated" and len(cert["data"]["levels"]) >= 10


def test_tampered_gated_certificate_is_rejected(gated):
    base = gated["gated_softmax"].certificate
    cert = copy.deepcopy(base)
    target = next(t for t in cert["data"]["targets"] if t["target"] == [0, 1])
    target["bound"] = "3/4"  # above what the gate split proves
    assert not sp.checker.verify(cert).ok
    cert = copy.deepcopy(base)
    del cert["data"]["levels"][-1]  # the top gate: the interval below it now reaches 1
    assert not sp.checker.verify(cert).ok
    cert = copy.deepcopy(base)
    cert["data"]["levels"][3]["gate"] = cert["data"]["levels"][4]["gate"]
    with pytest.raises(sp.errors.CertificateError, match="gate"):
        sp.checker.verify(cert)
    cert = copy.deepcopy(base)
    level = cert["data"]["levels"][-1]["certificate"]
    level["data"]["certificates"][0]["w"][0] = "0"
    assert not sp.checker.verify(cert).ok
    cert = copy.deepcopy(base)
    cert["instance"]["eps"] = "1/20"
    with pytest.raises(sp.errors.CertificateError, match="instance"):
        sp.checker.verify(cert)


@pytest.mark.parametrize("name", ["sigmoid", "relu", "relu_length"])
def test_off_simplex_maps_have_no_bound_shown_by_a_verified_witness(maps, name):
    smap = maps[name]
    assert smap.count("no bound") == len(smap.entries)
    cert = smap.certificate
    assert cert["kind"] == "witness" and cert["claim"]["where"] == "nontrigger"
    assert Fraction(cert["claim"]["max_error"]) == Fraction(1, 10)
    level = Fraction(cert["claim"]["max_bos_mass"])
    assert level == 0 if name != "sigmoid" else 0 < level <= Fraction(1, 1000)
    assert cert["claim"].get("bos_measure", "weight") == sink_measure(name).witness_measure


@pytest.mark.parametrize("name", ["sigmoid", "relu", "relu_length"])
def test_tampered_witness_is_rejected(maps, name):
    cert = copy.deepcopy(maps[name].certificate)
    D = TASK.D
    bos, content = TASK.p + 2, TASK.p
    cert["data"]["A"][0][content][bos] = "50"  # content queries now look at BOS
    assert not sp.checker.verify(cert).ok
    cert = copy.deepcopy(maps[name].certificate)
    ratio = TASK.p + 4
    row = cert["data"]["A"][0][ratio]
    row[content] = str(3 * Fraction(row[content]))  # the trigger's weights are now wrong
    verdict = sp.checker.verify(cert)
    assert not verdict.ok and "error" in verdict.failure
    assert len(cert["data"]["A"][0]) == D


def _null_masses(model: sp.AttentionModel) -> dict[tuple[int, ...], float]:
    """``1 - Σ_{j>=1}`` effective weight at every non-trigger prefix (the null mass of a slot
    or gated map, the BOS mass on the simplex)."""
    out = {}
    for seq in model.task.sequences():
        _, w = model.forward(seq)
        for t in range(1, len(seq) + 1):
            if seq[t - 1] != sp.TRIG:
                out[tuple(seq[:t])] = 1.0 - float(w[0, t, 1:t + 1].sum())
    return out


BOUNDED = ["softmax", "sink_logit", "sparsemax", "entmax15", "gated_softmax"]


def _check_accurate_head(name: str, level: int, noise: int) -> None:
    """Every bound is below the mass of an actual head accurate to the map's eps (a perturbed
    construction; eps is its own float error, rounded up)."""
    task = SMALL
    con = construction(task, name, level if name not in ("sparsemax", "entmax15") else None)
    model = con.model()
    rng = np.random.default_rng(noise)
    model = model.replace(A=model.A + 0.05 * rng.standard_normal(model.A.shape))
    err = sp.evaluate(model).max_error
    if not 0 < err < 0.9:
        return
    eps = Fraction(math.ceil(err * 10**6) + 1, 10**6)
    smap = sp.sink_map(task, eps, kind=name)
    for key, mass in _null_masses(model).items():
        assert mass >= smap.entries[key].bound - 1e-9, (key, mass, smap.entries[key])


@pytest.mark.parametrize("name", BOUNDED)
def test_bounds_hold_for_an_accurate_head(name):
    _check_accurate_head(name, 6, 0)


@pytest.mark.slow
@pytest.mark.parametrize("name", BOUNDED)
@settings(max_examples=examples(12), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(level=st.integers(2, 10), noise=st.integers(0, 10**6))
def test_bounds_hold_for_accurate_heads(name, level, noise):
    _check_accurate_head(name, level, noise)


@pytest.mark.parametrize("name", list(MAPS))
def test_sink_map_agrees_with_the_variants_cell(name):
    """A yes cell: some position's certified bound is near 1 (>= 1 - 2 eps); a no cell: some
    position has no bound, shown by a witness (mass 0, or share at most eps)."""
    task, eps = default_task(quick=True), Fraction(1, 100)
    m = sink_measure(name)
    question = "null_sink_necessary" if m.null else "bos_sink_necessary"
    answer = cell(name, question, task=task, quick=True).answer
    smap = sp.sink_map(task, eps, kind=name)
    greatest = max((e.bound for e in smap.entries.values() if e.status == "certified"),
                   default=0.0)
    refuted = [k for k, e in smap.entries.items()
               if e.status == "no bound" and e.subfamily == "witness"]
    level = Fraction(smap.certificate["claim"]["max_bos_mass"]) if refuted else None
    assert (answer == "yes") == (greatest >= 1 - 2 * eps), (name, answer, greatest)
    assert (answer == "no") == bool(refuted and level <= eps), (name, answer)
    assert smap.verify().ok


def test_where_no_witness_exists_the_position_stays_uncertified():
    smap = sp.sink_map(sp.TriggerTask(p=1, T=4), "1/10", kind="sigmoid",
                       positions=[((0, 1, 0, 1), 4)])
    (entry,) = smap.entries.values()
    assert entry.status == "uncertified" and "T > 3" in entry.reason
    onehot = sp.sink_map(sp.TriggerTask(p=1, T=2, positions="onehot"), "1/10", kind="relu")
    assert onehot.count("uncertified") == len(onehot.entries)
    with using(dataclasses.replace(DEFAULT, work=100)):  # a witness beyond the limits
        refused = sp.sink_map(SMALL, "1/10", kind="relu")
    assert refused.count("uncertified") == 8
    assert "exceeds the limit" in next(iter(refused.entries.values())).reason


def test_bad_requests_fail_with_one_clear_error():
    with pytest.raises(ValueError, match="unknown attention kind"):
        sp.sink_map(SMALL, "1/10", kind="nope")
    with pytest.raises(ValueError, match="softmax only"):
        sp.sink_map(SMALL, "1/10", values="learned", kind="sparsemax")
    with pytest.raises(ValueError, match="family="):
        sp.sink_map(SMALL, "1/10", kind="sparsemax", family=[[0, 1]])
    U = np.zeros((1, 4))
    U[0, 0], U[0, 3] = 1.0, 0.5  # BOS carries a value: no null to merge it into
    with pytest.raises(ValueError, match="BOS to carry value 0"):
        sp.sink_map(SMALL, "1/10", values=U, kind="sink_logit")
    U[0, 3] = 0.0
    U[0, 0] = 2.0
    with pytest.raises(ValueError, match="fixed values"):
        sp.sink_map(SMALL, "1/10", values=U, kind="relu")
    with pytest.raises(ValueError, match="softmax heads"):
        realise(sp.sink_map(SMALL, "1/10", kind="entmax15"))
    explicit = sp.sink_map(SMALL, "1/10", values=U, kind="sparsemax")
    assert explicit.verify().ok and explicit.bound((0,), 1) == pytest.approx(0.95, abs=1e-9)


def test_save_load_keeps_the_kind(tmp_path, maps):
    path = tmp_path / "m.json"
    maps["entmax15"].save(path)
    back = SinkMap.load(path)
    assert back.kind == "entmax15" and back.entries.keys() == maps["entmax15"].entries.keys()
    assert back.verify().ok


def test_work_estimate_covers_the_programs_and_prefixes():
    for name in ("sparsemax", "relu"):
        assert estimate(TASK, kind=name) >= 120
    sets = sum(math.comb(5, i) for i in range(1, 4))
    assert estimate(TASK, kind="sparsemax") == sets * 5 + 120
    levels = max(len(gate_grid(Fraction(1, 10))), MAX_LEVELS)
    assert estimate(TASK, kind="gated_softmax", eps="1/10") == sets * 5 + 120 + levels * \
        estimate(TASK)
    assert main(["sinkmap", "--p", "2", "--T", "3", "--eps", "0.1", "--kind", "relu",
                 "--max-work", "10"]) == 4


def test_cli_kind_all_prints_one_line_per_map(capsys):
    assert main(["sinkmap", "--p", "1", "--T", "2", "--eps", "1/10", "--kind", "all"]) == 0
    out = capsys.readouterr().out
    for name in MAPS:
        assert any(line.startswith(name + " ") for line in out.splitlines()), name
    assert any(line.split()[:4] == ["relu_length", "BOS", "weight", "witness"]
               for line in out.splitlines())
