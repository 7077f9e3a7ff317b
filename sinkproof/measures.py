"""The measures of docs/theory.md section 3, evaluated over a family of sequences.

``evaluate(model)`` runs the model exhaustively over the task's family (``S_T``
by default).  Work grows with the number of distinct prefixes, each weighted by
its multiplicity (how many (sequence, position) pairs share it), so means are
means over (sequence, position) pairs exactly as a per-sequence loop would give.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validate import as_int
from .attention import MapProperties
from .exact_numbers import bounded
from .kernel import forward_prefixes
from .model import AttentionModel
from .numerics import stable_norm
from .progress import Progress
from .stack import StackModel
from .stackeval import StackEvaluation, evaluate_stack
from .stats import Accumulator, SinkSummary, Stats
from .task import TriggerTask, show_sequence
from .treekernel import PrefixSummary, TreeChunk, summarise, supports_tree, tree_chunks
from .work import EVALUATE_MAX_WORK, refuse_beyond


@dataclass(frozen=True)
class Evaluation(SinkSummary):
    """Error and attention measures of one model over a family of sequences.

    ``max_error``: ``max ||f_t - y_t||`` over every position (0 included);
    ``worst``: a ``(sequence, position)`` where it occurs.  ``bos_*``: BOS weight
    ``α^h_{t0}`` at non-trigger / trigger positions ``t >= 1``; ``log_nonbos_*``:
    ``log Σ_{j>=1} α_{tj}`` computed in the log domain (``log(1 - α_{t0})`` on the
    simplex); ``bos_share_*``: ``α_{t0} / Σ_j α_{tj}`` (equal to BOS mass on the
    simplex; 0 where all weights vanish); ``null_mass_*``: weight on keys whose value
    has norm ``<= eta`` (BOS included) plus the null slot of maps that have one
    (virtual slot, closed gate); for unnormalised maps, its share of the total weight.
    """

    model: AttentionModel
    max_error: float
    worst: tuple[tuple[int, ...], int]
    worst_output: np.ndarray
    worst_target: np.ndarray
    bos_nontrigger: Stats
    bos_trigger: Stats
    log_nonbos_nontrigger: Stats
    log_nonbos_trigger: Stats
    bos_share_nontrigger: Stats
    bos_share_trigger: Stats
    null_mass_nontrigger: Stats
    null_mass_trigger: Stats
    n_sequences: int
    n_positions: float
    n_prefixes: int
    eta: float = field(default=1e-9)

    def summary(self) -> dict[str, object]:
        """The figures as plain Python values (for JSON)."""
        return dict(
            kind=self.model.kind,
            heads=self.model.H,
            values=self.model.values,
            norm=self.model.spectral_norms.tolist(),
            max_error=self.max_error,
            worst=dict(sequence=list(self.worst[0]), position=self.worst[1]),
            sink_score=self.sink_score.tolist(),
            bos_nontrigger=self.bos_nontrigger.to_dict(),
            bos_trigger=self.bos_trigger.to_dict(),
            log_nonbos_nontrigger=self.log_nonbos_nontrigger.to_dict(),
            bos_share_nontrigger=self.bos_share_nontrigger.to_dict(),
            null_mass_nontrigger=self.null_mass_nontrigger.to_dict(),
            n_sequences=self.n_sequences,
            n_positions=self.n_positions,
            n_prefixes=self.n_prefixes,
        )

    @property
    def max_nonbos_nontrigger(self) -> np.ndarray:
        """Per head, the largest ``1 - α_{t0}`` at non-trigger positions (from the log domain;
        resolves deep sinks where ``sink_score`` rounds to 1)."""
        return np.exp(self.log_nonbos_nontrigger.max)

    def __repr__(self) -> str:
        seq, pos = self.worst
        f = lambda a: np.array2string(a, precision=6)  # noqa: E731
        props = self.model.attention_map.properties
        deep = (f", max 1-α0={np.array2string(self.max_nonbos_nontrigger, precision=3)}"
                if props.on_simplex else "")
        share = (f", BOS share={f(self.bos_share_nontrigger.mean)}"
                 if _unnormalised(props) else "")
        return (
            f"Evaluation({self.model.kind}, H={self.model.H}: max_error={self.max_error:.6g} "
            f"at {show_sequence(seq)}[t={pos}], sink_score={f(self.sink_score)}{deep}{share}, "
            f"BOS at triggers max={f(self.bos_trigger.max)}, "
            f"{self.n_sequences} sequences / {self.n_positions:g} positions)"
        )

    def _repr_markdown_(self) -> str:
        relu = _unnormalised(self.model.attention_map.properties)
        # Unnormalised weights (ReLU, sigmoid): the comparable figure is the BOS share.
        bos = self.bos_share_nontrigger if relu else self.bos_nontrigger
        label = "BOS share" if relu else "BOS mass"
        rows = [f"| head | sink score | {label} min (non-trig) | max 1-α0 (non-trig) | "
                f"{label} max (trigger) | null mass |", "|---|---|---|---|---|---|"]
        trig = self.bos_share_trigger if relu else self.bos_trigger
        for h in range(self.model.H):
            rows.append(
                f"| {h} | {self.sink_score[h]:.6g} | {bos.min[h]:.6g} | "
                f"{self.max_nonbos_nontrigger[h]:.3g} | {trig.max[h]:.6g} | "
                f"{self.null_mass_nontrigger.mean[h]:.6g} |"
            )
        seq, pos = self.worst
        head = (f"**{self.model.kind}**, H={self.model.H}: max error **{self.max_error:.6g}** "
                f"at `{show_sequence(seq)}`, t={pos}; {self.n_sequences} sequences, "
                f"{self.n_positions:g} positions ({self.n_prefixes} distinct prefixes)\n\n")
        return head + "\n".join(rows)


def _unnormalised(props: MapProperties) -> bool:
    """Weights neither on the simplex nor completed by a null slot (ReLU, sigmoid)."""
    return not props.on_simplex and not props.null_slot


def family_prefix_blocks(
    task: TriggerTask, max_rows: int = 1 << 15
) -> Iterator[tuple[int, np.ndarray, float]]:
    """``(t, codes (N, t), multiplicity)`` for every prefix of the task's family, in chunks."""
    for t in range(1, task.T + 1):
        for block in task.prefix_blocks(t, max_rows=max_rows):
            yield t, block.codes, block.multiplicity


def explicit_prefix_blocks(
    task: TriggerTask, sequences: Iterable[Sequence[int]]
) -> tuple[list[tuple[int, np.ndarray, np.ndarray]], int]:
    """Distinct prefixes (depth >= 1) of the given sequences, grouped by depth, with how
    many (sequence, position) pairs share each; and the number of sequences."""
    counts: dict[tuple[int, ...], int] = {}
    n_seq = 0
    for seq in sequences:
        codes = tuple(int(c) for c in task.encode(seq))
        n_seq += 1
        for t in range(1, len(codes) + 1):
            key = codes[:t]
            counts[key] = counts.get(key, 0) + 1
    if n_seq == 0:
        raise ValueError("sequences is empty: give at least one sequence")
    by_depth: dict[int, list[tuple[tuple[int, ...], int]]] = {}
    for key, c in counts.items():
        by_depth.setdefault(len(key), []).append((key, c))
    blocks = []
    for t in sorted(by_depth):
        items = by_depth[t]
        blocks.append((t, np.array([k for k, _ in items], dtype=np.int64),
                       np.array([c for _, c in items], dtype=float)))
    return blocks, n_seq


def evaluate(
    model: AttentionModel,
    sequences: Iterable[Sequence[int]] | None = None,
    *,
    eta: float = 1e-9,
    max_rows: int = 1 << 15,
    progress: bool | None = None,
    tree: bool | None = None,
    max_work: int | None = None,
    **options: Any,
) -> Evaluation | StackEvaluation:
    """Evaluate ``model`` on ``sequences`` (default: exhaustively over the task's family).

    Every position of every sequence counts once; position 0 enters the error only.
    ``tree``: over the whole family, carry per-key sums down the prefix tree
    (:func:`sinkproof.treekernel.tree_chunks`, ``O(heads × p)`` per prefix, in chunks of
    at most ``max_rows`` prefixes, ``2^17`` where a query falls back to the log domain)
    instead of recomputing each prefix's row; default: wherever the map factorises over
    keys (not sparsemax, entmax).  ``max_work``: over the whole family, the most
    (sequence, position) pairs before it refuses to start
    (:class:`~sinkproof.work.WorkLimitExceeded`; default
    :data:`~sinkproof.work.EVALUATE_MAX_WORK`, the limit of ``sinkproof report``).
    One model type, two paths chosen by capability: a tabulated model (the one-layer
    :class:`~sinkproof.model.AttentionModel`: scores and values are table lookups) runs the
    prefix kernels (the tree-factorised one where the task and map allow); any other
    stack (e.g. a paper model) runs the batched stack forward of
    :func:`~sinkproof.stackeval.evaluate_stack` (``options``: ``samples``, ``seed``).
    """
    if not isinstance(model, StackModel):
        raise TypeError(f"model must be an AttentionModel or a StackModel, "
                        f"got {type(model).__name__}")
    if not model.tabulated:  # the general stack forward, batched over prefixes or sequences
        return evaluate_stack(model, sequences, max_rows=max_rows, progress=progress,
                              **options)
    if options:
        raise TypeError(f"unexpected options for an AttentionModel: {', '.join(options)}")
    eta = float(bounded(eta, "eta", 0))
    max_rows = as_int("max_rows", max_rows, minimum=1)
    task, H = model.task, model.H
    if sequences is None:
        refuse_beyond("(sequence, position) pairs to evaluate", task.n_positions, max_work,
                      EVALUATE_MAX_WORK)
        blocks: Iterable[tuple[int, np.ndarray, object]] = family_prefix_blocks(task, max_rows)
        n_seq = task.n_sequences
        first_sequence = (0,)
        work = sum(task.count_sequences(t) * t for t in range(1, task.T + 1))
    else:
        explicit, n_seq = explicit_prefix_blocks(task, sequences)
        first_sequence = task.decode(explicit[0][1][0])
        blocks = explicit
        work = sum(codes.size for _, codes, _ in explicit)

    null = stable_norm(model.value_table) <= eta  # (H, k+2)
    use_tree = (supports_tree(model) and sequences is None) if tree is None else bool(tree)
    if use_tree and (sequences is not None or not supports_tree(model)):
        raise ValueError("tree=True needs the whole family (sequences=None) and a map that "
                         f"factorises over keys (the {model.kind} map "
                         f"{'does' if supports_tree(model) else 'does not'})")
    summaries: Iterable[tuple[int, PrefixSummary | TreeChunk, object]] = (
        tree_chunks(model, null, max_rows) if use_tree else
        ((t, summarise(forward_prefixes(model, codes), null), mult)
         for t, codes, mult in blocks))
    acc = {name: Accumulator(H) for name in (
        "bos_n", "bos_t", "lnb_n", "lnb_t", "share_n", "share_t", "null_n", "null_t")}

    # position 0: only BOS, target 0
    s00 = model.score_table[:, task.bos_code, 0, task.bos_code, 0]
    w00 = model.attention_map.weights(s00[:, None, None], 0, model.map_params)[0][:, 0, 0]
    if model.gate_table is not None:
        w00 = w00 * model.gate_table[:, task.bos_code, 0]
    out0 = (w00[:, None] * model.value_table[:, task.bos_code]).sum(axis=0)
    worst_err = float(stable_norm(out0))
    worst: tuple[tuple[int, ...], int] = (first_sequence, 0)
    worst_out, worst_tgt = out0, np.zeros(task.p)
    n_prefixes = 1
    n_positions = float(n_seq)

    with Progress(work, "evaluate", progress) as bar:
        for t, fw, mult in summaries:
            codes = fw.codes
            weight = np.asarray(mult, dtype=float)  # one multiplicity, or one per prefix
            i, err = fw.worst()
            if err > worst_err:
                worst_err = err
                row, worst_out, worst_tgt = fw.row(i)
                worst = (task.decode(row), t)
            _accumulate(acc, fw, weight, task.trig_code, model.attention_map.properties)
            n_prefixes += codes.shape[0]
            n_positions += float(np.broadcast_to(weight, (codes.shape[0],)).sum())
            bar.update(codes.size)

    return Evaluation(
        model=model,
        max_error=worst_err,
        worst=worst,
        worst_output=np.array(worst_out),
        worst_target=np.array(worst_tgt),
        bos_nontrigger=acc["bos_n"].stats(),
        bos_trigger=acc["bos_t"].stats(),
        log_nonbos_nontrigger=acc["lnb_n"].stats(),
        log_nonbos_trigger=acc["lnb_t"].stats(),
        bos_share_nontrigger=acc["share_n"].stats(),
        bos_share_trigger=acc["share_t"].stats(),
        null_mass_nontrigger=acc["null_n"].stats(),
        null_mass_trigger=acc["null_t"].stats(),
        n_sequences=n_seq,
        n_positions=n_positions,
        n_prefixes=n_prefixes,
        eta=eta,
    )


def null_mass(weights: np.ndarray, null_keys: np.ndarray, properties: MapProperties
              ) -> np.ndarray:
    """Mass on null keys (value norm ``<= eta``), plus the null slot ``1 - Σ_j α_j`` where the
    map has one (virtual slot or gate); off the simplex without a slot, the share of the
    total weight (0 where every weight is 0).  ``weights`` ``(..., K)``, ``null_keys`` alike."""
    return _null_share((weights * null_keys).sum(axis=-1), weights.sum(axis=-1), properties)


def _null_share(nm: np.ndarray, total: np.ndarray, properties: MapProperties,
                positive: bool = False) -> np.ndarray:
    """Null mass from the mass on null keys ``nm`` and the total weight (see :func:`null_mass`);
    ``positive``: every total is known to be positive."""
    if properties.on_simplex:
        return nm
    if properties.null_slot:
        return nm + np.maximum(1.0 - total, 0.0)
    if positive:
        return nm / total
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, nm / np.where(total > 0, total, 1.0), 0.0)


def _accumulate(acc: dict[str, Accumulator], fw: PrefixSummary | TreeChunk, weight: np.ndarray,
                trig_code: int, properties: MapProperties) -> None:
    bos, total = fw.bos, fw.total
    positive = bool(total.min() > 0) if total.size else True  # one division, no masks
    if positive:
        share = bos / total
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(total > 0, bos / np.where(total > 0, total, 1.0), 0.0)
    nm = _null_share(fw.null_keys, total, properties, positive)
    is_trig = fw.query == trig_code
    for suffix, mask in (("n", ~is_trig), ("t", is_trig)):
        if not np.any(mask):
            continue
        whole = bool(mask.all())  # one kind of query: no copies
        wm = weight if whole else np.broadcast_to(weight, mask.shape)[mask]
        for name, values in (("bos_", bos), ("lnb_", fw.log_nonbos), ("share_", share),
                             ("null_", nm)):
            acc[name + suffix].add(values if whole else values[:, mask], wm)
