"""Cost of one training step of `sinkproof experiment` (default task: p=4, T=16).

Times the compiled training step (the MSE on a mini-batch of 32 sequences, its
gradient by JAX reverse mode, one optax Adam update; float64) for softmax and ReLU
with H = 1 and H = 4, after one warm-up call that compiles it, and prints
milliseconds per step with the ratio to H = 1 measured in the same run, and the
one-off compilation time.

Run: python benchmarks/bench_train.py
"""

from __future__ import annotations

import os
import time

import jax.numpy as jnp

from sinkproof.autodiff import x64
from sinkproof.experiment import ExperimentConfig, adam, initial_parameters
from sinkproof.experiment.train import _adam_step
from sinkproof.search.objective import device_tables, prefix_batch

STEPS = 50


def ms_per_step(kind: str, heads: int) -> tuple[float, float]:
    """(milliseconds per step, seconds of the first call, which compiles)."""
    cfg = ExperimentConfig.default()
    task = cfg.task("signed")
    batch = prefix_batch(task, task.sample(cfg.batch_size, seed=1))
    A, U = initial_parameters(task, heads, 0, cfg.init_scale)
    step = _adam_step(kind, cfg.lr)
    phi, tokens = device_tables(task)
    with x64():
        data = batch.device_data
        params = {"A": jnp.asarray(A), "U": jnp.asarray(U)}
        state = adam(cfg.lr).init(params)
        start = time.perf_counter()
        loss, params, state = step(params, state, data, phi, tokens)
        float(loss)
        first = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(STEPS):
            loss, params, state = step(params, state, data, phi, tokens)
            float(loss)  # the training loop reads the loss every step
    return 1e3 * (time.perf_counter() - start) / STEPS, first


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'kind':8} {'H':>2} {'ms/step':>8} {'vs H=1':>7} {'compile s':>9}")
    for kind in ("softmax", "relu"):
        base, first = ms_per_step(kind, 1)
        for heads in (1, 4):
            ms, first = (base, first) if heads == 1 else ms_per_step(kind, heads)
            print(f"{kind:8} {heads:2d} {ms:8.2f} {ms / base:6.1f}x {first:9.2f}")


if __name__ == "__main__":
    main()
