"""One result type for ``evaluate``: a one-layer model through the tabulated path (the
prefix kernels) and through the stack path gives the same fields, types and shapes."""

from __future__ import annotations

import numpy as np
import pytest

import sinkproof as sp
from sinkproof.attention import MAPS
from sinkproof.evaluation import Evaluation, head_shape
from sinkproof.stack import from_attention_model
from sinkproof.stackeval import StackEvaluation, evaluate_stack
from sinkproof.stats import Stats

TASKS = [sp.TriggerTask(2, 4), sp.TriggerTask(1, 3, positions="onehot", triggers="multi")]


def random_model(task, kind, seed=3, learned=True):
    rng = np.random.default_rng(seed)
    H = 2
    amap = MAPS[kind]
    extra = dict(map_params=rng.standard_normal((H, len(amap.param_names))))
    if amap.properties.gated:
        extra.update(gate_w=rng.standard_normal((H, task.D)), gate_c=rng.standard_normal(H))
    return sp.AttentionModel(task, kind, A=2.0 * rng.standard_normal((H, task.D, task.D)),
                             U=rng.standard_normal((H, task.p, task.p + 3)) if learned else None,
                             **extra)


WITNESS = ("worst", "worst_output", "worst_target")
"""Where the maximum occurs: with exact ties (symmetric models) each path may name another
(sequence, position); each must be a witness of the same maximum."""


def assert_witness(ev, model):
    """``worst`` names a (sequence, t) whose output and target are ``worst_output`` /
    ``worst_target`` and whose error is ``max_error``."""
    seq, t = ev.worst
    out, _ = model.forward(seq)
    np.testing.assert_allclose(out[t], ev.worst_output, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.task.targets(seq)[t], ev.worst_target, atol=1e-12)
    err = float(np.linalg.norm(ev.worst_output - ev.worst_target))
    assert err == pytest.approx(ev.max_error, rel=1e-12, abs=1e-12)


def assert_same(a, b, name, squeeze=False):
    """Field ``name`` of two evaluations: same type, shape and value (to 1e-12)."""
    x, y = getattr(a, name), getattr(b, name)
    assert type(x) is type(y), name
    if isinstance(x, Stats):
        assert x.count == y.count, name
        for part in ("min", "mean", "max"):
            u, v = getattr(x, part), getattr(y, part)
            v = v[0] if squeeze else v
            assert u.shape == v.shape == a.head_shape, (name, part)
            np.testing.assert_allclose(v, u, rtol=1e-12, atol=1e-12, err_msg=f"{name}.{part}")
    elif isinstance(x, np.ndarray):
        assert x.shape == y.shape, name
        np.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-12, err_msg=name)
    elif isinstance(x, float):
        assert y == pytest.approx(x, rel=1e-12, abs=1e-12), name
    else:
        assert x == y, name


@pytest.mark.parametrize("task", TASKS, ids=repr)
@pytest.mark.parametrize("kind", sorted(MAPS))
@pytest.mark.parametrize("learned", [True, False], ids=["learned", "fixed"])
def test_tabulated_and_stack_paths_give_one_result(task, kind, learned):
    model = random_model(task, kind, learned=learned)
    tab = sp.evaluate(model)                    # the prefix kernels (tree where it factorises)
    gen = evaluate_stack(model)                 # the stack forward on the same model
    plain = sp.evaluate(from_attention_model(model))  # the same layer as a plain stack
    for ev in (tab, gen, plain):
        assert type(ev) is Evaluation and isinstance(ev, StackEvaluation) and ev.exhaustive
    assert tab.head_shape == gen.head_shape == (2,) and plain.head_shape == (1, 2)
    assert head_shape(model) == (2,)
    assert tab.worst[1] == gen.worst[1] == plain.worst[1]
    for ev in (tab, gen, plain):
        assert_witness(ev, model)
        assert isinstance(ev.worst, tuple) and type(ev.worst[0]) is type(tab.worst[0])
    for name in Evaluation.SHARED:
        if name in WITNESS:
            continue
        assert_same(tab, gen, name)
        assert_same(tab, plain, name, squeeze=True)
    for derived in ("sink_score", "max_nonbos_nontrigger"):
        np.testing.assert_allclose(getattr(gen, derived), getattr(tab, derived),
                                   rtol=1e-12, atol=1e-12)
    assert (gen.has_sink(0.5) == tab.has_sink(0.5)).all()
    assert gen.worst_error == gen.max_error and gen.method == tab.method
    assert tab.adversarial is None and gen.adversarial is None  # the one path extra
    if not learned and MAPS[kind].properties.on_simplex:  # fixed values: v_BOS = 0 is null
        assert (tab.null_mass_nontrigger.min >= tab.bos_nontrigger.min - 1e-12).all()
        assert (gen.null_mass_nontrigger.max > 0).all()
    s_tab, s_gen = tab.summary(), gen.summary()
    shared_keys = set(s_tab) & set(s_gen)
    assert {"max_error", "sink_score", "bos_nontrigger", "source", "worst_position",
            "n_prefixes", "layers", "heads"} <= shared_keys
    assert {"null_mass_nontrigger", "bos_share_nontrigger", "method"} <= shared_keys
    for text in (repr(tab), repr(gen), tab._repr_markdown_(), plain._repr_markdown_()):
        assert "max" in text and kind in text


def test_given_sequences_agree_where_the_meaning_is_shared():
    task = sp.TriggerTask(2, 4)
    model = random_model(task, "softmax")
    seqs = task.sample(25, seed=4)
    tab, gen = sp.evaluate(model, seqs), evaluate_stack(model, seqs)
    assert tab.source == gen.source == "given" and not tab.exhaustive
    assert "lower estimate" in tab.method and tab.method == gen.method
    for name in Evaluation.SHARED:
        if name in ("worst", "n_prefixes"):
            continue  # documented: prefix vs whole sequence; distinct vs every prefix run
        assert_same(tab, gen, name)
    (seq_t, t_t), (seq_g, t_g) = tab.worst, gen.worst
    assert t_t == t_g >= 1 and tuple(seq_g)[: len(seq_t)] == tuple(seq_t)
    assert gen.n_prefixes == sum(len(s) + 1 for s in seqs) == gen.n_positions
    assert tab.n_prefixes <= gen.n_prefixes
