"""The search frontier never crosses a certified bound (Theorem 1 on the canonical class)."""

from __future__ import annotations

import numpy as np
import pytest

import sinkproof as sp
from sinkproof.search import certified_bound, frontier


def _assert_never_crosses(f):
    assert f.bound is not None and f.crossings() == []
    for p in f.points:
        assert p.bos_upper >= f.bound(p.error_upper)
        # the rigorous figures bound the float64 ones from above (up to float rounding)
        assert p.error_upper >= p.error * (1 - 1e-12)
        assert p.bos_upper >= p.bos_mass * (1 - 1e-12)
        ev = sp.evaluate(p.model)
        assert ev.max_error <= p.error_upper * (1 + 1e-12)


def test_fixed_value_softmax_frontier_stays_above_theorem_1():
    task = sp.TriggerTask(p=2, T=3)
    f = frontier(task, errors=(0.1, 0.3), restarts=1, seed=0, maxiter=60, processes=1)
    assert [p.target for p in f.points] == [0.1, 0.3]
    _assert_never_crosses(f)
    assert f.bound(0.1) == pytest.approx(0.9)
    # the search did trade error for BOS mass: more error allowed, less sink
    assert f.points[1].bos_upper < f.points[0].bos_upper
    assert "| target ε |" in f.table() and "Theorem 1" in repr(f)
    assert "certified" in f._repr_markdown_()
    rows = f.to_records()
    assert [r["target"] for r in rows] == [0.1, 0.3]
    assert [(r["bos_upper"], r["bound"]) for r in rows] == [(p.bos_upper, p.bound)
                                                            for p in f.points]
    assert f.to_csv().splitlines()[0] == "target,error,bos_mass,error_upper,bos_upper,bound"


@pytest.mark.slow
def test_canonical_instance_frontier_stays_above_theorem_1():
    f = frontier(sp.TriggerTask(p=2, T=6), errors=(0.05, 0.1, 0.2, 0.3), restarts=2, seed=0)
    _assert_never_crosses(f)


@pytest.mark.slow
def test_onehot_frontier_meets_theorem_1():
    """With a free score per position the search reaches Theorem 1's line (docs/search.md)."""
    f = frontier(sp.TriggerTask(p=2, T=3, positions="onehot"), errors=(0.1, 0.3), restarts=2,
                 seed=0, maxiter=150)
    _assert_never_crosses(f)
    for p in f.points:
        assert p.bos_upper - p.bound < 1e-3


def test_certified_bounds_follow_the_theorems():
    task = sp.TriggerTask(p=2, T=4)
    fixed = certified_bound(task, values="fixed")
    learned = certified_bound(task, values="learned")
    eps = np.array([0.0, 0.1, 0.4, 2.0])
    np.testing.assert_allclose(fixed(eps), [1.0, 0.9, 0.6, 0.0])
    # signed basis: g(c, -c) = 1, so 1 - 2ε/(1 - 2ε), vacuous from ε = 1/4 on
    np.testing.assert_allclose(learned(eps), [1.0, 1 - 0.2 / 0.8, 0.0, 0.0])
    assert certified_bound(task, heads=2) is None
    assert certified_bound(task, kind="relu") is None
    assert certified_bound(task, where="trigger") is None


@pytest.mark.slow  # 2 s of CPU in the default run; CI runs it
def test_plot_draws_frontier_and_bound(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    f = frontier(sp.TriggerTask(p=1, T=2), errors=(0.2,), restarts=1, maxiter=40, processes=1)
    ax = f.plot()
    labels = [line.get_label() for line in ax.get_lines()]
    assert any("frontier" in s for s in labels) and any("Theorem 1" in s for s in labels)
    ax.figure.savefig(tmp_path / "f.png")


def test_bad_input():
    task = sp.TriggerTask(p=1, T=2)
    with pytest.raises(ValueError, match="errors is empty"):
        frontier(task, errors=())
    with pytest.raises(ValueError, match="errors"):
        frontier(task, errors=(-0.1,))
