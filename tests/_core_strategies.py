"""Small Hypothesis strategies for the core tests (independent of sinkproof.strategies)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import sinkproof as sp


@st.composite
def small_tasks(draw, positions=("inverse", "onehot", "none"), triggers=("single", "multi")):
    p = draw(st.integers(1, 3))
    T = draw(st.integers(1, 5))
    content = draw(st.sampled_from(["signed", "gaussian"]))
    k = draw(st.integers(1, 4)) if content == "gaussian" else None
    return sp.TriggerTask(p=p, T=T, content=content, k=k, seed=draw(st.integers(0, 5)),
                          positions=draw(st.sampled_from(positions)),
                          triggers=draw(st.sampled_from(triggers)))


@st.composite
def sequences_of(draw, task):
    n = draw(st.integers(1, task.T))
    toks = draw(st.lists(st.integers(0, task.k - 1), min_size=n, max_size=n))
    if task.triggers == "multi":
        mask = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        return [sp.TRIG if m else t for t, m in zip(toks, mask)]
    if draw(st.booleans()):
        toks[draw(st.integers(0, n - 1))] = sp.TRIG
    return toks


@st.composite
def models_of(draw, task, kind=None, scale=3.0):
    kind = kind or draw(st.sampled_from(["softmax", "relu"]))
    H = draw(st.integers(1, 2))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    s = draw(st.sampled_from([0.1, 1.0, scale]))
    A = s * rng.standard_normal((H, task.D, task.D))
    U = rng.standard_normal((H, task.p, task.p + 3)) if draw(st.booleans()) else None
    return sp.AttentionModel(task, kind=kind, A=A, U=U)
