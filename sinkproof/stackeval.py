"""Error and attention measures of a layer stack over its task's family, or a sample of it.

On a finite vocabulary the evaluation is **exhaustive**: every distinct prefix of the
family is run once and its last position stands for every (sequence, position) pair
that shares it (its multiplicity), so the maximum error is the maximum over the whole
family.  On continuous content there is no finite family: the evaluation runs a stated
number of **seeded sampled** sequences, and its maximum error is a lower estimate of
the supremum over the family, never a certified value.  Both say which they are.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ._validate import as_int
from .adversary import WorstCase, worst_content
from .numerics import stable_norm
from .progress import Progress
from .stack import StackModel
from .stats import Accumulator, SinkSummary, Stats

DEFAULT_SAMPLES = 1000
"""Sequences drawn when a continuous family is evaluated (the paper's test-set size)."""

_MEASURES = ("bos_n", "bos_t", "lnb_n", "lnb_t", "share_n", "share_t")


@dataclass(frozen=True)
class StackEvaluation(SinkSummary):
    """Measures of a stack over a family (exhaustive) or over seeded samples of it.

    ``max_error``: ``max ||f_t - y_t||_2`` over every position evaluated (0 included),
    at ``worst`` = (sequence in the task's user-facing form, position).  Per layer and
    head (arrays ``(layers, H)``), at non-trigger / trigger positions ``t >= 1``:
    ``bos_*`` the BOS weight ``α_{t0}``; ``log_nonbos_*`` ``log Σ_{j>=1} α_tj`` (log
    domain); ``bos_share_*`` ``α_{t0} / Σ_j α_tj`` (0 where every weight vanishes).
    ``source``: ``"exhaustive"`` (the whole family), ``"sampled"`` (``n_sequences``
    seeded draws, ``seed``) or ``"given"``; off the whole family ``max_error`` is only a
    lower estimate of the worst case.  ``adversarial``: on request (``search=``), the
    worst sequence an adversarial content search found (also a lower estimate; the
    larger of the two is ``worst_error``).
    """

    model: StackModel
    max_error: float
    worst: tuple[Any, int]
    worst_output: np.ndarray
    worst_target: np.ndarray
    bos_nontrigger: Stats
    bos_trigger: Stats
    log_nonbos_nontrigger: Stats
    log_nonbos_trigger: Stats
    bos_share_nontrigger: Stats
    bos_share_trigger: Stats
    n_sequences: int
    n_positions: float
    n_prefixes: int
    source: str
    seed: int | None = None
    adversarial: WorstCase | None = None

    @property
    def worst_error(self) -> float:
        """The largest error found, by the evaluation or the adversarial search."""
        extra = self.adversarial.max_error if self.adversarial is not None else -1.0
        return max(self.max_error, extra)

    @property
    def exhaustive(self) -> bool:
        """The whole family was evaluated (``source == "exhaustive"``)."""
        return self.source == "exhaustive"

    @property
    def method(self) -> str:
        """What the figures are: exhaustive over the family, a seeded sample, or given."""
        if self.exhaustive:
            return f"exhaustive over the family ({self.n_sequences} sequences)"
        what = (f"sampled: {self.n_sequences} seeded sequences (seed {self.seed})"
                if self.source == "sampled" else f"{self.n_sequences} given sequences")
        if self.adversarial is not None:
            what += f" plus an {self.adversarial.method.split(':')[0]}"
        return f"{what}; the max error is a lower estimate of the worst case, not certified"

    def summary(self) -> dict[str, Any]:
        """The figures as plain Python values (for JSON)."""
        return dict(
            kind=self.model.kind, layers=self.model.n_layers, heads=self.model.H,
            residual=self.model.residual, max_error=self.max_error,
            source=self.source, method=self.method, seed=self.seed,
            worst_error=self.worst_error,
            worst_position=self.worst[1], sink_score=self.sink_score.tolist(),
            bos_nontrigger=self.bos_nontrigger.to_dict(), bos_trigger=self.bos_trigger.to_dict(),
            log_nonbos_nontrigger=self.log_nonbos_nontrigger.to_dict(),
            bos_share_nontrigger=self.bos_share_nontrigger.to_dict(),
            n_sequences=self.n_sequences, n_positions=self.n_positions,
            n_prefixes=self.n_prefixes,
        )

    def __repr__(self) -> str:
        f = lambda a: np.array2string(np.asarray(a), precision=4)  # noqa: E731
        return (f"StackEvaluation({self.model.kind}, layers={self.model.n_layers}, "
                f"H={self.model.H}: max_error={self.max_error:.6g} at t={self.worst[1]}, "
                f"sink_score={f(self.sink_score)}; {self.method})")


class _Tally:
    """Running worst error and per-(layer, head) measures at the last position of batches."""

    def __init__(self, layers: int, heads: int) -> None:
        self.shape = (layers, heads)
        self.acc = {name: Accumulator(layers * heads) for name in _MEASURES}
        self.worst_err = -1.0
        self.worst: tuple[Any, int] = (None, 0)
        self.worst_out = self.worst_tgt = np.zeros(0)
        self.n_positions = 0.0

    def error(self, out: np.ndarray, target: np.ndarray, weight: np.ndarray,
              where: Any) -> None:
        """Errors ``(N,)`` of outputs at one position each; ``where(i)`` names row ``i``."""
        err = stable_norm(out - target)
        i = int(np.argmax(err))
        if err[i] > self.worst_err:
            self.worst_err = float(err[i])
            self.worst = where(i)
            self.worst_out, self.worst_tgt = out[i].copy(), target[i].copy()
        self.n_positions += float(weight.sum())

    def measures(self, w: np.ndarray, lnb: np.ndarray, trig: np.ndarray,
                 weight: np.ndarray) -> None:
        """``w`` ``(layers, H, N, K)`` weights at one query each, ``lnb`` ``(layers, H, N)``."""
        LH = self.shape[0] * self.shape[1]
        w = w.reshape(LH, w.shape[2], w.shape[3])
        bos = w[..., 0]
        total = w.sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(total > 0, bos / np.where(total > 0, total, 1.0), 0.0)
        lnb = lnb.reshape(LH, -1)
        for suffix, mask in (("n", ~trig), ("t", trig)):
            if np.any(mask):
                wm = weight[mask]
                self.acc["bos_" + suffix].add(bos[:, mask], wm)
                self.acc["lnb_" + suffix].add(lnb[:, mask], wm)
                self.acc["share_" + suffix].add(share[:, mask], wm)

    def stats(self, name: str) -> Stats:
        s = self.acc[name].stats()
        return Stats(s.min.reshape(self.shape), s.mean.reshape(self.shape),
                     s.max.reshape(self.shape), s.count)


def evaluate_stack(model: StackModel, sequences: Iterable[Any] | None = None, *,
                   samples: int | None = None, seed: int | None = 0, search: int = 0,
                   max_rows: int = 1 << 13, progress: bool | None = None) -> StackEvaluation:
    """Evaluate a stack: exhaustively over a finite family (default), or on ``sequences``
    (user-facing sequences of the task), or on ``samples`` seeded draws (the default on
    continuous content, with ``DEFAULT_SAMPLES``).  ``search > 0`` (continuous paper
    content) adds an adversarial content search from that many seeded starts."""
    if not isinstance(model, StackModel):
        raise TypeError(f"model must be a StackModel, got {type(model).__name__}")
    task = model.task
    max_rows = as_int("max_rows", max_rows, minimum=1)
    search = as_int("search", search, minimum=0)
    if search and task.finite:
        raise ValueError("search= is for continuous content; a finite family is exhaustive")
    if sequences is None and samples is None and task.finite:
        return _exhaustive(model, max_rows, progress)
    if sequences is None:
        n = DEFAULT_SAMPLES if samples is None else as_int("samples", samples, minimum=1)
        sequences = task.sample(n, seed)
        result = _explicit(model, sequences, "sampled", seed, progress)
        if search:
            found = worst_content(model, starts=search, seed=0 if seed is None else seed + 1)
            result = replace(result, adversarial=found)
        return result
    if samples is not None or search:
        raise ValueError("give either sequences or samples/search, not both")
    return _explicit(model, sequences, "given", None, progress)


def _result(model: StackModel, tally: _Tally, n_seq: int, n_prefixes: int,
            source: str, seed: int | None) -> StackEvaluation:
    return StackEvaluation(
        model=model, max_error=tally.worst_err, worst=tally.worst,
        worst_output=tally.worst_out, worst_target=tally.worst_tgt,
        bos_nontrigger=tally.stats("bos_n"), bos_trigger=tally.stats("bos_t"),
        log_nonbos_nontrigger=tally.stats("lnb_n"), log_nonbos_trigger=tally.stats("lnb_t"),
        bos_share_nontrigger=tally.stats("share_n"), bos_share_trigger=tally.stats("share_t"),
        n_sequences=n_seq, n_positions=tally.n_positions, n_prefixes=n_prefixes,
        source=source, seed=seed)


def _exhaustive(model: StackModel, max_rows: int, progress: bool | None) -> StackEvaluation:
    task = model.task
    tally = _Tally(model.n_layers, model.H)
    n_seq = task.n_sequences
    empty = np.zeros((1, 0), dtype=np.int64)
    fw = model.forward_batch(task.prefix_features(empty))
    tally.error(fw.out[:, -1], task.prefix_targets(empty), np.array([float(n_seq)]),
                lambda i: (task.decode(empty[i]), 0))
    n_prefixes = 1
    depths = range(1, task.max_depth + 1)
    with Progress(float(task.max_depth), "evaluate", progress) as bar:
        for t in depths:
            for block in task.prefix_blocks(t, max_rows=max_rows):
                codes = block.codes
                weight = np.full(codes.shape[0], float(block.multiplicity))
                fw = model.forward_batch(task.prefix_features(codes))
                tally.error(fw.out[:, -1], task.prefix_targets(codes), weight,
                            lambda i, c=codes, t=t: (task.decode(c[i]), t))
                tally.measures(fw.w[:, :, :, -1, :], fw.log_nonbos[:, :, :, -1],
                               task.is_trigger(codes[:, -1]), weight)
                n_prefixes += codes.shape[0]
            bar.update(1.0)
    return _result(model, tally, n_seq, n_prefixes, "exhaustive", None)


def _explicit(model: StackModel, sequences: Iterable[Any], source: str, seed: int | None,
              progress: bool | None) -> StackEvaluation:
    task = model.task
    seqs = list(sequences)
    if not seqs:
        raise ValueError("sequences is empty: give at least one sequence")
    by_len: dict[int, list[int]] = {}
    rows = [task.features(s) for s in seqs]
    for i, r in enumerate(rows):
        by_len.setdefault(r.shape[0], []).append(i)
    tally = _Tally(model.n_layers, model.H)
    with Progress(float(len(seqs)), "evaluate", progress) as bar:
        for T, idx in by_len.items():
            x = np.stack([rows[i] for i in idx])
            y = np.stack([task.targets(seqs[i]) for i in idx])
            trig = np.stack([task.trigger_mask(seqs[i]) for i in idx])
            fw = model.forward_batch(x)
            N = len(idx)
            ones = np.ones(N)
            for t in range(T):
                tally.error(fw.out[:, t], y[:, t], ones,
                            lambda i, t=t, idx=idx: (seqs[idx[i]], t))
                if t >= 1:
                    tally.measures(fw.w[:, :, :, t, : t + 1], fw.log_nonbos[:, :, :, t],
                                   trig[:, t], ones)
            bar.update(float(N))
    n_positions = sum(r.shape[0] for r in rows)
    return _result(model, tally, len(seqs), n_positions, source, seed)
