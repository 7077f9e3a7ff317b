"""The Python API refuses runaway work as the CLI does: every entry point that can run long
takes ``max_work=`` (default: the CLI's limit for the same work) and raises one
:class:`~sinkproof.work.WorkLimitExceeded` naming the quantity and ``max_work=N`` before
any work; the same validation of its arguments as the CLI's."""

from __future__ import annotations

import re

import numpy as np
import pytest

import sinkproof as sp
from sinkproof import cli, work
from sinkproof.bnb import prove, prove_paper
from sinkproof.constructions import relu_solution
from sinkproof.convex import family_certificate
from sinkproof.errors import EXIT_BAD_INPUT, WorkLimitError
from sinkproof.tasks import PaperTask

RUNAWAY = sp.TriggerTask(p=2, T=30)
"""The issue's typo: T=30 for T=3."""
FORMAT = re.compile(r"not started: (about|more than) [\d,]+ .+, beyond the limit of [\d,]+ "
                    r"\(raise it with max_work=N\)")
"""``more than``: a count capped just beyond the limit (counted no further than needed)."""

def _paper_stack(task):
    """A one-head softmax stack with seeded weights on ``task`` (the general stack path)."""
    rng = np.random.default_rng(0)
    W = {k: rng.normal(size=(1, 1, task.n, task.n)) for k in ("W_Q", "W_K", "W_V")}
    return sp.paper_model(task, "softmax", W_O=rng.normal(size=(1, task.n, task.n)), **W)


ENTRY_POINTS = {
    "evaluate": lambda **kw: sp.evaluate(relu_solution(RUNAWAY), **kw),
    "sink_map": lambda **kw: sp.sink_map(RUNAWAY, "1/10", **kw),
    "sink_map learned": lambda **kw: sp.sink_map(RUNAWAY, "1/10", "learned", **kw),
    "search": lambda **kw: sp.search(RUNAWAY, max_error=0.1, **kw),
    "family_certificate": lambda **kw: family_certificate(sp.TriggerTask(p=20, T=30),
                                                          "1/10", **kw),
    "bnb.prove": lambda **kw: prove(RUNAWAY, eps="1/10", at="nontrigger", **kw),
    "report": lambda **kw: sp.report(RUNAWAY, **kw),
    "evaluate a stack": lambda **kw: sp.evaluate(_paper_stack(PaperTask(
        n=4, L=40, content=[[-1.0], [1.0]])), **kw),
    "evaluate a stack, sampled": lambda **kw: sp.evaluate(_paper_stack(PaperTask(
        n=4, L=16)), samples=10**7, **kw),
    "bnb.prove_paper": lambda **kw: prove_paper(
        PaperTask(n=4, L=40, content=[[-1.0], [1.0]]), "1/20", min_bos_mass="1/2", **kw),
}


@pytest.fixture
def nothing_runs(monkeypatch):
    """Fail if a refused call reaches the work: no solve, no forward pass, no restart."""
    def never(*args, **kwargs):
        raise AssertionError("the work started")

    import sinkproof.convex.family as family
    import sinkproof.measures as measures
    import sinkproof.search.engine as engine
    import sinkproof.sinkmap.core as core

    monkeypatch.setattr(measures, "family_prefix_blocks", never)
    monkeypatch.setattr(core, "_target_prefixes", never)
    monkeypatch.setattr(core, "learned_sink_map", never)
    monkeypatch.setattr(engine, "_outcomes", never)
    monkeypatch.setattr(family, "value_table", never)
    monkeypatch.setattr(family, "token_set_certificate", never)


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_runaway_work_is_refused_before_it_starts(name, nothing_runs):
    with pytest.raises(work.WorkLimitExceeded) as info:
        ENTRY_POINTS[name]()
    message = str(info.value)
    assert FORMAT.fullmatch(message) and "\n" not in message, message
    assert work.WorkLimitExceeded is WorkLimitError  # the CLI's exit-4 error


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_max_work_is_checked_like_the_cli_option(name):
    for bad, error in ((0, ValueError), (-5, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="max_work"):
            ENTRY_POINTS[name](max_work=bad)


def test_a_small_instance_runs_under_the_default_and_is_refused_under_a_tiny_limit():
    small = relu_solution(sp.TriggerTask(p=1, T=2))
    assert sp.evaluate(small).max_error < 1e-9
    with pytest.raises(work.WorkLimitExceeded, match=r"limit of 1 \(raise it with max_work"):
        sp.evaluate(small, max_work=1)
    assert sp.evaluate(small, max_work=10**6).max_error < 1e-9
    with pytest.raises(work.WorkLimitExceeded, match="work units of the sink map"):
        sp.sink_map(sp.TriggerTask(p=1, T=2), "1/10", max_work=1)


def test_family_certificate_validates_eps_as_the_cli_does(capsys):
    task = sp.TriggerTask(p=2, T=3)
    for eps in ("1.5", "1", "0", "-1/10"):
        with pytest.raises(ValueError, match=r"eps must be in \(0, 1\)"):
            family_certificate(task, eps)
        assert cli.main(["certify", "--p", "2", "--T", "3", "--eps", eps]) == EXIT_BAD_INPUT
    assert "eps" in capsys.readouterr().err


def test_the_saturated_counts_are_exact_below_the_cap_and_fast_above():
    from sinkproof.certformat import paper_prefixes as n_prefixes

    for m in range(1, 4):
        for L in range(3, 10):
            assert work.paper_prefixes(m, L) == n_prefixes(m, L)
    assert work.paper_prefixes(2, 10**30) == work.BEYOND
    assert work.paper_prefixes(1, 10**30) == work.BEYOND
    assert sp.TriggerTask(p=2, T=10**30).n_positions == work.BEYOND
    for T in range(1, 7):
        for content in ("signed", [[1.0]]):
            task = sp.TriggerTask(p=1, T=T, content=content)
            assert task.n_sequences == sum(1 for _ in task.sequences())
            assert task.n_positions == sum(len(s) + 1 for s in task.sequences())
    assert work.power(3, 10**30) == work.BEYOND and work.power(3, 4) == 81
    assert work.product(10**20, 10**20) == work.BEYOND and work.product(0, 10**40) == 0


def test_the_experiment_api_refuses_as_the_cli_does(monkeypatch):
    """``sp.experiment(config, max_work=)``: the CLI's token-step count and limit, refused
    before any training; a raised limit lets the same config start."""
    from sinkproof.experiment import ExperimentConfig, runner
    from sinkproof.experiment.config import token_steps
    from sinkproof.work import EXPERIMENT_MAX_WORK

    big = ExperimentConfig.smoke().replace(steps=10**9)
    assert token_steps(big) > EXPERIMENT_MAX_WORK
    with pytest.raises(sp.errors.WorkLimitError, match="token-steps.*max_work=N"):
        sp.experiment(big)

    class Started(Exception):
        pass

    def started(*args, **kwargs):
        raise Started

    monkeypatch.setattr(runner, "_one_run", started)
    with pytest.raises(Started):
        sp.experiment(big, max_work=token_steps(big))


def test_the_variants_api_refuses_as_the_cli_does(monkeypatch):
    """``sp.variants.build_table(task, max_work=)``: the CLI's count (``table_work``), refused
    before any cell is built."""
    from sinkproof.variants import table

    task = sp.TriggerTask(p=2, T=3)
    need = table.table_work(task, ("softmax",))
    with pytest.raises(sp.errors.WorkLimitError, match="position evaluations.*max_work=N"):
        table.build_table(task, maps=("softmax",), max_work=need - 1)


def test_every_entry_point_shows_its_limit_in_its_signature():
    import inspect

    for function in (sp.evaluate, sp.sink_map, sp.check, sp.experiment, sp.variants,
                     sp.search, sp.report, prove, prove_paper, family_certificate):
        assert "max_work" in inspect.signature(function).parameters, function
    assert "max_jobs" in inspect.signature(sp.sweep).parameters


def test_the_report_takes_a_raised_limit_to_every_section(monkeypatch):
    task = sp.TriggerTask(p=1, T=3)
    with pytest.raises(work.WorkLimitExceeded, match="limit of 5"):
        sp.report(task, max_work=5)
    seen = []
    import sinkproof.report.constructions as constructions

    real = constructions.evaluate
    monkeypatch.setattr(constructions, "evaluate",
                        lambda model, **kw: seen.append(kw["max_work"]) or real(model, **kw))
    assert len(sp.report(task, max_work=task.n_positions).tables) == 4
    assert seen and set(seen) == {task.n_positions}


def test_a_stack_within_the_limit_is_evaluated_and_refused_under_a_tiny_one():
    model = _paper_stack(PaperTask(n=4, L=5, content=[[-1.0], [1.0]]))
    assert sp.evaluate(model).n_sequences == model.task.n_sequences
    with pytest.raises(work.WorkLimitExceeded, match="prefixes to run through the stack"):
        sp.evaluate(model, max_work=10)
