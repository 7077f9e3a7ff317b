"""Cross-checks of the sink map's fast paths: vectorised orbits against their definition, the
direct Clarabel solve against the CVXPY program, bounds against stored reference values, and
the retry of inaccurate or failed solves."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.cli import main
from sinkproof.sinkmap import sink_map
from sinkproof.sinkmap import solve as solve_mod
from sinkproof.sinkmap.blocks import build_block
from sinkproof.sinkmap.core import _Planner, known_values
from sinkproof.sinkmap.solve import BlockSolver, CvxpyDual
from sinkproof.sinkmap.symmetry import canonical_all, token_symmetries

REFERENCE = Path(__file__).parent / "data" / "sinkmap_reference.json"


def _symmetries(task: sp.TriggerTask):
    V = task.token_table @ known_values(task, "fixed").U.T
    return V, token_symmetries(task, V)


def _definition(target: tuple[int, ...], syms) -> tuple[tuple, int]:
    """The representative by its definition: the least (query, sorted keys) over the
    symmetries, the first symmetry on ties."""
    cands = [(sym.code(target[-1]), tuple(sorted(sym.code(c) for c in target[:-1])))
             for sym in syms]
    s = cands.index(min(cands))
    return (*cands[s][1], cands[s][0]), s


@pytest.mark.parametrize("p", [2, 3])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_vectorised_orbits_match_their_definition(p, data):
    task = sp.TriggerTask(p=p, T=6)
    _, syms = _symmetries(task)
    token = st.integers(0, task.k)  # content codes and the trigger code k
    targets = data.draw(st.lists(st.lists(token, min_size=0, max_size=5).flatmap(
        lambda keys: st.integers(0, task.k - 1).map(lambda q: (*keys, q))),
        min_size=1, max_size=30, unique=True))
    orbits = canonical_all(targets, syms)
    for i, tgt in enumerate(targets):
        rep, s = _definition(tgt, syms)
        assert orbits.reps[orbits.rep_id[i]] == rep and orbits.sym[i] == s
        assert orbits.is_rep[i] == (rep == tgt)
        back = orbits.to_target[s]
        assert sorted(orbits.positions[i]) == list(range(1, len(tgt)))
        for j, pos in enumerate(orbits.positions[i]):  # rep key j sits at target position pos
            assert back.code(rep[j]) == tgt[pos - 1]
        assert back.code(rep[-1]) == tgt[-1]
    assert len(set(orbits.reps)) == len(orbits.reps)


@pytest.mark.parametrize("p,T,eps", [(2, 5, 0.1), (3, 4, 0.2)])
def test_direct_clarabel_matches_the_cvxpy_program(p, T, eps):
    """The standard-form solve and CVXPY's compiled program reach the same dual value."""
    task = sp.TriggerTask(p=p, T=T)
    V, _ = _symmetries(task)
    planner = _Planner(task, V, eps, "auto", 2, None, "CLARABEL")
    rng = np.random.default_rng(0)
    checked = 0
    for t in range(2, T + 1):
        for _ in range(3):
            keys = tuple(int(c) for c in rng.integers(0, task.k, size=t - 1))
            target = (*keys, int(rng.integers(0, task.k)))
            rows = planner.splices(target, planner.trigger_matters)
            block = build_block(task, V, target[-1], t, rows, eps)
            a0 = block.indicator(target)
            direct = BlockSolver(block).solve(a0, 1e-7)
            via = CvxpyDual(block, BlockSolver(block).margin_cols).solve(a0, 1e-7, "CLARABEL")
            assert via[0] == "optimal" and direct.status == "bounded"
            assert abs(direct.c0 - via[1]) <= 1e-6 * max(1.0, abs(via[1]))
            for u in (direct.u, via[4]):  # the primal optimum need not be unique: check it
                assert abs(a0 @ u - via[1]) <= 1e-5  # attains the value (strong duality)
                res = (block.r0 + block.R @ u).reshape(block.m, -1)
                assert np.all(np.linalg.norm(res, axis=1) <= block.eps * (1 + block.A @ u) + 1e-6)
            checked += 1
    assert checked == 3 * (T - 1)


def test_bounds_equal_the_stored_reference_values():
    """Reference bounds made before the fast paths (tests/data/sinkmap_reference.json)."""
    ref = json.loads(REFERENCE.read_text())
    for case in ref["cases"]:
        m = sink_map(sp.TriggerTask(p=case["p"], T=case["T"]), case["eps"])
        assert m.verify().ok
        assert len(m.entries) == len(case["entries"])
        for prefix, status, bound in case["entries"]:
            e = m.entries[tuple(prefix)]
            assert e.status == status, prefix
            assert abs(e.bound - bound) <= 1e-6, (prefix, e.bound, bound)


def _fake(status: str, calls: list[str]):
    def solve(self, rhs, settings=None):
        calls.append(status)
        return status, np.nan, None, None, None
    return solve


def test_an_inaccurate_or_failed_answer_is_retried_with_the_fallback(monkeypatch):
    task = sp.TriggerTask(p=2, T=3)
    calls: list[str] = []
    monkeypatch.setattr(solve_mod.ConicDual, "solve", _fake("NumericalError", calls))
    m = sink_map(task, 0.1)
    assert calls, "the direct solve was not used"
    assert m.verify().ok and m.count("uncertified") == 0  # SCS settled every position
    solved = [e for e in m.entries.values() if e.status == "certified" and e.block is not None]
    assert solved


def test_positions_no_solver_settles_are_uncertified_and_the_command_exits_3(
        monkeypatch, capsys):
    calls: list[str] = []
    monkeypatch.setattr(solve_mod.ConicDual, "solve", _fake("InsufficientProgress", calls))
    monkeypatch.setattr(solve_mod, "FALLBACK_SOLVER", {"CLARABEL": "CLARABEL"})
    m = sink_map(sp.TriggerTask(p=2, T=2), 0.1)
    open_ = [e for e in m.entries.values() if e.status == "uncertified"]
    assert open_ and all("InsufficientProgress" in e.reason for e in open_)
    assert m.count("failed") == 0 and m.verify().ok  # the certified part still checks
    code = main(["sinkmap", "--p", "2", "--T", "2", "--eps", "0.1"])
    out = capsys.readouterr()
    assert code == 3 and "Traceback" not in out.err
