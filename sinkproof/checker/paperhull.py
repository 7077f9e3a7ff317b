"""Checker for kind ``paper-hull-family``: Theorem 3 in the paper's setting, fixed values.

The paper's task has token vectors ``x ∈ R^n``: coordinate 0 the BOS indicator,
1 the trigger indicator, ``2..n-2`` content, ``n-1`` a bias channel that is 1 on
content tokens and 0 on BOS and the trigger.  With a finite content set
``c_0..c_{m-1}`` (listed exactly in ``instance.content_vectors``) this checker
rebuilds every token itself: the content token ``i`` is ``(0, 0, c_i, 1)``, the
trigger carrying ``c_i`` is ``(0, 1, c_i, 0)``, BOS is ``e_0``.  Values are fixed:
``v_x`` is ``x`` with its BOS coordinate dropped, so ``v_BOS = 0``.

At a non-trigger position ``t`` (``1 <= t <= L-1``, one trigger at ``j ∈ 2..L-1``,
before or after ``t``) the target is 0 and the output of any single-head
normalised-attention model is ``(1 - α_t0)·z`` with ``z`` in the hull of the values
of the distinct tokens ``S = {x_1..x_t}``; an error ``<= ε`` (Euclidean) there forces
``α_t0 >= 1 - ε/d(S)``.  ``S`` is a non-empty set ``C`` of at most ``L-2`` content
tokens, plus (after the trigger) one trigger token.  Each entry gives a direction
``w`` and a rational ``d > 0`` with ``d·||w|| <= w·v_x`` on ``S`` and its bound
``<= 1 - ε/d``; every occurring ``S`` must be listed.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations
from math import comb
from typing import Any

from ..errors import CertificateError
from .exact import (
    check_hull_bound,
    check_leq,
    common_denominator,
    show,
)
from .limits import current, require
from .schema import (
    check_fields,
    child,
    format_rational,
    need,
    need_dict,
    need_int,
    need_list,
    need_rational,
    need_str,
    need_vector,
    parse_rational,
    rational_matrix,
)
from .verdict import Verdict

KIND = "paper-hull-family"
INSTANCE_FIELDS = ("task", "content_vectors", "values", "eps")
TASK_FIELDS = ("setting", "n", "L", "content", "residual", "grid")
ENTRY_FIELDS = ("content", "trigger", "w", "d", "bound")

Vector = list[Fraction]
Situation = tuple[tuple[int, ...], int | None]
"""``(sorted content indices, trigger's content index or None)``."""


def paper_values(content: list[Vector]) -> tuple[list[Vector], list[Vector]]:
    """Fixed values (BOS coordinate dropped) of content tokens and of triggers, exactly."""
    tokens = [[Fraction(0), *c, Fraction(1)] for c in content]
    triggers = [[Fraction(1), *c, Fraction(0)] for c in content]
    return tokens, triggers


def occurring(m: int, L: int) -> list[Situation]:
    """Every token set of a non-trigger position: ``C`` (``1 <= |C| <= L-2``), ± one trigger."""
    sizes = range(1, min(m, L - 2) + 1)
    count = 0
    for size in sizes:
        count += comb(m, size) * (m + 1)
        if count > current().situations:
            break
    require("situations", count, f"instance: situations of m={m}, L={L}", partial=True)
    out: list[Situation] = []
    for size in sizes:
        for combo in combinations(range(m), size):
            out.append((combo, None))
            out.extend((combo, trig) for trig in range(m))
    return out


def _name(s: Situation) -> str:
    content = ", ".join(f"c{i}" for i in s[0])
    return "{" + content + ("" if s[1] is None else f", TRIG(c{s[1]})") + "}"


def read_one_layer_task(instance: dict[str, Any], fields: tuple[str, ...]
                        ) -> tuple[dict[str, Any], list[Vector]]:
    """``instance.task`` (the paper's setting, one layer, a finite content set) and its
    content vectors, exactly; ``fields``: the instance's allowed fields."""
    check_fields(instance, "instance", fields)
    task = check_fields(need_dict(instance, "task", "instance"), "instance.task", TASK_FIELDS)
    if need_str(task, "setting", "instance.task") != "paper":
        raise CertificateError("instance.task.setting: must be 'paper'")
    n = need_int(task, "n", "instance.task", minimum=4)
    need_int(task, "L", "instance.task", minimum=3)
    if task.get("residual", False) is not False:
        raise CertificateError("instance.task.residual: the bound is for the one-layer "
                               "targets (residual must be false)")
    if need(task, "content", "instance.task") == "uniform":
        raise CertificateError("instance.task.content: continuous content has no finite "
                               "certificate; give a finite content set")
    raw = need(instance, "content_vectors", "instance")
    if isinstance(raw, list):
        require("content", len(raw) * (n - 3), "instance.content_vectors: entries m·(n-3)")
    content = rational_matrix(raw, "instance.content_vectors", columns=n - 3, min_rows=1)
    if len({tuple(c) for c in content}) != len(content):
        raise CertificateError("instance.content_vectors: repeated content vector")
    return task, content


def _read_instance(cert: dict[str, Any]) -> tuple[dict[str, Any], list[Vector], Fraction]:
    instance = cert["instance"]
    task, content = read_one_layer_task(instance, INSTANCE_FIELDS)
    if need_str(instance, "values", "instance", choices=("fixed",)) != "fixed":
        raise CertificateError("instance.values: only fixed values are certified")
    eps = need_rational(instance, "eps", "instance")
    if eps < 0:
        raise CertificateError(f"instance.eps: must be >= 0, got {show(eps)}")
    return task, content, eps


def _read_entry(entry: Any, m: int, path: str) -> Situation:
    if not isinstance(entry, dict):
        raise CertificateError(f"{path}: must be an object")
    check_fields(entry, path, ENTRY_FIELDS)
    content = need_list(entry, "content", path, min_length=1)
    for i, c in enumerate(content):
        if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < m:
            raise CertificateError(f"{path}.content[{i}]: {c!r} is not a content index < {m}")
    key = tuple(sorted(set(content)))
    if len(key) != len(content):
        raise CertificateError(f"{path}.content: repeated index")
    trig = need(entry, "trigger", path)
    if trig is not None and (isinstance(trig, bool) or not isinstance(trig, int)
                             or not 0 <= trig < m):
        raise CertificateError(f"{path}.trigger: {trig!r} is neither null nor an index < {m}")
    return key, trig


def _check_entry(entry: dict[str, Any], s: Situation, tokens: list[Vector],
                 triggers: list[Vector], eps: Fraction, path: str) -> Fraction:
    values = [tokens[i] for i in s[0]] + ([] if s[1] is None else [triggers[s[1]]])
    w = need_vector(entry, "w", path, length=len(values[0]))
    d = need_rational(entry, "d", path)
    bound = need_rational(entry, "bound", path)
    common_denominator([*w, d, bound], path)
    check_hull_bound(w, d, bound, [(f"a value of {_name(s)}", v) for v in values], 1, eps, path)
    return bound


def verify(cert: dict[str, Any]) -> Verdict:
    """Kind ``paper-hull-family``: every non-trigger position of the paper's family."""
    need_str(cert, "kind", "", choices=(KIND,))
    task, content, eps = _read_instance(cert)
    check_fields(need_dict(cert, "claim", ""), "claim", ("statement", "min_bound"))
    data = check_fields(need_dict(cert, "data", ""), "data", ("situations",))
    m, n, L = len(content), task["n"], task["L"]
    entries = need_list(data, "situations", "data")
    by_key: dict[Situation, tuple[dict[str, Any], str]] = {}
    for i, entry in enumerate(entries):
        path = child("data.situations", i)
        key = _read_entry(entry, m, path)
        if key in by_key:
            raise CertificateError(f"{path}: situation {_name(key)} listed twice")
        by_key[key] = (entry, path)
    needed = occurring(m, L)
    missing = [s for s in needed if s not in by_key]
    if missing:
        raise CertificateError(f"data.situations: situation {_name(missing[0])} is not "
                               f"covered ({len(missing)} missing)")
    if len(by_key) != len(needed):
        extra = sorted(set(by_key) - set(needed), key=str)[0]
        raise CertificateError(f"data.situations: {_name(extra)} does not occur")
    tokens, triggers = paper_values(content)
    bounds = {s: _check_entry(by_key[s][0], s, tokens, triggers, eps, by_key[s][1])
              for s in needed}
    least = min(bounds.values())
    claimed = parse_rational(need(cert["claim"], "min_bound", "claim"), "claim.min_bound")
    check_leq(claimed, least, "claim.min_bound <= least certified situation bound")
    after = [b for s, b in bounds.items() if s[1] is not None]
    vectors = [[format_rational(x) for x in c] for c in content]
    statement = {
        "kind": KIND, "theorem": "Theorem 3", "setting": "paper",
        "instance": {"n": n, "L": L, "values": "fixed",
                     "content": {"scheme": "custom", "vectors": vectors}},
        "eps": format_rational(eps),
        "model_class": {"attention": "normalised", "heads": 1, "layers": 1,
                        "values": "x without its BOS coordinate (W_O W_V = I - e_0 e_0^T)"},
        "hypothesis": "error (Euclidean) <= eps at the non-trigger position t",
        "conclusion": {"positions": "every non-trigger position t in 1..L-1, before and "
                                    "after the trigger",
                       "min_bound": format_rational(claimed)},
    }
    text = (f"Theorem 3, paper setting [n={n}, L={L}, the m={m} content vectors listed, fixed "
            f"values v_BOS = 0]: every single-head normalised-attention model with error <= "
            f"ε = {show(eps)} at a non-trigger position t has α_t0 >= 1 - ε/d(S_t) >= "
            f"{show(claimed)}, at every non-trigger position of the family ({len(needed)} "
            f"situations, {len(after)} of them after the trigger)")
    return Verdict(True, KIND, text, details={
        "situations": len(needed), "after_trigger": len(after),
        "min_bound": show(claimed), "min_bound_after_trigger": show(min(after))},
        statement=statement)


def entry(s: Situation, w: Vector, d: Fraction, bound: Fraction) -> dict[str, Any]:
    """The certificate entry for one situation (used by producers; pure data)."""
    return {"content": list(s[0]), "trigger": s[1], "w": [format_rational(x) for x in w],
            "d": format_rational(d), "bound": format_rational(bound)}


__all__ = ["KIND", "entry", "occurring", "paper_values", "read_one_layer_task", "verify"]
