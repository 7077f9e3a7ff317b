"""The trusted checker's attention weights (sinkproof/checker/maps.py), on their own."""

from __future__ import annotations

import ast
from fractions import Fraction as F
from pathlib import Path

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sinkproof.checker import maps as cm

rationals = st.fractions(min_value=-10, max_value=10, max_denominator=50)


def test_imports_only_the_standard_library_and_mpmath():
    """maps.py and the interval module it builds on: the standard library, mpmath, and (for
    the interval module) the checker's error class; nothing of the producer."""
    allowed = {"__future__", "fractions", "collections", "contextlib", "dataclasses", "typing",
               "mpmath"}
    here = Path(cm.__file__).parent
    for name, relative in (("maps.py", {".interval"}), ("interval.py", {"..errors"})):
        tree = ast.parse((here / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mod = "." * node.level + (node.module or "")
                if node.level:
                    assert mod in relative, f"{name} imports {mod}"
                    continue
                mods = [mod]
            else:
                continue
            for mod in mods:
                assert mod.split(".")[0] in allowed, f"{name} imports {mod}"


def test_known_values():
    s = [F(1, 3), F(-2), F(5, 4), F(1)]
    assert cm.exact_weights("sparsemax", s, 3) == [0, 0, F(5, 8), F(3, 8)]
    assert cm.exact_weights("relu", s, 3) == [F(1, 3), 0, F(5, 4), 1]
    assert cm.exact_weights("relu_length", s, 3) == [F(1, 9), 0, F(5, 12), F(1, 3)]
    assert cm.exact_weights("relu_length", [F(-1)], 0) == [0]
    assert cm.exact_weights("sparsemax", [F(7)], 0) == [1]
    # entmax-1.5 of (0, 0) on s/2: two equal weights 1/2; of (2, 0): τ = 0, weights (1, 0)
    for lo, hi in cm.interval_weights("entmax15", [F(0), F(0)], 1):
        assert lo <= F(1, 2) <= hi and hi - lo < F(1, 10**40)
    assert cm.interval_weights("entmax15", [F(2), F(0)], 1)[1] == (0, 0)
    lo, hi = cm.interval_weights("entmax15", [F(2), F(0)], 1)[0]
    assert lo <= 1 <= hi


@given(st.lists(rationals, min_size=1, max_size=6))
def test_sparsemax_is_the_projection_onto_the_simplex(s):
    w = cm.exact_weights("sparsemax", s, len(s) - 1)
    assert sum(w) == 1 and min(w) >= 0
    tau = next(si - wi for si, wi in zip(s, w) if wi > 0)
    assert all(wi == max(si - tau, 0) for si, wi in zip(s, w))  # KKT conditions, exactly


@given(st.lists(rationals, min_size=1, max_size=6))
def test_entmax15_weights_sum_to_one_and_follow_the_rule(s):
    iv = cm.interval_weights("entmax15", s, len(s) - 1, digits=30)
    assert sum(lo for lo, _ in iv) <= 1 <= sum(hi for _, hi in iv)
    assert all(0 <= lo <= hi for lo, hi in iv)
    # larger score, larger weight
    for i in range(len(s)):
        for j in range(len(s)):
            if s[i] > s[j]:
                assert iv[i][1] >= iv[j][0]


@pytest.mark.parametrize("name", ["softmax", "sink_logit", "softmax1", "sigmoid",
                                  "gated_softmax"])
@given(data=st.data())
def test_intervals_hold_the_value_computed_at_high_precision(name, data):
    s = data.draw(st.lists(rationals, min_size=1, max_size=5))
    params = [data.draw(rationals)] if name in cm.MAP_PARAMETERS else []
    iv = cm.interval_weights(name, s, len(s) - 1, params, digits=20)
    with mpmath.workdps(80):
        x = [mpmath.mpf(q.numerator) / q.denominator for q in s]
        if name == "sigmoid":
            b = mpmath.mpf(params[0].numerator) / params[0].denominator
            ref = [1 / (1 + mpmath.exp(-(v + b))) for v in x]
        else:
            b = (mpmath.mpf(params[0].numerator) / params[0].denominator if params
                 else mpmath.mpf(0))
            extra = mpmath.exp(b) if name in ("sink_logit", "softmax1") else 0
            z = sum(mpmath.exp(v) for v in x) + extra
            ref = [mpmath.exp(v) / z for v in x]
        for (lo, hi), r in zip(iv, ref):
            assert mpmath.mpf(lo.numerator) / lo.denominator <= r
            assert r <= mpmath.mpf(hi.numerator) / hi.denominator
            assert hi - lo < F(1, 10**15)
        if name in ("sink_logit", "softmax1"):
            lo, hi = cm.null_slot_interval(name, s, len(s) - 1, params, digits=20)
            slot = extra / z
            assert mpmath.mpf(lo.numerator) / lo.denominator <= slot
            assert slot <= mpmath.mpf(hi.numerator) / hi.denominator


def test_extreme_scores_keep_relative_precision():
    lo, hi = cm.interval_weights("softmax", [F(1000), F(0)], 1)[1]
    assert 0 < lo <= hi and (hi - lo) / lo < F(1, 10**40)  # exp(-1000), not 0
    lo, hi = cm.gate_interval(F(-1000))
    assert lo > 0 and (hi - lo) / lo < F(1, 10**40)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="unknown attention map 'tanh'"):
        cm.interval_weights("tanh", [F(0)], 0)
    with pytest.raises(ValueError, match="not rational"):
        cm.exact_weights("softmax", [F(0)], 0)
    with pytest.raises(ValueError, match="t=1 has 2 keys"):
        cm.exact_weights("relu", [F(0)], 1)
    with pytest.raises(TypeError, match=r"scores\[0\] must be an int or Fraction"):
        cm.exact_weights("relu", [0.5], 0)
    with pytest.raises(ValueError, match="takes parameters \\(b\\)"):
        cm.interval_weights("sigmoid", [F(0)], 0)
    with pytest.raises(ValueError, match="digits"):
        cm.interval_weights("softmax", [F(0)], 0, digits=3)


def _mp(q: F) -> mpmath.mpf:
    return mpmath.mpf(q.numerator) / q.denominator


@given(st.lists(rationals, min_size=1, max_size=7))
def test_stick_breaking_intervals_hold_an_independent_high_precision_evaluation(s):
    """``α_k = σ(s_k) Π_{k<l<=t} (1 - σ(s_l))`` and the null ``Π_{l<=t} (1 - σ(s_l))``,
    written here at 80 digits as the definition reads (products, not the checker's
    stick loop): each inside the checker's interval, and weights plus null sum to 1."""
    t = len(s) - 1
    weights = cm.interval_weights("stick_breaking", s, t, digits=20)
    null = cm.null_slot_interval("stick_breaking", s, t, digits=20)
    with mpmath.workdps(80):
        sig = [1 / (1 + mpmath.exp(-_mp(q))) for q in s]
        ref = [sig[k] * mpmath.fprod(1 - sig[m] for m in range(k + 1, t + 1))
               for k in range(t + 1)]
        ref_null = mpmath.fprod(1 - x for x in sig)
        for (lo, hi), r in zip(weights, ref):
            assert _mp(lo) <= r <= _mp(hi) and hi - lo < F(1, 10**15)
        assert _mp(null[0]) <= ref_null <= _mp(null[1])
    assert sum(lo for lo, _ in weights) + null[0] <= 1 <= sum(hi for _, hi in weights) + null[1]
    assert all(lo >= 0 for lo, _ in weights)


def test_stick_breaking_known_values_and_recency():
    """At zero scores each key takes half of what the later keys left: the last key 1/2,
    the one before 1/4, ..., the null 2^-(t+1)."""
    weights = cm.interval_weights("stick_breaking", [F(0)] * 4, 3, digits=30)
    for (lo, hi), want in zip(weights, [F(1, 16), F(1, 8), F(1, 4), F(1, 2)]):
        assert lo <= want <= hi and hi - lo < F(1, 10**25)
    lo, hi = cm.null_slot_interval("stick_breaking", [F(0)] * 4, 3, digits=30)
    assert lo <= F(1, 16) <= hi


def test_the_rule_table_has_one_row_per_map_and_the_null_maps_have_a_null():
    assert set(cm.RULES) == set(cm.MAP_NAMES)
    for name, rule in cm.RULES.items():
        assert (rule.exact is None) != (rule.interval is None), name
        assert (rule.null is not None) == (name in cm.NULL_MAPS), name
    assert set(cm.RATIONAL_MAPS) == {n for n, r in cm.RULES.items() if r.exact}


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(["sparsemax", "entmax15", "softmax", "sink_logit", "sigmoid",
                             "relu_length", "stick_breaking"]),
       scores=st.lists(st.integers(-40, 40), min_size=1, max_size=5),
       width=st.integers(0, 8), data=st.data())
def test_weights_on_interval_scores_enclose_every_point_inside(kind, scores, width, data):
    """The rule table's weights on interval scores (monotone corners for sparsemax,
    entmax-1.5 and stick-breaking) contain the weights at any rational scores inside the
    score box."""
    from sinkproof.checker.interval import ivpair, lower, precision, upper

    s = [F(x, 8) for x in scores]
    d = F(width, 64)
    t = len(s) - 1
    params = [F(1, 3)] * len(cm.RULES[kind].params)
    with precision(mpmath.libmp.dps_to_prec(30)):
        box = cm.RULES[kind].boxed([ivpair(x - d, x + d) for x in s], t, params)
    inside = [x + F(data.draw(st.integers(-width, width)), 64) for x in s]
    for (lo, hi), b in zip(cm.interval_weights(kind, inside, t, params), box):
        assert lower(b) <= lo and hi <= upper(b)


@given(st.lists(rationals, min_size=1, max_size=5), rationals)
@settings(max_examples=30, deadline=None)
def test_the_face_weigh_is_the_rule_table_with_its_gate(s, z):
    """``sinkproof.checker.weigh``: a gated head's weights are ``σ(z) α_j`` (enclosed by the
    products of the two enclosures) and its slot ``1 - σ(z)``; entmax-1.5 at a tie is the exact
    uniform point, and an unknown map is refused."""
    from sinkproof.checker import MAP_NAMES, weigh

    t = len(s) - 1
    alpha = cm.interval_weights("gated_softmax", s, t)
    g0, g1 = cm.gate_interval(z)
    w, slot = weigh("gated_softmax", s, t, (), z)
    assert slot == (1 - g1, 1 - g0)
    for (lo, hi), (a0, a1) in zip(w, alpha, strict=True):
        assert lo <= a0 * g0 and a1 * g1 <= hi and lo >= 0
    with mpmath.workdps(80):
        g = 1 / (1 + mpmath.exp(-mpmath.mpf(z.numerator) / z.denominator))
        assert mpmath.mpf(g0.numerator) / g0.denominator <= g
        assert g <= mpmath.mpf(g1.numerator) / g1.denominator
    assert weigh("softmax", s, t) == (alpha, (F(0), F(0)))
    tie = [F(1)] * (t + 1)
    assert weigh("entmax15", tie, t) == ([(F(1, t + 1), F(1, t + 1))] * (t + 1), (F(0), F(0)))
    assert set(MAP_NAMES) == set(cm.RULES)
    with pytest.raises(ValueError, match="unknown attention map"):
        weigh("no_such_map", s, t)
