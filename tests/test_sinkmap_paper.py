"""Sink maps in the paper's setting (``sinkproof sinkmap --setting paper``)."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import nnls

from sinkproof.bnb import paper_prefixes, paper_targets
from sinkproof.checker import verify
from sinkproof.checker.family.paper import PaperFamily
from sinkproof.cli import main
from sinkproof.constructions import paper_sink_solution
from sinkproof.errors import InputError, WorkLimitError
from sinkproof.sinkmap import (
    PaperSinkMap,
    SinkMap,
    paper_prefix_count,
    paper_sink_map,
    paper_target_count,
    situation_of,
)
from sinkproof.tasks.paper import PaperTask

TASK = PaperTask(n=4, L=5, content="grid", grid=2)


def _hull_distance(points: list[list[float]]) -> float:
    """``min ||Σ w_i p_i||`` over the simplex, by non-negative least squares with the
    row ``M Σ w_i = M`` appended (independent of the producer's min-norm solver)."""
    P = np.array(points, dtype=float).T
    big = 1e4
    A = np.vstack([P, big * np.ones((1, P.shape[1]))])
    b = np.concatenate([np.zeros(P.shape[0]), [big]])
    w, _ = nnls(A, b)
    return float(np.linalg.norm(P @ (w / w.sum())))


def test_bounds_are_the_verified_family_certificates_entries(tmp_path, capsys):
    """Cross-check: the map's bound at each position is the entry of its token set in the
    certificate 'certify --setting paper' writes and 'verify' accepts, and matches
    ``1 - eps/d`` for a hull distance computed independently."""
    cert_file = tmp_path / "family.json"
    assert main(["certify", "--setting", "paper", "--eps", "1/10", "--out",
                 str(cert_file)]) == 0
    assert main(["verify", str(cert_file)]) == 0
    capsys.readouterr()
    assert main(["sinkmap", "--setting", "paper", "--eps", "1/10", "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    family = json.loads(cert_file.read_text())
    by_key = {(tuple(e["content"]), e["trigger"]): Fraction(e["bound"])
              for e in family["data"]["situations"]}
    tokens, triggers = PaperFamily(4, 3, [[Fraction(-1)], [Fraction(1)]]).fixed_values()
    assert len(data["entries"]) == len(paper_targets(TASK)) == 54
    for e in data["entries"]:
        key = situation_of(TASK, tuple(e["prefix"]))
        assert e["status"] == "certified" and Fraction(e["exact"]) == by_key[key]
        pts = [tokens[i] for i in key[0]] + ([] if key[1] is None else [triggers[key[1]]])
        truth = 1 - 0.1 / _hull_distance([[float(x) for x in p] for p in pts])
        assert Fraction(e["exact"]) <= truth + 1e-9 and abs(e["bound"] - truth) < 1e-6
    assert verify(data["certificate"]).ok


def test_a_saved_map_loads_back_as_a_paper_map(tmp_path):
    smap = paper_sink_map(TASK, "1/10")
    smap.save(tmp_path / "m.json")
    back = PaperSinkMap.load(tmp_path / "m.json")
    assert isinstance(back, PaperSinkMap) and back.task == TASK and back.values == "fixed"
    assert {k: e.exact for k, e in back.entries.items()} == \
           {k: e.exact for k, e in smap.entries.items()}
    assert repr(back) == repr(smap) and back.verify().ok
    again = SinkMap.load(tmp_path / "m.json")  # the map's class follows its task
    assert isinstance(again, PaperSinkMap) and repr(again) == repr(smap)


def test_sparsemax_and_entmax_share_the_hull_bound():
    soft = paper_sink_map(TASK, "1/10")
    for kind in ("sparsemax", "entmax15"):
        other = paper_sink_map(TASK, "1/10", kind=kind)
        assert {k: e.exact for k, e in other.entries.items()} == \
               {k: e.exact for k, e in soft.entries.items()}
    with pytest.raises(InputError, match="simplex"):
        paper_sink_map(TASK, "1/10", kind="relu_length")


def test_a_tampered_map_certificate_is_rejected(tmp_path, capsys):
    out = tmp_path / "map.json"
    assert main(["sinkmap", "--setting", "paper", "--eps", "1/10", "--out", str(out)]) == 0
    assert main(["verify", str(out)]) == 0
    data = json.loads(out.read_text())
    entry = data["data"]["situations"][0]
    entry["bound"] = str(Fraction(entry["bound"]) + Fraction(1, 100))
    out.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["verify", str(out)]) == 1
    said = capsys.readouterr()
    assert "bound" in said.out + said.err


@settings(max_examples=examples(12), deadline=None)
@given(st.integers(3, 6), st.integers(2, 3))
def test_the_counts_of_the_work_estimate_are_the_enumerated_ones(L, grid):
    task = PaperTask(n=4, L=L, content="grid", grid=grid)
    assert paper_target_count(task) == len(paper_targets(task))
    assert paper_prefix_count(task) == len(paper_prefixes(task))


def test_refusals_are_one_line(capsys):
    for argv, names, status in (
            (["--values", "learned"], "max_targets=32", 4),
            (["--values", "learned", "--L", "4", "--max-work", "10"], "--max-work", 4),
            (["--kind", "relu"], "simplex", 2),
            (["--kind", "sparsemax", "--values", "learned"], "softmax only", 2),
            (["--at", "0:1"], "--at", 2),
            (["--values", "model.json"], "'fixed' or 'learned'", 2)):
        assert main(["sinkmap", "--setting", "paper", "--eps", "0.1", *argv]) == status, argv
        err = capsys.readouterr().err.strip()
        assert names in err and "\n" not in err, (argv, err)
    with pytest.raises(WorkLimitError, match="max_targets=32"):
        paper_sink_map(TASK, "1/10", values="learned")


def _full_codes(task: PaperTask, prefix: tuple[int, ...]) -> list[int]:
    """A sequence of the family starting with ``prefix`` (content 0 after it, the trigger
    carrying ``c_0`` next if the prefix has none)."""
    codes = list(prefix)
    if all(c < task.m for c in codes):
        codes.append(task.m)
    return codes + [0] * (task.L - 1 - len(codes))


@pytest.mark.slow
def test_learned_bounds_lie_below_the_sinking_construction(tmp_path, capsys):
    """Every certified learned-value bound is at most the BOS weight the fixed-value
    construction (accurate at every row) puts there; the certificate verifies, and a
    raised bound in it is rejected."""
    task = PaperTask(n=4, L=4, content="grid", grid=2)
    out = tmp_path / "learned.json"
    status = main(["sinkmap", "--setting", "paper", "--eps", "1/10", "--L", "4",
                   "--values", "learned", "--out", str(out), "--json", "-"])
    data = json.loads(capsys.readouterr().out)
    certified = [e for e in data["entries"] if e["status"] == "certified"]
    assert status in (0, 3) and certified and data["values"] == "learned"
    model = paper_sink_solution(task, 0.1)
    for e in data["entries"]:
        x = task.decode(_full_codes(task, tuple(e["prefix"])))
        out_, w = model.forward(x)
        t = len(e["prefix"])
        assert np.linalg.norm(out_[t] - task.targets(x)[t]) <= 0.1
        if e["status"] == "certified":
            assert 0 < Fraction(e["exact"]) <= w[0, 0, t, 0]
    cert = json.loads(out.read_text())
    assert cert["kind"] == "paper-bnb-learned-values" and verify(cert).ok
    assert main(["verify", str(out)]) == 0
    cert["claim"]["min_bos_mass"] = "99/100"
    out.write_text(json.dumps(cert))
    assert main(["verify", str(out)]) == 1
