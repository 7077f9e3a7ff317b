"""The measures of docs/theory.md section 3, evaluated over a family of sequences.

``evaluate(model)`` runs the model exhaustively over the task's family (``S_T``
by default).  Work grows with the number of distinct prefixes, each weighted by
its multiplicity (how many (sequence, position) pairs share it), so means are
means over (sequence, position) pairs exactly as a per-sequence loop would give.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ._validate import as_int
from .attention import MapProperties
from .evaluation import Evaluation, _null_share
from .exact_numbers import bounded
from .kernel import forward_prefixes
from .model import AttentionModel
from .numerics import stable_norm
from .progress import Progress
from .stack import StackModel
from .stackeval import evaluate_stack
from .stats import Accumulator
from .task import TriggerTask
from .treekernel import PrefixSummary, TreeChunk, summarise, supports_tree, tree_chunks
from .work import EVALUATE_MAX_WORK, refuse_beyond


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
) -> Evaluation:
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
    :func:`~sinkproof.stackeval.evaluate_stack` (``options``: ``samples``, ``seed``;
    ``tree`` concerns the prefix kernels only; ``max_work`` there counts the prefixes run
    through the stack).  Either path returns the
    one :class:`~sinkproof.evaluation.Evaluation`, with the same fields and meanings.
    """
    if not isinstance(model, StackModel):
        raise TypeError(f"model must be an AttentionModel or a StackModel, "
                        f"got {type(model).__name__}")
    if not model.tabulated:  # the general stack forward, batched over prefixes or sequences
        return evaluate_stack(model, sequences, max_rows=max_rows, progress=progress,
                              eta=eta, max_work=max_work, **options)
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
        source="exhaustive" if sequences is None else "given",
        eta=eta,
    )


def null_mass(weights: np.ndarray, null_keys: np.ndarray, properties: MapProperties
              ) -> np.ndarray:
    """Mass on null keys (value norm ``<= eta``), plus the null slot ``1 - Σ_j α_j`` where the
    map has one (virtual slot or gate); off the simplex without a slot, the share of the
    total weight (0 where every weight is 0).  ``weights`` ``(..., K)``, ``null_keys`` alike."""
    return _null_share((weights * null_keys).sum(axis=-1), weights.sum(axis=-1), properties)


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
