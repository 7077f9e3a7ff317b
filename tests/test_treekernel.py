"""The tree-factorised evaluator against the row-by-row one, prefix by prefix."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof import measures, treekernel
from sinkproof.attention import MAPS
from sinkproof.kernel import forward_prefixes
from sinkproof.measures import family_prefix_blocks
from sinkproof.numerics import stable_norm
from sinkproof.treekernel import (
    PrefixSummary,
    TreeChunk,
    summarise,
    supports_tree,
    tree_chunks,
    tree_summaries,
)

FAST = [name for name, m in MAPS.items() if m.factorisation is not None]
FIELDS = ("output", "bos", "total", "null_keys", "log_nonbos")


def make_model(task, kind, seed, scale=1.0, null_token=False, H=2):
    rng = np.random.default_rng(seed)
    kw = {}
    if MAPS[kind].properties.gated:
        kw = dict(gate_w=rng.standard_normal((H, task.D)), gate_c=rng.standard_normal(H))
    if MAPS[kind].param_names:
        kw["map_params"] = rng.standard_normal((H, 1))
    U = rng.standard_normal((H, task.p, task.p + 3))
    if null_token:  # the trigger's value is zero in every head
        U[:, :, task.p] = 0.0
    return sp.AttentionModel(task, kind, scale * rng.standard_normal((H, task.D, task.D)),
                             U, **kw)


def both_paths(model, max_rows):
    null = stable_norm(model.value_table) <= 1e-9
    tree = list(tree_summaries(model, null, max_rows))
    rows = [(t, summarise(forward_prefixes(model, codes), null), m)
            for t, codes, m in family_prefix_blocks(model.task)]
    return tree, rows


def concat(parts, t, name):
    return np.concatenate([getattr(s, name) for d, s, _ in parts if d == t], axis=-1
                          if name != "output" and name != "codes" else 0)


def assert_same(model, max_rows=1 << 16, tol=1e-12):
    tree, rows = both_paths(model, max_rows)
    for t in range(1, model.task.T + 1):
        np.testing.assert_array_equal(concat(tree, t, "codes"), concat(rows, t, "codes"))
        for name in FIELDS:
            a, b = concat(tree, t, name), concat(rows, t, name)
            fin = np.isfinite(b)
            np.testing.assert_array_equal(np.isfinite(a), fin, err_msg=name)
            scale = 1.0 + np.abs(b[fin])
            assert np.all(np.abs(a[fin] - b[fin]) <= tol * scale), (model.kind, name, t)
    positions = [sum(s.codes.shape[0] * m for _, s, m in p) for p in (tree, rows)]
    assert positions[0] == positions[1] == model.task.n_positions - model.task.n_sequences


@pytest.mark.parametrize("kind", FAST)
@pytest.mark.parametrize("triggers", ["single", "multi"])
def test_tree_equals_rows_on_every_prefix(kind, triggers):
    task = sp.TriggerTask(p=2, T=4, triggers=triggers)
    assert_same(make_model(task, kind, seed=3, null_token=True), max_rows=8)


@pytest.mark.parametrize("kind", ["softmax", "sink_logit", "sigmoid", "gated_softmax"])
def test_strong_sink_stays_in_log_domain(kind, monkeypatch):
    """Scores in the hundreds: non-BOS sums below float64's range take the log-domain path."""
    task = sp.TriggerTask(p=1, T=4)
    model = make_model(task, kind, seed=5, scale=400.0)
    calls = []
    real = treekernel._sums
    monkeypatch.setattr(treekernel, "_sums", lambda *a: calls.append(a[-1]) or real(*a))
    assert_same(model, tol=1e-10)
    assert "log" in calls  # the fallback ran
    ev = sp.evaluate(model)
    assert np.all(np.isfinite(ev.log_nonbos_nontrigger.max))


@settings(max_examples=15)
@given(seed=st.integers(0, 2**16), kind=st.sampled_from(FAST),
       scale=st.sampled_from([0.1, 1.0, 5.0, 60.0]),
       positions=st.sampled_from(["inverse", "onehot", "none"]),
       content=st.sampled_from(["signed", "gaussian"]), rows=st.sampled_from([3, 50, 4096]))
def test_tree_equals_rows_property(seed, kind, scale, positions, content, rows):
    task = sp.TriggerTask(p=2, T=3, positions=positions, content=content)
    assert_same(make_model(task, kind, seed, scale), max_rows=rows, tol=1e-11)


@pytest.mark.parametrize("kind", ["softmax", "relu", "sink_logit"])
def test_evaluate_tree_matches_rows(kind):
    task = sp.TriggerTask(p=2, T=4, content="gaussian")
    model = make_model(task, kind, seed=11)
    a, b = sp.evaluate(model, tree=True), sp.evaluate(model, tree=False)
    assert abs(a.max_error - b.max_error) <= 1e-12 * (1 + b.max_error)
    for name in ("bos_nontrigger", "log_nonbos_trigger", "bos_share_nontrigger",
                 "null_mass_trigger"):
        for stat in ("min", "mean", "max"):
            np.testing.assert_allclose(getattr(getattr(a, name), stat),
                                       getattr(getattr(b, name), stat), rtol=1e-12, atol=1e-12)
    assert (a.n_prefixes, a.n_positions) == (b.n_prefixes, b.n_positions)


def test_prefix_products_match_prefix_blocks():
    for triggers in ("single", "multi"):
        task = sp.TriggerTask(p=2, T=4, triggers=triggers)
        for t in range(1, 5):
            blocks = list(task.prefix_blocks(t))
            prods = list(task.prefix_products(t))
            codes = np.concatenate([b.codes for b in blocks])
            expanded = np.concatenate([
                np.stack(np.meshgrid(*slots, indexing="ij"), -1).reshape(-1, t)
                for slots, _ in prods])
            np.testing.assert_array_equal(codes, expanded)
            assert [b.multiplicity for b in blocks] == [m for _, m in prods]


def test_sort_based_maps_keep_the_row_path():
    task = sp.TriggerTask(p=1, T=3)
    for kind in ("sparsemax", "entmax15"):
        model = make_model(task, kind, seed=0)
        assert not supports_tree(model)
        sp.evaluate(model)  # the default falls back to rows
        with pytest.raises(ValueError, match="factorises"):
            sp.evaluate(model, tree=True)
    with pytest.raises(ValueError, match="whole family"):
        sp.evaluate(make_model(task, "softmax", 0), [[0, 1]], tree=True)


# ------------------------------------------------------------------ the fused kernel
STATS = ("bos_nontrigger", "bos_trigger", "log_nonbos_nontrigger", "log_nonbos_trigger",
         "bos_share_nontrigger", "bos_share_trigger", "null_mass_nontrigger",
         "null_mass_trigger")


def by_prefix(parts, t):
    """Every prefix of depth ``t`` of a kernel's output, sorted by codes: codes, output,
    target, error norm and the per-head fields."""
    rows = []
    for d, s, _ in parts:
        if d != t:
            continue
        out = s.outputs.T if isinstance(s, TreeChunk) else s.output
        heads = [np.broadcast_to(getattr(s, f), s.bos.shape) for f in FIELDS[1:]]
        rows.append((s.codes, out, s.target, s.error_norms(), *heads))
    cols = [np.concatenate([r[i] for r in rows], axis=-1 if i > 3 else 0)
            for i in range(len(rows[0]))]
    order = np.lexsort(cols[0].T[::-1])
    return [c[order] if i <= 3 else c[:, order] for i, c in enumerate(cols)]


def assert_fused_same(model, max_rows, tol=1e-12):
    """The fused chunks equal the row-by-row forward prefix by prefix."""
    null = stable_norm(model.value_table) <= 1e-9
    fused = list(tree_chunks(model, null, max_rows))
    rows = [(t, summarise(forward_prefixes(model, codes), null), m)
            for t, codes, m in family_prefix_blocks(model.task)]
    cap = max(max_rows, model.task.n_tokens)
    assert all(s.codes.shape[0] <= cap for _, s, _ in fused if isinstance(s, TreeChunk))
    for t in range(1, model.task.T + 1):
        a, b = by_prefix(fused, t), by_prefix(rows, t)
        np.testing.assert_array_equal(a[0], b[0])
        for name, x, y in zip(("output", "target", "error", *FIELDS[1:]), a[1:], b[1:]):
            fin = np.isfinite(y)
            np.testing.assert_array_equal(np.isfinite(x), fin, err_msg=name)
            assert np.all(np.abs(x[fin] - y[fin]) <= tol * (1.0 + np.abs(y[fin]))), \
                (model.kind, name, t)
    mult = [sum(s.codes.shape[0] * m for _, s, m in p) for p in (fused, rows)]
    assert mult[0] == mult[1] == model.task.n_positions - model.task.n_sequences
    return fused


def todays(model, **kw):
    """``evaluate`` as it ran before the fused kernel: the reference tree chunks."""
    real = measures.tree_chunks
    measures.tree_chunks = lambda m, n, r: tree_summaries(m, n, max(r, 1 << 17))
    try:
        return sp.evaluate(model, **kw)
    finally:
        measures.tree_chunks = real


def assert_evaluations_equal(a, b, tol=1e-12):
    assert abs(a.max_error - b.max_error) <= tol * (1 + b.max_error)
    for name in STATS:
        for stat in ("min", "mean", "max"):
            np.testing.assert_allclose(getattr(getattr(a, name), stat),
                                       getattr(getattr(b, name), stat), rtol=tol, atol=tol,
                                       err_msg=f"{name}.{stat}")
    assert (a.n_prefixes, a.n_positions, a.n_sequences) == \
        (b.n_prefixes, b.n_positions, b.n_sequences)


def assert_worst_is_worst(model, ev):
    """The reported worst (sequence, position) has the reported error, by the forward."""
    seq, pos = ev.worst
    out, _ = model.forward(seq)
    err = float(stable_norm(out[pos] - model.task.targets(seq)[pos]))
    assert abs(err - ev.max_error) <= 1e-12 * (1 + ev.max_error)


@pytest.mark.parametrize("kind", FAST)
@pytest.mark.parametrize("triggers", ["single", "multi"])
def test_fused_equals_rows_on_every_prefix(kind, triggers):
    task = sp.TriggerTask(p=2, T=4, triggers=triggers)
    for max_rows in (3, 50, 1 << 15):
        assert_fused_same(make_model(task, kind, seed=3, null_token=True), max_rows)


@pytest.mark.parametrize("kind", ["softmax", "sink_logit", "sigmoid", "gated_softmax"])
def test_fused_falls_back_near_float64_edge(kind):
    """Scores in the hundreds: the queries whose sums could leave float64's normal range run
    the log-domain reference chunks, and agree with the rows."""
    task = sp.TriggerTask(p=1, T=4)
    fused = assert_fused_same(make_model(task, kind, seed=5, scale=400.0), 1 << 15, tol=1e-10)
    assert any(isinstance(s, PrefixSummary) for _, s, _ in fused)  # the fallback ran


@settings(max_examples=examples(40))
@given(seed=st.integers(0, 2**16), kind=st.sampled_from(FAST),
       scale=st.sampled_from([0.1, 1.0, 5.0, 60.0, 400.0]), p=st.integers(1, 3),
       T=st.integers(1, 4), heads=st.integers(1, 3), triggers=st.sampled_from(["single", "multi"]),
       positions=st.sampled_from(["inverse", "onehot", "none"]),
       content=st.sampled_from(["signed", "gaussian"]), null_token=st.booleans(),
       rows=st.sampled_from([3, 50, 1 << 15]))
def test_fused_evaluate_equals_todays_and_rows(seed, kind, scale, p, T, heads, triggers,
                                               positions, content, null_token, rows):
    """Every measure of the fused evaluator equals the reference tree path's (the evaluator
    as it was) and the row-by-row path's to 1e-12, on random models of every factorised
    map, sizes, head counts and chunk sizes; the worst prefix has the reported error."""
    task = sp.TriggerTask(p=p, T=T, positions=positions, content=content, triggers=triggers)
    model = make_model(task, kind, seed, scale, null_token=null_token, H=heads)
    ev = sp.evaluate(model, max_rows=rows)
    tol = 1e-12 if scale < 100 else 1e-10  # the reference's log domain, near the edge
    assert_evaluations_equal(ev, todays(model), tol)
    assert_evaluations_equal(ev, sp.evaluate(model, tree=False), tol)
    assert_worst_is_worst(model, ev)


@pytest.mark.slow  # about 8 s: the reference path at p=3, T=8, four times
@pytest.mark.parametrize("kind", ["softmax", "relu"])
@pytest.mark.parametrize("heads", [1, 2])
def test_fused_equals_todays_on_the_benchmark_instance(kind, heads):
    """The instance of benchmarks/bench_evaluate.py (p=3, T=8, random A and U)."""
    task = sp.TriggerTask(p=3, T=8)
    rng = np.random.default_rng(0)
    model = sp.AttentionModel(task, kind, rng.standard_normal((heads, task.D, task.D)),
                              rng.standard_normal((heads, task.p, task.p + 3)))
    ev = sp.evaluate(model, max_work=task.n_positions)
    assert_evaluations_equal(ev, todays(model, max_work=task.n_positions))
    assert_worst_is_worst(model, ev)


@pytest.mark.parametrize("triggers", ["single", "multi"])
@pytest.mark.parametrize("content", ["signed", "gaussian"])
def test_last_position_targets_are_the_running_means(triggers, content):
    """The targets the fused kernel asks for (one position, summed without a cumsum) are
    bit for bit the running means of every position's formula, float and exact."""
    task = sp.TriggerTask(p=3, T=6, triggers=triggers, content=content)
    rng = np.random.default_rng(7)
    for t in range(1, 7):
        codes = rng.integers(0, task.k + 1, size=(400, t))
        codes[:200, -1] = task.trig_code  # a block of trigger queries, then a mixed one
        for block in (codes[:200], codes, np.asfortranarray(codes)):
            every = task._targets(block, task.content_table, task.trig_code, slice(None))
            assert task.prefix_targets(block).tobytes() == every[:, -1].tobytes()
        exact = task._targets(codes[:5], task._exact_content, task.trig_code, slice(None))
        assert [task.exact_prefix_target(c) for c in codes[:5]] == \
            [tuple(row) for row in exact[:, -1]]
