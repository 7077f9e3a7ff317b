"""(P2) as the paper states it: pure compositions of attention layers (no residual).

One head per layer: the composition theorem (a sink in some layer at position 1, product
form).  Two heads per layer: the cancelling construction, no sink anywhere off the trigger,
verified by the trusted checker and re-evaluated independently at 50 digits.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.constructions import (
    composed_pair_solution,
    composed_sink_weights,
    residual_cancel_solution,
    residual_cancel_weights,
)
from sinkproof.errors import CapabilityError
from sinkproof.stack import paper_model
from sinkproof.stackwitness import stack_witness
from sinkproof.theorems.composition import (
    check_composition,
    composition_bound,
    composition_items,
)

SIGNS = [[-1.0], [1.0]]


def _ray_gap_numeric(p: np.ndarray, q: np.ndarray, samples: int = 20001) -> float:
    """``min_u max(d(p, R_+u), d(q, R_+u))`` by brute force over unit ``u`` in the plane of
    ``p, q`` (the optimum lies there), independent of the closed form."""
    e1 = p / np.linalg.norm(p)
    r = q - (q @ e1) * e1
    e2 = r / np.linalg.norm(r)
    ang = np.linspace(-np.pi, np.pi, samples)
    u = np.cos(ang)[:, None] * e1 + np.sin(ang)[:, None] * e2

    def dist(z: np.ndarray) -> np.ndarray:
        proj = np.maximum(u @ z, 0.0)
        return np.sqrt(np.maximum(z @ z - proj**2, 0.0))

    return float(np.min(np.maximum(dist(p), dist(q))))


def test_strongest_instance_exact_and_by_brute_force() -> None:
    task = sp.PaperTask(n=4, L=5, content=SIGNS)
    item = composition_bound(task, "1/20", layers=2)
    assert item is not None and item.j == task.L - 1
    assert item.g_squared == Fraction(45, 88)
    j = item.j
    xa, xb, xt = (task.token_table[c] for c in (item.a, item.b, task.m + item.tau))
    g = _ray_gap_numeric(((j - 1) * xa + xt) / j, ((j - 1) * xb + xt) / j)
    exact = float(np.sqrt(45 / 88))
    assert exact - 1e-9 <= g <= exact + 5e-4  # a grid minimum lies above the true one
    # the exact bound against mpmath at 50 digits: 1 - (2 eps / g)^(1/N)
    mpmath.mp.dps = 50
    want = 1 - (2 * mpmath.mpf(1) / 20 / mpmath.sqrt(mpmath.mpf(45) / 88)) ** (mpmath.mpf(1) / 2)
    assert abs(mpmath.mpf(str(item.bound.evalf(50))) - want) < mpmath.mpf(10) ** -45
    assert 0.626 < item.value < 0.6261


def test_more_layers_weaken_the_bound_and_small_eps_forces_a_sink() -> None:
    task = sp.PaperTask(n=4, L=5, content=SIGNS)
    values = [composition_bound(task, "1/20", layers=N).value for N in (1, 2, 3)]
    assert values[0] > values[1] > values[2] > 0
    assert composition_bound(task, "1/100000", layers=3).value > 0.95
    assert composition_bound(task, "1/2", layers=1) is None  # g <= 2 eps: nothing


def test_refusals() -> None:
    with pytest.raises(CapabilityError):
        composition_items(sp.PaperTask(n=4, L=5, content=SIGNS, residual=True), "0.05", 2)
    with pytest.raises(CapabilityError):
        composition_items(sp.PaperTask(n=4, L=5), "0.05", 2)
    with pytest.raises(ValueError):
        composition_items(sp.PaperTask(n=4, L=5, content=SIGNS), "-0.1", 2)


@settings(max_examples=15, deadline=None)
@given(lam=st.floats(3.0, 14.0), L=st.integers(4, 6))
def test_an_accurate_single_head_stack_obeys_the_product_bound(lam: float, L: int) -> None:
    """The sink-then-copy stack meets the theorem's hypothesis at its own error: the
    measured product ``Π (1 - α^ℓ_10)`` never exceeds ``2ε/g``, and the check is not vacuous."""
    task = sp.PaperTask(n=4, L=L, content=SIGNS)
    model = paper_model(task, "softmax", residual=False, **composed_sink_weights(task, lam))
    for item in composition_items(task, "0", layers=2)[:4]:
        got = check_composition(model, item)
        assert got.holds
        if lam >= 6:
            assert got.applies


def _mp_forward(model: sp.StackModel, x: np.ndarray) -> list:
    """The stack's output at 50 digits, from its weights alone (no sinkproof numerics)."""
    mpmath.mp.dps = 50
    h = [[mpmath.mpf(float(v)) for v in row] for row in x]
    for layer in model.layers:
        outs = []
        for head in layer.heads:
            q = [mpmath.matrix(head.W_Q.tolist()) * mpmath.matrix(r) for r in h]
            k = [mpmath.matrix(head.W_K.tolist()) * mpmath.matrix(r) for r in h]
            v = [mpmath.matrix(head.V.tolist()) * mpmath.matrix(r) for r in h]
            rows = []
            for i in range(len(h)):
                s = [sum(q[i][a] * k[j][a] for a in range(len(h[0]))) for j in range(i + 1)]
                top = max(s)
                w = [mpmath.exp(si - top) for si in s]
                z = sum(w)
                rows.append([sum(w[j] * v[j][a] for j in range(i + 1)) / z
                             for a in range(len(h[0]))])
            outs.append(rows)
        WO = mpmath.matrix(layer.W_O.tolist())
        new = [list(WO * mpmath.matrix([c for o in outs for c in o[i]])) for i in range(len(h))]
        h = [[a + b for a, b in zip(r, w)] for r, w in zip(h, new)] if model.residual else new
    return h


@pytest.mark.parametrize("layers", [2, 3])
def test_two_heads_per_layer_need_no_sink(layers: int) -> None:
    task = sp.PaperTask(n=4, L=5, content=SIGNS)
    model = composed_pair_solution(task, 1e-3, layers=layers)
    assert not model.residual and model.n_layers == layers
    witness = stack_witness(model, "1/1000")
    assert witness.verdict.ok, witness.verdict.failure
    assert witness.error < 1e-5 and witness.bos < 1e-6
    assert Fraction(witness.document["claim"]["max_bos_mass"]) < Fraction(1, 10**5)
    # independent path: 50-digit forward from the weights, against the float stack
    rng = np.random.default_rng(layers)
    for _ in range(3):
        x = task.sample(1, seed=int(rng.integers(1 << 30)))[0]
        out, _ = model.forward_rows(x)
        mp_out = _mp_forward(model, x)
        y = task.targets(x)
        mp_err = max(float(mpmath.sqrt(sum((mp_out[i][a] - y[i, a]) ** 2 for a in range(task.n))))
                     for i in range(task.L))
        assert mp_err < 1e-5
        assert np.allclose(out, np.array(mp_out, dtype=float), atol=1e-12)


def test_a_witness_that_misses_its_error_is_refused() -> None:
    task = sp.PaperTask(n=4, L=5, content=SIGNS)
    model = composed_pair_solution(task, 0.5, layers=2)
    err = stack_witness(model, "1/1000")  # the model's error is far above 1/1000
    assert err.error > 1e-3 and not err.verdict.ok


@pytest.mark.parametrize("content", [SIGNS, [[-1.0], [0.0], [1.0]]])
def test_one_head_residual_layers_need_no_sink(content: list) -> None:
    """The residual cancel construction: error -> 0 along the family (verified exactly at
    several members), BOS weight tiny at every non-trigger position of both layers."""
    task = sp.PaperTask(n=4, L=5, content=content)
    errors = []
    for eps in ("1/100", "1/10000", "1/10000000"):
        model = residual_cancel_solution(task, float(Fraction(eps)))
        assert model.residual and model.H == 1 and model.n_layers == 2
        witness = stack_witness(model, eps)
        assert witness.verdict.ok, witness.verdict.failure
        assert witness.bos < 1e-5
        errors.append(witness.error)
    assert errors[0] > errors[1] > errors[2]
    x = task.sample(1, seed=3)[0]
    out, _ = model.forward_rows(x)
    assert np.allclose(out, np.array(_mp_forward(model, x), dtype=float), atol=1e-12)


def test_one_head_residual_layers_on_continuous_content_samples() -> None:
    """On sampled continuous content (a lower estimate of the worst error, not a proof) the
    error falls like 1/λ while no non-trigger BOS weight rises."""
    task = sp.PaperTask(n=4, L=5, residual=True)
    xs = task.sample(400, seed=1)
    y = np.stack([task.targets(x) for x in xs])
    nontrig = xs[..., 1] != 1
    nontrig[:, 0] = False
    errs = []
    for lam in (10.0, 100.0):
        model = paper_model(task, "softmax", residual=True, **residual_cancel_weights(task, lam))
        fw = model.forward_batch(xs)
        errs.append(float(np.linalg.norm(fw.out - y, axis=-1).max()))
        assert float(fw.w[:, 0][:, nontrig][:, :, 0].max()) < 1e-10
    assert errs[1] < errs[0] / 5 and errs[1] < 0.01


def test_the_cancel_construction_refuses_ties() -> None:
    task = sp.PaperTask(n=5, L=4, content=[[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="same projection"):
        residual_cancel_weights(task, 4.0, direction=[1.0, 1.0])
