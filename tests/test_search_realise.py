"""Bridge to search: realised accurate models never beat the certified bound."""

from __future__ import annotations

import numpy as np
import pytest

import sinkproof as sp
from sinkproof.constructions import softmax_score_matrix
from sinkproof.search.realise import logit_change, realise
from sinkproof.sinkmap import sink_map

EPS = 0.1
TASK = sp.TriggerTask(p=2, T=3)


@pytest.fixture(scope="module")
def realised():
    smap = sink_map(TASK, EPS, positions=[([0, 0], 2), ([0, 2], 2), ([0, 1, 2], 3),
                                          ([0, sp.TRIG, 1], 3)])
    return smap, realise(smap)


def test_realised_models_are_accurate_and_above_the_bound(realised):
    smap, reals = realised
    assert len(reals) == 4
    for r in reals:
        assert r.verified is True                    # high-precision witness check passed
        assert r.error <= EPS
        assert smap.entries[r.prefix].bound <= r.bos_mass
        assert r.gap >= 0 and smap.entries[r.prefix].realised == r.bos_mass
        ev = sp.evaluate(r.model)
        assert ev.max_error <= EPS


def test_after_the_trigger_a_nearly_sink_free_model_exists(realised):
    """No bound after a trigger, and the bridge finds why: the trigger key absorbs the mass."""
    smap, reals = realised
    r = next(r for r in reals if r.prefix == (0, sp.TRIG, 1))
    assert smap.entries[r.prefix].status == "no bound"
    assert r.verified and r.bos_mass < 0.1


def test_logit_change_is_zero_when_logits_already_match():
    A = softmax_score_matrix(TASK, 3.0)
    bos0 = np.concatenate([TASK.token_table[TASK.bos_code], TASK.position_features(0)])
    goal = []
    for b, j in [(0, 1), (1, 1), (0, 2)]:
        phq = np.concatenate([TASK.token_table[0], TASK.position_features(2)])
        phk = np.concatenate([TASK.token_table[b], TASK.position_features(j)])
        goal.append((b, j, float(phq @ A @ (phk - bos0))))
    dA = logit_change(TASK, A, 0, 2, goal)
    assert np.abs(dA).max() < 1e-8


def test_search_witnesses_respect_the_bound():
    """The search layer's verified witnesses sit above the certificate; below it none exists."""
    task = sp.TriggerTask(p=2, T=2)
    smap = sink_map(task, EPS, positions=[([0, 2], 2)])
    bound = smap.bound([0, 2], 2)
    where = [((0, 2), 2)]
    found = sp.search(task, values="fixed", max_error=EPS, max_bos_mass=0.85, where=where,
                      restarts=2, seed=0, processes=1, maxiter=200)
    assert found.found and found.verified  # seeded: a verified witness at BOS mass <= 0.85
    assert found.bos_mass >= bound
    below = sp.search(task, values="fixed", max_error=EPS, max_bos_mass=bound - 0.02,
                      where=where, restarts=2, seed=0, processes=1, maxiter=200)
    assert not below.found


@pytest.mark.slow
def test_refined_witness_nearly_meets_the_mixed_position_bound():
    """With onehot positions and search refinement the gap at (BOS, e1, -e1) closes to < 0.05."""
    task = sp.TriggerTask(p=2, T=2)
    smap = sink_map(task, EPS, positions=[([0, 2], 2)])
    (r,) = realise(smap, [(0, 2)], positions="onehot", refine=True)
    assert r.verified and smap.bound([0, 2], 2) <= r.bos_mass < smap.bound([0, 2], 2) + 0.05


def test_cli_realise_prints_bound_realised_and_gap(capsys):
    from sinkproof.cli import main

    assert main(["sinkmap", "--p", "2", "--T", "2", "--eps", "0.1", "--rows", "2",
                 "--realise"]) == 0
    out = capsys.readouterr().out
    assert "Realisation(" in out and "gap" in out and "verified" in out
