"""AttentionModel with every attention map: parameters, gate, serialisation, evaluation."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.attention import MAPS, get_map

KINDS = list(MAPS)  # the registry's names are checked in test_attention_conformance


def random_model(task, kind, seed, scale=2.0, H=2):
    rng = np.random.default_rng(seed)
    amap = MAPS[kind]
    kw = {}
    if amap.param_names:
        kw["map_params"] = rng.standard_normal((H, len(amap.param_names)))
    if amap.properties.gated:
        kw["gate_w"] = rng.standard_normal((H, task.D))
        kw["gate_c"] = rng.standard_normal(H)
    return sp.AttentionModel(task, kind, scale * rng.standard_normal((H, task.D, task.D)),
                             rng.standard_normal((H, task.p, task.p + 3)), **kw)


def reference_forward(model, seq):
    """Outputs by the definition, one position and one head at a time, through the map alone."""
    task = model.task
    phi = task.features(seq)
    codes = np.concatenate([[task.bos_code], task.encode(seq)])
    amap = model.attention_map
    out = np.zeros((len(codes), task.p))
    for t in range(len(codes)):
        for h in range(model.H):
            s = (phi[t] @ model.A[h] @ phi[: t + 1].T)[None, None, :]
            w, _ = amap.weights(s, t, model.map_params[h : h + 1])
            g = 1.0
            if amap.properties.gated:
                g = 1.0 / (1.0 + np.exp(-(model.gate_w[h] @ phi[t] + model.gate_c[h])))
            out[t] += g * w[0, 0] @ model.value_table[h, codes[: t + 1]]
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_every_map_builds_a_model_and_forward_follows_the_definition(kind):
    task = sp.TriggerTask(p=2, T=4)
    model = random_model(task, kind, seed=3)
    assert model.attention_map is MAPS[kind]
    for seq in [(0,), (1, sp.TRIG), (0, 2, 3, sp.TRIG), (3, 3, 1, 0)]:
        out, w = model.forward(seq)
        np.testing.assert_allclose(out, reference_forward(model, seq), rtol=1e-12, atol=1e-12)
        assert np.all(np.triu(w, k=1) == 0)
        assert np.all(w >= 0)


@pytest.mark.parametrize("kind", KINDS)
def test_serialisation_round_trip_keeps_map_parameters_and_gate(kind):
    task = sp.TriggerTask(p=1, T=3, positions="onehot")
    model = random_model(task, kind, seed=5)
    back = sp.AttentionModel.from_dict(json.loads(json.dumps(model.to_dict())))
    assert back.kind == kind
    np.testing.assert_array_equal(back.map_params, model.map_params)
    if MAPS[kind].properties.gated:
        np.testing.assert_array_equal(back.gate_w, model.gate_w)
        np.testing.assert_array_equal(back.gate_c, model.gate_c)
    seq = (0, 1, sp.TRIG)
    np.testing.assert_array_equal(back.forward(seq)[0], model.forward(seq)[0])
    same = model.replace(A=model.A * 2)
    np.testing.assert_array_equal(same.map_params, model.map_params)


def test_defaults_and_replace_to_another_kind():
    task = sp.TriggerTask(p=1, T=2)
    m = sp.AttentionModel(task, "sink_logit", np.zeros((task.D, task.D)))
    assert m.map_params.shape == (1, 1) and m.map_params[0, 0] == 0.0
    g = m.replace(kind="gated_softmax")
    assert g.map_params.shape == (1, 0)
    np.testing.assert_array_equal(g.gate_table, 0.5)  # σ(0)
    assert m.replace(kind="softmax").gate_w is None


def test_sink_logit_at_zero_is_softmax1():
    task = sp.TriggerTask(p=2, T=3)
    rng = np.random.default_rng(1)
    A = rng.standard_normal((task.D, task.D))
    a = sp.evaluate(sp.AttentionModel(task, "sink_logit", A, map_params=[[0.0]]))
    b = sp.evaluate(sp.AttentionModel(task, "softmax1", A))
    assert a.max_error == b.max_error
    np.testing.assert_array_equal(a.null_mass_nontrigger.mean, b.null_mass_nontrigger.mean)


def test_bad_map_arguments_get_clear_errors():
    task = sp.TriggerTask(p=1, T=2)
    A = np.zeros((task.D, task.D))
    with pytest.raises(ValueError, match="unknown attention kind 'tanh'"):
        sp.AttentionModel(task, "tanh", A)
    with pytest.raises(ValueError, match="map_params for sigmoid must have shape"):
        sp.AttentionModel(task, "sigmoid", A, map_params=[[1.0, 2.0]])
    with pytest.raises(ValueError, match="non-finite"):
        sp.AttentionModel(task, "sigmoid", A, map_params=[[np.nan]])
    with pytest.raises(ValueError, match="has no gate"):
        sp.AttentionModel(task, "softmax", A, gate_c=[1.0])
    with pytest.raises(ValueError, match="gate_w must have shape"):
        sp.AttentionModel(task, "gated_softmax", A, gate_w=np.zeros((1, 3)))
    with pytest.raises(ValueError, match="unknown attention kind"):
        get_map(3)


def test_user_parameters_are_copied_not_mutated():
    task = sp.TriggerTask(p=1, T=2)
    b = np.array([[0.5]])
    b.setflags(write=False)
    m = sp.AttentionModel(task, "sigmoid", np.zeros((task.D, task.D)), map_params=b)
    assert m.map_params is not b and not m.map_params.flags.writeable
    w = np.zeros(task.D)
    sp.AttentionModel(task, "gated_softmax", np.zeros((task.D, task.D)), gate_w=w)
    assert w.flags.writeable


def loop_measures(model, eta=1e-9):
    """Error, BOS mass, null mass by the definitions, over ``model.forward`` per sequence."""
    props = model.attention_map.properties
    vnorm = np.linalg.norm(model.value_table, axis=-1)
    worst, bos, null = 0.0, [], []
    for seq in model.task.sequences():
        out, w = model.forward(seq)
        worst = max(worst, float(np.linalg.norm(out - model.task.targets(seq), axis=1).max()))
        codes = np.concatenate([[model.task.bos_code], model.task.encode(seq)])
        for t in range(1, len(seq) + 1):
            if seq[t - 1] == sp.TRIG:
                continue
            row = w[:, t, : t + 1]
            on_null = np.array([row[h][vnorm[h, codes[: t + 1]] <= eta].sum()
                                for h in range(model.H)])
            total = row.sum(axis=1)
            if props.virtual_null or props.gated:
                on_null = on_null + (1.0 - total)  # the slot of value 0 takes the rest
            elif not props.on_simplex:
                on_null = np.where(total > 0, on_null / np.where(total > 0, total, 1.0), 0.0)
            bos.append(row[:, 0])
            null.append(on_null)
    return worst, np.array(bos), np.array(null)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=6)
@given(data=st.data())
def test_exhaustive_evaluation_agrees_with_the_loop_for_every_map(kind, data):
    task = sp.TriggerTask(p=data.draw(st.integers(1, 2)), T=data.draw(st.integers(1, 4)),
                          positions=data.draw(st.sampled_from(["inverse", "onehot", "none"])))
    model = random_model(task, kind, data.draw(st.integers(0, 2**31)),
                         scale=data.draw(st.sampled_from([0.3, 3.0])),
                         H=data.draw(st.integers(1, 2)))
    ev = sp.evaluate(model)
    worst, bos, null = loop_measures(model)
    assert ev.max_error == pytest.approx(worst, rel=1e-12, abs=1e-13)
    if len(bos):
        np.testing.assert_allclose(ev.bos_nontrigger.mean, bos.mean(axis=0), atol=1e-12)
        np.testing.assert_allclose(ev.bos_nontrigger.min, bos.min(axis=0), atol=1e-12)
        np.testing.assert_allclose(ev.null_mass_nontrigger.mean, null.mean(axis=0), atol=1e-12)
