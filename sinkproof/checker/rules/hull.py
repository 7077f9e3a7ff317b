"""Theorem 3 certificates: ``hull`` (one position), ``hull-family`` and ``paper-hull-family``.

Per token set ``S`` an entry gives ``w ≠ 0`` and ``d > 0`` with ``d·||w|| <= w·v_x`` on
``S`` (so ``d <= dist(0, conv{v_x})`` and ``α_t0 >= 1 - f·ε/d``, ``f = 1`` when ``v_b = 0``,
else 2), or exact convex weights showing ``0 ∈ conv`` (no bound)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any, TypeVar

from ...errors import CertificateError
from ..exact import (
    InequalityFailed,
    check_eq,
    check_hull_bound,
    check_leq,
    common_denominator,
    show,
)
from ..family.paper import read_paper
from ..family.trigger import TRIGGER, Instance, read_instance, read_tokens, situations
from ..schema import (
    check_fields,
    child,
    format_rational,
    need,
    need_dict,
    need_eps,
    need_int,
    need_list,
    need_rational,
    need_str,
    need_vector,
    parse_rational,
    section,
)
from ..verdict import Verdict

INSTANCE_FIELDS = ("task", "content_vectors", "values", "eps")
PAPER_KIND = "paper-hull-family"
Key = TypeVar("Key")
ENTRY_FIELDS = {"bounded": ("tokens", "w", "d", "bound"),
                "zero_combination": ("tokens", "zero_combination", "bound"),
                "no_bound": ("tokens", "no_bound", "bound")}
"""The fields of a situation entry, by its form."""


def _token_name(code: int) -> str:
    return "TRIG" if code == TRIGGER else str(code)


def _situation_name(tokens: tuple[int, ...]) -> str:
    return "{" + ", ".join(_token_name(c) for c in tokens) + "}"


def _read_situation(entry: Any, inst: Instance, path: str) -> tuple[int, ...]:
    tokens = need_list(entry, "tokens", path, min_length=1)
    for i, tok in enumerate(tokens):
        if isinstance(tok, bool) or not isinstance(tok, int) or tok not in inst.values:
            raise CertificateError(f"{path}.tokens[{i}]: {tok!r} is not a token of the instance")
    key = tuple(sorted(set(tokens)))
    if len(key) != len(tokens):
        raise CertificateError(f"{path}.tokens: repeated token")
    return key


def check_situation(entry: Any, tokens: tuple[int, ...], inst: Instance, eps: Fraction,
                    path: str) -> Fraction | None:
    """Check one situation's entry; return its certified bound, or ``None`` when 0 ∈ hull."""
    name = _situation_name(tokens)
    form = ("no_bound" if "no_bound" in entry else
            "zero_combination" if "zero_combination" in entry else "bounded")
    check_fields(entry, path, ENTRY_FIELDS[form])
    if "no_bound" in entry:  # nothing claimed for this situation
        need_str(entry, "no_bound", path)
        if entry.get("bound") is not None:
            raise InequalityFailed(f"{path}: claims a bound although marked no_bound")
        return None
    if "zero_combination" in entry:
        lam = need_vector(entry, "zero_combination", path, length=len(tokens))
        common_denominator(lam, f"{path}.zero_combination")
        for code, weight in zip(tokens, lam):
            check_leq(Fraction(0), weight, f"{path}: weight of token {_token_name(code)} >= 0")
        check_eq(sum(lam, Fraction(0)), Fraction(1), f"{path}: zero combination sums to 1")
        for i in range(inst.p):
            total = sum((w * inst.values[c][i] for c, w in zip(tokens, lam)), Fraction(0))
            check_eq(total, Fraction(0),
                     f"{path}: coordinate {i} of the zero combination of {name}")
        if entry.get("bound") is not None:
            raise InequalityFailed(f"{path}: claims a bound although 0 lies in the hull of {name}")
        return None
    named = [(f"token {_token_name(code)} of {name}", inst.values[code]) for code in tokens]
    return _bounded(entry, path, named, 1 if inst.bos_is_zero else 2, eps)


def _bounded(entry: Any, path: str, named: list[tuple[str, list[Fraction]]], factor: int,
             eps: Fraction) -> Fraction:
    """An entry's ``w``, ``d`` and ``bound``, checked against the ``named`` values."""
    w = need_vector(entry, "w", path, length=len(named[0][1]))
    d, bound = need_rational(entry, "d", path), need_rational(entry, "bound", path)
    common_denominator([*w, d, bound], path)
    check_hull_bound(w, d, bound, named, factor, eps, path)
    return bound


def _statement(kind: str, inst: Instance, eps: Fraction, conclusion: dict[str, Any]
               ) -> dict[str, Any]:
    """What a Theorem 3 certificate proves, as canonical data."""
    values = inst.statement()["values"]
    return {"kind": kind, "theorem": "Theorem 3", "instance": inst.statement(),
            "eps": format_rational(eps),
            "model_class": {"attention": "normalised", "heads": 1, "values": values,
                            "positions": "any", "value_features": "token"},
            "hypothesis": "error <= eps at position 0 and at the bounded position t",
            "conclusion": conclusion}


def _theorem_text(inst: Instance, eps: Fraction) -> str:
    factor = 1 if inst.bos_is_zero else 2
    return (f"every single-head normalised-attention model (softmax or any weights on the "
            f"simplex; any scores and positions) with values {'U_fix' if inst.fixed else 'U'} "
            f"and error <= ε = {show(eps)} at positions 0 and t has α_t0 >= 1 - "
            f"{'' if factor == 1 else '2'}ε/d")


def verify_position(cert: dict[str, Any]) -> Verdict:
    """Kind ``hull``: the bound at position ``t`` of one sequence."""
    instance = check_fields(cert["instance"], "instance", (*INSTANCE_FIELDS, "sequence", "t"))
    check_fields(cert["claim"], "claim", ("statement", "bound"))
    inst = read_instance(instance)
    eps = need_eps(cert["instance"], strict=False)
    seq = read_tokens(need(instance, "sequence", "instance"), inst, "instance.sequence")
    t = need_int(instance, "t", "instance", minimum=1)
    if t > len(seq):
        raise CertificateError(f"instance.t: position {t} beyond the sequence "
                               f"of length {len(seq)}")
    if seq[t - 1] == TRIGGER:
        raise CertificateError("instance.t: a trigger position (Theorem 3 covers non-trigger ones)")
    tokens = tuple(sorted(set(seq[:t])))
    data = cert["data"]
    stated = _read_situation(data, inst, "data")
    if stated != tokens:
        raise CertificateError(f"data.tokens: {_situation_name(stated)} is not the token set "
                               f"{_situation_name(tokens)} of x_1..x_t")
    bound = check_situation(data, tokens, inst, eps, "data")
    claimed = cert["claim"].get("bound")
    where = f"position t={t} of (BOS, {', '.join(_token_name(c) for c in seq)})"
    if bound is None:
        if claimed is not None:
            raise InequalityFailed("claim.bound: a bound is claimed but 0 lies in the hull")
        why = ("no bound is claimed (undecided)" if "no_bound" in data else
               f"0 lies in the hull of the values {_situation_name(tokens)}, so Theorem 3 "
               "gives no bound there")
        text = f"{where} [{inst.describe()}]: {why}"
        statement = _statement("hull", inst, eps, {"sequence": seq[:t], "t": t, "bound": None})
        return Verdict(True, "hull", text, details={"tokens": list(tokens), "bound": None},
                       statement=statement)
    claimed_bound = parse_rational(claimed, "claim.bound")
    check_leq(claimed_bound, bound, "claim.bound <= certified bound")
    text = (f"{where} [{inst.describe()}]: {_theorem_text(inst, eps)} "
            f"= {show(bound)} >= claimed {show(claimed_bound)}")
    statement = _statement("hull", inst, eps, {"sequence": seq[:t], "t": t,
                                               "bound": format_rational(bound)})
    return Verdict(True, "hull", text, details={"d": show(need_rational(data, "d", "data")),
                                               "bound": show(claimed_bound)},
                   statement=statement)


def verify_family(cert: dict[str, Any]) -> Verdict:
    """Kind ``hull-family``: every non-trigger position of the family, by situation."""
    inst = read_instance(check_fields(cert["instance"], "instance", INSTANCE_FIELDS))
    check_fields(cert["claim"], "claim", ("statement", "bounded", "min_bound"))
    check_fields(cert["data"], "data", ("situations",))
    eps = need_eps(cert["instance"], strict=False)
    by_tokens, needed = _cover(cert["data"], lambda e, at: _read_situation(e, inst, at),
                               lambda: situations(inst), _situation_name)
    bounds = []
    by_form: dict[str, list[Any]] = {"bounds": [], "zero_in_hull": [], "undecided": []}
    for key in needed:
        entry, path = by_tokens[key]
        bound = check_situation(entry, key, inst, eps, path)
        if bound is not None:
            bounds.append(bound)
            by_form["bounds"].append([list(key), format_rational(bound)])
        else:
            by_form["undecided" if "no_bound" in entry else "zero_in_hull"].append(list(key))
    statement = _statement("hull-family", inst, eps, {
        "positions": "every non-trigger position t >= 1 of the family, by its token set",
        **{name: sorted(items) for name, items in by_form.items()}})
    claim = cert["claim"]
    n_bounded = need_int(claim, "bounded", "claim", minimum=0)
    check_eq(Fraction(n_bounded), Fraction(len(bounds)), "claim.bounded == certified situations")
    claimed_min = need(claim, "min_bound", "claim")
    if not bounds:
        if claimed_min is not None:
            raise InequalityFailed("claim.min_bound: no situation is bounded")
        text = (f"Theorem 3 family [{inst.describe()}], ε = {show(eps)}: 0 lies in the hull "
                f"of the values in all {len(needed)} situations; no bound anywhere")
        return Verdict(True, "hull-family", text, details={"situations": len(needed)},
                       statement=statement)
    min_bound = parse_rational(claimed_min, "claim.min_bound")
    check_leq(min_bound, min(bounds), "claim.min_bound <= least certified situation bound")
    undecided = sum(1 for entry, _ in by_tokens.values() if "no_bound" in entry)
    unbounded = len(needed) - len(bounds) - undecided
    text = (f"Theorem 3 family [{inst.describe()}]: {_theorem_text(inst, eps)}, with d = d(S) "
            f"certified for the token set S = {{x_1..x_t}} at every non-trigger position t >= 1; "
            f"α_t0 >= {show(min_bound)} wherever S is one of the {len(bounds)} bounded situations; "
            f"in the other {unbounded} of {len(needed)} situations 0 lies in the hull "
            f"(certified), so Theorem 3 gives no bound there"
            + (f"; {undecided} situations left undecided (nothing claimed)" if undecided else ""))
    return Verdict(True, "hull-family", text,
                   details={"situations": len(needed), "bounded": len(bounds),
                            "zero_in_hull": unbounded, "undecided": undecided,
                            "min_bound": show(min_bound)}, statement=statement)


def _cover(data: dict[str, Any], read: Callable[[Any, str], Key],
           occurring: Callable[[], list[Key]], name: Callable[[Key], str]
           ) -> tuple[dict[Key, tuple[Any, str]], list[Key]]:
    """``data.situations`` by token set: each read once, every occurring one listed, no other."""
    by_key: dict[Key, tuple[Any, str]] = {}
    for i, entry in enumerate(need_list(data, "situations", "data")):
        path = child("data.situations", i)
        key = read(entry, path)
        if key in by_key:
            raise CertificateError(f"{path}: situation {name(key)} listed twice")
        by_key[key] = (entry, path)
    needed = occurring()
    missing = [s for s in needed if s not in by_key]
    if missing:
        raise CertificateError(f"data.situations: situation {name(missing[0])} is not "
                               f"covered ({len(missing)} missing)")
    extra = set(by_key) - set(needed)
    if extra:
        raise CertificateError(f"data.situations: {name(sorted(extra, key=str)[0])} does not occur")
    return by_key, needed


def verify_paper_family(cert: dict[str, Any]) -> Verdict:
    """Kind ``paper-hull-family``: Theorem 3 at every non-trigger position of the paper's
    family, fixed values ``v_x = x`` without its BOS coordinate (so ``v_BOS = 0``, factor 1):
    the token set ``S`` is a content set ``C`` (``1 <= |C| <= L-2``), plus one trigger after
    it; each entry gives ``w``, ``d`` with ``d·||w|| <= w·v_x`` on ``S`` and its bound
    ``<= 1 - ε/d``."""
    instance = cert["instance"]
    _, fam = read_paper(instance, INSTANCE_FIELDS)
    if need_str(instance, "values", "instance", choices=("fixed",)) != "fixed":
        raise CertificateError("instance.values: only fixed values are certified")
    eps = need_eps(cert["instance"], strict=False)
    section(cert, "claim", ("statement", "min_bound"))
    data = section(cert, "data", ("situations",))
    by_key, needed = _cover(data, fam.read_situation, fam.situations, fam.situation_name)
    tokens, triggers = fam.fixed_values()
    bounds = {}
    for s in needed:
        entry, path = by_key[s]
        values = [tokens[i] for i in s[0]] + ([] if s[1] is None else [triggers[s[1]]])
        check_fields(entry, path, ("content", "trigger", "w", "d", "bound"))
        bounds[s] = _bounded(entry, path, [(f"a value of {fam.situation_name(s)}", v)
                                           for v in values], 1, eps)
    claimed = parse_rational(need(cert["claim"], "min_bound", "claim"), "claim.min_bound")
    check_leq(claimed, min(bounds.values()), "claim.min_bound <= least certified situation bound")
    after = [b for s, b in bounds.items() if s[1] is not None]
    statement = {
        "kind": PAPER_KIND, "theorem": "Theorem 3", "setting": "paper",
        "instance": {"n": fam.n, "L": fam.L, "values": "fixed",
                     "content": {"scheme": "custom", "vectors": fam.vectors()}},
        "eps": format_rational(eps),
        "model_class": {"attention": "normalised", "heads": 1, "layers": 1,
                        "values": "x without its BOS coordinate (W_O W_V = I - e_0 e_0^T)"},
        "hypothesis": "error (Euclidean) <= eps at the non-trigger position t",
        "conclusion": {"positions": "every non-trigger position t in 1..L-1, before and "
                                    "after the trigger",
                       "min_bound": format_rational(claimed)},
    }
    text = (f"Theorem 3, paper setting [n={fam.n}, L={fam.L}, the m={fam.m} content vectors "
            f"listed, fixed values v_BOS = 0]: every single-head normalised-attention model "
            f"with error <= ε = {show(eps)} at a non-trigger position t has α_t0 >= 1 - "
            f"ε/d(S_t) >= {show(claimed)}, at every non-trigger position of the family "
            f"({len(bounds)} situations, {len(after)} of them after the trigger)")
    return Verdict(True, PAPER_KIND, text, details={
        "situations": len(bounds), "after_trigger": len(after),
        "min_bound": show(claimed), "min_bound_after_trigger": show(min(after))},
        statement=statement)


def verify(cert: dict[str, Any]) -> Verdict:
    """Dispatch on the envelope's kind (``hull``, ``hull-family`` or ``paper-hull-family``)."""
    kind = need_str(cert, "kind", "", choices=("hull", "hull-family", PAPER_KIND))
    need_dict(cert, "data", "")
    if kind == PAPER_KIND:
        return verify_paper_family(cert)
    return verify_position(cert) if kind == "hull" else verify_family(cert)


__all__ = ["PAPER_KIND", "check_situation", "verify"]
