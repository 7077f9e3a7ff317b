"""Measurements of one trained model: held-out and longer-length error, per-head
BOS mass, sink score, null mass, and the theory checks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..attention import MAPS
from ..autodiff import stack_forward_details as forward_details
from ..kernel import forward_prefixes
from ..measures import evaluate, explicit_prefix_blocks
from ..model import AttentionModel
from ..numerics import stable_norm
from ..task import TriggerTask
from ..tasks.paper import PaperTask
from .config import Protocol
from .theory import relu_check, stack_bound_check, theorem1_check, theorem3_check
from .train import TrainedModel

NESTED = ("theory", "history", "head_outputs", "value_norms")
"""Fields of :class:`RunResult` that are not one cell of a table row."""


@dataclass(frozen=True, repr=False)
class RunResult:
    """Everything measured on one trained model (per-head quantities are lists of length H).

    ``error``: sup error ``max ||f_t - y_t||`` over the held-out sequences (lengths
    1..T); ``error_longer``: the same on lengths ``T+1..longer_T``.  ``sink_score``:
    mean BOS mass at non-trigger positions ``t >= 1`` (held-out); ``bos_trigger``:
    mean BOS mass at trigger positions; ``bos_share``: BOS weight as a share of the
    head's total weight at non-trigger positions (equals the BOS mass for softmax);
    ``null_mass``: share of weight on keys with value norm ``<= eta`` at non-trigger
    positions; ``silent_at_triggers``: the head gives zero weight to every key at
    every held-out trigger position (a dead ReLU head; always false for softmax);
    ``head_outputs``: see :func:`head_outputs` (sink versus cancellation between heads).
    ``theory``: Theorem 1 / 3 checks (single-head softmax) or the
    Theorem 4 reference (ReLU).
    """

    content: str
    kind: str
    heads: int
    seed: int
    steps: int
    error: float
    error_longer: float
    sink_score: list[float]
    bos_nontrigger_min: list[float]
    bos_trigger: list[float]
    bos_share: list[float]
    null_mass: list[float]
    sink_score_longer: list[float]
    silent_at_triggers: list[bool]
    head_outputs: dict[str, float]
    value_norms: dict[str, list[float]]
    norm_A: list[float]
    sink_step: int | None
    seconds: float
    theory: list[dict[str, Any]]
    history: dict[str, list] = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    def record(self) -> dict[str, Any]:
        """The run as one table row: every field except the nested ones (``theory``,
        ``history``, ``head_outputs``, ``value_norms``); per-head fields stay lists."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__
                if name not in NESTED}

    def _heads(self, values: list[float]) -> str:
        return "[" + ", ".join(f"{v:.3g}" for v in values) + "]"

    def __repr__(self) -> str:
        return (f"RunResult({self.content} {self.kind} H={self.heads} seed={self.seed}: "
                f"error={self.error:.3g}, longer={self.error_longer:.3g}, "
                f"sink_score={self._heads(self.sink_score)}, "
                f"bos_trigger={self._heads(self.bos_trigger)})")

    def _repr_markdown_(self) -> str:
        return ("| content | kind | H | seed | error | error longer | sink score | BOS share "
                "| BOS at trigger |\n|---|---|---|---|---|---|---|---|---|\n"
                f"| {self.content} | {self.kind} | {self.heads} | {self.seed} | {self.error:.3g} "
                f"| {self.error_longer:.3g} | {self._heads(self.sink_score)} "
                f"| {self._heads(self.bos_share)} | {self._heads(self.bos_trigger)} |")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunResult:
        return cls(**{name: d[name] for name in cls.__dataclass_fields__})


def longer_model(model: AttentionModel, T: int) -> AttentionModel:
    """The same parameters on the task with maximum length ``T`` (inverse positions: same D)."""
    if model.task.positions != "inverse":
        raise ValueError("length generalisation needs positions='inverse' (D independent of T)")
    return model.replace(task=model.task.replace(T=T))


def longer_sequences(task: TriggerTask, T: int, n: int, seed: int) -> list[tuple[int, ...]]:
    """``n`` seeded sequences of lengths ``task.T+1..T``."""
    return task.replace(T=T).sample(n, seed=seed, lengths=(task.T + 1, T))


def value_norms(model: AttentionModel) -> dict[str, list[float]]:
    """Per head: ``||v_b||``, ``||v_τ||`` and the least and largest ``||v_c||``."""
    task = model.task
    norms = stable_norm(model.value_table)  # (H, k+2)
    return dict(bos=norms[:, task.bos_code].tolist(), trigger=norms[:, task.trig_code].tolist(),
                content_min=norms[:, : task.k].min(axis=1).tolist(),
                content_max=norms[:, : task.k].max(axis=1).tolist())


def head_outputs(model: AttentionModel, sequences: Sequence[Sequence[int]]) -> dict[str, float]:
    """How a model outputs zero at non-trigger positions ``t >= 1`` of ``sequences``.

    ``sum_head_norms``: mean of ``Σ_h ||f^h_t||`` (each head's own output); ``output_norm``:
    mean of ``||f_t|| = ||Σ_h f^h_t||``.  A sink makes every ``f^h_t`` small; heads that
    cancel each other give ``sum_head_norms >> output_norm``.
    """
    values = model.value_table
    heads_total = out_total = count = 0.0
    for _, codes, mult in explicit_prefix_blocks(model.task, sequences)[0]:
        fw = forward_prefixes(model, codes)
        keep = fw.query != model.task.trig_code
        per_head = np.stack([np.einsum("nj,njp->np", fw.weights[h][keep],
                                       values[h][fw.keys[keep]]) for h in range(model.H)])
        heads_total += float(stable_norm(per_head).sum(axis=0) @ mult[keep])
        out_total += float(stable_norm(per_head.sum(axis=0)) @ mult[keep])
        count += float(mult[keep].sum())
    return dict(sum_head_norms=heads_total / count, output_norm=out_total / count)


def measure(trained: TrainedModel, content: str, heldout: Sequence[Sequence[int]],
            longer: Sequence[Sequence[int]], longer_T: int, eta: float) -> RunResult:
    """Evaluate ``trained`` on held-out and longer sequences and hold it against the theory."""
    model = trained.model
    ev = evaluate(model, heldout, eta=eta, progress=False)
    ev_long = evaluate(longer_model(model, longer_T), longer, eta=eta, progress=False)
    if model.kind == "softmax":
        theory = [theorem1_check(model), theorem3_check(model, heldout, ev.max_error)]
    else:
        theory = [relu_check(model, ev.bos_share_nontrigger.mean)]
    return RunResult(
        content=content, kind=model.kind, heads=model.H, seed=trained.seed,
        steps=int(trained.history.step[-1]),
        error=ev.max_error, error_longer=ev_long.max_error,
        sink_score=ev.sink_score.tolist(),
        bos_nontrigger_min=ev.bos_nontrigger.min.tolist(),
        bos_trigger=ev.bos_trigger.mean.tolist(),
        bos_share=ev.bos_share_nontrigger.mean.tolist(),
        null_mass=ev.null_mass_nontrigger.mean.tolist(),
        sink_score_longer=ev_long.sink_score.tolist(),
        silent_at_triggers=((ev.bos_trigger.max == 0)
                            & (ev.log_nonbos_trigger.max == -np.inf)).tolist(),
        head_outputs=head_outputs(model, heldout), value_norms=value_norms(model),
        norm_A=model.spectral_norms.tolist(),
        sink_step=trained.history.sink_step(), seconds=trained.seconds,
        theory=theory, history=trained.history.to_dict(),
    )

# ------------------------------------------------ stacks on a task without positions
SINK_LEVEL = 0.97
"""A head *sinks* when its mean BOS weight over non-trigger rows is at least this."""
NULL_ETA = 0.05
"""A key of a stack is null when its value ``W_V x_k`` has norm at most this."""


@dataclass
class StackRun:
    """One trained stack (:func:`sinkproof.experiment.runner.train_stack`): its
    configuration, stop and evaluation figures, its weights."""

    kind: str
    layers: int
    heads: int
    seed: int
    steps: int
    stopped: bool
    stop_batch_error: float
    max_abs_error: float
    bos_nontrigger: list[list[float]]
    bos_trigger: list[list[float]]
    sinks_per_layer: list[int]
    wall_s: float
    lr: float
    bound_check: dict[str, Any] = field(default_factory=dict)
    bos_share_nontrigger: list[list[float]] = field(default_factory=list)
    null_nontrigger: list[list[float]] = field(default_factory=list)
    params: dict[str, np.ndarray] = field(repr=False, default_factory=dict)
    mean_maps: np.ndarray | None = field(repr=False, default=None)
    std_maps: np.ndarray | None = field(repr=False, default=None)
    one_maps: np.ndarray | None = field(repr=False, default=None)

    def summary(self) -> dict[str, Any]:
        """The JSON-friendly record (no arrays)."""
        d = asdict(self)
        for key in ("params", "mean_maps", "std_maps", "one_maps"):
            d.pop(key)
        return d


def null_figures(kind: str, w: np.ndarray, vnorm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean BOS share and null mass per layer and head ``(layers, heads)`` over the rows of
    ``w`` ``(B, layers, heads, rows, L)`` (effective weights), by the map's properties."""
    props = MAPS[kind].properties
    total = w.sum(axis=-1)
    safe = np.where(total > 0, total, 1.0)
    share = np.where(total > 0, w[..., 0] / safe, 0.0)
    on_null = (w * (vnorm[:, :, :, None, :] <= NULL_ETA)).sum(axis=-1)
    if props.on_simplex or props.null_slot:  # the slot (if any) takes 1 - Σ_k α_ik
        null = on_null + (1.0 - total if props.null_slot else 0.0)
    else:
        null = np.where(total > 0, on_null / safe, 0.0)
    return share.mean(axis=(0, 3)), null.mean(axis=(0, 3))


def eval_set(protocol: Protocol) -> np.ndarray:
    """The seeded test sequences, float32 ``(n_eval, L, n)``, trigger at ``eval_trigger``."""
    task = PaperTask(n=protocol.n, L=protocol.L)
    return task.sample(protocol.n_eval, seed=protocol.eval_seed,
                       trigger_at=protocol.eval_trigger).astype(np.float32)


def evaluate_stack(kind: str, layers: int, heads: int, seed: int, params: dict[str, np.ndarray],
             protocol: Protocol, *, steps: int, stopped: bool, stop_error: float,
             wall_s: float, lr: float) -> StackRun:
    """Error, attention maps and BOS statistics of trained weights on the test set
    (float32 JAX forward): the largest absolute error, every head's mean and standard
    deviation map, ``bos_nontrigger[l][h]`` (mean BOS weight over the non-trigger rows
    ``i >= 1``), ``bos_trigger[l][h]`` (the trigger row's), and off the simplex the BOS
    share and null mass (:func:`null_figures`)."""
    import jax.numpy as jnp

    residual = layers > 1
    x = eval_set(protocol)
    task = PaperTask(n=protocol.n, L=protocol.L, residual=residual)
    y = task.row_targets(x.astype(float))
    out, w, vnorm = forward_details({k: jnp.asarray(v) for k, v in params.items()},
                                    jnp.asarray(x), kind, residual)
    out, w, vnorm = (np.asarray(a, dtype=float) for a in (out, w, vnorm))
    rows = [i for i in range(1, protocol.L) if i != protocol.eval_trigger]
    bos = w[:, :, :, rows, 0].mean(axis=(0, 3))
    share, null = null_figures(kind, w[:, :, :, rows], vnorm)
    held = stack_bound_check(kind, layers, heads, params, x.astype(float), out, w, y,
                       protocol.eval_trigger)
    return StackRun(kind=kind, layers=layers, heads=heads, seed=seed, steps=steps, stopped=stopped,
               stop_batch_error=stop_error, max_abs_error=float(np.abs(out - y).max()),
               bos_nontrigger=bos.tolist(),
               bos_trigger=w[:, :, :, protocol.eval_trigger, 0].mean(axis=0).tolist(),
               sinks_per_layer=[int(np.sum(b >= SINK_LEVEL)) for b in bos],
               wall_s=wall_s, lr=lr, bound_check=held, bos_share_nontrigger=share.tolist(),
               null_nontrigger=null.tolist(), params=params, mean_maps=w.mean(axis=0),
               std_maps=w.std(axis=0), one_maps=w[0])
