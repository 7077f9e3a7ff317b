"""Property tests: any subfamily is valid (weaker), bounds sit between Theorem 3 and 1 - eps."""

from __future__ import annotations

import math

from hypothesis import assume, given, settings
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
    splice = sink_map(TASK, eps, positions=positions, subfamily="splice")
    assert full.verify().ok and ball.verify().ok and splice.verify().ok
    for key, e in full.entries.items():
        assert ball.entries[key].bound <= e.bound + 1e-7
        assert splice.entries[key].bound <= e.bound + 1e-7
        assert e.bound <= 1 - eps + 1e-9  # the query key alone reaches Z = 1/(1-eps)
        assert e.bound >= hull_bound(key, eps) - 1e-6  # Theorem 3 never beats the relaxation


@settings(max_examples=4)
@given(eps=st.sampled_from([0.05, 0.1, 0.25]), seq=prefixes)
def test_bound_decreases_with_eps(eps, seq):
    tight = sink_map(TASK, eps / 2, positions=[(seq, len(seq))]).bound(seq, len(seq))
    loose = sink_map(TASK, eps, positions=[(seq, len(seq))]).bound(seq, len(seq))
    assert loose <= tight + 1e-9


_CERT = sink_map(sp.TriggerTask(p=2, T=2), 0.1).certificate
_JUNK = st.one_of(st.integers(-3, 5), st.text(max_size=6), st.none(), st.booleans(),
                  st.floats(allow_nan=False), st.just("1/0"), st.just([]), st.just({}))


def _paths(obj, prefix=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))
    yield prefix


_ALL_PATHS = [p for p in _paths(_CERT) if p]


@settings(max_examples=60)
@given(path=st.sampled_from(_ALL_PATHS), junk=_JUNK)
def test_corrupted_certificates_fail_cleanly(path, junk):
    """Any field replaced by junk: a Verdict or a CertificateError, never another exception."""
    import contextlib
    import copy

    from sinkproof.checker import verify
    from sinkproof.errors import CertificateError

    cert = copy.deepcopy(_CERT)
    node = cert
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = junk
    with contextlib.suppress(CertificateError):
        verify(cert)


@settings(max_examples=5)
@given(seed=st.integers(0, 10_000), L=st.sampled_from([2.0, 4.0, 6.0]),
       noise=st.sampled_from([0.1, 0.5, 1.0]), learned=st.booleans())
def test_every_model_is_accurate_at_its_own_error_and_above_the_bound(seed, L, noise, learned):
    """Any single-head softmax model has error eps := E(model); with its own values the sink
    map at that eps must lie below its BOS mass at every non-trigger position asked for."""
    import numpy as np

    from sinkproof.constructions import softmax_score_matrix

    task = sp.TriggerTask(p=2, T=3)
    rng = np.random.default_rng(seed)
    A = softmax_score_matrix(task, L) + noise * rng.standard_normal((task.D, task.D))
    U = sp.fixed_values(2) + 0.1 * rng.standard_normal((2, 5)) if learned else None
    model = sp.AttentionModel(task, "softmax", A, U)
    eps = sp.evaluate(model).max_error * (1 + 1e-6)
    assume(eps < 0.9)
    seqs = task.sample(8, seed=seed, lengths=3, trigger_prob=0.3)
    positions = [(s, t) for s in seqs for t in range(1, 4) if s[t - 1] != sp.TRIG]
    smap = sink_map(task, eps, values=model.U[0], positions=positions)
    certified = 0
    for prefix, e in smap.entries.items():
        bos = model.bos_mass(list(prefix))[0, len(prefix)]
        assert e.bound <= bos + 1e-12, (prefix, e.bound, bos)
        certified += e.status == "certified"
    assert smap.verify().ok and certified > 0
