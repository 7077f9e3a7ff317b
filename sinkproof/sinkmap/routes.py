"""Sink maps of the maps that logit sharing does not reach: the hull bound and sink-free witnesses.

- :func:`hull_sink_map` (sparsemax, entmax-1.5, gated softmax): at a non-trigger position
  ``t`` of any sequence, the output of an eps-accurate head is ``(1 - m) z`` with ``m`` the
  mass on the null (BOS; for a gate also its slot ``1 - g``, which like BOS carries value
  0) and ``z`` in the hull of the values of ``x_1..x_t``, so ``m >= 1 - eps/d_t`` with
  ``d_t`` the distance from 0 to that hull (``1 - 2 eps/d_t`` when BOS carries a value
  of norm ``<= eps``, which position 0 forces on a simplex map).  The hull depends only on
  the set of tokens seen, so one ``hull-family`` certificate (a separating direction per
  token set, or an exact convex combination equal to 0 where there is no bound) backs
  every position.
- :func:`witness_sink_map` (sigmoid, ReLU, ReLU/length): "no bound" at every position,
  backed by one sink-free head (:mod:`.witness`) as a ``witness`` file.
"""

from __future__ import annotations

from fractions import Fraction

from .. import checker
from ..certformat import format_rational
from ..convex import family_certificate
from ..convex.values import ValueTable
from ..errors import CertificateError
from ..task import TriggerTask
from .kinds import sink_measure
from .result import Entry, SinkMap
from .witness import sink_free_head, unavailable

__all__ = ["hull_sink_map", "witness_sink_map"]


def _result(task: TriggerTask, eps: Fraction, table: ValueTable, kind: str,
            entries: dict[tuple[int, ...], Entry], cert: dict, route: str) -> SinkMap:
    return SinkMap(task=task, eps=eps, U=table.U, entries=entries, certificate=cert,
                   subfamily=route, radius=0, family="S_T", kind=kind)


def hull_sink_map(task: TriggerTask, eps: Fraction, kind: str, table: ValueTable,
                  targets: list[tuple[int, ...]]) -> SinkMap:
    """Theorem 3's bound on the map's sink measure at every target prefix (codes)."""
    measure = sink_measure(kind)
    fam = family_certificate(task, eps, table.U)
    cert = fam.to_dict()
    if not checker.verify(cert).ok:  # pragma: no cover - the producer rounds safely
        raise ArithmeticError("the hull family certificate failed its own exact check")
    cert["claim"]["statement"] += (f"; for the {kind} map the bound is on its "
                                   f"{measure.description}")
    by_set = {s.tokens: s for s in fam.situations}
    entries: dict[tuple[int, ...], Entry] = {}
    for user in map(task.decode, targets):
        sit = by_set[tuple(sorted(set(user)))]
        if sit.bound is not None and sit.bound > 0:
            entries[user] = Entry("certified", float(sit.bound), sit.bound, float(sit.bound),
                                  "", 1, "hull")
        elif sit.bound is not None:
            entries[user] = Entry("no bound", 0.0, None, 0.0,
                                  f"Theorem 3's bound 1 - {table.factor}eps/d is vacuous here "
                                  f"(d = {float(sit.d):.4g} <= {table.factor}eps)", 1, "hull")
        elif sit.zero_combination is not None:
            entries[user] = Entry("no bound", 0.0, None, 0.0,
                                  f"{sit.reason} (exact, verified): the hull argument gives no "
                                  f"bound here", 0, "hull")
        else:
            entries[user] = Entry("uncertified", 0.0, None, 0.0, sit.reason, 0, "hull")
    return _result(task, eps, table, kind, entries, cert, "hull")


def witness_sink_map(task: TriggerTask, eps: Fraction, kind: str, table: ValueTable,
                     targets: list[tuple[int, ...]]) -> SinkMap:
    """"No bound" at every target, shown by a sink-free head verified by the trusted checker
    (``uncertified`` where no such head is built or it fails the check)."""
    measure = sink_measure(kind)
    users = [task.decode(t) for t in targets]
    if not table.fixed:
        raise ValueError(f"the {kind} sink map's witness head has fixed values: pass "
                         f"values='fixed'")
    why = unavailable(task, kind)
    cert: dict = {}
    if why is None:
        head = sink_free_head(task, kind, eps)
        cert = head.document(eps)
        try:
            verdict = checker.verify(cert)
        except CertificateError as exc:  # beyond the checker's limits: nothing verified
            verdict = checker.Verdict(ok=False, kind="witness", claim="", failure=str(exc))
        if verdict.ok:
            lvl = format_rational(head.level)
            reason = (f"a sink-free {kind} head (error <= {format_rational(eps)} on S_T, "
                      f"{measure.name} {'= 0' if head.level == 0 else '<= ' + lvl} at every "
                      f"non-trigger position) is verified by the checker")
            entries = {u: Entry("no bound", 0.0, None, 0.0, reason, 0, "witness")
                       for u in users}
            return _result(task, eps, table, kind, entries, cert, "witness")
        why = f"the witness head failed the check: {verdict.failure}"
        cert = {}
    entries = {u: Entry("uncertified", 0.0, None, 0.0,
                        f"the map is off the simplex (no bound from any argument here) but no "
                        f"sink-free witness: {why}", 0, "witness") for u in users}
    return _result(task, eps, table, kind, entries, cert, "witness")
