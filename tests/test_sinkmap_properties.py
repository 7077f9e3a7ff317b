"""Property tests: any subfamily is valid (weaker), bounds sit between Theorem 3 and 1 - eps."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.sinkmap import sink_map

TASK = sp.TriggerTask(p=2, T=4)

prefixes = st.lists(st.integers(0, 3), min_size=1, max_size=4)


def hull_bound(prefix: tuple[int, ...], eps: float) -> float:
    vecs = {tuple(TASK.content[c]) for c in prefix}
    if any(tuple(-x for x in v) in vecs for v in vecs):
        return 0.0
    return 1 - eps * math.sqrt(len(vecs))


@settings(max_examples=4)
@given(eps=st.sampled_from([0.02, 0.05, 0.1, 0.2, 0.3]),
       seqs=st.lists(prefixes, min_size=1, max_size=3))
def test_subfamily_bounds_are_weaker_and_all_verify(eps, seqs):
    positions = [(s, len(s)) for s in seqs]
    full = sink_map(TASK, eps, positions=positions, subfamily="full")
    ball = sink_map(TASK, eps, positions=positions, subfamily="hamming", radius=1)
    assert full.verify().ok and ball.verify().ok
    for key, e in full.entries.items():
        b = ball.entries[key]
        assert b.bound <= e.bound + 1e-7
        assert e.bound <= 1 - eps + 1e-9           # Theorem 1 is attained by homogeneous prefixes
        assert e.bound >= hull_bound(key, eps) - 1e-6  # Theorem 3 never beats the relaxation


@settings(max_examples=4)
@given(eps=st.sampled_from([0.05, 0.1, 0.25]), seq=prefixes)
def test_bound_decreases_with_eps(eps, seq):
    tight = sink_map(TASK, eps / 2, positions=[(seq, len(seq))]).bound(seq, len(seq))
    loose = sink_map(TASK, eps, positions=[(seq, len(seq))]).bound(seq, len(seq))
    assert loose <= tight + 1e-9
