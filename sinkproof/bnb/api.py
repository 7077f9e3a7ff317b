"""``prove``: run the engine on a claim (file, dict) or on a task with explicit targets."""

from __future__ import annotations

import math
import time
import tomllib
import uuid
import warnings
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from .._validate import as_int
from ..errors import Interrupted
from ..exact_numbers import bos_mass, error_level
from ..executor import shared_processes
from ..task import TriggerTask
from ..tasks.protocol import Task, require
from ..work import BNB_MAX_WORK, product, refuse_beyond
from .box import ValueBox
from .dual import certificate_format, leaf_certificate
from .multihead import HeadsResult, prove_heads
from .primal import BACKENDS, PrimalSolver
from .relaxation import build_relaxation, family_prefixes, retarget, value_tokens
from .result import BnbResult, TargetOutcome, certificate_dict, round_down, verified
from .symmetry import Symmetry, mapped, symmetries_of
from .targets import is_trigger_token, nontrigger_targets, target_prefixes
from .transfer import transferred
from .tree import MAX_DEPTH, Node, branch_and_bound, choose_split, solve_child

TASK_KEYS = ("p", "T", "content", "positions", "triggers", "k", "seed")
_clock = time.perf_counter
"""The clock that budgets read (one name, so a test can drive it)."""
OUT_OF_BUDGET = "the budget was spent before its exact certification"
TREE_WORKER_IMPORTS = ("sinkproof.bnb.api", "clarabel")
"""What a tree's worker process imports when it starts: the engine and its solver, not
the searches' JAX (a two-worker pool started in about 3 s with it)."""


def _from_claim(data: dict[str, Any]) -> dict[str, Any]:
    """The engine's arguments from a claim's data (the claim-file layout)."""
    for section in ("task", "model", "hypothesis", "conclusion"):
        if not isinstance(data.get(section), dict):
            raise ValueError(f"claim: missing section [{section}]")
    model, hyp, concl = data["model"], data["hypothesis"], data["conclusion"]
    heads = model.get("heads", 1)
    if model.get("kind", "softmax") != "softmax" or isinstance(heads, bool) or \
            not isinstance(heads, int) or heads < 1:
        raise ValueError("the engine handles softmax heads (model.kind = \"softmax\", "
                         "model.heads an integer >= 1)")
    if hyp.get("family", "S_T") != "S_T":
        raise ValueError("the engine reads hypotheses on the family S_T only")
    at = concl.get("at", "nontrigger")
    if not isinstance(at, str):
        raise ValueError("the engine takes a named position set in conclusion.at")
    task = TriggerTask(**{k: v for k, v in data["task"].items() if k in TASK_KEYS})
    return dict(task=task, eps=hyp.get("max_error"), at=at,
                min_bos_mass=concl.get("min_bos_mass"), values=model.get("values", "learned"),
                some=concl.get("positions", "every") == "some", heads=heads)


EXTRA_DEPTH = 2
"""Most levels a leaf without a certificate is split further during certification."""


def certify_tree(relax: Any, outcome: TargetOutcome, values: str,
                 instance: Any = None, deadline: float | None = None,
                 backend: str = "clarabel", reuse: bool = True,
                 empties: dict[ValueBox, tuple[dict[str, Any], Fraction]] | None = None,
                 own: dict[int, tuple[dict[str, Any], Fraction]] | None = None,
                 leaves_only: bool = False) -> None:
    """Certify every leaf of ``outcome.tree``; set ``outcome.certified`` when all pass
    (each leaf checked exactly by :func:`~sinkproof.bnb.dual.leaf_certificate` with the
    ``backend``'s programs, first from the leaf's own multipliers when ``reuse``;
    ``instance`` is unused).  Past ``deadline`` (a :data:`_clock`
    reading) no further leaf is certified: the tree stays uncertified, ``skipped`` says
    why.  ``empties``: box -> a checked certificate that no model has values in it
    (``c0 < 0``), shared by the trees of one proof (:class:`Shared`): a leaf whose box is
    there takes it; a leaf certified empty adds its own.  ``own``: leaf id -> the
    certificate a worker process already checked for that leaf on its own (taken
    instead of solving it again, so a tree grown in a worker is certified exactly as the
    serial loop certifies it).  ``leaves_only``: certify the leaves as they are, each from
    its own solve only: no solve added, no split added or undone (a worker's pass, which
    the parent repeats in target order: a leaf that an earlier target's empty box would
    certify in the serial loop may fail in a worker that never saw that target; splitting
    it there made the tree depend on which worker took which target, and the fallback
    solves there cost a CVXPY import and solves the parent does not need)."""
    solver: PrimalSolver | None = None

    def fresh() -> PrimalSolver:
        """The solver of the solves certification adds (made on first need)."""
        nonlocal solver
        if solver is None:
            solver = PrimalSolver(relax, bos_zero=values == "fixed", backend=backend)
        return solver

    def one(leaf: Any) -> tuple[dict[str, Any], Fraction] | None:
        got = None if empties is None else empties.get(leaf.box)
        if got is None:
            got = own.get(id(leaf)) if own else None
            if got is None and leaves_only:
                got = _from_solution(relax, leaf.box, leaf.solution, leaf.bound, values,
                                     backend, reuse)
            elif got is None:
                got = _leaf(relax, leaf, values, backend, reuse, fresh)
            if got is not None and got[1] < 0 and empties is not None:
                empties[leaf.box] = got
        if got is not None:
            outcome.leaves[id(leaf)] = got
        return got

    def deepen(leaf: Any, extra: int) -> bool:
        """Split a leaf that has no certificate once more and certify its children (at
        most ``extra`` levels): a near-infeasible box that no program certifies as a whole
        can split into boxes that are each certified.  Their solves count as nodes."""
        split = choose_split(leaf.box, leaf.solution, relax.key, relax.tokens, relax.a)
        if split is None or leaf.depth >= MAX_DEPTH + EXTRA_DEPTH:
            return False
        kids = []
        for box in leaf.box.split(*split):
            got = solve_child(fresh(), box, leaf.solution)
            kids.append(Node(box, min(got.bound, leaf.bound), leaf.depth + 1, got))
        outcome.tree.nodes += len(kids)
        leaf.split, leaf.children = split, (kids[0], kids[1])
        if all([certify(kid, extra - 1) for kid in kids]):
            return True
        for gone in leaf.leaves():
            outcome.leaves.pop(id(gone), None)
        leaf.split = leaf.children = None
        return False

    def certify(node: Any, extra: int = EXTRA_DEPTH) -> bool:
        """Certify the leaves below ``node``; a leaf that fails is split further
        (:func:`deepen`); where that fails too, undo the split above it: ``node``'s own
        box, certified as one leaf from its own solve (its box holds its children's, so
        the tree stays a cover of the root, with a weaker bound there); with
        ``leaves_only`` (``extra`` 0) neither."""
        if deadline is not None and _clock() >= deadline:
            outcome.skipped = "the budget ran out during its exact certification"
            return False
        if node.children is None:
            if math.isinf(node.bound) and node.bound > 0:
                return False
            return one(node) is not None or (extra > 0 and deepen(node, extra))
        if all([certify(kid, extra) for kid in node.children]):
            return True
        if outcome.skipped or leaves_only or node.solution is None or (
                math.isinf(node.bound) and node.bound > 0):
            return False
        below = node.leaves()
        node_split, node_children = node.split, node.children
        node.split = node.children = None
        if one(node) is None:
            node.split, node.children = node_split, node_children
            return False
        for leaf in below:
            outcome.leaves.pop(id(leaf), None)
        return True

    if certify(outcome.tree.root, 0 if leaves_only else EXTRA_DEPTH):
        outcome.certified = min([Fraction(1), *(1 / (1 + c0) for _, c0 in
                                                  outcome.leaves.values() if c0 >= 0)])


def _leaf(relax: Any, leaf: Any, values: str, backend: str, reuse: bool,
          fresh: Callable[[], PrimalSolver] | None = None
          ) -> tuple[dict[str, Any], Fraction] | None:
    """One leaf's checked certificate (:func:`~sinkproof.bnb.dual.leaf_certificate`): of
    emptiness first where its relaxation was infeasible, else of its bound; where the
    direct programs find none, from a solve of the whole program by ``fresh()`` (a direct
    solver; default: a new one), then through CVXPY (``None``: the caller splits the leaf
    further or undoes the split above it)."""
    got = _from_solution(relax, leaf.box, leaf.solution, leaf.bound, values, backend, reuse)
    if got is None and backend == "clarabel":
        # the tree's solve may have been a near-infeasible box's inaccurate one (seen:
        # "infeasible" warm-started, 0.107 fresh, infeasible through CVXPY)
        solver = fresh() if fresh is not None else PrimalSolver(
            relax, bos_zero=values == "fixed")
        again = solver.solve(leaf.box, whole=True)
        if again.bound < math.inf:
            got = _from_solution(relax, leaf.box, again, again.bound, values, backend, reuse)
        if got is None:  # last: CVXPY's three stages over every prefix (seen to succeed)
            got = leaf_certificate(relax, leaf.box, False, values, solution=leaf.solution,
                                   backend="cvxpy")
    return got


def _from_solution(relax: Any, box: ValueBox, solution: Any, bound: float, values: str,
                   backend: str, reuse: bool) -> tuple[dict[str, Any], Fraction] | None:
    """A checked certificate of ``box`` from one solve of it: of emptiness where ``bound``
    says infeasible (and, failing that, of a bound), else of its bound."""
    empty = bound == -math.inf
    got = leaf_certificate(relax, box, empty, values, -1.0 if empty else bound,
                           solution=solution, backend=backend, reuse=reuse)
    if got is None and empty:
        got = leaf_certificate(relax, box, False, values, solution=solution,
                               backend=backend, reuse=reuse)
    return got


class Shared:
    """What the target trees of one proof share (``prove(..., share=True)``): their
    relaxations differ only in the target's class counts ``a``, so

    - a target whose relaxation equals an earlier one's (the same classes, counts,
      multiplicities, targets and ``eps``: the same program) takes that tree and its
      certified leaves: the same program gives the same tree;
    - a box certified empty (``c0 < 0`` and every ``h_l <= 0``: no accurate model has
      values in it, whatever the target) is not certified again: its certificate serves
      every later leaf with that box over the same prefixes (the trees stay what they
      were: a box is still solved in each tree, so trees do not depend on their order);
    - with ``root`` (``prove(..., symmetry=True)``), a target that a symmetry of the task
      maps an earlier grown target to (:mod:`sinkproof.bnb.symmetry`: content tokens
      permuted with a signed permutation of the coordinates, checked exactly on the
      program) takes that target's certified tree, mapped: the same bounds.

    Per process: worker processes keep their own (trees are deduplicated before they are
    sent)."""

    def __init__(self, root: ValueBox | None = None) -> None:
        self.trees: dict[bytes, TargetOutcome] = {}
        self._empties: dict[tuple, dict[ValueBox, tuple[dict[str, Any], Fraction]]] = {}
        self.grown: dict[tuple[int, ...], TargetOutcome] = {}
        """Target -> its grown (not shared, not mapped) outcome."""
        self._root = root
        self._symmetries: dict[tuple, list[Symmetry]] = {}

    def symmetries(self, relax: Any) -> list[Symmetry]:
        """The task's symmetries that hold on ``relax``'s prefixes and the root box
        (none without ``root``)."""
        if self._root is None:
            return []
        got = self._symmetries.get(relax.prefixes)
        if got is None:
            got = self._symmetries[relax.prefixes] = symmetries_of(relax, self._root)
        return got

    def source(self, relax: Any, target: tuple[int, ...], grown: Any
               ) -> tuple[tuple[int, ...], Symmetry] | None:
        """The first symmetry ``g`` (in :func:`~sinkproof.bnb.symmetry.candidates`'
        order) whose preimage of ``target`` is among the targets ``grown``, with that
        preimage."""
        for g in self.symmetries(relax):
            src = g.inverse().prefix(target)
            if src != target and src in grown:
                return src, g
        return None

    @staticmethod
    def key(relax: Any) -> bytes:
        """The relaxation's program as bytes (what decides its tree)."""
        import hashlib
        import pickle

        data = (relax.classes, str(relax.eps), relax.prefixes, relax.coordinates,
                relax.value_tokens, relax.M.tobytes(), relax.Y.tobytes(),
                relax.a.tobytes(), relax.key.tobytes())
        return hashlib.sha256(pickle.dumps(data)).digest()

    def empties(self, relax: Any) -> dict[ValueBox, tuple[dict[str, Any], Fraction]]:
        """The boxes certified empty for programs with ``relax``'s constraints."""
        sig = (relax.classes, str(relax.eps), relax.prefixes, relax.coordinates,
               relax.M.tobytes(), relax.Y.tobytes())
        return self._empties.setdefault(sig, {})


def prove(claim_or_task: Any, *, eps: Any = None, at: str | None = None,
          targets: Iterable[Sequence[int]] | None = None, min_bos_mass: Any = None,
          values: str = "learned", max_nodes: int = 200, time_limit: float = 120.0,
          progress: bool | None = None, parametrised: bool = True,
          some: bool | None = None, budget: float | None = None,
          heads: int | None = None, rounds: int = 2,
          certify_misses: bool = True,
          max_work: int | None = None, backend: str = "clarabel",
          workers: int = 1, reuse: bool = True,
          save: str | Path | None = None, share: bool = True,
          symmetry: bool = True) -> BnbResult | HeadsResult:
    """Bound the least BOS mass of every accurate softmax model at each target.

    ``claim_or_task``: a claim file's path, its data (``task``/``model``/``hypothesis``/
    ``conclusion`` tables), or a task with ``eps`` and ``at`` (a named set: homogeneous,
    nontrigger, before_trigger, after_trigger, trigger, all; a task without positional
    features takes ``nontrigger``) or ``targets`` (prefixes: user tokens, TRIG = -1, for
    a task with positions; token codes otherwise).  With ``min_bos_mass`` the trees stop
    once every leaf proves it; the result is ``"proved"`` only with a certificate that
    the trusted checker verified.  ``max_nodes`` and ``time_limit`` bound each target's
    tree; Ctrl-C stops and returns what was certified so far.  A target whose classes
    another target uses ``λ > 1`` times as often also gets that target's tree, scaled
    by ``1/λ``, when it certifies more (:mod:`sinkproof.bnb.transfer`; tasks with
    positions).  ``some=True`` asks for the bound at *some* target (the first that meets
    ``min_bos_mass``; a claim's ``positions = "some"`` sets it); ``budget`` caps the
    seconds of all trees together; ``certify_misses=False`` leaves a tree that missed
    ``min_bos_mass`` uncertified (the claim route: it could not prove the claim).

    A task without positional features (the paper's setting: one softmax head, learned
    ``W_Q, W_K, W_V, W_O``) is read through the token-pair relaxation
    (:mod:`sinkproof.bnb.relaxation`); its certificate kind is
    ``paper-bnb-learned-values``.

    ``heads`` (default: the claim's ``model.heads``, else 1): with ``H >= 2`` heads whose
    outputs add, the bound holds in *every* head and comes from
    :func:`sinkproof.bnb.multihead.prove_heads` (``rounds`` lemma rounds; a
    :class:`~sinkproof.bnb.multihead.HeadsResult`, kind ``bnb-heads``); with learned
    values it proves nothing there (the other heads' outputs are unconstrained).
    ``max_work``: the most tree nodes x family positions before it refuses to start
    (default :data:`~sinkproof.work.BNB_MAX_WORK`).  ``backend``: ``"clarabel"`` (the
    programs written straight into Clarabel's standard form, :mod:`sinkproof.bnb.conic`)
    or ``"cvxpy"`` (the same programs through CVXPY: the baseline of
    ``benchmarks/bench_bnb.py``).  ``workers > 1`` grows the target trees in that many
    worker processes (:mod:`sinkproof.executor`); the result is the same.  ``reuse``
    (direct programs): a leaf is first certified from the multipliers its own solve
    returned, a dual program solved only where they fail the exact check (``False``:
    one solved for every leaf, the engine before; the same trees either way).
    ``share`` (direct programs): the target trees share what they found
    (:class:`Shared`: a target whose program equals an earlier one's takes its tree, a
    box certified empty is not certified again; the same trees either way); ``False``:
    every tree on its own (the engine before).  ``symmetry`` (with ``share``): a target
    that a symmetry of the task maps an earlier grown target to takes that target's
    tree, mapped exactly (:mod:`sinkproof.bnb.symmetry`); ``False``: it grows its own.
    ``save``: where to write the certificate; the trusted checker then verifies the
    written file (its exact bytes, once) instead of the document in memory, and the file
    is kept only when it verifies (:func:`~sinkproof.convex.certfile.save_verified`; the
    claim route's way to verify what it saves once, not twice).
    """
    quantifier = some
    some = False
    n_heads = 1
    if isinstance(claim_or_task, (str, Path)):
        path = Path(claim_or_task)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ValueError(f"cannot read claim {str(path)!r}: {exc}") from None
        claim_or_task = data
    if isinstance(claim_or_task, dict):
        args = _from_claim(claim_or_task)
        task, some = args["task"], args["some"]
        eps = args["eps"] if eps is None else eps
        at = args["at"] if at is None and targets is None else at
        min_bos_mass = args["min_bos_mass"] if min_bos_mass is None else min_bos_mass
        values = args["values"]
        n_heads = args["heads"]
    elif isinstance(claim_or_task, Task):
        task = claim_or_task
    else:
        raise TypeError("prove takes a claim (path or dict) or a task, got "
                        f"{type(claim_or_task).__name__}")
    if not task.has_positions:
        require(task, "finite", "the branch-and-bound engine")
        require(task, "residual_targets", "the one-head branch-and-bound engine", value=False)
        if values != "learned":
            raise ValueError("a task without positional features is bounded with learned "
                             "values (values='learned')")
    if quantifier is not None:
        some = bool(quantifier)
    if heads is not None:
        if isinstance(heads, bool) or not isinstance(heads, int) or heads < 1:
            raise ValueError(f"heads must be an integer >= 1, got {heads!r}")
        n_heads = heads
    if budget is not None and not budget > 0:
        raise ValueError(f"budget must be > 0 seconds, got {budget!r}")
    if values not in ("learned", "fixed"):
        raise ValueError(f"values must be 'learned' or 'fixed', got {values!r}")
    if eps is None:
        raise ValueError("eps is required (the error bound of the hypothesis)")
    eps_q = error_level(eps, "eps", positive=True)
    goal_q = None if min_bos_mass is None else bos_mass(min_bos_mass, "min_bos_mass",
                                                         positive=True)
    refuse_beyond("tree nodes x family positions of the branch and bound",
                  product(as_int("max_nodes", max_nodes, minimum=1),
                          task.n_sequences, task.max_depth + 1),
                  max_work, BNB_MAX_WORK)
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    workers = as_int("workers", workers, minimum=1)
    inst, kind, head = certificate_format(task, eps_q, values)
    start = time.perf_counter()
    rows = family_prefixes(task)  # the family once: the programs' rows and the targets
    if targets is not None:
        wanted = [tuple(int(x) for x in t) for t in targets]
        family = None if task.has_positions else set(rows)
        for t in wanted:
            _check_target(task, family, t)
    else:
        wanted = (target_prefixes(task, at or "nontrigger") if task.has_positions
                  else nontrigger_targets(task, rows))
    if not wanted:
        raise ValueError("no target positions")
    if n_heads > 1:
        require(task, "has_positions", "several heads (bnb-heads)")
        limit = time_limit if budget is None else min(time_limit, budget)
        return prove_heads(task, eps_q, n_heads, wanted, values=values, min_bos_mass=goal_q,
                           some=some, rounds=rounds, time_limit=limit,
                           parametrised=parametrised, save=save)
    root = (ValueBox.root(task, values) if task.has_positions
            else ValueBox.free(list(value_tokens(task)), task.out_dim))
    try:
        outcomes = grow_trees(wanted, RelaxationOf(task, eps_q, rows),
                              root, values, goal_q, some, max_nodes, time_limit, budget,
                              progress, parametrised, certify_misses=certify_misses,
                              backend=backend, workers=workers, reuse=reuse,
                              share=share, symmetry=symmetry)
    except Interrupted as exc:  # Ctrl-C outside a tree's own handler: what was certified
        return finish(task, eps_q, values, goal_q, exc.partial, len(wanted),  # type: ignore
                      some, time.perf_counter() - start, inst, kind, head, stopped=True)
    if task.has_positions and not any(o.tree.status == "interrupted" for o in outcomes):
        classes: dict[tuple[int, ...], dict] = {}  # each target's classes read once
        outcomes = [transferred(task, o, outcomes, classes) for o in outcomes]
    return finish(task, eps_q, values, goal_q, outcomes, len(wanted), some,
                  time.perf_counter() - start, inst, kind, head, save=save)


def _check_target(task: Any, family: set[tuple[int, ...]] | None,
                  target: tuple[int, ...]) -> None:
    """``target`` is a prefix of the family and not at the trigger (token-pair tasks: one
    of the family's prefixes ``family``, before any work)."""
    if task.has_positions:
        task.encode(target)
        return
    if family is not None and target not in family:
        raise ValueError(f"target {list(target)} is not a prefix of the family (token codes "
                         f"of a sequence of length <= {task.max_depth})")
    if is_trigger_token(task, target[-1]):
        raise ValueError(f"target {list(target)} ends at the trigger; the engine bounds "
                         "non-trigger positions")


def prove_paper(task: Any, eps: Any, *, min_bos_mass: Any = None,
                targets: list[tuple[int, ...]] | None = None, some: bool = False,
                max_nodes: int = 200, time_limit: float = 120.0,
                budget: float | None = None, progress: bool | None = None,
                certify_misses: bool = True, backend: str = "clarabel",
                workers: int = 1, max_work: int | None = None) -> BnbResult:
    """:func:`prove` on a task without positional features (the paper's setting), every
    non-trigger position by default: the name the docs and claim route use (``max_work``:
    as in :func:`prove`, refused before any tree grows)."""
    require(task, "has_positions", "prove_paper (the token-pair relaxation)", value=False)
    return prove(task, eps=eps, min_bos_mass=min_bos_mass, targets=targets, some=some,  # type: ignore[return-value]
                 max_nodes=max_nodes, time_limit=time_limit, budget=budget,
                 progress=progress, certify_misses=certify_misses, backend=backend,
                 workers=workers, max_work=max_work)


def grow_trees(wanted: list[tuple[int, ...]], relaxation: Callable[[tuple[int, ...]], Any],
               root: ValueBox, values: str, goal_q: Fraction | None, some: bool,
               max_nodes: int, time_limit: float, budget: float | None,
               progress: bool | None, parametrised: bool = True,
               instance: Any = None, certify_misses: bool = True,
               backend: str = "clarabel", workers: int = 1,
               reuse: bool = True, share: bool = True,
               symmetry: bool = False) -> list[TargetOutcome]:
    """One certified tree per target of ``wanted`` (in order), ``relaxation(target)`` its
    program and ``root`` its box; stops at the first target that meets ``goal_q`` when
    ``some``, at the first that misses it otherwise, at Ctrl-C, or when ``budget``
    seconds are spent (the trees and their exact certification together: a tree the
    budget leaves uncertified proves nothing and says so in ``skipped``).  ``instance``
    is unused; ``reuse``, ``share``, ``symmetry``: as in :func:`prove`; ``workers > 1``:
    the trees grow in that many processes (``relaxation`` must then be picklable, as
    :class:`RelaxationOf` is); ``certify_misses=False`` skips certifying a tree that did
    not reach ``goal_q`` (its certified bound would be below
    it: only its figure is lost, never a decision).
    A Ctrl-C inside a tree ends that tree (status ``"interrupted"``); one outside it (a
    root solve, a tree's certification) raises :class:`~sinkproof.errors.Interrupted`
    whose ``partial`` is the outcomes so far (a tree whose certification it stopped has
    ``certified`` None: it is set only once every leaf is)."""
    outcomes: list[TargetOutcome] = []
    try:
        return _grow(wanted, relaxation, root, values, goal_q, some, max_nodes, time_limit,
                     budget, progress, parametrised, backend, certify_misses, outcomes,
                     workers, reuse, share, root if symmetry else None)
    except KeyboardInterrupt:
        raise Interrupted(outcomes, f"{len(outcomes)} of {len(wanted)} target trees "
                          "grown") from None


def _grow(wanted: list[tuple[int, ...]], relaxation: Callable[[tuple[int, ...]], Any],
          root: ValueBox, values: str, goal_q: Fraction | None, some: bool, max_nodes: int,
          time_limit: float, budget: float | None, progress: bool | None,
          parametrised: bool, backend: str, certify_misses: bool,
          outcomes: list[TargetOutcome], workers: int = 1,
          reuse: bool = True, share: bool = True,
          symmetric_root: ValueBox | None = None) -> list[TargetOutcome]:
    deadline = None if budget is None else _clock() + budget
    settings = (root, values, goal_q, max_nodes, parametrised, backend, certify_misses,
                reuse)
    shared = Shared(symmetric_root) if share and backend == "clarabel" else None
    if workers > 1 and len(wanted) > 1:
        return _grow_parallel(wanted, relaxation, settings, some, time_limit, deadline,
                              workers, outcomes, shared)
    for target in wanted:
        limit = time_limit
        if deadline is not None:
            limit = min(limit, deadline - _clock())
            if limit <= 0:
                break
        outcome = one_tree(relaxation, target, settings, limit, progress, deadline,
                           outcomes.append, shared)
        if _stops(outcome, goal_q, some):
            break
    return outcomes


def _stops(outcome: TargetOutcome, goal_q: Fraction | None, some: bool) -> bool:
    """Whether the targets after ``outcome`` are left alone (Ctrl-C, the budget, the
    first good one with ``some``, the first miss without)."""
    done = outcome.certified is not None and (goal_q is None or outcome.certified >= goal_q)
    return outcome.tree.status == "interrupted" or bool(outcome.skipped) or \
        (some and done) or (not some and goal_q is not None and not done)


def one_tree(relaxation: Callable[[tuple[int, ...]], Any], target: tuple[int, ...],
             settings: tuple, limit: float, progress: bool | None,
             deadline: float | None, grown: Callable[[TargetOutcome], Any] | None = None,
             shared: Shared | None = None, leaves_only: bool = False) -> TargetOutcome:
    """One target's tree, grown within ``limit`` seconds and certified (unless it missed
    the goal and misses are not certified, or ``deadline`` passed); ``grown`` sees the
    outcome as soon as its tree exists (so a Ctrl-C during certification keeps it);
    ``shared``: what the proof's earlier trees found (:class:`Shared`); ``leaves_only``:
    :func:`certify_tree`'s."""
    root, values, goal_q, max_nodes, parametrised, backend, certify_misses, reuse = settings
    goal = None if goal_q is None else float(1 / goal_q - 1)
    relax = relaxation(target)
    key = None if shared is None else Shared.key(relax)
    same = None if shared is None else shared.trees.get(key)
    found = None if shared is None or same is not None else \
        shared.source(relax, target, shared.grown)
    if same is not None or found is not None:
        outcome = mapped(shared.grown[found[0]], found[1], target) if found else \
            TargetOutcome(target, same.tree, same.leaves, same.certified, same.skipped)
        if grown is not None:
            grown(outcome)
        return outcome
    empties = None if shared is None else shared.empties(relax)
    solver = PrimalSolver(relax, parametrised=parametrised, bos_zero=values == "fixed",
                          backend=backend)
    with warnings.catch_warnings():  # the float solves only search; the checker decides
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        tree = branch_and_bound(solver, root, goal, max_nodes, limit, progress)
        outcome = TargetOutcome(target, tree)
        if grown is not None:
            grown(outcome)
        if _certifies(tree, goal_q, certify_misses):
            if deadline is not None and _clock() >= deadline:
                outcome.skipped = OUT_OF_BUDGET
            else:
                certify_tree(relax, outcome, values, None, deadline, backend, reuse, empties,
                             leaves_only=leaves_only)
    if shared is not None and tree.status != "interrupted" and not outcome.skipped:
        shared.trees[key] = shared.grown[target] = outcome
    return outcome


def _certifies(tree: Any, goal_q: Fraction | None, certify_misses: bool) -> bool:
    """Whether a grown ``tree`` is certified: not interrupted, and it met the goal
    unless misses are certified too."""
    missed = goal_q is not None and tree.status != "proved"
    return tree.status != "interrupted" and (certify_misses or not missed)


class RelaxationOf:
    """``relaxation(target)`` of :func:`grow_trees` for ``task`` at ``eps`` over the
    constraint prefixes ``rows``, picklable (worker processes build their own)."""

    def __init__(self, task: Any, eps: Fraction, rows: list[tuple[int, ...]]) -> None:
        self.task, self.eps, self.rows = task, eps, rows
        self._base: Any = None

    def __call__(self, target: tuple[int, ...]) -> Any:
        """The relaxation at ``target``: the prefixes' part assembled once, every target
        after the first only re-counting its own classes (:func:`retarget`)."""
        got = None if self._base is None else retarget(self._base, target)
        if got is None:
            got = build_relaxation(self.task, self.eps, target, self.rows)
            if self._base is None:
                self._base = got
        return got

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_base": None}  # a worker assembles its own


_PROOF_IN_WORKER: dict[str, tuple[Callable, Shared | None]] = {}
"""In a worker process, the proof it last served: ``proof id -> (relaxation, Shared)``."""


def _tree_job(job: tuple) -> tuple[Any, list, Fraction | None, str | None]:
    """A worker's tree: ``(tree, leaf entries in leaf order, certified, skipped)`` (leaf
    entries travel by position: the parent's nodes are new objects).

    The jobs of one proof (its ``proof`` id) that reach the same worker share its
    relaxation's prefix part and its :class:`Shared` empty boxes, as the serial loop's
    trees do: without them every job assembled the prefixes again and certified every
    empty box again, about twice the serial work.  A worker takes its jobs in target
    order, so a box it finds certified came from an earlier target, whose certificate
    of that box the parent's :func:`_recertify` takes too; and with ``share`` a worker
    certifies its tree's leaves as they are (``leaves_only``), leaving every split that
    certification adds or undoes to the parent's pass in target order: the certificate
    is the serial loop's either way."""
    relaxation, target, settings, limit, share, proof = job
    kept = _PROOF_IN_WORKER.get(proof)
    if kept is None:
        _PROOF_IN_WORKER.clear()  # one proof at a time: its successor replaces it
        kept = _PROOF_IN_WORKER[proof] = (relaxation, Shared() if share else None)
    relaxation, shared = kept
    outcome = one_tree(relaxation, target, settings, limit, False, None, shared=shared,
                       leaves_only=shared is not None)
    leaves = [outcome.leaves.get(id(leaf)) for leaf in outcome.tree.root.leaves()]
    return outcome.tree, leaves, outcome.certified, outcome.skipped


def _grow_parallel(wanted: list[tuple[int, ...]], relaxation: Callable, settings: tuple,
                   some: bool, time_limit: float, deadline: float | None, workers: int,
                   outcomes: list[TargetOutcome], shared: Shared | None = None
                   ) -> list[TargetOutcome]:
    """:func:`_grow` with the targets' trees grown in ``workers`` processes (a kept pool,
    :func:`sinkproof.executor.shared_processes`, importing :data:`TREE_WORKER_IMPORTS`),
    read back in target order with the same stopping rule; the jobs not yet read are
    stopped.  A tree the ``deadline`` passes before it is read is left out, as the
    serial loop would not have started it.  With ``shared``, a target whose relaxation
    equals an earlier grown one's, or that a symmetry maps an earlier grown one to, is
    not sent: it takes that target's tree (:class:`Shared`; the serial loop's rule,
    decided before any tree grows)."""
    limit = time_limit if deadline is None else min(time_limit, deadline - _clock())
    plan = _plan(wanted, relaxation, shared)
    sent = [i for i, (rep, _) in enumerate(plan) if rep == i]
    proof = uuid.uuid4().hex
    jobs = [(relaxation, wanted[i], settings, limit, shared is not None, proof)
            for i in sent]
    results = shared_processes(workers, TREE_WORKER_IMPORTS).map(_tree_job, jobs)
    done: dict[int, TargetOutcome] = {}
    try:
        for i, target in enumerate(wanted):
            rep, g = plan[i]
            if rep == i:
                job = next(results)
                if not job.ok:
                    raise job.exception or RuntimeError(f"a tree's worker failed: {job.error}")
                tree, leaves, certified, skipped = job.value
                outcome = TargetOutcome(target, tree, certified=certified, skipped=skipped)
                outcome.leaves = {id(leaf): got for leaf, got in zip(tree.root.leaves(),
                                                                     leaves) if got is not None}
                if shared is not None and not skipped and \
                        _certifies(tree, settings[2], settings[6]):
                    _recertify(relaxation(target), outcome, settings, deadline, shared)
                done[i] = outcome
            elif g is not None:
                outcome = mapped(done[rep], g, target)
            else:
                same = done[rep]
                outcome = TargetOutcome(target, same.tree, same.leaves, same.certified,
                                        same.skipped)
            outcomes.append(outcome)
            if _stops(outcome, settings[2], some) or \
                    (deadline is not None and _clock() >= deadline):
                break
    finally:
        results.close()
    return outcomes


def _plan(wanted: list[tuple[int, ...]], relaxation: Callable, shared: Shared | None
          ) -> list[tuple[int, Symmetry | None]]:
    """Per target, ``(i, None)`` where it grows its own tree, ``(j, None)`` where it
    takes grown target ``j``'s (the same program), ``(j, g)`` where it takes ``j``'s
    mapped by the symmetry ``g``: :func:`one_tree`'s rule with :class:`Shared`."""
    plan: list[tuple[int, Symmetry | None]] = []
    by_key: dict[bytes, int] = {}
    by_target: dict[tuple[int, ...], int] = {}
    for i, target in enumerate(wanted):
        if shared is None:
            plan.append((i, None))
            continue
        relax = relaxation(target)
        key = Shared.key(relax)
        found = None if key in by_key else shared.source(relax, target, by_target)
        if key in by_key:
            plan.append((by_key[key], None))
        elif found is not None:
            plan.append((by_target[found[0]], found[1]))
        else:
            plan.append((i, None))
            by_key[key], by_target[target] = i, i
    return plan


def _recertify(relax: Any, outcome: TargetOutcome, settings: tuple,
               deadline: float | None, shared: Shared) -> None:
    """Certify a worker's tree again in the parent, in target order, with the proof's
    shared empty boxes (:class:`Shared`), the worker's own leaf certificates taken where
    no earlier tree's serves: the certificate the serial loop writes."""
    own, outcome.leaves, outcome.certified = outcome.leaves, {}, None
    values, backend, reuse = settings[1], settings[5], settings[7]
    certify_tree(relax, outcome, values, None, deadline, backend, reuse,
                 shared.empties(relax), own)


def restrict(result: BnbResult, outcomes: list[TargetOutcome]) -> BnbResult:
    """``result`` cut down to ``outcomes`` (certified targets of it): a ``"bounded"`` result
    whose certificate holds their trees only, verified by the trusted checker."""
    if not outcomes or any(o.certified is None for o in outcomes):
        raise ValueError("restrict needs certified target outcomes")
    inst, kind, head = certificate_format(result.task, result.eps, result.values)
    return finish(result.task, result.eps, result.values, None, outcomes, len(outcomes),
                  False, result.seconds, inst, kind, head)


restrict_paper = restrict
"""The name the paper-setting sink map used (:func:`restrict` on any task)."""


def finish(task: Any, eps: Fraction, values: str, goal: Fraction | None,
           outcomes: list[TargetOutcome], n_wanted: int, some: bool, seconds: float,
           inst: dict[str, Any], kind: str, head: str, stopped: bool = False,
           save: str | Path | None = None) -> BnbResult:
    """The result of grown trees: a ``kind`` certificate over the chosen targets (the first
    good one when ``some``, else all, each good), kept only when the trusted checker
    verifies it (with ``save``: the file written there, :func:`verified`); ``head`` opens
    the certificate's statement.  Stopped by Ctrl-C (``stopped``, or a tree interrupted):
    at once, ``"open"``, no certificate."""
    if stopped or any(o.tree.status == "interrupted" for o in outcomes):
        return BnbResult(task, eps, values, goal, outcomes, "open", None, seconds,
                         stopped=stopped)
    good = [o for o in outcomes if o.certified is not None
            and (goal is None or o.certified >= goal)]
    chosen = good[:1] if some else good
    complete = bool(chosen) if some else len(good) == n_wanted
    status, cert, verdict = "open", None, None
    if complete and chosen:
        stated = goal if goal is not None else min(round_down(o.certified) for o in chosen)
        where = "some" if some else "every"
        statement = f"{head}: BOS mass >= {stated} at {where} target listed"
        cert = certificate_dict(inst, chosen, stated, statement, kind=kind)
        verdict = verified(cert, save)
        if verdict.ok:
            status = "proved" if goal is not None else "bounded"
        else:
            cert = None
    return BnbResult(task, eps, values, goal, outcomes, status, cert, seconds,
                     verdict=verdict)
