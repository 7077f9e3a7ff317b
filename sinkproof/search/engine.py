"""``sinkproof.search``: seeded restarts in parallel, then the trusted check of the best candidate.

Restarts are independent (:mod:`sinkproof.search.restart`); their results are
consumed in index order, and the answer is the lowest-index restart whose model is
feasible in float64 *and* passes the high-precision check on the whole family.
So the same seed gives the same answer with any number of processes, on any
:class:`~sinkproof.executor.Executor`.  The budget is deterministic: ``restarts`` ×
``maxiter`` L-BFGS-B steps.  Wall time (``budget`` seconds) is only a safety stop; a search
it cut short says so (``stopped_by == "wall_time"``, *Open for time*), since that answer
depends on the machine's speed and load.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._validate import as_int, as_real, choice
from ..attention import MAPS
from ..attention import bos_measure as bos_measure  # the BOS measure of claims (numpy-only)
from ..autodiff import stack_forward, x64
from ..errors import CertificateError, SinkproofError
from ..exact_numbers import bos_mass, error_level
from ..executor import Executor, SerialExecutor, cancelled, shared_processes
from ..executor import available_cores as available_cores
from ..model import KINDS, AttentionModel
from ..progress import Progress
from ..task import TriggerTask
from ..tasks.protocol import Task, require
from ..work import SEARCH_MAX_WORK, product, refuse_beyond
from .objective import PrefixBatch, bos_measure_kind, prefix_batch, witness_measure
from .restart import RestartOutcome, SearchSettings, pareto, run_restart
from .result import SearchResult, TracePoint
from .verify import verify_witness

VALUES = ("learned", "fixed")



class SearchBudgetError(SinkproofError):
    """The time budget ran out before any restart finished (nothing to report)."""


_BATCH: list[tuple[Any, PrefixBatch]] = []
"""The last batch this process built, with its ``(task, where)`` (a worker runs many
restarts of one search in a row)."""


def _batch(task: TriggerTask, where: Any) -> PrefixBatch:
    key = (task, where)
    last = _BATCH[0] if _BATCH else None  # one read: threads of one worker may share it
    if last is not None and last[0] == key:
        return last[1]
    batch = prefix_batch(task, where=where)
    _BATCH[:] = [(key, batch)]
    return batch


def restart_job(job: tuple[SearchSettings, int]) -> RestartOutcome | None:
    """Restart ``index`` of ``settings``, wherever an executor runs it; ``None`` past the
    deadline or once the search that submitted it stopped (:func:`executor.cancelled`)."""
    settings, index = job
    if cancelled() or (settings.deadline is not None and time.time() > settings.deadline):
        return None
    return run_restart(settings, _batch(settings.task, settings.where), index, stop=cancelled)


def restart_executor(processes: int) -> Executor:
    """Where ``processes`` runs restarts: this process for 1 (JAX may use every core it
    may run on), else a kept pool of that many one-thread workers
    (:func:`sinkproof.executor.shared_processes`: later searches skip the workers'
    start-up and compilation)."""
    return SerialExecutor() if processes == 1 else shared_processes(processes)


def _outcomes(settings: SearchSettings, restarts: int, processes: int,
              executor: Executor | None = None) -> Iterator[RestartOutcome | None]:
    """Restart outcomes in index order, computed on ``executor`` (default:
    :func:`restart_executor` of ``processes``).  Closing the iterator stops the
    restarts still running; a restart that raised raises here."""
    ex = restart_executor(processes) if executor is None else executor
    with closing(ex.map(restart_job, [(settings, i) for i in range(restarts)])) as results:
        for result in results:
            if not result.ok:
                if result.exception is None:
                    raise RuntimeError(f"a search restart failed: {result.error}")
                if result.exception.__traceback__ is None and result.details:
                    result.exception.add_note(f"in the worker:\n{result.details}")
                raise result.exception
            yield result.value


def _where_text(where: Any) -> str:
    if isinstance(where, str):
        return {"nontrigger": "non-trigger positions", "trigger": "trigger positions",
                "all": "all positions t >= 1"}[where]
    return f"{len(where)} named position(s)"


def search(
    task: TriggerTask,
    kind: str = "softmax",
    heads: int = 1,
    values: str = "learned",
    max_error: float = 0.1,
    max_bos_mass: float = 0.5,
    where: Any = "nontrigger",
    restarts: int = 8,
    seed: int = 0,
    budget: float | None = None,
    processes: int | None = None,
    *,
    maxiter: int = 300,
    dps: int = 50,
    progress: bool | None = None,
    executor: Executor | None = None,
    max_work: int | None = None,
) -> SearchResult:
    """Look for ``A`` (and ``U`` when ``values="learned"``) with error ``<= max_error``
    on the whole family and BOS mass ``<= max_bos_mass`` in every head at ``where``.

    ``where``: ``"nontrigger"``, ``"trigger"``, ``"all"`` (positions ``t >= 1``) or a set
    of ``(sequence, position)`` pairs.  ``restarts`` seeded L-BFGS-B restarts run on
    ``processes`` cores (default: all available), or on ``executor`` (any
    :class:`~sinkproof.executor.Executor`, a Dask cluster included; ``processes`` is then
    ignored); the answer does not depend on where they run.  ``budget`` caps the
    wall-clock seconds as a safety stop only (the result's ``stopped_by`` says whether it, the
    deterministic budget ``restarts`` × ``maxiter``, a witness or Ctrl-C ended the search).
    ``found`` is true only after the trusted checker has confirmed both
    conditions on the whole family at ``dps`` digits.  Ctrl-C returns the best so far.
    ``max_work``: the most head evaluations (restarts x maxiter x positions x heads)
    before it refuses to start (default :data:`~sinkproof.work.SEARCH_MAX_WORK`).
    """
    require(task, "has_positions", "the prefix search (sp.search)")
    choice("attention kind", kind, KINDS)
    choice("values", values, VALUES)
    heads = as_int("heads", heads, minimum=1)
    # the search works in floats; the range checks are exact and shared with claims and CLI
    max_error = float(error_level(max_error, "max_error", positive=True))
    max_bos_mass = float(bos_mass(max_bos_mass, "max_bos_mass"))
    if bos_measure_kind(kind) == "log_odds" and max_bos_mass == 0.0:
        raise ValueError(f"max_bos_mass must be > 0 for {kind}: its BOS weight is never 0")
    restarts = as_int("restarts", restarts, minimum=1)
    seed = as_int("seed", seed, minimum=0)
    maxiter = as_int("maxiter", maxiter, minimum=1)
    dps = as_int("dps", dps, minimum=15)
    if budget is not None:
        budget = as_real("budget", budget, minimum=0.0, strict=True)
    refuse_beyond("head evaluations of the search (restarts x steps x positions x heads)",
                  product(restarts, maxiter, task.n_positions, heads), max_work, SEARCH_MAX_WORK)
    cores = available_cores() if processes is None else as_int("processes", processes, 1)
    processes = min(cores, restarts) if executor is None else executor.workers
    if not isinstance(where, str):
        where = frozenset((tuple(int(x) for x in seq), int(pos)) for seq, pos in where)
    batch = _batch(task, where)  # validates where against the family
    if batch.n_constrained == 0 and max_bos_mass < 1.0:
        raise ValueError(f"where={where!r} selects no position of the family")
    start = time.perf_counter()
    deadline = None if budget is None else time.time() + budget
    settings = SearchSettings(task, kind, heads, values, max_error, max_bos_mass, where,
                              seed, maxiter=maxiter, deadline=deadline)

    done: list[RestartOutcome] = []
    timed_out = False
    witness = None
    chosen: RestartOutcome | None = None
    candidates = rejected = 0
    interrupted = False
    with Progress(restarts, "search", progress, threshold=2) as bar:
        try:
            with closing(_outcomes(settings, restarts, processes, executor)) as outcomes:
                for outcome in outcomes:
                    bar.update(1)
                    if outcome is None:  # skipped: past the deadline, or cancelled
                        timed_out = timed_out or deadline is not None
                        continue
                    timed_out = timed_out or outcome.cut
                    done.append(outcome)
                    if not outcome.feasible(max_error, max_bos_mass):
                        continue
                    candidates += 1
                    try:
                        report = verify_witness(_model(settings, outcome), max_error,
                                                max_bos_mass, where, dps,
                                                measure=witness_measure(kind))
                    except CertificateError:  # outside the checker's range (huge logits)
                        rejected += 1
                        continue
                    if report.verified:
                        witness, chosen = report, outcome
                        break
                    rejected += 1
        except KeyboardInterrupt:
            interrupted = True
    if chosen is None and done:
        chosen = min(done, key=lambda o: (o.penalty, o.index))
    if chosen is None and not interrupted:
        raise SearchBudgetError(f"no restart finished within the budget of {budget:g} s "
                                "(the workers' start-up and compilation count against it)")
    if chosen is None:
        raise KeyboardInterrupt("search interrupted before any restart finished")
    points = pareto([p for o in done for p in o.points])
    stopped_by = ("found" if witness is not None else "interrupted" if interrupted
                  else "wall_time" if timed_out else "budget")
    return SearchResult(
        found=witness is not None,
        model=_model(settings, chosen),
        error=chosen.error,
        bos_mass=chosen.bos_mass,
        verified=witness is not None,
        witness=witness,
        trace=tuple(TracePoint(e, b) for e, b in points),
        restarts=len(done),
        candidates=candidates,
        rejected=rejected,
        seconds=time.perf_counter() - start,
        interrupted=interrupted,
        stopped_by=stopped_by,
        settings=dict(kind=kind, heads=heads, values=values, max_error=max_error,
                      max_bos_mass=max_bos_mass, where=where, where_text=_where_text(where),
                      restarts=restarts, seed=seed, budget=budget, processes=processes,
                      maxiter=maxiter, dps=dps),
    )


def _model(settings: SearchSettings, outcome: RestartOutcome) -> AttentionModel:
    return AttentionModel(settings.task, settings.kind, A=outcome.A, U=outcome.U,
                          **outcome.extra)


# ---------------------------------------------------------------- stacks (Adam)
MAX_FAMILY = 4096
"""Largest finite family a stack search trains on whole; beyond it a seeded sample."""
CHUNK = 100
"""Adam steps between two wall-clock checks of a stack search."""

@dataclass(frozen=True)
class StackSearchResult:
    """The best model found: ``params`` (float64 weights, ``None`` if no restart ran),
    its largest error ``error`` over the training family and its largest BOS weight
    ``bos`` over non-trigger positions and heads; ``frontier``: ``(error, bos)`` of every
    restart; ``source``: ``"exhaustive"`` (the whole finite family) or ``"sampled"``;
    ``stopped_by``: ``"budget"`` (every restart ran its ``steps``: deterministic) or
    ``"wall_time"`` (the wall-clock safety stop cut the search short: *Open for time*)."""

    params: dict[str, np.ndarray] | None
    error: float
    bos: float
    frontier: tuple[tuple[float, float], ...]
    restarts: int
    seconds: float
    source: str
    n_sequences: int
    stopped_by: str = "budget"

    def found(self, eps: float, b: float) -> bool:
        """Whether the best model meets ``error <= eps`` with BOS ``< b`` (in floats)."""
        return self.params is not None and self.error <= eps and self.bos < b


def training_family(task: Task, samples: int, seed: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """Input rows ``(N, L, D)``, targets ``(N, L, out_dim)`` and the non-trigger mask
    ``(N, L)`` (position 0 excluded) of the whole finite family when it is small (its
    full-length prefixes), else of ``samples`` seeded sequences; and which of the two
    (``"exhaustive"`` / ``"sampled"``)."""
    if task.finite and task.n_sequences <= MAX_FAMILY:
        codes = np.concatenate([b.codes for b in task.prefix_blocks(task.max_depth,
                                                                    max_rows=MAX_FAMILY)])
        seqs: Any = [task.decode(c) for c in codes]
        x, source = task.prefix_features(codes), "exhaustive"
    else:
        seqs = task.sample(samples, seed)
        x, source = np.stack([task.features(s) for s in seqs]), "sampled"
    y = np.stack([task.targets(s) for s in seqs])
    nontrig = ~np.stack([task.trigger_mask(s) for s in seqs])
    nontrig[:, 0] = False
    return x, y, nontrig, source


def bos_values(w: Any, kind: str) -> Any:
    """The BOS measure of :func:`bos_measure` from weights ``(..., L, L)``: ``(..., L)``."""
    bos = w[..., 0]
    if bos_measure(kind) == "weight":
        return bos
    total = jnp.sum(w, axis=-1)
    pos = total > 0
    return jnp.where(pos, bos / jnp.where(pos, total, 1.0), 0.0)


def init_head_extras(key: Any, kind: str, layers: int, heads: int, n: int, std: float
                     ) -> dict[str, Any]:
    """A map's parameters ``mp`` ``(layers, heads, P)`` at its defaults, and a gated map's
    gate ``gw`` ``(layers, heads, n)`` N(0, std²) and ``gc`` ``(layers, heads)`` 0."""
    amap = MAPS[kind]
    out: dict[str, Any] = {}
    if amap.param_names:
        out["mp"] = jnp.broadcast_to(jnp.asarray(amap.default_params()),
                                     (layers, heads, len(amap.param_names)))
    if amap.properties.gated:
        out["gw"] = std * jax.random.normal(key, (layers, heads, n))
        out["gc"] = jnp.zeros((layers, heads))
    return out


def _fixed(task: Task) -> tuple[np.ndarray, np.ndarray]:
    """Fixed values of a one-head stack: every feature but BOS's own, written back whole."""
    n = task.D
    bos_row = task.features(task.sample(1, seed=0)[0])[0]  # position 0 of any sequence
    drop = np.diag((bos_row == 0).astype(float))
    return drop[None, None], np.eye(n)[None]


def search_stack(task: Task, kind: str, layers: int, heads: int, *, max_error: float,
                 max_bos_mass: float, values: str = "learned", restarts: int = 4,
                 steps: int = 1500, seed: int = 0, budget: float = 30.0, samples: int = 256,
                 lr: float = 1e-2, init_std: float = 0.3,
                 max_work: int | None = None, residual: bool | None = None,
                 init: dict[str, Any] | None = None) -> StackSearchResult:
    """Look for a stack (every head full width, as the paper's models) with error
    ``<= max_error`` and BOS weight ``< max_bos_mass`` at every non-trigger position, in
    every head; at most
    ``restarts`` seeded restarts of ``steps`` Adam steps, stopping after ``budget``
    seconds at the latest (a safety stop: ``stopped_by`` says whether it cut the search,
    which then depends on the machine).  The objective: ``mean_t ||f_t - y_t||² / ε² +
    10 · mean_t max(0, ||f_t - y_t||²/ε² - 1/4) + 100 · mean max(0, BOS - b/2)²`` over
    non-trigger positions and heads, by Adam (float64, JAX, :func:`~sinkproof.autodiff.
    stack_forward`).  ``values = "fixed"`` trains ``W_Q, W_K`` only (one head, one layer).
    ``max_work``: the most head evaluations (restarts x steps x positions x layers x heads;
    default :data:`~sinkproof.work.SEARCH_MAX_WORK`) before it refuses to start.
    ``residual``: residual connections (default: when ``layers > 1``, as in the paper;
    ``False`` searches pure compositions, with the one-layer targets).  ``init``: starting
    weights ``W_Q, W_K, W_V, W_O`` for restart 0 (e.g. a stored witness; the others start
    from random weights)."""
    require(task, "fixed_length", "the stack search")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    layers = as_int("layers", layers, minimum=1)
    heads = as_int("heads", heads, minimum=1)
    restarts = as_int("restarts", restarts, minimum=1)
    steps = as_int("steps", steps, minimum=1)
    refuse_beyond("head evaluations of the search (restarts x steps x positions x layers x "
                  "heads)", product(restarts, steps, max(MAX_FAMILY, int(samples)),
                                    task.max_depth + 1, layers, heads),
                  max_work, SEARCH_MAX_WORK)
    eps = as_real("max_error", max_error, minimum=0.0, strict=True)
    b = as_real("max_bos_mass", max_bos_mass, minimum=0.0, strict=True)
    fixed = values == "fixed"
    residual = layers > 1 if residual is None else bool(residual)
    if getattr(task, "residual", residual) != residual:  # the targets follow the stack
        task = task.replace(residual=residual)
    import optax  # the stack search's optimiser, loaded by the one path that uses it

    x_np, y_np, nontrig, source = training_family(task, samples, seed)
    start = time.perf_counter()
    frontier: list[tuple[float, float]] = []
    best: tuple[float, float, dict[str, np.ndarray]] | None = None
    done = 0
    timed_out = False
    with x64():
        x, y, mask = jnp.asarray(x_np), jnp.asarray(y_np), jnp.asarray(nontrig, dtype=x_np.dtype)
        fv, fo = (jnp.asarray(a) for a in _fixed(task))

        def full(p: dict) -> dict:
            return {**p, "wv": fv, "wo": fo} if fixed else p

        def measures(p: dict) -> tuple[Any, Any]:
            out, w = stack_forward(full(p), x, kind, residual)
            err = jnp.sum((out - y) ** 2, axis=-1)
            bos = bos_values(w, kind)  # (B, layers, heads, L)
            bos = jnp.transpose(bos, (1, 2, 0, 3)) * mask
            return err, bos

        def loss(p: dict) -> Any:
            err, bos = measures(p)
            e = err / eps**2
            sink = jnp.maximum(0.0, bos - b / 2) ** 2
            return (jnp.mean(e) + 10.0 * jnp.mean(jnp.maximum(0.0, e - 0.25))
                    + 100.0 * jnp.sum(sink) / jnp.maximum(1.0, jnp.sum(mask)))

        opt = optax.adam(lr)

        @jax.jit
        def chunk(p: dict, state: Any) -> tuple[dict, Any]:
            def body(_: int, c: tuple) -> tuple:
                prm, st = c
                g = jax.grad(loss)(prm)
                upd, st = opt.update(g, st, prm)
                return optax.apply_updates(prm, upd), st
            return jax.lax.fori_loop(0, CHUNK, body, (p, state))

        @jax.jit
        def summary(p: dict) -> tuple[Any, Any]:
            err, bos = measures(p)
            return jnp.sqrt(jnp.max(err)), jnp.max(bos)

        for r in range(restarts):
            if time.perf_counter() - start > budget:
                timed_out = True
                break
            key = jax.random.PRNGKey(seed * 1000 + r)
            ks = jax.random.split(key, 5)
            shape = (layers, heads, task.n, task.n)
            p = {"wq": init_std * jax.random.normal(ks[0], shape),
                 "wk": init_std * jax.random.normal(ks[1], shape),
                 **init_head_extras(ks[4], kind, layers, heads, task.n, init_std)}
            if not fixed:
                p["wv"] = init_std * jax.random.normal(ks[2], shape)
                p["wo"] = init_std * jax.random.normal(ks[3], (layers, task.n, heads * task.n))
            if init is not None and r == 0:
                p.update({k: jnp.asarray(init[name], dtype=float) for k, name in
                          (("wq", "W_Q"), ("wk", "W_K"), ("wv", "W_V"), ("wo", "W_O"))
                          if name in init})
            state = opt.init(p)
            for _ in range(max(1, steps // CHUNK)):
                p, state = chunk(p, state)
                if time.perf_counter() - start > budget:
                    timed_out = True
                    break
            e, bmax = (float(v) for v in summary(p))
            done += 1
            if not np.isfinite(e):
                continue
            frontier.append((e, bmax))
            host = {k: np.asarray(v, dtype=float) for k, v in full(p).items()}
            rank = (0 if e <= eps else 1, bmax if e <= eps else e)
            if best is None or rank < (0 if best[0] <= eps else 1,
                                       best[1] if best[0] <= eps else best[0]):
                best = (e, bmax, host)
    frontier.sort()
    return StackSearchResult(params=None if best is None else best[2],
                             error=np.inf if best is None else best[0],
                             bos=np.inf if best is None else best[1],
                             frontier=tuple(frontier), restarts=done,
                             seconds=round(time.perf_counter() - start, 2), source=source,
                             n_sequences=int(x_np.shape[0]),
                             stopped_by="wall_time" if timed_out else "budget")
