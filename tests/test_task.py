"""The task of docs/theory.md section 1: features, targets, families, sampling."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import sinkproof as sp


def test_signed_content_and_feature_layout():
    task = sp.TriggerTask(p=2, T=4)
    assert task.k == 4 and task.D == 2 + 3 + 2
    np.testing.assert_array_equal(task.content, [[1, 0], [0, 1], [-1, 0], [0, -1]])
    phi = task.features([0, sp.TRIG, 3])
    np.testing.assert_array_equal(phi[0], [0, 0, 0, 0, 1, 1, 0])  # BOS, t=0: r_0 = 0
    np.testing.assert_array_equal(phi[1], [1, 0, 1, 0, 0, 1, 1])  # content e_1, r_1 = 1
    np.testing.assert_array_equal(phi[2], [0, 0, 0, 1, 0, 1, 1])  # trigger, r_2 = 1
    np.testing.assert_array_equal(phi[3], [0, -1, 1, 0, 0, 1, 0.5])  # -e_2, r_3 = 1/2


def test_position_schemes():
    assert sp.TriggerTask(p=1, T=3, positions="onehot").D == 1 + 3 + 4
    assert sp.TriggerTask(p=1, T=3, positions="none").D == 1 + 3 + 1
    task = sp.TriggerTask(p=1, T=5)
    assert task.position_features_exact(5) == [1, Fraction(1, 4)]
    onehot = sp.TriggerTask(p=1, T=3, positions="onehot")
    np.testing.assert_array_equal(onehot.position_table, np.eye(4))


def test_targets_follow_the_spec():
    task = sp.TriggerTask(p=2, T=5)
    y = task.targets([0, 1, sp.TRIG, 2])
    np.testing.assert_allclose(y[3], [0.5, 0.5])
    assert not y[[0, 1, 2, 4]].any()
    assert not task.targets([sp.TRIG, 0]).any()  # trigger at t=1: target 0


def test_multi_trigger_targets_count_triggers_as_zero_content():
    task = sp.TriggerTask(p=1, T=5, triggers="multi")
    y = task.targets([0, sp.TRIG, 0, sp.TRIG])
    np.testing.assert_allclose(y[:, 0], [0, 0, 1.0, 0, 2 / 3])


@pytest.mark.parametrize("triggers", ["single", "multi"])
@pytest.mark.parametrize("T", [1, 2, 4])
def test_enumeration_matches_the_count(triggers, T):
    task = sp.TriggerTask(p=1, T=T, triggers=triggers)
    seqs = list(task.sequences())
    assert len(seqs) == len(set(seqs)) == task.n_sequences
    assert task.n_positions == sum(len(s) + 1 for s in seqs)
    if triggers == "single":
        assert all(s.count(sp.TRIG) <= 1 for s in seqs)


def test_prefix_multiplicities_count_positions():
    task = sp.TriggerTask(p=1, T=4)
    total = sum(b.multiplicity * len(b.codes)
                for t in range(1, 5) for b in task.prefix_blocks(t, max_rows=3))
    assert total == task.n_positions - task.n_sequences  # all positions t >= 1


def test_sampling_is_seeded_and_valid():
    task = sp.TriggerTask(p=3, T=6, content="gaussian", k=5)
    a, b = task.sample(50, seed=3), task.sample(50, seed=3)
    assert a == b and a != task.sample(50, seed=4)
    for s in a:
        task.encode(s)


def test_gaussian_content_is_seeded():
    a = sp.TriggerTask(p=3, T=2, content="gaussian", k=4, seed=1)
    assert a == sp.TriggerTask(p=3, T=2, content="gaussian", k=4, seed=1)
    assert a != sp.TriggerTask(p=3, T=2, content="gaussian", k=4, seed=2)


def test_description_round_trip():
    for task in [sp.TriggerTask(p=2, T=3), sp.TriggerTask(p=2, T=3, content=[[1, 2]],
                 positions="onehot", triggers="multi"),
                 sp.TriggerTask(p=3, T=2, content="gaussian", k=3, seed=7)]:
        assert sp.TriggerTask.from_description(task.describe()) == task


def test_user_content_is_not_mutated():
    content = np.array([[1.0, 2.0]])
    task = sp.TriggerTask(p=2, T=2, content=content)
    content[0, 0] = 9.0
    assert task.content[0, 0] == 1.0
    with pytest.raises(ValueError):
        task.content[0, 0] = 3.0


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(p=0, T=3), ValueError, "p must be >= 1"),
        (dict(p=2, T=0), ValueError, "T must be >= 1"),
        (dict(p=2.5, T=3), TypeError, "p must be an integer"),
        (dict(p=2, T=3, content=np.zeros((0, 2))), ValueError, "content set is empty"),
        (dict(p=2, T=3, content=[[1.0, np.nan]]), ValueError, "non-finite"),
        (dict(p=2, T=3, content=[[1.0, 2.0, 3.0]]), ValueError, "length p=2"),
        (dict(p=2, T=3, content="uniform"), ValueError, "unknown content scheme"),
        (dict(p=2, T=3, positions="rope"), ValueError, "unknown positional scheme"),
        (dict(p=2, T=3, content=[["a", "b"]]), TypeError, "real numeric"),
    ],
)
def test_bad_task_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        sp.TriggerTask(**kwargs)


@pytest.mark.parametrize(
    "seq, exc, match",
    [
        ([], ValueError, "at least one token"),
        ([0, 0, 0, 0], ValueError, "exceeds T"),
        ([7], ValueError, "neither a content index"),
        ([sp.TRIG, sp.TRIG], ValueError, "more than one trigger"),
        ([0.5], TypeError, "integers"),
        ("ab", TypeError, "list of token indices"),
    ],
)
def test_bad_sequences(seq, exc, match):
    with pytest.raises(exc, match=match):
        sp.TriggerTask(p=2, T=3).encode(seq)
