"""The learned-value engine: sound against every counterexample, classes match real models,
the tree's bound is monotone, budgets and Ctrl-C return what was found."""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.bnb import ValueBox, branch_and_bound, build_relaxation, prove
from sinkproof.bnb.primal import PrimalSolver
from sinkproof.bnb.relaxation import family_prefixes, prefix_classes
from sinkproof.checker import verify_file
from sinkproof.checker.rules import tree as trusted
from sinkproof.constructions import softmax_solution
from sinkproof.model import AttentionModel

DATA = Path(__file__).parent / "data"
EPS = Fraction(1, 20)


def load_witness(name: str) -> tuple[sp.TriggerTask, AttentionModel]:
    """A counterexample the search found (``sinkproof check`` on the claim files, seed 0),
    checked by the trusted checker first."""
    path = DATA / f"bnb_{name}_witness.json"
    assert verify_file(path).ok
    d = json.loads(path.read_text())
    task = sp.TriggerTask.from_description(d["instance"]["task"])

    def arr(x):
        return np.array([[[float(Fraction(v)) for v in row] for row in h] for h in x])

    U = d["data"]["U"]
    return task, AttentionModel(task, "softmax", A=arr(d["data"]["A"]),
                                U=arr(U) if isinstance(U, list) else None)


def bos_mass(model: AttentionModel, prefix: tuple[int, ...]) -> float:
    _, w = model.forward(list(prefix))
    return float(w[0, len(prefix), 0])


def model_error(model: AttentionModel) -> float:
    task, worst = model.task, 0.0
    for seq in task.sequences():
        out, _ = model.forward(list(seq))
        worst = max(worst, float(np.linalg.norm(out - task.targets(seq), axis=1).max()))
    return worst


# ------------------------------------------------------------------ soundness: counterexamples
def test_onehot_null_is_not_proved_and_bounds_stay_below_the_witness():
    task, model = load_witness("onehot")
    assert bos_mass(model, (0,)) < 0.5
    result = prove("examples/claims/learned_values_homogeneous_onehot.toml", max_nodes=12,
                   time_limit=20)
    assert result.status != "proved" and result.certificate is None
    bounds = prove(task, eps=EPS, targets=[(0,), (0, 0), (2, 2, 2)], max_nodes=12)
    for outcome in bounds.targets:
        assert (outcome.certified or 0) <= bos_mass(model, outcome.target)
        assert outcome.tree.bos_bound <= bos_mass(model, outcome.target) + 1e-9


@pytest.mark.slow
def test_zero_valued_trigger_after_the_trigger_is_not_proved():
    task, model = load_witness("after_trigger")
    result = prove("examples/claims/after_trigger.toml", max_nodes=10, time_limit=10)
    assert result.status != "proved"
    bounds = prove(task, eps=EPS, at="after_trigger", values="fixed", max_nodes=5)
    assert len(bounds.targets) == 36
    for outcome in bounds.targets:
        assert (outcome.certified or 0) <= bos_mass(model, outcome.target) < 0.1


def test_zero_valued_trigger_bounds_stay_below_the_witness():
    task, model = load_witness("after_trigger")
    targets = [(-1, 0), (0, -1, 3), (-1, 2, 1)]
    bounds = prove(task, eps=EPS, targets=targets, values="fixed", max_nodes=5)
    for outcome in bounds.targets:
        assert (outcome.certified or 0) <= bos_mass(model, outcome.target) < 0.1


def test_two_heads_go_to_the_several_head_engine():
    result = prove("examples/claims/two_heads_learned_nontrigger.toml")
    assert result.heads == 2 and result.status == "open" and result.certificate is None
    with pytest.raises(ValueError, match="softmax heads"):
        prove({"task": {"p": 2, "T": 3}, "model": {"kind": "relu", "heads": 1},
               "hypothesis": {"max_error": 0.05}, "conclusion": {"min_bos_mass": 0.5}})


# ------------------------------------------------------- the classes are what a model shares
@pytest.mark.parametrize("positions", ["inverse", "onehot", "none"])
def test_a_real_model_gives_equal_logit_ratios_within_each_class(positions):
    task = sp.TriggerTask(p=2, T=3, positions=positions)
    rng = np.random.default_rng(3)
    model = AttentionModel(task, "softmax", A=rng.normal(size=(task.D, task.D)))
    seen: dict = {}
    for prefix in family_prefixes(task):
        _, w = model.forward(list(prefix))
        t = len(prefix)
        row = w[0, t]
        for j, tok in enumerate(prefix, start=1):
            key = (prefix[-1], tuple(task.position_features_exact(t)), tok,
                   tuple(task.position_features_exact(j)))
            seen.setdefault(key, []).append(row[j] / row[0])
        assert set(prefix_classes(task, prefix)) <= set(seen)
    for ratios in seen.values():
        assert np.allclose(ratios, ratios[0], rtol=1e-9)
    # the checker derives the same classes on its own
    inst = trusted.Instance({"task": task.describe(), "values": "learned", "family": "S_T",
                             "eps": "1/20"})
    for prefix in family_prefixes(task):
        assert inst.classes(prefix) == prefix_classes(task, prefix)


# ------------------------------------------- soundness: accurate models obey every leaf bound
def _leaf_holds_at_model(inst, target, leaf, c0, model) -> bool:
    """Evaluate the leaf's inequality ``0 <= c0 + Σ h_l u_l`` at the model's own logits."""
    box = trusted._read_box(inst, leaf["box"], "box")
    vals = model.value_table[0]
    task = model.task
    code = {tok: (task.trig_code if tok == -1 else tok) for tok in inst.tokens}
    inside = all(
        (lo is None or vals[code[tok]][c] >= float(lo)) and
        (hi is None or vals[code[tok]][c] <= float(hi))
        for tok, ivs in box.items() for c, (lo, hi) in enumerate(ivs))
    if not inside:
        return True
    _, w = model.forward(list(target))
    Z = 1.0 / w[0, len(target), 0]
    return 1 + float(c0) + 1e-9 >= Z


@settings(max_examples=4, deadline=None)
@given(L=st.floats(4.0, 8.0), noise=st.floats(0.0, 0.3), seed=st.integers(0, 10**6),
       c=st.integers(0, 3), n=st.integers(1, 3))
def test_accurate_learned_value_models_respect_the_certified_bound(L, noise, seed, c, n):
    task = sp.TriggerTask(p=2, T=3)
    base = softmax_solution(task, L)
    rng = np.random.default_rng(seed)
    U = base.U[0] + noise * rng.normal(size=base.U[0].shape) * 0.05
    A = base.A[0] + noise * rng.normal(size=base.A[0].shape)
    model = AttentionModel(task, "softmax", A=A, U=U)
    err = model_error(model)
    eps = Fraction(math.ceil(err * 1e6) + 1, 10**6)
    target = (c,) * n
    result = prove(task, eps=eps, targets=[target], max_nodes=12, time_limit=10)
    outcome = result.targets[0]
    if outcome.certified is not None:
        assert float(outcome.certified) <= bos_mass(model, target) + 1e-12
    inst = trusted.Instance({"task": task.describe(), "values": "learned", "family": "S_T",
                             "eps": str(eps)})
    for leaf, c0 in outcome.leaves.values():
        assert _leaf_holds_at_model(inst, target, leaf, c0, model)


# ------------------------------------------------------------------- the tree and its budget
def test_bound_is_monotone_and_children_never_exceed_parents():
    task = sp.TriggerTask(p=2, T=3)
    relax = build_relaxation(task, EPS, (0, 0))
    tree = branch_and_bound(PrimalSolver(relax), ValueBox.root(task, "learned"), None,
                            max_nodes=25)
    bounds = [b for _, _, b in tree.history]
    assert len(bounds) >= 2 and all(a > b for a, b in zip(bounds, bounds[1:]))
    assert math.isfinite(tree.bound) and tree.bound < 1.0

    def walk(node):
        if node.children:
            for kid in node.children:
                assert kid.bound <= node.bound
                walk(kid)

    walk(tree.root)


def test_parametrised_and_scratch_problems_agree():
    task = sp.TriggerTask(p=2, T=3)
    relax = build_relaxation(task, EPS, (1, 1, 1))
    box = ValueBox.root(task, "learned")
    boxes = [box, *box.split(1, 1, Fraction(1, 2)), box.split(-1, 0, Fraction(0))[0]]
    fast, slow = PrimalSolver(relax), PrimalSolver(relax, parametrised=False)
    for b in boxes:
        x, y = fast.solve(b).bound, slow.solve(b).bound
        assert (math.isinf(x) and x == y) or abs(x - y) <= 1e-6 * (1 + abs(x))


def test_keyboard_interrupt_returns_the_tree_so_far():
    task = sp.TriggerTask(p=2, T=3)
    relax = build_relaxation(task, EPS, (0,))
    inner = PrimalSolver(relax)

    class Interrupting:
        def __init__(self):
            self.relax, self.calls = relax, 0

        def solve(self, box):
            self.calls += 1
            if self.calls > 3:
                raise KeyboardInterrupt
            return inner.solve(box)

    tree = branch_and_bound(Interrupting(), ValueBox.root(task, "learned"), None, max_nodes=50)
    assert tree.status == "interrupted" and tree.nodes >= 1


def test_node_budget_is_respected():
    task = sp.TriggerTask(p=2, T=3, positions="onehot")
    relax = build_relaxation(task, EPS, (0,))
    tree = branch_and_bound(PrimalSolver(relax), ValueBox.root(task, "learned"), 1.0,
                            max_nodes=9)
    assert tree.status == "budget" and tree.nodes <= 10 and math.isinf(tree.bound)


# ----------------------------------------------------------------------------- bad input
def test_bad_input_gets_clear_errors():
    task = sp.TriggerTask(p=2, T=3)
    with pytest.raises(ValueError, match="eps is required"):
        prove(task, at="homogeneous")
    with pytest.raises(ValueError, match="unknown target set"):
        prove(task, eps="1/20", at="everywhere")
    with pytest.raises(ValueError, match="min_bos_mass"):
        prove(task, eps="1/20", min_bos_mass=2)
    with pytest.raises(TypeError, match="claim"):
        prove(42)
    with pytest.raises(ValueError, match="values"):
        prove(task, eps="1/20", values="random")


def test_claim_data_is_not_mutated():
    import tomllib

    data = tomllib.loads(Path("examples/claims/learned_values_homogeneous.toml").read_text())
    data["conclusion"]["at"] = "homogeneous"
    before = copy.deepcopy(data)
    prove(data, targets=[(0,)], max_nodes=10)
    assert data == before


@pytest.mark.parametrize("triggers", ["single", "multi"])
def test_targets_agree_with_the_task_and_the_checker(triggers):
    from sinkproof.bnb.relaxation import prefix_target

    task = sp.TriggerTask(p=2, T=3, triggers=triggers)
    inst = trusted.Instance({"task": task.describe(), "values": "learned", "family": "S_T",
                             "eps": "1/20"})
    for prefix in family_prefixes(task):
        y = prefix_target(task, prefix)
        assert np.allclose(y, task.targets(list(prefix))[-1])
        assert [float(v) for v in inst.target_of(prefix)] == pytest.approx(list(y))


def test_fixed_values_reach_theorem_1():
    # Fixed values make every box a point: the root relaxation is logit sharing by features,
    # which must certify at least Theorem 1's 1 - eps/||c|| = 0.95 at homogeneous positions.
    result = prove("examples/claims/fixed_values_homogeneous.toml", max_nodes=5)
    assert result.status == "proved" and result.verify().ok
    assert result.bound >= Fraction(95, 100) - Fraction(1, 10**6)


@pytest.mark.slow
def test_before_trigger_is_proved_with_fixed_values():
    result = prove("examples/claims/before_trigger.toml", max_nodes=5)
    assert result.status == "proved" and len(result.targets) == 84
    assert result.bound >= Fraction(8, 10)


@pytest.mark.parametrize("task", [
    sp.TriggerTask(p=2, T=2, content=[[1.0, 0.0], [0.6, 0.8], [-0.8, 0.6]]),
    sp.TriggerTask(p=2, T=2, content="gaussian", k=3, seed=1),
    sp.TriggerTask(p=2, T=2, positions="none"),
], ids=["custom", "gaussian", "none"])
def test_listed_content_and_other_schemes_certify(task):
    result = prove(task, eps="1/20", at="homogeneous", min_bos_mass="1/4", max_nodes=20)
    assert result.status == "proved" and result.verify().ok
    assert ("content_vectors" in result.certificate["instance"]) == (task.content_scheme
                                                                      != "signed")


def test_progress_bar_on_request(capsys):
    task = sp.TriggerTask(p=2, T=2)
    prove(task, eps="1/20", targets=[(0,)], max_nodes=6, progress=True)
    assert "bnb [0]" in capsys.readouterr().err


def test_a_dominating_targets_tree_carries_over_scaled():
    from sinkproof.bnb.transfer import dominance

    task = sp.TriggerTask(p=2, T=3)
    assert dominance(task, (0,), (0, 0)) == 2 and dominance(task, (0,), (0, 0, 0)) == 0
    alone = prove(task, eps=EPS, targets=[(0,)], max_nodes=20)
    both = prove(task, eps=EPS, targets=[(0,), (0, 0)], max_nodes=20)
    assert both.verify().ok
    assert both.targets[0].certified > alone.targets[0].certified
    assert both.targets[0].certified > Fraction(93, 100)   # 14/15 from 7/8 at t = 2
