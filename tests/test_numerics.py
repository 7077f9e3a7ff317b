"""Float helpers of :mod:`sinkproof.numerics` against independent references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import logsumexp as scipy_logsumexp

from sinkproof.numerics import logsumexp

LOGITS = st.one_of(st.floats(-1e4, 1e4), st.sampled_from([-np.inf, 0.0, 1000.0, -1000.0]))


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)), elements=LOGITS),
       st.sampled_from([0, 1, -1]))
def test_logsumexp_equals_scipy_to_the_last_bit(a, axis):
    np.testing.assert_array_equal(logsumexp(a, axis=axis), scipy_logsumexp(a, axis=axis))


@pytest.mark.parametrize("a, expected", [
    ([-np.inf, -np.inf], -np.inf), ([np.inf, 1.0], np.inf), ([1000.0, -1000.0], 1000.0),
    ([-np.inf, 2.0], 2.0), ([0.0, 0.0], np.log(2.0)), ([], -np.inf)])
def test_logsumexp_limits(a, expected):
    assert logsumexp(np.array(a, dtype=float)) == expected


def test_logsumexp_propagates_nan():
    assert np.isnan(logsumexp(np.array([np.nan, 1.0])))
