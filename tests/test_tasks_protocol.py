"""Conformance suite of the task protocol, run on every task (trigger variants, paper tasks).

Families, multiplicities and targets are recomputed here from the definitions, by brute
force and independently of the tasks' own enumeration and target code.
"""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.tasks import (
    TASKS,
    TOKEN_KINDS,
    ContinuousContentError,
    PaperTask,
    Task,
    TriggerTask,
    task_from_description,
)

FINITE = {
    "trigger-signed": TriggerTask(p=2, T=3),
    "trigger-multi-onehot": TriggerTask(p=1, T=3, triggers="multi", positions="onehot"),
    "trigger-gaussian-none": TriggerTask(p=2, T=3, content="gaussian", k=3, seed=4,
                                         positions="none"),
    "trigger-custom": TriggerTask(p=2, T=2, content=[[0.5, -1.0], [0.25, 3.0]]),
    "paper-list": PaperTask(n=5, L=5, content=[[0.5, -1.0], [1.0, 0.25]]),
    "paper-grid-residual": PaperTask(n=4, L=5, content="grid", grid=3, residual=True),
}
CONTINUOUS = {"paper-uniform": PaperTask(n=6, L=6),
              "paper-uniform-residual": PaperTask(n=16, L=16, residual=True)}
ALL = {**FINITE, **CONTINUOUS}


# ------------------------------------------------------- the definitions, independently

def family(task):
    """Every sequence of the family as a tuple of codes (tokens after BOS), brute force."""
    if task.setting == "trigger":
        alphabet = range(task.k + 1)  # content codes and the trigger code k
        for n in range(1, task.T + 1):
            for seq in itertools.product(alphabet, repeat=n):
                if task.triggers == "multi" or seq.count(task.k) <= 1:
                    yield seq
        return
    m = task.content.shape[0]
    for seq in itertools.product(range(2 * m), repeat=task.L - 1):
        trig = [i + 1 for i, c in enumerate(seq) if c >= m]
        if len(trig) == 1 and trig[0] >= 2:
            yield seq


def token_vector(task, code):
    """A token's feature row (token columns only), from the task's definition."""
    if task.setting == "trigger":
        e = np.zeros(task.p + 3)
        if code < task.k:
            e[: task.p], e[task.p] = task.content[code], 1
        else:
            e[task.p + (1 if code == task.k else 2)] = 1
        return e
    m, x = task.content.shape[0], np.zeros(task.n)
    if code == 2 * m:
        x[0] = 1
        return x
    x[2 : task.n - 1] = task.content[code % m]
    x[1 if code >= m else task.n - 1] = 1
    return x


def target(task, codes):
    """``y_t`` at the last position of a prefix of codes, from the definitions (floats)."""
    t = len(codes)
    if task.setting == "trigger":
        y = np.zeros(task.p)
        if t >= 2 and codes[-1] == task.k:
            y = sum((task.content[c] for c in codes[:-1] if c < task.k), np.zeros(task.p))
            y = y / (t - 1)
        return y
    m = task.content.shape[0]
    rows = [token_vector(task, c) for c in codes]
    last = rows[-1] if rows else token_vector(task, 2 * m)
    y = last.copy() if task.residual else np.zeros(task.n)
    if t and codes[-1] >= m:
        y = y + np.mean(rows, axis=0)
    return y


# ------------------------------------------------------------------- conformance tests

@pytest.mark.parametrize("name", sorted(ALL))
def test_is_a_registered_task_and_round_trips(name):
    task = ALL[name]
    assert isinstance(task, Task) and TASKS[task.setting] is type(task)
    d = task.describe()
    again = task_from_description(d)
    assert again == task and hash(again) == hash(task) and again.describe() == d
    assert type(task).from_description(d) == task
    assert task.out_dim >= 1 and task.D >= 1 and task.max_depth >= 1
    cols = np.arange(task.D)[task.token_columns]
    assert cols.size >= 1 and cols[0] == 0


@pytest.mark.parametrize("name", sorted(FINITE))
def test_token_kinds_tables_and_exact_features(name):
    task = FINITE[name]
    kinds = [task.token_kind(c) for c in range(task.n_tokens)]
    assert set(kinds) <= set(TOKEN_KINDS) and kinds.count("bos") == 1
    assert kinds[task.bos_code] == "bos"
    np.testing.assert_array_equal(task.is_trigger(np.arange(task.n_tokens)),
                                  [k == "trigger" for k in kinds])
    for c in range(task.n_tokens):
        exact = task.token_features_exact(c)
        assert all(isinstance(v, Fraction) for v in exact)
        np.testing.assert_array_equal([float(v) for v in exact], token_vector(task, c))
    with pytest.raises(ValueError, match="token code"):
        task.token_kind(task.n_tokens)


@pytest.mark.parametrize("name", sorted(FINITE))
def test_prefix_blocks_are_the_family_with_its_multiplicities(name):
    task = FINITE[name]
    seqs = list(family(task))
    assert task.n_sequences == len(seqs)
    want = Counter(s[:t] for s in seqs for t in range(1, len(s) + 1))
    got: Counter = Counter()
    for t in range(1, task.max_depth + 1):
        for block in task.prefix_blocks(t, max_rows=5):
            assert block.codes.shape[1] == t
            for row in block.codes:
                key = tuple(int(c) for c in row)
                assert key not in got, "a prefix enumerated twice"
                got[key] = block.multiplicity
    assert got == want


@pytest.mark.parametrize("name", sorted(FINITE))
def test_targets_features_and_exact_targets_follow_the_definition(name):
    task = FINITE[name]
    seqs = list(family(task))[:40]
    prefixes = sorted({s[:t] for s in seqs for t in range(0, len(s) + 1)}, key=len)
    for t in sorted({len(p) for p in prefixes}):
        rows = [p for p in prefixes if len(p) == t]
        codes = np.array(rows, dtype=np.int64).reshape(len(rows), t)
        y = task.prefix_targets(codes)
        x = task.prefix_features(codes)
        assert y.shape == (codes.shape[0], task.out_dim) and x.shape[1:] == (t + 1, task.D)
        for row, yi, xi in zip(codes, y, x):
            row = tuple(int(c) for c in row)
            np.testing.assert_allclose(yi, target(task, row), rtol=0, atol=1e-12)
            exact = task.exact_prefix_target(row)
            assert all(isinstance(v, Fraction) for v in exact)
            np.testing.assert_allclose([float(v) for v in exact], yi, rtol=0, atol=1e-15)
            rows = [token_vector(task, task.bos_code)] + [token_vector(task, c) for c in row]
            np.testing.assert_array_equal(xi[:, task.token_columns], rows)


@pytest.mark.parametrize("name", sorted(FINITE))
def test_user_facing_sequences_agree_with_codes(name):
    task = FINITE[name]
    for seq in list(family(task))[:25]:
        user = task.decode(seq)
        feats = task.features(user)
        assert feats.shape == (len(seq) + 1, task.D)
        np.testing.assert_array_equal(feats, task.prefix_features(np.array([seq]))[0])
        ys = task.targets(user)
        for t in range(len(seq) + 1):
            np.testing.assert_allclose(ys[t], target(task, seq[:t]), rtol=0, atol=1e-12)
        mask = task.trigger_mask(user)
        np.testing.assert_array_equal(mask[1:], task.is_trigger(np.array(seq)))
        assert not mask[0]


@pytest.mark.parametrize("name", sorted(ALL))
def test_sampling_is_seeded_and_stays_in_the_family(name):
    task = ALL[name]
    a, b, c = task.sample(12, seed=3), task.sample(12, seed=3), task.sample(12, seed=4)
    assert len(a) == 12
    assert all(np.array_equal(task.features(x), task.features(y)) for x, y in zip(a, b))
    assert not all(np.array_equal(task.features(x), task.features(y)) for x, y in zip(a, c))
    for seq in a:
        mask = task.trigger_mask(seq)
        if task.setting == "paper":
            assert mask.sum() == 1 and np.argmax(mask) >= 2
        ys = task.targets(seq)
        assert ys.shape == (len(mask), task.out_dim) and np.all(np.isfinite(ys))


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_content_refuses_finite_members_clearly(name):
    task = CONTINUOUS[name]
    assert not task.finite
    for member in ("n_tokens", "bos_code", "n_sequences"):
        with pytest.raises(ContinuousContentError, match="finite content set"):
            getattr(task, member)
    with pytest.raises(ContinuousContentError):
        next(task.prefix_blocks(1))


# ------------------------------------------------------------------ the paper's task

def test_paper_token_layout_and_targets_by_hand():
    task = PaperTask(n=5, L=4, content=[[0.5, -1.0], [1.0, 0.0]])
    x = task.sequence(2, [0, 1, 1])
    np.testing.assert_array_equal(x, [[1, 0, 0, 0, 0], [0, 0, 0.5, -1, 1],
                                      [0, 1, 1, 0, 0], [0, 0, 1, 0, 1]])
    y = task.targets(x)
    np.testing.assert_allclose(y[2], [0, 0.5, 0.75, -0.5, 0.5])  # trigger 1/2, bias 1/2
    assert not np.delete(y, 2, axis=0).any()
    res = task.replace(residual=True).targets(x)
    np.testing.assert_allclose(res, x + y)


@given(st.integers(4, 9), st.integers(3, 9), st.integers(0, 10**6), st.booleans())
def test_paper_samples_and_targets_obey_section_7(n, L, seed, residual):
    task = PaperTask(n=n, L=L, residual=residual)
    xs = task.sample(8, seed=seed)
    for x in xs:
        j = task.trigger_position(x)
        assert 2 <= j <= L - 1
        np.testing.assert_array_equal(x[1:, n - 1], 1 - x[1:, 1])
        assert np.all(np.abs(x[1:, 2 : n - 1]) <= 1) and not x[1:, 0].any()
        y = task.targets(x)
        base = y - x if residual else y
        assert base[j, 1] == pytest.approx(1 / j) and base[j, n - 1] == pytest.approx((j - 1) / j)
        np.testing.assert_allclose(base[j], x[1 : j + 1].mean(axis=0), atol=1e-12)
        assert not np.delete(base, j, axis=0).any()


def test_paper_sample_fixes_the_trigger_on_request():
    xs = PaperTask(n=6, L=16).sample(20, seed=0, trigger_at=7)
    assert all(np.flatnonzero(x[:, 1]).tolist() == [7] for x in xs)


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(n=3), "n must be >= 4"),
    (dict(L=2), "L must be >= 3"),
    (dict(content="gauss"), "unknown content scheme"),
    (dict(content="grid"), "needs grid"),
    (dict(grid=3), "only meaningful"),
    (dict(n=5, content=[[1.0, 2.0, 3.0]]), "length n-3=2"),
    (dict(n=5, content=[[np.nan, 1.0]]), "non-finite"),
    (dict(residual="yes"), "residual must be"),
    (dict(n=30, content="grid", grid=3), "lower n or grid"),
])
def test_paper_task_rejects_bad_arguments(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        PaperTask(**kwargs)


@pytest.mark.parametrize(("mutate", "match"), [
    (lambda x: x[:-1], "shape"),
    (lambda x: x.__setitem__((0, 1), 1.0), "BOS"),
    (lambda x: x.__setitem__((1, 1), 1.0), "exactly one trigger"),
    (lambda x: x.__setitem__((3, 4), 0.0), "bias channel"),
    (lambda x: x.__setitem__((3, 2), 2.0), r"\[-1, 1\]"),
])
def test_paper_sequences_are_checked(mutate, match):
    task = PaperTask(n=5, L=5)
    x = task.sample(1, seed=0, trigger_at=2)[0]
    y = mutate(x)
    with pytest.raises(ValueError, match=match):
        task.targets(x if y is None else y)


def test_paper_content_is_copied_and_read_only():
    content = np.array([[0.5, -0.0]])
    task = PaperTask(n=5, L=4, content=content)
    content[0, 0] = 9.0
    assert task.content[0, 0] == 0.5 and not task.content.flags.writeable
    assert str(task.content[0, 1]) == "0.0"  # no negative zero


def test_legacy_import_path_still_works():
    from sinkproof.task import TriggerTask as Legacy

    assert Legacy is sp.TriggerTask is TriggerTask


def test_paper_names_are_exported_lazily():
    assert sp.PaperTask is PaperTask and "PaperTask" in sp.__all__
    assert callable(sp.paper_model) and "paper_model" in sp.__all__
    assert sp.PaperTask(n=16, L=16).describe()["content"] == "uniform"


def test_task_from_options_is_the_one_place_a_setting_name_becomes_a_task():
    from sinkproof.tasks import PaperTask, TriggerTask, task_from_options

    assert task_from_options("trigger", p=2, T=3, n=99, setting="x") == TriggerTask(p=2, T=3)
    assert task_from_options("paper", n=4, L=5, grid=2, p=7) == PaperTask(
        n=4, L=5, content="grid", grid=2)
    with pytest.raises(ValueError, match="unknown task setting"):
        task_from_options("nope")
