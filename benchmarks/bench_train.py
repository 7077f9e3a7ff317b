"""Cost of one training step of `sinkproof experiment` (default task: p=4, T=16).

Times ``value_and_grad`` (the search layer's analytic MSE gradients) plus one Adam
update on a mini-batch of 32 sequences, for softmax and ReLU with H = 1 and H = 4, and
prints milliseconds per step with the ratio to H = 1 measured in the same run.

Run: python benchmarks/bench_train.py
"""

from __future__ import annotations

import time

from sinkproof.experiment import Adam, ExperimentConfig, initial_parameters
from sinkproof.search.objective import prefix_batch, value_and_grad

STEPS = 30


def ms_per_step(kind: str, heads: int) -> float:
    cfg = ExperimentConfig.default()
    task = cfg.task("signed")
    batch = prefix_batch(task, task.sample(cfg.batch_size, seed=1))
    A, U = initial_parameters(task, heads, 0, cfg.init_scale)
    adam = Adam([A.shape, U.shape], lr=cfg.lr)
    value_and_grad(task, kind, A, U, batch)  # warm-up
    start = time.perf_counter()
    for _ in range(STEPS):
        _, dA, dU = value_and_grad(task, kind, A, U, batch)
        A, U = adam.step([A, U], [dA, dU])
    return 1e3 * (time.perf_counter() - start) / STEPS


def main() -> None:
    print(f"{'kind':8} {'H':>2} {'ms/step':>8} {'vs H=1':>7}")
    for kind in ("softmax", "relu"):
        base = ms_per_step(kind, 1)
        for heads in (1, 4):
            ms = base if heads == 1 else ms_per_step(kind, heads)
            print(f"{kind:8} {heads:2d} {ms:8.1f} {ms / base:6.1f}x")


if __name__ == "__main__":
    main()
