"""One search engine: ``search_stack`` is ``search(optimiser="adam")``; the optimiser, the
model's shape, the BOS measure and the objective are options, refused by one ValueError
where the optimiser does not take them."""

from __future__ import annotations

import numpy as np
import pytest

import sinkproof as sp
from sinkproof.search import SearchResult, StackSearchResult, search, search_stack


def _same(a: SearchResult, b: SearchResult) -> None:
    assert a.params.keys() == b.params.keys()
    for k in a.params:
        np.testing.assert_array_equal(a.params[k], b.params[k])
    assert (a.error, a.bos_mass, a.trace, a.ends, a.restarts, a.candidates, a.found,
            a.stopped_by, a.source, a.n_sequences) == (
        b.error, b.bos_mass, b.trace, b.ends, b.restarts, b.candidates, b.found,
        b.stopped_by, b.source, b.n_sequences)


def test_the_stack_alias_is_the_engine_with_adam():
    task = sp.PaperTask(n=4, L=4, content="grid", grid=2)
    alias = search_stack(task, "softmax", 2, 1, max_error=0.05, max_bos_mass=0.5,
                         restarts=2, steps=100, seed=1, budget=600.0)
    one = search(task, "softmax", heads=1, values="learned", max_error=0.05,
                 max_bos_mass=0.5, restarts=2, seed=1, budget=600.0, processes=1,
                 maxiter=100, optimiser="adam", layers=2, init_scale=0.3)
    assert StackSearchResult is SearchResult and isinstance(alias, SearchResult)
    _same(alias, one)
    assert alias.settings["residual"] and alias.model.residual  # two layers: residual
    assert alias.frontier == tuple((e, b) for e, b in alias.ends) and alias.bos == alias.bos_mass
    assert alias.source == "exhaustive" and alias.n_sequences == task.n_sequences
    assert alias.model.n_layers == 2 and alias.params["wq"].shape == (2, 1, task.n, task.n)
    # and by capability, a fixed-length task without positions defaults to Adam
    auto = search(task, "softmax", max_error=0.05, max_bos_mass=0.5, restarts=2, seed=1,
                  budget=600.0, processes=1, maxiter=100, layers=2, init_scale=0.3)
    _same(alias, auto)


def test_a_one_layer_search_is_the_same_named_or_by_default():
    task = sp.TriggerTask(p=1, T=3)
    args = dict(kind="relu", values="fixed", max_error=0.05, max_bos_mass=0.0, restarts=2,
                seed=3, processes=1)
    default = search(task, **args)
    named = search(task, optimiser="lbfgsb", layers=1, residual=False, measure="weight",
                   objective="penalty", **args)
    _same(default, named)
    assert default.found and default.settings["optimiser"] == "lbfgsb"
    np.testing.assert_array_equal(default.model.A, default.params["A"])
    assert len(default.ends) == default.restarts


@pytest.mark.parametrize("task, kwargs, match", [
    (sp.TriggerTask(p=1, T=2), dict(layers=2), "'lbfgsb' does not take layers=2"),
    (sp.TriggerTask(p=1, T=2), dict(residual=True), "does not take residual=True"),
    (sp.TriggerTask(p=1, T=2), dict(init={"W_Q": np.zeros((1, 1, 2, 2))}), "init"),
    (sp.TriggerTask(p=1, T=2), dict(kind="relu", measure="share"), "measure='share'"),
    (sp.PaperTask(n=4, L=4, content="grid", grid=2), dict(where="trigger"),
     "'adam' does not take where='trigger'"),
    (sp.PaperTask(n=4, L=4, content="grid", grid=2), dict(objective="sink"),
     "'adam' does not take objective='sink'"),
])
def test_an_option_the_optimiser_does_not_take_is_one_clear_error(task, kwargs, match):
    with pytest.raises(ValueError, match=match) as info:
        search(task, **kwargs)
    assert "\n" not in str(info.value) and "optimiser=" in str(info.value)

