"""The theorem registry: hypotheses as data, applies_to, exact instantiation."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

import sinkproof as sp
from sinkproof.constructions import relu_solution, softmax_solution
from sinkproof.modelclass import ModelClass
from sinkproof.tasks import PaperTask
from sinkproof.theorems import THEOREMS, theorem

TASK = sp.TriggerTask(2, 4)  # signed basis: 0 = e1, 1 = e2, 2 = -e1, 3 = -e2
FIXED = ModelClass("softmax", 1, "fixed")
LEARNED = ModelClass("softmax", 1, "learned")


def test_registry_names_and_lookup():
    assert list(THEOREMS) == [f"theorem{i}" for i in range(1, 9)]
    assert theorem(3) is THEOREMS["theorem3"]
    with pytest.raises(ValueError, match="unknown theorem"):
        theorem("theorem9")
    for th in THEOREMS.values():
        assert th.statement and th.proof and th.error_hypothesis
        assert repr(th).startswith(f"Theorem {th.number}")


@pytest.mark.parametrize("name", ["theorem1", "theorem2", "theorem3"])
def test_sink_bounds_apply_only_to_one_softmax_head_with_token_values(name):
    th = THEOREMS[name]
    assert th.applies_to(FIXED)[0] and th.applies_to(LEARNED)[0]
    assert th.applies_to(ModelClass("softmax", 1, "fixed", "onehot"))[0]
    for other, word in [(ModelClass("softmax", 2, "fixed"), "heads"),
                        (ModelClass("relu", 1, "fixed"), "kind"),
                        (ModelClass("softmax", 1, "fixed", value_features="position"),
                         "value_features")]:
        ok, reasons = th.applies_to(other)
        assert not ok and any(r.startswith(word) for r in reasons)


def test_fixed_value_theorems_reject_learned_values():
    for name in ("theorem5", "theorem6"):
        ok, reasons = THEOREMS[name].applies_to(LEARNED)
        assert not ok and reasons[0].startswith("values")


def test_theorem4_applies_to_classes_containing_its_witness():
    th = THEOREMS["theorem4"]
    assert th.applies_to(ModelClass("relu", 1, "fixed", "inverse"))[0]
    assert th.applies_to(ModelClass("relu", 1, "learned", "any"))[0]
    assert not th.applies_to(ModelClass("relu", 1, "fixed", "none"))[0]
    assert not th.applies_to(FIXED)[0]
    with pytest.raises(TypeError, match="ModelClass"):
        th.applies_to("relu")


def test_theorem1_instantiation_is_exact():
    inst = THEOREMS["theorem1"].instantiate(TASK, "1/100")
    assert len(inst.items) == TASK.k * TASK.T
    item = inst.bound_at((1, 1, 1), 3)
    assert item.bound == sympy.Rational(99, 100) and item.needs == (((1, 1, 1), 0), ((1, 1, 1), 3))
    assert inst.implies("99/100", (1, 1, 1), 3) and not inst.implies("991/1000", (1, 1, 1), 3)
    assert inst.bound_at((0, 1), 2) is None
    assert ((0,), 0) in inst.hypothesis
    assert "theorem1" in repr(inst) and "| BOS mass at |" in inst._repr_markdown_()


def test_theorem1_learned_values_need_the_model():
    with pytest.raises(ValueError, match="model="):
        THEOREMS["theorem1"].instantiate(TASK, 0.01, values="learned")
    U = 2 * sp.fixed_values(TASK.p)
    model = sp.AttentionModel(TASK, "softmax", softmax_solution(TASK, 3.0).A, U)
    inst = THEOREMS["theorem1"].instantiate(TASK, "1/100", model=model)
    assert inst.model_class.values == "learned" and not inst.general
    assert THEOREMS["theorem1"].instantiate(TASK, "1/100").general
    assert inst.bound_at((0,), 1).bound == 1 - sympy.Rational(2, 100) / 2  # 1 - 2ε/‖v_c‖
    other = model.replace(U=3 * sp.fixed_values(TASK.p))
    with pytest.raises(ValueError, match="another value map"):
        inst.check(other)


def test_theorem2_pairs_and_gaps():
    inst = THEOREMS["theorem2"].instantiate(TASK, "1/100")
    by_pair = {tuple(s[0] for s, _ in i.targets): i for i in inst.items if i.targets[0][1] == 1}
    assert by_pair[(0, 2)].bound == 1 - sympy.Rational(2, 100) / (1 - sympy.Rational(2, 100))
    g = sympy.sqrt(2) / 2
    assert sympy.simplify(by_pair[(0, 1)].bound - (1 - sympy.Rational(1, 50) / (g - sympy.Rational(
        1, 50)))) == 0
    assert len(by_pair[(0, 1)].needs) == 5
    wide = THEOREMS["theorem2"].instantiate(TASK, "0.4")  # 2ε = 0.8 > 1/√2
    assert all("<= 2ε" in why for _, why in wide.no_bound)
    with pytest.raises(ValueError, match="T >= 2"):
        THEOREMS["theorem2"].instantiate(sp.TriggerTask(2, 1), 0.01)


def test_theorem3_hull_bounds_and_no_bound_cases():
    inst = THEOREMS["theorem3"].instantiate(TASK, "1/100")
    assert inst.bound_at((0, 1), 2).bound == 1 - sympy.sqrt(2) / 100  # d = 1/√2
    assert inst.bound_at((0, 0, 0), 3).bound == sympy.Rational(99, 100)  # = Theorem 1
    assert inst.bound_at((0, 2), 2) is None  # e1, -e1: 0 in the hull
    assert inst.bound_at((sp.TRIG, 0), 2) is None  # the trigger's value 0
    reasons = dict(inst.no_bound)
    assert "0 lies in the hull" in reasons[((sp.TRIG, 0), 2)]
    explicit = THEOREMS["theorem3"].instantiate(TASK, 0.01, positions=[((0, sp.TRIG), 2)])
    assert not explicit.items and "trigger position" in explicit.no_bound[0][1]


def test_theorem4_witness_verifies():
    inst = THEOREMS["theorem4"].instantiate(sp.TriggerTask(1, 3))
    assert inst.symbolic().holds and inst.family_check().holds
    assert inst.model.norm == pytest.approx(2.0)
    onehot = THEOREMS["theorem4"].instantiate(sp.TriggerTask(1, 3, positions="onehot"))
    assert onehot.family_check().holds
    with pytest.raises(ValueError, match="inverse"):
        onehot.symbolic()


def test_theorem5_instance():
    inst = THEOREMS["theorem5"].instantiate(sp.TriggerTask(2, 6), "1/100")
    assert inst.needed.enclosure_below[0] > 0.01
    assert sympy.Symbol("B", nonnegative=True) in inst.expr.free_symbols
    assert inst.check(softmax_solution(sp.TriggerTask(2, 6), 5.0))


def test_bad_instantiation_input():
    with pytest.raises(ValueError, match="eps must be >= 0"):
        THEOREMS["theorem1"].instantiate(TASK, -0.1)
    with pytest.raises(TypeError, match="Theorem 1 needs a task, got str"):
        THEOREMS["theorem1"].instantiate("task", 0.1)
    with pytest.raises(TypeError, match="Theorem 1 needs a task with a finite vocabulary"):
        THEOREMS["theorem1"].instantiate(PaperTask(), 0.1)
    with pytest.raises(ValueError, match="lengths"):
        THEOREMS["theorem1"].instantiate(TASK, 0.1, lengths=[9])
    inst = THEOREMS["theorem1"].instantiate(TASK, 0.1)
    with pytest.raises(ValueError, match="not in the theorem's class"):
        inst.check(relu_solution(TASK))
    two_heads = sp.AttentionModel(TASK, "softmax", np.zeros((2, TASK.D, TASK.D)))
    with pytest.raises(ValueError, match="not in the theorem's class"):
        inst.check(two_heads)


def test_relu_witness_breaks_the_softmax_conclusion():
    # the hypotheses matter: the ReLU head meets every error hypothesis (error 0) and
    # still has no sink, which is why Theorems 1-3 are stated for softmax only
    inst = THEOREMS["theorem1"].instantiate(TASK, 0)
    relu = relu_solution(TASK)
    for item in inst.items:
        (seq, t), = item.targets
        assert item.value > 0.99 and relu.bos_mass(seq)[0, t] == 0


def test_theorem6_delegates_to_the_sink_map_and_agrees_with_theorems_1_and_3():
    task = sp.TriggerTask(1, 2)
    smap = THEOREMS["theorem6"].instantiate(task, "1/10")
    t1 = THEOREMS["theorem1"].instantiate(task, "1/10")
    t3 = THEOREMS["theorem3"].instantiate(task, "1/10")
    for seq, t in [((0,), 1), ((1, 1), 2), ((0, 0), 2)]:
        # the logit-sharing program is at least the simplex argument, up to the rounding
        # its certificate pays (rationalised multipliers: ~1e-8 here)
        assert smap.bound(seq, t) >= t3.bound_at(seq, t).value - 1e-6
        assert smap.bound(seq, t) >= t1.bound_at(seq, t).value - 1e-6


def test_theorem3_on_the_paper_task_is_the_papers_fixed_value_bound():
    # the registry's Theorem 3 on PaperTask: the fixed-value floor 1/√2 gives 1 - √2 ε at
    # every non-trigger position, continuous content included; exactly, not in floats
    import sympy

    for task in (PaperTask(), PaperTask(n=4, L=5, content=[[0.5], [-1.0]])):
        inst = THEOREMS["theorem3"].instantiate(task, sympy.Rational(1, 20))
        assert inst.everywhere is not None and inst.items == ()
        assert sympy.simplify(inst.everywhere.bound - (1 - sympy.sqrt(2) / 20)) == 0
        assert inst.everywhere.value < 1 - 2**0.5 / 20 + 1e-15
    with pytest.raises(TypeError, match="residual model"):
        THEOREMS["theorem3"].instantiate(PaperTask(residual=True), 0.05)
    with pytest.raises(TypeError, match="needs a task with a finite vocabulary"):
        THEOREMS["theorem3"].instantiate(PaperTask(), 0.05, values="learned")
