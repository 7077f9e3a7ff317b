"""What training does per attention map: sink and null scores per head, in both settings.

For each map, 1 and 4 heads, and a few seeds, one layer is trained from a seeded
initialisation and measured on held-out sequences at non-trigger positions ``t >= 1``:

- **ours** (:class:`~sinkproof.task.TriggerTask`, learned values, Adam on the MSE:
  :func:`sinkproof.experiment.train`): every parameter of the head is learned, the sink
  logit or sigmoid bias ``b`` and the gate included;
- **paper** (:class:`~sinkproof.tasks.PaperTask`, the paper's full-width one-layer model
  and protocol with fewer steps: :func:`sinkproof.experiment.runner.train_stack`).

Per head: the **sink score** (mean BOS weight ``α_t0``; a gated head's ``g_t α_t0``), the
**BOS share** ``α_t0 / Σ_j α_tj`` and the **null score** (mean null mass: the null slot of
a virtual-slot or gated map plus the weight on keys whose value has norm ``<= eta``, as a
share of the total weight for maps without a slot whose weights need not sum to 1).
Heads are listed in decreasing sink score within each run, then averaged over seeds.
These are measurements of trained models, not proofs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..attention import MAPS
from ..errors import SinkproofError
from ..executor import ProcessExecutor, SerialExecutor
from ..experiment.config import HELDOUT_SEED, ExperimentConfig, Protocol
from ..experiment.runner import train_stack
from ..experiment.train import train
from ..measures import evaluate

__all__ = ["SETTINGS", "TrainedRow", "TrainedRun", "render_trained", "train_variants"]

SETTINGS = ("ours", "paper")
HEADS = (1, 4)
SEEDS = (0, 1, 2)
OURS = ExperimentConfig(p=2, T=4, contents=("signed",), heads=HEADS, seeds=SEEDS, steps=400,
                        n_train=256, batch_size=32, n_heldout=128, longer_T=6, n_longer=16,
                        n_probe=8, record_every=100, eta=0.05)
"""Our setting: p = 2, T = 4, signed content, inverse positions, 400 Adam steps."""
PAPER = Protocol(n=6, L=8, max_steps=1500, n_eval=256)
"""The paper's protocol on n = 6, L = 8, one layer, at most 1500 steps."""
QUICK_OURS = OURS.replace(steps=60, n_train=64, batch_size=16, n_heldout=32)
QUICK_PAPER = replace(PAPER, max_steps=60, n_eval=64)
TRAINING: dict[str, tuple[ExperimentConfig | Protocol, ExperimentConfig | Protocol]] = {
    "ours": (OURS, QUICK_OURS), "paper": (PAPER, QUICK_PAPER)}
"""Each setting's training preset (default, ``--quick``), as data: an
:class:`~sinkproof.experiment.ExperimentConfig` trains one layer on a task with positions, a
:class:`~sinkproof.experiment.Protocol` a stack on a task without them."""


@dataclass(frozen=True)
class TrainedRun:
    """One trained model: setting, map, heads, seed, its error on the held-out set and
    per-head sink score, BOS share and null score (in training's head order)."""

    setting: str
    kind: str
    heads: int
    seed: int
    error: float
    sink: tuple[float, ...]
    share: tuple[float, ...]
    null: tuple[float, ...]
    map_params: tuple[tuple[float, ...], ...] = ()
    seconds: float = 0.0

    def sorted_heads(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sink, share and null per head, heads in decreasing sink score."""
        order = np.argsort(-np.asarray(self.sink), kind="stable")
        return tuple(np.asarray(x)[order] for x in (self.sink, self.share, self.null))

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True)
class TrainedRow:
    """The runs of one (setting, map, heads), with means over seeds of the sorted heads."""

    setting: str
    kind: str
    heads: int
    runs: tuple[TrainedRun, ...] = field(repr=False)

    def _mean(self, i: int) -> np.ndarray:
        return np.mean([r.sorted_heads()[i] for r in self.runs], axis=0)

    @property
    def sink(self) -> np.ndarray:
        return self._mean(0)

    @property
    def share(self) -> np.ndarray:
        return self._mean(1)

    @property
    def null(self) -> np.ndarray:
        return self._mean(2)

    @property
    def error(self) -> float:
        """Median held-out error over seeds."""
        return float(np.median([r.error for r in self.runs]))


def _train_layer(setting: str, kind: str, heads: int, seed: int,
                 cfg: ExperimentConfig) -> TrainedRun:
    task = cfg.task("signed")
    trained = train(task, kind, heads, seed, cfg)
    held = task.sample(cfg.n_heldout, seed=HELDOUT_SEED)
    ev = evaluate(trained.model, held, eta=cfg.eta, progress=False)
    return TrainedRun(setting, kind, heads, seed, float(ev.max_error),
                      tuple(ev.sink_score.tolist()),
                      tuple(ev.bos_share_nontrigger.mean.tolist()),
                      tuple(ev.null_mass_nontrigger.mean.tolist()),
                      tuple(tuple(row) for row in trained.model.map_params.tolist()),
                      trained.seconds)


def _train_stack(setting: str, kind: str, heads: int, seed: int,
                 protocol: Protocol) -> TrainedRun:
    run = train_stack(kind, 1, heads, seed, protocol)
    mp = run.params.get("mp")
    params = () if mp is None else tuple(tuple(row) for row in np.asarray(mp)[0].tolist())
    return TrainedRun(setting, kind, heads, seed, float(run.max_abs_error),
                      tuple(run.bos_nontrigger[0]), tuple(run.bos_share_nontrigger[0]),
                      tuple(run.null_nontrigger[0]), params, run.wall_s)


def _job(job: tuple[str, str, int, int, bool]) -> TrainedRun:
    setting, kind, H, seed, quick = job
    preset = TRAINING[setting][1 if quick else 0]
    if isinstance(preset, ExperimentConfig):
        return _train_layer(setting, kind, H, seed, preset)
    return _train_stack(setting, kind, H, seed, preset)


def train_variants(kinds: Sequence[str] | None = None, settings: Sequence[str] = SETTINGS,
                   heads: Sequence[int] = HEADS, seeds: Sequence[int] = SEEDS,
                   quick: bool = False, on_run: Callable[[TrainedRun], None] | None = None,
                   processes: int = 1) -> list[TrainedRow]:
    """Train every (setting, map, heads, seed) (``processes`` worker processes; each run
    is seeded, so the result does not depend on it) and group the runs by (setting, map,
    heads); ``on_run`` sees each run as it finishes."""
    kinds = tuple(MAPS) if kinds is None else tuple(kinds)
    for k in kinds:
        if k not in MAPS:
            raise ValueError(f"unknown attention map {k!r}; expected one of {', '.join(MAPS)}")
    for s in settings:
        if s not in SETTINGS:
            raise ValueError(f"unknown setting {s!r}; expected one of {', '.join(SETTINGS)}")
    groups = [(s, k, H) for s in settings for k in kinds for H in heads]
    jobs = [(s, k, H, seed, quick) for s, k, H in groups for seed in seeds]
    done: dict[int, TrainedRun] = {}
    executor = SerialExecutor() if processes <= 1 else ProcessExecutor(processes)
    with executor:
        for i, result in executor.run(_job, jobs):
            if not result.ok:
                raise SinkproofError(f"training {jobs[i][:4]} failed: {result.error}")
            done[i] = result.value
            if on_run is not None:
                on_run(result.value)
    runs = [done[i] for i in range(len(jobs))]
    n = len(seeds)
    return [TrainedRow(s, k, H, tuple(runs[g * n:(g + 1) * n]))
            for g, (s, k, H) in enumerate(groups)]


def _vec(x: np.ndarray) -> str:
    return "[" + " ".join(f"{v:.2f}" for v in x) + "]"


def render_trained(rows: Sequence[TrainedRow]) -> str:
    """The rows as a text table (per head: decreasing sink score, mean over seeds)."""
    w = max([14, *(len(r.kind) + 1 for r in rows)])
    out = [f"{'setting':<8}{'map':<{w}}{'H':>2}  {'error':>7}  {'sink score per head':<26}"
           f"{'BOS share per head':<26}{'null score per head':<26}"]
    out.append("-" * len(out[0]))
    for r in rows:
        out.append(f"{r.setting:<8}{r.kind:<{w}}{r.heads:>2}  {r.error:>7.3f}  "
                   f"{_vec(r.sink):<26}{_vec(r.share):<26}{_vec(r.null):<26}".rstrip())
    return "\n".join(out)
