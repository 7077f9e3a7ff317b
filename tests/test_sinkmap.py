"""Sink maps (Theorem 6) held against Theorems 1 and 3 and against accurate models."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import sinkproof as sp
from sinkproof.constructions import softmax_solution
from sinkproof.sinkmap import SinkMap, sink_map

EPS = 0.1


@pytest.fixture(scope="module")
def task() -> sp.TriggerTask:
    return sp.TriggerTask(p=2, T=4)


@pytest.fixture(scope="module")
def smap(task: sp.TriggerTask) -> SinkMap:
    return sink_map(task, EPS)


def hull_distance_signed(task: sp.TriggerTask, prefix: tuple[int, ...]) -> float:
    """dist(0, conv{v(x_1..x_t)}) for fixed values on the signed basis, by hand: 0 when the
    trigger (value 0) or both ±e_i occur; otherwise the centroid of m distinct orthogonal
    unit vectors, norm 1/sqrt(m)."""
    if sp.TRIG in prefix:
        return 0.0
    vecs = {tuple(task.content[c]) for c in prefix}
    for v in vecs:
        if tuple(-x for x in v) in vecs:
            return 0.0
    return 1.0 / math.sqrt(len(vecs))


def test_every_nontrigger_position_is_answered(task, smap):
    n_expected = sum(task.k * (task.k ** (t - 1) + (t - 1) * task.k ** max(t - 2, 0))
                     for t in range(1, task.T + 1))
    assert len(smap.entries) == n_expected
    assert all(k[-1] != sp.TRIG for k in smap.entries)
    assert smap.count("uncertified") == 0 and smap.count("failed") == 0


def test_certificate_verifies_exactly(smap):
    verdict = smap.verify()
    assert verdict.ok, verdict.failure
    assert verdict.details["bounds"] == smap.count("certified")
    assert verdict.details["no_bound"] == smap.count("no bound")


def test_theorem1_homogeneous_prefixes_give_one_minus_eps(task, smap):
    for c in range(task.k):
        for t in range(1, task.T + 1):
            e = smap.entry([c] * t, t)
            assert e.status == "certified"
            assert abs(e.bound - (1 - EPS)) < 1e-6
            assert e.exact <= 1 - sp.sinkmap.parse_eps(EPS)  # never above the truth


def test_at_least_theorem3_everywhere(task, smap):
    for prefix, e in smap.entries.items():
        d = hull_distance_signed(task, prefix)
        thm3 = 1 - EPS / d if d > 0 else 0.0
        assert e.bound >= thm3 - 1e-7, (prefix, e.bound, thm3)


def test_theorem3_distance_matches_convex_layer(task):
    convex = pytest.importorskip("sinkproof.convex")
    for prefix in [(0,), (0, 1), (0, 1, 3), (0, 2), (1, 1, 0)]:
        got = convex.min_norm_point(task.content[list(prefix)]).distance
        assert abs(got - hull_distance_signed(task, prefix)) < 1e-6


def test_mixed_position_with_zero_in_hull_is_certified(smap):
    """(BOS, c, -c): Theorem 3 gives nothing (0 in the hull), logit sharing does.

    By hand: the homogeneous prefix (-c,-c) caps u(-c@2 -> -c@2) at eps/(1-eps); then (c,-c)
    caps u(-c@2 -> c@1) at (w(1+eps)+eps)/(1-eps), so BOS mass >= 1/(1 + u_c + w)."""
    e = smap.entry([0, 2], 2)
    w = EPS / (1 - EPS)
    u = (w * (1 + EPS) + EPS) / (1 - EPS)
    assert e.status == "certified"
    assert abs(e.bound - 1 / (1 + u + w)) < 1e-6


def test_no_bound_after_a_trigger_with_reason(task, smap):
    e = smap.entry([0, sp.TRIG, 1], 3)
    assert e.status == "no bound" and e.bound == 0.0
    assert "TRIG" in e.reason


def test_no_bound_only_where_theorem3_is_silent_too(task, smap):
    for prefix, e in smap.entries.items():
        if e.status == "no bound":
            assert hull_distance_signed(task, prefix) == 0.0


def test_at_most_bos_mass_of_accurate_softmax_construction(task, smap):
    for L in (4.0, 6.0, 8.0, 10.0):
        model = softmax_solution(task, L)
        if sp.evaluate(model).max_error <= EPS:
            break
    else:  # pragma: no cover
        pytest.fail("no accurate construction found")
    checked = 0
    for prefix in smap.entries:
        if len(prefix) == task.T:
            bos = model.bos_mass(list(prefix))[0]
            for t in range(1, task.T + 1):
                if prefix[t - 1] != sp.TRIG:
                    assert smap.bound(prefix, t) <= bos[t] + 1e-12
                    checked += 1
    assert checked > 100


def test_explicit_positions_and_lookup(task):
    m = sink_map(task, "1/10", positions=[([0, 2, 1], 2), ([1, 1], 2)])
    assert set(m.entries) == {(0, 2), (1, 1)}
    assert m.verify().ok
    with pytest.raises(KeyError):
        m.entry([0, 2, 1], 3)


def test_bad_input_raises_clear_errors(task):
    with pytest.raises(ValueError, match="learned"):
        sink_map(task, EPS, values="learned")
    with pytest.raises(ValueError, match="eps"):
        sink_map(task, -0.1)
    with pytest.raises(ValueError, match="eps"):
        sink_map(task, "ten")
    with pytest.raises(TypeError):
        sink_map("task", EPS)
    with pytest.raises(ValueError, match="past the end"):
        sink_map(task, EPS, positions=[([0], 3)])
    with pytest.raises(ValueError, match="shape"):
        sink_map(task, EPS, values=np.eye(2))
    with pytest.raises(ValueError, match="subfamily"):
        sink_map(task, EPS, subfamily="some")


def test_known_values_scale_the_homogeneous_bound():
    """Values 2·U_fix: Theorem 1 gives 1 - eps/||v_c|| = 1 - eps/2 on homogeneous prefixes."""
    task = sp.TriggerTask(p=2, T=2)
    m = sink_map(task, EPS, values=2 * sp.fixed_values(2))
    assert abs(m.bound([1, 1], 2) - (1 - EPS / 2)) < 1e-6
    assert m.verify().ok


def test_gaussian_content_without_symmetries_verifies():
    task = sp.TriggerTask(p=2, T=3, content="gaussian", k=3, seed=1)
    m = sink_map(task, 0.05)
    assert m.count("certified") > 0 and m.verify().ok


def test_trigger_positions_and_multi_trigger_family():
    task = sp.TriggerTask(p=2, T=3)
    m = sink_map(task, EPS, positions=[([0, 1, sp.TRIG], 3), ([sp.TRIG], 1)])
    assert m.entry([0, 1, sp.TRIG], 3).status == "no bound"  # averaging needs no BOS mass
    assert m.entry([sp.TRIG], 1).status == "no bound" and m.verify().details["no_bound"] == 1
    multi = sink_map(sp.TriggerTask(p=2, T=3, triggers="multi"), EPS)
    assert len(multi.entries) == 4 + 4 * 5 + 4 * 25 and multi.verify().ok
    assert abs(multi.bound([0, 2], 2) - 0.7363636) < 1e-6


def test_why_names_the_binding_prefixes(smap):
    """(BOS, e1, -e1): the bound comes from (-e1, -e1) and the target itself (by hand)."""
    top = [prefix for prefix, _ in smap.why([0, 2], 2, n=2)]
    assert set(top) == {(2, 2), (0, 2)}
    assert smap.why([0, sp.TRIG, 1], 3) == []
    derived = smap.why([2, 0], 2, n=2)  # the mirror image, carried by a symmetry
    assert {p for p, _ in derived} == {(0, 0), (2, 0)}


def test_cli_values_from_a_model_file(tmp_path, capsys):
    from sinkproof.cli import main

    task = sp.TriggerTask(p=2, T=2)
    model = sp.AttentionModel(task, "softmax", np.zeros((task.D, task.D)), 2 * sp.fixed_values(2))
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model.to_dict()))
    assert main(["sinkmap", "--p", "2", "--T", "2", "--eps", "0.1", "--values", str(path),
                 "--at", "1,1:2"]) == 0
    assert "0.950000" in capsys.readouterr().out  # Theorem 1 with ||v_c|| = 2: 1 - eps/2


def test_at_least_the_convex_layers_certified_theorem3_bound(task, smap):
    """Against the convex layer's own Theorem 3 family certificate (exact bounds)."""
    convex = pytest.importorskip("sinkproof.convex")
    family = convex.family_certificate(task, "1/10")
    compared = 0
    for prefix, e in smap.entries.items():
        thm3 = family.bound_at(prefix, len(prefix))
        if thm3 is not None:
            assert e.bound >= float(thm3) - 1e-7, (prefix, e.bound, thm3)
            compared += 1
        else:
            assert hull_distance_signed(task, prefix) == 0.0
    assert compared > 50
