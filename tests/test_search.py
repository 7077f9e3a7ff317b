"""sinkproof.search: found only with a verified witness; same seed, same answer; bad input."""

from __future__ import annotations

import numpy as np
import pytest

import sinkproof as sp
from sinkproof.checker import verify_file
from sinkproof.search import SearchResult, search


@pytest.fixture(scope="module")
def relu_found():
    task = sp.TriggerTask(p=1, T=3)
    return search(task, kind="relu", values="fixed", max_error=0.05, max_bos_mass=0.0,
                  restarts=2, seed=3, processes=1)


def test_relu_search_finds_a_sink_free_witness(relu_found, tmp_path):
    r = relu_found
    assert isinstance(r, SearchResult)
    assert r.found and r.verified and r.witness.verified
    assert r.error <= 0.05 and r.bos_mass == 0.0
    ev = sp.evaluate(r.model)
    assert ev.max_error <= 0.05 and float(ev.bos_nontrigger.max.max()) == 0.0
    path = r.save(tmp_path / "w.json")
    assert verify_file(path).ok
    assert "FOUND" in repr(r) and "verified" in r._repr_markdown_()


def test_trace_is_a_pareto_front(relu_found):
    errs = [p.error for p in relu_found.trace]
    boss = [p.bos_mass for p in relu_found.trace]
    assert errs == sorted(errs) and all(b1 > b2 for b1, b2 in zip(boss, boss[1:]))


@pytest.mark.slow  # 2.3 s of CPU (worker processes) in the default run; CI runs it
def test_same_seed_same_result_with_any_number_of_processes():
    task = sp.TriggerTask(p=1, T=2)
    kw = dict(kind="softmax", values="learned", max_error=0.05, max_bos_mass=0.9,
              restarts=3, seed=11, maxiter=15)
    one = search(task, processes=1, **kw)
    two = search(task, processes=2, **kw)
    assert one.found == two.found and one.restarts == two.restarts
    np.testing.assert_array_equal(one.model.A, two.model.A)
    np.testing.assert_array_equal(one.model.U, two.model.U)
    assert one.trace == two.trace
    other = search(task, processes=1, **{**kw, "seed": 12})
    assert not np.array_equal(one.model.A, other.model.A)


@pytest.mark.slow
def test_relu_restarts_are_identical_in_one_two_and_three_processes():
    """Restart outcomes (parameters, measures, trade-offs) do not depend on how many
    worker processes compute them, nor on running in the parent instead."""
    from contextlib import closing

    from sinkproof.search.engine import _outcomes
    from sinkproof.search.restart import SearchSettings

    settings = SearchSettings(sp.TriggerTask(p=1, T=3), "relu", 2, "learned", 0.05, 0.0,
                              "nontrigger", seed=5, maxiter=25)
    runs = []
    for processes in (1, 2, 3):
        with closing(_outcomes(settings, 4, processes)) as it:
            runs.append(list(it))
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            np.testing.assert_array_equal(a.A, b.A)
            np.testing.assert_array_equal(a.U, b.U)
            assert (a.error, a.bos_mass, a.penalty, a.points) == (
                b.error, b.bos_mass, b.penalty, b.points)


def test_never_found_below_theorem_1_fixed_value_bound():
    """Theorem 1: fixed values, error <= ε forces BOS mass >= 1 - ε/||c|| = 0.9 at X^c_n."""
    task = sp.TriggerTask(p=1, T=2)
    r = search(task, kind="softmax", values="fixed", max_error=0.1, max_bos_mass=0.85,
               restarts=2, seed=0, processes=1, maxiter=80)
    assert not r.found and not r.verified and r.witness is None
    assert "not found" in repr(r)
    with pytest.raises(sp.errors.CertificateError):
        r.save("never-written.json")
    for point in r.trace:  # every float64 trade-off respects the bound too
        if point.error <= 0.1:
            assert point.bos_mass >= 1 - point.error - 1e-12


def test_module_is_callable_and_lazy_export_is_the_function():
    import sinkproof.search as module

    assert callable(module) and sp.search.search is module.search
    with pytest.raises(ValueError, match="attention kind"):
        module(sp.TriggerTask(p=1, T=1), kind="linear")


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(kind="softmax", max_bos_mass=0.0), ValueError, "never 0"),
    (dict(values="tied"), ValueError, "values"),
    (dict(heads=0), ValueError, "heads"),
    (dict(restarts=1.5), TypeError, "restarts"),
    (dict(where="sometimes"), ValueError, "where"),
    (dict(where={((0, 0, 0), 1)}), ValueError, "length"),
    (dict(max_error=-1.0), ValueError, "max_error"),
    (dict(budget=0), ValueError, "budget"),
])
def test_bad_input_is_rejected_before_any_work(kwargs, error, match):
    with pytest.raises(error, match=match):
        search(sp.TriggerTask(p=1, T=2), **kwargs)


def test_ctrl_c_returns_the_best_restart_so_far(monkeypatch):
    from sinkproof.search import engine

    real = engine.run_restart

    def interrupted_at_2(settings, batch, index, stop=None):
        if index == 2:
            raise KeyboardInterrupt
        return real(settings, batch, index, stop)

    monkeypatch.setattr(engine, "run_restart", interrupted_at_2)
    task = sp.TriggerTask(p=1, T=2)
    r = search(task, kind="softmax", values="fixed", max_error=0.1, max_bos_mass=0.5,
               restarts=5, seed=0, processes=1, maxiter=30)
    assert r.interrupted and r.restarts == 2 and not r.found
    assert "interrupted" in repr(r)


def test_explicit_positions_are_searched_and_verified_there():
    task = sp.TriggerTask(p=1, T=2)
    where = {((0, 1), 2)}  # mixed sequence (BOS, c, -c): Theorem 3 is silent here
    r = search(task, kind="softmax", values="fixed", max_error=0.2, max_bos_mass=0.9,
               where=where, restarts=2, seed=0, processes=1, maxiter=60)
    assert r.settings["where_text"] == "1 named position(s)" and r.found
    doc = r.witness.document
    assert doc["claim"]["where"] == [{"sequence": [0, 1], "position": 2}]
    _, w = r.model.forward([0, 1])
    assert w[0, 2, 0] <= 0.9


def test_the_step_budget_decides_and_the_wall_clock_only_stops_as_open_for_time(monkeypatch):
    task = sp.TriggerTask(p=1, T=3)
    args = dict(kind="softmax", heads=1, values="fixed", max_error=1e-6, max_bos_mass=0.01,
                restarts=2, maxiter=3, processes=1, progress=False)
    spent = search(task, **args)  # unreachable goal: every restart runs its steps
    assert not spent.found and spent.stopped_by == "budget" and not spent.open_for_time
    import time

    real = time.time
    calls = iter([0.0, 5.0])  # the deadline is set at 0, the first restart starts at 5 s,
    monkeypatch.setattr(time, "time", lambda: next(calls, 100.0))  # then the clock is past it
    cut = search(task, budget=10.0, **args)
    monkeypatch.setattr(time, "time", real)
    assert cut.stopped_by == "wall_time" and cut.open_for_time and cut.restarts == 1
    assert "open for time" in repr(cut)


def test_the_stack_search_reports_what_stopped_it():
    from sinkproof.search import search_stack

    task = sp.PaperTask(n=4, L=4, content="grid", grid=2)
    args = dict(max_error=0.05, max_bos_mass=0.5, restarts=1, steps=100)
    spent = search_stack(task, "softmax", 1, 1, budget=600.0, **args)
    assert spent.stopped_by == "budget" and spent.restarts == 1
    cut = search_stack(task, "softmax", 1, 1, budget=1e-9, **args)
    assert cut.stopped_by == "wall_time" and cut.restarts == 0 and cut.params is None
    with pytest.raises(TypeError, match="one fixed length"):
        search_stack(sp.TriggerTask(p=1, T=3), "softmax", 1, 1, **args)
