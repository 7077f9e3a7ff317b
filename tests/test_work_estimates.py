"""Work estimates count what costs and refuse before any work, naming the limit and the flag."""

from __future__ import annotations

import numpy as np
import pytest

import sinkproof as sp
from sinkproof import cli
from sinkproof.errors import EXIT_REFUSED, SINK_MAP_MAX_WORK
from sinkproof.sinkmap import sink_map_work
from sinkproof.sinkmap import solve as solve_module
from sinkproof.sinkmap.core import known_values
from sinkproof.sinkmap.symmetry import token_symmetries


def _work(task, subfamily="auto"):
    V = task.token_table @ known_values(task, "fixed").U.T
    return sink_map_work(task, len(token_symmetries(task, V)), subfamily,
                         trigger_matters=bool(np.any(V[task.trig_code] != 0)))


@pytest.mark.parametrize("p, T, subfamily", [(1, 4, "auto"), (2, 4, "auto"), (2, 4, "full"),
                                             (2, 4, "hamming"), (1, 5, "splice")])
def test_the_sink_map_estimate_bounds_the_cone_constraints_really_solved(
        monkeypatch, p, T, subfamily):
    """Cross-check against an independent count: every distinct (program, target) solve,
    each with its program's constraints, recorded while the map runs."""
    real = solve_module.BlockSolver.solve
    seen: dict[tuple, int] = {}

    def counting(self, target, *args, **kwargs):
        seen.setdefault((id(self), tuple(target)), self.block.m)
        return real(self, target, *args, **kwargs)

    monkeypatch.setattr(solve_module.BlockSolver, "solve", counting)
    task = sp.TriggerTask(p=p, T=T)
    sp.sink_map(task, "1/10", subfamily=subfamily, progress=False)
    solved = sum(seen.values())
    assert 0 < solved <= _work(task, subfamily)


def test_the_estimate_grows_with_the_instance():
    works = [_work(sp.TriggerTask(p=2, T=T)) for T in range(2, 9)]
    assert works == sorted(works) and works[-1] > 100 * works[0]


def test_a_sink_map_beyond_the_limit_is_refused_before_any_work(capsys, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("the sink map started")

    monkeypatch.setattr(sp.sinkmap, "sink_map", never)
    assert _work(sp.TriggerTask(p=3, T=7)) > SINK_MAP_MAX_WORK
    assert cli.main(["sinkmap", "--p", "3", "--T", "7", "--eps", "0.1"]) == EXIT_REFUSED
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--max-work" in err and f"{SINK_MAP_MAX_WORK:,}" in err


def test_paper_estimates_its_token_steps_and_refuses_beyond_the_limit(capsys):
    from sinkproof.commands.paper import MAX_TOKEN_STEPS, paper_token_steps
    from sinkproof.experiment.paper import CONFIGS, PAPER_KINDS, QUICK, Protocol

    one = paper_token_steps(Protocol(), CONFIGS, list(PAPER_KINDS), [0])
    assert one <= MAX_TOKEN_STEPS < 5 * one  # the full reproduction runs, five seeds do not
    assert paper_token_steps(QUICK, CONFIGS, list(PAPER_KINDS), [0]) < one / 1000
    assert cli.main(["paper", "--seeds", "0", "1", "2", "3", "4"]) == EXIT_REFUSED
    err = capsys.readouterr().err
    assert "--max-work" in err and "token-steps" in err


@pytest.mark.slow
def test_the_variants_table_estimate_bounds_the_positions_it_evaluates(monkeypatch):
    """Cross-check: every family evaluation the table makes (the hull certificate, each
    construction level, each witness file), counted while it runs, at the family's size."""
    import sinkproof.variants.table as table
    from sinkproof.commands.variants import table_work

    maps = ("softmax", "relu")
    task = table.default_task(True)
    positions = task.n_sequences * (task.T + 1)
    seen: list[int] = []

    def counting(name, real, size):
        def wrapped(*args, **kwargs):
            got = real(*args, **kwargs)
            seen.append(size(got))
            return got
        monkeypatch.setattr(table, name, wrapped)

    counting("verify_construction", table.verify_construction, lambda c: c.positions)
    counting("witness_document", table.witness_document, lambda d: positions)
    counting("family_certificate", table.family_certificate, lambda c: positions)
    table.build_table(quick=True, maps=maps)
    assert all(0 < n <= positions for n in seen)
    assert 0 < sum(seen) <= table_work(True, maps)


@pytest.mark.parametrize("T", [60, 1000, 10**5, 10**8])
def test_a_sink_map_of_an_absurd_length_is_refused_at_once_as_saturated(T):
    """The estimate decides from ``k ** T`` alone when it passes every limit (no loop over
    the lengths, no huge power, no float overflow), and the refusal says the count is
    saturated instead of printing the saturation value as if it were the count."""
    import time

    from sinkproof.sinkmap.work import estimate
    from sinkproof.work import BEYOND

    task = sp.TriggerTask(p=2, T=T)
    start = time.process_time()
    assert estimate(task) == BEYOND
    with pytest.raises(sp.errors.WorkLimitError, match=r"10\^30 or more work units"):
        sp.sink_map(task, eps=0.1)
    assert time.process_time() - start < 1.0


def test_an_estimate_just_below_saturation_is_still_exact():
    """Below the saturation point the count is the exact closed form, unchanged."""
    from sinkproof.sinkmap.work import estimate
    from sinkproof.work import BEYOND

    small = estimate(sp.TriggerTask(p=2, T=6))
    assert 0 < small < BEYOND and small == _work(sp.TriggerTask(p=2, T=6))
