"""Every attention map in the paper's setting: paper-witness files for every map (map
parameters, gates, BOS measure), the paper-setting variants table, its bounds, and their
cross-checks against float evaluation, search and random heads."""

from __future__ import annotations

import io
import json
import math
from contextlib import redirect_stdout
from fractions import Fraction

import numpy as np
import pytest
from conftest import examples, with_checker_row
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof import checker
from sinkproof.attention import MAPS
from sinkproof.checker.family.paper import n_prefixes
from sinkproof.checker.rules import witness as paperwitness
from sinkproof.claims.witness import family_bos
from sinkproof.cli import main
from sinkproof.constructions import (
    PAPER_VARIANT_LEVEL,
    POSITION_FREE,
    paper_sink_weights,
    paper_variant_solution,
    position_free_error_bound,
)
from sinkproof.convex.certfile import envelope
from sinkproof.errors import CertificateError
from sinkproof.stack import paper_model
from sinkproof.variants.constructions import construction as paper_construction
from sinkproof.variants.normprice import STACK_PRICE_MAPS as PRICE_MAPS
from sinkproof.variants.normprice import norm_lower_bound as paper_norm_lower_bound
from sinkproof.variants.table import build_table as build_paper_table
from sinkproof.variants.table import cell as paper_cell
from sinkproof.variants.table import default_task
from sinkproof.variants.verify import verify_construction as verify_paper_construction


def default_paper_task(quick: bool = False):
    """The paper's table instance (the variants table's ``--setting paper`` task)."""
    return default_task(quick, "paper")

TASK = default_paper_task(quick=True)
HEADS = tuple(PAPER_VARIANT_LEVEL)
FEW = settings(max_examples=examples(12), deadline=None,
               suppress_health_check=[HealthCheck.too_slow])


def _doc(kind: str, L=None, eps=Fraction(1, 10), bos=Fraction(3, 4), measure="share"):
    return paper_construction(TASK, kind, L).witness(eps, bos, measure)


# ------------------------------------------------------------------ the checker
@pytest.mark.parametrize("kind", HEADS)
def test_every_map_head_verifies_and_matches_the_float_forward(kind):
    con = paper_construction(TASK, kind)
    check = verify_paper_construction(con)
    error, per = family_bos(paper_variant_solution(TASK, kind))
    assert check.error_hi >= error - 1e-12 and check.error_hi <= error + 1e-9
    assert check.positions == n_prefixes(TASK.m, TASK.L) + 1
    if MAPS[kind].properties.exact_zeros and kind != "relu":
        assert check.exact and check.error_sq_hi == 0  # decided in rationals
    # the producer's intervals (variants.verify) and the trusted checker's agree: the
    # checker accepts the producer's bounds with a relative slack of 1e-9
    share = min(Fraction(1), check.bos_share_hi * (1 + Fraction(1, 10**9)))
    assert checker.verify(_doc(kind, eps=Fraction(check.error_hi) + Fraction(1, 10**12),
                               bos=share, measure="share")).ok


def test_the_sink_weights_are_the_softmax_variant_head():
    """Two writings of one head (rank-one query/key vs ``W_Q = A^T``, ``W_K = I``) give
    the same attention weights on every row of a sequence."""
    seq = TASK.decode((0, 1, 0))
    _, w_sink = paper_model(TASK, "softmax", **paper_sink_weights(TASK, 8.0)).forward(seq)
    _, w_head = paper_variant_solution(TASK, "softmax", 8).forward(seq)
    assert np.allclose(w_sink, w_head, rtol=0, atol=1e-15)
    _, w_other = paper_model(TASK, "softmax", **paper_sink_weights(TASK, 3.0)).forward(seq)
    assert not np.allclose(w_other, w_head)


def test_sparsemax_is_exact_in_rationals_and_softmax_is_not():
    assert verify_paper_construction(paper_construction(TASK, "sparsemax")).exact
    assert not verify_paper_construction(paper_construction(TASK, "softmax")).exact


@pytest.mark.parametrize("kind, field, value, message", [
    ("sink_logit", "map_params", None, "map_params"),
    ("softmax", "map_params", [[["0"]]], "no parameters"),
    ("gated_softmax", "gate_w", None, "gate_w"),
    ("sparsemax", "gate_c", [["0"]], "no gate"),
    ("gated_softmax", "gate_c", [["0", "1"]], "gate_c"),
    ("sink_logit", "map_params", [[["0", "1"]]], "map_params"),
])
def test_malformed_map_fields_are_one_line_errors(kind, field, value, message):
    doc = _doc(kind)
    if value is None:
        doc["data"].pop(field)
    else:
        doc["data"][field] = value
    with pytest.raises(CertificateError, match=message) as exc:
        checker.verify(doc)
    assert "\n" not in str(exc.value)


def test_a_bad_bos_measure_is_refused():
    doc = _doc("softmax1")
    doc["claim"]["bos_measure"] = "null"
    with pytest.raises(CertificateError, match="bos_measure"):
        checker.verify(doc)


def test_tampered_map_parameters_and_gates_are_rejected():
    doc = _doc("sink_logit", eps=Fraction(1, 100))
    assert checker.verify(doc).ok
    doc["data"]["map_params"] = [[["12"]]]  # the slot outweighs every key at the trigger
    assert not checker.verify(doc).ok
    doc = _doc("gated_softmax", eps=Fraction(1, 100))
    assert checker.verify(doc).ok
    doc["data"]["gate_c"] = [["-20"]]  # the gate shuts the trigger row too
    assert not checker.verify(doc).ok
    doc = _doc("gated_softmax", eps=Fraction(1, 100))
    doc["data"]["gate_w"][0][0][1] = "0"  # the trigger no longer opens the gate
    assert not checker.verify(doc).ok


def test_the_measure_is_read_as_stated():
    """The sink-logit head's BOS weight is tiny but its share is 1/2 at t = 1."""
    assert checker.verify(_doc("sink_logit", bos=Fraction(1, 100), measure="weight")).ok
    assert not checker.verify(_doc("sink_logit", bos=Fraction(1, 100), measure="share")).ok
    assert checker.verify(_doc("sink_logit", bos=Fraction(501, 1000), measure="share")).ok
    assert not checker.verify(_doc("sink_logit", bos=Fraction(49, 100), measure="share")).ok


def _float_figures(doc: dict) -> tuple[float, float]:
    """Error and BOS measure of a witness document by the producer's float64 stack."""
    d = doc["data"]
    arr = {k: np.array(json.loads(json.dumps(v)), dtype=object) for k, v in d.items()
           if k != "precision_digits"}
    num = {k: np.vectorize(lambda x: float(Fraction(x)))(v).astype(float)
           for k, v in arr.items()}
    task = sp.PaperTask(n=doc["instance"]["task"]["n"], L=doc["instance"]["task"]["L"],
                        content=[[float(Fraction(x)) for x in c]
                                 for c in doc["instance"]["content_vectors"]])
    kind = doc["claim"]["model_class"]["kind"]
    model = paper_model(task, kind, W_Q=num["W_Q"], W_K=num["W_K"], W_V=num["W_V"],
                        W_O=num["W_O"], map_params=num.get("map_params"),
                        gate_w=num.get("gate_w"), gate_c=num.get("gate_c"))
    error, per = family_bos(model)  # the share off the simplex, the weight on it
    if doc["claim"].get("bos_measure", "weight") == "weight" and \
            not MAPS[kind].properties.on_simplex:
        fw_bos = []
        for t in range(1, task.L):
            for block in task.prefix_blocks(t):
                fw = model.forward_batch(task.prefix_features(block.codes))
                keep = ~task.is_trigger(block.codes[:, -1])
                fw_bos.append(fw.w[:, :, keep, -1, 0].ravel())
        return error, float(np.concatenate(fw_bos).max())
    return error, max(float(v.max()) for _, v in per)


@FEW
@given(kind=st.sampled_from(HEADS), data=st.data())
def test_mutated_paper_witnesses_are_refused_or_true(kind, data):
    """Fuzzing the new fields: a tampered number, measure or bound is refused cleanly, fails,
    or verifies only when the float64 model agrees (up to rounding)."""
    doc = _doc(kind, eps=Fraction(1, 20), bos=Fraction(3, 4),
               measure=data.draw(st.sampled_from(["weight", "share"])))
    paths = [("claim", "max_error"), ("claim", "max_bos_mass")]
    for name in ("map_params", "gate_w", "gate_c", "W_Q"):
        if name in doc["data"]:
            flat = doc["data"][name]
            idx = []
            while isinstance(flat, list):
                i = data.draw(st.integers(0, len(flat) - 1))
                idx.append(i)
                flat = flat[i]
            paths.append(("data", name, *idx))
    path = data.draw(st.sampled_from(paths))
    node = doc
    for key in path[:-1]:
        node = node[key]
    x = Fraction(node[path[-1]])
    y = data.draw(st.sampled_from([x + 1, x - 1, -x, 2 * x + 1, x / 2, Fraction(1, 10**6)]))
    node[path[-1]] = f"{y.numerator}/{y.denominator}"
    if data.draw(st.booleans()):
        doc["claim"]["bos_measure"] = data.draw(st.sampled_from(["weight", "share", "mass"]))
    try:
        verdict = checker.verify(doc)
    except CertificateError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    if not verdict.ok:
        return
    error, bos = _float_figures(doc)
    assert error <= float(Fraction(doc["claim"]["max_error"])) + 1e-9
    assert bos <= float(Fraction(doc["claim"]["max_bos_mass"])) + 1e-9


def _random_stack(kind: str, seed: int, layers: int = 2) -> dict:
    """A 2-layer residual stack of ``kind`` with small dyadic weights, as a witness doc."""
    rng = np.random.default_rng(seed)
    n, H = TASK.n, 1

    def dyadic(shape, scale=1.0):
        return np.round(rng.normal(0, scale, shape) * 8) / 8

    W = {"W_Q": dyadic((layers, H, n, n)), "W_K": dyadic((layers, H, n, n)),
         "W_V": dyadic((layers, H, n, n), 0.5), "W_O": dyadic((layers, n, H * n), 0.5)}
    if MAPS[kind].param_names:
        W["map_params"] = dyadic((layers, H, 1))
    if MAPS[kind].properties.gated:
        W["gate_w"], W["gate_c"] = dyadic((layers, H, n)), dyadic((layers, H))
    model = paper_model(TASK, kind, **{k: v for k, v in W.items() if k.startswith("W_")},
                        map_params=W.get("map_params"), gate_w=W.get("gate_w"),
                        gate_c=W.get("gate_c"))
    q = lambda a: (str(Fraction(float(a))) if np.ndim(a) == 0  # noqa: E731
                   else [q(x) for x in a])
    instance = {"task": {**TASK.describe(), "residual": True},
                "content_vectors": [[str(Fraction(float(v))) for v in c] for c in TASK.content]}
    claim = {"statement": "s", "model_class": {"kind": kind, "heads": H, "layers": layers,
                                               "residual": True, "values": "learned"},
             "max_error": "100", "max_bos_mass": "1", "where": "nontrigger"}
    return envelope("paper-witness", instance, claim, {k: q(v) for k, v in W.items()}), model


@pytest.mark.parametrize("kind", with_checker_row(sorted(MAPS)))
def test_two_layer_interval_path_encloses_the_float_stack(kind):
    """Layer 2 sees interval rows: the enclosure (monotone corners for sparsemax and
    entmax) holds the float64 error and is tight."""
    doc, model = _random_stack(kind, seed=sorted(MAPS).index(kind))
    w = paperwitness.read_stack_witness(doc)
    fig = paperwitness.measure_stack(w)
    error, per = family_bos(model)
    hi = math.sqrt(float(fig.error_sq))
    assert error <= hi + 1e-9 and hi <= error * (1 + 1e-6) + 1e-6, (error, hi)


# ------------------------------------------------------------------ the bounds
def test_own_key_local_maps_cannot_be_accurate_by_search():
    """Cross-check of the floor behind the stick-breaking cells (fixed values): random heads
    of every map declaring ``own_key_local`` stay above ``(1/2 - 1/(L-1))/2``."""
    from sinkproof.variants.floors import error_floor

    rng = np.random.default_rng(3)
    n = TASK.n
    drop = np.eye(n)
    drop[0, 0] = 0.0
    local = [k for k, m in MAPS.items() if m.properties.own_key_local]
    assert "stick_breaking" in local and set(POSITION_FREE) <= set(local)
    for kind in local:
        floor = error_floor(TASK, kind)
        assert floor is not None and floor.bound == position_free_error_bound(TASK)
        for _ in range(20):
            A = rng.normal(0, 4, (n, n))
            extra = {"map_params": rng.normal(0, 2, (1, 1, 1))} if MAPS[kind].param_names \
                else {}
            m = paper_model(TASK, kind, W_Q=A.T[None, None], W_K=np.eye(n)[None, None],
                            W_V=drop[None, None], W_O=np.eye(n)[None], **extra)
            assert family_bos(m)[0] >= float(floor.bound) - 1e-12
    assert all(error_floor(TASK, k) is None for k in MAPS if k not in local)


def test_position_free_maps_cannot_be_accurate_by_search():
    """Cross-check of the theorem behind the relu and sigmoid cells (fixed values)."""
    bound = float(position_free_error_bound(TASK))
    rng = np.random.default_rng(0)
    n = TASK.n
    drop = np.eye(n)
    drop[0, 0] = 0.0
    for kind in POSITION_FREE:
        for _ in range(20):
            A = rng.normal(0, 3, (n, n))
            extra = {"map_params": rng.normal(0, 2, (1, 1, 1))} if kind == "sigmoid" else {}
            m = paper_model(TASK, kind, W_Q=A.T[None, None], W_K=np.eye(n)[None, None],
                            W_V=drop[None, None], W_O=np.eye(n)[None], **extra)
            assert family_bos(m)[0] >= bound - 1e-12


@FEW
@given(kind=st.sampled_from(PRICE_MAPS), seed=st.integers(0, 10**6),
       scale=st.sampled_from([1.0, 4.0, 16.0]))
def test_norm_price_bounds_every_head(kind, seed, scale):
    """No head beats the certified least norm for the error it has on the two sequences
    (random heads, and the constructions themselves)."""
    rng = np.random.default_rng(seed)
    n = TASK.n
    drop = np.eye(n)
    drop[0, 0] = 0.0
    con = paper_construction(TASK, kind, int(scale))
    A = np.array([[float(x) for x in r] for r in con.A]) + rng.normal(0, 0.3, (n, n))
    extra = {}
    if MAPS[kind].param_names:
        extra["map_params"] = rng.normal(0, 2, (1, 1, 1))
    if MAPS[kind].properties.gated:
        extra["gate_w"] = np.array([[[float(x) for x in con.gate_w]]]) + rng.normal(0, .3, n)
        extra["gate_c"] = rng.normal(0, 1, (1, 1))
    m = paper_model(TASK, kind, W_Q=A.T[None, None], W_K=np.eye(n)[None, None],
                    W_V=drop[None, None], W_O=np.eye(n)[None], **extra)
    err = family_bos(m)[0]
    low = paper_norm_lower_bound(TASK, kind, Fraction(err * (1 + 1e-9)))
    norm = np.linalg.norm(A, 2)
    if MAPS[kind].properties.gated:
        norm = max(norm, np.linalg.norm(extra["gate_w"]))
    assert low is None or norm >= low


def test_norm_price_grows_like_log():
    for kind in PRICE_MAPS:
        b = [paper_norm_lower_bound(TASK, kind, Fraction(1, 10**k)) for k in (2, 4, 8, 16)]
        assert all(x < y for x, y in zip(b, b[1:]))
        assert b[-1] / b[-2] == pytest.approx(2.0, rel=0.15)
    assert paper_norm_lower_bound(TASK, "softmax", Fraction(1, 5)) is None


# ------------------------------------------------------------------ the table
EXPECTED = {
    "softmax": ("yes", "yes", "no", "yes"), "sink_logit": ("no", "yes", "no", "yes"),
    "softmax1": ("no", "yes", "no", "yes"), "sparsemax": ("yes", "yes", "yes", "no"),
    "entmax15": ("yes", "yes", "yes", "no"), "sigmoid": ("yes", "yes", "no", "yes"),
    "relu": ("yes", "yes", "no", "yes"), "relu_length": ("no", "no", "yes", "no"),
    "gated_softmax": ("no", "yes", "no", "yes"), "stick_breaking": ("yes", "yes", "no", "yes"),
}


def test_the_quick_paper_table():
    table = build_paper_table(TASK, quick=True)
    got = {m: tuple(c.answer for c in qs.values()) for m, qs in table.rows.items()}
    assert got == EXPECTED
    for m, qs in table.rows.items():
        for q, c in qs.items():
            assert c.how != "none" and c.command.startswith("sinkproof variants --setting paper")
            if m in POSITION_FREE and q.endswith("necessary"):
                assert c.detail.startswith("vacuously")
            if m == "stick_breaking":  # the own key sees no position: vacuous, but for the
                assert c.detail.startswith("vacuously") == (q == "bos_sink_necessary")  # slot
    cert = table.rows["softmax"]["bos_sink_necessary"]
    assert "after the trigger" in cert.detail and cert.evidence[1].ok


def test_the_one_table_entry_point_takes_the_setting_from_the_task():
    """``build_table`` and ``cell`` of :mod:`sinkproof.variants.table` read the paper's task
    by its capabilities: the paper's command and values, the same cells either way, and the
    task the command builds for ``--setting paper`` is this one."""
    from sinkproof.commands.variants import table_task

    assert table_task(True, "paper") == TASK
    maps = ("relu_length", "stick_breaking")
    one = build_paper_table(TASK, quick=True, maps=maps)
    assert one.command == "sinkproof variants --setting paper" and "I - e_0" in one.values
    assert paper_cell("stick_breaking", "bos_sink_necessary", TASK, quick=True).to_dict() == \
        one.rows["stick_breaking"]["bos_sink_necessary"].to_dict()
    ours = build_paper_table(sp.TriggerTask(p=1, T=2), quick=True, maps=maps)
    assert ours.command == "sinkproof variants" and ours.values == "fixed values"


def test_one_cell_is_the_tables_cell():
    table = build_paper_table(TASK, quick=True, maps=("gated_softmax",))
    for q in ("bos_sink_necessary", "norm_grows_as_error_shrinks"):
        assert paper_cell("gated_softmax", q, TASK, quick=True).to_dict() == \
            table.rows["gated_softmax"][q].to_dict()


def test_cli_paper_table_json_schema():
    out = io.StringIO()
    with redirect_stdout(out):
        rc = main(["variants", "--setting", "paper", "--quick", "--json", "-"])
    assert rc == 0
    doc = json.loads(out.getvalue())
    assert doc["task"]["setting"] == "paper"
    assert [m["map"] for m in doc["maps"]] == list(MAPS)
    for m in doc["maps"]:
        assert set(m["questions"]) == {"bos_sink_necessary", "null_sink_necessary",
                                       "exact_solution_at_finite_norm",
                                       "norm_grows_as_error_shrinks"}
        for c in m["questions"].values():
            assert set(c) == {"answer", "how", "detail", "command"}
            assert c["answer"] in ("yes", "no", "open")


def test_cli_paper_refuses_sandwich(capsys):
    assert main(["variants", "--setting", "paper", "--sandwich"]) == 2
    assert "--sandwich" in capsys.readouterr().err


# ------------------------------------------------------------------ claims and search
def _claim(kind: str, values: str = "fixed", **check):
    from sinkproof.claims import claim_from_dict as paper_claim_from_dict

    return paper_claim_from_dict({
        "title": f"one {kind} head must sink", "task": {"setting": "paper", "n": 4, "L": 4,
                                                        "content": [[-1.0], [1.0]]},
        "model": {"kind": kind, "values": values}, "hypothesis": {"max_error": 0.01},
        "conclusion": {"min_bos_mass": 0.9},
        "check": {"restarts": 1, "steps": 100, "budget": 5, **check}})


def test_a_simplex_map_claim_is_proved_by_the_fixed_value_theorem():
    from sinkproof.claims import check as check_paper

    for kind in ("sparsemax", "entmax15"):
        out = check_paper(_claim(kind), search=False)
        assert out.status == "proved" and "1/√2" in out.by


@pytest.mark.parametrize("kind, values", [("sink_logit", "fixed"), ("softmax1", "learned"),
                                          ("gated_softmax", "learned")])
def test_a_slot_map_bos_claim_is_refuted_by_a_verified_slot_witness(kind, values, tmp_path):
    claim = _claim(kind, values)
    out = sp.check(claim, witness=tmp_path / "w.json")  # a path named by the caller
    assert out.status == "refuted" and "BOS share" in out.violations[0]
    verdict = checker.verify_file(tmp_path / "w.json")
    assert verdict.ok and verdict.statement["bos_measure"] == "share"
    assert verdict.statement["model_class"]["kind"] == kind


@pytest.mark.slow
def test_paper_search_learns_the_map_parameters_and_the_gate():
    from sinkproof.claims.witness import model_from_params
    from sinkproof.search.engine import search_stack as paper_search

    for kind in ("sink_logit", "gated_softmax", "sigmoid"):
        res = paper_search(TASK, kind, 1, 1, max_error=0.05, max_bos_mass=0.5,
                           restarts=1, steps=200, budget=60)
        assert res.params is not None
        if MAPS[kind].param_names:
            assert abs(float(res.params["mp"].ravel()[0])) > 1e-6  # moved from its 0 start
        if MAPS[kind].properties.gated:
            assert abs(float(res.params["gc"].ravel()[0])) > 1e-6
        model = model_from_params(TASK, kind, res.params)
        assert family_bos(model)[0] == pytest.approx(res.error, rel=1e-6, abs=1e-9)
    res = paper_search(TASK, "relu", 1, 1, max_error=0.05, max_bos_mass=0.5, values="fixed",
                       restarts=2, steps=300, budget=60)
    assert res.error >= float(position_free_error_bound(TASK))  # the theorem, by search
    five = default_paper_task()
    for kind in POSITION_FREE:  # learned values, two heads: the affine floor 1/48 at L = 5
        res = paper_search(five, kind, 1, 2, max_error=0.01, max_bos_mass=0.5, restarts=2,
                           steps=600, budget=60)
        assert res.error >= float(position_free_error_bound(five, "learned"))


def test_a_position_free_claim_below_the_floor_holds_vacuously():
    from sinkproof.claims import check as check_paper

    for kind in POSITION_FREE:
        out = check_paper(_claim(kind), search=False)  # ε = 0.01 < 1/12 at L = 4
        assert out.status == "proved" and "vacuous" in out.by
    from sinkproof.claims import claim_from_dict as paper_claim_from_dict

    loose = paper_claim_from_dict({
        "task": {"setting": "paper", "n": 4, "L": 4, "content": [[-1.0], [1.0]]},
        "model": {"kind": "relu", "values": "fixed"}, "hypothesis": {"max_error": 0.1},
        "conclusion": {"min_bos_mass": 0.9}})
    out = check_paper(loose, search=False)  # 1/12 <= 0.1: not vacuous, nothing proves it
    assert out.status == "open" and any("not vacuous" in r for r in out.reasons)
    learned = paper_claim_from_dict({
        "task": {"setting": "paper", "n": 4, "L": 5, "content": [[-1.0], [1.0]]},
        "model": {"kind": "sigmoid", "heads": 2}, "hypothesis": {"max_error": 0.02},
        "conclusion": {"min_bos_mass": 0.9}})
    out = check_paper(learned, search=False)  # 0.02 < 1/48 with learned values, 2 heads
    assert out.status == "proved" and "affine" in out.detail


def test_the_learned_value_position_free_floor_is_the_affine_minimax_of_1_over_j():
    from sinkproof.constructions import position_free_error_bound as floor

    for L in (5, 6, 9):
        task = sp.PaperTask(n=4, L=L, content=[[1.0]])
        E = floor(task, "learned")
        js = np.arange(2, L)
        # the shifted chord attains E exactly; no affine function does better
        slope = (1 / (L - 1) - 1 / 2) / (L - 3)
        best = max(abs(1 / j - (0.5 + slope * (j - 2) - float(E))) for j in js)
        assert best == pytest.approx(float(E), rel=1e-12)
        rng = np.random.default_rng(L)
        for c0, c1 in rng.normal(0, 1, (2000, 2)) * [0.5, 0.2]:
            assert max(abs(1 / j - (c0 + c1 * j)) for j in js) >= float(E) - 1e-12
    assert floor(sp.PaperTask(n=4, L=4, content=[[1.0]]), "learned") == 0


def test_no_learned_one_layer_position_free_model_beats_the_floor():
    task = default_paper_task()  # L = 5: floor 1/48
    from sinkproof.constructions import position_free_error_bound as floor

    E = float(floor(task, "learned"))
    rng = np.random.default_rng(1)
    n = task.n
    for kind in POSITION_FREE:
        for H in (1, 2):
            for _ in range(10):
                W = {k: rng.normal(0, 1, (1, H, n, n)) for k in ("W_Q", "W_K", "W_V")}
                W["W_O"] = rng.normal(0, 1, (1, n, H * n))
                extra = {"map_params": rng.normal(0, 1, (1, H, 1))} if kind == "sigmoid" else {}
                assert family_bos(paper_model(task, kind, **W, **extra))[0] >= E - 1e-12
