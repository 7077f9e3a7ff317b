"""Training one attention layer from a seeded random initialisation with Adam.

Each step is one compiled JAX function: the MSE of :mod:`sinkproof.search.objective`
on a mini-batch, its gradient by reverse mode, and optax's Adam update, in float64
(scoped).  This module samples data, steps the optimiser and records how the BOS
mass evolves.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ..attention import MAPS
from ..autodiff import padded_size, x64
from ..autodiff import stack_forward as forward
from ..measures import evaluate
from ..model import AttentionModel
from ..search.objective import (
    TRACED_OPTIONS,
    device_tables,
    extra_parameters,
    objective_terms,
    prefix_batch,
)
from ..task import TriggerTask
from ..tasks.paper import BOS
from .config import PAPER_PROTOCOL, PROBE_SEED, TRAIN_SEED_OFFSET, ExperimentConfig, Protocol
from .optim import adam


@dataclass(frozen=True)
class History:
    """BOS mass over training, recorded on probe sequences every ``record_every`` steps.

    ``step`` ``(R,)``; ``loss`` ``(R,)`` (mini-batch loss at that step); ``sink_score``
    ``(R, H)``: mean BOS weight per head at non-trigger positions; ``bos_share``
    ``(R, H)``: the same as a share of the head's total weight (equal for softmax).
    """

    step: np.ndarray
    loss: np.ndarray
    sink_score: np.ndarray
    bos_share: np.ndarray

    def sink_step(self, level: float = 0.5) -> int | None:
        """First recorded step from which some head's BOS share stays ``>= level`` to the
        end of training (None if no head ends there): when the sink forms for good."""
        above = self.bos_share >= level  # (R, H)
        stays = np.flip(np.logical_and.accumulate(np.flip(above, axis=0), axis=0), axis=0)
        rows = np.flatnonzero(stays.any(axis=1))
        return int(self.step[rows[0]]) if rows.size else None

    def to_dict(self) -> dict[str, list]:
        return dict(step=self.step.tolist(), loss=self.loss.tolist(),
                    sink_score=self.sink_score.tolist(), bos_share=self.bos_share.tolist())

    def __repr__(self) -> str:
        return (f"History({self.step.size} records to step {int(self.step[-1])}, "
                f"final BOS share {np.array2string(self.bos_share[-1], precision=3)}, "
                f"sink step {self.sink_step()})")


@dataclass(frozen=True)
class TrainedModel:
    """A model trained by :func:`train`, with the seed, history and wall time."""

    model: AttentionModel
    seed: int
    history: History
    seconds: float

    def __repr__(self) -> str:
        m = self.model
        return (f"TrainedModel({m.kind}, H={m.H}, seed={self.seed}, "
                f"steps={int(self.history.step[-1])}, loss={self.history.loss[-1]:.3g}, "
                f"sink_score={np.array2string(self.history.sink_score[-1], precision=3)})")


def initial_parameters(task: TriggerTask, heads: int, seed: int,
                       scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Seeded N(0, scale^2) entries of ``A`` ``(H, D, D)`` and learned values ``U``."""
    rng = np.random.default_rng(seed)
    A = rng.normal(0.0, scale, (heads, task.D, task.D))
    U = rng.normal(0.0, scale, (heads, task.p, task.p + 3))
    return A, U


@lru_cache(maxsize=8)
def _adam_step(kind: str, lr: float) -> Callable[..., Any]:
    """The compiled step ``(params, state, data, Φ, e) -> (loss, params', state')``: the MSE
    at ``params`` and one Adam update along its gradient."""
    optimizer = adam(lr)
    opts = {k: 0.0 for k in TRACED_OPTIONS} | {"max_error": 1.0, "temperature": 1.0}

    def loss(params: dict[str, jax.Array], data: Any, phi: jax.Array, tokens: jax.Array) -> Any:
        return objective_terms(params, data, phi, tokens, opts, kind, "mse", False)[0]

    @jax.jit
    def step(params: dict[str, jax.Array], state: Any, data: Any, phi: jax.Array,
             tokens: jax.Array) -> Any:
        value, grads = jax.value_and_grad(loss)(params, data, phi, tokens)
        updates, state = optimizer.update(grads, state, params)
        return value, optax.apply_updates(params, updates), state

    return step


def _probe(model: AttentionModel, probe: list[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray]:
    ev = evaluate(model, probe, progress=False)
    return ev.sink_score, ev.bos_share_nontrigger.mean


def train(task: TriggerTask, kind: str, heads: int, seed: int,
          config: ExperimentConfig | None = None,
          on_step: Callable[[int], None] | None = None) -> TrainedModel:
    """Train an ``H``-head ``kind`` layer with learned values on ``task`` by Adam on the MSE.

    Every parameter of the head is learned: ``A``, ``U``, the map's own parameters (the
    sink logit or sigmoid bias ``b``, starting at 0) and a gated map's gate ``(w, c)``
    (starting at 0, a gate of 1/2).

    The training set is ``config.n_train`` sequences sampled with seed
    ``TRAIN_SEED_OFFSET + seed``, cut into fixed mini-batches visited in a seeded
    shuffled order; the initialisation uses ``seed``.  ``on_step(n)`` is called
    after every ``n`` finished steps (for progress bars).
    """
    cfg = ExperimentConfig() if config is None else config
    start = time.perf_counter()
    A, U = initial_parameters(task, heads, seed, cfg.init_scale)
    data = task.sample(cfg.n_train, seed=TRAIN_SEED_OFFSET + seed)
    n_batches = cfg.n_train // cfg.batch_size
    batches = [prefix_batch(task, data[i * cfg.batch_size:(i + 1) * cfg.batch_size])
               for i in range(n_batches)]
    rows = padded_size(max(b.n_prefixes for b in batches))  # one shape: one compilation
    probe = task.sample(cfg.n_probe, seed=PROBE_SEED)
    order_rng = np.random.default_rng(TRAIN_SEED_OFFSET + seed)
    step_fn = _adam_step(kind, cfg.lr)
    phi, tokens = device_tables(task)

    steps, losses, sinks, shares = [], [], [], []
    order = order_rng.permutation(n_batches)
    with x64():
        device = [b.padded(rows).device() for b in batches]
        extra = extra_parameters(task, kind, heads)
        params = {"A": jnp.asarray(A), "U": jnp.asarray(U),
                  **{k: jnp.asarray(v) for k, v in extra.items()}}
        state = adam(cfg.lr).init(params)
        for step in range(cfg.steps + 1):
            if step % n_batches == 0 and step:
                order = order_rng.permutation(n_batches)
            batch = device[order[step % n_batches]]
            if step == cfg.steps or step % cfg.record_every == 0:
                A, U = np.asarray(params["A"]), np.asarray(params["U"])
                extra = {k: np.asarray(params[k]) for k in extra}
            loss, new_params, state = step_fn(params, state, batch, phi, tokens)
            loss = float(loss)
            if not np.isfinite(loss):
                raise FloatingPointError(
                    f"{kind} H={heads} seed={seed}: loss diverged at step {step}")
            if step % cfg.record_every == 0 or step == cfg.steps:
                sink, share = _probe(AttentionModel(task, kind, A, U, **extra), probe)
                steps.append(step)
                losses.append(loss)
                sinks.append(sink)
                shares.append(share)
            if step == cfg.steps:
                break
            params = new_params
            if on_step is not None:
                on_step(1)
    history = History(np.array(steps), np.array(losses), np.array(sinks), np.array(shares))
    return TrainedModel(AttentionModel(task, kind, A, U, **extra), seed, history,
                        time.perf_counter() - start)

# ------------------------------------------------ stacks on a task without positions
@dataclass(frozen=True)
class StackFit:
    """What :func:`fit_stack` trained: host weights, steps taken, whether the tolerance
    stopped it (and the batch error then), wall seconds and the learning rate."""

    params: dict[str, np.ndarray]
    steps: int
    stopped: bool
    stop_error: float
    wall_s: float
    lr: float


def init_params(key: Any, layers: int, heads: int, n: int, std: float = 0.02,
                kind: str = "softmax") -> dict:
    """Weights N(0, std²): ``wq, wk, wv`` ``(layers, heads, n, n)``, ``wo`` ``(layers, n, Hn)``;
    for a map with parameters ``mp`` ``(layers, heads, P)`` at the map's defaults, and for a
    gated map ``gw`` ``(layers, heads, n)`` N(0, std²) and ``gc`` ``(layers, heads)`` 0."""
    kq, kk, kv, ko, kg = jax.random.split(key, 5)
    shape = (layers, heads, n, n)
    params = {"wq": std * jax.random.normal(kq, shape), "wk": std * jax.random.normal(kk, shape),
              "wv": std * jax.random.normal(kv, shape),
              "wo": std * jax.random.normal(ko, (layers, n, heads * n))}
    amap = MAPS[kind]
    if amap.param_names:
        params["mp"] = jnp.broadcast_to(jnp.asarray(amap.default_params(), jnp.float32),
                                        (layers, heads, len(amap.param_names)))
    if amap.properties.gated:
        params["gw"] = std * jax.random.normal(kg, (layers, heads, n))
        params["gc"] = jnp.zeros((layers, heads))
    return params


def batch(key: Any, size: int, n: int, L: int, residual: bool) -> tuple[Any, Any]:
    """``size`` fresh sequences and their targets (JAX): trigger uniform in ``2..L-1``."""
    kj, kc = jax.random.split(key)
    j = jax.random.randint(kj, (size,), 2, L)
    content = jax.random.uniform(kc, (size, L - 1, n - 3), minval=-1.0, maxval=1.0)
    return assemble(content, j, n, L, residual)


def assemble(content: Any, j: Any, n: int, L: int, residual: bool) -> tuple[Any, Any]:
    """Token matrices and targets from content ``(B, L-1, n-3)`` and trigger positions."""
    B = content.shape[0]
    is_trig = (jnp.arange(1, L)[None, :] == j[:, None]).astype(content.dtype)
    body = jnp.concatenate([jnp.zeros((B, L - 1, 1), content.dtype), is_trig[..., None],
                            content, (1.0 - is_trig)[..., None]], axis=-1)
    bos = jnp.zeros((B, 1, n), content.dtype).at[:, 0, BOS].set(1.0)
    x = jnp.concatenate([bos, body], axis=1)
    mean = jnp.cumsum(body, axis=1) / jnp.arange(1, L, dtype=content.dtype)[None, :, None]
    y_body = mean * is_trig[..., None]
    y = jnp.concatenate([jnp.zeros((B, 1, n), content.dtype), y_body], axis=1)
    return x, (x + y if residual else y)


def fit_stack(kind: str, layers: int, heads: int, seed: int = 0,
              protocol: Protocol = PAPER_PROTOCOL) -> StackFit:
    """Train one stack of ``layers`` x ``heads`` ``kind`` heads (residual when there are
    several layers) with ``protocol`` (float32, JAX): fresh batches each step, Adam, MSE,
    stopping at the tolerance or the step limit."""
    if kind not in MAPS:
        raise ValueError(f"kind must be one of {', '.join(MAPS)}, got {kind!r}")
    p = protocol
    residual = layers > 1
    lr = p.lr(layers)
    opt = optax.adam(lr, b1=p.betas[0], b2=p.betas[1])
    key = jax.random.PRNGKey(seed)
    key, kinit = jax.random.split(key)
    params = init_params(kinit, layers, heads, p.n, p.init_std, kind)

    def loss_fn(prm, x, y):
        out, _ = forward(prm, x, kind, residual)
        err = out - y
        return jnp.mean(err**2), jnp.max(jnp.abs(err))

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def body(carry):
        prm, state, k, step, _, _ = carry
        k, kb = jax.random.split(k)
        x, y = batch(kb, p.batch, p.n, p.L, residual)
        (_, err), grads = grad_fn(prm, x, y)
        done = err < p.tol
        updates, new_state = opt.update(grads, state, prm)
        new_prm = optax.apply_updates(prm, updates)
        keep = lambda a, b: jax.tree_util.tree_map(  # noqa: E731
            lambda u, v: jnp.where(done, u, v), a, b)
        return (keep(prm, new_prm), keep(state, new_state), k,
                step + jnp.where(done, 0, 1), done, err)

    def cond(carry):
        return (~carry[4]) & (carry[3] < p.max_steps)

    start = time.perf_counter()
    init = (params, opt.init(params), key, jnp.asarray(0), jnp.asarray(False),
            jnp.asarray(jnp.inf, dtype=jnp.float32))
    params, _, _, steps, done, err = jax.jit(lambda c: jax.lax.while_loop(cond, body, c))(init)
    steps = int(steps)
    wall = time.perf_counter() - start
    host = {k: np.asarray(v) for k, v in params.items()}
    return StackFit(host, steps, bool(done), float(err), wall, lr)
