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
- :func:`token_set_sink_map`: a task without positional features (the paper's: one
  trigger at ``j ∈ 2..L-1``, whole-vector targets, a finite content set), keyed by
  token codes (content ``i``; ``m + i`` the trigger carrying ``c_i``).  Fixed values
  (``v_x`` is ``x`` without its BOS coordinate): the bound of a position is its token
  set's entry in the ``paper-hull-family`` certificate (exact hull distances), which
  the trusted checker re-verifies.  Learned values (softmax): each position's bound is
  the branch-and-bound engine's (:func:`sinkproof.bnb.prove`, token-pair classes), the
  certified positions backed by one ``paper-bnb-learned-values`` certificate, the others
  "uncertified"; one tree per position: small instances only.
"""

from __future__ import annotations

from fractions import Fraction
from math import sqrt
from typing import Any

from .. import checker
from ..attention import MAPS
from ..bnb import nontrigger_targets, prove, restrict
from ..certformat import format_rational
from ..checker import verify
from ..convex import family_certificate
from ..convex.family import require_token_sets
from ..convex.values import ValueTable
from ..errors import CertificateError, InputError, WorkLimitError
from ..exact_numbers import error_level
from ..task import TriggerTask
from .kinds import sink_measure
from .learned import MAX_NODES, MAX_TARGETS
from .result import Entry, SinkMap, TokenSetSinkMap
from .witness import sink_free_head, unavailable

__all__ = ["hull_sink_map", "situation_of", "token_set_sink_map", "witness_sink_map"]

Situation = tuple[tuple[int, ...], int | None]


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


def situation_of(task: Any, prefix: tuple[int, ...]) -> Situation:
    """The token set ``S_t`` of a prefix (token codes): ``(sorted content indices, the
    trigger's content index or None)``, the key of a ``paper-hull-family`` entry."""
    m = task.m
    content = tuple(sorted({c for c in prefix if c < m}))
    trigger = next((c - m for c in prefix if c >= m), None)
    return content, trigger


def _entries_fixed(task: Any, eps: Fraction) -> tuple[dict[tuple[int, ...], Entry],
                                                           dict[str, Any]]:
    """Every target's bound, read off the verified ``paper-hull-family`` certificate."""
    cert = family_certificate(task, eps)
    data = cert.to_dict()
    verdict = verify(data)
    if not verdict.ok:  # pragma: no cover - the producer and the checker disagree
        raise RuntimeError(f"the paper-hull-family certificate failed its check: "
                           f"{verdict.failure}")
    by_key = {s.key: s for s in cert.situations}
    entries: dict[tuple[int, ...], Entry] = {}
    for prefix in nontrigger_targets(task):
        s = by_key[situation_of(task, prefix)]
        points = len(s.key[0]) + (s.key[1] is not None)
        exact_d = sqrt(float(s.d_sq)) if s.d_sq is not None else float(s.d)
        if s.bound > 0:
            entries[prefix] = Entry("certified", float(s.bound), s.bound,
                                    1 - float(eps) / exact_d, "", points, "hull")
        else:
            entries[prefix] = Entry("no bound", 0.0, None, 1 - float(eps) / exact_d,
                                    f"vacuous: eps >= d(S_t) = {float(s.d):.6g}", points,
                                    "hull")
    return entries, data


def _entries_learned(task: Any, eps: Fraction, max_targets: int, max_nodes: int,
                     time_limit: float, progress: bool | None
                     ) -> tuple[dict[tuple[int, ...], Entry], dict[str, Any], Any]:
    """Every target's engine bound; the certified ones backed by one certificate."""
    targets = nontrigger_targets(task)
    if len(targets) > max_targets:
        raise WorkLimitError(f"not started: values='learned' grows a branch-and-bound tree "
                             f"per position: {len(targets)} positions exceed "
                             f"max_targets={max_targets} (a smaller --L or --grid)")
    result = prove(task, eps=eps, targets=targets, max_nodes=max_nodes,
                         time_limit=time_limit, progress=progress)
    certified = [o for o in result.targets if o.certified is not None]
    backed = restrict(result, certified) if certified else None
    cert = backed.certificate if backed is not None and backed.certificate else {}
    entries: dict[tuple[int, ...], Entry] = {}
    for o in result.targets:
        if o.certified is not None and cert:
            entries[o.target] = Entry("certified", float(o.certified), o.certified,
                                      o.tree.bos_bound, "", len(o.leaves), "bnb")
        else:
            why = o.skipped or (f"tree stopped ({o.tree.status}) at {o.tree.nodes} nodes "
                                "without a certified bound")
            entries[o.target] = Entry("uncertified", 0.0, None, o.tree.bos_bound, why, 0,
                                      "bnb")
    return entries, cert, result


def token_set_sink_map(task: Any, eps: Any, values: str = "fixed", kind: str = "softmax",
                       *, max_targets: int = MAX_TARGETS, max_nodes: int = MAX_NODES,
                       time_limit: float = 60.0, progress: bool | None = None
                       ) -> TokenSetSinkMap:
    """Per non-trigger position of ``task`` (no positional features, one-layer targets, a
    finite family: the paper's setting): the certified least BOS weight of every
    one-head model of map ``kind`` with error ``<= eps`` there (``values="fixed"``: any
    map on the simplex, from the hull distances; ``values="learned"``: softmax, from the
    engine, at most ``max_targets`` positions)."""
    require_token_sets(task, "a sink map")
    eps_q = error_level(eps, "eps", positive=True)
    if values not in ("fixed", "learned"):
        raise InputError(f"values: the paper setting's sink map takes 'fixed' or 'learned', "
                         f"got {values!r}")
    if kind not in MAPS:
        raise InputError(f"kind: unknown attention map {kind!r}")
    if values == "learned" and kind != "softmax":
        raise InputError(f"kind {kind!r}: learned values are bounded for softmax only")
    if not MAPS[kind].properties.on_simplex:
        raise InputError(f"kind {kind!r}: the paper setting's hull bound holds for maps whose "
                         "weights lie on the simplex (softmax, sparsemax, entmax15)")
    result = None
    if values == "fixed":
        entries, cert = _entries_fixed(task, eps_q)
        how = "hull"
    else:
        entries, cert, result = _entries_learned(task, eps_q, max_targets, max_nodes,
                                                 time_limit, progress)
        how = "bnb"
    return TokenSetSinkMap(task=task, eps=eps_q, U=None, entries=entries, certificate=cert,
                        subfamily=how, radius=0, family="paper", kind=kind, values=values,
                        result=result)
