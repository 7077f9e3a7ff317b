"""``sink_map(..., values="learned")``: per-position bounds from the branch-and-bound engine,
below the fixed-value map's, verified, refused beyond its size limit; and on the CLI."""

from __future__ import annotations

import contextlib
import io
import json
from fractions import Fraction

import pytest

import sinkproof as sp
from sinkproof.checker import verify_file
from sinkproof.cli import main
from sinkproof.sinkmap import LearnedSinkMap, learned_sink_map

TASK = sp.TriggerTask(p=1, T=2)
POSITIONS = [((0,), 1), ((0, 0), 2), ((1, 0), 2), ((-1, 0), 2)]


@pytest.fixture(scope="module")
def learned():
    # what sink_map(TASK, "1/20", values="learned", positions=POSITIONS) runs, with smaller
    # trees (the CLI test below goes through sink_map itself)
    return learned_sink_map(TASK, "1/20", POSITIONS, max_nodes=10)


def test_learned_map_is_certified_where_the_trees_close(learned):
    assert isinstance(learned, LearnedSinkMap) and learned.verify().ok
    assert learned.entry((0, 0), 2).status == "certified"
    # above Theorem 1's argument with the trigger's shared logit, 1 - 2ε/(||c|| - 4ε) = 7/8
    # (where the tree stalled before its target classes steered the split), and at most
    # Theorem 8's 1 - 2ε/||c|| = 9/10 (positions 1 and 2 share π), which accurate heads meet
    assert Fraction(7, 8) < learned.entry((0, 0), 2).exact <= Fraction(9, 10)
    # after a zero-valued trigger nothing is certified (one head can use the trigger as null)
    assert learned.entry((-1, 0), 2).status == "uncertified" and learned.bound((-1, 0), 2) == 0
    bounds = {tuple(k): Fraction(b) for k, b in learned.verify().statement["conclusion"]["bounds"]}
    for key, entry in learned.entries.items():
        if entry.status == "certified":
            assert bounds[key] == entry.exact or bounds[key] <= entry.exact


def test_learned_bounds_stay_below_the_fixed_value_map(learned):
    # learned values hold U_fix, so no learned bound may exceed the fixed one (Theorem 6)
    fixed = sp.sink_map(TASK, "1/20", positions=POSITIONS, subfamily="full")
    for seq, t in POSITIONS:
        assert learned.bound(seq, t) <= fixed.bound(seq, t) + 1e-9


def test_learned_map_says_which_prefixes_force_the_bound(learned):
    why = dict(learned.why((0, 0), 2))
    assert (0, 0) in why and all(w > 0 for w in why.values())


def test_too_many_positions_are_refused_naming_the_arguments():
    with pytest.raises(ValueError, match=r"positions=.*--at.*max_targets"):
        sp.sink_map(sp.TriggerTask(p=2, T=3), "1/20", values="learned")
    with pytest.raises(ValueError, match="S_T"):
        sp.sink_map(TASK, "1/20", values="learned", positions=POSITIONS[:1], family=[(0, 0)])


def test_cli_sinkmap_values_learned(tmp_path):
    out = tmp_path / "learned.json"
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        rc = main(["sinkmap", "--p", "1", "--T", "2", "--eps", "1/20", "--values", "learned",
                   "--at", "0,0:2", "--out", str(out)])
    assert rc == 0, text.getvalue()
    assert "values=learned" in text.getvalue()
    verdict = verify_file(out)
    assert verdict.ok and json.loads(out.read_text())["kind"] == "bnb-learned-values"
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(["sinkmap", "--p", "2", "--T", "3", "--eps", "1/20", "--values", "learned"])
    assert rc == 2 and "--at" in err.getvalue() and err.getvalue().count("\n") == 1
