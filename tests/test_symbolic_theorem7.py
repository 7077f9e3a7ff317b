"""Theorem 7 (our corollary of Theorem 3): every fixed-value head sinks, whatever H is."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.constructions import softmax_score_matrix
from sinkproof.modelclass import ModelClass
from sinkproof.numerics import stable_norm
from sinkproof.strategies import models, sequences, tasks
from sinkproof.symbolic.bounds import hull_distance
from sinkproof.theorems import THEOREMS

THEOREM7 = THEOREMS["theorem7"]


@settings(max_examples=60)
@given(st.data())
def test_total_nonbos_mass_times_hull_distance_is_at_most_the_output(data):
    """The inequality of the proof, Σ_h (1 - α^h_{t0}) d_t <= ‖f_t‖, on arbitrary models."""
    task = data.draw(tasks(max_p=3, max_T=4))
    model = data.draw(models(task, kind="softmax", heads=(1, 3), values="fixed",
                             scale=(1.0, 5.0, 60.0)))
    seq = data.draw(sequences(task))
    out, _ = model.forward(seq)
    lnb = model.log_nonbos(seq)  # (H, n+1), log domain
    codes = task.encode(seq)
    for t in range(1, len(seq) + 1):
        if codes[t - 1] == task.trig_code:
            continue
        d = hull_distance(task.content_table[codes[:t]]).value  # root on integers, any scale
        total = float(np.exp(lnb[:, t]).sum())
        # stable_norm: np.linalg.norm squares entries, so a 1e-169 output has norm 0 there
        assert total * d <= float(stable_norm(out[t])) * (1 + 1e-9) + 1e-300


def test_inequality_holds_at_contents_whose_squares_are_subnormal():
    """Pinned: content 3.97e-160 (d² = 1.6e-319 is subnormal as a float; its float root lost
    digits) and content 1e-168 (d² underflows to 0) once failed the float arithmetic here."""
    for c, pos, a in ((3.96519052e-160, "inverse", 0.5), (1.00612645e-168, "none", 0.0)):
        task = sp.TriggerTask(p=1, T=1, content=[[c]], positions=pos)
        model = sp.AttentionModel(task, "softmax", a * np.eye(task.D))
        d = hull_distance(task.content_table[task.encode((0,))[:1]]).value
        assert d == c  # the hull of one point: its norm, to the last digit
        out, _ = model.forward((0,))
        lnb = model.log_nonbos((0,))
        assert float(np.exp(lnb[:, 1]).sum()) * d <= float(stable_norm(out[1])) * (1 + 1e-9)


@settings(max_examples=20)
@given(st.integers(2, 3), st.floats(4.0, 12.0), st.integers(0, 2**32 - 1))
def test_every_head_of_an_accurate_model_meets_the_bound(heads, L, seed):
    task = sp.TriggerTask(p=2, T=3)
    rng = np.random.default_rng(seed)
    A = np.stack([softmax_score_matrix(task, L + h) + 0.05 * rng.standard_normal((task.D,) * 2)
                  for h in range(heads)])
    model = sp.AttentionModel(task, "softmax", A)
    eps = sp.evaluate(model).max_error
    positions = [(s, len(s)) for s in task.sequences() if sp.TRIG not in s]
    check = THEOREM7.instantiate(task, eps, positions=positions).check(model)
    assert check.holds and len(check.applicable) == len(check.items) > 0


def test_class_is_any_number_of_fixed_value_softmax_heads():
    assert THEOREM7.applies_to(ModelClass("softmax", heads=4, values="fixed"))[0]
    ok, why = THEOREM7.applies_to(ModelClass("softmax", heads=2, values="learned"))
    assert not ok and "fixed values" in why[0]
    assert not THEOREM7.applies_to(ModelClass("relu", heads=2, values="fixed"))[0]
    assert not THEOREMS["theorem3"].applies_to(ModelClass("softmax", heads=2, values="fixed"))[0]
