"""The public Hypothesis strategies draw valid objects, honour their options and shrink sensibly."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import examples
from hypothesis import find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

import sinkproof as sp
from sinkproof import strategies as sps
from sinkproof.constructions import relu_solution
from sinkproof.modelclass import ModelClass

FAST = settings(max_examples=examples(25), deadline=None)  # 25 in CI


@FAST
@given(sps.tasks())
def test_tasks_are_valid_and_small(task):
    assert isinstance(task, sp.TriggerTask)
    assert 1 <= task.p <= 3 and 1 <= task.T <= 5
    assert task.content.shape == (task.k, task.p)
    assert np.all(np.isfinite(task.content))
    assert task == sp.TriggerTask.from_description(task.describe())


@FAST
@given(sps.tasks(max_p=2, max_T=3, content="gaussian", positions=["onehot", "none"],
                 triggers="multi", min_T=2))
def test_task_options_are_honoured(task):
    assert task.content_scheme == "gaussian"
    assert task.positions in ("onehot", "none")
    assert task.triggers == "multi"
    assert 2 <= task.T <= 3 and task.p <= 2


def test_task_options_reject_unknown_names():
    with pytest.raises(ValueError, match="unknown positional scheme 'sinusoid'"):
        find(sps.tasks(positions="sinusoid"), lambda t: True)
    with pytest.raises(ValueError, match="max_T must be >= 3"):
        find(sps.tasks(min_T=3, max_T=2), lambda t: True)


@FAST
@given(st.data())
def test_sequences_belong_to_the_family(data):
    task = data.draw(sps.tasks())
    seq = data.draw(sps.sequences(task))
    codes = task.encode(seq)  # raises if the sequence is not in the family
    assert 1 <= codes.size <= task.T
    assert task.targets(seq).shape == (len(seq) + 1, task.p)


@FAST
@given(st.data())
def test_sequence_trigger_option(data):
    task = data.draw(sps.tasks(max_T=4))
    lo = data.draw(st.integers(1, task.T))
    with_trigger = data.draw(sps.sequences(task, min_length=lo, trigger=True))
    without = data.draw(sps.sequences(task, min_length=lo, trigger=False))
    assert sp.TRIG in with_trigger and sp.TRIG not in without
    assert len(with_trigger) >= lo and len(without) >= lo


def test_multi_trigger_family_gets_several_triggers_single_never():
    multi = sp.TriggerTask(p=1, T=4, triggers="multi")
    single = multi.replace(triggers="single")
    seq = find(sps.sequences(multi), lambda s: s.count(sp.TRIG) >= 2)
    assert seq == (sp.TRIG, sp.TRIG)
    with pytest.raises(NoSuchExample):
        find(sps.sequences(single), lambda s: s.count(sp.TRIG) >= 2)


@FAST
@given(st.data())
def test_models_are_bounded_and_finite(data):
    task = data.draw(sps.tasks(max_p=2, max_T=3))
    model = data.draw(sps.models(task, heads=(1, 3), scale=2.5))
    assert 1 <= model.H <= 3
    assert np.abs(model.A).max() <= 2.5
    assert np.abs(model.U).max() <= 2.0
    assert model.A.shape == (model.H, task.D, task.D)
    ev = sp.evaluate(model)
    assert np.isfinite(ev.max_error)
    assert np.all(np.isfinite(ev.bos_nontrigger.mean))


@FAST
@given(st.data())
def test_model_class_fixes_kind_heads_values(data):
    cls = ModelClass(kind="relu", heads=2, values="fixed")
    task = data.draw(sps.tasks(max_p=2, max_T=3))
    model = data.draw(sps.models(task, model_class=cls))
    assert cls.contains(model)
    assert model.kind == "relu" and model.H == 2 and model.values == "fixed"


@FAST
@given(st.data())
def test_large_logit_models_keep_nonbos_mass_finite_in_log_domain(data):
    task = data.draw(sps.tasks(max_p=2, max_T=3))
    model = data.draw(sps.models(task, kind="softmax", scale=[500.0]))
    seq = data.draw(sps.sequences(task))
    out, w = model.forward(seq)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(w))
    lnb = model.log_nonbos(seq)[:, 1:]
    assert not np.any(np.isnan(lnb)) and np.all(lnb <= 1e-12)


@pytest.mark.slow  # 2-7 s of subprocesses/compiles: CI runs it
def test_large_scale_reaches_logits_beyond_float64_resolution_of_alpha0():
    task = sp.TriggerTask(p=1, T=2)
    model = find(sps.models(task, kind="softmax", scale=[500.0]),
                 lambda m: m.log_nonbos([0])[0, 1] < -60)
    out, w = model.forward([0])
    assert w[0, 1, 0] == 1.0  # α_0 rounds to 1 in float64 ...
    assert np.isfinite(model.log_nonbos([0])[0, 1])  # ... but 1 - α_0 is still known


def test_tasks_shrink_to_the_simplest_instance():
    task = find(sps.tasks(), lambda t: t.T >= 3)
    assert (task.p, task.T, task.content_scheme, task.positions, task.triggers) == (
        1, 3, "signed", "inverse", "single")
    task = find(sps.tasks(), lambda t: t.content_scheme == "custom")
    assert task.k == 1 and np.all(task.content == 0)


def test_sequences_shrink_to_short_plain_sequences():
    task = sp.TriggerTask(p=2, T=5)
    assert find(sps.sequences(task), lambda s: True) == (0,)
    assert find(sps.sequences(task), lambda s: sp.TRIG in s) == (sp.TRIG,)
    assert find(sps.sequences(task), lambda s: len(s) >= 3) == (0, 0, 0)


def test_models_shrink_to_a_single_nonzero_entry():
    task = sp.TriggerTask(p=1, T=2)
    model = find(sps.models(task, kind="softmax", values="fixed"),
                 lambda m: np.abs(m.A).max() >= 1.0)
    assert np.count_nonzero(model.A) == 1 and np.abs(model.A).max() == 1.0


@FAST
@given(st.data())
def test_near_solutions_stay_within_noise_of_the_construction(data):
    task = data.draw(sps.tasks(max_p=2, max_T=3, positions=["inverse", "onehot"]))
    model = data.draw(sps.near_solutions(task, kind="relu", noise=1e-3))
    assert np.abs(model.A - relu_solution(task).A).max() <= 1e-3 * (1 + 1e-9)
    exact = data.draw(sps.near_solutions(task, kind="relu", noise=0.0))
    assert sp.evaluate(exact).max_error < 1e-12


def test_near_softmax_solutions_are_accurate_at_large_L():
    task = sp.TriggerTask(p=1, T=3)
    model = find(sps.near_solutions(task, kind="softmax", noise=0.0),
                 lambda m: m.norm > 30)  # L > 18.5
    assert sp.evaluate(model).max_error < 3 * np.exp(-18.5)


@FAST
@given(sps.task_model_sequence(kind="softmax", heads=(1, 2)))
def test_softmax_weights_lie_on_the_simplex(tms):
    task, model, seq = tms
    _, w = model.forward(seq)
    assert np.allclose(w.sum(axis=-1), 1.0)
    assert model.task is task


@FAST
@given(st.data())
def test_model_classes_contain_the_models_drawn_for_them(data):
    cls = data.draw(sps.model_classes(heads=(1, 3), positions=["inverse", "onehot", "none"]))
    task = data.draw(sps.tasks(max_p=2, max_T=3, positions=cls.positions))
    model = data.draw(sps.models(task, model_class=cls))
    assert cls.contains(model)


def test_model_classes_shrink_to_one_softmax_head():
    cls = find(sps.model_classes(), lambda c: True)
    assert (cls.kind, cls.heads, cls.values, cls.positions) == ("softmax", 1, "learned", "inverse")


# ------------------------------------------------- strategies of tasks, st.from_type
@FAST
@given(sps.models(sps.tasks(max_p=2, max_T=3), kind="relu", heads=(1, 2)))
def test_models_take_a_strategy_of_tasks(model):
    assert isinstance(model, sp.AttentionModel) and model.kind == "relu"
    assert 1 <= model.task.p <= 2 and 1 <= model.task.T <= 3 and 1 <= model.H <= 2
    assert model.A.shape == (model.H, model.task.D, model.task.D)


@FAST
@given(sps.sequences(sps.tasks(max_T=3, triggers="single"), trigger=True, max_length=2))
def test_sequences_of_a_strategy_of_tasks_come_with_their_task(pair):
    task, seq = pair
    assert isinstance(task, sp.TriggerTask) and 1 <= len(seq) <= min(2, task.T)
    assert seq.count(sp.TRIG) == 1
    task.encode(seq)  # in the family


@FAST
@given(sps.near_solutions(sps.tasks(max_p=2, max_T=3, positions="inverse"), kind="relu"))
def test_near_solutions_take_a_strategy_of_tasks(model):
    assert model.kind == "relu" and sp.evaluate(model).max_error < 0.5


@pytest.mark.slow  # 2-7 s of subprocesses/compiles: CI runs it
def test_a_strategy_of_tasks_shrinks_with_the_task():
    model = find(sps.models(sps.tasks()), lambda m: m.task.T >= 2)
    assert (model.task.p, model.task.T) == (1, 2)
    task, seq = find(sps.sequences(sps.tasks()), lambda ts: len(ts[1]) >= 2)
    # the task shrinks with the sequence; which two tokens it keeps is Hypothesis's choice
    assert (task.p, task.T, len(seq)) == (1, 2, 2) and seq in set(task.sequences(2))


@FAST
@given(st.from_type(sp.TriggerTask), st.from_type(sp.AttentionModel),
       st.from_type(sp.PaperTask), st.from_type(ModelClass))
def test_from_type_draws_every_registered_class(task, model, paper, model_class):
    assert isinstance(task, sp.TriggerTask) and task.T <= 5
    assert isinstance(model, sp.AttentionModel) and model.task.T <= 5
    assert isinstance(paper, sp.PaperTask) and 4 <= paper.n <= 6 and 3 <= paper.L <= 6
    assert isinstance(model_class, ModelClass)


@FAST
@given(st.builds(sp.evaluate, st.from_type(sp.AttentionModel)))
def test_builds_infers_registered_arguments(evaluation):
    assert np.isfinite(evaluation.max_error)


@FAST
@given(sps.paper_tasks(content=["grid", "custom"]))
def test_paper_tasks_are_finite_when_asked(task):
    assert task.content_scheme in ("grid", "custom") and task.content.shape[1] == task.n - 3


@settings(max_examples=15, deadline=None, database=None)
@given(sps.models(sps.tasks(max_p=2, max_T=3)))
def test_a_falsifying_example_prints_a_model_that_pastes_back_exactly(model):
    """Hypothesis prints a drawn model as ``AttentionModel.from_dict({...})``: evaluated, that
    text rebuilds the very same weights, bit for bit (the plain repr shows only norms)."""
    from hypothesis.vendor.pretty import pretty

    from sinkproof import AttentionModel

    text = pretty(model)
    assert text.startswith("AttentionModel.from_dict(")
    again = eval(text, {"AttentionModel": AttentionModel})  # noqa: S307 - our own output
    assert again.kind == model.kind and again.task.describe() == model.task.describe()
    assert np.array_equal(again.A, model.A) and np.array_equal(again.U, model.U)
