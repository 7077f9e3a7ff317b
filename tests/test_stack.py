"""Layer stacks: forward against references written here, the one-layer case against
AttentionModel, validation, and evaluation (exhaustive vs explicit, sampled)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.attention import MAPS
from sinkproof.stack import Head, Layer, StackModel, StackShapeError, from_attention_model
from sinkproof.stackeval import StackEvaluation, evaluate_stack
from sinkproof.tasks import PaperTask


def paper_weights(layers, heads, n, seed, scale=0.5):
    rng = np.random.default_rng(seed)
    return dict(W_Q=scale * rng.standard_normal((layers, heads, n, n)),
                W_K=scale * rng.standard_normal((layers, heads, n, n)),
                W_V=scale * rng.standard_normal((layers, heads, n, n)),
                W_O=scale * rng.standard_normal((layers, n, heads * n)))


def loop_forward(kind, W, residual, x):
    """The paper's model, one query and one key at a time, in plain Python floats."""
    WQ, WK, WV, WO = W["W_Q"], W["W_K"], W["W_V"], W["W_O"]
    layers, heads = WQ.shape[:2]
    x = [list(map(float, row)) for row in x]
    L, n = len(x), len(x[0])
    weights = np.zeros((layers, heads, L, L))

    def mv(M, v):
        return [sum(M[r][c] * v[c] for c in range(len(v))) for r in range(len(M))]

    for l in range(layers):
        new = []
        for i in range(L):
            concat = []
            for h in range(heads):
                q = mv(WQ[l, h], x[i])
                s = [sum(a * b for a, b in zip(q, mv(WK[l, h], x[k]))) for k in range(i + 1)]
                if kind == "softmax":
                    m = max(s)
                    e = [math.exp(v - m) for v in s]
                    a = [v / sum(e) for v in e]
                else:  # relu_length
                    a = [max(0.0, v) / max(i, 1) for v in s]
                weights[l, h, i, : i + 1] = a
                o = [0.0] * n
                for k in range(i + 1):
                    vk = mv(WV[l, h], x[k])
                    o = [oo + a[k] * vv for oo, vv in zip(o, vk)]
                concat += o
            out = mv(WO[l], concat)
            new.append([a + b for a, b in zip(x[i], out)] if residual else out)
        x = new
    return np.array(x), weights


def numpy_section7(W, residual, x, kind="softmax"):
    """Section 7's formulas as matrix products: q = W_Q x, k = W_K x, logits q·k (no
    scaling, causal), softmax rows, head outputs of W_V x, W_O on the concatenation."""
    L = x.shape[0]
    mask = np.tril(np.ones((L, L), dtype=bool))
    ws = []
    for l in range(W["W_Q"].shape[0]):
        heads, wl = [], []
        for h in range(W["W_Q"].shape[1]):
            Q, K, V = x @ W["W_Q"][l, h].T, x @ W["W_K"][l, h].T, x @ W["W_V"][l, h].T
            logits = np.where(mask, Q @ K.T, -np.inf)
            if kind == "softmax":
                a = np.exp(logits - logits.max(axis=1, keepdims=True))
                a = a / a.sum(axis=1, keepdims=True)
            else:
                a = np.where(mask, np.maximum(Q @ K.T, 0), 0) / np.maximum(np.arange(L), 1)[:, None]
            heads.append(a @ V)
            wl.append(a)
        out = np.concatenate(heads, axis=1) @ W["W_O"][l].T
        x = x + out if residual else out
        ws.append(wl)
    return x, np.array(ws)


@pytest.mark.parametrize("kind", ["softmax", "relu_length"])
@pytest.mark.parametrize(("layers", "heads"), [(1, 1), (2, 2), (3, 1)])
def test_forward_matches_a_plain_loop(kind, layers, heads):
    task = PaperTask(n=5, L=6)
    W = paper_weights(layers, heads, 5, seed=layers * 10 + heads)
    model = sp.paper_model(task, kind, **W)
    for x in task.sample(3, seed=1):
        out, w = model.forward(x)
        ref_out, ref_w = loop_forward(kind, W, layers > 1, x)
        np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-12)
        assert out.shape == (6, 5) and w.shape == (layers, heads, 6, 6)


@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 2**31), st.booleans(),
       st.sampled_from([0.02, 0.5, 3.0]), st.sampled_from(["softmax", "relu_length"]))
def test_forward_matches_section_7_formulas(layers, heads, seed, residual, scale, kind):
    task = PaperTask(n=6, L=7)
    W = paper_weights(layers, heads, 6, seed, scale)
    model = sp.paper_model(task, kind, residual=residual, **W)
    x = task.sample(1, seed=seed)[0]
    out, w = model.forward(x)
    ref_out, ref_w = numpy_section7(W, residual, x, kind)
    np.testing.assert_allclose(out, ref_out, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-12)


def test_batched_forward_is_per_sequence_and_causal():
    task = PaperTask(n=5, L=6)
    model = sp.paper_model(task, "softmax", **paper_weights(2, 2, 5, seed=3))
    xs = task.sample(4, seed=2)
    fw = model.forward_batch(xs)
    for i, x in enumerate(xs):
        out, w = model.forward(x)
        np.testing.assert_allclose(fw.out[i], out, rtol=0, atol=1e-14)
        np.testing.assert_allclose(fw.w[:, :, i], w, rtol=0, atol=1e-14)
    changed = xs[0].copy()
    changed[-1, 2] = -changed[-1, 2] + 0.5
    out2, _ = model.forward(changed)
    np.testing.assert_array_equal(out2[:-1], model.forward(xs[0])[0][:-1])


def test_residual_default_follows_the_layer_count_and_leaves_the_task_alone():
    task = PaperTask(n=5, L=5)
    one = sp.paper_model(task, "softmax", **paper_weights(1, 2, 5, 0))
    two = sp.paper_model(task, "softmax", **paper_weights(2, 2, 5, 0))
    assert not one.residual and not one.task.residual
    assert two.residual and two.task.residual and not task.residual
    flat = sp.paper_model(task, "softmax", residual=False, **paper_weights(2, 1, 5, 0))
    assert not flat.residual and flat.task is task


def test_parameters_are_copied_read_only_and_factored_equals_bilinear():
    task = PaperTask(n=5, L=5)
    W = paper_weights(1, 1, 5, seed=4)
    before = {k: v.copy() for k, v in W.items()}
    model = sp.paper_model(task, "softmax", **W)
    W["W_Q"][:] = 0.0
    head = model.layers[0].heads[0]
    assert not head.W_Q.flags.writeable
    np.testing.assert_array_equal(head.W_Q, before["W_Q"][0, 0])
    bilinear = StackModel(task, [Layer((Head.make(
        "softmax", 5, before["W_V"][0, 0], A=before["W_Q"][0, 0].T @ before["W_K"][0, 0]),),
        before["W_O"][0])])
    x = task.sample(1, seed=0)[0]
    keep = x.copy()
    np.testing.assert_allclose(bilinear.forward(x)[0], model.forward(x)[0], atol=1e-12)
    np.testing.assert_array_equal(x, keep)


@pytest.mark.parametrize(("change", "error", "match"), [
    (dict(W_Q=np.zeros((1, 1, 5, 4))), StackShapeError, "W_Q must have shape"),
    (dict(W_O=np.zeros((1, 5, 6))), StackShapeError, "W_O must have shape"),
    (dict(W_V=np.zeros((2, 1, 5, 5))), StackShapeError, "W_V must have shape"),
    (dict(W_K=np.full((1, 1, 5, 5), np.inf)), ValueError, "W_K contains non-finite"),
    (dict(W_K=None), TypeError, "W_K is required"),
    (dict(W_Q=np.zeros((1, 5, 5))), ValueError, "W_Q must have 4 dimensions"),
    (dict(kind="cosine"), ValueError, "unknown attention kind"),
    (dict(kind="sink_logit", map_params=np.zeros((1, 1, 2))), StackShapeError,
     "map_params must have shape"),
    (dict(kind="softmax", gate_w=np.zeros((1, 1, 5))), StackShapeError, "has no gate"),
])
def test_paper_model_rejects_bad_parameters(change, error, match):
    args = dict(kind="softmax", **paper_weights(1, 1, 5, 0))
    args.update(change)
    with pytest.raises(error, match=match):
        sp.paper_model(PaperTask(n=5, L=5), **args)


def test_paper_model_needs_a_paper_task_and_forward_checks_x():
    with pytest.raises(TypeError, match="one fixed length"):
        sp.paper_model(sp.TriggerTask(2, 3), "softmax", **paper_weights(1, 1, 5, 0))
    model = sp.paper_model(PaperTask(n=5, L=5), "softmax", **paper_weights(1, 1, 5, 0))
    with pytest.raises(StackShapeError, match="5 columns"):
        model.forward(np.zeros((5, 4)))
    with pytest.raises(ValueError, match="non-finite"):
        model.forward(np.full((5, 5), np.nan))


def test_stack_shapes_are_checked():
    task = sp.TriggerTask(2, 3)
    good = Head.make("softmax", task.D, np.zeros((2, task.D)), A=np.zeros((task.D, task.D)))
    with pytest.raises(StackShapeError, match="either A or both"):
        Head.make("softmax", task.D, np.zeros((2, task.D)))
    with pytest.raises(StackShapeError, match="residual layer must keep"):
        StackModel(task, [Layer((good,))], residual=True)
    with pytest.raises(StackShapeError, match="targets have 2"):
        StackModel(task, [Layer((good,), np.zeros((3, 2)))])
    with pytest.raises(StackShapeError, match="no gate"):
        Head.make("softmax", task.D, np.zeros((2, task.D)), A=np.eye(task.D), gate_c=1.0)


# ------------------------------------------------ the one-layer case is AttentionModel

TRIGGER_TASKS = [sp.TriggerTask(2, 4), sp.TriggerTask(1, 3, positions="onehot", triggers="multi"),
                 sp.TriggerTask(2, 3, content="gaussian", k=3, seed=1, positions="none")]


@pytest.mark.parametrize("task", TRIGGER_TASKS, ids=repr)
@pytest.mark.parametrize("kind", sorted(MAPS))
@pytest.mark.parametrize("learned", [False, True])
def test_one_layer_stack_is_attention_model(task, kind, learned):
    rng = np.random.default_rng(7)
    H = 2
    A = 2.0 * rng.standard_normal((H, task.D, task.D))
    U = rng.standard_normal((H, task.p, task.p + 3)) if learned else None
    amap = MAPS[kind]
    extra = dict(map_params=rng.standard_normal((H, len(amap.param_names))))
    if amap.properties.gated:
        extra.update(gate_w=rng.standard_normal((H, task.D)), gate_c=rng.standard_normal(H))
    model = sp.AttentionModel(task, kind, A=A, U=U, **extra)
    stack = from_attention_model(model)
    assert isinstance(model, StackModel) and model.tabulated and not stack.tabulated
    assert model.n_layers == 1 and not model.residual and stack.layers is model.layers
    for seq in task.sample(30, seed=2):
        out, w = model.forward(seq)
        for s_out, s_w in (stack.run(seq), model.run(seq)):  # the stack forward, both objects
            np.testing.assert_allclose(s_out, out, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(s_w[0], w, rtol=1e-12, atol=1e-12)
    ev, sv = sp.evaluate(model), sp.evaluate(stack)
    direct = evaluate_stack(model)  # the general path on the one-layer model itself
    assert direct.max_error == pytest.approx(ev.max_error, rel=1e-12, abs=1e-12)
    assert isinstance(sv, StackEvaluation) and sv.exhaustive
    assert sv.max_error == pytest.approx(ev.max_error, rel=1e-12, abs=1e-12)
    assert sv.n_positions == ev.n_positions and sv.n_sequences == ev.n_sequences
    for name in ("bos_nontrigger", "bos_trigger", "bos_share_nontrigger",
                 "log_nonbos_nontrigger"):
        a, b = getattr(ev, name), getattr(sv, name)
        assert a.count == b.count
        for field in ("min", "mean", "max"):
            np.testing.assert_allclose(getattr(b, field)[0], getattr(a, field),
                                       rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------- evaluation

def test_exhaustive_paper_evaluation_equals_the_explicit_family():
    task = PaperTask(n=5, L=5, content=[[0.5, -1.0], [1.0, 0.25]])
    model = sp.paper_model(task, "softmax", **paper_weights(2, 2, 5, seed=5))
    ex = sp.evaluate(model)
    seqs = [task.sequence(j, list(idx)) for j in task.trigger_positions
            for idx in np.ndindex(*(2,) * (task.L - 1))]
    given_ = sp.evaluate(model, seqs)
    assert ex.exhaustive and not given_.exhaustive and "given" in given_.method
    assert ex.n_sequences == len(seqs) == task.n_sequences == 48
    assert ex.n_positions == given_.n_positions == 48 * 5
    assert ex.max_error == pytest.approx(given_.max_error, rel=1e-12)
    for name in ("bos_nontrigger", "bos_trigger", "bos_share_trigger", "log_nonbos_trigger"):
        a, b = getattr(ex, name), getattr(given_, name)
        assert a.count == b.count
        for field in ("min", "mean", "max"):
            np.testing.assert_allclose(getattr(a, field), getattr(b, field), rtol=1e-12)
    assert ex.sink_score.shape == (2, 2) and ex.has_sink(1.0).all()
    x, t = ex.worst
    ref = loop_forward("softmax", paper_weights(2, 2, 5, seed=5), True, x)[0][t]
    target = model.task.row_targets(x[None])[0][t]  # residual targets: 2 layers
    assert np.linalg.norm(ref - target) == pytest.approx(ex.max_error, rel=1e-10)


def test_continuous_evaluation_is_a_stated_seeded_sample():
    task = PaperTask(n=6, L=6)
    model = sp.paper_model(task, "relu_length", **paper_weights(1, 2, 6, seed=1))
    a = sp.evaluate(model, samples=40, seed=3)
    b = sp.evaluate(model, samples=40, seed=3)
    c = sp.evaluate(model, samples=40, seed=4)
    assert a.source == "sampled" and not a.exhaustive and a.n_sequences == 40
    assert "lower estimate" in a.method and "seed 3" in a.method
    assert a.max_error == b.max_error != c.max_error
    assert a.n_positions == 40 * 6
    assert a.summary()["source"] == "sampled"
    default = sp.evaluate(model)
    assert default.n_sequences == 1000 and default.seed == 0
    with pytest.raises(TypeError, match="unexpected options"):
        sp.evaluate(sp.AttentionModel(sp.TriggerTask(1, 2), "softmax",
                                      A=np.zeros((6, 6))), samples=3)


# ------------------------------------------------------- adversarial content search

def test_adversarial_search_improves_on_its_starts_and_stays_in_the_box():
    from sinkproof.adversary import worst_content

    task = PaperTask(n=6, L=6)
    model = sp.paper_model(task, "softmax", **paper_weights(1, 2, 6, seed=9))
    found = worst_content(model, starts=2, seed=5, maxiter=15)
    starts = sp.evaluate(model, list(task.sample(2, seed=5)))
    assert found.max_error > starts.max_error  # strictly: the search moved uphill
    task.check_sequence(found.x)  # a valid sequence: content in [-1, 1], one trigger
    out, _ = model.forward(found.x)
    err = np.linalg.norm(out - task.targets(found.x), axis=1)
    assert err[found.position] == pytest.approx(found.max_error, rel=1e-12)
    assert err.max() == pytest.approx(found.max_error, rel=1e-12)
    assert "not certified" in found.method and found.trigger_at == task.trigger_position(found.x)


def test_evaluate_with_search_reports_both_estimates():
    from sinkproof.constructions import paper_relu_solution

    task = PaperTask(n=5, L=5)
    model = sp.paper_model(task, "softmax", **paper_weights(1, 1, 5, seed=2))
    ev = sp.evaluate(model, samples=20, seed=1, search=1)
    assert ev.adversarial is not None and "adversarial" in ev.method
    assert ev.worst_error == max(ev.max_error, ev.adversarial.max_error)
    assert ev.summary()["worst_error"] == ev.worst_error
    exact = sp.evaluate(paper_relu_solution(task), samples=20, search=1)
    assert exact.worst_error < 1e-14  # the (P3) construction has nothing to find
    with pytest.raises(ValueError, match="finite family is exhaustive"):
        sp.evaluate(sp.paper_model(PaperTask(n=5, L=4, content=[[0.0, 1.0]]), "softmax",
                                   **paper_weights(1, 1, 5, seed=2)), search=1)
