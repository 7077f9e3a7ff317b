"""Several heads need no sink at any row, the trigger row included (issue 25, item 5), and
what they must do instead: move mass at the trigger row (the displacement theorem of
docs/theory.md, "Several heads with learned values").

Our setting: the cancelling pair resting on the trigger (``rest="trigger"``).  The paper's:
three heads (:func:`paper_split_solution`), since there no linear value map can give the
trigger value 0 while negating content once two contents occur.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof import checker
from sinkproof.claims import Refuted, check, load_claim
from sinkproof.constructions import (
    cancelling_pair_solution,
    paper_pair_solution,
    paper_split_solution,
)
from sinkproof.stack import paper_model
from sinkproof.stackwitness import stack_witness
from sinkproof.theorems.headshull import trigger_row_displacement

CLAIM = Path(__file__).resolve().parents[1] / "examples" / "claims" / \
    "two_heads_learned_any_row.toml"
PAPER = sp.PaperTask(n=4, L=5, content=[[-1.0], [1.0]])


def _max_bos_any_row(model: sp.AttentionModel) -> float:
    """The largest BOS mass of any head at any position ``t >= 1`` of the whole family."""
    return max(float(model.bos_mass(seq)[:, 1:].max()) for seq in model.task.sequences())


@settings(max_examples=12, deadline=None)
@given(eps=st.floats(1e-7, 0.3), positions=st.sampled_from(["inverse", "onehot", "none"]),
       p=st.integers(1, 2))
def test_the_pair_resting_on_the_trigger_is_accurate_with_no_sink_anywhere(eps, positions, p):
    task = sp.TriggerTask(p=p, T=3, positions=positions)
    model = cancelling_pair_solution(task, eps, rest="trigger")
    L = math.ceil(math.log(4 * (task.T + 2) / eps))
    assert sp.evaluate(model).max_error <= eps / 4
    assert _max_bos_any_row(model) <= math.exp(-L) * (1 + 1e-9)
    # and it is the trigger that takes the rest: head 1 at every trigger row t >= 2
    seq = (0, 1, sp.TRIG)
    _, w = model.forward(seq)
    assert w[1, 3, 3] >= 1 - 3 * math.exp(-L)


def test_error_and_bos_fall_as_the_level_grows():
    task = sp.TriggerTask(p=2, T=4)
    figures = [(sp.evaluate(m).max_error, _max_bos_any_row(m))
               for m in (cancelling_pair_solution(task, eps, rest="trigger")
                         for eps in (0.1, 1e-3, 1e-5))]
    assert all(a[0] > b[0] and a[1] > b[1] for a, b in zip(figures, figures[1:]))
    assert figures[-1][0] < 1e-5 and figures[-1][1] < 1e-5


def test_the_bos_resting_pair_does_sink_at_the_trigger_row():
    """The contrast that makes the new construction necessary: the original pair's second
    head sinks at the trigger row, so it does not refute a claim about every row."""
    task = sp.TriggerTask(p=2, T=3)
    assert _max_bos_any_row(cancelling_pair_solution(task, 0.05)) > 0.99


def test_the_any_row_claim_is_refuted_by_a_checker_verified_witness(tmp_path):
    out = check(load_claim(CLAIM), witness=tmp_path / "w.json")
    assert isinstance(out, Refuted) and "resting on the trigger" in out.detail
    verdict = checker.verify_file(out.witness)
    named = verdict.statement["bos_at"]
    assert verdict.ok and [0, 0, sp.TRIG] in named and [sp.TRIG] in named  # trigger rows
    assert len(named) == load_claim(CLAIM).task.n_sequences  # every prefix t >= 1
    assert max(max(v.masses) for v in out.violations) < 0.01


@pytest.mark.parametrize("rho", [0.5, 0.75, 0.9])
def test_three_paper_heads_have_no_sink_at_any_row_verified_by_the_checker(rho):
    model = paper_split_solution(PAPER, 0.01, rho)
    w = stack_witness(model, "1/100", rows="all")
    assert w.verdict.ok and w.document["claim"]["where"] == "all"
    assert w.bos <= 1 - rho + 1e-6
    ev = sp.evaluate(model)
    assert ev.max_error <= 0.005
    assert float(np.max(ev.null_mass_trigger.max)) <= 1 - rho + 1e-6  # no null sink either
    assert float(np.max(ev.null_mass_nontrigger.max)) <= 1e-4


def test_a_witness_claiming_every_row_fails_for_a_model_sinking_at_the_trigger_row():
    """The checker's ``where = "all"`` reads the trigger rows: the paper pair's second head
    sinks there, and a witness restated at every row with its non-trigger bound fails."""
    w = stack_witness(paper_pair_solution(PAPER, 0.01), "1/100")
    assert w.verdict.ok
    doc = copy.deepcopy(w.document)
    doc["claim"]["where"] = "all"
    verdict = checker.verify(doc)
    assert not verdict.ok and "head 1" in verdict.failure


@pytest.mark.parametrize("vectors, solvable", [([[0.5]], True), ([[-1.0], [1.0]], False),
                                               ([[0.5, -0.5], [1.0, 0.25]], False)])
def test_a_linear_value_nulls_the_trigger_while_negating_content_only_for_one_content(
        vectors, solvable):
    """The two-head sketch in the paper's setting needs ``W u_c = -u_c`` and ``W t_c = 0``
    for every content ``c`` (``u_c = e_bias + c``, ``t_c = e_1 + c``): the least-squares
    residual is 0 with one content vector and positive with two."""
    task = sp.PaperTask(n=len(vectors[0]) + 3, L=4, content=vectors)
    X, Y = [], []
    for c in task.content:
        u = np.zeros(task.n)
        u[task.content_slice], u[task.bias_index] = c, 1.0
        t = np.zeros(task.n)
        t[task.content_slice], t[1] = c, 1.0
        X += [u, t]
        Y += [-u, np.zeros(task.n)]
    X, Y = np.array(X), np.array(Y)
    W, *_ = np.linalg.lstsq(X, Y, rcond=None)
    residual = float(np.abs(X @ W - Y).max())
    assert (residual < 1e-12) == solvable


def _trigger_prefix(task: sp.TriggerTask, c: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    seq = (c,) * m + (sp.TRIG,)
    return task.features(seq), task.targets(seq)


def _error_at_last_two(model, rows, targets) -> float:
    out, _ = model.forward_rows(rows)
    return float(np.linalg.norm(out[-2:] - targets[-2:], axis=-1).max())


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), heads=st.integers(2, 3), noise=st.floats(0.0, 0.3),
       m=st.integers(1, 3), level=st.floats(1.0, 9.0))
def test_the_displacement_bound_holds_on_perturbed_accurate_models(seed, heads, noise, m,
                                                                   level):
    """Constructions plus noise in scores and values: at the model's own error the weighted
    displacement is at least ``‖y_{m+1} - y_m‖ - 2ε``, and the moved mass at least
    ``required / gap``."""
    rng = np.random.default_rng(seed)
    task = sp.TriggerTask(p=2, T=4)
    base = cancelling_pair_solution(task, math.exp(-level), heads,
                                    rest=("bos", "trigger")[seed % 2])
    A = base.A + noise * rng.normal(size=base.A.shape)
    U = base.U + noise * rng.normal(size=base.U.shape)
    model = sp.AttentionModel(task, kind="softmax", A=A, U=U)
    rows, targets = _trigger_prefix(task, int(rng.integers(0, task.k)), m)
    eps = _error_at_last_two(model, rows, targets) * (1 + 1e-9)
    got = trigger_row_displacement(model, rows, targets, eps)
    assert got.holds
    assert got.moved >= got.least_moved * (1 - 1e-9)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10**6), noise=st.floats(0.0, 0.3), j=st.integers(2, 4))
def test_the_displacement_bound_holds_in_the_paper_setting(seed, noise, j):
    rng = np.random.default_rng(seed)
    base = paper_split_solution(PAPER, 0.01, float(rng.uniform(0.3, 0.9)))
    layer = base.layers[0]
    W = dict(W_Q=np.array([[h.W_Q for h in layer.heads]]),
             W_K=np.array([[h.W_K for h in layer.heads]]),
             W_V=np.array([[h.V for h in layer.heads]]), W_O=np.array([layer.W_O]))
    W = {k: v + noise * rng.normal(size=v.shape) for k, v in W.items()}
    model = paper_model(PAPER, "softmax", **W)
    x = PAPER.sequence(j, rng.integers(0, PAPER.m, size=PAPER.L - 1))[: j + 1]
    y = PAPER.row_targets(x[None])[0]
    eps = _error_at_last_two(model, x, y) * (1 + 1e-9)
    assert trigger_row_displacement(model, x, y, eps).holds


@pytest.mark.parametrize("positions", ["inverse", "onehot"])
@pytest.mark.parametrize("c, m", [(0, 1), (1, 2), (3, 3)])
def test_the_displacement_bound_is_attained_by_the_pair_resting_on_the_trigger(positions, c, m):
    """Tight: the second head moves its whole mass onto the trigger, whose value gap is
    ``‖c‖``, so the weighted displacement is ``‖c‖ + O(e^{-L})`` against ``‖c‖ - 2ε``."""
    task = sp.TriggerTask(p=2, T=4, positions=positions)
    model = cancelling_pair_solution(task, 1e-6, rest="trigger")
    rows, targets = _trigger_prefix(task, c, m)
    eps = _error_at_last_two(model, rows, targets) * (1 + 1e-9)
    got = trigger_row_displacement(model, rows, targets, eps)
    assert got.holds and got.weighted <= got.required * (1 + 1e-5)
    assert got.per_head[1] >= 0.9999 * got.weighted  # the trigger-resting head does it
