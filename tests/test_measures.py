"""The measures of docs/theory.md section 3; the prefix evaluator against a plain loop."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from tests._core_strategies import models_of, sequences_of, small_tasks


def loop_evaluate(model, sequences, eta=1e-9):
    """Reference: every position of every sequence through model.forward, one at a time."""
    H = model.H
    worst = 0.0
    bos = {True: [], False: []}
    share = {True: [], False: []}
    null = {True: [], False: []}
    lnb = {True: [], False: []}
    vnorm = np.linalg.norm(model.value_table, axis=-1)
    for seq in sequences:
        out, w = model.forward(seq)
        y = model.task.targets(seq)
        worst = max(worst, float(np.linalg.norm(out - y, axis=1).max()))
        codes = np.concatenate([[model.task.bos_code], model.task.encode(seq)])
        logn = model.log_nonbos(seq)
        for t in range(1, len(seq) + 1):
            trig = seq[t - 1] == sp.TRIG
            row = w[:, t, : t + 1]
            tot = row.sum(axis=1)
            bos[trig].append(row[:, 0])
            share[trig].append(np.where(tot > 0, row[:, 0] / np.where(tot > 0, tot, 1), 0.0))
            nm = np.array([row[h][vnorm[h, codes[: t + 1]] <= eta].sum() for h in range(H)])
            if model.kind == "relu":
                nm = np.where(tot > 0, nm / np.where(tot > 0, tot, 1), 0.0)
            null[trig].append(nm)
            lnb[trig].append(logn[:, t])
    return worst, bos, share, null, lnb


def assert_stats_match(stats, samples):
    if not samples:
        assert stats.count == 0
        return
    arr = np.array(samples)
    assert stats.count == len(samples)
    np.testing.assert_allclose(stats.min, arr.min(axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stats.max, arr.max(axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stats.mean, arr.mean(axis=0), rtol=1e-12, atol=1e-12)


def check_against_loop(model, sequences=None):
    ev = sp.evaluate(model, sequences)
    seqs = list(model.task.sequences()) if sequences is None else sequences
    worst, bos, share, null, lnb = loop_evaluate(model, seqs)
    assert ev.max_error == pytest.approx(worst, rel=1e-12, abs=1e-12)
    for trig, name in ((False, "nontrigger"), (True, "trigger")):
        assert_stats_match(getattr(ev, "bos_" + name), bos[trig])
        assert_stats_match(getattr(ev, "bos_share_" + name), share[trig])
        assert_stats_match(getattr(ev, "null_mass_" + name), null[trig])
        finite = [np.where(np.isfinite(v), v, 0.0) for v in lnb[trig]]
        if finite:
            np.testing.assert_allclose(getattr(ev, "log_nonbos_" + name).mean,
                                       np.mean(finite, axis=0), rtol=1e-10, atol=1e-12)
    seq, t = ev.worst
    out, _ = model.forward(list(seq))
    y = model.task.targets(list(seq))
    assert np.linalg.norm(out[t] - y[t]) == pytest.approx(ev.max_error, rel=1e-12, abs=1e-15)
    return ev


@settings(max_examples=examples(25))
@given(st.data())
def test_family_evaluation_matches_the_loop(data):
    task = data.draw(small_tasks())
    model = data.draw(models_of(task))
    check_against_loop(model)


@settings(max_examples=examples(25))
@given(st.data())
def test_explicit_sequences_match_the_loop(data):
    task = data.draw(small_tasks())
    model = data.draw(models_of(task))
    seqs = data.draw(st.lists(sequences_of(task), min_size=1, max_size=6))
    check_against_loop(model, seqs)


def test_chunking_does_not_change_results():
    task = sp.TriggerTask(p=2, T=5)
    rng = np.random.default_rng(1)
    model = sp.AttentionModel(task, "softmax", rng.standard_normal((2, task.D, task.D)))
    a, b = sp.evaluate(model), sp.evaluate(model, max_rows=7)
    assert a.max_error == b.max_error
    np.testing.assert_allclose(a.bos_nontrigger.mean, b.bos_nontrigger.mean, rtol=1e-13)
    assert a.n_prefixes == b.n_prefixes == 1 + sum(task.count_sequences(t) for t in range(1, 6))


def test_counts_and_sink_detection():
    task = sp.TriggerTask(p=2, T=4)
    ev = sp.evaluate(sp.constructions.softmax_solution(task, 12.0))
    assert ev.n_sequences == task.n_sequences and ev.n_positions == task.n_positions
    assert ev.has_sink(1e-3).tolist() == [True]
    assert ev.has_sink(1e-7).tolist() == [False]
    assert ev.sink_score[0] == pytest.approx(ev.bos_nontrigger.mean[0])
    assert "softmax" in repr(ev) and "| head |" in ev._repr_markdown_()
    assert ev.summary()["n_sequences"] == task.n_sequences


def test_null_mass_counts_bos_and_zero_valued_trigger():
    task = sp.TriggerTask(p=1, T=3)
    A = np.zeros((task.D, task.D))  # uniform softmax weights
    ev = sp.evaluate(sp.AttentionModel(task, "softmax", A), [[0, sp.TRIG]])
    # t=1: keys BOS, c -> null 1/2; t=2 (trigger): BOS, c, TRIG -> null 2/3
    assert ev.null_mass_nontrigger.mean[0] == pytest.approx(0.5)
    assert ev.null_mass_trigger.mean[0] == pytest.approx(2 / 3)


def test_bad_evaluate_input():
    task = sp.TriggerTask(p=2, T=3)
    model = sp.constructions.relu_solution(task)
    with pytest.raises(ValueError, match="sequences is empty"):
        sp.evaluate(model, [])
    with pytest.raises(TypeError, match="AttentionModel"):
        sp.evaluate("model")
    with pytest.raises(ValueError, match="exceeds T"):
        sp.evaluate(model, [[0, 0, 0, 0]])


@pytest.mark.parametrize("L", [30.0, 700.0, 2000.0])
def test_family_log_nonbos_survives_extreme_sinks(L):
    task = sp.TriggerTask(p=2, T=4)
    ev = sp.evaluate(sp.constructions.softmax_solution(task, L))
    # at a content position t the non-BOS mass is t / (e^L + t)
    lo, hi = ev.log_nonbos_nontrigger.min[0], ev.log_nonbos_nontrigger.max[0]
    assert lo == pytest.approx(-L - np.log1p(np.exp(-L)), rel=1e-12)
    assert hi == pytest.approx(np.log(4) - L - np.log1p(4 * np.exp(-L)), rel=1e-12)
    assert ev.bos_nontrigger.min[0] == pytest.approx(1.0)


@pytest.mark.parametrize("scale", [1e-200, 1e-293, 1e200])
def test_errors_do_not_underflow_or_overflow(scale):
    task = sp.TriggerTask(p=2, T=2, content=[[scale, scale]])
    model = sp.AttentionModel(task, "softmax", np.zeros((task.D, task.D)))
    ev = sp.evaluate(model, [[0, 0]])
    # uniform weights over (BOS, c, c) at t=2: f = (2/3) c, target 0
    assert ev.max_error == pytest.approx(2 / 3 * np.sqrt(2) * scale, rel=1e-12)


def test_evaluation_repr_names_the_trigger_and_resolves_deep_sinks():
    task = sp.TriggerTask(p=2, T=3)
    ev = sp.evaluate(sp.constructions.softmax_solution(task, 40.0))
    assert ev.max_nonbos_nontrigger[0] == pytest.approx(3 * np.exp(-40.0), rel=1e-9)
    assert "max 1-α0=[" in repr(ev)
    uniform = sp.AttentionModel(task, "softmax", np.zeros((task.D, task.D)))
    assert "at [TRIG, 0][t=2]" in repr(sp.evaluate(uniform, [[sp.TRIG, 0]]))
    relu = sp.evaluate(sp.constructions.relu_solution(task))
    assert "BOS share" in relu._repr_markdown_() and "distinct prefixes" in relu._repr_markdown_()
    assert "| head | min | mean | max |" in ev.bos_nontrigger._repr_markdown_()
    assert "-0.0" not in str(task.content.tolist())
