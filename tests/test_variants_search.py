"""Search, witnesses, claims and training for every attention map.

Cross-checks between independent paths: the search objective's BOS measure against the
float evaluator's mass/share, its gradients (map parameters and gate included) against
finite differences, the trusted checker's rigorous figures against the float model, and
the high-precision (mpmath) weights against the checker's exact/interval weights.
"""

from __future__ import annotations

import copy
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from conftest import with_checker_row

import sinkproof as sp
from sinkproof import checker
from sinkproof.attention import MAPS
from sinkproof.checker.maps import interval_weights
from sinkproof.claims.positions import PositionSet, masses
from sinkproof.claims.precise import mp_weights
from sinkproof.errors import CertificateError
from sinkproof.search import search
from sinkproof.search.objective import (
    batch_measures,
    bos_measure_kind,
    extra_parameters,
    prefix_batch,
    value_grad_params,
    witness_measure,
)
from sinkproof.search.verify import verify_witness, witness_document
from sinkproof.variants import construction, verify_construction

TASK = sp.TriggerTask(p=1, T=2)


def _random_head(kind: str, seed: int = 0, heads: int = 1) -> sp.AttentionModel:
    rng = np.random.default_rng(seed)
    kw = {}
    if MAPS[kind].param_names:
        kw["map_params"] = rng.normal(0, 1, (heads, len(MAPS[kind].param_names)))
    if MAPS[kind].properties.gated:
        kw["gate_w"] = rng.normal(0, 1, (heads, TASK.D))
        kw["gate_c"] = rng.normal(0, 1, heads)
    return sp.AttentionModel(TASK, kind, rng.normal(0, 1, (heads, TASK.D, TASK.D)),
                             rng.normal(0, 1, (heads, TASK.p, TASK.p + 3)), **kw)


def _rejected(doc: dict) -> bool:
    try:
        return not checker.verify(doc).ok
    except CertificateError:
        return True


def _extra(model: sp.AttentionModel) -> dict[str, np.ndarray]:
    return extra_parameters(TASK, model.kind, model.H, {"map_params": model.map_params,
                                                        "gate_w": model.gate_w,
                                                        "gate_c": model.gate_c})


@pytest.mark.parametrize("kind", list(MAPS))
def test_the_search_measure_is_the_claims_measure(kind):
    """The objective's largest BOS figure equals the claims' float mass (simplex) or share
    (log-odds maps) / weight (exact-zero maps off the simplex) at the constrained prefixes."""
    model = _random_head(kind, 1, heads=2)
    batch = prefix_batch(TASK, where="nontrigger")
    m = batch_measures(TASK, kind, model.A, model.U, batch, **_extra(model))
    bos, _ = zip(*[masses(model, codes) for _, codes in
                   PositionSet("nontrigger").prefix_blocks(TASK)])
    share = max(float(b.max()) for b in bos)
    if witness_measure(kind) == "share" or MAPS[kind].properties.on_simplex:
        assert m.max_bos_mass == pytest.approx(share, abs=1e-9)
    else:  # relu, relu_length: the BOS weight c_t max(s_0, 0)
        fig = checker.verify(witness_document(model, 0.0, 0.0, "nontrigger")).figures
        assert m.max_bos_mass == pytest.approx(float(fig.bos), abs=1e-9)
    ev = sp.evaluate(model, progress=False)
    assert m.max_error == pytest.approx(ev.max_error, abs=1e-9)


@pytest.mark.parametrize("kind", ["gated_softmax",
                                  *(pytest.param(k, marks=pytest.mark.slow)
                                    for k in ("sink_logit", "sigmoid", "entmax15",
                                              "relu_length"))])
def test_gradients_in_every_head_parameter_match_finite_differences(kind):
    model = _random_head(kind, 2)
    batch = prefix_batch(TASK, where="all")
    params = {"A": model.A, "U": model.U, **_extra(model)}
    loss = "penalty"
    opts = dict(max_error=0.3, max_bos_mass=0.4)
    value, grads, _ = value_grad_params(TASK, kind, params, batch, loss=loss, **opts)
    assert set(grads) == set(params)
    rng = np.random.default_rng(3)
    for name, g in grads.items():
        d = rng.normal(0, 1, g.shape)
        h = 1e-6

        def f(x, name=name, d=d):
            moved = dict(params, **{name: params[name] + x * d})
            return value_grad_params(TASK, kind, moved, batch, loss=loss, wrt=("A",),
                                     **opts)[0]
        fd = (f(h) - f(-h)) / (2 * h)
        assert float((g * d).sum()) == pytest.approx(fd, rel=1e-4, abs=1e-6), name


def test_extra_parameters_are_checked():
    with pytest.raises(ValueError, match="has no gate"):
        extra_parameters(TASK, "softmax", 1, {"gate_w": np.zeros((1, TASK.D))})
    with pytest.raises(ValueError, match="no parameters"):
        extra_parameters(TASK, "relu", 1, {"map_params": np.zeros((1, 1))})
    with pytest.raises(TypeError, match="unknown head parameters"):
        extra_parameters(TASK, "relu", 1, {"bias": 1.0})
    with pytest.raises(ValueError, match="no parameter 'gate_w'"):
        value_grad_params(TASK, "softmax", {"A": np.zeros((1, TASK.D, TASK.D))},
                          prefix_batch(TASK), wrt=("gate_w",))


@pytest.mark.parametrize("kind", with_checker_row(MAPS))
def test_precise_weights_lie_in_the_checkers_intervals(kind):
    rng = np.random.default_rng(5)
    for trial in range(5):
        t = int(rng.integers(0, 4))
        s = [Fraction(int(x), 8) for x in rng.integers(-40, 40, t + 1)]
        n_params = len(MAPS[kind].param_names)
        params = [Fraction(int(x), 4) for x in rng.integers(-8, 8, n_params)]
        ivs = interval_weights(kind, s, t, params)
        with mpmath.workdps(50):
            w = mp_weights(kind, [mpmath.mpf(x.numerator) / x.denominator for x in s], t,
                           [mpmath.mpf(x.numerator) / x.denominator for x in params])
            slack = mpmath.mpf(10) ** -40
            for (lo, hi), x in zip(ivs, w):
                lo_, hi_ = (mpmath.mpf(v.numerator) / v.denominator for v in (lo, hi))
                assert lo_ - slack <= x <= hi_ + slack, (kind, s, trial)


@pytest.mark.parametrize("kind", with_checker_row(MAPS))
def test_a_construction_is_a_verified_witness_and_tampering_is_rejected(kind):
    """Each map's construction as a witness file: the checker confirms its error and BOS
    bounds (weight or share); a moved score entry, map parameter or gate breaks it."""
    con = construction(TASK, kind)
    check = verify_construction(con)
    model = con.model()
    measure = witness_measure(kind)
    bos_hi = float(check.bos_share_hi if measure == "share" else check.bos_hi)
    eps = max(check.error_hi * 1.01, 1e-12)
    report = verify_witness(model, eps, bos_hi * 1.01 + 1e-12, "nontrigger",
                            measure=measure)
    assert report.verified, report
    doc = report.document
    assert checker.verify(doc).ok
    # the checker's rigorous error agrees with the float model
    ev = sp.evaluate(model, progress=False)
    assert report.error == pytest.approx(ev.max_error, rel=1e-6, abs=1e-12)
    # tampering: a claimed error below the true one, or a moved parameter
    tight = copy.deepcopy(doc)
    if report.error > 0:
        tight["claim"]["max_error"] = checker.schema.format_rational(Fraction(report.error / 2))
        assert _rejected(tight)
    if report.bos_mass > 0:  # (relu has error 0 and BOS weight 0 exactly: nothing to halve)
        tight = copy.deepcopy(doc)
        tight["claim"]["max_bos_mass"] = checker.schema.format_rational(
            Fraction(report.bos_mass / 2))
        assert _rejected(tight)
    moved = copy.deepcopy(doc)
    if "map_params" in moved["data"]:
        moved["data"]["map_params"][0][0] = "5"
    elif "gate_c" in moved["data"]:
        moved["data"]["gate_c"][0] = "5"
    else:
        moved["data"]["A"][0] = [[str(Fraction(1, 3) * (i - j)) for j in range(TASK.D)]
                                 for i in range(TASK.D)]
    assert _rejected(moved)


def test_the_checker_refuses_malformed_head_parameters():
    doc = witness_document(construction(TASK, "sink_logit").model(), 1.0, 1.0)
    bad = copy.deepcopy(doc)
    del bad["data"]["map_params"]
    with pytest.raises(CertificateError, match="map_params"):
        checker.verify(bad)
    bad = copy.deepcopy(doc)
    bad["data"]["gate_w"] = [[0] * TASK.D]
    with pytest.raises(CertificateError, match="no gate"):
        checker.verify(bad)
    gated = witness_document(construction(TASK, "gated_softmax").model(), 1.0, 1.0)
    bad = copy.deepcopy(gated)
    bad["data"]["gate_c"] = ["1", "2"]
    with pytest.raises(CertificateError, match="gate_c"):
        checker.verify(bad)


@pytest.mark.parametrize("kind", ["sink_logit", pytest.param("relu_length",
                                                             marks=pytest.mark.slow)])
def test_search_finds_a_verified_sink_free_witness(kind):
    r = search(TASK, kind, heads=1, values="fixed", max_error=0.1, max_bos_mass=0.3,
               restarts=4, processes=1, maxiter=200, seed=0)
    assert r.found and r.verified
    assert r.witness.document["claim"].get("bos_measure", "weight") == witness_measure(kind)
    assert checker.verify(r.witness.document).ok
    if MAPS[kind].param_names:  # the sink logit was learned: it left its start 0
        assert r.model.map_params[0, 0] != 0.0


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["softmax1", "sigmoid", "gated_softmax", "relu"])
def test_search_finds_sink_free_witnesses_for_the_other_maps_off_the_simplex(kind):
    r = search(TASK, kind, heads=1, values="fixed", max_error=0.1, max_bos_mass=0.3,
               restarts=4, processes=1, maxiter=200, seed=0)
    assert r.found and checker.verify(r.witness.document).ok


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["softmax", "sparsemax"])
def test_search_never_reports_a_sink_free_simplex_head(kind):
    """On the simplex Theorem 3 forbids the witness: the search must not find one."""
    r = search(TASK, kind, heads=1, values="fixed", max_error=0.02, max_bos_mass=0.3,
               restarts=2, processes=1, maxiter=100, seed=0)
    assert not r.found


def test_measure_kinds_follow_the_properties():
    for name, amap in MAPS.items():
        assert bos_measure_kind(name) == ("weight" if amap.properties.exact_zeros
                                          else "log_odds")
        if amap.properties.on_simplex:
            assert witness_measure(name) == "weight"
    with pytest.raises(ValueError, match="never 0"):
        search(TASK, "sigmoid", max_bos_mass=0.0, restarts=1)


def test_a_simplex_claim_is_proved_by_the_theorem_route():
    outcome = sp.check("examples/claims/sparsemax_homogeneous.toml", search=False, bnb=False)
    assert outcome.status == "proved", outcome
    assert "theorem" in outcome.by


@pytest.mark.slow
def test_a_sink_logit_claim_is_refuted_by_a_checker_verified_witness(tmp_path):
    outcome = sp.check("examples/claims/sink_logit_homogeneous.toml", bnb=False, budget=480,
                       witness=tmp_path / "w.json", certificate_out=tmp_path / "c.json")
    assert outcome.status == "refuted", outcome
    verdict = checker.verify_file(outcome.witness)
    assert verdict.ok
    statement = verdict.statement
    assert statement["model"]["kind"] == "sink_logit" and statement["bos_measure"] == "share"
    assert "map_params" in statement["model"]


@pytest.mark.slow  # a second or more of training/compiles: CI runs it
def test_training_learns_the_sink_logit():
    from sinkproof.experiment.config import ExperimentConfig
    from sinkproof.experiment.train import train

    cfg = ExperimentConfig.smoke().replace(steps=20)
    trained = train(cfg.task("signed"), "sink_logit", 2, 0, cfg)
    assert trained.model.kind == "sink_logit"
    assert np.all(trained.model.map_params != 0.0)  # b moved off its start 0


@pytest.mark.slow
def test_training_learns_the_gate():
    from sinkproof.experiment.config import ExperimentConfig
    from sinkproof.experiment.train import train

    cfg = ExperimentConfig.smoke().replace(steps=20)
    trained = train(cfg.task("signed"), "gated_softmax", 1, 0, cfg)
    assert np.any(trained.model.gate_w != 0.0) and np.all(trained.model.gate_c != 0.0)


@pytest.mark.slow  # 4.3 s of CPU (JAX training) in the default run; CI runs it
def test_paper_training_learns_map_parameters_and_reports_null_mass():
    from sinkproof.experiment.config import Protocol
    from sinkproof.experiment.runner import train_stack

    run = train_stack("sink_logit", 1, 2, 0, Protocol(n=5, L=5, max_steps=5, n_eval=16))
    assert np.all(np.asarray(run.params["mp"]) != 0.0)
    null, bos = np.asarray(run.null_nontrigger), np.asarray(run.bos_nontrigger)
    share = np.asarray(run.bos_share_nontrigger)
    assert null.shape == bos.shape == share.shape == (1, 2)
    assert np.all((null >= 0) & (null <= 1 + 1e-6))
    assert np.all(share >= bos - 1e-6)  # the slot takes some mass: Σ_k α_k < 1


def test_null_figures_follow_the_properties():
    from sinkproof.experiment.measure import null_figures

    # one sequence, one layer, one head, one row, three keys; key 2's value is zero
    w = np.array([0.2, 0.3, 0.1]).reshape(1, 1, 1, 1, 3)
    vnorm = np.array([1.0, 1.0, 0.0]).reshape(1, 1, 1, 3)
    share, null = null_figures("sink_logit", w, vnorm)  # slot 0.4 + zero-valued key 0.1
    assert share[0, 0] == pytest.approx(1 / 3) and null[0, 0] == pytest.approx(0.5)
    share, null = null_figures("sigmoid", w, vnorm)  # no slot: a share of the total
    assert null[0, 0] == pytest.approx(1 / 6)
    share, null = null_figures("softmax", w / w.sum(), vnorm)
    assert null[0, 0] == pytest.approx(1 / 6)


@pytest.mark.slow  # a second or more of training/compiles: CI runs it
def test_the_trained_table_has_a_row_per_setting_map_and_heads():
    from sinkproof.variants.trained import render_trained, train_variants

    rows = train_variants(kinds=["relu"], settings=("ours",), heads=(1, 2), seeds=(0, 1),
                          quick=True)
    assert [(r.setting, r.kind, r.heads) for r in rows] == [("ours", "relu", 1),
                                                             ("ours", "relu", 2)]
    assert all(len(r.runs) == 2 and r.sink.shape == (r.heads,) for r in rows)
    assert np.all(np.diff(rows[1].runs[0].sorted_heads()[0]) <= 0)
    text = render_trained(rows)
    assert "relu" in text and "null score per head" in text
    with pytest.raises(ValueError, match="unknown attention map"):
        train_variants(kinds=["cosine"])


def test_a_budget_too_small_for_any_restart_is_reported_not_called_ctrl_c(monkeypatch):
    import importlib

    engine = importlib.import_module("sinkproof.search.engine")
    def no_restart_finishes(settings, restarts, processes, executor=None):
        yield from [None] * restarts

    monkeypatch.setattr(engine, "_outcomes", no_restart_finishes)
    with pytest.raises(engine.SearchBudgetError, match="no restart finished"):
        search(TASK, "relu", restarts=2, processes=1, budget=0.5)
