"""The Theorem 3 family certificate in the paper's setting (fixed values, v_BOS = 0)."""

from __future__ import annotations

import copy
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof import checker
from sinkproof.checker.family.paper import PaperFamily
from sinkproof.convex import paper_family_certificate
from sinkproof.convex.minnorm import min_norm_point
from sinkproof.errors import CertificateError, SinkproofError


@pytest.fixture(scope="module")
def cert():
    return paper_family_certificate(sp.PaperTask(n=4, L=6, content="grid", grid=3), "1/50")


def test_verified_at_every_nontrigger_position(cert):
    verdict = checker.verify(cert.to_dict())
    assert verdict.ok and verdict.kind == "paper-hull-family"
    # m = 3 content vectors: C of size 1..3 (L-2 = 4), with no trigger or one of 3
    family = PaperFamily(4, 6, [[Fraction(i)] for i in range(3)])
    assert verdict.details["situations"] == 4 * 7 == len(family.situations())
    assert verdict.details["after_trigger"] == 3 * 7
    # d(S) >= 1/√2 (trigger + bias coordinates sum to 1), so alpha_t0 >= 1 - √2 ε
    assert cert.min_bound >= 1 - Fraction(1, 50) * Fraction(14143, 10000)
    assert cert.min_bound_after_trigger == cert.min_bound


def test_exact_distances_match_the_float_qp(cert):
    content = cert.task.content
    for s in cert.situations:
        rows = [[0.0, *content[i], 1.0] for i in s.key[0]]
        if s.key[1] is not None:
            rows.append([1.0, *content[s.key[1]], 0.0])
        dist = min_norm_point(np.array(rows)).distance
        assert float(s.d) == pytest.approx(dist, abs=1e-6)
        assert s.d >= Fraction(7071067811, 10**10)
        if s.d_sq is not None:
            assert s.d * s.d <= s.d_sq


def test_other_content_rejected(cert):
    bad = copy.deepcopy(cert.to_dict())
    bad["instance"]["content_vectors"][0] = ["-1/2"]
    assert not checker.verify(bad).ok


def test_other_eps_rejected(cert):
    bad = copy.deepcopy(cert.to_dict())
    bad["instance"]["eps"] = "1/10"
    assert not checker.verify(bad).ok


def test_missing_situation_and_overclaim_rejected(cert):
    bad = copy.deepcopy(cert.to_dict())
    bad["data"]["situations"].pop()
    with pytest.raises(CertificateError, match="not covered"):
        checker.verify(bad)
    bad = copy.deepcopy(cert.to_dict())
    bad["claim"]["min_bound"] = "99/100"
    assert not checker.verify(bad).ok


def test_continuous_or_residual_task_refused():
    with pytest.raises(SinkproofError, match="finite"):
        paper_family_certificate(sp.PaperTask(n=4, L=6), "1/10")
    with pytest.raises(SinkproofError, match="residual"):
        paper_family_certificate(sp.PaperTask(n=4, L=6, content="grid", grid=2,
                                              residual=True), "1/10")


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(0.1, 30.0))
def test_any_fixed_value_softmax_model_obeys_the_bound(seed, scale):
    """Cross-check: a one-layer softmax paper model with W_O W_V = I - e_0 e_0^T has, at
    every non-trigger position, BOS mass >= 1 - err_t / (1/√2)."""
    task = sp.PaperTask(n=4, L=6, content="grid", grid=3)
    rng = np.random.default_rng(seed)
    n = task.n
    wv = np.eye(n)
    wv[0, 0] = 0.0
    model = sp.paper_model(task, "softmax", W_Q=scale * rng.normal(size=(1, 1, n, n)),
                           W_K=rng.normal(size=(1, 1, n, n)), W_V=wv[None, None],
                           W_O=np.eye(n)[None])
    for x in task.sample(5, seed=seed):
        out, w = model.forward(x)
        j = task.trigger_position(x)
        for t in range(1, task.L):
            if t != j:
                err = float(np.linalg.norm(out[t]))
                assert w[0, 0, t, 0] >= 1 - math.sqrt(2) * err - 1e-9
