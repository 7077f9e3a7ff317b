"""The variants table: four sink questions answered for every attention map on any task,
each answer derived from a check that is run when the table is built.

An answer is ``yes``/``no`` only when its evidence verifies; otherwise the cell is
``open`` with the reason.  Evidence by ``how``:

- ``certificate``: Theorem 3's family certificate re-verified by the trusted checker (on a
  task with positions :func:`sinkproof.convex.family_certificate`, by token set; on one
  without, the hull-family certificate of every occurring token set, whose bound holds at
  every non-trigger position when the task states a fixed-value floor).  It covers every
  head whose weights, with any zero-valued null slot merged into BOS, lie on the simplex:
  the BOS mass of the simplex maps, the null mass (slot + BOS) of the virtual-slot maps and
  of a gated head (effective weights ``g α_j`` and a slot ``1 - g``);
- ``construction``: a head of :mod:`sinkproof.variants.constructions` verified on the whole
  family (:func:`sinkproof.variants.verify.verify_construction`, exact or outward intervals);
- ``witness``: such a construction written as two witness files (error ``<= ε`` on the
  family, BOS weight and BOS share ``<= 3/4`` at every non-trigger position) that the
  trusted checker verifies (a null question too, where the construction's null mass is its
  BOS mass);
- ``theorem``: a stated theorem whose hypothesis is checked on the map's properties and the
  task's data, with its constants instantiated (:mod:`sinkproof.variants.normprice`; an
  error floor of :mod:`sinkproof.variants.floors`, under which the sink questions hold
  vacuously).

Cells read the maps' declared properties and the task's capabilities, never their names: a
map added to :data:`sinkproof.attention.MAPS` gets its row from what it declares, and a task
its table from what it declares.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .. import checker
from ..attention import MAPS
from ..constructions import position_free_error_bound
from ..convex import family_certificate
from ..convex.family import paper_family_certificate
from ..errors import Interrupted
from ..tasks import TASKS, task_from_description
from ..tasks.protocol import Task
from ..work import VARIANTS_MAX_WORK, refuse_beyond
from .cells import AWAY, CERT_EPS, PRICE_EPS, SINK, Cell, VariantsTable, covered, fmt, price_cell
from .constructions import construction, default_level
from .floors import Floor, error_floor
from .normprice import norm_lower_bound, price_maps, price_text
from .questions import QUESTIONS
from .verify import ConstructionCheck, checker_missing, fixed_values, verify_construction

__all__ = ["AWAY", "CERT_EPS", "PRICE_EPS", "QUESTIONS", "TABLE_TASKS", "Cell",
           "VariantsTable", "build_table", "cell", "default_task", "price_cell", "table_work"]

TABLE_TASKS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "trigger": ({"setting": "trigger", "p": 1, "T": 2}, {"setting": "trigger", "p": 2, "T": 3}),
    "paper": ({"setting": "paper", "n": 4, "L": 4, "content": [[-1.0], [1.0]]},
              {"setting": "paper", "n": 4, "L": 5, "content": [[-1.0], [1.0]]}),
}
"""The instance each setting's table is built on, ``(--quick, default)``, as task
descriptions: ours ``p = 2, T = 3`` (``p = 1, T = 2``), signed content, inverse positions,
one trigger; the paper's ``n = 4`` (one content coordinate), content ``{-1, 1}``, ``L = 5``
(``L = 4``)."""
DEFAULT_SETTING = next(iter(TASKS))


def default_task(quick: bool = False, setting: str = DEFAULT_SETTING) -> Task:
    """The instance the table is built on for ``setting`` (:data:`TABLE_TASKS`)."""
    if setting not in TABLE_TASKS:
        raise ValueError(f"no variants table instance for setting {setting!r}; expected one "
                         f"of {', '.join(TABLE_TASKS)}")
    return task_from_description(dict(TABLE_TASKS[setting][0 if quick else 1]))


def _command(task: Task) -> str:
    """The command (with the task's setting where it is not the default) that rebuilds a
    cell."""
    flag = "" if task.setting == DEFAULT_SETTING else f" --setting {task.setting}"
    return f"sinkproof variants{flag}"


def _values_text(task: Task) -> str:
    return "fixed values" if task.has_positions else "fixed values (W_O W_V = I - e_0 e_0^T)"


def _evaluated(task: Task) -> int:
    """The positions a construction check evaluates (see :mod:`sinkproof.variants.verify`)."""
    if task.has_positions:
        return task.n_sequences * (task.max_depth + 1)
    return task.n_prefixes_at_most(10**15) + 1


def table_work(task: Any, maps: tuple[str, ...] | None = None) -> int:
    """Upper bound on the position evaluations of the table over ``maps`` (default all) on
    ``task``: the family's evaluated positions times one hull certificate plus, per map, its
    construction levels and at most two witness files."""
    names = maps or tuple(MAPS)
    return _evaluated(task) * (1 + sum(len(_levels(m)) + 2 for m in names))


def _cmd(task: Task, name: str, q: str, quick: bool) -> str:
    return f"{_command(task)}{' --quick' if quick else ''} --map {name} --question {q}"


def _hull(task: Task) -> tuple[Any, Any]:
    make = family_certificate if task.has_positions else paper_family_certificate
    cert = make(task, CERT_EPS)
    return cert, checker.verify(cert.to_dict())


def _levels(kind: str) -> tuple[int, ...]:
    L = default_level(kind)
    return (L,) if MAPS[kind].properties.exact_zeros else (L, 2 * L)


def _checks(task: Task, kind: str) -> list[ConstructionCheck]:
    """The map's constructions verified at its levels; none where an error floor makes them
    moot or the trusted checker cannot weigh the map (:func:`_no_checks`)."""
    if _no_checks(task, kind):
        return []
    return [verify_construction(construction(task, kind, L)) for L in _levels(kind)]


def _no_checks(task: Any, kind: str) -> str | None:
    """Why a map's constructions are not verified on ``task``, or ``None``."""
    if error_floor(task, kind) is not None:
        return "an error floor settles the map"
    return checker_missing(kind)


def _learned_floor(task: Task, name: str) -> str:
    """The learned-value floor of a task without positions, for maps weighing every key by
    its own score alone."""
    if task.has_positions or not MAPS[name].properties.key_local:
        return ""
    floor = position_free_error_bound(task, "learned")
    if floor == 0:
        return ""
    return (f"; with learned values and any number of heads every one-layer model still has "
            f"error >= {floor} (its trigger-row output is affine in j, the target 1/j)")


def vacuous_cell(floor: Floor, name: str, cmd: str, what: str, extra: str = "") -> Cell:
    """A sink question answered ``yes`` because no head of map ``name`` is accurate."""
    return Cell("yes", "theorem",
                f"vacuously: no fixed-value {name} head has error "
                f"{'<=' if floor.strict else '<'} {floor.bound} on this family, so none is "
                f"accurate and {what}: "
                f"{floor.reason}{extra}", cmd, (floor,))


def floor_exact_cell(floor: Floor, name: str, cmd: str, extra: str = "") -> Cell:
    return Cell("no", "theorem", f"every fixed-value {name} head has error {floor.relation} "
                f"{floor.bound} on this family: {floor.reason}{extra}", cmd, (floor,))


def floor_norm_cell(floor: Floor, name: str, cmd: str) -> Cell:
    return Cell("yes", "theorem", f"for every eps {'<=' if floor.strict else '<'} "
                f"{floor.bound} no fixed-value {name} head of any norm reaches error eps (see "
                "exact_solution_at_finite_norm): the norm needed is infinite", cmd, (floor,))


def _masses(c: ConstructionCheck, which: str) -> tuple[Fraction, Fraction]:
    return (c.bos_hi, c.bos_share_hi) if which == "bos" else (c.null_hi, c.null_share_hi)


def _refutes(checks: list[ConstructionCheck], which: str) -> bool:
    """Error shrinking to 0 along the levels while the mass stays <= AWAY."""
    errs = [c.error_sq_hi for c in checks]
    decreasing = len(errs) > 1 and all(b < a for a, b in zip(errs, errs[1:]))
    shrinking = checks[-1].zero_error or (decreasing and errs[-1] < Fraction(1, 10**6))
    return shrinking and all(m <= AWAY and s <= AWAY for m, s in
                             (_masses(c, which) for c in checks))


def _unit(task: Task) -> str:
    return "positions" if task.has_positions else "prefixes (and BOS)"


def _con_text(task: Task, checks: list[ConstructionCheck], which: str, kind: str) -> str:
    parts = []
    for c in checks:
        err = "0 exactly" if c.zero_error else f"<= {fmt(c.error_hi)}"
        m, s = _masses(c, which)
        parts.append(f"L={c.level}: error {err}, {which} mass <= {fmt(m)}, share <= {fmt(s)}")
    return (f"{kind} construction on all {checks[0].positions} {_unit(task)}: "
            + "; ".join(parts))


def _bos_is_the_null(checks: list[ConstructionCheck]) -> bool:
    """The construction's null mass is its BOS mass (no slot, no other zero-valued key)."""
    return all((c.null_hi, c.null_share_hi) == (c.bos_hi, c.bos_share_hi) for c in checks)


def _witnesses(task: Task, name: str, check: ConstructionCheck,
               seen: dict[Fraction, Any]) -> tuple[tuple[dict[str, Any], ...], tuple[Any, ...]]:
    """The construction at ``check.level`` as witness documents bounding the BOS weight and
    the BOS share by :data:`AWAY` at non-trigger positions, and the checker's verdicts
    (kept in ``seen`` by level: a row's cells verify the same files once)."""
    if check.level not in seen:
        con = construction(task, name, check.level)
        eps = max(Fraction(check.error_hi) * (1 + Fraction(1, 10**9)), Fraction(1, 10**300))
        docs = tuple(con.witness(eps, AWAY, m) for m in ("weight", "share"))
        seen[check.level] = docs, tuple(checker.verify(d) for d in docs)
    return seen[check.level]


def _only_bos_is_zero(task: Task) -> bool:
    values = fixed_values(task)
    return [c for c in range(task.n_tokens) if not any(values[c])] == [task.bos_code]


def _hull_text(task: Task, cert: Any, what: str, also: str) -> str:
    floor = task.fixed_value_floor()
    if floor is not None:  # a bound at every non-trigger position
        return (f"hull-family certificate verified by the checker: {what} >= 1 - eps/d with "
                f"the exact hull distance d of each of {len(cert.situations)} token sets "
                f"(the task states d >= {floor}); at eps = {CERT_EPS} it is >= "
                f"{fmt(cert.min_bound)} at every non-trigger position, >= "
                f"{fmt(cert.min_bound_after_trigger)} after the trigger{also}")
    forced = ", ".join(r[0] for r in cert.table() if r[2].startswith(">="))
    return (f"Theorem 3 hull certificate verified by the checker: {what} >= 1 - eps/d, d "
            f"certified in {len(cert.bounded)} token sets; at eps = {CERT_EPS} it is >= "
            f"{fmt(cert.min_bound)}{also}; forced at the positions whose token set is one of "
            f"{forced} (elsewhere 0 is in the hull: no bound)")


def _sink_cell(task: Task, name: str, q: str, hull: tuple[Any, Any],
               checks: list[ConstructionCheck], quick: bool,
               seen: dict[Fraction, Any] | None = None) -> Cell:
    which = SINK[q]
    props = MAPS[name].properties
    cmd = _cmd(task, name, q, quick)
    seen = {} if seen is None else seen
    if covered(name, which):
        cert, verdict = hull
        if verdict.ok and cert.min_bound is not None and cert.min_bound > 0:
            what = "BOS mass" if props.on_simplex else (
                "null mass (the gate's slot 1 - g and g times BOS merged into BOS)"
                if props.gated else "null mass (virtual slot merged into BOS)")
            also = ""
            if which == "null" and props.on_simplex:
                also = (" (BOS is the only zero-valued key: null mass = BOS mass)"
                        if _only_bos_is_zero(task) else " (BOS is a null: null mass >= BOS "
                        "mass)")
            return Cell("yes", "certificate", _hull_text(task, cert, what, also), cmd,
                        (cert, verdict))
        return Cell("open", "none", f"hull certificate not verified: {verdict}", cmd)
    floor = error_floor(task, name)
    if floor is not None:
        return vacuous_cell(floor, name, cmd, "every accurate head sinks",
                            _learned_floor(task, name))
    if not checks:
        return Cell("open", "none", f"no verified construction: {_no_checks(task, name)}", cmd)
    text = _con_text(task, checks, which, name)
    if not _refutes(checks, which):
        return Cell("open", "none", "no verified construction: " + text, cmd, tuple(checks))
    if which == "bos" or _bos_is_the_null(checks):
        docs, verdicts = _witnesses(task, name, checks[-1], seen)
        if all(v.ok for v in verdicts):
            null = "" if which == "bos" else (
                "; the construction's null mass is its BOS mass (no slot, no other "
                "zero-valued key)")
            return Cell("no", "witness", f"{text}; as witness files (error <= "
                        f"{fmt(checks[-1].error_hi)}, BOS weight and BOS share <= "
                        f"{AWAY} at every non-trigger position) verified by the trusted "
                        f"checker{null}", cmd, (*checks, *docs))
    return Cell("no", "construction", text, cmd, tuple(checks))


def _positive_weights(name: str) -> bool:
    """Every weight (and gate) strictly positive at finite scores."""
    return not MAPS[name].properties.exact_zeros


def _nonzero_content_at_zero_target(task: Task) -> bool:
    """Every content token's fixed value is nonzero and the target at position 1 of
    ``(BOS, c)`` is 0 (decided exactly)."""
    values = fixed_values(task)
    content = [c for c in range(task.n_tokens) if task.token_kind(c) == "content"]
    return bool(content) and all(any(values[c]) and not any(task.exact_prefix_target([c]))
                                 for c in content)


def _exact_cell(task: Task, name: str, checks: list[ConstructionCheck], quick: bool) -> Cell:
    cmd = _cmd(task, name, "exact_solution_at_finite_norm", quick)
    floor = error_floor(task, name)
    if floor is not None:
        return floor_exact_cell(floor, name, cmd, _learned_floor(task, name))
    if checks and checks[-1].zero_error:
        c = checks[-1]
        return Cell("yes", "construction", f"{name} construction at L={c.level}: error 0 "
                    f"exactly on all {c.positions} {_unit(task)} (exact rationals)", cmd, (c,))
    if _positive_weights(name) and _nonzero_content_at_zero_target(task):
        return Cell("no", "theorem",
                    "every weight is in (0, 1] (and a gate in (0, 1)) at finite scores and "
                    "v_BOS = 0: at position 1 of (BOS, c) the output is w_c v_c with w_c > 0 "
                    "and v_c != 0 (checked for every content token), while the target there "
                    "is 0", cmd)
    return Cell("open", "none", "exact weights possible, no exact construction verified", cmd)


def _norm_cell(task: Task, name: str, checks: list[ConstructionCheck], exact: Cell,
               quick: bool) -> Cell:
    cmd = _cmd(task, name, "norm_grows_as_error_shrinks", quick)
    floor = error_floor(task, name)
    if floor is not None:
        return floor_norm_cell(floor, name, cmd)
    priced = name in price_maps(task) and _positive_weights(name)
    cell_ = price_cell(cmd, exact, checks, lambda L: construction(task, name, L).norm,
                       (lambda e: norm_lower_bound(task, name, e)) if priced else None,
                       price_text(task, name) if priced else "")
    return cell_ or Cell("open", "none", "no certified norm lower bound for this map", cmd)


def _known_map(name: str) -> None:
    if name not in MAPS:
        raise ValueError(f"unknown attention map {name!r}; expected one of {', '.join(MAPS)}")


def cell(name: str, question: str, task: Task | None = None, quick: bool = False) -> Cell:
    """One cell of the table (map ``name``, ``question``), running only the checks that
    cell needs; the same :class:`Cell` as ``build_table(task, quick, (name,))`` holds."""
    _known_map(name)
    if question not in QUESTIONS:
        raise ValueError(f"unknown question {question!r}; expected one of {', '.join(QUESTIONS)}")
    task = default_task(quick) if task is None else task
    if question in SINK:
        if covered(name, SINK[question]):
            return _sink_cell(task, name, question, _hull(task), [], quick)
        return _sink_cell(task, name, question, (None, None), _checks(task, name), quick)
    checks = _checks(task, name)
    exact = _exact_cell(task, name, checks, quick)
    if question == "exact_solution_at_finite_norm":
        return exact
    return _norm_cell(task, name, checks, exact, quick)


def build_table(task: Task | None = None, quick: bool = False,
                maps: tuple[str, ...] | None = None, *,
                max_work: int | None = None) -> VariantsTable:
    """Build (and verify) every cell for ``maps`` (default: all of MAPS) on ``task``.
    ``max_work``: the most position evaluations (:func:`table_work`, default
    :data:`~sinkproof.work.VARIANTS_MAX_WORK`, the CLI's), refused before any cell.
    Ctrl-C raises :class:`~sinkproof.errors.Interrupted` with the table of the maps done."""
    task = default_task(quick) if task is None else task
    names = tuple(MAPS) if maps is None else maps
    for n in names:
        _known_map(n)
    refuse_beyond("position evaluations", table_work(task, names), max_work,
                  VARIANTS_MAX_WORK)
    need_hull = any(covered(n, "null") for n in names)
    rows: dict[str, dict[str, Cell]] = {}
    try:
        hull = _hull(task) if need_hull else (None, None)
        for name in names:
            rows[name] = _row(task, name, hull, quick)
    except KeyboardInterrupt:
        raise Interrupted(_table(task, rows),
                          f"{len(rows)} of {len(names)} attention maps finished") from None
    return _table(task, rows)


def _table(task: Task, rows: dict[str, dict[str, Cell]]) -> VariantsTable:
    return VariantsTable(task, rows, _values_text(task), _command(task))


def _row(task: Task, name: str, hull: Any, quick: bool) -> dict[str, Cell]:
    """The four cells of one attention map."""
    checks = _checks(task, name)
    exact = _exact_cell(task, name, checks, quick)
    seen: dict[Fraction, Any] = {}
    return {
        **{q: _sink_cell(task, name, q, hull, checks, quick, seen) for q in SINK},
        "exact_solution_at_finite_norm": exact,
        "norm_grows_as_error_shrinks": _norm_cell(task, name, checks, exact, quick),
    }
