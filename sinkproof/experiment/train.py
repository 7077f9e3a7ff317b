"""Training one attention layer from a seeded random initialisation with Adam.

Gradients come from :mod:`sinkproof.search.objective` (the analytic gradients the
search layer uses); this module only samples data, steps the optimiser and
records how the BOS mass evolves.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..measures import evaluate
from ..model import AttentionModel
from ..search.objective import prefix_batch, value_and_grad
from ..task import TriggerTask
from .config import PROBE_SEED, TRAIN_SEED_OFFSET, ExperimentConfig
from .optim import Adam


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


def _probe(model: AttentionModel, probe: list[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray]:
    ev = evaluate(model, probe, progress=False)
    return ev.sink_score, ev.bos_share_nontrigger.mean


def train(task: TriggerTask, kind: str, heads: int, seed: int,
          config: ExperimentConfig | None = None,
          on_step: Callable[[int], None] | None = None) -> TrainedModel:
    """Train an ``H``-head ``kind`` layer with learned values on ``task`` by Adam on the MSE.

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
    probe = task.sample(cfg.n_probe, seed=PROBE_SEED)
    order_rng = np.random.default_rng(TRAIN_SEED_OFFSET + seed)
    adam = Adam([A.shape, U.shape], lr=cfg.lr)

    steps, losses, sinks, shares = [], [], [], []
    order = order_rng.permutation(n_batches)
    for step in range(cfg.steps + 1):
        if step % n_batches == 0 and step:
            order = order_rng.permutation(n_batches)
        loss, dA, dU = value_and_grad(task, kind, A, U, batches[order[step % n_batches]])
        if not np.isfinite(loss):
            raise FloatingPointError(f"{kind} H={heads} seed={seed}: loss diverged at step {step}")
        if step % cfg.record_every == 0 or step == cfg.steps:
            sink, share = _probe(AttentionModel(task, kind, A, U), probe)
            steps.append(step)
            losses.append(float(loss))
            sinks.append(sink)
            shares.append(share)
        if step == cfg.steps:
            break
        A, U = adam.step([A, U], [dA, dU])
        if on_step is not None:
            on_step(1)
    history = History(np.array(steps), np.array(losses), np.array(sinks), np.array(shares))
    return TrainedModel(AttentionModel(task, kind, A, U), seed, history,
                        time.perf_counter() - start)
