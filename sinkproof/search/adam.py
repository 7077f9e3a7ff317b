"""The Adam optimiser of the search (``optimiser="adam"``): stacks of full-width heads (the
paper's model: ``layers`` layers of ``heads`` heads, residual or not) on a task of one
fixed length, trained on whole sequences.

The objective, over the training family (the whole finite family when it has at most
:data:`MAX_FAMILY` sequences, else ``samples`` seeded ones):
``mean_t ||f_t - y_t||² / ε² + 10 · mean_t max(0, ||f_t - y_t||²/ε² - 1/4)
+ 100 · mean max(0, m - b/2)²`` with ``m`` the BOS measure at non-trigger positions, in
every head; Adam in float64 (JAX, :func:`~sinkproof.autodiff.stack_forward`), in chunks of
:data:`CHUNK` steps between two looks at the deadline.  Restart ``r`` starts from
``PRNGKey(1000 · seed + r)``: a restart gives the same result in any process.  The engine
(:mod:`sinkproof.search.engine`) calls :func:`key`, :func:`prepare`, :func:`run`,
:func:`positions`, :func:`rank`, :func:`model`, :func:`trained_on`; there is no in-memory
trusted check of a stack (a claim writes its witness file and verifies that).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..attention import MAPS, bos_measure
from ..autodiff import stack_forward, x64
from ..stack import StackModel, paper_model
from ..tasks.protocol import Task
from .restart import RestartOutcome, SearchSettings

MAX_FAMILY = 4096
"""Largest finite family a stack search trains on whole; beyond it a seeded sample."""
CHUNK = 100
"""Adam steps between two wall-clock checks of a stack search."""
INIT_SCALE = 0.3
"""Standard deviation of the random start when the settings name none."""
WEIGHTS = (("wq", "W_Q"), ("wk", "W_K"), ("wv", "W_V"), ("wo", "W_O"))
"""The stack's weights: the search's names and :func:`~sinkproof.stack.paper_model`'s."""


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


def bos_values(w: Any, measure: str) -> Any:
    """The BOS measure (``"weight"`` ``α_0`` or ``"share"`` ``α_0 / Σ_k α_k``, 0 where
    every weight is 0) from weights ``(..., L, L)``: ``(..., L)``."""
    bos = w[..., 0]
    if measure == "weight":
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


def _measure(settings: SearchSettings) -> str:
    return bos_measure(settings.kind) if settings.measure is None else settings.measure


@dataclass(frozen=True)
class Prepared:
    """A search's training family and its compiled steps: ``chunk(p, state)`` runs
    :data:`CHUNK` Adam steps, ``summary(p)`` the largest error and BOS measure, ``full(p)``
    adds the fixed values; ``opt`` the optax optimiser."""

    opt: Any
    chunk: Callable[..., Any]
    summary: Callable[..., Any]
    full: Callable[[dict], dict]
    source: str
    n_sequences: int


def key(settings: SearchSettings) -> tuple[Any, ...]:
    """What :func:`prepare` depends on (a worker keeps the last prepared search)."""
    s = settings
    return (s.task, s.kind, s.layers, s.heads, s.values, s.residual, s.max_error,
            s.max_bos_mass, _measure(s), s.samples, s.seed, s.lr)


def prepare(settings: SearchSettings) -> Prepared:
    """The training family and the jitted Adam chunk and summary of ``settings``."""
    import optax  # the stack search's optimiser, loaded by the one path that uses it

    task, kind, residual = settings.task, settings.kind, settings.residual
    eps, b, measure = settings.max_error, settings.max_bos_mass, _measure(settings)
    fixed = settings.values == "fixed"
    x_np, y_np, nontrig, source = training_family(task, settings.samples, settings.seed)
    with x64():
        x, y, mask = jnp.asarray(x_np), jnp.asarray(y_np), jnp.asarray(nontrig, dtype=x_np.dtype)
        fv, fo = (jnp.asarray(a) for a in _fixed(task))

        def full(p: dict) -> dict:
            return {**p, "wv": fv, "wo": fo} if fixed else p

        def measures(p: dict) -> tuple[Any, Any]:
            out, w = stack_forward(full(p), x, kind, residual)
            err = jnp.sum((out - y) ** 2, axis=-1)
            bos = bos_values(w, measure)  # (B, layers, heads, L)
            bos = jnp.transpose(bos, (1, 2, 0, 3)) * mask
            return err, bos

        def loss(p: dict) -> Any:
            err, bos = measures(p)
            e = err / eps**2
            sink = jnp.maximum(0.0, bos - b / 2) ** 2
            return (jnp.mean(e) + 10.0 * jnp.mean(jnp.maximum(0.0, e - 0.25))
                    + 100.0 * jnp.sum(sink) / jnp.maximum(1.0, jnp.sum(mask)))

        opt = optax.adam(settings.lr)

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

    return Prepared(opt, chunk, summary, full, source, int(x_np.shape[0]))


def positions(settings: SearchSettings) -> int:
    """Positions one step reads, at the most: the largest training family's sequences
    times the length."""
    return max(MAX_FAMILY, int(settings.samples)) * (settings.task.max_depth + 1)


def trained_on(settings: SearchSettings, data: Prepared) -> tuple[str, int]:
    """``("exhaustive" | "sampled", sequences)`` of the training family."""
    return data.source, data.n_sequences


def run(settings: SearchSettings, data: Prepared, index: int,
        stop: Callable[[], bool] | None = None) -> RestartOutcome:
    """``maxiter`` Adam steps from restart ``index``'s start (restart 0 from ``init``
    where given); past the deadline, or ``stop()`` true, it ends after the current chunk
    (``cut``)."""
    start = time.perf_counter()
    task, kind, s = settings.task, settings.kind, settings
    std = INIT_SCALE if s.init_scale is None else s.init_scale
    with x64():
        ks = jax.random.split(jax.random.PRNGKey(s.seed * 1000 + index), 5)
        shape = (s.layers, s.heads, task.n, task.n)
        p = {"wq": std * jax.random.normal(ks[0], shape),
             "wk": std * jax.random.normal(ks[1], shape),
             **init_head_extras(ks[4], kind, s.layers, s.heads, task.n, std)}
        if s.values != "fixed":
            p["wv"] = std * jax.random.normal(ks[2], shape)
            p["wo"] = std * jax.random.normal(ks[3], (s.layers, task.n, s.heads * task.n))
        if s.init is not None and index == 0:
            p.update({k: jnp.asarray(s.init[name], dtype=float) for k, name in WEIGHTS
                      if name in s.init})
        state = data.opt.init(p)
        steps, cut = 0, False
        for _ in range(max(1, s.maxiter // CHUNK)):
            p, state = data.chunk(p, state)
            steps += CHUNK
            if (s.deadline is not None and time.time() > s.deadline) or (
                    stop is not None and stop()):
                cut = True
                break
        e, bmax = (float(v) for v in data.summary(p))
        host = {k: np.asarray(v, dtype=float) for k, v in data.full(p).items()}
    return RestartOutcome(index, None, None, e, bmax, float("nan"), steps,
                          time.perf_counter() - start,
                          [(e, bmax)] if np.isfinite(e) else [], cut, host)


def rank(settings: SearchSettings, outcome: RestartOutcome) -> tuple[float, ...] | None:
    """Accurate restarts first, by BOS measure, then the rest by error; ``None`` (not
    reported) where the error is not finite."""
    e, b = outcome.error, outcome.bos_mass
    if not np.isfinite(e):
        return None
    return (0, b) if e <= settings.max_error else (1, e)


def model(settings: SearchSettings, outcome: RestartOutcome) -> StackModel:
    """The stack of a restart's weights (:func:`~sinkproof.stack.paper_model`)."""
    w = outcome.extra
    return paper_model(settings.task, settings.kind,
                       **{name: w[k] for k, name in WEIGHTS}, residual=settings.residual,
                       map_params=w.get("mp"), gate_w=w.get("gw"), gate_c=w.get("gc"))
