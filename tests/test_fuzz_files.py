"""Hypothesis-driven mutation of certificate, witness and claim files.

Every mutated file is either refused with a clear error (a one-line
CertificateError / ValueError / TypeError, never a traceback, never a hang) or
accepted only when the statement the checker prints for it is still *true*,
re-derived here by an independent path:

- Theorem 3 (``hull``, ``hull-family``): the producer's float min-norm solver
  recomputes ``d(S) = dist(0, conv{v_x : x ∈ S})`` and the bound ``1 - f·ε/d`` each
  stated bound must not exceed (plus a margin), ``0 ∈ hull`` where the statement says
  so, and the set of situations is re-enumerated with itertools;
- Theorem 6 (``sinkmap-socp``): the float SOCP over the *full* block of every target
  gives the relaxation's optimum, which no valid bound exceeds (plus a margin);
- gated sink maps (``sinkmap-gated``): for a few gates ``g``, the float optimum ``B`` of the
  full softmax relaxation at ``ε/g`` makes ``1 - g(1 - B)`` the null mass of a relaxed
  gated head, which no valid bound exceeds (plus a margin);
- witnesses: the model is re-run in 50-digit mpmath (:mod:`sinkproof.claims.precise`)
  on every prefix of the family; its error and BOS weight or share must meet the
  statement's bounds (plus a margin);
- claims: a claim that a certificate proves must hold by Theorem 3, recomputed in
  closed form for signed content with ``U_fix`` (``1 - ε·sqrt(|S|)`` at a position
  whose token set ``S`` is ``m`` distinct signed basis vectors).

Mutations are semantic (instance, class, ε, family, kind, positions, multipliers)
and syntactic (duplicate keys, non-ASCII digits, unknown fields, huge numbers, deep
nesting, truncation, type swaps).  The default run draws few examples; CI
(``CI=true``, the ``ci`` profile of tests/conftest.py) draws more, and the slow test
many more.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
import re
import time
from fractions import Fraction
from functools import cache
from typing import Any

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof import checker
from sinkproof.attention import MAPS
from sinkproof.bnb import prove_heads, prove_paper
from sinkproof.checker.limits import LimitExceeded
from sinkproof.claims import claim_from_dict, load_claim
from sinkproof.claims.certified import NotImplied, prove_by_certificate
from sinkproof.claims.precise import PreciseModel, family_prefixes, max_error
from sinkproof.cli import main
from sinkproof.constructions import feature_index, softmax_score_matrix
from sinkproof.convex import family_certificate, min_norm_point, position_certificate
from sinkproof.errors import CertificateError, SinkproofError
from sinkproof.search.engine import bos_measure
from sinkproof.search.verify import witness_document
from sinkproof.theorems.composition import composition_bound

SCALE = max(1, settings.default.max_examples // 40)
"""1 in the default profile, 2 in CI's."""
FEW = settings(max_examples=12 * SCALE, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                      HealthCheck.function_scoped_fixture])
MARGIN = 1e-7
SECONDS = 5.0
"""No mutated file may take longer than this to be decided (tiny instances)."""


# --------------------------------------------------------------- the base files
@cache
def base_files() -> dict[str, str]:
    """Real files of every kind, as JSON text."""
    from sinkproof.sinkmap import sink_map

    signed = sp.TriggerTask(p=2, T=3)
    one = sp.TriggerTask(p=1, T=2)
    softmax = sp.AttentionModel(one, "softmax", sp.constructions.softmax_score_matrix(one, 4.0))
    docs = {
        "hull-family": family_certificate(signed, "1/20").to_dict(),
        "hull-family-U": family_certificate(
            signed, "1/20", 0.5 * sp.fixed_values(2) + np.eye(2, 5, k=3) * 0.25).to_dict(),
        "hull": position_certificate(signed, (0, 1, 0), 3, "1/20").to_dict(),
        "sinkmap-socp": sink_map(one, "1/20", progress=False).certificate,
        "sinkmap-gated": sink_map(one, "1/20", progress=False,
                                  kind="gated_softmax").certificate,
        "witness-relu": witness_document(sp.constructions.relu_solution(one), 1e-9, 0.0,
                                         "all"),
        "witness-softmax": witness_document(softmax, 0.2, 0.99, "nontrigger"),
        "bnb-heads": prove_heads(one, Fraction(1, 20), 2, [(0,), (0, 1)]).certificate,
        "paper-bnb-learned-values": prove_paper(
            sp.PaperTask(n=4, L=4, content=[[-1.0], [1.0]]), Fraction(1, 20),
            min_bos_mass="1/2", some=True).certificate,
        "paper-composition": composition_bound(
            sp.PaperTask(n=4, L=5, content=[[-1.0], [1.0]]), "1/20", 2).certificate(
            sp.PaperTask(n=4, L=5, content=[[-1.0], [1.0]])),
    }
    return {name: json.dumps(doc) for name, doc in docs.items()}


# ------------------------------------------------------------------ tree edits
def _nodes(tree: Any, path: tuple = ()) -> list[tuple]:
    """Paths of every node below the root (dict values and list items)."""
    out = []
    items = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(
        tree, list) else ()
    for key, value in items:
        out.append((*path, key))
        out.extend(_nodes(value, (*path, key)))
    return out


def _get(tree: Any, path: tuple) -> Any:
    for key in path:
        tree = tree[key]
    return tree


def _set(tree: Any, path: tuple, value: Any) -> None:
    _get(tree, path[:-1])[path[-1]] = value


def _rational_paths(tree: Any) -> list[tuple]:
    return [p for p in _nodes(tree) if isinstance(_get(tree, p), str)
            and re.fullmatch(r"-?[0-9]+(/[0-9]+)?", _get(tree, p))]


RATIONALS = st.sampled_from(["0", "1", "-1", "1/20", "1/40", "1/10", "19/20", "2", "-1/20",
                             "1/1000000", "999999/1000000"])


@st.composite
def semantic_edit(draw, doc: dict) -> dict:
    """Edit what the file is about, keeping it well formed where possible."""
    doc = json.loads(json.dumps(doc))
    inst, claim = doc["instance"], doc["claim"]
    task = inst["task"]
    what = draw(st.sampled_from(["eps", "p", "T", "triggers", "positions", "content",
                                 "values", "class", "kind", "family", "targets",
                                 "multiplier", "multiplier", "bound", "where", "measure",
                                 "heads", "n", "L", "vectors"]))
    if what == "eps":
        inst["eps"] = draw(RATIONALS)
    elif what in ("p", "T", "n", "L"):  # n, L: the paper setting's task
        task[what] = max(1, task[what] + draw(st.sampled_from([-1, 1])))
    elif what == "vectors" and "n" in task:  # one exact content entry of the paper setting
        rows = inst["content_vectors"]
        i = draw(st.integers(0, len(rows) - 1))
        rows[i][draw(st.integers(0, len(rows[i]) - 1))] = draw(RATIONALS)
    elif what == "triggers":
        task["triggers"] = {"single": "multi", "multi": "single"}[task.get("triggers", "single")]
    elif what == "positions":
        task["positions"] = draw(st.sampled_from(["inverse", "onehot", "none"]))
    elif what == "content":
        k = draw(st.integers(1, 4))
        vectors = [[draw(RATIONALS) for _ in range(task["p"])] for _ in range(k)]
        task.update(content="gaussian", k=k, seed=draw(st.integers(0, 3)))
        inst["content_vectors"] = vectors
    elif what == "values":
        if "eps" in inst:
            p = task["p"]
            inst["values"] = draw(st.sampled_from(["fixed", {"U": [
                [draw(RATIONALS) for _ in range(p + 3)] for _ in range(p)]}]))
        else:
            inst["values"] = {"fixed": "learned", "learned": "fixed"}[inst["values"]]
    elif what == "class" and "model_class" in claim:
        mc = claim["model_class"]
        key = draw(st.sampled_from(["kind", "heads", "values"]))
        mc[key] = {"kind": draw(st.sampled_from(["relu", "softmax"])),
                   "heads": draw(st.integers(1, 3)),
                   "values": draw(st.sampled_from(["fixed", "learned"]))}[key]
    elif what == "kind":
        doc["kind"] = draw(st.sampled_from(["hull", "hull-family", "witness", "sinkmap-socp",
                                            "sinkmap-gated"]))
    elif what == "family" and "family" in inst:
        inst["family"] = {"S_T": "listed", "listed": "S_T"}[inst["family"]]
    elif what == "targets":
        token_lists = [p for p in _nodes(doc) if p[-1] in ("target", "sequence", "tokens")]
        if token_lists:
            path = draw(st.sampled_from(token_lists))
            seq = _get(doc, path)
            if isinstance(seq, list) and seq:
                i = draw(st.integers(0, len(seq) - 1))
                seq[i] = draw(st.sampled_from([-1, 0, 1, 2, 3]))
        if "t" in inst:
            inst["t"] = draw(st.integers(1, 3))
    elif what in ("multiplier", "bound"):
        paths = [p for p in _rational_paths(doc)
                 if p[0] == "data" or (what == "bound" and p[0] == "claim")]
        if what == "bound":
            paths = [p for p in paths if p[-1] in ("bound", "min_bound", "max_error",
                                                   "max_bos_mass")] or paths
        if paths:
            path = draw(st.sampled_from(paths))
            x = Fraction(_get(doc, path))
            delta = Fraction(1, 2 ** draw(st.integers(1, 40)))
            y = draw(st.sampled_from([x + delta, x - delta, -x, x * (1 + delta), 2 * x]))
            _set(doc, path, f"{y.numerator}/{y.denominator}")
    elif what == "where" and "where" in claim:
        claim["where"] = draw(st.sampled_from(
            ["all", "trigger", "nontrigger", [{"sequence": [0, 1], "position": 2}],
             [{"sequence": [-1], "position": 1}]]))
    elif what == "heads" and "heads" in inst:
        inst["heads"] = draw(st.integers(1, 4))
    elif what == "measure" and "where" in claim:
        claim["bos_measure"] = draw(st.sampled_from(["share", "weight"]))
    return doc


NON_ASCII_DIGITS = "٠١٢٣٤٥٦٧٨٩"


SYNTACTIC = ("duplicate", "digits", "unknown", "huge", "deep", "truncate", "swap", "float")


@st.composite
def syntactic_edit(draw, text: str, kinds: tuple[str, ...] = SYNTACTIC) -> str:
    """Edit how the file is written."""
    what = draw(st.sampled_from(kinds))
    if what == "truncate":
        return text[:draw(st.integers(0, max(0, len(text) - 1)))]
    if what == "duplicate":
        keys = [m.start() for m in re.finditer(r'"[a-z_]+": ', text)]
        at = draw(st.sampled_from(keys))
        key = text[at:text.index(":", at)]
        value = draw(st.sampled_from(["null", '"1/2"', "0", "[]"]))
        return text[:at] + f"{key}: {value}, " + text[at:]
    if what == "digits":
        spots = [m.start() for m in re.finditer(r"[0-9]", text)]
        at = draw(st.sampled_from(spots))
        return text[:at] + NON_ASCII_DIGITS[int(text[at])] + text[at + 1:]
    tree = json.loads(text)
    if what == "unknown":
        objects = [()] + [p for p in _nodes(tree) if isinstance(_get(tree, p), dict)]
        _get(tree, draw(st.sampled_from(objects)))[draw(st.sampled_from(
            ["zz", "note", "bos_is_zero", "eps2"]))] = draw(st.sampled_from([1, "x", None]))
        return json.dumps(tree)
    path = draw(st.sampled_from(_nodes(tree)))
    if what == "huge":
        value = draw(st.sampled_from(["BIGINT", "1/" + "7" * 3000, "9" * 2500]))
        _set(tree, path, value)
        return json.dumps(tree).replace('"BIGINT"', "1" * 5000)
    if what == "deep":
        levels = draw(st.sampled_from([70, 2000]))
        _set(tree, path, "DEEP")
        return json.dumps(tree).replace('"DEEP"', "[" * levels + "0" + "]" * levels)
    if what == "float":
        _set(tree, path, "FLOAT")
        return json.dumps(tree).replace('"FLOAT"', draw(st.sampled_from(
            ["1e400", "-1e999", "1e-400", "NaN", "Infinity", "0.5", "1E+2"])))
    _set(tree, path, draw(st.sampled_from([None, True, 1.5, "x", [], {}, -1, 0, [[]]])))
    return json.dumps(tree)


@st.composite
def mutated_files(draw) -> tuple[str, str]:
    name = draw(st.sampled_from(sorted(base_files())))
    text = base_files()[name]
    for _ in range(draw(st.integers(1, 2))):
        if draw(st.booleans()):
            # an earlier edit may have broken the shape this edit needs: then none
            with contextlib.suppress(KeyError, TypeError, AttributeError, IndexError,
                                     ValueError):
                text = json.dumps(draw(semantic_edit(json.loads(text))))
        else:
            text = draw(syntactic_edit(text))
            try:
                json.loads(text)
            except (ValueError, RecursionError):
                break  # no further tree edits on broken text
    return name, text


# --------------------------------------------------- independent re-derivations
def _vectors(instance: dict) -> np.ndarray:
    return np.array([[float(Fraction(x)) for x in row]
                     for row in instance["content"]["vectors"]], dtype=float)


def _values(instance: dict) -> tuple[dict[int, np.ndarray], np.ndarray]:
    """``v_x`` (content codes and -1) and ``v_b`` in floats, from the statement's numbers."""
    C = _vectors(instance)
    p = instance["p"]
    if instance["values"] == "fixed":
        U = np.hstack([np.eye(p), np.zeros((p, 3))])
    else:
        U = np.array([[float(Fraction(x)) for x in row] for row in instance["values"]["U"]])
    vals = {i: U @ np.concatenate([c, [1.0, 0.0, 0.0]]) for i, c in enumerate(C)}
    vals[-1] = U[:, p + 1]
    return vals, U[:, p + 2]


def _signed_ok(instance: dict) -> None:
    if instance["content"]["scheme"] == "signed":
        p = instance["p"]
        assert np.array_equal(_vectors(instance), np.vstack([np.eye(p), -np.eye(p)]))


def true_theorem3(statement: dict) -> None:
    """Every stated bound is at most ``1 - f·ε/d(S)`` with ``d`` from the float solver."""
    inst = statement["instance"]
    _signed_ok(inst)
    vals, vb = _values(inst)
    eps = float(Fraction(statement["eps"]))
    factor = 1 if not np.any(vb) else 2
    con = statement["conclusion"]
    if statement["kind"] == "hull":
        seq = con["sequence"]
        assert seq[-1] != -1 and len(seq) == con["t"] <= inst["T"]
        tokens = sorted(set(seq))
        bounded = [[tokens, con["bound"]]] if con["bound"] is not None else []
        zero: list = []
    else:
        bounded, zero = con["bounds"], con["zero_in_hull"]
        universe = [*range(len(vals) - 1), -1]
        occurring = {tuple(sorted(c)) for n in range(1, min(inst["T"], len(universe)) + 1)
                     for c in itertools.combinations(universe, n) if any(x != -1 for x in c)}
        listed = [tuple(s) for s, _ in bounded] + [tuple(s) for s in zero] + [
            tuple(s) for s in con["undecided"]]
        assert sorted(listed) == sorted(occurring)
    for tokens, bound in bounded:
        d = min_norm_point(np.array([vals[x] for x in tokens])).distance
        assert d > 0 and float(Fraction(bound)) <= 1 - factor * eps / d + MARGIN
    for tokens in zero:
        assert min_norm_point(np.array([vals[x] for x in tokens])).distance <= 1e-7


def _task_of(inst: dict, positions: str = "inverse") -> sp.TriggerTask:
    content: Any = "signed" if inst["content"]["scheme"] == "signed" else _vectors(inst)
    return sp.TriggerTask(p=inst["p"], T=inst["T"], content=content, positions=positions,
                          triggers=inst["triggers"])


def true_sink_map(statement: dict) -> None:
    """No stated bound exceeds the float optimum of the full logit-sharing relaxation."""
    from sinkproof.sinkmap import sink_map

    inst = statement["instance"]
    _signed_ok(inst)
    task = _task_of(inst)
    values: Any = "fixed" if inst["values"] == "fixed" else np.array(
        [[float(Fraction(x)) for x in row] for row in inst["values"]["U"]])
    targets = [tuple(prefix) for prefix, _ in statement["conclusion"]["bounds"]]
    for _, bound in statement["conclusion"]["bounds"]:
        assert 0 < Fraction(bound) <= 1
    if not targets:
        return
    smap = sink_map(task, statement["eps"], values=values, subfamily="full", progress=False,
                    positions=[(t, len(t)) for t in targets if t[-1] != -1] or None)
    for prefix, bound in statement["conclusion"]["bounds"]:
        if prefix[-1] == -1:
            continue
        entry = smap.entry(prefix, len(prefix))
        assert float(Fraction(bound)) <= max(entry.float_bound, entry.bound) * (1 + 1e-5) + 1e-6


GATES = (1.0, 0.9, 0.75, 0.5, 0.3)


def true_gated(statement: dict) -> None:
    """No stated null-mass bound exceeds ``1 - g(1 - B(ε/g))`` for the sampled gates, ``B``
    the float optimum of the full softmax relaxation (its value at a relaxed gated head)."""
    from sinkproof.sinkmap import sink_map

    inst = statement["instance"]
    _signed_ok(inst)
    task = _task_of(inst)
    values: Any = "fixed" if inst["values"] == "fixed" else np.array(
        [[float(Fraction(x)) for x in row] for row in inst["values"]["U"]])
    stated = statement["conclusion"]["null_mass_bounds"]
    for _, bound in stated:
        assert 0 < Fraction(bound) <= 1
    if not stated:
        return
    eps = Fraction(statement["eps"])
    at = [(tuple(prefix), len(prefix)) for prefix, _ in stated]
    for g in GATES:
        if eps / Fraction(g) >= 1:
            continue
        smap = sink_map(task, eps / Fraction(g), values=values, subfamily="full",
                        progress=False, positions=at)
        for prefix, bound in stated:
            entry = smap.entry(prefix, len(prefix))
            if entry.status == "uncertified" and entry.float_bound == 0:
                continue  # the float solver failed here: nothing to compare with
            relaxed = max(entry.float_bound, entry.bound)  # 0 where it is unbounded
            assert float(Fraction(bound)) <= 1 - g * (1 - relaxed) + 1e-5, (prefix, g)


def _where(statement: dict, task: sp.TriggerTask, codes: tuple[int, ...]) -> bool:
    where = statement["bos_at"]
    last = codes[-1] if codes else None
    if where == "all":
        return bool(codes)
    if where in ("trigger", "nontrigger"):
        return bool(codes) and ((last == task.trig_code) == (where == "trigger"))
    return list(task.decode(codes)) in where


def true_witness(statement: dict) -> None:
    """Re-run the model in 50-digit mpmath on every prefix of the family."""
    inst, model = statement["instance"], statement["model"]
    task = _task_of(inst, inst["positions"])
    A = np.array([[[float(Fraction(x)) for x in row] for row in a] for a in model["A"]])
    U = None if model["U"] == "fixed" else np.array(
        [[[float(Fraction(x)) for x in row] for row in u] for u in model["U"]])
    pm = PreciseModel(sp.AttentionModel(task, model["kind"], A, U))
    max_error = float(Fraction(statement["max_error"]))
    max_bos = float(Fraction(statement["max_bos"]))
    for codes in family_prefixes(task, None):
        at = pm.at(codes)
        assert float(at.error) <= max_error + MARGIN
        if not _where(statement, task, codes):
            continue
        if model["kind"] == "relu" and statement["bos_measure"] == "weight":
            row = (codes[-1] * (task.T + 1) + len(codes), task.bos_code * (task.T + 1))
            masses = [max(mpmath.mpf(0), S[row[0], row[1]]) for S in pm.scores]
        else:
            masses = list(at.bos)
        assert max(float(m) for m in masses) <= max_bos + MARGIN


def true_heads(statement: dict) -> None:
    """No stated every-head bound exceeds the BOS mass, in its least-sinking head, of an
    accurate model: Theorem 5's head (``L`` found by bisection, error ``<= eps`` confirmed
    at 50 digits) beside ``H - 1`` heads that send every query to BOS."""
    inst, H = statement["instance"], statement["model_class"]["heads"]
    task = _task_of(inst, inst["positions"])
    eps = float(Fraction(statement["eps"]))
    sink = np.zeros((task.D, task.D))
    for name in ("is_content", "is_trigger"):
        sink[feature_index(task, name), feature_index(task, "is_bos")] = 60.0

    def model(L: float) -> sp.AttentionModel:
        return sp.AttentionModel(task, "softmax",
                                 np.stack([softmax_score_matrix(task, L), *[sink] * (H - 1)]))

    lo, hi = 0.0, 60.0
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if float(max_error(PreciseModel(model(mid)), None)[0]) <= eps \
            else (mid, hi)
    accurate = model(hi)
    if not float(max_error(PreciseModel(accurate), None)[0]) <= eps:
        return  # no accurate model of this shape: nothing to compare with
    for prefix, bound in statement["conclusion"]["bounds"]:
        assert 0 < Fraction(bound) <= 1
        masses = accurate.bos_mass(list(prefix))[:, len(prefix)]
        assert float(Fraction(bound)) <= masses.min() + MARGIN


def true_paper_bnb(statement: dict) -> None:
    """Every stated bound is at most the BOS weight of an accurate model at its target: the
    fixed-value sink construction of the paper's setting, in closed form (a content query
    puts ``e^λ/(e^λ + t)`` on BOS, its error is below ``(L-1) R/(e^λ + L-1) = ε`` at
    ``e^λ = (L-1)(R/ε - 1)``, ``R`` the largest token norm)."""
    inst = statement["instance"]
    C = _vectors(inst)
    L, eps = inst["L"], float(Fraction(statement["eps"]))
    R = math.sqrt(1.0 + float(np.max(np.sum(C * C, axis=1))))
    if R / eps <= 1:
        return  # no model of this shape is accurate: nothing to compare with
    e_lam = (L - 1) * (R / eps - 1)
    for prefix, bound in statement["conclusion"]["bounds"]:
        assert prefix[-1] < len(C)  # a non-trigger position
        assert 0 < Fraction(bound) <= 1
        assert float(Fraction(bound)) <= e_lam / (e_lam + len(prefix)) + MARGIN


def true_composition(statement: dict) -> None:
    """The stated bound is at most ``1 - (2ε/g)^{1/N}``, with the ray gap ``g`` of the two
    trigger-row targets found by brute force over unit directions in their plane (not the
    closed form either side uses), and the rows it assumes the error at are the theorem's
    sequences: ``(BOS, u)`` and ``(BOS, u^{j-1}, τ)`` for the two contents ``u`` it names."""
    inst, con = statement["instance"], statement["conclusion"]
    C, m = _vectors(inst), len(inst["content"]["vectors"])
    rows = statement["hypothesis_prefixes"]
    (a,), (b,) = con["either"]
    assert rows[:2] == [[a], [b]] and a != b
    j, tau = len(rows[2]), rows[2][-1] - m
    assert rows[2:] == [[a] * (j - 1) + [m + tau], [b] * (j - 1) + [m + tau]]
    assert 2 <= j <= inst["L"] - 1 and 0 <= tau < m

    def target(u: int) -> np.ndarray:
        return ((j - 1) * np.r_[0, 0, C[u], 1] + np.r_[0, 1, C[tau], 0]) / j

    p, q = target(a), target(b)
    e1 = p / np.linalg.norm(p)
    e2 = q - (q @ e1) * e1
    e2 = e2 / np.linalg.norm(e2) if np.linalg.norm(e2) > 1e-12 else np.zeros_like(e1)
    angles = np.linspace(0, 2 * np.pi, 200001)
    us = np.outer(np.cos(angles), e1) + np.outer(np.sin(angles), e2)
    dist = [np.sqrt(np.maximum(z @ z - np.maximum(us @ z, 0) ** 2, 0)) for z in (p, q)]
    g = float(np.max(dist, axis=0).min())
    eps, layers = float(Fraction(statement["eps"])), statement["model_class"]["layers"]
    assert g > 2 * eps - MARGIN
    bound = 1 - (2 * eps / g) ** (1 / layers)
    assert float(Fraction(con["min_bound"])) <= bound + 1e-5  # the grid's resolution


TRUTH = {"paper-composition": true_composition, "hull": true_theorem3,
         "hull-family": true_theorem3, "sinkmap-socp": true_sink_map, "witness": true_witness,
         "bnb-heads": true_heads,
         "paper-bnb-learned-values": true_paper_bnb, "sinkmap-gated": true_gated}


def read_mutated(text: str, tmp_path) -> tuple[Any, checker.Verdict | None, bool]:
    """Write ``text`` and verify it, within :data:`SECONDS`: ``(path, verdict, refused by a
    size limit)``, the verdict ``None`` when it was refused with a one-line error."""
    path = tmp_path / "mutated.json"
    path.write_text(text, encoding="utf-8")
    start = time.perf_counter()
    verdict, refused = None, False
    try:
        verdict = checker.verify_file(path)
    except CertificateError as exc:
        message = str(exc)
        assert message and "\n" not in message, message
        refused = isinstance(exc, LimitExceeded)
    assert time.perf_counter() - start < SECONDS
    return path, verdict, refused


def judge(text: str, tmp_path) -> checker.Verdict | None:
    """Refused cleanly, or accepted with a true statement; the CLI agrees and never raises."""
    path, verdict, refused = read_mutated(text, tmp_path)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["verify", str(path)])
    if verdict is None:
        assert rc == (4 if refused else 2) and err.getvalue().count("\n") == 1, err.getvalue()
        return None
    if not verdict.ok:
        assert rc == 1 and "\n" not in verdict.failure
        return verdict
    content = verdict.statement.get("instance", {}).get("content", {})
    if content.get("scheme") == "gaussian":  # rebuilt here from k and seed, exactly
        real = sp.TriggerTask(p=verdict.statement["instance"]["p"], T=1, content="gaussian",
                              k=content["k"], seed=content["seed"]).content
        same = content["vectors"] == [[str(Fraction(float(x))) for x in row] for row in real]
        assert rc == (0 if same else 2), err.getvalue()
    else:
        assert rc == 0, err.getvalue()
    assert verdict.statement["kind"] == verdict.kind and len(verdict.digest) == 64
    TRUTH[verdict.kind](verdict.statement)
    return verdict


# ------------------------------------------------------------------- the tests
@pytest.mark.parametrize("name", sorted(base_files()))
def test_every_base_file_verifies_and_is_true(name, tmp_path):
    verdict = judge(base_files()[name], tmp_path)
    assert verdict is not None and verdict.ok


@FEW
@given(case=mutated_files())
def test_mutated_certificates_are_refused_or_true(case, tmp_path):
    judge(case[1], tmp_path)


@pytest.mark.slow
@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=mutated_files())
def test_mutated_certificates_many(case, tmp_path):
    judge(case[1], tmp_path)


def test_the_mutations_do_reach_every_outcome(tmp_path):
    """The fuzzer is not vacuous: known edits are refused, fail an inequality, or verify."""
    family = json.loads(base_files()["hull-family"])
    family["data"]["situations"][0]["bound"] = "99999/100000"
    assert not judge(json.dumps(family), tmp_path).ok
    family["instance"]["eps"] = "1/100000"  # smaller ε: the tightened bound holds again
    assert judge(json.dumps(family), tmp_path).ok
    assert judge(base_files()["hull"].replace('"t": 3', '"t": 3, "t": 2'), tmp_path) is None


# ------------------------------------------------------------------- claims
CLAIM = dict(task=dict(p=2, T=3), model=dict(kind="softmax", heads=1, values="fixed"),
             hypothesis=dict(max_error=0.05),
             conclusion=dict(min_bos_mass=0.9, at="before_trigger"))


def _section_edits(draw: Any, base: dict, choices: dict) -> dict:
    """``base`` (a claim's data) with one to three fields replaced by values drawn from
    ``choices`` (section -> [(field, strategy)])."""
    data = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(1, 3))):
        section = draw(st.sampled_from(list(choices)))
        key, value = draw(st.sampled_from(choices[section]))
        data[section][key] = draw(value)
    return data


@st.composite
def mutated_claims(draw) -> str:
    data = _section_edits(draw, CLAIM, {
            "task": [("p", st.integers(1, 3)), ("T", st.integers(2, 4)),
                     ("triggers", st.sampled_from(["single", "multi"])),
                     ("positions", st.sampled_from(["inverse", "onehot"])),
                     ("content", st.sampled_from(["signed", "gaussian"]))],
            "model": [("kind", st.sampled_from(["softmax", "relu"])),
                      ("heads", st.integers(1, 2)),
                      ("values", st.sampled_from(["fixed", "learned"]))],
            "hypothesis": [("max_error", st.sampled_from([0.01, 0.05, 0.0500001, 0.1, 1e-30])),
                           ("family", st.sampled_from(["S_T", "homogeneous", [[0, 0]]]))],
            "conclusion": [("min_bos_mass", st.sampled_from([0.5, 0.9, 0.95, 0.96, 1.0])),
                           ("at", st.sampled_from(["before_trigger", "nontrigger",
                                                   "homogeneous",
                                                   [dict(sequence=[0, 1], position=2)],
                                                   [dict(sequence=[0, 2], position=2)]])),
                           ("positions", st.sampled_from(["every", "some"]))],
    })
    text = json.dumps(data)
    if draw(st.booleans()):  # deep nesting: test_deeply_nested_claim_is_a_clean_error
        text = draw(syntactic_edit(text, tuple(k for k in SYNTACTIC if k != "deep")))
    return text


def true_claim_by_theorem3(claim) -> None:
    """The claim holds by Theorem 3 in closed form (signed content, U_fix, one head)."""
    task, con, hyp = claim.task, claim.conclusion, claim.hypothesis
    assert task.content_scheme == "signed" and claim.model_class.kind == "softmax"
    assert claim.model_class.heads == 1 and claim.model_class.values == "fixed"
    eps, b = float(hyp.eps_exact), float(con.b_exact)
    family = hyp.family_sequences(task)
    prefixes = None if family is None else {s[:t] for s in family for t in range(1, len(s) + 1)}
    held = []
    for seq, t in con.at.pair_list(task):
        prefix = seq[:t]
        S = set(prefix)
        sound = (sp.TRIG not in S and not any((c + task.p) % (2 * task.p) in S for c in S)
                 and (prefixes is None or prefix in prefixes))
        held.append(sound and b <= 1 - eps * math.sqrt(len(S)) + 1e-12)
    assert (all(held) if con.positions == "every" else any(held)), claim


@FEW
@given(text=mutated_claims())
def test_mutated_claims_are_refused_or_proved_only_when_true(text, tmp_path):
    cert = tmp_path / "cert.json"
    cert.write_text(base_files()["hull-family"])
    path = tmp_path / "claim.json"
    path.write_text(text, encoding="utf-8")
    try:
        claim = load_claim(path)
    except (ValueError, TypeError, SinkproofError) as exc:
        assert str(exc) and "\n" not in str(exc).strip(), str(exc)
        return
    try:
        prove_by_certificate(claim, cert)
    except NotImplied as exc:
        assert "\n" not in str(exc)
        return
    true_claim_by_theorem3(claim)


def test_claim_fuzzing_is_not_vacuous(tmp_path):
    cert = tmp_path / "cert.json"
    cert.write_text(base_files()["hull-family"])
    claim = claim_from_dict({**CLAIM, "conclusion": dict(min_bos_mass=0.9, at=[
        dict(sequence=[0, 1], position=2)])})
    bound, _ = prove_by_certificate(claim, cert)  # 1 - 0.05·sqrt(2) >= 0.9
    true_claim_by_theorem3(claim)
    over = claim_from_dict({**CLAIM, "conclusion": dict(min_bos_mass=0.96, at=[
        dict(sequence=[0, 1], position=2)])})
    with pytest.raises(NotImplied):
        prove_by_certificate(over, cert)
    with pytest.raises(AssertionError):
        true_claim_by_theorem3(over)


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_deeply_nested_claim_is_a_clean_error(tmp_path, suffix):
    """Found by this fuzzer: a claim nested 5000 deep once let RecursionError out of
    load_claim; the nesting is now bounded on the text, before the parser recurses."""
    path = tmp_path / f"deep{suffix}"
    deep = "[" * 5000 + "]" * 5000
    if suffix == ".json":
        path.write_text(json.dumps(CLAIM).replace('"before_trigger"', deep))
    else:
        path.write_text(f"[task]\np = 2\nT = 3\n[conclusion]\nat = {deep}\n")
    with pytest.raises(ValueError, match="nested more than 64 levels deep") as info:
        load_claim(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


# ------------------------------------------------------------- paper claims
PAPER_CLAIM = dict(task=dict(setting="paper", n=4, L=4, content=[[0.5], [1.0]]),
                   model=dict(kind="softmax", heads=1, layers=1, values="fixed"),
                   hypothesis=dict(max_error="1/10"), conclusion=dict(min_bos_mass="0.87"))


@cache
def paper_hull_file() -> str:
    from sinkproof.claims import claim_from_dict
    from sinkproof.convex import paper_family_certificate

    task = claim_from_dict(json.loads(json.dumps(PAPER_CLAIM))).task
    return json.dumps(paper_family_certificate(task, "1/10").to_dict())


@st.composite
def mutated_paper_claims(draw) -> dict:
    data = _section_edits(draw, PAPER_CLAIM, {
            "task": [("L", st.integers(3, 5)),
                     ("content", st.sampled_from([[[0.5], [1.0]], [[1.0], [0.5]],
                                                  [[0.5], [0.75]], [[0.5]], [[0.25], [1.0]],
                                                  [[0.5], [1.0], [0.75]]]))],
            "model": [("kind", st.sampled_from(["softmax", "relu_length", "sparsemax",
                                                "sink_logit", "gated_softmax"])),
                      ("heads", st.integers(1, 2)), ("layers", st.integers(1, 2)),
                      ("values", st.sampled_from(["fixed", "learned"]))],
            "hypothesis": [("max_error", st.sampled_from(["1/20", "1/10", "0.1000001", "1/5"]))],
            "conclusion": [("min_bos_mass", st.sampled_from(["0.5", "0.8", "0.87", "0.9",
                                                             "0.95"])),
                           ("positions", st.sampled_from(["every", "some"])),
                           ("heads", st.sampled_from(["every", "some"]))],
    })
    if data["model"]["values"] == "fixed" and (data["model"]["heads"],
                                                data["model"]["layers"]) != (1, 1):
        data["model"]["values"] = "learned"  # fixed values exist for one head only
    return data


def _hull_distance(points: np.ndarray) -> float:
    """Distance from 0 to the convex hull of ``points`` (rows), by SLSQP on the simplex."""
    from scipy.optimize import minimize

    k = points.shape[0]
    res = minimize(lambda w: float(np.sum((w @ points) ** 2)), np.full(k, 1.0 / k),
                   jac=lambda w: 2 * points @ (w @ points), bounds=[(0, 1)] * k,
                   constraints=[dict(type="eq", fun=lambda w: w.sum() - 1)], method="SLSQP",
                   options=dict(ftol=1e-15, maxiter=500))
    return float(np.sqrt(max(res.fun, 0.0)))


def true_paper_claim_by_hulls(claim) -> None:
    """Re-derived here: one fixed-value softmax head (the only class the hull bound is about)
    and ``b <= 1 - ε/d(S)`` at every non-trigger token set ``S`` of the claim's own task."""
    from sinkproof.attention import MAPS

    mc = claim.model_class
    assert MAPS[mc.kind].properties.on_simplex, mc  # weights summing to 1
    assert (mc.heads, mc.layers, mc.values) == (1, 1, "fixed"), mc
    task, eps = claim.task, float(claim.hypothesis.max_error)
    content = np.asarray(task.content, dtype=float)
    tokens = np.hstack([np.zeros((len(content), 1)), content, np.ones((len(content), 1))])
    triggers = np.hstack([np.ones((len(content), 1)), content, np.zeros((len(content), 1))])
    least = 1.0
    for size in range(1, min(len(content), task.L - 2) + 1):
        for C in itertools.combinations(range(len(content)), size):
            for trig in [None, *range(len(content))]:
                pts = tokens[list(C)] if trig is None else np.vstack([tokens[list(C)],
                                                                      triggers[trig]])
                least = min(least, 1 - eps / _hull_distance(pts))
    held = [float(claim.conclusion.min_bos_mass) <= least + MARGIN]
    assert all(held), (claim, least)


@FEW
@given(data=mutated_paper_claims())
def test_mutated_paper_claims_are_proved_by_a_hull_certificate_only_when_true(data, tmp_path):
    """Found by this test: a paper-hull certificate (one fixed-value softmax head) proved
    claims about learned values, two heads and length-normalised ReLU."""
    from sinkproof.claims import claim_from_dict

    cert = tmp_path / "hull.json"
    cert.write_text(paper_hull_file())
    try:
        claim = claim_from_dict(data)
    except (ValueError, TypeError, SinkproofError) as exc:
        assert str(exc) and "\n" not in str(exc).strip(), str(exc)
        return
    try:
        prove_by_certificate(claim, cert)
    except NotImplied as exc:
        assert "\n" not in str(exc)
        return
    true_paper_claim_by_hulls(claim)


@pytest.mark.parametrize("model", [dict(values="learned"), dict(kind="relu_length"),
                                   dict(kind="sink_logit"),
                                   dict(heads=2, values="learned"),
                                   dict(layers=2, values="learned")])
def test_a_paper_hull_certificate_proves_nothing_about_another_class(model, tmp_path):
    from sinkproof.claims import check, claim_from_dict

    cert = tmp_path / "hull.json"
    cert.write_text(paper_hull_file())
    same = claim_from_dict(json.loads(json.dumps(PAPER_CLAIM)))
    assert check(same, certificate=cert, search=False, bnb=False).status == "proved"
    other = json.loads(json.dumps(PAPER_CLAIM))
    other["model"].update(model)
    out = check(claim_from_dict(other), certificate=cert, search=False, bnb=False)
    assert out.status == "open" and any("the certificate covers" in r
                                        for r in out.reasons), out.reasons


# ------------------------------------------------------------- paper witnesses
@cache
def paper_witness_file() -> str:
    """A real paper-witness: the two cancelling softmax heads refuting a sink claim."""
    from sinkproof.claims import claim_from_dict
    from sinkproof.claims.theorems import stack_constructions
    from sinkproof.claims.witness import stack_witness_document

    data = json.loads(json.dumps(PAPER_CLAIM))
    data["model"].update(heads=2, values="learned")
    data["conclusion"]["min_bos_mass"] = "1/2"
    claim = claim_from_dict(data)
    doc, _, _ = stack_witness_document(claim, stack_constructions(claim)[0][1])
    return json.dumps(doc)


@st.composite
def mutated_paper_witness(draw) -> str:
    doc = json.loads(paper_witness_file())
    for _ in range(draw(st.integers(1, 2))):
        what = draw(st.sampled_from(["kind", "kind", "heads", "residual", "L", "n", "vector",
                                     "eps", "bos", "where", "weight", "digits", "measure",
                                     "extras"]))
        mc, task = doc["claim"]["model_class"], doc["instance"]["task"]
        if what == "kind":  # the same weights read as another map, with its extra fields
            mc["kind"] = draw(st.sampled_from(sorted(MAPS)))
            _map_extras(draw, doc)
        elif what == "extras":
            _map_extras(draw, doc)
        elif what == "measure":
            doc["claim"]["bos_measure"] = draw(st.sampled_from(["weight", "share"]))
        elif what == "heads":
            mc["heads"] = draw(st.integers(1, 3))
        elif what == "residual":
            task["residual"] = mc["residual"] = draw(st.booleans())
        elif what in ("L", "n"):
            task[what] += draw(st.sampled_from([-1, 1]))
        elif what == "vector":
            doc["instance"]["content_vectors"][draw(st.integers(0, 1))] = [draw(RATIONALS)]
        elif what in ("eps", "bos"):
            key = "max_error" if what == "eps" else "max_bos_mass"
            x = Fraction(doc["claim"][key])
            y = draw(st.sampled_from([x / 2, x * (1 - Fraction(1, 10**6)), 2 * x, x]))
            doc["claim"][key] = f"{y.numerator}/{y.denominator}"
        elif what == "where":
            doc["claim"]["where"] = draw(st.sampled_from(
                ["nontrigger", "all", [{"content": [0], "trigger_at": None, "heads": "every"}],
                 [{"content": [1, 0], "trigger_at": None, "heads": [[0, 1]]}],
                 [{"content": [0, 1, 1], "trigger_at": 2, "heads": "every"}]]))
        elif what == "weight":
            name = draw(st.sampled_from(["W_Q", "W_K", "W_V", "W_O"]))
            paths = _rational_paths(doc["data"][name])
            path = draw(st.sampled_from(paths))
            _set(doc["data"][name], path, draw(RATIONALS))
        else:
            doc["data"]["precision_digits"] = draw(st.sampled_from([10, 15, 30, 2000]))
    text = json.dumps(doc)
    if draw(st.booleans()):
        text = draw(syntactic_edit(text))
    return text


def _map_extras(draw, doc: dict) -> None:
    """``map_params`` and the gate of the claimed map, drawn (shapes from ``W_Q``), or none."""
    data, kind = doc["data"], doc["claim"]["model_class"]["kind"]
    layers, heads, n = len(data["W_Q"]), len(data["W_Q"][0]), len(data["W_Q"][0][0])
    for key in ("map_params", "gate_w", "gate_c"):
        data.pop(key, None)
    if MAPS[kind].param_names:
        data["map_params"] = [[[draw(RATIONALS)] for _ in range(heads)] for _ in range(layers)]
    if MAPS[kind].properties.gated:
        data["gate_w"] = [[[draw(RATIONALS) for _ in range(n)] for _ in range(heads)]
                          for _ in range(layers)]
        data["gate_c"] = [[draw(RATIONALS) for _ in range(heads)] for _ in range(layers)]


def true_paper_witness(doc: dict, statement: dict) -> None:
    """Re-derived here in float64 by the producer's stack model (not the checker's interval
    arithmetic): the file's own weights on the statement's instance have error <= ε at
    every position of the family and BOS weight <= the stated bound where it says."""
    from sinkproof.claims.witness import family_bos
    from sinkproof.stack import paper_model
    from sinkproof.tasks.paper import PaperTask

    inst, mc = statement["instance"], statement["model_class"]
    assert doc["instance"]["task"]["n"] == inst["n"] and doc["instance"]["task"]["L"] == inst["L"]
    content = [[float(Fraction(x)) for x in c] for c in inst["content"]["vectors"]]
    assert content == [[float(Fraction(x)) for x in c] for c in doc["instance"]["content_vectors"]]
    task = PaperTask(n=inst["n"], L=inst["L"], content=content, residual=mc["residual"])

    W = {name: np.vectorize(lambda q: float(Fraction(q)))(np.array(doc["data"][name],
                                                                  dtype=object))
         for name in ("W_Q", "W_K", "W_V", "W_O")}
    assert W["W_Q"].shape[:2] == (mc["layers"], mc["heads"])
    extras = {name: np.vectorize(lambda q: float(Fraction(q)))(np.array(doc["data"][name],
                                                                       dtype=object))
              for name in ("map_params", "gate_w", "gate_c") if name in doc["data"]}
    model = paper_model(task, mc["kind"], **W, **extras, residual=mc["residual"])
    where = statement["where"]
    everywhere = where in ("nontrigger", "all")  # "all": the trigger rows as well
    worst, per = family_bos(model, trigger_rows=where == "all")
    if statement["bos_measure"] != bos_measure(mc["kind"]):  # the other measure, by hand
        per = _family_measure(model, statement["bos_measure"], where == "all")
    assert worst <= float(Fraction(statement["max_error"])) + MARGIN
    bos = float(Fraction(statement["max_bos_mass"]))
    for prefix, weights in per:
        if everywhere:
            assert weights.max() <= bos + MARGIN
        for item in [] if everywhere else where:
            if tuple(item["prefix"]) == prefix:
                heads = [tuple(h) for h in item["heads"]] if item["heads"] != "every" else [
                    (layer, h) for layer in range(mc["layers"]) for h in range(mc["heads"])]
                assert max(weights[layer, h] for layer, h in heads) <= bos + MARGIN


def _family_measure(model: Any, measure: str, trigger_rows: bool = False
                    ) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """Per non-trigger prefix (every prefix with ``trigger_rows``), ``(layers, heads)``: the
    effective BOS weight ``g α_0`` (``"weight"``) or the share ``α_0 / Σ_k α_k`` (0 when every
    weight is 0), in float64."""
    task, out = model.task, []
    for t in range(1, task.L):
        for block in task.prefix_blocks(t):
            w = model.forward_batch(task.prefix_features(block.codes)).w[:, :, :, -1, :]
            bos = w[..., 0]
            if measure == "share":
                total = w.sum(axis=-1)
                bos = np.where(total > 0, bos / np.where(total > 0, total, 1.0), 0.0)
            rows = np.arange(len(block.codes)) if trigger_rows else \
                np.flatnonzero(~task.is_trigger(block.codes[:, -1]))
            for i in rows:
                out.append((tuple(int(c) for c in block.codes[i]), bos[:, :, i]))
    return out


@FEW
@given(text=mutated_paper_witness())
def test_mutated_paper_witnesses_are_refused_or_true(text, tmp_path):
    _, verdict, _ = read_mutated(text, tmp_path)
    if verdict is not None and verdict.ok:
        true_paper_witness(json.loads(text), verdict.statement)


def test_the_base_paper_witness_verifies_and_is_true():
    verdict = checker.verify(json.loads(paper_witness_file()))
    assert verdict.ok
    true_paper_witness(json.loads(paper_witness_file()), verdict.statement)
