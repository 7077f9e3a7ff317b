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

from ..autodiff import padded_size, x64
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
from .config import PROBE_SEED, TRAIN_SEED_OFFSET, ExperimentConfig
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
