"""The variants table: four sink questions answered for every attention map, each answer
derived from a check that is run when the table is built.

An answer is ``yes``/``no`` only when its evidence verifies; otherwise the cell is
``open`` with the reason.  Evidence by ``how``:

- ``certificate``: Theorem 3's family certificate (:func:`sinkproof.convex.family_certificate`)
  re-verified by the trusted checker.  It covers every head whose weights, with any
  zero-valued null slot merged into BOS, lie on the simplex: the BOS mass of the simplex
  maps, the null mass (slot + BOS) of the virtual-slot maps and of a gated head (effective
  weights ``g α_j`` and a slot ``1 - g``);
- ``construction``: a head of :mod:`sinkproof.variants.constructions` verified on the whole
  family (:func:`sinkproof.variants.verify.verify_construction`, exact or outward intervals);
- ``witness``: such a construction written as two witness files (error ``<= ε`` on the
  family, BOS weight and BOS share ``<= 3/4`` at every non-trigger position) that the
  trusted checker verifies;
- ``theorem``: a stated theorem whose hypothesis is checked on the map's properties, with
  its constants instantiated (:mod:`sinkproof.variants.normprice`; an error floor of
  :mod:`sinkproof.variants.floors`, under which the sink questions hold vacuously).

Cells read the maps' declared properties, never their names: a map added to
:data:`sinkproof.attention.MAPS` gets its row from what it declares.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .. import checker
from ..attention import MAPS
from ..convex import family_certificate
from ..errors import Interrupted
from ..search.verify import witness_document
from ..task import TriggerTask
from . import papertable
from .cells import AWAY, CERT_EPS, PRICE_EPS, SINK, Cell, VariantsTable, covered, fmt, price_cell
from .constructions import construction, default_level
from .floors import Floor, error_floor
from .normprice import NORM_PRICE_MAPS, norm_lower_bound, norm_price_formula
from .questions import QUESTIONS
from .verify import ConstructionCheck, checker_missing, verify_construction

__all__ = ["AWAY", "CERT_EPS", "PRICE_EPS", "QUESTIONS", "Cell", "VariantsTable", "build_table",
           "cell", "default_task", "price_cell", "reads_positions", "table_work"]


def default_task(quick: bool = False) -> TriggerTask:
    """The instance the table is built on: ``p = 2, T = 3`` (``--quick``: ``p = 1, T = 2``),
    signed content, inverse positions, one trigger."""
    return TriggerTask(p=1, T=2) if quick else TriggerTask(p=2, T=3)


def reads_positions(task: Any) -> bool:
    """Whether ``task``'s cells rest on the evidence for tasks with positional features (the
    ``hull-family`` and ``witness`` certificates over their family); a task without them, of
    one length with one trigger, is read by the ``paper-hull-family`` and ``paper-witness``
    kinds (:mod:`sinkproof.variants.papertable`).  The choice is the checker's readers', by
    capability: it goes when one certificate rule reads every task's family."""
    return bool(task.has_positions)


def table_work(task: Any, maps: tuple[str, ...] | None = None) -> int:
    """Upper bound on the position evaluations of the table over ``maps`` (default all) on
    ``task``: the family's positions (every sequence at every position, BOS included)
    times one hull certificate plus, per map, its construction levels and at most two
    witness files (tasks without positions: at most two levels per map)."""
    names = maps or tuple(MAPS)
    if not reads_positions(task):
        return papertable.table_work(task, names)
    positions = task.n_sequences * (task.T + 1)
    return positions * (1 + sum(len(_levels(m)) + 2 for m in names))

def _cmd(name: str, q: str, quick: bool) -> str:
    return f"sinkproof variants{' --quick' if quick else ''} --map {name} --question {q}"


def _hull(task: TriggerTask) -> tuple[Any, Any]:
    cert = family_certificate(task, CERT_EPS)
    return cert, checker.verify(cert.to_dict())


def _levels(kind: str) -> tuple[int, ...]:
    L = default_level(kind)
    return (L,) if MAPS[kind].properties.exact_zeros else (L, 2 * L)


def _checks(task: TriggerTask, kind: str) -> list[ConstructionCheck]:
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


def _refutes(checks: list[ConstructionCheck], which: str) -> bool:
    """Error shrinking to 0 along the levels while the mass stays <= AWAY."""
    errs = [c.error_sq_hi for c in checks]
    decreasing = len(errs) > 1 and all(b < a for a, b in zip(errs, errs[1:]))
    shrinking = checks[-1].zero_error or (decreasing and errs[-1] < Fraction(1, 10**6))
    mass = [(c.bos_hi, c.bos_share_hi) if which == "bos" else (c.null_hi, c.null_share_hi)
            for c in checks]
    return shrinking and all(m <= AWAY and s <= AWAY for m, s in mass)


def _con_text(checks: list[ConstructionCheck], which: str, kind: str) -> str:
    parts = []
    for c in checks:
        err = "0 exactly" if c.zero_error else f"<= {fmt(c.error_hi)}"
        m, s = (c.bos_hi, c.bos_share_hi) if which == "bos" else (c.null_hi, c.null_share_hi)
        parts.append(f"L={c.level}: error {err}, {which} mass <= {fmt(m)}, share <= {fmt(s)}")
    return f"{kind} construction on all {checks[0].positions} positions: " + "; ".join(parts)


def _witnesses(task: TriggerTask, name: str, check: ConstructionCheck
               ) -> tuple[tuple[dict[str, Any], ...], tuple[Any, ...]]:
    """The construction at ``check.level`` as witness documents bounding the BOS weight and
    the BOS share by :data:`AWAY` at non-trigger positions, and the checker's verdicts."""
    model = construction(task, name, check.level).model()
    eps = max(Fraction(check.error_hi) * (1 + Fraction(1, 10**9)), Fraction(1, 10**300))
    docs = tuple(witness_document(model, eps, AWAY, "nontrigger", measure=m)
                 for m in ("weight", "share"))
    return docs, tuple(checker.verify(d) for d in docs)


def _sink_cell(name: str, q: str, which: str, hull: tuple[Any, Any],
               checks: list[ConstructionCheck], quick: bool, task: TriggerTask) -> Cell:
    props = MAPS[name].properties
    cmd = _cmd(name, q, quick)
    if covered(name, which):
        cert, verdict = hull
        if verdict.ok and cert.min_bound is not None and cert.min_bound > 0:
            what = "BOS mass" if props.on_simplex else (
                "null mass (the gate's slot 1 - g and g times BOS merged into BOS)"
                if props.gated else "null mass (virtual slot merged into BOS)")
            also = " (BOS is a null: null mass >= BOS mass)" if which == "null" and \
                props.on_simplex else ""
            return Cell("yes", "certificate",
                        f"Theorem 3 hull certificate verified by the checker: {what} >= "
                        f"1 - eps/d, d certified in {len(cert.bounded)} token sets; at eps = "
                        f"{CERT_EPS} it is >= {fmt(cert.min_bound)}{also}; forced at the "
                        f"positions whose token set is one of "
                        f"{', '.join(r[0] for r in cert.table() if r[2].startswith('>='))} "
                        f"(elsewhere 0 is in the hull: no bound)", cmd,
                        (cert, verdict))
        return Cell("open", "none", f"hull certificate not verified: {verdict}", cmd)
    floor = error_floor(task, name)
    if floor is not None:
        return vacuous_cell(floor, name, cmd, "every accurate head sinks")
    if not checks:
        return Cell("open", "none", f"no verified construction: {_no_checks(task, name)}", cmd)
    if _refutes(checks, which):
        text = _con_text(checks, which, name)
        if which == "bos":
            docs, verdicts = _witnesses(task, name, checks[-1])
            if all(v.ok for v in verdicts):
                return Cell("no", "witness", f"{text}; as witness files (error <= "
                            f"{fmt(checks[-1].error_hi)}, BOS weight and BOS share <= "
                            f"{AWAY} at every non-trigger position) verified by the trusted "
                            "checker", cmd, (*checks, *docs))
        return Cell("no", "construction", text, cmd, tuple(checks))
    return Cell("open", "none", "no verified construction: " + _con_text(checks, which, name),
                cmd, tuple(checks))


def _positive_weights(name: str) -> bool:
    """Every weight (and gate) strictly positive at finite scores."""
    return not MAPS[name].properties.exact_zeros


def _exact_cell(name: str, checks: list[ConstructionCheck], quick: bool,
                task: TriggerTask) -> Cell:
    cmd = _cmd(name, "exact_solution_at_finite_norm", quick)
    floor = error_floor(task, name)
    if floor is not None:
        return floor_exact_cell(floor, name, cmd)
    if checks and checks[-1].zero_error:
        c = checks[-1]
        return Cell("yes", "construction", f"{name} construction at L={c.level}: error 0 "
                    f"exactly on all {c.positions} positions (exact rationals)", cmd, (c,))
    if _positive_weights(name):
        return Cell("no", "theorem",
                    "every weight is in (0, 1] (and a gate in (0, 1)) at finite scores: "
                    "zero error at position 0 forces v_BOS = 0, then at (BOS, c) position 1 "
                    "the output w_c v_c = 0 forces v_c = 0 for every c, and the trigger "
                    "outputs of (BOS, c, TRIG) and (BOS, c', TRIG) coincide (same query and "
                    "trigger key, zero-valued keys) though their targets c != c' differ; with "
                    "fixed values already w_c c != 0 at (BOS, c) position 1", cmd)
    return Cell("open", "none", "exact weights possible, no exact construction verified", cmd)


def _norm_cell(name: str, task: TriggerTask, checks: list[ConstructionCheck],
               exact: Cell, quick: bool) -> Cell:
    cmd = _cmd(name, "norm_grows_as_error_shrinks", quick)
    floor = error_floor(task, name)
    if floor is not None:
        return floor_norm_cell(floor, name, cmd)
    priced = name in NORM_PRICE_MAPS and _positive_weights(name)
    cell_ = price_cell(cmd, exact, checks, lambda L: construction(task, name, L).norm,
                       (lambda e: norm_lower_bound(task, name, e)) if priced else None,
                       f"two sequences share logits: {norm_price_formula(name)}, "
                       "l(x) = log((1-x)/x), growing like log(1/eps)" if priced else "")
    return cell_ or Cell("open", "none", "no certified norm lower bound for this map", cmd)


def _known_map(name: str) -> None:
    if name not in MAPS:
        raise ValueError(f"unknown attention map {name!r}; expected one of {', '.join(MAPS)}")


def cell(name: str, question: str, task: TriggerTask | None = None,
         quick: bool = False) -> Cell:
    """One cell of the table (map ``name``, ``question``), running only the checks that
    cell needs; the same :class:`Cell` as ``build_table(task, quick, (name,))`` holds."""
    _known_map(name)
    if question not in QUESTIONS:
        raise ValueError(f"unknown question {question!r}; expected one of {', '.join(QUESTIONS)}")
    task = default_task(quick) if task is None else task
    if not reads_positions(task):
        return papertable.paper_cell(name, question, task, quick)
    if question in SINK:
        which = SINK[question]
        if covered(name, which):
            return _sink_cell(name, question, which, _hull(task), [], quick, task)
        return _sink_cell(name, question, which, (None, None), _checks(task, name), quick,
                          task)
    checks = _checks(task, name)
    exact = _exact_cell(name, checks, quick, task)
    if question == "exact_solution_at_finite_norm":
        return exact
    return _norm_cell(name, task, checks, exact, quick)


def build_table(task: TriggerTask | None = None, quick: bool = False,
                maps: tuple[str, ...] | None = None) -> VariantsTable:
    """Build (and verify) every cell for ``maps`` (default: all of MAPS) on ``task``.
    Ctrl-C raises :class:`~sinkproof.errors.Interrupted` with the table of the maps done."""
    task = default_task(quick) if task is None else task
    if not reads_positions(task):
        return papertable.build_paper_table(task, quick, maps)
    names = tuple(MAPS) if maps is None else maps
    for n in names:
        _known_map(n)
    need_hull = any(MAPS[n].properties.on_simplex or MAPS[n].properties.null_slot
                    for n in names)
    rows: dict[str, dict[str, Cell]] = {}
    try:
        hull = _hull(task) if need_hull else (None, None)
        for name in names:
            rows[name] = _row(task, name, hull, quick)
    except KeyboardInterrupt:
        raise Interrupted(VariantsTable(task, rows),
                          f"{len(rows)} of {len(names)} attention maps finished") from None
    return VariantsTable(task, rows)


def _row(task: TriggerTask, name: str, hull: Any, quick: bool) -> dict[str, Cell]:
    """The four cells of one attention map."""
    checks = _checks(task, name)
    exact = _exact_cell(name, checks, quick, task)
    return {
        **{q: _sink_cell(name, q, which, hull, checks, quick, task)
           for q, which in SINK.items()},
        "exact_solution_at_finite_norm": exact,
        "norm_grows_as_error_shrinks": _norm_cell(name, task, checks, exact, quick),
    }
