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
from dataclasses import replace
from typing import Any

import numpy as np

from ._validate import as_int
from .adversary import worst_content
from .evaluation import Evaluation, _null_share, head_shape
from .exact_numbers import bounded
from .numerics import stable_norm
from .progress import Progress
from .stack import StackModel
from .stats import Accumulator, Stats
from .work import EVALUATE_MAX_WORK, limit, product, refuse_beyond

DEFAULT_SAMPLES = 1000
"""Sequences drawn when a continuous family is evaluated (the paper's test-set size)."""

_MEASURES = ("bos_n", "bos_t", "lnb_n", "lnb_t", "share_n", "share_t", "null_n", "null_t")


StackEvaluation = Evaluation
"""The earlier name of :class:`~sinkproof.evaluation.Evaluation`, the one result type of
``evaluate`` (kept as an alias: ``isinstance(ev, StackEvaluation)`` holds for every result)."""


class _Tally:
    """Running worst error and per-(layer, head) measures at the last position of batches."""

    def __init__(self, model: StackModel, eta: float) -> None:
        self.shape = head_shape(model)  # the model's head index: (H,) or (layers, H)
        self.eta = eta
        # each (layer, head) row's map properties (a padded head has no weight: no null mass)
        self.props = [layer.heads[h].map.properties if h < len(layer.heads) else None
                      for layer in model.layers for h in range(model.H)]
        self.acc = {name: Accumulator(model.n_layers * model.H) for name in _MEASURES}
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

    def measures(self, w: np.ndarray, lnb: np.ndarray, null_keys: np.ndarray,
                 trig: np.ndarray, weight: np.ndarray) -> None:
        """``w`` ``(layers, H, N, K)`` weights at one query each, ``lnb`` ``(layers, H, N)``,
        ``null_keys`` ``(layers, H, N, K)`` the keys whose value has norm ``<= eta``."""
        LH = w.shape[0] * w.shape[1]
        w = w.reshape(LH, w.shape[2], w.shape[3])
        bos = w[..., 0]
        total = w.sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(total > 0, bos / np.where(total > 0, total, 1.0), 0.0)
        lnb = lnb.reshape(LH, -1)
        on_null = ((w * null_keys.reshape(w.shape)).sum(axis=-1) if null_keys.any()
                   else np.zeros_like(total))
        null = np.zeros_like(on_null)
        for r, props in enumerate(self.props):
            if props is not None:
                null[r] = _null_share(on_null[r], total[r], props)
        for suffix, mask in (("n", ~trig), ("t", trig)):
            if np.any(mask):
                wm = weight[mask]
                self.acc["bos_" + suffix].add(bos[:, mask], wm)
                self.acc["lnb_" + suffix].add(lnb[:, mask], wm)
                self.acc["share_" + suffix].add(share[:, mask], wm)
                self.acc["null_" + suffix].add(null[:, mask], wm)

    def stats(self, name: str) -> Stats:
        s = self.acc[name].stats()
        return Stats(s.min.reshape(self.shape), s.mean.reshape(self.shape),
                     s.max.reshape(self.shape), s.count)


def evaluate_stack(model: StackModel, sequences: Iterable[Any] | None = None, *,
                   samples: int | None = None, seed: int | None = 0, search: int = 0,
                   max_rows: int = 1 << 13, progress: bool | None = None,
                   eta: float = 1e-9, max_work: int | None = None) -> Evaluation:
    """Evaluate a stack: exhaustively over a finite family (default), or on ``sequences``
    (user-facing sequences of the task), or on ``samples`` seeded draws (the default on
    continuous content, with ``DEFAULT_SAMPLES``).  ``search > 0`` (continuous paper
    content) adds an adversarial content search from that many seeded starts.  ``eta``: a
    key is null where its value has norm ``<= eta`` (the null mass).  ``max_work``: the
    most prefixes run through the stack (the family's distinct prefixes, or the samples'
    positions) before it refuses to start (default
    :data:`~sinkproof.work.EVALUATE_MAX_WORK`); given sequences are the caller's own."""
    if not isinstance(model, StackModel):
        raise TypeError(f"model must be a StackModel, got {type(model).__name__}")
    task = model.task
    max_rows = as_int("max_rows", max_rows, minimum=1)
    eta = float(bounded(eta, "eta", 0))
    search = as_int("search", search, minimum=0)
    if search and task.finite:
        raise ValueError("search= is for continuous content; a finite family is exhaustive")
    bound = limit(max_work, EVALUATE_MAX_WORK)
    if sequences is None and samples is None and task.finite:
        refuse_beyond("prefixes to run through the stack", _family_prefixes(task, bound),
                      bound, EVALUATE_MAX_WORK)
        return _exhaustive(model, max_rows, progress, eta)
    if sequences is None:
        n = DEFAULT_SAMPLES if samples is None else as_int("samples", samples, minimum=1)
        refuse_beyond("prefixes to run through the stack (sampled sequences x positions)",
                      product(n, task.max_depth + 1), bound, EVALUATE_MAX_WORK)
        sequences = task.sample(n, seed)
        result = _explicit(model, sequences, "sampled", seed, progress, eta)
        if search:
            found = worst_content(model, starts=search, seed=0 if seed is None else seed + 1)
            result = replace(result, adversarial=found)
        return result
    if samples is not None or search:
        raise ValueError("give either sequences or samples/search, not both")
    return _explicit(model, sequences, "given", None, progress, eta)


def _family_prefixes(task: Any, cap: int) -> int:
    """The family's distinct prefixes in closed form (capped just beyond ``cap``); a task
    that does not count them gives its (sequence, position) pairs, which bound them."""
    count = getattr(task, "n_prefixes_at_most", None)
    return count(cap) if count is not None else min(task.n_positions, cap + 1)


def _result(model: StackModel, tally: _Tally, n_seq: int, n_prefixes: int,
            source: str, seed: int | None) -> Evaluation:
    return Evaluation(
        model=model, max_error=tally.worst_err, worst=tally.worst,
        worst_output=tally.worst_out, worst_target=tally.worst_tgt,
        bos_nontrigger=tally.stats("bos_n"), bos_trigger=tally.stats("bos_t"),
        log_nonbos_nontrigger=tally.stats("lnb_n"), log_nonbos_trigger=tally.stats("lnb_t"),
        bos_share_nontrigger=tally.stats("share_n"), bos_share_trigger=tally.stats("share_t"),
        null_mass_nontrigger=tally.stats("null_n"), null_mass_trigger=tally.stats("null_t"),
        eta=tally.eta,
        n_sequences=n_seq, n_positions=tally.n_positions, n_prefixes=n_prefixes,
        source=source, seed=seed)


def _exhaustive(model: StackModel, max_rows: int, progress: bool | None,
                eta: float) -> Evaluation:
    task = model.task
    tally = _Tally(model, eta)
    n_seq = task.n_sequences
    empty = np.zeros((1, 0), dtype=np.int64)
    fw = model.forward_batch(task.prefix_features(empty))
    # position 0 is named in a real sequence of the family: the first prefix of depth 1
    # (as the tabulated path does), not the empty prefix, which no task accepts as a sequence
    first = (next(iter(task.prefix_blocks(1, max_rows=1))).codes[:1] if task.max_depth >= 1
             else empty)
    tally.error(fw.out[:, -1], task.prefix_targets(empty), np.array([float(n_seq)]),
                lambda i: (task.decode(first[0]), 0))
    n_prefixes = 1
    depths = range(1, task.max_depth + 1)
    with Progress(float(task.max_depth), "evaluate", progress) as bar:
        for t in depths:
            for block in task.prefix_blocks(t, max_rows=max_rows):
                codes = block.codes
                weight = np.full(codes.shape[0], float(block.multiplicity))
                fw = model.forward_batch(task.prefix_features(codes), null_eta=eta)
                tally.error(fw.out[:, -1], task.prefix_targets(codes), weight,
                            lambda i, c=codes, t=t: (task.decode(c[i]), t))
                tally.measures(fw.w[:, :, :, -1, :], fw.log_nonbos[:, :, :, -1],
                               fw.null_keys, task.is_trigger(codes[:, -1]), weight)
                n_prefixes += codes.shape[0]
            bar.update(1.0)
    return _result(model, tally, n_seq, n_prefixes, "exhaustive", None)


def _explicit(model: StackModel, sequences: Iterable[Any], source: str, seed: int | None,
              progress: bool | None, eta: float) -> Evaluation:
    task = model.task
    seqs = list(sequences)
    if not seqs:
        raise ValueError("sequences is empty: give at least one sequence")
    by_len: dict[int, list[int]] = {}
    rows = [task.features(s) for s in seqs]
    for i, r in enumerate(rows):
        by_len.setdefault(r.shape[0], []).append(i)
    tally = _Tally(model, eta)
    with Progress(float(len(seqs)), "evaluate", progress) as bar:
        for T, idx in by_len.items():
            x = np.stack([rows[i] for i in idx])
            y = np.stack([task.targets(seqs[i]) for i in idx])
            trig = np.stack([task.trigger_mask(seqs[i]) for i in idx])
            fw = model.forward_batch(x, null_eta=eta)
            N = len(idx)
            ones = np.ones(N)
            for t in range(T):
                tally.error(fw.out[:, t], y[:, t], ones,
                            lambda i, t=t, idx=idx: (seqs[idx[i]], t))
                if t >= 1:
                    tally.measures(fw.w[:, :, :, t, : t + 1], fw.log_nonbos[:, :, :, t],
                                   fw.null_keys[:, :, :, : t + 1], trig[:, t], ones)
            bar.update(float(N))
    n_positions = sum(r.shape[0] for r in rows)
    return _result(model, tally, len(seqs), n_positions, source, seed)
