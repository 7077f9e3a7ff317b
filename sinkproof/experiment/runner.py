"""The experiment: train every (content, kind, heads, seed), measure, tabulate, draw; and
every (seed, layers x heads, map) stack trained with a protocol (:func:`run_protocol`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._validate import as_int
from ..errors import Interrupted
from ..executor import ProcessExecutor
from ..model import AttentionModel
from ..progress import Progress
from ..tables import Tabular
from ..work import EXPERIMENT_MAX_WORK, refuse_beyond
from .config import (
    HELDOUT_SEED,
    LONGER_SEED,
    PAPER_PROTOCOL,
    ExperimentConfig,
    Protocol,
    token_steps,
)
from .figures import attention_heatmaps, bos_over_training, protocol_figures
from .measure import RunResult, StackRun, evaluate_stack, longer_sequences, measure
from .table import (
    aggregate,
    exemplar,
    protocol_table,
    summary_markdown,
    theory_markdown,
    violations,
)
from .train import fit_stack, train


@dataclass(frozen=True)
class ExperimentResult(Tabular):
    """The runs of one experiment, its configuration and wall time.

    ``runs``: one :class:`RunResult` per trained model; ``models``: the trained
    :class:`AttentionModel` objects in the same order; ``violations``: positions
    where a model broke a proved bound (0 unless there is a bug).
    """

    config: ExperimentConfig
    runs: list[RunResult]
    models: list[AttentionModel] = field(repr=False)
    seconds: float

    @property
    def violations(self) -> int:
        return violations(self.runs)

    def to_records(self) -> list[dict[str, Any]]:
        """One row per run: its settings and scalar measures, per-head measures as lists
        (:meth:`RunResult.record`)."""
        return [run.record() for run in self.runs]

    def table(self) -> list[dict[str, Any]]:
        """Mean, standard deviation, min and max over seeds per (content, kind, heads)."""
        return aggregate(self.runs)

    def markdown(self) -> str:
        """``results.md``: the summary table, the theory table and the settings."""
        cfg = self.config
        return "\n".join([
            f"Task: p={cfg.p}, T={cfg.T}, inverse positions, learned values; "
            f"Adam lr={cfg.lr}, {cfg.steps} steps, batch {cfg.batch_size} of {cfg.n_train} "
            f"training sequences; seeds {list(cfg.seeds)}; {len(self.runs)} runs in "
            f"{self.seconds:.0f} s.",
            "",
            "Mean ± standard deviation over seeds:",
            "",
            summary_markdown(self.runs),
            "",
            "Against the theory (single-head softmax: Theorems 1 and 3 at each model's own "
            f"error; ReLU: Theorem 4's zero). Violations in total: {self.violations}.",
            "",
            theory_markdown(self.runs),
            "",
        ])

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def __repr__(self) -> str:
        return (f"ExperimentResult({len(self.runs)} runs, p={self.config.p}, T={self.config.T}, "
                f"{self.seconds:.1f} s, violations={self.violations})")

    def write(self, out: str | Path, figures: bool = True) -> list[Path]:
        """Write results.json (the runs), results.md, config.json, models.json and figures."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        written = []

        def dump(name: str, data: Any, indent: int | None = 1) -> None:
            path = out / name
            path.write_text(json.dumps(data, indent=indent, allow_nan=True) + "\n")
            written.append(path)

        dump("results.json", [r.to_dict() for r in self.runs])
        dump("config.json", dict(config=self.config.to_dict(), seconds=self.seconds,
                                 heldout_seed=HELDOUT_SEED, longer_seed=LONGER_SEED,
                                 table=self.table()))
        dump("models.json", [m.to_dict() for m in self.models], indent=None)
        (out / "results.md").write_text(self.markdown())
        written.append(out / "results.md")
        if figures:
            written.append(bos_over_training(self.runs, out / "bos_training.png"))
            written.append(attention_heatmaps(self.heatmap_models(), out / "heatmaps.png"))
        return written

    @classmethod
    def load(cls, out: str | Path) -> ExperimentResult:
        """Read back what :meth:`write` wrote to ``out`` (results, configuration, models)."""
        out = Path(out)
        try:
            runs = json.loads((out / "results.json").read_text())
            meta = json.loads((out / "config.json").read_text())
            models = json.loads((out / "models.json").read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{out}: not an experiment output folder ({exc})") from None
        if not isinstance(runs, list) or len(runs) != len(models) or "config" not in meta:
            raise ValueError(f"{out}: results.json, models.json and config.json do not match")
        return cls(ExperimentConfig.from_dict(meta["config"]),
                   [RunResult.from_dict(r) for r in runs],
                   [AttentionModel.from_dict(m) for m in models], float(meta["seconds"]))

    def heatmap_models(self) -> list[list[tuple[str, AttentionModel]]]:
        """Per attention kind and head count, the exemplar of the first content set: the
        first seed (in the configuration's order) whose run solves the task
        (:func:`~sinkproof.experiment.table.exemplar`), labelled with its held-out error.
        A run that did not learn (a dead ReLU head has error 1 and attends nowhere) is
        never shown as what "no sink" looks like: when no seed solved the setting, the
        first seed's model is shown labelled "did not solve"."""
        content = self.config.contents[0]
        rows = []
        for kind in self.config.kinds:
            row = []
            for heads in self.config.heads:
                pairs = [(run, model) for run, model in zip(self.runs, self.models)
                         if (run.content, run.kind, run.heads) == (content, kind, heads)]
                if not pairs:
                    continue
                found = exemplar([run for run, _ in pairs])
                run, model = pairs[0] if found is None else pairs[found]
                note = "" if found is not None else ", did not solve: no seed did"
                row.append((f"{kind} H={heads} seed {run.seed} (err {run.error:.2g}{note})",
                            model))
            rows.append(row)
        return rows


def _one_run(cfg: ExperimentConfig, content: str, kind: str, heads: int, seed: int,
             on_step: Callable[[int], None] | None = None) -> tuple[RunResult, AttentionModel]:
    """Train and measure one model (held-out and longer sequences are rebuilt from their seeds)."""
    task = cfg.task(content)
    heldout = task.sample(cfg.n_heldout, seed=HELDOUT_SEED)
    longer = longer_sequences(task, cfg.longer_T, cfg.n_longer, LONGER_SEED)
    trained = train(task, kind, heads, seed, cfg, on_step=on_step)
    return measure(trained, content, heldout, longer, cfg.longer_T, cfg.eta), trained.model


def _run_one(arg: tuple[Any, ...]) -> tuple[RunResult, AttentionModel]:
    """Worker side of :func:`run`: one training run from its settings."""
    return _one_run(*arg)


def _result(cfg: ExperimentConfig, done: dict[int, tuple[RunResult, AttentionModel]],
            start: float) -> ExperimentResult:
    results = [done[i] for i in sorted(done)]
    return ExperimentResult(cfg, [r for r, _ in results], [m for _, m in results],
                            time.perf_counter() - start)


def run(config: ExperimentConfig | None = None, *, out: str | Path | None = None,
        progress: bool | None = None, figures: bool = True, jobs: int = 1,
        max_work: int | None = None) -> ExperimentResult:
    """Train and measure every model of ``config`` (default :meth:`ExperimentConfig.default`).

    ``max_work``: the most token-steps (:func:`~sinkproof.experiment.config.token_steps`,
    default :data:`~sinkproof.work.EXPERIMENT_MAX_WORK`, the CLI's); beyond it the
    experiment is refused before any training (:class:`~sinkproof.errors.WorkLimitError`).

    ``jobs > 1`` trains that many models at a time in worker processes (results are
    identical: every run is seeded on its own).  With ``out``, also write
    results.json, results.md, config.json, models.json and (``figures=True``)
    heatmaps.png and bos_training.png there.  Ctrl-C raises
    :class:`~sinkproof.errors.Interrupted` whose ``partial`` holds the runs finished so far;
    with ``out`` they are written there first (without figures, which take seconds), so an
    interrupted experiment keeps what it finished (:meth:`ExperimentResult.load` reads it).
    """
    cfg = ExperimentConfig.default() if config is None else config
    if not isinstance(cfg, ExperimentConfig):
        raise TypeError(f"config must be an ExperimentConfig, got {type(cfg).__name__}")
    jobs = as_int("jobs", jobs, minimum=1)
    refuse_beyond("token-steps of training and evaluation", token_steps(cfg), max_work,
                  EXPERIMENT_MAX_WORK)
    settings = [(content, kind, heads, seed) for content in cfg.contents for kind in cfg.kinds
                for heads in cfg.heads for seed in cfg.seeds]
    start = time.perf_counter()
    done: dict[int, tuple[RunResult, AttentionModel]] = {}
    try:
        with Progress(cfg.n_runs * cfg.steps, "experiment", progress, threshold=0) as bar:
            if jobs == 1:
                for i, s in enumerate(settings):
                    note = "{} {} H={} seed={}".format(*s)
                    done[i] = _one_run(cfg, *s, on_step=lambda n, note=note: bar.update(n, note))
            else:
                with ProcessExecutor(jobs) as ex:
                    for i, res in ex.run(_run_one, [(cfg, *s) for s in settings]):
                        note = "{} {} H={} seed={}".format(*settings[i])
                        if not res.ok:
                            raise RuntimeError(f"training run {note} failed: {res.error}")
                        run_result, model = res.value
                        done[i] = (run_result, model.replace())  # read-only copies again
                        bar.update(cfg.steps, note)
    except KeyboardInterrupt:  # Ctrl-C: the runs finished so far, in the order of settings
        partial = _result(cfg, done, start)
        finished = f"{len(done)} of {len(settings)} runs finished"
        if out is not None and done:
            partial.write(out, figures=False)
            finished += f", written to {out}"
        raise Interrupted(partial, finished) from None
    result = _result(cfg, done, start)
    if out is not None:
        result.write(out, figures=figures)
    return result

# ------------------------------------------------ stacks trained with a protocol
def train_stack(kind: str, layers: int, heads: int, seed: int = 0,
                protocol: Protocol = PAPER_PROTOCOL) -> StackRun:
    """Train one stack with ``protocol`` (:func:`~sinkproof.experiment.train.fit_stack`) and
    evaluate it (:func:`~sinkproof.experiment.measure.evaluate_stack`)."""
    fit = fit_stack(kind, layers, heads, seed, protocol)
    return evaluate_stack(kind, layers, heads, seed, fit.params, protocol, steps=fit.steps,
                          stopped=fit.stopped, stop_error=fit.stop_error, wall_s=fit.wall_s,
                          lr=fit.lr)


def run_protocol(protocol: Protocol, configs: Sequence[tuple[int, int]], kinds: Sequence[str],
                 seeds: Sequence[int], out: str | Path, *, figures: bool = True,
                 on_run: Callable[[StackRun, str], None] | None = None
                 ) -> tuple[list[StackRun], dict[str, Path], dict[str, Any]]:
    """Train every (seed, configuration, map) with ``protocol`` and write what
    :func:`write_protocol_runs` writes to ``out``; ``on_run(run, line)`` after each.
    Returns the runs, the files and the run's settings.  Ctrl-C raises
    :class:`~sinkproof.errors.Interrupted` whose ``partial`` is the finished runs, written
    to ``out`` first (without figures, which take seconds), and whose ``progress`` says how
    many finished."""
    start = time.perf_counter()
    planned = [(seed, layers, heads, kind) for seed in seeds for layers, heads in configs
               for kind in kinds]
    runs: list[StackRun] = []

    def meta() -> dict[str, Any]:
        return {"seeds": list(seeds), "configs": [list(c) for c in configs],
                "kinds": list(kinds), "wall_s": time.perf_counter() - start}

    try:
        for seed, layers, heads, kind in planned:
            r = train_stack(kind, layers, heads, seed, protocol)
            runs.append(r)
            if on_run is not None:
                on_run(r, run_line(r))
    except KeyboardInterrupt:
        finished = f"{len(runs)} of {len(planned)} runs finished"
        if runs:
            write_protocol_runs(runs, Path(out), protocol,
                                {**meta(), "interrupted": finished}, figures_too=False)
            finished += f", written to {out}"
        raise Interrupted(runs, finished) from None
    info = meta()
    return runs, write_protocol_runs(runs, Path(out), protocol, info, figures_too=figures), info


def run_line(r: StackRun) -> str:
    """One trained stack in one line."""
    return (f"{r.kind:11s} {r.layers}x{r.heads} seed {r.seed}: {r.steps} steps "
            f"({'stopped' if r.stopped else 'step limit'}), test max abs error "
            f"{r.max_abs_error:.4g}, sinking heads per layer {r.sinks_per_layer}, "
            f"{r.wall_s:.1f} s")


def write_protocol_runs(runs: Sequence[StackRun], out: Path, protocol: Protocol,
                        meta: dict[str, Any], figures_too: bool = True) -> dict[str, Path]:
    """``results.json`` (runs and the protocol), ``table.md``, ``maps.npz`` and (with
    ``figures_too``) the figures."""
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.json"
    results.write_text(json.dumps([r.summary() for r in runs], indent=1) + "\n",
                       encoding="utf-8")
    (out / "protocol.json").write_text(json.dumps({**protocol.__dict__, **meta}, indent=1,
                                                  default=list) + "\n", encoding="utf-8")
    (out / "table.md").write_text(protocol_table(runs, protocol), encoding="utf-8")
    np.savez_compressed(out / "maps.npz", **{
        f"{r.kind}_{r.layers}x{r.heads}_s{r.seed}_{name}": getattr(r, name)
        for r in runs for name in ("mean_maps", "std_maps", "one_maps")})
    seeds = sorted({r.seed for r in runs})
    figs = protocol_figures(runs, out, protocol, seeds[0]) if seeds and figures_too else []
    return {"results": results, "table": out / "table.md", **{p.stem: p for p in figs}}
