"""The variants table in the paper's setting: the same four questions, one fixed-value
head per map on a small paper task with a finite content set (:func:`default_paper_task`).

What differs from our setting, and shows in the cells:

- the bias channel: every non-BOS value has trigger + bias = 1, so BOS is the only
  zero-valued key (our trigger token is a second one, after the trigger) and the hull of
  any token set's values is at distance ``>= 1/√2`` from 0: the ``paper-hull-family``
  certificate forces the BOS mass (or BOS plus a slot) at **every** non-trigger position,
  after the trigger included;
- no positional features: a map whose weight of the query's own key depends only on that
  key's score (``own_key_local``: ``relu``, ``sigmoid``, ``stick_breaking``) cannot average
  prefixes of different lengths, and has error ``>= (1/2 - 1/(L-1))/2`` on the family (the
  sink questions are then vacuous; :mod:`sinkproof.variants.floors`);
- whole-vector targets: the trigger row's target carries the bias and trigger
  coordinates, which is what the norm price below reads off.

Evidence by ``how``: ``certificate`` (the paper-hull certificate verified by the trusted
checker), ``witness`` (a construction written as ``paper-witness`` files that the checker
verifies: error and BOS weight and share), ``construction`` (verified by the checker's
measurement), ``theorem`` (constants instantiated exactly or in rounded-down intervals).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .. import checker
from ..attention import MAPS
from ..certformat import paper_prefixes as n_prefixes
from ..convex.family import paper_family_certificate
from ..errors import Interrupted
from ..tasks.paper import PaperTask
from .cells import AWAY, CERT_EPS, SINK, Cell, VariantsTable, covered, fmt, price_cell
from .floors import error_floor
from .paper import (
    DEFAULT_PAPER_LEVEL,
    PRICE_MAPS,
    PaperCheck,
    default_paper_task,
    paper_construction,
    paper_norm_lower_bound,
    paper_norm_price_formula,
    position_free_error_bound,
    verify_paper_construction,
)
from .questions import QUESTIONS

__all__ = ["build_paper_table", "paper_cell", "table_work"]

_SINK = SINK
VALUES = "fixed values (W_O W_V = I - e_0 e_0^T)"
COMMAND = "sinkproof variants --setting paper"


def _cmd(name: str, q: str, quick: bool) -> str:
    return f"{COMMAND}{' --quick' if quick else ''} --map {name} --question {q}"


def table_work(task: PaperTask, names: tuple[str, ...]) -> int:
    """Upper bound on the prefix evaluations of the table over ``names`` on ``task``: the
    family's prefixes once for the hull certificate and four times per map (at most two
    construction levels, two witness files)."""
    return (n_prefixes(task.m, task.L) + 1) * (1 + 4 * len(names))


def _hull(task: PaperTask) -> tuple[Any, Any]:
    cert = paper_family_certificate(task, CERT_EPS)
    return cert, checker.verify(cert.to_dict())


def _checks(task: PaperTask, kind: str) -> list[PaperCheck]:
    if error_floor(task, kind) is not None:
        return []
    L = DEFAULT_PAPER_LEVEL[kind]
    levels = (L,) if MAPS[kind].properties.exact_zeros else (L, 2 * L)
    return [verify_paper_construction(paper_construction(task, kind, lv)) for lv in levels]


def _blind(name: str) -> str:
    """What of the map's weights sees no position (its declared locality)."""
    if MAPS[name].properties.key_local:
        return "Its weight of key k is a function of the tokens x_t and x_k only"
    return "Its weight of the query's own key is a function of that token only"


def _vacuous(task: PaperTask, name: str, cmd: str, what: str) -> Cell:
    bound = error_floor(task, name).bound  # type: ignore[union-attr]
    return Cell("yes", "theorem",
                f"vacuously: no fixed-value {name} head has error < {bound} on this family, "
                f"so none is accurate and {what}.  {_blind(name)} "
                "(no positions in the paper's tokens); at the trigger "
                "row the trigger coordinate of the output is the trigger's weight on itself "
                "(no other key has a trigger coordinate), which the same trigger token needs "
                f"within eps of 1/2 at j = 2 and of 1/{task.L - 1} at j = {task.L - 1}"
                + _learned_floor(task, name), cmd)


def _learned_floor(task: PaperTask, name: str) -> str:
    """The learned-value floor, for maps weighing every key by its own score alone."""
    floor = position_free_error_bound(task, "learned")
    if floor == 0 or not MAPS[name].properties.key_local:
        return ""
    return (f"; with learned values and any number of heads every one-layer model still has "
            f"error >= {floor} (its trigger-row output is affine in j, the target 1/j)")


def _refutes(checks: list[PaperCheck]) -> bool:
    errs = [c.error_sq_hi for c in checks]
    decreasing = len(errs) > 1 and all(b < a for a, b in zip(errs, errs[1:]))
    shrinking = checks[-1].zero_error or (decreasing and errs[-1] < Fraction(1, 10**6))
    return shrinking and all(c.bos_hi <= AWAY and c.share_hi <= AWAY for c in checks)


def _con_text(checks: list[PaperCheck], kind: str) -> str:
    parts = []
    for c in checks:
        err = "0 exactly" if c.zero_error else f"<= {fmt(c.error_hi)}"
        parts.append(f"L={c.level}: error {err}, BOS weight <= {fmt(c.bos_hi)}, BOS share "
                     f"<= {fmt(c.share_hi)}")
    return (f"{kind} construction checked by the trusted checker on all {checks[0].prefixes} "
            "prefixes: " + "; ".join(parts))


def _witness_verdicts(task: PaperTask, name: str, check: PaperCheck,
                      seen: dict[Fraction, tuple[Any, ...]] | None = None) -> tuple[Any, ...]:
    """The checker's verdicts on the two witness files of ``check``'s construction; ``seen``
    keeps them by level, so that a row's two sink cells verify the same files once."""
    if seen is not None and check.level in seen:
        return seen[check.level]
    con = paper_construction(task, name, check.level)
    eps = max(Fraction(check.error_hi) * (1 + Fraction(1, 10**9)), Fraction(1, 10**300)) \
        if not check.zero_error else Fraction(0)
    verdicts = tuple(checker.verify(con.witness(eps, AWAY, m)) for m in ("weight", "share"))
    if seen is not None:
        seen[check.level] = verdicts
    return verdicts


def _sink_cell(task: PaperTask, name: str, q: str, hull: tuple[Any, Any],
               checks: list[PaperCheck], quick: bool,
               seen: dict[Fraction, tuple[Any, ...]] | None = None) -> Cell:
    which = _SINK[q]
    cmd = _cmd(name, q, quick)
    props = MAPS[name].properties
    if covered(name, which):
        cert, verdict = hull
        if verdict.ok and cert.min_bound > 0:
            what = ("BOS mass" if props.on_simplex else
                    "null mass (the gate's slot 1 - g and g times BOS merged into BOS)"
                    if props.gated else "null mass (virtual slot merged into BOS)")
            also = " (BOS is the only zero-valued key: null mass = BOS mass)" \
                if which == "null" and props.on_simplex else ""
            return Cell("yes", "certificate",
                        f"paper-hull certificate verified by the checker: {what} >= 1 - eps/d "
                        f"with the exact hull distance d of each of {len(cert.situations)} "
                        f"token sets (every non-BOS value has trigger + bias = 1, so d >= "
                        f"1/sqrt 2); at eps = {CERT_EPS} it is >= {fmt(cert.min_bound)} at "
                        f"every non-trigger position, >= {fmt(cert.min_bound_after_trigger)} "
                        f"after the trigger{also}", cmd, (cert, verdict))
        return Cell("open", "none", f"paper-hull certificate not verified: {verdict}", cmd)
    if error_floor(task, name) is not None:
        return _vacuous(task, name, cmd, "every accurate head sinks")
    if not checks:
        return Cell("open", "none", "no construction", cmd)
    text = _con_text(checks, name)
    if not _refutes(checks):
        return Cell("open", "none", "no verified construction: " + text, cmd, tuple(checks))
    null = "" if which == "bos" else (
        "; BOS is the only zero-valued key and the map has no slot, so the null mass is the "
        "BOS mass")
    verdicts = _witness_verdicts(task, name, checks[-1], seen)
    if all(v.ok for v in verdicts):
        return Cell("no", "witness",
                    f"{text}; at L={checks[-1].level} as two paper-witness files (error <= "
                    f"{fmt(checks[-1].error_hi)}; BOS weight, and BOS share, <= {AWAY} at "
                    f"every non-trigger position) verified by the trusted checker{null}", cmd,
                    (*checks, *verdicts))
    return Cell("no", "construction", text + null, cmd, tuple(checks))


def _exact_cell(task: PaperTask, name: str, checks: list[PaperCheck], quick: bool) -> Cell:
    cmd = _cmd(name, "exact_solution_at_finite_norm", quick)
    floor = error_floor(task, name)
    if floor is not None:
        return Cell("no", "theorem", f"every fixed-value {name} head has error >= "
                    f"{floor.bound} on this family (its weights see no "
                    "position: the trigger's weight on itself cannot be both 1/2 and "
                    f"1/{task.L - 1}){_learned_floor(task, name)}", cmd)
    if checks and checks[-1].zero_error:
        c = checks[-1]
        return Cell("yes", "construction", f"{name} construction at L={c.level}: error 0 "
                    f"exactly on all {c.prefixes} prefixes (the trusted checker, in exact "
                    "rationals)", cmd, (c,))
    if not MAPS[name].properties.exact_zeros:
        return Cell("no", "theorem",
                    "every weight (and a gate) is > 0 at finite scores and v_BOS = 0: at "
                    "position 1 of (BOS, a) the output is w_a a with w_a > 0, and a != 0 (its "
                    "bias coordinate is 1), while the target is 0", cmd)
    return Cell("open", "none", "exact weights possible, no exact construction verified", cmd)


def _norm_cell(task: PaperTask, name: str, checks: list[PaperCheck], exact: Cell,
               quick: bool) -> Cell:
    cmd = _cmd(name, "norm_grows_as_error_shrinks", quick)
    floor = error_floor(task, name)
    if floor is not None:
        return Cell("yes", "theorem", f"for every eps < {floor.bound} no "
                    f"fixed-value {name} head of any norm reaches error eps (see "
                    "exact_solution_at_finite_norm): the norm needed is infinite", cmd)
    priced = name in PRICE_MAPS
    cell_ = price_cell(cmd, exact, checks, lambda L: paper_construction(task, name, L).norm,
                       (lambda e: paper_norm_lower_bound(task, name, e)) if priced else None,
                       f"(BOS, a) at 1 and (BOS, a, T) at 2 share logits: "
                       f"{paper_norm_price_formula(name)}, l(x) = log((1-x)/x), m(e) = "
                       "log((1-2e)/(4e)), e' = eps/|a|, growing like 2 log(1/eps)"
                       if priced else "")
    return cell_ or Cell("open", "none", "no certified norm lower bound for this map", cmd)


def _known(name: str, question: str | None = None) -> None:
    if name not in MAPS:
        raise ValueError(f"unknown attention map {name!r}; expected one of {', '.join(MAPS)}")
    if question is not None and question not in QUESTIONS:
        raise ValueError(f"unknown question {question!r}; expected one of {', '.join(QUESTIONS)}")


def paper_cell(name: str, question: str, task: PaperTask | None = None,
               quick: bool = False) -> Cell:
    """One cell of the paper-setting table, running only what it needs."""
    _known(name, question)
    task = default_paper_task(quick) if task is None else task
    if question in _SINK:
        hull = _hull(task) if covered(name, _SINK[question]) else (None, None)
        checks = [] if covered(name, _SINK[question]) else _checks(task, name)
        return _sink_cell(task, name, question, hull, checks, quick)
    checks = _checks(task, name)
    exact = _exact_cell(task, name, checks, quick)
    if question == "exact_solution_at_finite_norm":
        return exact
    return _norm_cell(task, name, checks, exact, quick)


def build_paper_table(task: PaperTask | None = None, quick: bool = False,
                      maps: tuple[str, ...] | None = None) -> VariantsTable:
    """Every cell for ``maps`` (default all of MAPS) in the paper's setting on ``task``.
    Ctrl-C raises :class:`~sinkproof.errors.Interrupted` with the maps done."""
    task = default_paper_task(quick) if task is None else task
    names = tuple(MAPS) if maps is None else maps
    for n in names:
        _known(n)
    rows: dict[str, dict[str, Cell]] = {}
    try:
        hull = _hull(task) if any(covered(n, "null") for n in names) else (None, None)
        for name in names:
            checks = _checks(task, name)
            exact = _exact_cell(task, name, checks, quick)
            seen: dict[Fraction, tuple[Any, ...]] = {}
            rows[name] = {
                **{q: _sink_cell(task, name, q, hull, checks, quick, seen) for q in _SINK},
                "exact_solution_at_finite_norm": exact,
                "norm_grows_as_error_shrinks": _norm_cell(task, name, checks, exact, quick)}
    except KeyboardInterrupt:
        raise Interrupted(VariantsTable(task, rows, VALUES, COMMAND),
                          f"{len(rows)} of {len(names)} attention maps finished") from None
    return VariantsTable(task, rows, VALUES, COMMAND)
