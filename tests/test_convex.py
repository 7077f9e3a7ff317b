"""Convex layer: Theorem 3 certificates (per position, family), the simplex pair, cross-checks."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof import checker, strategies
from sinkproof.checker.family import read_instance
from sinkproof.checker.family.trigger import situations as occurring_situations
from sinkproof.cli import main
from sinkproof.constructions import softmax_solution
from sinkproof.convex import (
    family_certificate,
    min_norm_point,
    position_certificate,
    position_certificates,
    simplex_pair,
    simplex_pair_at,
)
from sinkproof.convex.crosscheck import (
    hull_distance_scipy,
    min_bos_mass_scipy,
    zero_in_hull_highs,
)
from sinkproof.convex.values import value_table
from sinkproof.numerics import stable_norm
from sinkproof.work import WorkLimitExceeded

EPS = Fraction(1, 100)


def non_trigger_positions(task):
    """Every (sequence, t) with t >= 1 and x_t content, by brute force."""
    for seq in task.sequences():
        for t in range(1, len(seq) + 1):
            if seq[t - 1] != sp.TRIG:
                yield seq, t


# ------------------------------------------------------------ family, exact
def test_signed_family_bounds_are_exact_lower_bounds():
    """Signed basis, p=2: S without ±pairs has dist(0, conv S) = 1/sqrt|S| exactly."""
    cert = family_certificate(sp.TriggerTask(p=2, T=6), "1/100")
    assert len(cert.situations) == 30 and len(cert.bounded) == 8 and not cert.undecided
    for s in cert.bounded:
        size = len(s.tokens)
        assert s.d**2 <= Fraction(1, size)  # d never exceeds the true distance
        assert float(s.d) > 1 / math.sqrt(size) - 1e-9
        slack = 1 - s.bound  # bound <= 1 - ε·sqrt(size), exactly
        assert slack >= 0 and slack**2 >= EPS**2 * size
        assert float(s.bound) > 1 - float(EPS) * math.sqrt(size) - 1e-9
    for s in cert.zero_in_hull:
        assert sp.TRIG in s.tokens or any(c + 2 in s.tokens for c in s.tokens if c < 2)
    assert cert.min_bound == min(s.bound for s in cert.bounded)
    assert cert.verify().ok


@pytest.mark.parametrize("task", [
    sp.TriggerTask(p=1, T=3), sp.TriggerTask(p=2, T=2), sp.TriggerTask(p=1, T=3, triggers="multi"),
    sp.TriggerTask(p=2, T=3, content="gaussian", k=3, seed=1),
])
def test_situations_are_exactly_the_token_sets_of_the_family(task):
    """The checker's enumeration equals the sets {x_1..x_t} met by brute force; counts agree."""
    seen = {tuple(sorted(set(seq[:t]))) for seq, t in non_trigger_positions(task)}
    cert = family_certificate(task, EPS)
    inst = read_instance(cert.to_dict()["instance"])
    assert set(occurring_situations(inst)) == seen
    assert {s.tokens for s in cert.situations} == seen
    assert cert.n_positions == sum(1 for _ in non_trigger_positions(task))
    assert cert.verify().ok


def test_family_agrees_with_per_position_certificates():
    task = sp.TriggerTask(p=2, T=3)
    positions = list(non_trigger_positions(task))
    fam = family_certificate(task, EPS)
    singles = position_certificates(task, positions, EPS)
    assert len(singles) == len(positions)
    for (seq, t), cert in zip(positions, singles):
        assert cert.bound == fam.bound_at(seq, t)
    for cert in singles[:: max(1, len(singles) // 12)]:
        assert cert.verify().ok


def test_large_family_certifies_by_situations():
    cert = family_certificate(sp.TriggerTask(p=3, T=10), EPS)
    assert cert.n_positions > 10**8 and len(cert.situations) == 2**7 - 2
    assert len(cert.bounded) == 3**3 - 1  # nonempty subsets of one sign pattern
    verdict = cert.verify()
    assert verdict.ok and verdict.details["bounded"] == 26


def test_learned_values_and_gaussian_content_verify():
    task = sp.TriggerTask(p=2, T=3, content="gaussian", k=3, seed=4)
    U = np.random.default_rng(0).standard_normal((2, 5))
    cert = family_certificate(task, "1/50", U)
    assert cert.values.factor == 2 and not cert.values.fixed
    verdict = cert.verify()
    assert verdict.ok and "1 - 2ε/d" in verdict.claim
    data = cert.to_dict()
    data["instance"]["values"]["U"][0][0] = "7/3"  # another value map: directions stop fitting
    bad = checker.verify(data)
    assert not bad.ok or bad.details != verdict.details


def test_model_values_are_taken_from_a_one_head_model():
    task = sp.TriggerTask(p=2, T=3)
    model = softmax_solution(task, 5.0)
    assert family_certificate(task, EPS, model).values.fixed
    two = sp.AttentionModel(task, "softmax", np.zeros((2, task.D, task.D)))
    with pytest.raises(ValueError, match="one head"):
        family_certificate(task, EPS, two)


# ------------------------------------------------------- rounding is safe
@settings(max_examples=15)
@given(st.integers(1, 3).flatmap(lambda p: st.tuples(st.just(p), strategies.content_sets(p))),
       st.floats(1e-3, 0.2))
def test_rounded_certificate_is_never_stronger_than_the_float_one(p_content, eps):
    p, content = p_content
    task = sp.TriggerTask(p=p, T=len(content), content=content)
    seq = tuple(range(task.k))
    cert = position_certificate(task, seq, len(seq), eps)
    points = np.asarray(content)
    ref = hull_distance_scipy(points)
    if cert.bound is None:
        if cert.situation.zero_combination is not None:
            assert zero_in_hull_highs(points)
        else:  # "undecided" (nothing claimed) only where the hull all but touches 0
            assert ref < 1e-6 and cert.reason.startswith("undecided")
        return
    assert cert.bound <= 1 - cert.eps / cert.d and cert.verify().ok
    if ref < 1e-6:  # float distances underflow or drown in solver tolerance
        return
    # CVXPY minimises ||z||², so its float distance is accurate to ~sqrt(tolerance)
    assert abs(cert.distance**2 - ref**2) <= 1e-7 * (1 + ref**2)
    # the certified d comes from the rounded direction: below the true distance, and close
    assert float(cert.d) <= ref * (1 + 1e-6) + 1e-12
    assert float(cert.d) >= ref - 1e-6 * (1 + ref)
    # the certified bound is recomputed from d: never above the float bound
    float_bound = 1 - float(cert.eps) / ref
    assert float(cert.bound) <= float_bound + 1e-6 * (1 + float(cert.eps) / ref**2)
    assert cert.bound <= 1 - cert.eps / cert.d
    assert cert.verify().ok


@settings(max_examples=20)
@given(st.integers(1, 3).flatmap(lambda p: strategies.content_sets(p, max_k=5)))
@example(np.array([[0.0], [6.103515625e-05]]))  # the reference once stopped at the midpoint
@example(np.array([[0.0], [-1.0], [-6.103515625e-05]]))  # ... and once at 3e-5 for distance 0
@example(np.array([[0.0, 1.0], [1.1390436e-04, 0.0]]))  # a tiny distance: direction noise ~ tol/d
def test_hull_distance_agrees_with_scipy_and_highs(points):
    sol = min_norm_point(points)
    ref = hull_distance_scipy(points)
    assert abs(sol.distance - ref) <= 1e-5 * (1 + ref)
    if ref > 1e-4:
        assert not zero_in_hull_highs(points)
        # the dual direction separates: w·v >= d·||w|| up to solver tolerance
        w = sol.direction / np.linalg.norm(sol.direction)
        assert np.min(points @ w) >= sol.distance - 1e-5
        # the solver's absolute error (~1e-7 per coordinate) turns each direction by ~1e-7/d
        assert np.allclose(w, sol.point / np.linalg.norm(sol.point), atol=1e-3 + 2e-6 / ref)


# ------------------------------------------------------ soundness on models
@settings(max_examples=25)
@given(st.data())
def test_bound_holds_on_every_accurate_enough_model(data):
    """Theorem 3 as certified: α_t0 >= bound with ε the model's own error at 0 and t."""
    task = data.draw(strategies.tasks(max_p=2, max_T=4, content="signed", triggers="single"))
    near = data.draw(st.booleans())
    if near:
        model = data.draw(strategies.near_solutions(task, kind="softmax", max_L=25.0))
    else:
        model = data.draw(strategies.models(task, kind="softmax", heads=1, scale=(1.0, 30.0)))
    _assert_certified_bounds_hold(task, model, data.draw(strategies.sequences(task)))


def _assert_certified_bounds_hold(task, model, seq) -> None:
    out, weights = model.forward(seq)
    err = stable_norm(out - task.targets(seq))  # np.linalg.norm squares 1e-249 errors to 0
    picks = [t for t in range(1, len(seq) + 1) if seq[t - 1] != sp.TRIG]
    if not picks:
        return
    eps = max(err[0], max(err[t] for t in picks)) * (1 + 1e-9)
    certs = position_certificates(task, [(seq, t) for t in picks], eps, model)
    for t, cert in zip(picks, certs):
        if cert.bound is not None:
            assert weights[0, t, 0] >= float(cert.bound) - 1e-9, (seq, t, cert)


@pytest.mark.parametrize("seq", [(-1, 1), (0, -1), (1, -1)])
def test_bound_holds_on_a_model_with_errors_near_1e_249(seq):
    """Pinned: A = 0 and learned values ~3e-249, where the error once squared to 0 in the
    test (ε = 0 then gives bound 1 against α_t0 = 1/(t+1))."""
    task = sp.TriggerTask(p=1, T=2)
    U = 3e-249 * np.random.default_rng(0).uniform(-1, 1, (1, task.p, task.p + 3))
    model = sp.AttentionModel(task, "softmax", np.zeros((1, task.D, task.D)), U=U)
    _assert_certified_bounds_hold(task, model, seq)


# ----------------------------------------------------------- the pair
def test_pair_at_a_non_trigger_position_matches_theorem_3():
    task = sp.TriggerTask(p=2, T=4)
    pair = simplex_pair_at(task, (0, 1, 0), 3, EPS)
    hull = position_certificate(task, (0, 1, 0), 3, EPS)
    assert pair.normalised.status == "optimal"
    assert abs(float(pair.normalised.bound) - float(hull.bound)) < 1e-6
    assert float(pair.normalised.bound) <= pair.normalised.optimum + 1e-9
    assert pair.relaxed.witness[0] == 0 and pair.relaxed.error_sq <= EPS**2
    text = repr(pair)
    assert "simplex" in text and "sum-to-one dropped" in text and "witness" in text
    assert pair._repr_markdown_().startswith("|")


@settings(max_examples=15)
@given(st.integers(1, 3).flatmap(
    lambda p: st.tuples(strategies.content_sets(p, max_k=4),
                        st.lists(st.floats(-1, 1), min_size=p, max_size=p))),
       st.floats(0.05, 0.5))
@example((np.array([[-1.17e-38]]), [0.5]), 0.5)  # the optimum jumps at ε: floats said ≈ 0
def test_pair_agrees_with_scipy_and_certificates_are_exact(values_target, eps):
    keys, target = values_target
    V = np.vstack([np.zeros(keys.shape[1]), keys])  # BOS value 0
    y = np.array(target)
    pair = simplex_pair(V, y, eps)
    ref = min_bos_mass_scipy(V, y, float(pair.eps))
    n = pair.normalised
    if n.status == "infeasible":
        assert np.isnan(ref)
        # Farkas, exactly: min_j w·v_j - w·y > ε·u >= ε||w||
        wv = [sum(a * b for a, b in zip(n.w, map(Fraction, v))) for v in V]
        wy = sum(a * Fraction(b) for a, b in zip(n.w, y))
        assert min(wv) - wy > pair.eps * n.u and n.u**2 >= sum(x * x for x in n.w)
        return
    assert float(n.bound) <= n.optimum + 1e-7 and float(n.bound) >= n.optimum - 1e-4
    # two float solvers agree only where their tolerance (~1e-8) can see the data: a nonzero
    # entry like -1.2e-38 makes the optimum jump at ε (test_pair_at_a_scale_floats_cannot_see)
    tiny = np.abs(V[(V != 0) & (np.abs(V) < 1e-6)])
    if tiny.size == 0:
        assert not np.isnan(ref) and abs(n.optimum - ref) <= 1e-4
    if pair.relaxed.witness is not None:
        alpha = pair.relaxed.witness
        assert alpha[0] == 0 and all(a >= 0 for a in alpha)
        out = [sum(a * Fraction(v[i]) for a, v in zip(alpha, V)) - Fraction(y[i])
               for i in range(len(y))]
        assert sum(x * x for x in out) == pair.relaxed.error_sq <= pair.eps**2


def test_pair_at_a_scale_floats_cannot_see():
    """Pinned: values 0 and -1.17e-38, target 1/2, ε = 1/2.  Only α_0 = 1 is feasible (any
    weight on the key moves the output further than ε from y), so the exact optimum is 1; the
    float solvers (tolerance ~1e-8) answered ≈ 0 and 0.5.  The certified bound is exactly 1,
    and the reported optimum is raised to it."""
    pair = simplex_pair([[0.0], [-1.17e-38]], [0.5], 0.5)
    n = pair.normalised
    assert n.status == "optimal" and n.bound == 1 and n.optimum == 1.0
    # the certificate, exactly: α_0 (w·v_0) + (1 - α_0) m <= w·y + ε u forces α_0 >= bound
    wv = [sum(a * Fraction(x) for a, x in zip(n.w, v)) for v in pair.values]
    wy = sum(a * Fraction(b) for a, b in zip(n.w, pair.target))
    assert wv[1] > wv[0] and n.u**2 >= sum(x * x for x in n.w)
    assert (wv[1] - wy - pair.eps * n.u) / (wv[1] - wv[0]) >= n.bound
    # and 1 is attained: all weight on BOS has error exactly 1/2 = ε
    assert (Fraction(0) - Fraction(1, 2)) ** 2 <= pair.eps**2


def test_pair_input_errors():
    with pytest.raises(ValueError, match="BOS row"):
        simplex_pair([[0.0, 0.0]], [0.0, 0.0], 0.1)
    with pytest.raises(ValueError, match="target has length"):
        simplex_pair([[0.0, 0.0], [1.0, 0.0]], [0.0], 0.1)
    with pytest.raises(ValueError, match="eps must be >= 0"):
        simplex_pair([[0.0, 0.0], [1.0, 0.0]], [0.0, 0.0], -1)


# ------------------------------------------------------------ API errors
@pytest.mark.parametrize("call, exc, fragment", [
    (lambda t: position_certificate(t, (0, sp.TRIG), 2, 0.1), ValueError, "holds the trigger"),
    (lambda t: position_certificate(t, (0, 1), 3, 0.1), ValueError, "beyond the sequence"),
    (lambda t: position_certificate(t, (0, 1), 1.5, 0.1), TypeError, "t must be an integer"),
    (lambda t: position_certificate(t, (0, 9), 1, 0.1), ValueError, "neither a content index"),
    (lambda t: family_certificate(t, 0.1, np.zeros((3, 3))), ValueError, "U must have shape"),
    (lambda t: family_certificate(t, 0.1, "learned"), ValueError, "values must be 'fixed'"),
    (lambda t: family_certificate(t, "abc", "fixed"), ValueError, "must be a number such as"),
    (lambda t: family_certificate("task", 0.1), TypeError, "needs a task"),
])
def test_bad_input_raises_one_line_errors(call, exc, fragment):
    with pytest.raises(exc, match=fragment):
        call(sp.TriggerTask(p=2, T=3))


def test_values_are_not_mutated():
    task = sp.TriggerTask(p=2, T=2)
    U = np.random.default_rng(1).standard_normal((2, 5))
    before = U.copy()
    table = value_table(task, U)
    assert np.array_equal(U, before) and U.flags.writeable and not table.U.flags.writeable


def test_reprs_are_compact():
    task = sp.TriggerTask(p=2, T=3)
    fam = family_certificate(task, EPS)
    assert "situations cover" in repr(fam) and "\n" not in repr(fam)
    assert fam._repr_markdown_().count("\n") == len(fam.situations) + 3
    pos = position_certificate(task, (0, 2), 2, EPS)
    assert "no bound" in repr(pos) and "0 = 1/2·v(c0) + 1/2·v(c2)" in repr(pos)


# ------------------------------------------------------------------ CLI
def test_cli_certify_verify_and_tampering(tmp_path, capsys):
    path = tmp_path / "cert.json"
    assert main(["certify", "--p", "2", "--T", "6", "--values", "fixed", "--eps", "0.01",
                 "--out", str(path)]) == 0
    assert main(["verify", str(path)]) == 0
    assert "verified (hull-family)" in capsys.readouterr().out
    original = json.loads(path.read_text())

    def check(edit):
        cert = json.loads(json.dumps(original))
        edit(cert)
        path.write_text(json.dumps(cert))
        return main(["verify", "--quiet", str(path)])

    bounded = next(i for i, s in enumerate(original["data"]["situations"]) if "bound" in s)

    def raise_bound(c):
        entry = c["data"]["situations"][bounded]
        entry["bound"] = str(Fraction(entry["bound"]) + Fraction(1, 10**9))

    def change_vector(c):
        c["data"]["situations"][bounded]["w"][0] = "-" + c["data"]["situations"][bounded]["w"][0]

    def drop_field(c):
        del c["data"]["situations"][bounded]["d"]

    def raise_claim(c):
        c["claim"]["min_bound"] = str(Fraction(c["claim"]["min_bound"]) + Fraction(1, 10**9))

    assert check(raise_bound) == 1
    assert check(change_vector) == 1
    assert check(raise_claim) == 1
    assert check(drop_field) == 2
    capsys.readouterr()


def test_cli_single_position_and_model_values(tmp_path, capsys):
    path = tmp_path / "pos.json"
    assert main(["certify", "--p", "2", "--T", "4", "--eps", "1/100", "--sequence", "0,1,T,2",
                 "--t", "2", "--out", str(path)]) == 0
    assert checker.verify_file(path).ok
    model_file = tmp_path / "model.json"
    task = sp.TriggerTask(p=2, T=4)
    model_file.write_text(json.dumps(softmax_solution(task, 3.0).to_dict()))
    assert main(["certify", "--p", "2", "--T", "4", "--eps", "0.05", "--values",
                 str(model_file), "--out", str(path)]) == 2  # the first run's file
    assert "exists and this run did not create it" in capsys.readouterr().err
    assert main(["certify", "--p", "2", "--T", "4", "--eps", "0.05", "--values",
                 str(model_file), "--out", str(path), "--force"]) == 0
    assert checker.verify_file(path).ok
    assert main(["certify", "--eps", "0.1", "--t", "2", "--out", str(path)]) == 2
    assert main(["certify", "--eps", "0.1", "--sequence", "0,x", "--t", "1",
                 "--out", str(path)]) == 2
    capsys.readouterr()


def test_report_section_lists_verified_family_certificates():
    from sinkproof.report.family import theorem3_family_section

    (table,) = theorem3_family_section(sp.TriggerTask(p=1, T=3))
    assert [row[0] for row in table.rows] == ["1/100", "1/1000"]
    for row in table.rows:  # p=1: {+1}, {-1} bounded by 1 - eps; {+1,-1} and trigger sets not
        assert row[1:5] == [6, 2, 4, 0] and row[6] == "yes"
    assert table.rows[0][5] == pytest.approx(0.99, abs=1e-12)


def test_many_content_vectors_with_short_sequences():
    """Cost follows the situations: k=12 gaussian vectors with T=2 give 13 + 78 - 1 = 90."""
    task = sp.TriggerTask(p=3, T=2, content="gaussian", k=12, seed=3)
    cert = family_certificate(task, EPS)
    assert len(cert.situations) == 90 and cert.verify().ok
    big = sp.TriggerTask(p=3, T=12, content="gaussian", k=30)
    with pytest.raises(WorkLimitExceeded, match=r"situations.*max_work=N"):
        family_certificate(big, EPS)  # the producer's estimate, before any work
    with pytest.raises(sp.checker.LimitExceeded, match=r"raise it with --max-situations"):
        family_certificate(big, EPS, max_work=10**12)  # the checker's own limit behind it
