"""Run a sweep: expand the grid, take what the cache has, run the rest on an executor,
and collect one tidy table (one row per job: its settings, outcome fields and status)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..executor import Executor, JobResult, make_executor
from ..progress import Progress
from ..tables import Tabular
from .cache import Cache, job_key
from .documents import EVIDENCE
from .evidence import recheck
from .grid import Sweep, SweepError, load_sweep, refuse_too_many, sweep_from_dict
from .inputs import job_inputs, pin_certificate, resolve_paths
from .jobs import JOB_KINDS
from .output import OutputFolder, output_names, write_outputs


@dataclass
class SweepResult(Tabular):
    """The rows of a sweep (one dict per job, in grid order), how many jobs were computed
    now and how many came from the cache, and whether Ctrl-C cut it short."""

    sweep: Sweep
    rows: list[dict[str, Any]]
    computed: int = 0
    cached: int = 0
    failed: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    files: list[str] = field(default_factory=list)
    rechecks: list[str] = field(default_factory=list)
    """One line per cached result that did not verify again (and was computed again)."""

    @property
    def columns(self) -> list[str]:
        """Column names: job, swept axes, other settings, outcome fields, status."""
        head = ["job", "key", *self.sweep.axes]
        seen = dict.fromkeys(head)
        for row in self.rows:
            seen.update(dict.fromkeys(row))
        tail = ["status", "failure", "seconds", "cached"]
        return [c for c in seen if c not in tail] + tail

    def summary_line(self) -> str:
        """The last line a sweep prints: jobs computed and taken from the cache."""
        text = (f"sweep {self.sweep.name}: {len(self.rows)} jobs, {self.computed} computed, "
                f"{self.cached} from cache, {self.failed} failed")
        return text + (" (interrupted: finished jobs kept)" if self.interrupted else "")

    def to_records(self) -> list[dict[str, Any]]:
        """One row per job, in grid order (:attr:`rows`)."""
        return [dict(row) for row in self.rows]

    def table_columns(self) -> list[str]:
        return self.columns

    def to_pandas(self) -> Any:
        """The same as :meth:`to_dataframe` (the earlier name)."""
        return self.to_dataframe()

    def __repr__(self) -> str:
        return f"SweepResult({self.summary_line()})"


def _row(index: int, key: str, settings: Mapping[str, Any], result: JobResult | None,
         outcome: Mapping[str, Any] | None, cached: bool, seconds: float = 0.0
         ) -> dict[str, Any]:
    row: dict[str, Any] = {"job": index, "key": key[:16], **settings}
    if outcome is not None:
        row.update(outcome)
    if result is None:
        row.update(status="ok" if outcome is not None else "not run", failure="",
                   seconds=round(seconds, 3))
    else:
        row.update(status="ok" if result.ok else "failed", failure=result.error,
                   seconds=round(result.seconds, 3))
    row["cached"] = cached
    return row


def _job(arg: tuple[str, dict[str, Any], str | None]) -> dict[str, Any]:
    """Worker side: run one job (its own folder for the files it writes)."""
    kind, settings, workdir = arg
    folder = None
    if workdir is not None:
        folder = Path(workdir)
        folder.mkdir(parents=True, exist_ok=True)
    return JOB_KINDS[kind].run(dict(settings), folder)


def _split(value: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A job's outcome fields and its evidence (:data:`~.evidence.EVIDENCE`)."""
    outcome = dict(value)
    evidence = outcome.pop(EVIDENCE, None)
    return outcome, evidence if isinstance(evidence, dict) else {}


def run_sweep(spec: Sweep | Mapping[str, Any] | str | Path, out: str | Path | None = None, *,
              executor: Executor | str = "dask", workers: int | None = None,
              scheduler: str | None = None, figures: bool = True,
              progress: bool | None = None,
              announce: Callable[[str], None] | None = None,
              max_jobs: int | None = None) -> SweepResult:
    """Run every job of ``spec`` (a :class:`Sweep`, its dict, or a sweep file).

    With ``out``, finished jobs are cached in ``out/cache`` (a rerun computes only what
    is missing) and the table is written to ``out/results.parquet`` and
    ``out/results.csv``, with ``out/summary.md`` and a plot per swept axis
    (``figures=True``, matplotlib installed).  ``executor``: ``"dask"`` (an embedded
    ``LocalCluster`` of ``workers`` processes, or the cluster at ``scheduler``),
    ``"processes"``, ``"serial"``, or an :class:`~sinkproof.executor.Executor`.
    Results are the same whatever runs them.  A failed job is recorded with its error
    and the sweep goes on; Ctrl-C keeps every finished job and marks the result.
    Input paths are relative to the sweep file (a dict: to the current folder); files
    are written only under ``out``, never over a file no sweep wrote there.
    ``announce`` receives one line naming the executor before the first job runs.
    A sweep that expands to more than ``max_jobs`` jobs (default
    :data:`~sinkproof.sweep.MAX_JOBS`, the CLI's ``--max-jobs``) is refused before any
    job is built (:class:`~sinkproof.errors.WorkLimitError`).
    """
    if isinstance(spec, Sweep):
        sweep = spec
        refuse_too_many(sweep, max_jobs)
    elif isinstance(spec, Mapping):
        sweep = sweep_from_dict(spec, max_jobs=max_jobs)
    elif isinstance(spec, (str, Path)):
        sweep = load_sweep(spec, max_jobs=max_jobs)
    else:
        raise SweepError(f"a sweep is a Sweep, a dict or a file path, not {type(spec).__name__}")
    kind = JOB_KINDS[sweep.kind]
    out_dir = None if out is None else Path(out)
    if out_dir is not None:  # refuse before any work, not after it
        OutputFolder(out_dir).check(output_names(sweep, figures))
    cache = Cache(None if out_dir is None else out_dir / "cache")
    start = time.perf_counter()

    jobs = [kind.full(s) for s in sweep.jobs()]  # as written: the table shows these
    runs = [pin_certificate(resolve_paths(s, sweep.root)) if sweep.kind == "check"
            else resolve_paths(s, sweep.root) for s in jobs]  # what each job reads
    keyed = [job_inputs(sweep.kind, s) for s in runs]
    keys = [job_key(sweep.kind, s) for s in keyed]
    rows: list[dict[str, Any] | None] = [None] * len(jobs)
    todo: list[int] = []
    rechecks: list[str] = []
    for i, key in enumerate(keys):
        hit = cache.get(key, sweep.kind, keyed[i])
        why = None if hit is None else recheck(sweep.kind, runs[i], hit[0], hit[2])
        if hit is None or why is not None:
            if why is not None:
                rechecks.append(f"job {i}: the cached result did not verify again ({why}); "
                                "computed again")
            todo.append(i)
        else:
            rows[i] = _row(i, key, jobs[i], None, hit[0], cached=True, seconds=hit[1])
    result = SweepResult(sweep, [], cached=len(jobs) - len(todo), rechecks=rechecks)

    if todo:
        own = isinstance(executor, str)
        ex = make_executor(executor, workers, scheduler) if own else executor
        assert isinstance(ex, Executor)
        if announce is not None:
            announce(ex.describe())
        args = [(sweep.kind, runs[i],
                 None if out_dir is None else str(out_dir / "jobs" / keys[i][:16]))
                for i in todo]
        try:
            with Progress(len(todo), f"sweep {sweep.name}", progress, threshold=0) as bar:
                for j, res in ex.run(_job, args):
                    i = todo[j]
                    outcome, evidence = _split(res.value) if res.ok else (None, {})
                    if res.ok:
                        cache.put(keys[i], sweep.kind, keyed[i], outcome, res.seconds,
                                  evidence)
                        result.computed += 1
                    else:
                        result.failed += 1
                    rows[i] = _row(i, keys[i], jobs[i], res, outcome, cached=False)
                    bar.update(1, f"job {i}")
        except KeyboardInterrupt:
            result.interrupted = True
            if own:
                ex.stop()
        except BaseException:
            if own:
                ex.stop()
            raise
        else:
            if own:
                ex.close()
    result.rows = [r if r is not None else _row(i, keys[i], jobs[i], None, None, False)
                   for i, r in enumerate(rows)]
    result.seconds = time.perf_counter() - start
    if out_dir is not None:
        # after Ctrl-C the finished rows are written as CSV (the cache keeps them too), but
        # no figure and no Parquet file: importing matplotlib or pyarrow takes seconds
        result.files = write_outputs(result, out_dir, figures=figures and not result.interrupted,
                                     parquet=not result.interrupted)
    return result


def is_number(value: Any) -> bool:
    """A finite real number (not a bool)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))
