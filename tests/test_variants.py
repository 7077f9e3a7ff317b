"""The variants table: every cell's evidence re-checked, constructions verified exactly or
with outward intervals, the norm price against constructions, the --json schema."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from fractions import Fraction

import numpy as np
import pytest
from conftest import with_checker_row

import sinkproof as sp
from sinkproof import checker
from sinkproof.attention import MAPS
from sinkproof.checker.maps import exact_entmax15_weights, interval_weights
from sinkproof.cli import main
from sinkproof.variants import (
    NORM_PRICE_MAPS,
    QUESTIONS,
    build_table,
    construction,
    norm_lower_bound,
    verify_construction,
)
from sinkproof.variants.floors import Floor, error_floor, recency_floor
from sinkproof.variants.verify import checker_missing

SMALL = sp.TriggerTask(p=1, T=2)
PENDING = [k for k in MAPS if checker_missing(k)]
"""Maps whose trusted-checker row has not landed: their constructions cannot verify yet."""
ANSWERS, HOWS = {"yes", "no", "open"}, {"theorem", "certificate", "construction", "witness",
                                        "none"}


@pytest.fixture(scope="module")
def table():
    return build_table(SMALL)


def test_the_table_exports_one_row_per_map_and_question(table):
    rows = table.to_records()
    assert [(r["map"], r["question"]) for r in rows] == [
        (m, q) for m, qs in table.rows.items() for q in qs]
    assert all(r["answer"] == table.rows[r["map"]][r["question"]].answer for r in rows)
    assert table.to_latex().count("\\\\\n") == len(rows) + 1


def test_every_cell_is_backed_by_evidence_that_rechecks(table):
    """No yes/no without its evidence: certificates re-verified by the checker, constructions
    re-verified from scratch, norm bounds recomputed."""
    for name, qs in table.rows.items():
        for q, cell in qs.items():
            assert cell.answer in ANSWERS and cell.how in HOWS, (name, q)
            if cell.answer == "open":
                continue
            if cell.how == "certificate":
                cert, verdict = cell.evidence
                assert verdict.ok and checker.verify(cert.to_dict()).ok
                assert cert.min_bound > 0
                props = MAPS[name].properties
                assert props.on_simplex or (q == "null_sink_necessary" and props.null_slot)
            elif cell.how in ("construction", "witness"):
                checks = [e for e in cell.evidence if not isinstance(e, dict)]
                for check in checks:
                    again = verify_construction(construction(SMALL, name, check.level))
                    assert again == check
                    if q == "exact_solution_at_finite_norm":
                        assert check.zero_error
                docs = [e for e in cell.evidence if isinstance(e, dict)]
                assert bool(docs) == (cell.how == "witness")
                for doc in docs:  # re-verified by the trusted checker; a tampered copy fails
                    assert checker.verify(doc).ok
                    assert doc["claim"]["max_bos_mass"] == "3/4"
                    bad = json.loads(json.dumps(doc))
                    bad["claim"]["max_bos_mass"] = "0"
                    assert not checker.verify(bad).ok or name in ("relu", "relu_length")
                    bad["data"]["A"][0] = [[str(i - j) for j in range(SMALL.D)]
                                           for i in range(SMALL.D)]
                    assert not checker.verify(bad).ok
                if docs:
                    assert {d["claim"].get("bos_measure", "weight") for d in docs} == \
                        {"weight", "share"}
            elif cell.evidence and isinstance(cell.evidence[0], Floor):
                assert cell.evidence[0] == error_floor(SMALL, name)
            else:
                assert cell.how == "theorem"
                assert not MAPS[name].properties.exact_zeros  # hypothesis: positive weights
                if q == "norm_grows_as_error_shrinks":
                    rows = cell.evidence[0]
                    for eps, bound in rows:
                        assert norm_lower_bound(SMALL, name, eps) == bound
                    assert [b for _, b in rows] == sorted(b for _, b in rows)


def test_the_answers_match_the_maps_mathematics(table):
    got = {m: tuple(c.answer for c in qs.values()) for m, qs in table.rows.items()}
    assert got["softmax"] == ("yes", "yes", "no", "yes")
    assert got["sparsemax"] == got["entmax15"] == ("yes", "yes", "yes", "no")
    assert got["sink_logit"] == got["softmax1"] == ("no", "yes", "no", "yes")
    assert got["relu"] == got["relu_length"] == ("no", "no", "yes", "no")
    assert got["sigmoid"] == ("no", "no", "no", "yes")
    assert got["gated_softmax"] == ("no", "yes", "no", "yes")  # the gate is the null slot
    # the stick's remainder is a null slot; BOS need not sink (once the checker weighs it)
    assert got["stick_breaking"] == ("open" if PENDING else "no", "yes", "no", "yes")
    if PENDING:
        assert "rule-table row" in table.rows["stick_breaking"]["bos_sink_necessary"].detail


def test_the_stick_breaking_construction_needs_no_bos_sink_in_floating_point():
    """The float path of the construction behind the stick-breaking BOS cell (the checker's
    path runs once its row exists): error falls like e^-L, the BOS weight stays tiny."""
    errors = []
    for L in (4, 8, 16):
        ev = sp.evaluate(construction(SMALL, "stick_breaking", L).model())
        errors.append(ev.max_error)
        assert float(np.max(ev.bos_nontrigger.max)) < 1e-1
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-6


def test_the_recency_floor():
    """Stick-breaking cannot average two keys at positions with the same features: the floor
    is the largest 4-decimal rational below (sqrt 5 - 2)/2, and random heads respect it."""
    task = sp.TriggerTask(p=2, T=3)
    floor = recency_floor(task)
    assert floor is not None and floor.strict and floor.bound == Fraction(59, 500)
    root = (5 ** 0.5 - 2) / 2
    assert float(floor.bound) < root < float(floor.bound) + 1e-4
    assert error_floor(task, "stick_breaking") == floor
    assert all(error_floor(task, k) is None for k in MAPS if k != "stick_breaking")
    # the hypotheses are checked: no floor where positions 1 and 2 differ, T < 3, or p = 1
    assert recency_floor(task.replace(positions="onehot")) is None
    assert recency_floor(SMALL) is None and recency_floor(sp.TriggerTask(p=1, T=3)) is None
    rng = np.random.default_rng(0)
    for scale in (1.0, 4.0, 16.0):
        for _ in range(8):
            A = rng.normal(0, scale, (task.D, task.D))
            err = sp.evaluate(sp.AttentionModel(task, "stick_breaking", A, None)).max_error
            assert err > float(floor.bound)


@pytest.mark.parametrize("kind", with_checker_row(MAPS))
def test_each_construction_matches_the_float_model(kind):
    """Rigorous bounds and the float forward agree (two independent paths)."""
    con = construction(SMALL, kind)
    check = verify_construction(con)
    err = sp.evaluate(con.model()).max_error
    assert err <= check.error_hi * (1 + 1e-9) + 1e-15
    assert check.error_hi <= err * (1 + 1e-9) + 1e-15


def test_exact_constructions_have_zero_error_exactly():
    for kind in ("sparsemax", "entmax15", "relu", "relu_length"):
        assert verify_construction(construction(SMALL, kind)).zero_error, kind
    assert not verify_construction(construction(SMALL, "softmax")).zero_error


def test_a_tampered_construction_is_caught():
    con = construction(SMALL, "sparsemax")
    A = [list(r) for r in con.A]
    A[0][0] = Fraction(1, 3)  # content query on content key
    bad = type(con)(con.task, con.kind, con.level, tuple(tuple(r) for r in A))
    assert not verify_construction(bad).zero_error


def test_entmax15_exact_weights_agree_with_the_intervals():
    for s in ([2, 0, 0], [-2, 0, 0, -2], [Fraction(3), Fraction(1), 0], [1, 0]):
        t = len(s) - 1
        w = exact_entmax15_weights(s, t)
        iv = interval_weights("entmax15", s, t)
        if w is None:
            assert any(lo != hi for lo, hi in iv)
            continue
        assert sum(w) == 1 and all(lo <= x <= hi for x, (lo, hi) in zip(w, iv))


@pytest.mark.parametrize("kind", NORM_PRICE_MAPS)
def test_no_construction_beats_the_norm_price(kind):
    """The certified lower bound is below every construction's norm at its error (the float
    error where the checker cannot weigh the map yet)."""
    for L in (2, 4, 8):
        con = construction(SMALL, kind, L)
        err = sp.evaluate(con.model()).max_error if kind in PENDING else \
            verify_construction(con).error_hi
        bound = norm_lower_bound(SMALL, kind, err)
        assert bound is None or bound <= con.norm


def test_norm_price_refuses_bad_input():
    with pytest.raises(ValueError, match="no norm price"):
        norm_lower_bound(SMALL, "relu", 0.1)
    with pytest.raises(ValueError, match="eps"):
        norm_lower_bound(SMALL, "softmax", 0)
    assert norm_lower_bound(SMALL, "softmax", Fraction(1, 2)) is None  # vacuous


def test_json_schema_and_map_list_are_exact():
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["variants", "--quick", "--json", "-"]) == 0
    obj = json.loads(out.getvalue())
    assert set(obj) == {"command", "version", "exit_status", "task", "maps", "sandwich",
                        "trained"}
    assert obj["task"] == {**obj["task"], "p": 1, "T": 2} and obj["sandwich"] is None
    assert obj["trained"] is None
    data = obj["maps"]
    assert isinstance(data, list) and [r["map"] for r in data] == list(MAPS)
    for row in data:
        assert set(row) == {"map", "questions"}
        assert list(row["questions"]) == list(QUESTIONS)
        for cell in row["questions"].values():
            assert set(cell) == {"answer", "how", "detail", "command"}
            assert cell["answer"] in ANSWERS and cell["how"] in HOWS
            assert cell["command"].startswith("sinkproof variants")


def test_the_cell_command_reproduces_the_cell(capsys):
    assert main(["variants", "--quick", "--map", "relu", "--question",
                 "exact_solution_at_finite_norm"]) == 0
    text = capsys.readouterr().out
    assert "relu / exact_solution_at_finite_norm: yes (construction)" in text


def test_bad_input_is_one_line(capsys):
    assert main(["variants", "--question", "null_sink_necessary"]) == 2
    assert "--question needs --map" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown attention map"):
        construction(SMALL, "tanh")
    with pytest.raises(ValueError, match="T <= 3"):
        construction(sp.TriggerTask(p=1, T=4), "sigmoid")
    with pytest.raises(TypeError, match="L must be"):
        construction(SMALL, "softmax", 1.5)


@pytest.mark.slow
def test_the_default_instance_table_is_as_on_the_small_one():
    big = build_table()
    small = build_table(SMALL)
    same = [m for m in MAPS if m != "stick_breaking"]  # its T = 3 row rests on a floor
    assert {m: [c.answer for c in big.rows[m].values()] for m in same} == \
        {m: [c.answer for c in small.rows[m].values()] for m in same}
    assert [c.answer for c in big.rows["stick_breaking"].values()] == ["yes", "yes", "no", "yes"]
    assert big.rows["stick_breaking"]["bos_sink_necessary"].detail.startswith("vacuously")
    assert np.isfinite(construction(big.task, "gated_softmax").norm)


def test_the_hull_certificate_behind_the_sink_cells_is_rejected_when_tampered(table):
    cert, _ = table.rows["softmax"]["bos_sink_necessary"].evidence
    data = cert.to_dict()
    situation = next(s for s in data["data"]["situations"] if "d" in s)
    situation["d"] = str(Fraction(situation["d"]) * 2)  # claim a hull twice as far
    assert not checker.verify(data).ok


def test_the_cli_choices_are_the_registry(capsys):
    from sinkproof.checker import MAP_NAMES

    assert set(MAP_NAMES) == set(MAPS) - set(PENDING)
    assert main(["variants", "--map", "tanh"]) == 2
    err = capsys.readouterr().err
    assert all(repr(m) in err for m in MAPS)  # argparse lists the choices: every map
