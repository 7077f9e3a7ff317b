"""Exhaustive evaluation of the family S_T against the loop a user would write, same run.

Baselines, each a loop over sequences drawn uniformly over the family's (sequence,
position) pairs (a length-``n`` sequence with probability proportional to
``(n+1)·|S_n|``, so long sequences weigh as they do in the family), run for
``--naive-seconds`` on that sample (all of S_T would take minutes): their figures are
rates, and their time for the whole family is extrapolated from them (said so where
printed):

- ``plain numpy`` (the baseline the ratios are against: what a user writes without this
  package): per sequence, the input rows from the embedding tables, every head's causal
  scores ``Φ A_h Φ^T`` and weights (softmax with the max subtracted, or ReLU) and
  outputs ``Σ_h W_h V_h`` in a few vectorised numpy calls, the targets by a cumulative
  sum, the largest error norm.  Checked equal (to 1e-12) to the package's own forward
  on the first sequences;
- ``model.forward``: the package's model object per sequence, ``model.forward(seq)``
  and ``task.targets(seq)`` (argument checks, one map object per call: several times
  slower than the plain loop, so ratios against it flatter).

Against them: ``evaluate`` with the tree-factorised path (the default where the map
factorises): its first call on a fresh model (building the score table included) and the
best of two more; optionally the row-by-row path (``--rows``, ``tree=False``).  Rates are
(sequence, position) pairs per second.

The arithmetic limit: the operations the tree recurrence needs per distinct prefix
(:func:`recurrence_ops`: extending each head's running sums by one key, normalising,
the output, the error norm, the statistics) times the number of prefixes, divided by a
rate measured here in the same run: numpy's in-cache elementwise rate (one ``np.add`` on
2^15 doubles, the best an array-at-a-time implementation reaches per operation) and the
machine's one-core peak (a 512x512 matmul on one BLAS thread, fused multiply-adds in
SIMD: a bound no elementwise code reaches).  The distance is measured time / limit, on
the wall clock and on this process's CPU time (which other processes' load inflates
less).

Usage: python benchmarks/bench_evaluate.py [--p 3] [--T 8] [--kinds softmax,relu]
       [--heads 1,2] [--naive-seconds 3] [--rows] [--breakdown]
Prints ``RATIO`` lines (collected by ``benchmarks/run.py``) and a table.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from unittest.mock import patch

import numpy as np

import sinkproof as sp

BASELINE = ("plain numpy per-sequence forward (vectorised within a sequence), sampled "
            "uniformly by position count")
FORWARD = "model.forward(seq) + task.targets(seq) per sequence, sampled the same way"


def sample_by_positions(task: sp.TriggerTask, n: int, seed: int) -> list[tuple[int, ...]]:
    """``n`` sequences, each a uniform draw from S_T weighted by its number of positions."""
    rng = np.random.default_rng(seed)
    lengths = np.arange(1, task.T + 1)
    weight = np.array([task.count_sequences(m) * (m + 1) for m in lengths], dtype=float)
    out = []
    k = task.k
    for m in rng.choice(lengths, size=n, p=weight / weight.sum()):
        if task.triggers == "multi":
            toks = rng.integers(-1, k, size=m)
        else:
            toks = rng.integers(0, k, size=m)
            if rng.random() < m / (k + m):  # m·k^(m-1) of the k^m + m·k^(m-1) sequences
                toks[int(rng.integers(0, m))] = sp.TRIG
        out.append(tuple(int(v) for v in toks))
    return out


def naive_loop(model: sp.AttentionModel, sequences: list) -> tuple[float, int]:
    """Max error by running model.forward on each sequence; returns (max error, positions)."""
    worst, positions = 0.0, 0
    for seq in sequences:
        out, _ = model.forward(seq)
        y = model.task.targets(seq)
        worst = max(worst, float(np.linalg.norm(out - y, axis=1).max()))
        positions += len(seq) + 1
    return worst, positions


class PlainForward:
    """The forward a user writes in numpy for one sequence: embedding tables read once,
    then per sequence a handful of vectorised calls (softmax or ReLU weights)."""

    def __init__(self, model: sp.AttentionModel) -> None:
        task = model.task
        if model.kind not in ("softmax", "relu") or model.gate_w is not None:
            raise ValueError("the plain loop covers softmax and ReLU heads")
        self.kind, self.A, self.U = model.kind, model.A, model.U
        self.tokens = task.token_table          # e(x) per token code (BOS, content, TRIG)
        self.positions = task.position_table    # π(t) per position
        self.content = task.content_table       # the content a token carries (0 for TRIG)
        self.bos, self.trig, self.k = task.bos_code, task.trig_code, task.k

    def error(self, seq: tuple[int, ...]) -> float:
        """The largest error norm ``max_t || f_t - y_t ||`` on ``seq``."""
        out, y = self.forward(seq)
        return float(np.sqrt(((out - y) ** 2).sum(axis=1)).max())

    def forward(self, seq: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        codes = np.array([self.bos, *[self.trig if x < 0 else x for x in seq]])
        n = codes.size
        phi = np.concatenate([self.tokens[codes], self.positions[:n]], axis=1)
        s = np.einsum("td,hde,je->htj", phi, self.A, phi)
        causal = np.tri(n, dtype=bool)
        if self.kind == "softmax":
            s = np.where(causal, s, -np.inf)
            w = np.exp(s - s.max(axis=2, keepdims=True))
            w /= w.sum(axis=2, keepdims=True)
        else:
            w = np.where(causal, np.maximum(s, 0.0), 0.0)
        v = np.einsum("hpe,je->hjp", self.U, self.tokens[codes])
        out = np.einsum("htj,hjp->tp", w, v)
        c = self.content[codes]
        mean = np.cumsum(c, axis=0)[:-1] / np.maximum(np.arange(n - 1), 1)[:, None]
        y = np.zeros_like(out)
        at = np.flatnonzero(codes[1:] == self.trig) + 1
        y[at[at >= 2]] = mean[at[at >= 2] - 1]
        return out, y


def plain_rate(model: sp.AttentionModel, seconds: float) -> tuple[float, int, float]:
    """(positions per second, positions done, max error seen) of the plain numpy loop,
    after checking it against ``model.forward`` on the first sequences."""
    plain = PlainForward(model)
    sample = sample_by_positions(model.task, 200_000, seed=1)
    for seq in sample[:200]:
        out, y = plain.forward(seq)
        ref, _ = model.forward(seq)
        assert np.abs(out - ref).max() <= 1e-12 * (1 + np.abs(ref).max())
        assert np.abs(y - model.task.targets(seq)).max() <= 1e-12
    done, positions, worst = 0, 0, 0.0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds and done < len(sample):
        for seq in sample[done: done + 100]:
            worst = max(worst, plain.error(seq))
            positions += len(seq) + 1
        done += 100
    return positions / (time.perf_counter() - start), positions, worst


def naive_rate(model: sp.AttentionModel, seconds: float) -> tuple[float, int, float]:
    """(positions per second, positions done, max error seen) of the model.forward loop."""
    sample = sample_by_positions(model.task, 200_000, seed=1)
    done, positions, worst = 0, 0, 0.0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds and done < len(sample):
        w, n = naive_loop(model, sample[done: done + 100])
        worst, positions, done = max(worst, w), positions + n, done + 100
    return positions / (time.perf_counter() - start), positions, worst


def timed(model: sp.AttentionModel, tree: bool, repeat: int = 2
          ) -> tuple[float, sp.Evaluation, float]:
    """Best wall time of ``repeat`` exhaustive evaluations, the evaluation, and the best
    CPU time of this process (what the load of other processes does not inflate)."""
    best = cpu = float("inf")
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        ev = sp.evaluate(model, tree=tree, max_work=model.task.n_positions)
        best = min(best, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return best, ev, cpu


def recurrence_ops(kind: str, heads: int, p: int) -> int:
    """Operations per distinct prefix of the tree recurrence (one add, multiply, division,
    comparison or logarithm each): per head, the running sums extended by one key (``1 + p``
    adds: the weight and the weighted value), normalised (softmax: ``Z = S + c``, ``1/Z``,
    BOS and non-BOS weights, their log and total: 6; ReLU: the log and total: 2), the output
    (softmax: ``p`` multiplies; both: ``p`` adds summing heads), the statistics (BOS share:
    1 division; min, max and sum of four figures: 12); per prefix the error norm against
    the target (``p`` subtractions, ``p`` squares, ``p - 1`` adds) and the running maximum."""
    softmax = kind != "relu"
    per_head = (1 + p) + (6 if softmax else 2) + (2 * p if softmax else p) + 13
    return heads * per_head + 3 * p


def elementwise_rate(n: int = 1 << 15, seconds: float = 0.3) -> float:
    """numpy's in-cache elementwise rate here: ``np.add`` on ``n`` doubles, operations/s."""
    a, b, out = np.random.default_rng(0).random((3, n))
    best, start = float("inf"), time.perf_counter()
    while time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        for _ in range(50):
            np.add(a, b, out=out)
        best = min(best, (time.perf_counter() - t0) / 50)
    return n / best


def matmul_rate(n: int = 512, seconds: float = 0.5) -> float:
    """The one-core peak here: flops/s of an ``n x n`` matmul on one BLAS thread."""
    from threadpoolctl import threadpool_limits

    a = np.random.default_rng(0).random((n, n))
    best, start = float("inf"), time.perf_counter()
    with threadpool_limits(1):
        while time.perf_counter() - start < seconds:
            t0 = time.perf_counter()
            a @ a
            best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best


def breakdown(model: sp.AttentionModel) -> None:
    """Where ``evaluate``'s CPU time goes: the fused kernel alone (every chunk formed, the
    targets inside it timed apart) against the whole call (the statistics added)."""
    from sinkproof.numerics import stable_norm
    from sinkproof.treekernel import tree_chunks

    task = model.task
    null = stable_norm(model.value_table) <= 1e-9
    real, spent = type(task).prefix_targets, [0.0]

    def targets(self: sp.TriggerTask, codes: np.ndarray) -> np.ndarray:
        start = time.process_time()
        out = real(self, codes)
        spent[0] += time.process_time() - start
        return out

    best = [float("inf")] * 3
    for _ in range(2):
        spent[0] = 0.0
        with patch.object(type(task), "prefix_targets", targets):
            start = time.process_time()
            for _chunk in tree_chunks(model, null):
                pass
            kernel = time.process_time() - start
        start = time.process_time()
        sp.evaluate(model, max_work=task.n_positions)
        whole = time.process_time() - start
        best = [min(b, x) for b, x in zip(best, (whole, kernel, spent[0]))]
    whole, kernel, tgt = best
    print(f"  breakdown (CPU time, best of 2): evaluate {whole:.3f} s = fused kernel "
          f"{kernel:.3f} s ({kernel / whole:.0%}; of it the task's targets {tgt:.3f} s, "
          f"{tgt / whole:.0%}) + statistics and the rest {whole - kernel:.3f} s "
          f"({(whole - kernel) / whole:.0%})")
    x = np.random.default_rng(0).random(1 << 15) + 0.5
    out = np.empty_like(x)
    for name, fn in (("add", lambda: np.add(x, x, out=out)), ("log", lambda: np.log(x, out=out))):
        start = time.process_time()
        for _ in range(2000):
            fn()
        print(f"  numpy {name} on 2^15 doubles: "
              f"{(time.process_time() - start) / 2000 / x.size * 1e9:.2f} ns an element")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--p", type=int, default=3)
    parser.add_argument("--T", type=int, default=8)
    parser.add_argument("--kinds", default="softmax,relu")
    parser.add_argument("--heads", default="1,2")
    parser.add_argument("--naive-seconds", type=float, default=3.0)
    parser.add_argument("--breakdown", action="store_true",
                        help="also split evaluate's CPU time: kernel, targets, statistics")
    parser.add_argument("--rows", action="store_true",
                        help="also time the row-by-row path (tree=False; slow at T=8)")
    args = parser.parse_args(argv)

    task = sp.TriggerTask(p=args.p, T=args.T)
    print(f"instance: {task!r}; {task.n_sequences} sequences, {task.n_positions} positions; "
          f"random A and U; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    print(f"baseline: {BASELINE}")
    elem, peak = elementwise_rate(), matmul_rate()
    print(f"rates here: numpy elementwise (np.add, 2^15 doubles in cache) {elem / 1e9:.2f} "
          f"Gop/s; one-core peak (512x512 matmul, one BLAS thread) {peak / 1e9:.1f} Gflop/s")
    table = []
    for kind in args.kinds.split(","):
        for heads in (int(h) for h in args.heads.split(",")):
            table.append(run_one(task, kind, heads, args, elem, peak))
    print()
    print("| map | heads | plain numpy loop | `model.forward` loop | `evaluate` first call | "
          "`evaluate` best of 2 | **ratio to plain numpy** | ratio to `model.forward` | "
          "limit (numpy rate / peak) | distance (wall; CPU) | peak memory |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in table:
        print("| " + " | ".join(row) + " |")


def run_one(task: sp.TriggerTask, kind: str, heads: int, args: argparse.Namespace,
            elem: float, peak: float) -> list[str]:
    """One map and head count: print its lines, return its table row."""
    rng = np.random.default_rng(0)
    model = sp.AttentionModel(task, kind, rng.standard_normal((heads, task.D, task.D)),
                              rng.standard_normal((heads, task.p, task.p + 3)))
    name = f"{kind} H={heads}"
    rate0, positions, worst = plain_rate(model, args.naive_seconds)
    print(f"{name:11s} plain numpy  : {positions / rate0:5.2f} s for {positions} sampled "
          f"positions -> {rate0:10.0f} positions/s (all {task.n_positions}: "
          f"{task.n_positions / rate0:.0f} s, extrapolated)")
    rate_fw, positions_fw, worst_fw = naive_rate(model, args.naive_seconds)
    print(f"{name:11s} model.forward: {positions_fw / rate_fw:5.2f} s for {positions_fw} "
          f"sampled positions -> {rate_fw:10.0f} positions/s ({rate0 / rate_fw:.1f}x slower "
          "than plain numpy)")
    start = time.perf_counter()
    sp.evaluate(model, max_work=task.n_positions)
    first = time.perf_counter() - start
    t_tree, ev, cpu = timed(model, True)
    rate_tree = task.n_positions / t_tree
    mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{name:11s} evaluate     : first call {first:.3f} s, best of 2 {t_tree:.3f} s for "
          f"all {task.n_positions} positions ({ev.n_prefixes} prefixes) -> "
          f"{rate_tree:10.0f} positions/s (CPU time {cpu:.3f} s); peak RSS {mb:.0f} MB")
    assert max(worst, worst_fw) <= ev.max_error + 1e-12, \
        "sampled error above the exhaustive maximum"
    ops = recurrence_ops(kind, heads, task.p) * ev.n_prefixes
    lim_elem, lim_peak = ops / elem, ops / peak
    print(f"{name:11s} arithmetic   : {ops / 1e6:.0f} M operations "
          f"({recurrence_ops(kind, heads, task.p)} per prefix): {lim_elem * 1e3:.0f} ms at numpy's "
          f"elementwise rate ({t_tree / lim_elem:.1f}x away; CPU time {cpu / lim_elem:.1f}x), "
          f"{lim_peak * 1e3:.1f} ms at the one-core peak ({t_tree / lim_peak:.0f}x away; CPU "
          f"time {cpu / lim_peak:.0f}x)")
    print(f"RATIO evaluate {kind} H={heads} p={task.p} T={task.T} tree: "
          f"{rate_tree / rate0:.1f}x (vs {BASELINE})")
    print(f"  (first call: {task.n_positions / first / rate0:.1f}x; against the model.forward "
          f"loop: {rate_tree / rate_fw:.1f}x, {FORWARD})")
    if args.breakdown:
        breakdown(model)
    if args.rows:
        t_rows, ev_rows, _ = timed(model, False, repeat=1)
        assert abs(ev_rows.max_error - ev.max_error) <= 1e-12 * (1 + ev.max_error)
        rate_rows = task.n_positions / t_rows
        print(f"{name:11s} row path     : {t_rows:7.2f} s -> {rate_rows:12.0f} positions/s")
        print(f"RATIO evaluate {kind} H={heads} p={task.p} T={task.T} rows: "
              f"{rate_rows / rate0:.1f}x (vs {BASELINE})")

    def n(x: float) -> str:
        return f"{x:,.0f}".replace(",", " ")

    return [kind if kind != "relu" else "ReLU", str(heads), f"{n(rate0)} positions/s",
            f"{n(rate_fw)} positions/s", f"{first:.3f} s", f"{t_tree:.3f} s, {n(rate_tree)} "
            f"positions/s", f"**{rate_tree / rate0:.0f}×**", f"{rate_tree / rate_fw:.0f}×",
            f"{lim_elem * 1e3:.0f} ms / {lim_peak * 1e3:.1f} ms",
            f"{t_tree / lim_elem:.1f}× / {t_tree / lim_peak:.0f}× (CPU {cpu:.3f} s: "
            f"{cpu / lim_elem:.1f}× / {cpu / lim_peak:.0f}×)", f"{mb:.0f} MB"]


if __name__ == "__main__":
    main()
