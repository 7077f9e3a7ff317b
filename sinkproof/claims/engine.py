"""The proof-engine route of ``check``: branch and bound over learned values, and several heads.

For a claim about softmax heads (learned or ``U_fix`` values, token-only, the task's
positional scheme, a given number of heads) with the error hypothesis on all of ``S_T``
and a numeric conclusion, :func:`certify_by_engine` runs :func:`sinkproof.bnb.prove` on
the claimed positions at the claim's ε and b, within its node budget (per target tree:
deterministic, so the same proof on any machine; no wall-clock limit — the work is bounded
before it starts, and Ctrl-C keeps what was certified), and saves
the certificate it verified (``bnb-learned-values`` for one head, ``bnb-heads`` — a sink
in every head — for several).  On a finite task without positional features the engine
reads the family through its token-pair relaxation (one layer of one softmax head,
learned ``W_Q, W_K, W_V, W_O``; fixed values are a subset), every non-trigger position of
the family a target (``paper-bnb-learned-values``).  The trusted checker verifies the
saved file itself (its exact bytes, once: ``prove(..., save=path)``); the caller decides
the claim from that verified statement alone
(:func:`sinkproof.claims.certified.implied_by_verdict`; a file saved without a verdict,
as the reduced family's, it verifies first): the engine's own numbers are never read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..bnb import BnbResult, HeadsResult, nontrigger_targets, prove
from ..checker import Verdict
from ..errors import Interrupted, check_work
from ..exact_numbers import show
from ..modelclass import ModelClass
from ..reduced import pattern_targets, prove_position, prove_subfamily, prove_uniform
from ..task import TRIG
from .byclass import reads_by_class
from .schema import Claim

MAX_NODES = 200
"""Nodes per target tree the route grows (the engine's ``max_nodes``)."""


@dataclass(frozen=True)
class EngineRun:
    """What the engine did: the saved certificate (``None`` when it proved nothing), the
    run's summary (targets, nodes, seconds) for the outcome's detail, and the trusted
    checker's verdict on the saved file when the engine verified that file itself
    (``None``: the caller verifies it)."""

    path: Path | None
    result: BnbResult | HeadsResult | None
    note: str
    verdict: Verdict | None = None


def engine_class(claim: Claim) -> ModelClass:
    """The widest class the engine runs on for the claim's task: softmax, the claim's number
    of heads (one if it names none), learned values (``U_fix`` is a subset), token values."""
    return ModelClass(kind="softmax", heads=claim.model_class.heads or 1, values="learned",
                      positions=claim.task.positions, value_features="token")


def engine_targets(claim: Claim) -> tuple[list[tuple[int, ...]], str | None]:
    """The claimed prefixes (each once, in order) the engine bounds, or ``([], why not)``."""
    con = claim.conclusion
    if con.theorem is not None:
        return [], "the conclusion names a theorem, not a numeric bound"
    if not claim.task.has_positions:
        return _stack_targets(claim)
    if claim.model_class.heads is None:
        return [], "it needs a given number of heads"
    if not claim.model_class.is_subclass_of(engine_class(claim)):
        return [], (f"it covers {engine_class(claim)} (or U_fix values), not "
                    f"{claim.model_class}")
    if claim.hypothesis.family != "S_T":
        return [], "it needs the error hypothesis on all of S_T"
    prefixes: list[tuple[int, ...]] = []
    for seq, t in con.at.pair_list(claim.task):
        prefix = tuple(seq[:t])
        if prefix[-1] == TRIG:
            if con.positions == "every":
                return [], "it bounds non-trigger positions only"
            continue
        if prefix not in prefixes:
            prefixes.append(prefix)
    if not prefixes:
        return [], "no claimed non-trigger position"
    return prefixes, None


def _stack_targets(claim: Claim) -> tuple[list[tuple[int, ...]], str | None]:
    """Every non-trigger prefix of a finite family without positions (token codes), when
    the class is one layer of one softmax head."""
    mc = claim.model_class
    if (mc.kind, mc.heads, mc.layers) != ("softmax", 1, 1):
        return [], f"it covers one layer of one softmax head, not {mc}"
    if not claim.task.finite:
        return [], "continuous content has no finite family"
    check_work("prefixes to enumerate (the family, for the engine's programs)",
               claim.task.n_prefixes_at_most(claim.options.max_work), claim.options.max_work)
    return nontrigger_targets(claim.task), None


def certify_by_engine(claim: Claim, path: Path, progress: bool | None = None) -> EngineRun:
    """Run the engine on ``claim`` for at most :data:`MAX_NODES` nodes per target (a
    deterministic budget: no clock decides the verdict); save its certificate at
    ``path`` when it proved the claimed bound.  Ctrl-C raises
    :class:`~sinkproof.errors.Interrupted` whose ``partial`` is the engine's result so far
    and whose ``progress`` is :func:`best_so_far` (the check then answers Open,
    interrupted, with it)."""
    if not claim.task.has_positions and (claim.conclusion.at.name == "prefix"
                                         or not claim.task.finite
                                         or reads_by_class(claim)):
        return _by_reduced(claim, path, progress)
    targets, why_not = engine_targets(claim)
    if why_not is not None:
        return EngineRun(None, None, f"not applicable: {why_not}")
    # the token-pair relaxation of a task without positions runs learned values (a superset)
    fixed = claim.model_class.values == "fixed" and claim.task.has_positions
    values = "fixed" if fixed else "learned"
    heads = claim.model_class.heads
    result = prove(claim.task, eps=claim.hypothesis.eps_exact, targets=targets,
                   min_bos_mass=claim.conclusion.b_exact, values=values,
                   max_nodes=MAX_NODES, time_limit=math.inf, budget=None,
                   progress=progress, some=claim.conclusion.positions == "some", heads=heads,
                   certify_misses=False, save=path)
    if result.interrupted:
        raise Interrupted(result, best_so_far(result, len(targets)))
    if isinstance(result, HeadsResult):
        note = (f"{heads} heads, {len(targets)} targets, {result.solves} dual solves in "
                f"{result.rounds} round(s), {result.seconds:.2f} s, {values} values, bounds "
                f"in every head, no norm bound assumed")
        if result.status != "proved" or result.certificate is None:
            why = result.note or "no proof"
            return EngineRun(None, result, f"{why} ({note})")
    else:
        note = (f"{len(result.targets)} of {len(targets)} target trees, {result.nodes} nodes, "
                f"{result.seconds:.2f} s, {values} values, no norm bound assumed")
    if result.status != "proved" or result.certificate is None:
        spent = "".join(f"; {why}" for why in getattr(result, "skipped", ()))
        return EngineRun(None, result, f"no proof within {MAX_NODES} nodes per target "
                         f"({note}{spent})")
    return EngineRun(path, result, note, result.verdict)  # the file the checker verified


def _by_reduced(claim: Claim, path: Path, progress: bool | None) -> EngineRun:
    """The engine over a reduced family (:mod:`sinkproof.reduced`) for one softmax head in
    the paper's setting: one position named by its prefix (finite content: that prefix's
    bound from every (query, multiset) class; continuous content: its trigger pattern's,
    for every content vector of the box), every non-trigger position of a finite family
    (one target per non-trigger (query, multiset) class:
    :func:`~sinkproof.claims.byclass.reads_by_class`), or every non-trigger position over
    the box (``positions = "some"``: position 1).  The same node budget per tree as the
    engine route, no clock; a ``paper-subfamily-bnb`` certificate saved when it proves
    ``b``."""
    mc, task, con = claim.model_class, claim.task, claim.conclusion
    if (mc.kind, mc.heads, mc.layers) != ("softmax", 1, 1):
        return EngineRun(None, None, f"not applicable: the reduced-family engine covers one "
                                     f"layer of one softmax head, not {mc}")
    eps, b = claim.hypothesis.eps_exact, con.b_exact
    path.parent.mkdir(parents=True, exist_ok=True)
    options = dict(min_bos_mass=b, max_nodes=MAX_NODES, time_limit=math.inf, budget=None,
                   progress=progress, save=path)  # a complete certificate, verified once
    if con.at.name == "prefix":
        result = prove_position(task, eps, con.at.rows, con.at.trigger, **options)
        what = f"the prefix's {'class' if task.finite else 'trigger pattern'}"
    elif task.finite:  # every non-trigger class of the family, each a target
        result = prove_subfamily(task, eps, **options)
        what = f"{len(result.targets)} non-trigger (query, multiset) classes"
    else:
        some = con.positions == "some"
        result = prove_uniform(task.n, task.L, eps, **options,
                               targets=pattern_targets(task.L, [1]) if some else None)
        what = "position 1" if some else f"{len(result.targets)} trigger patterns"
    domain = ("the finite content set" if result.domain == "finite"
              else f"every content vector of [-1, 1]^{task.content_dim}")
    note = (f"reduced family: {len(result.subfamily)} prefixes, {what}, content {domain}, "
            f"{sum(o.tree.nodes for o in result.outcomes)} nodes, {result.seconds:.2f} s, "
            "learned values, no norm bound assumed")
    if result.status != "complete" or result.certificate is None:
        return EngineRun(None, None, f"no proof of {show(b)} within {MAX_NODES} nodes per "
                                     f"target ({note})")
    return EngineRun(path, None, note, result.verdict)


def best_so_far(result: BnbResult | HeadsResult, wanted: int) -> str:
    """What the engine had certified when Ctrl-C stopped it, in one line: the targets whose
    bound is exact (every leaf of its tree checked in rationals; with several heads, a
    bound in every head), the least and the largest of those bounds, and how many of the
    ``wanted`` targets have none.  Nothing here is a proof of the claim."""
    done = [(t.target, t.certified) for t in result.targets if t.certified is not None]
    where = "in every head " if isinstance(result, HeadsResult) else ""
    if not done:
        return (f"engine interrupted: no bound certified yet (0 of {wanted} targets, "
                f"{result.seconds:.1f} s)")
    bounds = [b for _, b in done]
    listed = ", ".join(f"{tuple(t)} >= {float(b):.6g}" for t, b in done[:4])
    more = f", {len(done) - 4} more" if len(done) > 4 else ""
    return (f"engine interrupted: BOS mass {where}certified exactly at {len(done)} of "
            f"{wanted} targets ({listed}{more}); least {float(min(bounds)):.6g}, largest "
            f"{float(max(bounds)):.6g}; {wanted - len(done)} targets without a bound")
