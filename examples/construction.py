"""Theorem 4 vs Theorem 5: ReLU solves the task with no sink; softmax only with one.

Run: python examples/construction.py
"""

import numpy as np

import sinkproof as sp
from sinkproof.constructions import relu_solution, softmax_solution
from sinkproof.testing import assert_has_sink, assert_no_sink, assert_solves, show_sequence

task = sp.TriggerTask(p=2, T=6)
print(f"{task!r}: {task.n_sequences} sequences, {task.n_positions} positions, all evaluated\n")

models = [("ReLU (Theorem 4)", relu_solution(task))]
models += [(f"softmax L={L:g} (Theorem 5)", softmax_solution(task, L)) for L in (2, 4, 8, 16)]
print(f"{'model':26} {'||A||_2':>8} {'max error':>10} {'min BOS mass':>13} {'max 1-BOS':>10}")
for name, model in models:
    ev = sp.evaluate(model)
    # 1 - α_0 from the log domain: resolved even where α_0 rounds to 1 (softmax only;
    # ReLU weights are not normalised, so 1 - α_0 is not the non-BOS mass there)
    one_minus_bos = np.exp(ev.log_nonbos_nontrigger.max[0])
    column = f"{one_minus_bos:10.2e}" if model.kind == "softmax" else f"{'-':>10}"
    print(f"{name:26} {model.norm:8.3f} {ev.max_error:10.2e} "
          f"{ev.bos_nontrigger.min[0]:13.6f} {column}")

seq = [0, 3, 1, sp.TRIG]
print(f"\nattention of the trigger query of {show_sequence(seq)} on BOS, x_1, x_2, x_3, x_4:")
for name, model in (models[0], models[3]):
    _, w = model.forward(seq)
    print(f"  {name:26} {np.array2string(w[0, -1], precision=4)}")

# The same facts as assertions (each raises AssertionError naming the worst case):
assert_solves(models[0][1], eps=1e-12)
assert_no_sink(models[0][1], max_bos_mass=0.0)
assert_has_sink(models[4][1], delta=1e-6)
print("\nchecked: ReLU error <= 1e-12 with zero BOS mass; softmax L=16 has BOS mass >= 1 - 1e-6")
